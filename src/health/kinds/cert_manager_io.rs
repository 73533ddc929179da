//! `cert-manager.io`: Certificate, CertificateRequest, Issuer and ClusterIssuer, as Argo CD
//! 3.6.2's scripts.

use super::lua::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "cert-manager.io", kind: "Certificate", check: certificate },
    Rule { group: "cert-manager.io", kind: "CertificateRequest", check: certificate_request },
    Rule { group: "cert-manager.io", kind: "Issuer", check: issuer },
    Rule { group: "cert-manager.io", kind: "ClusterIssuer", check: cluster_issuer },
];

/// The first `Ready` condition that is `True` (Healthy) or `False` (Degraded), with its
/// message.
fn ready(conditions: Lv<'_>) -> Result<Option<Hs>, Fault> {
    for c in conditions.items()? {
        if c.get("type")?.is("Ready") {
            let status = c.get("status")?;
            if status.is("False") {
                return Ok(Some(Hs::new("Degraded", c.get("message")?)));
            }
            if status.is("True") {
                return Ok(Some(Hs::new("Healthy", c.get("message")?)));
            }
        }
    }
    Ok(None)
}

/// An `Issuing` condition that is `True` first (Progressing), then Ready; else Progressing,
/// `Waiting for certificate`.
fn certificate(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Issuing") && c.get("status")?.is("True") {
                return Ok(Hs::new("Progressing", c.get("message")?));
            }
        }
        if let Some(hs) = ready(conditions)? {
            return Ok(hs);
        }
    }
    Ok(Hs::new("Progressing", "Waiting for certificate"))
}

/// A `True` Denied or InvalidRequest condition is Degraded; then the first Ready condition:
/// `True` Healthy, reason Pending Progressing, else Degraded; else Progressing, `Waiting for
/// certificate request`.
fn certificate_request(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            let kind = c.get("type")?;
            if (kind.is("Denied") || kind.is("InvalidRequest")) && c.get("status")?.is("True") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
        if let Some(c) = conditions.find_type("Ready")? {
            let health = if c.get("status")?.is("True") {
                "Healthy"
            } else if c.get("reason")?.is("Pending") {
                "Progressing"
            } else {
                "Degraded"
            };
            return Ok(Hs::new(health, c.get("message")?));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for certificate request"))
}

/// Ready; else Progressing, `Initializing issuer`.
fn issuer(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Initializing issuer")
}

/// Ready; else Progressing, `Initializing ClusterIssuer`.
fn cluster_issuer(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Initializing ClusterIssuer")
}

fn ready_or(env: &Env<'_>, waiting: &str) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(hs) = ready(conditions)?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Progressing", waiting))
}
