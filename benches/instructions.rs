//! Instruction counts of the headline cases, for callgrind.
//!
//! Wall-clock medians move with whatever else the machine runs; an instruction count of the
//! same binary on the same input does not, so a regression shows as a number. Each case below
//! does its setup outside a function named `measured_*`, and `benches/callgrind.sh` runs the
//! binary once per case under `valgrind --tool=callgrind --toggle-collect='*measured_*'`, so
//! only the measured call is counted.
//!
//! `cargo bench --bench instructions` runs every case once natively (a smoke check);
//! `instructions CASE` runs one; `instructions --list` prints the case names.
#![allow(missing_docs)]
#![allow(clippy::disallowed_methods)] // the cases read their inputs from testdata/

use std::hint::black_box;

use gitops_core::diff::{self, AppDiffInput, DiffOptions};
use gitops_core::health::{self, HealthContext};
use gitops_core::ignore::IgnoreNormalizer;
use gitops_core::{config::IgnoreDifferences, config::Settings, object::Scopes};
use serde_json::{Value, json};

use gitops_core_testkit::testdata::ActionTest;
use gitops_core_testkit::workload as support;

fn testdata(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml(rel: &str) -> Value {
    gitops_core::object::parse_manifests(&testdata(rel)).expect("fixture parses").remove(0)
}

fn json_file(rel: &str) -> Value {
    serde_json::from_str(&testdata(rel)).expect("fixture parses")
}

type Case = (&'static str, fn());

const CASES: &[Case] = &[
    ("parse_json_list_2000", parse_json_list_2000),
    ("diff_three_way_deployment", diff_three_way_deployment),
    ("serde_json_parse_serialize_deployment", serde_json_parse_serialize_deployment),
    ("diff_two_way_deployment", diff_two_way_deployment),
    ("diff_structured_merge_deployment", diff_structured_merge_deployment),
    ("diff_server_side_deployment", diff_server_side_deployment),
    ("diff_app_1000_three_way", diff_app_1000_three_way),
    ("diff_app_1000_three_way_objects", diff_app_1000_three_way_objects),
    ("ignore_jq_rule_deployment", ignore_jq_rule_deployment),
    ("health_builtin_deployment", health_builtin_deployment),
    ("health_lua_canary_warm", health_lua_canary_warm),
    ("health_lua_1000_objects", health_lua_1000_objects),
    ("plan_1000_resources", plan_1000_resources),
    ("action_restart_builtin", action_restart_builtin),
    ("action_restart_lua", action_restart_lua),
    ("action_discover_builtin", action_discover_builtin),
    ("action_discover_lua", action_discover_lua),
    ("action_create_job_builtin", action_create_job_builtin),
    ("action_create_job_lua", action_create_job_lua),
    ("action_named_builtin", action_named_builtin),
    ("action_named_lua", action_named_lua),
    ("health_named_builtin", health_named_builtin),
    ("health_named_lua", health_named_lua),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("--list") => CASES.iter().for_each(|(name, _)| println!("{name}")),
        Some(name) => match CASES.iter().find(|(n, _)| *n == name) {
            Some((_, run)) => run(),
            None => {
                eprintln!("unknown case {name:?}; --list prints the cases");
                std::process::exit(2);
            }
        },
        None => {
            for (name, run) in CASES {
                run();
                println!("{name}: ran");
            }
        }
    }
}

fn parse_json_list_2000() {
    let w = support::workload();
    let items: Vec<Value> = w.desired.into_iter().chain(w.live).collect();
    let text = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    #[inline(never)]
    fn measured_parse(text: &str) -> usize {
        gitops_core::object::parse_manifests(text).expect("parses").len()
    }
    black_box(measured_parse(black_box(&text)));
}

/// Diffs once to load the schema tables (a one-time cost per process), then once counted.
fn warm_diff(desired: &Value, live: &Value, opts: &DiffOptions<'_>) -> bool {
    diff::diff(Some(desired), Some(live), opts).expect("diffs");
    #[inline(never)]
    fn measured_diff(desired: &Value, live: &Value, opts: &DiffOptions<'_>) -> bool {
        diff::diff(Some(desired), Some(live), opts).expect("diffs").modified
    }
    measured_diff(desired, live, opts)
}

fn diff_three_way_deployment() {
    let desired = json_file("diff/inputs/deployment-config.json");
    let live = json_file("diff/inputs/deployment-live.json");
    black_box(warm_diff(&desired, &live, &DiffOptions::default()));
}

/// The yardstick of `diff_three_way_deployment`: serde_json parsing the same pair from its
/// text and serialising both again (divan's `one_resource::serde_json_parse_serialize`).
fn serde_json_parse_serialize_deployment() {
    let desired = testdata("diff/inputs/deployment-config.json");
    let live = testdata("diff/inputs/deployment-live.json");
    #[inline(never)]
    fn measured_parse_serialize(desired: &str, live: &str) -> usize {
        let d: Value = serde_json::from_str(desired).expect("json");
        let l: Value = serde_json::from_str(live).expect("json");
        let (d, l) = (serde_json::to_string(&d), serde_json::to_string(&l));
        d.map_or(0, |s| s.len()) + l.map_or(0, |s| s.len())
    }
    black_box(measured_parse_serialize(black_box(&desired), black_box(&live)));
}

fn diff_two_way_deployment() {
    let desired = json_file("diff/inputs/deployment-config.json");
    let mut live = json_file("diff/inputs/deployment-live.json");
    if let Some(a) = live["metadata"]["annotations"].as_object_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    black_box(warm_diff(&desired, &live, &DiffOptions::default()));
}

fn diff_structured_merge_deployment() {
    let desired = yaml("diff/inputs/smd-deploy-config.yaml");
    let live = yaml("diff/inputs/smd-deploy-live.yaml");
    let opts = DiffOptions::default().with_structured_merge(true);
    black_box(warm_diff(&desired, &live, &opts));
}

fn diff_server_side_deployment() {
    let desired = yaml("diff/inputs/ssd-deploy-nested-config.yaml");
    let live = yaml("diff/inputs/ssd-deploy-nested-live.yaml");
    let dry_run = json_file("diff/inputs/ssd-deploy-nested-predicted-live.json");
    let opts = DiffOptions::default().with_server_side_diff(Some(&dry_run));
    black_box(warm_diff(&desired, &live, &opts));
}

fn diff_app_1000_three_way() {
    app_1000_three_way(false);
}

/// The same with every resource keeping its normalised and predicted objects (what the text
/// rendering and `AppDiff::explain` ask for; the default before `keep_objects` turned off).
fn diff_app_1000_three_way_objects() {
    app_1000_three_way(true);
}

fn app_1000_three_way(objects: bool) {
    let w = support::workload();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let input =
        AppDiffInput::new(&w.desired, &w.live, &w.app, &settings, &scopes).with_objects(objects);
    // Load the schema tables first: a one-time cost per process, not per application.
    let one = [w.desired[0].clone()];
    diff::diff_app(&AppDiffInput::new(&one, &w.live[..1], &w.app, &settings, &scopes))
        .expect("diffs");
    #[inline(never)]
    fn measured_app(input: &AppDiffInput<'_>) -> usize {
        diff::diff_app(input).expect("diffs").resources.len()
    }
    black_box(measured_app(&input));
}

fn ignore_jq_rule_deployment() {
    let rules: Vec<IgnoreDifferences> = serde_json::from_value(json!([{
        "group": "apps", "kind": "Deployment",
        "jqPathExpressions": [
            ".spec.template.spec.containers[] | select(.name == \"guestbook-ui\") | .env[] | select(.name | startswith(\"SOME_\"))"
        ]
    }]))
    .expect("rules");
    let n = IgnoreNormalizer::new(&rules, &Settings::default()).expect("compiles");
    let mut obj = yaml("sync/respect-ignore/objects/live-deployment.yaml");
    #[inline(never)]
    fn measured_normalize(n: &IgnoreNormalizer, obj: &mut Value) {
        n.normalize(obj).expect("normalizes");
    }
    measured_normalize(&n, &mut obj);
    black_box(obj);
}

fn health_builtin_deployment() {
    let obj = yaml("health/builtin/deployment-progressing.yaml");
    let ctx = HealthContext::new(0);
    #[inline(never)]
    fn measured_health(obj: &Value, ctx: &HealthContext<'_>) -> bool {
        health::assess(obj, ctx).expect("assesses").is_some()
    }
    black_box(measured_health(&obj, &ctx));
}

#[cfg(feature = "lua")]
fn health_lua_canary_warm() {
    use gitops_core::script::LuaEngine;
    let script = testdata("health/customizations/example.com/Canary/health.lua");
    let obj = yaml("health/customizations/example.com/Canary/testdata/healthy.yaml");
    let engine = LuaEngine::default();
    // Warm the engine state and the compiled-script cache; the second call is counted.
    engine.eval_health("canary", &script, true, &obj, 0).expect("runs");
    #[inline(never)]
    fn measured_lua(engine: &LuaEngine, script: &str, obj: &Value) {
        black_box(engine.eval_health("canary", script, true, obj, 0).expect("runs"));
    }
    measured_lua(&engine, &script, &obj);
}

#[cfg(not(feature = "lua"))]
fn health_lua_canary_warm() {
    println!("health_lua_canary_warm needs the lua feature");
}

/// 1,000 objects through a `health.lua` of `argocd-cm`, as a host assesses them: a new
/// engine, so the count holds building its Lua state once and compiling the script once, then
/// 999 evaluations that reuse both (issue 26: the states' owner).
#[cfg(feature = "lua")]
fn health_lua_1000_objects() {
    use gitops_core::health::{HealthScripts, ScriptedHealth};
    let script = testdata("health/customizations/example.com/Canary/health.lua");
    let obj = yaml("health/customizations/example.com/Canary/testdata/healthy.yaml");
    let objects = lua_objects(&obj, 1_000);
    let cm = json!({"data": {"resource.customizations.health.example.com_Canary": script}});
    let scripts = HealthScripts::from_settings(&Settings::from_config_map(&cm).expect("argocd-cm"));
    #[inline(never)]
    fn measured_lua_objects(scripts: &HealthScripts, objects: &[Value]) -> usize {
        let health = ScriptedHealth::new(scripts.clone(), Default::default());
        let ctx = HealthContext::new(0).with_scripts(&health);
        objects.iter().filter(|o| health::assess(o, &ctx).expect("assesses").is_some()).count()
    }
    assert_eq!(black_box(measured_lua_objects(&scripts, &objects)), objects.len());
}

/// `n` copies of `obj`, each with its own name.
#[cfg(feature = "lua")]
fn lua_objects(obj: &Value, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut o = obj.clone();
            o["metadata"]["name"] = json!(format!("canary-{i}"));
            o
        })
        .collect()
}

