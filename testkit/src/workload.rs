//! The 1,000-resource application the diff and parse benchmarks share.
//!
//! Generated deterministically from the testdata objects (the bookstore demo and Argo CD's diff
//! fixtures): each resource is a copy of a fixture pair under a new name, one in ten with drift.

use gitops_core::config::Application;
use serde_json::{Value, json};

pub const RESOURCES: usize = 1000;

/// (desired, live) fixture pairs.
fn fixtures() -> Vec<(Value, Value)> {
    let parse = |t: &str| gitops_core::object::parse_manifests(t).expect("fixture parses");
    let desired = parse(include_str!("../../testdata/demo/desired.yaml"));
    let live = parse(include_str!("../../testdata/demo/live.yaml"));
    let mut pairs = Vec::new();
    for d in &desired {
        let name = &d["metadata"]["name"];
        let kind = &d["kind"];
        if let Some(l) = live.iter().find(|l| &l["metadata"]["name"] == name && &l["kind"] == kind)
        {
            pairs.push((d.clone(), l.clone()));
        }
    }
    let json = |t: &str| serde_json::from_str::<Value>(t).expect("fixture parses");
    for (d, l) in [
        (
            include_str!("../../testdata/diff/inputs/deployment-config.json"),
            include_str!("../../testdata/diff/inputs/deployment-live.json"),
        ),
        (
            include_str!("../../testdata/diff/inputs/elasticsearch-config.json"),
            include_str!("../../testdata/diff/inputs/elasticsearch-live.json"),
        ),
    ] {
        pairs.push((json(d), json(l)));
    }
    pairs
}

fn rename(obj: &mut Value, name: &str, namespace: &str) {
    obj["metadata"]["name"] = json!(name);
    obj["metadata"]["namespace"] = json!(namespace);
    let la = "kubectl.kubernetes.io/last-applied-configuration";
    if let Some(text) = obj["metadata"]["annotations"][la].as_str()
        && let Ok(mut v) = serde_json::from_str::<Value>(text)
    {
        v["metadata"]["name"] = json!(name);
        v["metadata"]["namespace"] = json!(namespace);
        obj["metadata"]["annotations"][la] = json!(v.to_string());
    }
    if let Some(ann) = obj["metadata"]["annotations"].as_object_mut() {
        ann.remove("argocd.argoproj.io/tracking-id");
    }
}

pub struct Workload {
    pub desired: Vec<Value>,
    pub live: Vec<Value>,
    pub app: Application,
    pub ssa_app: Application,
    pub json: String,
}

pub fn workload() -> Workload {
    workload_of(RESOURCES)
}

/// The same application with `n` resources (the whole-process measurement uses 10,000 and
/// 100,000).
pub fn workload_of(n: usize) -> Workload {
    let pairs = fixtures();
    let (mut desired, mut live) = (Vec::new(), Vec::new());
    for i in 0..n {
        let (mut d, mut l) = pairs[i % pairs.len()].clone();
        let name = format!("res-{i:04}");
        rename(&mut d, &name, "bench");
        rename(&mut l, &name, "bench");
        if i % 10 == 0 {
            // Drift: a label Git declares was changed in the cluster.
            l["metadata"]["labels"]["app.kubernetes.io/version"] = json!("drifted");
            d["metadata"]["labels"]["app.kubernetes.io/version"] = json!("1.0");
        }
        desired.push(d);
        live.push(l);
    }
    let app_doc = app_document();
    let app = Application::from_value(&app_doc).expect("app");
    let mut ssa_doc = app_doc.clone();
    ssa_doc["spec"]["syncPolicy"] = json!({"syncOptions": ["ServerSideApply=true"]});
    let ssa_app = Application::from_value(&ssa_doc).expect("app");
    let json = serde_json::to_string(&json!({"desired": desired, "live": live})).expect("json");
    Workload { desired, live, app, ssa_app, json }
}

/// The Application of the workload: destination namespace `bench`, three ignore rules applied
/// by the pipeline to every matching resource.
pub fn app_document() -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": ""},
        "spec": {
            "destination": {"namespace": "bench"},
            "ignoreDifferences": [
                {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]},
                {"group": "", "kind": "Service", "jsonPointers": ["/spec/clusterIP"]},
                {"group": "apps", "kind": "StatefulSet",
                 "jqPathExpressions": [".spec.volumeClaimTemplates[]?.status"]}
            ]
        }
    })
}
