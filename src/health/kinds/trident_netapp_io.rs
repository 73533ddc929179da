//! `trident.netapp.io` (NetApp Trident): TridentBackendConfig and TridentOrchestrator, as
//! Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "trident.netapp.io", kind: "TridentBackendConfig", check: backend_config },
    Rule { group: "trident.netapp.io", kind: "TridentOrchestrator", check: orchestrator },
];

/// Bound with a successful last operation is Healthy, a failed last operation Degraded (with
/// the status message); else Progressing.
fn backend_config(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        if status.get("phase")?.is("Bound") && status.get("lastOperationStatus")?.is("Success") {
            return Ok(Hs::new("Healthy", status.get("message")?));
        }
        if status.get("lastOperationStatus")?.is("Failed") {
            return Ok(Hs::new("Degraded", status.get("message")?));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for backend creation"))
}

/// `Installed` is Healthy, `Failed` or `Error` Degraded (with the status message); else
/// Progressing.
fn orchestrator(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let s = status.get("status")?;
        if s.is("Installed") {
            return Ok(Hs::new("Healthy", status.get("message")?));
        }
        if s.is("Failed") || s.is("Error") {
            return Ok(Hs::new("Degraded", status.get("message")?));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for trident installation"))
}
