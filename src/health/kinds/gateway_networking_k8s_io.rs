//! `gateway.networking.k8s.io`: the Gateway API (GatewayClass, Gateway, ListenerSet,
//! HTTPRoute, GRPCRoute, TLSRoute, BackendTLSPolicy), as Argo CD 3.6.2's scripts.

use super::shapes_b::{cat, eq, generation_observed, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule {
        group: "gateway.networking.k8s.io",
        kind: "BackendTLSPolicy",
        check: backend_tls_policy,
    },
    Rule { group: "gateway.networking.k8s.io", kind: "GRPCRoute", check: grpc_route },
    Rule { group: "gateway.networking.k8s.io", kind: "Gateway", check: gateway },
    Rule { group: "gateway.networking.k8s.io", kind: "GatewayClass", check: gateway_class },
    Rule { group: "gateway.networking.k8s.io", kind: "HTTPRoute", check: http_route },
    Rule { group: "gateway.networking.k8s.io", kind: "ListenerSet", check: listener_set },
    Rule { group: "gateway.networking.k8s.io", kind: "TLSRoute", check: tls_route },
];

/// `obj.metadata.generation` (an error when there is no metadata).
fn generation<'a>(env: &Env<'a>) -> Result<Lv<'a>, Fault> {
    env.obj.path(&["metadata", "generation"])
}

/// The first `Accepted` condition not of another generation: `True` Healthy, `False`
/// Degraded, else Progressing, with its message or a text of the state; else Progressing,
/// waiting.
fn gateway_class(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() && !status.get("conditions")?.is_nil() {
        for c in status.get("conditions")?.items()? {
            if !c.get("type")?.is("Accepted") {
                continue;
            }
            let metadata = env.obj.get("metadata")?;
            if !metadata.is_nil() && !metadata.get("generation")?.is_nil() {
                let observed = c.get("observedGeneration")?;
                if !observed.is_nil() && !eq(observed, metadata.get("generation")?) {
                    continue;
                }
            }
            let s = c.get("status")?;
            let (health, text) = if s.is("True") {
                ("Healthy", "GatewayClass is accepted")
            } else if s.is("False") {
                ("Degraded", "GatewayClass is not accepted")
            } else {
                ("Progressing", "Waiting for GatewayClass status")
            };
            return Ok(Hs::new(health, or(c.get("message")?, Lv::Str(text))));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for GatewayClass status"))
}

/// The script's `checkConditions` twice, `ResolvedRefs` then `Accepted` (the message of the
/// first condition of the type that is `False`: its own, or `Failed condition: <type>`; both
/// lists are walked before either is used), then the first `Programmed` condition that is not
/// `True` (with its message or `programming`): the health and its message.
///
/// One walk gives what the script's three give: it stops where the later of the first two
/// stops (both found), and fails on an item that cannot be indexed before that point, as the
/// first two walks do (the third walks only when neither found anything, after both failed on
/// any such item already).
fn conditions_health<'a>(
    conditions: Lv<'a>,
    programming: &'static str,
) -> Result<Option<(&'static str, Lv<'a>)>, Fault> {
    let (mut resolved, mut accepted, mut programmed) = (None, None, None);
    for c in conditions.items()? {
        let t = c.get("type")?;
        if resolved.is_none() && t.is("ResolvedRefs") && c.get("status")?.is("False") {
            resolved = Some(or(c.get("message")?, Lv::Str("Failed condition: ResolvedRefs")));
        } else if accepted.is_none() && t.is("Accepted") && c.get("status")?.is("False") {
            accepted = Some(or(c.get("message")?, Lv::Str("Failed condition: Accepted")));
        } else if programmed.is_none() && t.is("Programmed") && !c.get("status")?.is("True") {
            programmed = Some(or(c.get("message")?, Lv::Str(programming)));
        }
        if resolved.is_some() && accepted.is_some() {
            break;
        }
    }
    if let Some(m) = resolved.or(accepted) {
        return Ok(Some(("Degraded", m)));
    }
    Ok(programmed.map(|m| ("Progressing", m)))
}

/// `"Failed condition: " .. conditionType` in ListenerSet's script, where `conditionType` is
/// an undefined global (`nil`): the concatenation always fails.
fn undefined_condition_type() -> Fault {
    Fault::new("attempt to concatenate a nil value (the undefined global `conditionType`)")
}

/// The gateway's conditions, then each listener's (messages prefixed `Listener: `):
/// Degraded for a failed `ResolvedRefs` or `Accepted`, Progressing for a `Programmed` that is
/// not `True`; Healthy when there are conditions or listeners; else Progressing, waiting.
fn gateway(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for Gateway status"));
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil()
        && let Some((health, m)) =
            conditions_health(conditions, "Gateway is still being programmed")?
    {
        return Ok(Hs::new(health, m));
    }
    let listeners = status.get("listeners")?;
    if !listeners.is_nil() {
        for l in listeners.items()? {
            let lc = l.get("conditions")?;
            if lc.is_nil() {
                continue;
            }
            if let Some((health, m)) = conditions_health(lc, "Listener is still being programmed")?
            {
                return Ok(Hs::new(health, cat(&[Lv::Str("Listener: "), m])?));
            }
        }
    }
    if !status.get("conditions")?.is_nil() || {
        let l = status.get("listeners")?;
        !l.is_nil() && l.len()? > 0
    } {
        return Ok(Hs::new("Healthy", "Gateway is healthy"));
    }
    Ok(Hs::new("Progressing", "Waiting for Gateway status"))
}

/// HTTPRoute's and GRPCRoute's shape: for each parent of the current generation, Degraded for
/// a failed `ResolvedRefs` or `Accepted`, Progressing for a `Programmed` that is not `True`
/// (messages prefixed `Parent <name>: `); Healthy when a parent of the current generation has
/// conditions; else Progressing, waiting.
fn route(env: &Env<'_>, healthy: &'static str, waiting: &'static str) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", waiting));
    }
    let parents = status.get("parents")?;
    if parents.is_nil() {
        return Ok(Hs::new("Progressing", waiting));
    }
    for p in parents.items()? {
        let pc = p.get("conditions")?;
        if pc.is_nil() || !generation_observed(env, p, true)? {
            continue;
        }
        if let Some((health, m)) =
            conditions_health(p.get("conditions")?, "Route is still being programmed")?
        {
            let name = or(p.path(&["parentRef", "name"])?, Lv::Str(""));
            return Ok(Hs::new(health, cat(&[Lv::Str("Parent "), name, Lv::Str(": "), m])?));
        }
    }
    if status.get("parents")?.len()? > 0 {
        for p in status.get("parents")?.items()? {
            let pc = p.get("conditions")?;
            if !pc.is_nil() && pc.len()? > 0 && generation_observed(env, p, true)? {
                return Ok(Hs::new("Healthy", healthy));
            }
        }
    }
    Ok(Hs::new("Progressing", waiting))
}

