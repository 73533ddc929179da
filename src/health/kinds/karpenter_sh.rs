//! `karpenter.sh`: NodeClaim and NodePool, as Argo CD 3.6.2's scripts.

use super::shapes_c::{lua_eq, ready_condition, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "karpenter.sh", kind: "NodeClaim", check: node_claim },
    Rule { group: "karpenter.sh", kind: "NodePool", check: node_pool },
];

/// The first condition of `kind` that is `True`.
fn first_true<'a>(conditions: Lv<'a>, kind: &str) -> Result<Option<Lv<'a>>, Fault> {
    for c in conditions.items()? {
        if c.get("type")?.is(kind) && c.get("status")?.is("True") {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// An unobserved generation waits; then Disrupting (Suspended), the decided Ready condition,
/// and the furthest of Initialized, Registered, Launched reached; else waiting for launch.
fn node_claim(env: &Env<'_>) -> Result<Hs, Fault> {
    let generation = env.obj.path(&["metadata", "generation"])?;
    if !generation.is_nil() {
        let status = env.obj.get("status")?;
        if !status.is_nil() {
            let observed = status.get("observedGeneration")?;
            if !observed.is_nil() && !lua_eq(generation, observed) {
                return Ok(Hs::new("Progressing", "Waiting for NodeClaim spec to be reconciled"));
            }
        }
    }
    if let Some(conditions) = status_conditions(env.obj)? {
        if let Some(c) = first_true(conditions, "Disrupting")? {
            return Ok(Hs::new("Suspended", c.get("message")?));
        }
        if let Some(hs) = ready_condition(conditions, None)? {
            return Ok(hs);
        }
        for (kind, message) in [
            ("Initialized", "Node initialized, waiting for Ready"),
            ("Registered", "Node registered, waiting for initialization"),
            ("Launched", "Node launched, waiting for registration"),
        ] {
            if first_true(conditions, kind)?.is_some() {
                return Ok(Hs::new("Progressing", message));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for NodeClaim to be launched"))
}

/// The first decided Ready condition, with its message; else Progressing.
fn node_pool(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(hs) = ready_condition(conditions, None)?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Progressing", "Waiting for NodePool to be ready"))
}
