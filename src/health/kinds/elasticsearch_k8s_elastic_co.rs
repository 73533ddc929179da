//! `elasticsearch.k8s.elastic.co`: Elasticsearch, as Argo CD 3.6.2's script.

use super::shapes_b::{arith, cat, eq, lt};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "elasticsearch.k8s.elastic.co", kind: "Elasticsearch", check: elasticsearch }];

const UNKNOWN: &str = "Elasticsearch Cluster status is unknown. Ensure your ArgoCD is current and then check for/file a bug report: https://github.com/argoproj/argo-cd/issues";

/// With `status.availableNodes` set: Progressing while fewer nodes are available than the node
/// sets count; when as many, the phase (Ready with the health colour, ApplyingChanges,
/// MigratingData, Invalid). Anything else is Unknown.
fn elasticsearch(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Unknown", UNKNOWN));
    }
    let available = status.get("availableNodes")?;
    if available.is_nil() {
        return Ok(Hs::new("Unknown", UNKNOWN));
    }
    let mut sum = 0.0;
    for (_, node) in env.obj.path(&["spec", "nodeSets"])?.pairs()? {
        sum += arith(node.get("count")?)?;
    }
    let sum = Lv::Num(sum);
    if lt(available, sum)? {
        let message = cat(&[
            Lv::Str("The desired amount of availableNodes is "),
            sum,
            Lv::Str(" but the current amount is "),
            available,
        ])?;
        return Ok(Hs::new("Progressing", message));
    }
    if eq(available, sum) {
        let phase = status.get("phase")?;
        if !phase.is_nil() && !status.get("health")?.is_nil() {
            let hs = if phase.is("Ready") {
                let health = status.get("health")?;
                if health.is("green") {
                    Some(Hs::new("Healthy", "Elasticsearch Cluster status is Green"))
                } else if health.is("yellow") {
                    Some(Hs::new(
                        "Progressing",
                        "Elasticsearch Cluster status is Yellow. Check the status of indices, replicas and shards",
                    ))
                } else if health.is("red") {
                    Some(Hs::new(
                        "Degraded",
                        "Elasticsearch Cluster status is Red. Check the status of indices, replicas and shards",
                    ))
                } else {
                    None
                }
            } else if phase.is("ApplyingChanges") {
                Some(Hs::new("Progressing", "Elasticsearch phase is ApplyingChanges"))
            } else if phase.is("MigratingData") {
                Some(Hs::new("Progressing", "Elasticsearch phase is MigratingData"))
            } else if phase.is("Invalid") {
                Some(Hs::new("Degraded", "Elasticsearch phase is Invalid"))
            } else {
                None
            };
            if let Some(hs) = hs {
                return Ok(hs);
            }
        }
    }
    Ok(Hs::new("Unknown", UNKNOWN))
}
