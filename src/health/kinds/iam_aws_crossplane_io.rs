//! `iam.aws.crossplane.io`: Policy, Role and RolePolicyAttachment, as Argo CD 3.6.2's
//! scripts.

use super::shapes_b::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "iam.aws.crossplane.io", kind: "Policy", check: policy },
    Rule { group: "iam.aws.crossplane.io", kind: "Role", check: role },
    Rule { group: "iam.aws.crossplane.io", kind: "RolePolicyAttachment", check: attachment },
];

/// The last `Ready` and `Synced` conditions: both `True` Healthy (the ready reason); not
/// synced and paused Suspended; synced and not ready Progressing; else Degraded with the
/// last reconcile error's message.
fn managed(env: &Env<'_>, available: &'static str, created: &'static str) -> Result<Hs, Fault> {
    let Some(conditions) = status_conditions(env)? else {
        return Ok(Hs::new("Progressing", created));
    };
    let (mut ready, mut synced, mut suspended) = (false, false, false);
    let (mut ready_message, mut synced_message, mut suspended_message) =
        (Lv::Nil, Lv::Nil, Lv::Nil);
    for c in conditions.items()? {
        let t = c.get("type")?;
        if t.is("Ready") {
            ready = c.get("status")?.is("True");
            ready_message = c.get("reason")?;
        } else if t.is("Synced") {
            synced = c.get("status")?.is("True");
            let reason = c.get("reason")?;
            if reason.is("ReconcileError") {
                synced_message = c.get("message")?;
            } else if reason.is("ReconcilePaused") {
                suspended = true;
                suspended_message = reason;
            }
        }
    }
    Ok(if ready && synced {
        Hs::new("Healthy", ready_message)
    } else if !synced && suspended {
        Hs::new("Suspended", suspended_message)
    } else if !ready && synced && !suspended {
        Hs::new("Progressing", available)
    } else {
        Hs::new("Degraded", synced_message)
    })
}

/// [`managed`].
fn policy(env: &Env<'_>) -> Result<Hs, Fault> {
    managed(env, "Waiting for Policy to be available", "Waiting for Policy to be created")
}

/// [`managed`].
fn role(env: &Env<'_>) -> Result<Hs, Fault> {
    managed(env, "Waiting for Role to be available", "Waiting for Role to be created")
}

/// [`managed`].
fn attachment(env: &Env<'_>) -> Result<Hs, Fault> {
    managed(
        env,
        "Waiting for RolePolicyAttachment to be available",
        "Waiting for RolePolicyAttachment to be created",
    )
}
