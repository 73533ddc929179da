//! Lua health scripts: the contract and hostile cases of `testdata/health/lua/cases.yaml`, and
//! the `health_test.yaml` folders below `testdata/health/lua/`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::health::{HealthScripts, parts::HealthScript};
use crate::script::{LuaEngine, LuaHealth, ScriptLimits};
use crate::tests::support::{files_below, read, selected, testdata};

pub(crate) fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

#[test]
fn lua_contract_cases() {
    let doc: Value = serde_norway::from_str(&read("health/lua/cases.yaml")).expect("cases.yaml");
    let default_obj = doc["defaultObject"].clone();
    let engine = LuaEngine::default();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let name = text(case, "name");
        if !selected(&name) {
            continue;
        }
        ran += 1;
        let obj = case_object(case, &default_obj);
        let now = case.get("now").and_then(Value::as_i64).unwrap_or(1_700_000_000);
        let open = case.get("useOpenLibs").and_then(Value::as_bool).unwrap_or(false);
        let runs = case.get("runs").and_then(Value::as_u64).unwrap_or(1);
        let script = text(case, "script");
        let engine = match case.get("limits") {
            Some(l) => {
                let n = |k: &str| l.get(k).and_then(Value::as_u64);
                let mut limits = ScriptLimits::default();
                if let Some(v) = n("instructions") {
                    limits = limits.with_instructions(v);
                }
                if let Some(v) = n("memoryBytes") {
                    limits = limits.with_memory_bytes(usize::try_from(v).expect("fits"));
                }
                if let Some(v) = n("patternSteps") {
                    limits = limits.with_pattern_steps(v);
                }
                if let Some(v) = n("stringBytes") {
                    limits = limits.with_string_bytes(usize::try_from(v).expect("fits"));
                }
                LuaEngine::new(limits)
            }
            None => engine.clone(),
        };
        // A host interrupt that stops after a number of checks: the backstop, deterministic
        // here so the case has an exact result.
        let engine = match case.get("interruptAfterChecks").and_then(Value::as_u64) {
            Some(n) => {
                engine.with_interrupt(std::sync::Arc::new(crate::tests::support::Countdown(n)))
            }
            None => engine,
        };
        // `states: n`: besides the runs on the shared engine (whose states earlier cases
        // warmed), once on each of n fresh engines, each with a Lua state of its own.
        let states = case.get("states").and_then(Value::as_u64).unwrap_or(0);
        let fresh = (0..states).map(|_| LuaEngine::new(*engine.limits()));
        for (run, engine) in
            std::iter::repeat_n(engine.clone(), runs as usize).chain(fresh).enumerate()
        {
            let got = engine.eval_health("case", &script, open, &obj, now);
            let ok = match (case.get("expected"), case.get("error"), &got) {
                (Some(exp), None, Ok(h)) => {
                    let want = LuaHealth {
                        status: text(exp, "status"),
                        message: text(exp, "message"),
                        deletion_message: text(exp, "deletionMessage"),
                        returned_nil: exp["returnedNil"] == true,
                    };
                    *h == want
                }
                (None, Some(Value::String(e)), Err(err)) => err.to_string() == *e,
                _ => false,
            };
            if !ok {
                let shown = match &got {
                    Ok(h) => format!("{h:?}"),
                    Err(e) => format!("error: {e}"),
                };
                failures.push(format!("{name} (run {run}): got {shown}"));
            }
        }
    }
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no cases ran");
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
}

