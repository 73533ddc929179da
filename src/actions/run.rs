//! Running discovery and action scripts on the Lua engine, and the built-in actions.

use std::collections::BTreeMap;

use serde_json::Value;

use super::kinds::{Kind, table};
use super::lookup::Found;
use super::result::{
    Bad, read_builtin, read_discovery, read_impacted, read_offers, read_offers_alone,
};
use super::{
    ActionError, ActionPolicy, ActionResult, ActionScript, ActionScripts, ImpactedResource,
    Operation, ResourceAction,
};
use crate::diff::hide_secret_data;
use crate::object::{ObjectRef, RefParts};
#[cfg(feature = "lua")]
use crate::script::{LuaEngine, ScriptError};

/// Action scripts, the engine that runs them and the policy their results are checked
/// against; the built-in actions of the kinds Argo CD 3.6.2 ships scripts for where no script
/// replaces them (see [`ActionScripts`]). Built-in actions need no Lua; scripts need the `lua`
/// feature.
///
/// # Examples
///
/// A Deployment offers `restart` out of the box:
///
/// ```
/// use std::collections::BTreeMap;
/// use gitops_core::actions::{ActionScripts, Actions};
///
/// let obj = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
///     "metadata": {"name": "api", "namespace": "shop"},
///     "spec": {"template": {"metadata": {}}}});
/// let actions = Actions::new(ActionScripts::new());
/// let offered = actions.discover(&obj, 0).unwrap();
/// assert!(offered.iter().any(|a| a.name == "restart" && !a.disabled));
/// let done = actions.run(&obj, "restart", &BTreeMap::new(), 1_700_000_000).unwrap();
/// assert_eq!(done.script, "built-in apps/Deployment/actions/restart");
/// ```
///
/// Restart a Deployment with a script from `argocd-cm`:
///
/// ```
/// # #[cfg(feature = "lua")] {
/// use std::collections::BTreeMap;
/// use gitops_core::actions::{ActionScripts, Actions, Operation};
/// use gitops_core::config::Settings;
///
/// let cm = serde_json::json!({"data": {"resource.customizations.actions.apps_Deployment": r#"
/// discovery.lua: |
///   return {restart = {iconClass = "fa fa-fw fa-redo"}}
/// definitions:
/// - name: restart
///   action.lua: |
///     local os = require("os")
///     obj.spec.template.metadata.annotations = {["kubectl.kubernetes.io/restartedAt"] = os.date("!%Y-%m-%dT%XZ")}
///     return obj
/// "#}});
/// let actions = Actions::new(ActionScripts::from_settings(&Settings::from_config_map(&cm).unwrap()));
/// let obj = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
///     "metadata": {"name": "api", "namespace": "shop"},
///     "spec": {"template": {"metadata": {}}}});
/// let now = 1_700_000_000; // unix seconds, the clock of `os.date`
///
/// let offered = actions.discover(&obj, now).unwrap();
/// assert_eq!((offered[0].name.as_str(), offered[0].disabled), ("restart", false));
///
/// let done = actions.run(&obj, "restart", &BTreeMap::new(), now).unwrap();
/// let r = &done.resources[0];
/// assert_eq!(r.operation, Operation::Patch);
/// assert_eq!(r.patch[0].path, "/spec/template/metadata/annotations");
/// let new = r.apply_to(&obj).unwrap(); // the object, made from the input when wanted
/// assert_eq!(
///     new["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"],
///     "2023-11-14T22:13:20Z"
/// );
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Actions {
    scripts: ActionScripts,
    #[cfg(feature = "lua")]
    engine: LuaEngine,
    policy: ActionPolicy,
    reveal_secrets: bool,
}

impl Actions {
    /// Scripts run on the default engine with the default policy.
    pub fn new(scripts: ActionScripts) -> Self {
        Actions {
            scripts,
            #[cfg(feature = "lua")]
            engine: LuaEngine::default(),
            policy: ActionPolicy::default(),
            reveal_secrets: false,
        }
    }

    /// The same with another engine (its limits apply to every script).
    #[cfg(feature = "lua")]
    #[cfg_attr(docsrs, doc(cfg(feature = "lua")))]
    #[must_use]
    pub fn with_engine(mut self, engine: LuaEngine) -> Self {
        self.engine = engine;
        self
    }

