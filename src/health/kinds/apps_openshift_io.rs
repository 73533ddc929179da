//! `apps.openshift.io`: DeploymentConfig, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "apps.openshift.io", kind: "DeploymentConfig", check: deployment_config }];

/// Counts the `True` Available and NewReplicationControllerAvailable Progressing conditions:
/// both (or no replicas) is Healthy, one Progressing, none Degraded.
fn deployment_config(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = || Hs::new("Progressing", "replication controller is waiting for pods to run");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    let conditions = status.get("conditions")?;
    if conditions.is_nil() || status.get("replicas")?.is_nil() {
        return Ok(waiting());
    }
    let mut count = 0;
    for (_, c) in conditions.pairs()? {
        let kind = c.get("type")?;
        let counted = kind.is("Available")
            || (kind.is("Progressing") && c.get("reason")?.is("NewReplicationControllerAvailable"));
        if counted && c.get("status")?.is("True") {
            count += 1;
        }
    }
    if count == 2 || status.get("replicas")?.is_num(0.0) {
        return Ok(Hs::new("Healthy", "replication controller successfully rolled out"));
    }
    if count == 1 {
        return Ok(waiting());
    }
    Ok(Hs::new("Degraded", "Deployment config is degraded"))
}
