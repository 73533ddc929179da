//! Sync planning as data, the sync step as a pure function, and the automated-sync decisions.
//!
//! This module follows the sync engine of Argo CD 3.x (its gitops-engine `pkg/sync` and the
//! controller's auto-sync code). It does no I/O: the host passes the desired objects, the live
//! objects with their health, and the outcomes of the actions it carried out; the module
//! returns what to do next.
//!
//! # The pieces
//!
//! - [`SyncRequest::plan`]: reconcile desired and live objects and build the ordered task list
//!   (phases, waves, kind order, hooks, sync options), grouped into [`Wave`]s. A host waits for
//!   health at each wave boundary.
//! - [`SyncRequest::step`]: one pass of Argo CD's sync loop. Its state ([`SyncState`]) is plain
//!   serde data the host stores between passes (as Argo CD stores `status.operationState`).
//! - [`AutoSyncInput::decide`]: whether an automated sync starts now, with self-heal backoff
//!   ([`SelfHealSettings`]), retries ([`Retry`]) and sync windows ([`SyncWindows`]), and
//!   optionally the blast-radius guard ([`BlastRadiusGuard`], [`BlastRadiusGuard::assess`]),
//!   which refuses an automated sync that would prune too much.
//! - [`SyncRequest::terminate`]: stop a running operation; [`CascadePass::new`] and
//!   [`DeletionRequest::step`]: what an application deletion removes next.
//! - The host loop's clock ([`OperationClock::pick_up`], [`OperationClock::after_attempt`],
//!   [`WaveEvent::delay_seconds`]) and `kubectl apply`'s request ([`ClientSideApply::new`]).
//!
//! Every item has one path, at this module's root; the submodules are private.
//!
//! Where Argo CD's Go code leaves a choice open (map iteration order, unstable sorts), this
//! module picks one deterministic behaviour; `testdata/SKIPPED.md` lists each.
//!
//! # The host loop
//!
//! A step either asks for actions ([`Step::actions`]: apply, delete, remove a finalizer, get),
//! or says the sync is waiting for the cluster, or is done. The host runs the actions and calls
//! [`SyncRequest::step`] again with the same live objects plus each outcome under its action id.
//! A call that returns no actions ends the pass: the host observes the cluster afresh (Argo CD
//! waits 2 s after a wave, see [`Step::wave`]) and starts the next pass. Inside one batch, actions with
//! the same [`HostAction::group`] may run in parallel; groups run in order.
//!
//! ```
//! use gitops_core::sync::{ActionKind, LiveObject, Observations, OperationPhase, Outcome};
//! use gitops_core::sync::{SyncRequest, SyncState};
//! use gitops_core::object::ObjectRef;
//! use serde_json::{json, Value};
//!
//! let mut request = SyncRequest::default();
//! request.app_namespace = "shop".into();
//! request.revision = "0123456789abcdef".into();
//! request.targets = vec![
//!     json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}),
//!     json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate",
//!            "annotations": {"argocd.argoproj.io/hook": "PreSync"}}}),
//! ];
//! let healthy: gitops_core::health::HealthResult =
//!     serde_json::from_value(json!({"status": "Healthy"})).unwrap();
//! let same = |a: &Value, b: &ObjectRef| ObjectRef::from_object_lossy(a).same_object(b);
//!
//! let mut cluster: Vec<Value> = Vec::new(); // what the host's cluster holds
//! let mut state = SyncState::default(); // what the host stores between passes
//! for pass in 1.. {
//!     assert!(pass < 10, "the sync should be done by now");
//!     // 1. Observe the cluster once per pass.
//!     let mut observations = Observations::default();
//!     observations.live =
//!         cluster.iter().map(|o| LiveObject::new(o.clone(), Some(healthy.clone()))).collect();
//!     observations.now = 1_700_000_000 + 2 * pass;
//!     // 2. Answer the pass's actions until it ends.
//!     let mut done_actions = Vec::new();
//!     let next = loop {
//!         let next = request.step(&state, &observations);
//!         state = next.state.clone();
//!         if next.actions.is_empty() {
//!             break next;
//!         }
//!         observations.outcomes = next.actions.iter().map(|a| Outcome::ok(&a.id, "")).collect();
//!         done_actions.extend(next.actions);
//!     };
//!     // 3. The effects become visible in the next observation.
//!     for a in done_actions.into_iter().filter(|a| !a.dry_run) {
//!         cluster.retain(|o| !same(o, &a.key) || a.kind == ActionKind::RemoveFinalizer);
//!         match (a.kind, a.object) {
//!             (ActionKind::Delete, _) => {}
//!             (ActionKind::RemoveFinalizer, _) => {
//!                 for o in cluster.iter_mut().filter(|o| same(o, &a.key)) {
//!                     o["metadata"]["finalizers"] = json!([]);
//!                 }
//!             }
//!             (_, Some(obj)) => cluster.push(obj),
//!             (_, None) => {}
//!         }
//!     }
//!     if next.done {
//!         break;
//!     }
//! }
//! assert_eq!(state.phase, OperationPhase::Succeeded);
//! assert_eq!(state.message, "successfully synced (all tasks run)");
//! let order: Vec<_> = state.results.iter().map(|r| r.key.name.as_str()).collect();
//! assert_eq!(order, ["migrate", "settings"]);
//! ```

