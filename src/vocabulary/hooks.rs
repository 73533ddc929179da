//! Hook classification, read once for diff, health and sync: Argo CD's own
//! `argocd.argoproj.io/hook*` annotations and Helm's `helm.sh/hook*`. The Argo CD hook
//! annotation, when present, wins over Helm's.
//!
//! The rules are gitops-engine v3.6.2's `pkg/sync/hook/hook.go` (`IsHook`, `Skip`, `Types`,
//! `HasHookFinalizer`), `pkg/sync/hook/delete_policy.go` (`DeletePolicies`),
//! `pkg/sync/hook/helm/` (`IsHook`, `Types`, `DeletePolicies`, `Weight`),
//! `pkg/sync/ignore/ignore.go` (`Ignore`) and `pkg/sync/syncwaves/waves.go` (`Wave`); the
//! deletion-hook rules are Argo CD's `controller/hook.go` (`isHookOfType`,
//! `hasGitOpsEngineSyncPhaseHook`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::annotations::{
    HELM_DELETE_POLICY_ANNOTATION, HELM_HOOK_ANNOTATION, HELM_WEIGHT_ANNOTATION, HOOK_ANNOTATION,
    HOOK_DELETE_POLICY_ANNOTATION, SYNC_WAVE_ANNOTATION, annotation_csv, annotations, go_atoi,
    has_annotation_option,
};
use crate::object::annotation;

/// The finalizer every hook gets, so the host sees it finish before it is collected
/// (`hook.HookFinalizer`).
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// A hook type as written in `argocd.argoproj.io/hook` (`common.HookType`). `Skip` is not a
/// phase: an object whose only type is `Skip` is neither applied nor pruned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub(crate) enum HookType {
    /// Runs before the Sync phase.
    PreSync,
    /// Runs with the resources.
    Sync,
    /// Runs after every Sync wave is healthy.
    PostSync,
    /// Runs only when the sync fails.
    SyncFail,
    /// Leave the object alone.
    Skip,
}

impl HookType {
    /// Reads a type name (`common.NewHookType`); only the five names Argo CD accepts
    /// (`PreDelete` and `PostDelete` are application-deletion hooks, not sync hooks).
    pub(crate) fn parse(s: &str) -> Option<HookType> {
        Some(match s {
            "PreSync" => HookType::PreSync,
            "Sync" => HookType::Sync,
            "PostSync" => HookType::PostSync,
            "SyncFail" => HookType::SyncFail,
            "Skip" => HookType::Skip,
            _ => return None,
        })
    }
}

/// When a hook is deleted (`common.HookDeletePolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum HookDeletePolicy {
    /// Delete the old copy before creating the hook again (the default).
    BeforeHookCreation,
    /// Delete the hook when the whole sync succeeded.
    HookSucceeded,
    /// Delete the hook when the sync failed.
    HookFailed,
}

/// Whether the object is a hook (`hook.IsHook`): the Argo CD hook annotation is present and
/// the object is not a pure `Skip`, or (without it) the Helm hook annotation is present and is
/// not exactly `crd-install`.
pub(crate) fn is_hook(obj: &Value) -> bool {
    if annotation(obj, HOOK_ANNOTATION).is_some() {
        return !is_skip(obj);
    }
    annotation(obj, HELM_HOOK_ANNOTATION).is_some_and(|v| v != "crd-install")
}

/// What an object's hook annotations make of it: [`is_hook`], [`is_skip`] and
/// [`is_deletion_hook_only`], read together (an object with neither hook annotation, the usual
/// case, is looked at once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HookFacts {
    pub hook: bool,
    pub skip: bool,
    pub deletion_only: bool,
}

impl HookFacts {
    pub(crate) fn of(obj: &Value) -> Self {
        HookFacts::with_annotations(obj, annotations(obj))
    }

    /// The facts of `obj`, whose annotations are `annotations`.
    pub(crate) fn with_annotations(obj: &Value, annotations: Option<&Map<String, Value>>) -> Self {
        match annotations {
            Some(a) if a.contains_key(HOOK_ANNOTATION) || a.contains_key(HELM_HOOK_ANNOTATION) => {
                HookFacts {
                    hook: is_hook(obj),
                    skip: is_skip(obj),
                    deletion_only: is_deletion_hook_only(obj),
                }
            }
            _ => HookFacts::default(),
        }
    }
}

