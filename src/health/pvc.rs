//! Core `v1` PersistentVolumeClaim.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's PersistentVolumeClaim check: its phase.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    let status = match r.str("/status/phase")? {
        "Lost" => HealthStatus::Degraded,
        "Pending" => HealthStatus::Progressing,
        "Bound" => HealthStatus::Healthy,
        _ => HealthStatus::Unknown,
    };
    Ok(HealthResult::status(status))
}
