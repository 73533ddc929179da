//! Core `v1` Service.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's Service check: a LoadBalancer is Progressing until it has an ingress point.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    if r.str("/spec/type")? == "LoadBalancer" && r.len("/status/loadBalancer/ingress")? == 0 {
        return Ok(HealthResult::status(HealthStatus::Progressing));
    }
    Ok(HealthResult::status(HealthStatus::Healthy))
}
