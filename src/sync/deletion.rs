//! Application deletion as a step function, like sync (Argo CD 3.6.2
//! `finalizeApplicationDeletion`, controller/hook.go): the PreDelete hooks, the cascade
//! deletion of the app's objects (`resources-finalizer.argocd.argoproj.io`, foreground or
//! `/background`), the PostDelete hooks, then the cleanup of both kinds of hooks, each stage
//! held by its finalizer; and which live objects the cascade deletes in each pass (gitops-engine
//! pkg/sync/common/types.go `SyncOptionDelete`; Argo CD 3.6.2 controller/hook.go
//! `executePreDeleteHooks`, `executePostDeleteHooks`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ActionKind, HostAction, LiveObject};
use crate::health::HealthStatus;
use crate::object::ObjectRef;
use crate::vocabulary::{
    self, AppOptions, HookDeletePolicy, PropagationPolicy, ResourceOptions, kept_at_deletion,
    requires_deletion_confirmation,
};

/// When deletion was approved (unix seconds), from the Application's annotation.
pub(crate) fn approved_at(app: &crate::config::Application) -> Option<i64> {
    let v = app.metadata.annotations.get(vocabulary::DELETION_APPROVED_ANNOTATION)?;
    crate::vocabulary::parse_rfc3339(v).ok()
}

/// One pass of a cascade deletion.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct CascadePass {
    /// Delete these now (the highest remaining wave), in key order.
    pub delete: Vec<ObjectRef>,
    /// Objects still being deleted; nothing else is deleted until they are gone.
    pub waiting: Vec<ObjectRef>,
    /// Objects the deletion keeps (`Delete=false`, `helm.sh/resource-policy: keep`, CRDs).
    pub kept: Vec<ObjectRef>,
    /// Some object needs `Delete=confirm`/`Prune=confirm` approval that is not given yet.
    pub awaiting_confirmation: bool,
    /// Nothing is left to delete.
    pub done: bool,
}

impl CascadePass {
    /// Which of the app's live objects to delete in this pass of a cascade deletion (Argo CD
    /// 3.6.2): if any of them is already being deleted, wait; objects kept by `Delete=false`,
    /// `helm.sh/resource-policy: keep` or being CRDs are left alone; the others (hooks included)
    /// wait for `Delete=confirm`/`Prune=confirm` approval where one needs it, else the objects of
    /// the highest wave are deleted.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::CascadePass;
    /// use gitops_core::vocabulary::AppOptions;
    /// let obj = |name: &str, wave: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": name, "namespace": "a",
    ///                  "annotations": {"argocd.argoproj.io/sync-wave": wave}}});
    /// let live = [obj("first", "0"), obj("last", "5")];
    /// let pass = CascadePass::new(&live, &AppOptions::default(), false);
    /// assert_eq!(pass.delete.len(), 1);
    /// assert_eq!(pass.delete[0].name, "last");
    /// ```
    pub fn new(live: &[Value], app: &AppOptions, approved: bool) -> CascadePass {
        cascade_pass_of(live, app, approved, |_| false)
    }
}

fn being_deleted(obj: &Value) -> bool {
    obj.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null())
}

/// [`CascadePass::new`], `is_self` telling the Application itself (kept, as Argo CD's
/// `isSelfReferencedApp`).
fn cascade_pass_of(
    live: &[Value],
    app: &AppOptions,
    approved: bool,
    is_self: impl Fn(&ObjectRef) -> bool,
) -> CascadePass {
    let mut waiting: Vec<ObjectRef> =
        live.iter().filter(|o| being_deleted(o)).map(ObjectRef::from_object_lossy).collect();
    waiting.sort();
    let mut pass = CascadePass { waiting, ..CascadePass::default() };
    let mut candidates: Vec<(&Value, ObjectRef)> = Vec::new();
    for obj in live {
        let r = ObjectRef::from_object_lossy(obj);
        let crd = r.group == "apiextensions.k8s.io" && r.kind == "CustomResourceDefinition";
        if crd || is_self(&r) || kept_at_deletion(obj, app) {
            pass.kept.push(r);
        } else {
            candidates.push((obj, r));
        }
    }
    pass.kept.sort();
    candidates.sort_by(|a, b| a.1.cmp(&b.1));
    if !pass.waiting.is_empty() {
        return pass;
    }
    if candidates.is_empty() {
        pass.done = true;
        return pass;
    }
    if !approved
        && candidates
            .iter()
            .any(|(o, _)| requires_deletion_confirmation(&ResourceOptions::of(o), app))
    {
        pass.awaiting_confirmation = true;
        return pass;
    }
    let top = candidates.iter().map(|(o, _)| vocabulary::wave(o)).max().unwrap_or(0);
    pass.delete = candidates
        .into_iter()
        .filter(|(o, _)| vocabulary::wave(o) == top)
        .map(|(_, r)| r)
        .collect();
    pass
}

