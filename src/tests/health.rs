//! Health conformance: every case under `testdata/health/` (built-in checks on Argo CD's own
//! testdata, single-object rules, app aggregation), run through the public API.

use serde_json::{Value, json};

use super::support::{read, selected};
use crate::health::{
    self, HealthContext, HealthError, HealthResult, HealthStatus, ResourceHealthInput,
    parts::ScriptHealth, parts::ScriptOutput,
};
use crate::object::{ObjectRef, ParseOptions, parse_documents};

/// Reads a YAML file of cases below `testdata/` as one JSON value.
fn cases(rel: &str) -> Vec<Value> {
    let docs = parse_documents(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    match docs.into_iter().next() {
        Some(Value::Array(items)) => items,
        other => panic!("{rel}: expected a list of cases, found {other:?}"),
    }
}

/// The first document of a YAML file below `testdata/`.
///
/// Reads a fixture as Argo CD reads it: one of its files (`statefulset-ondelete.yaml`,
/// `spec.updateStrategy` twice with the same value) repeats a key, and the last value wins.
fn object(rel: &str) -> Value {
    let text = read(rel);
    let (docs, _) =
        ParseOptions::default().parse_documents(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    docs.into_iter().find(|d| !d.is_null()).unwrap_or_else(|| panic!("{rel}: no document"))
}

fn status(v: &Value) -> HealthStatus {
    let s = v.as_str().unwrap_or_else(|| panic!("status must be a string: {v}"));
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

/// `{status, message}` from a case.
fn result(v: &Value) -> Option<HealthResult> {
    if v.is_null() {
        return None;
    }
    Some(HealthResult::new(status(&v["status"]), v["message"].as_str().unwrap_or("")))
}

fn show(r: &Result<Option<HealthResult>, HealthError>) -> String {
    match r {
        Ok(Some(h)) => format!("{:?} {:?}", h.status, h.message),
        Ok(None) => "no health".to_string(),
        Err(e) => format!("error {:?}", e.to_string()),
    }
}

/// A stand-in script engine that gives the same answer for every object.
struct Fixed(Value);

impl ScriptHealth for Fixed {
    fn health(
        &self,
        _obj: &Value,
        object: &ObjectRef,
        _now: i64,
    ) -> Result<Option<ScriptOutput>, HealthError> {
        if self.0 == "empty" {
            return Ok(Some(ScriptOutput::new(None, "")));
        }
        if self.0 == "nil" {
            return Ok(Some(ScriptOutput::nil()));
        }
        if let Some(message) = self.0["error"].as_str() {
            return Err(HealthError::script(object, "stand-in", message));
        }
        let deletion = self.0["deletion_message"].as_str().unwrap_or("");
        Ok(Some(ScriptOutput::new(result(&self.0), deletion)))
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, name: &str, got: String, want: String) {
        if got == want {
            self.passed += 1;
        } else {
            self.failures.push(format!("{name}:\n    got  {got}\n    want {want}"));
        }
    }
}

/// Argo CD's gitops-engine testdata (gitops-engine pkg/health/health_test.go).
fn builtin(t: &mut Tally) {
    // gitops-engine's own test, which these cases come from, runs the Go checks alone: no Lua
    // script, so no built-in rule (a Knative Service has no health there; Argo CD's script
    // gives it one, see `objects.yaml`).
    let ctx = HealthContext::new(0).with_builtin_rules(false);
    for case in cases("health/builtin/cases.yaml") {
        let file = case["file"].as_str().expect("file");
        let name = format!("builtin/{file}");
        if !selected(&name) {
            continue;
        }
        let got = health::assess(&object(&format!("health/builtin/{file}")), &ctx);
        let want = match &case["status"] {
            Value::Null => "no health".to_string(),
            s => format!("{:?} {:?}", status(s), case["message"].as_str().unwrap_or("")),
        };
        t.check(&name, show(&got), want);
    }
}

/// Single objects (`testdata/health/objects.yaml`).
fn objects(t: &mut Tally) {
    for case in cases("health/objects.yaml") {
        let name = format!("objects/{}", case["name"].as_str().expect("name"));
        if !selected(&name) {
            continue;
        }
        let now = case["now"].as_i64().unwrap_or(0);
        let script = case.get("script").map(|s| Fixed(s.clone()));
        #[cfg(feature = "lua")]
        let lua = lua_scripts(&case);
        #[cfg(not(feature = "lua"))]
        if case.get("argocdCm").is_some() || case.get("customizations").is_some() {
            continue;
        }
        let mut ctx = HealthContext::new(now)
            .with_builtin_rules(case["builtinRules"].as_bool().unwrap_or(true))
            .with_condition_fallback(case["fallback"] == true);
        if let Some(s) = &script {
            ctx = ctx.with_scripts(s);
        }
        #[cfg(feature = "lua")]
        if let Some(s) = &lua {
            ctx = ctx.with_scripts(s);
        }
        check_single(t, &name, &case, &ctx);
    }
}

/// The Lua scripts of a single-object case: its `argocdCm` (the ConfigMap's `data`) and its
/// `customizations` (a `resource_customizations/` folder: path to script), if it has either.
#[cfg(feature = "lua")]
fn lua_scripts(case: &Value) -> Option<crate::health::ScriptedHealth> {
    use crate::health::{HealthScripts, ScriptedHealth};
    if case.get("argocdCm").is_none() && case.get("customizations").is_none() {
        return None;
    }
    let mut scripts = HealthScripts::new();
    if let Some(data) = case.get("argocdCm") {
        let cm = json!({"data": data});
        scripts = scripts
            .with_settings(&crate::config::Settings::from_config_map(&cm).expect("argocd-cm"));
    }
    if let Some(Value::Object(files)) = case.get("customizations") {
        let files = files
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("script text").to_string()))
            .collect();
        scripts = scripts.with_directory(&files);
    }
    Some(ScriptedHealth::new(scripts, Default::default()))
}

/// Assesses a single-object case's `object` and checks it against its `expected` or `error`.
fn check_single(t: &mut Tally, name: &str, case: &Value, ctx: &HealthContext<'_>) {
    let got = health::assess(&case["object"], ctx);
    let want = match (case.get("error"), case.get("expected")) {
        (Some(e), _) => format!("error {:?}", e.as_str().expect("error text")),
        (None, Some(expected)) => show(&Ok(result(expected))),
        (None, None) => panic!("{name}: no expected result"),
    };
    // An error is also the Unknown health Argo CD records.
    if let Err(e) = &got {
        let h = e.health();
        if h.status != HealthStatus::Unknown || h.message != e.to_string() {
            t.failures.push(format!("{name}: error health is {h:?}"));
        }
    }
    t.check(name, show(&got), want);
}

/// The condition-based fallback (`testdata/health/fallback/cases.yaml`).
fn fallback(t: &mut Tally) {
    for case in cases("health/fallback/cases.yaml") {
        let name = format!("fallback/{}", case["name"].as_str().expect("name"));
        if !selected(&name) {
            continue;
        }
        let on = case["fallback"].as_bool().unwrap_or(true);
        let fixed = case.get("script").map(|s| Fixed(s.clone()));
        #[cfg(feature = "lua")]
        let lua = case["lua"].as_str().map(|source| {
            let kind = match case["luaFor"].as_str() {
                Some(k) => k.to_string(),
                None => ObjectRef::from_object_lossy(&case["object"]).group_kind(),
            };
            let key = format!("resource.customizations.health.{}", kind.replace('/', "_"));
            let cm = json!({"data": {key: source}});
            let settings = crate::config::Settings::from_config_map(&cm).expect("argocd-cm");
            crate::health::ScriptedHealth::new(
                crate::health::HealthScripts::from_settings(&settings),
                Default::default(),
            )
        });
        #[cfg(not(feature = "lua"))]
        if case.get("lua").is_some() {
            continue;
        }
        let mut ctx = HealthContext::new(0).with_condition_fallback(on);
        if let Some(s) = &fixed {
            ctx = ctx.with_scripts(s);
        }
        #[cfg(feature = "lua")]
        if let Some(s) = &lua {
            ctx = ctx.with_scripts(s);
        }
        check_single(t, &name, &case, &ctx);
    }
}

fn with_identity(mut obj: Value, entry: &Value) -> Value {
    if let Some(id) = entry["as"].as_str() {
        let (ns, name) = id.split_once('/').expect("as: namespace/name");
        obj["metadata"]["namespace"] = json!(ns);
        obj["metadata"]["name"] = json!(name);
    }
    if let Some(Value::Object(extra)) = entry.get("annotations") {
        let meta = &mut obj["metadata"];
        if !meta["annotations"].is_object() {
            meta["annotations"] = json!({});
        }
        for (k, v) in extra {
            meta["annotations"][k] = v.clone();
        }
    }
    obj
}

fn side(entry: &Value, key: &str) -> Option<Value> {
    let obj = match (entry.get(key), entry[format!("{key}_file")].as_str()) {
        (Some(inline), _) => inline.clone(),
        (None, Some(file)) => object(&format!("health/{file}")),
        (None, None) => return None,
    };
    Some(with_identity(obj, entry))
}

fn input(entry: &Value, ctx: &HealthContext<'_>) -> ResourceHealthInput {
    if let Some(r) = entry["ref"].as_str() {
        let parts: Vec<&str> = r.split('/').collect();
        let [group, version, kind, namespace, name] = parts[..] else {
            panic!("ref must be group/version/Kind/namespace/name: {r}");
        };
        let object = ObjectRef::new(group, version, kind, namespace, name);
        let mut input = if entry["present"] == false {
            ResourceHealthInput::missing(object)
        } else {
            ResourceHealthInput::new(object, result(&entry["health"]))
        };
        input.hook = entry["hook"] == true;
        input.ignore_health = entry["ignore"] == true;
        return input;
    }
    let target = side(entry, "target");
    let live = side(entry, "live");
    ResourceHealthInput::from_objects(target.as_ref(), live.as_ref(), ctx)
        .expect("a resource needs a live object or a target")
}

/// App aggregation (`testdata/health/app.yaml`), in every rotation of the input and reversed.
fn apps(t: &mut Tally) {
    for case in cases("health/app.yaml") {
        let name = format!("app/{}", case["name"].as_str().expect("name"));
        if !selected(&name) {
            continue;
        }
        let script = case.get("script").map(|s| Fixed(s.clone()));
        let app = side(&case, "app");
        let mut ctx = HealthContext::new(0);
        if let Some(s) = &script {
            ctx = ctx.with_scripts(s);
        }
        if let Some(app) = &app {
            ctx = ctx.with_app(app);
        }
        let resources: Vec<ResourceHealthInput> = case["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .map(|e| input(e, &ctx))
            .collect();
        let expected = &case["expected"];
        let want = format!(
            "{:?} {:?} {:?}",
            status(&expected["status"]),
            expected["message"].as_str().unwrap_or(""),
            case["error"].as_str()
        );
        let mut orders = Vec::new();
        for i in 0..resources.len().max(1) {
            let mut r = resources.clone();
            r.rotate_left(i);
            orders.push(r.clone());
            r.reverse();
            orders.push(r);
        }
        for (i, order) in orders.iter().enumerate() {
            let app = health::AppHealth::aggregate(order);
            let got =
                format!("{:?} {:?} {:?}", app.status, app.message, app.error_message().as_deref());
            t.check(&format!("{name} (order {i})"), got, want.clone());
            let sorted = app.resources.windows(2).all(|w| w[0].object <= w[1].object);
            if !sorted || app.resources.len() != resources.len() {
                t.failures.push(format!("{name}: resources not one per input, sorted"));
            }
        }
    }
}

/// Argo CD 3.6.2's own cases for the kinds it ships a health script for
/// (`testdata/health/argo-cd-3.6/<group>/<Kind>/health_test.yaml`), run through the built-in
/// rules with no script loaded, as Argo CD's test runs the script: without the deletion rule.
fn argo_cd_3_6(t: &mut Tally) {
    let root = super::support::testdata().join("health/argo-cd-3.6");
    let mut files: Vec<_> = super::support::all_files()
        .into_iter()
        .filter(|p| p.starts_with(&root) && p.ends_with("health_test.yaml"))
        .collect();
    files.sort();
    for file in files {
        let dir = file.parent().expect("a folder");
        let rel = dir.strip_prefix(&root).expect("below the root").to_string_lossy().into_owned();
        let doc = object(&format!("health/argo-cd-3.6/{rel}/health_test.yaml"));
        for case in doc["tests"].as_array().expect("tests") {
            // Argo CD reads the case with Go's JSON decoding, which matches field names
            // without regard to case (apps.kruise.io/CloneSet writes `inputpath`).
            let input = case
                .as_object()
                .and_then(|c| c.iter().find(|(k, _)| k.eq_ignore_ascii_case("inputPath")))
                .and_then(|(_, v)| v.as_str())
                .expect("inputPath");
            let name = format!("argo-cd-3.6/{rel}/{input}");
            if !selected(&name) {
                continue;
            }
            let obj = object(&format!("health/argo-cd-3.6/{rel}/{input}"));
            let got = match health::parts::builtin_rule(&obj) {
                None => "no built-in rule".to_string(),
                Some(Ok(out)) => match out.health {
                    Some(h) => format!("{:?} {:?}", h.status, h.message),
                    None => "empty health".to_string(),
                },
                Some(Err(e)) => format!("error {:?}", e.to_string()),
            };
            let want = &case["healthStatus"];
            let want = format!(
                "{:?} {:?}",
                status(&want["status"]),
                want["message"].as_str().unwrap_or("")
            );
            t.check(&name, got, want);
        }
    }
}

/// The README's list of the built-in kinds, between its `builtin-kinds` markers: one line per
/// API group, its kinds sorted. `GITOPS_REGENERATE=1` rewrites it.
fn readme_kinds() -> String {
    let mut groups: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    let kinds = health::HealthContext::builtin_kinds();
    for name in &kinds {
        let (group, kind) = name.rsplit_once('/').unwrap_or(("", name));
        groups.entry(group).or_default().push(kind);
    }
    let mut out = format!(
        "{} kinds in {} groups, following Argo CD {}:\n\n",
        kinds.len(),
        groups.len(),
        health::HealthContext::BUILTIN_RULES_ARGO_CD
    );
    for (group, kinds) in groups {
        out.push_str(&format!("- `{group}`: {}\n", kinds.join(", ")));
    }
    out
}

/// The README lists exactly `health::HealthContext::builtin_kinds()`, so the list cannot drift from the code.
#[test]
fn readme_lists_the_builtin_kinds() {
    const START: &str = "<!-- builtin-kinds:start -->\n";
    const END: &str = "<!-- builtin-kinds:end -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (Some(a), Some(b)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md has no {START:?} ... {END:?} block");
    };
    let (a, want) = (a + START.len(), readme_kinds());
    if std::env::var("GITOPS_REGENERATE").is_ok_and(|v| v == "1") {
        let text = format!("{}{want}{}", &readme[..a], &readme[b..]);
        std::fs::write(&path, text).expect("writing README.md");
        return;
    }
    assert_eq!(
        &readme[a..b],
        want,
        "README.md's built-in kinds are out of date: run \
         `GITOPS_REGENERATE=1 cargo test --lib readme_lists_the_builtin_kinds`"
    );
}

