//! Shapes shared by several built-in rules: Lua's `==`, `<`, arithmetic and `next` on the
//! values a script reads, and the usual condition searches, as data (a row per condition type
//! and status the script looks for).

use super::lua::Field;
pub(super) use super::lua::status_conditions;
pub(super) use super::lua::{eq, le, lt};
use super::{Fault, Hs, Lv};

/// `v` as an operand of arithmetic: a number, or a string that reads as one; an error
/// otherwise (`what` names the operand).
pub(super) fn arith(v: Lv<'_>, what: &str) -> Result<f64, Fault> {
    match v {
        Lv::Num(n) => Ok(n),
        Lv::Str(s) => crate::script::gopher::coerce(s)
            .ok_or_else(|| Fault(format!("cannot perform arithmetic on a string value ({what})"))),
        other => Err(Fault(format!(
            "cannot perform arithmetic on a {} value ({what})",
            other.type_name()
        ))),
    }
}

/// `next(v) == nil`: whether the table `v` is empty (its `null`s dropped); an error for
/// anything that is not a table.
pub(super) fn is_empty_table(v: Lv<'_>) -> Result<bool, Fault> {
    match v {
        Lv::Table(t) => Ok(match t {
            serde_json::Value::Array(a) => a.iter().all(|v| v.is_null()),
            serde_json::Value::Object(m) => m.values().all(|v| v.is_null()),
            _ => true,
        }),
        other => Err(Fault(format!(
            "bad argument #1 to next (table expected, got {})",
            other.type_name()
        ))),
    }
}

/// `a or b` where `b` is text: `a` when it is true in Lua, else `b`.
pub(super) fn or_text(a: Lv<'_>, b: &str) -> Field {
    if a.truthy() { Field::from(a) } else { Field::from(b) }
}

/// `table.getn(v)`: the length of a table; an error for anything else (`what` names it).
pub(super) fn getn(v: Lv<'_>, what: &str) -> Result<usize, Fault> {
    match v {
        Lv::Table(_) => v.len(),
        other => Err(Fault(format!(
            "bad argument #1 to getn (table expected, got {}) (field `{what}`)",
            other.type_name()
        ))),
    }
}

