//! Health benchmarks: the built-in checks over Argo CD's gitops-engine health testdata
//! (`testdata/health/builtin/`), one object at a time and all of them in one go.
//!
//! Run with `cargo bench --bench health`. `assess_each` reports the median per object for each
//! file; `assess_all` assesses every file per iteration and reports items per second.
#![allow(clippy::disallowed_methods)] // benches read their inputs from testdata/

use std::path::PathBuf;
use std::sync::LazyLock;

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use gitops_core::health::{self, HealthContext, ResourceHealthInput};
use serde_json::Value;

fn main() {
    divan::main();
}

/// Every object of `testdata/health/builtin/`, by file name.
static OBJECTS: LazyLock<Vec<(String, Value)>> = LazyLock::new(|| {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/health/builtin");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/health/builtin")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml") && !p.ends_with("cases.yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read testdata");
            // Lenient YAML reading: one file has a duplicate key, as Argo CD's reader allows.
            let obj: Value = serde_norway::from_str(&text).expect("yaml");
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (name, obj)
        })
        .collect()
});

fn names() -> Vec<&'static str> {
    OBJECTS.iter().map(|(n, _)| n.as_str()).collect()
}

fn object(name: &str) -> &'static Value {
    &OBJECTS.iter().find(|(n, _)| n == name).expect("known file").1
}

/// One object's built-in health.
#[divan::bench(args = names())]
fn assess_each(bencher: Bencher, file: &str) {
    let obj = object(file);
    let ctx = HealthContext::new(0);
    bencher.bench(|| health::assess(black_box(obj), &ctx));
}

/// Every object's built-in health, per iteration.
#[divan::bench]
fn assess_all(bencher: Bencher) {
    let ctx = HealthContext::new(0);
    bencher.counter(ItemsCount::new(OBJECTS.len())).bench(|| {
        for (_, obj) in OBJECTS.iter() {
            black_box(health::assess(black_box(obj), &ctx).ok());
        }
    });
}

/// Every object's health and the app's health from them, per iteration.
#[divan::bench]
fn aggregate_all(bencher: Bencher) {
    let ctx = HealthContext::new(0);
    bencher.counter(ItemsCount::new(OBJECTS.len())).bench(|| {
        let inputs: Vec<ResourceHealthInput> = OBJECTS
            .iter()
            .filter_map(|(_, obj)| ResourceHealthInput::from_objects(None, Some(obj), &ctx))
            .collect();
        health::AppHealth::aggregate(black_box(&inputs))
    });
}

// LUA BENCHMARK: the Lua part of this benchmark (a health script evaluated 10,000 times
// against a Deployment-sized object with a warm cache, behind the `lua` feature) goes here,
// with the script engine passed in through `HealthContext::with_scripts`.

/// The condition-based fallback on a custom resource with five conditions, the answer in the
/// last one (`Ready`).
#[divan::bench]
fn condition_fallback(bencher: Bencher) {
    let obj = serde_json::json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "shop", "generation": 4},
        "status": {"observedGeneration": 4, "conditions": [
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
            {"type": "Stalled", "status": "False", "reason": "Fine"},
            {"type": "Reconciling", "status": "False", "reason": "Done"},
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
            {"type": "Ready", "status": "True", "reason": "Ready", "message": "all good"}]}});
    let ctx = HealthContext::new(0).with_condition_fallback(true);
    bencher.bench_local(|| health::assess(black_box(&obj), &ctx));
}
