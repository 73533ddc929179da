//! The vocabulary of the built-in rules: an object as a health script sees it, and a health
//! as a script returns it.
//!
//! Argo CD hands a script the object converted to Lua tables: `null` members are gone, `null`
//! items of a list are dropped (the later ones move down), numbers are floats. The script then
//! reads it with Lua's rules, which the built-in rules must keep to give the same answer on
//! every input, not only on well-formed ones:
//!
//! - reading a field of a table that lacks it gives `nil`; of a string, `nil` too (strings
//!   index their library); of `nil`, a boolean or a number, an error ([`Lv::get`]);
//! - `ipairs` walks a list; on an object it yields nothing; on anything else it is an error
//!   ([`Lv::items`]);
//! - only `nil` and `false` are false ([`Lv::truthy`]);
//! - `==` never converts: the number `1` is not the string `"1"` ([`Lv::is`], [`Lv::is_num`]);
//! - `..` takes strings and numbers, numbers written as gopher-lua writes them, and fails on
//!   anything else ([`Lv::text`], [`number_text`]).
//!
//! [`Hs`] is the table a script returns, read back as Argo CD reads it: a `status` or
//! `message` that is not a string makes the whole health empty, a status that is not one of
//! the six codes is Unknown with `Lua returned an invalid health status`.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use crate::health::{HealthResult, HealthStatus, parts::ScriptOutput};

/// A value as a Lua health script sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lv<'a> {
    /// `nil`: absent, or JSON `null`.
    Nil,
    /// A boolean.
    Bool(bool),
    /// A number (Lua has one number type, a float).
    Num(f64),
    /// A string.
    Str(&'a str),
    /// A table: a JSON object or list.
    Table(&'a Value),
}

/// A script error: what the Lua script would have raised. The rule's health is then Unknown
/// with this text (Argo CD's own text names the script's line; the built-in names the field).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fault(pub(crate) String);

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Fault {
    /// A fault with a text of the rule's own.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Fault(message.into())
    }
}

impl<'a> Lv<'a> {
    /// The Lua value of a JSON value.
    pub(crate) fn of(v: &'a Value) -> Lv<'a> {
        match v {
            Value::Null => Lv::Nil,
            Value::Bool(b) => Lv::Bool(*b),
            Value::Number(n) => Lv::Num(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => Lv::Str(s),
            Value::Array(_) | Value::Object(_) => Lv::Table(v),
        }
    }

    /// Lua's type name: `nil`, `boolean`, `number`, `string`, `table`.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Lv::Nil => "nil",
            Lv::Bool(_) => "boolean",
            Lv::Num(_) => "number",
            Lv::Str(_) => "string",
            Lv::Table(_) => "table",
        }
    }