#[test]
fn health_conformance() {
    let mut t = Tally::default();
    argo_cd_3_6(&mut t);
    builtin(&mut t);
    objects(&mut t);
    fallback(&mut t);
    apps(&mut t);
    eprintln!("health conformance: {} passed, {} failed", t.passed, t.failures.len());
    assert!(t.failures.is_empty(), "{} failures:\n{}", t.failures.len(), t.failures.join("\n"));
}

mod properties {
    //! Invariants on any input: `assess` is total (no panic, an error is an Unknown health),
    //! and `aggregate` does not depend on the order of the resources.

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::health::{self, HealthContext, HealthResult, HealthStatus, ResourceHealthInput};
    use crate::object::ObjectRef;

    const KINDS: &[(&str, &str)] = &[
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "ReplicaSet"),
        ("v1", "Pod"),
        ("v1", "Service"),
        ("v1", "PersistentVolumeClaim"),
        ("networking.k8s.io/v1", "Ingress"),
        ("batch/v1", "Job"),
        ("autoscaling/v1", "HorizontalPodAutoscaler"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("apiregistration.k8s.io/v1", "APIService"),
        ("argoproj.io/v1alpha1", "Workflow"),
        // A custom resource: the condition fallback (on in `assess_is_total`) reads it.
        ("example.com/v1", "Widget"),
    ];

