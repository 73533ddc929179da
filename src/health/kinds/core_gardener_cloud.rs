//! `core.gardener.cloud` (Gardener): Shoot, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "core.gardener.cloud", kind: "Shoot", check: shoot }];

/// The `shoot.gardener.cloud/status` label: healthy, progressing, unhealthy, unknown; else
/// Progressing, `Update in progress`.
fn shoot(env: &Env<'_>) -> Result<Hs, Fault> {
    let labels = env.obj.path(&["metadata", "labels"])?;
    let label = if labels.is_nil() { labels } else { labels.get("shoot.gardener.cloud/status")? };
    let (health, message) = match label.str() {
        Some("healthy") => ("Healthy", "Component state: Healthy"),
        Some("progressing") => ("Progressing", "Component state: Update in progress"),
        Some("unhealthy") => ("Degraded", "Component state: Unhealthy"),
        Some("unknown") => ("Unknown", "Component state: Unknown"),
        _ => ("Progressing", "Update in progress"),
    };
    Ok(Hs::new(health, message))
}
