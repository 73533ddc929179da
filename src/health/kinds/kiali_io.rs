//! `kiali.io`: Kiali, as Argo CD 3.6.2's script.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "kiali.io", kind: "Kiali", check: kiali }];

/// The first condition that is `Successful` `True` (Healthy), `Failure` `True` (Degraded) or
/// `Running` with reason `Running` (Progressing), with its message; else `Waiting for Kiali`.
fn kiali(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            let message = c.get("message")?;
            if c.get("type")?.is("Successful") && c.get("status")?.is("True") {
                return Ok(Hs::new("Healthy", message));
            }
            if c.get("type")?.is("Failure") && c.get("status")?.is("True") {
                return Ok(Hs::new("Degraded", message));
            }
            if c.get("type")?.is("Running") && c.get("reason")?.is("Running") {
                return Ok(Hs::new("Progressing", message));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Kiali"))
}
