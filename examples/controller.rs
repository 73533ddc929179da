//! A controller's reconcile loop, with gitops-core as its brain and a pretend cluster as its
//! hands: read the manifests, diff the app (with its ignore rules), assess health (with a Lua
//! health check from `argocd-cm`), ask whether an automated sync runs, plan it, and drive the
//! sync with `step` until it is done, carrying out each action on the pretend cluster.
//!
//! Run it with `cargo run --example controller`. No cluster, no files, no clock: the objects
//! are inline and the time is a constant, as the library wants them (passed in, never read).

use std::collections::BTreeMap;

use gitops_core::diff::{AppDiffInput, diff_app};
use gitops_core::health::{AppHealth, HealthContext, ResourceHealthInput, assess};
use gitops_core::health::{HealthScripts, ScriptedHealth};
use gitops_core::sync::AutoSyncInput;
use gitops_core::sync::{
    ActionKind, LiveObject, Observations, Outcome, ResourceStatus, SyncRequest, SyncState,
};
use gitops_core::{
    config::Application, config::Settings, object::ObjectRef, object::Scopes,
    object::parse_manifests,
};
use serde_json::{Value, json};

/// What Git renders for the app.
const MANIFESTS: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: 'shop/api:1.1'}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {greeting: hello}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 3}
";

/// A pretend cluster: objects by `group/Kind/namespace/name`. Applying an object stores it
/// and makes it ready, as a real controller of that kind would in a while.
#[derive(Default)]
struct Cluster {
    objects: BTreeMap<String, Value>,
}

