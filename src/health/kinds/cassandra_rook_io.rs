//! `cassandra.rook.io` (Rook's Cassandra operator): Cluster, as Argo CD 3.6.2's scripts.

use super::shapes_a::eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "cassandra.rook.io", kind: "Cluster", check: cluster }];

/// Healthy (no message) when no rack has fewer ready members than members; else Progressing.
fn cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = || Hs::new("Progressing", "Waiting for Cassandra Cluster");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    let racks = status.get("racks")?;
    if racks.is_nil() {
        return Ok(waiting());
    }
    for (_, rack) in racks.pairs()? {
        let members = rack.get("members")?;
        if members.is_nil() {
            continue;
        }
        let ready = rack.get("readyMembers")?;
        if !ready.is_nil() && !eq(members, ready) {
            return Ok(waiting());
        }
    }
    Ok(Hs::status("Healthy"))
}
