//! The diff conformance runner: every case under `testdata/diff/cases/` and
//! `testdata/diff/annotation/` (one YAML file per case, see `testdata/diff/README.md`), run
//! through the public API only. A case needing `jq` is left out without the `jq` feature.
//!
//! A case may declare `needs: [smp]` or `needs: [ignore]`: it depends on a part of the engine
//! that is merged separately. While that part is not listed in [`MERGED`], a failure of such a
//! case is reported (printed with its reason) and counted as pending instead of failing the
//! test; once listed, the case must pass like any other.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::support::{read, selected, yaml_files};
use crate::diff::{self, AppDiffInput, DiffOptions};
use crate::schema::OpenApiSchema;
use crate::{config::Application, config::Settings, object::Scopes};

/// Parts of the engine merged in this tree; cases needing anything else may fail (reported).
const MERGED: &[&str] = &["smp", "ignore", "jq"];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Case {
    case: String,
    source: String,
    #[serde(default)]
    needs: Vec<String>,
    run: Run,
    #[serde(default)]
    desired: Value,
    #[serde(default)]
    live: Value,
    #[serde(default)]
    desired_set: BTreeMap<String, Value>,
    #[serde(default)]
    live_set: BTreeMap<String, Value>,
    #[serde(default)]
    desired_remove: Vec<String>,
    #[serde(default)]
    live_remove: Vec<String>,
    /// `desired`: live's last-applied annotation becomes the JSON of the (edited) desired.
    #[serde(default)]
    live_last_applied: Option<String>,
    #[serde(default)]
    options: Opts,
    /// App-level `ignoreDifferences` (run: app).
    #[serde(default)]
    ignore_differences: Value,
    /// The Application (run: app); defaults to an empty one.
    #[serde(default)]
    app: Value,
    /// `argocd-cm` data (run: app).
    #[serde(default)]
    argocd_cm: Value,
    /// An AppProject (run: app): its `orphanedResources` are looked for among `live`.
    #[serde(default)]
    project: Value,
    /// Cluster Secrets or `{name, server, project}` maps the host knows (run: app with
    /// `project`): the project's `clusters`.
    #[serde(default)]
    clusters: Vec<Value>,
    /// The apps that exist, passed to `Orphans::new` (run: app with `project`).
    #[serde(default)]
    apps: Option<Vec<String>>,
    /// Annotation keys to mask (run: mask).
    #[serde(default)]
    hide_annotations: Vec<String>,
    /// Managers (run: managedFields).
    #[serde(default)]
    managers: Vec<String>,
    expect: Expect,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "camelCase")]
