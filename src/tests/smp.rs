//! Conformance cases of the strategic-merge / JSON-merge / defaulting / remarshal layer
//! (`testdata/diff/smp/*.yaml` and `testdata/diff/smp/normalize/*.yaml`).
//!
//! These functions are crate-internal building blocks of the diff engine, so this table
//! test calls them directly. A case is a map with `name`, `op` and the inputs and
//! expectations of that op:
//!
//! - `three-way`: `config`/`live` (inline or `config_file`/`live_file` below `testdata/`,
//!   optionally changed by the RFC 7386 `config_patch`), run through Argo CD's three-way diff as
//!   gitops-engine pkg/diff/diff.go `ThreeWayDiff` runs it (remarshal, last-applied from live or
//!   two-way, namespace/annotations removal, SMP or JSON merge patch, defaults); expects `modified`
//!   and optionally `predicted`/`normalized_live` values at RFC 6901 pointers.
//! - `strategic-patch`: `original`, `config`, `live` → the exact three-way `patch`
//!   and/or the `predicted` document.
//! - `apply`: `doc` + strategic `patch` → `expected`.
//! - `remarshal`: `input` → `expected`; with `input_file` and no `expected`, the input is
//!   its own canonical form up to the RFC 7386 `changes`.
//! - `defaults`: `input` (or `input_file`) → `expected`; without `expected`, the remarshalled
//!   input must be a fixed point of defaulting up to the RFC 7386 `changes`.
//! - `known-types`: `input` + `fields` → `expected` (or `error` path).
//! - `quantity`: `input` → `expected` canonical string, or `error: true`.
//! - `openapi`: `schema_file` (an OpenAPI v2 document), `gvk`, a dotted `path` (`[]` steps
//!   into list items) → the `expected` patch and list metadata at that position.
//! - `schema`: the same against the generated built-in table, from a `definition` name.

use serde_json::{Map, Value};

use super::support::{read, selected, testdata};
use crate::config::KnownTypeField;
use crate::diff::{
    PatchFailure, apply_defaults, apply_merge_patch, apply_strategic_patch, normalize_known_types,
    remarshal, remove_namespace_annotation, three_way_predict, three_way_strategic_patch,
};

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn load(case: &Value, key: &str) -> Option<Value> {
    if let Some(v) = case.get(key) {
        return Some(v.clone());
    }
    let file = case.get(format!("{key}_file").as_str())?.as_str()?;
    let text = read(file);
    Some(if file.ends_with(".json") {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
    } else {
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
    })
}

/// A case's expected `error`: the failure's pointer, and text its message contains.
fn expect_failure(name: &str, result: Result<Value, PatchFailure>, err: &Value) {
    let e = result.expect_err(name);
    assert_eq!(Value::String(e.path.clone()), err["path"], "{name}: error path");
    let msg = err["message"].as_str().unwrap_or_default();
    assert!(e.message.contains(msg), "{name}: {} does not contain {msg}", e.message);
}

fn gvk(obj: &Value) -> (String, String, String) {
    let av = obj["apiVersion"].as_str().unwrap_or_default();
    let (g, v) = av.rsplit_once('/').unwrap_or(("", av));
    (g.to_owned(), v.to_owned(), obj["kind"].as_str().unwrap_or_default().to_owned())
}

/// gitops-engine `Normalize` without a full normaliser: drop `metadata.creationTimestamp`.
fn normalize(obj: &mut Value) {
    if let Some(Value::Object(m)) = obj.get_mut("metadata") {
        m.remove("creationTimestamp");
    }
}

/// Argo CD's three-way diff (gitops-engine pkg/diff/diff.go `ThreeWayDiff`) on the crate's building
/// blocks.
fn three_way_diff(config: &Value, live: &Value) -> Result<(bool, Value, Value), String> {
    let mut config = remarshal(config);
    let mut live = remarshal(live);
    normalize(&mut config);
    normalize(&mut live);
    let orig = live["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .map(|mut o| {
            normalize(&mut o);
            o
        });
    match orig {
        Some(o) => {
            three_way_with(&o, &config, &live).or_else(|_| three_way_with(&config, &config, &live))
        }
        None => three_way_with(&config, &config, &live),
    }
}

