//! `work.karmada.io` (Karmada): ResourceBinding and ClusterResourceBinding, as Argo CD
//! 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "work.karmada.io", kind: "ClusterResourceBinding", check: cluster_binding },
    Rule { group: "work.karmada.io", kind: "ResourceBinding", check: binding },
];

const INSUFFICIENT: &str = "Current resource status is insufficient";

/// Any cluster's status `Unhealthy`, or `Unknown` and not applied, is Degraded; else Healthy
/// (no message).
fn aggregated(statuses: Lv<'_>) -> Result<Hs, Fault> {
    for s in statuses.items()? {
        let health = s.get("health")?;
        if health.is("Unhealthy") || (health.is("Unknown") && !s.get("applied")?.is_bool(true)) {
            return Ok(Hs::new("Degraded", "Current resource status is unhealthy"));
        }
    }
    Ok(Hs::status("Healthy"))
}

/// Every scheduled cluster must have reported (else Progressing); then [`aggregated`].
fn cluster_binding(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    let clusters = env.obj.get("spec")?.get("clusters")?;
    if clusters.is_nil() || clusters.len()? == 0 {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    let statuses = status.get("aggregatedStatus")?;
    if statuses.is_nil() || clusters.len()? != statuses.len()? {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    aggregated(statuses)
}

/// As ClusterResourceBinding, where no `spec.clusters` (dependencies propagated) skips the
/// count.
fn binding(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    let clusters = env.obj.get("spec")?.get("clusters")?;
    if !clusters.is_nil() && clusters.len()? == 0 {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    let statuses = status.get("aggregatedStatus")?;
    if statuses.is_nil() || statuses.len()? == 0 {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    if !clusters.is_nil() && clusters.len()? != statuses.len()? {
        return Ok(Hs::new("Progressing", INSUFFICIENT));
    }
    aggregated(statuses)
}
