//! Conformance of `ignoreDifferences` (testdata/diff/ignore/) and `RespectIgnoreDifferences`
//! (testdata/sync/respect-ignore/): one table-driven test per area.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::ignore::IgnoreNormalizer;
use crate::tests::support::{Countdown, read, selected, testdata};
use crate::{config::IgnoreDifferences, config::Settings, object::ObjectRef};

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("yaml: {e}"))
}

/// A path below testdata/ read as one object, `null` as absent, `{build: ...}` built here
/// (inputs too large for a file), anything else inline.
fn object(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::String(path) => Some(yaml(&read(path))),
        Value::Object(m) if m.contains_key("build") => Some(build(&m["build"])),
        other => Some(other.clone()),
    }
}

/// `{from: <path>, at: <pointer>, list: N}` puts a list of N zeros at the pointer of the
/// object read from the path; `nesting: N` puts a zero inside N nested lists instead;
/// `repeat`/`times`/`then` a long string; `strings`/`count` a list of strings.
fn build(b: &Value) -> Value {
    let mut obj = yaml(&read(b["from"].as_str().expect("build.from")));
    let value = if let Some(n) = b["list"].as_u64() {
        Value::Array(vec![json!(0); usize::try_from(n).expect("fits")])
    } else if let Some(n) = b["nesting"].as_u64() {
        (0..n).fold(json!(0), |v, _| json!([v]))
    } else if let Some(text) = b["repeat"].as_str() {
        // `repeat: TEXT, times: N, then: END`: one string of TEXT N times, then END.
        let times = usize::try_from(b["times"].as_u64().expect("build.times")).expect("fits");
        json!(text.repeat(times) + b["then"].as_str().unwrap_or(""))
    } else if let Some(text) = b["strings"].as_str() {
        // `strings: TEXT, count: N`: a list of N copies of TEXT.
        let n = usize::try_from(b["count"].as_u64().expect("build.count")).expect("fits");
        Value::Array(vec![json!(text); n])
    } else {
        panic!("build needs `list`, `nesting`, `repeat` or `strings`: {b}")
    };
    let at = b["at"].as_str().expect("build.at");
    *obj.pointer_mut(at).unwrap_or_else(|| panic!("build.at {at} must exist")) = value;
    obj
}

fn case_files(dir: &str) -> Vec<(String, Value)> {
    let mut names: Vec<String> = std::fs::read_dir(testdata().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|n| selected(n))
        .map(|n| {
            let v = serde_norway::from_str(&read(&format!("{dir}/{n}")))
                .unwrap_or_else(|e| panic!("{dir}/{n}: {e}"));
            (n, v)
        })
        .collect()
}

/// Whether a case needs the `jq` feature (it has jq expressions).
fn uses_jq(case: &Value) -> bool {
    let in_cm = case.get("argocdCm").and_then(Value::as_object).is_some_and(|m| {
        m.values().any(|v| v.as_str().is_some_and(|t| t.contains("jqPathExpressions")))
    });
    let in_annotation = case
        .pointer("/target/metadata/annotations/gitops-core.io~1ignore-differences")
        .and_then(Value::as_str)
        .is_some_and(|t| t.contains("jqPathExpressions"));
    in_cm
        || in_annotation
        || case.get("ignoreDifferences").and_then(Value::as_array).into_iter().flatten().any(|r| {
            r.get("jqRepeat").is_some()
                || r.get("jqPathExpressions")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty())
        })
}

fn rules_of(case: &Value) -> Vec<IgnoreDifferences> {
    let mut rules = Vec::new();
    for r in case.get("ignoreDifferences").and_then(Value::as_array).into_iter().flatten() {
        let mut rule: IgnoreDifferences = serde_json::from_value(r.clone()).expect("rule");
        if let Some(rep) = r.get("jqRepeat") {
            let text = rep["text"].as_str().expect("jqRepeat.text");
            let times = rep["times"].as_u64().expect("jqRepeat.times") as usize;
            rule.jq_path_expressions.push(text.repeat(times));
        }
        rules.push(rule);
    }
    rules
}

fn settings_of(case: &Value) -> Settings {
    let data: BTreeMap<String, String> = case
        .get("argocdCm")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter().map(|(k, v)| (k.clone(), v.as_str().expect("string").to_string())).collect()
        })
        .unwrap_or_default();
    Settings::from_data(&data).expect("argocd-cm")
}

/// Whether `actual` holds every field `expected` gives (for notes, which may leave out the
/// object).
fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            e.iter().all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av)))
        }
        _ => expected == actual,
    }
}

