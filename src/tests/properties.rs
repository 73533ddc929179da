//! Properties that hold for any input, across the diff and sync engines (issue 5), checked on
//! generated Kubernetes-like objects through the public API.
//!
//! The health properties of the built-in checks (assessment is total on any JSON value,
//! aggregation ignores order) live with the health conformance runner
//! (`tests::health::properties`); here, assessment through a Lua customization is total.
//!
//! Diff: an object diffed against itself is unmodified in every mode; the JSON Patch of a
//! result turns the normalized live object into the predicted one; normalization is
//! idempotent; an ignored path hides any change confined to it and nothing else; Secret
//! values never reach a rendered output. Sync: the plan is a total order that does not depend
//! on the order of its inputs; a `Prune=false` resource is never deleted; an automated sync
//! with nothing desired never deletes; the same input gives the same bytes.
//!
//! Case counts are modest (64 to 128) so the suite stays fast in debug builds.
//! `PROPTEST_CASES=2500` runs every one of them at that count.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::diff::{self, AppDiffInput, DiffMode, DiffOptions, DiffResult};
use crate::{config::Application, config::IgnoreDifferences, config::Settings, object::Scopes};

/// The namespace of every generated diff object.
const NS: &str = "ns";
/// The annotation named in `resource.sensitive.mask.annotations` for the masking property.
const TOKEN_ANNOTATION: &str = "example.com/token";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

// ---------------------------------------------------------------------------------------------
// Generators of Kubernetes-like objects. Everything but Secret values is drawn from lowercase
// letters, digits in numbers below 1000, and fixed words, so that a Secret value (uppercase
// letters and digits only, see `secret_value`) cannot legitimately appear anywhere else.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Deployment,
    ConfigMap,
    Secret,
    Widget,
}

impl Kind {
    fn api(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Deployment => ("apps/v1", "apps", "Deployment"),
            Kind::ConfigMap => ("v1", "", "ConfigMap"),
            Kind::Secret => ("v1", "", "Secret"),
            Kind::Widget => ("example.com/v1", "example.com", "Widget"),
        }
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Deployment),
        Just(Kind::ConfigMap),
        Just(Kind::Secret),
        Just(Kind::Widget),
    ]
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,5}"
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map("[a-z]{1,5}", "[a-z0-9]{1,6}", 0..4)
}

fn to_object(m: BTreeMap<String, String>) -> Value {
    Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect::<Map<_, _>>())
}

/// A Secret value: uppercase letters and digits, a multiple of four long, so that it is valid
/// base64 as it stands in `data`.
fn secret_value() -> impl Strategy<Value = String> {
    "([A-Z0-9]{4}){2,5}"
}

fn containers() -> impl Strategy<Value = Value> {
    let env = prop::collection::btree_map("[a-z]{1,5}", "[a-z0-9]{0,6}", 0..3);
    let ports = prop::collection::btree_set(1u16..1000, 0..3);
    prop::collection::btree_map("[a-z]{1,5}", (word(), env, ports), 1..3).prop_map(|m| {
        let list = m
            .into_iter()
            .map(|(name, (image, env, ports))| {
                let mut c = json!({"name": name, "image": image});
                if !env.is_empty() {
                    c["env"] =
                        env.into_iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
                }
                if !ports.is_empty() {
                    c["ports"] = ports
                        .into_iter()
                        .map(|p| json!({"containerPort": p, "protocol": "TCP"}))
                        .collect();
                }
                c
            })
            .collect();
        Value::Array(list)
    })
}

fn items() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-z]{1,5}", word(), 0..3).prop_map(|m| {
        m.into_iter().map(|(name, value)| json!({"name": name, "value": value})).collect()
    })
}

/// The identity of every generated diff object of a kind.
fn skeleton(kind: Kind, labels: BTreeMap<String, String>) -> Value {
    let (api, _, k) = kind.api();
    let mut obj =
        json!({"apiVersion": api, "kind": k, "metadata": {"name": "obj", "namespace": NS}});
    if !labels.is_empty() {
        obj["metadata"]["labels"] = to_object(labels);
    }
    obj
}

/// An object of a kind: a Deployment with containers, env and ports; a ConfigMap with data; a
/// Secret with `data` (and sometimes `stringData`); a custom resource with a number, a list of
/// strings, a keyed list and a map.
fn object(kind: Kind) -> BoxedStrategy<Value> {
    match kind {
        Kind::Deployment => (string_map(), 0u32..6, containers())
            .prop_map(move |(labels, replicas, containers)| {
                let mut o = skeleton(kind, labels);
                o["spec"] = json!({"replicas": replicas,
                    "selector": {"matchLabels": {"app": "obj"}},
                    "template": {"metadata": {"labels": {"app": "obj"}},
                                 "spec": {"containers": containers}}});
                o
            })
            .boxed(),
        Kind::ConfigMap => (string_map(), string_map())
            .prop_map(move |(labels, data)| {
                let mut o = skeleton(kind, labels);
                if !data.is_empty() {
                    o["data"] = to_object(data);
                }
                o
            })
            .boxed(),
        Kind::Secret => (
            string_map(),
            prop::collection::btree_map("[a-z]{1,5}", secret_value(), 0..4),
            prop::collection::btree_map("[a-z]{1,5}", "[A-Z0-9]{6,12}", 0..2),
        )
            .prop_map(move |(labels, data, string_data)| {
                let mut o = skeleton(kind, labels);
                o["type"] = json!("Opaque");
                o["data"] = to_object(data);
                if !string_data.is_empty() {
                    o["stringData"] = to_object(string_data);
                }
                o
            })
            .boxed(),
        Kind::Widget => {
            (string_map(), 0u32..100, prop::collection::vec(word(), 0..3), items(), string_map())
                .prop_map(move |(labels, size, tags, items, config)| {
                    let mut o = skeleton(kind, labels);
                    o["spec"] = json!({"size": size, "tags": tags, "items": items,
                                   "config": to_object(config)});
                    o
                })
                .boxed()
        }
    }
}

/// Three objects of one kind and identity: desired, live, and what was applied before.
fn triple() -> impl Strategy<Value = (Kind, Value, Value, Value)> {
    kind().prop_flat_map(|k| (Just(k), object(k), object(k), object(k)))
}

/// The four ways a pair of objects is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Live carries kubectl's last-applied configuration.
    ThreeWay,
    /// No last-applied configuration.
    TwoWay,
    /// `ServerSideApply=true`: structured merge from live's managed fields.
    StructuredMerge,
    /// Server-side diff with the host's dry-run result.
    ServerSide,
}

const MODES: [Mode; 4] = [Mode::ThreeWay, Mode::TwoWay, Mode::StructuredMerge, Mode::ServerSide];

impl Mode {
    fn expected(self) -> DiffMode {
        match self {
            Mode::ThreeWay => DiffMode::ThreeWay,
            Mode::TwoWay => DiffMode::TwoWay,
            Mode::StructuredMerge => DiffMode::StructuredMerge,
            Mode::ServerSide => DiffMode::ServerSide,
        }
    }

