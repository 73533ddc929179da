//! `kafka.banzaicloud.io`: KafkaCluster, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "kafka.banzaicloud.io", kind: "KafkaCluster", check: kafka_cluster }];

/// Progressing while rolling upgrading; with brokers, Degraded unless every broker's
/// configuration is in sync and its graceful scaling succeeded, Healthy when the cruise
/// control topic is ready and the cluster running, Progressing while reconciling; else
/// Progressing, waiting.
fn kafka_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let state = status.get("state")?;
        if state.is("ClusterRollingUpgrading") {
            return Ok(Hs::new("Progressing", "Kafka Cluster is Rolling Upgrading."));
        }
        let brokers = status.get("brokersState")?;
        if !brokers.is_nil() {
            let mut all_healthy = true;
            for (_, broker) in brokers.pairs()? {
                if broker.get("configurationState")?.is("ConfigInSync") {
                    let cc = broker.path(&["gracefulActionState", "cruiseControlState"])?;
                    if cc.is("GracefulUpscaleSucceeded") || cc.is("GracefulDownscaleSucceeded") {
                        continue;
                    }
                }
                all_healthy = false;
            }
            if !all_healthy {
                return Ok(Hs::new(
                    "Degraded",
                    "Broker Config is out of Sync or CruiseControlState is not Ready",
                ));
            }
            let topic = status.get("cruiseControlTopicStatus")?;
            if topic.is("CruiseControlTopicReady") && state.is("ClusterRunning") {
                return Ok(Hs::new(
                    "Healthy",
                    "Kafka Brokers, CruiseControl and cluster are in Healthy State.",
                ));
            }
            if (topic.is("CruiseControlTopicNotReady") || topic.is_nil())
                && state.is("ClusterReconciling")
            {
                return Ok(Hs::new("Progressing", "Kafka Cluster is Reconciling."));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for KafkaCluster"))
}
