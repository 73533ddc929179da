//! `kafka.strimzi.io`: Kafka, KafkaBridge, KafkaConnect, KafkaConnector, KafkaTopic and
//! KafkaUser, as Argo CD 3.6.2's scripts.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "kafka.strimzi.io", kind: "Kafka", check: kafka },
    Rule { group: "kafka.strimzi.io", kind: "KafkaBridge", check: kafka_bridge },
    Rule { group: "kafka.strimzi.io", kind: "KafkaConnect", check: kafka_connect },
    Rule { group: "kafka.strimzi.io", kind: "KafkaConnector", check: kafka_connector },
    Rule { group: "kafka.strimzi.io", kind: "KafkaTopic", check: kafka_topic },
    Rule { group: "kafka.strimzi.io", kind: "KafkaUser", check: kafka_user },
];

/// The first condition that is `NotReady` and `True` (Degraded, with its message; when
/// `creating_waits`, not while its reason is `Creating`) or `Ready` and `True` (Healthy, no
/// message); else Progressing, `waiting`.
fn strimzi(env: &Env<'_>, waiting: &str, creating_waits: bool) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env)? {
        for c in conditions.items()? {
            if c.get("type")?.is("NotReady")
                && c.get("status")?.is("True")
                && !(creating_waits && c.get("reason")?.is("Creating"))
            {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
            if c.get("type")?.is("Ready") && c.get("status")?.is("True") {
                return Ok(Hs::new("Healthy", ""));
            }
        }
    }
    Ok(Hs::new("Progressing", waiting))
}

/// NotReady (unless Creating) or Ready; else `Waiting for Kafka Cluster`.
fn kafka(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for Kafka Cluster", true)
}

/// NotReady or Ready; else `Waiting for KafkaBridge`.
fn kafka_bridge(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for KafkaBridge", false)
}

/// NotReady or Ready; else `Waiting for Kafka Connect`.
fn kafka_connect(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for Kafka Connect", false)
}

/// NotReady or Ready; else `Waiting for KafkaConnector`.
fn kafka_connector(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for KafkaConnector", false)
}

/// NotReady or Ready; else `Waiting for Kafka Topic`.
fn kafka_topic(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for Kafka Topic", false)
}

/// NotReady or Ready; else `Waiting for Kafka User`.
fn kafka_user(env: &Env<'_>) -> Result<Hs, Fault> {
    strimzi(env, "Waiting for Kafka User", false)
}
