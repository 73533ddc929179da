//! Lua health: a Rollout-style script (`testdata/health/customizations/example.com/Canary`)
//! on a Deployment-sized object, with the compiled script cached (warm), as Argo CD's own
//! measurement of its cached-compile path (about 195 µs per call).
//!
//! `cargo bench --bench lua` (10,000 calls per benchmark: 100 samples of 100).
//!
//! Medians on the project machine (2 shared cores, load average about 6 while measuring, so
//! runs vary; the fastest sample is steadier): `canary_health_warm` 13.4 µs (fastest 11.5 µs),
//! `trivial_script_warm` 12.0 µs, `trivial_script_tiny_object` 4.4 µs, `canary_health_cold`
//! 43.7 µs (fastest 32.7 µs). Converting the object is most of a warm call; the script itself
//! costs a few microseconds.
#![allow(clippy::disallowed_methods)] // the benchmark reads its inputs from testdata/

use gitops_core::script::LuaEngine;

fn main() {
    divan::main();
}

use gitops_core_testkit::testdata as support;
use support::testdata;

struct Input {
    script: String,
    obj: serde_json::Value,
}

fn input() -> Input {
    let script = testdata("health/customizations/example.com/Canary/health.lua");
    let text = testdata("health/customizations/example.com/Canary/testdata/healthy.yaml");
    let obj = gitops_core::object::parse_documents(&text).expect("yaml").remove(0);
    Input { script, obj }
}

/// One evaluation with a warm cache: the object is converted and the script run each call.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn canary_health_warm(bencher: divan::Bencher) {
    let input = input();
    let engine = LuaEngine::default();
    let now = 0; // unix seconds
    // Warm the engine's Lua state and the compiled-script cache.
    engine.eval_health("canary", &input.script, true, &input.obj, now).expect("runs");
    bencher.bench_local(|| {
        let h = engine
            .eval_health("canary", divan::black_box(&input.script), true, &input.obj, now)
            .expect("runs");
        divan::black_box(h)
    });
}

/// A trivial script on the same object: the fixed cost (environment, conversion, result).
#[divan::bench(sample_count = 100, sample_size = 100)]
fn trivial_script_warm(bencher: divan::Bencher) {
    let input = input();
    let engine = LuaEngine::default();
    let now = 0; // unix seconds
    let script = "return {status = 'Healthy'}";
    engine.eval_health("trivial", script, true, &input.obj, now).expect("runs");
    bencher.bench_local(|| {
        divan::black_box(
            engine.eval_health("trivial", script, true, &input.obj, now).expect("runs"),
        )
    });
}

/// A trivial script on a tiny object: the cost without the object conversion.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn trivial_script_tiny_object(bencher: divan::Bencher) {
    let engine = LuaEngine::default();
    let now = 0; // unix seconds
    let obj = serde_json::json!({"kind": "X"});
    let script = "return {status = 'Healthy'}";
    engine.eval_health("trivial", script, true, &obj, now).expect("runs");
    bencher.bench_local(|| {
        divan::black_box(engine.eval_health("trivial", script, true, &obj, now).expect("runs"))
    });
}

/// The Rollout-style script compiled on every call (a new text each time, so the cache
/// misses): the cost the cache saves.
#[divan::bench(sample_count = 20, sample_size = 50)]
fn canary_health_cold(bencher: divan::Bencher) {
    let input = input();
    let engine = LuaEngine::default();
    let now = 0; // unix seconds
    let mut n = 0u64;
    bencher
        .with_inputs(|| {
            n += 1;
            format!("{}\n-- {n}\n", input.script)
        })
        .bench_local_refs(|script| {
            divan::black_box(
                engine.eval_health("canary", script, true, &input.obj, now).expect("runs"),
            )
        });
}

/// 1,000 objects (the Canary object under 1,000 names) through the script of `argocd-cm`, as
/// a host assesses them with one `ScriptedHealth`: the engine's Lua state is built once and
/// reused, and the script compiled once (issue 26: the engine owns its states).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn health_1000_objects_one_engine(bencher: divan::Bencher) {
    let (scripts, objects) = thousand();
    bencher.bench_local(|| {
        let health = ScriptedHealth::new(scripts.clone(), LuaEngine::default());
        let ctx = HealthContext::new(0).with_scripts(&health);
        divan::black_box(objects.iter().filter_map(|o| assess(o, &ctx).expect("runs")).count())
    });
}

/// The same 1,000 objects with a new engine for each object: what reusing the state saves.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn health_1000_objects_engine_per_object(bencher: divan::Bencher) {
    let (scripts, objects) = thousand();
    bencher.bench_local(|| {
        let mut n = 0;
        for o in &objects {
            let health = ScriptedHealth::new(scripts.clone(), LuaEngine::default());
            let ctx = HealthContext::new(0).with_scripts(&health);
            n += usize::from(assess(o, &ctx).expect("runs").is_some());
        }
        divan::black_box(n)
    });
}

use gitops_core::health::{HealthContext, assess};
use gitops_core::health::{HealthScripts, ScriptedHealth};

fn thousand() -> (HealthScripts, Vec<serde_json::Value>) {
    let input = input();
    let cm = serde_json::json!({"data": {
        "resource.customizations.health.example.com_Canary": input.script}});
    let settings = gitops_core::config::Settings::from_config_map(&cm).expect("argocd-cm");
    let objects = (0..1_000)
        .map(|i| {
            let mut o = input.obj.clone();
            o["metadata"]["name"] = serde_json::json!(format!("canary-{i}"));
            o
        })
        .collect();
    (HealthScripts::from_settings(&settings), objects)
}
