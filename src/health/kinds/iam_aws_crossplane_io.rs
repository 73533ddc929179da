//! `iam.aws.crossplane.io`: Policy, Role and RolePolicyAttachment, as Argo CD 3.6.2's
//! scripts (the older provider shape of the last Ready and Synced conditions,
//! [`crossplane_ready_synced`]).

use super::shapes_d::crossplane_ready_synced;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "iam.aws.crossplane.io", kind: "Policy", check: policy },
    Rule { group: "iam.aws.crossplane.io", kind: "Role", check: role },
    Rule { group: "iam.aws.crossplane.io", kind: "RolePolicyAttachment", check: attachment },
];

/// [`crossplane_ready_synced`] for a `Policy`.
fn policy(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "Policy")
}

/// [`crossplane_ready_synced`] for a `Role`.
fn role(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "Role")
}

/// [`crossplane_ready_synced`] for a `RolePolicyAttachment`.
fn attachment(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "RolePolicyAttachment")
}
