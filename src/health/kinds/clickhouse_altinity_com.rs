//! `clickhouse.altinity.com` (Altinity's ClickHouse operator): ClickHouseInstallation, as
//! Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "clickhouse.altinity.com",
    kind: "ClickHouseInstallation",
    check: installation,
}];

/// `status.status`: Completed Healthy, InProgress Progressing, any other Degraded; none yet
/// Progressing.
fn installation(env: &Env<'_>) -> Result<Hs, Fault> {
    installation_status(env.obj, "ClickHouse")
}

/// The installation shape, shared with ClickHouseKeeperInstallation: `what` names the
/// product in the messages.
pub(super) fn installation_status(obj: Lv<'_>, what: &str) -> Result<Hs, Fault> {
    let status = obj.get("status")?;
    let state = if status.is_nil() { status } else { status.get("status")? };
    Ok(match state {
        Lv::Nil => Hs::new("Progressing", format!("{what} status not yet available")),
        s if s.is("Completed") => {
            Hs::new("Healthy", format!("{what} installation completed successfully"))
        }
        s if s.is("InProgress") => {
            Hs::new("Progressing", format!("{what} installation in progress"))
        }
        s => Hs::new("Degraded", format!("{what} status: {}", s.text()?)),
    })
}
