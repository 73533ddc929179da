//! The invariants the fuzz targets in `fuzz/` check, one function per target, taking the raw
//! fuzzer input. Not part of the supported API: compiled only for the library's tests and
//! with the dev-only `fuzzing` feature, which `fuzz/Cargo.toml` turns on.
//!
//! They live in the library so that the fuzz targets and the replay test
//! (`src/tests/fuzz_replay.rs`, which runs every input kept under `testdata/fuzz/<target>/`)
//! check exactly the same thing, and so that the strategic merge target can reach the
//! crate-internal patch functions. Each function returns normally when the input is
//! uninteresting or the invariants hold, and panics with a description when one is broken:
//! unlike the rest of the library, panicking is its job.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used, clippy::expect_used)]

mod input;

use serde_json::{Map, Value, json};

use crate::config::{IgnoreDifferences, Settings};
use crate::diff::{DiffOptions, DiffResult};
use crate::health::{self, HealthContext, HealthStatus};
use crate::ignore::IgnoreNormalizer;
use crate::object::ObjectRef;
use crate::sync::{LiveObject, Observations, Plan, SyncRequest, TaskAction};

use input::{Gen, as_float64, has_directive, has_duplicates, is_reduction, split, strip_nulls};

/// The check of one target: returns when the input holds, panics when it breaks an invariant.
pub type Check = fn(&[u8]);

/// The fuzz targets, by name (the file names under `fuzz/fuzz_targets/` and the folders under
/// `testdata/fuzz/`), with their check.
pub const TARGETS: &[(&str, Check)] = &[
    ("parse_manifests", parse_manifests),
    ("diff", diff),
    ("strategic_merge", strategic_merge),
    ("ignore_rules", ignore_rules),
    ("health_assess", health_assess),
    #[cfg(feature = "lua")]
    ("lua_eval", lua_eval),
    ("plan_build", plan_build),
];

/// The identity fields every generated object gets.
fn object(api_version: &str, kind: &str, name: &str, mut rest: Map<String, Value>) -> Value {
    rest.insert("apiVersion".into(), json!(api_version));
    rest.insert("kind".into(), json!(kind));
    let meta = rest.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta["name"] = json!(name);
    Value::Object(rest)
}

// ---------------------------------------------------------------------------------------
// parse_manifests

/// [`crate::object::parse_manifests`] on any text: never panics, deterministic, every object has an
/// identity, and the objects survive a JSON round trip through the parser unchanged.
pub fn parse_manifests(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let first = crate::object::parse_manifests(text);
    let second = crate::object::parse_manifests(text);
    assert_eq!(first, second, "parsing is deterministic");
    let Ok(objs) = first else { return };
    for obj in &objs {
        ObjectRef::from_object(obj).expect("parsed objects have an identity");
    }
    let json = serde_json::to_string(&objs).expect("values serialize");
    let again = crate::object::parse_manifests(&json).expect("our own JSON parses");
    assert_eq!(again, objs, "objects re-parse equal from their JSON");
    for obj in &objs {
        let one = serde_json::to_string(obj).expect("values serialize");
        let again = crate::object::parse_manifests(&one).expect("one object's JSON parses");
        assert_eq!(again, vec![obj.clone()], "each object re-parses alone");
    }
}

// ---------------------------------------------------------------------------------------
// diff

/// Kinds the diff and merge targets build objects of: built-in kinds (strategic merge patch),
/// a custom resource (JSON merge patch), and the kinds with normalisation rules.
const DIFF_KINDS: &[(&str, &str)] = &[
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("example.com/v1", "Widget"),
];

/// A Kubernetes-shaped object of one of [`DIFF_KINDS`] from the generator.
fn gen_object(g: &mut Gen<'_>, extra_keys: &[&str]) -> Value {
    let (api, kind) = DIFF_KINDS[g.below(DIFF_KINDS.len())];
    let mut rest = g.map(3, extra_keys);
    if g.bool() {
        let containers: Vec<Value> = (0..g.below(3))
            .map(|_| {
                let mut c = g.map(2, extra_keys);
                c.insert("name".into(), json!(g.pick(&["a", "b", "c"])));
                Value::Object(c)
            })
            .collect();
        rest.insert("spec".into(), json!({"template": {"spec": {"containers": containers}}}));
    }
    object(api, kind, "n", rest)
}

/// Desired, live, dry-run result and option flags.
type DiffInput = (Option<Value>, Option<Value>, Option<Value>, u8);