enum Run {
    Diff,
    App,
    Mask,
    ManagedFields,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Opts {
    #[serde(default)]
    ignore_aggregated_roles: bool,
    #[serde(default)]
    structured_merge: bool,
    #[serde(default)]
    server_side_diff: bool,
    #[serde(default)]
    dry_run: Value,
    #[serde(default)]
    ignore_mutation_webhook: Option<bool>,
    /// A stand-in full normaliser that removes these pointers (the `Normalizer` hook).
    #[serde(default)]
    normalizer_removes: Vec<String>,
    /// An OpenAPI v2 document with custom resources' schemas (inline or `@file`).
    #[serde(default)]
    openapi: Value,
    /// run: app: `AppDiffInput::with_ignore_annotation` (default on).
    #[serde(default)]
    ignore_annotation: Option<bool>,
    /// run: app: the ignore rules are compiled by the test and lent to the diff
    /// (`with_ignore_rules`), with `IgnoreNormalizer::with_annotation(lent_annotation)`.
    #[serde(default)]
    lent_annotation: Option<bool>,
    /// run: app: `AppDiffInput::with_objects` (default on; off is what hosts run by default).
    #[serde(default)]
    keep_objects: Option<bool>,
}

/// Removes fixed pointers: exercises the normaliser hook of `diff()` without the ignore engine.
struct RemovePointers(Vec<String>);

impl crate::diff::Normalizer for RemovePointers {
    fn normalize(&self, obj: &mut Value) {
        edit(obj, &BTreeMap::new(), &self.0);
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    modified: Option<bool>,
    mode: Option<String>,
    error: Option<String>,
    /// Pointer → exact value, on the predicted (run: diff) or desired/target (mask,
    /// managedFields) side.
    #[serde(default)]
    predicted: BTreeMap<String, Value>,
    #[serde(default)]
    live: BTreeMap<String, Value>,
    #[serde(default)]
    predicted_absent: Vec<String>,
    #[serde(default)]
    live_absent: Vec<String>,
    /// Strings that must (not) occur in the JSON of either output.
    #[serde(default)]
    output_contains: Vec<String>,
    #[serde(default)]
    output_lacks: Vec<String>,
    /// Mask: pointers into the parsed last-applied annotations.
    #[serde(default)]
    target_last_applied: BTreeMap<String, Value>,
    #[serde(default)]
    live_last_applied: BTreeMap<String, Value>,
    /// App: the sync status, and every resource in order.
    sync_status: Option<String>,
    resources: Option<Vec<ExpectResource>>,
    #[serde(default)]
    conditions: Option<Vec<ExpectCondition>>,
    hooks: Option<usize>,
    /// App: the notes about objects left out.
    notes: Option<Vec<String>>,
    /// App with `project`: the orphaned resources (`group/Kind/namespace/name`) and the
    /// `OrphanedResourceWarning` message (`""` for none).
    orphans: Option<Vec<String>>,
    orphan_warning: Option<String>,
    /// App: pointer checks on one resource's outputs, by `group/Kind/namespace/name`.
    #[serde(default)]
    resource: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectResource {
    key: String,
    status: String,
    #[serde(default)]
    modified: bool,
    #[serde(default)]
    requires_pruning: bool,
    #[serde(default)]
    requires_deletion_confirmation: bool,
    #[serde(default)]
    hook: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct ExpectCondition {
    #[serde(rename = "type")]
    type_: String,
    message: String,
}

/// An input: an inline object, `null`, or `@path` (`@path#n` for the n-th object) of a file
/// under `testdata/diff/`.
pub(super) fn load(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with('@') => {
            let (path, index) = match s[1..].split_once('#') {
                Some((p, i)) => (p, i.parse::<usize>().expect("document index")),
                None => (&s[1..], 0),
            };
            let text = read(&format!("diff/{path}"));
            let docs = crate::object::parse_documents(&text).unwrap_or_else(|e| panic!("{s}: {e}"));
            docs.into_iter().filter(|d| !d.is_null()).nth(index).unwrap_or(Value::Null)
        }
        other => other.clone(),
    }
}

pub(super) fn load_list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.iter().map(load).filter(|v| !v.is_null()).collect(),
        Value::Null => Vec::new(),
        other => vec![load(other)],
    }
}

fn edit(obj: &mut Value, set: &BTreeMap<String, Value>, remove: &[String]) {
    for (ptr, val) in set {
        let (parent, last) = ptr.rsplit_once('/').expect("pointer");
        let last = last.replace("~1", "/").replace("~0", "~");
        match obj.pointer_mut(parent) {
            Some(Value::Object(m)) => {
                m.insert(last, val.clone());
            }
            _ => panic!("edit: no object at {parent}"),
        }
    }
    for ptr in remove {
        let (parent, last) = ptr.rsplit_once('/').expect("pointer");
        let last = last.replace("~1", "/").replace("~0", "~");
        if let Some(Value::Object(m)) = obj.pointer_mut(parent) {
            m.remove(&last);
        }
    }
}

/// Every `contains` string is in the rendered `text`, and no `lacks` string is.
fn check_output(text: &str, contains: &[String], lacks: &[String], errs: &mut Vec<String>) {
    for s in contains.iter().filter(|s| !text.contains(s.as_str())) {
        errs.push(format!("outputs lack {s:?}"));
    }
    for s in lacks.iter().filter(|s| text.contains(s.as_str())) {
        errs.push(format!("outputs contain {s:?}"));
    }
}

fn check_pointers(
    what: &str,
    obj: &Value,
    want: &BTreeMap<String, Value>,
    absent: &[String],
    errs: &mut Vec<String>,
) {
    for (ptr, v) in want {
        match obj.pointer(ptr) {
            Some(got) if got == v => {}
            got => errs.push(format!(
                "{what}{ptr}: want {v}, got {}",
                got.map_or("absent".into(), Value::to_string)
            )),
        }
    }
    for ptr in absent {
        if let Some(got) = obj.pointer(ptr) {
            errs.push(format!("{what}{ptr}: want absent, got {got}"));
        }
    }
}

fn run_case(c: &Case) -> Vec<String> {
    let mut errs = Vec::new();
    let mut desired = load(&c.desired);
    let mut live = load(&c.live);
    if !desired.is_null() {
        edit(&mut desired, &c.desired_set, &c.desired_remove);
    }
    if !live.is_null() {
        edit(&mut live, &c.live_set, &c.live_remove);
    }
    if c.live_last_applied.as_deref() == Some("desired") {
        let text = serde_json::to_string(&desired).unwrap_or_default();
        let mut set = BTreeMap::new();
        set.insert(
            "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration".to_string(),
            Value::String(text),
        );
        edit(&mut live, &set, &[]);
    }
    let e = &c.expect;
    match c.run {
        Run::Diff => {
            let dry_run = load(&c.options.dry_run);
            let mut opts = DiffOptions::default()
                .with_ignore_aggregated_roles(c.options.ignore_aggregated_roles)
                .with_structured_merge(c.options.structured_merge);
            if c.options.server_side_diff {
                opts = opts.with_server_side_diff((!dry_run.is_null()).then_some(&dry_run));
            }
            if let Some(w) = c.options.ignore_mutation_webhook {
                opts = opts.with_ignore_mutation_webhook(w);
            }
            let openapi = load(&c.options.openapi);
            let compiled = (!openapi.is_null()).then(|| OpenApiSchema::compile(&openapi));
            if let Some(compiled) = &compiled {
                opts = opts.with_openapi(compiled);
            }
            let normalizer = RemovePointers(c.options.normalizer_removes.clone());
            if !normalizer.0.is_empty() {
                opts = opts.with_normalizer(&normalizer);
            }
            let r = diff::diff(
                (!desired.is_null()).then_some(&desired),
                (!live.is_null()).then_some(&live),
                &opts,
            );
            let r = match (r, &e.error) {
                (Err(err), Some(want)) => {
                    if &err.to_string() != want {
                        errs.push(format!("error: want {want:?}, got {:?}", err.to_string()));
                    }
                    return errs;
                }
                (Err(err), None) => return vec![format!("unexpected error: {err}")],
                (Ok(_), Some(want)) => return vec![format!("want error {want:?}, got a result")],
                (Ok(r), None) => r,
            };
            if let Some(m) = e.modified
                && m != r.modified
            {
                errs.push(format!("modified: want {m}, got {}", r.modified));
            }
            if let Some(mode) = &e.mode {
                let got = serde_json::to_value(r.mode).unwrap_or_default();
                if got.as_str() != Some(mode) {
                    errs.push(format!("mode: want {mode}, got {got}"));
                }
            }
            check_pointers(
                "predicted",
                &r.predicted_live,
                &e.predicted,
                &e.predicted_absent,
                &mut errs,
            );
            check_pointers("live", &r.normalized_live, &e.live, &e.live_absent, &mut errs);
            let text = format!("{} {}", r.normalized_live, r.predicted_live);
            check_output(&text, &e.output_contains, &e.output_lacks, &mut errs);
        }
        Run::Mask => {
            let (t, l) = diff::hide_secret_data(
                (!desired.is_null()).then_some(&desired),
                (!live.is_null()).then_some(&live),
                &c.hide_annotations,
            );
            let (t, l) = (t.unwrap_or_default(), l.unwrap_or_default());
            check_pointers("target", &t, &e.predicted, &e.predicted_absent, &mut errs);
            check_pointers("live", &l, &e.live, &e.live_absent, &mut errs);
            let la = |o: &Value| {
                o.pointer("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration")
                    .and_then(Value::as_str)
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .unwrap_or_default()
            };
            check_pointers("targetLastApplied", &la(&t), &e.target_last_applied, &[], &mut errs);
            check_pointers("liveLastApplied", &la(&l), &e.live_last_applied, &[], &mut errs);
            check_output(&format!("{t} {l}"), &e.output_contains, &[], &mut errs);
        }
        Run::ManagedFields => {
            diff::normalize_managed_fields(&mut live, &mut desired, &c.managers);
            check_pointers("desired", &desired, &e.predicted, &e.predicted_absent, &mut errs);
            check_pointers("live", &live, &e.live, &e.live_absent, &mut errs);
        }
        Run::App => run_app(c, &mut errs),
    }
    errs
}

/// The JSON text of a comparison.
fn json_text(d: &diff::AppDiff) -> String {
    serde_json::to_string(d).expect("plain data")
}

fn run_app(c: &Case, errs: &mut Vec<String>) {
    let e = &c.expect;
    let mut desired = load_list(&c.desired);
    let live = load_list(&c.live);
    for d in &mut desired {
        edit(d, &c.desired_set, &c.desired_remove);
    }
    let mut app_doc = if c.app.is_null() { serde_json::json!({}) } else { load(&c.app) };
    if !c.ignore_differences.is_null() {
        app_doc["spec"]["ignoreDifferences"] = c.ignore_differences.clone();
    }
    let app = Application::from_value(&app_doc).expect("app");
    let settings = if c.argocd_cm.is_null() {
        Settings::default()
    } else {
        Settings::from_config_map(&serde_json::json!({"data": c.argocd_cm})).expect("argocd-cm")
    };
    let scopes = Scopes::builtin();
    let openapi = load(&c.options.openapi);
    let compiled = (!openapi.is_null()).then(|| OpenApiSchema::compile(&openapi));
    let lent = c.options.lent_annotation.map(|on| {
        crate::ignore::IgnoreNormalizer::for_app(&app, &settings)
            .expect("rules compile")
            .with_annotation(on)
    });
    let project = (!c.project.is_null()).then(|| {
        let mut p = crate::project::AppProject::from_value(&c.project).expect("project");
        p.clusters = c
            .clusters
            .iter()
            .map(|v| crate::project::Cluster::from_value(v).expect("cluster"))
            .collect();
        p
    });
    let mut input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes)
        .with_objects(c.options.keep_objects.unwrap_or(true))
        .with_ignore_annotation(c.options.ignore_annotation.unwrap_or(true));
    if let Some(project) = &project {
        input = input.with_project(project);
    }
    if let Some(compiled) = &compiled {
        input = input.with_openapi(compiled);
    }
    if let Some(rules) = &lent {
        input = input.with_ignore_rules(rules);
    }
    let out = match diff::diff_app(&input) {
        Ok(o) => o,
        Err(err) => {
            errs.push(format!("unexpected error: {err}"));
            return;
        }
    };
    // The same objects handed over give the same answer, byte for byte.
    let lent_none = AppDiffInput { desired: &[], live: &[], ..input };
    match diff::diff_app_owned(&lent_none, desired.clone(), live.clone()) {
        Ok(owned) if owned == out && json_text(&owned) == json_text(&out) => {}
        other => errs.push(format!("diff_app_owned: want diff_app's {out:?}, got {other:?}")),
    }
    if let Some(s) = &e.sync_status
        && out.sync_status.as_str() != s
    {
        errs.push(format!("syncStatus: want {s}, got {}", out.sync_status.as_str()));
    }
    if let Some(want) = &e.resources {
        let got: Vec<ExpectResource> = out
            .resources
            .iter()
            .map(|r| ExpectResource {
                key: r.object.key(),
                status: r.status.map_or("", |s| s.as_str()).to_string(),
                modified: r.modified,
                requires_pruning: r.requires_pruning,
                requires_deletion_confirmation: r.requires_deletion_confirmation,
                hook: r.hook,
            })
            .collect();
        if &got != want {
            errs.push(format!("resources: want {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &e.conditions {
        let got: Vec<ExpectCondition> = out
            .conditions
            .iter()
            .map(|c| ExpectCondition { type_: c.type_.clone(), message: c.message.clone() })
            .collect();
        if &got != want {
            errs.push(format!("conditions: want {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &e.notes
        && &out.notes != want
    {
        errs.push(format!("notes: want {want:?}, got {:?}", out.notes));
    }
    if let Some(project) = &project {
        let o = crate::orphans::Orphans::new(
            project,
            &app,
            &settings,
            &scopes,
            &desired,
            &live,
            c.apps.as_deref(),
        );
        let got: Vec<String> = o.resources.iter().map(|r| r.key()).collect();
        if let Some(want) = &e.orphans
            && &got != want
        {
            errs.push(format!("orphans: want {want:?}, got {got:?}"));
        }
        let warning =
            o.condition.map(|c| format!("{}: {}", c.type_, c.message)).unwrap_or_default();
        if let Some(want) = &e.orphan_warning
            && &warning != want
        {
            errs.push(format!("orphanWarning: want {want:?}, got {warning:?}"));
        }
    }
    if let Some(n) = e.hooks
        && out.hooks.len() != n
    {
        errs.push(format!("hooks: want {n}, got {}", out.hooks.len()));
    }
    if let Some(key) = &e.resource {
        match out.resources.iter().find(|r| &r.object.key() == key) {
            None => errs.push(format!("no resource {key}")),
            Some(r) => {
                if let Some(m) = e.modified
                    && m != r.modified
                {
                    errs.push(format!("modified: want {m}, got {}", r.modified));
                }
                check_pointers(
                    "predicted",
                    &r.predicted_live,
                    &e.predicted,
                    &e.predicted_absent,
                    errs,
                );
                check_pointers("live", &r.normalized_live, &e.live, &e.live_absent, errs);
                let text = format!(
                    "{} {} {}",
                    r.normalized_live,
                    r.predicted_live,
                    out.render_text().unwrap_or_else(|e| e.to_string())
                );
                check_output(&text, &e.output_contains, &e.output_lacks, errs);
            }
        }
    }
}

#[test]
fn diff_conformance() {
    let files = yaml_files(&["diff/cases", "diff/annotation"]);
    let (mut passed, mut pending_failed, mut pending_passed) = (0, Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !selected(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("case file");
        let case: Case = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!case.source.is_empty(), "{name}: source is required");
        if case.needs.iter().any(|n| n == "jq") && !cfg!(feature = "jq") {
            continue;
        }
        let errs = run_case(&case);
        let pending: Vec<&String> =
            case.needs.iter().filter(|n| !MERGED.contains(&n.as_str())).collect();
        match (errs.is_empty(), pending.is_empty()) {
            (true, true) => passed += 1,
            (true, false) => pending_passed.push(case.case.clone()),
            (false, false) => pending_failed.push(format!(
                "{} (needs {:?}): {}",
                case.case,
                pending,
                errs.join("; ")
            )),
            (false, true) => failures.push(format!("{}: {}", case.case, errs.join("; "))),
        }
    }
    eprintln!(
        "diff conformance: {passed} passed, {} pending passed, {} pending failing, {} failed",
        pending_passed.len(),
        pending_failed.len(),
        failures.len()
    );
    for p in &pending_failed {
        eprintln!("  pending: {p}");
    }
    assert!(failures.is_empty(), "failing cases:\n{}", failures.join("\n"));
}

/// Issue 27 ("the answer depends on the clock"): a jq rule stopped by a counted limit gives the
/// same `Unknown` verdict on every run, while a stop by the host's backstop (a countdown here,
/// the CLI's and `serve`'s 1 s of wall clock in use) gives no verdict at all: `diff_app`
/// returns [`diff::DiffError::Interrupted`], which the caller tells apart and may retry.
#[cfg(feature = "jq")]
#[test]
fn the_host_backstop_decides_no_verdict() {
    use std::sync::Arc;

    use crate::ignore::IgnoreNormalizer;
    use crate::tests::support::Countdown;

    let cm = |v: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "shop"}, "data": {"a": v, "b": "x"}})
    };
    let (desired, live) = ([cm("1")], [cm("2")]);
    let rule: crate::config::IgnoreDifferences = serde_json::from_value(serde_json::json!(
        {"kind": "ConfigMap", "jqPathExpressions": [".data[] | select(test(\"x\"))"]}))
    .expect("rule");
    let settings = Settings::default();
    let rules = || IgnoreNormalizer::new(std::slice::from_ref(&rule), &settings).expect("rules");
    let (app, scopes) = (Application::default(), Scopes::builtin());
    let input = |rules| {
        AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_ignore_rules(rules)
    };

    // A counted limit: the same ComparisonError on every run.
    let counted = rules().with_jq_units(30);
    let verdicts: Vec<_> = (0..6)
        .map(|_| {
            let d = diff::diff_app(&input(&counted)).expect("a verdict");
            (d.sync_status, d.conditions.iter().map(|c| c.message.clone()).collect::<Vec<_>>())
        })
        .collect();
    assert!(verdicts.iter().all(|v| v == &verdicts[0]));
    assert_eq!(verdicts[0].0, diff::SyncStatus::Unknown);
    assert_eq!(
        verdicts[0].1,
        ["Failed to compare desired state to live state: ignoreDifferences[0]: jq path \
          expression `.data[] | select(test(\"x\"))` on ConfigMap:shop/settings: cost limit of \
          30 units exceeded; the rule was not applied"]
    );

    // The host's backstop: an error of its own, no verdict.
    let stopped = rules().with_interrupt(Arc::new(Countdown(2)));
    let err = diff::diff_app(&input(&stopped)).expect_err("no verdict");
    assert!(matches!(err, diff::DiffError::Interrupted { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "ignoreDifferences[0]: jq path expression `.data[] | select(test(\"x\"))` on \
         ConfigMap:shop/settings: stopped by the host: the test's countdown ran out; the rule \
         was not applied (the host's backstop, not a limit of the input: retry)"
    );
}

/// The crate-private pieces of `diff` (public until issue 26's cut), as their doc examples had
/// them: hosts reach them through `diff_app` (masking, managed fields) and `ObjectText`
/// (`classic`, `unified`).
mod pieces {
    use serde_json::json;

    use crate::diff;

    #[test]
    fn hide_secret_data_masks_equal_values_alike() {
        let target = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"a": "dGVzdA==", "b": "dGVzdA=="}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"a": "dGVzdA==", "b": "dGVzdC0x"}});
        let (t, l) = diff::hide_secret_data(Some(&target), Some(&live), &[]);
        let (t, l) = (t.unwrap(), l.unwrap());
        assert_eq!(t["data"], json!({"a": "++++++++", "b": "++++++++"}));
        assert_eq!(l["data"], json!({"a": "++++++++", "b": "++++++++++++"}));
    }

    #[test]
    fn unified_diff_names_both_sides() {
        let out = diff::unified_diff("a\nb\nc\n", "a\nB\nc\n", "live/x", "merged/x");
        assert_eq!(out, "--- live/x\n+++ merged/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }

    #[test]
    fn line_diff_is_the_classic_format() {
        let out = diff::line_diff("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(out, "2c2\n< b\n---\n> B\n3a4\n> d\n");
    }

    #[test]
    fn normalize_managed_fields_drops_a_trusted_managers_field() {
        let mut live = json!({"metadata": {"managedFields": [{"manager": "hpa", "operation": "Update",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}}]}, "spec": {"replicas": 5}});
        let mut desired = json!({"spec": {"replicas": 1}});
        diff::normalize_managed_fields(&mut live, &mut desired, &["hpa".to_string()]);
        assert_eq!(desired, json!({"spec": {}}));
    }
}

/// Live's `metadata.managedFields` is left out of its working copy (when the objects are not
/// kept) also for a kind a jq rule runs on, when that rule never looks at the field; a rule
/// that reads it keeps it. Either way the answer is the one with the objects kept, objects
/// aside: a rule reading the field decides on it (the Deployment's `team` label is ignored on
/// live only, because kubectl wrote the object there), and would decide otherwise without it.
#[cfg(feature = "jq")]
#[test]
fn jq_rules_that_never_read_managed_fields_give_the_same_answer_without_them() {
    use serde_json::json;

    let la = crate::config::LAST_APPLIED_ANNOTATION;
    let fields = json!([{"manager": "kubectl", "operation": "Update",
        "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"replicas": 1, "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "db:1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"]}}]}});
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"team": "a"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}});
    let live_of = |d: &Value, edit: &dyn Fn(&mut Value)| {
        let mut l = d.clone();
        l["metadata"]["annotations"] = json!({la: d.to_string()});
        l["metadata"]["managedFields"] = fields.clone();
        edit(&mut l);
        l
    };
    let live = [
        live_of(&sts, &|l| {
            l["spec"]["volumeClaimTemplates"][0]["status"] = json!({"phase": "Pending"});
            l["spec"]["template"]["spec"]["containers"][0]["image"] = json!("db:2");
        }),
        live_of(&deploy, &|l| l["metadata"]["labels"]["team"] = json!("b")),
    ];
    let desired = [sts.clone(), deploy.clone()];
    let app = Application::from_value(&json!({"metadata": {"name": ""},
    "spec": {"destination": {"namespace": "shop"}, "ignoreDifferences": [
        {"group": "apps", "kind": "StatefulSet",
         "jqPathExpressions": [".spec.volumeClaimTemplates[]?.status"]},
        {"group": "apps", "kind": "Deployment", "jqPathExpressions":
            ["select(.metadata.managedFields[0].manager == \"kubectl\") | .metadata.labels.team"]}
    ]}}))
    .expect("app");
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let compared = |objects: bool| {
        let input =
            AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(objects);
        let mut v = serde_json::to_value(diff::diff_app(&input).expect("a verdict")).unwrap();
        for r in v["resources"].as_array_mut().into_iter().flatten() {
            r.as_object_mut().unwrap().retain(|k, _| k != "normalizedLive" && k != "predictedLive");
        }
        v
    };
    let lean = compared(false);
    assert_eq!(lean, compared(true));
    let diffs: Vec<(&str, &Value)> = lean["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["object"]["kind"].as_str().unwrap(), &r["diff"]))
        .collect();
    // The StatefulSet's image drift is found, its claim template status ignored; the
    // Deployment's live label is ignored (kubectl wrote the object), so Git's is added back:
    // without the field the rule would not fire and the label would be replaced instead.
    assert_eq!(
        diffs,
        [
            ("Deployment", &json!([{"op": "add", "path": "/metadata/labels/team", "value": "a"}])),
            (
                "StatefulSet",
                &json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                    "value": "db:1"}])
            ),
        ]
    );
}