/// Whether an object has either hook annotation (Argo CD's or Helm's). Without one it is
/// no hook of any kind: [`is_hook`], [`is_app_hook`], [`is_ignored`], [`is_skip`] and
/// [`is_deletion_hook_only`] all read one of them, so a caller asking several of them about
/// the usual object (neither annotation) looks once instead of up to nine times.
pub(crate) fn has_hook_annotation(obj: &Value) -> bool {
    annotations(obj)
        .is_some_and(|a| a.contains_key(HOOK_ANNOTATION) || a.contains_key(HELM_HOOK_ANNOTATION))
}

/// Whether the only Argo CD hook type is `Skip` (`hook.Skip`).
pub(crate) fn is_skip(obj: &Value) -> bool {
    argo_types(obj) == [HookType::Skip]
}

fn argo_types(obj: &Value) -> Vec<HookType> {
    let mut out = Vec::new();
    for t in annotation_csv(obj, HOOK_ANNOTATION).into_iter().filter_map(HookType::parse) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The hook types of an object (`hook.Types`): the valid Argo CD types; only when there are
/// none, the Helm types (`pre-install`/`pre-upgrade` → PreSync, `post-install`/`post-upgrade`
/// → PostSync; other Helm types add nothing).
pub(crate) fn hook_types(obj: &Value) -> Vec<HookType> {
    let types = argo_types(obj);
    if !types.is_empty() {
        return types;
    }
    let mut out = Vec::new();
    if let Some(v) = annotation(obj, HELM_HOOK_ANNOTATION) {
        for item in v.split(',').map(str::trim) {
            match item {
                "pre-install" | "pre-upgrade" => out.push(HookType::PreSync),
                "post-install" | "post-upgrade" => out.push(HookType::PostSync),
                _ => {}
            }
        }
    }
    out
}

/// Whether the engine drops the object (`ignore.Ignore`): a hook with no valid type, e.g. a
/// `PostDelete` hook or Helm's `test-success`.
pub(crate) fn is_ignored(obj: &Value) -> bool {
    is_hook(obj) && hook_types(obj).is_empty()
}

/// The delete policies of a hook (`hook.DeletePolicies`): the Argo CD ones, then the Helm
/// ones; `[BeforeHookCreation]` when there are none.
pub(crate) fn delete_policies(obj: &Value) -> Vec<HookDeletePolicy> {
    let mut out = Vec::new();
    for item in annotation_csv(obj, HOOK_DELETE_POLICY_ANNOTATION) {
        match item {
            "BeforeHookCreation" => out.push(HookDeletePolicy::BeforeHookCreation),
            "HookSucceeded" => out.push(HookDeletePolicy::HookSucceeded),
            "HookFailed" => out.push(HookDeletePolicy::HookFailed),
            _ => {}
        }
    }
    if let Some(v) = annotation(obj, HELM_DELETE_POLICY_ANNOTATION) {
        for item in v.split(',').map(str::trim) {
            match item {
                "before-hook-creation" => out.push(HookDeletePolicy::BeforeHookCreation),
                "hook-succeeded" => out.push(HookDeletePolicy::HookSucceeded),
                "hook-failed" => out.push(HookDeletePolicy::HookFailed),
                _ => {}
            }
        }
    }
    if out.is_empty() {
        out.push(HookDeletePolicy::BeforeHookCreation);
    }
    out
}

/// Argo CD `controller/hook.go`, `isPreDeleteHook`: one of the comma-separated items of the
/// Argo CD hook annotation is `PreDelete`, or one of Helm's is `pre-delete`.
pub(crate) fn is_pre_delete_hook(obj: &Value) -> bool {
    has_annotation_option(obj, HOOK_ANNOTATION, "PreDelete")
        || has_annotation_option(obj, HELM_HOOK_ANNOTATION, "pre-delete")
}

/// Argo CD `controller/hook.go`, `isPostDeleteHook`: `PostDelete`, or Helm's `post-delete`.
pub(crate) fn is_post_delete_hook(obj: &Value) -> bool {
    has_annotation_option(obj, HOOK_ANNOTATION, "PostDelete")
        || has_annotation_option(obj, HELM_HOOK_ANNOTATION, "post-delete")
}

/// Argo CD `controller/hook.go`, `isHook`: what the comparison marks as a hook, a sync hook
/// ([`is_hook`]) or an application-deletion hook.
pub(crate) fn is_app_hook(obj: &Value) -> bool {
    is_hook(obj) || is_pre_delete_hook(obj) || is_post_delete_hook(obj)
}

/// Whether an object is a PreDelete/PostDelete hook only, which the controller keeps out of a
/// sync (Argo CD `controller/state.go`, `partitionTargetObjsForSync`, with
/// `hasGitOpsEngineSyncPhaseHook`): a deletion hook without a sync-phase type.
pub(crate) fn is_deletion_hook_only(obj: &Value) -> bool {
    (is_pre_delete_hook(obj) || is_post_delete_hook(obj))
        && !hook_types(obj).iter().any(|t| *t != HookType::Skip)
}

/// The wave of an object (`syncwaves.Wave`): `argocd.argoproj.io/sync-wave` if it is an
/// integer, else `helm.sh/hook-weight` if it is one (for any object, not only hooks), else 0.
pub(crate) fn wave(obj: &Value) -> i64 {
    wave_of(annotations(obj))
}

/// [`wave`] of an object with these annotations.
pub(crate) fn wave_of(annotations: Option<&Map<String, Value>>) -> i64 {
    let get = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str);
    get(SYNC_WAVE_ANNOTATION)
        .and_then(go_atoi)
        .or_else(|| get(HELM_WEIGHT_ANNOTATION).and_then(go_atoi))
        .unwrap_or(0)
}

