//! `objectbucket.io`: ObjectBucketClaim, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "objectbucket.io", kind: "ObjectBucketClaim", check: claim }];

/// `status.phase`: `Bound` Healthy, `Failed` Degraded, any other Progressing, each naming
/// the phase.
fn claim(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for status to be reported"));
    }
    let phase = status.get("phase")?;
    if phase.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for phase to be reported"));
    }
    let message = format!("Object bucket claim phase is {}", phase.text()?);
    let health = if phase.is("Bound") {
        "Healthy"
    } else if phase.is("Failed") {
        "Degraded"
    } else {
        "Progressing"
    };
    Ok(Hs::new(health, message))
}