/// Every hostile case of `cases.yaml` that ends in an error, met the way a host meets it: the
/// script is an argocd-cm health customization of the object's kind, run by `ScriptedHealth`
/// and by `health::assess`. The error names the script (where it comes from), the object and
/// the limit, exactly; the same engine then assesses another object as usual. The slowest
/// case's time is printed (`--nocapture`), not asserted.
#[test]
fn lua_hostile_errors_name_the_object_and_the_script() {
    use crate::health::ScriptedHealth;
    use crate::health::{self, HealthContext, HealthError, HealthStatus};

    let doc: Value = serde_norway::from_str(&read("health/lua/cases.yaml")).expect("cases.yaml");
    let default_obj = doc["defaultObject"].clone();
    let now: i64 = 1_700_000_000;
    let gadget = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "ns"}});
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    let mut ran = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let name = text(case, "name");
        let Some(want) = case.get("error").and_then(Value::as_str) else { continue };
        if !name.starts_with("hostile-") || !selected(&name) {
            continue;
        }
        ran += 1;
        let reason = want.strip_prefix("health script case: ").expect("the runner's script name");
        let mut data = BTreeMap::new();
        data.insert(
            "resource.customizations.health.example.com_Widget".to_string(),
            text(case, "script"),
        );
        if case.get("useOpenLibs").and_then(Value::as_bool) == Some(true) {
            data.insert(
                "resource.customizations.useOpenLibs.example.com_Widget".to_string(),
                "true".to_string(),
            );
        }
        data.insert(
            "resource.customizations.health.example.com_Gadget".to_string(),
            "return {status = \"Healthy\", message = obj.metadata.name}".to_string(),
        );
        let settings = crate::config::Settings::from_data(&data).expect("argocd-cm");
        let engine = match case.get("interruptAfterChecks").and_then(Value::as_u64) {
            Some(n) => LuaEngine::default()
                .with_interrupt(std::sync::Arc::new(crate::tests::support::Countdown(n))),
            None => LuaEngine::default(),
        };
        let scripted = ScriptedHealth::new(HealthScripts::from_settings(&settings), engine);
        let mut obj = case_object(case, &default_obj);
        if !obj.is_object() {
            // A deeply nested list: as a field of the Widget.
            let mut widget = default_obj.clone();
            widget["spec"]["deep"] = obj;
            obj = widget;
        }
        let object = crate::object::ObjectRef::from_object(&obj).expect("identity");
        let started = std::time::Instant::now();
        let got = scripted.evaluate(&obj, &object, now);
        let elapsed = started.elapsed();
        if elapsed > slowest.0 {
            slowest = (elapsed, name.clone());
        }
        let want_text = format!(
            "health script argocd-cm example.com/Widget on example.com/Widget:ns/w: {reason}"
        );
        match &got {
            Err(e) if e.to_string() == want_text => {}
            other => {
                failures.push(format!("{name}: ScriptedHealth: got {other:?}, want {want_text:?}"))
            }
        }
        let ctx = HealthContext::new(now).with_scripts(&scripted);
        match health::assess(&obj, &ctx) {
            Err(HealthError::Script { object: o, script, message })
                if *o == object
                    && script == "argocd-cm example.com/Widget"
                    && message == reason => {}
            other => failures.push(format!("{name}: assess: got {other:?}")),
        }
        // The process carries on: the same engine assesses the next object.
        match health::assess(&gadget, &ctx) {
            Ok(Some(h)) if h.status == HealthStatus::Healthy && h.message == "g" => {}
            other => failures.push(format!("{name}: next object: got {other:?}")),
        }
    }
    eprintln!("{ran} hostile scripts; slowest {} in {:?}", slowest.1, slowest.0);
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no cases ran");
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
}

/// The object of a case: `obj`, a list nested `objNesting` deep, or the default object.
fn case_object(case: &Value, default_obj: &Value) -> Value {
    if let Some(n) = case.get("objNesting").and_then(Value::as_u64) {
        // Built here: no YAML parser takes input nested this deep.
        return (0..n).fold(Value::Bool(true), |v, _| Value::Array(vec![v]));
    }
    let mut obj = case.get("obj").cloned().unwrap_or_else(|| default_obj.clone());
    if let Some(n) = case.get("objBigString").and_then(Value::as_u64) {
        // Built here: a string this large does not belong in a data file.
        obj["spec"]["big"] = Value::String("a".repeat(usize::try_from(n).expect("fits")));
    }
    obj
}

