//! `stacks.crossplane.io` (Crossplane stacks): ClusterStackInstall, as Argo CD 3.6.2's
//! script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "stacks.crossplane.io",
    kind: "ClusterStackInstall",
    check: cluster_stack_install,
}];

/// A `Ready` condition `True` is Healthy; else Progressing, with the reason of the last
/// `Ready` condition read.
fn cluster_stack_install(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for stack to be installed");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(hs);
    }
    let conditioned = status.get("conditionedStatus")?;
    if conditioned.is_nil() || conditioned.get("conditions")?.is_nil() {
        return Ok(hs);
    }
    for c in conditioned.get("conditions")?.items()? {
        if c.get("type")?.is("Ready") {
            hs.message = c.get("reason")?.into();
            if c.get("status")?.is("True") {
                hs.status = "Healthy".into();
                return Ok(hs);
            }
        }
    }
    Ok(hs)
}
