//! The prepared app (`crate::reconcile`, issue 30): after any sequence of watch events, its
//! answer is byte for byte the answer of a full `diff_app` plus `AppHealth::of_diff` over the same
//! state, and each step's [`Reconciled`] is the change between the two full answers.
//!
//! The generated apps draw on a small universe of identities so that events collide: adds,
//! changes, deletes and re-adds of the same objects; Secrets; tracking that names the app,
//! another app, nothing, or another object; objects with owners; hooks and `Prune=false` among
//! the desired objects; a destination Namespace under `managedNamespaceMetadata`; ignore
//! rules (a JSON pointer, a jq expression, an invalid jq expression that fails every
//! comparison, a desired object's own annotation); the three tracking methods. Between
//! watch events come new desired sets (a new commit), which change objects' content, their
//! tracking, their hook and sync-option annotations and their own ignore rules.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::support::cases;
use crate::diff::{AppDiff, AppDiffInput, diff_app};
use crate::health::{AppHealth, HealthContext};
use crate::reconcile::{LiveChange, PreparedApp, Reconciled};
use crate::{config::Application, config::Settings, object::Scopes};

const NS: &str = "shop";

/// One identity of the universe: kind and name.
fn identity() -> impl Strategy<Value = (usize, usize)> {
    (0..5usize, 0..3usize)
}

/// The object of an identity with a variant of its content and tracking.
fn object(id: (usize, usize), content: u8, tracking: u8, live: bool) -> Value {
    let name = ["a", "b", "c"][id.1];
    let mut obj = match id.0 {
        0 => json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS},
            "data": {"x": content.to_string(), "y": (content % 2).to_string()}}),
        1 => json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": NS},
            "data": {"token": if content.is_multiple_of(2) { "QUJD" } else { "REVG" }}}),
        2 => {
            let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": NS, "generation": 1},
                "spec": {"replicas": content % 3}});
            if live {
                d["status"] = json!({"observedGeneration": 1, "replicas": content % 3,
                    "updatedReplicas": content % 2, "availableReplicas": content % 2,
                    "readyReplicas": content % 2});
            }
            d
        }
        3 => json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"ports": [{"port": 80 + u16::from(content % 2)}]}}),
        _ => json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": if id.1 == 0 { NS.to_string() } else { format!("ns-{name}") }}}),
    };
    // Desired objects are also written without their namespace (the destination's).
    if !live
        && content % 5 == 4
        && let Some(m) = obj["metadata"].as_object_mut()
    {
        m.remove("namespace");
    }
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    let group = if kind == "Deployment" { "apps" } else { "" };
    let obj_name = obj["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let meta = &mut obj["metadata"];
    match tracking % 8 {
        0 => {}
        1 | 2 => {
            meta["annotations"] = json!({"argocd.argoproj.io/tracking-id":
                format!("shop:{group}/{kind}:{NS}/{obj_name}")});
            meta["labels"] = json!({"app.kubernetes.io/instance": "shop"});
        }
        3 => {
            meta["annotations"] = json!({"argocd.argoproj.io/tracking-id":
                format!("other:{group}/{kind}:{NS}/{obj_name}")});
            meta["labels"] = json!({"app.kubernetes.io/instance": "other"});
        }
        4 => {
            meta["annotations"] = json!({"argocd.argoproj.io/tracking-id":
                format!("shop:{group}/{kind}:{NS}/someone-else")});
        }
        5 if !live => {
            meta["annotations"] = json!({"gitops-core.io/ignore-differences":
                if content.is_multiple_of(2) { "jsonPointers: [/data/x]" } else { "/spec/replicas" }});
        }
        5 => {
            meta["ownerReferences"] =
                json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]);
            meta["labels"] = json!({"app.kubernetes.io/instance": "shop"});
        }
        6 if !live => {
            meta["annotations"] = json!({"argocd.argoproj.io/sync-options": "Prune=false"});
        }
        7 if !live => {
            meta["annotations"] = json!({"argocd.argoproj.io/hook": "PreSync"});
        }
        7 => {
            meta["annotations"] =
                json!({"gitops-core.io/ignore-differences": "jsonPointers: [/data/y]"});
        }
        _ => {}
    }
    obj
}

