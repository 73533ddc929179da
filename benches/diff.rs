//! End-to-end diff of a 1,000-resource application, against the time to only parse and
//! serialise the same JSON with serde_json.
//!
//! The application is generated deterministically from the testdata objects (the bookstore
//! demo and Argo CD's diff fixtures): each resource is a copy of a fixture pair under a new
//! name, one in ten with drift. Run with `cargo bench --bench diff`.
#![allow(missing_docs)]

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use gitops_core::diff::{self, AppDiffInput};
use gitops_core::{Application, Scopes, Settings};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const RESOURCES: usize = 1000;

/// (desired, live) fixture pairs.
fn fixtures() -> Vec<(Value, Value)> {
    let parse = |t: &str| gitops_core::parse_manifests(t).expect("fixture parses");
    let desired = parse(include_str!("../testdata/demo/desired.yaml"));
    let live = parse(include_str!("../testdata/demo/live.yaml"));
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
            include_str!("../testdata/diff/inputs/deployment-config.json"),
            include_str!("../testdata/diff/inputs/deployment-live.json"),
        ),
        (
            include_str!("../testdata/diff/inputs/elasticsearch-config.json"),
            include_str!("../testdata/diff/inputs/elasticsearch-live.json"),
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

struct Workload {
    desired: Vec<Value>,
    live: Vec<Value>,
    app: Application,
    ssa_app: Application,
    json: String,
}

fn workload() -> Workload {
    let pairs = fixtures();
    let (mut desired, mut live) = (Vec::new(), Vec::new());
    for i in 0..RESOURCES {
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
    // Three ignore rules. NOTE: they take effect once `crate::ignore` is wired into the
    // pipeline (see src/diff/ignore_seam.rs); until then they are carried but not applied.
    let app_doc = json!({
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
    });
    let app = Application::from_value(&app_doc).expect("app");
    let mut ssa_doc = app_doc.clone();
    ssa_doc["spec"]["syncPolicy"] = json!({"syncOptions": ["ServerSideApply=true"]});
    let ssa_app = Application::from_value(&ssa_doc).expect("app");
    let json = serde_json::to_string(&json!({"desired": desired, "live": live})).expect("json");
    Workload { desired, live, app, ssa_app, json }
}

fn bench_app(bencher: Bencher, ssa: bool, bytes: bool) {
    let w = workload();
    let settings = Settings::default();
    let scopes = Scopes::builtin();
    let app = if ssa { &w.ssa_app } else { &w.app };
    let input = AppDiffInput::new(&w.desired, &w.live, app, &settings, &scopes);
    let b = if bytes {
        bencher.counter(BytesCount::new(w.json.len()))
    } else {
        bencher.counter(ItemsCount::new(RESOURCES))
    };
    b.bench(|| black_box(diff::diff_app(black_box(&input))));
}

/// The whole application, Argo CD's default mode (three-way diff with last-applied).
#[divan::bench(args = [false, true], name = "app_three_way (arg: per MB)")]
fn app_three_way(bencher: Bencher, per_mb: bool) {
    bench_app(bencher, false, per_mb);
}

/// The whole application with `ServerSideApply=true` (structured-merge emulation).
#[divan::bench(args = [false, true], name = "app_structured_merge (arg: per MB)")]
fn app_structured_merge(bencher: Bencher, per_mb: bool) {
    bench_app(bencher, true, per_mb);
}

/// Baseline: parse and serialise the same JSON with serde_json only.
#[divan::bench(args = [false, true], name = "serde_json_parse_serialize (arg: per MB)")]
fn serde_only(bencher: Bencher, per_mb: bool) {
    let w = workload();
    let b = if per_mb {
        bencher.counter(BytesCount::new(w.json.len()))
    } else {
        bencher.counter(ItemsCount::new(RESOURCES))
    };
    b.bench(|| {
        let v: Value = serde_json::from_str(black_box(&w.json)).expect("json");
        black_box(serde_json::to_string(&v).expect("json"))
    });
}
