//! A prepared application: the desired side of a comparison done once, the live side
//! re-decided only where a watch event touched it.
//!
//! A controller compares an app on every watch event that touches one of its objects.
//! [`diff_app`](crate::diff::diff_app) redoes the whole comparison each time. A [`PreparedApp`] is built once from
//! the desired objects, the Application, the settings and the scopes (one
//! [`AppDiffInput`]): the targets with their destination namespace and tracking, the hooks,
//! the compiled ignore rules, the conditions the desired objects raise and the pairing set of
//! the ownership rule are made there. Then [`PreparedApp::apply`] takes live changes as watch
//! events deliver them ([`LiveChange`]), compares again only the resources they touch, updates
//! the roll-ups (app sync status, app health, conditions) and answers with what changed
//! ([`Reconciled`]). [`PreparedApp::set_desired`] takes a new commit's desired set and
//! prepares again only the objects that differ from the last one.
//!
//! The answers are [`diff_app`](crate::diff::diff_app)'s and [`AppHealth::of_diff`]'s over the same state, byte for byte:
//! [`PreparedApp::diff`] and [`PreparedApp::health`] give the whole of them
//! (`src/tests/reconcile.rs` checks it on random sequences of changes). The state is one live
//! object per identity (group, kind, namespace, name), as a watch cache holds it; the last
//! event for an identity wins.
//!
//! It owns no clock and does no I/O: the health context (the time, the scripts) is an
//! argument of each call, and only the resources a call touches are assessed with it; a host
//! whose health rules read the time and wants them read again calls
//! [`PreparedApp::reassess`]. It is `Send + Sync`.
//!
//! Memory: besides the desired objects (kept once as given and once as prepared working
//! copies), each resource holds its live object, its [`ResourceDiff`] (the patch only, unless
//! the input keeps objects) and its health; and each app its own copy of the settings and the
//! scopes. Measured (benches/README.md, "A prepared app"): **about 59 KB per resource**
//! (58,696 bytes: 5,597 MB of resident memory for 1,000 apps of 100 resources, in
//! `benches/reconcile.rs`) for the benchmark's resources, Deployments, StatefulSets, Services
//! and ConfigMaps whose live objects carry `managedFields` and last-applied (about 3.5 KB of
//! live JSON and 0.8 KB of desired JSON each): some 13 times the JSON text of its two
//! objects, `serde_json` trees taking about 8 times their text. Through `serve`
//! (`benches/session_memory.py`): about 15 MB for an app of 1,000 small ConfigMaps desired
//! and live (some 15 KB per resource), flat over any number of watch events.
//!
//! Not carried over from the input: the host's wall-clock interrupt of jq rules (counted
//! limits still apply) and lent compiled rules (the rules are compiled here from the app).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::config::{Application, Settings};
use crate::diff::{
    AppDiff, AppDiffInput, AppNormalizer, Compared, Condition, Desired, DiffError, Key,
    ResourceDiff, Shared, SyncStatus, Targets,
};
use crate::health::{
    self, AppHealth, HealthContext, HealthError, HealthStatus, ResourceHealth, ResourceHealthInput,
};
use crate::ignore::IgnoreNormalizer;
use crate::object::{ObjectIndex, ObjectRef, RefParts, Scopes};
use crate::ownership::{Unmanaged, live_ref};
use crate::vocabulary::AppOptions;

/// A watch event for one live object of the app's cluster.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LiveChange {
    /// The object appeared (or is listed again).
    Added(Value),
    /// The object changed.
    Modified(Value),
    /// The object is gone (its last known state, or anything with its identity).
    Deleted(Value),
}

/// What one [`PreparedApp::apply`] changed, and the app's roll-ups after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Reconciled {
    /// The app's sync status.
    pub sync_status: SyncStatus,
    /// The app's health status.
    pub health_status: HealthStatus,
    /// The app's health message (`Caused by ...`).
    pub health_message: String,
    /// The app's conditions, sorted ([`AppDiff::conditions`]).
    pub conditions: Vec<Condition>,
    /// Resources whose row changed or appeared, in their order ([`AppDiff::resources`]);
    /// while the comparison fails (a `ComparisonError`), and on the change into or out of
    /// that, every resource.
    pub resources: Vec<ResourceDiff>,
    /// Resources that are gone, sorted.
    pub removed: Vec<ObjectRef>,
    /// Resources whose recorded health changed or appeared ([`AppHealth::resources`]).
    pub health: Vec<ResourceHealth>,
    /// The notes about live objects left out ([`AppDiff::notes`]), when an event touched
    /// an object left out (they may read the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
}

