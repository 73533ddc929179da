//! A pull request's preview, offline: what merging it would change, prune and run.
//!
//! [`PreviewInput::compare`] takes one application's manifests rendered from the base branch and from the
//! head branch (and optionally its live objects) and returns an [`AppPreview`]: the resources
//! added, removed (with what a pruning sync does to each), changed (field-level, Secrets
//! masked) and unchanged; the head's sync plan and how it differs from the base's; the
//! blast-radius guard's verdict on a pruning sync of the head; and, with live objects, the
//! hand-made changes the merge would overwrite. [`Preview`] gathers the apps of a pull request
//! and renders them as Markdown for a pull-request comment, as text, or as JSON (serde).
//!
//! The preview assumes a sync with pruning on (as `argocd app sync --prune` or an automated
//! sync with `prune: true`), so every removal shows what a pruning sync would do with it.

mod render;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{Application, Settings};
use crate::diff::{AppDiff, AppDiffInput, DiffError, ObjectText, PatchOp, diff_app};
use crate::object::{ObjectIndex, ObjectRef, Scopes};
use crate::sync::{BlastRadiusGuard, GuardVerdict};
use crate::sync::{LiveObject, Observations, Plan, SyncRequest};
use crate::vocabulary::{self, AppOptions, ResourceOptions};

/// What one application's preview compares.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct PreviewInput<'a> {
    /// The Application (destination namespace, sync options, ignore rules).
    pub app: &'a Application,
    /// `argocd-cm` settings.
    pub settings: &'a Settings,
    /// Manifests rendered from the base branch.
    pub base: &'a [Value],
    /// Manifests rendered from the head branch.
    pub head: &'a [Value],
    /// The live objects, when the host has them; without them the base stands for live.
    pub live: Option<&'a [Value]>,
    /// The blast-radius guard the head's sync is measured against.
    pub guard: &'a BlastRadiusGuard,
}

impl<'a> PreviewInput<'a> {
    /// An input without live objects, measured against `guard`.
    pub fn new(
        app: &'a Application,
        settings: &'a Settings,
        base: &'a [Value],
        head: &'a [Value],
        guard: &'a BlastRadiusGuard,
    ) -> Self {
        PreviewInput { app, settings, base, head, live: None, guard }
    }

    /// Sets the live objects.
    pub fn with_live(mut self, live: &'a [Value]) -> Self {
        self.live = Some(live);
        self
    }

    /// One application's preview: `base` and `head` compared, the head's plan, the guard's
    /// verdict, and with live objects the drift the merge overwrites.
    ///
    /// # Errors
    ///
    /// A comparison that cannot run ([`DiffError`], naming the object).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::preview::{Change, PreviewInput};
    /// use gitops_core::sync::BlastRadiusGuard;
    /// use serde_json::json;
    /// let app = gitops_core::config::Application::from_value(&json!({
    ///     "metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}})).unwrap();
    /// let cm = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "web", "namespace": "shop"}, "data": {"v": v}});
    /// let (base, head) = ([cm("1")], [cm("2")]);
    /// let settings = gitops_core::config::Settings::default();
    /// let guard = BlastRadiusGuard::default();
    /// let p = PreviewInput::new(&app, &settings, &base, &head, &guard).compare().unwrap();
    /// assert_eq!(p.resources[0].change, Change::Changed);
    /// assert_eq!(p.resources[0].patch[0].path, "/data/v");
    /// ```
    pub fn compare(&self) -> Result<AppPreview, DiffError> {
        compare(self)
    }
}

/// How a resource differs between base and head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Change {
    /// Only in the head.
    Added,
    /// Only in the base.
    Removed,
    /// In both, different.
    Changed,
}

/// What a pruning sync does with a removed resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PruneFate {
    /// Deleted.
    Pruned,
    /// Kept: `Prune=false` on the object, else on the app.
    Kept,
    /// Deleted once someone confirms: `Prune=confirm` on the object, else on the app.
    Confirm,
    /// Not pruned: hooks are not tracked resources.
    Hook,
}