mod apply;
mod backoff;
mod batch;
mod decide;
mod deletion;
mod guard;
mod messages;
mod operation;
mod pass;
mod reconcile;
mod status;
mod step;
mod tasks;
mod terminate;
mod waves;
mod windows;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ManagedNamespaceMetadata;
use crate::health::HealthResult;
use crate::object::{ObjectRef, Scopes};
use crate::vocabulary::{
    self, AppOptions, HookDeletePolicy, HookType, PropagationPolicy, ResourceOptions,
};

// The face of `sync`: every public item has this one path. The submodules are private.
pub use apply::{ApplyError, ClientSideApply};
pub use backoff::{Retry, RetryOutcome, SelfHealSettings};
#[cfg(test)]
pub(crate) use decide::already_attempted;
pub use decide::{AutoSyncInput, AutoSyncOperation, Decision, RevisionsError};
pub use deletion::{CascadePass, DeletionRequest, DeletionStep};
pub use guard::{
    BlastRadiusGuard, ClaimFate, GuardError, GuardLimit, GuardVerdict, PrunedResource,
};
#[cfg(test)]
pub(crate) use messages::waiting_message;
pub use operation::{OperationClock, OperationStateError, PickUp, PickUpAction};
pub use status::ResourceStatus;
#[cfg(test)]
pub(crate) use windows::WindowTarget;
pub use windows::{SyncWindow, SyncWindows, WindowError};

/// A sync phase, in run order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum Phase {
    /// Hooks (and what they depend on) before the resources.
    PreSync,
    /// The resources and Sync hooks.
    #[default]
    Sync,
    /// Hooks after every Sync wave is healthy.
    PostSync,
    /// Hooks that run only after a failure.
    SyncFail,
}

impl Phase {
    /// The name as Argo CD writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::PreSync => "PreSync",
            Phase::Sync => "Sync",
            Phase::PostSync => "PostSync",
            Phase::SyncFail => "SyncFail",
        }
    }

    /// The phase a hook of type `t` runs in, `None` for `Skip`.
    pub(crate) fn of_hook(t: HookType) -> Option<Phase> {
        match t {
            HookType::PreSync => Some(Phase::PreSync),
            HookType::Sync => Some(Phase::Sync),
            HookType::PostSync => Some(Phase::PostSync),
            HookType::SyncFail => Some(Phase::SyncFail),
            _ => None,
        }
    }
}

/// The phases an object runs in (gitops-engine `pkg/sync/sync_phase.go`, `syncPhases`):
/// `[Sync]` for a resource, one per distinct hook type for a hook (in PreSync, Sync, PostSync,
/// SyncFail order), none for `Skip`.
pub(crate) fn sync_phases(obj: &Value) -> Vec<Phase> {
    if vocabulary::is_skip(obj) {
        return Vec::new();
    }
    if !vocabulary::is_hook(obj) {
        return vec![Phase::Sync];
    }
    let mut phases: Vec<Phase> =
        vocabulary::hook_types(obj).into_iter().filter_map(Phase::of_hook).collect();
    phases.sort();
    phases.dedup();
    phases
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the host does with a task's object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum TaskAction {
    /// `kubectl create` (Replace with no live object).
    Create,
    /// `kubectl apply` (client side).
    Apply,
    /// Server-side apply with field manager `argocd-controller` and forced conflicts.
    ServerSideApply,
    /// `kubectl replace`.
    Replace,
    /// A PUT with the live `resourceVersion` (Replace on a CRD or Namespace).
    Update,
    /// Delete the live object (prune).
    Delete,
    /// Nothing is sent; the reason is the task's message.
    Skip {
        /// Why, e.g. `ignored (no prune)`.
        reason: String,
    },
}

