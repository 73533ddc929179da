//! `_.upbound.io` (every Upbound provider kind), as Argo CD 3.6.2's scripts.

use super::any_crossplane_io::upbound_like;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "_.upbound.io", kind: "_", check: upbound }];

/// The kinds that never get conditions: Healthy without them.
const NO_CONDITIONS: &[&str] = &[
    "ProviderConfig",
    "ProviderConfigUsage",
    "StoreConfig",
    "ClusterProviderConfig",
    "ClusterProviderConfigUsage",
];

/// Crossplane's shape with Ready as the one healthy type: a `False` LastAsyncOperation or
/// Synced is Degraded, a `True` Ready Healthy; else Progressing, `Provisioning ...`.
fn upbound(env: &Env<'_>) -> Result<Hs, Fault> {
    upbound_like(env.obj, NO_CONDITIONS, &["Ready"], false)
}
