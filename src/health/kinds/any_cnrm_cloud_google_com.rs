//! `_.cnrm.cloud.google.com` (Config Connector, every kind), as Argo CD 3.6.2's scripts.

use super::shapes_a::eq;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "_.cnrm.cloud.google.com", kind: "_", check: cnrm }];

/// Config Connector's `status.healthy` (ConfigConnector, ConfigConnectorContext and the
/// `customize.core.cnrm.cloud.google.com/` kinds) when the status is current; else the
/// conditions' reasons (UpToDate, UpdateFailed, DependencyNotFound, DependencyNotReady);
/// else Progressing, `Update in progress`.
fn cnrm(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(in_progress());
    }
    let kind = obj.get("kind")?;
    if (kind.is("ConfigConnector") || kind.is("ConfigConnectorContext"))
        && !status.get("healthy")?.is_nil()
    {
        let observed = status.get("observedGeneration")?;
        if observed.is_nil() || eq(observed, obj.path(&["metadata", "generation"])?) {
            return healthy_flag(status, kind);
        }
    }
    let api = obj.get("apiVersion")?;
    if !api.is_nil()
        && starts_with(api, "customize.core.cnrm.cloud.google.com/")?
        && !status.get("healthy")?.is_nil()
    {
        let observed = status.get("observedGeneration")?;
        if observed.is_nil()
            || observed.is_num(0.0)
            || eq(observed, obj.path(&["metadata", "generation"])?)
        {
            return healthy_flag(status, kind);
        }
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        let observed = status.get("observedGeneration")?;
        if observed.is_nil() || eq(observed, obj.path(&["metadata", "generation"])?) {
            for c in conditions.items()? {
                let reason = c.get("reason")?;
                if reason.is("UpToDate") && c.get("status")?.is("True") {
                    return Ok(Hs::new("Healthy", c.get("message")?));
                }
                let health = match reason.str() {
                    Some("UpdateFailed" | "DependencyNotFound") => "Degraded",
                    Some("DependencyNotReady") => "Suspended",
                    _ => continue,
                };
                return Ok(Hs::new(health, c.get("message")?));
            }
        }
    }
    Ok(in_progress())
}

fn in_progress() -> Hs {
    Hs::new("Progressing", "Update in progress")
}

/// `string.find(v, prefix, 1, true) == 1`: a string starting with `prefix`; a number (as text)
/// never does; anything else is an error.
fn starts_with(v: Lv<'_>, prefix: &str) -> Result<bool, Fault> {
    match v {
        Lv::Str(s) => Ok(s.starts_with(prefix)),
        Lv::Num(_) => Ok(false),
        other => Err(Fault(format!(
            "bad argument #1 to find (string expected, got {}) (field `apiVersion`)",
            other.type_name()
        ))),
    }
}

/// `status.healthy == true`: Healthy `<kind> is healthy`; else Degraded `<kind> is not healthy`.
fn healthy_flag(status: Lv<'_>, kind: Lv<'_>) -> Result<Hs, Fault> {
    let kind = kind.text()?;
    Ok(if status.get("healthy")?.is_bool(true) {
        Hs::new("Healthy", format!("{kind} is healthy"))
    } else {
        Hs::new("Degraded", format!("{kind} is not healthy"))
    })
}
