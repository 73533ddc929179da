//! `spot.io`: SpotDeployment, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "spot.io", kind: "SpotDeployment", check: spot_deployment }];

/// No conditions is the empty health; an invalid spec, an aborted rollout or a passed
/// deadline is Degraded (its message); paused Suspended; phase `Progressing` Progressing;
/// else Healthy.
fn spot_deployment(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("conditions")?.is_nil() {
        return Ok(Hs::empty());
    }
    for c in status.get("conditions")?.items()? {
        let t = c.get("type")?;
        if t.is("InvalidSpec") {
            return Ok(Hs::new("Degraded", c.get("message")?));
        }
        if t.is("Progressing") {
            let reason = c.get("reason")?;
            if reason.is("RolloutAborted") || reason.is("ProgressDeadlineExceeded") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
        if t.is("Paused") && c.get("status")?.is("True") {
            return Ok(Hs::new("Suspended", "Rollout is paused"));
        }
    }
    if status.get("phase")?.is("Progressing") {
        return Ok(Hs::new("Progressing", "Waiting for rollout to finish steps"));
    }
    Ok(Hs::new("Healthy", ""))
}
