//! `acme.cert-manager.io`: Challenge and Order, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "acme.cert-manager.io", kind: "Challenge", check: challenge },
    Rule { group: "acme.cert-manager.io", kind: "Order", check: order },
];

/// `status.state` (when set and not empty) and its `status.reason`, or None.
fn state<'a>(obj: Lv<'a>) -> Result<Option<(Lv<'a>, Lv<'a>)>, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let state = status.get("state")?;
    if state.is_nil() || state.is("") {
        return Ok(None);
    }
    Ok(Some((state, status)))
}

/// `valid` is Healthy; `invalid`, `expired`, `errored` Degraded and any other state
/// Progressing, with `status.reason` or `Challenge is <state>`.
fn challenge(env: &Env<'_>) -> Result<Hs, Fault> {
    let Some((state, status)) = state(env.obj)? else {
        return Ok(Hs::new("Progressing", "Waiting for challenge"));
    };
    if state.is("valid") {
        return Ok(Hs::new("Healthy", "Challenge is valid"));
    }
    let health = if ["invalid", "expired", "errored"].iter().any(|s| state.is(s)) {
        "Degraded"
    } else {
        "Progressing"
    };
    let reason = status.get("reason")?;
    if reason.truthy() {
        return Ok(Hs::new(health, reason));
    }
    Ok(Hs::new(health, format!("Challenge is {}", state.text()?)))
}

/// `valid` is Healthy; `invalid`, `expired`, `errored` Degraded with `status.reason` or
/// `Order is <state>`; any other state Progressing, `Order is <state>`.
fn order(env: &Env<'_>) -> Result<Hs, Fault> {
    let Some((state, status)) = state(env.obj)? else {
        return Ok(Hs::new("Progressing", "Waiting for order"));
    };
    if state.is("valid") {
        return Ok(Hs::new("Healthy", "Order is valid"));
    }
    if ["invalid", "expired", "errored"].iter().any(|s| state.is(s)) {
        let reason = status.get("reason")?;
        if reason.truthy() {
            return Ok(Hs::new("Degraded", reason));
        }
        return Ok(Hs::new("Degraded", format!("Order is {}", state.text()?)));
    }
    Ok(Hs::new("Progressing", format!("Order is {}", state.text()?)))
}