    /// The mode `diff_app` takes: an app with `ServerSideApply=true` (the structured-merge
    /// mode of `diff_one`) is compared by server-side diff, as in Argo CD 3.6.
    fn expected_in_app(self) -> DiffMode {
        match self {
            Mode::StructuredMerge => DiffMode::ServerSide,
            other => other.expected(),
        }
    }
}

/// The `fieldsV1` set of a value: object fields as `f:`, lists of named items as `k:`, lists
/// of scalars as `v:`, other lists whole.
fn fields_v1(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().map(|(k, v)| (format!("f:{k}"), fields_v1(v))).collect::<Map<_, _>>(),
        ),
        Value::Array(a)
            if !a.is_empty() && a.iter().all(|i| i.get("name").is_some_and(Value::is_string)) =>
        {
            let mut out = Map::new();
            for item in a {
                let key = format!("k:{}", json!({"name": item["name"]}));
                let mut f = fields_v1(item);
                if let Value::Object(f) = &mut f {
                    f.insert(".".into(), json!({}));
                }
                out.insert(key, f);
            }
            Value::Object(out)
        }
        Value::Array(a) if !a.is_empty() && a.iter().all(|i| !i.is_object() && !i.is_array()) => {
            Value::Object(a.iter().map(|i| (format!("v:{i}"), json!({}))).collect::<Map<_, _>>())
        }
        _ => json!({}),
    }
}