/// One watch event.
#[derive(Debug, Clone)]
enum Event {
    Put((usize, usize), u8, u8),
    Delete((usize, usize)),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (identity(), any::<u8>(), any::<u8>()).prop_map(|(i, c, t)| Event::Put(i, c, t)),
        1 => identity().prop_map(Event::Delete),
    ]
}

/// One step: watch events, or a new desired set.
#[derive(Debug, Clone)]
enum Step {
    Live(Vec<Event>),
    Desired(Vec<Value>),
}

fn desired_set() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec((identity(), any::<u8>(), any::<u8>()), 0..8)
        .prop_map(|d| d.into_iter().map(|(id, c, t)| object(id, c, t, false)).collect())
}

/// A new desired set: drawn anew, or the last one with some objects changed, dropped or
/// added (so that most objects stay as they were).
fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => prop::collection::vec(event(), 1..4).prop_map(Step::Live),
        1 => desired_set().prop_map(Step::Desired),
        1 => (prop::collection::vec((0..8usize, identity(), any::<u8>(), any::<u8>()), 1..3))
            .prop_map(|edits| Step::Desired(edits.into_iter().map(|(at, id, c, t)| {
                // Marked edits, applied to the last set in `check`.
                json!({"edit": at, "object": object(id, c, t, false)})
            }).collect())),
    ]
}

/// A generated app: desired objects, the app, the settings, the first live objects, the
/// steps.
#[derive(Debug, Clone)]
struct Case {
    desired: Vec<Value>,
    app: Value,
    cm: Value,
    live: Vec<Event>,
    steps: Vec<Step>,
    reveal: bool,
}

/// The desired set after a step: a new set as drawn, or the last with edits (`at` past the
/// end adds, an even `at` within replaces, an odd one removes).
fn next_desired(last: &[Value], set: &[Value]) -> Vec<Value> {
    if set.first().is_none_or(|e| e.get("edit").is_none()) {
        return set.to_vec();
    }
    let mut out = last.to_vec();
    for e in set {
        let at = e["edit"].as_u64().unwrap_or_default() as usize;
        let obj = e["object"].clone();
        if at >= out.len() {
            out.push(obj);
        } else if at.is_multiple_of(2) {
            out[at] = obj;
        } else {
            out.remove(at);
        }
    }
    out
}

fn case() -> impl Strategy<Value = Case> {
    let desired = desired_set();
    let rules = prop_oneof![
        Just(json!([])),
        Just(json!([{"kind": "ConfigMap", "jsonPointers": ["/data/x"]}])),
        Just(
            json!([{"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec.replicas"]}])
        ),
        Just(json!([{"kind": "ConfigMap", "jqPathExpressions": [".data["]}])),
    ];
    let tracking = prop_oneof![Just("annotation"), Just("label"), Just("annotation+label")];
    (
        desired,
        rules,
        any::<bool>(),
        tracking,
        prop::collection::vec(event(), 0..8),
        prop::collection::vec(step(), 1..8),
        any::<bool>(),
    )
        .prop_map(|(desired, rules, managed_ns, tracking, live, steps, reveal)| {
            let mut app = json!({"metadata": {"name": "shop", "namespace": "argocd"},
                "spec": {"destination": {"namespace": NS}, "ignoreDifferences": rules}});
            if managed_ns {
                app["spec"]["syncPolicy"] =
                    json!({"managedNamespaceMetadata": {"labels": {"team": "a"}}});
            }
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "argocd-cm", "namespace": "argocd"},
                "data": {"application.resourceTrackingMethod": tracking}});
            Case { desired, app, cm, live, steps, reveal }
        })
}