/// [`route`].
fn http_route(env: &Env<'_>) -> Result<Hs, Fault> {
    route(env, "HTTPRoute is healthy", "Waiting for HTTPRoute status")
}

/// [`route`].
fn grpc_route(env: &Env<'_>) -> Result<Hs, Fault> {
    route(env, "GRPCRoute is healthy", "Waiting for GRPCRoute status")
}

/// For each parent with conditions of the current generation: Degraded for a `ResolvedRefs`
/// or `Accepted` condition that is `False`; the first `Programmed` not `True` makes it
/// Progressing, else a parent both accepted and resolved makes it Healthy, else the first
/// parent without them makes it Progressing, waiting for its conditions.
fn tls_route(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting_status = || Ok(Hs::new("Progressing", "Waiting for TLSRoute status"));
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("parents")?.is_nil() {
        return waiting_status();
    }
    let mut healthy = false;
    let mut progressing = String::new();
    let mut waiting = String::new();
    for p in status.get("parents")?.items()? {
        let pc = p.get("conditions")?;
        if pc.is_nil() || pc.len()? == 0 || !generation_observed(env, p, false)? {
            continue;
        }
        let parent_ref = p.get("parentRef")?;
        let name = if !parent_ref.is_nil() && !parent_ref.get("name")?.is_nil() {
            parent_ref.get("name")?
        } else {
            Lv::Str("")
        };
        let conditions = p.get("conditions")?;
        let resolved = conditions.find_type("ResolvedRefs")?;
        let accepted = conditions.find_type("Accepted")?;
        let programmed = conditions.find_type("Programmed")?;
        let message = |c: Lv<'_>, t: &'static str| -> Result<String, Fault> {
            let m = c.get("message")?;
            let m = if !m.is_nil() && !m.is("") { m } else { Lv::Str(t) };
            cat(&[Lv::Str("Parent "), name, Lv::Str(": "), m])
        };
        if let Some(c) = resolved
            && c.get("status")?.is("False")
        {
            return Ok(Hs::new("Degraded", message(c, "Failed condition: ResolvedRefs")?));
        }
        if let Some(c) = accepted
            && c.get("status")?.is("False")
        {
            return Ok(Hs::new("Degraded", message(c, "Failed condition: Accepted")?));
        }
        let is_true = |c: Option<Lv<'_>>| -> Result<bool, Fault> {
            Ok(match c {
                Some(c) => c.get("status")?.is("True"),
                None => false,
            })
        };
        let programming = match programmed {
            Some(c) => !c.get("status")?.is("True"),
            None => false,
        };
        if programming {
            if progressing.is_empty()
                && let Some(c) = programmed
            {
                let m = or(c.get("message")?, Lv::Str("Route is still being programmed"));
                progressing = cat(&[Lv::Str("Parent "), name, Lv::Str(": "), m])?;
            }
        } else if is_true(accepted)? && is_true(resolved)? {
            healthy = true;
        } else if waiting.is_empty() {
            waiting =
                cat(&[Lv::Str("Parent "), name, Lv::Str(": Waiting for TLSRoute conditions")])?;
        }
    }
    if !progressing.is_empty() {
        return Ok(Hs::new("Progressing", progressing));
    }
    if healthy {
        return Ok(Hs::new("Healthy", "TLSRoute is healthy"));
    }
    if !waiting.is_empty() {
        return Ok(Hs::new("Progressing", waiting));
    }
    waiting_status()
}