impl TaskAction {
    /// The code, as the JSON of a plan spells it: `Create`, `Apply`, `ServerSideApply`,
    /// `Replace`, `Update`, `Delete`, `Skip`.
    pub fn code(&self) -> &'static str {
        match self {
            TaskAction::Create => "Create",
            TaskAction::Apply => "Apply",
            TaskAction::ServerSideApply => "ServerSideApply",
            TaskAction::Replace => "Replace",
            TaskAction::Update => "Update",
            TaskAction::Delete => "Delete",
            TaskAction::Skip { .. } => "Skip",
        }
    }

    /// The short name for people (text output): `create`, `apply`, `server-side apply`,
    /// `replace`, `update`, `delete`, `skip`.
    pub fn name(&self) -> &'static str {
        match self {
            TaskAction::Create => "create",
            TaskAction::Apply => "apply",
            TaskAction::ServerSideApply => "server-side apply",
            TaskAction::Replace => "replace",
            TaskAction::Update => "update",
            TaskAction::Delete => "delete",
            TaskAction::Skip { .. } => "skip",
        }
    }
}

/// How a task's object is sent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(crate) struct TaskFlags {
    /// The task takes part in the client dry run before the wet run.
    pub dry_run_first: bool,
    /// `--force`.
    pub force: bool,
    /// Schema validation on the API server.
    pub validate: bool,
    /// Server-side apply.
    pub server_side: bool,
    /// The field manager, for server-side applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// Move the managed fields of [`SyncRequest::client_side_apply_manager`] (client-side
    /// apply, operation `Update`) to the SSA manager first.
    pub client_side_apply_migration: bool,
}

/// The object a task sends: the desired object as the request holds it, borrowed (owned only
/// where planning changes more than its namespace: hooks, the auto-created namespace), and the
/// namespace the sync gives it. Planning copies no object; [`TaskObject::to_value`] builds the
/// object to send when a caller needs it, and serialization writes that object.
#[derive(Debug, Clone)]
pub(crate) struct TaskObject<'a> {
    object: Cow<'a, Value>,
    namespace: NamespaceEdit<'a>,
}

/// What sending does to the given object's `metadata.namespace`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NamespaceEdit<'a> {
    /// Nothing.
    Keep,
    /// Set to this (a `metadata` that is not a map becomes one holding just the namespace).
    Set(Cow<'a, str>),
    /// Removed.
    Remove,
}

impl<'a> TaskObject<'a> {
    /// An object sent as it is.
    pub(crate) fn new(object: Value) -> TaskObject<'static> {
        TaskObject { object: Cow::Owned(object), namespace: NamespaceEdit::Keep }
    }

    /// A borrowed object sent with its namespace edited.
    pub(crate) fn borrowed(object: &'a Value, namespace: NamespaceEdit<'a>) -> Self {
        TaskObject { object: Cow::Borrowed(object), namespace }
    }

    /// The object as given, before its namespace is set: what sync options, hook annotations
    /// and waves are read from (the namespace sent is [`Task::key`]'s).
    pub(crate) fn given(&self) -> &Value {
        &self.object
    }

    /// The object to send: the given object with its namespace set.
    pub(crate) fn to_value(&self) -> Value {
        let mut obj = self.object.as_ref().clone();
        self.namespace.apply(&mut obj);
        obj
    }

    /// The same object, owning its data.
    pub(crate) fn into_owned(self) -> TaskObject<'static> {
        TaskObject {
            object: Cow::Owned(self.object.into_owned()),
            namespace: match self.namespace {
                NamespaceEdit::Keep => NamespaceEdit::Keep,
                NamespaceEdit::Set(ns) => NamespaceEdit::Set(Cow::Owned(ns.into_owned())),
                NamespaceEdit::Remove => NamespaceEdit::Remove,
            },
        }
    }
}

impl NamespaceEdit<'_> {
    fn apply(&self, obj: &mut Value) {
        match self {
            NamespaceEdit::Keep => {}
            NamespaceEdit::Set(ns) => tasks::set_namespace(obj, ns),
            NamespaceEdit::Remove => {
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("namespace");
                }
            }
        }
    }
}

impl From<Value> for TaskObject<'static> {
    fn from(object: Value) -> Self {
        TaskObject::new(object)
    }
}

/// Equal when the objects sent are equal.
impl PartialEq for TaskObject<'_> {
    fn eq(&self, other: &Self) -> bool {
        if self.namespace == other.namespace {
            self.object == other.object
        } else {
            self.to_value() == other.to_value()
        }
    }
}

