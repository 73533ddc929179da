//! `_.crossplane.io` (every Crossplane kind), as Argo CD 3.6.2's scripts.

use super::shapes_a::is_empty_table;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "_.crossplane.io", kind: "_", check: crossplane }];

/// The kinds that never get conditions: Healthy without them.
const NO_CONDITIONS: &[&str] = &[
    "Composition",
    "CompositionRevision",
    "DeploymentRuntimeConfig",
    "EnvironmentConfig",
    "ImageConfig",
    "ProviderConfig",
    "ProviderConfigUsage",
    "ControllerConfig",
    "StoreConfig",
    "ClusterProviderConfig",
    "ClusterProviderConfigUsage",
];

/// The condition types that make a resource Healthy when `True`.
const HEALTHY: &[&str] =
    &["Ready", "Healthy", "Offered", "Established", "ValidPipeline", "RevisionHealthy"];

/// Crossplane's conditions: a `False` LastAsyncOperation or Synced is Degraded; a `True`
/// healthy type (or an inactive ManagedResourceDefinition's Established) Healthy; else
/// Progressing, `Provisioning ...`.
fn crossplane(env: &Env<'_>) -> Result<Hs, Fault> {
    upbound_like(env.obj, NO_CONDITIONS, HEALTHY, true)
}

/// The Crossplane shape, shared with `_.upbound.io`: `no_conditions` kinds are Healthy with no
/// conditions, `healthy` types make a resource Healthy when `True`, and `inactive_mrd` adds the
/// ManagedResourceDefinition rule.
pub(super) fn upbound_like(
    obj: Lv<'_>,
    no_conditions: &[&str],
    healthy: &[&str],
    inactive_mrd: bool,
) -> Result<Hs, Fault> {
    let status = obj.get("status")?;
    let conditions = if status.is_nil() { Lv::Nil } else { status.get("conditions")? };
    if conditions.is_nil() || is_empty_table(conditions)? {
        let kind = obj.get("kind")?;
        if no_conditions.iter().any(|k| kind.is(k)) {
            let message = if !status.is_nil() && !status.get("users")?.is_nil() {
                "Resource is in use."
            } else {
                "Resource is up-to-date."
            };
            return Ok(Hs::new("Healthy", message));
        }
        return Ok(provisioning());
    }
    let mut hs = provisioning();
    for c in conditions.items()? {
        let kind = c.get("type")?;
        if (kind.is("LastAsyncOperation") || kind.is("Synced")) && c.get("status")?.is("False") {
            return Ok(Hs::new("Degraded", c.get("message")?));
        }
        if healthy.iter().any(|h| kind.is(h)) && c.get("status")?.is("True") {
            hs = Hs::new("Healthy", "Resource is up-to-date.");
        }
        if inactive_mrd {
            let spec = obj.get("spec")?;
            let inactive = spec.is_nil() || !spec.get("state")?.is("Active");
            if kind.is("Established") && c.get("reason")?.is("InactiveManagedResource") && inactive
            {
                hs = Hs::new("Healthy", "Resource is up-to-date.");
            }
        }
    }
    Ok(hs)
}

fn provisioning() -> Hs {
    Hs::new("Progressing", "Provisioning ...")
}
