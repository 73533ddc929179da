//! `external-secrets.io`: ExternalSecret, ClusterExternalSecret, SecretStore,
//! ClusterSecretStore and PushSecret, as Argo CD 3.6.2's scripts.

use super::shapes_b::{ready_or, status_conditions};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule {
        group: "external-secrets.io",
        kind: "ClusterExternalSecret",
        check: cluster_external_secret,
    },
    Rule { group: "external-secrets.io", kind: "ClusterSecretStore", check: cluster_secret_store },
    Rule { group: "external-secrets.io", kind: "ExternalSecret", check: external_secret },
    Rule { group: "external-secrets.io", kind: "PushSecret", check: push_secret },
    Rule { group: "external-secrets.io", kind: "SecretStore", check: secret_store },
];

/// The last condition (new ones are appended): `Ready` `True` Healthy, `PartiallyReady` or
/// `NotReady` `True` Degraded, with its message; else Progressing.
fn cluster_external_secret(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        let last = conditions.at(conditions.len()?)?;
        let t = last.get("type")?;
        let is_true = |last: super::Lv<'_>| Ok::<_, Fault>(last.get("status")?.is("True"));
        if t.is("Ready") && is_true(last)? {
            return Ok(Hs::new("Healthy", last.get("message")?));
        }
        if (last.get("type")?.is("PartiallyReady") || last.get("type")?.is("NotReady"))
            && is_true(last)?
        {
            return Ok(Hs::new("Degraded", last.get("message")?));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for ClusterExternalSecret"))
}

/// [`ready_or`]: the first decided `Ready` condition; else waiting.
fn cluster_secret_store(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Waiting for ClusterSecretStore")
}

/// [`ready_or`]: the first decided `Ready` condition; else waiting.
fn external_secret(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Waiting for ExternalSecret")
}

/// [`ready_or`]: the first decided `Ready` condition; else waiting.
fn push_secret(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Waiting for PushSecret")
}

/// [`ready_or`]: the first decided `Ready` condition; else waiting.
fn secret_store(env: &Env<'_>) -> Result<Hs, Fault> {
    ready_or(env, "Waiting for SecretStore")
}
