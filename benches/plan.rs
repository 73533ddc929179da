//! Planning and stepping cost: sync plans of 1,000, 5,000 and 20,000 resources across 10 waves,
//! with hooks and prunes; one pass of `step` and a whole sync driven with it at the same sizes.

use gitops_core::sync::{LiveObject, Observations, SyncRequest};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const KINDS: [(&str, &str); 5] = [
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("v1", "Secret"),
    ("batch/v1", "CronJob"),
];

/// `n` desired objects in 10 waves (a PreSync and a PostSync hook in every 250 objects), and a
/// live copy of every other one plus 100 objects to prune.
fn inputs(n: usize) -> (SyncRequest, Observations) {
    let mut targets: Vec<Value> = Vec::new();
    let mut live = Vec::new();
    for i in 0..n {
        let (api, kind) = KINDS[i % KINDS.len()];
        let wave = (i % 10).to_string();
        let mut annotations = json!({"argocd.argoproj.io/sync-wave": wave});
        if i % 250 == 0 {
            annotations["argocd.argoproj.io/hook"] = json!("PreSync");
        } else if i % 250 == 1 {
            annotations["argocd.argoproj.io/hook"] = json!("PostSync");
            annotations["argocd.argoproj.io/hook-delete-policy"] = json!("HookSucceeded");
        }
        let obj = json!({
            "apiVersion": api, "kind": kind,
            "metadata": {"name": format!("obj-{i:05}"), "annotations": annotations},
            "spec": {"replicas": 2}
        });
        if i % 2 == 0 {
            let mut l = obj.clone();
            l["metadata"]["namespace"] = json!("bench");
            live.push(LiveObject::new(l, None));
        }
        targets.push(obj);
    }
    for i in 0..100 {
        let l = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("old-{i:03}"), "namespace": "bench",
                         "annotations": {"argocd.argoproj.io/sync-wave": (i % 10).to_string()}}});
        live.push(LiveObject::new(l, None));
    }
    let mut request = SyncRequest::default();
    request.app_namespace = "bench".into();
    request.targets = targets;
    request.prune = true;
    request.revision = "0123456789abcdef0123456789abcdef01234567".into();
    request.started_at = 1_700_000_000;
    request.sync_options =
        gitops_core::vocabulary::AppOptions::new(vec!["CreateNamespace=true".into()]);
    let mut obs = Observations::default();
    obs.live = live;
    (request, obs)
}

/// The sizes every case runs at, to show how planning and stepping scale.
const SIZES: [usize; 3] = [1_000, 5_000, 20_000];

/// `plan` of N resources (N + 101 tasks).
#[divan::bench(args = SIZES, sample_count = 10)]
fn plan_resources(bencher: divan::Bencher, n: usize) {
    let (request, obs) = inputs(n);
    bencher.bench(|| {
        let p = divan::black_box(&request).plan(divan::black_box(&obs));
        assert_eq!(p.tasks().count(), n + 101);
        p
    });
}

/// One whole first pass of the step function: the dry run of every task and the wet run of
/// the first wave, answering each batch of actions, until a call asks for nothing more.
#[divan::bench(args = SIZES, sample_count = 5)]
fn step_first_pass(bencher: divan::Bencher, n: usize) {
    let (request, obs) = inputs(n);
    bencher.bench(|| first_pass(&request, &obs));
}

/// A whole sync driven to the end with `step`: every pass answered, the applied objects put
/// into the live list for the next pass (no health check, so each is done once it exists),
/// the deleted ones taken out.
#[divan::bench(args = SIZES, sample_count = 3)]
fn step_whole_sync(bencher: divan::Bencher, n: usize) {
    let (request, obs) = inputs(n);
    bencher.bench(|| {
        let state = whole_sync(&request, &obs);
        assert_eq!(state.phase, gitops_core::sync::OperationPhase::Succeeded);
        state
    });
}

fn first_pass(request: &SyncRequest, obs: &Observations) -> gitops_core::sync::SyncState {
    use gitops_core::sync::{Outcome, SyncState};
    let mut state = SyncState::default();
    let mut o = obs.clone();
    loop {
        let s = request.step(&state, &o);
        state = s.state;
        if s.actions.is_empty() {
            break;
        }
        o.outcomes = s.actions.iter().map(|a| Outcome::ok(&a.id, "")).collect();
    }
    state
}

fn whole_sync(request: &SyncRequest, obs: &Observations) -> gitops_core::sync::SyncState {
    use gitops_core::object::ObjectRef;
    use gitops_core::sync::{ActionKind, Outcome, SyncState};
    use std::collections::BTreeMap;
    let mut cluster: BTreeMap<String, Value> = obs
        .live
        .iter()
        .map(|l| (ObjectRef::from_object_lossy(&l.object).key(), l.object.clone()))
        .collect();
    let mut state = SyncState::default();
    for _pass in 0..1_000 {
        let mut o = obs.clone();
        o.live = cluster.values().map(|v| LiveObject::new(v.clone(), None)).collect();
        let mut done_actions = Vec::new();
        let last = loop {
            let s = request.step(&state, &o);
            state = s.state.clone();
            if s.actions.is_empty() {
                break s;
            }
            o.outcomes = s.actions.iter().map(|a| Outcome::ok(&a.id, "")).collect();
            done_actions.extend(s.actions);
        };
        for a in done_actions.into_iter().filter(|a| !a.dry_run) {
            let key = a.key.key();
            match (a.kind, a.object) {
                (ActionKind::Delete, _) => {
                    cluster.remove(&key);
                }
                (ActionKind::RemoveFinalizer, _) => {
                    if let Some(obj) = cluster.get_mut(&key) {
                        obj["metadata"]["finalizers"] = json!([]);
                    }
                }
                (_, Some(obj)) => {
                    cluster.insert(key, obj);
                }
                (_, None) => {}
            }
        }
        if last.done {
            break;
        }
    }
    state
}
