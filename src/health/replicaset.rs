//! `apps/v1` ReplicaSet.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's ReplicaSet check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    use HealthStatus::{Degraded, Healthy, Progressing};
    if r.int64("/metadata/generation")? > r.int64("/status/observedGeneration")? {
        return Ok(HealthResult::new(
            Progressing,
            "Waiting for rollout to finish: observed replica set generation less than desired generation",
        ));
    }
    if let Some(c) = r.condition("/status/conditions", "ReplicaFailure")?
        && r.str(&format!("{c}/status"))? == "True"
    {
        return Ok(HealthResult::new(Degraded, r.str(&format!("{c}/message"))?));
    }
    let available = r.int("/status/availableReplicas")?;
    if let Some(want) = r.opt_int("/spec/replicas")?.filter(|want| available < *want) {
        return Ok(HealthResult::new(
            Progressing,
            format!(
                "Waiting for rollout to finish: {available} out of {want} new replicas are available..."
            ),
        ));
    }
    Ok(HealthResult::status(Healthy))
}
