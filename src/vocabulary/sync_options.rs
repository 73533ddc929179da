//! Sync options: the app-level list (`syncPolicy.syncOptions`, or the operation's) and a
//! resource's `argocd.argoproj.io/sync-options` annotation, read once into [`ResourceOptions`],
//! and the rules that resolve them, each named after its Argo CD v3.6.2 source.
//!
//! The option names are gitops-engine `pkg/sync/common/types.go` (`SyncOption*`); the app-level
//! list is read as Argo CD's `SyncOptions.HasOption` / `GetOptionValue`
//! (`pkg/apis/application/v1alpha1/types.go`: exact items, no trimming); the annotation as
//! gitops-engine's `HasAnnotationOption` / `GetAnnotationOptionValue` (trimmed CSV items).
//!
//! The rules that turn the options into what the sync does with a resource are here too:
//! [`apply_object`] (the write), [`prune_object`] (whether a prune runs), and
//! [`filter_out_of_sync`]; the sync planner only copies their answer onto its task.
//!
//! Adding an option: a field of [`ResourceOptions`] (if a resource can carry it), an accessor
//! of [`AppOptions`] (if the app can), its rule here, and its cases in
//! `testdata/sync/units-options.yaml`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::annotations::{HELM_RESOURCE_POLICY_ANNOTATION, SYNC_OPTIONS_ANNOTATION, option_value};
use super::{csv, first_option_value};
use crate::object::annotation;

/// The field manager of server-side applies (Argo CD's `common.ArgoCDSSAManager`).
pub(crate) const FIELD_MANAGER: &str = "argocd-controller";

/// How deletes (prunes and hook deletes) propagate to dependents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum PropagationPolicy {
    /// Delete dependents first (Argo CD's default).
    #[default]
    Foreground,
    /// Delete the owner now and the dependents in the background.
    Background,
    /// Leave the dependents.
    Orphan,
}

/// The app-level sync options, an exact-match list (`SyncOptions.HasOption`: no trimming,
/// case-sensitive). Each option the engine reads has its accessor, named after it.
///
/// # Examples
///
/// ```
/// use gitops_core::vocabulary::{AppOptions, PropagationPolicy};
/// let o = AppOptions::new(vec!["PrunePropagationPolicy=orphan".into(),
///                              "PrunePropagationPolicy=background".into(), "Prune=false".into()]);
/// assert_eq!(o.propagation_policy(), PropagationPolicy::Background);
/// assert_eq!(o.value("Prune"), Some("false"));
/// assert!(!o.has(" Prune=false"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct AppOptions(pub Vec<String>);

impl AppOptions {
    /// Wraps a list.
    pub fn new(options: Vec<String>) -> Self {
        AppOptions(options)
    }

    /// Whether the list holds exactly `option` (`SyncOptions.HasOption`).
    pub fn has(&self, option: &str) -> bool {
        self.0.iter().any(|o| o == option)
    }

