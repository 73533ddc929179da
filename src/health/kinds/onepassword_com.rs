//! `onepassword.com`: OnePasswordItem, as Argo CD 3.6.2's script.

use super::shapes_c::{ready_condition, status_conditions};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "onepassword.com", kind: "OnePasswordItem", check: item }];

/// The first decided Ready condition, with its message; else Progressing.
fn item(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(hs) = ready_condition(conditions, None)?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Progressing", "Waiting for controller to report status"))
}
