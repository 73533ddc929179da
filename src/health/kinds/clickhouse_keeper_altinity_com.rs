//! `clickhouse-keeper.altinity.com` (Altinity's ClickHouse operator):
//! ClickHouseKeeperInstallation, as Argo CD 3.6.2's scripts.

use super::clickhouse_altinity_com::installation_status;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "clickhouse-keeper.altinity.com",
    kind: "ClickHouseKeeperInstallation",
    check: keeper_installation,
}];

/// `status.status`: Completed Healthy, InProgress Progressing, any other Degraded; none yet
/// Progressing.
fn keeper_installation(env: &Env<'_>) -> Result<Hs, Fault> {
    installation_status(env.obj, "ClickHouseKeeper")
}