/// The finalizer of a cascade deletion with foreground propagation.
pub(super) const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";
/// The same, spelled with its policy.
pub(super) const FOREGROUND_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io/foreground";
/// A cascade deletion with background propagation.
pub(super) const BACKGROUND_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io/background";
/// Runs the PreDelete hooks first (the controller adds it, and `<it>/cleanup`, while the app
/// has PreDelete hooks).
pub(super) const PRE_DELETE_FINALIZER: &str = "pre-delete-finalizer.argocd.argoproj.io";
/// Runs the PostDelete hooks after the cascade.
pub(super) const POST_DELETE_FINALIZER: &str = "post-delete-finalizer.argocd.argoproj.io";

/// The two kinds of deletion hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) enum DeleteHookType {
    /// `argocd.argoproj.io/hook: PreDelete` or `helm.sh/hook: pre-delete`.
    PreDelete,
    /// `argocd.argoproj.io/hook: PostDelete` or `helm.sh/hook: post-delete`.
    PostDelete,
}

impl DeleteHookType {
    /// Whether `obj` is a hook of this type: one of the comma-separated values (trimmed) of
    /// its Argo CD or Helm hook annotation names it.
    pub(crate) fn matches(self, obj: &Value) -> bool {
        match self {
            DeleteHookType::PreDelete => vocabulary::is_pre_delete_hook(obj),
            DeleteHookType::PostDelete => vocabulary::is_post_delete_hook(obj),
        }
    }

    fn finalizer(self) -> &'static str {
        match self {
            DeleteHookType::PreDelete => PRE_DELETE_FINALIZER,
            DeleteHookType::PostDelete => POST_DELETE_FINALIZER,
        }
    }

    fn name(self) -> &'static str {
        match self {
            DeleteHookType::PreDelete => "PreDelete",
            DeleteHookType::PostDelete => "PostDelete",
        }
    }
}

/// An Application being deleted, as one pass of its deletion sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct DeletionRequest {
    /// The Application's finalizers.
    pub finalizers: Vec<String>,
    /// The Application's name and namespace (the app itself is never deleted by its cascade).
    pub app_name: String,
    /// The namespace the Application lives in.
    pub app_namespace: String,
    /// The destination namespace, given to namespaced hooks without one.
    pub destination_namespace: String,
    /// The app-level sync options (`Delete=`, `Prune=`).
    pub sync_options: AppOptions,
    /// The Application's `deletionTimestamp`, unix seconds.
    pub deleted_at: i64,
    /// When deletion was approved (`argocd.argoproj.io/deletion-approved`), unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<i64>,
    /// The desired objects rendered from Git, where the deletion hooks come from.
    pub targets: Vec<Value>,
    /// Which kinds are cluster-scoped.
    #[serde(skip)]
    pub scopes: crate::object::Scopes,
    /// The host has carried out the cascade deletions of this pass's first step and passes
    /// the live objects read again after them: the cascade stage only counts what is left, as
    /// Argo CD reads the cluster again after its deletions within the pass, and ends now when
    /// nothing is.
    pub after_deletions: bool,
}

impl Default for DeletionRequest {
    fn default() -> Self {
        DeletionRequest {
            finalizers: Vec::new(),
            app_name: String::new(),
            app_namespace: String::new(),
            destination_namespace: String::new(),
            sync_options: AppOptions::default(),
            deleted_at: 0,
            approved_at: None,
            targets: Vec::new(),
            scopes: crate::object::Scopes::builtin(),
            after_deletions: false,
        }
    }
}

impl DeletionRequest {
    /// The deletion of `app` (its finalizers, deletion timestamp and approval, destination
    /// namespace and sync options) with the hooks among `targets`.
    ///
    /// # Errors
    ///
    /// The app's `deletionTimestamp` is missing or not RFC 3339: it is not being deleted.
    pub fn for_app(
        app: &crate::config::Application,
        targets: Vec<Value>,
    ) -> Result<Self, crate::vocabulary::TimeError> {
        let stamp = app.metadata.deletion_timestamp.as_deref().unwrap_or("");
        Ok(DeletionRequest {
            finalizers: app.metadata.finalizers.clone(),
            app_name: app.metadata.name.clone(),
            app_namespace: app.metadata.namespace.clone(),
            destination_namespace: app.spec.destination.namespace.clone(),
            sync_options: AppOptions::new(app.spec.sync_policy.sync_options.clone()),
            deleted_at: crate::vocabulary::parse_rfc3339(stamp)?,
            approved_at: approved_at(app),
            targets,
            scopes: crate::object::Scopes::builtin(),
            after_deletions: false,
        })
    }
}