    /// The remainder of the first item starting with `key=` (`SyncOptions.GetOptionValue`).
    pub fn value(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|o| option_value(o, key))
    }

    /// `PrunePropagationPolicy`: the first of background, foreground, orphan present; else
    /// foreground (Argo CD `controller/sync.go`, `SyncAppState`).
    pub fn propagation_policy(&self) -> PropagationPolicy {
        if self.has("PrunePropagationPolicy=background") {
            PropagationPolicy::Background
        } else if self.has("PrunePropagationPolicy=foreground") {
            PropagationPolicy::Foreground
        } else if self.has("PrunePropagationPolicy=orphan") {
            PropagationPolicy::Orphan
        } else {
            PropagationPolicy::Foreground
        }
    }

    /// `CreateNamespace=true` (`SyncAppState`: `WithNamespaceModifier`).
    pub(crate) fn create_namespace(&self) -> bool {
        self.has("CreateNamespace=true")
    }

    /// `RespectIgnoreDifferences=true` (`SyncAppState`: the targets are normalized).
    pub(crate) fn respect_ignore_differences(&self) -> bool {
        self.has("RespectIgnoreDifferences=true")
    }

    /// `FailOnSharedResource=true` (`SyncAppState`).
    pub(crate) fn fail_on_shared_resource(&self) -> bool {
        self.has("FailOnSharedResource=true")
    }

    /// `ApplyOutOfSyncOnly=true` (`SyncAppState`: `WithResourceModificationChecker`).
    pub(crate) fn apply_out_of_sync_only(&self) -> bool {
        self.has("ApplyOutOfSyncOnly=true")
    }

    /// `ServerSideApply=true` (`SyncAppState`: `WithServerSideApply`; Argo CD's
    /// `shouldUseServerSideDiff` reads it too).
    pub(crate) fn server_side_apply(&self) -> bool {
        self.has("ServerSideApply=true")
    }

    /// Client-side-apply migration, on unless `ClientSideApplyMigration=false`
    /// (`SyncAppState`: `WithClientSideApplyMigration`).
    pub(crate) fn client_side_apply_migration(&self) -> bool {
        !self.has("ClientSideApplyMigration=false")
    }
}

/// The value of a `Prune=` or `Delete=` option, as far as a rule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// `false` (`common.SyncValueFalse`).
    False,
    /// `confirm` (`common.SyncValueConfirm`).
    Confirm,
    /// Any other value (it still hides the app-level one).
    Other,
}

impl Choice {
    fn of(value: &str) -> Choice {
        match value {
            "false" => Choice::False,
            "confirm" => Choice::Confirm,
            _ => Choice::Other,
        }
    }
}

/// A resource's `argocd.argoproj.io/sync-options`, read once: the options a rule asks for,
/// typed. An object without the annotation has none ([`ResourceOptions::default`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResourceOptions {
    /// The first `Prune=` value.
    prune: Option<Choice>,
    /// The first `Delete=` value.
    delete: Option<Choice>,
    prune_last: bool,
    replace: bool,
    force: bool,
    server_side_apply: bool,
    no_server_side_apply: bool,
    no_validate: bool,
    skip_dry_run_on_missing_resource: bool,
}

impl ResourceOptions {
    /// The options of `obj`'s annotation.
    pub(crate) fn of(obj: &Value) -> Self {
        annotation(obj, SYNC_OPTIONS_ANNOTATION).map(ResourceOptions::parse).unwrap_or_default()
    }

    /// The options of an object whose annotations are `annotations`.
    pub(crate) fn with_annotations(annotations: Option<&Map<String, Value>>) -> Self {
        annotations
            .and_then(|a| a.get(SYNC_OPTIONS_ANNOTATION))
            .and_then(Value::as_str)
            .map(ResourceOptions::parse)
            .unwrap_or_default()
    }

    /// The options of an object, `None` for no object.
    pub(crate) fn of_some(obj: Option<&Value>) -> Self {
        obj.map(ResourceOptions::of).unwrap_or_default()
    }

    /// The options of an annotation value.
    fn parse(value: &str) -> Self {
        let items = csv(value);
        let has = |option: &str| items.contains(&option);
        let first = |key: &str| first_option_value(&items, key).map(Choice::of);
        ResourceOptions {
            prune: first("Prune"),
            delete: first("Delete"),
            prune_last: has("PruneLast=true"),
            replace: has("Replace=true"),
            force: has("Force=true"),
            server_side_apply: has("ServerSideApply=true"),
            no_server_side_apply: has("ServerSideApply=false"),
            no_validate: has("Validate=false"),
            skip_dry_run_on_missing_resource: has("SkipDryRunOnMissingResource=true"),
        }
    }
}

/// The resolved `Prune=` value of an object: its annotation's, else the app-level value
/// (`WithDefaultPruneOption`).
fn prune_choice(live: &ResourceOptions, app: &AppOptions) -> Option<Choice> {
    live.prune.or_else(|| app.value("Prune").map(Choice::of))
}