fn three_way_with(
    orig: &Value,
    config: &Value,
    live: &Value,
) -> Result<(bool, Value, Value), String> {
    let (mut orig, mut config, mut live) = (orig.clone(), config.clone(), live.clone());
    remove_namespace_annotation(&mut orig);
    remove_namespace_annotation(&mut config);
    let predicted = three_way_predict(&orig, &config, &mut live, true)
        .map_err(|e| format!("{}: {}", e.path, e.message))?
        .into_value(&live);
    Ok((predicted != live, predicted, live))
}

fn check_pointers(name: &str, what: &str, doc: &Value, expect: Option<&Value>) {
    let Some(Value::Object(m)) = expect else { return };
    for (pointer, want) in m {
        let got = doc.pointer(pointer).cloned();
        if want.is_null() {
            assert!(got.is_none(), "{name}: {what}{pointer} should be absent, got {got:?}");
        } else {
            assert_eq!(got.as_ref(), Some(want), "{name}: {what}{pointer}");
        }
    }
}

fn gvk_of_case(case: &Value, doc: &Value) -> (String, String, String) {
    match case.get("gvk").and_then(Value::as_str) {
        Some(s) => {
            let parts: Vec<&str> = s.split('/').collect();
            match parts.as_slice() {
                [v, k] => (String::new(), (*v).to_owned(), (*k).to_owned()),
                [g, v, k] => ((*g).to_owned(), (*v).to_owned(), (*k).to_owned()),
                _ => panic!("bad gvk {s}"),
            }
        }
        None => gvk(doc),
    }
}

