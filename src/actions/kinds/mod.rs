//! The built-in resource actions: every action Argo CD 3.6.2 ships a Lua script for
//! (`resource_customizations/<group>/<Kind>/actions/`), written in Rust. They need no Lua and
//! no sandbox, and give what the scripts give on every input: the same actions, `disabled`
//! flags, icons, display names and parameters from discovery, the same objects from a run.
//!
//! [`CATALOG`] is the one list of the built-in kinds and the file each lives in: a module per
//! family of API groups (`apps.rs`, `fluxcd.rs` for the `*.toolkit.fluxcd.io` groups, ...).
//! [`table`] is the vocabulary the actions are written in: the object as a script holds and
//! changes it, and the returned table as the Lua engine encodes it. A built-in action returns
//! what the script returns, as JSON; the result is then read exactly as a script's result is.
//! A built-in discovery returns its table's entries as data ([`Offers`]), read by the same
//! rules as a script's table (`actions::result::read_offers`).
//!
//! Argo CD looks built-in actions up by the exact group and kind (no wildcard folders).

pub(crate) mod table;

mod apps;
mod argoproj_io;
mod batch;
mod capsule;
mod cnpg;
mod fluxcd;
mod keda;
mod numaproj;
mod others;

use serde_json::Value;

use table::{Call, Fault, Lv, Obj, Out};

/// The discovery of one kind: the table its `discovery.lua` returns.
pub(crate) type Discover = fn(Lv<'_>) -> Result<Offers, Fault>;

/// One action: the object (read as the script reads it, copied as [`table::view`] gives it
/// on its first change: [`Obj`]) in, the table its `action.lua` returns out.
pub(crate) type Run = fn(Obj<'_>, &Call<'_>) -> Result<Out, Fault>;

/// The built-in actions of one kind.
#[derive(Clone, Copy)]
pub(crate) struct Kind {
    /// The API group, as Argo CD's folder names it.
    pub(crate) group: &'static str,
    /// The kind.
    pub(crate) kind: &'static str,
    /// What `discovery.lua` decides.
    pub(crate) discover: Discover,
    /// Each `actions/<name>/action.lua`, by name.
    pub(crate) actions: &'static [(&'static str, Run)],
}

impl Kind {
    /// `<group>/<Kind>`, the path of Argo CD's folder.
    pub(crate) fn name(&self) -> String {
        crate::object::group_kind_key(self.group, self.kind)
    }

    /// `built-in <group>/<Kind>/actions/<what>`: how results and errors name the built-in
    /// (`what` is `discovery` or the action).
    pub(crate) fn script_name(&self, what: &str) -> String {
        const PREFIX: &str = "built-in ";
        const ACTIONS: &str = "/actions/";
        let len = PREFIX.len() + self.group.len() + 1 + self.kind.len() + ACTIONS.len();
        let mut out = String::with_capacity(len + what.len());
        out.push_str(PREFIX);
        if !self.group.is_empty() {
            out.push_str(self.group);
            out.push('/');
        }
        out.push_str(self.kind);
        out.push_str(ACTIONS);
        out.push_str(what);
        out
    }

    /// The action called `name`.
    pub(crate) fn action(&self, name: &str) -> Option<Run> {
        self.actions.iter().find(|(n, _)| *n == name).map(|(_, run)| *run)
    }
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("group", &self.group).field("kind", &self.kind).finish()
    }
}

/// Every built-in kind, a list per module.
pub(crate) const CATALOG: &[&[Kind]] = &[
    apps::KINDS,
    argoproj_io::KINDS,
    batch::KINDS,
    capsule::KINDS,
    cnpg::KINDS,
    fluxcd::KINDS,
    keda::KINDS,
    numaproj::KINDS,
    others::KINDS,
];

/// The built-in actions of a group and kind.
pub(crate) fn find(group: &str, kind: &str) -> Option<&'static Kind> {
    // The kind first: most kinds differ there (many share a group).
    for module in CATALOG {
        for k in *module {
            if k.kind == kind && k.group == group {
                return Some(k);
            }
        }
    }
    None
}

/// Every built-in kind, sorted by `<group>/<Kind>`.
pub(crate) fn all() -> Vec<&'static Kind> {
    let mut all: Vec<&'static Kind> = CATALOG.iter().flat_map(|k| k.iter()).collect();
    all.sort_by_key(|k| (k.group, k.kind));
    all
}