    /// `v.key`: the member of a table (`nil` when absent, and for a list); `nil` for a string;
    /// an error for `nil`, a boolean or a number.
    pub(crate) fn get(self, key: &str) -> Result<Lv<'a>, Fault> {
        match self {
            Lv::Table(Value::Object(m)) => Ok(m.get(key).map_or(Lv::Nil, Lv::of)),
            Lv::Table(_) | Lv::Str(_) => Ok(Lv::Nil),
            other => Err(Fault(format!(
                "attempt to index a {} value (field `{key}`)",
                other.type_name()
            ))),
        }
    }

    /// `v.<key>` for each of `keys` (sorted, as a map's members are), as [`Lv::get`] reads
    /// each: from a map in one walk of its members, not a lookup per key. Anything but a map
    /// fails as the script's first read of it, `v.<first>`, fails (a list or a string reads
    /// `nil` for every key).
    pub(crate) fn get_each<const N: usize>(
        self,
        first: &str,
        keys: [&str; N],
    ) -> Result<[Lv<'a>; N], Fault> {
        match self {
            Lv::Table(Value::Object(m)) => {
                Ok(crate::json::members_in_order(m, keys).map(|v| v.map_or(Lv::Nil, Lv::of)))
            }
            other => other.get(first).map(|_| [Lv::Nil; N]),
        }
    }

    /// `v.a.b.c`: [`Lv::get`] along a path of member names.
    pub(crate) fn path(self, keys: &[&str]) -> Result<Lv<'a>, Fault> {
        keys.iter().try_fold(self, |v, k| v.get(k))
    }

    /// `v[i]` for `i` from 1, on a list with its `null` items dropped; `nil` past the end and
    /// on an object or a string; an error for `nil`, a boolean or a number.
    pub(crate) fn at(self, i: usize) -> Result<Lv<'a>, Fault> {
        match self {
            Lv::Table(Value::Array(items)) => Ok(i
                .checked_sub(1)
                .and_then(|i| items.iter().filter(|v| !v.is_null()).nth(i))
                .map_or(Lv::Nil, Lv::of)),
            Lv::Table(_) | Lv::Str(_) => Ok(Lv::Nil),
            other => {
                Err(Fault(format!("attempt to index a {} value (index {i})", other.type_name())))
            }
        }
    }

    /// `ipairs(v)`: the items of a list, `null`s dropped; nothing for an object; an error for
    /// anything that is not a table.
    pub(crate) fn items(self) -> Result<impl Iterator<Item = Lv<'a>>, Fault> {
        match self {
            Lv::Table(v) => Ok(v
                .as_array()
                .map(|a| a.as_slice())
                .unwrap_or_default()
                .iter()
                .filter(|v| !v.is_null())
                .map(Lv::of)),
            other => Err(Fault(format!(
                "bad argument #1 to ipairs (table expected, got {})",
                other.type_name()
            ))),
        }
    }

    /// `pairs(v)` on an object: its members (in key order; Argo CD's order is Go's map order,
    /// which scripts must not depend on); the items of a list with their 1-based index as key;
    /// an error for anything that is not a table.
    pub(crate) fn members(self) -> Result<Vec<(Cow<'a, str>, Lv<'a>)>, Fault> {
        Ok(self.pairs()?.map(|(k, v)| (k.text(), v)).collect())
    }

    /// [`Lv::members`] without collecting them or writing the indexes of a list as text.
    pub(crate) fn pairs(self) -> Result<impl Iterator<Item = (Key<'a>, Lv<'a>)>, Fault> {
        let (members, items) = match self {
            Lv::Table(Value::Object(m)) => (Some(m), None),
            Lv::Table(Value::Array(a)) => (None, Some(a)),
            other => {
                return Err(Fault(format!(
                    "bad argument #1 to pairs (table expected, got {})",
                    other.type_name()
                )));
            }
        };
        let members = members
            .into_iter()
            .flatten()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (Key::Name(k), Lv::of(v)));
        let items = items
            .into_iter()
            .flatten()
            .filter(|v| !v.is_null())
            .enumerate()
            .map(|(i, v)| (Key::Index(i + 1), Lv::of(v)));
        Ok(members.chain(items))
    }

    /// `#v`: the items of a list (`null`s dropped), 0 for an object, the bytes of a string; an
    /// error otherwise.
    pub(crate) fn len(self) -> Result<usize, Fault> {
        match self {
            Lv::Table(Value::Array(a)) => Ok(a.iter().filter(|v| !v.is_null()).count()),
            Lv::Table(_) => Ok(0),
            Lv::Str(s) => Ok(s.len()),
            other => Err(Fault(format!("attempt to get length of a {} value", other.type_name()))),
        }
    }

    /// Lua truth: everything but `nil` and `false`.
    pub(crate) fn truthy(self) -> bool {
        !matches!(self, Lv::Nil | Lv::Bool(false))
    }

    /// `v == nil`.
    pub(crate) fn is_nil(self) -> bool {
        matches!(self, Lv::Nil)
    }

    /// `v == "s"`: true only for the string `s`.
    pub(crate) fn is(self, s: &str) -> bool {
        matches!(self, Lv::Str(x) if x == s)
    }

    /// `v == n`: true only for the number `n`.
    pub(crate) fn is_num(self, n: f64) -> bool {
        matches!(self, Lv::Num(x) if x == n)
    }

    /// `v == true` (or `false`): true only for that boolean.
    pub(crate) fn is_bool(self, b: bool) -> bool {
        matches!(self, Lv::Bool(x) if x == b)
    }

    /// The string, if `v` is one.
    pub(crate) fn str(self) -> Option<&'a str> {
        match self {
            Lv::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if `v` is one.
    pub(crate) fn num(self) -> Option<f64> {
        match self {
            Lv::Num(n) => Some(n),
            _ => None,
        }
    }

    /// `v` as an operand of `..`: a string as it is, a number as gopher-lua writes it; an error
    /// for anything else.
    pub(crate) fn text(self) -> Result<Cow<'a, str>, Fault> {
        match self {
            Lv::Str(s) => Ok(Cow::Borrowed(s)),
            Lv::Num(n) => Ok(Cow::Owned(number_text(n))),
            other => Err(Fault(format!("cannot perform concat operation on a {} value", {
                other.type_name()
            }))),
        }
    }

    /// `tostring(v)`: like [`Lv::text`], and `nil`, `true`, `false`, `table` for the others.
    pub(crate) fn to_text(self) -> Cow<'a, str> {
        match self {
            Lv::Nil => Cow::Borrowed("nil"),
            Lv::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
            Lv::Table(_) => Cow::Borrowed("table"),
            other => other.text().unwrap_or_default(),
        }
    }

    /// `tonumber(v)`: a number as it is, a string as gopher-lua's `tonumber` reads it
    /// ([`crate::script::gopher::tonumber`]); `None` otherwise.
    pub(crate) fn to_number(self) -> Option<f64> {
        match self {
            Lv::Num(n) => Some(n),
            Lv::Str(s) => crate::script::gopher::tonumber(s, None),
            _ => None,
        }
    }

    /// The first item of the list `v` whose `type` is `t` (the usual condition search: a
    /// `for _, c in ipairs(conditions) do if c.type == t ...`); `None` when there is none.
    /// Faults as [`Lv::items`] and [`Lv::get`] do.
    pub(crate) fn find_type(self, t: &str) -> Result<Option<Lv<'a>>, Fault> {
        for c in self.items()? {
            if c.get("type")?.is(t) {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }
}

