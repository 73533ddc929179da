//! Numaflow and Numaplane: `numaflow.numaproj.io` (InterStepBufferService, MonoVertex,
//! Pipeline) and `numaplane.numaproj.io` (MonoVertexRollout, PipelineRollout), as Argo CD
//! 3.6.2's scripts.

use super::table::{self, Call, Fault, Field, Lv, Obj, Out, set};
use super::{Entry, Kind, Offers, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "numaflow.numaproj.io",
        kind: "InterStepBufferService",
        discover: discover_isb,
        actions: &[("force-promote", force_promote)],
    },
    Kind {
        group: "numaflow.numaproj.io",
        kind: "MonoVertex",
        discover: discover_mono_vertex,
        actions: &[
            ("force-promote", force_promote),
            ("pause", pause),
            ("unpause-fast", unpause_fast_mono_vertex),
            ("unpause-gradual", unpause_gradual_mono_vertex),
        ],
    },
    Kind {
        group: "numaflow.numaproj.io",
        kind: "Pipeline",
        discover: discover_pipeline,
        actions: &[
            ("delete", delete),
            ("force-promote", force_promote),
            ("pause", pause),
            ("unpause-fast", unpause_fast_pipeline),
            ("unpause-gradual", unpause_gradual_pipeline),
        ],
    },
    Kind {
        group: "numaplane.numaproj.io",
        kind: "MonoVertexRollout",
        discover: discover_mono_vertex_rollout,
        actions: &[
            ("pause", pause_mono_vertex_rollout),
            ("unpause-fast", unpause_fast_mono_vertex_rollout),
            ("unpause-gradual", unpause_gradual_mono_vertex_rollout),
        ],
    },
    Kind {
        group: "numaplane.numaproj.io",
        kind: "PipelineRollout",
        discover: discover_pipeline_rollout,
        actions: &[
            ("allow-data-loss", allow_data_loss),
            ("disallow-data-loss", disallow_data_loss),
            ("pause", pause_pipeline_rollout),
            ("unpause-fast", unpause_fast_pipeline_rollout),
            ("unpause-gradual", unpause_gradual_pipeline_rollout),
        ],
    },
];

const UPGRADE_STATE: &str = "numaplane.numaproj.io/upgrade-state";
const FORCE_PROMOTE: &str = "numaplane.numaproj.io/force-promote";
const RESUME_STRATEGIES: &str = "numaflow.numaproj.io/allowed-resume-strategies";
const FORWARD: &str = "fa-solid fa-fw fa-forward";

/// Whether force-promote is offered: the upgrade state is `in-progress` or `trial` and the
/// `force-promote` label is not `"true"` (`obj.metadata` must be a table or a string).
fn can_force_promote(obj: Lv<'_>) -> Result<bool, Fault> {
    let labels = obj.field("metadata")?.field("labels")?;
    if labels.is_nil() {
        return Ok(false);
    }
    let state = labels.field(UPGRADE_STATE)?;
    let promote = state.is("in-progress") || state.is("trial");
    Ok(promote && !labels.field(FORCE_PROMOTE)?.is("true"))
}

/// Which of pause, unpause-gradual and unpause-fast are enabled: pause when `lifecycle` does
/// not ask for `Paused`; else unpause by the allowed-resume-strategies annotation of `meta`
/// (`fast`; `slow, fast`; anything else or none: gradual).
fn pausing(spec: Lv<'_>, meta: Lv<'_>) -> Result<[bool; 3], Fault> {
    let lifecycle = spec.field("lifecycle")?;
    let paused = !lifecycle.is_nil() && {
        let phase = lifecycle.field("desiredPhase")?;
        !phase.is_nil() && phase.is("Paused")
    };
    if !paused {
        return Ok([true, false, false]);
    }
    let strategies = if meta.is_nil() {
        Lv::Nil
    } else {
        let a = meta.field("annotations")?;
        if a.is_nil() { Lv::Nil } else { a.field(RESUME_STRATEGIES)? }
    };
    Ok(if strategies.is("fast") {
        [false, false, true]
    } else if strategies.is("slow, fast") {
        [false, true, true]
    } else {
        [false, true, false]
    })
}

