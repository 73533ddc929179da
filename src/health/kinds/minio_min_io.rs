//! `minio.min.io`: Tenant, as Argo CD 3.6.2's script.

use super::shapes_c::starts_with_method;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "minio.min.io", kind: "Tenant", check: tenant }];

/// `status.currentState`, the message in every case: `Initialized` Healthy; a provisioning,
/// waiting, updating or restarting state Progressing; the known failures Degraded; any other
/// state Progressing.
fn tenant(env: &Env<'_>) -> Result<Hs, Fault> {
    const DEGRADED: &[&str] = &[
        "Statefulset not controlled by operator",
        "Another MinIO Tenant already exists in the namespace",
        "Tenant credentials are not set properly",
        "Different versions across MinIO Pools",
        "Pool Decommissioning Not Allowed",
    ];
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let state = status.get("currentState")?;
        if !state.is_nil() {
            if state.is("Initialized") {
                return Ok(Hs::new("Healthy", state));
            }
            for prefix in ["Provisioning", "Waiting", "Updating"] {
                if starts_with_method(state, prefix)? {
                    return Ok(Hs::new("Progressing", state));
                }
            }
            if DEGRADED.iter().any(|d| state.is(d)) {
                return Ok(Hs::new("Degraded", state));
            }
            return Ok(Hs::new("Progressing", state));
        }
    }
    Ok(Hs::new("Progressing", "No status info available"))
}
