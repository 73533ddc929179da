//! The condition-based fallback: the health of a custom resource that has no built-in check
//! and no script, read from the conventions most operators follow, in the order of the
//! kstatus library (`sigs.k8s.io/cli-utils/pkg/kstatus`). Opt-in
//! ([`super::HealthContext::with_condition_fallback`]); without it such a resource has no
//! health, as in Argo CD.
//!
//! The first row that applies gives the health:
//!
//! | # | when | health | message |
//! |---|------|--------|---------|
//! | 1 | `status.observedGeneration` and `metadata.generation` are both set and differ | Progressing | `waiting for the controller to observe generation <generation> (observed <observedGeneration>)` |
//! | 2 | the first condition, in list order, that is `Stalled` or `Failed` with status `True` | Degraded | the condition's text |
//! |   | or `Reconciling` or `Progressing` with status `True` (a `Progressing` condition with reason `NewReplicaSetAvailable` excepted) | Progressing | the condition's text |
//! | 3 | a `Ready` condition (else an `Available` one) with status `True` | Healthy | the condition's text |
//! |   | with status `False` or `Unknown` | Progressing | the condition's text |
//! | 4 | none of the above (no conditions, or only other types) | Healthy | (none) |
//!
//! The condition's text is its `message`, else its `reason`, else `<type> is <status>`.
//! Conditions are `status.conditions`, a list of objects with string `type`, `status`,
//! `reason` and `message`. A field of the wrong type is a conversion error (the object is
//! Unknown), as for the built-in checks.
//!
//! Where this departs from kstatus, and why:
//!
//! - kstatus reads only `Reconciling`, `Stalled` and `Ready`; `Failed`, `Progressing` and
//!   `Available` are added here because many operators use them with the same meaning;
//! - `Progressing=True` with reason `NewReplicaSetAvailable` is how a Deployment, and custom
//!   resources that copy its conditions, say that a rollout is *complete*; it is not counted
//!   as in progress;
//! - `Available` is read only when there is no `Ready` condition, so a resource that has both
//!   is judged by `Ready`, the condition kstatus reads.
//!
//! An object being deleted never gets here: [`super::assess`] has already made it
//! Progressing.

use serde_json::Value;

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};
use crate::object::ObjectRef;

/// The name of this check in conversion errors.
const CHECK: &str = "custom resource";

/// The conditions-based health of an object (see the module docs), whatever its kind: the
/// caller decides that it applies (no built-in check, no script).
///
/// # Errors
///
/// [`HealthError::Convert`] when a field read has the wrong type.
///
/// # Examples
pub(crate) fn condition_health(
    obj: &Value,
    object: &ObjectRef,
) -> Result<HealthResult, HealthError> {
    let r = Reader::new(obj, object, CHECK);
    let observed = r.opt_i64("/status/observedGeneration")?;
    let generation = r.opt_i64("/metadata/generation")?;
    if let (Some(observed), Some(generation)) = (observed, generation)
        && observed != generation
    {
        return Ok(HealthResult::new(
            HealthStatus::Progressing,
            format!(
                "waiting for the controller to observe generation {generation} (observed {observed})"
            ),
        ));
    }
    let items = r.items("/status/conditions")?;
    let mut conditions = Vec::with_capacity(items.len());
    for item in &items {
        conditions.push(Condition {
            type_: r.str(&format!("{item}/type"))?,
            status: r.str(&format!("{item}/status"))?,
            reason: r.str(&format!("{item}/reason"))?,
            message: r.str(&format!("{item}/message"))?,
        });
    }
    for c in &conditions {
        if c.status != "True" {
            continue;
        }
        match c.type_ {
            "Stalled" | "Failed" => return Ok(HealthResult::new(HealthStatus::Degraded, c.text())),
            "Reconciling" => return Ok(HealthResult::new(HealthStatus::Progressing, c.text())),
            "Progressing" if c.reason != "NewReplicaSetAvailable" => {
                return Ok(HealthResult::new(HealthStatus::Progressing, c.text()));
            }
            _ => {}
        }
    }
    let ready = conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .or_else(|| conditions.iter().find(|c| c.type_ == "Available"));
    if let Some(c) = ready {
        match c.status {
            "True" => return Ok(HealthResult::new(HealthStatus::Healthy, c.text())),
            "False" | "Unknown" => {
                return Ok(HealthResult::new(HealthStatus::Progressing, c.text()));
            }
            _ => {}
        }
    }
    Ok(HealthResult::status(HealthStatus::Healthy))
}

/// One condition, its fields read as strings (`""` when absent).
struct Condition<'a> {
    type_: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
}

impl Condition<'_> {
    /// The message, else the reason, else `<type> is <status>`.
    fn text(&self) -> String {
        if !self.message.is_empty() {
            self.message.to_string()
        } else if !self.reason.is_empty() {
            self.reason.to_string()
        } else {
            format!("{} is {}", self.type_, self.status)
        }
    }
}
