//! The prepared app (issue 30) against the full comparison, side by side in one run: a
//! 10,000-resource application with 10 live objects changed by watch events.
//!
//! - `full_diff_app`: `diff_app` of the whole app (what a controller does on every refresh);
//! - `full_diff_app_and_health`: the same plus `reconcile::app_health`;
//! - `prepared_apply_10_changes`: `PreparedApp::apply` of 10 `Modified` events (each sample
//!   flips the same 10 objects between two states, so every call changes them), answering with
//!   the changed rows and the app's roll-ups.
//!
//! Run with `cargo bench --bench reconcile`.
#![allow(missing_docs)]

use divan::{Bencher, black_box};
use gitops_core::diff::{self, AppDiffInput};
use gitops_core::health::HealthContext;
use gitops_core::reconcile::{LiveChange, PreparedApp, app_health};
use gitops_core::{Application, Scopes, Settings};
use serde_json::{Value, json};

use gitops_core_testkit::workload as support;

const N: usize = 10_000;
const CHANGED: usize = 10;

fn main() {
    divan::main();
}

struct Bench {
    desired: Vec<Value>,
    live: Vec<Value>,
    app: Application,
}

fn setup() -> Bench {
    let w = support::workload_of(N);
    let mut doc = support::app_document();
    doc["metadata"]["name"] = json!("bench");
    let app = Application::from_value(&doc).expect("app");
    Bench { desired: w.desired, live: w.live, app }
}

/// The 10 changed live objects, in one of two states.
fn changes(live: &[Value], flip: bool) -> Vec<LiveChange> {
    (0..CHANGED)
        .map(|i| {
            let mut obj = live[i * (N / CHANGED) + 1].clone();
            let v = if flip { "flipped" } else { "again" };
            obj["metadata"]["labels"]["bench/changed"] = json!(v);
            LiveChange::Modified(obj)
        })
        .collect()
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn full_diff_app(bencher: Bencher) {
    let b = setup();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let input = AppDiffInput::new(&b.desired, &b.live, &b.app, &settings, &scopes);
    bencher.bench(|| black_box(diff::diff_app(black_box(&input))));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn full_diff_app_and_health(bencher: Bencher) {
    let b = setup();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let input = AppDiffInput::new(&b.desired, &b.live, &b.app, &settings, &scopes);
    bencher.bench(|| {
        let d = diff::diff_app(black_box(&input)).expect("diff");
        black_box(app_health(&d, &b.desired, &b.live, &ctx))
    });
}

#[divan::bench(sample_count = 50, sample_size = 1)]
fn prepared_apply_10_changes(bencher: Bencher) {
    let b = setup();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let input = AppDiffInput::new(&b.desired, &b.live, &b.app, &settings, &scopes);
    let mut prepared = PreparedApp::new(&input, &ctx);
    let (a, c) = (changes(&b.live, true), changes(&b.live, false));
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        black_box(prepared.apply(if flip { &a } else { &c }, &ctx))
    });
}
