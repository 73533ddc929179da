//! `cloudfront.aws.crossplane.io` (Crossplane's AWS provider): Distribution, as Argo CD
//! 3.6.2's script (the older provider shape of the last Ready and Synced conditions,
//! [`crossplane_ready_synced`]).

use super::shapes_d::crossplane_ready_synced;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "cloudfront.aws.crossplane.io", kind: "Distribution", check: distribution }];

/// [`crossplane_ready_synced`] for a `distribution`.
fn distribution(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "distribution")
}
