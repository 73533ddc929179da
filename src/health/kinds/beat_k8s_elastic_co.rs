//! `beat.k8s.elastic.co` (Elastic Cloud on Kubernetes): Beat, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "beat.k8s.elastic.co", kind: "Beat", check: beat }];

/// `status.health`: red Degraded, green Healthy, yellow or none yet Progressing; any other
/// value Unknown.
fn beat(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let health = status.get("health")?;
        if !health.is_nil() || !status.get("expectedNodes")?.is_nil() {
            match health {
                h if h.is("red") => return Ok(Hs::new("Degraded", "Elastic Beat status is Red")),
                h if h.is("green") => {
                    return Ok(Hs::new("Healthy", "Elastic Beat status is Green"));
                }
                h if h.is("yellow") => {
                    let available = status.get("availableNodes")?;
                    let expected = status.get("expectedNodes")?;
                    if !available.is_nil() && !expected.is_nil() {
                        let message = format!(
                            "Elastic Beat status is deploying, there is {} instance(s) on {} expected",
                            available.text()?,
                            expected.text()?
                        );
                        return Ok(Hs::new("Progressing", message));
                    }
                    return Ok(Hs::new("Progressing", "Elastic Beat phase is progressing"));
                }
                h if h.is_nil() => {
                    return Ok(Hs::new("Progressing", "Elastic Beat phase is progressing"));
                }
                _ => {}
            }
        }
    }
    Ok(Hs::new(
        "Unknown",
        "Elastic Beat status is unknown. Ensure your ArgoCD is current and then check for/file a bug report: https://github.com/argoproj/argo-cd/issues",
    ))
}
