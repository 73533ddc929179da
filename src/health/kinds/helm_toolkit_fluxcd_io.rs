//! `helm.toolkit.fluxcd.io`: HelmRelease, as Argo CD 3.6.2's script.

use super::shapes_b::FluxCount;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "helm.toolkit.fluxcd.io", kind: "HelmRelease", check: helm_release }];

/// [`FluxCount`]: suspended first; `Ready` `Unknown` and any `Reconciling` `True` count as
/// progressing; `Ready`, `Released` and `TestSuccess` `True` as succeeded, two for Healthy.
fn helm_release(env: &Env<'_>) -> Result<Hs, Fault> {
    FluxCount {
        suspend: true,
        ready_progressing: "Unknown",
        reconciling_reasons: None,
        released: true,
        succeeded: 2,
    }
    .check(env)
}