/// `obj` with a managed-fields entry of `argocd-controller` (Apply) owning what `applied`
/// sets, and one of `kube-controller-manager` (Update) owning `status`, when there is one.
/// As the API server does, the set is computed on the whole object and then stripped of the
/// identity fields, so `metadata` with only a name and namespace leaves no entry.
fn with_managed_fields(obj: &Value, applied: &Value) -> Value {
    let mut entries = vec![
        json!({"manager": diff::DiffOptions::ARGOCD_MANAGER, "operation": "Apply",
        "apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": owned_set(applied)}),
    ];
    if let Some(status) = obj.get("status") {
        entries.push(json!({"manager": "kube-controller-manager", "operation": "Update",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": fields_v1(status)}}));
    }
    let mut out = obj.clone();
    out["metadata"]["managedFields"] = Value::Array(entries);
    out
}

/// The fields an apply of `applied` owns.
fn owned_set(applied: &Value) -> Value {
    let mut owned = applied.clone();
    if let Some(m) = owned.as_object_mut() {
        for k in ["apiVersion", "kind", "status"] {
            m.remove(k);
        }
    }
    let mut set = fields_v1(&owned);
    // A Secret's values never show in managed fields (only `data` keys do): a malformed
    // `data` list is owned whole.
    if applied["kind"] == "Secret" {
        for field in ["f:data", "f:stringData"] {
            if let Some(f) = set
                .get_mut(field)
                .filter(|f| f.as_object().is_some_and(|m| m.keys().any(|k| k.starts_with("v:"))))
            {
                *f = json!({});
            }
        }
    }
    if let Some(meta) = set.get_mut("f:metadata").and_then(Value::as_object_mut) {
        for k in ["f:name", "f:namespace", "f:managedFields"] {
            meta.remove(k);
        }
        if meta.is_empty() {
            set.as_object_mut().map(|m| m.remove("f:metadata"));
        }
    }
    set
}

/// Whether server-side diff applies: an apply that owns no field leaves a dry-run result Argo CD
/// refuses ("no fields are managed by `argocd-controller`", gitops-engine pkg/diff/diff.go
/// `removeWebhookMutation`; pinned by `server_side_diff_of_an_object_owning_nothing_is_an_error`).
fn runs_in(mode: Mode, desired: &Value) -> bool {
    !matches!(mode, Mode::ServerSide | Mode::StructuredMerge)
        || owned_set(desired).as_object().is_some_and(|m| !m.is_empty())
}

fn with_last_applied(obj: &Value, applied: &Value) -> Value {
    let mut out = obj.clone();
    let text = serde_json::to_string(applied).unwrap_or_default();
    out["metadata"]["annotations"][LAST_APPLIED] = Value::String(text);
    out
}

/// The live object as the given mode finds it, after `applied` was applied last.
fn live_for(mode: Mode, live: &Value, applied: &Value) -> Value {
    match mode {
        Mode::ThreeWay => with_last_applied(live, applied),
        Mode::TwoWay => live.clone(),
        Mode::StructuredMerge | Mode::ServerSide => with_managed_fields(live, applied),
    }
}

/// What the API server's dry run of `desired` over `live` returns: the desired object, owned
/// by the Argo CD manager, with live's status.
fn dry_run_of(desired: &Value, live: &Value) -> Value {
    let mut d = desired.clone();
    if let Some(status) = live.get("status") {
        d["status"] = status.clone();
    }
    with_managed_fields(&d, desired)
}

fn options<'a>(mode: Mode, dry_run: &'a Value) -> DiffOptions<'a> {
    match mode {
        Mode::ThreeWay | Mode::TwoWay => DiffOptions::default(),
        Mode::StructuredMerge => DiffOptions::default().with_structured_merge(true),
        Mode::ServerSide => DiffOptions::default().with_server_side_diff(Some(dry_run)),
    }
}

/// Applies a result's JSON Patch to its normalized live object.
fn apply_patch(r: &DiffResult) -> Result<Value, String> {
    let ops = serde_json::to_value(&r.patch).map_err(|e| e.to_string())?;
    let patch: json_patch::Patch = serde_json::from_value(ops).map_err(|e| e.to_string())?;
    let mut doc = r.normalized_live.clone();
    json_patch::patch(&mut doc, &patch).map_err(|e| e.to_string())?;
    Ok(doc)
}

/// Sets the value at an RFC 6901 pointer (made of plain field names), creating objects on
/// the way; `None` removes it.
fn set_at(obj: &mut Value, pointer: &str, v: Option<Value>) {
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    let Some((last, parents)) = parts.split_last() else { return };
    let mut cur = obj;
    for p in parents {
        if !cur[*p].is_object() {
            if v.is_none() {
                return;
            }
            cur[*p] = json!({});
        }
        cur = &mut cur[*p];
    }
    match (cur.as_object_mut(), v) {
        (Some(m), Some(v)) => {
            m.insert((*last).to_string(), v);
        }
        (Some(m), None) => {
            m.remove(*last);
        }
        (None, _) => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Diff properties.
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(crate::tests::support::cases(96))]

    /// An object compared with itself is unmodified, with an empty patch, in every mode: as
    /// it stands (live with its last-applied annotation or managed fields on both sides), and
    /// desired against the live object its own apply left behind.
    #[test]
    fn an_object_diffed_against_itself_is_unmodified((_, obj, _, _) in triple()) {
        for mode in MODES.into_iter().filter(|m| runs_in(*m, &obj)) {
            let live = live_for(mode, &obj, &obj);
            let dry = dry_run_of(&obj, &live);
            let opts = options(mode, &dry);
            for desired in [&live, &obj] {
                let r = diff::diff(Some(desired), Some(&live), &opts)
                    .map_err(|e| TestCaseError::fail(format!("{mode:?}: {e}")))?;
                prop_assert_eq!(r.mode, mode.expected(), "{:?}", mode);
                prop_assert!(!r.modified, "{:?}: {}", mode, serde_json::to_string(&r.patch).unwrap_or_default());
                prop_assert!(r.patch.is_empty(), "{:?}", mode);
            }
        }
    }

    /// The JSON Patch of a result, applied to the normalized live object, gives the predicted
    /// live object, in every mode and for creations.
    #[test]
    fn the_patch_turns_normalized_live_into_predicted_live(
        (_, desired, live, applied) in triple(),
    ) {
        for mode in MODES {
            let live = live_for(mode, &live, &applied);
            let dry = dry_run_of(&desired, &live);
            let opts = options(mode, &dry);
            let r = match diff::diff(Some(&desired), Some(&live), &opts) {
                Ok(r) => r,
                // An error is allowed (a patch that cannot be built); a wrong patch is not.
                Err(_) => continue,
            };
            let again = diff::diff(Some(&desired), Some(&live), &opts)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(serde_json::to_string(&r).ok(), serde_json::to_string(&again).ok());
            if r.modified {
                let got = apply_patch(&r).map_err(|e| TestCaseError::fail(format!("{mode:?}: {e}")))?;
                prop_assert_eq!(&got, &r.predicted_live, "{:?}", mode);
            } else {
                prop_assert!(r.patch.is_empty(), "{:?}", mode);
            }
        }
        let created = diff::diff(Some(&desired), None, &DiffOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(apply_patch(&created).map_err(TestCaseError::fail)?, created.predicted_live);
    }

    /// Normalizing a normalized object changes nothing: the live object alone, and the
    /// normalized live of a comparison compared again, in every mode.
    #[test]
    fn normalization_is_idempotent((_, desired, live, applied) in triple(), roles in any::<bool>()) {
        for mode in MODES {
            let live = live_for(mode, &live, &applied);
            let dry = dry_run_of(&desired, &live);
            let opts = options(mode, &dry).with_ignore_aggregated_roles(roles);
            let once = diff::diff(None, Some(&live), &opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let twice = diff::diff(None, Some(&once.normalized_live), &opts)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&once.normalized_live, &twice.normalized_live, "{:?}", mode);
            let Ok(first) = diff::diff(Some(&desired), Some(&live), &opts) else { continue };
            let second = diff::diff(Some(&desired), Some(&first.normalized_live), &opts)
                .map_err(|e| TestCaseError::fail(format!("{mode:?}: {e}")))?;
            prop_assert_eq!(&first.normalized_live, &second.normalized_live, "{:?}", mode);
        }
    }
}

/// Pointers to ignore per kind, with a generator of a value of the field's type.
fn ignorable(kind: Kind) -> Vec<(&'static str, BoxedStrategy<Option<Value>>)> {
    let map = || string_map().prop_map(|m| Some(to_object(m))).boxed();
    let number = |hi: u32| (0..hi).prop_map(|n| Some(json!(n))).boxed();
    let removed = || Just(None).boxed();
    let labels = prop_oneof![map(), removed()].boxed();
    let mut paths = vec![("/metadata/labels", labels)];
    match kind {
        Kind::Deployment => {
            paths.push(("/spec/replicas", number(9)));
            paths.push(("/spec/template/spec/containers", containers().prop_map(Some).boxed()));
        }
        Kind::ConfigMap => paths.push(("/data", map())),
        Kind::Secret => {
            let data = prop::collection::btree_map("[a-z]{1,5}", secret_value(), 0..3)
                .prop_map(|m| Some(to_object(m)))
                .boxed();
            paths.push(("/data", data));
        }
        Kind::Widget => {
            paths.push(("/spec/config", map()));
            paths.push(("/spec/size", number(200)));
            paths.push(("/spec/items", prop_oneof![items().prop_map(Some), removed()].boxed()));
        }
    }
    paths
}

/// A kind, an object, a pointer to ignore and a new value there (`None`: removed).
fn ignore_case() -> impl Strategy<Value = (Kind, Value, &'static str, Option<Value>)> {
    kind().prop_flat_map(|k| {
        // For a custom resource, sometimes a value of another type: a change confined to an ignored
        // path is invisible whatever it is. Not for built-in kinds: there a value the typed
        // decoding refuses turns off canonicalisation of the whole object before the ignore rules
        // run, as in Argo CD (gitops-engine pkg/diff/diff.go `remarshal`: a strict decode that
        // fails keeps the object as it is), pinned by
        // `a_mistyped_ignored_field_of_a_builtin_disables_canonicalisation`.
        let odd_weight = if k == Kind::Widget { 1 } else { 0 };
        let odd = prop_oneof![
            Just(json!("text")),
            Just(json!(-1)),
            Just(json!(true)),
            Just(json!([{"x": 1}])),
            Just(json!({"y": [null]})),
        ];
        let choices: Vec<_> = ignorable(k)
            .into_iter()
            .map(|(p, v)| {
                (Just(p), prop_oneof![4 => v, odd_weight => odd.clone().prop_map(Some)]).boxed()
            })
            .collect();
        (Just(k), object(k), prop::strategy::Union::new(choices))
            .prop_map(|(k, o, (p, v))| (k, o, p, v))
    })
}

/// Compares one desired object with one live object as an application in a mode.
fn diff_one(
    mode: Mode,
    desired: &Value,
    live: &Value,
    dry_run: &Value,
    rules: Vec<IgnoreDifferences>,
    settings: &Settings,
) -> Result<diff::AppDiff, diff::DiffError> {
    let mut app = match mode {
        Mode::StructuredMerge => Application::from_value(
            &json!({"spec": {"syncPolicy": {"syncOptions": ["ServerSideApply=true"]}}}),
        )
        .expect("a valid application"),
        _ => Application::default(),
    };
    app.spec.ignore_differences = rules;
    let scopes = Scopes::builtin();
    let (desired, live, dry) = (vec![desired.clone()], vec![live.clone()], vec![dry_run.clone()]);
    let input = AppDiffInput::new(&desired, &live, &app, settings, &scopes).with_objects(true);
    // An app with ServerSideApply=true is compared by server-side diff (Argo CD 3.6): the
    // sync option alone turns it on, given the dry-run answers.
    let input = match mode {
        Mode::ServerSide => input.with_dry_runs(&dry),
        Mode::StructuredMerge => AppDiffInput { dry_runs: &dry, ..input },
        _ => input,
    };
    diff::diff_app(&input)
}

proptest! {
    #![proptest_config(crate::tests::support::cases(64))]

    /// With a path ignored (a JSON pointer or the same path as a jq expression), a change
    /// confined to it, on either side, leaves the resource Synced; a change of the desired
    /// object outside it (a new annotation) is still seen, in every mode.
    #[test]
    fn an_ignored_path_hides_changes_to_it_and_nothing_else(
        (kind, obj, pointer, new) in ignore_case(),
        jq in any::<bool>(),
        on_live in any::<bool>(),
    ) {
        let (_, group, k) = kind.api();
        let rule = if jq && cfg!(feature = "jq") {
            json!({"group": group, "kind": k, "jqPathExpressions": [pointer.replace('/', ".")]})
        } else {
            json!({"group": group, "kind": k, "jsonPointers": [pointer]})
        };
        let rule: IgnoreDifferences = serde_json::from_value(rule).expect("a valid rule");
        let settings = Settings::default();
        for mode in MODES {
            let (mut desired, mut live) = (obj.clone(), obj.clone());
            set_at(if on_live { &mut live } else { &mut desired }, pointer, new.clone());
            if !runs_in(mode, &desired) {
                continue;
            }
            let live = live_for(mode, &live, &obj);
            let out = diff_one(mode, &desired, &live, &dry_run_of(&desired, &live), vec![rule.clone()], &settings)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(out.conditions.is_empty(), "{:?}: {:?}", mode, out.conditions);
            let r = &out.resources[0];
            prop_assert_eq!(r.mode, Some(mode.expected_in_app()), "{:?}", mode);
            prop_assert!(!r.modified, "{:?}: {}", mode, serde_json::to_string(&r.diff).unwrap_or_default());
            prop_assert_eq!(out.sync_status, diff::SyncStatus::Synced, "{:?}", mode);

            desired["metadata"]["annotations"]["example.com/changed"] = json!("yes");
            let out = diff_one(mode, &desired, &live, &dry_run_of(&desired, &live), vec![rule.clone()], &settings)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(out.resources[0].modified, "{:?}", mode);
            prop_assert_eq!(out.sync_status, diff::SyncStatus::OutOfSync, "{:?}", mode);
        }
    }
}

/// Every string of a Secret that must not be shown: what `data` and `stringData` hold, and
/// the sensitive annotation.
fn secret_strings(obj: &Value, out: &mut BTreeSet<String>) {
    fn strings(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            Value::Object(m) => m.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    for field in ["data", "stringData"] {
        if let Some(v) = obj.get(field) {
            strings(v, &mut *out);
        }
    }
    if let Some(t) = obj.pointer("/metadata/annotations").and_then(|a| a.get(TOKEN_ANNOTATION)) {
        out.extend(t.as_str().map(str::to_string));
    }
}

/// What a Secret shows in the open: the object without `data`, `stringData` and its
/// annotations (the sensitive one and last-applied, which holds the data too), as JSON.
fn public_text(obj: &Value) -> String {
    let mut open = obj.clone();
    if let Some(m) = open.as_object_mut() {
        m.remove("data");
        m.remove("stringData");
    }
    if let Some(m) = open.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("annotations");
    }
    open.to_string()
}

/// The first window of four characters of a secret that occurs in `text` and not in what the
/// inputs show in the open (a label `4830` next to a token `0A004830` is no leak).
fn leak(text: &str, secrets: &BTreeSet<String>, public: &str) -> Option<String> {
    secrets.iter().find_map(|s| {
        let chars: Vec<char> = s.chars().collect();
        chars
            .windows(4)
            .map(|w| w.iter().collect::<String>())
            .find(|w| text.contains(w.as_str()) && !public.contains(w.as_str()))
    })
}

/// A Secret, sometimes malformed: `data` or `stringData` a list or a plain string, a value
/// that is not valid base64, or a nested map.
fn secret() -> BoxedStrategy<Value> {
    let malformed = prop_oneof![
        6 => Just(None),
        1 => (prop_oneof![Just("data"), Just("stringData")],
              prop::collection::vec(secret_value(), 1..3))
            .prop_map(|(f, v)| Some((f, json!(v)))),
        1 => (prop_oneof![Just("data"), Just("stringData")], secret_value())
            .prop_map(|(f, v)| Some((f, json!(v)))),
        1 => "[A-Z0-9]{5,7}".prop_map(|v| Some(("data", json!({"odd": v})))),
        1 => secret_value().prop_map(|v| Some(("data", json!({"nested": {"x": v}})))),
    ];
    (object(Kind::Secret), prop::option::of(secret_value()), malformed)
        .prop_map(|(mut o, token, malformed)| {
            if let Some((field, v)) = malformed {
                o[field] = v;
            }
            if let Some(t) = token {
                o["metadata"]["annotations"] =
                    json!({TOKEN_ANNOTATION: t, "example.com/note": "plain"});
            }
            o
        })
        .boxed()
}

proptest! {
    #![proptest_config(crate::tests::support::cases(64))]

    /// No four consecutive characters of any Secret value (in `data`, in `stringData`, in a
    /// sensitive annotation, in a last-applied annotation or a dry-run result) appear in any
    /// rendered output of an application diff (the text diff, the JSON and the debug form),
    /// in any mode. The comparison itself still sees the difference, and renders the same
    /// bytes every time.
    #[test]
    fn secret_values_never_reach_rendered_output(
        desired in secret(),
        live in secret(),
        applied in secret(),
        dry in secret(),
        pick in 0..4usize,
        same in any::<bool>(),
    ) {
        let mode = MODES[pick];
        let live = if same { desired.clone() } else { live };
        let live = live_for(mode, &live, &applied);
        let dry_run = with_managed_fields(&dry, &dry);
        let mut secrets = BTreeSet::new();
        let mut public = String::new();
        for o in [&desired, &live, &applied, &dry_run] {
            secret_strings(o, &mut secrets);
            public.push_str(&public_text(o));
        }
        let settings = Settings {
            sensitive_mask_annotations: vec![TOKEN_ANNOTATION.to_string()],
            ..Settings::default()
        };
        let out = diff_one(mode, &desired, &live, &dry_run, Vec::new(), &settings)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let json = serde_json::to_string(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let rendered = out.render_text().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (what, text) in [("text", rendered), ("json", json.clone()), ("debug", format!("{out:?}"))] {
            if let Some(w) = leak(&text, &secrets, &public) {
                return Err(TestCaseError::fail(format!("{mode:?}: `{w}` shows in the {what} output:\n{text}")));
            }
        }
        let again = diff_one(mode, &desired, &live, &dry_run, Vec::new(), &settings)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(serde_json::to_string(&again).unwrap_or_default(), json);
    }
}

/// Server-side diff of an object whose apply owns no field (only a name and namespace) is
/// Argo CD's error, not a diff (gitops-engine pkg/diff/diff.go `removeWebhookMutation`).
#[test]
fn server_side_diff_of_an_object_owning_nothing_is_an_error() {
    let obj = skeleton(Kind::ConfigMap, BTreeMap::new());
    let live = live_for(Mode::ServerSide, &obj, &obj);
    let dry = dry_run_of(&obj, &live);
    let err = diff::diff(Some(&obj), Some(&live), &options(Mode::ServerSide, &dry)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ConfigMap:ns/obj: invalid dry-run result at /metadata/managedFields: no fields are managed by `argocd-controller`"
    );
}

/// Regression (shrunk from `an_object_diffed_against_itself_is_unmodified`): a field applied
/// empty before (`data: {}`) and now applied with content is kept by a structured-merge
/// diff, not pruned as stale with everything below it.
#[test]
fn structured_merge_keeps_a_field_applied_empty_before() {
    let before = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "obj", "namespace": NS}, "data": {}});
    let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "obj", "namespace": NS}, "data": {"a": "x"}});
    let live = with_managed_fields(&desired, &before);
    let r = diff::diff(Some(&desired), Some(&live), &options(Mode::StructuredMerge, &Value::Null))
        .expect("compares");
    assert_eq!(r.predicted_live["data"], json!({"a": "x"}));
    assert!(!r.modified, "{:?}", r.patch);
    // The Secret the property found: `data: {}` and `stringData` applied, compared with itself.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "obj", "namespace": NS}, "data": {}, "stringData": {"a": "AA000A"}});
    let live = with_managed_fields(&secret, &secret);
    let r = diff::diff(Some(&secret), Some(&live), &options(Mode::StructuredMerge, &Value::Null))
        .expect("compares");
    assert!(!r.modified, "{:?}", r.patch);
}

