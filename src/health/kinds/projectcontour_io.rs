//! `projectcontour.io` (Contour): HTTPProxy and ExtensionService, as Argo CD 3.6.2's scripts.

use super::shapes_d::lua_eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "projectcontour.io", kind: "ExtensionService", check: extension_service },
    Rule { group: "projectcontour.io", kind: "HTTPProxy", check: http_proxy },
];

const WAITING: &str = "Waiting for status";

/// The first `Valid` condition of the current generation: `True` is Healthy, `False`
/// Degraded, with its message; else Progressing.
fn extension_service(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.truthy() {
        let conditions = status.get("conditions")?;
        if conditions.truthy() {
            for c in conditions.items()? {
                let generation = env.obj.get("metadata")?.get("generation")?;
                if !lua_eq(generation, c.get("observedGeneration")?) {
                    continue;
                }
                if c.get("type")?.is("Valid") {
                    let s = c.get("status")?;
                    if s.is("True") {
                        return Ok(Hs::new("Healthy", c.get("message")?));
                    }
                    if s.is("False") {
                        return Ok(Hs::new("Degraded", c.get("message")?));
                    }
                }
            }
        }
    }
    Ok(Hs::new("Progressing", WAITING))
}

/// The first `Valid` condition of the current generation: `True` is Healthy, `False`
/// Degraded, with the status description; a proxy with inclusions and a `False` condition is
/// Healthy (inclusions cannot be checked). With no conditions, the description of a current
/// status.
fn http_proxy(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", WAITING);
    let status = env.obj.get("status")?;
    if !status.truthy() {
        return Ok(hs);
    }
    let conditions = status.get("conditions")?;
    if conditions.truthy() {
        for c in conditions.items()? {
            let generation = env.obj.get("metadata")?.get("generation")?;
            if !lua_eq(generation, c.get("observedGeneration")?) {
                continue;
            }
            let valid = c.get("type")?.is("Valid");
            if valid && c.get("status")?.is("True") {
                return Ok(Hs::new("Healthy", status.get("description")?));
            }
            if !env.obj.get("spec")?.get("includes")?.is_nil() && c.get("status")?.is("False") {
                hs = Hs::new("Healthy", "HTTPProxy inclusions cannot be health checked");
            } else if c.get("type")?.is("Valid") && c.get("status")?.is("False") {
                return Ok(Hs::new("Degraded", status.get("description")?));
            }
        }
    } else if status.get("currentStatus")?.truthy() {
        hs.message = status.get("description")?.into();
    }
    Ok(hs)
}
