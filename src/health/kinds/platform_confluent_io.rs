//! `platform.confluent.io`: Connect, Connector, ControlCenter, Kafka, KsqlDB, SchemaRegistry
//! and Zookeeper, as Argo CD 3.6.2's scripts.

use super::shapes_c::lua_lt;
use super::{Env, Fault, Hs, Lv, Rule};

/// The kinds read by [`phase`], by the index its rule passes.
const PHASED: [&str; 6] =
    ["Connect", "ControlCenter", "Kafka", "KsqlDB", "SchemaRegistry", "Zookeeper"];

pub(super) const RULES: &[Rule] = &[
    Rule { group: "platform.confluent.io", kind: PHASED[0], check: phase::<0> },
    Rule { group: "platform.confluent.io", kind: "Connector", check: connector },
    Rule { group: "platform.confluent.io", kind: PHASED[1], check: phase::<1> },
    Rule { group: "platform.confluent.io", kind: PHASED[2], check: phase::<2> },
    Rule { group: "platform.confluent.io", kind: PHASED[3], check: phase::<3> },
    Rule { group: "platform.confluent.io", kind: PHASED[4], check: phase::<4> },
    Rule { group: "platform.confluent.io", kind: PHASED[5], check: phase::<5> },
];

/// `status.phase`: `RUNNING` Healthy, `PROVISIONING` Progressing; else waiting, each naming
/// the kind `PHASED[I]`.
fn phase<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let name = PHASED[I];
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let phase = status.get("phase")?;
        if phase.is("RUNNING") {
            return Ok(Hs::new("Healthy", format!("{name} running")));
        }
        if phase.is("PROVISIONING") {
            return Ok(Hs::new("Progressing", format!("{name} provisioning")));
        }
    }
    Ok(Hs::new("Progressing", format!("Waiting for {name}")))
}

/// `status.state`: `CREATED` with the connector `RUNNING` and no failed task count is
/// Healthy; `ERROR` Degraded with the first condition's message; failed tasks Degraded.
fn connector(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    let state = if status.is_nil() { Lv::Nil } else { status.get("state")? };
    if !state.is_nil() {
        let failed = status.get("failedTasksCount")?;
        if state.is("CREATED") && status.get("connectorState")?.is("RUNNING") && failed.is_nil() {
            return Ok(Hs::new("Healthy", "Connector running"));
        }
        if state.is("ERROR") {
            let conditions = status.get("conditions")?;
            if conditions.truthy() && conditions.len()? > 0 {
                return Ok(Hs::new("Degraded", conditions.at(1)?.get("message")?));
            }
            return Ok(Hs::new("Degraded", "No conditions available"));
        }
        if !failed.is_nil() && lua_lt(Lv::Num(0.0), failed)? {
            return Ok(Hs::new("Degraded", "Connector has failed tasks"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Kafka Connector"))
}
