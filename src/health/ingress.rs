//! Ingress of `extensions` and `networking.k8s.io`, any version.

use serde_json::Value;

use super::{HealthResult, HealthStatus};

/// Argo CD's Ingress check: Healthy once `status.loadBalancer.ingress` is a non-empty list.
/// It reads the object as is (no typed conversion), so a field of the wrong type counts as
/// absent.
pub(crate) fn health(obj: &Value) -> HealthResult {
    let assigned = obj
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .is_some_and(|items| !items.is_empty());
    HealthResult::status(if assigned { HealthStatus::Healthy } else { HealthStatus::Progressing })
}
