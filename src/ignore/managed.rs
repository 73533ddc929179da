//! `managedFieldsManagers` (spec diff.md §7.5): fields that trusted managers own in the live
//! object, and that hold different values on the two sides, are removed from both the live and
//! the desired object.
//!
//! The field-set walk lives in the diff engine (`crate::diff::trusted_managers_normalize`,
//! public as [`crate::diff::normalize_managed_fields`]); this is the ignore engine's name for
//! it. It reads the `fieldsV1` sets of the live object's `metadata.managedFields` entries
//! whose `manager` is trusted (any operation, API version or subresource, no version
//! conversion) alongside the two objects: `f:<name>` selects a field, `k:<json>` the list item
//! whose key fields equal the key, `v:<value>` a set item, `i:<n>` the item at an index. A
//! path owned as a leaf is removed from both sides when both have it and the values differ;
//! an owned path with children is descended into.

use serde_json::Value;

/// Removes the fields owned by `managers` that differ between `live` and `config`. Returns
/// whether a trusted manager entry was found.
pub(crate) fn managed_fields_normalize(
    live: &mut Value,
    config: &mut Value,
    managers: &[String],
) -> bool {
    crate::diff::trusted_managers_normalize(live, config, managers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removes_owned_differing_fields_only() {
        let mut live = json!({
            "metadata": {"annotations": {"a": "2", "b": "x"}, "managedFields": [
                {"manager": "janitor", "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}, "f:b": {}}},
                 "f:spec": {"f:list": {"k:{\"name\":\"n\"}": {".": {}, "f:v": {}}}}}},
                {"manager": "other", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
            ]},
            "spec": {"replicas": 4, "list": [{"name": "n", "v": 1, "w": 1}]}
        });
        let mut config = json!({
            "metadata": {"annotations": {"a": "1", "b": "x"}},
            "spec": {"replicas": 1, "list": [{"name": "n", "v": 2, "w": 2}]}
        });
        assert!(managed_fields_normalize(&mut live, &mut config, &["janitor".to_string()]));
        assert_eq!(
            config,
            json!({"metadata": {"annotations": {"b": "x"}},
            "spec": {"replicas": 1, "list": [{"name": "n", "w": 2}]}})
        );
        assert_eq!(live["metadata"]["annotations"], json!({"b": "x"}));
        assert_eq!(live["spec"]["list"], json!([{"name": "n", "w": 1}]));
        assert!(!managed_fields_normalize(&mut live, &mut config, &["nobody".to_string()]));
    }

    fn fixture(text: &str) -> Value {
        serde_norway::from_str(text).expect("fixture parses")
    }

    fn managers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    const DESIRED: &str =
        include_str!("../../testdata/diff/ignore/managed/desired_deployment.yaml");
    const LIVE: &str = include_str!(
        "../../testdata/diff/ignore/managed/live_deployment_with_managed_replica.yaml"
    );

    /// M01: fields of trusted managers that differ are removed from both sides.
    #[test]
    fn m01_trusted_managers() {
        let (mut live, mut desired) = (fixture(LIVE), fixture(DESIRED));
        let trusted = managers(&["kube-controller-manager", "revision-history-manager"]);
        assert!(managed_fields_normalize(&mut live, &mut desired, &trusted));
        for obj in [&live, &desired] {
            assert_eq!(obj.pointer("/spec/replicas"), None);
            assert_eq!(obj.pointer("/spec/revisionHistoryLimit"), None);
        }
        assert_eq!(desired["spec"]["selector"], fixture(DESIRED)["spec"]["selector"]);
    }

    /// M02: a manager that owns nothing leaves both sides as they are.
    #[test]
    fn m02_untrusted_manager() {
        let (mut live, mut desired) = (fixture(LIVE), fixture(DESIRED));
        assert!(!managed_fields_normalize(
            &mut live,
            &mut desired,
            &managers(&["another-manager"])
        ));
        assert_eq!(
            (desired["spec"]["replicas"].clone(), live["spec"]["replicas"].clone()),
            (json!(3), json!(2))
        );
        assert_eq!(
            (
                desired["spec"]["revisionHistoryLimit"].clone(),
                live["spec"]["revisionHistoryLimit"].clone()
            ),
            (json!(1), json!(3))
        );
    }

    /// M06: a field inside a list item, found by its key (`k:{"name":...}`).
    #[test]
    fn m06_inside_a_list() {
        let mut live = fixture(include_str!(
            "../../testdata/diff/ignore/managed/live_validating_webhook.yaml"
        ));
        let mut desired = fixture(include_str!(
            "../../testdata/diff/ignore/managed/desired_validating_webhook.yaml"
        ));
        assert!(managed_fields_normalize(
            &mut live,
            &mut desired,
            &managers(&["external-secrets"])
        ));
        for obj in [&live, &desired] {
            assert_eq!(obj.pointer("/webhooks/0/clientConfig/caBundle"), None);
            assert!(obj.pointer("/webhooks/0/clientConfig/service").is_some());
        }
    }
}
