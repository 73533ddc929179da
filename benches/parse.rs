//! Manifest parsing: the 1,000-resource application of the diff benchmark (desired and live,
//! ~2,000 objects) as a YAML stream and as one JSON `List`, next to serde_json alone.
//! Run with `cargo bench --bench parse`.
#![allow(missing_docs)]

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use serde_json::{Value, json};

use gitops_core_testkit::workload as support;

fn main() {
    divan::main();
}

fn objects() -> Vec<Value> {
    let w = support::workload();
    w.desired.into_iter().chain(w.live).collect()
}

fn yaml_stream() -> String {
    let mut out = String::new();
    for obj in objects() {
        out.push_str("---\n");
        out.push_str(&serde_norway::to_string(&obj).expect("yaml"));
    }
    out
}

fn json_list() -> String {
    serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": objects()}))
        .expect("json")
}

fn bench_parse(bencher: Bencher, text: &str) {
    bencher
        .counter(BytesCount::new(text.len()))
        .bench(|| black_box(gitops_core::object::parse_manifests(black_box(text))));
}

/// `parse_manifests` on a YAML stream of ~2,000 documents.
#[divan::bench]
fn yaml_stream_2000_objects(bencher: Bencher) {
    bench_parse(bencher, &yaml_stream());
}

/// `parse_manifests` on the same objects as one JSON `List`.
#[divan::bench]
fn json_list_2000_objects(bencher: Bencher) {
    bench_parse(bencher, &json_list());
}

/// Baseline: serde_json alone on the same JSON text.
#[divan::bench]
fn serde_json_only(bencher: Bencher) {
    let text = json_list();
    bencher
        .counter(BytesCount::new(text.len()))
        .bench(|| black_box(serde_json::from_str::<Value>(black_box(&text))));
}