    /// The fields the checks read, where random values go.
    const PATHS: &[&str] = &[
        "spec",
        "status",
        "metadata",
        "spec.replicas",
        "spec.paused",
        "spec.restartPolicy",
        "spec.type",
        "spec.updateStrategy",
        "spec.updateStrategy.rollingUpdate",
        "status.conditions",
        "status.containerStatuses",
        "status.initContainerStatuses",
        "status.phase",
        "status.replicas",
        "status.readyReplicas",
        "status.updatedReplicas",
        "status.availableReplicas",
        "status.desiredNumberScheduled",
        "spec.updateStrategy.rollingUpdate.partition",
        "status.loadBalancer",
        "status.loadBalancer.ingress",
        "metadata.generation",
        "status.observedGeneration",
        "metadata.annotations",
        "metadata.deletionTimestamp",
        "metadata.finalizers",
    ];

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            prop_oneof![
                Just(i64::MAX),
                Just(i64::MIN),
                Just(i64::from(i32::MAX)),
                Just(i64::from(i32::MIN)),
                Just(-1),
                Just(0),
            ]
            .prop_map(|i| json!(i)),
            (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
            "[a-zA-Z:, {}\\[\\]\"]{0,12}".prop_map(Value::String),
            prop_oneof![
                Just("True"),
                Just("Running"),
                Just("Failed"),
                Just("Progressing"),
                Just("ProgressDeadlineExceeded"),
                Just("LoadBalancer"),
                Just("Always"),
                Just("[{\"type\":\"AbleToScale\"}]"),
            ]
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("type".to_string()),
                        Just("status".to_string()),
                        Just("reason".to_string()),
                        Just("message".to_string()),
                        Just("state".to_string()),
                        Just("waiting".to_string()),
                        Just("terminated".to_string()),
                        Just("ingress".to_string()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn set(obj: &mut Value, path: &str, v: Value) {
        let mut cur = obj;
        let parts: Vec<&str> = path.split('.').collect();
        for (i, p) in parts.iter().enumerate() {
            if !cur.is_object() {
                return;
            }
            if i + 1 == parts.len() {
                cur[*p] = v;
                return;
            }
            if !cur[*p].is_object() {
                cur[*p] = json!({});
            }
            cur = &mut cur[*p];
        }
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(512))]

        #[test]
        fn assess_is_total(
            kind in 0..KINDS.len(),
            edits in prop::collection::vec((0..PATHS.len(), json_value()), 0..5),
        ) {
            let (api_version, kind) = KINDS[kind];
            let mut obj = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}});
            for (path, v) in edits {
                set(&mut obj, PATHS[path], v);
            }
            let ctx = HealthContext::new(0).with_condition_fallback(true);
            match health::assess(&obj, &ctx) {
                Ok(_) => {}
                Err(e) => {
                    prop_assert_eq!(e.health().status, HealthStatus::Unknown);
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }

        #[test]
        fn assess_any_value_is_total(v in json_value()) {
            let _ = health::assess(&v, &HealthContext::new(0));
            let _ = health::assess(&v, &HealthContext::new(0).with_condition_fallback(true));
        }

        #[test]
        fn aggregate_ignores_order(
            items in prop::collection::vec(
                (0..4usize, 0..7usize, any::<bool>(), any::<bool>(), any::<bool>()), 0..10),
            seed in any::<u64>(),
        ) {
            let inputs: Vec<ResourceHealthInput> = items
                .iter()
                .map(|&(name, status, live, hook, ignore)| {
                    let kind = if name == 3 { "Application" } else { "Widget" };
                    let object = ObjectRef::new("argoproj.io", "v1", kind, "ns", format!("r{name}"));
                    let health = HealthStatus::ALL.get(status).map(|s| HealthResult::status(*s));
                    let mut input = if live {
                        ResourceHealthInput::new(object, health)
                    } else {
                        ResourceHealthInput::missing(object)
                    };
                    input.hook = hook;
                    input.ignore_health = ignore;
                    input
                })
                .collect();
            let mut shuffled = inputs.clone();
            // A deterministic shuffle from the seed.
            let mut s = seed;
            for i in (1..shuffled.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (s >> 33) as usize % (i + 1));
            }
            let a = health::AppHealth::aggregate(&inputs);
            let b = health::AppHealth::aggregate(&shuffled);
            prop_assert_eq!(a.status, b.status);
            prop_assert_eq!(&a.message, &b.message);
            prop_assert_eq!(a.resources.len(), inputs.len());
        }
    }
}

