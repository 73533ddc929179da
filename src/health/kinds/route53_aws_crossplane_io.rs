//! `route53.aws.crossplane.io`: ResourceRecordSet, as Argo CD 3.6.2's scripts (the Ready
//! and Synced conditions, [`crossplane_ready_synced`]).

use super::shapes_d::crossplane_ready_synced;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "route53.aws.crossplane.io",
    kind: "ResourceRecordSet",
    check: resource_record_set,
}];

/// Ready and Synced, waiting for the ResourceRecordSet.
fn resource_record_set(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "resourcrecordset")
}
