//! `capsule.clastix.io` (Capsule): CapsuleConfiguration, CustomQuota, GlobalCustomQuota,
//! GlobalProxySettings, GlobalTenantResource, ProxySetting, ResourcePool, ResourcePoolClaim,
//! Tenant, TenantOwner and TenantResource, as Argo CD 3.6.2's scripts.

use super::shapes_a::{On, READY, Say, capsule_start, first_on, sorted_keys};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "capsule.clastix.io", kind: "CapsuleConfiguration", check: ready },
    Rule { group: "capsule.clastix.io", kind: "CustomQuota", check: ready },
    Rule { group: "capsule.clastix.io", kind: "GlobalCustomQuota", check: ready },
    Rule { group: "capsule.clastix.io", kind: "GlobalProxySettings", check: ready },
    Rule { group: "capsule.clastix.io", kind: "GlobalTenantResource", check: replicated },
    Rule { group: "capsule.clastix.io", kind: "ProxySetting", check: ready },
    Rule { group: "capsule.clastix.io", kind: "ResourcePool", check: resource_pool },
    Rule { group: "capsule.clastix.io", kind: "ResourcePoolClaim", check: resource_pool_claim },
    Rule { group: "capsule.clastix.io", kind: "Tenant", check: tenant },
    Rule { group: "capsule.clastix.io", kind: "TenantOwner", check: ready },
    Rule { group: "capsule.clastix.io", kind: "TenantResource", check: replicated },
];

/// Capsule's steps: Progressing without a current status; then the first condition matching
/// `first` (a search of its own), then Ready `False` Degraded, `True` Healthy; else
/// Progressing, `Waiting for Ready condition`. `extra` runs between the start and the
/// searches.
fn capsule(
    obj: Lv<'_>,
    first: Option<On>,
    extra: fn(Lv<'_>) -> Result<Option<Hs>, Fault>,
) -> Result<Hs, Fault> {
    let conditions = match capsule_start(obj)? {
        Ok(c) => c,
        Err(hs) => return Ok(hs),
    };
    if let Some(hs) = extra(obj)? {
        return Ok(hs);
    }
    if let Some(row) = first
        && let Some(hs) = first_on(conditions, &[row])?
    {
        return Ok(hs);
    }
    Ok(first_on(conditions, READY)?
        .unwrap_or_else(|| Hs::new("Progressing", "Waiting for Ready condition")))
}

fn nothing(_: Lv<'_>) -> Result<Option<Hs>, Fault> {
    Ok(None)
}

/// Ready `False` is Degraded, `True` Healthy, once the status is current.
fn ready(env: &Env<'_>) -> Result<Hs, Fault> {
    capsule(env.obj, None, nothing)
}

/// Suspended while `spec.cordoned`; else as [`ready`].
fn replicated(env: &Env<'_>) -> Result<Hs, Fault> {
    let spec = env.obj.get("spec")?;
    if !spec.is_nil() && spec.get("cordoned")?.truthy() {
        return Ok(Hs::new("Suspended", "Replication is cordoned"));
    }
    capsule(env.obj, None, nothing)
}

/// Degraded while any resource of the pool is exhausted, naming them (sorted); else as
/// [`ready`].
fn resource_pool(env: &Env<'_>) -> Result<Hs, Fault> {
    capsule(env.obj, None, exhausted)
}

fn exhausted(obj: Lv<'_>) -> Result<Option<Hs>, Fault> {
    let exhaustions = obj.path(&["status", "exhaustions"])?;
    if exhaustions.is_nil() {
        return Ok(None);
    }
    let keys = sorted_keys(exhaustions)?;
    if keys.is_empty() {
        return Ok(None);
    }
    // A list's keys are its indexes, written as numbers are.
    let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_ref()).collect();
    Ok(Some(Hs::new("Degraded", format!("Pool exhausted for: {}", names.join(", ")))))
}

/// Suspended while Bound is `False`; else as [`ready`].
fn resource_pool_claim(env: &Env<'_>) -> Result<Hs, Fault> {
    capsule(env.obj, Some(On::new("Bound", "False", "Suspended", Say::Message)), nothing)
}

/// Suspended while Cordoned is `True`; else as [`ready`].
fn tenant(env: &Env<'_>) -> Result<Hs, Fault> {
    capsule(env.obj, Some(On::new("Cordoned", "True", "Suspended", Say::Message)), nothing)
}
