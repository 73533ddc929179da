//! `grafana.integreatly.org`: Grafana, GrafanaDashboard, GrafanaDatasource and GrafanaFolder,
//! as Argo CD 3.6.2's scripts.

use super::shapes_b::{cat, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "grafana.integreatly.org", kind: "Grafana", check: grafana },
    Rule { group: "grafana.integreatly.org", kind: "GrafanaDashboard", check: dashboard },
    Rule { group: "grafana.integreatly.org", kind: "GrafanaDatasource", check: datasource },
    Rule { group: "grafana.integreatly.org", kind: "GrafanaFolder", check: folder },
];

/// The stage: Degraded when it failed, Healthy when `complete` succeeded, else Progressing
/// with the stage; Progressing while there is no stage status.
fn grafana(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("stageStatus")?.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for Grafana status info"));
    }
    let stage_status = status.get("stageStatus")?;
    let stage = status.get("stage")?;
    if stage_status.is("failed") {
        return Ok(Hs::new("Degraded", cat(&[Lv::Str("Failed at stage "), stage])?));
    }
    if stage.is("complete") && stage_status.is("success") {
        return Ok(Hs::new("Healthy", ""));
    }
    Ok(Hs::new("Progressing", stage))
}

/// Progressing while there is no UID; Degraded when no Grafana instance matches; else
/// Healthy.
fn datasource(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("uid")?.is("") {
        return Ok(Hs::new("Progressing", ""));
    }
    if status.get("NoMatchingInstances")?.truthy() {
        return Ok(Hs::new("Degraded", "can't find matching grafana instance"));
    }
    Ok(Hs::new("Healthy", ""))
}

/// The conditions with a status, in order: each adds `<reason> for <type> because
/// <message>` (as far as they are set) to the message; the first that `degrades` makes the
/// object Degraded; a `True` one Healthy; else Progressing.
fn conditions_message(env: &Env<'_>, degrades: fn(Lv<'_>, Lv<'_>) -> bool) -> Result<Hs, Fault> {
    let mut health = "Progressing";
    let mut message = String::new();
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            let status = c.get("status")?;
            if status.is_nil() {
                continue;
            }
            if !message.is_empty() {
                message.push_str(", ");
            }
            let reason = c.get("reason")?;
            if !reason.is_nil() {
                message.push_str(&reason.text()?);
                let t = c.get("type")?;
                if !t.is_nil() {
                    message.push_str(" for ");
                    message.push_str(&t.text()?);
                    let m = c.get("message")?;
                    if !m.is_nil() {
                        message.push_str(" because ");
                        message.push_str(&m.text()?);
                    }
                }
            }
            if degrades(status, c.get("type")?) {
                return Ok(Hs::new("Degraded", message));
            }
            if status.is("True") {
                health = "Healthy";
            }
        }
    }
    Ok(Hs::new(health, message))
}

/// [`conditions_message`]: any `False` condition degrades.
fn dashboard(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_message(env, |status, _| status.is("False"))
}

/// [`conditions_message`]: `FolderUIDMismatch` degrades when `True`, any other condition
/// when `False`.
fn folder(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_message(env, |status, t| {
        let mismatch = t.is("FolderUIDMismatch");
        (status.is("True") && mismatch) || (status.is("False") && !mismatch)
    })
}
