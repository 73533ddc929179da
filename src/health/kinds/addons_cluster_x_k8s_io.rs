//! `addons.cluster.x-k8s.io` (Cluster API): ClusterResourceSet, as Argo CD 3.6.2's scripts.

use super::shapes_a::{On, Say, conditions_or};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "addons.cluster.x-k8s.io",
    kind: "ClusterResourceSet",
    check: cluster_resource_set,
}];

const ROWS: &[On] = &[
    On::new("ResourcesApplied", "True", "Healthy", Say::Text("cluster resource set is applied")),
    On::new("ResourcesApplied", "False", "Degraded", Say::Message),
];

/// ResourcesApplied `True` is Healthy, `False` Degraded; else Progressing.
fn cluster_resource_set(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, ROWS, "Initializing cluster resource set")
}
