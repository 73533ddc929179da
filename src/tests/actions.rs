//! Resource actions: Argo CD 3.6.2's cases under `testdata/actions/argo-cd-3.6/` run through
//! the built-in actions with no script loaded, the folders of our own scripts under
//! `testdata/actions/resource_customizations/` (every `action_test.yaml`, exact), and the
//! contract and hostile cases of `testdata/actions/cases.yaml`.

use std::collections::BTreeMap;

#[cfg(feature = "lua")]
use serde_json::Value;

use crate::actions::{ActionScripts, ActionTestKind, Actions};
#[cfg(feature = "lua")]
use crate::script::{LuaEngine, ScriptLimits};
#[cfg(feature = "lua")]
use crate::tests::lua::text;
#[cfg(feature = "lua")]
use crate::tests::support::read;
use crate::tests::support::{files_below, selected, testdata};

/// Every case of Argo CD 3.6.2's `action_test.yaml` files passes on the built-in actions,
/// with no script loaded, with the exact expectations of [`run_folders`].
#[test]
fn builtin_actions_pass_argo_cd_3_6() {
    let files = files_below(&testdata().join("actions/argo-cd-3.6"));
    assert!(!files.keys().any(|p| p.ends_with(".lua")), "no Argo CD script is in the project");
    let actions = Actions::new(ActionScripts::new());
    let (discovery, action, failures) = run_folders(&files, &actions);
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
    if std::env::var("GITOPS_TEST").is_err() {
        assert_eq!((discovery, action), (95, 115), "cases run");
    }
}

/// The README lists every built-in kind with its actions, one table row each, and no other.
#[test]
fn readme_lists_the_builtin_actions() {
    let readme = std::fs::read_to_string(testdata().join("../README.md")).expect("README");
    let rows: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "| Kind | Built-in actions |")
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let want: Vec<String> = crate::actions::ActionScripts::builtin_actions()
        .into_iter()
        .map(|(kind, names)| format!("| `{kind}` | {} |", names.join(", ")))
        .collect();
    assert_eq!(rows, want);
}

