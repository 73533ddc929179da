//! What health needs to know about hooks: Argo CD's hook annotation, Helm's, and the hook
//! finalizer.

use serde_json::Value;

use crate::object::annotation;

/// The finalizer Argo CD puts on hooks; an object being deleted that still has it is assessed
/// normally, so that hooks can report completion.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// The annotation that keeps a resource out of its app's health when it is `"true"`.
pub const IGNORE_HEALTHCHECK_ANNOTATION: &str = "argocd.argoproj.io/ignore-healthcheck";

const HOOK_ANNOTATION: &str = "argocd.argoproj.io/hook";
const HELM_HOOK_ANNOTATION: &str = "helm.sh/hook";

/// Argo CD's hook types of a comma-separated annotation value: trimmed, empty items
/// dropped, duplicates removed, first-seen order.
fn csv(value: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The hook types of an object: Argo CD's (`PreSync`, `Sync`, `PostSync`, `SyncFail`,
/// `Skip`), else Helm's mapped onto them.
pub(crate) fn hook_types(obj: &Value) -> Vec<&'static str> {
    const ARGO: &[&str] = &["PreSync", "Sync", "PostSync", "SyncFail", "Skip"];
    let mut out: Vec<&'static str> = Vec::new();
    if let Some(v) = annotation(obj, HOOK_ANNOTATION) {
        for t in csv(v) {
            if let Some(known) = ARGO.iter().find(|k| **k == t)
                && !out.contains(known)
            {
                out.push(known);
            }
        }
    }
    if out.is_empty()
        && let Some(v) = annotation(obj, HELM_HOOK_ANNOTATION)
    {
        for t in csv(v) {
            let mapped = match t {
                "pre-install" | "pre-upgrade" => "PreSync",
                "post-install" | "post-upgrade" => "PostSync",
                _ => continue,
            };
            if !out.contains(&mapped) {
                out.push(mapped);
            }
        }
    }
    out
}

/// Whether the object's only hook type is `Skip`.
pub(crate) fn is_skip_hook(obj: &Value) -> bool {
    hook_types(obj) == ["Skip"]
}

fn has_annotation_key(obj: &Value, key: &str) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(key))
}

/// Whether an object is a hook (Argo CD's `IsHook`): it has the `argocd.argoproj.io/hook`
/// annotation (any value) and is not only a `Skip` hook, or, without it, a `helm.sh/hook`
/// annotation other than `crd-install`.
///
/// ```
/// let hook = serde_json::json!({"metadata": {"annotations": {"argocd.argoproj.io/hook": "PreSync"}}});
/// assert!(gitops_core::health::is_hook(&hook));
/// let skip = serde_json::json!({"metadata": {"annotations": {"argocd.argoproj.io/hook": "Skip"}}});
/// assert!(!gitops_core::health::is_hook(&skip));
/// ```
pub fn is_hook(obj: &Value) -> bool {
    if has_annotation_key(obj, HOOK_ANNOTATION) {
        return !is_skip_hook(obj);
    }
    if has_annotation_key(obj, HELM_HOOK_ANNOTATION) {
        return annotation(obj, HELM_HOOK_ANNOTATION) != Some("crd-install");
    }
    false
}

/// Whether `metadata.finalizers` holds [`HOOK_FINALIZER`].
pub fn has_hook_finalizer(obj: &Value) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|v| v.as_str() == Some(HOOK_FINALIZER)))
}