/// The resolved `Delete=` value of an object: its annotation's, else the app-level value.
fn delete_choice(obj: &ResourceOptions, app: &AppOptions) -> Option<Choice> {
    obj.delete.or_else(|| app.value("Delete").map(Choice::of))
}

/// gitops-engine `pkg/sync/sync_context.go`, `isPruningDisabled`: the live object's `Prune=`
/// value, else the app-level one, is exactly `false`.
pub(crate) fn prune_disabled(live: &ResourceOptions, app: &AppOptions) -> bool {
    prune_choice(live, app) == Some(Choice::False)
}

/// gitops-engine `pkg/sync/sync_context.go`, `objRequiresPruneConfirmation`: the same value is
/// `confirm`.
pub(crate) fn prune_requires_confirmation(live: &ResourceOptions, app: &AppOptions) -> bool {
    prune_choice(live, app) == Some(Choice::Confirm)
}

/// Argo CD `controller/state.go`, `isObjRequiresDeletionConfirmation`: `Delete=confirm` or
/// `Prune=confirm`, each resolved from the object's annotation, else the app-level value.
pub(crate) fn requires_deletion_confirmation(obj: &ResourceOptions, app: &AppOptions) -> bool {
    delete_choice(obj, app) == Some(Choice::Confirm)
        || prune_choice(obj, app) == Some(Choice::Confirm)
}

/// At cascade deletion, whether the object is kept (Argo CD `controller/appcontroller.go`,
/// `shouldBeDeleted`): `Delete=false` resolved, or `helm.sh/resource-policy: keep`.
pub(crate) fn kept_at_deletion(obj: &Value, app: &AppOptions) -> bool {
    delete_choice(&ResourceOptions::of(obj), app) == Some(Choice::False)
        || annotation(obj, HELM_RESOURCE_POLICY_ANNOTATION) == Some("keep")
}

/// gitops-engine `pkg/sync/sync_context.go`, `getSyncTasks`: a prune task runs last with
/// `PruneLast=true` at app level or on the live object.
pub(crate) fn prune_last(live: &ResourceOptions, app: &AppOptions) -> bool {
    app.has("PruneLast=true") || live.prune_last
}

/// gitops-engine `pkg/sync/sync_context.go`, `applyObject`: `Replace=true` at app level, on
/// the target or on the live object. `Replace=false` is not read.
fn replace(target: &ResourceOptions, live: &ResourceOptions, app: &AppOptions) -> bool {
    app.has("Replace=true") || target.replace || live.replace
}

/// gitops-engine `pkg/sync/sync_context.go`, `applyObject`: `Force=true` on the target or the
/// live object, or the operation's force flag. The app-level option is not read.
fn force(target: &ResourceOptions, live: &ResourceOptions, op_force: bool) -> bool {
    op_force || target.force || live.force
}

/// gitops-engine `pkg/sync/sync_context.go`, `shouldUseServerSideApply`: app level or the
/// target's `ServerSideApply=true`; the target's `ServerSideApply=false` turns it off.
fn server_side_apply(target: &ResourceOptions, app: &AppOptions) -> bool {
    !target.no_server_side_apply && (app.server_side_apply() || target.server_side_apply)
}

/// gitops-engine `pkg/sync/sync_context.go`, `Sync` (the apply's `validate`): on unless the
/// app or the target says `Validate=false`.
pub(crate) fn validate(target: &ResourceOptions, app: &AppOptions) -> bool {
    !app.has("Validate=false") && !target.no_validate
}

/// gitops-engine `pkg/sync/sync_context.go`, `getSyncTasks`: a kind the cluster lacks skips the
/// dry run with `SkipDryRunOnMissingResource=true` at app level or on the target.
pub(crate) fn skip_dry_run_on_missing_resource(target: &ResourceOptions, app: &AppOptions) -> bool {
    app.has("SkipDryRunOnMissingResource=true") || target.skip_dry_run_on_missing_resource
}

