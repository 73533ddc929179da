//! Normalisation before comparing (Argo CD 3.6.2 util/argo/resource_tracking.go
//! `resourceTracking.Normalize`; gitops-engine pkg/diff/diff.go `Normalize`, `NormalizeSecret`):
//! resource tracking, creation timestamps, Secrets (`stringData` folded into `data`), aggregated
//! roles, Endpoints ordering.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::DiffOptions;
use super::remarshal::remarshal_in_place;
use crate::config::{LAST_APPLIED_ANNOTATION, Settings, TrackingMethod};
use crate::json::{base64_decode, base64_encode};
use crate::vocabulary::TRACKING_ID_ANNOTATION;

/// `remarshal` then `Normalize`, in place on the working copy of one side (an owned object
/// is that copy; a borrowed one is copied once here).
pub(crate) fn prepare(obj: Cow<'_, Value>, opts: &DiffOptions<'_>, skip_full: bool) -> Value {
    let mut v = obj.into_owned();
    remarshal_in_place(&mut v);
    normalize(&mut v, opts, skip_full);
    v
}

/// gitops-engine's `Normalize`: creation timestamp, kind-specific rules, then the full
/// normaliser unless skipped.
pub(crate) fn normalize(obj: &mut Value, opts: &DiffOptions<'_>, skip_full: bool) {
    normalize_object(obj, opts.ignore_aggregated_roles);
    if !skip_full && let Some(n) = opts.normalizer {
        n.normalize(obj);
    }
}

/// gitops-engine's `Normalize` without the full normaliser: drops the top-level
/// `metadata.creationTimestamp` and applies the kind-specific rules.
pub(crate) fn normalize_object(obj: &mut Value, ignore_aggregated_roles: bool) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
    }
    let (group, kind) = group_kind(obj);
    match (group.as_str(), kind.as_str()) {
        ("", "Secret") => normalize_secret(obj),
        ("rbac.authorization.k8s.io", "ClusterRole" | "Role") => {
            normalize_role(obj, ignore_aggregated_roles);
        }
        ("", "Endpoints") => normalize_endpoints(obj),
        _ => {}
    }
}

fn group_kind(obj: &Value) -> (String, String) {
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (group, _) = crate::object::split_api_version(api);
    (group.to_string(), obj.get("kind").and_then(Value::as_str).unwrap_or("").to_string())
}

/// `NormalizeSecret` (gitops-engine pkg/diff/diff.go): `stringData` is base64-encoded into `data`,
/// then `data` is decoded and re-encoded canonically (null and empty values become `""`; `{}`
/// becomes null). A value that is not a string or not valid base64 leaves `data` as the first step
/// made it.
pub(crate) fn normalize_secret(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    if let Some(Value::Object(string_data)) = map.get("stringData").cloned() {
        let mut data = match map.get("data") {
            Some(Value::Object(d)) => d.clone(),
            _ => Map::new(),
        };
        for (k, v) in string_data {
            let encoded = match v {
                Value::String(s) => Value::String(base64_encode(s.as_bytes())),
                other => other,
            };
            data.insert(k, encoded);
        }
        map.insert("data".into(), Value::Object(data));
        map.remove("stringData");
    }
    let Some(Value::Object(data)) = map.get("data") else { return };
    let mut canonical = Map::new();
    for (k, v) in data {
        let bytes = match v {
            Value::Null => Vec::new(),
            Value::String(s) => match base64_decode(s) {
                Some(b) => b,
                None => return,
            },
            _ => return,
        };
        canonical.insert(k.clone(), Value::String(base64_encode(&bytes)));
    }
    let value = if canonical.is_empty() { Value::Null } else { Value::Object(canonical) };
    map.insert("data".into(), value);
}

fn normalize_role(obj: &mut Value, ignore_aggregated_roles: bool) {
    let Some(map) = obj.as_object_mut() else { return };
    if ignore_aggregated_roles && matches!(map.get("aggregationRule"), Some(Value::Object(_))) {
        map.insert("rules".into(), Value::Null);
    }
    if matches!(map.get("rules"), Some(Value::Array(a)) if a.is_empty()) {
        map.insert("rules".into(), Value::Null);
    }
}

/// Endpoints: the typed round trip keeps `apiVersion`, `kind`, `metadata` and `subsets`;
/// empty port protocols default to TCP; addresses sort by IP then target uid; ports and
/// subsets sort by their content (any content-based total order gives Argo CD's equality).
fn normalize_endpoints(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    map.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "subsets"));
    let Some(Value::Array(subsets)) = map.get_mut("subsets") else { return };
    for subset in subsets.iter_mut() {
        let Some(s) = subset.as_object_mut() else { continue };
        for key in ["addresses", "notReadyAddresses"] {
            if let Some(Value::Array(addrs)) = s.get_mut(key) {
                addrs.sort_by(|a, b| {
                    let ka = (str_of(a, "ip"), a.pointer("/targetRef/uid").and_then(Value::as_str));
                    let kb = (str_of(b, "ip"), b.pointer("/targetRef/uid").and_then(Value::as_str));
                    ka.cmp(&kb)
                });
            }
        }
        if let Some(Value::Array(ports)) = s.get_mut("ports") {
            for port in ports.iter_mut() {
                if let Some(p) = port.as_object_mut() {
                    let empty = match p.get("protocol") {
                        None | Some(Value::Null) => true,
                        Some(Value::String(s)) => s.is_empty(),
                        _ => false,
                    };
                    if empty {
                        p.insert("protocol".into(), Value::String("TCP".into()));
                    }
                }
            }
            ports.sort_by_cached_key(Value::to_string);
        }
    }
    subsets.sort_by_cached_key(Value::to_string);
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `removeNamespaceAnnotation` (gitops-engine pkg/diff/diff.go): drops `metadata.namespace`, and
/// `metadata.annotations` when it is null or an empty map.
pub(crate) fn remove_namespace_annotation(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    meta.remove("namespace");
    let drop = match meta.get("annotations") {
        Some(Value::Null) => true,
        Some(Value::Object(a)) => a.is_empty(),
        _ => false,
    };
    if drop {
        meta.remove("annotations");
    }
}