/// One pass of an Application's deletion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct DeletionStep {
    /// The Application's finalizers after this pass; the host patches them when they changed.
    pub finalizers: Vec<String>,
    /// Create the missing deletion hooks, delete failed hooks, finished hooks or the
    /// cascade's objects. Outcomes need not be reported: the next pass reads the live objects.
    /// After the cascade's deletions the host may read the live objects again and step once
    /// more with [`DeletionRequest::after_deletions`], ending the stage within the pass.
    pub actions: Vec<HostAction>,
    /// The `DeletionError` condition to set (`None` clears it).
    pub condition: Option<String>,
    /// What the pass is waiting for, or did.
    pub message: String,
    /// No finalizer of the controller is left: Kubernetes removes the Application.
    pub done: bool,
}

/// `<stage>:<verb>:<group>/<Kind>/<namespace>/<name>`, an action's id.
fn action(stage: &str, kind: ActionKind, key: ObjectRef) -> HostAction {
    let verb = if kind == ActionKind::Create { "create" } else { "delete" };
    let id = format!("{stage}:{verb}:{}/{}/{}/{}", key.group, key.kind, key.namespace, key.name);
    HostAction::new(id, kind, key)
}

fn delete_action(stage: &str, obj: &Value) -> HostAction {
    action(stage, ActionKind::Delete, ObjectRef::from_object_lossy(obj))
}

fn health_of(l: &LiveObject) -> HealthStatus {
    l.health.as_ref().map_or(HealthStatus::Healthy, |h| h.status)
}

/// `executeHooks`: creates the hooks of `ty` that Git declares and the cluster lacks; once
/// none is missing, waits for the running ones; a Degraded one fails the stage (it is deleted,
/// so that the next pass creates it again). `Ok(true)` when every hook is done.
fn execute_hooks(
    ty: DeleteHookType,
    req: &DeletionRequest,
    live: &[LiveObject],
    actions: &mut Vec<HostAction>,
) -> Result<bool, String> {
    let running: Vec<&LiveObject> = live.iter().filter(|l| ty.matches(&l.object)).collect();
    let mut created = 0;
    for target in req.targets.iter().filter(|t| ty.matches(t)) {
        let mut obj = target.clone();
        let r = ObjectRef::from_object_lossy(&obj);
        if r.namespace.is_empty()
            && !req.scopes.is_cluster_scoped(&r.group, &r.kind)
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("namespace".into(), Value::String(req.destination_namespace.clone()));
        }
        let key = ObjectRef::from_object_lossy(&obj);
        if running.iter().any(|l| ObjectRef::from_object_lossy(&l.object).same_object(&key)) {
            continue;
        }
        let mut a = action(ty.name(), ActionKind::Create, key);
        a.object = Some(obj);
        actions.push(a);
        created += 1;
    }
    if created > 0 {
        return Ok(false);
    }
    let mut failed: Vec<&LiveObject> = Vec::new();
    let mut progressing = false;
    for l in &running {
        match health_of(l) {
            HealthStatus::Progressing => progressing = true,
            HealthStatus::Degraded => failed.push(l),
            _ => {}
        }
    }
    if !failed.is_empty() {
        failed.sort_by_key(|l| ObjectRef::from_object_lossy(&l.object));
        let names: Vec<String> = failed
            .iter()
            .map(|l| {
                let r = ObjectRef::from_object_lossy(&l.object);
                format!("{}/{}", r.namespace, r.name)
            })
            .collect();
        actions.extend(failed.iter().map(|l| delete_action(ty.name(), &l.object)));
        return Err(format!("{} hook(s) failed: {}", ty.name(), names.join(", ")));
    }
    Ok(!progressing)
}

