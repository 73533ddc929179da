//! Argo CD's annotation names and the one reading of its comma-separated annotations.
//!
//! The names are gitops-engine's `pkg/sync/common/types.go` constants (v3.6.2) and Argo CD's
//! `common/common.go`; the CSV rules are gitops-engine `pkg/sync/resource/annotations.go`
//! (`GetAnnotationCSVs`, `HasAnnotationOption`, `GetAnnotationOptionValue`).

use serde_json::{Map, Value};

use crate::object::annotation;

/// `argocd.argoproj.io/hook`: the hook types of an object, comma-separated
/// (`common.AnnotationKeyHook`).
pub(super) const HOOK_ANNOTATION: &str = "argocd.argoproj.io/hook";
/// `argocd.argoproj.io/hook-delete-policy`: when a hook is deleted
/// (`common.AnnotationKeyHookDeletePolicy`).
pub(super) const HOOK_DELETE_POLICY_ANNOTATION: &str = "argocd.argoproj.io/hook-delete-policy";
/// `argocd.argoproj.io/sync-wave`: the wave of an object, an integer
/// (`common.AnnotationSyncWave`).
pub(super) const SYNC_WAVE_ANNOTATION: &str = "argocd.argoproj.io/sync-wave";
/// `argocd.argoproj.io/sync-options`: a resource's comma-separated sync options
/// (`common.AnnotationSyncOptions`).
pub(crate) const SYNC_OPTIONS_ANNOTATION: &str = "argocd.argoproj.io/sync-options";
/// `argocd.argoproj.io/compare-options`: comma-separated compare options of an Application
/// (`ServerSideDiff=true`, `IncludeMutationWebhook=true`) or a resource (`IgnoreExtraneous`).
pub const COMPARE_OPTIONS_ANNOTATION: &str = "argocd.argoproj.io/compare-options";
/// `argocd.argoproj.io/ignore-healthcheck`: keeps a resource out of its app's health when it
/// is `"true"`.
pub(crate) const IGNORE_HEALTHCHECK_ANNOTATION: &str = "argocd.argoproj.io/ignore-healthcheck";
/// `argocd.argoproj.io/tracking-id`: Argo CD's tracking annotation,
/// `<app>:<group>/<kind>:<namespace>/<name>` (`common.AnnotationKeyAppInstance`).
pub(crate) const TRACKING_ID_ANNOTATION: &str = "argocd.argoproj.io/tracking-id";
/// `app.kubernetes.io/instance`: the default app-instance label key
/// (`common.LabelKeyAppInstance`).
pub(crate) const DEFAULT_INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// `argocd.argoproj.io/installation-id`: the Argo CD installation an object was applied by,
/// when `argocd-cm` sets `installationID` (`common.AnnotationInstallationID`).
pub(crate) const INSTALLATION_ID_ANNOTATION: &str = "argocd.argoproj.io/installation-id";
/// `argocd.argoproj.io/ignore-resource-updates`: asks Argo CD to apply
/// `ignoreResourceUpdates` to an object no app tracks (`common.AnnotationIgnoreResourceUpdates`).
pub(crate) const IGNORE_RESOURCE_UPDATES_ANNOTATION: &str =
    "argocd.argoproj.io/ignore-resource-updates";
/// `argocd.argoproj.io/ignore-restart-policy`: makes a pod whose restart policy is not
/// `Always` count as long-running (ignored on hooks).
pub(crate) const IGNORE_RESTART_POLICY_ANNOTATION: &str =
    "argocd.argoproj.io/ignore-restart-policy";
/// `argocd.argoproj.io/skip-reconcile`: makes the controller leave an Application alone
/// (`common.AnnotationKeyAppSkipReconcile`).
pub(crate) const SKIP_RECONCILE_ANNOTATION: &str = "argocd.argoproj.io/skip-reconcile";
/// `argocd.argoproj.io/deletion-approved`: the Application annotation that approves
/// `Prune=confirm`/`Delete=confirm` deletions from its time on
/// (`common.AnnotationDeletionApproved`).
pub(crate) const DELETION_APPROVED_ANNOTATION: &str = "argocd.argoproj.io/deletion-approved";
/// `argocd.argoproj.io/client-side-apply-migration-manager`: the Application annotation
/// naming another manager to migrate (`common.AnnotationClientSideApplyMigrationManager`).
pub(crate) const CLIENT_SIDE_APPLY_MANAGER_ANNOTATION: &str =
    "argocd.argoproj.io/client-side-apply-migration-manager";
