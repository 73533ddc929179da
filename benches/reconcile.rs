//! The prepared app (issue 30) against the full comparison, side by side in one run: a
//! 10,000-resource application with 10 live objects changed by watch events.
//!
//! - `full_diff_app`: `diff_app` of the whole app (what a controller does on every refresh);
//! - `full_diff_app_and_health`: the same plus `reconcile::app_health`;
//! - `prepared_apply_10_changes`: `PreparedApp::apply` of 10 `Modified` events (each sample
//!   flips the same 10 objects between two states, so every call changes them), answering with
//!   the changed rows and the app's roll-ups.
//!
//! And a controller's steady state: 1,000 apps of 100 resources each, 1 % of the objects
//! changing per tick (one live object of each app), every app re-decided (sync status, health,
//! conditions) each tick, on one core:
//!
//! - `loop_1000_apps_prepared`: one `PreparedApp` per app, `apply` of its one event;
//! - `loop_1000_apps_full`: `diff_app` + `app_health` of each app over its whole state.
//!
//! One sample is one tick; decisions per second are 1,000 over its time.
//!
//! Run with `cargo bench --bench reconcile`.
#![allow(missing_docs)]

use divan::{Bencher, black_box};
use gitops_core::diff::{self, AppDiffInput};
use gitops_core::health::HealthContext;
use gitops_core::reconcile::{LiveChange, PreparedApp, app_health};
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

const APPS: usize = 1_000;
const PER_APP: usize = 100;

/// The 1,000 apps' live states and the object of each that changes at tick `t`.
struct Fleet {
    desired: Vec<Value>,
    lives: Vec<Vec<Value>>,
    app: Application,
}

fn fleet() -> Fleet {
    let w = support::workload_of(PER_APP);
    let mut doc = support::app_document();
    doc["metadata"]["name"] = json!("bench");
    let app = Application::from_value(&doc).expect("app");
    Fleet { lives: vec![w.live.clone(); APPS], desired: w.desired, app }
}

/// Changes one live object of app `a` for tick `t`; its index.
fn touch(lives: &mut [Value], a: usize, t: usize) -> usize {
    let i = (a * 7 + t) % lives.len();
    lives[i]["metadata"]["labels"]["bench/tick"] = json!(t.to_string());
    i
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn loop_1000_apps_prepared(bencher: Bencher) {
    let mut f = fleet();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let mut apps: Vec<PreparedApp> = f
        .lives
        .iter()
        .map(|live| {
            PreparedApp::new(&AppDiffInput::new(&f.desired, live, &f.app, &settings, &scopes), &ctx)
        })
        .collect();
    let mut t = 0;
    bencher.bench_local(|| {
        t += 1;
        for (a, prepared) in apps.iter_mut().enumerate() {
            let i = touch(&mut f.lives[a], a, t);
            let change = [LiveChange::Modified(f.lives[a][i].clone())];
            black_box(prepared.apply(&change, &ctx));
        }
    });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn loop_1000_apps_full(bencher: Bencher) {
    let mut f = fleet();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let ctx = HealthContext::new(1_700_000_000);
    let mut t = 0;
    bencher.bench_local(|| {
        t += 1;
        for a in 0..APPS {
            touch(&mut f.lives[a], a, t);
            let live = &f.lives[a];
            let input = AppDiffInput::new(&f.desired, live, &f.app, &settings, &scopes);
            let d = diff::diff_app(&input).expect("diff");
            black_box(app_health(&d, &f.desired, live, &ctx));
        }
    });
}
