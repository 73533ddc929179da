//! `core.spinkube.dev`: SpinApp, as Argo CD 3.6.2's script.

use std::borrow::Cow;

use super::shapes_b::{format_d, lt, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "core.spinkube.dev", kind: "SpinApp", check: spin_app }];

/// `string.lower(v)` as gopher-lua runs it: a string or a number (written as text); an error
/// for anything else.
fn lower<'a>(v: Lv<'a>) -> Result<Cow<'a, str>, Fault> {
    match v {
        Lv::Str(_) | Lv::Num(_) => Ok(Cow::Owned(v.text()?.to_lowercase())),
        other => Err(Fault(format!(
            "bad argument #1 to lower (string expected, got {})",
            other.type_name()
        ))),
    }
}

/// Waiting without a status; Degraded for a `Progressing` condition that is `False` with
/// reason ProgressDeadlineExceeded or a message mentioning a timeout or a failure; Degraded
/// unless the last `Available` condition is `True`; Progressing while fewer replicas are ready
/// than desired or a `Progressing` condition is `True`; else Healthy with the replica counts.
fn spin_app(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.truthy() {
        return Ok(Hs::new("Progressing", "Waiting for status to be available"));
    }
    let mut available = false;
    let mut progressing = false;
    let mut available_message = Lv::Str("");
    let mut progressing_message = Lv::Str("");
    let conditions = status.get("conditions")?;
    if conditions.truthy() {
        for c in conditions.items()? {
            let t = c.get("type")?;
            if t.is("Progressing") {
                let s = c.get("status")?;
                if s.is("False") {
                    let failed = c.get("reason")?.is("ProgressDeadlineExceeded") || {
                        let m = lower(or(c.get("message")?, Lv::Str("")))?;
                        m.contains("timeout")
                            || lower(or(c.get("message")?, Lv::Str("")))?.contains("failed")
                    };
                    if failed {
                        let m = or(c.get("message")?, Lv::Str("Application deployment has failed"));
                        return Ok(Hs::new("Degraded", m));
                    }
                }
                if c.get("status")?.is("True") {
                    progressing = true;
                    progressing_message =
                        or(c.get("message")?, Lv::Str("Application progress status"));
                }
            } else if t.is("Available") {
                if c.get("status")?.is("True") {
                    available = true;
                    available_message =
                        or(c.get("message")?, Lv::Str("Application availability status"));
                } else {
                    available = false;
                    available_message =
                        or(c.get("message")?, Lv::Str("Application is not available"));
                }
            }
        }
    }
    let ready = or(status.get("readyReplicas")?, Lv::Num(0.0));
    let desired = or(env.obj.path(&["spec", "replicas"])?, Lv::Num(1.0));
    if !available {
        return Ok(Hs::new(
            "Degraded",
            or(available_message, Lv::Str("Application is not available")),
        ));
    }
    if lt(ready, desired)? {
        return Ok(Hs::new(
            "Progressing",
            format!("Waiting for replicas to be ready ({}/{})", format_d(ready), format_d(desired)),
        ));
    }
    if progressing {
        return Ok(Hs::new(
            "Progressing",
            or(progressing_message, Lv::Str("Application is still progressing")),
        ));
    }
    Ok(Hs::new(
        "Healthy",
        format!(
            "Application is healthy with {}/{} replicas ready",
            format_d(ready),
            format_d(desired)
        ),
    ))
}