/// What a matched condition's health says.
#[derive(Clone, Copy, Debug)]
pub(super) enum Say {
    /// A text of the script's own.
    Text(&'static str),
    /// `condition.message`.
    Message,
    /// `condition.message or "<text>"`.
    MessageOr(&'static str),
    /// `condition.message or condition.reason`.
    MessageOrReason,
}

/// One row of a condition search: a condition of this type with this status gives this health.
#[derive(Clone, Copy, Debug)]
pub(super) struct On {
    /// `condition.type`.
    pub(super) kind: &'static str,
    /// `condition.status`.
    pub(super) status: &'static str,
    /// The health status returned.
    pub(super) health: &'static str,
    /// The message returned.
    pub(super) say: Say,
}

impl On {
    /// A row.
    pub(super) const fn new(
        kind: &'static str,
        status: &'static str,
        health: &'static str,
        say: Say,
    ) -> On {
        On { kind, status, health, say }
    }
}

/// `for _, c in ipairs(conditions)`: the health of the first condition matching a row (rows
/// tried in order for each condition); `None` when none does. Every condition's `type` is
/// read, so a condition that is not a table (or a string) fails as the script does.
pub(super) fn first_on(conditions: Lv<'_>, rows: &[On]) -> Result<Option<Hs>, Fault> {
    for c in conditions.items()? {
        if let Some(hs) = on(c, rows)? {
            return Ok(Some(hs));
        }
    }
    Ok(None)
}

/// The same over `pairs(conditions)`: an object's members too.
pub(super) fn first_on_pairs(conditions: Lv<'_>, rows: &[On]) -> Result<Option<Hs>, Fault> {
    for (_, c) in conditions.pairs()? {
        if let Some(hs) = on(c, rows)? {
            return Ok(Some(hs));
        }
    }
    Ok(None)
}

/// The health the first row matching the condition `c` gives.
fn on(c: Lv<'_>, rows: &[On]) -> Result<Option<Hs>, Fault> {
    let kind = c.get("type")?;
    let status = c.get("status")?;
    let Some(row) = rows.iter().find(|r| kind.is(r.kind) && status.is(r.status)) else {
        return Ok(None);
    };
    let message = match row.say {
        Say::Text(t) => Field::from(t),
        Say::Message => Field::from(c.get("message")?),
        Say::MessageOr(t) => or_text(c.get("message")?, t),
        Say::MessageOrReason => {
            let m = c.get("message")?;
            if m.truthy() { Field::from(m) } else { Field::from(c.get("reason")?) }
        }
    };
    Ok(Some(Hs::new(row.health, message)))
}

/// The health of the first condition matching a row of `rows` (when there are
/// `status.conditions`); else Progressing with the message `waiting`.
pub(super) fn conditions_or(obj: Lv<'_>, rows: &[On], waiting: &str) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(obj)?
        && let Some(hs) = first_on(conditions, rows)?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Progressing", waiting))
}

/// Ready `False` is Degraded and Ready `True` Healthy, with the condition's message.
pub(super) const READY: &[On] = &[
    On::new("Ready", "False", "Degraded", Say::Message),
    On::new("Ready", "True", "Healthy", Say::Message),
];

/// Synced `False` is Degraded and Synced `True` Healthy, with the condition's message.
pub(super) const READY_SYNCED: &[On] = &[
    On::new("Synced", "False", "Degraded", Say::Message),
    On::new("Synced", "True", "Healthy", Say::Message),
];

/// `obj.metadata ~= nil and obj.metadata.generation ~= nil and obj.status.observedGeneration ~=
/// nil and obj.status.observedGeneration ~= obj.metadata.generation`, with `status` read.
pub(super) fn generation_behind(obj: Lv<'_>, status: Lv<'_>) -> Result<bool, Fault> {
    let metadata = obj.get("metadata")?;
    if metadata.is_nil() {
        return Ok(false);
    }
    let generation = metadata.get("generation")?;
    if generation.is_nil() {
        return Ok(false);
    }
    let observed = status.get("observedGeneration")?;
    Ok(!observed.is_nil() && !eq(observed, generation))
}

/// The first steps of the Capsule and SOPS operator scripts: Progressing `Waiting for status`
/// without `status.conditions`, `Waiting for reconciliation (generation mismatch)` while the
/// status describes an older generation; else the conditions.
pub(super) fn capsule_start(obj: Lv<'_>) -> Result<Result<Lv<'_>, Hs>, Fault> {
    let Some(conditions) = status_conditions(obj)? else {
        return Ok(Err(Hs::new("Progressing", "Waiting for status")));
    };
    if generation_behind(obj, obj.get("status")?)? {
        return Ok(Err(Hs::new("Progressing", "Waiting for reconciliation (generation mismatch)")));
    }
    Ok(Ok(conditions))
}

/// `pairs(t)`'s keys sorted as `table.sort` sorts them: a list's indexes in order, an
/// object's names byte by byte.
pub(super) fn sorted_keys<'a>(
    t: Lv<'a>,
) -> Result<Vec<(std::borrow::Cow<'a, str>, Lv<'a>)>, Fault> {
    let mut keys = t.members()?;
    if matches!(t, Lv::Table(serde_json::Value::Object(_))) {
        keys.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn operators_follow_lua() {
        let v = json!({"a": {"x": 1}, "n": "2"});
        let o = Lv::of(&v);
        let a = o.get("a").unwrap();
        assert!(eq(a, o.get("a").unwrap()));
        assert!(!eq(a, Lv::of(&json!({"x": 1}))));
        assert!(!eq(Lv::Num(1.0), Lv::Str("1")));
        assert!(lt(Lv::Str("10"), Lv::Str("9")).unwrap());
        assert_eq!(
            lt(Lv::Num(1.0), Lv::Str("2")).unwrap_err().to_string(),
            "attempt to compare number with string"
        );
        assert!(le(Lv::Num(2.0), Lv::Num(2.0)).unwrap());
        assert_eq!(arith(o.get("n").unwrap(), "n"), Ok(2.0));
        assert!(arith(Lv::Str("x"), "x").is_err());
        assert!(is_empty_table(Lv::of(&json!([null]))).unwrap());
        assert!(is_empty_table(Lv::Str("")).is_err());
        let l = json!(["b", "a"]);
        let keys: Vec<_> = sorted_keys(Lv::of(&l)).unwrap().into_iter().map(|k| k.0).collect();
        assert_eq!(keys, ["1", "2"]);
    }

    #[test]
    fn condition_rows_read_as_the_scripts_do() {
        let c = json!([{"type": "Ready", "status": "True", "message": "ok"}]);
        let hs = first_on(Lv::of(&c), READY).unwrap().unwrap();
        assert_eq!(hs, Hs::new("Healthy", "ok"));
        assert!(first_on(Lv::of(&json!([1])), READY).is_err());
        assert_eq!(first_on(Lv::of(&json!(["x"])), READY), Ok(None));
        let rows = [On::new("Ready", "True", "Healthy", Say::MessageOr("d"))];
        let c = json!([{"type": "Ready", "status": "True", "message": false}]);
        assert_eq!(first_on(Lv::of(&c), &rows).unwrap().unwrap(), Hs::new("Healthy", "d"));
    }
}