/// Argo CD's behaviour the ignore property leaves out (found by it): in a built-in kind, a value of
/// the wrong type at an ignored path (`metadata.labels: text`) makes the strict typed decoding
/// fail, so the desired object is not canonicalised (`value: ""` is kept) while the live one is,
/// and the difference shows outside the ignored path (gitops-engine pkg/diff/diff.go `remarshal`: a
/// strict decode that fails keeps the object as it is).
#[test]
fn a_mistyped_ignored_field_of_a_builtin_disables_canonicalisation() {
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "obj", "namespace": NS},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "obj"}},
            "template": {"metadata": {"labels": {"app": "obj"}},
                "spec": {"containers": [{"name": "a", "image": "a",
                    "env": [{"name": "a", "value": ""}]}]}}}});
    let rule: IgnoreDifferences = serde_json::from_value(
        json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/metadata/labels"]}),
    )
    .expect("a valid rule");
    let mut desired = obj.clone();
    desired["metadata"]["labels"] = json!("text");
    let live = live_for(Mode::ThreeWay, &obj, &obj);
    let out =
        diff_one(Mode::ThreeWay, &desired, &live, &Value::Null, vec![rule], &Settings::default())
            .expect("compares");
    let r = &out.resources[0];
    assert!(r.modified);
    assert_eq!(
        serde_json::to_value(&r.diff).expect("json"),
        json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/0/value", "value": ""}])
    );
}

