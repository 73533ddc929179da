//! Building the ordered task list (`syncContext.getSyncTasks`, gitops-engine v3.6.2
//! pkg/sync/sync_context.go) and the plan.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::reconcile::{self, Desired, Edit, Pair, RefKey, ref_key};
use super::waves;
use super::{
    NamespaceEdit, NamespaceLookup, Observations, Phase, Plan, SyncRequest, Task, TaskAction,
    TaskFlags, TaskObject, TaskOptions, Wave,
};
use crate::object::{ObjectIndex, ObjectRef, split_api_version};
use crate::vocabulary::{
    self, FIELD_MANAGER, HookFacts, ResourceOptions, SYNC_OPTIONS_ANNOTATION, Write,
};

/// The reason of a task left out by `ApplyOutOfSyncOnly` (this crate's wording; Argo CD
/// records no result for it).
pub(super) const UNMODIFIED_REASON: &str = "in sync (ApplyOutOfSyncOnly)";

/// The task list of a sync and whether it could be built.
#[derive(Debug, Clone)]
pub(crate) struct Built<'a> {
    pub tasks: Vec<Task<'a>>,
    pub valid: bool,
    pub warnings: Vec<String>,
    /// A task whose result is set at build time (namespace auto-creation failure).
    pub preset_failures: Vec<(String, String)>,
}

impl SyncRequest {
    /// Builds the ordered sync plan: reconcile `request.targets` with `observations.live`, build a
    /// task per object and phase, order them (phase, wave, kind, name) and group them into waves.
    ///
    /// The plan borrows the objects of `request` and `observations`: planning reads them and copies
    /// none (only a hook, which gets a finalizer and maybe a name, and the auto-created namespace
    /// are new objects), so its cost follows the number of objects, not their size.
    /// [`Task::target`](super::Task::target) builds the object a task sends,
    /// [`Plan::into_owned`](super::Plan::into_owned) a plan that outlives its inputs.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::{Observations, SyncRequest, Phase};
    /// use serde_json::json;
    /// let mut request = SyncRequest::default();
    /// request.app_namespace = "shop".into();
    /// request.targets = vec![
    ///         json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
    ///         json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web",
    ///                "annotations": {"argocd.argoproj.io/sync-wave": "-1"}}}),
    ///         json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate",
    ///                "annotations": {"argocd.argoproj.io/hook": "PreSync"}}}),
    /// ];
    /// let observations = Observations::default();
    /// let plan = request.plan(&observations);
    /// let order: Vec<_> = plan.tasks().map(|t| (t.phase, t.wave, t.key.kind.as_str())).collect();
    /// assert_eq!(order, [(Phase::PreSync, 0, "Job"), (Phase::Sync, -1, "ConfigMap"),
    ///                    (Phase::Sync, 0, "Deployment")]);
    /// assert_eq!(plan.waves.len(), 3);
    /// // The tasks borrow the request's objects; the object sent has the app's namespace.
    /// let web = plan.tasks().last().unwrap();
    /// assert_eq!(web.given_target().unwrap()["metadata"].get("namespace"), None);
    /// assert_eq!(web.target().unwrap()["metadata"]["namespace"], "shop");
    /// ```
    #[must_use]
    pub fn plan<'a>(&'a self, observations: &'a Observations) -> Plan<'a> {
        let request = self;
        let built = build(request, observations);
        let mut waves: Vec<Wave> = Vec::new();
        for t in built.tasks {
            match waves.last_mut() {
                Some(w) if w.phase == t.phase && w.wave == t.wave => w.tasks.push(t),
                _ => waves.push(Wave { phase: t.phase, wave: t.wave, tasks: vec![t] }),
            }
        }
        Plan { waves, valid: built.valid, warnings: built.warnings }
    }
}

/// A task of an owned target (a hook, the auto-created namespace), whose key is read from it.
fn owned_task<'a>(phase: Phase, target: Value, live: Option<Cow<'a, Value>>) -> Task<'a> {
    let (hook, wave) = (vocabulary::is_hook(&target), vocabulary::wave(&target));
    let key = ObjectRef::from_object_lossy(&target);
    task_of(phase, key, Some(TaskObject::new(target)), live, hook, wave)
}

