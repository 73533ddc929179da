//! `metrics.keptn.sh`: Analysis and KeptnMetric, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "metrics.keptn.sh", kind: "Analysis", check: analysis },
    Rule { group: "metrics.keptn.sh", kind: "KeptnMetric", check: keptn_metric },
];

/// `status.pass` `true` Healthy, else `status.warning` `true` Healthy with warnings, else
/// `pass` `false` Degraded; else Progressing.
fn analysis(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.get("pass")?.is_bool(true) {
        return Ok(Hs::new("Healthy", "Analysis is healthy"));
    }
    if status.get("warning")?.is_bool(true) {
        return Ok(Hs::new("Healthy", "Analysis is healthy with warnings"));
    }
    if status.get("pass")?.is_bool(false) {
        return Ok(Hs::new("Degraded", "Analysis is degraded"));
    }
    Ok(Hs::new("Progressing", "Analysis is progressing"))
}

/// No `status.errMsg` (or an empty one) and a `status.value` is Healthy; an error message is
/// Degraded; else Progressing.
fn keptn_metric(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    let err = status.get("errMsg")?;
    let no_error = err.is_nil() || err.is("");
    if no_error && !status.get("value")?.is_nil() {
        return Ok(Hs::new("Healthy", "KeptnMetric is healthy"));
    }
    if !no_error {
        return Ok(Hs::new("Degraded", "KeptnMetric is degraded"));
    }
    Ok(Hs::new("Progressing", "KeptnMetric is progressing"))
}
