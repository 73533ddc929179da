//! Application deletion with cascade (§3 `Delete=`, §5.7): which live objects the controller
//! deletes in each pass.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hooks;
use super::options::{AppOptions, kept_at_deletion, requires_deletion_confirmation};
use crate::object::ObjectRef;

/// `argocd.argoproj.io/deletion-approved`: the Application annotation that approves
/// `Prune=confirm`/`Delete=confirm` deletions from its time on.
pub const DELETION_APPROVED_ANNOTATION: &str = "argocd.argoproj.io/deletion-approved";

/// When deletion was approved (unix seconds), from the Application's annotation.
///
/// # Examples
///
/// ```
/// let app = gitops_core::Application::from_value(&serde_json::json!({"metadata": {
///     "annotations": {"argocd.argoproj.io/deletion-approved": "2024-05-01T10:00:00Z"}}})).unwrap();
/// assert_eq!(gitops_core::sync::deletion::approved_at(&app), Some(1_714_557_600));
/// ```
pub fn approved_at(app: &crate::config::Application) -> Option<i64> {
    let v = app.metadata.annotations.get(DELETION_APPROVED_ANNOTATION)?;
    super::time::parse_rfc3339(v).ok()
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

/// Which of the app's live objects to delete in this pass of a cascade deletion: objects kept
/// by `Delete=false`, `helm.sh/resource-policy: keep` or being CRDs are left alone; if any
/// other object is already being deleted, wait; else delete the objects of the highest wave.
/// Hooks are not deleted here (PreDelete/PostDelete hooks are not implemented).
///
/// # Examples
///
/// ```
/// use gitops_core::sync::deletion::cascade_pass;
/// use gitops_core::sync::AppOptions;
/// let obj = |name: &str, wave: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": name, "namespace": "a",
///                  "annotations": {"argocd.argoproj.io/sync-wave": wave}}});
/// let live = [obj("first", "0"), obj("last", "5")];
/// let pass = cascade_pass(&live, &AppOptions::default(), false);
/// assert_eq!(pass.delete.len(), 1);
/// assert_eq!(pass.delete[0].name, "last");
/// ```
pub fn cascade_pass(live: &[Value], app: &AppOptions, approved: bool) -> CascadePass {
    let mut pass = CascadePass::default();
    let mut candidates: Vec<(&Value, ObjectRef)> = Vec::new();
    for obj in live {
        let r = ObjectRef::from_object_lossy(obj);
        let crd = r.group == "apiextensions.k8s.io" && r.kind == "CustomResourceDefinition";
        if crd || kept_at_deletion(obj, app) {
            pass.kept.push(r);
        } else if !hooks::is_hook(obj) {
            candidates.push((obj, r));
        }
    }
    pass.kept.sort();
    candidates.sort_by(|a, b| a.1.cmp(&b.1));
    if candidates.is_empty() {
        pass.done = true;
        return pass;
    }
    if !approved && candidates.iter().any(|(o, _)| requires_deletion_confirmation(o, app)) {
        pass.awaiting_confirmation = true;
        return pass;
    }
    pass.waiting = candidates
        .iter()
        .filter(|(o, _)| {
            o.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null())
        })
        .map(|(_, r)| r.clone())
        .collect();
    if !pass.waiting.is_empty() {
        return pass;
    }
    let top = candidates.iter().map(|(o, _)| hooks::wave(o)).max().unwrap_or(0);
    pass.delete =
        candidates.into_iter().filter(|(o, _)| hooks::wave(o) == top).map(|(_, r)| r).collect();
    pass
}