/// Regression (found by `secret_values_never_reach_rendered_output`): a Secret whose `data`
/// or `stringData` is not a map (a list, a string) was shown unmasked.
#[test]
fn malformed_secret_data_is_masked_whole() {
    let settings = Settings::default();
    let secret = |field: &str, v: Value| {
        let mut s = skeleton(Kind::Secret, BTreeMap::new());
        s[field] = v;
        s
    };
    let secrets = BTreeSet::from(["ABCDEFGH".to_string(), "ZYXWVUTS".to_string()]);
    for (desired, live) in [
        (secret("data", json!({"a": "ABCDEFGH"})), secret("data", json!(["ZYXWVUTS"]))),
        (secret("data", json!(["ABCDEFGH"])), secret("data", json!({"a": "ZYXWVUTS"}))),
        (secret("data", json!("ABCDEFGH")), secret("stringData", json!(["ZYXWVUTS"]))),
        (secret("stringData", json!("ABCDEFGH")), secret("data", Value::Null)),
    ] {
        for mode in MODES {
            let live = live_for(mode, &live, &desired);
            let dry = with_managed_fields(&desired, &desired);
            let out =
                diff_one(mode, &desired, &live, &dry, Vec::new(), &settings).expect("compares");
            let text = format!(
                "{}{}",
                out.render_text().expect("objects kept"),
                serde_json::to_string(&out).expect("json")
            );
            assert_eq!(
                leak(&text, &secrets, ""),
                None,
                "{mode:?}: {text}\n{}",
                serde_json::to_string_pretty(&out).unwrap_or_default()
            );
            assert!(out.resources[0].modified, "{mode:?}");
        }
    }
}

/// Values on one side only (a key present in one object, the sensitive annotation on one
/// object, `stringData` on live) stay hidden in two-way mode.
#[test]
fn secret_only_on_one_side_is_masked() {
    let desired = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "obj",
        "namespace": NS, "annotations": {TOKEN_ANNOTATION: "QWERTY12"}}, "data": {"a": "ABCD1234"}});
    let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "obj",
        "namespace": NS}, "data": {"b": "ZYXW9876"}, "stringData": {"c": "PLAIN1"}});
    let settings = Settings {
        sensitive_mask_annotations: vec![TOKEN_ANNOTATION.to_string()],
        ..Settings::default()
    };
    let out = diff_one(Mode::TwoWay, &desired, &live, &Value::Null, Vec::new(), &settings)
        .expect("compares");
    let text = format!(
        "{}{}",
        out.render_text().expect("objects kept"),
        serde_json::to_string(&out).expect("json")
    );
    for s in ["QWERTY12", "ABCD1234", "ZYXW9876", "PLAIN1"] {
        assert!(leak(&text, &BTreeSet::from([s.to_string()]), "").is_none(), "{s} shows:\n{text}");
    }
    assert!(out.resources[0].modified);
}

// ---------------------------------------------------------------------------------------------
// Sync properties.
// ---------------------------------------------------------------------------------------------

mod sync {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::diff::SyncStatus;
    use crate::sync::{
        ActionKind, LiveObject, Observations, Outcome, Plan, SyncRequest, SyncState, TaskAction,
    };
    use crate::sync::{AutoSyncInput, ResourceStatus};
    use crate::vocabulary::AppOptions;
    use crate::{config::Application, health::HealthResult, object::ObjectRef};

    /// Kinds of sync objects: (apiVersion, kind, namespaced).
    const KINDS: &[(&str, &str, bool)] = &[
        ("v1", "ConfigMap", true),
        ("apps/v1", "Deployment", true),
        ("v1", "Service", true),
        ("batch/v1", "Job", true),
        ("example.com/v1", "Widget", true),
        ("v1", "Namespace", false),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", false),
    ];

    /// What a generated resource is: wave, hook (0 none, 1 PreSync, 2 PostSync, 3 Sync),
    /// where it is (1 desired, 2 live, 3 both), `Prune=false` on live, `PruneLast=true`.
    #[derive(Debug, Clone)]
    struct Spec {
        wave: i64,
        hook: u8,
        place: u8,
        no_prune: bool,
        prune_last: bool,
    }

    type Key = (usize, u8, u8);

