//! `kyverno.io`: ClusterPolicy and Policy, as Argo CD 3.6.2's scripts.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "kyverno.io", kind: "ClusterPolicy", check: cluster_policy },
    Rule { group: "kyverno.io", kind: "Policy", check: policy },
];

/// The first `Ready` condition: `True` Healthy, anything else Degraded, with its message;
/// else Progressing.
fn cluster_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(c) = conditions.find_type("Ready")?
    {
        let status = if c.get("status")?.is("True") { "Healthy" } else { "Degraded" };
        return Ok(Hs::new(status, c.get("message")?));
    }
    Ok(Hs::new("Progressing", "Waiting for ClusterPolicy to become ready"))
}

/// Healthy when a `Ready` condition is `True` with reason `Succeeded` and message `Ready`;
/// else Progressing.
fn policy(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready")
                && c.get("status")?.is("True")
                && c.get("reason")?.is("Succeeded")
                && c.get("message")?.is("Ready")
            {
                return Ok(Hs::new("Healthy", "Policy is ready"));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Policy to be ready"))
}
