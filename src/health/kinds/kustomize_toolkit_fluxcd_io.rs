//! `kustomize.toolkit.fluxcd.io`: Kustomization, as Argo CD 3.6.2's script.

use super::shapes_c::flux_counts;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "kustomize.toolkit.fluxcd.io", kind: "Kustomization", check: kustomization }];

/// Suspended; else Flux's count, `Ready` `Unknown` and `Reconciling` `True` both pending
/// (Progressing), one `Ready` `True` Healthy, else Degraded.
fn kustomization(env: &Env<'_>) -> Result<Hs, Fault> {
    flux_counts(env, "Unknown", "Progressing")
}
