//! `pulumi.com`: Stack, as Argo CD 3.6.2's script.

use super::shapes_d::lua_eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "pulumi.com", kind: "Stack", check: stack }];

/// Progressing until the operator observed the generation; then the first condition that is
/// `True` among `Stalled` (Degraded), `Reconciling` (Progressing) and `Ready` (Healthy), with
/// its message.
fn stack(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil()
        || !lua_eq(status.get("observedGeneration")?, env.obj.get("metadata")?.get("generation")?)
    {
        return Ok(Hs::new(
            "Progressing",
            "Waiting for the operator to observe the latest spec change",
        ));
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            for (t, code) in
                [("Stalled", "Degraded"), ("Reconciling", "Progressing"), ("Ready", "Healthy")]
            {
                if c.get("type")?.is(t) && c.get("status")?.is("True") {
                    return Ok(Hs::new(code, c.get("message")?));
                }
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for the stack to be reconciled"))
}