#[cfg(not(feature = "lua"))]
fn health_lua_1000_objects() {
    println!("health_lua_1000_objects needs the lua feature");
}

fn plan_1000_resources() {
    use gitops_core::sync::{LiveObject, Observations, SyncRequest};
    let mut request = SyncRequest::default();
    let mut obs = Observations::default();
    for i in 0..1000 {
        let kind = ["ConfigMap", "Service", "Secret"][i % 3];
        let obj = json!({"apiVersion": "v1", "kind": kind, "metadata": {
            "name": format!("obj-{i:04}"),
            "annotations": {"argocd.argoproj.io/sync-wave": (i % 10).to_string()}}});
        if i % 2 == 0 {
            let mut l = obj.clone();
            l["metadata"]["namespace"] = json!("bench");
            obs.live.push(LiveObject::new(l, None));
        }
        request.targets.push(obj);
    }
    request.app_namespace = "bench".into();
    request.prune = true;
    #[inline(never)]
    fn measured_plan(request: &SyncRequest, obs: &Observations) -> usize {
        request.plan(obs).tasks().count()
    }
    black_box(measured_plan(&request, &obs));
}

/// The built-in actions (or, with `lua`, the sample folder's scripts of the same actions).
fn actions(lua: bool) -> gitops_core::actions::Actions {
    use gitops_core::actions::{ActionScripts, Actions};
    if !lua {
        return Actions::new(ActionScripts::new());
    }
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/actions/resource_customizations");
    let mut files = std::collections::BTreeMap::new();
    let mut dirs = vec![base.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel =
                    p.strip_prefix(&base).expect("below").to_string_lossy().replace('\\', "/");
                files.insert(rel, std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    Actions::new(ActionScripts::new().with_builtin_actions(false).with_directory(&files))
}

const ACTION_NOW: i64 = 1_700_000_000;

/// One action on a fixture, warm (the engine state and compiled script cached), counted once.
fn action_run(lua: bool, rel: &str, name: &str) {
    let actions = actions(lua);
    let obj = yaml(rel);
    let params = std::collections::BTreeMap::new();
    actions.run(&obj, name, &params, ACTION_NOW).expect("runs");
    #[inline(never)]
    fn measured_action(
        actions: &gitops_core::actions::Actions,
        obj: &Value,
        name: &str,
        params: &std::collections::BTreeMap<String, String>,
    ) {
        black_box(actions.run(obj, name, params, ACTION_NOW).expect("runs"));
    }
    measured_action(&actions, &obj, name, &params);
}

/// One discovery on a fixture, warm, counted once.
fn action_discover(lua: bool, rel: &str) {
    let actions = actions(lua);
    let obj = yaml(rel);
    actions.discover(&obj, ACTION_NOW).expect("runs");
    #[inline(never)]
    fn measured_discover(actions: &gitops_core::actions::Actions, obj: &Value) {
        black_box(actions.discover(obj, ACTION_NOW).expect("runs"));
    }
    measured_discover(&actions, &obj);
}

const ACTION_DEPLOYMENT: &str =
    "actions/argo-cd-3.6/apps/Deployment/actions/testdata/deployment.yaml";
const ACTION_CRONJOB: &str = "actions/argo-cd-3.6/batch/CronJob/actions/testdata/cronjob.yaml";

fn action_restart_builtin() {
    action_run(false, ACTION_DEPLOYMENT, "restart");
}

fn action_restart_lua() {
    action_run(true, ACTION_DEPLOYMENT, "restart");
}

/// The object `DISCOVER` names (below `testdata/`; a Deployment when unset).
fn discover_input() -> String {
    std::env::var("DISCOVER").unwrap_or_else(|_| ACTION_DEPLOYMENT.into())
}

fn action_discover_builtin() {
    action_discover(false, &discover_input());
}

fn action_discover_lua() {
    action_discover(true, &discover_input());
}

fn action_create_job_builtin() {
    action_run(false, ACTION_CRONJOB, "create-job");
}

fn action_create_job_lua() {
    action_run(true, ACTION_CRONJOB, "create-job");
}

/// The tests of the action `ACTION` (`group/Kind/action`, from the environment) of Argo CD
/// 3.6.2's `action_test.yaml`: each input and its parameters (a Deployment's `restart` when
/// unset).
fn named_action_tests() -> (String, Vec<ActionTest>) {
    let name = std::env::var("ACTION").unwrap_or_else(|_| "apps/Deployment/restart".into());
    let (kind, action) = name.rsplit_once('/').expect("group/Kind/action");
    let text = testdata(&format!("actions/argo-cd-3.6/{kind}/actions/action_test.yaml"));
    let doc = gitops_core::object::parse_documents(&text).expect("yaml").remove(0);
    let tests = gitops_core_testkit::testdata::action_tests_of(&name, &doc);
    (action.to_string(), tests)
}

/// Every test of the action `ACTION` once, warm, counted together: built in, or (with `lua`)
/// through Argo CD 3.6.2's own scripts (`ARGO_CD_RESOURCE_CUSTOMIZATIONS`).
fn action_named(lua: bool) {
    use gitops_core::actions::{ActionScripts, Actions};
    let actions = if lua {
        let base = gitops_core_testkit::testdata::argo_cd_scripts().expect("a checkout");
        let mut files = std::collections::BTreeMap::new();
        let mut dirs = vec![base.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("read_dir") {
                let p = entry.expect("entry").path();
                let rel =
                    p.strip_prefix(&base).expect("below").to_string_lossy().replace('\\', "/");
                if p.is_dir() {
                    dirs.push(p);
                } else if rel.ends_with(".lua") && rel.contains("/actions/") {
                    files.insert(rel, std::fs::read_to_string(&p).expect("read"));
                }
            }
        }
        Actions::new(ActionScripts::new().with_builtin_actions(false).with_directory(&files))
    } else {
        Actions::new(ActionScripts::new())
    };
    let (name, tests) = named_action_tests();
    for (obj, params) in &tests {
        let _ = actions.run(obj, &name, params, ACTION_NOW);
    }
    #[inline(never)]
    fn measured_named(actions: &gitops_core::actions::Actions, name: &str, tests: &[ActionTest]) {
        for (obj, params) in tests {
            let _ = black_box(actions.run(obj, name, params, ACTION_NOW));
        }
    }
    measured_named(&actions, &name, &tests);
}

fn action_named_builtin() {
    action_named(false);
}

fn action_named_lua() {
    action_named(true);
}

/// The first document of each fixture of the health folder `KIND` (`group/Kind`, from the
/// environment; Argo CD's folder name, `_` for a wildcard) of `testdata/health/argo-cd-3.6/`,
/// in the order of their paths (cert-manager's Certificate when unset).
fn named_health_fixtures() -> (String, Vec<Value>) {
    let kind = std::env::var("KIND").unwrap_or_else(|_| "cert-manager.io/Certificate".into());
    let objects = gitops_core_testkit::testdata::health_fixtures(&kind);
    (kind, objects.into_iter().map(|(_, o)| o).collect())
}

/// Every fixture of the health folder `KIND` once, counted together: the built-in rule
/// (`health::parts::builtin_rule`, as `benches/builtin_rules.rs`'s `every_kind_builtin`).
fn health_named_builtin() {
    let (_, objects) = named_health_fixtures();
    for obj in &objects {
        black_box(gitops_core::health::parts::builtin_rule(obj));
    }
    #[inline(never)]
    fn measured_named_health(objects: &[Value]) {
        for obj in objects {
            black_box(gitops_core::health::parts::builtin_rule(black_box(obj)));
        }
    }
    measured_named_health(&objects);
}

/// The same through Argo CD 3.6.2's own `health.lua` of the folder on a warm engine
/// (`ARGO_CD_RESOURCE_CUSTOMIZATIONS`), as `every_kind_lua`.
#[cfg(feature = "lua")]
fn health_named_lua() {
    use gitops_core::script::LuaEngine;
    let (kind, objects) = named_health_fixtures();
    let base = gitops_core_testkit::testdata::argo_cd_scripts().expect("a checkout");
    let script = std::fs::read_to_string(base.join(&kind).join("health.lua")).expect("script");
    let engine = LuaEngine::default();
    for obj in &objects {
        let _ = engine.eval_health(&kind, &script, true, obj, 0);
    }
    #[inline(never)]
    fn measured_named_health_lua(engine: &LuaEngine, kind: &str, script: &str, objects: &[Value]) {
        for obj in objects {
            let _ = black_box(engine.eval_health(kind, script, true, black_box(obj), 0));
        }
    }
    measured_named_health_lua(&engine, &kind, &script, &objects);
}

#[cfg(not(feature = "lua"))]
fn health_named_lua() {
    println!("health_named_lua needs the lua feature");
}