/// `obj.status ~= nil and obj.status.conditions ~= nil`: the conditions, when `status` and
/// `status.conditions` are both set (either read with [`Lv::get`]'s faults).
pub(crate) fn status_conditions(obj: Lv<'_>) -> Result<Option<Lv<'_>>, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let conditions = status.get("conditions")?;
    Ok((!conditions.is_nil()).then_some(conditions))
}

/// `a or b`: `a` unless it is `nil` or `false`, then `b`.
pub(crate) fn or<'a>(a: Lv<'a>, b: Lv<'a>) -> Lv<'a> {
    if a.truthy() { a } else { b }
}

/// `a .. b .. c ...`: strings and numbers joined ([`Lv::text`]); the concat fault for any other
/// operand.
pub(crate) fn cat(parts: &[Lv<'_>]) -> Result<String, Fault> {
    let mut out = String::new();
    cat_into(&mut out, parts)?;
    Ok(out)
}

/// [`cat`] appended to `out`.
pub(crate) fn cat_into(out: &mut String, parts: &[Lv<'_>]) -> Result<(), Fault> {
    // Room for the text parts at once (a number's text is short: it grows if it must).
    let text: usize = parts.iter().map(|p| if let Lv::Str(s) = p { s.len() } else { 0 }).sum();
    out.reserve(text);
    for p in parts {
        match p {
            Lv::Str(s) => out.push_str(s),
            p => out.push_str(&p.text()?),
        }
    }
    Ok(())
}

/// A key of `pairs(v)` ([`Lv::pairs`]): a member's name, or a list item's 1-based index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key<'a> {
    /// A member of an object.
    Name(&'a str),
    /// An item of a list, from 1.
    Index(usize),
}

impl<'a> Key<'a> {
    /// The key as `tostring` writes it.
    pub(crate) fn text(self) -> Cow<'a, str> {
        match self {
            Key::Name(k) => Cow::Borrowed(k),
            Key::Index(i) => Cow::Owned(i.to_string()),
        }
    }

    /// [`Key::text`] appended to `out`, an index written without the formatting machinery.
    pub(crate) fn push_to(self, out: &mut String) {
        match self {
            Key::Name(k) => out.push_str(k),
            Key::Index(i) => crate::vocabulary::push_padded(out, i as u64, 0),
        }
    }
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Name(k) => f.write_str(k),
            Key::Index(i) => write!(f, "{i}"),
        }
    }
}

