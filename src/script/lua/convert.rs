//! JSON to Lua for `obj`, and the script's result back to a health, as Argo CD does both.

use std::collections::{BTreeMap, HashSet};

use mlua::{Lua, Table, Value};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// What a health script returned, read as Argo CD reads it.
///
/// `status` is one of Argo CD's six codes (`Healthy`, `Progressing`, `Degraded`, `Suspended`,
/// `Missing`, `Unknown`), or `""` for the *empty* health that Argo CD gives when the script
/// returns nil, nothing, an empty table or a list, or a `status`/`message` that is not a
/// string. A table whose status is anything else (including absent) reads as `Unknown` with
/// the message `Lua returned an invalid health status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LuaHealth {
    /// The status code, or `""`.
    pub status: String,
    /// The message, `""` when absent.
    #[serde(default)]
    pub message: String,
    /// `deletionMessage`: what to show while the object is being deleted, `""` when absent.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deletion_message: String,
    /// Whether the script returned `nil` (or nothing), the one empty health that is not an
    /// answer: Argo CD 3.6.2 then runs the built-in check of the kind, as if there were no
    /// script.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub returned_nil: bool,
}

impl LuaHealth {
    /// Whether this is the empty health (status `""`).
    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
    }
}

/// Converts a JSON value to Lua: objects and arrays become tables with no metatable, null
/// members and null array items are dropped (later items move down), numbers become Lua
/// numbers, and null itself is nil.
pub(super) fn to_lua(lua: &Lua, v: &Json) -> mlua::Result<Value> {
    Ok(match v {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => Value::Number(number(n)),
        Json::String(s) => Value::String(lua.create_string(s)?),
        Json::Array(_) | Json::Object(_) => Value::Table(table_of(lua, v, 1)?),
    })
}

/// Deepest nesting of arrays and objects converted either way; the conversions recurse on
/// the native stack.
pub(super) const MAX_DEPTH: usize = 128;

fn number(n: &serde_json::Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}

/// A table for an array or object. Scalars are pushed straight onto the Lua stack (no
/// handle is created for them), which keeps the conversion cheap.
fn table_of(lua: &Lua, v: &Json, depth: usize) -> mlua::Result<Table> {
    if depth > MAX_DEPTH {
        return Err(mlua::Error::RuntimeError(format!(
            "the object is nested more than {MAX_DEPTH} levels deep"
        )));
    }
    match v {
        Json::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            let mut i = 0;
            for item in items.iter().filter(|i| !i.is_null()) {
                i += 1;
                set(lua, &t, i, item, depth)?;
            }
            Ok(t)
        }
        Json::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, item) in map {
                set(lua, &t, k.as_str(), item, depth)?;
            }
            Ok(t)
        }
        _ => lua.create_table(),
    }
}

fn set(
    lua: &Lua,
    t: &Table,
    key: impl mlua::IntoLua,
    item: &Json,
    depth: usize,
) -> mlua::Result<()> {
    match item {
        Json::Null => Ok(()),
        Json::Bool(b) => t.raw_set(key, *b),
        Json::Number(n) => t.raw_set(key, number(n)),
        Json::String(s) => t.raw_set(key, s.as_str()),
        Json::Array(_) | Json::Object(_) => t.raw_set(key, table_of(lua, item, depth + 1)?),
    }
}

pub(super) enum ReadError {
    Lua(mlua::Error),
    Result(String),
}

impl From<mlua::Error> for ReadError {
    fn from(e: mlua::Error) -> Self {
        ReadError::Lua(e)
    }
}

const INVALID_STATUS: &str = "Lua returned an invalid health status";
const MARSHAL_WRAP: &str = "json: error calling MarshalJSON for type *json.jsonValue: ";

/// Reads the script's last return value (Argo CD's `getHealthStatus`).
pub(super) fn read_health(v: Value) -> Result<LuaHealth, ReadError> {
    let t = match v {
        Value::Nil => return Ok(LuaHealth { returned_nil: true, ..LuaHealth::default() }),
        Value::Table(t) => t,
        other => {
            return Err(ReadError::Result(format!(
                "expect table output from Lua script, not {}",
                lua_type_name(&other)
            )));
        }
    };
    let json = encode(&Value::Table(t), 1, &mut Encoding::new())?;
    let Json::Object(map) = json else {
        // A list (or an empty table, which encodes as `[]`) does not decode into the
        // health struct: Argo CD returns the empty health.
        return Ok(LuaHealth::default());
    };
    let mut h = LuaHealth::default();
    // Go's decoder visits members in JSON order; gopher-json encodes a map, which Go sorts.
    let sorted: BTreeMap<&String, &Json> = map.iter().collect();
    for (k, v) in sorted {
        let field = if eq_fold(k, "status") {
            &mut h.status
        } else if eq_fold(k, "message") {
            &mut h.message
        } else if eq_fold(k, "deletionMessage") {
            &mut h.deletion_message
        } else {
            continue;
        };
        match v {
            Json::String(s) => *field = s.clone(),
            // A type error: Go's decoder fails and Argo CD returns the empty health.
            _ => return Ok(LuaHealth::default()),
        }
    }
    if !matches!(
        h.status.as_str(),
        "Healthy" | "Progressing" | "Degraded" | "Suspended" | "Missing" | "Unknown"
    ) {
        return Ok(LuaHealth {
            status: "Unknown".into(),
            message: INVALID_STATUS.into(),
            deletion_message: String::new(),
            returned_nil: false,
        });
    }
    Ok(h)
}