/// The diff input from the fuzzer bytes.
fn diff_input(data: &[u8]) -> Option<DiffInput> {
    let (is_json, rest) = split(data);
    if is_json {
        // `{"desired": ..., "live": ..., "dryRun": ..., "flags": n}`, any part optional.
        let v: Value = serde_json::from_slice(rest).ok()?;
        let part = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
        let flags = v.get("flags").and_then(Value::as_u64).unwrap_or(0);
        return Some((part("desired"), part("live"), part("dryRun"), (flags & 0xff) as u8));
    }
    let mut g = Gen::new(rest);
    let flags = g.byte();
    let desired = gen_object(&mut g, &[]);
    let mut live = desired.clone();
    g.edit(&mut live, &[]);
    if g.bool() {
        let mut orig = desired.clone();
        g.edit(&mut orig, &[]);
        let text = if g.below(8) == 0 { g.raw(16) } else { orig.to_string() };
        if let Some(meta) = live.get_mut("metadata").and_then(Value::as_object_mut) {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Some(a) = annotations.as_object_mut() {
                a.insert("kubectl.kubernetes.io/last-applied-configuration".into(), json!(text));
            }
        }
    }
    let mut dry_run = desired.clone();
    g.edit(&mut dry_run, &[]);
    let (desired, live) = match g.below(8) {
        0 => (None, Some(live)),
        1 => (Some(desired), None),
        _ => (Some(desired), Some(live)),
    };
    Some((desired, live, Some(dry_run), flags))
}

/// The options the flag bits select.
fn diff_options(flags: u8, dry_run: Option<&Value>) -> DiffOptions<'_> {
    let mut opts = DiffOptions::default()
        .with_ignore_aggregated_roles(flags & 1 != 0)
        .with_structured_merge(flags & 2 != 0)
        .with_ignore_mutation_webhook(flags & 4 == 0);
    if flags & 8 != 0 {
        opts = opts.with_server_side_diff(dry_run);
    }
    opts
}

/// Applies the RFC 6902 operations of a result to its normalised live object.
fn apply_result_patch(r: &DiffResult) -> Value {
    let ops = serde_json::to_value(&r.patch).expect("operations serialize");
    let patch: json_patch::Patch = serde_json::from_value(ops).expect("operations are RFC 6902");
    let mut doc = r.normalized_live.clone();
    json_patch::patch(&mut doc, &patch).expect("the patch applies to the normalised live object");
    doc
}

