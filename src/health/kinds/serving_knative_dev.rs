//! `serving.knative.dev` (Knative Serving): Service, as Argo CD 3.6.2's script.

use super::lua::cat_into;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "serving.knative.dev", kind: "Service", check: service }];

/// `ConfigurationsReady`, `RoutesReady` and `Ready` all `True` (and nothing `False` or
/// `Unknown`) is Healthy; any `False` condition Degraded; else Progressing; the message lists
/// the conditions that are `False` or `Unknown`, with their reasons and messages.
fn service(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("conditions")?.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for status update."));
    }
    let (mut ready, mut failed, mut unknown) = (0usize, 0usize, 0usize);
    let mut message = String::new();
    for (_, c) in status.get("conditions")?.pairs()? {
        let s = c.get("status")?;
        if s.is("True") {
            let t = c.get("type")?;
            if t.is("ConfigurationsReady") || t.is("RoutesReady") || t.is("Ready") {
                ready += 1;
                continue;
            }
        }
        if s.is("False") || s.is("Unknown") {
            // Each condition's line, written where the script appends it.
            cat_into(&mut message, &[c.get("type")?, Lv::Str(" is "), s])?;
            let reason = c.get("reason")?;
            if !reason.is_nil() && !reason.is("") {
                cat_into(&mut message, &[Lv::Str(", since "), reason, Lv::Str(".")])?;
            }
            let m = c.get("message")?;
            if !m.is_nil() && !m.is("") {
                cat_into(&mut message, &[Lv::Str(" "), m])?;
            }
            message.push('\n');
            if s.is("False") {
                failed += 1;
            } else {
                unknown += 1;
            }
        }
    }
    if ready == 3 && failed == 0 && unknown == 0 {
        return Ok(Hs::new("Healthy", "Knative Service is healthy."));
    }
    Ok(Hs::new(if failed > 0 { "Degraded" } else { "Progressing" }, message))
}
