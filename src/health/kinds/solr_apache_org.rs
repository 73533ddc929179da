//! `solr.apache.org`: SolrCloud, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "solr.apache.org", kind: "SolrCloud", check: solr_cloud }];

/// No nodes yet is Progressing; any node not ready Progressing; else Healthy.
fn solr_cloud(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("solrNodes")?.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for solr to exist"));
    }
    for node in status.get("solrNodes")?.items()? {
        if !node.get("ready")?.truthy() {
            return Ok(Hs::new("Progressing", "Not all replicas are ready"));
        }
    }
    Ok(Hs::new("Healthy", "Solr is ready"))
}
