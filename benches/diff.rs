//! Diff benchmarks: one resource in each mode, and end to end a 1,000-resource application
//! next to the time to only parse and serialise the same JSON with serde_json.
//!
//! The application is generated deterministically from the testdata objects (the bookstore
//! demo and Argo CD's diff fixtures): each resource is a copy of a fixture pair under a new
//! name, one in ten with drift. Run with `cargo bench --bench diff`.
#![allow(missing_docs)]

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use gitops_core::diff::{self, AppDiffInput};
use gitops_core::{config::Settings, object::Scopes};
use serde_json::Value;

use gitops_core_testkit::workload as support;
use support::{RESOURCES, workload};

fn main() {
    divan::main();
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

/// One Deployment in each diff mode, on Argo CD's fixtures (testdata/diff/inputs/).
mod one_resource {
    use super::*;
    use gitops_core::diff::DiffOptions;

    fn yaml(text: &str) -> Value {
        gitops_core::object::parse_manifests(text).expect("fixture parses").remove(0)
    }
    fn json(text: &str) -> Value {
        serde_json::from_str(text).expect("fixture parses")
    }

    /// Three-way: the live Deployment carries last-applied.
    #[divan::bench]
    fn three_way(bencher: Bencher) {
        let desired = json(include_str!("../testdata/diff/inputs/deployment-config.json"));
        let live = json(include_str!("../testdata/diff/inputs/deployment-live.json"));
        let opts = DiffOptions::default();
        bencher.bench_local(|| black_box(diff::diff(Some(&desired), Some(&live), &opts)));
    }

    /// Baseline for `three_way`: serde_json parsing the same pair (desired and live) from
    /// their text and serialising both again.
    #[divan::bench]
    fn serde_json_parse_serialize(bencher: Bencher) {
        let desired = include_str!("../testdata/diff/inputs/deployment-config.json");
        let live = include_str!("../testdata/diff/inputs/deployment-live.json");
        bencher.bench_local(|| {
            let d: Value = serde_json::from_str(black_box(desired)).expect("json");
            let l: Value = serde_json::from_str(black_box(live)).expect("json");
            black_box((serde_json::to_string(&d), serde_json::to_string(&l)))
        });
    }

    /// Two-way: the same pair with last-applied removed.
    #[divan::bench]
    fn two_way(bencher: Bencher) {
        let desired = json(include_str!("../testdata/diff/inputs/deployment-config.json"));
        let mut live = json(include_str!("../testdata/diff/inputs/deployment-live.json"));
        if let Some(a) = live["metadata"]["annotations"].as_object_mut() {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
        let opts = DiffOptions::default();
        bencher.bench_local(|| black_box(diff::diff(Some(&desired), Some(&live), &opts)));
    }

    /// Structured-merge emulation from the live object's managedFields.
    #[divan::bench]
    fn structured_merge(bencher: Bencher) {
        let desired = yaml(include_str!("../testdata/diff/inputs/smd-deploy-config.yaml"));
        let live = yaml(include_str!("../testdata/diff/inputs/smd-deploy-live.yaml"));
        let opts = DiffOptions::default().with_structured_merge(true);
        bencher.bench_local(|| black_box(diff::diff(Some(&desired), Some(&live), &opts)));
    }

    /// Server-side diff against a dry-run result the host passed in.
    #[divan::bench]
    fn server_side(bencher: Bencher) {
        let desired = yaml(include_str!("../testdata/diff/inputs/ssd-deploy-nested-config.yaml"));
        let live = yaml(include_str!("../testdata/diff/inputs/ssd-deploy-nested-live.yaml"));
        let dry_run =
            json(include_str!("../testdata/diff/inputs/ssd-deploy-nested-predicted-live.json"));
        let opts = DiffOptions::default().with_server_side_diff(Some(&dry_run));
        bencher.bench_local(|| black_box(diff::diff(Some(&desired), Some(&live), &opts)));
    }
}

/// The whole application on a rayon pool of 1 thread (the serial comparison) and of 2
/// threads, in one run: `cargo bench --features parallel --bench diff -- threads`.
#[cfg(feature = "parallel")]
mod threads {
    use super::*;

    #[divan::bench(args = [1, 2])]
    fn app_three_way(bencher: Bencher, threads: usize) {
        let w = workload();
        let settings = Settings::default();
        let scopes = Scopes::builtin();
        let input = AppDiffInput::new(&w.desired, &w.live, &w.app, &settings, &scopes);
        let pool =
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool");
        bencher
            .counter(ItemsCount::new(RESOURCES))
            .bench(|| pool.install(|| black_box(diff::diff_app(black_box(&input)))));
    }
}