/// `diff_app` sorts live objects by the identities its targets already read (hooks, ignored
/// hooks, deletion-only hooks and repeated objects set aside still count as desired): the same
/// sorting as `ownership::ManagedLive::new`, which reads every desired object again.
#[test]
fn diff_app_sorts_live_objects_as_managed_live_does() {
    use serde_json::json;
    let obj = |kind: &str, name: &str, annotations: Value| {
        json!({"apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "namespace": "shop", "annotations": annotations}})
    };
    let desired = [
        obj("ConfigMap", "plain", json!({})),
        obj("ConfigMap", "hook", json!({"argocd.argoproj.io/hook": "PreSync"})),
        obj("ConfigMap", "ignored", json!({"argocd.argoproj.io/hook": "Garbage"})),
        obj("ConfigMap", "deletion", json!({"argocd.argoproj.io/hook": "PostDelete"})),
        obj("ConfigMap", "twice", json!({"a": "1"})),
        obj("ConfigMap", "twice", json!({"a": "2"})),
        obj("Secret", "excluded", json!({})),
    ];
    // Live copies without tracking: the app's only when desired.
    let mut live: Vec<Value> = desired
        .iter()
        .map(|d| {
            obj(d["kind"].as_str().unwrap(), d["metadata"]["name"].as_str().unwrap(), json!({}))
        })
        .collect();
    live.push(obj("ConfigMap", "stranger", json!({})));
    let app = Application::from_value(&json!({"metadata": {"name": "shop"},
        "spec": {"destination": {"namespace": "shop"}}}))
    .unwrap();
    let settings = Settings::from_config_map(&json!({"data": {"resource.exclusions":
        "- apiGroups: ['']\n  kinds: [Secret]\n  clusters: ['*']\n"}}))
    .unwrap();
    let scopes = Scopes::builtin();
    let sorted = crate::ownership::ManagedLive::new(&desired, &live, &app, &settings, &scopes);
    let out =
        diff::diff_app(&AppDiffInput::new(&desired, &live, &app, &settings, &scopes)).unwrap();
    assert_eq!(out.unmanaged, sorted.unmanaged);
    let names: Vec<&str> = out.unmanaged.iter().map(|u| u.object.name.as_str()).collect();
    assert_eq!(names, ["stranger", "excluded"]);
    assert_eq!(sorted.managed.len(), 6);
}

/// Live objects read with their `metadata.managedFields` left out
/// (`ParseOptions::leave_out_managed_fields`) get the answer of the full reading whenever
/// `AppDiffInput::reads_live_managed_fields` says the comparison cannot read them: on the
/// benchmark's workload (its ignore rules, a jq rule among them), a Secret, a custom resource,
/// a live object nothing desires; and with objects whose field counts (a last-applied
/// annotation holding one, a `time` a typed reading refuses), where the reader reads the text
/// in full: without their fields the answer would change. (The workload's app has a jq rule.)
#[cfg(feature = "jq")]
#[test]
fn live_managed_fields_left_out_give_the_same_answer() {
    use serde_json::json;

    use crate::object::ParseOptions;

    let w = gitops_core_testkit::workload::workload_of(24);
    let mf = json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl",
        "operation": "Update", "time": "2026-11-20T09:14:03Z",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]);
    let la = crate::config::LAST_APPLIED_ANNOTATION;
    let pair = |desired: Value, edit: &dyn Fn(&mut Value)| {
        let mut live = desired.clone();
        live["metadata"]["annotations"] = json!({la: desired.to_string()});
        live["metadata"]["managedFields"] = mf.clone();
        edit(&mut live);
        (desired, live)
    };
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "namespace": "bench"}, "data": {"k": "YQ=="}});
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "bench"}, "spec": {"n": 1}});
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "bench", "labels": {"app": "d"}},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "d", "image": "d:1"}]}}}});
    let mut extra = vec![
        pair(secret, &|l| l["data"]["k"] = json!("Yg==")),
        pair(widget, &|l| l["spec"]["n"] = json!(2)),
        pair(deploy.clone(), &|l| {
            // Its last-applied object has the field: the prediction removes live's.
            let mut applied = l["metadata"]["annotations"][la]
                .as_str()
                .map(|t| serde_json::from_str::<Value>(t).expect("JSON"));
            if let Some(a) = applied.as_mut() {
                a["metadata"]["managedFields"] = mf.clone();
            }
            l["metadata"]["annotations"][la] = json!(applied.map(|a| a.to_string()));
        }),
    ];
    let mut renamed = deploy.clone();
    renamed["metadata"]["name"] = json!("e");
    extra.push(pair(renamed, &|l| l["metadata"]["managedFields"][0]["time"] = json!("yesterday")));
    let (mut desired, mut live) = (w.desired.clone(), w.live.clone());
    let counting = extra.split_off(2);
    for (d, l) in extra.into_iter().chain(counting.clone()) {
        desired.push(d);
        live.push(l);
    }
    let mut orphan = live[0].clone();
    orphan["metadata"]["name"] = json!("nothing-desires-it");
    live.push(orphan);
    let app =
        &Application::from_value(&gitops_core_testkit::workload::app_document()).expect("app");
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let answer = |live: &[Value], reveal: bool| {
        let input =
            AppDiffInput::new(&desired, live, app, &settings, &scopes).with_reveal_secrets(reveal);
        assert!(!input.reads_live_managed_fields());
        serde_json::to_string(&diff::diff_app(&input).expect("a verdict")).expect("JSON")
    };
    let with_field = |objects: &[Value]| {
        objects.iter().filter(|o| o.pointer("/metadata/managedFields").is_some()).count()
    };
    let stripped = crate::tests::support::without_managed_fields;
    // Without the two objects whose field counts, every field is left out; with them, the
    // text is read in full.
    let n = live.len();
    let without_counting: Vec<Value> = live
        .iter()
        .enumerate()
        .filter(|(i, _)| *i + 3 != n && *i + 2 != n)
        .map(|(_, o)| o.clone())
        .collect();
    for (objects, all_left_out) in [(without_counting, true), (live.clone(), false)] {
        let text = json!({"apiVersion": "v1", "kind": "List", "items": objects}).to_string();
        let full = ParseOptions::default().parse_manifests(&text).expect("reads").objects;
        let lean = ParseOptions::default().with_leave_out_managed_fields(true);
        let lean = lean.parse_manifests(&text).expect("reads").objects;
        assert!(with_field(&full) > 0);
        if all_left_out {
            assert_eq!((with_field(&lean), &lean), (0, &stripped(&full)));
        } else {
            assert_eq!(lean, full);
        }
        for reveal in [false, true] {
            assert_eq!(answer(&lean, reveal), answer(&full, reveal));
        }
    }
    // The fields kept count: stripped by hand, the answer is not the same.
    let full = ParseOptions::default();
    let text = json!({"apiVersion": "v1", "kind": "List", "items": live}).to_string();
    let full = full.parse_manifests(&text).expect("reads").objects;
    assert_ne!(answer(&stripped(&full), false), answer(&full, false));
}

