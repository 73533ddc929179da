//! `kro.run`: ResourceGraphDefinition and the instances of every other kind (`kro.run/_`), as
//! Argo CD 3.6.2's scripts.

use super::shapes_c::lua_eq;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "kro.run", kind: "ResourceGraphDefinition", check: resource_graph_definition },
    Rule { group: "kro.run", kind: "_", check: instance },
];

/// The conditions, or the health when there are none yet.
fn conditions<'a>(env: &Env<'a>) -> Result<Result<Lv<'a>, Hs>, Fault> {
    let status = env.obj.get("status")?;
    let conditions = if status.is_nil() { Lv::Nil } else { status.get("conditions")? };
    if conditions.is_nil() {
        return Ok(Err(Hs::new("Progressing", "Waiting for KRO to report status")));
    }
    Ok(Ok(conditions))
}

/// `obj.metadata and obj.metadata.generation`.
fn generation<'a>(env: &Env<'a>) -> Result<Lv<'a>, Fault> {
    let metadata = env.obj.get("metadata")?;
    if metadata.truthy() { metadata.get("generation") } else { Ok(metadata) }
}

/// Whether the condition was observed at `generation` (never when `generation` is nil, and
/// then the condition is not read).
fn current(c: Lv<'_>, generation: Lv<'_>) -> Result<bool, Fault> {
    if generation.is_nil() {
        return Ok(false);
    }
    let observed = c.get("observedGeneration")?;
    Ok(!observed.is_nil() && lua_eq(observed, generation))
}

/// The condition's message, or `<type> <suffix>` when it has none.
fn message_or(c: Lv<'_>, suffix: &str) -> Result<Hs, Fault> {
    let message = c.get("message")?;
    if message.truthy() {
        return Ok(Hs::new("", message));
    }
    Ok(Hs::new("", format!("{}{suffix}", c.get("type")?.text()?)))
}

/// Among the conditions of the current generation, the first that is `Ready` `True`
/// (Healthy) or one of the graph's own types `False` (Degraded); else Progressing.
fn resource_graph_definition(env: &Env<'_>) -> Result<Hs, Fault> {
    const DEFINED: &[&str] =
        &["GraphRevisionsResolved", "GraphAccepted", "KindReady", "ControllerReady", "Ready"];
    let conditions = match conditions(env)? {
        Ok(c) => c,
        Err(hs) => return Ok(hs),
    };
    let generation = generation(env)?;
    for c in conditions.items()? {
        if current(c, generation)? {
            let t = c.get("type")?;
            if t.is("Ready") && c.get("status")?.is("True") {
                return Ok(Hs::new(
                    "Healthy",
                    "ResourceGraphDefinition is active and serving instances",
                ));
            }
            if DEFINED.iter().any(|d| t.is(d)) && c.get("status")?.is("False") {
                let hs = message_or(c, " is False")?;
                return Ok(Hs { status: "Degraded".into(), ..hs });
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for ResourceGraphDefinition to become ready"))
}

/// Among the conditions of the current generation, the first that is `Ready` `True`
/// (Healthy), or one of the instance's own types `False` while `status.state` is `FAILED` or
/// `ERROR` (Degraded) or `IN_PROGRESS` (Progressing); else Progressing.
fn instance(env: &Env<'_>) -> Result<Hs, Fault> {
    const DEFINED: &[&str] = &["InstanceManaged", "GraphResolved", "ResourcesReady", "Ready"];
    let conditions = match conditions(env)? {
        Ok(c) => c,
        Err(hs) => return Ok(hs),
    };
    let state = env.obj.path(&["status", "state"])?;
    let generation = generation(env)?;
    for c in conditions.items()? {
        if current(c, generation)? {
            let t = c.get("type")?;
            if t.is("Ready") && c.get("status")?.is("True") {
                return Ok(Hs::new("Healthy", "Instance is active and running"));
            }
            if DEFINED.iter().any(|d| t.is(d)) && c.get("status")?.is("False") {
                if state.is("FAILED") || state.is("ERROR") {
                    let hs = message_or(c, " is False")?;
                    return Ok(Hs { status: "Degraded".into(), ..hs });
                }
                if state.is("IN_PROGRESS") {
                    let hs = message_or(c, " is in progress")?;
                    return Ok(Hs { status: "Progressing".into(), ..hs });
                }
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for instance to become ready"))
}
