//! `rollouts.kruise.io` (OpenKruise): Rollout, as Argo CD 3.6.2's script.

use super::shapes_d::lua_eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "rollouts.kruise.io", kind: "Rollout", check: rollout }];

/// At the observed generation, the canary step state with the phase: a step upgrading is
/// Progressing, paused Suspended, completed Healthy, paused while terminating or disabled
/// Degraded; anything else Progressing.
fn rollout(env: &Env<'_>) -> Result<Hs, Fault> {
    let progressing = Hs::new("Progressing", "Rollout is still progressing");
    let status = || env.obj.get("status");
    if !lua_eq(env.obj.get("metadata")?.get("generation")?, status()?.get("observedGeneration")?) {
        return Ok(progressing);
    }
    let step = || -> Result<_, Fault> { status()?.get("canaryStatus")?.get("currentStepState") };
    let phase = || -> Result<_, Fault> { status()?.get("phase") };
    if step()?.is("StepUpgrade") && phase()?.is("Progressing") {
        return Ok(progressing);
    }
    if step()?.is("StepPaused") && phase()?.is("Progressing") {
        return Ok(Hs::new("Suspended", "Rollout is Paused need manual intervention"));
    }
    if step()?.is("Completed") && phase()?.is("Healthy") {
        return Ok(Hs::new("Healthy", "Rollout is Completed"));
    }
    if step()?.is("StepPaused") && (phase()?.is("Terminating") || phase()?.is("Disabled")) {
        return Ok(Hs::new("Degraded", "Rollout is Disabled or Terminating"));
    }
    Ok(progressing)
}
