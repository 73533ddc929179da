//! `snapshot.storage.k8s.io` (CSI snapshots): VolumeSnapshot and VolumeSnapshotContent, as
//! Argo CD 3.6.2's scripts (one rule: the scripts are the same).

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", check: snapshot },
    Rule { group: "snapshot.storage.k8s.io", kind: "VolumeSnapshotContent", check: snapshot },
];

/// Ready to use is Healthy; an error Degraded (its message); else Progressing.
fn snapshot(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() && status.get("readyToUse")?.truthy() {
        return Ok(Hs::new("Healthy", "Ready to use"));
    }
    if !status.is_nil() && !status.get("error")?.is_nil() {
        return Ok(Hs::new("Degraded", status.get("error")?.get("message")?));
    }
    Ok(Hs::new("Progressing", "Waiting for status"))
}
