//! `gateway.envoyproxy.io`: Backend and the policies (BackendTrafficPolicy,
//! ClientTrafficPolicy, EnvoyExtensionPolicy, EnvoyPatchPolicy, SecurityPolicy), as Argo CD
//! 3.6.2's scripts.

use super::shapes_b::{eq, generation_observed, status_conditions};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "gateway.envoyproxy.io", kind: "Backend", check: backend },
    Rule {
        group: "gateway.envoyproxy.io",
        kind: "BackendTrafficPolicy",
        check: backend_traffic_policy,
    },
    Rule {
        group: "gateway.envoyproxy.io",
        kind: "ClientTrafficPolicy",
        check: client_traffic_policy,
    },
    Rule {
        group: "gateway.envoyproxy.io",
        kind: "EnvoyExtensionPolicy",
        check: envoy_extension_policy,
    },
    Rule { group: "gateway.envoyproxy.io", kind: "EnvoyPatchPolicy", check: envoy_patch_policy },
    Rule { group: "gateway.envoyproxy.io", kind: "SecurityPolicy", check: security_policy },
];

/// The first `Accepted` condition: Progressing when it observed another generation, else
/// Healthy when `True`, Degraded otherwise, with its message; Progressing without one.
fn backend(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Accepted") {
                let observed = c.get("observedGeneration")?;
                if !observed.is_nil() && !eq(observed, env.obj.path(&["metadata", "generation"])?) {
                    return Ok(Hs::new("Progressing", "Waiting for Backend status to be updated"));
                }
                let health = if c.get("status")?.is("True") { "Healthy" } else { "Degraded" };
                return Ok(Hs::new(health, c.get("message")?));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Backend status"))
}

/// The policies' shape: Degraded with the message of an `Accepted` `False` condition of an
/// ancestor of the current generation; Healthy when some ancestor of the current generation
/// has conditions; else Progressing, waiting.
fn policy(env: &Env<'_>, healthy: &'static str, waiting: &'static str) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let ancestors = status.get("ancestors")?;
        if !ancestors.is_nil() {
            for a in ancestors.items()? {
                if a.get("conditions")?.is_nil() || !generation_observed(env, a, true)? {
                    continue;
                }
                for c in a.get("conditions")?.items()? {
                    if c.get("type")?.is("Accepted") && c.get("status")?.is("False") {
                        return Ok(Hs::new("Degraded", c.get("message")?));
                    }
                }
            }
            for a in ancestors.items()? {
                let conditions = a.get("conditions")?;
                if !conditions.is_nil()
                    && conditions.len()? > 0
                    && generation_observed(env, a, true)?
                {
                    return Ok(Hs::new("Healthy", healthy));
                }
            }
        }
    }
    Ok(Hs::new("Progressing", waiting))
}

/// [`policy`].
fn backend_traffic_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    policy(env, "BackendTrafficPolicy is healthy", "Waiting for BackendTrafficPolicy status")
}

/// [`policy`].
fn client_traffic_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    policy(env, "ClientTrafficPolicy is healthy", "Waiting for ClientTrafficPolicy status")
}

/// [`policy`].
fn envoy_extension_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    policy(env, "EnvoyExtensionPolicy is healthy", "Waiting for EnvoyExtensionPolicy status")
}

/// [`policy`].
fn envoy_patch_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    policy(env, "EnvoyPatchPolicy is healthy", "Waiting for EnvoyPatchPolicy status")
}

/// [`policy`].
fn security_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    policy(env, "SecurityPolicy is healthy", "Waiting for SecurityPolicy status")
}
