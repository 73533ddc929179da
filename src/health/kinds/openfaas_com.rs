//! `openfaas.com`: Function, as Argo CD 3.6.2's script.

use super::shapes_c::{lua_lt, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "openfaas.com", kind: "Function", check: function }];

/// The first condition that is `Ready` `False` or `Stalled` `True` (Degraded), or `Ready`
/// `True` (Healthy with replicas, else Suspended); else Progressing.
fn function(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready") && c.get("status")?.is("False") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
            if c.get("type")?.is("Stalled") && c.get("status")?.is("True") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
            if c.get("type")?.is("Ready") && c.get("status")?.is("True") {
                let replicas = env.obj.path(&["status", "replicas"])?;
                if !replicas.is_nil() && lua_lt(Lv::Num(0.0), replicas)? {
                    return Ok(Hs::new("Healthy", c.get("message")?));
                }
                return Ok(Hs::new("Suspended", "No replicas available"));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Function"))
}