/// `helm.sh/hook`: Helm hook types.
pub(super) const HELM_HOOK_ANNOTATION: &str = "helm.sh/hook";
/// `helm.sh/hook-delete-policy`: Helm delete policies.
pub(super) const HELM_DELETE_POLICY_ANNOTATION: &str = "helm.sh/hook-delete-policy";
/// `helm.sh/hook-weight`: the Helm weight, used as a wave.
pub(super) const HELM_WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
/// `helm.sh/resource-policy`: `keep` keeps the object at an application's deletion.
pub(crate) const HELM_RESOURCE_POLICY_ANNOTATION: &str = "helm.sh/resource-policy";

/// The items of a comma-separated value as `GetAnnotationCSVs` reads them: split on `,`,
/// each trimmed, empty items and later duplicates dropped.
pub(crate) fn csv(value: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// `GetAnnotationCSVs`: the [`csv`] items of annotation `key`; none when it is not set.
pub(crate) fn annotation_csv<'a>(obj: &'a Value, key: &str) -> Vec<&'a str> {
    annotation(obj, key).map(csv).unwrap_or_default()
}

/// gitops-engine `pkg/sync/resource/annotations.go`, `HasAnnotationOption`: whether the
/// comma-separated items of annotation `key` (each trimmed) hold exactly `value`.
///
/// # Examples
///
/// ```
/// use gitops_core::vocabulary::{has_annotation_option, COMPARE_OPTIONS_ANNOTATION};
/// let obj = serde_json::json!({"metadata": {"annotations": {
///     "argocd.argoproj.io/compare-options": "ServerSideDiff=true, IgnoreExtraneous"}}});
/// assert!(has_annotation_option(&obj, COMPARE_OPTIONS_ANNOTATION, "IgnoreExtraneous"));
/// assert!(!has_annotation_option(&obj, COMPARE_OPTIONS_ANNOTATION, "ServerSideDiff"));
/// ```
pub fn has_annotation_option(obj: &Value, key: &str, value: &str) -> bool {
    annotation(obj, key).is_some_and(|v| csv(v).contains(&value))
}

/// `GetAnnotationOptionValue` over an annotation's [`csv`] items: the value of the first
/// `opt=` item.
pub(crate) fn first_option_value<'a>(items: &[&'a str], opt: &str) -> Option<&'a str> {
    items.iter().find_map(|item| option_value(item, opt))
}

/// The value of `item` when it reads `opt=<value>`.
pub(crate) fn option_value<'a>(item: &'a str, opt: &str) -> Option<&'a str> {
    item.strip_prefix(opt).and_then(|rest| rest.strip_prefix('='))
}

/// The annotations of an object, if they are a map.
pub(crate) fn annotations(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object)
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits, nothing else.
pub(crate) fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn csv_trims_drops_empty_items_and_later_duplicates() {
        let obj = json!({"metadata": {"annotations": {"a": "bar, baz,bar,"}}});
        assert_eq!(annotation_csv(&obj, "a"), ["bar", "baz"]);
        assert!(annotation_csv(&obj, "missing").is_empty());
        assert!(has_annotation_option(&obj, "a", "baz"));
        assert!(!has_annotation_option(&obj, "a", " baz"));
    }

    #[test]
    fn option_value_is_the_first_item_of_the_option() {
        let items = csv("bar=baz1,bar=baz2, qux=1 ");
        assert_eq!(first_option_value(&items, "bar"), Some("baz1"));
        assert_eq!(first_option_value(&items, "qux"), Some("1"));
        assert_eq!(first_option_value(&items, "b"), None);
        assert_eq!(option_value("PruneLast=true", "Prune"), None);
    }
}