impl Reconciled {
    /// The whole of a comparison and a health as one answer: every row, the notes.
    #[cfg(feature = "serve")]
    pub(crate) fn whole(diff: &AppDiff, health: &AppHealth) -> Reconciled {
        Reconciled {
            sync_status: diff.sync_status,
            health_status: health.status,
            health_message: health.message.clone(),
            conditions: diff.conditions.clone(),
            resources: diff.resources.clone(),
            removed: Vec::new(),
            health: health.resources.clone(),
            notes: Some(diff.notes.clone()),
        }
    }
}

/// One resource of the app: its comparison and its health.
#[derive(Debug)]
struct Slot {
    /// The resource (the live object's identity when live, else the desired one's).
    object: ObjectRef,
    /// The comparison, or the error that failed it.
    compared: Result<Compared, DiffError>,
    /// The health input, when [`ResourceHealthInput::from_objects`] gives one.
    health: Option<ResourceHealthInput>,
}

/// The options of the input the app was prepared from.
#[derive(Debug, Clone, Copy)]
struct Flags {
    server_side_diff: bool,
    reveal_secrets: bool,
    ignore_annotation: bool,
    keep_objects: bool,
}

/// The app's health roll-up, kept up to date resource by resource ([`AppHealth::aggregate`]'s
/// rule, without visiting every resource).
#[derive(Debug, Default)]
struct HealthRollup {
    /// Resources that count (not hooks).
    counted: usize,
    /// Of those, the live ones.
    live: usize,
    /// The ranking resources by status severity, in resource order.
    ranked: BTreeMap<u8, (HealthStatus, BTreeMap<Key, ObjectRef>)>,
    /// The failed health checks that count, in resource order.
    errors: BTreeMap<Key, HealthError>,
}

