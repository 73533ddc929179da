//! `batch`: CronJob, as Argo CD 3.6.2's scripts (gitops-engine has no Go check for it).

use super::shapes_a::{getn, lt};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "batch", kind: "CronJob", check: cron_job }];

/// Healthy while suspended, never scheduled, never successful yet, running, or successful
/// since its last schedule; Degraded when the last success is older than the last schedule;
/// Progressing without a status.
fn cron_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    if obj.path(&["spec", "suspend"])?.is_bool(true) {
        return Ok(Hs::new("Healthy", "CronJob is Suspended"));
    }
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for CronJob"));
    }
    let scheduled = status.get("lastScheduleTime")?;
    if scheduled.is_nil() {
        return Ok(Hs::new("Healthy", "CronJob has not been scheduled yet"));
    }
    let succeeded = status.get("lastSuccessfulTime")?;
    if succeeded.is_nil() {
        return Ok(Hs::new(
            "Healthy",
            "The CronJob never completed successfully. It may not be healthy",
        ));
    }
    let active = status.get("active")?;
    if !active.is_nil() && getn(active, "status.active")? > 0 {
        return Ok(Hs::new(
            "Healthy",
            "The job is running. Its last execution may not have been successful",
        ));
    }
    if lt(succeeded, scheduled)? {
        return Ok(Hs::new(
            "Degraded",
            "CronJob has not completed its last execution successfully",
        ));
    }
    Ok(Hs::new("Healthy", "CronJob has completed its last execution successfully"))
}