/// `cleanupHooks`: deletes the hooks of `ty` whose delete policy matches the hooks' worst
/// health (`HookSucceeded` when all are Healthy, `HookFailed` when the worst is Degraded),
/// and waits until they are gone. `true` when nothing is left to delete.
fn cleanup_hooks(ty: DeleteHookType, live: &[LiveObject], actions: &mut Vec<HostAction>) -> bool {
    let mut hooks_of: Vec<&LiveObject> = live.iter().filter(|l| ty.matches(&l.object)).collect();
    hooks_of.sort_by_key(|l| ObjectRef::from_object_lossy(&l.object));
    let worst = hooks_of
        .iter()
        .map(|l| health_of(l))
        .fold(HealthStatus::Healthy, |acc, h| if acc.is_worse(h) { h } else { acc });
    let mut pending = 0;
    for l in hooks_of {
        let due = vocabulary::delete_policies(&l.object).iter().any(|p| {
            (*p == HookDeletePolicy::HookFailed && worst == HealthStatus::Degraded)
                || (*p == HookDeletePolicy::HookSucceeded && worst == HealthStatus::Healthy)
        });
        if due {
            pending += 1;
            if !being_deleted(&l.object) {
                actions.push(delete_action(&format!("{}-cleanup", ty.name()), &l.object));
            }
        }
    }
    pending == 0
}