    fn specs() -> impl Strategy<Value = BTreeMap<Key, Spec>> {
        let key = (0..KINDS.len(), 0u8..4, 0u8..2);
        let spec = (
            -2i64..3,
            prop_oneof![4 => Just(0u8), 1 => 1u8..4],
            1u8..4,
            any::<bool>(),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(wave, hook, place, no_prune, prune_last)| Spec {
                wave,
                hook,
                place,
                no_prune,
                prune_last,
            });
        prop::collection::btree_map(key, spec, 0..14)
            .prop_map(|m| m.into_iter().filter(|((k, _, n), _)| KINDS[*k].2 || *n == 0).collect())
    }

    fn build(key: &Key, spec: &Spec, live: bool) -> Value {
        let (api, kind, namespaced) = KINDS[key.0];
        let mut annotations = serde_json::Map::new();
        annotations.insert("argocd.argoproj.io/sync-wave".into(), json!(spec.wave.to_string()));
        let hook = ["", "PreSync", "PostSync", "Sync"][usize::from(spec.hook)];
        if !hook.is_empty() {
            annotations.insert("argocd.argoproj.io/hook".into(), json!(hook));
        }
        let mut options = Vec::new();
        if live && spec.no_prune {
            options.push("Prune=false");
        }
        if spec.prune_last {
            options.push("PruneLast=true");
        }
        if !options.is_empty() {
            annotations.insert("argocd.argoproj.io/sync-options".into(), json!(options.join(",")));
        }
        let mut obj = json!({"apiVersion": api, "kind": kind,
            "metadata": {"name": format!("o{}", key.1), "annotations": annotations}});
        if namespaced {
            obj["metadata"]["namespace"] = json!(["a", "b"][usize::from(key.2)]);
        }
        if live {
            obj["metadata"]["uid"] = json!(format!("u{}-{}-{}", key.0, key.1, key.2));
        }
        obj
    }

    /// Desired and live objects of the specs.
    fn objects(specs: &BTreeMap<Key, Spec>) -> (Vec<Value>, Vec<Value>) {
        let mut targets = Vec::new();
        let mut live = Vec::new();
        for (k, s) in specs {
            if s.place & 1 != 0 {
                targets.push(build(k, s, false));
            }
            if s.place & 2 != 0 {
                live.push(build(k, s, true));
            }
        }
        (targets, live)
    }

    fn healthy() -> HealthResult {
        serde_json::from_value(json!({"status": "Healthy"})).expect("a health")
    }

    fn observe(live: &[Value]) -> Observations {
        Observations {
            live: live.iter().map(|o| LiveObject::new(o.clone(), Some(healthy()))).collect(),
            now: 1_700_000_000,
            ..Observations::default()
        }
    }

    fn request(targets: Vec<Value>, prune: bool, options: Vec<String>) -> SyncRequest {
        SyncRequest {
            app_namespace: "a".into(),
            targets,
            prune,
            sync_options: AppOptions::new(options),
            revision: "0123456789abcdef".into(),
            started_at: 1_700_000_000,
            ..SyncRequest::default()
        }
    }

    fn app_options() -> impl Strategy<Value = Vec<String>> {
        prop::sample::subsequence(
            vec![
                "PruneLast=true",
                "ApplyOutOfSyncOnly=true",
                "Replace=true",
                "ServerSideApply=true",
            ],
            0..3,
        )
        .prop_map(|v| v.into_iter().map(str::to_string).collect())
    }

    /// The documented order of tasks: phase, wave, kind rank, name (bytes), group, namespace,
    /// applies before prunes, version.
    fn order_key(t: &crate::sync::Task) -> impl Ord + std::fmt::Debug {
        (
            t.phase,
            t.wave,
            t.kind_rank,
            t.key.name.as_bytes().to_vec(),
            t.key.group.clone(),
            t.key.namespace.clone(),
            t.is_prune(),
            t.key.version.clone(),
        )
    }

    /// The JSON bytes of a plan, as text for readable failures.
    fn bytes(p: &Plan) -> String {
        String::from_utf8(serde_json::to_vec(p).unwrap_or_default()).unwrap_or_default()
    }