impl PruneFate {
    /// How the preview names it.
    pub fn as_str(self) -> &'static str {
        match self {
            PruneFate::Pruned => "pruned",
            PruneFate::Kept => "kept by Prune=false",
            PruneFate::Confirm => "pruned once confirmed (Prune=confirm)",
            PruneFate::Hook => "hook, not pruned",
        }
    }
}

/// One resource the pull request adds, removes or changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceChange {
    /// The resource.
    pub object: ObjectRef,
    /// Added, removed or changed.
    pub change: Change,
    /// For a removal: what a pruning sync does with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<PruneFate>,
    /// The resource is a hook (it runs rather than being applied).
    pub hook: bool,
    /// Its kind is one the guard protects (a stateful kind by default).
    pub protected: bool,
    /// RFC 6902 operations from base to head (Secret values masked).
    pub patch: Vec<PatchOp>,
    /// The unified diff (`diff -u`, as `kubectl diff` prints it: [`ObjectText::hunks`]) of
    /// base and head YAML (Secret values masked).
    pub text_diff: String,
}

/// A hand-made change in the cluster that syncing the head overwrites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Drift {
    /// The resource.
    pub object: ObjectRef,
    /// The fields, as `diff --explain` names them (only the paths for Secrets).
    pub fields: Vec<String>,
}

/// One (phase, wave) of the head's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanWave {
    /// `PreSync`, `Sync`, `PostSync`, `SyncFail`.
    pub phase: String,
    /// The wave.
    pub wave: i64,
    /// The tasks, in run order, as `action Kind/name`.
    pub tasks: Vec<String>,
}

/// One application's preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppPreview {
    /// The Application's name.
    pub app: String,
    /// Added, removed and changed resources, sorted by change, then group, kind, namespace,
    /// name.
    pub resources: Vec<ResourceChange>,
    /// How many resources are the same in base and head.
    pub unchanged: usize,
    /// How many hooks the head's sync runs.
    pub hooks: usize,
    /// The head's sync plan, by phase and wave.
    pub plan: Vec<PlanWave>,
    /// Tasks of the head's plan that the base's plan has not (`phase wave: task`), sorted.
    pub plan_added: Vec<String>,
    /// Tasks of the base's plan that the head's plan has not, sorted.
    pub plan_removed: Vec<String>,
    /// The blast-radius guard on a pruning sync of the head.
    pub guard: GuardVerdict,
    /// Hand-made changes the sync of the head overwrites (only with live objects).
    pub drift: Vec<Drift>,
    /// Warnings, first in every rendering: guard refusals, prunes of protected kinds,
    /// Secrets touched, drift overwritten, the comparisons' conditions.
    pub warnings: Vec<String>,
}

impl AppPreview {
    /// Whether merging changes anything for this app.
    pub fn has_changes(&self) -> bool {
        !self.resources.is_empty()
    }

    /// Whether the merge needs an approval: the guard refuses, or a protected kind is pruned.
    pub fn needs_approval(&self) -> bool {
        !self.guard.allowed || self.guard.prunes.iter().any(|p| p.protected)
    }

    /// How many resources have this change.
    pub fn count(&self, change: Change) -> usize {
        self.resources.iter().filter(|r| r.change == change).count()
    }
}

/// What a preview concludes, for a CI step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Verdict {
    /// Merging changes nothing.
    NoChange,
    /// Merging changes resources.
    Changes,
    /// A guard refusal or a prune of a protected kind: ask for an approval.
    NeedsApproval,
}

/// The preview of a pull request: one [`AppPreview`] per application, in the host's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Preview {
    /// The applications.
    pub apps: Vec<AppPreview>,
}

impl Preview {
    /// A preview of these apps.
    pub fn new(apps: Vec<AppPreview>) -> Self {
        Preview { apps }
    }

