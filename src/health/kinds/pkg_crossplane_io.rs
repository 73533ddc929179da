//! `pkg.crossplane.io`: Provider, as Argo CD 3.6.2's script.

use super::shapes_c::{or, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "pkg.crossplane.io", kind: "Provider", check: provider }];

/// The last `Installed` and `Healthy` conditions: both `True` is Healthy, either seen but not
/// both `True` Degraded, with their reasons; neither seen, Progressing.
fn provider(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        let (mut installed, mut healthy) = (false, false);
        let (mut installed_reason, mut healthy_reason) = (Lv::Nil, Lv::Nil);
        for c in conditions.items()? {
            let t = c.get("type")?;
            if t.is("Installed") {
                installed = c.get("status")?.is("True");
                installed_reason = c.get("reason")?;
            } else if t.is("Healthy") {
                healthy = c.get("status")?.is("True");
                healthy_reason = c.get("reason")?;
            }
        }
        if !installed_reason.is_nil() || !healthy_reason.is_nil() {
            let status = if installed && healthy { "Healthy" } else { "Degraded" };
            if !installed_reason.is_nil() && !healthy_reason.is_nil() {
                let message = format!("{} {}", installed_reason.text()?, healthy_reason.text()?);
                return Ok(Hs::new(status, message));
            }
            return Ok(Hs::new(status, or(installed_reason, healthy_reason)));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for provider to be installed"))
}
