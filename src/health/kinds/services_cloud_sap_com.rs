//! `services.cloud.sap.com` (SAP BTP service operator): ServiceInstance and ServiceBinding,
//! as Argo CD 3.6.2's scripts (one rule: the scripts are the same).

use super::shapes_d::{lua_eq, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "services.cloud.sap.com", kind: "ServiceBinding", check: service },
    Rule { group: "services.cloud.sap.com", kind: "ServiceInstance", check: service },
];

/// Deleting is Progressing; with a list of conditions, a stale generation is Progressing, a
/// `Succeeded` `False` or `Failed` `True` condition Degraded (its message), else Healthy;
/// without one, Progressing.
fn service(env: &Env<'_>) -> Result<Hs, Fault> {
    let metadata = env.obj.get("metadata")?;
    if metadata.get("deletionTimestamp")?.truthy() {
        return Ok(Hs::new("Progressing", "Resource is being deleted"));
    }
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let conditions = status.get("conditions")?;
        if matches!(conditions, Lv::Table(_)) {
            for c in conditions.items()? {
                let observed = c.get("observedGeneration")?;
                if observed.truthy() {
                    let generation = env.obj.get("metadata")?.get("generation")?;
                    if generation.truthy() && !lua_eq(observed, generation) {
                        return Ok(Hs::new(
                            "Progressing",
                            "Waiting for spec update to be observed",
                        ));
                    }
                }
                let t = c.get("type")?;
                let failed = (t.is("Succeeded") && c.get("status")?.is("False"))
                    || (c.get("type")?.is("Failed") && c.get("status")?.is("True"));
                if failed {
                    return Ok(Hs::new("Degraded", or(c.get("message")?, "")));
                }
            }
            return Ok(Hs::new("Healthy", "Ready to use"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for status"))
}
