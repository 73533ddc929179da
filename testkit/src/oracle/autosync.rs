//! The auto-sync decision as far as Argo CD exports it (`oracle/autosync.go`): which sync
//! windows of an AppProject match an app, whether each is active, whether a sync may run
//! (`CanSync`), whether automation is on, and when the next retry of a failed sync is due.
//! Argo CD's window functions read the wall clock; the oracle reports the second it used and
//! gitops-core is given that second. Shared by the differential runner (`oracle/runner.rs`)
//! and the replay of recorded answers (`src/tests/oracle_replay.rs`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use gitops_core::config::Application;
use gitops_core::config::RetryStrategy;
use gitops_core::sync::SyncWindows;
use gitops_core::sync::{Retry, SyncWindow};
use gitops_core::vocabulary::Timestamp;

/// The message of `decide` when automation is off.
const NOT_ENABLED: &str = "automated sync is not enabled";
/// The start of `decide`'s message when the windows block an automated sync.
const PREVENTED: &str = "Sync prevented by sync window";

/// gitops-core's answer to an `autosync` case at `now` (RFC 3339, the second the oracle used),
/// in the oracle's shape, plus `gate`: whether `decide` let the automated sync past the
/// windows. `decide` answers the protocol's `decide` method.
pub fn run(
    params: &Value,
    now: &str,
    decide: &mut dyn FnMut(&Value) -> Result<Value, String>,
) -> Result<Value, String> {
    let app = Application::from_value(&params["app"]).map_err(|e| e.to_string())?;
    let at = unix_seconds(now).map_err(|e| e.to_string())?;
    let windows = SyncWindow::of_project(&params["project"]).map_err(|e| e.to_string())?;
    let mut matching = Vec::new();
    let mut matched = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        if !w.matches(&app) {
            continue;
        }
        matched.push(w.clone());
        matching.push(match w.active(at) {
            Ok(on) => json!({"index": i, "active": on}),
            Err(e) => json!({"index": i, "error": e.to_string()}),
        });
    }
    let manual = params["manual"] == true;
    let mut answer = json!({"now": now, "matching": matching});
    match SyncWindows(matched).can_sync(manual, None, at) {
        Ok(ok) => answer["canSync"] = json!(ok),
        Err(e) => answer["canSyncError"] = json!(format!("invalid sync windows: {e}")),
    }
    if !params["retry"].is_null() && params["lastAttempt"].is_string() {
        let strategy: RetryStrategy =
            serde_json::from_value(params["retry"].clone()).map_err(|e| e.to_string())?;
        let base = params["lastAttempt"].as_str().map(unix_seconds);
        match (Retry::from_strategy(Some(&strategy), 5), base) {
            (Ok(r), Some(Ok(base))) => {
                let count = params["retryCount"].as_i64().unwrap_or(0);
                let ns = base.saturating_mul(1_000_000_000).saturating_add(r.delay(count).0);
                answer["nextRetryAtNs"] = json!(ns);
            }
            (Err(e), _) => answer["retryError"] = json!(e.to_string()),
            (_, other) => return Err(format!("lastAttempt: {other:?}")),
        }
    }
    // Through the protocol: automation on, and the windows' gate before an automated sync.
    let request = |project: &Value| {
        json!({"app": params["app"], "desired": [], "live": [], "revision": "0".repeat(40),
            "now": now, "project": project})
    };
    let plain = decide(&request(&Value::Null))?;
    answer["automated"] = json!(plain["message"] != NOT_ENABLED);
    let gated = decide(&request(&params["project"]))?;
    let blocked = gated["message"].as_str().is_some_and(|m| m.starts_with(PREVENTED));
    answer["gate"] = json!(!blocked);
    Ok(answer)
}

/// A divergence: the RFC 6901 pointer into gitops-core's answer, its value and Argo CD's.
pub type Found = (String, Value, Value);

/// The differences between the answers: signature → divergence.
pub fn compare(params: &Value, ours: &Value, argo: &Value) -> BTreeMap<String, Found> {
    let mut out = BTreeMap::new();
    if ours.get("error").is_some() || argo.get("error").is_some() {
        out.insert("autosync:error".into(), (String::new(), ours.clone(), argo.clone()));
        return out;
    }
    let mut field = |sig: &str, pointer: &str, x: &Value, y: &Value| {
        if x != y {
            let sig = sig.to_string();
            // Argo CD converts an out-of-range float wait to a Duration as the CPU does
            // (amd64: the least int64); gitops-core saturates (testdata/SKIPPED.md).
            let sig = if sig == "next-retry-at" && x.as_i64() == Some(i64::MAX) {
                "next-retry-at:overflow".to_string()
            } else {
                sig
            };
            out.insert(format!("autosync:{sig}"), (pointer.to_string(), x.clone(), y.clone()));
        }
    };
    field("automated", "/automated", &ours["automated"], &argo["automated"]);
    let index = |v: &Value| -> Vec<Value> {
        v["matching"].as_array().into_iter().flatten().map(|w| w["index"].clone()).collect()
    };
    let (mine, theirs) = (index(ours), index(argo));
    field("matches", "/matching", &json!(mine), &json!(theirs));
    if mine == theirs {
        for (i, (a, b)) in ours["matching"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(argo["matching"].as_array().into_iter().flatten())
            .enumerate()
        {
            let at = format!("/matching/{i}");
            field("active", &format!("{at}/active"), &a["active"], &b["active"]);
            field("window-error", &format!("{at}/error"), &a["error"], &b["error"]);
        }
    }
    field("can-sync", "/canSync", &ours["canSync"], &argo["canSync"]);
    field("can-sync-error", "/canSyncError", &ours["canSyncError"], &argo["canSyncError"]);
    field("next-retry-at", "/nextRetryAtNs", &ours["nextRetryAtNs"], &argo["nextRetryAtNs"]);
    field("retry-error", "/retryError", &ours["retryError"], &argo["retryError"]);
    // The controller gates an automated sync on CanSync(false); an error blocks it.
    if params["manual"] != true {
        let open = json!(argo["canSync"] == true);
        field("gate", "/gate", &ours["gate"], &open);
    }
    out
}

/// Unix seconds of RFC 3339 text.
fn unix_seconds(text: &str) -> Result<i64, gitops_core::vocabulary::TimeError> {
    Timestamp::parse(text).map(Timestamp::unix_seconds)
}
