//! `kafka.strimzi.io`: Kafka, KafkaBridge, KafkaConnect, KafkaConnector, KafkaTopic and
//! KafkaUser, as Argo CD 3.6.2's scripts.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

/// The kinds (with their waiting message) read by [`strimzi`], by the index its rule passes.
const KINDS: [(&str, &str); 6] = [
    ("Kafka", "Waiting for Kafka Cluster"),
    ("KafkaBridge", "Waiting for KafkaBridge"),
    ("KafkaConnect", "Waiting for Kafka Connect"),
    ("KafkaConnector", "Waiting for KafkaConnector"),
    ("KafkaTopic", "Waiting for Kafka Topic"),
    ("KafkaUser", "Waiting for Kafka User"),
];

pub(super) const RULES: &[Rule] = &[
    Rule { group: "kafka.strimzi.io", kind: KINDS[0].0, check: strimzi::<0> },
    Rule { group: "kafka.strimzi.io", kind: KINDS[1].0, check: strimzi::<1> },
    Rule { group: "kafka.strimzi.io", kind: KINDS[2].0, check: strimzi::<2> },
    Rule { group: "kafka.strimzi.io", kind: KINDS[3].0, check: strimzi::<3> },
    Rule { group: "kafka.strimzi.io", kind: KINDS[4].0, check: strimzi::<4> },
    Rule { group: "kafka.strimzi.io", kind: KINDS[5].0, check: strimzi::<5> },
];

/// The first condition that is `NotReady` and `True` (Degraded, with its message; for Kafka
/// itself, not while its reason is `Creating`) or `Ready` and `True` (Healthy, no message);
/// else Progressing, waiting.
fn strimzi<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let (kind, waiting) = KINDS[I];
    let creating_waits = kind == "Kafka";
    if let Some(conditions) = status_conditions(env.obj)? {
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