/// Whether `metadata.finalizers` holds [`HOOK_FINALIZER`] (`hook.HasHookFinalizer`).
pub(crate) fn has_hook_finalizer(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(HOOK_FINALIZER)))
}

/// Adds [`HOOK_FINALIZER`] to `metadata.finalizers` (a list that is not an array becomes
/// one); an object whose `metadata` is not a map is left alone.
pub(crate) fn add_hook_finalizer(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    let list = meta.entry("finalizers").or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Some(items) = list.as_array_mut()
        && !items.iter().any(|f| f.as_str() == Some(HOOK_FINALIZER))
    {
        items.push(Value::String(HOOK_FINALIZER.to_string()));
    }
}

/// Takes [`HOOK_FINALIZER`] off `metadata.finalizers`.
pub(crate) fn drop_hook_finalizer(obj: &mut Value) {
    if let Some(f) = obj.pointer_mut("/metadata/finalizers").and_then(Value::as_array_mut) {
        f.retain(|x| x.as_str() != Some(HOOK_FINALIZER));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_hook_examples() {
        use super::is_hook;
        let hook = |k: &str, v: &str| serde_json::json!({"metadata": {"annotations": {k: v}}});
        assert!(is_hook(&hook("argocd.argoproj.io/hook", "Garbage")));
        assert!(!is_hook(&hook("argocd.argoproj.io/hook", "Skip")));
        assert!(!is_hook(&hook("helm.sh/hook", "crd-install")));
        assert!(is_hook(&hook("helm.sh/hook", "anything")));
    }

    proptest::proptest! {
        /// Without a hook annotation an object is no hook of any kind, whatever else its
        /// annotations hold; with one, the answers are the functions' own.
        #[test]
        fn without_a_hook_annotation_no_hook_function_holds(
            argo in proptest::option::of(proptest::collection::vec(proptest::sample::select(
                vec!["PreSync", "Skip", "PreDelete", "PostDelete", "Sync", "x", " Skip", ""]),
                0..3)),
            helm in proptest::option::of(proptest::sample::select(
                vec!["pre-delete", "post-delete", "crd-install", "pre-install", ""])),
            other in proptest::sample::select(vec![
                "argocd.argoproj.io/sync-wave", "argocd.argoproj.io/hook-delete-policy",
                "helm.sh/hook-weight", "helm.sh/hook-delete-policy"]),
            as_number in proptest::bool::ANY,
        ) {
            use super::*;
            let mut a = serde_json::Map::new();
            if let Some(items) = argo {
                a.insert(HOOK_ANNOTATION.into(), items.join(",").into());
            }
            if let Some(h) = helm {
                let v = if as_number { serde_json::json!(1) } else { h.into() };
                a.insert(HELM_HOOK_ANNOTATION.into(), v);
            }
            a.insert(other.into(), "PreDelete,pre-delete,Skip".into());
            let obj = serde_json::json!({"metadata": {"annotations": a}});
            let any = is_hook(&obj) || is_app_hook(&obj) || is_ignored(&obj) || is_skip(&obj)
                || is_deletion_hook_only(&obj);
            proptest::prop_assert!(has_hook_annotation(&obj) || !any);
        }
    }

    #[test]
    fn wave_examples() {
        use super::wave;
        let obj = |a: serde_json::Value| serde_json::json!({"metadata": {"annotations": a}});
        assert_eq!(wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": "-2"}))), -2);
        assert_eq!(
            wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": "x",
                                                "helm.sh/hook-weight": "5"}))),
            5
        );
        assert_eq!(wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": " 1"}))), 0);
    }
}