fn run_ignore_case(case: &Value) -> Result<(), String> {
    let rules = rules_of(case);
    let settings = settings_of(case);
    let expect = &case["expect"];
    let normalizer = match IgnoreNormalizer::new(&rules, &settings) {
        Ok(n) => {
            let n = match case.get("jqUnits").and_then(Value::as_u64) {
                Some(units) => n.with_jq_units(units),
                None => n,
            };
            // A host backstop that stops after this many checks of each evaluation.
            match case.get("jqInterruptAfterChecks").and_then(Value::as_u64) {
                Some(checks) => n.with_interrupt(std::sync::Arc::new(Countdown(checks))),
                None => n,
            }
        }
        Err(e) => {
            return match expect.get("error") {
                Some(want) if want == &json!(e.to_string()) => Ok(()),
                _ => Err(format!("construction failed: {e}")),
            };
        }
    };
    if let Some(want) = expect.get("error") {
        return Err(format!("expected construction error {want}"));
    }
    let objects: Vec<Option<Value>> =
        case["objects"].as_array().expect("objects").iter().map(object).collect();
    let mut notes = Vec::new();
    let mut results = Vec::new();
    for obj in &objects {
        let mut v = obj.clone().unwrap_or(Value::Null);
        match normalizer.normalize_with_notes(&mut v) {
            Ok(n) => {
                notes.extend(n);
                results.push(v);
            }
            Err(e) => results.push(json!({"error": e.to_string()})),
        }
    }
    let mut want: Vec<Value> = if expect.get("unchanged") == Some(&json!(true)) {
        objects.iter().map(|o| o.clone().unwrap_or(Value::Null)).collect()
    } else {
        expect["objects"].as_array().expect("expect.objects").clone()
    };
    // `errors`: the objects (by index) whose normalization fails, with the exact message.
    for (i, message) in expect.get("errors").and_then(Value::as_object).into_iter().flatten() {
        let i: usize = i.parse().expect("an index");
        want[i] = json!({ "error": message });
    }
    if results != want {
        return Err(format!(
            "objects differ:\n  got  {}\n  want {}",
            serde_json::to_string(&results).unwrap_or_default(),
            serde_json::to_string(&want).unwrap_or_default()
        ));
    }
    let got_notes = serde_json::to_value(&notes).expect("notes serialize");
    let want_notes = expect.get("notes").cloned().unwrap_or(json!([]));
    let ok = match (&want_notes, &got_notes) {
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(w, g)| subset(w, g))
        }
        _ => false,
    };
    if !ok {
        return Err(format!("notes differ:\n  got  {got_notes}\n  want {want_notes}"));
    }
    if let Some(want) = expect.get("managers") {
        let r = ObjectRef::from_object_lossy(objects[0].as_ref().expect("object"));
        let got = json!(normalizer.managed_fields_managers(&r));
        if &got != want {
            return Err(format!("managers differ: got {got}, want {want}"));
        }
    }
    if let Some(want) = expect.get("knownTypeFields") {
        let r = ObjectRef::from_object_lossy(objects[0].as_ref().expect("object"));
        let got = serde_json::to_value(normalizer.known_type_fields(&r)).expect("serialize");
        if &got != want {
            return Err(format!("known type fields differ: got {got}, want {want}"));
        }
    }
    Ok(())
}

#[test]
fn ignore_differences_conformance() {
    let mut cases = case_files("diff/ignore");
    // Without the `jq` feature every jq rule fails construction; those cases need it.
    cases.retain(|(_, case)| cfg!(feature = "jq") || !uses_jq(case));
    let mut failures = Vec::new();
    for (name, case) in &cases {
        if let Err(e) = run_ignore_case(case) {
            failures.push(format!("{name}: {e}"));
        }
    }
    eprintln!("ignoreDifferences: {} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Whether the patch code a `needs:` case waits for is in place: `GITOPS_READY=smp,merge-patch`
/// says so, and so does a probe through the public API that copies one ignored live value:
/// into a list item merged by its key for `smp` (a JSON merge patch would bring the whole live
/// list), into a custom resource for `merge-patch`.
fn ready(need: &str) -> bool {
    if std::env::var("GITOPS_READY").is_ok_and(|v| v.split(',').any(|r| r.trim() == need)) {
        return true;
    }
    let (pointer, target, live, want) = match need {
        "smp" => {
            let deployment = |container: Value| {
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "p"},
                       "spec": {"template": {"spec": {"containers": [container]}}}})
            };
            (
                "/spec/template/spec/containers/0/image",
                deployment(json!({"name": "a", "image": "git"})),
                deployment(json!({"name": "a", "image": "live", "tty": true})),
                deployment(json!({"name": "a", "image": "live"})),
            )
        }
        "merge-patch" => {
            let resource = |a: &str| {
                json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "p"},
                       "data": {"a": a, "b": "1"}})
            };
            ("/data/a", resource("git"), resource("live"), resource("live"))
        }
        _ => return false,
    };
    let rule: IgnoreDifferences =
        serde_json::from_value(json!({"group": "*", "kind": "*", "jsonPointers": [pointer]}))
            .expect("rule");
    let Ok(n) = IgnoreNormalizer::new(&[rule], &Settings::default()) else { return false };
    n.respect_ignore_differences(&[Some(target)], &[Some(live)])
        .is_ok_and(|out| out[0].object == Some(want))
}

