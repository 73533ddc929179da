//! `apps/v1` Deployment.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};
use crate::vocabulary::go_quote;

/// Argo CD's Deployment check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    use HealthStatus::{Degraded, Healthy, Progressing, Suspended};
    if r.bool("/spec/paused")? {
        return Ok(HealthResult::new(Suspended, "Deployment is paused"));
    }
    if r.int64("/metadata/generation")? > r.int64("/status/observedGeneration")? {
        return Ok(HealthResult::new(
            Progressing,
            "Waiting for rollout to finish: observed deployment generation less than desired generation",
        ));
    }
    if let Some(c) = r.condition("/status/conditions", "Progressing")?
        && r.str(&format!("{c}/reason"))? == "ProgressDeadlineExceeded"
    {
        return Ok(HealthResult::new(
            Degraded,
            format!("Deployment {} exceeded its progress deadline", go_quote(r.name())),
        ));
    }
    let replicas = r.opt_int("/spec/replicas")?;
    let updated = r.int("/status/updatedReplicas")?;
    let current = r.int("/status/replicas")?;
    let available = r.int("/status/availableReplicas")?;
    if let Some(want) = replicas.filter(|want| updated < *want) {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {updated} out of {want} new replicas have been updated..."
            ),
        ));
    }
    if current > updated {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {} old replicas are pending termination...",
                current - updated
            ),
        ));
    }
    if available < updated {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {available} of {updated} updated replicas are available..."
            ),
        ));
    }
    Ok(HealthResult::status(Healthy))
}
