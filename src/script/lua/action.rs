//! The entry point of resource-action scripts (`discovery.lua`, `action.lua`): the same pooled
//! states, sandbox and limits as health scripts, with `actionParams` set and the script's
//! table returned as JSON.

use std::collections::BTreeMap;

use mlua::{Lua, Table, Value};

use super::convert::{self, ReadError};
use super::{LuaEngine, ScriptError};

impl LuaEngine {
    /// Runs a resource-action script (Argo CD's `discovery.lua` or `action.lua`) on `obj` and
    /// gives its last return value as JSON, encoded as Argo CD encodes it (gopher-json: an
    /// empty table is `[]`, the first key decides between list and object, a table met twice
    /// is an error).
    ///
    /// `params` is the script's `actionParams` table (name → text, as Argo CD passes them);
    /// `now` is the clock of `os.date` and `os.time`, in unix seconds. Limits, library modes and error texts
    /// are those of [`LuaEngine::eval_health`]. A result that is not a table is
    /// `expect table output from Lua script, not <type>`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use gitops_core::script::LuaEngine;
    ///
    /// let obj = serde_json::json!({"spec": {"replicas": 1}});
    /// let params = BTreeMap::from([("replicas".to_string(), "3".to_string())]);
    /// let script = "obj.spec.replicas = tonumber(actionParams.replicas)\nreturn obj";
    /// let out = LuaEngine::default()
    ///     .eval_action("scale", script, false, &obj, &params, 0)
    ///     .unwrap();
    /// assert_eq!(out, serde_json::json!({"spec": {"replicas": 3}}));
    /// ```
    pub fn eval_action(
        &self,
        name: &str,
        source: &str,
        use_open_libs: bool,
        obj: &serde_json::Value,
        params: &BTreeMap<String, String>,
        now: i64,
    ) -> Result<serde_json::Value, ScriptError> {
        self.evaluate(name, source, use_open_libs, obj, Some(params), now, read_table)
    }
}

/// Sets `actionParams` in a fresh environment.
pub(super) fn set_params(
    lua: &Lua,
    env: &Table,
    params: &BTreeMap<String, String>,
) -> mlua::Result<()> {
    let t = lua.create_table_with_capacity(0, params.len())?;
    for (k, v) in params {
        t.raw_set(k.as_str(), v.as_str())?;
    }
    env.raw_set("actionParams", t)
}

/// The script's last value, which must be a table, as JSON.
fn read_table(v: Value) -> Result<serde_json::Value, ReadError> {
    if !matches!(v, Value::Table(_)) {
        return Err(ReadError::Result(format!(
            "expect table output from Lua script, not {}",
            convert::lua_type_name(&v)
        )));
    }
    convert::encode(&v, 1, &mut convert::Encoding::new())
}