impl Serialize for TaskObject<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.namespace == NamespaceEdit::Keep {
            self.object.serialize(serializer)
        } else {
            self.to_value().serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for TaskObject<'static> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(TaskObject::new)
    }
}

/// One task of a sync: one object in one phase. It borrows the objects of the request and the
/// observations it was planned from ([`Task::into_owned`] copies them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task<'a> {
    /// The object's identity (target if any, else live), with the namespace defaulted.
    pub key: ObjectRef,
    /// The phase.
    pub phase: Phase,
    /// The effective wave (after prune mirroring, PruneLast and the dependency pass).
    pub wave: i64,
    /// The kind's rank (gitops-engine pkg/sync/sync_tasks.go `kindOrder`).
    pub kind_rank: i32,
    /// Whether the object is a hook.
    pub hook: bool,
    /// What to do.
    pub action: TaskAction,
    /// The message Argo CD records for a planned skip (`ignored (no prune)`, ...); empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The object to send (namespace defaulted, hook finalizer added): the desired object,
    /// borrowed, with the namespace it is sent with ([`Task::target`] builds it); `None` for a
    /// prune.
    #[cfg_attr(feature = "serve", schemars(with = "Option<Value>"))]
    #[serde(default, deserialize_with = "owned_target")]
    pub(crate) target: Option<TaskObject<'a>>,
    /// The live object, if any.
    #[cfg_attr(feature = "serve", schemars(with = "Option<Value>"))]
    pub live: Option<Cow<'a, Value>>,
    /// How the object is sent (dry run first, force, validate, server-side apply and its
    /// field manager): what the host's [`HostAction`] for the task carries.
    pub(crate) flags: TaskFlags,
    /// Hook delete policies (empty for resources).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete_policies: Vec<HookDeletePolicy>,
    /// How deletes of this task propagate.
    pub propagation_policy: PropagationPolicy,
    /// The prune waits for `Prune=confirm` approval.
    #[serde(default)]
    pub requires_confirmation: bool,
    /// Left out by `ApplyOutOfSyncOnly` (not modified).
    #[serde(default)]
    pub unmodified: bool,
    /// The build error of this task (discovery or permission), which makes the plan invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    /// The sync options of the target and the live object, read once when the task is built.
    #[serde(skip)]
    #[cfg_attr(feature = "serve", schemars(skip))]
    pub(crate) options: TaskOptions,
}

/// The sync-options annotations of a task's target and live object, read once when the task
/// is built, for the rules that decide its action. They are read from the objects the task
/// carries, so tasks with equal objects have equal options: equality does not look at them
/// (and a task read back from JSON, which carries none, equals the one written).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TaskOptions {
    /// The target's.
    pub target: ResourceOptions,
    /// The live object's.
    pub live: ResourceOptions,
}

impl PartialEq for TaskOptions {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

fn owned_target<'de, 'a, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<TaskObject<'a>>, D::Error> {
    Option::<Value>::deserialize(deserializer).map(|o| o.map(TaskObject::new))
}

impl Task<'_> {
    /// Whether the task prunes (no target).
    pub fn is_prune(&self) -> bool {
        self.target.is_none()
    }

    /// The result key, `<group>/<kind>/<namespace>/<name>:<phase>`.
    pub fn result_key(&self) -> String {
        format!(
            "{}/{}/{}/{}:{}",
            self.key.group, self.key.kind, self.key.namespace, self.key.name, self.phase
        )
    }

    /// The hook type, when the task is a hook.
    pub fn hook_type(&self) -> Option<Phase> {
        self.hook.then_some(self.phase)
    }

    /// The target as given, before its namespace is set: what sync options, hook annotations
    /// and waves are read from (the namespace sent is [`Task::key`]'s), if any.
    pub fn given_target(&self) -> Option<&Value> {
        self.target.as_ref().map(TaskObject::given)
    }

    /// The object the task sends: the given target with its namespace set; `None` for a
    /// prune. Built on each call (planning copies no object).
    pub fn target(&self) -> Option<Value> {
        self.target.as_ref().map(TaskObject::to_value)
    }

    /// The same task, owning its objects (a copy of each borrowed one).
    pub fn into_owned(self) -> Task<'static> {
        Task {
            key: self.key,
            phase: self.phase,
            wave: self.wave,
            kind_rank: self.kind_rank,
            hook: self.hook,
            action: self.action,
            message: self.message,
            target: self.target.map(TaskObject::into_owned),
            live: self.live.map(|l| Cow::Owned(l.into_owned())),
            flags: self.flags,
            delete_policies: self.delete_policies,
            propagation_policy: self.propagation_policy,
            requires_confirmation: self.requires_confirmation,
            unmodified: self.unmodified,
            invalid: self.invalid,
            options: self.options,
        }
    }

    fn has_policy(&self, p: HookDeletePolicy) -> bool {
        self.hook && self.delete_policies.contains(&p)
    }
}

