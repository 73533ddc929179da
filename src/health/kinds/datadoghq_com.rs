//! `datadoghq.com`: DatadogMetric, as Argo CD 3.6.2's script.

use super::shapes_b::{cat, or, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "datadoghq.com", kind: "DatadogMetric", check: datadog_metric }];

/// Degraded for the first `Error` condition that is `True` (`<reason>: <message>`), then for
/// the first `Valid` condition that is `False`; else Healthy.
fn datadog_metric(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Error") && c.get("status")?.is("True") {
                let reason = or(c.get("reason")?, Lv::Str(""));
                let message = or(c.get("message")?, Lv::Str("DatadogMetric reported an error"));
                if reason.is("") {
                    return Ok(Hs::new("Degraded", message));
                }
                return Ok(Hs::new("Degraded", cat(&[reason, Lv::Str(": "), message])?));
            }
        }
        for c in conditions.items()? {
            if c.get("type")?.is("Valid") && c.get("status")?.is("False") {
                let message = or(c.get("message")?, Lv::Str("DatadogMetric is not valid"));
                return Ok(Hs::new("Degraded", message));
            }
        }
    }
    Ok(Hs::new("Healthy", "DatadogMetric is healthy"))
}