/// `AppDiffInput::reads_live_managed_fields` is `true` whenever the comparison may read live's
/// `metadata.managedFields`: kept objects, server-side diff (dry runs, the app's option,
/// server-side apply), `managedFieldsManagers` of the app or of `argocd-cm`, a jq rule that
/// may look at the field, a desired object with the field or with its own ignore annotation;
/// and `false` for a jq rule that cannot.
#[test]
fn reads_live_managed_fields_names_every_reader() {
    use serde_json::json;

    let app = |spec: Value| {
        let mut doc =
            json!({"metadata": {"name": "a"}, "spec": {"destination": {"namespace": "n"}}});
        for (k, v) in spec.as_object().into_iter().flatten() {
            doc["spec"][k] = v.clone();
        }
        Application::from_value(&doc).expect("app")
    };
    let cm = |data: Value| {
        Settings::from_config_map(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm"}, "data": data}))
        .expect("settings")
    };
    let jq = |expr: &str| {
        json!({"ignoreDifferences": [{"group": "*", "kind": "*",
        "jqPathExpressions": [expr]}]})
    };
    let plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let mut with_mf = plain.clone();
    with_mf["metadata"]["managedFields"] = json!([]);
    let mut annotated = plain.clone();
    annotated["metadata"]["annotations"] =
        json!({"gitops-core.io/ignore-differences": "jsonPointers: [/data]"});
    let scopes = Scopes::builtin();
    let none = Settings::default();
    type Edit = for<'a> fn(AppDiffInput<'a>) -> AppDiffInput<'a>;
    let cases: Vec<(bool, Application, Settings, Vec<Value>, Edit)> = vec![
        (false, app(json!({})), none.clone(), vec![plain.clone()], |i| i),
        // Without the jq feature a jq rule does not compile: `true`, conservatively.
        (!cfg!(feature = "jq"), app(jq(".spec.template")), none.clone(), vec![], |i| i),
        (true, app(jq(".metadata.managedFields[0].manager")), none.clone(), vec![], |i| i),
        (true, app(jq(".. | select(. == 1)")), none.clone(), vec![], |i| i),
        (
            true,
            app(json!({"ignoreDifferences": [{"group": "apps", "kind": "Deployment",
            "managedFieldsManagers": ["hpa"]}]})),
            none.clone(),
            vec![],
            |i| i,
        ),
        (
            true,
            app(json!({})),
            cm(json!({"resource.customizations.ignoreDifferences.all":
            "managedFieldsManagers: [hpa]"})),
            vec![],
            |i| i,
        ),
        (
            true,
            app(json!({})),
            cm(json!({"resource.customizations.ignoreDifferences.all":
            "jqPathExpressions: ['.metadata.managedFields']"})),
            vec![],
            |i| i,
        ),
        (true, app(json!({})), none.clone(), vec![], |i| i.with_objects(true)),
        (true, app(json!({})), none.clone(), vec![], |i| i.with_dry_runs(&[])),
        (
            true,
            app(json!({"syncPolicy": {"syncOptions": ["ServerSideApply=true"]}})),
            none.clone(),
            vec![],
            |i| i,
        ),
        (true, app(json!({})), none.clone(), vec![with_mf], |i| i),
        (true, app(json!({})), none.clone(), vec![annotated.clone()], |i| i),
        (false, app(json!({})), none.clone(), vec![annotated], |i| i.with_ignore_annotation(false)),
    ];
    for (i, (reads, app, settings, desired, edit)) in cases.iter().enumerate() {
        let input = edit(AppDiffInput::new(desired, &[], app, settings, &scopes));
        assert_eq!(input.reads_live_managed_fields(), *reads, "case {i}");
    }
}

