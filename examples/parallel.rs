//! Diffing many apps at once, one thread per app, sharing one `argocd-cm`: the library's
//! types are `Send + Sync` and its functions pure, so a controller needs no locks around it.
//! The answers do not depend on how the threads interleave: the same apps give the same
//! bytes, which this program checks against a serial run.
//!
//! Run it with `cargo run --example parallel`.

use std::thread;

use gitops_core::diff::{AppDiff, AppDiffInput, diff_app};
use gitops_core::{config::Application, config::Settings, object::Scopes};
use serde_json::{Value, json};

/// App `i`: a Deployment whose live copy has drifted in every other app.
fn app(i: usize) -> (Application, Vec<Value>, Vec<Value>) {
    let name = format!("team-{i}");
    let app = Application::from_value(&json!({
        "metadata": {"name": name},
        "spec": {"destination": {"namespace": name}}
    }))
    .expect("a valid Application");
    // The tracking id the app's objects carry, as Argo CD writes it.
    let tracking = format!("{name}:apps/Deployment:{name}/web");
    let deployment = |replicas: usize| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": name,
                            "annotations": {"argocd.argoproj.io/tracking-id": tracking}},
               "spec": {"replicas": replicas,
                        "template": {"spec": {"containers": [{"name": "web", "image": "web:1"}]}}}})
    };
    let live_replicas = if i.is_multiple_of(2) { 1 } else { 3 };
    (app, vec![deployment(1)], vec![deployment(live_replicas)])
}

fn diff_one(i: usize, settings: &Settings, scopes: &Scopes) -> AppDiff {
    let (app, desired, live) = app(i);
    diff_app(&AppDiffInput::new(&desired, &live, &app, settings, scopes))
        .expect("comparable objects")
}

fn main() {
    let settings = Settings::from_config_map(&json!({"data": {}})).expect("argocd-cm");
    let scopes = Scopes::builtin();
    let apps = 64;

    // One scoped thread per app, all borrowing the same settings and scopes.
    let parallel: Vec<AppDiff> = thread::scope(|s| {
        let handles: Vec<_> = (0..apps)
            .map(|i| {
                s.spawn({
                    let (settings, scopes) = (&settings, &scopes);
                    move || diff_one(i, settings, scopes)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });

    let serial: Vec<AppDiff> = (0..apps).map(|i| diff_one(i, &settings, &scopes)).collect();
    assert_eq!(parallel, serial, "threads changed an answer");
    let out_of_sync = parallel
        .iter()
        .filter(|d| d.sync_status == gitops_core::diff::SyncStatus::OutOfSync)
        .count();
    assert_eq!(out_of_sync, apps / 2);
    println!(
        "{apps} apps diffed on {apps} threads: {out_of_sync} out of sync, same as a serial run"
    );
}