/// [`crate::diff::diff`] on generated pairs: never panics; deterministic to the byte; the
/// result round-trips through JSON; its patch applied to the normalised live object gives the
/// predicted live object exactly (and is empty when nothing is modified); an object (a JSON
/// object, without `null` members, directive keys or lists holding an element twice)
/// compared with itself is not modified, in structured-merge mode too.
pub fn diff(data: &[u8]) {
    let Some((desired, live, dry_run, flags)) = diff_input(data) else { return };
    let opts = diff_options(flags, dry_run.as_ref());
    let run = || crate::diff::diff(desired.as_ref(), live.as_ref(), &opts);
    let (first, second) = (run(), run());
    match (&first, &second) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (serde_json::to_vec(a).unwrap(), serde_json::to_vec(b).unwrap());
            assert_eq!(a, b, "the result is deterministic to the byte");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "errors are deterministic"),
        _ => panic!("one run failed and the other did not: {first:?} / {second:?}"),
    }
    if let Ok(r) = &first {
        let bytes = serde_json::to_vec(r).unwrap();
        let back: DiffResult = serde_json::from_slice(&bytes).expect("a result parses back");
        assert_eq!(&back, r, "the result round-trips through JSON");
        if r.modified {
            assert!(!r.patch.is_empty() || r.normalized_live == r.predicted_live);
            if r.normalized_live != Value::Null || !r.patch.is_empty() {
                assert_eq!(apply_result_patch(r), r.predicted_live, "patch gives predicted live");
            }
        } else {
            assert!(r.patch.is_empty(), "an unmodified result has no operations");
        }
        match (&desired, &live) {
            (None, _) => assert!(!r.modified && r.predicted_live.is_null()),
            (_, None) => assert!(r.modified && r.normalized_live.is_null()),
            _ => {}
        }
    }
    // Self-comparison (server-side diff compares with a dry run, not with the object). A
    // `null` member of a desired object means "remove the field" in a merge patch, as in
    // kubectl and Argo CD, so an object holding one differs from itself once applied.
    // Lists holding an element twice (by value or merge key) do not survive a strategic merge
    // patch, and directive keys (`$patch`, ...) in the data are obeyed when the patch is
    // applied, in the object or in its last-applied configuration (as in kubectl).
    let irregular = |o: &Value| {
        let last = o
            .pointer("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok());
        let odd = |v: &Value| has_duplicates(v) || has_directive(v);
        odd(o) || last.as_ref().is_some_and(odd)
    };
    if flags & 8 == 0 {
        for obj in [&desired, &live]
            .into_iter()
            .flatten()
            .filter(|o| o.is_object() && strip_nulls(o) == **o && !irregular(o))
        {
            // Normalisation can write a `null` too (a Secret's `data: {}`, an aggregated role's
            // `rules`, as in Argo CD), with the same effect.
            if let Ok(r) = crate::diff::diff(Some(obj), Some(obj), &opts)
                && strip_nulls(&r.normalized_live) == r.normalized_live
            {
                assert!(!r.modified, "an object compared with itself is modified: {obj}\n{r:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// strategic_merge

/// `(group, version, kind)` of the built-in kinds the merge target patches.
const SMP_KINDS: &[(&str, &str, &str)] = &[
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
    ("", "v1", "ConfigMap"),
    ("batch", "v1", "Job"),
];

/// Strategic merge patches (creation and application, two- and three-way) on generated
/// objects of built-in kinds and on arbitrary patches full of directives: never panics,
/// deterministic; without directives in the documents and without lists holding an element
/// twice (by value, or by a merge key), applying the two-way patch from `a`
/// to `b` gives `b`, and the three-way patch gives `modified` when the live object equals
/// the original or already equals `modified` (all up to `null` members, which a merge patch
/// cannot express).
pub fn strategic_merge(data: &[u8]) {
    use crate::diff::{apply_strategic_patch, three_way_strategic_patch, two_way_strategic_patch};
    let (is_json, rest) = split(data);
    let (gvk, a, b, c, p) = if is_json {
        // `{"kind": i, "a": ..., "b": ..., "c": ..., "patch": ...}`.
        let Ok(v) = serde_json::from_slice::<Value>(rest) else { return };
        let i = v.get("kind").and_then(Value::as_u64).unwrap_or(0) as usize;
        let part = |k: &str| v.get(k).cloned().unwrap_or_else(|| json!({}));
        (SMP_KINDS[i % SMP_KINDS.len()], part("a"), part("b"), part("c"), part("patch"))
    } else {
        let mut g = Gen::new(rest);
        let gvk = SMP_KINDS[g.below(SMP_KINDS.len())];
        let a = gen_object(&mut g, &[]);
        let mut b = a.clone();
        g.edit(&mut b, &[]);
        let mut c = a.clone();
        g.edit(&mut c, &[]);
        let p = Value::Object(g.map(4, &[]));
        (gvk, a, b, c, p)
    };
    let (g, v, k) = gvk;
    // Arbitrary patches, directives included.
    let applied = apply_strategic_patch(&a, &p, g, v, k);
    assert_eq!(applied, apply_strategic_patch(&a, &p, g, v, k), "application is deterministic");
    if let Ok(out) = &applied {
        assert!(out.is_object(), "a patched object is an object");
    }
    let _ = apply_strategic_patch(&a, &b, g, v, k);
    let three = three_way_strategic_patch(&a, &b, &c, g, v, k);
    assert_eq!(three, three_way_strategic_patch(&a, &b, &c, g, v, k), "creation is deterministic");
    if let Ok(patch) = &three {
        let _ = apply_strategic_patch(&c, patch, g, v, k);
    }
    if [&a, &b, &c].iter().any(|v| has_directive(v) || has_duplicates(v)) {
        return;
    }
    // Numbers as Go's decoding holds them (float64): `2` and `2.0` are one value to the
    // merge, which keeps the original's.
    let expect = |got: Result<Value, _>, want: &Value, what: &str| {
        if let Ok(got) = got {
            assert_eq!(as_float64(&strip_nulls(&got)), as_float64(&strip_nulls(want)), "{what}");
        }
    };
    if let Ok(patch) = two_way_strategic_patch(&a, &b, g, v, k) {
        expect(apply_strategic_patch(&a, &patch, g, v, k), &b, "two-way patch a->b gives b");
    }
    if let Ok(patch) = three_way_strategic_patch(&a, &b, &a, g, v, k) {
        expect(apply_strategic_patch(&a, &patch, g, v, k), &b, "three-way, live = original");
    }
    if let Ok(patch) = three_way_strategic_patch(&a, &b, &b, g, v, k) {
        expect(apply_strategic_patch(&b, &patch, g, v, k), &b, "three-way, live = modified");
    }
}

// ---------------------------------------------------------------------------------------
// ignore_rules

/// Pointer tokens: keys, indices and escapes.
const POINTER_TOKENS: &[&str] = &[
    "spec",
    "metadata",
    "labels",
    "status",
    "containers",
    "env",
    "0",
    "1",
    "-1",
    "-",
    "~0",
    "~1",
    "a~1b",
    "x",
    "",
];

/// jq fragments that join into path expressions of the accepted subset and beyond it.
const JQ_PARTS: &[&str] = &[
    ".spec",
    ".metadata",
    ".labels",
    ".status",
    ".containers",
    ".env",
    ".x",
    "[]",
    "[0]",
    "[-1]",
    "[1:]",
    "?",
    "..",
    " | ",
    ", ",
    " // ",
    "select(.name == \"a\")",
    "select(.value | test(\"^a\"))",
    "select(has(\"x\"))",
    "select(.a[] == 1)",
    "(",
    ")",
    ".[\"$patch\"]",
    "if .x then .spec else .status end",
    "first(.[])",
    "def f: f; f",
    "range(1e9)",
    "$__loc__",
    "reduce .[] as $x (.; .)",
    "\"",
];

/// The rules and the object of an ignore input.
fn ignore_input(data: &[u8]) -> Option<(Vec<IgnoreDifferences>, Map<String, Value>, Value)> {
    let (is_json, rest) = split(data);
    if is_json {
        // `{"rules": [...], "cm": {...}, "object": {...}}`.
        let v: Value = serde_json::from_slice(rest).ok()?;
        let rules = serde_json::from_value(v.get("rules")?.clone()).ok()?;
        let cm = v.get("cm").and_then(Value::as_object).cloned().unwrap_or_default();
        return Some((rules, cm, v.get("object")?.clone()));
    }
    let mut g = Gen::new(rest);
    let mut rules = Vec::new();
    for _ in 0..g.below(4) {
        let mut r = IgnoreDifferences {
            group: g.pick(&["", "*", "apps", "a*", "?pps"]).into(),
            kind: g.pick(&["*", "Deployment", "ConfigMap", "", "Dep*"]).into(),
            name: g.pick(&["", "", "n", "other"]).into(),
            namespace: g.pick(&["", "", "ns"]).into(),
            ..IgnoreDifferences::default()
        };
        for _ in 0..g.below(3) {
            let p = if g.below(4) == 0 {
                g.raw(24)
            } else {
                (0..g.below(4) + 1).map(|_| format!("/{}", g.pick(POINTER_TOKENS))).collect()
            };
            r.json_pointers.push(p);
        }
        for _ in 0..g.below(3) {
            let e = if g.below(4) == 0 {
                g.raw(40)
            } else {
                (0..g.below(5) + 1).map(|_| g.pick(JQ_PARTS)).collect()
            };
            r.jq_path_expressions.push(e);
        }
        rules.push(r);
    }
    let mut cm = Map::new();
    if g.bool() {
        let key = g.pick(&["apps_Deployment", "all", "ConfigMap", "_Deployment"]);
        let body = json!({
            "jsonPointers": [format!("/{}", g.pick(POINTER_TOKENS))],
            "jqPathExpressions": [(0..2).map(|_| g.pick(JQ_PARTS)).collect::<String>()],
        });
        cm.insert(
            format!("resource.customizations.ignoreDifferences.{key}"),
            json!(body.to_string()),
        );
    }
    if g.bool() {
        let mode = g.pick(&["all", "crd", "none", "bogus"]);
        cm.insert(
            "resource.compareoptions".into(),
            json!(format!("ignoreResourceStatusField: {mode}")),
        );
    }
    let (api, kind) = [("apps/v1", "Deployment"), ("v1", "ConfigMap")][g.below(2)];
    let mut obj = gen_object(&mut g, &[]);
    obj["apiVersion"] = json!(api);
    obj["kind"] = json!(kind);
    if g.bool() {
        obj["metadata"]["namespace"] = json!("ns");
    }
    Some((rules, cm, obj))
}

/// Whether a pointer rule removes by object key only, away from the object's identity (the
/// fields rule selection reads).
fn keyed_pointer(p: &str) -> bool {
    let tokens: Vec<&str> = p.split('/').skip(1).collect();
    let index_like = |t: &&str| {
        t.is_empty() || *t == "-" || t.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit())
    };
    p.starts_with('/')
        && !tokens.iter().any(index_like)
        && !matches!(tokens.first(), Some(&("apiVersion" | "kind" | "metadata")))
}

/// `IgnoreNormalizer` built from arbitrary JSON pointer and jq text: construction fails
/// cleanly or succeeds, deterministically; normalising only removes values, is deterministic,
/// fails only on non-objects, and is idempotent for rules that remove by key; a pointer and
/// the jq path naming the same keys remove the same thing. Time is bounded by construction
/// (the jq subset); the fuzz run's `-timeout` enforces it.
pub fn ignore_rules(data: &[u8]) {
    let Some((rules, cm, obj)) = ignore_input(data) else { return };
    let Ok(settings) = Settings::from_config_map(&json!({"data": cm})) else { return };
    let build = || IgnoreNormalizer::new(&rules, &settings);
    let (n, again) = match (build(), build()) {
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "construction errors are deterministic");
            let text = a.to_string();
            assert!(!text.is_empty(), "an error has a message");
            return;
        }
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => panic!("construction is not deterministic: {a:?} / {b:?}"),
    };
    assert!(n.normalize(&mut json!([obj.clone()])).is_err(), "a non-object is an error");
    let mut out = obj.clone();
    let notes = n.normalize_with_notes(&mut out).expect("an object normalises");
    let mut out2 = obj.clone();
    let notes2 = again.normalize_with_notes(&mut out2).expect("an object normalises");
    assert_eq!((&out, &notes), (&out2, &notes2), "normalising is deterministic");
    assert!(is_reduction(&out, &obj), "normalising only removes: {obj} -> {out}");
    let removes_by_key = cm.keys().all(|k| !k.contains("ignoreDifferences"))
        && rules.iter().all(|r| {
            r.jq_path_expressions.is_empty() && r.json_pointers.iter().all(|p| keyed_pointer(p))
        });
    if removes_by_key {
        let mut twice = out.clone();
        n.normalize(&mut twice).expect("an object normalises");
        assert_eq!(twice, out, "normalising is idempotent");
    }
    #[cfg(feature = "jq")]
    for r in &rules {
        for p in r.json_pointers.iter().filter(|p| keyed_pointer(p)) {
            let keys: Vec<String> =
                p.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
            if keys.iter().any(|k| k.contains('~') || k.contains('/')) || p.contains("~2") {
                continue;
            }
            let jq: String =
                keys.iter().map(|k| format!(".[{}]", serde_json::to_string(k).unwrap())).collect();
            let one = |pointers: Vec<String>, jq: Vec<String>| {
                let rule = IgnoreDifferences {
                    group: "*".into(),
                    kind: "*".into(),
                    json_pointers: pointers,
                    jq_path_expressions: jq,
                    ..IgnoreDifferences::default()
                };
                let n = IgnoreNormalizer::new(&[rule], &Settings::default())
                    .expect("a key path compiles");
                let mut o = obj.clone();
                n.normalize(&mut o).expect("an object normalises");
                o
            };
            assert_eq!(
                one(vec![p.clone()], vec![]),
                one(vec![], vec![jq.clone()]),
                "pointer {p} and jq {jq} remove the same"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// health_assess

/// Every kind with a built-in (Go) check, some versions it does not support, and a kind with
/// none. The kinds of the built-in rules come from their registry ([`health_kinds`]).
const HEALTH_KINDS: &[(&str, &str)] = &[
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1beta2", "Deployment"),
    ("networking.k8s.io/v1", "Ingress"),
    ("extensions/v1beta1", "Ingress"),
    ("argoproj.io/v1alpha1", "Workflow"),
    ("argoproj.io/v1alpha1", "Application"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("v1", "Service"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("batch/v1", "Job"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
    ("v1", "ConfigMap"),
];

/// [`HEALTH_KINDS`], then one `apiVersion` and kind for each built-in rule, read from the
/// rules' registry (`health::HealthContext::builtin_kinds`, the kinds' catalog), a wildcard folder (`_`)
/// given a name it matches: adding a rule adds it to the fuzzed kinds.
fn health_kinds() -> Vec<(String, String)> {
    let native = HEALTH_KINDS.iter().map(|(a, k)| ((*a).to_owned(), (*k).to_owned()));
    let rules = health::HealthContext::builtin_kinds().into_iter().filter_map(|folder| {
        let (group, kind) = folder.rsplit_once('/')?;
        let group = group.replace('_', "x");
        let kind = if kind == "_" { "Any".to_owned() } else { kind.to_owned() };
        Some((format!("{group}/v1"), kind))
    });
    native.chain(rules).collect()
}

/// Status fields the built-in checks read.
const HEALTH_KEYS: &[&str] = &[
    "unavailableReplicas",
    "currentReplicas",
    "updateRevision",
    "currentRevision",
    "numberReady",
    "numberAvailable",
    "desiredNumberScheduled",
    "updatedNumberScheduled",
    "currentNumberScheduled",
    "succeeded",
    "failed",
    "active",
    "completionTime",
    "paused",
    "progressDeadlineSeconds",
    "partition",
    "updateStrategy",
    "currentHealthy",
    "desiredHealthy",
    "lastTransitionTime",
    "nodes",
    "health",
    "restartPolicy",
    "startedAt",
    "exitCode",
    "deletionTimestamp",
    "argocd.argoproj.io/hook-finalizer",
    "currentMetrics",
    "desiredReplicas",
];

/// [`crate::health::assess`] on generated objects of every built-in kind: total (a status
/// or an error whose health is Unknown), deterministic, equal to the built-in rule or check
/// unless the object is being deleted, pending deletion when it is (an error still wins), and
/// its result round-trips through JSON.
pub fn health_assess(data: &[u8]) {
    let (is_json, rest) = split(data);
    let obj = if is_json {
        let Ok(v) = serde_json::from_slice::<Value>(rest) else { return };
        v
    } else {
        let mut g = Gen::new(rest);
        let kinds = health_kinds();
        let (api, kind) = kinds[g.below(kinds.len())].clone();
        let (api, kind) = (api.as_str(), kind.as_str());
        let mut rest = Map::new();
        rest.insert("spec".into(), Value::Object(g.map(3, HEALTH_KEYS)));
        rest.insert("status".into(), Value::Object(g.map(4, HEALTH_KEYS)));
        let mut obj = object(api, kind, "n", rest);
        if g.below(4) == 0 {
            obj["metadata"]["deletionTimestamp"] = g.value(1, HEALTH_KEYS);
        }
        if g.below(4) == 0 {
            obj["metadata"]["finalizers"] =
                json!([g.pick(&["argocd.argoproj.io/hook-finalizer", "example.com/x", ""])]);
        }
        obj
    };
    let ctx = HealthContext::new(1_700_000_000);
    let first = health::assess(&obj, &ctx);
    assert_eq!(first, health::assess(&obj, &ctx), "assessment is deterministic");
    match &first {
        Err(e) => {
            assert_eq!(e.health().status, HealthStatus::Unknown, "an error is Unknown");
            assert!(!e.to_string().is_empty(), "an error has a message");
        }
        Ok(Some(h)) => {
            let back: health::HealthResult =
                serde_json::from_slice(&serde_json::to_vec(h).unwrap()).expect("parses back");
            assert_eq!(&back, h, "the health round-trips through JSON");
        }
        Ok(None) => {}
    }
    // Argo CD 3.6.2's order: the built-in rule (else the built-in check) answers first, its
    // error wins even for an object being deleted; a deletion only changes a health that is
    // not an error, to Pending deletion (or the rule's deletionMessage, with its status).
    let r = ObjectRef::from_object_lossy(&obj);
    let own = match health::parts::builtin_rule(&obj) {
        Some(Err(e)) => Err(e),
        Some(Ok(out)) => Ok(out.health),
        None => health::builtin(&obj, &r),
    };
    match (&first, &own) {
        (Err(_), _) | (_, Err(_)) => assert_eq!(first, own, "an error is the check's own"),
        (Ok(got), Ok(want)) if got != want => {
            let h = got.as_ref().expect("a deletion gives a health");
            let pending =
                h.status == HealthStatus::Progressing && h.message.starts_with("Pending deletion");
            let by_rule = matches!(health::parts::builtin_rule(&obj),
                Some(Ok(out)) if out.deletion_message == h.message);
            assert!(pending || by_rule, "only a deletion changes the answer: {h:?}");
            assert!(
                !matches!(obj.pointer("/metadata/deletionTimestamp"), None | Some(Value::Null)),
                "an object not being deleted gets the check's answer"
            );
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// lua_eval

/// The object the Lua target's scripts run on.
#[cfg(feature = "lua")]
fn lua_object() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        "status": {"readyReplicas": 2, "conditions": [{"type": "Available", "status": "False"}]}})
}

/// A script whose answer is known: Degraded, with the object's name as the message.
#[cfg(feature = "lua")]
const KNOWN_GOOD: &str = "if obj.status.readyReplicas < obj.spec.replicas then\n\
    return {status = 'Degraded', message = obj.metadata.name}\nend\nreturn {status = 'Healthy'}";

/// Arbitrary Lua text run as a health script with small limits: it returns a health or a
/// clean error (never a hang: the instruction budget stops it, and the fuzz run's `-timeout`
/// catches anything the budget misses), and the engine then still answers a known-good
/// script correctly in both library modes.
#[cfg(feature = "lua")]
pub fn lua_eval(data: &[u8]) {
    use crate::script::{LuaEngine, ScriptLimits};
    let Some((mode, source)) = data.split_first() else { return };
    let source = String::from_utf8_lossy(source);
    let limits = ScriptLimits::default()
        .with_instructions(200_000)
        .with_memory_bytes(8 << 20)
        .with_pattern_steps(200_000)
        .with_string_bytes(1 << 20);
    let engine = LuaEngine::new(limits);
    let obj = lua_object();
    let now = 1_700_000_000;
    let open = mode & 1 == 1;
    match engine.eval_health("fuzz.lua", &source, open, &obj, now) {
        Ok(h) => {
            let _ = crate::health::parts::ScriptOutput::from(h);
        }
        Err(e) => {
            assert_eq!(e.script, "fuzz.lua", "the error names the script");
            let _ = e.to_string();
        }
    }
    for open in [open, !open] {
        let h = engine
            .eval_health("known.lua", KNOWN_GOOD, open, &obj, now)
            .unwrap_or_else(|e| panic!("the engine is unusable after a hostile script: {e}"));
        assert_eq!((h.status.as_str(), h.message.as_str()), ("Degraded", "web"));
    }
}

// ---------------------------------------------------------------------------------------
// plan_build

/// Kinds of the planned objects: ordered kinds, dependencies (Namespace, CRD), hooks' kinds
/// and a custom resource.
const PLAN_KINDS: &[(&str, &str)] = &[
    ("v1", "ConfigMap"),
    ("v1", "Namespace"),
    ("apps/v1", "Deployment"),
    ("batch/v1", "Job"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("example.com/v1", "Widget"),
    ("v1", "Pod"),
];

/// Sync options, resource and app level.
const SYNC_OPTIONS: &[&str] = &[
    "Prune=false",
    "Prune=confirm",
    "PruneLast=true",
    "Replace=true",
    "Force=true",
    "ServerSideApply=true",
    "Validate=false",
    "SkipDryRunOnMissingResource=true",
    "Delete=false",
    "CreateNamespace=true",
    "ApplyOutOfSyncOnly=true",
    "PrunePropagationPolicy=orphan",
    "Prune=False",
];

/// One planned object with fuzzed annotations.
fn plan_object(g: &mut Gen<'_>) -> Value {
    let (api, kind) = PLAN_KINDS[g.below(PLAN_KINDS.len())];
    let mut annotations = Map::new();
    if g.bool() {
        let wave = g.string(&[
            "-1",
            "0",
            "1",
            "5",
            "x",
            "99999999999999999999",
            "-9223372036854775808",
            " 2",
        ]);
        annotations.insert("argocd.argoproj.io/sync-wave".into(), json!(wave));
    }
    if g.below(3) == 0 {
        let hook = g.string(&[
            "PreSync",
            "Sync",
            "PostSync",
            "SyncFail",
            "Skip",
            "PostSync,SyncFail",
            "PreSync, Bogus",
            "",
        ]);
        annotations.insert("argocd.argoproj.io/hook".into(), json!(hook));
    }
    if g.below(4) == 0 {
        let p = g.string(&[
            "HookSucceeded",
            "HookFailed",
            "BeforeHookCreation",
            "HookSucceeded,HookFailed",
        ]);
        annotations.insert("argocd.argoproj.io/hook-delete-policy".into(), json!(p));
    }
    if g.below(5) == 0 {
        let h = g.string(&["pre-install", "post-upgrade", "crd-install", "test-success"]);
        annotations.insert("helm.sh/hook".into(), json!(h));
        annotations.insert("helm.sh/hook-weight".into(), json!(g.string(&["-5", "0", "3", "z"])));
    }
    if g.bool() {
        let opts: Vec<&str> = (0..g.below(3) + 1).map(|_| g.pick(SYNC_OPTIONS)).collect();
        annotations.insert("argocd.argoproj.io/sync-options".into(), json!(opts.join(",")));
    }
    let name = g.pick(&["a", "b", "c", "app", "ns"]);
    let mut metadata = json!({"name": name, "annotations": annotations});
    if g.below(3) == 0 {
        metadata["generateName"] = json!("gen-");
        if g.bool() {
            metadata.as_object_mut().map(|m| m.remove("name"));
        }
    }
    let ns = g.pick(&["", "app", "ns", "other"]);
    if !ns.is_empty() {
        metadata["namespace"] = json!(ns);
    }
    let mut obj = json!({"apiVersion": api, "kind": kind, "metadata": metadata});
    if kind == "CustomResourceDefinition" {
        obj["spec"] = json!({"group": "example.com", "names": {"kind": "Widget"}});
    }
    obj
}

/// The request and observations of a plan input.
fn plan_input(data: &[u8]) -> Option<(SyncRequest, Observations)> {
    let (is_json, rest) = split(data);
    if is_json {
        // `{"request": SyncRequest, "observations": Observations}`.
        let v: Value = serde_json::from_slice(rest).ok()?;
        let request = serde_json::from_value(v.get("request")?.clone()).ok()?;
        let obs =
            serde_json::from_value(v.get("observations").cloned().unwrap_or(json!({}))).ok()?;
        return Some((request, obs));
    }
    let mut g = Gen::new(rest);
    let flags = g.byte();
    let mut request = SyncRequest {
        app_namespace: "app".into(),
        prune: flags & 1 != 0,
        dry_run: flags & 2 != 0,
        force: flags & 4 != 0,
        skip_hooks: flags & 8 != 0,
        revision: "abc".into(),
        started_at: 1_700_000_000,
        ..SyncRequest::default()
    };
    let app_options: Vec<String> =
        (0..g.below(3)).map(|_| g.pick(SYNC_OPTIONS).to_string()).collect();
    request.sync_options = crate::vocabulary::AppOptions::new(app_options);
    let mut live = Vec::new();
    for _ in 0..g.below(7) {
        let obj = plan_object(&mut g);
        match g.below(3) {
            0 => live.push(obj),
            1 => {
                let mut l = obj.clone();
                g.edit(&mut l, &[]);
                live.push(l);
                request.targets.push(obj);
            }
            _ => request.targets.push(obj),
        }
    }
    let mut obs = Observations {
        live: live.into_iter().map(|l| LiveObject::new(l, None)).collect(),
        now: 1_700_000_100,
        ..Observations::default()
    };
    if flags & 16 != 0 {
        obs.missing_kinds.insert("example.com/Widget".into());
    }
    Some((request, obs))
}

/// [`SyncRequest::plan`](crate::sync::SyncRequest::plan) on generated resources with fuzzed sync-wave, hook and sync-option
/// annotations: deterministic; a total order of non-empty waves with strictly increasing
/// `(phase, wave)`; every task in its wave; a result key per named resource task (for live
/// objects as the API server returns them); a delete only for a prune
/// task of a sync with pruning on whose `Prune=` does not resolve to `false`; the plan of
/// JSON objects round-trips through JSON.
pub fn plan_build(data: &[u8]) {
    let Some((request, obs)) = plan_input(data) else { return };
    let plan = request.plan(&obs);
    let again = request.plan(&obs);
    assert_eq!(
        serde_json::to_vec(&plan).unwrap(),
        serde_json::to_vec(&again).unwrap(),
        "planning is deterministic to the byte"
    );
    let back: Plan = serde_json::from_slice(&serde_json::to_vec(&plan).unwrap()).expect("parses");
    // A task's `live: Some(null)` (a live "object" that is JSON null) reads back as `None`.
    let objects = request.targets.iter().chain(obs.live.iter().map(|l| &l.object));
    if objects.into_iter().all(Value::is_object) {
        assert_eq!(back, plan, "the plan round-trips through JSON");
    }
    for w in &plan.waves {
        assert!(!w.tasks.is_empty(), "a wave has tasks");
        assert!(w.tasks.iter().all(|t| (t.phase, t.wave) == (w.phase, w.wave)), "tasks in wave");
    }
    for pair in plan.waves.windows(2) {
        assert!((pair[0].phase, pair[0].wave) < (pair[1].phase, pair[1].wave), "waves ordered");
    }
    // Hooks are left out: a hook whose live object is not a hook shares its key with the prune
    // of that object, as in gitops-engine, where `Reconcile` pairs only non-hook targets.
    // So are objects without a name (`generateName`): each is kept, under one key, as Argo CD's
    // `DeduplicateTargetObjects` keeps them.
    let nameless = |t: &crate::sync::Task<'_>| {
        let obj = t.given_target().or(t.live.as_deref());
        obj.and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
    };
    let mut keys = std::collections::BTreeSet::new();
    for t in plan.tasks() {
        assert!(
            t.hook || nameless(t) || keys.insert(t.result_key()),
            "one task per result key: {}\nrequest: {}\nlive: {}\nplan: {}",
            t.result_key(),
            serde_json::to_string(&request).unwrap_or_default(),
            serde_json::to_string(&obs.live).unwrap_or_default(),
            serde_json::to_string(&plan).unwrap_or_default(),
        );
        if t.action == TaskAction::Delete {
            assert!(t.is_prune() && t.target.is_none(), "only prunes delete");
            assert!(request.prune, "no delete without pruning");
            assert!(
                !crate::vocabulary::prune_disabled(
                    &crate::vocabulary::ResourceOptions::of_some(t.live.as_deref()),
                    &request.sync_options
                ),
                "Prune=false never deletes: {}",
                t.result_key()
            );
        }
    }
}
