//! `microgateway.airlock.com`: every kind (`microgateway.airlock.com/_`), as Argo CD 3.6.2's
//! script.

use std::borrow::Cow;

use super::lua::number_text;
use super::shapes_c::{lua_eq, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "microgateway.airlock.com", kind: "_", check: any_kind }];

/// `string.match(kind, "Policy$") ~= nil`: a kind ending in `Policy` (a number is read as its
/// text; anything else is an error).
fn is_policy(kind: Lv<'_>) -> Result<bool, Fault> {
    match kind {
        Lv::Nil => Ok(false),
        Lv::Str(s) => Ok(s.ends_with("Policy")),
        Lv::Num(n) => Ok(number_text(n).ends_with("Policy")),
        other => Err(Fault::new(format!(
            "bad argument #1 to match (string expected, got {})",
            other.type_name()
        ))),
    }
}

/// `(ancestor.ancestorRef.name or "")` as text.
fn ancestor_name<'a>(ancestor: Lv<'a>) -> Result<Cow<'a, str>, Fault> {
    or(ancestor.path(&["ancestorRef", "name"])?, Lv::Str("")).text()
}

/// A kind not ending in `Policy` is Healthy. A policy waits until every condition of every
/// ancestor observed its generation; then an ancestor whose `Accepted` or `ResolvedRefs` is
/// not `True` makes it Degraded, an `Accepted` `True` Healthy, and an ancestor with no
/// `Accepted` Degraded (the last ancestor read decides).
fn any_kind(env: &Env<'_>) -> Result<Hs, Fault> {
    let kind = env.obj.get("kind")?;
    let kind_text = or(kind, Lv::Str("Policy")).text()?;
    let waiting = || Hs::new("Progressing", format!("Waiting for {kind_text} status"));
    if !is_policy(kind)? {
        return Ok(Hs::new("Healthy", format!("{} is healthy", kind.text()?)));
    }
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    let ancestors = status.get("ancestors")?;
    if ancestors.is_nil() {
        return Ok(waiting());
    }
    let generation = env.obj.path(&["metadata", "generation"])?;
    if !generation.is_nil() {
        for ancestor in ancestors.items()? {
            for c in ancestor.get("conditions")?.items()? {
                let observed = c.get("observedGeneration")?;
                if observed.is_nil() || !lua_eq(observed, generation) {
                    let name = ancestor_name(ancestor)?;
                    let message =
                        format!("Waiting for Ancestor {name} to update {kind_text} status");
                    return Ok(Hs::new("Progressing", message));
                }
            }
        }
    }
    // What the script's `hs` holds last, its message written once at the end: still
    // waiting, Healthy (an `Accepted` `True`), or Degraded (an ancestor not accepted).
    enum Last<'a> {
        Waiting,
        Healthy,
        NotAccepted(Cow<'a, str>),
    }
    let mut last = Last::Waiting;
    for ancestor in ancestors.items()? {
        let mut accepted = false;
        for c in ancestor.get("conditions")?.items()? {
            let t = c.get("type")?;
            if t.is("Accepted") {
                accepted = true;
                if !c.get("status")?.is("True") {
                    return not_true(ancestor, c);
                }
                last = Last::Healthy;
            }
            if t.is("ResolvedRefs") && !c.get("status")?.is("True") {
                return not_true(ancestor, c);
            }
        }
        if !accepted {
            last = Last::NotAccepted(ancestor_name(ancestor)?);
        }
    }
    Ok(match last {
        Last::Waiting => waiting(),
        Last::Healthy => Hs::new("Healthy", format!("{kind_text} is healthy")),
        Last::NotAccepted(name) => {
            Hs::new("Degraded", format!("Ancestor {name}: {kind_text} is not accepted"))
        }
    })
}

/// Degraded, `Ancestor <name>: <the condition's message>`.
fn not_true(ancestor: Lv<'_>, c: Lv<'_>) -> Result<Hs, Fault> {
    let name = ancestor_name(ancestor)?;
    let message = c.get("message")?.text()?;
    Ok(Hs::new("Degraded", format!("Ancestor {name}: {message}")))
}
