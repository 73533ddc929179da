//! `apps.3scale.net`: APIManager, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "apps.3scale.net", kind: "APIManager", check: api_manager }];

/// Healthy when every deployment is ready (`status.deployments` lists ready ones and no
/// starting or stopped one) or the Available condition is `True`; Degraded, with the reason,
/// for another Available; else Progressing.
fn api_manager(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let deployments = status.get("deployments")?;
        if !deployments.is_nil() {
            let ready = !deployments.get("ready")?.is_nil();
            let starting = !deployments.get("starting")?.is_nil();
            let stopped = !deployments.get("stopped")?.is_nil();
            if ready && !starting && !stopped {
                return Ok(Hs::new("Healthy", "3scale APIManager is available"));
            }
        }
        let conditions = status.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                if c.get("type")?.is("Available") {
                    if c.get("status")?.is("True") {
                        return Ok(Hs::new("Healthy", "3scale APIManager is available"));
                    }
                    let reason = c.get("reason")?;
                    if !reason.is_nil() && !reason.is("") {
                        let message = format!("3scale APIManager is degraded: {}", reason.text()?);
                        return Ok(Hs::new("Degraded", message));
                    }
                }
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for 3scale APIManager status..."))
}