    /// Runs a sync to its end against a simulated cluster that does what it is told, and
    /// returns every action asked for.
    fn run_sync(request: &SyncRequest, live: &[Value]) -> Vec<crate::sync::HostAction> {
        let mut cluster: Vec<Value> = live.to_vec();
        let mut state = SyncState::default();
        let mut all = Vec::new();
        for pass in 0..16i64 {
            let mut obs = observe(&cluster);
            obs.now = 1_700_000_000 + 2 * pass;
            let mut done_actions = Vec::new();
            let mut done = false;
            for _ in 0..16 {
                let next = request.step(&state, &obs);
                state = next.state.clone();
                done = next.done;
                if next.actions.is_empty() {
                    break;
                }
                obs.outcomes = next.actions.iter().map(|a| Outcome::ok(&a.id, "")).collect();
                done_actions.extend(next.actions);
            }
            for a in &done_actions {
                if a.dry_run {
                    continue;
                }
                let same = |o: &Value| ObjectRef::from_object_lossy(o).same_object(&a.key);
                match a.kind {
                    ActionKind::Delete => cluster.retain(|o| !same(o)),
                    ActionKind::RemoveFinalizer | ActionKind::Get => {}
                    _ => {
                        if let Some(obj) = &a.object {
                            cluster.retain(|o| !same(o));
                            cluster.push(obj.clone());
                        }
                    }
                }
            }
            all.extend(done_actions);
            if done {
                break;
            }
        }
        all
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(128))]

        /// The plan is strictly increasing in its documented order (a total order: no two
        /// tasks tie), and the same whatever the order of the desired and live objects, to
        /// the byte.
        #[test]
        fn the_plan_is_a_total_order_stable_under_permutation(
            (specs, permutation) in specs().prop_flat_map(|s| {
                let n = s.len();
                (Just(s), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
            }),
            prune in any::<bool>(),
            options in app_options(),
        ) {
            let (targets, live) = objects(&specs);
            let r = request(targets.clone(), prune, options.clone());
            let obs = observe(&live);
            let a = r.plan(&obs);
            let tasks: Vec<_> = a.tasks().collect();
            for pair in tasks.windows(2) {
                prop_assert!(order_key(pair[0]) < order_key(pair[1]),
                    "{:?} is not before {:?}", order_key(pair[0]), order_key(pair[1]));
            }
            // Permute both lists with the same drawn permutation of the specs.
            let keys: Vec<&Key> = specs.keys().collect();
            let mut t2 = Vec::new();
            let mut l2 = Vec::new();
            for k in permutation.iter().map(|j| keys[*j]) {
                let s = &specs[k];
                if s.place & 1 != 0 { t2.push(build(k, s, false)); }
                if s.place & 2 != 0 { l2.push(build(k, s, true)); }
            }
            let (r2, obs2) = (request(t2, prune, options.clone()), observe(&l2));
            let b = r2.plan(&obs2);
            prop_assert_eq!(bytes(&a), bytes(&b));
            // The same input again: the same bytes.
            prop_assert_eq!(bytes(&a), bytes(&r.plan(&observe(&live))));
        }

        /// A live resource marked `Prune=false` (or every one, with the app-level option) is
        /// never deleted: not planned as a delete, and not deleted by a whole sync run against
        /// a cluster that does what it is told.
        #[test]
        fn a_prune_false_resource_is_never_deleted(
            specs in specs(),
            options in app_options(),
            app_no_prune in prop::bool::weighted(0.2),
        ) {
            let (targets, live) = objects(&specs);
            let mut options = options;
            if app_no_prune {
                options.push("Prune=false".to_string());
            }
            let protected: Vec<ObjectRef> = specs
                .iter()
                .filter(|(_, s)| s.place & 2 != 0 && (s.no_prune || app_no_prune) && s.hook == 0)
                .map(|(k, s)| ObjectRef::from_object_lossy(&build(k, s, true)))
                .collect();
            let r = request(targets, true, options);
            let obs = observe(&live);
            let p = r.plan(&obs);
            for t in p.tasks() {
                if protected.iter().any(|k| k.same_object(&t.key)) {
                    prop_assert!(t.action != TaskAction::Delete, "{} planned for deletion", t.key);
                }
            }
            let actions = run_sync(&r, &live);
            for a in &actions {
                if a.kind == ActionKind::Delete && !a.dry_run {
                    prop_assert!(!protected.iter().any(|k| k.same_object(&a.key)), "{} deleted", a.key);
                }
            }
            // The same run again asks for the same actions, to the byte.
            let json = |a: &[crate::sync::HostAction]| serde_json::to_string(a).unwrap_or_default();
            prop_assert_eq!(json(&actions), json(&run_sync(&r, &live)));
        }

        /// With nothing desired, an automated sync with prune (without `allowEmpty`) never
        /// starts a sync that deletes: whatever the history, self-heal and statuses, the
        /// decision is not to sync, or its operation plans no delete.
        #[test]
        fn an_empty_desired_set_never_prunes_under_automated_sync(
            specs in specs(),
            self_heal in any::<bool>(),
            status in prop_oneof![
                4 => Just(SyncStatus::OutOfSync),
                1 => Just(SyncStatus::Synced),
                1 => Just(SyncStatus::Unknown),
            ],
            history in 0u8..4,
            same_revision in any::<bool>(),
            now in 1_700_000_000i64..1_700_100_000,
        ) {
            let (_, live) = objects(&specs);
            let live: Vec<Value> = live
                .into_iter()
                .filter(|o| !crate::vocabulary::is_hook(o))
                .collect();
            let revision = "a".repeat(40);
            let last = if same_revision { revision.clone() } else { "b".repeat(40) };
            let mut app = json!({"metadata": {"name": "shop"},
                "spec": {"destination": {"namespace": "a"}, "source": {"repoURL": "r"},
                         "syncPolicy": {"automated": {"prune": true, "selfHeal": self_heal}}}});
            if history > 0 {
                let phase = ["", "Succeeded", "Failed", "Error"][usize::from(history)];
                app["status"] = json!({"operationState": {"phase": phase, "message": "m",
                    "finishedAt": "2023-11-14T22:00:00Z",
                    "syncResult": {"revision": last, "source": {"repoURL": "r"}}}});
            }
            let app = Application::from_value(&app).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let resources: Vec<ResourceStatus> = live
                .iter()
                .map(|o| {
                    let r = ObjectRef::from_object_lossy(o);
                    serde_json::from_value(json!({"group": r.group, "kind": r.kind,
                        "namespace": r.namespace, "name": r.name, "status": "OutOfSync",
                        "requiresPruning": true}))
                        .expect("a resource status")
                })
                .collect();
            let input = AutoSyncInput::new(status, resources, vec![revision.clone()], now);
            let d = input.decide(&app);
            // The same input gives the same bytes.
            prop_assert_eq!(serde_json::to_vec(&d).unwrap_or_default(),
                serde_json::to_vec(&input.decide(&app)).unwrap_or_default());
            if let Some(op) = d.operation.as_ref().filter(|_| d.sync) {
                let mut r = request(Vec::new(), op.prune, op.sync_options.clone());
                r.resources = op.resources.clone();
                let obs = observe(&live);
            let p = r.plan(&obs);
                let deletes: Vec<String> = p.tasks()
                    .filter(|t| t.action == TaskAction::Delete)
                    .map(|t| t.key.to_string())
                    .collect();
                prop_assert!(deletes.is_empty(), "sync {:?} deletes {:?}", d.message, deletes);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Health through a Lua customization (the built-in checks and aggregation are in
// `tests::health::properties`).
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "lua")]
mod health {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::health::{self, HealthContext, HealthStatus};
    use crate::health::{HealthScripts, ScriptedHealth};
    use crate::script::LuaEngine;
    use crate::{config::Settings, object::ObjectRef};

    /// A script written the way Argo CD's are: it walks `status.conditions`, compares
    /// generations and reads nested fields without checking their types.
    const SCRIPT: &str = r#"
local hs = {status = "Progressing", message = "waiting"}
if obj.status ~= nil then
  if obj.status.observedGeneration ~= nil and obj.metadata.generation ~= nil
     and obj.status.observedGeneration < obj.metadata.generation then
    return hs
  end
  if obj.status.conditions ~= nil then
    for i, c in ipairs(obj.status.conditions) do
      if c.type == "Ready" and c.status == "True" then
        hs.status = "Healthy"
        hs.message = c.message
      elseif c.type == "Ready" then
        hs.status = "Degraded"
        hs.message = c.reason .. ": " .. tostring(c.message)
      end
    end
  end
end
return hs
"#;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(Value::from),
            prop::sample::select(vec!["Ready", "True", "False", "x", ""]).prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(vec![
                        "type",
                        "status",
                        "reason",
                        "message",
                        "conditions",
                        "generation",
                        "observedGeneration",
                    ])
                    .prop_map(str::to_string),
                    inner,
                    0..4,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A generation: mostly a small number, sometimes anything.
    fn generation() -> impl Strategy<Value = Value> {
        prop_oneof![4 => (0i64..3).prop_map(Value::from), 1 => json_value()]
    }

    /// A status shaped as the script expects, with any value in any field, or anything.
    fn status() -> impl Strategy<Value = Value> {
        let kind = prop_oneof![3 => Just(json!("Ready")), 1 => json_value()];
        let truth =
            prop_oneof![2 => Just(json!("True")), 1 => Just(json!("False")), 1 => json_value()];
        let text = || prop_oneof![3 => Just(json!("text")), 1 => json_value()];
        let condition = (kind, truth, text(), text())
            .prop_map(|(t, s, r, m)| json!({"type": t, "status": s, "reason": r, "message": m}));
        prop_oneof![
            3 => (prop::collection::vec(condition, 0..3), generation())
                .prop_map(|(c, g)| json!({"conditions": c, "observedGeneration": g})),
            1 => json_value(),
        ]
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(128))]

        /// Assessment through a Lua customization is total: any content gives a health or an
        /// error that names the object and the script and reads as `Unknown`; the same
        /// object gives the same answer again.
        #[test]
        fn scripted_assessment_is_total(
            status in status(),
            generation in generation(),
            deleting in prop::bool::weighted(0.2),
        ) {
            let data = BTreeMap::from([(
                "resource.customizations.health.example.com_Widget".to_string(),
                SCRIPT.to_string(),
            )]);
            let settings = Settings::from_data(&data).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let scripted = ScriptedHealth::new(HealthScripts::from_settings(&settings), LuaEngine::default());
            let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w", "namespace": "ns", "generation": generation},
                "status": status});
            if deleting {
                obj["metadata"]["deletionTimestamp"] = json!("2023-11-14T22:13:20Z");
            }
            let ctx = HealthContext::new(1_700_000_000).with_scripts(&scripted);
            let first = health::assess(&obj, &ctx);
            if let Err(e) = &first {
                prop_assert_eq!(e.health().status, HealthStatus::Unknown);
                prop_assert_eq!(e.object(), &ObjectRef::from_object_lossy(&obj));
                let named = matches!(e, crate::health::HealthError::Script { script, .. }
                    if script == "argocd-cm example.com/Widget");
                prop_assert!(named, "{:?}", e);
            }
            prop_assert_eq!(first, health::assess(&obj, &ctx));
        }
    }
}

