//! Health assessment: Argo CD's built-in rules, Lua scripts and app aggregation.

pub mod scripts;

use serde::{Deserialize, Serialize};

/// A health status code, ordered from most to least healthy (Argo CD's severity order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HealthStatus {
    /// Fully healthy.
    Healthy,
    /// Paused or suspended, waiting for an outside event.
    Suspended,
    /// Not healthy yet, but may still get there.
    Progressing,
    /// Not in the cluster.
    Missing,
    /// Failed, or could not get healthy.
    Degraded,
    /// The health check itself failed.
    Unknown,
}

/// A health status with its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HealthResult {
    /// The status.
    pub status: HealthStatus,
    /// The message, empty when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}