    /// The same with another policy for results.
    #[must_use]
    pub fn with_policy(mut self, policy: ActionPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same, showing the values of Secrets in results. By default a Secret an action
    /// patches or creates comes back with its `data` values (and `stringData`, folded into
    /// `data`) and its last-applied annotation masked as the diff masks them
    /// (Argo CD's `HideSecretData`), its patch computed between the masked objects:
    /// a host that applies the result asks for the values with this.
    #[must_use]
    pub fn with_reveal_secrets(mut self, on: bool) -> Self {
        self.reveal_secrets = on;
        self
    }

    /// The scripts.
    pub fn scripts(&self) -> &ActionScripts {
        &self.scripts
    }

    /// The actions `obj` offers, sorted by name; empty when its kind has no discovery
    /// script. Each discovery script runs in turn (see [`ActionScripts::discovery`]).
    pub fn discover(&self, obj: &Value, now: i64) -> Result<Vec<ResourceAction>, ActionError> {
        self.discover_with(obj, now, false)
    }

    pub(super) fn discover_with(
        &self,
        obj: &Value,
        now: i64,
        open_libs: bool,
    ) -> Result<Vec<ResourceAction>, ActionError> {
        let (group, kind) = RefParts::group_kind_of(obj);
        let object = || ObjectRef::from_object_lossy(obj);
        let sources = self.scripts.discovery_sources(group, kind);
        let name = |source: &Found| source.name("discovery");
        // A built-in's table, or the error naming it.
        let offers = |kind: &Kind| {
            (kind.discover)(table::Lv::of(obj))
                .map_err(|f| builtin_error(kind.script_name("discovery"), object(), f))
        };
        if let [source @ Found::Builtin(kind)] = sources.as_slice() {
            // A built-in alone: its actions, sorted by name already, need no map by name.
            return read_offers_alone(offers(kind)?)
                .map_err(|b| result_error(name(source), object(), b));
        }
        let mut found = BTreeMap::new();
        for source in &sources {
            match source {
                Found::Script(script) => {
                    let json = self
                        .eval(script, obj, &object(), &BTreeMap::new(), now, open_libs)
                        .map_err(encoding_in_discovery)?;
                    read_discovery(&json, &mut found)
                }
                Found::Builtin(kind) => read_offers(offers(kind)?, &mut found),
            }
            .map_err(|b| result_error(name(source), object(), b))?;
        }
        let mut out: Vec<ResourceAction> = found.into_values().collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Runs the action `name` on `obj` with `params` (its `actionParams`) and gives the
    /// resources it changes. `obj` itself is never changed.
    pub fn run(
        &self,
        obj: &Value,
        name: &str,
        params: &BTreeMap<String, String>,
        now: i64,
    ) -> Result<ActionResult, ActionError> {
        let (parts, known) = identity(obj);
        let not_found = || ActionError::NotFound {
            object: Box::new(ObjectRef::from_object_lossy(obj)),
            action: name.into(),
        };
        match self.scripts.action_source(parts.group, parts.kind, name) {
            Some(Found::Script(script)) => self.run_script(&script, name, obj, params, now),
            Some(Found::Builtin(kind)) => {
                let run = kind.action(name).ok_or_else(not_found)?;
                let script = || kind.script_name(name);
                let object = || ObjectRef::from_object_lossy(obj);
                let json = run(table::Obj::with_identity(obj, known), &table::Call { params, now })
                    .map_err(|f| builtin_error(script(), object(), f))?;
                // A Workflow an action made is no Secret: nothing to mask.
                let made = matches!(json, table::Out::Made { .. });
                let resources = read_builtin(json, obj, &parts, &self.policy)
                    .map_err(|b| result_error(script(), object(), b))?;
                if made {
                    return Ok(ActionResult {
                        action: name.to_string(),
                        script: script(),
                        resources,
                    });
                }
                Ok(self.masked(name, script(), resources, obj))
            }
            None => Err(not_found()),
        }
    }

    /// Runs a given action script (as [`Actions::run`] does once the script is found).
    pub fn run_script(
        &self,
        script: &ActionScript,
        name: &str,
        obj: &Value,
        params: &BTreeMap<String, String>,
        now: i64,
    ) -> Result<ActionResult, ActionError> {
        let object = ObjectRef::from_object_lossy(obj);
        let json = self.eval(script, obj, &object, params, now, false)?;
        self.finish(name, script.name.clone(), json, obj, &object)
    }

    /// Reads a script's result and masks Secrets.
    fn finish(
        &self,
        name: &str,
        script: String,
        json: Value,
        obj: &Value,
        object: &ObjectRef,
    ) -> Result<ActionResult, ActionError> {
        match read_impacted(json, obj, &self.policy) {
            Ok(resources) => Ok(self.masked(name, script, resources, obj)),
            Err(b) => Err(result_error(script, object.clone(), b)),
        }
    }

    /// The result, with Secrets masked unless revealed.
    fn masked(
        &self,
        name: &str,
        script: String,
        mut resources: Vec<ImpactedResource>,
        obj: &Value,
    ) -> ActionResult {
        for r in &mut resources {
            // A patch carries its operations; only a masked Secret keeps the object.
            let masked = !self.reveal_secrets && mask_secret(r, obj);
            if r.operation == Operation::Patch && !masked {
                r.resource = None;
            }
        }
        ActionResult { action: name.to_string(), script, resources }
    }

    #[cfg(not(feature = "lua"))]
    #[allow(clippy::unused_self)]
    fn eval(
        &self,
        script: &ActionScript,
        _: &Value,
        object: &ObjectRef,
        _: &BTreeMap<String, String>,
        _: i64,
        _: bool,
    ) -> Result<Value, ActionError> {
        Err(ActionError::Script {
            script: script.name.clone(),
            object: Box::new(object.clone()),
            reason: "Lua scripts need the `lua` feature".into(),
        })
    }

    #[cfg(feature = "lua")]
    fn eval(
        &self,
        script: &ActionScript,
        obj: &Value,
        object: &ObjectRef,
        params: &BTreeMap<String, String>,
        now: i64,
        open_libs: bool,
    ) -> Result<Value, ActionError> {
        self.engine.eval_action(&script.name, &script.source, open_libs, obj, params, now).map_err(
            |e: ScriptError| ActionError::Script {
                script: script.name.clone(),
                object: Box::new(object.clone()),
                reason: e.reason(),
            },
        )
    }
}

/// Argo CD 3.6's discovery names a table it cannot encode as JSON
/// (`error in converting to lua table: json: ...`); a run does not.
fn encoding_in_discovery(e: ActionError) -> ActionError {
    match e {
        ActionError::Script { script, object, reason } if reason.starts_with("json: ") => {
            ActionError::Script {
                script,
                object,
                reason: format!("error in converting to lua table: {reason}"),
            }
        }
        other => other,
    }
}

/// Masks a Secret among an action's results as the diff shows one: a patch against its
/// source, a created one alone. Whether it was one.
fn mask_secret(r: &mut ImpactedResource, source: &Value) -> bool {
    let Some(resource) = &r.resource else { return false };
    // Only a Secret is masked: its kind read first.
    if resource.get("kind").and_then(Value::as_str) != Some("Secret") {
        return false;
    }
    let o = RefParts::of(resource);
    if !crate::diff::is_secret(o.group, o.kind) {
        return false;
    }
    match r.operation {
        Operation::Patch => {
            let (new, old) = hide_secret_data(Some(resource), Some(source), &[]);
            let (new, old) = (new.unwrap_or_default(), old.unwrap_or_default());
            r.patch = crate::diff::json_patch_ops(&old, &new);
            r.resource = Some(new);
        }
        Operation::Create => {
            r.resource = hide_secret_data(Some(resource), None, &[]).0;
        }
    }
    true
}

/// [`RefParts::of`] `obj`, read in one walk of its members up to `metadata` and of the
/// metadata's up to `namespace` (a map's members are sorted), not a lookup per part; and the
/// members read, for the action ([`table::Identity`], when `obj` and its metadata are maps).
pub(super) fn identity(obj: &Value) -> (RefParts<'_>, Option<table::Identity<'_>>) {
    let Value::Object(top) = obj else { return (RefParts::of(obj), None) };
    let (mut api_version, mut kind, mut meta) = (None, None, None);
    for (k, v) in top {
        match k.as_str() {
            "apiVersion" => api_version = Some(v),
            "kind" => kind = Some(v),
            "metadata" => {
                meta = Some(v);
                break;
            }
            k if table::key_order(k, "metadata").is_gt() => break,
            _ => {}
        }
    }
    let (mut name, mut generate, mut namespace) = (None, None, None);
    let metadata = match meta {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    };
    for (k, v) in metadata.into_iter().flatten() {
        match k.as_str() {
            "generateName" => generate = Some(v),
            "name" => name = Some(v),
            "namespace" => {
                namespace = Some(v);
                break;
            }
            k if table::key_order(k, "namespace").is_gt() => break,
            _ => {}
        }
    }
    fn text(v: Option<&Value>) -> &str {
        v.and_then(Value::as_str).unwrap_or("")
    }
    let (group, version) = crate::object::split_api_version(text(api_version));
    let named = if text(name).is_empty() { text(generate) } else { text(name) };
    let parts =
        RefParts { group, kind: text(kind), namespace: text(namespace), name: named, version };
    let known =
        metadata.map(|metadata| table::Identity { api_version, kind, metadata, name, namespace });
    (parts, known)
}

/// A built-in's error: what the script would have raised (the name and object made for it
/// are moved in, not copied).
fn builtin_error(script: String, object: ObjectRef, f: table::Fault) -> ActionError {
    ActionError::Script { script, object: Box::new(object), reason: f.0 }
}

fn result_error(script: String, object: ObjectRef, b: Bad) -> ActionError {
    ActionError::Result { script, object: Box::new(object), pointer: b.pointer, message: b.message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// [`identity`] reads what [`RefParts::of`] reads, on every input of Argo CD 3.6.2's
    /// action tests and on objects whose parts are missing, not text, or beside members
    /// sorting around them.
    #[test]
    #[allow(clippy::disallowed_methods)]
    fn identity_is_ref_parts() {
        let mut objects = vec![
            json!({}),
            json!([1]),
            json!("x"),
            json!({"apiVersion": "v1", "kind": "Pod"}),
            json!({"apiVersion": 1, "kind": ["x"], "metadata": "m"}),
            json!({"Kind": "A", "apiVersion": "g/v", "kinda": "B", "metadata": {"name": "n"}}),
            json!({"a": 1, "kind": "K", "metadat": {}, "metadata": {"namespace": "ns"}, "z": 2}),
            json!({"apiVersion": "a/b/c", "metadata": {"generateName": "g-", "name": ""}}),
            json!({"metadata": {"generateName": "g-", "namespace": "n", "namespaces": "x"}}),
            json!({"metadata": {"Name": "N", "name": 3, "namespace": null, "uid": "u"}}),
            json!({"metadata": {"generateName": 1, "labels": {}, "name": "n", "nameX": "y"}}),
            json!({"apiVersion": "", "kind": "", "metadata": {"name": "n", "namespace": "s"}}),
        ];
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/actions/argo-cd-3.6");
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&p).expect("read");
                    objects.extend(crate::object::parse_documents(&text).unwrap_or_default());
                }
            }
        }
        assert!(objects.len() > 200, "{} objects", objects.len());
        for obj in &objects {
            let (parts, known) = identity(obj);
            assert_eq!(parts, RefParts::of(obj), "{obj}");
            // The members read are the object's, for a map whose metadata is a map.
            let meta = obj.get("metadata").and_then(Value::as_object);
            assert_eq!(known.is_some(), meta.is_some(), "{obj}");
            if let (Some(k), Some(m)) = (known, meta) {
                assert_eq!(k.api_version, obj.get("apiVersion"), "{obj}");
                assert_eq!(k.kind, obj.get("kind"), "{obj}");
                assert!(std::ptr::eq(k.metadata, m), "{obj}");
                assert_eq!((k.name, k.namespace), (m.get("name"), m.get("namespace")), "{obj}");
            }
        }
    }
}