/// A task with its key and wave; a hook's delete policies are read from its object.
fn task_of<'a>(
    phase: Phase,
    key: ObjectRef,
    target: Option<TaskObject<'a>>,
    live: Option<Cow<'a, Value>>,
    hook: bool,
    wave: i64,
) -> Task<'a> {
    let obj = target.as_ref().map(TaskObject::given).or(live.as_deref());
    let delete_policies = match obj {
        Some(o) if hook => vocabulary::delete_policies(o),
        _ => Vec::new(),
    };
    Task {
        kind_rank: Task::kind_rank_of(&key.kind),
        key,
        phase,
        wave,
        hook,
        action: TaskAction::Apply,
        message: String::new(),
        target,
        live,
        flags: TaskFlags::default(),
        delete_policies,
        propagation_policy: Default::default(),
        requires_confirmation: false,
        unmodified: false,
        invalid: None,
        options: TaskOptions::default(),
    }
}

/// An owned key from borrowed parts and a version.
fn object_ref(key: RefKey<'_>, version: &str) -> ObjectRef {
    ObjectRef::new(key.0, version, key.1, key.2, key.3)
}

/// Whether the selective sync's resources (`selection`, their index) keep `key`: one of the
/// same group, kind and name in its namespace or in none.
fn filter_keeps(selection: &ObjectIndex<'_>, key: RefKey<'_>) -> bool {
    selection.first_lenient(key, false).is_some()
}

/// Sets `metadata.namespace` (a `metadata` that is not a map becomes one).
pub(crate) fn set_namespace(obj: &mut Value, ns: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("namespace".into(), Value::String(ns.to_string()));
    } else if let Some(map) = obj.as_object_mut() {
        map.insert("metadata".into(), json!({ "namespace": ns }));
    }
}

/// The name of an unnamed hook: `generateName` + lower(`<rev7>-<phase>-<startedAt>`), where
/// rev7 is the first 7 characters of a revision of 8 or more.
pub(crate) fn generated_hook_name(
    generate_name: &str,
    revision: &str,
    phase: Phase,
    started_at: i64,
) -> String {
    let rev: String = if revision.chars().count() >= 8 {
        revision.chars().take(7).collect()
    } else {
        revision.to_string()
    };
    format!("{generate_name}{}", format!("{rev}-{phase}-{started_at}").to_lowercase())
}

/// Builds the ordered task list (`getSyncTasks`): the resource tasks, the hook tasks and the namespace
/// task, each completed with its live object, options and action; then prune waves, PruneLast
/// and the order.
pub(crate) fn build<'a>(request: &'a SyncRequest, obs: &'a Observations) -> Built<'a> {
    let app = &request.sync_options;
    let ns = request.app_namespace.as_str();
    let mut warnings = Vec::new();
    let source = match &request.normalized_targets {
        Some(t) if app.respect_ignore_differences() => t,
        _ => &request.targets,
    };
    let targets = reconcile::normalize_targets(source, ns, &request.scopes, &mut warnings);
    let crds = crd_kinds(&targets);
    let rec =
        reconcile::reconcile(targets, obs.live.iter().map(|l| &l.object), ns, &request.scopes);
    let builder = Builder { request, obs, crds };
    // Whether Git has the app's namespace: any target, also one a selective sync leaves out
    // (Argo CD looks at every reconciled target, hooks apart).
    let has_ns_resource = rec.pairs.iter().any(|p| {
        p.target.is_some()
            && p.key().is_some_and(|k| k.0.is_empty() && k.1 == "Namespace" && k.3 == ns)
    });
    let mut tasks: Vec<Task<'a>> = Vec::with_capacity(rec.pairs.len() + rec.hooks.len() + 1);
    let mut valid = builder.resource_tasks(&rec.pairs, &mut tasks);
    let resource_tasks = tasks.len();
    if !request.skip_hooks {
        tasks.extend(rec.hooks.iter().flat_map(|h| hook_tasks(request, h.obj)));
    }
    let mut preset_failures = Vec::new();
    if app.create_namespace() && !ns.is_empty() && !has_ns_resource {
        builder.namespace_task(&mut tasks, &mut preset_failures);
    }
    // 5. Find the live copy of named hooks (and of targets paired with nothing, done with the
    // resource tasks): the first pair, in key order, with the same group, kind and name and
    // an empty or equal namespace. 6 (and each task's action) for the tasks it completed.
    for t in &mut tasks[resource_tasks..] {
        if t.target.is_some() && t.live.is_none() {
            t.live = found_live(&rec.pairs, &t.key).map(Cow::Borrowed);
        }
        t.options.target = ResourceOptions::of_some(t.given_target());
        t.options.live = ResourceOptions::of_some(t.live.as_deref());
        valid &= builder.check_and_decide(t);
    }
    order(&mut tasks, request);
    Built { tasks, valid, warnings, preset_failures }
}

