//! `image.toolkit.fluxcd.io`: ImagePolicy, ImageRepository and ImageUpdateAutomation, as Argo
//! CD 3.6.2's scripts.

use super::shapes_b::FluxCount;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "image.toolkit.fluxcd.io", kind: "ImagePolicy", check: image_policy },
    Rule { group: "image.toolkit.fluxcd.io", kind: "ImageRepository", check: image_repository },
    Rule {
        group: "image.toolkit.fluxcd.io",
        kind: "ImageUpdateAutomation",
        check: image_update_automation,
    },
];

/// [`FluxCount`], never suspended: `Ready` `False` and `Reconciling` `True` for a new
/// generation, while accessing the repository or applying the policy count as progressing.
fn image_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    FluxCount {
        suspend: false,
        ready_progressing: "False",
        reconciling_reasons: Some(&["NewGeneration", "AccessingRepository", "ApplyingPolicy"]),
        released: false,
        succeeded: 1,
    }
    .check(env)
}

/// [`FluxCount`]: suspended first; `Ready` `False` and `Reconciling` `True` for a new
/// generation or while scanning count as progressing.
fn image_repository(env: &Env<'_>) -> Result<Hs, Fault> {
    FluxCount {
        suspend: true,
        ready_progressing: "False",
        reconciling_reasons: Some(&["NewGeneration", "Scanning"]),
        released: false,
        succeeded: 1,
    }
    .check(env)
}

/// [`FluxCount`]: suspended first; `Ready` `Unknown` and any `Reconciling` `True` count as
/// progressing.
fn image_update_automation(env: &Env<'_>) -> Result<Hs, Fault> {
    FluxCount {
        suspend: true,
        ready_progressing: "Unknown",
        reconciling_reasons: None,
        released: false,
        succeeded: 1,
    }
    .check(env)
}
