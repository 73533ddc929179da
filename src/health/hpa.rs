//! `autoscaling` HorizontalPodAutoscaler, `v1` (conditions in an annotation) and `v2`.

use serde_json::Value;

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};
use crate::object::{ObjectRef, annotation};

const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// The (type, reason) pairs that make an HPA Degraded.
const DEGRADED: &[(&str, &str)] = &[
    ("AbleToScale", "FailedGetScale"),
    ("AbleToScale", "FailedUpdateScale"),
    ("ScalingActive", "FailedGetResourceMetric"),
    ("ScalingActive", "FailedGetObjectMetric"),
    ("ScalingActive", "FailedGetPodsMetric"),
    ("ScalingActive", "FailedGetExternalMetric"),
    ("ScalingActive", "FailedComputeMetricsReplicas"),
    ("ScalingActive", "InvalidSelector"),
];

/// One HPA condition.
#[derive(Default)]
struct Condition {
    kind: String,
    reason: String,
    message: String,
    status: String,
}

/// Argo CD's HPA check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    let progressing = HealthResult::new(HealthStatus::Progressing, "Waiting to Autoscale");
    let conditions = if r.obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        match annotation(r.obj, CONDITIONS_ANNOTATION) {
            None => return Ok(progressing),
            Some(text) => v1_conditions(text, r)?,
        }
    } else {
        let mut out = Vec::new();
        for c in r.items("/status/conditions")? {
            let field = |k: &str| r.str(&format!("{c}/{k}")).map(str::to_string);
            out.push(Condition {
                kind: field("type")?,
                reason: field("reason")?,
                message: field("message")?,
                status: field("status")?,
            });
        }
        out
    };
    for c in &conditions {
        if DEGRADED.iter().any(|(t, reason)| *t == c.kind && *reason == c.reason) {
            return Ok(HealthResult::new(HealthStatus::Degraded, c.message.clone()));
        }
    }
    for c in &conditions {
        if matches!(c.kind.as_str(), "AbleToScale" | "ScalingLimited") && c.status == "True" {
            return Ok(HealthResult::new(HealthStatus::Healthy, c.message.clone()));
        }
    }
    Ok(progressing)
}

/// The conditions of a v1 HPA, from the JSON of its annotation. Keys match case-insensitively,
/// as Go's JSON decoder matches them.
fn v1_conditions(text: &str, r: &Reader<'_>) -> Result<Vec<Condition>, HealthError> {
    let object = || Box::new(ObjectRef::from_object_lossy(r.obj));
    let err = |message: String| HealthError::HpaConditions { object: object(), message };
    let parsed: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    let items = match parsed {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(err(format!(
                "expected a list of conditions, found {}",
                crate::object::type_name(&other)
            )));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let map = match item {
            Value::Null => {
                out.push(Condition::default());
                continue;
            }
            Value::Object(map) => map,
            other => {
                return Err(err(format!(
                    "condition {i}: expected an object, found {}",
                    crate::object::type_name(other)
                )));
            }
        };
        let field = |name: &str| -> Result<String, HealthError> {
            let value = map
                .get(name)
                .or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v));
            match value {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(err(format!(
                    "condition {i}: field `{name}` must be a string, found {}",
                    crate::object::type_name(other)
                ))),
            }
        };
        out.push(Condition {
            kind: field("type")?,
            reason: field("reason")?,
            message: field("message")?,
            status: field("status")?,
        });
    }
    Ok(out)
}