/// Resource-tracking normalisation (Argo CD 3.6.2 util/argo/resource_tracking.go
/// `resourceTracking.Normalize`), applied to the live copy before diffing.
pub(crate) fn normalize_tracking(target: &Value, live: &mut Value, settings: &Settings) {
    let Some(change) = tracking_change(target, live, settings) else { return };
    if let Some(id) = change.id {
        set_annotation(live, TRACKING_ID_ANNOTATION, id.to_string());
    }
    if change.drop_label
        && let Some(labels) = live
            .get_mut("metadata")
            .and_then(|m| m.get_mut("labels"))
            .and_then(Value::as_object_mut)
    {
        labels.remove(settings.instance_label_key.as_str());
    }
}

/// What [`normalize_tracking`] changes on live: the tracking id it copies from the target, and
/// whether it removes the instance label. `None` when it changes nothing, so that a caller
/// holding live borrowed copies it only when it must.
pub(crate) struct TrackingChange<'t> {
    id: Option<&'t str>,
    drop_label: bool,
}

/// The change [`normalize_tracking`] makes to `live`, read without changing it; `None` when
/// it makes none.
pub(crate) fn tracking_change<'t>(
    target: &'t Value,
    live: &Value,
    settings: &Settings,
) -> Option<TrackingChange<'t>> {
    if settings.tracking_method == TrackingMethod::Label {
        return None;
    }
    let label_key = settings.instance_label_key.as_str();
    crate::object::label(live, label_key)?;
    if live.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
        return None;
    }
    let live_has_id = crate::object::annotation(live, TRACKING_ID_ANNOTATION).is_some();
    let id =
        if live_has_id { None } else { crate::object::annotation(target, TRACKING_ID_ANNOTATION) };
    // Live has the label (checked above): it goes when the target does not have it.
    let drop_label = crate::object::label(target, label_key).is_none();
    (id.is_some() || drop_label).then_some(TrackingChange { id, drop_label })
}

/// Sets an annotation, creating `metadata.annotations` when needed.
pub(crate) fn set_annotation(obj: &mut Value, key: &str, value: String) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    let ann = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
    if !ann.is_object() {
        *ann = Value::Object(Map::new());
    }
    if let Some(a) = ann.as_object_mut() {
        a.insert(key.to_string(), Value::String(value));
    }
}

/// The parsed last-applied configuration of an object: `None` when absent, `Some(Err)` when
/// it does not parse as a JSON object.
pub(crate) fn last_applied(obj: &Value) -> Option<Result<Value, ()>> {
    let text = obj.get("metadata")?.get("annotations")?.get(LAST_APPLIED_ANNOTATION)?;
    let Value::String(text) = text else { return Some(Err(())) };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Some(Ok(v)),
        _ => Some(Err(())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_string_data_folds_into_data() {
        let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "stringData": {"foo": "bar", "n": 5}, "data": {"baz": "cXV4"}});
        normalize_object(&mut s, false);
        // A number in stringData keeps the typed decode from running: data stays as folded.
        assert_eq!(s["data"], json!({"baz": "cXV4", "foo": "YmFy", "n": 5}));
        assert!(s.get("stringData").is_none());

        let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"a": null, "b": "", "c": "YmF\nyCg=="}});
        normalize_object(&mut s, false);
        assert_eq!(s["data"], json!({"a": "", "b": "", "c": "YmFyCg=="}));

        let mut s =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}});
        normalize_object(&mut s, false);
        assert_eq!(s["data"], Value::Null);
    }

    #[test]
    fn roles_and_timestamps() {
        let mut r = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r", "creationTimestamp": null}, "rules": []});
        normalize_object(&mut r, false);
        assert_eq!(
            r,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}, "rules": null})
        );
        let mut r = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}, "aggregationRule": {}, "rules": [{"verbs": ["get"]}]});
        normalize_object(&mut r, true);
        assert_eq!(r["rules"], Value::Null);
    }

    #[test]
    fn namespace_and_empty_annotations_are_dropped() {
        let mut o = json!({"metadata": {"namespace": "a", "annotations": {}}});
        remove_namespace_annotation(&mut o);
        assert_eq!(o, json!({"metadata": {}}));
        let mut o = json!({"metadata": {"namespace": "a", "annotations": "wrong value"}});
        remove_namespace_annotation(&mut o);
        assert_eq!(o, json!({"metadata": {"annotations": "wrong value"}}));
    }
}