/// An application prepared for repeated comparisons: see the [module documentation](self).
///
/// # Examples
///
/// ```
/// use gitops_core::diff::{AppDiffInput, SyncStatus};
/// use gitops_core::health::HealthContext;
/// use gitops_core::reconcile::{LiveChange, PreparedApp};
/// use gitops_core::config::{Application, Settings};
/// use gitops_core::object::Scopes;
/// use serde_json::json;
///
/// // The live object carries the tracking the app gives its desired objects.
/// let cm = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "web", "namespace": "shop", "annotations":
///         {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/web"}},
///     "data": {"k": v}});
/// let desired = [cm("1")];
/// let app = Application::from_value(&json!({"metadata": {"name": "shop"},
///     "spec": {"destination": {"namespace": "shop"}}})).unwrap();
/// let (settings, scopes) = (Settings::default(), Scopes::builtin());
/// let ctx = HealthContext::new(0);
/// let input = AppDiffInput::new(&desired, &[], &app, &settings, &scopes);
/// let mut prepared = PreparedApp::new(&input, &ctx);
/// assert_eq!(prepared.diff().sync_status, SyncStatus::OutOfSync); // missing
///
/// let step = prepared.apply(&[LiveChange::Added(cm("1"))], &ctx);
/// assert_eq!(step.sync_status, SyncStatus::Synced);
/// assert_eq!(step.resources.len(), 1);
/// let step = prepared.apply(&[LiveChange::Modified(cm("2"))], &ctx);
/// assert_eq!(step.sync_status, SyncStatus::OutOfSync);
/// ```
#[derive(Debug)]
pub struct PreparedApp {
    app: Application,
    settings: Settings,
    /// The app's AppProject, when the host passed one ([`AppDiffInput::project`]).
    project: Option<crate::project::AppProject>,
    scopes: Scopes,
    /// The desired objects as given (health reads them).
    desired: Vec<Value>,
    dry_runs: Vec<Value>,
    openapi: Option<crate::schema::OpenApiSchema>,
    flags: Flags,
    /// The compiled ignore rules, or the error that fails every comparison.
    rules: Result<IgnoreNormalizer, DiffError>,
    /// The targets, each with its prepared working copy.
    targets: BTreeMap<Key, (ObjectRef, Desired<'static>)>,
    /// The index in `desired` of each target's object as given (a new desired set is
    /// compared with it to keep the working copies of the objects that did not change).
    sources: BTreeMap<Key, usize>,
    /// The synthesized destination Namespace (`managedNamespaceMetadata`), while live.
    namespace_target: Option<(ObjectRef, Desired<'static>)>,
    /// Its identity, when the app has `managedNamespaceMetadata` and does not desire it.
    namespace_key: Option<Key>,
    hooks: Vec<ObjectRef>,
    /// The conditions the desired objects raise, sorted.
    desired_conditions: Vec<Condition>,
    /// The identities a desired object pairs with (the ownership rule's).
    paired: BTreeSet<Key>,
    /// The first desired object of each identity as written.
    first_desired: BTreeMap<Key, usize>,
    instance: String,
    ssd: bool,
    /// `managedNamespaceMetadata` changed since the last sync: OutOfSync whatever else.
    metadata_changed: bool,
    /// The live objects, one per identity.
    live: BTreeMap<Key, Value>,
    /// The live objects that are not the app's.
    unmanaged: BTreeMap<Key, Unmanaged>,
    /// `SharedResourceWarning`s of the app's live objects.
    shared: BTreeMap<Key, Condition>,
    resources: BTreeMap<Key, Slot>,
    /// Resources that make the app out of sync.
    out_of_sync: BTreeSet<Key>,
    /// Resources whose comparison failed, in order.
    errors: BTreeMap<Key, DiffError>,
    health: HealthRollup,
}

/// The identity of an object as written (the namespace as it stands).
fn raw_key(obj: &Value) -> Key {
    let (g, k, n, m) = RefParts::of(obj).key();
    (g.to_string(), k.to_string(), n.to_string(), m.to_string())
}

/// The index of `item` in `slice`, when it is one of its elements.
fn index_in(slice: &[Value], item: &Value) -> Option<usize> {
    let size = std::mem::size_of::<Value>().max(1);
    let offset = (item as *const Value as usize).checked_sub(slice.as_ptr() as usize)?;
    let at = offset / size;
    slice.get(at).filter(|v| std::ptr::eq(*v, item)).map(|_| at)
}

/// The identity a live object pairs by.
fn live_key(obj: &Value, scopes: &Scopes) -> Key {
    crate::diff::key(&live_ref(obj, scopes))
}

impl PreparedApp {
    /// Prepares `input`'s desired side, then takes `input.live` as the first live state
    /// (assessing health with `ctx`).
    pub fn new(input: &AppDiffInput<'_>, ctx: &HealthContext<'_>) -> Self {
        let (app, settings) = (input.app, input.settings);
        let rules = IgnoreNormalizer::for_app(app, settings)
            .map_err(|e| DiffError::IgnoreRules { message: e.to_string() });
        let mut prepared = PreparedApp {
            app: app.clone(),
            settings: settings.clone(),
            project: input.project.cloned(),
            scopes: input.scopes.clone(),
            desired: Vec::new(),
            dry_runs: input.dry_runs.to_vec(),
            openapi: input.openapi.cloned(),
            flags: Flags {
                server_side_diff: input.server_side_diff,
                reveal_secrets: input.reveal_secrets,
                ignore_annotation: input.ignore_annotation,
                keep_objects: input.keep_objects,
            },
            rules,
            targets: BTreeMap::new(),
            sources: BTreeMap::new(),
            namespace_target: None,
            namespace_key: None,
            hooks: Vec::new(),
            desired_conditions: Vec::new(),
            paired: BTreeSet::new(),
            first_desired: BTreeMap::new(),
            instance: app.instance_name(settings),
            ssd: crate::diff::server_side(input),
            metadata_changed: crate::diff::changed_managed_namespace_metadata(app),
            live: BTreeMap::new(),
            unmanaged: BTreeMap::new(),
            shared: BTreeMap::new(),
            resources: BTreeMap::new(),
            out_of_sync: BTreeSet::new(),
            errors: BTreeMap::new(),
            health: HealthRollup::default(),
        };
        let mut keys = prepared.prepare(input.desired.to_vec());
        let changes: Vec<LiveChange> = input.live.iter().cloned().map(LiveChange::Added).collect();
        keys.extend(prepared.take(changes));
        prepared.recompute(&keys, ctx);
        prepared
    }

    /// Takes a new desired set (a new commit): prepares again only the objects that differ
    /// from the last set (by identity and content), compares again the resources they touch
    /// and answers with what changed, as [`PreparedApp::apply`] does. The app, the settings
    /// and the live objects stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::diff::{AppDiffInput, SyncStatus};
    /// use gitops_core::health::HealthContext;
    /// use gitops_core::reconcile::PreparedApp;
    /// use gitops_core::config::{Application, Settings};
    /// use gitops_core::object::Scopes;
    /// use serde_json::json;
    ///
    /// let cm = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "web", "namespace": "shop", "annotations":
    ///         {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/web"}},
    ///     "data": {"k": v}});
    /// let app = Application::from_value(&json!({"metadata": {"name": "shop"},
    ///     "spec": {"destination": {"namespace": "shop"}}})).unwrap();
    /// let (settings, scopes) = (Settings::default(), Scopes::builtin());
    /// let ctx = HealthContext::new(0);
    /// let (desired, live) = ([cm("1")], [cm("2")]);
    /// let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes);
    /// let mut prepared = PreparedApp::new(&input, &ctx);
    /// assert_eq!(prepared.diff().sync_status, SyncStatus::OutOfSync);
    ///
    /// // The new commit desires what is live.
    /// let step = prepared.set_desired(vec![cm("2")], &ctx);
    /// assert_eq!(step.sync_status, SyncStatus::Synced);
    /// assert_eq!(step.resources.len(), 1);
    /// ```
    pub fn set_desired(&mut self, desired: Vec<Value>, ctx: &HealthContext<'_>) -> Reconciled {
        let unmanaged_before = self.unmanaged.clone();
        let keys = self.prepare(desired);
        let notes_changed = self.unmanaged != unmanaged_before;
        self.answer(keys, notes_changed, ctx)
    }

    /// Prepares a desired set in place of the last one, keeping the working copies of the
    /// objects that did not change; the identities whose resource may have changed.
    fn prepare(&mut self, desired: Vec<Value>) -> BTreeSet<Key> {
        let mut touched = BTreeSet::new();
        let input = AppDiffInput {
            desired: &desired,
            live: &[],
            app: &self.app,
            settings: &self.settings,
            scopes: &self.scopes,
            dry_runs: &[],
            server_side_diff: self.flags.server_side_diff,
            reveal_secrets: self.flags.reveal_secrets,
            ignore_rules: None,
            openapi: None,
            ignore_annotation: self.flags.ignore_annotation,
            keep_objects: self.flags.keep_objects,
            interrupt: None,
            project: None,
        };
        let (app, settings, scopes) = (&self.app, &self.settings, &self.scopes);
        let Targets { map, mut hooks, conditions, .. } = crate::diff::targets(&input);
        hooks.sort();
        let mut desired_conditions = conditions;
        desired_conditions
            .extend(map.values().filter_map(|(r, _)| crate::diff::invalid_spec(r, scopes)));
        desired_conditions.sort();
        let mut old = std::mem::take(&mut self.targets);
        let mut sources = BTreeMap::new();
        for (k, (r, d)) in &map {
            let Some(at) = index_in(&desired, d.source()) else { continue };
            sources.insert(k.clone(), at);
            let kept = old.remove(k).filter(|(old_r, _)| old_r == r).filter(|_| {
                self.sources.get(k).and_then(|&i| self.desired.get(i)) == Some(&desired[at])
            });
            let target = kept.unwrap_or_else(|| {
                touched.insert(k.clone());
                (r.clone(), Desired::Synthesized(d.object(r, &input)))
            });
            self.targets.insert(k.clone(), target);
        }
        touched.extend(old.into_keys());
        // The ownership rule pairs live objects with desired identities: a live object whose
        // pairing changed is sorted again.
        let namespace = app.spec.destination.namespace.as_str();
        let paired: BTreeSet<Key> = desired
            .iter()
            .map(|d| crate::ownership::desired_ref(d, scopes, namespace))
            .filter(|r| !crate::ownership::excluded(r, app, settings) && !r.name.is_empty())
            .map(|r| crate::diff::key(&r))
            .collect();
        let repaired: Vec<Key> = paired.symmetric_difference(&self.paired).cloned().collect();
        // Health reads the first desired object of each identity as written.
        let mut first_desired = BTreeMap::new();
        for (i, d) in desired.iter().enumerate() {
            first_desired.entry(raw_key(d)).or_insert(i);
        }
        let mut firsts = BTreeSet::new();
        for (k, &i) in &first_desired {
            if self.first_desired.get(k).and_then(|&j| self.desired.get(j)) != Some(&desired[i]) {
                firsts.insert(k.clone());
            }
        }
        firsts
            .extend(self.first_desired.keys().filter(|k| !first_desired.contains_key(*k)).cloned());
        // An object written without a namespace is the resource's in the destination one.
        for (g, kind, ns, name) in firsts {
            if ns.is_empty() {
                touched.insert((g.clone(), kind.clone(), namespace.to_string(), name.clone()));
            }
            touched.insert((g, kind, ns, name));
        }
        let namespace_key =
            crate::diff::managed_namespace_key(app).filter(|k| !self.targets.contains_key(k));
        touched.extend(namespace_key.iter().chain(self.namespace_key.iter()).cloned());
        self.hooks = hooks;
        self.desired_conditions = desired_conditions;
        self.paired = paired;
        self.first_desired = first_desired;
        self.sources = sources;
        self.namespace_key = namespace_key;
        self.desired = desired;
        for k in repaired {
            if let Some(obj) = self.live.get(&k).cloned() {
                self.sort(&k, &obj);
            }
            touched.insert(k);
        }
        self.follow_namespace(&touched);
        touched
    }

    /// Takes watch events, compares again only the resources they touch, and answers with
    /// what changed. Events apply in order; the last one for an identity wins.
    pub fn apply(&mut self, changes: &[LiveChange], ctx: &HealthContext<'_>) -> Reconciled {
        let unmanaged_before: Vec<Option<Unmanaged>> =
            changes.iter().map(|c| self.unmanaged.get(&self.change_key(c)).cloned()).collect();
        let keys = self.take(changes.to_vec());
        // The notes are read again only when an event touched an object left out.
        let notes_changed = changes
            .iter()
            .zip(unmanaged_before)
            .any(|(c, b)| self.unmanaged.get(&self.change_key(c)) != b.as_ref());
        self.answer(keys, notes_changed, ctx)
    }

    /// Compares the resources of `keys` again and answers with what changed.
    fn answer(
        &mut self,
        keys: BTreeSet<Key>,
        notes_changed: bool,
        ctx: &HealthContext<'_>,
    ) -> Reconciled {
        let failed_before = self.failure().is_some();
        let before: BTreeMap<Key, (Option<ResourceDiff>, Option<ResourceHealth>)> =
            keys.iter().map(|k| (k.clone(), self.row(k))).collect();
        self.recompute(&keys, ctx);
        let failed_now = self.failure().is_some();
        let mut out = self.rollups();
        out.notes = notes_changed.then(|| self.notes());
        for (k, (diff_before, health_before)) in before {
            let (diff_now, health_now) = self.row(&k);
            match (&diff_before, &diff_now) {
                (Some(b), None) => out.removed.push(b.object.clone()),
                (_, Some(n)) if diff_before.as_ref() != Some(n) => out.resources.push(n.clone()),
                _ => {}
            }
            if let Some(h) = health_now.filter(|h| Some(h) != health_before.as_ref()) {
                out.health.push(h);
            }
        }
        if failed_before || failed_now {
            out.resources = self.resources.keys().filter_map(|k| self.row(k).0).collect();
        }
        out.removed.sort();
        out
    }

    /// Assesses the health of every resource again with `ctx` (a new time, new scripts),
    /// and answers with what changed.
    pub fn reassess(&mut self, ctx: &HealthContext<'_>) -> Reconciled {
        let keys: BTreeSet<Key> = self.resources.keys().cloned().collect();
        let before: Vec<Option<ResourceHealth>> = keys.iter().map(|k| self.row(k).1).collect();
        for k in &keys {
            self.assess(k, ctx);
        }
        let mut out = self.rollups();
        for (k, b) in keys.iter().zip(before) {
            if let Some(h) = self.row(k).1.filter(|h| Some(h) != b.as_ref()) {
                out.health.push(h);
            }
        }
        out
    }

    /// The whole comparison, as [`diff_app`](crate::diff::diff_app) gives it for the current state.
    pub fn diff(&self) -> AppDiff {
        let unmanaged = {
            let mut u: Vec<Unmanaged> = self.unmanaged.values().cloned().collect();
            u.sort();
            u
        };
        let resources = self.resources.keys().filter_map(|k| self.row(k).0).collect();
        let sync_status = self.diff_status();
        AppDiff {
            sync_status,
            resources,
            hooks: self.hooks.clone(),
            conditions: self.conditions(),
            notes: crate::ownership::notes(&unmanaged),
            unmanaged,
            objects_kept: self.flags.keep_objects,
        }
    }

    /// The app's health, as [`AppHealth::of_diff`] gives it for the current state.
    pub fn health(&self) -> AppHealth {
        let inputs: Vec<ResourceHealthInput> =
            self.resources.values().filter_map(|s| s.health.clone()).collect();
        health::AppHealth::aggregate(&inputs)
    }

    /// The objects (desired and live) the app holds after `changes`, which are not taken.
    #[cfg(feature = "serve")]
    pub(crate) fn objects_after(&self, changes: &[LiveChange]) -> usize {
        let mut present: BTreeMap<Key, bool> = BTreeMap::new();
        for c in changes {
            present.insert(self.change_key(c), !matches!(c, LiveChange::Deleted(_)));
        }
        let mut live = self.live.len();
        for (k, now) in present {
            match (self.live.contains_key(&k), now) {
                (false, true) => live += 1,
                (true, false) => live -= 1,
                _ => {}
            }
        }
        self.desired.len() + live
    }

    /// The desired objects the app holds.
    #[cfg(feature = "serve")]
    pub(crate) fn desired_count(&self) -> usize {
        self.desired.len()
    }

    /// The identity an event is about.
    fn change_key(&self, change: &LiveChange) -> Key {
        match change {
            LiveChange::Added(v) | LiveChange::Modified(v) | LiveChange::Deleted(v) => {
                live_key(v, &self.scopes)
            }
        }
    }

    /// Records the events in the live state; the identities they touch.
    fn take(&mut self, changes: Vec<LiveChange>) -> BTreeSet<Key> {
        let mut keys = BTreeSet::new();
        for change in changes {
            let (obj, present) = match change {
                LiveChange::Added(v) | LiveChange::Modified(v) => (v, true),
                LiveChange::Deleted(v) => (v, false),
            };
            let k = live_key(&obj, &self.scopes);
            if present {
                self.sort(&k, &obj);
                self.live.insert(k.clone(), obj);
            } else {
                self.unmanaged.remove(&k);
                self.shared.remove(&k);
                self.live.remove(&k);
            }
            keys.insert(k);
        }
        self.follow_namespace(&keys);
        keys
    }

    /// Sorts a live object by the ownership rule: the app's (with a `SharedResourceWarning`
    /// when another app tracks it too) or left out.
    fn sort(&mut self, k: &Key, obj: &Value) {
        self.unmanaged.remove(k);
        self.shared.remove(k);
        let r = live_ref(obj, &self.scopes);
        let desired = self.paired.contains(k);
        let (app, settings) = (&self.app, &self.settings);
        let sorted = crate::ownership::sort_one(obj, &r, desired, &self.instance, app, settings)
            .and_then(|()| {
                crate::diff::not_permitted(self.project.as_ref(), &r, app).map_or(Ok(()), Err)
            });
        match sorted {
            Ok(()) => {
                if let Some(c) = crate::diff::shared_warning(app, settings, &self.instance, &r, obj)
                {
                    self.shared.insert(k.clone(), c);
                }
            }
            Err(reason) => {
                self.unmanaged.insert(k.clone(), Unmanaged { object: r, reason });
            }
        }
    }

    /// The synthesized Namespace follows the live one, when `keys` touch it.
    fn follow_namespace(&mut self, keys: &BTreeSet<Key>) {
        let Some(nk) = self.namespace_key.clone() else {
            self.namespace_target = None;
            return;
        };
        if !keys.contains(&nk) {
            return;
        }
        self.namespace_target = self.managed_live(&nk).and_then(|live| {
            let ns = crate::diff::synthesized_namespace(&self.app, live)?;
            let r = crate::ownership::object_ref(&ns);
            Some((r, Desired::Synthesized(ns)))
        });
    }

    /// The live object of an identity when it is the app's.
    fn managed_live(&self, k: &Key) -> Option<&Value> {
        self.live.get(k).filter(|_| !self.unmanaged.contains_key(k))
    }

    /// The target of an identity.
    fn target(&self, k: &Key) -> Option<&(ObjectRef, Desired<'static>)> {
        self.targets.get(k).or_else(|| {
            self.namespace_target.as_ref().filter(|_| self.namespace_key.as_ref() == Some(k))
        })
    }

    /// Compares the resources of `keys` again, and assesses their health.
    fn recompute(&mut self, keys: &BTreeSet<Key>, ctx: &HealthContext<'_>) {
        let input = AppDiffInput {
            desired: &self.desired,
            live: &[],
            app: &self.app,
            settings: &self.settings,
            scopes: &self.scopes,
            dry_runs: &self.dry_runs,
            server_side_diff: self.flags.server_side_diff,
            reveal_secrets: self.flags.reveal_secrets,
            ignore_rules: self.rules.as_ref().ok(),
            openapi: self.openapi.as_ref(),
            ignore_annotation: self.flags.ignore_annotation,
            keep_objects: self.flags.keep_objects,
            interrupt: None,
            project: None,
        };
        let normalizer = match &self.rules {
            Ok(rules) => AppNormalizer::new(&[], &self.settings, Some(rules), None),
            Err(e) => Err(e.clone()),
        };
        let dry_runs = ObjectIndex::of_objects(&self.dry_runs);
        let app_options = AppOptions::new(input.app.spec.sync_policy.sync_options.clone());
        let mut slots = Vec::with_capacity(keys.len());
        for k in keys {
            let target = self.target(k);
            let live = self.managed_live(k).map(|v| (live_ref(v, &self.scopes), v));
            let object = match (&live, target) {
                (Some((r, _)), _) | (None, Some((r, _))) => r.clone(),
                (None, None) => {
                    slots.push((k.clone(), None));
                    continue;
                }
            };
            let compared = match &normalizer {
                Ok(n) => {
                    let shared = Shared {
                        input: &input,
                        normalizer: n,
                        ssd: self.ssd,
                        dry_runs: &dry_runs,
                        app_options: &app_options,
                    };
                    match shared.compare(target, live.as_ref()) {
                        Ok(Some(mut c)) => {
                            let project = self.project.as_ref();
                            crate::diff::unknown_if_not_permitted(
                                project,
                                &mut c.resource,
                                &self.scopes,
                            );
                            Ok(c)
                        }
                        Ok(None) => {
                            slots.push((k.clone(), None));
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e.clone()),
            };
            slots.push((k.clone(), Some(Slot { object, compared, health: None })));
        }
        for (k, slot) in slots {
            self.forget(&k);
            let Some(slot) = slot else { continue };
            match &slot.compared {
                Ok(c) if c.out_of_sync => {
                    self.out_of_sync.insert(k.clone());
                }
                Ok(_) => {}
                Err(e) => {
                    self.errors.insert(k.clone(), e.clone());
                }
            }
            self.resources.insert(k.clone(), slot);
            self.assess(&k, ctx);
        }
    }

    /// Removes a resource from the roll-ups (its slot stays until replaced).
    fn forget(&mut self, k: &Key) {
        self.out_of_sync.remove(k);
        self.errors.remove(k);
        self.unrank(k);
        self.resources.remove(k);
    }

    /// Takes a resource's health out of the health roll-up.
    fn unrank(&mut self, k: &Key) {
        let Some(input) = self.resources.get(k).and_then(|s| s.health.as_ref()) else { return };
        let c = health::contribution(input);
        let h = &mut self.health;
        if c.counts {
            h.counted -= 1;
            h.live -= usize::from(c.live);
        }
        if let Some(s) = c.status
            && let Some((_, set)) = h.ranked.get_mut(&s.severity())
        {
            set.remove(k);
        }
        h.errors.remove(k);
    }

    /// Assesses a resource's health with `ctx` and ranks it.
    fn assess(&mut self, k: &Key, ctx: &HealthContext<'_>) {
        self.unrank(k);
        let Some(slot) = self.resources.get(k) else { return };
        let key = crate::diff::key(&slot.object);
        // The first desired object of the resource, written with its namespace or without.
        let bare = (key.0.clone(), key.1.clone(), String::new(), key.3.clone());
        let at = match (self.first_desired.get(&key), self.first_desired.get(&bare)) {
            (Some(&a), Some(&b)) => Some(a.min(b)),
            (a, b) => a.or(b).copied(),
        };
        let d = at.map(|i| &self.desired[i]);
        // A live object left out of the comparison (not watched, not permitted) has no live
        // state for Argo CD either: the resource is assessed as missing.
        let l = self.managed_live(k).filter(|v| raw_key(v) == key);
        // Named as the comparison names it (a desired object's namespace may be left out).
        let input = ResourceHealthInput::from_objects(d, l, ctx).map(|mut input| {
            input.object = slot.object.clone();
            input
        });
        if let Some(input) = &input {
            let c = health::contribution(input);
            let h = &mut self.health;
            if c.counts {
                h.counted += 1;
                h.live += usize::from(c.live);
            }
            if let Some(s) = c.status {
                let entry = h.ranked.entry(s.severity()).or_insert((s, BTreeMap::new()));
                entry.1.insert(k.clone(), input.object.clone());
            }
            if let Some(e) = c.error {
                h.errors.insert(k.clone(), e.clone());
            }
        }
        if let Some(slot) = self.resources.get_mut(k) {
            slot.health = input;
        }
    }

    /// The error that fails the whole comparison, if any: the rules', else the first
    /// resource's.
    fn failure(&self) -> Option<&DiffError> {
        self.rules.as_ref().err().or_else(|| self.errors.values().next())
    }

    /// The row of a resource in [`AppDiff::resources`] and in [`AppHealth::resources`].
    fn row(&self, k: &Key) -> (Option<ResourceDiff>, Option<ResourceHealth>) {
        let Some(slot) = self.resources.get(k) else { return (None, None) };
        let diff = match (&slot.compared, self.failure()) {
            (Ok(c), None) => c.resource.clone(),
            _ => crate::diff::unknown(slot.object.clone()),
        };
        let health = slot.health.as_ref().map(|input| {
            let recorded = health::contribution(input).recorded;
            ResourceHealth { object: input.object.clone(), health: recorded }
        });
        (Some(diff), health)
    }

    /// The app's conditions, sorted.
    fn conditions(&self) -> Vec<Condition> {
        let mut out = self.desired_conditions.clone();
        out.extend(self.shared.values().cloned());
        if let Some((r, _)) = &self.namespace_target {
            out.extend(crate::diff::invalid_spec(r, &self.scopes));
        }
        if let Some(e) = self.failure() {
            out.push(crate::diff::comparison_error(e));
        }
        out.sort();
        out
    }

    /// The notes about live objects left out, sorted.
    fn notes(&self) -> Vec<String> {
        let mut u: Vec<Unmanaged> = self.unmanaged.values().cloned().collect();
        u.sort();
        crate::ownership::notes(&u)
    }

    /// The roll-ups, with no rows.
    fn rollups(&self) -> Reconciled {
        let h = &self.health;
        let worst = h.ranked.values().rev().find(|(_, set)| !set.is_empty());
        let (mut status, mut causes): (HealthStatus, Vec<&ObjectRef>) = match worst {
            Some((s, set)) if HealthStatus::Healthy.is_worse(*s) => (*s, set.values().collect()),
            _ => (HealthStatus::Healthy, Vec::new()),
        };
        if health::all_missing(h.counted > 0, h.live > 0, status) {
            status = HealthStatus::Missing;
            causes.clear();
        }
        Reconciled {
            sync_status: self.diff_status(),
            health_status: status,
            health_message: health::format_causes(&causes),
            conditions: self.conditions(),
            resources: Vec::new(),
            removed: Vec::new(),
            health: Vec::new(),
            notes: None,
        }
    }

    /// The app's sync status.
    fn diff_status(&self) -> SyncStatus {
        if self.failure().is_some() {
            SyncStatus::Unknown
        } else if self.out_of_sync.is_empty() && !self.metadata_changed {
            SyncStatus::Synced
        } else {
            SyncStatus::OutOfSync
        }
    }
}

impl AppHealth {
    /// The app's health from a comparison ([`diff_app`](crate::diff::diff_app)'s result), each resource assessed from
    /// its first desired object among `desired` (written with the resource's namespace or without
    /// one) and its first live object among `live` that the comparison did not leave out
    /// ([`AppDiff::unmanaged`]) (what `gitops-core status` shows, and what
    /// [`PreparedApp::health`] answers).
    pub fn of_diff(
        result: &AppDiff,
        desired: &[Value],
        live: &[Value],
        ctx: &HealthContext<'_>,
    ) -> AppHealth {
        let (desired_at, live_at) =
            (ObjectIndex::of_objects(desired), ObjectIndex::of_objects(live));
        let left_out: BTreeSet<(&str, &str, &str, &str)> = result
            .unmanaged
            .iter()
            .map(|u| {
                let o = &u.object;
                (o.group.as_str(), o.kind.as_str(), o.namespace.as_str(), o.name.as_str())
            })
            .collect();
        let inputs: Vec<ResourceHealthInput> = result
            .resources
            .iter()
            .filter_map(|r| {
                let o = &r.object;
                let key =
                    (o.group.as_str(), o.kind.as_str(), o.namespace.as_str(), o.name.as_str());
                // Written with its namespace or without (the destination namespace).
                let d = desired_at.first_lenient(key, false).map(|i| &desired[i]);
                let l =
                    live_at.first(&r.object).map(|i| &live[i]).filter(|_| !left_out.contains(&key));
                // Named as the comparison names it (a desired object's namespace may be left out).
                ResourceHealthInput::from_objects(d, l, ctx).map(|mut input| {
                    input.object = r.object.clone();
                    input
                })
            })
            .collect();
        AppHealth::aggregate(&inputs)
    }
}