/// A (phase, wave) group of tasks: the unit the host must finish (and see healthy) before the
/// next one starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Wave<'a> {
    /// The phase.
    pub phase: Phase,
    /// The wave.
    pub wave: i64,
    /// The tasks, in order.
    pub tasks: Vec<Task<'a>>,
}

/// An ordered sync plan. Its tasks borrow the objects of the request and the observations it
/// was planned from; [`Plan::into_owned`] makes a plan that outlives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Plan<'a> {
    /// The waves in run order. SyncFail waves run only after a failure, as one batch.
    pub waves: Vec<Wave<'a>>,
    /// Whether every task could be built (no discovery or permission error).
    pub valid: bool,
    /// Warnings, e.g. repeated resources, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Plan<'_> {
    /// The tasks in run order.
    pub fn tasks(&self) -> impl Iterator<Item = &Task<'_>> {
        self.waves.iter().flat_map(|w| w.tasks.iter())
    }

    /// The same plan, owning its objects (a copy of each borrowed one).
    pub fn into_owned(self) -> Plan<'static> {
        Plan {
            waves: self
                .waves
                .into_iter()
                .map(|w| Wave {
                    phase: w.phase,
                    wave: w.wave,
                    tasks: w.tasks.into_iter().map(Task::into_owned).collect(),
                })
                .collect(),
            valid: self.valid,
            warnings: self.warnings,
        }
    }
}

/// One resource of a selective sync (`syncOperation.resources`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SyncResource {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace; empty matches any.
    pub namespace: String,
}

/// A sync operation: what to sync and how. Kept by the host for the whole operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SyncRequest {
    /// The destination namespace of the app.
    pub app_namespace: String,
    /// The desired objects (hooks included), as rendered from Git.
    #[cfg_attr(feature = "serve", schemars(with = "Vec<serde_json::Map<String, Value>>"))]
    pub targets: Vec<Value>,
    /// With `RespectIgnoreDifferences=true`: the targets normalized by the diff engine
    /// (ignored fields set to their live values), replacing `targets`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "serve", schemars(with = "Option<Vec<serde_json::Map<String, Value>>>"))]
    pub normalized_targets: Option<Vec<Value>>,
    /// App-level sync options (the operation's list, else `syncPolicy.syncOptions`).
    pub sync_options: AppOptions,
    /// Delete live objects no longer desired.
    pub prune: bool,
    /// An operation-level dry run.
    pub dry_run: bool,
    /// The sync strategy's force flag.
    pub force: bool,
    /// Do not run hooks (apply strategy, or a selective sync).
    pub skip_hooks: bool,
    /// Selective sync: only these resources (empty: all).
    pub resources: Vec<SyncResource>,
    /// The revision, used in generated hook names.
    pub revision: String,
    /// The operation start, unix seconds, used in generated hook names and for confirmations.
    pub started_at: i64,
    /// `ApplyOutOfSyncOnly`: the diff's modified flag per resource key
    /// (`group/Kind/namespace/name`, namespace as live). A missing key counts as modified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<BTreeMap<String, bool>>,
    /// `managedNamespaceMetadata`, for `CreateNamespace=true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_namespace_metadata: Option<ManagedNamespaceMetadata>,
    /// The app's `SharedResourceWarning` condition message, if any (`FailOnSharedResource`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_resource_warning: Option<String>,
    /// The field manager whose client-side-applied fields a server-side apply migrates first
    /// (`ClientSideApplyMigration`): the app's
    /// `argocd.argoproj.io/client-side-apply-migration-manager` annotation, else
    /// `kubectl-client-side-apply`.
    pub client_side_apply_manager: String,
    /// The app's AppProject: a task whose kind, or whose namespace on `destination`'s
    /// cluster, the project does not permit is invalid and fails the sync before its dry run
    /// (Argo CD 3.6.2 `validateSyncPermissions`). `None`: only the host's
    /// [`Observations::denied`] apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<crate::project::AppProject>,
    /// The app's destination (server, name, namespace), for the project's destinations.
    pub destination: crate::config::Destination,
    /// Which kinds are cluster-scoped.
    #[serde(skip)]
    pub scopes: Scopes,
}