/// An application of up to a dozen resources from [`triple`]s, renamed apart: each has a
/// desired object, a live one (with last-applied from the third), or both.
fn application() -> impl Strategy<Value = (Vec<Value>, Vec<Value>)> {
    prop::collection::vec((triple(), 0..3u8), 1..12).prop_map(|rs| {
        let (mut desired, mut live) = (Vec::new(), Vec::new());
        for (i, ((_, d, l, applied), sides)) in rs.into_iter().enumerate() {
            let name = json!(format!("r{i}"));
            let (mut d, mut l) = (d, with_last_applied(&l, &applied));
            d["metadata"]["name"] = name.clone();
            l["metadata"]["name"] = name;
            if sides != 1 {
                desired.push(d);
            }
            if sides != 0 {
                live.push(l);
            }
        }
        (desired, live)
    })
}

/// The JSON text of an application's comparison.
fn compared(desired: &[Value], live: &[Value], objects: bool) -> String {
    let (app, settings, scopes) = (Application::default(), Settings::default(), Scopes::builtin());
    let input = AppDiffInput::new(desired, live, &app, &settings, &scopes).with_objects(objects);
    serde_json::to_string(&diff::diff_app(&input).expect("diff_app has no error today"))
        .expect("plain data")
}

proptest! {
    #![proptest_config(crate::tests::support::cases(32))]

    /// Without the objects, a comparison is the same as with them, objects aside: the same
    /// statuses, patches and messages.
    #[test]
    fn leaving_the_objects_out_changes_nothing_else((desired, live) in application()) {
        let mut full: Value = serde_json::from_str(&compared(&desired, &live, true)).unwrap();
        for r in full["resources"].as_array_mut().into_iter().flatten() {
            r["normalizedLive"] = Value::Null;
            r["predictedLive"] = Value::Null;
        }
        let lean: Value = serde_json::from_str(&compared(&desired, &live, false)).unwrap();
        prop_assert_eq!(full, lean);
    }

    /// Spread over threads (feature `parallel`), `diff_app` gives the same bytes as on one.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_parallel_comparison_is_the_serial_one_byte_for_byte((desired, live) in application()) {
        let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("a pool");
        let serial = pool(1).install(|| compared(&desired, &live, true));
        let parallel = pool(4).install(|| compared(&desired, &live, true));
        prop_assert_eq!(serial, parallel);
    }
}

/// An [`application`] with what a comparison sets aside, leaves out or fails on: a hook, a
/// repeated desired object, a live object tracked by no app and, with `fails`, a desired
/// object whose ignore annotation is invalid (the comparison fails: every resource `Unknown`).
fn application_with_extras() -> impl Strategy<Value = (Vec<Value>, Vec<Value>)> {
    (application(), any::<bool>(), any::<bool>()).prop_map(
        |((mut desired, mut live), repeat, fails)| {
            desired.push(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": NS,
                "annotations": {"argocd.argoproj.io/hook": "PreSync"}}}));
            if repeat && let Some(first) = desired.first().cloned() {
                desired.push(first);
            }
            live.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-root-ca.crt", "namespace": NS}}));
            if fails {
                desired.push(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "bad", "namespace": NS, "annotations":
                    {"gitops-core.io/ignore-differences": "jsonPointers: [data/b]"}}}));
            }
            (desired, live)
        },
    )
}

/// The JSON text of an application's comparison by `diff_app` (lent objects) and by
/// `diff_app_owned` with the objects from `split` on handed over (those before it lent).
fn compared_lent_and_owned(
    desired: &[Value],
    live: &[Value],
    named: bool,
    objects: bool,
    split: (prop::sample::Index, prop::sample::Index),
) -> (String, String) {
    let app = if named {
        Application::from_value(&json!({"metadata": {"name": "shop"},
            "spec": {"destination": {"namespace": NS}}}))
        .expect("a valid app")
    } else {
        Application::default()
    };
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let input = AppDiffInput::new(desired, live, &app, &settings, &scopes).with_objects(objects);
    let text = |d: &diff::AppDiff| serde_json::to_string(d).expect("plain data");
    let lent = diff::diff_app(&input).expect("diff_app has no error today");
    let (d, l) = (split.0.index(desired.len() + 1), split.1.index(live.len() + 1));
    let input = AppDiffInput { desired: &desired[..d], live: &live[..l], ..input };
    let owned = diff::diff_app_owned(&input, desired[d..].to_vec(), live[l..].to_vec())
        .expect("diff_app_owned has no error today");
    assert_eq!(lent, owned, "the same AppDiff, objects kept included");
    (text(&lent), text(&owned))
}

proptest! {
    #![proptest_config(crate::tests::support::cases(48))]

    /// Objects handed over (`diff_app_owned`, all or from any point on) give `diff_app`'s
    /// answer byte for byte: hooks, repeated objects, live objects left out, Secrets, a failed
    /// comparison, with and without the objects kept, with and without an app name.
    #[test]
    fn owned_objects_give_the_lent_answer(
        (desired, live) in application_with_extras(),
        named in any::<bool>(),
        objects in any::<bool>(),
        split in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        let (lent, owned) = compared_lent_and_owned(&desired, &live, named, objects, split);
        prop_assert_eq!(lent, owned);
    }

    /// The same spread over threads (feature `parallel`): each pair moved into its comparison
    /// on any thread, the results in key order.
    #[cfg(feature = "parallel")]
    #[test]
    fn owned_objects_on_threads_give_the_serial_lent_answer(
        (desired, live) in application_with_extras(),
        named in any::<bool>(),
        split in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("a pool");
        let (serial, _) =
            pool(1).install(|| compared_lent_and_owned(&desired, &live, named, true, split));
        let (lent, owned) =
            pool(4).install(|| compared_lent_and_owned(&desired, &live, named, true, split));
        prop_assert_eq!(&serial, &lent);
        prop_assert_eq!(serial, owned);
    }
}