/// A health script the host's backstop stops gives no verdict: the app's health carries
/// `HealthError::Interrupted` (apart from a script's own failure, which is Unknown), first
/// among the errors, and the CLI and `serve` answer it as an error (issue 27).
#[cfg(feature = "lua")]
#[test]
fn backstop_stop_is_an_error_not_unknown() {
    use crate::health::{HealthScripts, ScriptedHealth};
    let mut data = std::collections::BTreeMap::new();
    data.insert(
        "resource.customizations.health.example.com_Widget".to_string(),
        "while true do end".to_string(),
    );
    data.insert(
        "resource.customizations.health.example.com_Gadget".to_string(),
        "error('broken')".to_string(),
    );
    let settings = crate::config::Settings::from_data(&data).expect("argocd-cm");
    let engine = crate::script::LuaEngine::default()
        .with_interrupt(std::sync::Arc::new(super::support::Countdown(1)));
    let scripted = ScriptedHealth::new(HealthScripts::from_settings(&settings), engine);
    let ctx = HealthContext::new(0).with_scripts(&scripted);
    let obj = |kind: &str| json!({"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": "w", "namespace": "ns"}});
    // The Gadget's own failure comes first by order, the stop still leads the errors.
    let inputs: Vec<ResourceHealthInput> = [obj("Gadget"), obj("Widget")]
        .iter()
        .filter_map(|o| ResourceHealthInput::from_objects(None, Some(o), &ctx))
        .collect();
    let app = health::AppHealth::aggregate(&inputs);
    let stop = app.interrupted().expect("the stop is reported");
    assert!(matches!(stop, HealthError::Interrupted { .. }), "{stop:?}");
    assert_eq!(
        stop.to_string(),
        "argocd-cm example.com/Widget on example.com/Widget:ns/w: stopped by the host: the test's countdown ran out; no health was given (the host's backstop, not a limit of the input: retry)"
    );
    // A script's own failure is a verdict (Unknown), not a stop.
    let broken = health::assess(&obj("Gadget"), &ctx).expect_err("broken script");
    assert!(matches!(broken, HealthError::Script { .. }), "{broken:?}");
    let only_broken: Vec<ResourceHealthInput> = [obj("Gadget")]
        .iter()
        .filter_map(|o| ResourceHealthInput::from_objects(None, Some(o), &ctx))
        .collect();
    assert_eq!(health::AppHealth::aggregate(&only_broken).interrupted(), None);
}

