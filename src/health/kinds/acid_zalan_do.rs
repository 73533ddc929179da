//! `acid.zalan.do` (Zalando's Postgres operator): postgresql, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "acid.zalan.do", kind: "postgresql", check: postgresql }];

/// `status.PostgresClusterStatus`: Running is Healthy, Creating and Updating Progressing, any
/// other value Degraded (the value is the message); none yet is Progressing.
fn postgresql(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    let phase = if status.is_nil() { status } else { status.get("PostgresClusterStatus")? };
    if phase.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for postgres cluster status..."));
    }
    let health = match phase.str() {
        Some("Running") => "Healthy",
        Some("Creating" | "Updating") => "Progressing",
        _ => "Degraded",
    };
    Ok(Hs::new(health, phase))
}
