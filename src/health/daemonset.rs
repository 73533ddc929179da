//! `apps/v1` DaemonSet.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};
use crate::vocabulary::go_quote;

/// Argo CD's DaemonSet check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    use HealthStatus::{Healthy, Progressing};
    if r.int64("/metadata/generation")? > r.int64("/status/observedGeneration")? {
        return Ok(HealthResult::new(
            Progressing,
            "Waiting for rollout to finish: observed daemon set generation less than desired generation",
        ));
    }
    let desired = r.int("/status/desiredNumberScheduled")?;
    let updated = r.int("/status/updatedNumberScheduled")?;
    let available = r.int("/status/numberAvailable")?;
    if r.str("/spec/updateStrategy/type")? == "OnDelete" {
        return Ok(HealthResult::new(
            Healthy,
            format!("daemon set {updated} out of {desired} new pods have been updated"),
        ));
    }
    let name = go_quote(r.name());
    if updated < desired {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for daemon set {name} rollout to finish: {updated} out of {desired} new pods have been updated..."
            ),
        ));
    }
    if available < desired {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for daemon set {name} rollout to finish: {available} of {desired} updated pods are available..."
            ),
        ));
    }
    Ok(HealthResult::status(Healthy))
}