/// The group and kind of each CustomResourceDefinition among the targets.
fn crd_kinds<'a>(targets: &[Desired<'a>]) -> Vec<(&'a str, &'a str)> {
    targets
        .iter()
        .filter(|t| t.key.1 == "CustomResourceDefinition")
        .filter_map(|t| {
            let spec = t.obj.get("spec")?;
            Some((spec.get("group")?.as_str()?, spec.get("names")?.get("kind")?.as_str()?))
        })
        .collect()
}

/// Steps 7, 8 and 9: prune waves mirrored, then PruneLast; sorted, then Namespaces and CRDs
/// pulled in front of their first user.
fn order(tasks: &mut Vec<Task<'_>>, request: &SyncRequest) {
    waves::mirror_prune_waves(tasks);
    let last = waves::last_sync_wave(tasks);
    for t in tasks.iter_mut().filter(|t| t.is_prune()) {
        if vocabulary::prune_last(&t.options.live, &request.sync_options) {
            t.wave = last;
        }
    }
    waves::sort(tasks);
    waves::adjust_dependencies(tasks);
}

/// What completing a task reads: the request, the observations, and the kinds the sync's
/// CRDs define.
struct Builder<'a> {
    request: &'a SyncRequest,
    obs: &'a Observations,
    crds: Vec<(&'a str, &'a str)>,
}

