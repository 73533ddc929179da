//! `apiregistration.k8s.io` APIService (`v1` and `v1beta1`).

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};

/// Argo CD's APIService check: its `Available` condition.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    let Some(c) = r.condition("/status/conditions", "Available")? else {
        return Ok(HealthResult::new(HealthStatus::Progressing, "Waiting to be processed"));
    };
    let message =
        format!("{}: {}", r.str(&format!("{c}/reason"))?, r.str(&format!("{c}/message"))?);
    let status = if r.str(&format!("{c}/status"))? == "True" {
        HealthStatus::Healthy
    } else {
        HealthStatus::Progressing
    };
    Ok(HealthResult::new(status, message))
}
