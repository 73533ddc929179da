//! `s3.aws.crossplane.io`: Bucket, as Argo CD 3.6.2's scripts (the Ready
//! and Synced conditions, [`crossplane_ready_synced`]).

use super::shapes_d::crossplane_ready_synced;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "s3.aws.crossplane.io", kind: "Bucket", check: bucket }];

/// Ready and Synced, waiting for the Bucket.
fn bucket(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "Bucket")
}