/// The pause and unpause entries, enabled as `on` says.
fn pause_entries(on: [bool; 3]) -> [(&'static str, Entry); 3] {
    let play = Some("fa-solid fa-fw fa-play");
    [
        ("pause", entry(flag(!on[0]), Some("fa-solid fa-fw fa-pause"), None)),
        ("unpause-gradual", entry(flag(!on[1]), play, Some("Unpause (gradual)"))),
        ("unpause-fast", entry(flag(!on[2]), play, Some("Unpause (fast)"))),
    ]
}

/// Whether an owner reference has the kind `parent`.
fn is_child(obj: Lv<'_>, parent: &str) -> Result<bool, Fault> {
    let meta = obj.field("metadata")?;
    if meta.is_nil() {
        return Ok(false);
    }
    let refs = meta.field("ownerReferences")?;
    if refs.is_nil() {
        return Ok(false);
    }
    for r in refs.items()? {
        if r.field("kind")?.is(parent) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `force-promote`, enabled as [`can_force_promote`] says.
fn discover_isb(obj: Lv<'_>) -> Result<Offers, Fault> {
    let on = can_force_promote(obj)?;
    Ok(actions([("force-promote", entry(flag(!on), Some(FORWARD), None))]))
}

/// Pause and unpause (all disabled under a MonoVertexRollout) and `force-promote`.
fn discover_mono_vertex(obj: Lv<'_>) -> Result<Offers, Fault> {
    let on = if is_child(obj, "MonoVertexRollout")? {
        [false; 3]
    } else {
        let spec = obj.field("spec")?;
        pausing(spec, spec.field("metadata")?)?
    };
    let promote = can_force_promote(obj)?;
    let mut all = pause_entries(on).to_vec();
    all.push(("force-promote", entry(flag(!promote), Some(FORWARD), Some("Force Promote"))));
    Ok(actions(all))
}

/// As a MonoVertex's, pausing also allowed under a PipelineRollout in the
/// `recyclable-expired` upgrade state, and `delete` when the upgrade state is `recyclable` or
/// `recyclable-expired`.
fn discover_pipeline(obj: Lv<'_>) -> Result<Offers, Fault> {
    let allowed = !is_child(obj, "PipelineRollout")? || {
        let meta = obj.field("metadata")?;
        !meta.is_nil() && {
            let labels = meta.field("labels")?;
            !labels.is_nil() && labels.field(UPGRADE_STATE)?.is("recyclable-expired")
        }
    };
    let on = if allowed {
        let spec = obj.field("spec")?;
        pausing(spec, spec.field("metadata")?)?
    } else {
        [false; 3]
    };
    let promote = can_force_promote(obj)?;
    let labels = obj.field("metadata")?.field("labels")?;
    let recyclable = !labels.is_nil() && {
        let state = labels.field(UPGRADE_STATE)?;
        state.is("recyclable") || state.is("recyclable-expired")
    };
    let mut all = pause_entries(on).to_vec();
    all.push(("force-promote", entry(flag(!promote), Some(FORWARD), Some("Force Promote"))));
    all.push(("delete", entry(flag(!recyclable), Some("fa-solid fa-fw fa-trash"), Some("Delete"))));
    Ok(actions(all))
}

/// Pause and unpause of the MonoVertex the rollout holds.
fn discover_mono_vertex_rollout(obj: Lv<'_>) -> Result<Offers, Fault> {
    let child = obj.fields(&["spec", "monoVertex"])?;
    let spec = child.field("spec")?;
    let on = pausing(spec, child.field("metadata")?)?;
    Ok(actions(pause_entries(on)))
}

/// Pause and unpause of the Pipeline the rollout holds; `allow-data-loss` while the upgrade is
/// in `PipelinePauseAndDrain`, `disallow-data-loss` when the allow-data-loss annotation is
/// `"true"`.
fn discover_pipeline_rollout(obj: Lv<'_>) -> Result<Offers, Fault> {
    let child = obj.fields(&["spec", "pipeline"])?;
    let spec = child.field("spec")?;
    let on = pausing(spec, child.field("metadata")?)?;
    let status = obj.field("status")?;
    let allow = !status.is_nil() && status.field("upgradeInProgress")?.is("PipelinePauseAndDrain");
    let annotations = obj.field("metadata")?.field("annotations")?;
    let disallow = !annotations.is_nil()
        && annotations.field("numaplane.numaproj.io/allow-data-loss")?.is("true");
    let mut all = pause_entries(on).to_vec();
    all.push((
        "allow-data-loss",
        entry(flag(!allow), Some("fa-solid fa-fw fa-unlock"), Some("Allow (Possible) Data Loss")),
    ));
    all.push((
        "disallow-data-loss",
        entry(flag(!disallow), Some("fa-solid fa-fw fa-lock"), Some("Disallow Data Loss")),
    ));
    Ok(actions(all))
}

/// Sets the `force-promote` label to `"true"`.
fn force_promote(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::ensure(&mut obj, &["metadata"], "labels")?;
    table::set_text(&mut obj, &["metadata", "labels"], FORCE_PROMOTE, "true")?;
    table::done(obj)
}

/// `<spec>.lifecycle.desiredPhase = "Paused"`, making `lifecycle` when nil.
fn pause_at(mut obj: Obj<'_>, spec: &[&'static str]) -> Result<Out, Fault> {
    table::ensure(&mut obj, spec, "lifecycle")?;
    let mut at = spec.to_vec();
    at.push("lifecycle");
    table::set_text(&mut obj, &at, "desiredPhase", "Paused")?;
    table::done(obj)
}

/// Pauses the object itself.
fn pause(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    pause_at(obj, &["spec"])
}

/// Pauses the rollout's MonoVertex.
fn pause_mono_vertex_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    pause_at(obj, &["spec", "monoVertex", "spec"])
}

/// Pauses the rollout's Pipeline.
fn pause_pipeline_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    pause_at(obj, &["spec", "pipeline", "spec"])
}

