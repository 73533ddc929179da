//! `apps.kruise.io` (OpenKruise): AdvancedCronJob, BroadcastJob, CloneSet, DaemonSet and
//! StatefulSet, as Argo CD 3.6.2's scripts.

use super::shapes_a::{arith, eq, le, lt};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "apps.kruise.io", kind: "AdvancedCronJob", check: advanced_cron_job },
    Rule { group: "apps.kruise.io", kind: "BroadcastJob", check: broadcast_job },
    Rule { group: "apps.kruise.io", kind: "CloneSet", check: clone_set },
    Rule { group: "apps.kruise.io", kind: "DaemonSet", check: daemon_set },
    Rule { group: "apps.kruise.io", kind: "StatefulSet", check: stateful_set },
];

/// Suspended while paused and never scheduled; Progressing with active jobs; Healthy once
/// scheduled (`status.lastScheduleTime`), else Degraded.
fn advanced_cron_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let status = obj.get("status")?;
    let last = status.get("lastScheduleTime")?;
    // The script matches the time with `string.match` (a string or a number) and turns it
    // into a time with `os.time`, which always gives one.
    let scheduled = match last {
        Lv::Nil => false,
        Lv::Str(_) | Lv::Num(_) => true,
        other => {
            return Err(Fault(format!(
                "bad argument #1 to match (string expected, got {}) (field `status.lastScheduleTime`)",
                other.type_name()
            )));
        }
    };
    if !scheduled && obj.path(&["spec", "paused"])?.is_bool(true) {
        return Ok(Hs::new("Suspended", "AdvancedCronJob is Paused"));
    }
    let active = status.get("active")?;
    if !active.is_nil() && active.len()? > 0 {
        return Ok(Hs::new("Progressing", "AdvancedCronJobs has active jobs"));
    }
    if !scheduled {
        return Ok(Hs::new("Degraded", "AdvancedCronJobs has not run successfully"));
    }
    Ok(Hs::new("Healthy", "AdvancedCronJobs has run successfully"))
}

/// Healthy once completed with every desired pod succeeded; Degraded when failed; Suspended
/// when paused; else Progressing.
fn broadcast_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let running = || Hs::new("Progressing", "BroadcastJob is still running");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(running());
    }
    let phase = |s: &str| -> Result<bool, Fault> { Ok(status.get("phase")?.is(s)) };
    if eq(status.get("desired")?, status.get("succeeded")?) && phase("completed")? {
        return Ok(Hs::new("Healthy", "BroadcastJob is completed successfully"));
    }
    if !status.get("active")?.is_num(0.0) && phase("running")? {
        return Ok(running());
    }
    if !status.get("failed")?.is_num(0.0) && phase("failed")? {
        return Ok(Hs::new("Degraded", "BroadcastJob failed"));
    }
    if phase("paused")? && env.obj.path(&["spec", "paused"])?.is_bool(true) {
        return Ok(Hs::new("Suspended", "BroadcastJob is Paused"));
    }
    Ok(running())
}

/// The status of the current generation (`metadata.generation == status.observedGeneration`),
/// or None.
fn current<'a>(obj: Lv<'a>) -> Result<Option<(Lv<'a>, Lv<'a>)>, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let generation = obj.path(&["metadata", "generation"])?;
    Ok(eq(generation, status.get("observedGeneration")?).then_some((status, generation)))
}

fn waiting() -> Hs {
    Hs::new("Progressing", "Waiting for initialization")
}

/// Suspended while paused or at a partition; Healthy when every replica is updated and
/// available, else Degraded; Progressing until the generation is observed.
fn clone_set(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let Some((status, generation)) = current(obj)? else {
        return Ok(waiting());
    };
    let strategy = obj.path(&["spec", "updateStrategy"])?;
    let available = status.get("updatedAvailableReplicas")?;
    if strategy.get("paused")?.is_bool(true) || !available.truthy() {
        return Ok(Hs::new("Suspended", "Cloneset is paused"));
    }
    if !strategy.get("partition")?.is_num(0.0) && lt(Lv::Num(1.0), generation)? {
        if le(status.get("expectedUpdatedReplicas")?, status.get("updatedReplicas")?)? {
            return Ok(Hs::new("Suspended", "Cloneset needs manual intervention"));
        }
        return Ok(waiting());
    }
    if eq(available, status.get("replicas")?) {
        return Ok(Hs::new("Healthy", "All Cloneset workloads are ready and updated"));
    }
    Ok(Hs::new("Degraded", "Some replicas are not ready or available"))
}

/// Suspended while paused or at a partition; Healthy when every pod is updated and available;
/// Degraded when every pod is updated and unavailable; else Progressing.
fn daemon_set(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let Some((status, generation)) = current(obj)? else {
        return Ok(waiting());
    };
    let rolling = obj.path(&["spec", "updateStrategy", "rollingUpdate"])?;
    let updated = status.get("updatedNumberScheduled")?;
    if rolling.get("paused")?.is_bool(true) || !updated.truthy() {
        return Ok(Hs::new("Suspended", "Daemonset is paused"));
    }
    let partition = rolling.get("partition")?;
    if !partition.is_nil() && !partition.is_num(0.0) && lt(Lv::Num(1.0), generation)? {
        let desired =
            arith(status.get("desiredNumberScheduled")?, "status.desiredNumberScheduled")?;
        let room = desired - arith(partition, "spec.updateStrategy.rollingUpdate.partition")?;
        if lt(Lv::Num(room), updated)? {
            return Ok(Hs::new("Suspended", "Daemonset needs manual intervention"));
        }
        return Ok(waiting());
    }
    let desired = status.get("desiredNumberScheduled")?;
    if eq(updated, desired) && eq(status.get("numberAvailable")?, desired) {
        return Ok(Hs::new("Healthy", "All Daemonset workloads are ready and updated"));
    }
    if eq(updated, desired) && eq(status.get("numberUnavailable")?, desired) {
        return Ok(Hs::new("Degraded", "Some pods are not ready or available"));
    }
    Ok(waiting())
}

/// Suspended while paused or at a partition; Healthy when every replica is updated and
/// available, else Degraded; Progressing until the generation is observed.
fn stateful_set(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let Some((status, generation)) = current(obj)? else {
        return Ok(waiting());
    };
    let rolling = obj.path(&["spec", "updateStrategy", "rollingUpdate"])?;
    let available = status.get("updatedAvailableReplicas")?;
    if rolling.get("paused")?.is_bool(true) || !available.truthy() {
        return Ok(Hs::new("Suspended", "Statefulset is paused"));
    }
    let partition = rolling.get("partition")?;
    if !partition.is_num(0.0) && lt(Lv::Num(1.0), generation)? {
        let updated = status.get("updatedReplicas")?;
        let replicas = arith(status.get("replicas")?, "status.replicas")?;
        let room = replicas - arith(partition, "spec.updateStrategy.rollingUpdate.partition")?;
        if lt(Lv::Num(room), updated)? {
            return Ok(Hs::new("Suspended", "Statefulset needs manual intervention"));
        }
        return Ok(waiting());
    }
    if eq(available, status.get("replicas")?) {
        return Ok(Hs::new("Healthy", "All Statefulset workloads are ready and updated"));
    }
    Ok(Hs::new("Degraded", "Some replicas are not ready or available"))
}
