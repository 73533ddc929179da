//! Resource actions: the built-in actions against the same actions as Lua scripts on the Lua
//! engine, side by side in one run, per object (issue 29: a built-in must be at least 20 times
//! faster). The scripts are the sample folder's (`testdata/actions/resource_customizations/`),
//! which do what Argo CD's scripts do for these kinds; the objects are Argo CD 3.6.2's fixtures
//! (`testdata/actions/argo-cd-3.6/`). Both go through `Actions` (patch computed, Secret
//! masking checked).
//!
//! `cargo bench --bench actions`.
//!
//! `every_action_builtin` and `every_action_lua` measure every action of Argo CD 3.6.2 with a
//! test (the `actionTests` of each `testdata/actions/argo-cd-3.6/<group>/<Kind>/actions/
//! action_test.yaml`): per call, each test of the action once (its input and parameters),
//! built in and through Argo CD 3.6.2's own `action.lua` on the Lua engine (warm). The
//! `every_discovery_*` pair does the same for each kind's discovery on its `discoveryTests`
//! inputs. Argo CD's scripts are read at run time from a checkout of its
//! `resource_customizations/` (`ARGO_CD_RESOURCE_CUSTOMIZATIONS`, by default
//! `../shared/argo-cd-3.6/resource_customizations`, else the Go module of Argo CD 3.6.2); with
//! none, these benchmarks have no arguments. An action whose built-in and script answer
//! differently on a test is reported and left out. `python3 benches/ratios.py` reads the divan
//! output and gives each pair's ratio of medians, their minimum and median.
//!
//! Built-ins read their results without the round trip through the Lua encoding
//! (`actions::result::read_builtin`, the same bytes): measured medians and ratios, and the
//! earlier 2 to 7 times of the shared reading, are in `benches/README.md`.
#![allow(clippy::disallowed_methods)] // the benchmark reads its inputs from testdata/

use std::collections::BTreeMap;
use std::path::Path;

use gitops_core::actions::{ActionScripts, Actions};
use serde_json::Value;

use gitops_core_testkit::testdata as support;
use support::{files, testdata};

fn main() {
    divan::main();
}

fn object(rel: &str) -> serde_json::Value {
    gitops_core::object::parse_documents(&testdata(rel)).expect("yaml").remove(0)
}

fn builtin() -> Actions {
    Actions::new(ActionScripts::new())
}

fn lua() -> Actions {
    let scripts = files("actions/resource_customizations");
    Actions::new(ActionScripts::new().with_builtin_actions(false).with_directory(&scripts))
}

const DEPLOYMENT: &str = "actions/argo-cd-3.6/apps/Deployment/actions/testdata/deployment.yaml";
const CRONJOB: &str = "actions/argo-cd-3.6/batch/CronJob/actions/testdata/cronjob.yaml";
const NOW: i64 = 1_700_000_000;

fn discover(bencher: divan::Bencher, actions: &Actions, rel: &str) {
    let obj = object(rel);
    actions.discover(&obj, NOW).expect("warm");
    bencher.bench_local(|| divan::black_box(actions.discover(divan::black_box(&obj), NOW)));
}

fn run(bencher: divan::Bencher, actions: &Actions, rel: &str, name: &str) {
    let obj = object(rel);
    let params = BTreeMap::new();
    actions.run(&obj, name, &params, NOW).expect("warm");
    bencher
        .bench_local(|| divan::black_box(actions.run(divan::black_box(&obj), name, &params, NOW)));
}

/// A Deployment's discovery, built in.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn deployment_discover_builtin(bencher: divan::Bencher) {
    discover(bencher, &builtin(), DEPLOYMENT);
}

/// A Deployment's discovery, the script on the Lua engine.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn deployment_discover_lua(bencher: divan::Bencher) {
    discover(bencher, &lua(), DEPLOYMENT);
}

/// A Deployment's `restart`, built in.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn deployment_restart_builtin(bencher: divan::Bencher) {
    run(bencher, &builtin(), DEPLOYMENT, "restart");
}

/// A Deployment's `restart`, the script on the Lua engine.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn deployment_restart_lua(bencher: divan::Bencher) {
    run(bencher, &lua(), DEPLOYMENT, "restart");
}

/// A CronJob's `create-job`, built in.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn cronjob_create_job_builtin(bencher: divan::Bencher) {
    run(bencher, &builtin(), CRONJOB, "create-job");
}

/// A CronJob's `create-job`, the script on the Lua engine.
#[divan::bench(sample_count = 100, sample_size = 100)]
fn cronjob_create_job_lua(bencher: divan::Bencher) {
    run(bencher, &lua(), CRONJOB, "create-job");
}