/// Progressing (waiting) while a condition is of another generation; Degraded for an
/// `Accepted` `False` condition; Progressing for a `Programmed` one not `True` (the last
/// one's message); then each listener's conditions the same way (with `ResolvedRefs` and
/// `Conflicted`, prefixed `Listener: `); Healthy when there are listeners.
fn listener_set(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for ListenerSet status");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(hs);
    }
    let generation = generation(env)?;
    if !generation.is_nil() {
        let conditions = status.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                let g = c.get("observedGeneration")?;
                if !g.is_nil() && !eq(g, generation) {
                    return Ok(hs);
                }
            }
        }
    }
    let mut programming = false;
    for c in status.get("conditions")?.items()? {
        // Each read once: a condition that can be indexed reads `status` without a fault.
        let (t, s) = (c.get("type")?, c.get("status")?);
        if t.is("Accepted") && s.is("False") {
            let m = c.get("message")?;
            if !m.truthy() {
                return Err(undefined_condition_type());
            }
            return Ok(Hs::new("Degraded", m));
        }
        if t.is("Programmed") && !s.is("True") {
            programming = true;
            hs = Hs::new(
                "Progressing",
                or(c.get("message")?, Lv::Str("ListenerSet is still being programmed")),
            );
        }
    }
    if programming {
        return Ok(hs);
    }
    let listeners = status.get("listeners")?;
    if listeners.is_nil() || listeners.len()? == 0 {
        return Ok(hs);
    }
    for l in status.get("listeners")?.items()? {
        let lc = l.get("conditions")?;
        if lc.is_nil() {
            continue;
        }
        let mut programming = false;
        for c in lc.items()? {
            let t = c.get("type")?;
            let s = c.get("status")?;
            let listener = |m: Lv<'_>, text: Option<&'static str>| -> Result<String, Fault> {
                let m = match (m.truthy(), text) {
                    (true, _) => m,
                    (false, Some(text)) => Lv::Str(text),
                    (false, None) => return Err(undefined_condition_type()),
                };
                cat(&[Lv::Str("Listener: "), m])
            };
            if t.is("ResolvedRefs") && s.is("False") {
                return Ok(Hs::new("Degraded", listener(c.get("message")?, None)?));
            }
            if t.is("Conflicted") && s.is("True") {
                return Ok(Hs::new(
                    "Degraded",
                    listener(c.get("message")?, Some("Listener is conflicted"))?,
                ));
            }
            if t.is("Accepted") && s.is("False") {
                return Ok(Hs::new("Degraded", listener(c.get("message")?, None)?));
            }
            if t.is("Programmed") && !s.is("True") {
                programming = true;
                hs = Hs::new(
                    "Progressing",
                    listener(c.get("message")?, Some("Listener is still being programmed"))?,
                );
            }
        }
        if programming {
            return Ok(hs);
        }
    }
    Ok(Hs::new("Healthy", "ListenerSet is healthy"))
}