/// An action entry of a discovery table, as the script's table holds it: `{disabled = ...,
/// iconClass = ..., displayName = ..., params = {{name = ...}}}` with the members that are set.
/// Read into a [`crate::actions::ResourceAction`] by `actions::result::read_offers`, which
/// checks `disabled` as a script's is checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// `disabled`, as the script's value (a boolean, or what makes the result an error).
    pub(crate) disabled: Option<Value>,
    /// `iconClass`.
    pub(crate) icon: Option<&'static str>,
    /// `displayName`.
    pub(crate) display: Option<&'static str>,
    /// The one parameter's `name` (Argo CD 3.6 reads no other member of a parameter).
    pub(crate) param: Option<&'static str>,
}

/// An entry without parameters.
pub(crate) fn entry(
    disabled: Option<Value>,
    icon: Option<&'static str>,
    display: Option<&'static str>,
) -> Entry {
    Entry { disabled, icon, display, param: None }
}

impl Entry {
    /// The entry with one parameter, `{{name = "<param>"}}`.
    pub(crate) fn with_param(self, name: &'static str) -> Entry {
        Entry { param: Some(name), ..self }
    }
}

/// A discovery table: its actions by name, in the order written (a later entry of a name
/// replaces an earlier one, as in a table).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Offers(pub(crate) Vec<(&'static str, Entry)>);