impl<'a> Builder<'a> {
    /// Step 1: a task per reconciled pair that the sync keeps, completed (its step 6 and its
    /// action) from what was read of its objects when they were keyed, so none of them is
    /// visited again; whether every one is valid.
    fn resource_tasks(&self, pairs: &[Pair<'a>], tasks: &mut Vec<Task<'a>>) -> bool {
        let request = self.request;
        let selection = ObjectIndex::of_keys(
            request.resources.iter().map(|r| (&*r.group, &*r.kind, &*r.namespace, &*r.name)),
        );
        let mut valid = true;
        // The pairs of the current (group, kind) run keyed without a namespace.
        let (mut run, mut unnamespaced) = (None, 0..0);
        for (i, pair) in pairs.iter().enumerate() {
            let Some(key) = pair.key() else { continue };
            if run != Some((key.0, key.1)) {
                run = Some((key.0, key.1));
                let end = pairs[i..]
                    .iter()
                    .position(|p| p.key().is_none_or(|k| (k.0, k.1, k.2) != (key.0, key.1, "")))
                    .map_or(pairs.len(), |n| i + n);
                unnamespaced = i..end;
            }
            if !request.resources.is_empty() && !filter_keeps(&selection, key) {
                continue;
            }
            let built = match pair.target {
                Some(target) => self.target_task(pair, target, &pairs[unnamespaced.clone()]),
                None => live_only_task(pair),
            };
            if let Some(mut task) = built {
                valid &= self.check_and_decide(&mut task);
                tasks.push(task);
            }
        }
        valid
    }

    /// The task of a pair with a target (not a hook: reconcile set those apart), with the sync
    /// options of its target and live object. A target paired with nothing takes the
    /// live object step 5 finds for it (see [`found_live`]): its own pair has none, so only a
    /// pair keyed with the same group, kind and name and an empty namespace (`same_name`, the
    /// run of such pairs, sorted first in their (group, kind) run) can give it one.
    fn target_task(
        &self,
        pair: &Pair<'a>,
        target: Desired<'a>,
        same_name: &[Pair<'a>],
    ) -> Option<Task<'a>> {
        // `sync_phases` of an object that is not a hook.
        if target.hooks.skip {
            return None;
        }
        let ns = self.request.app_namespace.as_str();
        // 3. Every target gets a namespace (even cluster-scoped ones, as in Argo CD).
        let mut key = object_ref(target.key, target.version);
        if key.namespace.is_empty() && !ns.is_empty() {
            key.namespace = ns.to_string();
        }
        let edit = match target.edit {
            Edit::Keep => NamespaceEdit::Keep,
            Edit::SetApp => NamespaceEdit::Set(Cow::Borrowed(ns)),
            Edit::Remove => NamespaceEdit::Remove,
        };
        let live = match pair.live {
            Some(l) => Some(l),
            None if !target.key.2.is_empty() => same_name
                .binary_search_by(|p| p.key().map(|k| k.3).cmp(&Some(target.key.3)))
                .ok()
                .and_then(|j| same_name[j].live),
            None => None,
        };
        let given = TaskObject::borrowed(target.obj, edit);
        let live_object = live.map(|l| Cow::Borrowed(l.0));
        let mut task = task_of(Phase::Sync, key, Some(given), live_object, false, target.wave);
        task.options.target = target.options;
        task.options.live = live.map(|l| l.2).unwrap_or_default();
        Some(task)
    }

    /// Step 4: `CreateNamespace=true` without the namespace in Git: the namespace task (with
    /// the managed namespace metadata), or its failure when the lookup failed.
    fn namespace_task(
        &self,
        tasks: &mut Vec<Task<'a>>,
        preset_failures: &mut Vec<(String, String)>,
    ) {
        let request = self.request;
        let ns = request.app_namespace.as_str();
        let mut target = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let live = match &self.obs.namespace {
            NamespaceLookup::Found { object } => Some(object),
            NamespaceLookup::NotFound => None,
            NamespaceLookup::Error { message } => {
                let t = owned_task(Phase::PreSync, target, None);
                let failure = format!("namespace auto creation failed: {message}");
                preset_failures.push((t.result_key(), failure));
                tasks.push(t);
                return;
            }
        };
        if let Some(meta) = &request.managed_namespace_metadata {
            let m = &mut target["metadata"];
            if !meta.labels.is_empty() {
                m["labels"] = json!(meta.labels);
            }
            let mut ann = meta.annotations.clone();
            ann.insert(SYNC_OPTIONS_ANNOTATION.to_string(), "ServerSideApply=true".into());
            m["annotations"] = json!(ann);
        }
        if live.is_none() || request.managed_namespace_metadata.is_some() {
            tasks.push(owned_task(Phase::PreSync, target, live.map(Cow::Borrowed)));
        }
    }
}

/// The task of a pair with only a live object (a prune), unless the object is a hook.
fn live_only_task<'a>(pair: &Pair<'a>) -> Option<Task<'a>> {
    let (live, key, live_options) = pair.live?;
    let facts = HookFacts::of(live);
    if facts.hook || facts.skip {
        return None;
    }
    let key = object_ref(key, version_of(live));
    let wave = vocabulary::wave(live);
    let mut task = task_of(Phase::Sync, key, None, Some(Cow::Borrowed(live)), false, wave);
    task.options.live = live_options;
    Some(task)
}