/// Runs every `health_test.yaml` below `root`; gives (passed, failed case names).
fn run_folder(root: &str) -> (usize, Vec<String>) {
    let files = files_below(&testdata().join(root));
    let scripts = HealthScripts::new().with_directory(&files);
    let engine = LuaEngine::default();
    let now: i64 = 1_700_000_000;
    let (mut passed, mut failed) = (0, Vec::new());
    for (path, yaml) in &files {
        let Some(dir) = path.strip_suffix("health_test.yaml") else { continue };
        let script_path = format!("{dir}health.lua");
        let default_script =
            HealthScript::new(script_path.clone(), files[&script_path].clone(), true);
        let inputs: BTreeMap<String, String> = files
            .iter()
            .filter_map(|(p, t)| p.strip_prefix(dir).map(|rel| (rel.to_string(), t.clone())))
            .collect();
        let cases = scripts
            .run_tests(yaml, &inputs, Some(&default_script), &engine, now)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        for c in cases {
            if !selected(&c.input_path) {
                continue;
            }
            if c.passed {
                passed += 1;
            } else {
                failed.push(format!(
                    "{dir}{}: expected {:?}, got {:?}",
                    c.input_path, c.expected, c.got
                ));
            }
        }
    }
    (passed, failed)
}

#[test]
fn lua_health_test_folders() {
    let (passed, failed) = run_folder("health/customizations");
    assert!(failed.is_empty(), "failing:\n{}", failed.join("\n"));
    assert!(passed >= 10 || std::env::var("GITOPS_TEST").is_ok(), "only {passed} cases ran");
    // The failing fixture fails exactly where it should.
    let (passed, failed) = run_folder("health/lua-failing");
    assert_eq!(passed, 1);
    assert_eq!(failed.len(), 2, "{failed:?}");
}