/// A last-applied annotation whose `managedFields` key is spelt with a JSON escape
/// (`managedFi\u0065lds`) still holds the field: live's working copy keeps it when the objects
/// are not kept, and the prediction removes it as it does with the objects kept (before, only
/// the key's plain spelling was looked for, and the patch lost its `remove`).
#[test]
fn escaped_managed_fields_in_last_applied_are_seen() {
    use serde_json::json;

    let la = crate::config::LAST_APPLIED_ANNOTATION;
    let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "shop"}, "data": {"a": "1"}});
    let mut live = desired.clone();
    let applied = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop","managedFi\u0065lds":[{"manager":"kubectl"}]},"data":{"a":"1"}}"#;
    live["metadata"]["annotations"] = json!({la: applied});
    live["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Update"}]);
    let (desired, live) = ([desired], [live]);
    let (app, settings, scopes) = (Application::default(), Settings::default(), Scopes::builtin());
    let patch = |objects: bool| {
        let input =
            AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(objects);
        let r = diff::diff_app(&input).expect("a verdict");
        serde_json::to_value(&r.resources[0].diff).expect("JSON")
    };
    assert_eq!(patch(true), json!([{"op": "remove", "path": "/metadata/managedFields"}]));
    assert_eq!(patch(false), patch(true));
}
