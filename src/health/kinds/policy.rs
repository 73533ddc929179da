//! `policy`: PodDisruptionBudget, as Argo CD 3.6.2's script.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "policy", kind: "PodDisruptionBudget", check: pod_disruption_budget }];

/// The conditions, read to the end: a `False` one (but for `InsufficientPods`) is Degraded
/// at once; any other makes it Healthy; each names its reason.
fn pod_disruption_budget(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for status");
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            let reason = c.get("reason")?;
            let degraded = c.get("status")?.is("False") && !reason.is("InsufficientPods");
            let message = format!("PodDisruptionBudget has {}", reason.text()?);
            if degraded {
                return Ok(Hs::new("Degraded", message));
            }
            hs = Hs::new("Healthy", message);
        }
    }
    Ok(hs)
}
