//! `argoproj.io` (Argo CD, Argo Rollouts, Argo Workflows, Argo Events): AnalysisRun,
//! ApplicationSet, CronWorkflow, EventBus, Experiment and Rollout, as Argo CD 3.6.2's scripts.

use super::lua::Field;
use super::shapes_a::{On, Say, conditions_or, eq, first_on_pairs, getn, lt, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "argoproj.io", kind: "AnalysisRun", check: analysis_run },
    Rule { group: "argoproj.io", kind: "ApplicationSet", check: application_set },
    Rule { group: "argoproj.io", kind: "CronWorkflow", check: cron_workflow },
    Rule { group: "argoproj.io", kind: "EventBus", check: event_bus },
    Rule { group: "argoproj.io", kind: "Experiment", check: experiment },
    Rule { group: "argoproj.io", kind: "Rollout", check: rollout },
];

/// `field` unless it is nil, then `default`.
fn or_default(field: Lv<'_>, default: &str) -> Field {
    if field.is_nil() { Field::from(default) } else { Field::from(field) }
}

/// The phase: Pending and Running are Progressing; Successful Healthy, Failed and Error
/// Degraded, Inconclusive Unknown, with `status.message` or a text of the phase; any other
/// phase the empty health.
fn analysis_run(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for analysis run to finish: status has not been reconciled.",
        ));
    }
    let (health, default) = match status.get("phase")?.str() {
        Some("Pending" | "Running") => {
            return Ok(Hs::new("Progressing", "Analysis run is running"));
        }
        Some("Successful") => ("Healthy", "Analysis run completed successfully"),
        Some("Failed") => ("Degraded", "Analysis run failed"),
        Some("Error") => ("Degraded", "Analysis run had an error"),
        Some("Inconclusive") => ("Unknown", "Analysis run was inconclusive"),
        _ => return Ok(Hs::empty()),
    };
    Ok(Hs::new(health, or_default(status.get("message")?, default)))
}

/// Searched in turn, each over every condition: ErrorOccurred `True` and ResourcesUpToDate
/// `False` are Degraded, RolloutProgressing `True` Progressing, ResourcesUpToDate `True`
/// Healthy; else Progressing.
fn application_set(env: &Env<'_>) -> Result<Hs, Fault> {
    const STEPS: &[On] = &[
        On::new("ErrorOccurred", "True", "Degraded", Say::Message),
        On::new("ResourcesUpToDate", "False", "Degraded", Say::Message),
        On::new("RolloutProgressing", "True", "Progressing", Say::Message),
        On::new("ResourcesUpToDate", "True", "Healthy", Say::Message),
    ];
    if let Some(conditions) = status_conditions(env.obj)? {
        for step in STEPS {
            if let Some(hs) = first_on_pairs(conditions, std::slice::from_ref(step))? {
                return Ok(hs);
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for the status to be reported"))
}

/// SpecError or SubmissionError `True` is Degraded, Completed `True` Healthy; else Healthy.
fn cron_workflow(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        On::new("SpecError", "True", "Degraded", Say::Message),
        On::new("SubmissionError", "True", "Degraded", Say::Message),
        On::new("Completed", "True", "Healthy", Say::Message),
    ];
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(hs) = first_on_pairs(conditions, ROWS)?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Healthy", "CronWorkflow is healthy."))
}

/// Deployed `False` is Degraded, `True` Healthy (message or reason); else Progressing.
fn event_bus(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        On::new("Deployed", "False", "Degraded", Say::MessageOrReason),
        On::new("Deployed", "True", "Healthy", Say::MessageOrReason),
    ];
    conditions_or(env.obj, ROWS, "Waiting for initialization")
}

/// The phase: Pending and Running Progressing, Successful Healthy, Failed and Error
/// Degraded; any other phase the empty health.
fn experiment(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for experiment to finish: status has not been reconciled.",
        ));
    }
    let (health, message) = match status.get("phase")?.str() {
        Some("Pending") => ("Progressing", "Experiment is pending"),
        Some("Running") => ("Progressing", "Experiment is running"),
        Some("Successful") => ("Healthy", "Experiment is successful"),
        Some("Failed") => ("Degraded", "Experiment has failed"),
        Some("Error") => ("Degraded", "Experiment had an error"),
        _ => return Ok(Hs::empty()),
    };
    Ok(Hs::new(health, message))
}