/// The discovery table of `entries`.
pub(crate) fn actions(entries: impl IntoIterator<Item = (&'static str, Entry)>) -> Offers {
    Offers(entries.into_iter().collect())
}

/// A boolean as a `disabled` member.
pub(crate) fn flag(b: bool) -> Option<Value> {
    Some(Value::Bool(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The catalog holds each kind once, and Argo CD 3.6.2's 39 kinds with their 103 action
    /// scripts (PerconaServerMongoDB's `pause` is offered but has no script, as in Argo CD).
    #[test]
    fn catalog_lists_each_kind_once() {
        let all = all();
        let mut names: Vec<String> = all.iter().map(|k| k.name()).collect();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert_eq!(all.len(), 39);
        assert_eq!(all.iter().map(|k| k.actions.len()).sum::<usize>(), 103);
    }

    /// `v` with what a script never sees: a `null` member in every map, a `null` first item in
    /// every list, every integer as a float.
    fn noisy(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut m: serde_json::Map<String, Value> =
                    m.iter().map(|(k, v)| (k.clone(), noisy(v))).collect();
                m.insert("zNull".into(), Value::Null);
                Value::Object(m)
            }
            Value::Array(a) => {
                Value::Array(std::iter::once(Value::Null).chain(a.iter().map(noisy)).collect())
            }
            Value::Number(n) if n.is_i64() => Value::from(n.as_f64().unwrap_or_default()),
            other => other.clone(),
        }
    }

    /// Every input of Argo CD 3.6.2's action tests of a kind, as it is and made noisy (read
    /// from `testdata/` here: `Obj` and the catalog are private to `actions`).
    #[allow(clippy::disallowed_methods)]
    fn inputs(kind: &Kind) -> Vec<Value> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/actions/argo-cd-3.6")
            .join(kind.group)
            .join(kind.kind)
            .join("actions/testdata");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if !entry.path().is_file() {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).expect("read");
            for obj in crate::object::parse_documents(&text).unwrap_or_default() {
                out.push(noisy(&obj));
                out.push(obj);
            }
        }
        out
    }

    /// The object an action leaves, whole.
    fn whole(out: Result<Out, Fault>, source: &Value) -> Result<Value, Fault> {
        out.map(|o| match o {
            Out::Object(edits) => edits.into_value(source),
            Out::Create(v) | Out::Made { resource: v, .. } => v,
        })
    }

    /// An action reads the object where it lies and keeps its changes by path (`table::Obj`):
    /// the object they leave is the one it leaves when handed the copy ([`table::view`]) from
    /// the start, as built-ins were run before, on every test input of every built-in kind,
    /// also with `null`s and integral floats the view leaves out or turns into integers.
    #[test]
    fn reading_in_place_is_reading_the_view() {
        let params = BTreeMap::from([("replicas".to_string(), "3".to_string())]);
        let call = Call { params: &params, now: 1_700_000_000 };
        let mut runs = 0;
        for kind in all() {
            for obj in inputs(kind) {
                for (name, run) in kind.actions {
                    let lazy = whole(run(Obj::new(&obj), &call), &obj);
                    let eager = whole(run(Obj::viewed(&obj), &call), &obj);
                    assert_eq!(lazy, eager, "{} {name} on {obj}", kind.name());
                    runs += 1;
                }
            }
        }
        assert!(runs > 200, "{runs} runs");
    }

    /// The patch made from an action's changes alone (`result::read_builtin` without a copy
    /// of the object) is the patch between the source and the whole object the action
    /// leaves, operation for operation, on every test input of every built-in kind (plain
    /// and noisy: the members a change leaves alone are compared where the source does not
    /// read back as itself); it applies to the input and gives that object. A created object
    /// reads as the entry of a list of created objects does.
    #[test]
    fn the_patch_of_the_changes_is_the_patch_of_the_object() {
        use crate::actions::result::read_builtin;
        let params = BTreeMap::from([("replicas".to_string(), "3".to_string())]);
        let call = Call { params: &params, now: 1_700_000_000 };
        let policy = crate::actions::ActionPolicy::default();
        let (mut by_path, mut created) = (0, 0);
        for kind in all() {
            for obj in inputs(kind) {
                let parts = crate::object::RefParts::of(&obj);
                for (name, run) in kind.actions {
                    let at = format!("{} {name} on {obj}", kind.name());
                    let read = |o| read_builtin(o, &obj, &parts, &policy);
                    let fast = run(Obj::new(&obj), &call).map(read);
                    let slow = run(Obj::viewed(&obj), &call).map(read);
                    let made = run(Obj::new(&obj), &call);
                    if let Ok(Out::Create(v) | Out::Made { resource: v, .. }) = made {
                        // Read as the entry of a list of created objects is.
                        let entry = serde_json::json!([{"operation": "create", "resource": v}]);
                        let listed = crate::actions::result::read_impacted(entry, &obj, &policy);
                        assert_eq!(fast.as_ref().ok(), Some(&listed), "{at}");
                        created += 1;
                    }
                    let (Ok(Ok(fast)), Ok(Ok(slow))) = (&fast, &slow) else {
                        assert_eq!(fast, slow, "{at}");
                        continue;
                    };
                    assert_eq!(fast.len(), slow.len(), "{at}");
                    for (f, s) in fast.iter().zip(slow) {
                        assert_eq!((f.operation, &f.patch), (s.operation, &s.patch), "{at}");
                        if f.resource.is_none() {
                            by_path += 1;
                            assert_eq!(f.apply_to(&obj).as_ref(), s.resource.as_ref(), "{at}");
                        }
                    }
                }
            }
        }
        assert!(by_path > 100, "{by_path} patches by path");
        assert!(created >= 6, "{created} objects created");
    }

    /// A Workflow an action makes ([`Out::Made`]) reads as the entry of a list of created
    /// objects does, also where the checks it skips would find something: a name the API
    /// server refuses, no namespace or one that is not a string, a policy that refuses
    /// Workflows, none or other namespaces.
    #[test]
    fn a_made_workflow_reads_as_a_listed_one() {
        use crate::actions::ActionPolicy;
        use crate::actions::result::{read_builtin, read_impacted};
        let params = BTreeMap::new();
        let call = Call { params: &params, now: 1_700_000_000 };
        let policies = [
            ActionPolicy::default(),
            ActionPolicy::default().with_same_namespace(false),
            ActionPolicy::default().with_creatable(["batch/*"]),
            ActionPolicy::default().with_creatable(Vec::<String>::new()),
        ];
        let (mut made, mut refused) = (0, 0);
        for kind in ["CronWorkflow", "WorkflowTemplate"] {
            let k = all()
                .into_iter()
                .find(|k| k.group == "argoproj.io" && k.kind == kind)
                .expect("kind");
            let (_, run) = k.actions[0];
            for (name, namespace) in [
                (serde_json::json!("wf"), Some(serde_json::json!("default"))),
                (serde_json::json!("Bad_Name"), Some(serde_json::json!("default"))),
                (serde_json::json!(12), None),
                (serde_json::json!("wf"), Some(serde_json::json!(5))),
                (serde_json::json!("x".repeat(300)), Some(serde_json::json!(""))),
            ] {
                let mut obj = serde_json::json!({
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": kind,
                    "metadata": {"name": name, "uid": "u"},
                    "spec": {"workflowSpec": {"entrypoint": "main"}},
                });
                if let Some(ns) = namespace {
                    obj["metadata"]["namespace"] = ns;
                }
                let parts = crate::object::RefParts::of(&obj);
                for policy in &policies {
                    let Ok(out @ Out::Made { .. }) = run(Obj::new(&obj), &call) else {
                        panic!("{kind} on {obj}: not made");
                    };
                    let Out::Made { resource, .. } = &out else { unreachable!() };
                    // Encoded already, as `Out::Made` holds it.
                    assert_eq!(&table::encode(resource.clone()), resource, "{kind} on {obj}");
                    let entry = serde_json::json!([{"operation": "create", "resource": resource}]);
                    let listed = read_impacted(entry, &obj, policy);
                    refused += usize::from(listed.is_err());
                    assert_eq!(read_builtin(out, &obj, &parts, policy), listed, "{kind} on {obj}");
                    made += 1;
                }
            }
        }
        assert_eq!(made, 40);
        assert!(refused > 10 && refused < 30, "{refused} refused");
    }
}
