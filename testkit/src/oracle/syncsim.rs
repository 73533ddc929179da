//! A sync operation driven through gitops-core's `step` against the simulated cluster of the
//! `sync` differential cases, and the comparison of its calls with those Argo CD's sync made
//! (`oracle/sync.go`, which states the cluster's rules; this file follows the same ones).
//! Shared by the differential runner (`oracle/runner.rs`) and the replay of recorded answers
//! (`src/tests/oracle_replay.rs`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use gitops_core::sync::{
    ActionKind, HostAction, LiveObject, NamespaceLookup, Observations, Outcome, SyncRequest,
    SyncState, Task, TaskState,
};
use gitops_core::{config::Application, health::HealthResult, object::ObjectRef, object::Scopes};

const FAIL_ANNOTATION: &str = "oracle.gitops-core/fail";
const HEALTH_ANNOTATION: &str = "oracle.gitops-core/health";
const TRACKING_ANNOTATION: &str = "argocd.argoproj.io/tracking-id";
const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";
const SIMULATED_FAILURE: &str = "simulated failure";
/// The most passes a case may take (as in the oracle).
const MAX_PASSES: usize = 15;
/// The most `step` calls in one pass.
const MAX_CALLS: usize = 40;

/// The built-in kinds the simulated API server serves: group, kind, namespaced.
const BUILTIN_KINDS: [(&str, &str, bool); 12] = [
    ("", "Namespace", false),
    ("", "ConfigMap", true),
    ("", "Secret", true),
    ("", "Service", true),
    ("", "ServiceAccount", true),
    ("", "Pod", true),
    ("apps", "Deployment", true),
    ("batch", "Job", true),
    ("rbac.authorization.k8s.io", "ClusterRole", false),
    ("rbac.authorization.k8s.io", "Role", true),
    ("rbac.authorization.k8s.io", "RoleBinding", true),
    ("apiextensions.k8s.io", "CustomResourceDefinition", false),
];

fn annotation<'a>(o: &'a Value, key: &str) -> &'a str {
    o["metadata"]["annotations"][key].as_str().unwrap_or("")
}

fn fails(o: &Value, what: &str) -> bool {
    annotation(o, FAIL_ANNOTATION).split(',').any(|i| i.trim() == what)
}

/// The simulated cluster: objects by `group/kind/namespace/name`.
#[derive(Default)]
struct Cluster {
    objects: BTreeMap<String, Value>,
    uids: u64,
}

impl Cluster {
    /// Served kinds: (group, kind) → namespaced.
    fn kinds(&self) -> BTreeMap<(String, String), bool> {
        let mut out: BTreeMap<(String, String), bool> =
            BUILTIN_KINDS.iter().map(|(g, k, n)| ((g.to_string(), k.to_string()), *n)).collect();
        for o in self.objects.values() {
            let r = ObjectRef::from_object_lossy(o);
            if r.group != "apiextensions.k8s.io" || r.kind != "CustomResourceDefinition" {
                continue;
            }
            let spec = &o["spec"];
            let group = spec["group"].as_str().unwrap_or("").to_string();
            let kind = spec["names"]["kind"].as_str().unwrap_or("").to_string();
            let has_version = spec["versions"].as_array().is_some_and(|v| !v.is_empty());
            if has_version {
                out.insert((group, kind), spec["scope"].as_str() != Some("Cluster"));
            }
        }
        out
    }

    /// The group versions the simulated server serves (`v1`, `apps/v1`, `example.com/v1`).
    fn group_versions(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = BUILTIN_KINDS
            .iter()
            .map(|(g, _, _)| if g.is_empty() { "v1".to_string() } else { format!("{g}/v1") })
            .collect();
        for o in self.objects.values() {
            let r = ObjectRef::from_object_lossy(o);
            if r.group != "apiextensions.k8s.io" || r.kind != "CustomResourceDefinition" {
                continue;
            }
            let group = o["spec"]["group"].as_str().unwrap_or("");
            for v in o["spec"]["versions"].as_array().into_iter().flatten() {
                if let Some(name) = v["name"].as_str() {
                    out.insert(format!("{group}/{name}"));
                }
            }
        }
        out
    }

