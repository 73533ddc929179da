//! `postgresql.cnpg.io` (CloudNativePG): Cluster, Backup and Database, as Argo CD 3.6.2's
//! scripts.

use super::shapes_d::{lua_eq, or};
use super::{Env, Fault, Hs, Rule};

const G: &str = "postgresql.cnpg.io";

pub(super) const RULES: &[Rule] = &[
    Rule { group: G, kind: "Backup", check: backup },
    Rule { group: G, kind: "Cluster", check: cluster },
    Rule { group: G, kind: "Database", check: database },
];

/// The phase: `completed` is Healthy; `failed`, `walArchivingFailing` and `invalid backup
/// definition` Degraded (with the error); any other Progressing; none yet Progressing.
fn backup(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let phase = status.get("phase")?;
        if !phase.is_nil() && !phase.is("") {
            if phase.is("completed") {
                return Ok(Hs::new("Healthy", "Backup completed"));
            }
            if phase.is("failed")
                || phase.is("walArchivingFailing")
                || phase.is("invalid backup definition")
            {
                let error = status.get("error")?;
                return Ok(Hs::new("Degraded", if error.truthy() { error } else { phase }));
            }
            return Ok(Hs::new("Progressing", phase));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for backup to be processed"))
}

/// The health of each phase of a Cluster.
const CLUSTER_PHASES: &[(&str, &str)] = &[
    ("Cluster in healthy state", "Healthy"),
    ("Setting up primary", "Progressing"),
    ("Creating a new replica", "Progressing"),
    ("Upgrading cluster", "Progressing"),
    ("Waiting for the instances to become active", "Progressing"),
    ("Promoting to primary cluster", "Progressing"),
    ("Switchover in progress", "Degraded"),
    ("Failing over", "Degraded"),
    ("Upgrading Postgres major version", "Degraded"),
    ("Cluster upgrade delayed", "Degraded"),
    ("Waiting for user action", "Degraded"),
    ("Primary instance is being restarted in-place", "Degraded"),
    ("Primary instance is being restarted without a switchover", "Degraded"),
    (
        "Cluster cannot execute instance online upgrade due to missing architecture binary",
        "Degraded",
    ),
    ("Online upgrade in progress", "Degraded"),
    ("Applying configuration", "Degraded"),
    ("Unable to create required cluster objects", "Suspended"),
    (
        "Cluster cannot proceed to reconciliation due to an unknown plugin being required",
        "Suspended",
    ),
    ("Cluster has incomplete or invalid image catalog", "Suspended"),
    ("Cluster is unrecoverable and needs manual intervention", "Suspended"),
];

/// Reconciliation disabled by annotation is Suspended; a hibernation condition is Suspended
/// (`True`) or Degraded; else the phase's health from [`CLUSTER_PHASES`] (Unknown when not
/// listed) with the phase reason; no conditions is Progressing.
fn cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let metadata = env.obj.get("metadata")?;
    if metadata.truthy() {
        let annotations = metadata.get("annotations")?;
        if annotations.truthy() && annotations.get("cnpg.io/reconciliationLoop")?.is("disabled") {
            return Ok(Hs::new("Suspended", "Cluster reconciliation is suspended"));
        }
    }
    let status = env.obj.get("status")?;
    if !status.is_nil() && !status.get("conditions")?.is_nil() {
        for (_, c) in status.get("conditions")?.pairs()? {
            if c.get("type")?.is("cnpg.io/hibernation") {
                let code = if c.get("status")?.is("True") { "Suspended" } else { "Degraded" };
                return Ok(Hs::new(code, c.get("message")?));
            }
        }
        let phase = status.get("phase")?;
        let code = phase
            .str()
            .and_then(|p| CLUSTER_PHASES.iter().find(|(k, _)| *k == p))
            .map_or("Unknown", |(_, v)| v);
        return Ok(Hs::new(code, status.get("phaseReason")?));
    }
    Ok(Hs::new("Progressing", status.get("phaseReason")?))
}

/// Applied at the observed generation is Healthy; a failure at it Degraded; else Progressing
/// (with the status message when there is one).
fn database(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = "Waiting for CloudNativePG to reconcile Database";
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", waiting));
    }
    let metadata = env.obj.get("metadata")?;
    let observed = metadata.is_nil()
        || metadata.get("generation")?.is_nil()
        || lua_eq(status.get("observedGeneration")?, metadata.get("generation")?);
    let applied = status.get("applied")?;
    if applied.is_bool(true) && observed {
        return Ok(Hs::new("Healthy", or(status.get("message")?, "")));
    }
    if applied.is_bool(false) && observed {
        let m = or(status.get("message")?, "CloudNativePG failed to apply the Database");
        return Ok(Hs::new("Degraded", m));
    }
    let message = status.get("message")?;
    if !message.is_nil() && !message.is("") {
        return Ok(Hs::new("Progressing", message));
    }
    Ok(Hs::new("Progressing", waiting))
}
