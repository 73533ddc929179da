//! What `argocd app get` and `argocd app sync` print, from the library's answers.

use std::collections::BTreeMap;

use gitops_core::diff::AppDiff;
use gitops_core::health::AppHealth;
use gitops_core::sync::{SyncRequest, SyncState};
use gitops_core::{config::Application, health::HealthResult};
use serde_json::Value;

/// Columns padded as Go's tabwriter pads them (two spaces between columns, none after the
/// last).
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The resource table's columns, in `argocd app get` and `argocd app sync`.
const COLUMNS: [&str; 8] =
    ["GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "HOOK", "MESSAGE"];

fn field(name: &str, value: &str) -> String {
    format!("{:<20}{value}\n", format!("{name}:"))
}

fn header(app: &Application) -> String {
    let mut out = field("Name", &format!("{}/{}", app.metadata.namespace, app.metadata.name));
    out += &field("Namespace", &app.spec.destination.namespace);
    out
}

fn json_str(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_default()
}

/// `argocd app get`: the app's status and one row per resource.
pub fn app_get(
    app: &Application,
    diff: &AppDiff,
    health: &AppHealth,
    health_of: &BTreeMap<String, HealthResult>,
) -> String {
    let mut out = header(app);
    out += &field("Sync Status", diff.sync_status.as_str());
    out += &field("Health Status", health.status.as_str());
    for c in &diff.conditions {
        out += &field("Condition", &format!("{}: {}", c.type_, c.message));
    }
    out.push('\n');
    let mut rows = vec![COLUMNS.map(String::from).to_vec()];
    for r in &diff.resources {
        let o = &r.object;
        let status = r.status.map(|s| s.as_str().to_string()).unwrap_or_default();
        let h = health_of.get(&o.key()).map(|h| h.status.as_str().to_string()).unwrap_or_default();
        let message = if r.requires_pruning && r.message.is_empty() {
            "requires pruning".to_string()
        } else {
            r.message.clone()
        };
        rows.push(vec![
            o.group.clone(),
            o.kind.clone(),
            o.namespace.clone(),
            o.name.clone(),
            status,
            h,
            String::new(),
            message,
        ]);
    }
    out + &table(&rows)
}

/// `argocd app sync`: the operation and its per-resource results.
pub fn app_sync(
    app: &Application,
    request: &SyncRequest,
    state: &SyncState,
    health_of: &BTreeMap<String, HealthResult>,
) -> String {
    let mut out = header(app);
    out += &field("Operation", "Sync");
    out += &field("Sync Revision", &request.revision);
    out += &field("Phase", &json_str(&serde_json::to_value(state.phase).unwrap_or(Value::Null)));
    out += &field("Message", &state.message);
    out.push('\n');
    let mut rows = vec![COLUMNS.map(String::from).to_vec()];
    for r in &state.results {
        let k = &r.key;
        let status = match r.status {
            Some(s) => json_str(&serde_json::to_value(s).unwrap_or(Value::Null)),
            None => json_str(&serde_json::to_value(r.hook_phase).unwrap_or(Value::Null)),
        };
        let key = format!("{}/{}/{}/{}", k.group, k.kind, k.namespace, k.name);
        let h = health_of.get(&key).map(|h| h.status.as_str().to_string()).unwrap_or_default();
        let hook = r
            .hook_type
            .map(|t| json_str(&serde_json::to_value(t).unwrap_or(Value::Null)))
            .unwrap_or_default();
        rows.push(vec![
            k.group.clone(),
            k.kind.clone(),
            k.namespace.clone(),
            k.name.clone(),
            status,
            h,
            hook,
            r.message.clone(),
        ]);
    }
    out + &table(&rows)
}