/// The crate-private pieces of `health` (no longer in `health::parts`), one case each, as
/// their doc examples had them.
mod pieces {
    use serde_json::json;

    use crate::health::{self, HealthStatus};
    use crate::object::ObjectRef;

    #[test]
    fn format_causes_names_the_core_group_without_a_prefix() {
        let pv = ObjectRef::new("", "v1", "PersistentVolume", "", "pv-1");
        assert_eq!(health::format_causes(&[&pv]), "Caused by PersistentVolume:pv-1");
    }

    #[test]
    fn the_application_itself_is_matched_by_uid() {
        let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "argocd", "uid": "1234"}});
        assert!(crate::health::is_application_itself(&app, &app));
        let mut other = app.clone();
        other["metadata"]["uid"] = "5678".into();
        assert!(!crate::health::is_application_itself(&app, &other));
    }

    #[test]
    fn builtin_check_of_a_load_balancer_without_ingress() {
        let svc = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "s"}, "spec": {"type": "LoadBalancer"}});
        let h = health::builtin(&svc, &ObjectRef::from_object_lossy(&svc)).unwrap().unwrap();
        assert_eq!(h.status, HealthStatus::Progressing);
    }

    #[test]
    fn condition_health_reads_ready_false() {
        let cert = json!({
            "apiVersion": "example.com/v1", "kind": "Certificate",
            "metadata": {"name": "web", "generation": 2},
            "status": {"observedGeneration": 2, "conditions": [
                {"type": "Ready", "status": "False", "reason": "Pending",
                 "message": "Waiting for the order to be fulfilled"}]}});
        let h =
            crate::health::condition_health(&cert, &ObjectRef::from_object_lossy(&cert)).unwrap();
        assert_eq!(h.status, HealthStatus::Progressing);
        assert_eq!(h.message, "Waiting for the order to be fulfilled");
    }
}
