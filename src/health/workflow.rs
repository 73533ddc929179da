//! Argo Workflows' `argoproj.io` Workflow, any version.

use serde_json::Value;

use super::{HealthResult, HealthStatus};

/// Argo CD's Workflow check: its phase, with `status.message`. It reads the object as is:
/// a phase or message that is not a string counts as empty.
pub(crate) fn health(obj: &Value) -> HealthResult {
    let text = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let status = match text("/status/phase") {
        "" | "Pending" | "Running" => HealthStatus::Progressing,
        "Succeeded" => HealthStatus::Healthy,
        "Failed" | "Error" => HealthStatus::Degraded,
        _ => HealthStatus::Unknown,
    };
    HealthResult::new(status, text("/status/message"))
}
