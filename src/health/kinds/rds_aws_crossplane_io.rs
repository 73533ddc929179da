//! `rds.aws.crossplane.io`: DBCluster and DBInstance, as Argo CD 3.6.2's scripts (the Ready
//! and Synced conditions, [`crossplane_ready_synced`]).

use super::shapes_d::crossplane_ready_synced;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "rds.aws.crossplane.io", kind: "DBCluster", check: dbcluster },
    Rule { group: "rds.aws.crossplane.io", kind: "DBInstance", check: dbinstance },
];

/// Ready and Synced, waiting for the DBCluster.
fn dbcluster(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "DBCluster")
}

/// Ready and Synced, waiting for the DBInstance.
fn dbinstance(env: &Env<'_>) -> Result<Hs, Fault> {
    crossplane_ready_synced(env, "DBInstance")
}
