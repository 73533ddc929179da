//! Hook annotations (gitops-engine pkg/sync/hook/hook.go `Types`), delete policies
//! (pkg/sync/hook/delete_policy.go `DeletePolicies`) and the annotation CSV rules.
//!
//! Argo CD reads two families of annotations: its own `argocd.argoproj.io/hook*` and Helm's
//! `helm.sh/hook*`. The Argo CD hook annotation, when present, wins over Helm's.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Phase;
use crate::object::annotation;

/// `argocd.argoproj.io/hook`: the hook types of an object, comma-separated.
pub const HOOK_ANNOTATION: &str = "argocd.argoproj.io/hook";
/// `argocd.argoproj.io/hook-delete-policy`: when a hook is deleted.
pub const HOOK_DELETE_POLICY_ANNOTATION: &str = "argocd.argoproj.io/hook-delete-policy";
/// `argocd.argoproj.io/sync-wave`: the wave of an object, an integer.
pub const SYNC_WAVE_ANNOTATION: &str = "argocd.argoproj.io/sync-wave";
/// `helm.sh/hook`: Helm hook types.
pub const HELM_HOOK_ANNOTATION: &str = "helm.sh/hook";
/// `helm.sh/hook-delete-policy`: Helm delete policies.
pub const HELM_DELETE_POLICY_ANNOTATION: &str = "helm.sh/hook-delete-policy";
/// `helm.sh/hook-weight`: the Helm weight, used as a wave.
pub const HELM_WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
/// The finalizer every hook gets, so the host sees it finish before it is collected.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// A hook type as written in `argocd.argoproj.io/hook`. `Skip` is not a phase: an object whose
/// only type is `Skip` is neither applied nor pruned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HookType {
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
    /// Reads a type name; only the five names Argo CD accepts (`PreDelete` and `PostDelete`
    /// are application-deletion hooks, not sync hooks).
    pub fn parse(s: &str) -> Option<HookType> {
        Some(match s {
            "PreSync" => HookType::PreSync,
            "Sync" => HookType::Sync,
            "PostSync" => HookType::PostSync,
            "SyncFail" => HookType::SyncFail,
            "Skip" => HookType::Skip,
            _ => return None,
        })
    }

    /// The phase a hook of this type runs in, `None` for `Skip`.
    pub fn phase(self) -> Option<Phase> {
        match self {
            HookType::PreSync => Some(Phase::PreSync),
            HookType::Sync => Some(Phase::Sync),
            HookType::PostSync => Some(Phase::PostSync),
            HookType::SyncFail => Some(Phase::SyncFail),
            HookType::Skip => None,
        }
    }
}

/// When a hook is deleted.
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

/// Argo CD's `GetAnnotationCSVs`: split on `,`, trim each item, drop empty items and later
/// duplicates.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::hooks::annotation_csv;
/// let obj = serde_json::json!({"metadata": {"annotations": {"a": "bar, baz,bar,"}}});
/// assert_eq!(annotation_csv(&obj, "a"), ["bar", "baz"]);
/// assert!(annotation_csv(&obj, "missing").is_empty());
/// ```
pub fn annotation_csv<'a>(obj: &'a Value, key: &str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    if let Some(v) = annotation(obj, key) {
        for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !out.contains(&item) {
                out.push(item);
            }
        }
    }
    out
}

/// Whether the annotation CSV holds exactly `value` (`HasAnnotationOption`).
pub fn has_annotation_option(obj: &Value, key: &str, value: &str) -> bool {
    annotation_csv(obj, key).contains(&value)
}

/// The value of the first `opt=` item of the annotation CSV (`GetAnnotationOptionValue`).
///
/// # Examples
///
/// ```
/// use gitops_core::sync::hooks::annotation_option_value;
/// let obj = serde_json::json!({"metadata": {"annotations": {"a": "bar=baz1,bar=baz2, qux=1 "}}});
/// assert_eq!(annotation_option_value(&obj, "a", "bar"), Some("baz1"));
/// assert_eq!(annotation_option_value(&obj, "a", "qux"), Some("1"));
/// assert_eq!(annotation_option_value(&obj, "a", "b"), None);
/// ```
pub fn annotation_option_value<'a>(obj: &'a Value, key: &str, opt: &str) -> Option<&'a str> {
    annotation_csv(obj, key)
        .into_iter()
        .find_map(|item| item.strip_prefix(opt).and_then(|rest| rest.strip_prefix('=')))
}