/// `spec.lifecycle.desiredPhase = "Running"`.
fn run(obj: &mut Obj<'_>) -> Result<(), Fault> {
    table::set_text(obj, &["spec", "lifecycle"], "desiredPhase", "Running")
}

/// Runs the MonoVertex.
fn unpause_fast_mono_vertex(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    run(&mut obj)?;
    table::done(obj)
}

/// Runs the MonoVertex and removes `spec.replicas` (the script assigns the undefined global
/// `null`, which is nil).
fn unpause_gradual_mono_vertex(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    run(&mut obj)?;
    set(&mut obj, &["spec"], "replicas", None)?;
    table::done(obj)
}

/// Runs the Pipeline with the resume strategy `strategy`.
fn unpause_pipeline(mut obj: Obj<'_>, strategy: &str) -> Result<Out, Fault> {
    run(&mut obj)?;
    table::annotate(&mut obj, &["metadata"], "numaflow.numaproj.io/resume-strategy", strategy)?;
    table::done(obj)
}

/// Runs the Pipeline, resuming fast.
fn unpause_fast_pipeline(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_pipeline(obj, "fast")
}

/// Runs the Pipeline, resuming slowly.
fn unpause_gradual_pipeline(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_pipeline(obj, "slow")
}

/// Marks the Pipeline for deletion (an annotation).
fn delete(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::annotate(&mut obj, &["metadata"], "numaplane.numaproj.io/marked-for-deletion", "true")?;
    table::done(obj)
}

/// Runs the rollout's child (`spec.<child>.spec.lifecycle.desiredPhase = "Running"`) and sets
/// `spec.strategy.pauseResume.fastResume`, making the tables when nil.
fn unpause_rollout(mut obj: Obj<'_>, child: &'static str, fast: bool) -> Result<Out, Fault> {
    table::set_text(&mut obj, &["spec", child, "spec", "lifecycle"], "desiredPhase", "Running")?;
    table::ensure(&mut obj, &["spec"], "strategy")?;
    table::ensure(&mut obj, &["spec", "strategy"], "pauseResume")?;
    table::set_bool(&mut obj, &["spec", "strategy", "pauseResume"], "fastResume", fast)?;
    table::done(obj)
}

/// Runs the MonoVertex, resuming fast.
fn unpause_fast_mono_vertex_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_rollout(obj, "monoVertex", true)
}

/// Runs the MonoVertex, resuming slowly.
fn unpause_gradual_mono_vertex_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_rollout(obj, "monoVertex", false)
}

/// Runs the Pipeline, resuming fast.
fn unpause_fast_pipeline_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_rollout(obj, "pipeline", true)
}

/// Runs the Pipeline, resuming slowly.
fn unpause_gradual_pipeline_rollout(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    unpause_rollout(obj, "pipeline", false)
}

/// Sets the allow-data-loss annotation to `value`.
fn data_loss(mut obj: Obj<'_>, value: &str) -> Result<Out, Fault> {
    table::annotate(&mut obj, &["metadata"], "numaplane.numaproj.io/allow-data-loss", value)?;
    table::done(obj)
}

/// `numaplane.numaproj.io/allow-data-loss: "true"`.
fn allow_data_loss(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    data_loss(obj, "true")
}

/// `numaplane.numaproj.io/allow-data-loss: "false"`.
fn disallow_data_loss(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    data_loss(obj, "false")
}