pub(crate) use crate::script::gopher::number_text;

/// Lua's `a == b`: the same type and value, never converting; a table only equals itself (the
/// same node of the object).
pub(crate) fn eq(a: Lv<'_>, b: Lv<'_>) -> bool {
    match (a, b) {
        (Lv::Nil, Lv::Nil) => true,
        (Lv::Bool(x), Lv::Bool(y)) => x == y,
        (Lv::Num(x), Lv::Num(y)) => x == y,
        (Lv::Str(x), Lv::Str(y)) => x == y,
        (Lv::Table(x), Lv::Table(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// The order of `a` and `b` for `<`, `<=`, `>`, `>=`: two numbers or two strings (byte by
/// byte); an error for anything else. `None` when a number is NaN (every comparison false).
fn order(a: Lv<'_>, b: Lv<'_>) -> Result<Option<std::cmp::Ordering>, Fault> {
    match (a, b) {
        (Lv::Num(x), Lv::Num(y)) => Ok(x.partial_cmp(&y)),
        (Lv::Str(x), Lv::Str(y)) => Ok(Some(x.as_bytes().cmp(y.as_bytes()))),
        _ => Err(Fault(format!("attempt to compare {} with {}", a.type_name(), b.type_name()))),
    }
}

/// Lua's `a < b`.
pub(crate) fn lt(a: Lv<'_>, b: Lv<'_>) -> Result<bool, Fault> {
    Ok(order(a, b)? == Some(std::cmp::Ordering::Less))
}

/// Lua's `a <= b`.
pub(crate) fn le(a: Lv<'_>, b: Lv<'_>) -> Result<bool, Fault> {
    Ok(matches!(order(a, b)?, Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)))
}

/// One field of a returned health table.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Field {
    /// Not set (or set to `nil`).
    #[default]
    Absent,
    /// A string.
    Text(String),
    /// A number, a boolean or a table: Go cannot decode it into the health's string field.
    Other,
}

impl From<Lv<'_>> for Field {
    fn from(v: Lv<'_>) -> Field {
        match v {
            Lv::Nil => Field::Absent,
            Lv::Str(s) => Field::Text(s.to_string()),
            _ => Field::Other,
        }
    }
}

impl From<&str> for Field {
    fn from(s: &str) -> Field {
        Field::Text(s.to_string())
    }
}

impl From<String> for Field {
    fn from(s: String) -> Field {
        Field::Text(s)
    }
}

impl From<Cow<'_, str>> for Field {
    fn from(s: Cow<'_, str>) -> Field {
        Field::Text(s.into_owned())
    }
}

/// The table a health script returns (`hs`), read back as Argo CD reads it ([`Hs::finish`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Hs {
    /// `hs.status`.
    pub(crate) status: Field,
    /// `hs.message`.
    pub(crate) message: Field,
    /// `hs.deletionMessage`.
    pub(crate) deletion_message: Field,
}

impl Hs {
    /// `return {status = status, message = message}`.
    pub(crate) fn new(status: impl Into<Field>, message: impl Into<Field>) -> Hs {
        Hs { status: status.into(), message: message.into(), deletion_message: Field::Absent }
    }

    /// `return {status = status}`: no message.
    pub(crate) fn status(status: impl Into<Field>) -> Hs {
        Hs { status: status.into(), ..Hs::default() }
    }

    /// `return {}` or `return nil`: Argo CD's empty health.
    pub(crate) fn empty() -> Hs {
        Hs::default()
    }

    /// The same with `deletionMessage` set.
    pub(crate) fn with_deletion_message(self, m: impl Into<Field>) -> Hs {
        Hs { deletion_message: m.into(), ..self }
    }

