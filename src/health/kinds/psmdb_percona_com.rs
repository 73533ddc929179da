//! `psmdb.percona.com`: PerconaServerMongoDB, as Argo CD 3.6.2's script.

use super::shapes_d::cat;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "psmdb.percona.com",
    kind: "PerconaServerMongoDB",
    check: percona_server_mongodb,
}];

/// The health of each state.
const STATES: &[(&str, &str)] = &[
    ("initializing", "Progressing"),
    ("ready", "Healthy"),
    ("error", "Degraded"),
    ("stopping", "Progressing"),
    ("paused", "Suspended"),
];

/// The state's health (Unknown when not listed) with `<ready>/<size> node(s) are ready`.
fn percona_server_mongodb(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Unknown", "Cluster status is unknown"));
    }
    let state = status.get("state")?;
    let code = state
        .str()
        .and_then(|s| STATES.iter().find(|(k, _)| *k == s))
        .map_or("Unknown", |(_, v)| v);
    let m = cat(&[
        status.get("ready")?,
        Lv::Str("/"),
        status.get("size")?,
        Lv::Str(" node(s) are ready"),
    ])?;
    Ok(Hs::new(code, m))
}
