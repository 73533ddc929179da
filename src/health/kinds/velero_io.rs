//! `velero.io` (Velero): Backup, Restore and Schedule, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "velero.io", kind: "Backup", check: backup },
    Rule { group: "velero.io", kind: "Restore", check: restore },
    Rule { group: "velero.io", kind: "Schedule", check: schedule },
];

/// The phases that fail a backup or a restore.
const FAILED: &[&str] = &[
    "FailedValidation",
    "Failed",
    "PartiallyFailed",
    "WaitingForPluginOperationsPartiallyFailed",
    "FinalizingPartiallyFailed",
];

/// `status.phase`, when `status` and it are set.
fn phase<'a>(env: &Env<'a>) -> Result<Option<(Lv<'a>, Lv<'a>)>, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let phase = status.get("phase")?;
    Ok((!phase.is_nil()).then_some((status, phase)))
}

/// A backup or a restore: `Completed` is Healthy; a failed phase Degraded (the failure
/// reason, or the phase); any other phase Progressing.
fn operation(env: &Env<'_>, what: &str) -> Result<Hs, Fault> {
    let Some((status, phase)) = phase(env)? else {
        return Ok(Hs::new("Progressing", format!("Waiting for {what} to be processed")));
    };
    if phase.is("Completed") {
        let done = if what == "backup" { "Backup completed" } else { "Restore completed" };
        return Ok(Hs::new("Healthy", done));
    }
    if FAILED.iter().any(|f| phase.is(f)) {
        let reason = status.get("failureReason")?;
        return Ok(Hs::new("Degraded", if reason.truthy() { reason } else { phase }));
    }
    Ok(Hs::new("Progressing", phase))
}

/// A backup's phase.
fn backup(env: &Env<'_>) -> Result<Hs, Fault> {
    operation(env, "backup")
}

/// A restore's phase.
fn restore(env: &Env<'_>) -> Result<Hs, Fault> {
    operation(env, "restore")
}

/// `Enabled` is Healthy, `FailedValidation` Degraded, any other phase Progressing.
fn schedule(env: &Env<'_>) -> Result<Hs, Fault> {
    let Some((_, phase)) = phase(env)? else {
        return Ok(Hs::new("Progressing", "Waiting for schedule to be processed"));
    };
    Ok(if phase.is("Enabled") {
        Hs::new("Healthy", "Schedule is enabled")
    } else if phase.is("FailedValidation") {
        Hs::new("Degraded", "Schedule failed validation")
    } else {
        Hs::new("Progressing", phase)
    })
}