    /// The verdict over all apps.
    pub fn verdict(&self) -> Verdict {
        if self.apps.iter().any(AppPreview::needs_approval) {
            Verdict::NeedsApproval
        } else if self.apps.iter().any(AppPreview::has_changes) {
            Verdict::Changes
        } else {
            Verdict::NoChange
        }
    }
}

/// The comparison of `desired` against `live` for the app, Secrets masked.
fn compare_objects(
    input: &PreviewInput<'_>,
    desired: &[Value],
    live: &[Value],
) -> Result<(AppDiff, Scopes), DiffError> {
    let mut scopes = Scopes::builtin();
    scopes.add_crds(desired.iter().chain(live));
    // The Markdown shows each change as a YAML diff: the objects are kept.
    let diff_input =
        AppDiffInput::new(desired, live, input.app, input.settings, &scopes).with_objects(true);
    let diff = diff_app(&diff_input)?;
    Ok((diff, scopes))
}

/// The objects as a sync of them leaves them in the cluster (namespace defaulted, tracking
/// set; the predicted live of a comparison against nothing), Secret values kept.
fn applied(input: &PreviewInput<'_>, objects: &[Value]) -> Result<Vec<Value>, DiffError> {
    let mut scopes = Scopes::builtin();
    scopes.add_crds(objects.iter());
    let diff_input = AppDiffInput::new(objects, &[], input.app, input.settings, &scopes)
        .with_reveal_secrets(true)
        .with_objects(true);
    Ok(diff_app(&diff_input)?
        .resources
        .into_iter()
        .map(|r| r.predicted_live)
        .filter(|o| !o.is_null())
        .collect())
}

/// The hooks among `objects`, by identity (hooks run; they are not compared).
fn hooks_of<'v>(diff: &AppDiff, objects: &'v [Value]) -> Vec<(ObjectRef, &'v Value)> {
    let index = ObjectIndex::of_objects(objects);
    diff.hooks.iter().filter_map(|h| Some((h.clone(), find(objects, &index, h)?))).collect()
}

