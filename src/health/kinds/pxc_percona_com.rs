//! `pxc.percona.com`: PerconaXtraDBCluster, as Argo CD 3.6.2's script.

use super::shapes_d::{cat, concat_table};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "pxc.percona.com",
    kind: "PerconaXtraDBCluster",
    check: percona_xtradb_cluster,
}];

/// The state: `initializing` Progressing and `ready` Healthy (with the ready nodes),
/// `paused` Unknown, `stopping` and `error` Degraded; any other Unknown.
fn percona_xtradb_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let state = status.get("state")?;
        let nodes = || -> Result<String, Fault> {
            cat(&[
                status.get("ready")?,
                Lv::Str("/"),
                status.get("size")?,
                Lv::Str(" node(s) are ready"),
            ])
        };
        if state.is("initializing") {
            return Ok(Hs::new("Progressing", nodes()?));
        }
        if state.is("ready") {
            return Ok(Hs::new("Healthy", nodes()?));
        }
        if state.is("paused") {
            return Ok(Hs::new("Unknown", "Cluster is paused"));
        }
        if state.is("stopping") {
            return Ok(Hs::new("Degraded", format!("Cluster is stopping ({})", nodes()?)));
        }
        if state.is("error") {
            let m = concat_table(status.get("message")?, ", ")?;
            return Ok(Hs::new("Degraded", format!("Cluster is on error: {m}")));
        }
    }
    Ok(Hs::new(
        "Unknown",
        "Cluster status is unknown. Ensure your ArgoCD is current and then check for/file a bug report: https://github.com/argoproj/argo-cd/issues",
    ))
}