impl SyncRequest {
    /// `ApplyOutOfSyncOnly`'s input from the app's diff: whether each resource is modified, by
    /// its key (`group/Kind/namespace/name`), for [`SyncRequest::modified`].
    pub fn modified_of(diff: &crate::diff::AppDiff) -> BTreeMap<String, bool> {
        diff.resources.iter().map(|r| (r.object.key(), r.modified)).collect()
    }
}

impl Default for SyncRequest {
    fn default() -> Self {
        SyncRequest {
            app_namespace: String::new(),
            targets: Vec::new(),
            normalized_targets: None,
            sync_options: AppOptions::default(),
            prune: false,
            dry_run: false,
            force: false,
            skip_hooks: false,
            resources: Vec::new(),
            revision: String::new(),
            started_at: 0,
            modified: None,
            managed_namespace_metadata: None,
            shared_resource_warning: None,
            client_side_apply_manager: SyncRequest::DEFAULT_CLIENT_SIDE_APPLY_MANAGER.to_string(),
            project: None,
            destination: crate::config::Destination::default(),
            scopes: Scopes::builtin(),
        }
    }
}

impl SyncRequest {
    /// The field manager of `kubectl apply` (client-side), whose fields a server-side apply
    /// migrates by default: the default of [`SyncRequest::client_side_apply_manager`].
    pub const DEFAULT_CLIENT_SIDE_APPLY_MANAGER: &str = "kubectl-client-side-apply";

    /// A request for a sync of `app` to `targets` at `revision`, started at `started_at` (unix
    /// seconds): destination namespace, sync options and managed namespace metadata from the
    /// app spec, `prune` from `automated.prune`, the client-side apply manager to migrate from
    /// the app's `argocd.argoproj.io/client-side-apply-migration-manager` annotation (when not
    /// empty).
    pub fn for_app(
        app: &crate::config::Application,
        targets: Vec<Value>,
        revision: &str,
        started_at: i64,
    ) -> Self {
        let policy = &app.spec.sync_policy;
        SyncRequest {
            app_namespace: app.spec.destination.namespace.clone(),
            targets,
            sync_options: AppOptions::new(policy.sync_options.clone()),
            prune: policy.automated.as_ref().is_some_and(|a| a.prune),
            revision: revision.to_string(),
            started_at,
            managed_namespace_metadata: policy.managed_namespace_metadata.clone(),
            destination: app.spec.destination.clone(),
            client_side_apply_manager: app
                .metadata
                .annotations
                .get(vocabulary::CLIENT_SIDE_APPLY_MANAGER_ANNOTATION)
                .filter(|m| !m.is_empty())
                .map_or(SyncRequest::DEFAULT_CLIENT_SIDE_APPLY_MANAGER, String::as_str)
                .to_string(),
            ..SyncRequest::default()
        }
    }
}

impl SyncRequest {
    /// A request for the operation an Application asks for (`operation.sync`, as a manual sync
    /// or an automated one writes it): revision, `prune`, `dryRun`, the operation's
    /// `syncOptions` (which replace the spec's when present), selective `resources`, and the
    /// sync strategy (`apply` skips hooks; `force` of either strategy forces). A selective sync
    /// skips hooks too, as in Argo CD. Missing parts fall back to the app spec.
    ///
    /// # Examples
    ///
    /// ```
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "spec": {"destination": {"namespace": "shop"},
    ///              "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}},
    ///     "operation": {"sync": {"revision": "abc", "prune": true,
    ///                            "syncStrategy": {"hook": {"force": true}},
    ///                            "resources": [{"kind": "ConfigMap", "name": "web"}]}}
    /// })).unwrap();
    /// let r = gitops_core::sync::SyncRequest::from_operation(&app, vec![], 0);
    /// assert!(r.prune && r.force && r.skip_hooks);
    /// assert_eq!(r.revision, "abc");
    /// assert!(r.sync_options.has("CreateNamespace=true"));
    /// ```
    pub fn from_operation(
        app: &crate::config::Application,
        targets: Vec<Value>,
        started_at: i64,
    ) -> Self {
        let mut r = SyncRequest::for_app(app, targets, "", started_at);
        let op = &app.operation["sync"];
        r.prune = op["prune"].as_bool().unwrap_or(false);
        r.dry_run = op["dryRun"].as_bool().unwrap_or(false);
        r.revision = op["revision"]
            .as_str()
            .or_else(|| op["revisions"].get(0).and_then(Value::as_str))
            .unwrap_or("")
            .to_string();
        if let Some(options) = op["syncOptions"].as_array() {
            r.sync_options = AppOptions::new(
                options.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            );
        }
        if let Some(resources) = op["resources"].as_array() {
            r.resources = resources
                .iter()
                .map(|res| {
                    let s = |k: &str| res[k].as_str().unwrap_or("").to_string();
                    SyncResource {
                        group: s("group"),
                        kind: s("kind"),
                        name: s("name"),
                        namespace: s("namespace"),
                    }
                })
                .collect();
        }
        let strategy = &op["syncStrategy"];
        let apply = strategy.get("apply").is_some_and(|a| !a.is_null());
        r.force = strategy["apply"]["force"].as_bool().unwrap_or(false)
            || strategy["hook"]["force"].as_bool().unwrap_or(false);
        r.skip_hooks = apply || !r.resources.is_empty();
        r
    }
}

/// A live object with what the host knows about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LiveObject {
    /// The object.
    pub object: Value,
    /// Its health, `None` when its kind has no health check.
    #[serde(default)]
    pub health: Option<HealthResult>,
    /// The health check failed with this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_error: Option<String>,
}