fn run_respect_case(case: &Value) -> Result<(), String> {
    let normalizer = IgnoreNormalizer::new(&rules_of(case), &settings_of(case))
        .map_err(|e| format!("construction failed: {e}"))?;
    let target = object(&case["target"]);
    let live = object(&case["live"]);
    let out = normalizer
        .respect_ignore_differences(&[target], &[live])
        .map_err(|e| format!("respect failed: {e}"))?;
    let expect = &case["expect"];
    let got = out[0].object.clone().unwrap_or(Value::Null);
    if let Some(want) = expect.get("respected")
        && want != &json!(out[0].respected)
    {
        return Err(format!("respected: got {}, want {want}", out[0].respected));
    }
    if let Some(want) = expect.get("object") {
        let want = object(want).unwrap_or(Value::Null);
        if got != want {
            return Err(format!(
                "object differs:\n  got  {}\n  want {}",
                serde_json::to_string(&got).unwrap_or_default(),
                serde_json::to_string(&want).unwrap_or_default()
            ));
        }
    }
    for check in expect.get("checks").and_then(Value::as_array).into_iter().flatten() {
        let pointer = check["pointer"].as_str().expect("pointer");
        let at = got.pointer(pointer);
        if check.get("absent") == Some(&json!(true)) {
            if at.is_some() {
                return Err(format!(
                    "{pointer}: expected absent, got {}",
                    at.unwrap_or(&Value::Null)
                ));
            }
        } else if at != check.get("value") {
            return Err(format!("{pointer}: got {at:?}, want {:?}", check.get("value")));
        }
    }
    Ok(())
}