/// Step 2: a hook's tasks, one per phase: its namespace defaulted, named when it has only a
/// `generateName`, with the hook finalizer.
fn hook_tasks<'a>(request: &'a SyncRequest, hook: &'a Value) -> impl Iterator<Item = Task<'a>> {
    let ns = request.app_namespace.as_str();
    super::sync_phases(hook).into_iter().map(move |phase| {
        let mut obj = hook.clone();
        request.scopes.default_namespace(&mut obj, ns);
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        if name.is_empty() {
            let gen_name = obj["metadata"]["generateName"].as_str().unwrap_or("");
            let n = generated_hook_name(gen_name, &request.revision, phase, request.started_at);
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("name".into(), Value::String(n));
            }
        }
        vocabulary::add_hook_finalizer(&mut obj);
        // 3. Every target gets a namespace.
        if ref_key(&obj).2.is_empty() && !ns.is_empty() {
            set_namespace(&mut obj, ns);
        }
        owned_task(phase, obj, None)
    })
}

impl Builder<'_> {
    /// Step 6 for one task, its discovery and permission errors, then its action and flags
    /// ([`decide`]); whether the task is valid. None of this depends on the order or the waves,
    /// so a resource task is completed as soon as it is built.
    fn check_and_decide(&self, t: &mut Task<'_>) -> bool {
        let (request, obs) = (self.request, self.obs);
        let app = &request.sync_options;
        let check_kinds = !obs.missing_kinds.is_empty() || !obs.discovery_errors.is_empty();
        let gk = if check_kinds { t.key.group_kind() } else { String::new() };
        let mut skip_dry_run = false;
        if check_kinds && obs.missing_kinds.contains(&gk) {
            let skip = vocabulary::skip_dry_run_on_missing_resource(&t.options.target, app)
                || self.crds.iter().any(|(g, k)| *g == t.key.group && *k == t.key.kind);
            if skip {
                t.flags.dry_run_first = false;
                t.invalid = None;
                skip_dry_run = true;
            } else {
                let resource = if t.key.group.is_empty() {
                    t.key.kind.clone()
                } else {
                    format!("{}.{}", t.key.kind, t.key.group)
                };
                // The host's discovery error for the kind, when it has one (an API group version
                // the server does not serve at all: Argo CD shows discovery's own error), else the
                // NotFound of a kind a served group version lacks.
                t.invalid = Some(
                    obs.discovery_errors
                        .get(&gk)
                        .cloned()
                        .unwrap_or_else(|| format!("{resource} \"\" not found")),
                );
            }
        } else if check_kinds && let Some(err) = obs.discovery_errors.get(&gk) {
            t.invalid = Some(err.clone());
        } else if let Some(project) = &request.project
            && let Some(err) = project.sync_denial(
                &t.key,
                !request.scopes.is_cluster_scoped(&t.key.group, &t.key.kind),
                &request.destination,
            )
        {
            t.invalid = Some(err);
        } else if !obs.denied.is_empty()
            && let Some(err) = obs.denied.get(&t.key.key())
        {
            t.invalid = Some(err.clone());
        }
        decide(request, t, skip_dry_run);
        t.invalid.is_none()
    }
}

/// The live object of the first pair, in key order, with the group, kind and name of `key`
/// and an empty or equal namespace: of the pair keyed without a namespace if there is one
/// (the empty namespace sorts first), else of the pair with `key`'s.
fn found_live<'a>(pairs: &[Pair<'a>], key: &ObjectRef) -> Option<&'a Value> {
    let find = |ns: &str| {
        let k = (key.group.as_str(), key.kind.as_str(), ns, key.name.as_str());
        pairs.binary_search_by(|p| p.key().cmp(&Some(k))).ok().map(|i| pairs[i].live.map(|l| l.0))
    };
    let found = match find("") {
        None if !key.namespace.is_empty() => find(&key.namespace),
        found => found,
    };
    found.flatten()
}

/// The version of an object's `apiVersion`.
fn version_of(obj: &Value) -> &str {
    split_api_version(obj.get("apiVersion").and_then(Value::as_str).unwrap_or("")).1
}

