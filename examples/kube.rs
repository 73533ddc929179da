//! gitops-core with kube-rs and k8s-openapi, without a cluster: the objects a kube-rs
//! controller already holds go in as JSON values and what comes out goes back into the same
//! types.
//!
//! - desired objects as typed `k8s_openapi` structs (what a Rust operator builds),
//! - live objects as `kube::api::DynamicObject`s (what a kube-rs watcher on any kind gives;
//!   the type lives in `kube-core` and `kube` re-exports it),
//! - the sync's actions turned back into `DynamicObject`s and typed structs, ready for
//!   `Api::patch` or `Api::create`.
//!
//! Run it with `cargo run --example kube`.

use std::collections::BTreeMap;

use gitops_core::diff::{AppDiffInput, diff_app};
use gitops_core::sync::{ActionKind, Observations, SyncRequest, SyncState};
use gitops_core::{config::Application, config::Settings, object::Scopes};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube_core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

/// A typed Deployment, as an operator written in Rust builds it.
fn deployment(image: &str, replicas: i32) -> Deployment {
    let labels = BTreeMap::from([("app".to_string(), "api".to_string())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some("api".into()),
            namespace: Some("shop".into()),
            annotations: Some(BTreeMap::from([(
                "argocd.argoproj.io/tracking-id".to_string(),
                "shop:apps/Deployment:shop/api".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..ObjectMeta::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "api".into(),
                        image: Some(image.into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

/// Any typed k8s-openapi object as the JSON gitops-core reads (`apiVersion` and `kind`
/// included: k8s-openapi writes them).
fn to_json<T: serde::Serialize>(obj: &T) -> Value {
    serde_json::to_value(obj).expect("k8s-openapi objects serialize")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Desired: typed objects.
    let config = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            namespace: Some("shop".into()),
            annotations: Some(BTreeMap::from([(
                "argocd.argoproj.io/tracking-id".to_string(),
                "shop:/ConfigMap:shop/settings".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("greeting".to_string(), "hello".to_string())])),
        ..ConfigMap::default()
    };
    let desired = vec![to_json(&deployment("shop/api:1.1", 2)), to_json(&config)];

    // Live: what a kube-rs watcher on a dynamic kind hands over.
    let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    let ar = ApiResource::from_gvk(&gvk);
    let mut live_deployment: DynamicObject =
        serde_json::from_value(to_json(&deployment("shop/api:1.0", 2)))?;
    live_deployment.metadata.resource_version = Some("4711".into());
    assert_eq!(live_deployment.types.as_ref().map(|t| t.kind.as_str()), Some("Deployment"));
    let live = vec![serde_json::to_value(&live_deployment)?];

    // Compare.
    let app = Application::from_value(&json!({
        "metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}}))?;
    let settings = Settings::default();
    let scopes = Scopes::builtin();
    let diff = diff_app(&AppDiffInput::new(&desired, &live, &app, &settings, &scopes))?;
    let changed: Vec<String> = diff
        .resources
        .iter()
        .filter(|r| r.modified)
        .map(|r| format!("{} {:?}", r.object, r.diff.iter().map(|op| &op.path).collect::<Vec<_>>()))
        .collect();
    println!("{:?}: {}", diff.sync_status, changed.join("; "));
    assert_eq!(changed.len(), 2, "the image changed and the ConfigMap is missing");

    // The first step of a sync: its actions carry the objects to send.
    let request = SyncRequest::for_app(&app, desired, "abc123", 1_700_000_000);
    let first = request.step(&SyncState::default(), &Observations::default());
    for action in first.actions.iter().filter(|a| a.kind == ActionKind::Apply) {
        let object = action.object.clone().expect("an apply sends an object");
        // Back into kube-rs: a DynamicObject for `Api::<DynamicObject>::all_with(client, &ar)`.
        let dynamic: DynamicObject = serde_json::from_value(object.clone())?;
        let kind = dynamic.types.as_ref().map_or("", |t| t.kind.as_str()).to_string();
        // And, for a kind the operator knows, its typed struct.
        if kind == "Deployment" {
            let typed: Deployment = serde_json::from_value(object.clone())?;
            let image = typed.spec.template.spec.as_ref();
            let image = image.and_then(|p| p.containers[0].image.clone());
            assert_eq!(image.as_deref(), Some("shop/api:1.1"));
            assert_eq!(ar.kind, "Deployment");
        }
        // Nothing is lost on the way through either type.
        assert_eq!(serde_json::to_value(&dynamic)?, object);
        println!(
            "{} {kind} {} (dry run: {})",
            action.id,
            dynamic.metadata.name.unwrap_or_default(),
            action.dry_run
        );
    }
    assert!(!first.actions.is_empty());
    Ok(())
}
