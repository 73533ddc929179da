//! `camel.apache.org` (Camel K): Integration, as Argo CD 3.6.2's scripts.

use super::shapes_a::{READY, conditions_or};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "camel.apache.org", kind: "Integration", check: integration }];

/// Ready `False` is Degraded, `True` Healthy; else Progressing, `Waiting for Integration`.
fn integration(env: &Env<'_>) -> Result<Hs, Fault> {
    conditions_or(env.obj, READY, "Waiting for Integration")
}