impl DeletionRequest {
    /// One pass of an Application's deletion (Argo CD 3.6.2 `finalizeApplicationDeletion`), in
    /// its order, each stage held by its finalizer:
    /// 1. `pre-delete-finalizer.argocd.argoproj.io`: create the PreDelete hooks Git declares and
    ///    wait for them (a Degraded one is `error executing pre-delete hooks: PreDelete hook(s)
    ///    failed: <ns>/<name>, ...`, the `DeletionError` condition); when they are done the
    ///    finalizer goes and the pass goes on;
    /// 2. `resources-finalizer.argocd.argoproj.io` (`/foreground`, `/background`): one
    ///    [`CascadePass::new`] over `live`, deleting with foreground propagation, background for
    ///    `/background`; when nothing is left to delete the finalizer goes;
    /// 3. `post-delete-finalizer.argocd.argoproj.io`: the PostDelete hooks, as in 1;
    /// 4. `…/cleanup` of the pre-delete, then of the post-delete finalizer: delete those hooks
    ///    whose delete policy matches how they ended, and wait until they are gone.
    ///
    /// `live` is what the controller reads in the pass: the app's live objects, with health.
    /// Actions are not replayed. Argo CD reads the app's live objects again right after the
    /// cascade's deletions and removes the finalizer in the same pass when none that it would
    /// delete is left (`finalizeApplicationDeletion`, the second `getPermittedAppLiveObjects`);
    /// the host does the same by stepping again with [`DeletionRequest::after_deletions`] and the
    /// objects read after its deletions: the cascade stage then deletes nothing more and either
    /// ends (`deleted the application's resources`) or says `N objects remaining for deletion`,
    /// N counting the objects it would delete. The hook stages have no such second read in Argo
    /// CD (`executeHooks` and `cleanupHooks` return and wait for the next pass), nor here.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::DeletionRequest;
    /// use gitops_core::sync::LiveObject;
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "metadata": {"name": "shop", "namespace": "argocd",
    ///                  "deletionTimestamp": "2024-05-01T00:00:00Z",
    ///                  "finalizers": ["resources-finalizer.argocd.argoproj.io/background"]},
    ///     "spec": {"destination": {"namespace": "shop"}}})).unwrap();
    /// let req = DeletionRequest::for_app(&app, vec![]).unwrap();
    /// let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "web", "namespace": "shop"}});
    /// let pass = req.step(&[LiveObject::new(cm, None)]);
    /// assert_eq!(pass.actions[0].id, "cascade:delete:/ConfigMap/shop/web");
    /// assert!(!pass.done);
    /// let last = req.step(&[]);
    /// assert!(last.finalizers.is_empty() && last.done);
    /// ```
    pub fn step(&self, live: &[LiveObject]) -> DeletionStep {
        let req = self;
        let mut finalizers = req.finalizers.clone();
        let mut actions = Vec::new();
        let out = DeletionStep::of;
        let has = |fs: &[String], f: &str| fs.iter().any(|x| x == f);
        let remove = |fs: &mut Vec<String>, f: &str| fs.retain(|x| x != f);
        if has(&finalizers, PRE_DELETE_FINALIZER) {
            match execute_hooks(DeleteHookType::PreDelete, req, live, &mut actions) {
                Err(e) => {
                    let e = format!("error executing pre-delete hooks: {e}");
                    return out(finalizers, actions, Some(e.clone()), e);
                }
                Ok(false) => {
                    return out(finalizers, actions, None, "waiting for PreDelete hooks".into());
                }
                Ok(true) => remove(&mut finalizers, PRE_DELETE_FINALIZER),
            }
        }
        if let Some(policy_finalizer) =
            finalizers.iter().find(|f| is_propagation_finalizer(f)).cloned()
        {
            return req.cascade(live, &policy_finalizer, finalizers, actions);
        }
        if has(&finalizers, POST_DELETE_FINALIZER) {
            return match execute_hooks(DeleteHookType::PostDelete, req, live, &mut actions) {
                Err(e) => out(finalizers, actions, Some(e.clone()), e),
                Ok(false) => out(finalizers, actions, None, "waiting for PostDelete hooks".into()),
                Ok(true) => {
                    remove(&mut finalizers, POST_DELETE_FINALIZER);
                    out(finalizers, actions, None, "PostDelete hooks done".into())
                }
            };
        }
        for ty in [DeleteHookType::PreDelete, DeleteHookType::PostDelete] {
            let cleanup = format!("{}/cleanup", ty.finalizer());
            if has(&finalizers, &cleanup) {
                if cleanup_hooks(ty, live, &mut actions) {
                    remove(&mut finalizers, &cleanup);
                    return out(
                        finalizers,
                        actions,
                        None,
                        format!("{} hooks cleaned up", ty.name()),
                    );
                }
                return out(finalizers, actions, None, format!("deleting {} hooks", ty.name()));
            }
        }
        out(finalizers, actions, None, "deleted".into())
    }
}

impl DeletionStep {
    /// A step of the deletion: done once no finalizer of the controller is left.
    fn of(
        finalizers: Vec<String>,
        actions: Vec<HostAction>,
        condition: Option<String>,
        message: String,
    ) -> DeletionStep {
        let done = !finalizers.iter().any(|f| is_controller_finalizer(f));
        DeletionStep { finalizers, actions, condition, message, done }
    }
}

impl DeletionRequest {
    /// The cascade of the app's resources while a propagation finalizer (`policy_finalizer`)
    /// is on the app: the deletions of this pass, or what it waits for.
    fn cascade(
        &self,
        live: &[LiveObject],
        policy_finalizer: &str,
        mut finalizers: Vec<String>,
        mut actions: Vec<HostAction>,
    ) -> DeletionStep {
        let req = self;
        let approved = req.approved_at.is_some_and(|at| at >= req.deleted_at);
        let is_self = |r: &ObjectRef| {
            r.group == "argoproj.io"
                && r.kind == "Application"
                && r.name == req.app_name
                && r.namespace == req.app_namespace
        };
        let objects: Vec<Value> = live.iter().map(|l| l.object.clone()).collect();
        let pass = cascade_pass_of(&objects, &req.sync_options, approved, is_self);
        let policy = if policy_finalizer == BACKGROUND_FINALIZER {
            PropagationPolicy::Background
        } else {
            PropagationPolicy::Foreground
        };
        let left = objects.len() - pass.kept.len();
        let message = if pass.done || (req.after_deletions && left == 0) {
            finalizers.retain(|f| !is_propagation_finalizer(f));
            "deleted the application's resources".to_string()
        } else if req.after_deletions {
            format!("{left} objects remaining for deletion")
        } else if !pass.waiting.is_empty() {
            format!("{} objects remaining for deletion", live.len())
        } else if pass.awaiting_confirmation {
            "waiting for the deletion to be confirmed".to_string()
        } else {
            for r in &pass.delete {
                let mut a = action("cascade", ActionKind::Delete, r.clone());
                a.propagation_policy = Some(policy);
                actions.push(a);
            }
            format!("deleting the application's resources with {policy:?} propagation policy")
        };
        DeletionStep::of(finalizers, actions, None, message)
    }
}

fn is_propagation_finalizer(f: &str) -> bool {
    matches!(f, RESOURCES_FINALIZER | FOREGROUND_FINALIZER | BACKGROUND_FINALIZER)
}

/// A finalizer this deletion removes (others belong to someone else).
fn is_controller_finalizer(f: &str) -> bool {
    is_propagation_finalizer(f)
        || [PRE_DELETE_FINALIZER, POST_DELETE_FINALIZER]
            .iter()
            .any(|p| f == *p || f.strip_prefix(p).is_some_and(|rest| rest == "/cleanup"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_at_reads_the_annotation() {
        let app = crate::config::Application::from_value(&serde_json::json!({"metadata": {
            "annotations": {"argocd.argoproj.io/deletion-approved": "2024-05-01T10:00:00Z"}}}))
        .unwrap();
        assert_eq!(approved_at(&app), Some(1_714_557_600));
    }
}