/// The scenarios of Argo CD 3.6.2's `argoproj.io/Application/actions/actions_test.yaml` (a
/// `given`/`when`/`expect` file Argo CD's own test runner does not read): the built-in
/// `toggle-auto-sync` on `given` gives an object holding every field of `expect`, and nothing
/// else changes but `spec.syncPolicy.automated`.
#[test]
fn builtin_toggle_auto_sync_scenarios() {
    let doc: serde_json::Value = serde_norway::from_str(&crate::tests::support::read(
        "actions/argo-cd-3.6/argoproj.io/Application/actions/actions_test.yaml",
    ))
    .expect("yaml");
    let actions = Actions::new(ActionScripts::new());
    let tests = doc["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 4);
    for (i, t) in tests.iter().enumerate() {
        let action = t["when"]["action"].as_str().expect("action");
        let got =
            actions.run(&t["given"], action, &BTreeMap::new(), Actions::TEST_NOW).expect("runs");
        let resource = &got.resources[0].apply_to(&t["given"]).expect("applies");
        assert!(contains(resource, &t["expect"]), "scenario {i}: {resource}");
        let (mut a, mut b) = (resource.clone(), t["given"].clone());
        for v in [&mut a, &mut b] {
            if let Some(p) = v["spec"]["syncPolicy"].as_object_mut() {
                p.remove("automated");
            }
            // A null or absent `syncPolicy` comes back holding only `automated`.
            let spec = v["spec"].as_object_mut().expect("spec");
            if spec.get("syncPolicy").is_some_and(|p| p.is_null() || p == &serde_json::json!({})) {
                spec.remove("syncPolicy");
            }
        }
        assert_eq!(a, b, "scenario {i}: only automated changes");
    }
}

/// Whether `got` holds every field of `want` with the same value.
fn contains(got: &serde_json::Value, want: &serde_json::Value) -> bool {
    match (got, want) {
        (serde_json::Value::Object(g), serde_json::Value::Object(w)) => {
            w.iter().all(|(k, v)| g.get(k).is_some_and(|gv| contains(gv, v)))
        }
        _ => got == want,
    }
}

/// Every case of every sample folder passes, with exact expectations on top of Argo CD's test.
#[cfg(feature = "lua")]
#[test]
fn argo_sample_folders_pass() {
    let files = files_below(&testdata().join("actions/resource_customizations"));
    let actions = Actions::new(ActionScripts::new().with_directory(&files));
    let (discovery, action, failures) = run_folders(&files, &actions);
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
    if std::env::var("GITOPS_TEST").is_err() {
        assert_eq!((discovery, action), (21, 26), "cases run");
    }
}

/// Runs every `action_test.yaml` among `files` on `actions`: a discovery lists exactly the
/// expected actions (Argo only checks that each discovered one is expected), and an action
/// gives as many resources as its expected file holds. Gives the discovery and action cases
/// run and the failures.
fn run_folders(files: &BTreeMap<String, String>, actions: &Actions) -> (usize, usize, Vec<String>) {
    let (mut discovery, mut action, mut failures) = (0, 0, Vec::new());
    for (path, yaml) in files {
        let Some(dir) = path.strip_suffix("action_test.yaml") else { continue };
        let inputs: BTreeMap<String, String> = files
            .iter()
            .filter_map(|(p, t)| p.strip_prefix(dir).map(|rel| (rel.to_string(), t.clone())))
            .collect();
        let cases = actions.run_tests(yaml, &inputs, Actions::TEST_NOW).expect(path);
        for c in cases {
            let name = format!("{dir}{:?}/{}/{}", c.kind, c.action, c.input_path);
            if !selected(&name) {
                continue;
            }
            let exact = match c.kind {
                ActionTestKind::Discovery => {
                    discovery += 1;
                    let mut want = c.expected_actions.clone();
                    want.sort_by(|a, b| a.name.cmp(&b.name));
                    c.got_actions == want
                }
                ActionTestKind::Action => {
                    action += 1;
                    c.message.is_empty() && c.got_resources.len() == c.expected_objects
                        || c.got_resources.is_empty() && c.expected_objects == 0
                }
            };
            if !c.passed || !exact {
                failures.push(format!("{name}: {} {:?}", c.message, c.got_actions));
            }
        }
    }
    (discovery, action, failures)
}

/// The cases of `testdata/actions/cases.yaml`: the contract (clock, parameters, empty maps, new
/// style) and hostile scripts (loops, huge results, creates the policy refuses, patches of
/// other objects, results that are not objects), each with its exact result or error. After a
/// failing case the same engine runs the next one as usual.
#[cfg(feature = "lua")]
#[test]
fn action_cases() {
    let doc: Value = serde_norway::from_str(&read("actions/cases.yaml")).expect("cases.yaml");
    let default_obj = doc["defaultObject"].clone();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let name = text(case, "name");
        if !selected(&name) {
            continue;
        }
        ran += 1;
        let obj = case.get("obj").cloned().unwrap_or_else(|| default_obj.clone());
        let now = case.get("now").and_then(Value::as_i64).unwrap_or(1_700_000_000);
        let mut limits = ScriptLimits::default();
        if let Some(l) = case.get("limits") {
            if let Some(v) = l.get("instructions").and_then(Value::as_u64) {
                limits = limits.with_instructions(v);
            }
            if let Some(v) = l.get("memoryBytes").and_then(Value::as_u64) {
                limits = limits.with_memory_bytes(usize::try_from(v).expect("fits"));
            }
        }
        let mut definition = serde_json::Map::new();
        definition.insert("name".into(), "act".into());
        definition.insert("action.lua".into(), text(case, "script").into());
        let actions_yaml = serde_json::json!({
            "discovery.lua": text(case, "discovery"),
            "definitions": [definition],
        });
        let data = BTreeMap::from([(
            "resource.customizations.actions.apps_Deployment".to_string(),
            serde_json::to_string(&actions_yaml).expect("json"),
        )]);
        let settings = crate::config::Settings::from_data(&data).expect("argocd-cm");
        let mut policy = crate::actions::ActionPolicy::default();
        if let Some(Value::Array(kinds)) = case.get("creatable") {
            policy = policy.with_creatable(kinds.iter().filter_map(Value::as_str));
        }
        let actions = Actions::new(ActionScripts::from_settings(&settings))
            .with_engine(LuaEngine::new(limits))
            .with_policy(policy);
        let params: BTreeMap<String, String> = case
            .get("params")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect()
            })
            .unwrap_or_default();
        let runs = case.get("runs").and_then(Value::as_u64).unwrap_or(1);
        for run in 0..runs {
            let got: Result<Value, String> = if case.get("discovered").is_some()
                || (case.get("discovery").is_some() && case.get("script").is_none())
            {
                actions
                    .discover(&obj, now)
                    .map(|a| serde_json::to_value(a).expect("json"))
                    .map_err(|e| e.to_string())
            } else {
                let action = case.get("action").and_then(Value::as_str).unwrap_or("act");
                actions
                    .run(&obj, action, &params, now)
                    .map(|r| wire(&r.resources, &obj))
                    .map_err(|e| e.to_string())
            };
            let ok =
                match (&got, case.get("error"), case.get("resources").or(case.get("discovered"))) {
                    (Err(e), Some(Value::String(want)), None) => e == want,
                    (Ok(v), None, Some(want)) => v == want,
                    _ => false,
                };
            if !ok {
                let shown = match &got {
                    Ok(v) => serde_json::to_string(v).expect("json"),
                    Err(e) => format!("error {e:?}"),
                };
                failures.push(format!("{name} (run {run}): got {shown}"));
            }
        }
        // The engine carries on after a failure.
        let after = Actions::new(ActionScripts::from_settings(&settings))
            .with_engine(LuaEngine::new(limits))
            .scripts()
            .action("apps", "Deployment", "act")
            .map(|s| s.name);
        assert_eq!(after.as_deref(), Some("argocd-cm apps/Deployment action act"));
    }
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no cases ran");
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
}

