//! `trust.cert-manager.io` (trust-manager): Bundle, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "trust.cert-manager.io", kind: "Bundle", check: bundle }];

/// The first `Synced` condition: `True` is Healthy, else Degraded, with its message (or
/// reason); none yet Progressing.
fn bundle(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil()
        && !status.get("conditions")?.is_nil()
        && let Some(c) = status.get("conditions")?.find_type("Synced")?
    {
        let message = c.get("message")?;
        if c.get("status")?.is("True") {
            let m = if message.truthy() { message } else { Lv::Str("Bundle is synced") };
            return Ok(Hs::new("Healthy", m));
        }
        let m = if message.truthy() {
            message
        } else {
            let reason = c.get("reason")?;
            if reason.truthy() { reason } else { Lv::Str("Bundle is not synced") }
        };
        return Ok(Hs::new("Degraded", m));
    }
    Ok(Hs::new("Progressing", "Waiting for Bundle to be synced"))
}
