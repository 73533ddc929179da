//! `keda.sh`: ScaledJob and ScaledObject, as Argo CD 3.6.2's scripts.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "keda.sh", kind: "ScaledJob", check: scaled_job },
    Rule { group: "keda.sh", kind: "ScaledObject", check: scaled_object },
];

/// Every condition is read: `Ready` `False` and the `degrading` (status, type) mark Degraded,
/// `Ready` `True` Healthy, `Paused` `True` Suspended (with Healthy); the message is the last
/// such condition's. Degraded first, then Healthy or Suspended; else Progressing, `waiting`.
fn keda(env: &Env<'_>, degrading: (&str, &str), waiting: &str) -> Result<Hs, Fault> {
    let (mut healthy, mut degraded, mut suspended) = (false, false, false);
    let mut message = Lv::Nil;
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            let status = c.get("status")?;
            let t = c.get("type")?;
            if status.is("False") && t.is("Ready") {
                message = c.get("message")?;
                degraded = true;
            }
            if status.is("True") && t.is("Ready") {
                message = c.get("message")?;
                healthy = true;
            }
            if status.is("True") && t.is("Paused") {
                message = c.get("message")?;
                suspended = true;
            }
            if status.is(degrading.0) && t.is(degrading.1) {
                message = c.get("message")?;
                degraded = true;
            }
        }
    }
    if degraded {
        Ok(Hs::new("Degraded", message))
    } else if healthy && !suspended {
        Ok(Hs::new("Healthy", message))
    } else if healthy {
        Ok(Hs::new("Suspended", message))
    } else {
        Ok(Hs::new("Progressing", waiting))
    }
}

/// Ready, Paused, and a `Ready` `Unknown` as Degraded; else `Waiting for ScaledJob`.
fn scaled_job(env: &Env<'_>) -> Result<Hs, Fault> {
    keda(env, ("Unknown", "Ready"), "Waiting for ScaledJob")
}

/// Ready, Paused, and a `Fallback` `True` as Degraded; else `Creating HorizontalPodAutoscaler
/// Object`.
fn scaled_object(env: &Env<'_>) -> Result<Hs, Fault> {
    keda(env, ("True", "Fallback"), "Creating HorizontalPodAutoscaler Object")
}