/// The full answer over a live state.
fn full(
    case: &Case,
    desired: &[Value],
    live: &BTreeMap<(usize, usize), Value>,
    app: &Application,
    settings: &Settings,
    ctx: &HealthContext<'_>,
) -> (AppDiff, AppHealth) {
    let scopes = Scopes::builtin();
    let live: Vec<Value> = live.values().cloned().collect();
    let input =
        AppDiffInput::new(desired, &live, app, settings, &scopes).with_reveal_secrets(case.reveal);
    let diff = diff_app(&input).unwrap_or_else(|e| panic!("diff_app: {e}"));
    let health = AppHealth::of_diff(&diff, desired, &live, ctx);
    (diff, health)
}

fn to_event(e: &Event, state: &mut BTreeMap<(usize, usize), Value>) -> LiveChange {
    match *e {
        Event::Put(id, c, t) => {
            let obj = object(id, c, t, true);
            let added = state.insert(id, obj.clone()).is_none();
            if added { LiveChange::Added(obj) } else { LiveChange::Modified(obj) }
        }
        Event::Delete(id) => {
            let obj = state.remove(&id).unwrap_or_else(|| object(id, 0, 0, true));
            LiveChange::Deleted(obj)
        }
    }
}

/// The rows of a full answer, by object, to apply a step's changes to.
fn rows(diff: &AppDiff) -> Vec<String> {
    diff.resources.iter().map(|r| serde_json::to_string(r).unwrap_or_default()).collect()
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let app = Application::from_value(&case.app).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let settings =
        Settings::from_config_map(&case.cm).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let scopes = Scopes::builtin();
    let ctx = HealthContext::new(1_700_000_000);
    let mut state = BTreeMap::new();
    for e in &case.live {
        to_event(e, &mut state);
    }
    // The first live state through `new`, the steps through `apply`.
    let initial: Vec<Value> = state.values().cloned().collect();
    let input = AppDiffInput::new(&case.desired, &initial, &app, &settings, &scopes)
        .with_reveal_secrets(case.reveal);
    let mut prepared = PreparedApp::new(&input, &ctx);
    let mut desired = case.desired.clone();
    let (mut diff, mut health) = full(case, &desired, &state, &app, &settings, &ctx);
    let bytes = |d: &AppDiff, h: &AppHealth| {
        (serde_json::to_string(d).unwrap_or_default(), serde_json::to_string(h).unwrap_or_default())
    };
    prop_assert_eq!(bytes(&prepared.diff(), &prepared.health()), bytes(&diff, &health));
    prop_assert_eq!(prepared.health().error_message(), health.error_message());
    for step in &case.steps {
        let out: Reconciled = match step {
            Step::Live(events) => {
                let changes: Vec<LiveChange> =
                    events.iter().map(|e| to_event(e, &mut state)).collect();
                prepared.apply(&changes, &ctx)
            }
            Step::Desired(set) => {
                desired = next_desired(&desired, set);
                prepared.set_desired(desired.clone(), &ctx)
            }
        };
        let (d, h) = full(case, &desired, &state, &app, &settings, &ctx);
        prop_assert_eq!(bytes(&prepared.diff(), &prepared.health()), bytes(&d, &h));
        prop_assert_eq!(prepared.health().error_message(), h.error_message());
        // The step's answer: the roll-ups of the full answer, and its rows from the last.
        prop_assert_eq!(out.sync_status, d.sync_status);
        prop_assert_eq!(out.health_status, h.status);
        prop_assert_eq!(&out.health_message, &h.message);
        prop_assert_eq!(&out.conditions, &d.conditions);
        if let Some(notes) = &out.notes {
            prop_assert_eq!(notes, &d.notes);
        } else {
            prop_assert_eq!(&diff.notes, &d.notes);
        }
        let mut merged: BTreeMap<_, _> =
            diff.resources.iter().map(|r| (r.object.clone(), r.clone())).collect();
        for r in &out.removed {
            merged.retain(|o, _| !o.same_object(r));
        }
        for r in &out.resources {
            merged.retain(|o, _| !o.same_object(&r.object));
            merged.insert(r.object.clone(), r.clone());
        }
        let merged: Vec<_> = merged.into_values().collect();
        prop_assert_eq!(
            rows(&AppDiff { resources: merged, ..d.clone() }),
            rows(&d),
            "rows of the step"
        );
        let mut merged: BTreeMap<_, _> =
            health.resources.iter().map(|r| (r.object.clone(), r.clone())).collect();
        for r in &out.removed {
            merged.retain(|o, _| !o.same_object(r));
        }
        for r in &out.health {
            merged.retain(|o, _| !o.same_object(&r.object));
            merged.insert(r.object.clone(), r.clone());
        }
        prop_assert_eq!(merged.into_values().collect::<Vec<_>>(), h.resources.clone());
        (diff, health) = (d, h);
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any sequence of watch events gives, after each step, the full answer's bytes.
    #[test]
    fn a_prepared_app_answers_as_a_full_comparison(case in case()) {
        check(&case)?;
    }
}

/// A desired object written without its namespace, not live, is Missing (its health was
/// left out when the lookup wanted the namespace as written).
#[test]
fn a_desired_object_without_namespace_is_missing() {
    let app = Application::from_value(&json!({"metadata": {"name": "shop"},
        "spec": {"destination": {"namespace": NS}}}))
    .unwrap_or_default();
    let (settings, scopes) = (Settings::default(), Scopes::builtin());
    let desired = [json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api"}, "spec": {"replicas": 1}})];
    let input = AppDiffInput::new(&desired, &[], &app, &settings, &scopes);
    let ctx = HealthContext::new(0);
    let diff = diff_app(&input).unwrap_or_else(|e| panic!("{e}"));
    let health = AppHealth::of_diff(&diff, &desired, &[], &ctx);
    let text = serde_json::to_string(&health).unwrap_or_default();
    assert_eq!(
        text,
        r#"{"status":"Missing","message":"","resources":[{"object":{"group":"apps","version":"v1","kind":"Deployment","namespace":"shop","name":"api"},"health":{"status":"Missing"}}]}"#
    );
    let prepared = PreparedApp::new(&input, &ctx);
    assert_eq!(serde_json::to_string(&prepared.health()).unwrap_or_default(), text);
}

/// A prepared app can be shared between threads, and moved to one.
#[test]
fn a_prepared_app_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PreparedApp>();
}

/// The destination Namespace under `managedNamespaceMetadata`: synthesized while live, gone
/// when deleted, back when re-added.
#[test]
fn the_managed_namespace_follows_its_live_object() {
    let app = json!({"metadata": {"name": "shop", "namespace": "argocd"},
        "spec": {"destination": {"namespace": NS},
            "syncPolicy": {"managedNamespaceMetadata": {"labels": {"team": "a"}}}}});
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": "argocd"}, "data": {}});
    let case = Case {
        desired: vec![object((0, 0), 1, 0, false)],
        app,
        cm,
        live: vec![],
        steps: vec![
            Step::Live(vec![Event::Put((4, 0), 0, 1)]),
            Step::Live(vec![Event::Delete((4, 0))]),
            Step::Live(vec![Event::Put((4, 0), 0, 1)]),
            // A commit that desires the Namespace: compared as desired, not synthesized.
            Step::Desired(vec![object((0, 0), 1, 0, false), object((4, 0), 0, 1, false)]),
            Step::Desired(vec![object((0, 0), 1, 0, false)]),
        ],
        reveal: false,
    };
    let full_app = Application::from_value(&case.app).unwrap_or_default();
    let settings = Settings::from_config_map(&case.cm).unwrap_or_default();
    let mut state = BTreeMap::new();
    to_event(&Event::Put((4, 0), 0, 1), &mut state);
    let (d, _) = full(&case, &case.desired, &state, &full_app, &settings, &HealthContext::new(0));
    // The Namespace is compared (synthesized), not pruned.
    let ns = d.resources.iter().find(|r| r.object.kind == "Namespace");
    assert_eq!(ns.map(|r| r.requires_pruning), Some(false), "{d:#?}");
    if let Err(e) = check(&case) {
        panic!("{e}");
    }
}
