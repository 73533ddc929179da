//! `numaflow.numaproj.io`: InterStepBufferService, MonoVertex, Pipeline and Vertex, as Argo CD
//! 3.6.2's scripts.

use super::lua::Field;
use super::shapes_c::lua_eq;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "numaflow.numaproj.io", kind: KINDS[0].kind, check: numaflow::<0> },
    Rule { group: "numaflow.numaproj.io", kind: KINDS[1].kind, check: numaflow::<1> },
    Rule { group: "numaflow.numaproj.io", kind: KINDS[2].kind, check: numaflow::<2> },
    Rule { group: "numaflow.numaproj.io", kind: KINDS[3].kind, check: numaflow::<3> },
];

/// The kinds read by [`numaflow`], by the index its rule passes.
const KINDS: [Shape; 4] = [
    Shape {
        kind: "InterStepBufferService",
        condition_message: true,
        progressive: true,
        paused: &[],
    },
    Shape { kind: "MonoVertex", condition_message: false, progressive: true, paused: &["Paused"] },
    Shape {
        kind: "Pipeline",
        condition_message: false,
        progressive: true,
        paused: &["Paused", "Pausing"],
    },
    Shape { kind: "Vertex", condition_message: true, progressive: false, paused: &["Paused"] },
];

/// How one kind reads its status.
struct Shape {
    /// The kind, in the messages.
    kind: &'static str,
    /// Whether the Degraded message of a `False` condition is that condition's message (else
    /// `Subresources are unhealthy`).
    condition_message: bool,
    /// Whether the label `numaplane.numaproj.io/progressive-result-state: failed` degrades.
    progressive: bool,
    /// The phases that are Healthy as paused.
    paused: &'static [&'static str],
}

/// At the observed generation: a `False` condition, phase `Failed` or a failed progressive
/// upgrade is Degraded; a paused phase or `Running` is Healthy; else Progressing.
fn numaflow<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let shape = &KINDS[I];
    let waiting = || Hs::new("Progressing", format!("Waiting for {} status", shape.kind));
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    let (mut unhealthy, mut unhealthy_message) = (false, Lv::Nil);
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            if c.get("status")?.is("False") {
                unhealthy = true;
                if shape.condition_message {
                    unhealthy_message = c.get("message")?;
                }
            }
        }
    }
    let metadata = env.obj.get("metadata")?;
    let progressive_failure = if shape.progressive {
        let labels = metadata.get("labels")?;
        !labels.is_nil()
            && labels.get("numaplane.numaproj.io/progressive-result-state")?.is("failed")
    } else {
        false
    };
    if lua_eq(metadata.get("generation")?, status.get("observedGeneration")?) {
        let phase = status.get("phase")?;
        if unhealthy || phase.is("Failed") || progressive_failure {
            let message = if phase.is("Failed") {
                Field::from(status.get("message")?)
            } else if progressive_failure {
                Field::from("Failed progressive upgrade")
            } else if shape.condition_message {
                Field::from(unhealthy_message)
            } else {
                Field::from("Subresources are unhealthy")
            };
            return Ok(Hs::new("Degraded", message));
        }
        if shape.paused.iter().any(|p| phase.is(p)) {
            return Ok(Hs::new("Healthy", format!("{} is paused", shape.kind)));
        }
        if phase.is("Running") {
            return Ok(Hs::new("Healthy", format!("{} is healthy", shape.kind)));
        }
    }
    Ok(waiting())
}
