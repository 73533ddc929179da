//! `managedFieldsManagers` (spec diff.md §7.5): fields that trusted managers own in the live
//! object, and that hold different values on the two sides, are removed from both the live and
//! the desired object.
//!
//! This walks the `fieldsV1` sets of the live object's `metadata.managedFields` entries whose
//! `manager` is trusted (any operation, API version or subresource) alongside the two objects:
//! `f:<name>` selects a field, `k:<json>` the list item whose fields equal the key, `i:<n>`
//! the item at an index (`v:<value>` set items hold equal values on both sides by definition,
//! so they never differ). A path owned as a leaf is removed from both sides when both have it
//! and the values differ; an owned path with children is descended into. Without a schema a
//! leaf is compared as a whole, as structured-merge-diff compares atomic values.

use serde_json::{Map, Value};

/// Removes the fields owned by `managers` that differ between `live` and `config`. Returns
/// whether a trusted manager entry was found.
pub(crate) fn managed_fields_normalize(
    live: &mut Value,
    config: &mut Value,
    managers: &[String],
) -> bool {
    if managers.is_empty() {
        return false;
    }
    let entries: Vec<Map<String, Value>> = live
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|e| {
                    e.get("manager")
                        .and_then(Value::as_str)
                        .is_some_and(|m| managers.iter().any(|t| t == m))
                })
                .filter_map(|e| e.get("fieldsV1").and_then(Value::as_object).cloned())
                .collect()
        })
        .unwrap_or_default();
    if entries.is_empty() {
        return false;
    }
    for fields in &entries {
        walk(fields, live, config, 0);
    }
    true
}

/// Deepest `fieldsV1` nesting walked.
const MAX_DEPTH: usize = 128;

fn is_leaf(fields: &Value) -> bool {
    fields.as_object().is_none_or(|m| m.keys().all(|k| k == "."))
}

fn walk(fields: &Map<String, Value>, live: &mut Value, config: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for (key, sub) in fields {
        if let Some(name) = key.strip_prefix("f:") {
            let (Some(l), Some(c)) = (live.as_object_mut(), config.as_object_mut()) else {
                continue;
            };
            let (Some(lv), Some(cv)) = (l.get(name), c.get(name)) else { continue };
            if is_leaf(sub) {
                if lv != cv {
                    l.remove(name);
                    c.remove(name);
                }
            } else if let (Some(lv), Some(cv), Some(sub)) =
                (l.get_mut(name), c.get_mut(name), sub.as_object())
            {
                walk(sub, lv, cv, depth + 1);
            }
        } else if let Some(k) = key.strip_prefix("k:") {
            let Ok(Value::Object(item_key)) = serde_json::from_str::<Value>(k) else { continue };
            let find = |v: &Value| {
                v.as_array().and_then(|a| {
                    a.iter()
                        .position(|item| item_key.iter().all(|(f, want)| item.get(f) == Some(want)))
                })
            };
            let (Some(li), Some(ci)) = (find(live), find(config)) else { continue };
            list_item(sub, live, config, li, ci, depth);
        } else if let Some(i) = key.strip_prefix("i:") {
            let Ok(i) = i.parse::<usize>() else { continue };
            let len = |v: &Value| v.as_array().map_or(0, Vec::len);
            if i < len(live) && i < len(config) {
                list_item(sub, live, config, i, i, depth);
            }
        }
    }
}

fn list_item(
    sub: &Value,
    live: &mut Value,
    config: &mut Value,
    li: usize,
    ci: usize,
    depth: usize,
) {
    let (Some(la), Some(ca)) = (live.as_array_mut(), config.as_array_mut()) else { return };
    if is_leaf(sub) {
        if la[li] != ca[ci] {
            la.remove(li);
            ca.remove(ci);
        }
    } else if let Some(sub) = sub.as_object() {
        walk(sub, &mut la[li], &mut ca[ci], depth + 1);
    }
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
