//! Planning cost: a sync plan for 5,000 resources across 10 waves, with hooks and prunes.

use gitops_core::sync::{LiveObject, Observations, SyncRequest, plan};
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

/// 5,000 desired objects in 10 waves (a PreSync and a PostSync hook per wave among them), and a
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
    request.sync_options = gitops_core::sync::AppOptions::new(vec!["CreateNamespace=true".into()]);
    let mut obs = Observations::default();
    obs.live = live;
    (request, obs)
}

#[divan::bench(sample_count = 20)]
fn plan_5000_resources_10_waves(bencher: divan::Bencher) {
    let (request, obs) = inputs(5_000);
    bencher.bench(|| {
        let p = plan(divan::black_box(&request), divan::black_box(&obs));
        assert_eq!(p.tasks().count(), 5_101);
        p
    });
}

/// The same shape at a fifth of the size, to show how planning scales.
#[divan::bench(sample_count = 20)]
fn plan_1000_resources_10_waves(bencher: divan::Bencher) {
    let (request, obs) = inputs(1_000);
    bencher.bench(|| plan(divan::black_box(&request), divan::black_box(&obs)));
}

/// One whole first pass of the step function on the same input: the dry run of every task
/// and the wet run of the first wave, answering each batch of actions.
#[divan::bench(sample_count = 10)]
fn step_first_pass_5000_resources(bencher: divan::Bencher) {
    use gitops_core::sync::{Outcome, SyncState, step};
    let (request, obs) = inputs(5_000);
    bencher.bench(|| {
        let mut state = SyncState::default();
        let mut o = obs.clone();
        loop {
            let s = step(&request, &state, &o);
            state = s.state;
            if s.actions.is_empty() {
                break;
            }
            o.outcomes = s.actions.iter().map(|a| Outcome::ok(&a.id, "")).collect();
        }
        state
    });
}