#[test]
fn respect_ignore_differences_conformance() {
    let mut cases = case_files("sync/respect-ignore");
    cases.retain(|(_, case)| cfg!(feature = "jq") || !uses_jq(case));
    let (mut failures, mut pending) = (Vec::new(), Vec::new());
    for (name, case) in &cases {
        let needs: Vec<&str> = case
            .get("needs")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match run_respect_case(case) {
            Ok(()) => {}
            Err(e) if needs.iter().any(|n| !ready(n)) => {
                pending.push(format!("{name} (needs {}): {e}", needs.join(", ")))
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "RespectIgnoreDifferences: {} cases, {} passed, {} pending on unmerged patch code, {} failed",
        cases.len(),
        cases.len() - pending.len() - failures.len(),
        pending.len(),
        failures.len()
    );
    for p in &pending {
        eprintln!("  pending: {}", p.lines().next().unwrap_or(""));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(feature = "jq")]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::ignore::IgnoreNormalizer;
    use crate::{config::IgnoreDifferences, config::Settings};

    fn deployment() -> Value {
        super::yaml(&crate::tests::support::read("diff/ignore/objects/nginx-deployment.yaml"))
    }

    fn rule(v: Value) -> IgnoreDifferences {
        serde_json::from_value(v).expect("rule")
    }

    /// Pieces of jq text, valid and not, to assemble into arbitrary expressions.
    const PIECES: &[&str] = &[
        ".",
        "..",
        ".spec",
        ".a",
        "[]",
        "[0]",
        "[-1]",
        "[1:]",
        "?",
        " | ",
        ", ",
        " // ",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "select(",
        "not",
        "length",
        " == ",
        " and ",
        "\"x\"",
        "\"",
        "1",
        "-",
        "+",
        "def f: f; ",
        "f",
        "$x",
        " as $x | ",
        "reduce ",
        "range(",
        "1e12",
        ";",
        "@sh ",
        "\\(",
        "#",
        "\n",
        "test(\"a*\")",
        "startswith(\"n\")",
        "any",
        "empty",
        "if . then . else . end",
    ];

    proptest! {
        #![proptest_config(crate::tests::support::cases(256))]

        /// Any text either fails construction with a message or runs to completion: no
        /// panic, no overflow, and the object stays an object.
        #[test]
        fn jq_text_is_total(pieces in prop::collection::vec(prop::sample::select(PIECES), 0..16)) {
            let expr: String = pieces.concat();
            let r = rule(json!({"group": "apps", "kind": "Deployment", "jqPathExpressions": [expr]}));
            match IgnoreNormalizer::new(&[r], &Settings::default()) {
                Ok(n) => {
                    let mut obj = deployment();
                    n.normalize_with_notes(&mut obj).expect("an object normalizes");
                    prop_assert!(obj.is_object());
                }
                Err(e) => prop_assert!(e.to_string().starts_with("ignoreDifferences[0]: jq path expression")),
            }
        }

        /// Normalizing twice gives what normalizing once gives, for rules that select by
        /// content (not by position, and without `//`, whose second choice applies once the
        /// first is gone).
        #[test]
        fn normalization_is_idempotent(
            pick in prop::collection::vec(prop::sample::select(&[
                ".spec.replicas",
                ".spec.template.spec.containers[] | select(.name == \"nginx\") | .image",
                ".metadata.labels",
                "..|select(type == \"number\")",
                ".spec.template.spec.containers[].ports[]?",
            ][..]), 1..4),
            pointers in prop::collection::vec(prop::sample::select(&[
                "/spec/replicas", "/metadata/labels/app", "/spec/template/spec", "/nothing",
            ][..]), 0..3),
        ) {
            let r = rule(json!({"group": "apps", "kind": "Deployment",
                                "jqPathExpressions": pick, "jsonPointers": pointers}));
            let n = IgnoreNormalizer::new(&[r], &Settings::default()).expect("compiles");
            let mut once = deployment();
            n.normalize(&mut once).expect("object");
            let mut twice = once.clone();
            n.normalize(&mut twice).expect("object");
            prop_assert_eq!(once, twice);
        }

        /// Any pointer text removes at most one value and never panics.
        #[test]
        fn pointer_text_is_total(tokens in prop::collection::vec(
            prop::sample::select(&["spec", "template", "containers", "0", "-1", "99", "~0", "~1", "", "x"][..]),
            0..8,
        ), lead in any::<bool>()) {
            let pointer = format!("{}{}", if lead { "/" } else { "" }, tokens.join("/"));
            let r = rule(json!({"group": "apps", "kind": "Deployment", "jsonPointers": [pointer]}));
            let n = IgnoreNormalizer::new(&[r], &Settings::default()).expect("pointers always compile");
            let mut obj = deployment();
            n.normalize(&mut obj).expect("an object normalizes");
            prop_assert!(obj.is_object());
        }

        /// A change confined to an ignored path is invisible; a change elsewhere is not.
        #[test]
        fn ignored_changes_are_invisible(a in any::<i64>(), b in any::<i64>(), jq in any::<bool>()) {
            let r = if jq {
                rule(json!({"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec.replicas"]}))
            } else {
                rule(json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}))
            };
            let n = IgnoreNormalizer::new(&[r], &Settings::default()).expect("compiles");
            let (mut x, mut y) = (deployment(), deployment());
            x["spec"]["replicas"] = json!(a);
            y["spec"]["replicas"] = json!(b);
            n.normalize(&mut x).expect("object");
            n.normalize(&mut y).expect("object");
            prop_assert_eq!(&x, &y);
            x["spec"]["minReadySeconds"] = json!(a);
            y["spec"]["minReadySeconds"] = json!(a.wrapping_add(1));
            prop_assert_ne!(x, y);
        }
    }
}

/// `testdata/diff/resource-updates/cases.yaml`: `ignore::ResourceUpdate::needs_refresh`.
#[test]
fn resource_updates_conformance() {
    use crate::ignore::ResourceUpdate;
    let doc: Value =
        serde_norway::from_str(&read("diff/resource-updates/cases.yaml")).expect("cases");
    let mut failures = Vec::new();
    let mut count = 0;
    for case in doc["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().unwrap_or("");
        if !selected(name) {
            continue;
        }
        count += 1;
        let settings = Settings::from_config_map(&serde_json::json!({"data": case["argocdCm"]}))
            .expect("argocdCm");
        let old = case["old"].clone();
        let mut new = old.clone();
        for (pointer, value) in case["newSet"].as_object().into_iter().flatten() {
            *new.pointer_mut(pointer).unwrap_or_else(|| panic!("{name}: {pointer}")) =
                value.clone();
        }
        let health = |k: &str| serde_json::from_value(case[k].clone()).ok();
        let update = ResourceUpdate::new(&old, &new, health("oldHealth"), health("newHealth"));
        let got = update.needs_refresh(&settings).map_err(|e| e.to_string());
        if got != Ok(case["expect"].as_bool().expect("expect")) {
            failures.push(format!("{name}: got {got:?}"));
        }
    }
    assert!(count >= 10 || std::env::var("GITOPS_TEST").is_ok(), "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
