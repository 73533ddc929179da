//! `_.services.k8s.aws` (AWS Controllers for Kubernetes, every kind), as Argo CD 3.6.2's
//! scripts.

use super::shapes_a::{On, Say, conditions_or};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "_.services.k8s.aws", kind: "_", check: ack }];

const ROWS: &[On] = &[
    On::new("ACK.Terminal", "True", "Degraded", Say::Message),
    On::new("Ready", "False", "Progressing", Say::Message),
    On::new("Ready", "True", "Healthy", Say::Text("")),
];

/// A `True` ACK.Terminal is Degraded; Ready `False` Progressing, `True` Healthy; else
/// Progressing, `Waiting for resource to be ready`.
fn ack(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, ROWS, "Waiting for resource to be ready")
}
