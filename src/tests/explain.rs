//! The explain conformance runner: every case under `testdata/diff/explain/` (one YAML file
//! per case, see `testdata/diff/explain/README.md`), run through the public API only:
//! [`diff::diff_app`], then [`diff::AppDiff::explain`], compared line by line with the expected
//! `explain` and `unmanaged` lines, and the sync status (which explanations never change).

use serde::Deserialize;
use serde_json::Value;

use super::diff::{load, load_list};
use super::support::{selected, yaml_files};
use crate::diff::{self, AppDiffInput};
use crate::{config::Application, config::Settings, object::Scopes};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Case {
    case: String,
    source: String,
    /// Objects, inline or `@path#n` (under `testdata/diff/`).
    desired: Value,
    live: Value,
    /// The Application, inline or `@path`; an empty one by default.
    #[serde(default)]
    app: Value,
    /// `argocd-cm` data.
    #[serde(default)]
    argocd_cm: Value,
    /// Server-side dry-run results: the diff runs server-side.
    #[serde(default)]
    dry_runs: Value,
    /// Shows Secret values in the diff (explanations still mask Secret data).
    #[serde(default)]
    reveal_secrets: bool,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    sync_status: String,
    /// `group/Kind namespace/name: <FieldChange text>`, in output order.
    #[serde(default)]
    explain: Vec<String>,
    /// `group/Kind namespace/name: <UnmanagedField text>`, in output order.
    #[serde(default)]
    unmanaged: Vec<String>,
    /// `path -> pointer` of some changes and additions.
    #[serde(default)]
    pointers: Vec<String>,
    /// The whole `AppDiff::explain` result as JSON, when given.
    #[serde(default)]
    json: Option<Value>,
    /// Texts that must appear nowhere in the result (Secret values, plain or base64).
    #[serde(default)]
    hidden: Vec<String>,
}

fn compare(what: &str, want: &[String], got: &[String], errs: &mut Vec<String>) {
    if want != got {
        errs.push(format!("{what}:\n    want {want:#?}\n    got  {got:#?}"));
    }
}

fn run_case(c: &Case) -> Vec<String> {
    let mut errs = Vec::new();
    let desired = load_list(&c.desired);
    let live = load_list(&c.live);
    let app_doc = if c.app.is_null() { serde_json::json!({}) } else { load(&c.app) };
    let app = Application::from_value(&app_doc).expect("app");
    let settings = if c.argocd_cm.is_null() {
        Settings::default()
    } else {
        Settings::from_config_map(&serde_json::json!({"data": c.argocd_cm})).expect("argocd-cm")
    };
    let scopes = Scopes::builtin();
    let dry_runs = load_list(&c.dry_runs);
    let mut input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes)
        .with_objects(true)
        .with_reveal_secrets(c.reveal_secrets);
    if !dry_runs.is_empty() {
        input = input.with_dry_runs(&dry_runs);
    }
    let result = match diff::diff_app(&input) {
        Ok(r) => r,
        Err(e) => return vec![format!("unexpected error: {e}")],
    };
    let status_before = result.sync_status;
    let explained = result.explain(&input);
    if result.sync_status.as_str() != c.expect.sync_status || result.sync_status != status_before {
        errs.push(format!(
            "syncStatus: want {}, got {}",
            c.expect.sync_status,
            result.sync_status.as_str()
        ));
    }
    let prefix =
        |o: &crate::object::ObjectRef| format!("{}/{} {}/{}", o.group, o.kind, o.namespace, o.name);
    let mut explain = Vec::new();
    let mut unmanaged = Vec::new();
    let mut pointers = Vec::new();
    for e in &explained {
        for ch in &e.changes {
            explain.push(format!("{}: {ch}", prefix(&e.object)));
            pointers.push(format!("{} -> {}", ch.path, ch.pointer));
        }
        for u in &e.unmanaged {
            unmanaged.push(format!("{}: {u}", prefix(&e.object)));
            pointers.push(format!("{} -> {}", u.path, u.pointer));
        }
    }
    compare("explain", &c.expect.explain, &explain, &mut errs);
    compare("unmanaged", &c.expect.unmanaged, &unmanaged, &mut errs);
    for p in &c.expect.pointers {
        if !pointers.contains(p) {
            errs.push(format!("pointers: {p:?} not among {pointers:?}"));
        }
    }
    let got = serde_json::to_value(&explained).expect("plain data serializes");
    if let Some(want) = &c.expect.json
        && &got != want
    {
        errs.push(format!("json:\n    want {want}\n    got  {got}"));
    }
    let all = format!("{got}\n{}\n{}", explain.join("\n"), unmanaged.join("\n"));
    for h in &c.expect.hidden {
        if all.contains(h.as_str()) {
            errs.push(format!("the result shows {h:?}"));
        }
    }
    errs
}

#[test]
fn explain_conformance() {
    let files = yaml_files(&["diff/explain"]);
    let (mut passed, mut failures) = (0, Vec::new());
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !selected(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("case file");
        let case: Case = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!case.source.is_empty(), "{name}: source is required");
        assert_eq!(format!("{}.yaml", case.case), name, "case name matches the file");
        let errs = run_case(&case);
        if errs.is_empty() {
            passed += 1;
        } else {
            failures.push(format!("{}: {}", case.case, errs.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{} failed:\n{}", failures.len(), failures.join("\n"));
    if std::env::var("GITOPS_TEST").is_err() {
        assert!(passed >= 10, "only {passed} explain cases ran");
    }
}