    fn cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.kinds().get(&(group.to_string(), kind.to_string())) == Some(&false)
    }

    /// The key of a call: no namespace for a cluster-scoped kind.
    fn op_key(&self, r: &ObjectRef) -> String {
        let ns = if self.cluster_scoped(&r.group, &r.kind) { "" } else { r.namespace.as_str() };
        format!("{}/{}/{}/{}", r.group, r.kind, ns, r.name)
    }

    fn find(&self, r: &ObjectRef) -> Option<String> {
        [r.namespace.as_str(), ""]
            .iter()
            .map(|ns| format!("{}/{}/{}/{}", r.group, r.kind, ns, r.name))
            .find(|k| self.objects.contains_key(k))
    }

    fn store(&mut self, obj: &Value) {
        let mut o = obj.clone();
        let r = ObjectRef::from_object_lossy(&o);
        if self.cluster_scoped(&r.group, &r.kind)
            && let Some(m) = o["metadata"].as_object_mut()
        {
            m.remove("namespace");
        }
        let key = ObjectRef::from_object_lossy(&o).key();
        let uid = match self.objects.get(&key) {
            Some(old) => old["metadata"]["uid"].clone(),
            None => {
                self.uids += 1;
                json!(format!("uid-{}", self.uids))
            }
        };
        o["metadata"]["uid"] = uid;
        self.objects.insert(key, o);
    }

    /// Deletes an object, or marks it deleted while it has finalizers.
    fn remove(&mut self, key: &str) {
        let Some(o) = self.objects.get_mut(key) else { return };
        let has_finalizers = o["metadata"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        if has_finalizers {
            if o["metadata"]["deletionTimestamp"].is_null() {
                o["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
            }
        } else {
            self.objects.remove(key);
        }
    }
}

/// The simulated health: Degraded when the annotation says so, else Healthy.
fn health(o: &Value) -> HealthResult {
    let h = if annotation(o, HEALTH_ANNOTATION) == "Degraded" {
        json!({"status": "Degraded", "message": "simulated degradation"})
    } else {
        json!({"status": "Healthy"})
    };
    serde_json::from_value(h).unwrap_or_else(|_| unreachable!("a valid health"))
}

/// Carries out one action on the cluster: the call it stands for and its outcome.
fn execute(cluster: &mut Cluster, a: &HostAction) -> (Value, Outcome) {
    let key = cluster.op_key(&a.key);
    let flags = |pairs: &[(&str, bool)]| {
        pairs.iter().filter(|(_, on)| *on).map(|(n, _)| *n).collect::<Vec<_>>().join(",")
    };
    let (verb, flags) = match a.kind {
        ActionKind::Apply => (
            "apply",
            flags(&[("force", a.force), ("serverSide", a.server_side), ("validate", a.validate)]),
        ),
        ActionKind::Create => ("create", flags(&[("validate", a.validate)])),
        ActionKind::Replace => ("replace", flags(&[("force", a.force)])),
        ActionKind::Update => ("update", String::new()),
        ActionKind::Delete => ("delete", String::new()),
        ActionKind::RemoveFinalizer => ("unfinalize", String::new()),
        ActionKind::Get => ("get", String::new()),
        // The enum is non-exhaustive outside the crate (the runner).
        #[allow(unreachable_patterns)]
        _ => ("unknown", String::new()),
    };
    let mut call = json!({"verb": verb, "key": key});
    if a.dry_run {
        call["dryRun"] = json!(true);
    }
    if !flags.is_empty() {
        call["flags"] = json!(flags);
    }
    let found = cluster.find(&a.key);
    if a.kind == ActionKind::Get {
        call["found"] = json!(found.is_some());
    }
    let outcome = match a.kind {
        ActionKind::Apply | ActionKind::Create | ActionKind::Replace | ActionKind::Update => {
            let obj = a.object.clone().unwrap_or(Value::Null);
            if (a.dry_run && fails(&obj, "dry-run")) || (!a.dry_run && fails(&obj, "apply")) {
                Outcome::failed(&a.id, SIMULATED_FAILURE)
            } else {
                if !a.dry_run {
                    cluster.store(&obj);
                }
                let name = obj["metadata"]["name"].as_str().unwrap_or("");
                Outcome::ok(&a.id, &format!("{}/{name} {verb}", a.key.kind))
            }
        }
        ActionKind::Delete => match found {
            None => Outcome::not_found(&a.id),
            Some(k) if fails(&cluster.objects[&k], "delete") => {
                Outcome::failed(&a.id, SIMULATED_FAILURE)
            }
            Some(k) => {
                cluster.remove(&k);
                Outcome::ok(&a.id, "")
            }
        },
        ActionKind::RemoveFinalizer => match found {
            None => Outcome::not_found(&a.id),
            Some(k) => {
                let o = cluster.objects.get_mut(&k).unwrap_or_else(|| unreachable!("found"));
                if let Some(f) = o["metadata"]["finalizers"].as_array_mut() {
                    f.retain(|x| x.as_str() != Some(HOOK_FINALIZER));
                }
                let gone = o["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty)
                    && !o["metadata"]["deletionTimestamp"].is_null();
                if gone {
                    cluster.objects.remove(&k);
                }
                Outcome::ok(&a.id, "")
            }
        },
        _ => match found {
            Some(_) => Outcome::ok(&a.id, ""),
            None => Outcome::not_found(&a.id),
        },
    };
    (call, outcome)
}

/// Runs the sync operation of a `sync` case (`app` with `operation.sync`, `desired`, `live`,
/// `startedAt`) through gitops-core's `step` to its end, pass by pass as the oracle does, and
/// answers in the oracle's shape; each pass's calls come in `batches`: the groups of
/// actions, in order, whose members may run in any order.
// `Observations` is non-exhaustive outside the crate, so it is filled field by field.
#[allow(clippy::field_reassign_with_default)]
pub fn run(params: &Value) -> Result<Value, String> {
    let app = Application::from_value(&params["app"]).map_err(|e| e.to_string())?;
    let desired = params["desired"].as_array().cloned().unwrap_or_default();
    let started_at = params["startedAt"].as_i64().unwrap_or(0);
    let mut cluster = Cluster::default();
    for o in params["live"].as_array().into_iter().flatten() {
        cluster.objects.insert(ObjectRef::from_object_lossy(o).key(), o.clone());
    }
    let mut request = SyncRequest::from_operation(&app, desired.clone(), started_at);
    let ns = request.app_namespace.clone();
    let mut state = SyncState::default();
    let mut passes = Vec::new();
    for pass in 0..MAX_PASSES {
        let kinds = cluster.kinds();
        let mut scopes = Scopes::builtin();
        scopes.add_crds(cluster.objects.values());
        request.scopes = scopes;
        let mut obs = Observations::default();
        obs.now = started_at + pass as i64;
        obs.live = cluster
            .objects
            .values()
            .filter(|o| !annotation(o, TRACKING_ANNOTATION).is_empty())
            .map(|o| LiveObject::new(o.clone(), Some(health(o))))
            .collect();
        obs.missing_kinds = desired
            .iter()
            .chain(cluster.objects.values())
            .map(ObjectRef::from_object_lossy)
            .filter(|r| !kinds.contains_key(&(r.group.clone(), r.kind.clone())))
            .map(|r| r.group_kind())
            .collect();
        // A host's discovery fails for a group version the server does not serve at all;
        // it reports that error with the missing kind.
        let served = cluster.group_versions();
        for o in desired.iter().chain(cluster.objects.values()) {
            let r = ObjectRef::from_object_lossy(o);
            let gv = o["apiVersion"].as_str().unwrap_or("");
            if obs.missing_kinds.contains(&r.group_kind()) && !served.contains(gv) {
                obs.discovery_errors.insert(
                    r.group_kind(),
                    format!(
                        "failed to discover server resources for group version {gv}: the \
                         server could not find the requested resource"
                    ),
                );
            }
        }
        obs.namespace = match cluster.objects.get(&format!("/Namespace//{ns}")) {
            Some(o) => NamespaceLookup::Found { object: o.clone() },
            None => NamespaceLookup::NotFound,
        };
        let mut batches: Vec<Vec<Value>> = Vec::new();
        let mut calls = 0;
        let last = loop {
            calls += 1;
            if calls > MAX_CALLS {
                return Err(format!("pass {pass}: more than {MAX_CALLS} step calls"));
            }
            let s = request.step(&state, &obs);
            state = s.state.clone();
            if s.actions.is_empty() {
                break s;
            }
            let mut outcomes = Vec::new();
            let mut groups: BTreeMap<u32, Vec<Value>> = BTreeMap::new();
            for a in &s.actions {
                let (call, outcome) = execute(&mut cluster, a);
                groups.entry(a.group).or_default().push(call);
                outcomes.push(outcome);
            }
            batches.extend(groups.into_values());
            obs.outcomes = outcomes;
        };
        let wave = last.wave.map(|w| json!({"phase": w.phase, "wave": w.wave, "last": w.last}));
        passes.push(json!({"batches": batches, "wave": wave,
            "phase": format!("{:?}", state.phase), "message": state.message}));
        if last.done {
            break;
        }
    }
    let results: Vec<Value> = state
        .results
        .iter()
        .map(|r| {
            let code = r.status.map(|c| format!("{c:?}")).unwrap_or_default();
            // Go writes a pending task's state as "".
            let hook_phase = match r.hook_phase {
                TaskState::Pending => String::new(),
                other => format!("{other:?}"),
            };
            json!({"group": r.key.group, "kind": r.key.kind, "namespace": r.key.namespace,
                "name": r.key.name, "status": code, "hookPhase": hook_phase,
                "syncPhase": r.sync_phase.as_str(),
                "hookType": r.hook_type.map(|h| h.as_str()).unwrap_or(""), "message": r.message})
        })
        .collect();
    Ok(json!({"passes": passes, "phase": format!("{:?}", state.phase),
        "message": state.message, "results": results}))
}

/// One call as compared: `verb key [dry-run] [flags]`.
fn call_text(c: &Value) -> String {
    let mut s = format!("{} {}", c["verb"].as_str().unwrap_or(""), c["key"].as_str().unwrap_or(""));
    if c["dryRun"] == true {
        s.push_str(" dry-run");
    }
    if let Some(f) = c["flags"].as_str().filter(|f| !f.is_empty()) {
        s.push_str(&format!(" [{f}]"));
    }
    s
}

/// Whether the case has objects that tie in Go's task order (phase and wave apart): one name
/// and one kind rank (so one kind, or two custom resource kinds), other identities (another
/// namespace, group or custom kind).
fn has_tie(params: &Value) -> bool {
    let ns = params["app"]["spec"]["destination"]["namespace"].as_str().unwrap_or("");
    let objects: Vec<(i32, String, String)> = ["desired", "live"]
        .iter()
        .flat_map(|k| params[*k].as_array().into_iter().flatten())
        .map(ObjectRef::from_object_lossy)
        .map(|r| {
            let namespace = if r.namespace.is_empty() { ns } else { r.namespace.as_str() };
            let identity = format!("{}/{}/{namespace}", r.group, r.kind);
            (Task::kind_rank_of(&r.kind), r.name, identity)
        })
        .collect();
    objects
        .iter()
        .enumerate()
        .any(|(i, a)| objects.iter().skip(i + 1).any(|b| a.0 == b.0 && a.1 == b.1 && a.2 != b.2))
}

/// Whether a live object of the case has `Replace=true` or `Force=true` in its sync options.
fn live_replace_or_force(params: &Value) -> bool {
    params["live"].as_array().into_iter().flatten().any(|l| {
        annotation(l, "argocd.argoproj.io/sync-options")
            .split(',')
            .any(|o| matches!(o.trim(), "Replace=true" | "Force=true"))
    })
}

/// Whether two adjacent groups of gitops-core's tie under Go's task order: both only applies
/// of objects of one name whose kinds Go ranks alike (kinds outside its kind order, i.e.
/// custom resources). Go's unstable sort leaves such tasks in map order, so it may run them
/// in either order.
fn tied(a: &[Value], b: &[Value]) -> bool {
    let tie_key = |c: &Value| -> Option<(i32, String)> {
        let verb = c["verb"].as_str()?;
        if !matches!(verb, "apply" | "create" | "replace" | "update") {
            return None;
        }
        let key = c["key"].as_str()?;
        let parts: Vec<&str> = key.splitn(4, '/').collect();
        let (kind, name) = (parts.get(1)?, parts.get(3)?);
        Some((Task::kind_rank_of(kind), format!("{name} {}", c["dryRun"] == true)))
    };
    let keys: BTreeSet<Option<(i32, String)>> = a.iter().chain(b).map(tie_key).collect();
    keys.len() == 1 && keys.iter().next().is_some_and(Option::is_some)
}

/// Whether two messages differ in one word only, each naming a task (`group/Kind/name`) of one
/// name and of kinds Go ranks alike (custom resources): Go's unstable sort leaves such tasks in
/// map order, so the message may name either first: Argo CD's message is then one it may give,
/// and the two agree (as the calls of tied tasks in another order do).
fn names_tied_task(ours: &str, argo: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.split(' ').collect(), argo.split(' ').collect());
    if a.len() != b.len() {
        return false;
    }
    let differing: Vec<(&str, &str)> =
        a.iter().zip(&b).filter(|(x, y)| x != y).map(|(x, y)| (*x, *y)).collect();
    let task = |w: &str| -> Option<(i32, String)> {
        let parts: Vec<&str> = w.split('/').collect();
        let (kind, name) = match parts.as_slice() {
            [_, kind, name] | [kind, name] => (*kind, *name),
            _ => return None,
        };
        Some((Task::kind_rank_of(kind), name.to_string()))
    };
    match differing.as_slice() {
        [(x, y)] => task(x).is_some_and(|t| Some(&t) == task(y).as_ref()),
        _ => false,
    }
}

const FAILED_TO_APPLY: &str = "one or more objects failed to apply";
const NOT_VALID: &str = "one or more synchronization tasks are not valid";

/// The signature of differing operation messages: `sync:message:waiting-for` when both wait
/// (for different lists of tasks), `sync:message:not-valid` when both say the tasks are not
/// valid (gitops-core adds the reasons), `sync:message:prune-confirmation` for the two
/// spellings of the wait for a prune confirmation, `sync:message:tasks-running` when
/// gitops-core names what it waits for where Argo CD's message stays "one or more tasks are
/// running", else `sync:message`.
fn message_signature(ours: &str, argo: &str) -> String {
    let both = |prefix: &str| ours.starts_with(prefix) && argo.starts_with(prefix);
    if both("waiting for ") {
        "sync:message:waiting-for".into()
    } else if ours.starts_with("waiting for pruning confirmation of ")
        && argo.starts_with("Waiting for pruning confirmation of ")
    {
        "sync:message:prune-confirmation".into()
    } else if both(NOT_VALID) {
        "sync:message:not-valid".into()
    } else if argo == "one or more tasks are running" && ours.starts_with("waiting for ") {
        "sync:message:tasks-running".into()
    } else {
        "sync:message".into()
    }
}

/// A divergence: the RFC 6901 pointer into gitops-core's answer, its value and Argo CD's.
pub type Found = (String, Value, Value);

/// Normalises an operation message whose reasons Go joins in map order: the reasons after
/// `reason: ` sorted.
fn reasons_sorted(m: &str) -> String {
    m.lines()
        .map(|line| match line.split_once(", reason: ") {
            Some((head, reasons)) => {
                let mut r: Vec<&str> = reasons.split(',').collect();
                r.sort_unstable();
                format!("{head}, reason: {}", r.join(","))
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compares gitops-core's answer with Argo CD's: per pass, the calls (in the order of
/// gitops-core's groups; inside a group, and across groups that tie under Go's sort, in any
/// order), the wave that ran, and the phase and message; then the final phase, message and
/// the results by result key. Signatures: `sync:calls`, `sync:pass-count`, `sync:wave`,
/// `sync:message`, `sync:phase`, `sync:result:<Kind>:<field>`, `sync:result:<Kind>:missing`.
pub fn compare(params: &Value, ours: &Value, argo: &Value) -> BTreeMap<String, Found> {
    let mut out = BTreeMap::new();
    let empty = Vec::new();
    let our_passes = ours["passes"].as_array().unwrap_or(&empty);
    let their_passes = argo["passes"].as_array().unwrap_or(&empty);
    for (i, (p, q)) in our_passes.iter().zip(their_passes).enumerate() {
        // Every call counts, the GETs of running tasks without a live object too (Argo CD
        // 3.6's engine makes them as gitops-core does).
        let groups: Vec<Value> = p["batches"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|g| g.as_array().is_some_and(|g| !g.is_empty()))
            .cloned()
            .collect();
        let calls = q["ops"].as_array().unwrap_or(&empty);
        // Windows: gitops-core's groups, adjacent ones merged where they tie in Go's order.
        let mut windows: Vec<Vec<Value>> = Vec::new();
        let mut previous: Option<Vec<Value>> = None;
        for g in &groups {
            let g = g.as_array().cloned().unwrap_or_default();
            match (&previous, windows.last_mut()) {
                (Some(prev), Some(w)) if tied(prev, &g) => w.extend(g.iter().cloned()),
                _ => windows.push(g.clone()),
            }
            previous = Some(g);
        }
        let (m, n) = (p["message"].as_str().unwrap_or(""), q["message"].as_str().unwrap_or(""));
        let mut at = 0;
        let mut diverged = false;
        for w in &windows {
            let theirs: Vec<&Value> = calls.iter().skip(at).take(w.len()).collect();
            let mut a: Vec<String> = w.iter().map(call_text).collect();
            let mut b: Vec<String> = theirs.iter().map(|c| call_text(c)).collect();
            a.sort();
            b.sort();
            if a != b {
                // Tasks that tie in Go's sort (custom resources of one name) may come in either
                // order, and the dependency moves (namespaces, CRDs first) then put other tasks
                // between them: with the same calls in the pass, the order is one Go may take.
                let all = |v: Vec<&Value>| {
                    let mut t: Vec<String> = v.into_iter().map(call_text).collect();
                    t.sort();
                    t
                };
                let same_calls =
                    all(groups.iter().flat_map(|g| g.as_array().into_iter().flatten()).collect())
                        == all(calls.iter().collect());
                // (The tied objects are looked for among the case's objects: one of them may
                // make no call in this pass, as a custom resource in the dry run before its CRD
                // exists.)
                let tie = has_tie(params);
                // The oracle's engine deletes the hooks with HookFailed before it starts the
                // SyncFail hooks after an apply failure; the newer one after they completed.
                let mut extra: Vec<String> = all(calls.iter().collect());
                for c in
                    all(groups.iter().flat_map(|g| g.as_array().into_iter().flatten()).collect())
                {
                    if let Some(x) = extra.iter().position(|e| *e == c) {
                        extra.remove(x);
                    }
                }
                let ours_in_theirs = extra.len()
                    + groups.iter().flat_map(|g| g.as_array().into_iter().flatten()).count()
                    == calls.len();
                let deletes_first = ours_in_theirs
                    && !extra.is_empty()
                    && extra.iter().all(|e| e.starts_with("delete "))
                    && (n == "one or more tasks are running" || n.starts_with(FAILED_TO_APPLY));
                // The newer engine also reads Replace=true and Force=true from the live
                // object's annotation; the oracle's only from the target's.
                let keys = |v: &[String]| {
                    let mut k: Vec<String> =
                        v.iter().map(|c| c.split(' ').nth(1).unwrap_or("").to_string()).collect();
                    k.sort();
                    k
                };
                let live_options = keys(&a) == keys(&b) && live_replace_or_force(params);
                if same_calls && tie {
                    // An order Go may take: the same calls, compared as agreeing (Go's order
                    // of tied tasks changes from run to run; gitops-core's is fixed). What
                    // follows (the tasks left, the message naming the first of them) follows
                    // from the order Go took, so the operation is compared up to here.
                    return out;
                }
                let signature = if live_options {
                    "sync:calls:live-sync-options"
                } else if deletes_first {
                    "sync:calls:hook-failed-deletes-first"
                } else {
                    "sync:calls"
                };
                out.insert(
                    signature.to_string(),
                    (format!("/passes/{i}/batches"), json!(a), json!(b)),
                );
                diverged = true;
                break;
            }
            at += w.len();
        }
        // Argo CD's newer engine (the one gitops-core follows) waits for the wave's running
        // tasks after an apply failure; the oracle's fails at once (and deletes the hooks with
        // HookFailed in the same pass).
        let waits = p["phase"] == "Running"
            && q["phase"] == "Failed"
            && n.starts_with(FAILED_TO_APPLY)
            && m.starts_with("waiting for ");
        let rest: Vec<&Value> = calls.iter().skip(at).collect();
        let only_deletes = rest.iter().all(|c| c["verb"] == "delete");
        if !(diverged || rest.is_empty() || (waits && only_deletes)) {
            let rest: Vec<String> = rest.iter().map(|c| call_text(c)).collect();
            out.insert(
                "sync:calls".to_string(),
                (format!("/passes/{i}/batches"), json!([]), json!(rest)),
            );
        }
        if p["wave"] != q["wave"] {
            out.insert(
                "sync:wave".to_string(),
                (format!("/passes/{i}/wave"), p["wave"].clone(), q["wave"].clone()),
            );
        }
        // The newer engine also waits for the SyncFail hooks it started when one of them
        // fails to apply; the oracle's fails at once.
        let sync_fail_waits = p["phase"] == "Running"
            && q["phase"] == "Failed"
            && n.contains("\none or more SyncFail hooks failed")
            && m.starts_with("waiting for ");
        if p["phase"] != q["phase"] {
            let signature = if waits {
                "sync:phase:failed-apply-waits"
            } else if sync_fail_waits {
                "sync:phase:sync-fail-hook-failed-waits"
            } else {
                "sync:phase"
            };
            out.insert(
                signature.to_string(),
                (format!("/passes/{i}/phase"), p["phase"].clone(), q["phase"].clone()),
            );
        } else if reasons_sorted(m) != reasons_sorted(n) && !names_tied_task(m, n) {
            out.insert(
                message_signature(m, n),
                (format!("/passes/{i}/message"), json!(m), json!(n)),
            );
        }
        if out.keys().any(|k| !k.starts_with("sync:message")) {
            // Later passes follow from the first difference in what was done.
            return out;
        }
    }
    if our_passes.len() != their_passes.len() {
        out.insert(
            "sync:pass-count".to_string(),
            ("/passes".into(), json!(our_passes.len()), json!(their_passes.len())),
        );
        return out;
    }
    let (m, n) = (ours["message"].as_str().unwrap_or(""), argo["message"].as_str().unwrap_or(""));
    if ours["phase"] != argo["phase"] {
        out.insert(
            "sync:phase".into(),
            ("/phase".into(), ours["phase"].clone(), argo["phase"].clone()),
        );
    } else if reasons_sorted(m) != reasons_sorted(n) && !names_tied_task(m, n) {
        out.insert(message_signature(m, n), ("/message".into(), json!(m), json!(n)));
    }
    let key = |r: &Value| {
        format!(
            "{}/{}/{}/{}:{}",
            r["group"].as_str().unwrap_or(""),
            r["kind"].as_str().unwrap_or(""),
            r["namespace"].as_str().unwrap_or(""),
            r["name"].as_str().unwrap_or(""),
            r["syncPhase"].as_str().unwrap_or("")
        )
    };
    let theirs: BTreeMap<String, &Value> =
        argo["results"].as_array().unwrap_or(&empty).iter().map(|r| (key(r), r)).collect();
    let mine: BTreeSet<String> =
        ours["results"].as_array().unwrap_or(&empty).iter().map(key).collect();
    for (i, r) in ours["results"].as_array().unwrap_or(&empty).iter().enumerate() {
        let kind = r["kind"].as_str().unwrap_or("");
        let Some(a) = theirs.get(&key(r)) else {
            out.insert(
                format!("sync:result:{kind}:missing-in-argo"),
                (format!("/results/{i}"), r.clone(), Value::Null),
            );
            continue;
        };
        for f in ["status", "hookPhase", "hookType", "message"] {
            if r[f] != a[f] {
                let (m, n) = (r[f].as_str().unwrap_or(""), a[f].as_str().unwrap_or(""));
                let discovery = f == "message"
                    && m.ends_with(" \"\" not found")
                    && n.starts_with("failed to discover server resources for group version ");
                out.insert(
                    if discovery {
                        "sync:result:discovery-message".to_string()
                    } else {
                        format!("sync:result:{kind}:{f}")
                    },
                    (format!("/results/{i}/{f}"), r[f].clone(), a[f].clone()),
                );
            }
        }
    }
    for (k, a) in &theirs {
        if !mine.contains(k) {
            let kind = a["kind"].as_str().unwrap_or("");
            out.insert(
                format!("sync:result:{kind}:missing"),
                ("/results".into(), Value::Null, (*a).clone()),
            );
        }
    }
    out
}
