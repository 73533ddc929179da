//! `game.kruise.io`: GameServer and GameServerSet, as Argo CD 3.6.2's scripts.

use serde_json::Value;

use super::shapes_b::{arith, cat, eq, le, lt, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "game.kruise.io", kind: "GameServer", check: game_server },
    Rule { group: "game.kruise.io", kind: "GameServerSet", check: game_server_set },
];

/// An empty table, for the script's `x or {}`.
static EMPTY: Value = Value::Array(Vec::new());

/// Progressing while the current state is not the desired one; Degraded when a
/// `KruisePodReady` pod condition is not `True`; Healthy when both states are Ready; else
/// Unknown, waiting.
fn game_server(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.truthy() {
        let cur = status.get("currentState")?;
        let dest = status.get("desiredState")?;
        if !eq(cur, dest) {
            let message = cat(&[
                Lv::Str("State change: "),
                or(cur, Lv::Str("Unknown")),
                Lv::Str(" → "),
                or(dest, Lv::Str("Unknown")),
            ])?;
            return Ok(Hs::new("Progressing", message));
        }
        let pod = or(status.get("podStatus")?, Lv::Table(&EMPTY));
        for c in or(pod.get("conditions")?, Lv::Table(&EMPTY)).items()? {
            let t = c.get("type")?;
            if t.is("KruisePodReady") && !c.get("status")?.is("True") {
                return Ok(Hs::new("Degraded", cat(&[Lv::Str("Pod is not ready: "), t])?));
            }
        }
        if cur.is("Ready") && dest.is("Ready") {
            return Ok(Hs::new("Healthy", "GameServer is Ready"));
        }
    }
    Ok(Hs::new("Unknown", "Waiting for GameServer to be ready"))
}

/// Once the status has observed the generation: Suspended when paused or held by a
/// partition; Healthy when every replica is updated and ready; Progressing with the ready
/// count while fewer are ready; else Progressing, waiting.
fn game_server_set(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = || Ok(Hs::new("Progressing", "Waiting for GameServerSet initialization"));
    let status = env.obj.get("status")?;
    if !status.truthy()
        || !eq(env.obj.path(&["metadata", "generation"])?, status.get("observedGeneration")?)
    {
        return waiting();
    }
    let strategy = env.obj.path(&["spec", "updateStrategy"])?;
    let ru = if strategy.truthy() { strategy.get("rollingUpdate")? } else { strategy };
    let ru = or(ru, Lv::Table(&EMPTY));
    if ru.get("paused")?.is_bool(true) {
        return Ok(Hs::new("Suspended", "GameServerSet is paused"));
    }
    let zero = Lv::Num(0.0);
    let partition = or(ru.get("partition")?, zero);
    if !partition.is_num(0.0) {
        let updated = or(status.get("updatedReplicas")?, zero);
        let replicas = arith(or(status.get("replicas")?, zero))?;
        let bound = replicas - arith(partition)?;
        if le(Lv::Num(bound), updated)? {
            let message = cat(&[
                Lv::Str("Partition="),
                partition,
                Lv::Str(", waiting for manual intervention"),
            ])?;
            return Ok(Hs::new("Suspended", message));
        }
    }
    let replicas = or(status.get("replicas")?, zero);
    if eq(or(status.get("updatedReadyReplicas")?, zero), replicas) {
        return Ok(Hs::new("Healthy", "All GameServerSet replicas are updated and ready"));
    }
    let ready = or(status.get("readyReplicas")?, zero);
    if lt(ready, replicas)? {
        let message = cat(&[
            Lv::Str("ReadyReplicas "),
            ready,
            Lv::Str("/"),
            replicas,
            Lv::Str(", still progressing"),
        ])?;
        return Ok(Hs::new("Progressing", message));
    }
    waiting()
}
