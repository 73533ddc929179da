//! Preview cost: a pull request touching 50 applications of 200 resources each (a tenth of
//! the Deployments get a new image, two resources removed and two added per app, a PreSync
//! hook added), compared, planned, guarded and rendered as Markdown.

use gitops_core::preview::{Preview, PreviewInput};
use gitops_core::sync::BlastRadiusGuard;
use gitops_core::{config::Application, config::Settings};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const APPS: usize = 50;
const RESOURCES: usize = 200;

fn object(i: usize, image: &str) -> Value {
    match i % 4 {
        0 => json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": format!("web-{i}"), "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": format!("web-{i}")}},
                     "template": {"metadata": {"labels": {"app": format!("web-{i}")}},
                                  "spec": {"containers": [{"name": "web", "image": image,
                                           "ports": [{"containerPort": 8080}]}]}}}}),
        1 => json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": format!("web-{i}")},
            "spec": {"selector": {"app": format!("web-{i}")}, "ports": [{"port": 80, "targetPort": 8080}]}}),
        2 => json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("config-{i}")}, "data": {"LOG": "info", "N": i.to_string()}}),
        _ => json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("secret-{i}")}, "stringData": {"TOKEN": format!("t-{i}")}}),
    }
}

/// Per app: (Application, base, head).
fn inputs() -> Vec<(Application, Vec<Value>, Vec<Value>)> {
    (0..APPS)
        .map(|a| {
            let app = Application::from_value(&json!({"metadata": {"name": format!("app-{a}")},
                "spec": {"destination": {"namespace": format!("ns-{a}")}}}))
            .expect("app");
            let base: Vec<Value> = (0..RESOURCES).map(|i| object(i, "web:1")).collect();
            let mut head: Vec<Value> = (2..RESOURCES + 2)
                .map(|i| object(i, if i % 40 == 0 { "web:2" } else { "web:1" }))
                .collect();
            head.push(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "migrate", "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "m", "image": "web:2"}]}}}}));
            (app, base, head)
        })
        .collect()
}

#[divan::bench(sample_count = 10)]
fn preview_50_apps_of_200(bencher: divan::Bencher) {
    let apps = inputs();
    let settings = Settings::default();
    let guard = BlastRadiusGuard::default();
    bencher.bench_local(|| {
        let previews = apps
            .iter()
            .map(|(app, base, head)| {
                PreviewInput::new(app, &settings, base, head, &guard).compare().expect("compare")
            })
            .collect();
        Preview::new(previews).render_markdown(Preview::DEFAULT_MAX_MARKDOWN_BYTES)
    });
}
