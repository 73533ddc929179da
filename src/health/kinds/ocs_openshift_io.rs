//! `ocs.openshift.io`: StorageCluster, as Argo CD 3.6.2's script.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "ocs.openshift.io", kind: "StorageCluster", check: storage_cluster }];

/// A `True` condition of type Degraded, else Progressing, else Available (Healthy), with the
/// message of the last such condition; else Unknown.
fn storage_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut found: [Option<Lv<'_>>; 3] = [None, None, None];
    const TYPES: [(&str, &str); 3] =
        [("Degraded", "Degraded"), ("Progressing", "Progressing"), ("Available", "Healthy")];
    if let Some(conditions) = status_conditions(env.obj)? {
        for (_, c) in conditions.pairs()? {
            // The type read once (the script reads it for each of the three).
            let ty = c.get("type")?;
            for (i, (t, _)) in TYPES.iter().enumerate() {
                if ty.is(t) && c.get("status")?.is("True") {
                    found[i] = Some(c.get("message")?);
                    break;
                }
            }
        }
    }
    for (i, (_, status)) in TYPES.iter().enumerate() {
        if let Some(message) = found[i] {
            return Ok(Hs::new(*status, message));
        }
    }
    Ok(Hs::new("Unknown", "StorageCluster is in an unknown state."))
}
