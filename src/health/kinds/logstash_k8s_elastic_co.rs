//! `logstash.k8s.elastic.co`: Logstash, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "logstash.k8s.elastic.co", kind: "Logstash", check: logstash }];

/// `status.health`: green Healthy, yellow Progressing, red Degraded; else waiting.
fn logstash(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let health = status.get("health")?;
        for (h, s, m) in [
            ("green", "Healthy", "Logstash status is Green"),
            ("yellow", "Progressing", "Logstash status is Yellow"),
            ("red", "Degraded", "Logstash status is Red"),
        ] {
            if health.is(h) {
                return Ok(Hs::new(s, m));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Logstash"))
}