#[test]
fn lua_script_lookup() {
    let doc: Value = serde_norway::from_str(&read("health/lua/lookup.yaml")).expect("lookup.yaml");
    let data: BTreeMap<String, String> = doc["argocdCm"]
        .as_object()
        .expect("argocdCm")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("string").to_string()))
        .collect();
    let settings = crate::config::Settings::from_data(&data).expect("argocd-cm");
    let dir: BTreeMap<String, String> = doc["directory"]
        .as_array()
        .expect("directory")
        .iter()
        .map(|p| {
            let p = p.as_str().expect("path");
            (p.to_string(), format!("-- {p}"))
        })
        .collect();
    let scripts = HealthScripts::from_settings(&settings).with_directory(&dir);
    let mut failures = Vec::new();
    for case in doc["cases"].as_array().expect("cases") {
        let (group, kind) = (text(case, "group"), text(case, "kind"));
        let got = scripts.find(&group, &kind);
        let want = case["script"].as_str();
        let ok = match (&got, want) {
            (None, None) => true,
            (Some(s), Some(w)) => {
                s.name == w
                    && Some(s.use_open_libs) == case["useOpenLibs"].as_bool()
                    && !s.source.is_empty()
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{group}/{kind}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lua_engine_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LuaEngine>();
    assert_send_sync::<crate::health::ScriptedHealth>();
    let engine = std::sync::Arc::new(LuaEngine::default());
    let script = "hs = {status = 'Healthy', message = obj.metadata.name}\nreturn hs";
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let engine = std::sync::Arc::clone(&engine);
            std::thread::spawn(move || {
                let obj = serde_json::json!({"metadata": {"name": format!("n{i}")}});
                (0..50)
                    .map(|_| engine.eval_health("t", script, false, &obj, 0))
                    .map(|r| r.map(|h| h.message))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let results = h.join().expect("thread");
        assert!(
            results.iter().all(|r| r.as_deref() == Ok(format!("n{i}").as_str())),
            "{results:?}"
        );
    }
}

fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1_000_000i64..1_000_000).prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,4}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Values a script sees after Argo CD's conversion: nulls dropped everywhere.
fn lua_visible_nodes(v: &Value) -> u64 {
    match v {
        Value::Null => 0,
        Value::Array(items) => 1 + items.iter().map(lua_visible_nodes).sum::<u64>(),
        Value::Object(m) => 1 + m.values().map(lua_visible_nodes).sum::<u64>(),
        _ => 1,
    }
}

proptest::proptest! {
    #![proptest_config(crate::tests::support::cases(64))]

    /// The script sees exactly the non-null values of any object, and the same input gives the
    /// same answer on every run.
    #[test]
    fn lua_sees_every_non_null_value(v in json_value()) {
        let script = "local function count(x)\n\
            if type(x) ~= 'table' then return 1 end\n\
            local n = 1\n\
            for _, c in pairs(x) do n = n + count(c) end\n\
            return n\n\
          end\n\
          if obj == nil then return {status = 'Missing', message = '0'} end\n\
          return {status = 'Healthy', message = tostring(count(obj))}";
        let engine = LuaEngine::default();
        let first = engine.eval_health("count", script, false, &v, 0);
        let again = engine.eval_health("count", script, false, &v, 0);
        proptest::prop_assert_eq!(&first, &again);
        let h = first.expect("runs");
        proptest::prop_assert_eq!(h.message, lua_visible_nodes(&v).to_string());
    }
}

const FRAGMENTS: &[&str] = &[
    "return",
    "{",
    "}",
    "status",
    "=",
    "'Healthy'",
    "'Degraded'",
    "message",
    ",",
    "obj",
    ".",
    "spec",
    "list",
    "[1]",
    "(",
    ")",
    "..",
    "1",
    "0/0",
    "nil",
    "true",
    "local x",
    "x",
    "function",
    "end",
    "if",
    "then",
    "else",
    "for i = 1, 1e9 do",
    "while true do",
    "do",
    "repeat",
    "until",
    "pcall",
    "error",
    "string.rep('ab', 1e8)",
    "string.find",
    "'a*a*a*a*b'",
    "tostring",
    "#",
    "setmetatable",
    "{__index = function() while true do end end}",
    "loadstring",
    "'\\27Lua'",
    "require",
    "'os'",
    "os.time",
    "table.concat",
    "goto l",
    "::l::",
    ";",
    "\n",
];

proptest::proptest! {
    #![proptest_config(crate::tests::support::cases(96))]

    /// Any script made of these fragments gives a health or an error, within small limits, and
    /// the same answer on a second run.
    #[test]
    fn lua_any_script_is_bounded_and_deterministic(
        picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..24)
    ) {
        let script = picks.iter().map(|&i| FRAGMENTS[i]).collect::<Vec<_>>().join(" ");
        let limits = ScriptLimits::default()
            .with_instructions(200_000)
            .with_pattern_steps(50_000)
            .with_memory_bytes(4 << 20)
            .with_string_bytes(1 << 20);
        let engine = LuaEngine::new(limits);
        let obj = serde_json::json!({"spec": {"list": [1, null, "x"]}});
        let first = engine.eval_health("fuzz", &script, true, &obj, 0);
        let again = engine.eval_health("fuzz", &script, true, &obj, 0);
        proptest::prop_assert_eq!(first, again, "script: {}", script);
    }
}

/// One request's scripts share a budget: once it is spent, the script running stops and the
/// later ones fail at once, each naming the limit; a new request starts afresh.
#[test]
fn lua_request_budget_is_shared_by_the_scripts_of_a_request() {
    use crate::health::ScriptedHealth;
    use crate::health::{HealthContext, HealthStatus, ResourceHealthInput};

    let mut data = BTreeMap::new();
    data.insert(
        "resource.customizations.health.example.com_Widget".to_string(),
        "while true do end".to_string(),
    );
    let settings = crate::config::Settings::from_data(&data).expect("argocd-cm");
    let limits =
        ScriptLimits::default().with_instructions(100_000).with_request_instructions(250_000);
    let scripted =
        ScriptedHealth::new(HealthScripts::from_settings(&settings), LuaEngine::new(limits));
    let objects: Vec<Value> = (0..4)
        .map(|i| {
            serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": format!("w{i}"), "namespace": "ns"}})
        })
        .collect();
    let messages = |health: &ScriptedHealth| -> Vec<(HealthStatus, String)> {
        let ctx = HealthContext::new(0).with_scripts(health);
        objects
            .iter()
            .filter_map(|o| ResourceHealthInput::from_objects(None, Some(o), &ctx))
            .map(|r| {
                let h = r.health.expect("assessed");
                (h.status, h.message)
            })
            .collect()
    };
    let per_object = "instruction limit of 100000 exceeded".to_string();
    let request = "request instruction limit of 250000 exceeded (shared by every script of the \
                   request)"
        .to_string();
    let want = vec![
        (HealthStatus::Unknown, per_object.clone()),
        (HealthStatus::Unknown, per_object.clone()),
        // The third stops at the 50,000 units left of the request.
        (HealthStatus::Unknown, request.clone()),
        (HealthStatus::Unknown, request.clone()),
    ];
    let one_request = scripted.for_request();
    assert_eq!(messages(&one_request), want);
    // The next request has its own budget; without a request scope only the per-object
    // budget applies.
    assert_eq!(messages(&scripted.for_request()), want);
    assert_eq!(messages(&scripted), vec![(HealthStatus::Unknown, per_object); 4]);
}