impl LiveObject {
    /// A live object with a health.
    pub fn new(object: Value, health: Option<HealthResult>) -> Self {
        LiveObject { object, health, health_error: None }
    }
}

/// How the lookup of the app's namespace went (for `CreateNamespace=true`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum NamespaceLookup {
    /// The namespace does not exist.
    #[default]
    NotFound,
    /// The namespace exists.
    Found {
        /// The live Namespace.
        object: Value,
    },
    /// The lookup failed.
    Error {
        /// The error text.
        message: String,
    },
}

/// What the host reports at each step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Observations {
    /// The app's live objects (from the cluster cache), with health.
    pub live: Vec<LiveObject>,
    /// Outcomes of the actions of the previous [`Step`], by action id.
    pub outcomes: Vec<Outcome>,
    /// Kinds the API server does not serve (`group/Kind`, `Kind` for the core group).
    pub missing_kinds: BTreeSet<String>,
    /// Other discovery errors per kind (`group/Kind`). For a kind also in `missing_kinds`,
    /// the text is the missing kind's message (e.g. "failed to discover server resources for
    /// group version example.com/v1: the server could not find the requested resource"),
    /// and it is still handled as missing (`SkipDryRunOnMissingResource`, a CRD in the sync).
    pub discovery_errors: BTreeMap<String, String>,
    /// Permission errors per resource key (`group/Kind/namespace/name`).
    pub denied: BTreeMap<String, String>,
    /// The lookup of the app namespace, for `CreateNamespace=true`.
    pub namespace: NamespaceLookup,
    /// When deletion was approved (`argocd.argoproj.io/deletion-approved`), unix seconds.
    pub deletion_approved_at: Option<i64>,
    /// The current time, unix seconds.
    pub now: i64,
}

/// The outcome of one host action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Outcome {
    /// The action id.
    pub id: String,
    /// Whether it worked.
    pub status: OutcomeStatus,
    /// The output (kubectl's message) or the error text.
    #[serde(default)]
    pub message: String,
}

impl Outcome {
    /// A success with kubectl's output.
    pub fn ok(id: &str, message: &str) -> Self {
        Outcome {
            id: id.to_string(),
            status: OutcomeStatus::Succeeded,
            message: message.to_string(),
        }
    }

    /// A failure with its error text.
    pub fn failed(id: &str, message: &str) -> Self {
        Outcome { id: id.to_string(), status: OutcomeStatus::Failed, message: message.to_string() }
    }

    /// The object was not found (a delete of an object already gone).
    pub fn not_found(id: &str) -> Self {
        Outcome { id: id.to_string(), status: OutcomeStatus::NotFound, message: String::new() }
    }
}

/// Whether an action worked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum OutcomeStatus {
    /// It worked.
    Succeeded,
    /// It failed.
    Failed,
    /// The object was not there.
    NotFound,
}

/// What the host is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum ActionKind {
    /// Apply (client side, or server side when `server_side`).
    Apply,
    /// Create.
    Create,
    /// Replace.
    Replace,
    /// Update (PUT with the live resource version).
    Update,
    /// Delete with the propagation policy.
    Delete,
    /// Remove the hook finalizer from the live object.
    RemoveFinalizer,
    /// Read the object from the cluster: `Succeeded` when it exists, `NotFound`, or `Failed`.
    Get,
}

