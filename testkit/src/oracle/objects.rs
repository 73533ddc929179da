//! The normalized and predicted live objects of gitops-core's library, added to a `serve`
//! `diff` answer so they can be compared with Argo CD's. Shared by the differential runner
//! (`oracle/runner.rs`) and the replay of recorded answers (`src/tests/oracle_replay.rs`),
//! each of which names the library `engine` in its parent module.

use std::collections::BTreeMap;

use serde_json::Value;

use gitops_core::diff::{AppDiffInput, diff_app};
use gitops_core::{config::Application, config::Settings, object::Scopes};

/// A resource's identity in an answer: `group/kind/namespace/name`.
pub fn key(r: &Value) -> String {
    format!(
        "{}/{}/{}/{}",
        r["group"].as_str().unwrap_or(""),
        r["kind"].as_str().unwrap_or(""),
        r["namespace"].as_str().unwrap_or(""),
        r["name"].as_str().unwrap_or("")
    )
}

/// Adds to each resource of a `diff` answer the normalized and predicted live objects
/// gitops-core's library gives for the same request (`serve` does not return them), under
/// the names Argo CD uses (with the request's `dryRuns`, a server-side diff's).
pub fn with_objects(params: &Value, answer: &mut Value) -> Result<(), String> {
    let app = Application::from_value(&params["app"]).map_err(|e| e.to_string())?;
    let desired = params["desired"].as_array().cloned().unwrap_or_default();
    let live = params["live"].as_array().cloned().unwrap_or_default();
    let mut scopes = Scopes::builtin();
    scopes.add_crds(desired.iter().chain(&live));
    let settings = Settings::default();
    let dry_runs = params["dryRuns"].as_array().cloned().unwrap_or_default();
    let mut input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
    if !dry_runs.is_empty() {
        input = input.with_dry_runs(&dry_runs);
    }
    let result = diff_app(&input).map_err(|e| e.to_string())?;
    let objects: BTreeMap<String, (&Value, &Value)> = result
        .resources
        .iter()
        .map(|r| {
            let o = &r.object;
            (
                format!("{}/{}/{}/{}", o.group, o.kind, o.namespace, o.name),
                (&r.normalized_live, &r.predicted_live),
            )
        })
        .collect();
    for r in answer["resources"].as_array_mut().into_iter().flatten() {
        let (n, p) = objects.get(&key(r)).copied().unwrap_or((&Value::Null, &Value::Null));
        r["normalizedLive"] = n.clone();
        r["predictedLive"] = p.clone();
    }
    Ok(())
}
