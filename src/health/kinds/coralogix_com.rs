//! `coralogix.com` (the Coralogix operator): Alert and RecordingRuleGroupSet, as Argo CD
//! 3.6.2's scripts.

use super::shapes_a::{On, Say, conditions_or};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "coralogix.com", kind: "Alert", check: remote_synced },
    Rule { group: "coralogix.com", kind: "RecordingRuleGroupSet", check: remote_synced },
];

const ROWS: &[On] = &[
    On::new("RemoteSynced", "True", "Healthy", Say::Text("Resource is ready")),
    On::new("RemoteSynced", "False", "Degraded", Say::Message),
];

/// RemoteSynced `True` is Healthy, `False` Degraded; else Progressing.
fn remote_synced(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, ROWS, "Waiting for status to be updated")
}