/// One action for the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HostAction {
    /// The id to report the outcome under.
    pub id: String,
    /// What to do.
    pub kind: ActionKind,
    /// The object's identity.
    pub key: ObjectRef,
    /// The object to send (apply, create, replace, update).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// A client dry run.
    pub dry_run: bool,
    /// Server-side apply.
    pub server_side: bool,
    /// The field manager for server-side apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// Before this server-side apply, move the fields the named manager set by client-side
    /// apply (operation `Update`) to [`HostAction::field_manager`] (`ClientSideApplyMigration`;
    /// the manager is [`SyncRequest::client_side_apply_manager`]). A failure is the apply's:
    /// `Failed to perform client-side apply migration for <key>: <error>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_side_apply_migration: Option<String>,
    /// `--force`.
    pub force: bool,
    /// Schema validation.
    pub validate: bool,
    /// The propagation policy of a delete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<PropagationPolicy>,
    /// Actions of one batch run group after group; inside a group in any order.
    pub group: u32,
}

impl HostAction {
    /// An action with nothing set but its id, kind and object.
    pub(crate) fn new(id: String, kind: ActionKind, key: ObjectRef) -> Self {
        HostAction {
            id,
            kind,
            key,
            object: None,
            dry_run: false,
            server_side: false,
            field_manager: None,
            client_side_apply_migration: None,
            force: false,
            validate: false,
            propagation_policy: None,
            group: 0,
        }
    }
}

/// The phase of a sync operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum OperationPhase {
    /// In progress.
    #[default]
    Running,
    /// Being terminated.
    Terminating,
    /// Done, failed.
    Failed,
    /// Done, with an error.
    Error,
    /// Done, successful.
    Succeeded,
}

impl OperationPhase {
    /// Whether the operation is over.
    pub fn completed(self) -> bool {
        matches!(self, OperationPhase::Failed | OperationPhase::Error | OperationPhase::Succeeded)
    }
}

/// The result code of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum ResultCode {
    /// Applied.
    Synced,
    /// Apply or prune failed.
    SyncFailed,
    /// Deleted.
    Pruned,
    /// Not deleted: pruning is off or disabled.
    PruneSkipped,
}

/// The state of a task (`HookPhase` in Argo CD's results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum TaskState {
    /// Not started.
    #[default]
    Pending,
    /// Applied, waiting for health or completion.
    Running,
    /// Done.
    Succeeded,
    /// Failed.
    Failed,
    /// Error.
    Error,
}

impl TaskState {
    fn completed(self) -> bool {
        matches!(self, TaskState::Succeeded | TaskState::Failed | TaskState::Error)
    }
}

/// The result of one task, as in `syncResult.resources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceResult {
    /// The object's identity (namespace as the task's).
    pub key: ObjectRef,
    /// The result code, if any.
    pub status: Option<ResultCode>,
    /// The task's state.
    pub hook_phase: TaskState,
    /// The phase of the task.
    pub sync_phase: Phase,
    /// The hook type, for hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_type: Option<Phase>,
    /// The last non-empty message.
    pub message: String,
    /// 1 + the number of results stored before this one.
    pub order: usize,
}

impl ResourceResult {
    /// The result key, `<group>/<kind>/<namespace>/<name>:<phase>`.
    pub fn result_key(&self) -> String {
        format!(
            "{}/{}/{}/{}:{}",
            self.key.group, self.key.kind, self.key.namespace, self.key.name, self.sync_phase
        )
    }
}

/// The state of a sync operation between steps. The host stores it (as Argo CD stores
/// `status.operationState`) and passes it back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SyncState {
    /// The phase.
    pub phase: OperationPhase,
    /// The message.
    pub message: String,
    /// The per-task results, by order.
    pub results: Vec<ResourceResult>,
    /// Outcomes gathered during the current step, by action id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub outcomes: BTreeMap<String, Outcome>,
    /// Results as they were when the current step began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_base: Option<Vec<ResourceResult>>,
}

/// A (phase, wave) group that finished its wet run in this step: Argo CD's wave hook, where
/// the controller sleeps (2 s by default) before the next wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WaveEvent {
    /// The phase.
    pub phase: Phase,
    /// The wave.
    pub wave: i64,
    /// The last wave of the sync.
    pub last: bool,
}

/// The answer of one [`SyncRequest::step`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct Step {
    /// The new state.
    pub state: SyncState,
    /// Actions to carry out now; report their outcomes in the next call.
    pub actions: Vec<HostAction>,
    /// The operation is over (phase Succeeded, Failed or Error).
    pub done: bool,
    /// A wave ran its wet run in this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<WaveEvent>,
}
