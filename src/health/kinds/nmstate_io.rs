//! `nmstate.io`: NodeNetworkConfigurationPolicy, as Argo CD 3.6.2's script.

use super::lua::Field;
use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "nmstate.io", kind: "NodeNetworkConfigurationPolicy", check: policy }];

/// The first `True` condition of type Available (Healthy), Degraded, Progressing or Ignored
/// (Suspended), with `<reason>: <message>` (the reason alone when there is no message).
fn policy(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if !c.get("status")?.is("True") {
                continue;
            }
            let reason = c.get("reason")?;
            let message = c.get("message")?;
            let msg = if !message.is_nil() && !message.is("") {
                Field::from(format!("{}: {}", reason.text()?, message.text()?))
            } else {
                Field::from(reason)
            };
            let t = c.get("type")?;
            for (kind, status) in [
                ("Available", "Healthy"),
                ("Degraded", "Degraded"),
                ("Progressing", "Progressing"),
                ("Ignored", "Suspended"),
            ] {
                if t.is(kind) {
                    return Ok(Hs::new(status, msg));
                }
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for policy to be applied"))
}