fn run_case(case: &Value) {
    let name = case["name"].as_str().expect("case name");
    let op = case["op"].as_str().unwrap_or_else(|| panic!("{name}: op"));
    match op {
        "three-way" => {
            let mut config = load(case, "config").unwrap_or_else(|| panic!("{name}: config"));
            if let Some(p) = case.get("config_patch") {
                config = apply_merge_patch(&config, p);
            }
            let live = load(case, "live").unwrap_or_else(|| panic!("{name}: live"));
            let (modified, predicted, live) =
                three_way_diff(&config, &live).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                Some(modified),
                case["modified"].as_bool(),
                "{name}: modified\npredicted {predicted:#}\nlive {live:#}"
            );
            check_pointers(name, "predicted", &predicted, case.get("predicted"));
            check_pointers(name, "live", &live, case.get("normalized_live"));
        }
        "strategic-patch" => {
            let original = load(case, "original").unwrap_or_else(|| panic!("{name}: original"));
            let config = load(case, "config").unwrap_or_else(|| panic!("{name}: config"));
            let live = load(case, "live").unwrap_or_else(|| panic!("{name}: live"));
            let (g, v, k) = gvk_of_case(case, &config);
            let result = three_way_strategic_patch(&original, &config, &live, &g, &v, &k);
            if let Some(err) = case.get("error") {
                return expect_failure(name, result, err);
            }
            let patch = result.unwrap_or_else(|e| panic!("{name}: {e:?}"));
            if let Some(want) = case.get("patch") {
                assert_eq!(&patch, want, "{name}: patch");
            }
            if let Some(want) = case.get("predicted") {
                let got = apply_strategic_patch(&live, &patch, &g, &v, &k)
                    .unwrap_or_else(|e| panic!("{name}: {e:?}"));
                assert_eq!(&got, want, "{name}: predicted");
            }
        }
        "apply" => {
            let doc = load(case, "doc").unwrap_or_else(|| panic!("{name}: doc"));
            let patch = &case["patch"];
            let (g, v, k) = gvk_of_case(case, &doc);
            let result = apply_strategic_patch(&doc, patch, &g, &v, &k);
            if let Some(err) = case.get("error") {
                return expect_failure(name, result, err);
            }
            let got = result.unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(got, case["expected"], "{name}");
        }
        "remarshal" => {
            let input = load(case, "input").unwrap_or_else(|| panic!("{name}: input"));
            let expected = match case.get("expected") {
                Some(e) => e.clone(),
                // Objects written by an API server are already canonical, up to `changes`.
                None => apply_merge_patch(
                    &input,
                    &case.get("changes").cloned().unwrap_or_else(|| Value::Object(Map::new())),
                ),
            };
            assert_eq!(remarshal(&input), expected, "{name}");
        }
        "defaults" => {
            let input = load(case, "input").unwrap_or_else(|| panic!("{name}: input"));
            let expected = match (case.get("expected"), case.get("changes")) {
                (Some(e), _) => e.clone(),
                // Objects written by an API server are fixed points of remarshal + defaulting,
                // up to the listed RFC 7386 `changes`.
                (None, changes) => apply_merge_patch(
                    &remarshal(&input),
                    &changes.cloned().unwrap_or_else(|| Value::Object(Map::new())),
                ),
            };
            let got = if case.get("expected").is_some() {
                apply_defaults(&input)
            } else {
                apply_defaults(&remarshal(&input))
            };
            assert_eq!(got, expected, "{name}");
        }
        "known-types" => {
            let mut obj = load(case, "input").unwrap_or_else(|| panic!("{name}: input"));
            let fields: Vec<KnownTypeField> = serde_json::from_value(case["fields"].clone())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let result = normalize_known_types(&mut obj, &fields);
            match case.get("error") {
                Some(path) => assert_eq!(
                    Some(path.clone()),
                    result.err().map(|e| Value::String(e.path)),
                    "{name}"
                ),
                None => {
                    result.unwrap_or_else(|e| panic!("{name}: {e:?}"));
                    match case.get("expected") {
                        Some(want) => assert_eq!(&obj, want, "{name}"),
                        None => check_pointers(name, "", &obj, case.get("values")),
                    }
                }
            }
        }
        "quantity" => {
            let input = case["input"].as_str().unwrap_or_else(|| panic!("{name}: input"));
            let got = crate::diff::canonical_quantity(input).ok();
            if case.get("error") == Some(&Value::Bool(true)) {
                assert_eq!(got, None, "{name}");
            } else {
                assert_eq!(got.as_deref(), case["expected"].as_str(), "{name}");
            }
        }
        "openapi" | "schema" => {
            let compiled;
            let mut t = if op == "schema" {
                let def = case["definition"].as_str().unwrap_or_default();
                crate::schema::definition(def)
                    .unwrap_or_else(|| panic!("{name}: no definition {def}"))
            } else {
                let doc = load(case, "schema").unwrap_or_else(|| panic!("{name}: schema"));
                let (g, v, k) = gvk_of_case(case, &doc);
                compiled = crate::schema::OpenApiSchema::compile(&doc);
                compiled
                    .lookup(&g, &v, &k)
                    .unwrap_or_else(|| panic!("{name}: no type for {g}/{v} {k}"))
            };
            // `a.b[].c`: struct fields, `[]` steps into list items.
            for step in
                case["path"].as_str().unwrap_or_default().split('.').filter(|s| !s.is_empty())
            {
                let (field, items) = match step.strip_suffix("[]") {
                    Some(f) => (f, true),
                    None => (step, false),
                };
                t = t.child(field).unwrap_or_else(|| panic!("{name}: no field {field}"));
                if items {
                    t = t.items().unwrap_or_else(|| panic!("{name}: {field} is not a list"));
                }
            }
            let want = &case["expected"];
            assert_eq!(
                t.merge_key().map(str::to_owned),
                want["merge_key"].as_str().map(str::to_owned),
                "{name}: merge key"
            );
            assert_eq!(
                t.strategy().merge,
                want["merge"].as_bool().unwrap_or(false),
                "{name}: merge"
            );
            let keys: Vec<Value> = t.list_map_keys().iter().cloned().map(Value::String).collect();
            assert_eq!(
                Value::Array(keys),
                want.get("list_map_keys").cloned().unwrap_or(Value::Array(Vec::new())),
                "{name}: keys"
            );
            if let Some(atomic) = want.get("atomic") {
                assert_eq!(Some(t.is_atomic()), atomic.as_bool(), "{name}: atomic");
            }
            for (flag, got) in
                [("replace", t.strategy().replace), ("retain_keys", t.strategy().retain_keys)]
            {
                assert_eq!(got, want[flag].as_bool().unwrap_or(false), "{name}: {flag}");
            }
        }
        other => panic!("{name}: unknown op {other}"),
    }
}

fn case_files() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["diff/smp", "diff/smp/normalize"] {
        let Ok(entries) = std::fs::read_dir(testdata().join(dir)) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".yaml") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn conformance() {
    let mut ran = 0;
    let files = case_files();
    assert!(files.iter().any(|f| f.starts_with("diff/smp/normalize/")), "no normalize case files");
    for file in files {
        let cases: Vec<Map<String, Value>> =
            serde_norway::from_str(&read(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        for case in cases {
            let case = Value::Object(case);
            let name = case["name"].as_str().unwrap_or_else(|| panic!("{file}: case without name"));
            if !selected(name) {
                continue;
            }
            run_case(&case);
            ran += 1;
        }
    }
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no smp conformance case ran");
}