/// Lookup precedence: an argocd-cm override replaces the folder's discovery, or runs before it
/// with `mergeBuiltinActions` (its actions winning by name); an action runs the override's
/// definition, else the folder's script; a `_` folder matches as a wildcard; an unknown action
/// is an error naming the object.
#[cfg(feature = "lua")]
#[test]
fn argocd_cm_over_folders_and_merge() {
    let mut files = files_below(&testdata().join("actions/resource_customizations"));
    files.insert(
        "_.example.com/_/actions/discovery.lua".into(),
        "return {poke = {iconClass = \"p\"}}".into(),
    );
    files.insert("_.example.com/_/actions/poke/action.lua".into(), "return {}".into());
    let cm = |merge: bool| {
        let yaml = format!(
            "discovery.lua: return {{restart = {{displayName = \"Mine\"}}, hello = {{}}}}\n\
             mergeBuiltinActions: {merge}\ndefinitions:\n- name: hello\n  action.lua: return {{}}\n"
        );
        let data =
            BTreeMap::from([("resource.customizations.actions.apps_Deployment".into(), yaml)]);
        crate::config::Settings::from_data(&data).expect("argocd-cm")
    };
    let deployment: Value = serde_norway::from_str(&read(
        "actions/resource_customizations/apps/Deployment/actions/testdata/deployment.yaml",
    ))
    .expect("yaml");
    let now = Actions::TEST_NOW;
    let names = |a: &Actions| -> Vec<(String, String)> {
        a.discover(&deployment, now)
            .expect("discover")
            .into_iter()
            .map(|x| (x.name, x.display_name))
            .collect()
    };
    let merged = Actions::new(ActionScripts::from_settings(&cm(true)).with_directory(&files));
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    };
    assert_eq!(
        names(&merged),
        pairs(&[("hello", ""), ("pause", ""), ("restart", "Mine"), ("resume", ""), ("scale", "")])
    );
    let alone = Actions::new(ActionScripts::from_settings(&cm(false)).with_directory(&files));
    assert_eq!(names(&alone), pairs(&[("hello", ""), ("restart", "Mine")]));
    // `restart` is not among the definitions: the folder's script runs, as in Argo CD.
    let r = alone.run(&deployment, "restart", &BTreeMap::new(), now).expect("restart");
    assert_eq!(r.script, "apps/Deployment/actions/restart/action.lua");
    let r = alone.run(&deployment, "hello", &BTreeMap::new(), now).expect("hello");
    assert_eq!(
        (r.script.as_str(), r.resources.len()),
        ("argocd-cm apps/Deployment action hello", 0)
    );
    let err = alone.run(&deployment, "nope", &BTreeMap::new(), now).unwrap_err();
    assert_eq!(err.to_string(), "no action `nope` for apps/Deployment:default/nginx-deploy");
    assert_eq!(err.reason(), "no action `nope` for apps/Deployment");

    let widget = serde_json::json!({"apiVersion": "ec2.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}});
    let found = alone.discover(&widget, now).expect("wildcard");
    assert_eq!((found.len(), found[0].icon_class.as_str()), (1, "p"));
    assert!(
        alone
            .discover(&serde_json::json!({"apiVersion": "v1", "kind": "Pod"}), now)
            .expect("none")
            .is_empty()
    );
}

mod properties {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::actions::{ActionScripts, Actions};
    use crate::tests::support::files_below;
    use crate::tests::support::testdata;

    fn object() -> impl Strategy<Value = (Value, &'static str)> {
        let kinds = prop_oneof![
            Just(("apps/v1", "Deployment", "restart")),
            Just(("apps/v1", "Deployment", "pause")),
            Just(("apps/v1", "Deployment", "scale")),
            Just(("argoproj.io/v1alpha1", "Rollout", "resume")),
            Just(("argoproj.io/v1alpha1", "Rollout", "restart")),
            Just(("batch/v1", "CronJob", "create-job")),
            Just(("batch/v1", "CronJob", "suspend")),
        ];
        (kinds, "[a-z]{1,8}", 0u32..50, proptest::option::of(any::<bool>()), "[a-z0-9]{0,6}")
            .prop_map(|((api, kind, action), name, replicas, paused, label)| {
                let mut spec = json!({"replicas": replicas, "template": {"metadata": {"labels": {"l": label}}},
                    "jobTemplate": {"metadata": {}, "spec": {"template": {"spec": {}}}},
                    "strategy": {"canary": {"steps": []}}});
                if let Some(p) = paused {
                    spec["paused"] = Value::Bool(p);
                    spec["suspend"] = Value::Bool(p);
                }
                let obj = json!({"apiVersion": api, "kind": kind,
                    "metadata": {"name": name, "namespace": "ns", "annotations": {}},
                    "spec": spec, "status": {"pauseConditions": [{"reason": "x"}]}});
                (obj, action)
            })
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(64))]

        /// Running an action twice gives the same bytes, never changes the input object, and its
        /// RFC 6902 patch applied to the input gives the patched object: a script's and a
        /// built-in's.
        #[test]
        fn running_an_action_is_deterministic_and_leaves_the_input((obj, action) in object(), replicas in "[0-9]{1,3}") {
            // Our scripts on the Lua engine (with the `lua` feature), and the built-ins.
            let mut all = vec![Actions::new(ActionScripts::new())];
            if cfg!(feature = "lua") {
                let files = files_below(&testdata().join("actions/resource_customizations"));
                all.push(Actions::new(ActionScripts::new().with_directory(&files)));
            }
            for actions in &all {
                let before = obj.clone();
                let params = BTreeMap::from([("replicas".to_string(), replicas.clone())]);
                let a = actions.run(&obj, action, &params, Actions::TEST_NOW);
                let b = actions.run(&obj, action, &params, Actions::TEST_NOW);
                prop_assert_eq!(&obj, &before);
                // The RFC 6902 patch turns the input into the patched object.
                if let Ok(r) = &a {
                    for res in r.resources.iter().filter(|r| r.operation == crate::actions::Operation::Patch) {
                        let ops: json_patch::Patch =
                            serde_json::from_value(serde_json::to_value(&res.patch).expect("json")).expect("patch");
                        let mut patched = obj.clone();
                        json_patch::patch(&mut patched, &ops).expect("applies");
                        prop_assert_eq!(Some(patched), res.apply_to(&obj));
                        prop_assert!(res.resource.is_none() || res.apply_to(&obj) == res.resource);
                    }
                }
                let a = a.map(|r| serde_json::to_string(&r).expect("json")).map_err(|e| e.to_string());
                let b = b.map(|r| serde_json::to_string(&r).expect("json")).map_err(|e| e.to_string());
                prop_assert!(a.is_ok(), "{:?}", a);
                prop_assert_eq!(a, b);
                let d1 = actions.discover(&obj, Actions::TEST_NOW).map_err(|e| e.to_string());
                let d2 = actions.discover(&obj, Actions::TEST_NOW).map_err(|e| e.to_string());
                prop_assert_eq!(d1, d2);
                prop_assert_eq!(&obj, &before);
            }
        }
    }
}

/// The resources as `actions.run` writes them: each patched one as the object it makes of the
/// input (`ImpactedResource::apply_to`), with its patch.
#[cfg(feature = "lua")]
fn wire(resources: &[crate::actions::ImpactedResource], input: &Value) -> Value {
    let all = resources
        .iter()
        .map(|r| {
            serde_json::json!({"operation": r.operation, "resource": r.apply_to(input),
                "patch": r.patch})
        })
        .collect();
    Value::Array(all)
}
