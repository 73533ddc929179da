//! `tekton.dev` (Tekton Pipelines): PipelineRun and TaskRun, as Argo CD 3.6.2's scripts (one
//! rule: the scripts are the same).

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "tekton.dev", kind: "PipelineRun", check: run },
    Rule { group: "tekton.dev", kind: "TaskRun", check: run },
];

/// The first `Succeeded` condition: `True` Healthy, `False` Degraded, else Progressing, with
/// its message (or reason); none yet Progressing.
fn run(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil()
        && !status.get("conditions")?.is_nil()
        && let Some(c) = status.get("conditions")?.find_type("Succeeded")?
    {
        let s = c.get("status")?;
        let code = if s.is("True") {
            "Healthy"
        } else if s.is("False") {
            "Degraded"
        } else {
            "Progressing"
        };
        let message = c.get("message")?;
        let message = if message.truthy() { message } else { c.get("reason")? };
        return Ok(Hs::new(code, message));
    }
    Ok(Hs::new("Progressing", "Waiting for run to start"))
}
