//! The `deletion` area: which of an app's live objects one pass of a cascade deletion deletes,
//! Argo CD's `FilterObjectsForDeletion` (argo-cd/v3 `controller`, exported at 3.6.2: the objects
//! of the highest wave, read from `argocd.argoproj.io/sync-wave`, else `helm.sh/hook-weight`,
//! else 0, each parsed as Go's `strconv.Atoi`) against gitops-core's `sync::CascadePass::new`
//! (approved, every object a candidate: the controller's own choice of candidates,
//! `shouldBeDeleted`, is unexported).

use serde_json::{Value, json};

use gitops_core::sync::CascadePass;
use gitops_core::vocabulary::AppOptions;

/// gitops-core's answer in the oracle's shape: the keys of the objects deleted now, sorted.
pub fn ours(params: &Value) -> Value {
    let objects = params["objects"].as_array().cloned().unwrap_or_default();
    let pass = CascadePass::new(&objects, &AppOptions::default(), true);
    let mut keys: Vec<String> = pass
        .delete
        .iter()
        .map(|r| format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name))
        .collect();
    keys.sort();
    json!({"delete": keys})
}

/// What differs between gitops-core's answer and Argo CD's (the oracle's `deletion` answer):
/// (signature, field, ours, Argo CD's).
pub fn compare(params: &Value, answer: &Value) -> Vec<(String, String, Value, Value)> {
    let a = ours(params);
    ["delete", "error"]
        .into_iter()
        .filter(|f| a.get(*f) != answer.get(*f))
        .map(|f| (format!("deletion:{f}"), format!("/{f}"), a[f].clone(), answer[f].clone()))
        .collect()
}
