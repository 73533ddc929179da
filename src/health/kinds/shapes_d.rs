//! Shapes shared by several scripts (branch `kinds-d`): Lua's `==` between two read values,
//! `x or "default"`, `..` over several operands, `table.concat`, the `deletionTimestamp` test,
//! and the usual "first condition of a type with a status" reading.

use std::borrow::Cow;

use serde_json::Value;

pub(super) use super::lua::cat;
use super::{Env, Fault, Lv};

/// `a == b` between two values read from the object: no conversion; tables are equal only
/// when they are the same table.
pub(super) fn lua_eq(a: Lv<'_>, b: Lv<'_>) -> bool {
    match (a, b) {
        (Lv::Nil, Lv::Nil) => true,
        (Lv::Bool(x), Lv::Bool(y)) => x == y,
        (Lv::Num(x), Lv::Num(y)) => x == y,
        (Lv::Str(x), Lv::Str(y)) => x == y,
        (Lv::Table(x), Lv::Table(y)) => std::ptr::eq::<Value>(x, y),
        _ => false,
    }
}

/// `v or "default"`.
pub(super) fn or<'a>(v: Lv<'a>, default: &'a str) -> Lv<'a> {
    if v.truthy() { v } else { Lv::Str(default) }
}

/// `table.concat(list, sep)` over the values `table.insert` put in the list (a `nil` is not
/// inserted): strings and numbers only, else a fault.
pub(super) fn join(items: &[Lv<'_>], sep: &str) -> Result<String, Fault> {
    let mut out = String::new();
    for (i, v) in items.iter().filter(|v| !v.is_nil()).enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match v {
            Lv::Str(_) | Lv::Num(_) => out.push_str(&v.text()?),
            other => {
                return Err(Fault::new(format!(
                    "invalid value ({}) at index {} in table for concat",
                    other.type_name(),
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

/// `obj.metadata and obj.metadata.deletionTimestamp` is truthy.
pub(super) fn deleting(env: &Env<'_>) -> Result<bool, Fault> {
    let metadata = env.obj.get("metadata")?;
    Ok(metadata.truthy() && metadata.get("deletionTimestamp")?.truthy())
}

/// `string.len(v)` and `string.sub(v, 1, n)`-style reading of a string or a number: its
/// bytes as Lua's string library sees them; a fault for anything else.
pub(super) fn lua_string<'a>(v: Lv<'a>, what: &str) -> Result<Cow<'a, str>, Fault> {
    match v {
        Lv::Str(_) | Lv::Num(_) => v.text(),
        other => Err(Fault::new(format!(
            "bad argument #1 to {what} (string expected, got {})",
            other.type_name()
        ))),
    }
}

/// The first `n` bytes of `s` (`string.sub(s, 1, n)`), kept valid UTF-8 by replacing a cut
/// character.
pub(super) fn prefix_bytes(s: &str, n: usize) -> Cow<'_, str> {
    if s.len() <= n {
        Cow::Borrowed(s)
    } else if s.is_char_boundary(n) {
        Cow::Borrowed(&s[..n])
    } else {
        String::from_utf8_lossy(&s.as_bytes()[..n])
    }
}

/// `table.concat(v, sep)` on a value read from the object: a table's list items (an object
/// has none), strings and numbers only; a fault for anything that is not a table.
pub(super) fn concat_table(v: Lv<'_>, sep: &str) -> Result<String, Fault> {
    if !matches!(v, Lv::Table(_)) {
        return Err(Fault::new(format!(
            "bad argument #1 to concat (table expected, got {})",
            v.type_name()
        )));
    }
    let items: Vec<Lv<'_>> = v.items()?.collect();
    join(&items, sep)
}

/// The older Crossplane provider scripts (`rds`, `route53`, `s3` of `aws.crossplane.io`): the
/// last `Ready` and `Synced` conditions. Ready and synced is Healthy (the Ready reason); a
/// paused reconcile not synced is Suspended; synced but not ready Progressing (`Waiting for
/// <what> to be available`); anything else Degraded (the last reconcile error's message). No
/// conditions: Progressing, `Waiting for <what> to be created`.
pub(super) fn crossplane_ready_synced(env: &Env<'_>, what: &str) -> Result<super::Hs, Fault> {
    use super::Hs;
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let conditions = status.get("conditions")?;
        if !conditions.is_nil() {
            let (mut ready, mut synced, mut suspended) = (false, false, false);
            let (mut ready_message, mut synced_message, mut suspended_message) =
                (Lv::Nil, Lv::Nil, Lv::Nil);
            for c in conditions.items()? {
                let t = c.get("type")?;
                if t.is("Ready") {
                    ready = c.get("status")?.is("True");
                    ready_message = c.get("reason")?;
                } else if t.is("Synced") {
                    synced = c.get("status")?.is("True");
                    let reason = c.get("reason")?;
                    if reason.is("ReconcileError") {
                        synced_message = c.get("message")?;
                    } else if reason.is("ReconcilePaused") {
                        suspended = true;
                        suspended_message = reason;
                    }
                }
            }
            return Ok(if ready && synced {
                Hs::new("Healthy", ready_message)
            } else if !synced && suspended {
                Hs::new("Suspended", suspended_message)
            } else if !ready && synced && !suspended {
                Hs::new("Progressing", format!("Waiting for {what} to be available"))
            } else {
                Hs::new("Degraded", synced_message)
            });
        }
    }
    Ok(Hs::new("Progressing", format!("Waiting for {what} to be created")))
}

/// A message a script builds: a value read from the object, or text it concatenated.
#[derive(Clone, Debug)]
pub(super) enum Text<'a> {
    /// A value as read (`msg = condition.reason`).
    Read(Lv<'a>),
    /// Text built with `..`.
    Built(String),
}

impl<'a> Text<'a> {
    /// `self .. parts[0] .. parts[1] ...`: text built already grows in place (a message
    /// built in a loop is written once, not copied at each `..`); a value as read is copied
    /// first. The parts are checked in the order `..` checks them, text built being text.
    pub(super) fn append(&mut self, parts: &[Lv<'_>]) -> Result<(), Fault> {
        match self {
            Text::Built(s) => super::lua::cat_into(s, parts),
            Text::Read(v) => {
                let mut s = cat(&[*v])?;
                super::lua::cat_into(&mut s, parts)?;
                *self = Text::Built(s);
                Ok(())
            }
        }
    }

    /// The message field of the returned table.
    pub(super) fn field(self) -> super::lua::Field {
        match self {
            Text::Read(v) => v.into(),
            Text::Built(s) => s.into(),
        }
    }
}
