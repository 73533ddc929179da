//! `jaegertracing.io`: Jaeger, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "jaegertracing.io", kind: "Jaeger", check: jaeger }];

/// The phase: Running Healthy, Failed Degraded; else Progressing, waiting.
fn jaeger(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let phase = status.get("phase")?;
        if phase.is("Running") {
            return Ok(Hs::new("Healthy", "Jaeger is Running"));
        }
        if phase.is("Failed") {
            return Ok(Hs::new("Degraded", "Jaeger Failed For Some Reason"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Jaeger"))
}
