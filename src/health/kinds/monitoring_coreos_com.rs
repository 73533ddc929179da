//! `monitoring.coreos.com`: Alertmanager, Prometheus and ThanosRuler, as Argo CD 3.6.2's
//! scripts (the same for the three).

use super::shapes_c::{or, status_conditions};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "monitoring.coreos.com", kind: "Alertmanager", check: available },
    Rule { group: "monitoring.coreos.com", kind: "Prometheus", check: available },
    Rule { group: "monitoring.coreos.com", kind: "ThanosRuler", check: available },
];

/// The last `Available` condition decides: `True` Healthy; else Progressing when its reason
/// is `SomePodsNotReady`, Degraded otherwise, with its message (or reason). None: waiting.
fn available(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for initialization");
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Available") && !c.get("status")?.is("True") {
                let status = if c.get("reason")?.is("SomePodsNotReady") {
                    "Progressing"
                } else {
                    "Degraded"
                };
                hs = Hs::new(status, or(c.get("message")?, c.get("reason")?));
            }
            if c.get("type")?.is("Available") && c.get("status")?.is("True") {
                hs = Hs::new("Healthy", "All instances are available");
            }
        }
    }
    Ok(hs)
}
