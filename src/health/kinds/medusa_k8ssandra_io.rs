//! `medusa.k8ssandra.io`: MedusaBackupJob and MedusaTask, as Argo CD 3.6.2's scripts.

use super::shapes_c::lua_eq;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "medusa.k8ssandra.io", kind: "MedusaBackupJob", check: backup_job },
    Rule { group: "medusa.k8ssandra.io", kind: "MedusaTask", check: task },
];

/// What both kinds read first: the health when the status is missing, unobserved or not
/// known yet (`unknown_message` then), else `status.finished` and `status.failed`.
fn observed<'a>(
    env: &Env<'a>,
    unknown_message: Option<&str>,
) -> Result<Result<(Lv<'a>, Lv<'a>), Hs>, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Err(Hs::new("Unknown", "No status object")));
    }
    let observed = status.get("observedGeneration")?;
    if observed.is_nil() {
        return Ok(Err(Hs::new("Unknown", "No observedGeneration")));
    }
    if !lua_eq(observed, env.obj.path(&["metadata", "generation"])?) {
        return Ok(Err(Hs::new("Progressing", "observedGeneration is not equal to generation")));
    }
    let finished = status.get("finished")?;
    let failed = status.get("failed")?;
    if finished.is_nil() && failed.is_nil() {
        return Ok(Err(match unknown_message {
            Some(m) => Hs::new("Progressing", m),
            None => Hs::status("Progressing"),
        }));
    }
    Ok(Ok((finished, failed)))
}

/// `finished[0] or finished[1]`: whether a node has finished.
fn any_finished(finished: Lv<'_>) -> Result<bool, Fault> {
    Ok(finished.at(0)?.truthy() || finished.at(1)?.truthy())
}

/// Observed, then `finished` (Healthy with a first item, else Progressing), then `failed`
/// (Degraded).
fn backup_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let (finished, failed) = match observed(env, Some("Status not known yet"))? {
        Ok(f) => f,
        Err(hs) => return Ok(hs),
    };
    if !finished.is_nil() {
        return Ok(Hs::status(if any_finished(finished)? { "Healthy" } else { "Progressing" }));
    }
    if !failed.is_nil() {
        return Ok(Hs::new("Degraded", "Failed nodes exist"));
    }
    Ok(Hs::status("Unknown"))
}

/// Observed, then `failed` (Degraded) over `finished` (Healthy with a first item, else
/// Progressing).
fn task(env: &Env<'_>) -> Result<Hs, Fault> {
    let (finished, failed) = match observed(env, None)? {
        Ok(f) => f,
        Err(hs) => return Ok(hs),
    };
    let mut hs = Hs::status("Unknown");
    if !finished.is_nil() {
        hs = Hs::status(if any_finished(finished)? { "Healthy" } else { "Progressing" });
    }
    if !failed.is_nil() {
        hs = Hs::new("Degraded", "Failed nodes exist");
    }
    Ok(hs)
}