/// Whether the object is a hook (`IsHook`): the Argo CD hook annotation is present and the
/// object is not a pure `Skip`, or (without it) the Helm hook annotation is present and is not
/// exactly `crd-install`.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::hooks::is_hook;
/// let hook = |k: &str, v: &str| serde_json::json!({"metadata": {"annotations": {k: v}}});
/// assert!(is_hook(&hook("argocd.argoproj.io/hook", "Garbage")));
/// assert!(!is_hook(&hook("argocd.argoproj.io/hook", "Skip")));
/// assert!(!is_hook(&hook("helm.sh/hook", "crd-install")));
/// assert!(is_hook(&hook("helm.sh/hook", "anything")));
/// ```
pub fn is_hook(obj: &Value) -> bool {
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
    pub fn of(obj: &Value) -> Self {
        HookFacts::with_annotations(obj, annotations(obj))
    }

    /// The facts of `obj`, whose annotations are `annotations`.
    pub fn with_annotations(obj: &Value, annotations: Option<&Map<String, Value>>) -> Self {
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

/// Whether the only Argo CD hook type is `Skip`.
pub fn is_skip(obj: &Value) -> bool {
    let types = argo_types(obj);
    types == [HookType::Skip]
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

/// The hook types of an object (`Types`): the valid Argo CD types; only when there are none,
/// the Helm types (`pre-install`/`pre-upgrade` → PreSync, `post-install`/`post-upgrade` →
/// PostSync; other Helm types add nothing).
pub fn hook_types(obj: &Value) -> Vec<HookType> {
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

/// Whether the engine drops the object (`Ignore`): a hook with no valid type, e.g. a
/// `PostDelete` hook or Helm's `test-success`.
pub fn is_ignored(obj: &Value) -> bool {
    is_hook(obj) && hook_types(obj).is_empty()
}

/// The phases an object runs in (`syncPhases`): `[Sync]` for a resource, one per distinct
/// hook type for a hook (in PreSync, Sync, PostSync, SyncFail order), none for `Skip`.
pub fn sync_phases(obj: &Value) -> Vec<Phase> {
    if is_skip(obj) {
        return Vec::new();
    }
    if !is_hook(obj) {
        return vec![Phase::Sync];
    }
    let mut phases: Vec<Phase> = hook_types(obj).into_iter().filter_map(HookType::phase).collect();
    phases.sort();
    phases.dedup();
    phases
}

/// The delete policies of a hook (`DeletePolicies`): the Argo CD ones, then the Helm ones;
/// `[BeforeHookCreation]` when there are none.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::hooks::{delete_policies, HookDeletePolicy};
/// let obj = serde_json::json!({"metadata": {"annotations": {
///     "argocd.argoproj.io/hook-delete-policy": "HookFailed,garbage",
///     "helm.sh/hook-delete-policy": "hook-succeeded"}}});
/// assert_eq!(delete_policies(&obj), [HookDeletePolicy::HookFailed, HookDeletePolicy::HookSucceeded]);
/// assert_eq!(delete_policies(&serde_json::json!({})), [HookDeletePolicy::BeforeHookCreation]);
/// ```
pub fn delete_policies(obj: &Value) -> Vec<HookDeletePolicy> {
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

/// Whether an object is a PreDelete/PostDelete hook only, which the controller keeps out of a sync
/// (Argo CD 3.6.2 controller/state.go `partitionTargetObjsForSync`): the Argo CD types include
/// `PreDelete`/`PostDelete` or the Helm types `pre-delete`/`post-delete`, and there is no
/// sync-phase type.
pub fn is_deletion_hook_only(obj: &Value) -> bool {
    let argo = annotation_csv(obj, HOOK_ANNOTATION);
    let helm: Vec<&str> = annotation(obj, HELM_HOOK_ANNOTATION)
        .map(|v| v.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let deletion = argo.iter().any(|t| *t == "PreDelete" || *t == "PostDelete")
        || helm.iter().any(|t| *t == "pre-delete" || *t == "post-delete");
    deletion && !hook_types(obj).iter().any(|t| *t != HookType::Skip)
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits, nothing else.
pub(crate) fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The wave of an object (`syncwaves.Wave`): `argocd.argoproj.io/sync-wave` if it is an
/// integer, else `helm.sh/hook-weight` if it is one (for any object, not only hooks), else 0.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::hooks::wave;
/// let obj = |a: serde_json::Value| serde_json::json!({"metadata": {"annotations": a}});
/// assert_eq!(wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": "-2"}))), -2);
/// assert_eq!(wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": "x",
///                                         "helm.sh/hook-weight": "5"}))), 5);
/// assert_eq!(wave(&obj(serde_json::json!({"argocd.argoproj.io/sync-wave": " 1"}))), 0);
/// ```
pub fn wave(obj: &Value) -> i64 {
    wave_of(annotations(obj))
}

/// The annotations of an object, if they are a map.
pub(crate) fn annotations(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object)
}

/// [`wave`] of an object with these annotations.
pub(crate) fn wave_of(annotations: Option<&Map<String, Value>>) -> i64 {
    let get = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str);
    get(SYNC_WAVE_ANNOTATION)
        .and_then(go_atoi)
        .or_else(|| get(HELM_WEIGHT_ANNOTATION).and_then(go_atoi))
        .unwrap_or(0)
}