/// `tonumber(v)` as a Lua value.
fn to_number(v: Lv<'_>) -> Lv<'static> {
    v.to_number().map_or(Lv::Nil, Lv::Num)
}

/// `field` unless it is nil, then the number `default`.
fn value_or<'a>(field: Lv<'a>, default: f64) -> Lv<'a> {
    if field.is_nil() { Lv::Num(default) } else { field }
}

/// Whether the controller has seen the spec: the status's numeric `observedGeneration` is the
/// generation (a missing or greater one is an older Rollout's, taken as seen), and the
/// workload's generation is the one observed.
fn observed(obj: Lv<'_>) -> Result<bool, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(false);
    }
    let observed = to_number(status.get("observedGeneration")?);
    if !observed.is_nil() {
        let generation = obj.path(&["metadata", "generation"])?;
        if !lt(generation, observed)? && !eq(observed, generation) {
            return Ok(false);
        }
    }
    if obj.path(&["spec", "workloadRef"])?.is_nil() {
        return Ok(true);
    }
    let annotations = obj.path(&["metadata", "annotations"])?;
    if annotations.is_nil() {
        return Ok(true);
    }
    let workload = to_number(annotations.get("rollout.argoproj.io/workload-generation")?);
    let seen = to_number(status.get("workloadObservedGeneration")?);
    Ok(eq(workload, seen))
}

/// Argo Rollouts: Progressing until the spec is observed; the status's phase when it has one
/// (Paused as Suspended); Degraded for an invalid spec, an abort or a passed deadline;
/// Suspended while paused; Progressing while replicas are updated, become available or
/// terminate, while the active service or the steps are pending; else Healthy.
fn rollout(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    if !observed(obj)? {
        return Ok(Hs::new("Progressing", "Waiting for rollout spec update to be observed"));
    }
    let status = obj.get("status")?;
    let phase = status.get("phase")?;
    if !phase.is_nil() {
        let health = if phase.is("Paused") { Field::from("Suspended") } else { Field::from(phase) };
        return Ok(Hs::new(health, status.get("message")?));
    }
    for c in status.get("conditions")?.items()? {
        let kind = c.get("type")?;
        if kind.is("InvalidSpec") {
            return Ok(Hs::new("Degraded", c.get("message")?));
        }
        if kind.is("Progressing") {
            let reason = c.get("reason")?;
            if reason.is("RolloutAborted") || reason.is("ProgressDeadlineExceeded") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
    }
    let pause = status.get("pauseConditions")?;
    if !pause.is_nil() && getn(pause, "status.pauseConditions")? > 0 {
        return Ok(Hs::new("Suspended", "Rollout is paused"));
    }
    let spec = obj.get("spec")?;
    if spec.get("paused")?.truthy() {
        return Ok(Hs::new("Suspended", "Rollout is paused"));
    }
    let hash = status.get("currentPodHash")?;
    if hash.is_nil() {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for rollout to finish: status has not been reconciled.",
        ));
    }
    let desired = value_or(spec.get("replicas")?, 1.0);
    let replicas = value_or(status.get("replicas")?, 0.0);
    let updated = value_or(status.get("updatedReplicas")?, 0.0);
    let available = value_or(status.get("availableReplicas")?, 0.0);
    if lt(updated, desired)? {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for roll out to finish: More replicas need to be updated",
        ));
    }
    if lt(available, updated)? {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for roll out to finish: updated replicas are still becoming available",
        ));
    }
    let stable = {
        let stable = status.get("stableRS")?;
        let canary = status.get("canary")?;
        if !stable.is_nil() {
            stable
        } else if !canary.is_nil() {
            canary.get("stableRS")?
        } else {
            Lv::Str("")
        }
    };
    let strategy = spec.get("strategy")?;
    if !strategy.get("blueGreen")?.is_nil() {
        let blue_green = status.get("blueGreen")?;
        if blue_green.is_nil() || !eq(blue_green.get("activeSelector")?, hash) {
            return Ok(Hs::new("Progressing", "active service cutover pending"));
        }
        if !stable.is("") && !eq(stable, hash) {
            return Ok(Hs::new("Progressing", "waiting for analysis to complete"));
        }
    } else if !strategy.get("canary")?.is_nil() {
        if lt(updated, replicas)? {
            return Ok(Hs::new(
                "Progressing",
                "Waiting for roll out to finish: old replicas are pending termination",
            ));
        }
        if stable.is("") || !eq(stable, hash) {
            return Ok(Hs::new("Progressing", "Waiting for rollout to finish steps"));
        }
    }
    Ok(Hs::new("Healthy", ""))
}