/// [`decide`] again, for a task whose live object turned out to be gone.
pub(crate) fn decide_action(request: &SyncRequest, t: &mut Task<'_>, skip_dry_run: bool) {
    decide(request, t, skip_dry_run);
}

/// A task's action and flags, from the sync options its target and live object carry (read
/// when the task was built; a live object no longer there carries none): the answers of the
/// option rules ([`vocabulary::prune_object`], [`vocabulary::apply_object`],
/// [`vocabulary::filter_out_of_sync`]) copied onto the task.
fn decide(request: &SyncRequest, t: &mut Task<'_>, skip_dry_run: bool) {
    let app = &request.sync_options;
    t.propagation_policy = app.propagation_policy();
    t.flags.dry_run_first = !skip_dry_run;
    if t.is_prune() {
        let none = ResourceOptions::default();
        let live_options = if t.live.is_some() { &t.options.live } else { &none };
        t.flags.dry_run_first = true;
        // A batch waits for confirmation of such a prune even when pruning is off or
        // disabled for the object (Argo CD checks the option before the prune settings).
        t.requires_confirmation = vocabulary::prune_requires_confirmation(live_options, app);
        t.action = match vocabulary::prune_object(live_options, app, request.prune) {
            Some(reason) => skip(t, reason),
            None => TaskAction::Delete,
        };
        return;
    }
    let live = t.live.as_deref();
    let write = vocabulary::apply_object(
        &t.options.target,
        live.map(|l| (l, &t.options.live)),
        &t.key.kind,
        app,
        request.force,
        &request.client_side_apply_manager,
    );
    t.flags.validate = vocabulary::validate(&t.options.target, app);
    t.action = match write {
        Write::Create => TaskAction::Create,
        Write::Update => TaskAction::Update,
        Write::Replace { force } => {
            t.flags.force = force;
            TaskAction::Replace
        }
        Write::ServerSideApply { force, client_side_apply_migration } => {
            t.flags.force = force;
            t.flags.server_side = true;
            t.flags.field_manager = Some(FIELD_MANAGER.to_string());
            t.flags.client_side_apply_migration = client_side_apply_migration;
            TaskAction::ServerSideApply
        }
        Write::Apply { force } => {
            t.flags.force = force;
            TaskAction::Apply
        }
    };
    if let (Some(modified), Some(l)) = (&request.modified, live) {
        let key = || format!("{}/{}/{}/{}", t.key.group, t.key.kind, ref_key(l).2, t.key.name);
        if vocabulary::filter_out_of_sync(app, t.hook, || modified.get(&key()).copied()) {
            t.unmodified = true;
            t.action = skip(t, UNMODIFIED_REASON);
        }
    }
}