/// Argo CD's action scripts (every `.lua` below an `actions/` folder) on the Lua engine, the
/// built-in actions off.
fn argo_cd_actions() -> Actions {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").filter_map(Result::ok) {
            let p = entry.path();
            let rel = p.strip_prefix(base).expect("below").to_string_lossy().replace('\\', "/");
            if p.is_dir() {
                walk(base, &p, out);
            } else if rel.ends_with(".lua") && rel.contains("/actions/") {
                out.insert(rel, std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    let base = gitops_core_testkit::testdata::argo_cd_scripts().expect("a checkout");
    let mut files = BTreeMap::new();
    walk(&base, &base, &mut files);
    Actions::new(ActionScripts::new().with_builtin_actions(false).with_directory(&files))
}

use support::ActionTest as Test;

/// Every kind folder with an `action_test.yaml` (`group/Kind`), and its tests read.
fn action_tests() -> Vec<(String, Value)> {
    let root = support::path("actions/argo-cd-3.6");
    let mut out = Vec::new();
    for group in std::fs::read_dir(&root).expect("argo-cd-3.6").filter_map(Result::ok) {
        if !group.path().is_dir() {
            continue;
        }
        for kind in std::fs::read_dir(group.path()).expect("group").filter_map(Result::ok) {
            let file = kind.path().join("actions/action_test.yaml");
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let doc = gitops_core::object::parse_documents(&text).expect("yaml").remove(0);
            let name = format!(
                "{}/{}",
                group.file_name().to_string_lossy(),
                kind.file_name().to_string_lossy()
            );
            out.push((name, doc));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn input(kind: &str, rel: &str) -> Value {
    object(&format!("actions/argo-cd-3.6/{kind}/actions/{rel}"))
}

/// The tests of one action (`group/Kind/action`).
fn tests_of(name: &str) -> Vec<Test> {
    let kind = name.rsplit_once('/').expect("group/Kind/action").0;
    let all = action_tests();
    let doc = &all.iter().find(|(k, _)| k == kind).expect("kind").1;
    support::action_tests_of(name, doc)
}

/// The discovery inputs of one kind.
fn discovery_inputs(kind: &str) -> Vec<Value> {
    let all = action_tests();
    let doc = &all.iter().find(|(k, _)| k == kind).expect("kind").1;
    doc["discoveryTests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| input(kind, t["inputPath"].as_str().expect("inputPath")))
        .collect()
}

/// Whether the built-in and the script give the same answer (both failing is the same answer:
/// the texts name different scripts).
fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    builtin: Result<T, gitops_core::actions::ActionError>,
    lua: Result<T, gitops_core::actions::ActionError>,
) -> bool {
    let same = match (&builtin, &lua) {
        (Ok(b), Ok(l)) => b == l,
        (Err(b), Err(l)) => b.reason() == l.reason(),
        _ => false,
    };
    if !same {
        eprintln!("every_action: {what}: built-in {builtin:?}, script {lua:?}");
    }
    same
}

/// Every action with a test whose built-in and script agree on each of its tests.
fn every_action() -> Vec<String> {
    if gitops_core_testkit::testdata::argo_cd_scripts().is_none() {
        eprintln!("every_action: no checkout of Argo CD's resource_customizations found");
        return Vec::new();
    }
    let (b, l) = (builtin(), argo_cd_actions());
    let mut names: Vec<String> = action_tests()
        .iter()
        .flat_map(|(kind, doc)| {
            let actions = doc["actionTests"].as_array().into_iter().flatten();
            actions
                .filter_map(|t| Some(format!("{kind}/{}", t["action"].as_str()?)))
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names.dedup();
    names.retain(|name| {
        tests_of(name).iter().all(|(obj, params)| {
            let action = name.rsplit('/').next().expect("action");
            let run = |a: &Actions| {
                a.run(obj, action, params, NOW).map(|mut r| {
                    r.script.clear();
                    r
                })
            };
            same(name, run(&b), run(&l))
        })
    });
    names
}

/// Every kind with discovery tests whose built-in and script agree on each input.
fn every_discovery() -> Vec<String> {
    if gitops_core_testkit::testdata::argo_cd_scripts().is_none() {
        return Vec::new();
    }
    let (b, l) = (builtin(), argo_cd_actions());
    action_tests()
        .into_iter()
        .map(|(kind, _)| kind)
        .filter(|kind| {
            discovery_inputs(kind)
                .iter()
                .all(|obj| same(kind, b.discover(obj, NOW), l.discover(obj, NOW)))
        })
        .filter(|kind| !discovery_inputs(kind).is_empty())
        .collect()
}

fn run_all(bencher: divan::Bencher, actions: &Actions, name: &str) {
    let action = name.rsplit('/').next().expect("action");
    let tests = tests_of(name);
    for (obj, params) in &tests {
        let _ = actions.run(obj, action, params, NOW);
    }
    bencher.bench_local(|| {
        for (obj, params) in &tests {
            let _ = divan::black_box(actions.run(divan::black_box(obj), action, params, NOW));
        }
    });
}

fn discover_all(bencher: divan::Bencher, actions: &Actions, kind: &str) {
    let inputs = discovery_inputs(kind);
    for obj in &inputs {
        let _ = actions.discover(obj, NOW);
    }
    bencher.bench_local(|| {
        for obj in &inputs {
            let _ = divan::black_box(actions.discover(divan::black_box(obj), NOW));
        }
    });
}

/// Every action: the built-in on each of its tests, per call.
#[divan::bench(args = every_action(), sample_count = 20, sample_size = 20)]
fn every_action_builtin(bencher: divan::Bencher, name: &str) {
    run_all(bencher, &builtin(), name);
}

/// Every action: Argo CD's script on each of its tests on a warm engine, per call.
#[divan::bench(args = every_action(), sample_count = 20, sample_size = 20)]
fn every_action_lua(bencher: divan::Bencher, name: &str) {
    run_all(bencher, &argo_cd_actions(), name);
}

/// Every kind's discovery, built in, on each of its discovery tests, per call.
#[divan::bench(args = every_discovery(), sample_count = 20, sample_size = 20)]
fn every_discovery_builtin(bencher: divan::Bencher, kind: &str) {
    discover_all(bencher, &builtin(), kind);
}

/// Every kind's discovery through Argo CD's script on a warm engine, per call.
#[divan::bench(args = every_discovery(), sample_count = 20, sample_size = 20)]
fn every_discovery_lua(bencher: divan::Bencher, kind: &str) {
    discover_all(bencher, &argo_cd_actions(), kind);
}