impl Cluster {
    fn key(r: &ObjectRef) -> String {
        format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name)
    }

    fn live(&self) -> Vec<Value> {
        self.objects.values().cloned().collect()
    }

    /// Carries out one action and reports its outcome, as the host of `step` must.
    fn carry_out(
        &mut self,
        kind: ActionKind,
        key: &ObjectRef,
        object: Option<&Value>,
        dry_run: bool,
        id: &str,
    ) -> Outcome {
        let k = Cluster::key(key);
        match kind {
            _ if dry_run => Outcome::ok(id, "(dry run)"),
            ActionKind::Apply | ActionKind::Create | ActionKind::Replace | ActionKind::Update => {
                let mut obj = object.cloned().unwrap_or(Value::Null);
                // The kinds' controllers do their work at once in this cluster.
                match key.kind.as_str() {
                    "Deployment" => {
                        let n = obj["spec"]["replicas"].clone();
                        obj["metadata"]["generation"] = json!(1);
                        obj["status"] = json!({"observedGeneration": 1, "replicas": n,
                            "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n});
                    }
                    "Widget" => obj["status"] = json!({"ready": true}),
                    _ => {}
                }
                self.objects.insert(k, obj);
                Outcome::ok(id, &format!("{} configured", key.name))
            }
            ActionKind::Delete => match self.objects.remove(&k) {
                Some(_) => Outcome::ok(id, "deleted"),
                None => Outcome::not_found(id),
            },
            ActionKind::Get if self.objects.contains_key(&k) => Outcome::ok(id, ""),
            ActionKind::Get => Outcome::not_found(id),
            _ => Outcome::ok(id, ""),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The host's clock, read once per reconcile and passed in (unix seconds).
    let now: i64 = 1_700_000_000;

    // The Application and argocd-cm, as Argo CD users write them.
    let app = Application::from_value(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "shop", "namespace": "argocd"},
        "spec": {
            "destination": {"namespace": "shop"},
            "syncPolicy": {"automated": {"prune": true, "selfHeal": true}},
            // An HPA owns the replica count.
            "ignoreDifferences": [{"group": "apps", "kind": "Deployment",
                                   "jsonPointers": ["/spec/replicas"]}]
        }
    }))?;
    let settings = Settings::from_config_map(&json!({"data": {
        "resource.customizations.health.example.com_Widget":
            "if obj.status ~= nil and obj.status.ready then return {status = 'Healthy'} end\n\
             return {status = 'Progressing', message = 'widget is warming up'}"
    }}))?;
    let scripts = ScriptedHealth::new(HealthScripts::from_settings(&settings), Default::default());

    // The host stamps each manifest with the app's tracking id, as Argo CD's controller does
    // before it compares and syncs (annotation tracking, the default of Argo CD 3).
    let desired: Vec<Value> = parse_manifests(MANIFESTS)?
        .into_iter()
        .map(|mut obj| {
            let r = ObjectRef::from_object(&obj).expect("parsed objects have an identity");
            let id = format!("shop:{}/{}:shop/{}", r.group, r.kind, r.name);
            obj["metadata"]["annotations"] = json!({"argocd.argoproj.io/tracking-id": id});
            obj
        })
        .collect();
    let mut cluster = Cluster::default();
    // Someone created the ConfigMap by hand with another greeting.
    cluster.objects.insert(
        "/ConfigMap/shop/settings".into(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "settings", "namespace": "shop"}, "data": {"greeting": "hi"}}),
    );

    let mut synced = false;
    for reconcile in 1..=2 {
        let live = cluster.live();
        // 1. Compare.
        let mut scopes = Scopes::builtin();
        scopes.add_crds(desired.iter().chain(&live));
        let diff = diff_app(&AppDiffInput::new(&desired, &live, &app, &settings, &scopes))?;
        println!("reconcile {reconcile}: {:?}", diff.sync_status);

        // 2. Health, with the Lua check for Widgets.
        let ctx = HealthContext::new(now).with_scripts(&scripts);
        let inputs: Vec<ResourceHealthInput> = live
            .iter()
            .filter_map(|o| ResourceHealthInput::from_objects(None, Some(o), &ctx))
            .collect();
        let health = AppHealth::aggregate(&inputs);
        println!("  health: {} {}", health.status, health.message);

        // 3. Does an automated sync run now?
        let (status, resources) = ResourceStatus::of_diff(&diff);
        let decision =
            AutoSyncInput::new(status, resources, vec!["abc123".into()], now).decide(&app);
        println!("  decide: sync={} ({})", decision.sync, decision.message);
        if !decision.sync {
            // After the sync everything matches Git and is healthy: nothing left to do.
            assert!(synced, "the first reconcile syncs");
            assert_eq!(format!("{:?}", diff.sync_status), "Synced");
            assert_eq!(health.status.as_str(), "Healthy");
            break;
        }
        assert!(!synced, "a second sync of the same revision");
        synced = true;

        // 4. Plan, then drive the sync step by step, as Argo CD's operation loop does.
        let mut request = SyncRequest::for_app(&app, desired.clone(), "abc123", now);
        request.scopes = scopes;
        request.modified = Some(SyncRequest::modified_of(&diff));
        let live_objects = |c: &Cluster| -> Vec<LiveObject> {
            c.live()
                .into_iter()
                .map(|o| {
                    let h =
                        assess(&o, &HealthContext::new(now).with_scripts(&scripts)).ok().flatten();
                    LiveObject::new(o, h)
                })
                .collect()
        };
        let observe = |c: &Cluster, outcomes: Vec<Outcome>| {
            let mut o = Observations::default();
            o.live = live_objects(c);
            o.outcomes = outcomes;
            o.now = now;
            o
        };
        let mut observations = observe(&cluster, Vec::new());
        let planned = request.plan(&observations);
        println!("  plan: {} task(s)", planned.tasks().count());
        let mut state = SyncState::default();
        for pass in 1.. {
            let s = request.step(&state, &observations);
            state = s.state;
            let outcomes: Vec<Outcome> = s
                .actions
                .iter()
                .map(|a| cluster.carry_out(a.kind, &a.key, a.object.as_ref(), a.dry_run, &a.id))
                .collect();
            println!("  step {pass}: {} action(s), phase {:?}", s.actions.len(), state.phase);
            if s.done {
                break;
            }
            assert!(pass < 50, "the sync did not finish");
            observations = observe(&cluster, outcomes);
        }
        println!("  sync: {:?} {}", state.phase, state.message);
        assert_eq!(format!("{:?}", state.phase), "Succeeded");
    }
    Ok(())
}
