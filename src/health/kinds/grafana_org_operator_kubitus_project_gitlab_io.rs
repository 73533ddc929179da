//! `grafana-org-operator.kubitus-project.gitlab.io`: every kind of the group (the wildcard
//! folder `_`), as Argo CD 3.6.2's script.

use super::shapes_b::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "grafana-org-operator.kubitus-project.gitlab.io", kind: "_", check: any_kind }];

/// The first `Ready` condition, with its message: `False` Degraded, `True` Healthy, else
/// Progressing; without one, Progressing, `Waiting ...`.
fn any_kind(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(c) = conditions.find_type("Ready")?
    {
        let s = c.get("status")?;
        let health = if s.is("False") {
            "Degraded"
        } else if s.is("True") {
            "Healthy"
        } else {
            "Progressing"
        };
        return Ok(Hs::new(health, c.get("message")?));
    }
    Ok(Hs::new("Progressing", "Waiting ..."))
}