/// `health::assess_lua`, the one call for a script and an object, is `assess` with a
/// `ScriptedHealth` holding the script as the kind's `health.lua`: the same answer, byte for
/// byte, on every case of `cases.yaml` run with the default limits.
#[test]
fn assess_lua_is_assess_with_the_kinds_health_lua() {
    use crate::health::{self, HealthContext, ScriptedHealth};

    let doc: Value = serde_norway::from_str(&read("health/lua/cases.yaml")).expect("cases.yaml");
    let default_obj = doc["defaultObject"].clone();
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let name = text(case, "name");
        let special =
            ["limits", "interruptAfterChecks", "runs"].iter().any(|k| case.get(k).is_some());
        if special || !selected(&name) {
            continue;
        }
        let obj = case_object(case, &default_obj);
        if crate::object::ObjectRef::from_object_lossy(&obj).group_kind() != "example.com/Widget" {
            continue;
        }
        compared += 1;
        let now = case.get("now").and_then(Value::as_i64).unwrap_or(1_700_000_000);
        let script = text(case, "script");
        let files = BTreeMap::from([("example.com/Widget/health.lua".to_string(), script.clone())]);
        let scripted =
            ScriptedHealth::new(HealthScripts::new().with_directory(&files), LuaEngine::default());
        let want = health::assess(&obj, &HealthContext::new(now).with_scripts(&scripted));
        let got = health::assess_lua(&obj, &script, now);
        if format!("{got:?}") != format!("{want:?}") {
            failures.push(format!("{name}: assess_lua {got:?}, assess {want:?}"));
        }
    }
    // 73 of the 166 cases: the others set limits, an interrupt or repeated runs, or are no Widget.
    assert!(compared >= 73 || std::env::var("GITOPS_TEST").is_ok(), "{compared} cases compared");
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
}

/// `health::assess_lua` names the script after the object's kind, and runs it for an object
/// whose kind no `resource_customizations/` folder could name (none, or one with a `_`),
/// instead of leaving it out.
#[test]
fn assess_lua_runs_the_script_for_any_kind() {
    use crate::health::{HealthError, HealthResult, HealthStatus, assess_lua};

    let degraded = "return {status = 'Degraded', message = obj.metadata.name}";
    for (obj, name) in [
        (serde_json::json!({"metadata": {"name": "x"}}), "x"),
        (
            serde_json::json!({"apiVersion": "v1", "kind": "My_Kind", "metadata": {"name": "y"}}),
            "y",
        ),
    ] {
        assert_eq!(
            assess_lua(&obj, degraded, 0),
            Ok(Some(HealthResult::new(HealthStatus::Degraded, name))),
        );
    }
    let script_of = |obj: Value| match assess_lua(&obj, "error('boom')", 0) {
        Err(HealthError::Script { script, message, .. }) => (script, message),
        other => panic!("{other:?}"),
    };
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    assert_eq!(script_of(pod), ("Pod/health.lua".to_string(), "<string>:1: boom".to_string()));
    let widget = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}});
    assert_eq!(script_of(widget).0, "example.com/Widget/health.lua");
    assert_eq!(script_of(serde_json::json!({})).0, "health.lua");
}