/// Progressing (waiting for the ancestor by name) while a condition is of another
/// generation; Degraded for an `Accepted` or `ResolvedRefs` condition that is not `True`
/// (`Ancestor <name>: <message>`); Healthy once an `Accepted` condition is `True`; else
/// Progressing, waiting.
fn backend_tls_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for BackendTLSPolicy status");
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("ancestors")?.is_nil() {
        return Ok(hs);
    }
    let generation = generation(env)?;
    if !generation.is_nil() {
        for a in status.get("ancestors")?.items()? {
            for c in a.get("conditions")?.items()? {
                let g = c.get("observedGeneration")?;
                if !g.is_nil() && !eq(g, generation) {
                    let message = cat(&[
                        Lv::Str("Waiting for Ancestor "),
                        ancestor_name(a)?,
                        Lv::Str(" to update BackendTLSPolicy status"),
                    ])?;
                    return Ok(Hs::new("Progressing", message));
                }
            }
        }
    }
    for a in status.get("ancestors")?.items()? {
        for c in a.get("conditions")?.items()? {
            let t = c.get("type")?;
            let degraded = |c: Lv<'_>| -> Result<Hs, Fault> {
                let message = cat(&[
                    Lv::Str("Ancestor "),
                    ancestor_name(a)?,
                    Lv::Str(": "),
                    c.get("message")?,
                ])?;
                Ok(Hs::new("Degraded", message))
            };
            if t.is("Accepted") {
                if !c.get("status")?.is("True") {
                    return degraded(c);
                }
                hs = Hs::new("Healthy", "BackendTLSPolicy is healthy");
            }
            if c.get("type")?.is("ResolvedRefs") && !c.get("status")?.is("True") {
                return degraded(c);
            }
        }
    }
    Ok(hs)
}

/// `ancestor.ancestorRef.name or ""`.
fn ancestor_name(a: Lv<'_>) -> Result<Lv<'_>, Fault> {
    Ok(or(a.path(&["ancestorRef", "name"])?, Lv::Str("")))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The script's three walks, as written: `checkConditions` for `ResolvedRefs`, then for
    /// `Accepted`, then the first `Programmed` not `True`.
    fn three_walks<'a>(
        conditions: Lv<'a>,
        programming: &'static str,
    ) -> Result<Option<(&'static str, Lv<'a>)>, Fault> {
        let failed = |t: &str, text: &'static str| -> Result<Option<Lv<'a>>, Fault> {
            for c in conditions.items()? {
                if c.get("type")?.is(t) && c.get("status")?.is("False") {
                    return Ok(Some(or(c.get("message")?, Lv::Str(text))));
                }
            }
            Ok(None)
        };
        let resolved = failed("ResolvedRefs", "Failed condition: ResolvedRefs")?;
        let accepted = failed("Accepted", "Failed condition: Accepted")?;
        if let Some(m) = resolved.or(accepted) {
            return Ok(Some(("Degraded", m)));
        }
        for c in conditions.items()? {
            if c.get("type")?.is("Programmed") && !c.get("status")?.is("True") {
                return Ok(Some(("Progressing", or(c.get("message")?, Lv::Str(programming)))));
            }
        }
        Ok(None)
    }

    #[test]
    fn one_walk_is_the_scripts_three() {
        let mut items: Vec<Value> = vec![json!(7), json!("text"), json!(null), json!(true)];
        for t in [None, Some("ResolvedRefs"), Some("Accepted"), Some("Programmed")] {
            for s in [None, Some("True"), Some("False")] {
                for m in [None, Some("m")] {
                    let mut c = serde_json::Map::new();
                    for (k, v) in [("type", t), ("status", s), ("message", m)] {
                        if let Some(v) = v {
                            c.insert(k.into(), json!(v));
                        }
                    }
                    items.push(Value::Object(c));
                }
            }
        }
        let mut lists: Vec<Value> = vec![json!({}), json!("x"), json!(1)];
        for a in &items {
            lists.push(json!([a]));
            for b in &items {
                lists.push(json!([a, b]));
                for c in &items {
                    lists.push(json!([a, b, c]));
                }
            }
        }
        for list in &lists {
            let one = conditions_health(Lv::of(list), "programming");
            let three = three_walks(Lv::of(list), "programming");
            assert_eq!(one, three, "{list}");
        }
        assert!(lists.len() > 20_000, "{}", lists.len());
    }
}
