//! `platform.confluent.io`: Connect, Connector, ControlCenter, Kafka, KsqlDB, SchemaRegistry
//! and Zookeeper, as Argo CD 3.6.2's scripts.

use super::shapes_c::lua_lt;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "platform.confluent.io", kind: "Connect", check: connect },
    Rule { group: "platform.confluent.io", kind: "Connector", check: connector },
    Rule { group: "platform.confluent.io", kind: "ControlCenter", check: control_center },
    Rule { group: "platform.confluent.io", kind: "Kafka", check: kafka },
    Rule { group: "platform.confluent.io", kind: "KsqlDB", check: ksqldb },
    Rule { group: "platform.confluent.io", kind: "SchemaRegistry", check: schema_registry },
    Rule { group: "platform.confluent.io", kind: "Zookeeper", check: zookeeper },
];

/// `status.phase`: `RUNNING` Healthy, `PROVISIONING` Progressing; else waiting for `name`.
fn phase(env: &Env<'_>, name: &str) -> Result<Hs, Fault> {
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

/// The phase of a Connect.
fn connect(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "Connect")
}

/// The phase of a ControlCenter.
fn control_center(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "ControlCenter")
}

/// The phase of a Kafka.
fn kafka(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "Kafka")
}

/// The phase of a KsqlDB.
fn ksqldb(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "KsqlDB")
}

/// The phase of a SchemaRegistry.
fn schema_registry(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "SchemaRegistry")
}

/// The phase of a Zookeeper.
fn zookeeper(env: &Env<'_>) -> Result<Hs, Fault> {
    phase(env, "Zookeeper")
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
