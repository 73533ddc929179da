//! `ignoreDifferences` on a Deployment-sized object: JSON pointer rules, a jq rule, and
//! building the normalizer (which compiles the jq expressions), and reading a
//! `gitops-core.io/ignore-differences` annotation (`annotation_*`). Every normalization also
//! applies the default `*/*` `/status` rule. `clone_only` is the cost of the input copy each
//! iteration starts from (not included in the other timings).
//!
//! Run with `cargo bench --bench ignore`.

use divan::{Bencher, black_box};
use gitops_core::ignore::{AnnotationRule, IgnoreNormalizer};
use gitops_core::{config::IgnoreDifferences, config::Settings};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A live Deployment with managed fields, status and last-applied (about 6 KB of JSON).
fn deployment() -> Value {
    serde_norway::from_str(include_str!(
        "../testdata/sync/respect-ignore/objects/live-deployment.yaml"
    ))
    .expect("fixture parses")
}

fn rules(v: Value) -> Vec<IgnoreDifferences> {
    serde_json::from_value(v).expect("rules deserialize")
}

fn pointer_rules() -> Vec<IgnoreDifferences> {
    rules(json!([{
        "group": "apps", "kind": "Deployment",
        "jsonPointers": ["/spec/replicas", "/metadata/annotations/iksm-version",
                         "/spec/template/spec/containers/0/resources"]
    }]))
}

fn jq_rules() -> Vec<IgnoreDifferences> {
    rules(json!([{
        "group": "apps", "kind": "Deployment",
        "jqPathExpressions": [
            ".spec.template.spec.containers[] | select(.name == \"guestbook-ui\") | .env[] | select(.name | startswith(\"SOME_\"))"
        ]
    }]))
}

#[divan::bench]
fn pointers(bencher: Bencher) {
    let n = IgnoreNormalizer::new(&pointer_rules(), &Settings::default()).expect("compiles");
    let obj = deployment();
    bencher.with_inputs(|| obj.clone()).bench_local_refs(|o| n.normalize(black_box(o)));
}

#[divan::bench]
fn jq(bencher: Bencher) {
    let n = IgnoreNormalizer::new(&jq_rules(), &Settings::default()).expect("compiles");
    let obj = deployment();
    bencher.with_inputs(|| obj.clone()).bench_local_refs(|o| n.normalize(black_box(o)));
}

/// Only the default `*/*` `/status` rule of `resource.compareoptions`.
#[divan::bench]
fn default_status_rule(bencher: Bencher) {
    let n = IgnoreNormalizer::new(&[], &Settings::default()).expect("compiles");
    let obj = deployment();
    bencher.with_inputs(|| obj.clone()).bench_local_refs(|o| n.normalize(black_box(o)));
}

#[divan::bench]
fn clone_only(bencher: Bencher) {
    let obj = deployment();
    bencher.bench_local(|| black_box(&obj).clone());
}

#[divan::bench]
fn build_with_jq(bencher: Bencher) {
    let r = jq_rules();
    let s = Settings::default();
    bencher.bench_local(|| IgnoreNormalizer::new(black_box(&r), &s));
}

/// The deployment with a `gitops-core.io/ignore-differences` annotation.
fn annotated(value: &str) -> Value {
    let mut obj = deployment();
    obj["metadata"]["annotations"][AnnotationRule::ANNOTATION] = json!(value);
    obj
}

/// Reading and compiling an object's annotation, done once per resource per comparison:
/// three JSON pointers in the short form.
#[divan::bench]
fn annotation_pointers(bencher: Bencher) {
    let obj = annotated(
        "/spec/replicas\n/metadata/annotations/iksm-version\n/spec/template/spec/containers/0/resources",
    );
    bencher.bench_local(|| AnnotationRule::from_object(black_box(&obj)));
}

/// As `annotation_pointers`, with the jq expression of `jq` in the mapping form.
#[divan::bench]
fn annotation_jq(bencher: Bencher) {
    let obj = annotated(
        r#"{"jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"guestbook-ui\") | .env[] | select(.name | startswith(\"SOME_\"))"]}"#,
    );
    bencher.bench_local(|| AnnotationRule::from_object(black_box(&obj)));
}

/// The cost for an object without the annotation (every resource pays it).
#[divan::bench]
fn annotation_absent(bencher: Bencher) {
    let obj = deployment();
    bencher.bench_local(|| AnnotationRule::from_object(black_box(&obj)));
}

/// As `annotation_jq`, read through a normalizer that compiled the expression before (a host
/// that keeps the normalizer, as `serve` does, pays this from the second comparison on).
#[divan::bench]
fn annotation_jq_cached(bencher: Bencher) {
    let obj = annotated(
        r#"{"jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"guestbook-ui\") | .env[] | select(.name | startswith(\"SOME_\"))"]}"#,
    );
    let n = IgnoreNormalizer::new(&[], &Settings::default()).expect("compiles");
    n.annotation_rule(&obj).expect("valid");
    bencher.bench_local(|| n.annotation_rule(black_box(&obj)));
}