/// The added, removed and changed hooks of base and head.
fn hook_changes<'v>(
    base: &[(ObjectRef, &'v Value)],
    head: &[(ObjectRef, &'v Value)],
    guard: &BlastRadiusGuard,
) -> Vec<ResourceChange> {
    let (base_at, head_at) = (
        ObjectIndex::of_refs(base.iter().map(|(r, _)| r)),
        ObjectIndex::of_refs(head.iter().map(|(r, _)| r)),
    );
    let find_hook = |list: &[(ObjectRef, &'v Value)], index: &ObjectIndex<'_>, r: &ObjectRef| {
        index.first(r).map(|i| list[i].1)
    };
    let mut out = Vec::new();
    let mut push = |object: &ObjectRef, change, old: Option<&Value>, new: Option<&Value>| {
        let yaml = |v: Option<&Value>| v.map(crate::diff::to_yaml);
        out.push(ResourceChange {
            object: object.clone(),
            change,
            prune: (change == Change::Removed).then_some(PruneFate::Hook),
            hook: true,
            protected: guard.protects(&object.group, &object.kind),
            patch: Vec::new(),
            text_diff: ObjectText { object: object.clone(), live: yaml(old), merged: yaml(new) }
                .hunks(),
        });
    };
    for (r, new) in head {
        match find_hook(base, &base_at, r) {
            None => push(r, Change::Added, None, Some(new)),
            Some(old) if old != *new => push(r, Change::Changed, Some(old), Some(new)),
            Some(_) => {}
        }
    }
    for (r, old) in base {
        if find_hook(head, &head_at, r).is_none() {
            push(r, Change::Removed, Some(old), None);
        }
    }
    out
}

/// The plan of a pruning sync of `targets` over `live`: its number of hook tasks, and its tasks
/// as [`plan_tasks`] gives them.
fn plan_of(
    input: &PreviewInput<'_>,
    targets: &[Value],
    live: &[Value],
    scopes: &Scopes,
) -> (usize, Vec<(String, i64, String)>) {
    let app = input.app;
    // Kinds the settings exclude are not synced, and their live objects are not the app's.
    let synced = targets
        .iter()
        .filter(|t| {
            !crate::ownership::excluded(&ObjectRef::from_object_lossy(t), app, input.settings)
        })
        .cloned()
        .collect();
    let mut request = SyncRequest::for_app(app, synced, "", 0);
    request.prune = true;
    request.scopes = scopes.clone();
    // The sync sees only the app's live objects, as the comparison does.
    let managed = crate::ownership::ManagedLive::new(targets, live, app, input.settings, scopes);
    let observations = Observations {
        live: managed.managed.into_iter().map(|o| LiveObject::new(o.clone(), None)).collect(),
        ..Observations::default()
    };
    let p = request.plan(&observations);
    (p.tasks().filter(|t| t.hook).count(), plan_tasks(&p))
}

/// The tasks of a plan as `(phase, wave, "action Kind/name")`.
fn plan_tasks(p: &Plan<'_>) -> Vec<(String, i64, String)> {
    p.waves
        .iter()
        .flat_map(|w| {
            w.tasks.iter().map(move |t| {
                let name = if t.key.namespace.is_empty() {
                    format!("{}/{}", t.key.kind, t.key.name)
                } else {
                    format!("{}/{}/{}", t.key.kind, t.key.namespace, t.key.name)
                };
                let wait = if t.requires_confirmation { " (waits for confirmation)" } else { "" };
                (w.phase.as_str().to_string(), w.wave, format!("{} {name}{wait}", t.action.name()))
            })
        })
        .collect()
}

/// What a pruning sync does with `obj`, a removed resource: the rules the plan's prune task
/// asks ([`vocabulary::prune_disabled`], [`vocabulary::prune_requires_confirmation`]).
fn prune_fate(obj: &Value, app: &AppOptions, hook: bool) -> PruneFate {
    let live = ResourceOptions::of(obj);
    if hook {
        PruneFate::Hook
    } else if vocabulary::prune_disabled(&live, app) {
        PruneFate::Kept
    } else if vocabulary::prune_requires_confirmation(&live, app) {
        PruneFate::Confirm
    } else {
        PruneFate::Pruned
    }
}

/// The object of `r` among `objects` (`index` their index); an object without a namespace
/// (as rendered, before the destination namespace is set) matches any.
fn find<'v>(objects: &'v [Value], index: &ObjectIndex<'_>, r: &ObjectRef) -> Option<&'v Value> {
    let key = (r.group.as_str(), r.kind.as_str(), r.namespace.as_str(), r.name.as_str());
    index.first_lenient(key, false).map(|i| &objects[i])
}

/// [`PreviewInput::compare`].
fn compare(input: &PreviewInput<'_>) -> Result<AppPreview, DiffError> {
    let base = applied(input, input.base)?;
    let (changes, scopes) = compare_objects(input, input.head, &base)?;
    let (base_alone, _) = compare_objects(input, input.base, &[])?;
    let current = input.live.unwrap_or(&base);
    let base_at = ObjectIndex::of_objects(&base);
    let mut resources = Vec::new();
    let mut unchanged = 0;
    let app_options = AppOptions::new(input.app.spec.sync_policy.sync_options.clone());
    for r in &changes.resources {
        let change = match (r.normalized_live.is_null(), r.predicted_live.is_null()) {
            (true, true) => continue,
            (true, false) => Change::Added,
            (false, true) => Change::Removed,
            (false, false) if r.modified => Change::Changed,
            (false, false) => {
                unchanged += 1;
                continue;
            }
        };
        let prune = (change == Change::Removed).then(|| {
            let obj = find(&base, &base_at, &r.object).unwrap_or(&Value::Null);
            prune_fate(obj, &app_options, r.hook)
        });
        resources.push(ResourceChange {
            object: r.object.clone(),
            change,
            prune,
            hook: r.hook,
            protected: input.guard.protects(&r.object.group, &r.object.kind),
            patch: r.diff.clone(),
            text_diff: ObjectText {
                object: r.object.clone(),
                live: (!r.normalized_live.is_null())
                    .then(|| crate::diff::to_yaml(&r.normalized_live)),
                merged: (!r.predicted_live.is_null())
                    .then(|| crate::diff::to_yaml(&r.predicted_live)),
            }
            .hunks(),
        });
    }
    resources.extend(hook_changes(
        &hooks_of(&base_alone, input.base),
        &hooks_of(&changes, input.head),
        input.guard,
    ));
    resources.sort_by(|a, b| (a.change, &a.object).cmp(&(b.change, &b.object)));

    let (hooks, head_plan) = plan_of(input, input.head, current, &scopes);
    let (_, base_plan) = plan_of(input, input.base, current, &scopes);
    let line = |(p, w, t): &(String, i64, String)| format!("{p} {w}: {t}");
    let head_lines: BTreeSet<String> = head_plan.iter().map(line).collect();
    let base_lines: BTreeSet<String> = base_plan.iter().map(line).collect();
    let mut plan: Vec<PlanWave> = Vec::new();
    for (phase, wave, task) in head_plan {
        match plan.last_mut() {
            Some(w) if w.phase == phase && w.wave == wave => w.tasks.push(task),
            _ => plan.push(PlanWave { phase, wave, tasks: vec![task] }),
        }
    }

    let (to_live, _) = match input.live {
        Some(live) => compare_objects(input, input.head, live)?,
        None => (changes.clone(), scopes.clone()),
    };
    let (_, statuses) = crate::sync::ResourceStatus::of_diff(&to_live);
    let guard = input.guard.assess(input.app, true, &statuses, current);

    let mut drift = Vec::new();
    if let Some(live) = input.live {
        let mut s = Scopes::builtin();
        s.add_crds(input.base.iter().chain(live));
        let drift_input =
            AppDiffInput::new(input.base, live, input.app, input.settings, &s).with_objects(true);
        let drifted = diff_app(&drift_input)?;
        let head_at = ObjectIndex::of_objects(input.head);
        for e in drifted.explain(&drift_input) {
            let in_head = find(input.head, &head_at, &e.object).is_some();
            if e.changes.is_empty() || !in_head || find(&base, &base_at, &e.object).is_none() {
                continue;
            }
            let secret = crate::diff::is_secret(&e.object.group, &e.object.kind);
            let fields = e
                .changes
                .iter()
                .map(|c| if secret { c.path.clone() } else { c.to_string() })
                .collect();
            drift.push(Drift { object: e.object, fields });
        }
    }

    let mut warnings = Vec::new();
    if !guard.allowed {
        warnings
            .push(format!("the blast-radius guard refuses an automated sync: {}", guard.message));
    }
    for p in guard.prunes.iter().filter(|p| p.protected) {
        warnings.push(format!("prunes {}, a protected kind", p.key()));
    }
    for r in resources.iter().filter(|r| crate::diff::is_secret(&r.object.group, &r.object.kind)) {
        let what = match r.change {
            Change::Added => "adds",
            Change::Removed => "removes",
            Change::Changed => "changes",
        };
        warnings.push(format!("{what} Secret {} (values masked)", r.object));
    }
    for d in &drift {
        warnings.push(format!(
            "overwrites changes made by hand to {}: {}",
            d.object,
            d.fields.join("; ")
        ));
    }
    for c in changes.conditions.iter().chain(if input.live.is_some() {
        &to_live.conditions[..]
    } else {
        &[]
    }) {
        warnings.push(format!("{}: {}", c.type_, c.message));
    }

    Ok(AppPreview {
        app: input.app.metadata.name.clone(),
        resources,
        unchanged,
        hooks,
        plan,
        plan_added: head_lines.difference(&base_lines).cloned().collect(),
        plan_removed: base_lines.difference(&head_lines).cloned().collect(),
        guard,
        drift,
        warnings,
    })
}
