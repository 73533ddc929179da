//! `operator.victoriametrics.com`: every kind (`operator.victoriametrics.com/_`), as Argo CD
//! 3.6.2's script.

use super::lua::Field;
use super::shapes_c::{lua_eq, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "operator.victoriametrics.com", kind: "_", check: any_kind }];

/// At the observed generation, `status.updateStatus`: `operational` and `ignored` Healthy,
/// `expanding` Progressing, `paused` Suspended, `failed` Degraded (the last three with
/// `status.reason` when set); else waiting.
fn any_kind(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = || Hs::new("Progressing", "Waiting for the operator to reconcile");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    let metadata = env.obj.get("metadata")?;
    if !metadata.is_nil() {
        let generation = metadata.get("generation")?;
        if !generation.is_nil() {
            let observed = status.get("observedGeneration")?;
            if !observed.is_nil() && !lua_eq(observed, generation) {
                return Ok(waiting());
            }
        }
    }
    let update = status.get("updateStatus")?;
    let reason = or(status.get("reason")?, Lv::Str(""));
    let reason_or = |default: &str| {
        if reason.is("") { Field::from(default) } else { Field::from(reason) }
    };
    Ok(if update.is("operational") {
        Hs::new("Healthy", "All components are operational")
    } else if update.is("ignored") {
        Hs::new("Healthy", "Resource was not picked by any parent object")
    } else if update.is("expanding") {
        Hs::new("Progressing", reason_or("Reconciliation in progress"))
    } else if update.is("paused") {
        Hs::new("Suspended", reason_or("Reconciliation is paused"))
    } else if update.is("failed") {
        Hs::new("Degraded", reason_or("Reconciliation failed"))
    } else {
        Hs::new("Progressing", "Waiting for the operator to report status")
    })
}
