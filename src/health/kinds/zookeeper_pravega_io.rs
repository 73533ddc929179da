//! `zookeeper.pravega.io`: ZookeeperCluster, as Argo CD 3.6.2's script.

use super::shapes_d::lua_eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "zookeeper.pravega.io", kind: "ZookeeperCluster", check: zookeeper_cluster }];

/// Ready replicas (not the number 0) equal to the replicas is Healthy; else Progressing.
fn zookeeper_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let ready = status.get("readyReplicas")?;
        if !ready.is_num(0.0) && lua_eq(ready, status.get("replicas")?) {
            return Ok(Hs::new("Healthy", "All ZK Nodes have joined the ensemble"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for ZK Nodes to join the ensemble"))
}
