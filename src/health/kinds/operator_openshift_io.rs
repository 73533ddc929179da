//! `operator.openshift.io`: IngressController, as Argo CD 3.6.2's script.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "operator.openshift.io",
    kind: "IngressController",
    check: ingress_controller,
}];

/// The first condition that is `Degraded` `True` (Degraded), `DeploymentReplicasAllAvailable`
/// `False` or `Progressing` `True` (Progressing), or `Available` `True` (Healthy).
fn ingress_controller(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for (_, c) in conditions.pairs()? {
            let t = c.get("type")?;
            let status = c.get("status")?;
            if t.is("Degraded") && status.is("True") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
            if t.is("DeploymentReplicasAllAvailable") && status.is("False") {
                return Ok(Hs::new("Progressing", c.get("message")?));
            }
            if t.is("Progressing") && status.is("True") {
                return Ok(Hs::new("Progressing", c.get("reason")?));
            }
            if t.is("Available") && status.is("True") {
                return Ok(Hs::new("Healthy", "IngressController is available"));
            }
        }
    }
    Ok(Hs::new("Progressing", "Status of IngressController is not known yet"))
}