/// Go's `strings.EqualFold` against an ASCII field name, with the two non-ASCII letters that
/// fold to ASCII ones (`ſ` to `s`, the Kelvin sign to `k`).
fn eq_fold(key: &str, name: &str) -> bool {
    let mut a = key.chars();
    let mut b = name.chars();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                let x = match x {
                    '\u{17f}' => 's',
                    '\u{212a}' => 'k',
                    x => x.to_ascii_lowercase(),
                };
                if x != y.to_ascii_lowercase() {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// The Lua type name as gopher-lua prints it.
pub(super) fn lua_type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

fn wrapped(depth: usize, reason: &str) -> ReadError {
    ReadError::Result(format!("{}{reason}", MARSHAL_WRAP.repeat(depth)))
}

/// gopher-json's encoder: the first key decides between list and object, a table met twice is
/// an error, and every error is wrapped once per level by Go's encoder.
/// The most values a script's result may hold (tables, entries and scalars).
pub(super) const MAX_RESULT_VALUES: usize = 10_000;
/// The most bytes of text a script's result may hold (keys and strings).
pub(super) const MAX_RESULT_BYTES: usize = 1 << 20;

/// The state of encoding one result: the tables on the way (cycles), and what is left of the
/// size caps.
pub(super) struct Encoding {
    visited: HashSet<usize>,
    values_left: usize,
    bytes_left: usize,
}

impl Encoding {
    pub(super) fn new() -> Self {
        Encoding {
            visited: HashSet::new(),
            values_left: MAX_RESULT_VALUES,
            bytes_left: MAX_RESULT_BYTES,
        }
    }

    fn count(&mut self, bytes: usize) -> Result<(), ReadError> {
        if self.values_left == 0 {
            return Err(ReadError::Result(format!(
                "the result holds more than {MAX_RESULT_VALUES} values"
            )));
        }
        self.values_left -= 1;
        if bytes > self.bytes_left {
            return Err(ReadError::Result(format!(
                "the result holds more than {MAX_RESULT_BYTES} bytes of text"
            )));
        }
        self.bytes_left -= bytes;
        Ok(())
    }
}

pub(super) fn encode(v: &Value, depth: usize, visited: &mut Encoding) -> Result<Json, ReadError> {
    visited.count(match v {
        Value::String(s) => s.as_bytes().len(),
        _ => 0,
    })?;
    match v {
        Value::Nil => Ok(Json::Null),
        Value::Boolean(b) => Ok(Json::Bool(*b)),
        Value::Integer(i) => Ok(Json::from(*i)),
        Value::Number(n) => {
            if n.is_nan() {
                Err(wrapped(depth, "json: unsupported value: NaN"))
            } else if n.is_infinite() {
                let s = if *n > 0.0 { "+Inf" } else { "-Inf" };
                Err(wrapped(depth, &format!("json: unsupported value: {s}")))
            } else {
                Ok(serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number))
            }
        }
        Value::String(s) => Ok(Json::String(s.to_string_lossy())),
        Value::Table(t) => encode_table(t, depth, visited),
        other => Err(wrapped(depth, &format!("cannot encode {} to JSON", lua_type_name(other)))),
    }
}

fn encode_table(t: &Table, depth: usize, visited: &mut Encoding) -> Result<Json, ReadError> {
    if depth > MAX_DEPTH {
        // Not an Argo CD error (Go's stack grows): said once, not wrapped per level.
        return Err(ReadError::Result(format!(
            "cannot encode tables nested more than {MAX_DEPTH} levels deep"
        )));
    }
    if !visited.visited.insert(t.to_pointer() as usize) {
        return Err(wrapped(depth, "cannot encode recursively nested tables to JSON"));
    }
    let mut pairs = Vec::new();
    for kv in t.pairs::<Value, Value>() {
        pairs.push(kv?);
    }
    // In key order (numbers first), not LuaJIT's slot order: the same table is read the same
    // way, and fails with the same error, on every run.
    let pairs = super::order::sorted_by_key(pairs);
    let Some((first, _)) = pairs.first() else { return Ok(Json::Array(Vec::new())) };
    match first {
        Value::Integer(_) | Value::Number(_) => {
            let mut expected = 1.0;
            for (k, _) in &pairs {
                let n = match k {
                    Value::Integer(i) => *i as f64,
                    Value::Number(n) => *n,
                    _ => return Err(wrapped(depth, "cannot encode mixed or invalid key types")),
                };
                if n != expected {
                    return Err(wrapped(depth, "cannot encode sparse array"));
                }
                expected += 1.0;
            }
            let mut out = Vec::with_capacity(pairs.len());
            for (_, v) in &pairs {
                out.push(encode(v, depth + 1, visited)?);
            }
            Ok(Json::Array(out))
        }
        Value::String(_) => {
            let mut members = BTreeMap::new();
            for (k, v) in pairs {
                let Value::String(k) = k else {
                    return Err(wrapped(depth, "cannot encode mixed or invalid key types"));
                };
                visited.count(k.as_bytes().len())?;
                members.insert(k.to_string_lossy(), v);
            }
            let mut out = serde_json::Map::new();
            for (k, v) in members {
                let j = encode(&v, depth + 1, visited)?;
                out.insert(k, j);
            }
            Ok(Json::Object(out))
        }
        _ => Err(wrapped(depth, "cannot encode mixed or invalid key types")),
    }
}
