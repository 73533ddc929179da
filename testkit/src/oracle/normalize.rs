//! The `normalize` area: an app's desired objects as the controller prepares them before a
//! comparison, Argo CD's `NormalizeTargetObjects` (argo-cd/v3 `controller`, exported at 3.6.2;
//! `DeduplicateTargetObjects` before) against gitops-core's `diff_app`: the namespace given to
//! namespaced objects without one and taken from cluster-scoped ones, the tracking id set again
//! with it, repeated objects (same group, kind, namespace and name, after that) reduced to the
//! last with a `RepeatedResourceWarning` each, and `generateName` objects kept apart. Cases mix
//! namespaced and cluster-scoped kinds, with and without namespaces, repeats, and
//! `generateName` objects next to named ones.

use serde_json::{Value, json};

use gitops_core::diff::{AppDiffInput, diff_app};
use gitops_core::{config::Application, config::Settings, object::Scopes};

/// gitops-core's answer, in the oracle's shape: the prepared objects' identities and tracking
/// ids, sorted, and the `RepeatedResourceWarning` conditions, sorted.
pub fn ours(params: &Value) -> Result<Value, String> {
    let app = Application::from_value(&params["app"]).map_err(|e| e.to_string())?;
    let desired = params["desired"].as_array().cloned().unwrap_or_default();
    let settings = Settings::default();
    let scopes = Scopes::builtin();
    let input = AppDiffInput::new(&desired, &[], &app, &settings, &scopes).with_objects(true);
    let result = diff_app(&input).map_err(|e| e.to_string())?;
    let mut objects: Vec<Value> = result
        .resources
        .iter()
        .map(|r| {
            let o = &r.object;
            json!({"key": format!("{}/{}/{}/{}", o.group, o.kind, o.namespace, o.name),
                "trackingId": r.predicted_live["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"]})
        })
        .collect();
    objects.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
    let mut conditions: Vec<String> = result
        .conditions
        .iter()
        .filter(|c| c.type_ == "RepeatedResourceWarning")
        .map(|c| format!("{}: {}", c.type_, c.message))
        .collect();
    conditions.sort();
    Ok(json!({"objects": objects, "conditions": conditions}))
}

/// Argo CD's answer reduced to the same shape.
pub fn theirs(answer: &Value) -> Value {
    if answer.get("error").is_some() {
        return answer.clone();
    }
    let objects: Vec<Value> = answer["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let api = o["apiVersion"].as_str().unwrap_or("");
            let group = api.rsplit_once('/').map_or("", |(g, _)| g);
            let m = &o["metadata"];
            let s = |v: &Value| v.as_str().unwrap_or("").to_string();
            json!({"key": format!("{group}/{}/{}/{}", s(&o["kind"]), s(&m["namespace"]), s(&m["name"])),
                "trackingId": m["annotations"]["argocd.argoproj.io/tracking-id"]})
        })
        .collect();
    json!({"objects": objects, "conditions": answer["conditions"]})
}

/// What differs between gitops-core's answer and Argo CD's (the oracle's `normalize` answer):
/// (signature, field, ours, Argo CD's).
pub fn compare(params: &Value, answer: &Value) -> Vec<(String, String, Value, Value)> {
    let a = ours(params).unwrap_or_else(|e| json!({"error": e}));
    let b = theirs(answer);
    ["objects", "conditions", "error"]
        .into_iter()
        .filter(|f| a.get(*f) != b.get(*f))
        .map(|f| (format!("normalize:{f}"), format!("/{f}"), a[f].clone(), b[f].clone()))
        .collect()
}
