//! `cloudfront.aws.crossplane.io` (Crossplane's AWS provider): Distribution, as Argo CD
//! 3.6.2's scripts.

use super::shapes_a::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "cloudfront.aws.crossplane.io", kind: "Distribution", check: distribution }];

/// From the last Ready and Synced conditions: Healthy when both are `True`; Suspended when
/// reconciling is paused; Progressing when only Synced is `True`; else Degraded with the
/// reconcile error.
fn distribution(env: &Env<'_>) -> Result<Hs, Fault> {
    let Some(conditions) = status_conditions(env.obj)? else {
        return Ok(Hs::new("Progressing", "Waiting for distribution to be created"));
    };
    let (mut ready, mut synced, mut suspended) = (false, false, false);
    let (mut ready_message, mut synced_message, mut suspended_message) =
        (Lv::Nil, Lv::Nil, Lv::Nil);
    for c in conditions.items()? {
        let kind = c.get("type")?;
        if kind.is("Ready") {
            ready = c.get("status")?.is("True");
            ready_message = c.get("reason")?;
        } else if kind.is("Synced") {
            synced = c.get("status")?.is("True");
            let reason = c.get("reason")?;
            if reason.is("ReconcileError") {
                synced_message = c.get("message")?;
            } else if reason.is("ReconcilePaused") {
                suspended = true;
                suspended_message = reason;
            }
        }
    }
    Ok(if ready && synced {
        Hs::new("Healthy", ready_message)
    } else if !synced && suspended {
        Hs::new("Suspended", suspended_message)
    } else if !ready && synced && !suspended {
        Hs::new("Progressing", "Waiting for distribution to be available")
    } else {
        Hs::new("Degraded", synced_message)
    })
}
