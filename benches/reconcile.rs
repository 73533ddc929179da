//! The prepared app (issue 30) against the full comparison, side by side in one run: a
//! 10,000-resource application with 10 live objects changed by watch events.
//!
//! - `full_diff_app`: `diff_app` of the whole app (what a controller does on every refresh);
//! - `full_diff_app_and_health`: the same plus `health::AppHealth::of_diff`;
//! - `prepared_apply_10_changes`: `PreparedApp::apply` of 10 `Modified` events (each sample
//!   flips the same 10 objects between two states, so every call changes them), answering with
//!   the changed rows and the app's roll-ups.
//!
//! And a controller's steady state: 1,000 apps of 100 resources each, 1 % of the objects
//! changing per tick (one live object of each app), every app re-decided (sync status, health,
//! conditions) each tick, on one core:
//!
//! - `loop_1000_apps_prepared`: one `PreparedApp` per app, `apply` of its one event;
//! - `loop_1000_apps_full`: `diff_app` + `AppHealth::of_diff` of each app over its whole state (the
//!   apps share one live set; each app's changed object is put in place for its comparison).
//!
//! One sample is one tick; decisions per second are 1,000 over its time.
//!
//! Run with `cargo bench --bench reconcile`.
#![allow(missing_docs)]

use divan::{Bencher, black_box};
use gitops_core::diff::{self, AppDiffInput};
use gitops_core::health::AppHealth;
use gitops_core::health::HealthContext;
use gitops_core::reconcile::{LiveChange, PreparedApp};
use gitops_core::{config::Application, config::Settings, object::Scopes};
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
        black_box(AppHealth::of_diff(&d, &b.desired, &b.live, &ctx))
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

const APPS: usize = 1_000;
const PER_APP: usize = 100;

/// The 1,000 apps: the same desired set, Application and starting live state (one copy,
/// shared: 1,000 copies of the live state would hold about 3 GB).
struct Fleet {
    desired: Vec<Value>,
    live: Vec<Value>,
    app: Application,
}

fn fleet() -> Fleet {
    let w = support::workload_of(PER_APP);
    let mut doc = support::app_document();
    doc["metadata"]["name"] = json!("bench");
    let app = Application::from_value(&doc).expect("app");
    Fleet { live: w.live, desired: w.desired, app }
}

/// The live object app `a` sees change at tick `t`: its index, and the object as the watch
/// event carries it (a label set to the tick).
fn touched(live: &[Value], a: usize, t: usize) -> (usize, Value) {
    let i = (a * 7 + t) % live.len();
    let mut obj = live[i].clone();
    obj["metadata"]["labels"]["bench/tick"] = json!(t.to_string());
    (i, obj)
}

/// Resident memory of this process in bytes (Linux `/proc/self/statm`), 0 elsewhere.
#[allow(clippy::disallowed_methods)] // the benchmark reads its own resident size
fn resident() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// One tick: every app gets the event of its one changed object and answers its sync
/// status, health and conditions. Before the first sample, prints the resident memory the
/// 1,000 prepared apps added (what `PreparedApp`'s documentation quotes per resource).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn loop_1000_apps_prepared(bencher: Bencher) {
    let f = fleet();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let before = resident();
    let mut apps: Vec<PreparedApp> = (0..APPS)
        .map(|_| {
            let input = AppDiffInput::new(&f.desired, &f.live, &f.app, &settings, &scopes);
            PreparedApp::new(&input, &ctx)
        })
        .collect();
    let added = resident().saturating_sub(before);
    let resources = apps.iter().map(|p| p.diff().resources.len()).sum::<usize>();
    eprintln!(
        "{APPS} prepared apps of {PER_APP} resources ({resources} resources): {} MB resident \
         added, {} bytes per resource",
        added >> 20,
        added / resources.max(1)
    );
    let mut t = 0;
    bencher.bench_local(|| {
        t += 1;
        for (a, prepared) in apps.iter_mut().enumerate() {
            let (_, obj) = touched(&f.live, a, t);
            black_box(prepared.apply(&[LiveChange::Modified(obj)], &ctx));
        }
    });
}

/// The same tick by full comparisons: each app's live state (the shared one with the app's
/// changed object in place) compared whole with `diff_app`, and `AppHealth::of_diff` over it.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn loop_1000_apps_full(bencher: Bencher) {
    let mut f = fleet();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let mut t = 0;
    bencher.bench_local(|| {
        t += 1;
        for a in 0..APPS {
            let (i, obj) = touched(&f.live, a, t);
            let before = std::mem::replace(&mut f.live[i], obj);
            let input = AppDiffInput::new(&f.desired, &f.live, &f.app, &settings, &scopes);
            let d = diff::diff_app(&input).expect("diff");
            black_box(AppHealth::of_diff(&d, &f.desired, &f.live, &ctx));
            f.live[i] = before;
        }
    });
}