    /// The health Argo CD reads from this table: the empty health (`health: None`) for a table
    /// with nothing set or with a field that is not a string; Unknown with `Lua returned an
    /// invalid health status` for a status that is not one of the six codes (absent included,
    /// when something else is set); else the status and message.
    pub(crate) fn finish(self) -> ScriptOutput {
        let text = |f: Field| match f {
            Field::Absent => Some(String::new()),
            Field::Text(s) => Some(s),
            Field::Other => None,
        };
        if self == Hs::default() {
            return ScriptOutput::default();
        }
        let (Some(status), Some(message), Some(deletion)) =
            (text(self.status), text(self.message), text(self.deletion_message))
        else {
            return ScriptOutput::default();
        };
        match status.parse::<HealthStatus>() {
            Ok(s) => ScriptOutput::new(Some(HealthResult::new(s, message)), deletion),
            // Argo CD answers with a new health here: the table's deletionMessage is dropped.
            Err(_) => ScriptOutput::new(
                Some(HealthResult::new(
                    HealthStatus::Unknown,
                    "Lua returned an invalid health status",
                )),
                "",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_written_as_tostring_writes_them() {
        for k in [Key::Index(1), Key::Index(0), Key::Index(10), Key::Index(usize::MAX)]
            .into_iter()
            .chain([Key::Name(""), Key::Name("type")])
        {
            let mut out = String::from("x");
            k.push_to(&mut out);
            assert_eq!(out, format!("x{}", k.text()));
        }
    }

    #[test]
    fn get_each_is_get_one_by_one() {
        let keys = ["message", "reason", "status", "type"];
        for v in [
            json!({"lastTransitionTime": "t", "message": "m", "reason": null, "status": "True"}),
            json!({"type": "Ready", "zzz": 1, "Message": "upper"}),
            json!({"status": {"a": 1}, "type": ["x"], "reason": 2.5, "message": true}),
            json!({}),
            json!(["message"]),
            json!("text"),
            json!(null),
            json!(7),
            json!(false),
        ] {
            for first in ["type", "reason"] {
                // The script reads `first`, then the others (a fault can come only from the
                // first read of a value).
                let one_by_one: Result<Vec<_>, _> = Lv::of(&v)
                    .get(first)
                    .and_then(|_| keys.iter().map(|k| Lv::of(&v).get(k)).collect());
                let each = Lv::of(&v).get_each(first, keys).map(Vec::from);
                assert_eq!(format!("{each:?}"), format!("{one_by_one:?}"), "{v} {first}");
            }
        }
    }

    #[test]
    fn reading_follows_lua() {
        let v = json!({"status": {"conditions": [null, {"type": "Ready"}], "phase": "x", "n": 1}});
        let o = Lv::of(&v);
        let conds = o.path(&["status", "conditions"]).unwrap();
        assert_eq!(conds.len(), Ok(1));
        assert!(conds.at(1).unwrap().get("type").unwrap().is("Ready"));
        assert!(conds.find_type("Ready").unwrap().is_some());
        assert_eq!(o.path(&["status", "phase", "x"]), Ok(Lv::Nil));
        assert_eq!(
            o.path(&["status", "n", "x"]).unwrap_err().to_string(),
            "attempt to index a number value (field `x`)"
        );
        assert_eq!(
            o.path(&["spec", "x"]).unwrap_err().to_string(),
            "attempt to index a nil value (field `x`)"
        );
        assert!(o.get("status").unwrap().items().unwrap().next().is_none());
        assert!(Lv::Nil.items().is_err());
        assert!(!Lv::Num(1.0).is("1"));
        assert!(Lv::Num(0.0).truthy() && !Lv::Bool(false).truthy());
    }

    #[test]
    fn returned_tables_read_as_argo_cd_reads_them() {
        assert_eq!(Hs::empty().finish().health, None);
        assert_eq!(Hs::new("Healthy", Lv::Num(1.0)).finish().health, None);
        assert_eq!(Hs::new("Healthy", Lv::Nil).finish().health.unwrap().message, "");
        let bad = Hs::new(Field::Absent, "m").finish().health.unwrap();
        assert_eq!(bad.to_string(), "Unknown (Lua returned an invalid health status)");
        assert_eq!(Hs::new("healthy", "m").finish().health.unwrap().status, HealthStatus::Unknown);
        // An invalid status is a new health in Argo CD: the deletionMessage does not survive.
        let bad = Hs::new("Deleting", "m").with_deletion_message("being deleted").finish();
        assert_eq!(bad.deletion_message, "");
        let good = Hs::new("Progressing", "m").with_deletion_message("being deleted").finish();
        assert_eq!(good.deletion_message, "being deleted");
    }
}