/// A skip for `reason`, which is also the task's message.
fn skip(t: &mut Task<'_>, reason: &str) -> TaskAction {
    t.message = reason.to_string();
    TaskAction::Skip { reason: reason.to_string() }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::sync::LiveObject;

    fn object(i: usize, kind: usize, wave: i64, hook: usize) -> Value {
        let kinds = [
            ("v1", "ConfigMap"),
            ("apps/v1", "Deployment"),
            ("v1", "Namespace"),
            ("batch/v1", "Job"),
        ];
        let (api, kind) = kinds[kind % kinds.len()];
        let mut annotations = json!({"argocd.argoproj.io/sync-wave": wave.to_string()});
        match hook % 4 {
            1 => annotations["argocd.argoproj.io/hook"] = json!("PreSync"),
            2 => annotations["argocd.argoproj.io/hook"] = json!("PostSync,SyncFail"),
            _ => {}
        }
        json!({"apiVersion": api, "kind": kind, "metadata": {
            "name": format!("o{}", i % 7), "namespace": format!("ns{}", i % 3),
            "annotations": annotations}})
    }

    proptest! {
        /// The plan does not depend on the order of its inputs, and its waves are sorted,
        /// complete and non-empty.
        #[test]
        fn plan_is_deterministic(
            specs in proptest::collection::vec((0usize..4, -2i64..3, 0usize..4, any::<bool>()), 0..24),
            seed in any::<u64>(),
        ) {
            let mut targets = Vec::new();
            let mut live = Vec::new();
            for (i, (kind, wave, hook, is_live)) in specs.iter().enumerate() {
                let o = object(i, *kind, *wave, *hook);
                if *is_live { live.push(o) } else { targets.push(o) }
            }
            let request =
                SyncRequest { app_namespace: "app".into(), prune: true, ..SyncRequest::default() };
            let run = |targets: &[Value], live: &[Value]| {
                let mut r = request.clone();
                r.targets = targets.to_vec();
                let obs = Observations {
                    live: live.iter().map(|l| LiveObject::new(l.clone(), None)).collect(),
                    ..Observations::default()
                };
                r.plan(&obs).into_owned()
            };
            let a = run(&targets, &live);
            // A deterministic shuffle of both lists (duplicates keep their relative order,
            // because the last duplicate wins).
            let mut order: Vec<usize> = (0..live.len()).collect();
            order.sort_by_key(|i| (*i as u64).wrapping_mul(seed | 1).rotate_left(17));
            let mut seen = std::collections::BTreeSet::new();
            let unique_live: Vec<Value> = live.iter().rev()
                .filter(|l| seen.insert(ObjectRef::from_object_lossy(l).key()))
                .cloned().collect();
            let shuffled_live: Vec<Value> =
                order.iter().filter_map(|i| unique_live.get(*i).cloned()).collect();
            let b = run(&targets, &shuffled_live);
            let c = run(&targets, &unique_live);
            prop_assert_eq!(&b, &c);
            prop_assert_eq!(a.tasks().count(), c.tasks().count());
            for w in &a.waves {
                prop_assert!(!w.tasks.is_empty());
                prop_assert!(w.tasks.iter().all(|t| t.phase == w.phase && t.wave == w.wave));
            }
            for pair in a.waves.windows(2) {
                prop_assert!((pair[0].phase, pair[0].wave) != (pair[1].phase, pair[1].wave));
            }
        }
    }

    fn junk() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![
                "",
                "v1",
                "apps/v1",
                "Pod",
                "Namespace",
                "PreSync",
                "Sync,PostSync",
                "Skip",
                "SyncFail",
                "-3",
                "99999999999999999999",
                "Prune=false",
                "Replace=true",
                "Prune=confirm",
                "ServerSideApply=true",
                "HookSucceeded",
                "pre-install",
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "x",
                "ns",
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map(
                    prop::sample::select(vec![
                        "apiVersion",
                        "kind",
                        "metadata",
                        "name",
                        "namespace",
                        "annotations",
                        "argocd.argoproj.io/hook",
                        "argocd.argoproj.io/sync-wave",
                        "argocd.argoproj.io/sync-options",
                        "helm.sh/hook",
                        "spec",
                        "group",
                        "names",
                        "finalizers",
                        "deletionTimestamp",
                        "generateName",
                        "uid",
                    ])
                    .prop_map(str::to_string),
                    inner,
                    0..4,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Arbitrary JSON as desired and live objects never panics, in planning or in a step.
        #[test]
        fn junk_never_panics(
            targets in prop::collection::vec(junk(), 0..6),
            live in prop::collection::vec(junk(), 0..6),
            prune in any::<bool>(),
        ) {
            let request = SyncRequest {
                app_namespace: "app".into(),
                targets,
                prune,
                sync_options: crate::vocabulary::AppOptions::new(vec!["CreateNamespace=true".into()]),
                ..SyncRequest::default()
            };
            let obs = Observations {
                live: live.into_iter().map(|l| LiveObject::new(l, None)).collect(),
                ..Observations::default()
            };
            let _ = request.plan(&obs);
            let mut state = crate::sync::SyncState::default();
            let mut o = obs.clone();
            for _ in 0..8 {
                let s = request.step(&state, &o);
                state = s.state;
                o.outcomes =
                    s.actions.iter().map(|a| crate::sync::Outcome::ok(&a.id, "")).collect();
            }
        }
    }
}
