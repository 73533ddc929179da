//! `certmanager.k8s.io` (cert-manager before v0.11): Certificate and Issuer, as Argo CD
//! 3.6.2's scripts.

use super::shapes_a::{READY, conditions_or};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "certmanager.k8s.io", kind: "Certificate", check: certificate },
    Rule { group: "certmanager.k8s.io", kind: "Issuer", check: issuer },
];

/// Ready `False` is Degraded, `True` Healthy; else Progressing, `Waiting for certificate`.
fn certificate(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, READY, "Waiting for certificate")
}

/// Ready `False` is Degraded, `True` Healthy; else Progressing, `Initializing issuer`.
fn issuer(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, READY, "Initializing issuer")
}