/// How the sync writes a resource it does not prune, with the flags the options give the
/// write: what gitops-engine's `applyObject` (`pkg/sync/sync_context.go`) sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// `kubectl create`: `Replace=true` and no live object.
    Create,
    /// A PUT with the live `resourceVersion`: `Replace=true` on a CRD or a Namespace, which
    /// `kubectl replace` would delete with everything in it.
    Update,
    /// `kubectl replace`.
    Replace { force: bool },
    /// Server-side apply with the field manager [`FIELD_MANAGER`], moving the client-side
    /// apply manager's fields first when `client_side_apply_migration`.
    ServerSideApply { force: bool, client_side_apply_migration: bool },
    /// `kubectl apply`.
    Apply { force: bool },
}

/// gitops-engine `pkg/sync/sync_context.go`, `applyObject`: `Replace=true` (app, target or
/// live: [`replace`]) replaces, updates a CRD or Namespace, or creates what is not live;
/// else [`server_side_apply`] applies on the server, migrating the client-side manager's
/// fields unless `ClientSideApplyMigration=false` (`needsClientSideApplyMigration`, see
/// [`needs_client_side_apply_migration`]); else a client-side apply. [`force`] goes with
/// each write that takes it. `live` is the live object and its options, `op_force` the
/// operation's force flag, `csa_manager` the client-side apply manager to migrate from.
pub(crate) fn apply_object(
    target: &ResourceOptions,
    live: Option<(&Value, &ResourceOptions)>,
    kind: &str,
    app: &AppOptions,
    op_force: bool,
    csa_manager: &str,
) -> Write {
    let none = ResourceOptions::default();
    let live_options = live.map_or(&none, |l| l.1);
    let force = force(target, live_options, op_force);
    if replace(target, live_options, app) {
        match live {
            None => Write::Create,
            Some(_) if kind == "CustomResourceDefinition" || kind == "Namespace" => Write::Update,
            Some(_) => Write::Replace { force },
        }
    } else if server_side_apply(target, app) {
        let client_side_apply_migration = app.client_side_apply_migration()
            && live.is_some_and(|l| needs_client_side_apply_migration(l.0, csa_manager));
        Write::ServerSideApply { force, client_side_apply_migration }
    } else {
        Write::Apply { force }
    }
}

/// gitops-engine `pkg/sync/sync_context.go`, `needsClientSideApplyMigration`: the live
/// object has fields of `manager` set by client-side apply (operation `Update`).
fn needs_client_side_apply_migration(live: &Value, manager: &str) -> bool {
    if manager.is_empty() {
        return false;
    }
    let Some(fields) = live.get("metadata").and_then(|m| m.get("managedFields")) else {
        return false;
    };
    fields.as_array().is_some_and(|items| {
        items.iter().any(|f| {
            f.get("manager").and_then(Value::as_str) == Some(manager)
                && f.get("operation").and_then(Value::as_str) == Some("Update")
        })
    })
}

/// The message of a prune the options skip, or `None` when the object is deleted:
/// gitops-engine `pkg/sync/sync_context.go`, `pruneObject` (`ignored (requires pruning)`
/// when the operation does not prune, `ignored (no prune)` when [`prune_disabled`]).
pub(crate) fn prune_object(
    live: &ResourceOptions,
    app: &AppOptions,
    prune: bool,
) -> Option<&'static str> {
    if !prune {
        Some("ignored (requires pruning)")
    } else if prune_disabled(live, app) {
        Some("ignored (no prune)")
    } else {
        None
    }
}

/// gitops-engine `pkg/sync/sync_context.go`, `filterOutOfSyncTasks` (on with
/// `ApplyOutOfSyncOnly=true`, `WithResourceModificationChecker`): a task of a live object that
/// is not a hook and was compared unmodified (`modified()` is `Some(false)`, asked only then)
/// is left out.
pub(crate) fn filter_out_of_sync(
    app: &AppOptions,
    hook: bool,
    modified: impl FnOnce() -> Option<bool>,
) -> bool {
    app.apply_out_of_sync_only() && !hook && modified() == Some(false)
}
