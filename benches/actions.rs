//! Resource actions: the built-in actions against the same actions as Lua scripts on the Lua
//! engine, side by side in one run, per object (issue 29: a built-in must be at least 20 times
//! faster). The scripts are the sample folder's (`testdata/actions/resource_customizations/`),
//! which do what Argo CD's scripts do for these kinds; the objects are Argo CD 3.6.2's fixtures
//! (`testdata/actions/argo-cd-3.6/`). Both go through `Actions` (patch computed, Secret
//! masking checked).
//!
//! `cargo bench --bench actions`.
//!
//! Built-ins read their results without the round trip through the Lua encoding
//! (`actions::result::read_builtin`, the same bytes): measured medians and ratios, and the
//! earlier 2 to 7 times of the shared reading, are in `benches/README.md`.
#![allow(clippy::disallowed_methods)] // the benchmark reads its inputs from testdata/

use std::collections::BTreeMap;

use gitops_core::actions::{ActionScripts, Actions};

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
