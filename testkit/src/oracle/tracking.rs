//! The `tracking` area: an app's resource tracking, generated over every method (`annotation`,
//! `label`, `annotation+label`, the default `""`), with and without `installationID`, apps in
//! the controller's namespace and in any other (`<namespace>_<name>`), long names (the
//! 63-character label cut), two instance label keys, namespaced and cluster-scoped kinds, and
//! live objects whose tracking names the app, another app, another object, another
//! installation, nothing valid, or that have an owner (cases: `tracking_cases.rs`). Argo CD's side is argo-cd/v3 `util/argo`
//! resource tracking and the controller's `NormalizeTargetObjects` (the oracle's `tracking`
//! method); gitops-core's is its public API: `Application::instance_name`, `Settings::tracked_app`,
//! `ownership::ManagedLive::new`, and `diff_app` for the desired object's labels and annotations and whether
//! a live object is self-referenced (a status for a paired object, `requiresPruning` for a
//! live-only one).

use serde_json::{Value, json};

use gitops_core::diff::{AppDiffInput, diff_app};
use gitops_core::ownership::ManagedLive;
use gitops_core::{config::Application, config::Settings, object::Scopes};

/// gitops-core's answer, in the oracle's shape.
pub fn ours(params: &Value) -> Result<Value, String> {
    let mut data = serde_json::Map::new();
    let method = params["method"].as_str().unwrap_or("");
    if !method.is_empty() {
        data.insert("application.resourceTrackingMethod".into(), json!(method));
    }
    let installation = params["installationID"].as_str().unwrap_or("");
    if !installation.is_empty() {
        data.insert("installationID".into(), json!(installation));
    }
    data.insert("application.instanceLabelKey".into(), params["labelKey"].clone());
    let cm = json!({"metadata": {"name": "argocd-cm", "namespace": params["controllerNamespace"]},
        "data": data});
    let settings = Settings::from_config_map(&cm).map_err(|e| e.to_string())?;
    let app = Application::from_value(&params["app"]).map_err(|e| e.to_string())?;
    let instance = app.instance_name(&settings);
    let scopes = Scopes::builtin();
    let desired: Vec<Value> =
        params["desired"].is_object().then(|| params["desired"].clone()).into_iter().collect();
    let live: Vec<Value> =
        params["live"].is_object().then(|| params["live"].clone()).into_iter().collect();
    let mut out = json!({"instanceName": instance});
    let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
    let result = diff_app(&input).map_err(|e| e.to_string())?;
    if let Some(d) = desired.first() {
        // The desired object as the comparison prepared it: alone, its predicted live copy.
        let alone = AppDiffInput::new(&desired, &[], &app, &settings, &scopes).with_objects(true);
        let r = diff_app(&alone).map_err(|e| e.to_string())?;
        let kind = d["kind"].as_str().unwrap_or("");
        let p = r.resources.iter().find(|r| r.object.kind == kind).map(|r| &r.predicted_live);
        let p = p.unwrap_or(&Value::Null);
        out["desired"] = json!({"namespace": p["metadata"]["namespace"].as_str().unwrap_or(""),
            "labels": p["metadata"]["labels"], "annotations": p["metadata"]["annotations"]});
    }
    if let Some(l) = live.first() {
        let sorted = ManagedLive::new(&desired, &live, &app, &settings, &scopes);
        let managed = !sorted.managed.is_empty();
        let name = l["metadata"]["name"].as_str().unwrap_or("");
        let kind = l["kind"].as_str().unwrap_or("");
        let r = result.resources.iter().find(|r| r.object.kind == kind && r.object.name == name);
        let paired =
            desired.first().is_some_and(|d| d["metadata"]["name"] == l["metadata"]["name"]);
        // A paired object has a status unless it is not self-referenced; a live-only one is
        // pruned only when it is.
        let self_ref = r.map(|r| if paired { r.status.is_some() } else { r.requires_pruning });
        out["live"] = json!({"appName": settings.tracked_app(l).unwrap_or(""),
            "managed": managed, "selfReferenced": self_ref});
    }
    Ok(out)
}

/// The compared fields of both answers: signature → (field, ours, Argo CD's).
pub fn compare(a: &Value, b: &Value) -> Vec<(String, String, Value, Value)> {
    let mut out = vec![];
    let mut check = |sig: &str, field: &str, x: &Value, y: &Value| {
        let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(|o| o.is_empty());
        if x != y && !(empty(x) && empty(y)) {
            out.push((format!("tracking:{sig}"), field.to_string(), x.clone(), y.clone()));
        }
    };
    check("instance-name", "/instanceName", &a["instanceName"], &b["instanceName"]);
    if b["desired"]["error"].is_string() {
        check("desired-error", "/desired", &a["desired"], &b["desired"]);
    } else {
        for f in ["namespace", "labels", "annotations"] {
            check(
                &format!("desired-{f}"),
                &format!("/desired/{f}"),
                &a["desired"][f],
                &b["desired"][f],
            );
        }
    }
    check("app-name", "/live/appName", &a["live"]["appName"], &b["live"]["appName"]);
    check("managed", "/live/managed", &a["live"]["managed"], &b["live"]["managed"]);
    if b["live"]["managed"] == true && a["live"]["managed"] == true {
        check(
            "self-referenced",
            "/live/selfReferenced",
            &a["live"]["selfReferenced"],
            &b["live"]["selfReferenced"],
        );
    }
    out
}
