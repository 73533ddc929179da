//! The vocabulary of the built-in actions: an object as an action script holds and changes it,
//! and the table it returns, encoded as the Lua engine encodes it.
//!
//! Reading goes through the health rules' [`Lv`] (Lua's rules for absent fields, lists, truth
//! and text). Changing follows Lua too:
//!
//! - the object a script gets has its `null` members and list items gone and its numbers as
//!   Lua numbers ([`view`]);
//! - `t.k = v` needs `t` to be a table: on `nil`, a boolean, a number or a string it is an
//!   error; a list given a named field is a table the encoder refuses ([`set`]);
//! - the returned table is encoded as gopher-json encodes it: an empty table is `[]`, a number
//!   that is not finite is an error ([`encode`], [`number`]).
//!
//! The results then go through the same reading as a script's result
//! (`actions::result`), so a built-in and its script give the same bytes.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub(crate) use crate::health::kinds::lua::{Fault, Lv};

/// What an action reads besides the object: `actionParams` and the clock of `os.date`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call<'a> {
    /// `actionParams`: name → text.
    pub(crate) params: &'a BTreeMap<String, String>,
    /// `os.date`'s clock, in unix seconds.
    pub(crate) now: i64,
}

impl Call<'_> {
    /// `actionParams[name]`: the text, or `nil`.
    pub(crate) fn param(&self, name: &str) -> Lv<'_> {
        self.params.get(name).map_or(Lv::Nil, |s| Lv::Str(s))
    }

    /// `os.date(format)` on the call's clock (a leading `!` asks for UTC, the only zone).
    pub(crate) fn date(&self, format: &str) -> String {
        if format == STAMP_Z {
            return crate::vocabulary::second_stamp(self.now);
        }
        crate::vocabulary::os_date(format, self.now)
    }

    /// `text .. os.date(format)`, made once.
    pub(crate) fn after(&self, text: &str, format: &str) -> String {
        let mut out = String::with_capacity(text.len() + format.len() + 16);
        out.push_str(text);
        match crate::vocabulary::utc_stamp(self.now) {
            Some(stamp) if format == STAMP => out.push_str(&stamp),
            _ => crate::vocabulary::os_date_into(&mut out, format, self.now),
        }
        out
    }
}

/// The timestamp formats most actions write, with and without the zone letter, which
/// [`Call::date`] and [`Call::after`] write digit by digit (`crate::vocabulary::utc_stamp`).
const STAMP: &str = "!%Y-%m-%dT%X";
const STAMP_Z: &str = "!%Y-%m-%dT%XZ";

/// `path` with `key` after it, handed to `f` (without allocating for a short path).
fn with_key<R>(
    path: &[&'static str],
    key: &'static str,
    f: impl FnOnce(&[&'static str]) -> R,
) -> R {
    let mut buf = [""; 8];
    if path.len() < buf.len() {
        buf[..path.len()].copy_from_slice(path);
        buf[path.len()] = key;
        f(&buf[..=path.len()])
    } else {
        let mut at = path.to_vec();
        at.push(key);
        f(&at)
    }
}

/// Indexing as an action script indexes: Argo CD runs actions without the string library, so
/// a string has no fields and indexing one is an error (a health script's [`Lv::get`] reads
/// `nil` there); the rest is [`Lv::get`].
pub(crate) trait Field<'a> {
    /// `v.key`.
    fn field(self, key: &str) -> Result<Lv<'a>, Fault>;
    /// `v.a.b.c`.
    fn fields(self, keys: &[&str]) -> Result<Lv<'a>, Fault>;
}

impl<'a> Field<'a> for Lv<'a> {
    fn field(self, key: &str) -> Result<Lv<'a>, Fault> {
        match self {
            Lv::Str(_) => {
                Err(Fault::new(format!("attempt to index a string value (field `{key}`)")))
            }
            v => v.get(key),
        }
    }

    fn fields(self, keys: &[&str]) -> Result<Lv<'a>, Fault> {
        keys.iter().try_fold(self, |v, k| v.field(k))
    }
}

/// `v.<key>` for each of `keys` (sorted, as a map's members are), as [`Field::field`] reads
/// each: read from a map in one walk of its members, not a lookup per key.
pub(crate) fn fields_of<'a, const N: usize>(
    v: Lv<'a>,
    keys: [&str; N],
) -> Result<[Lv<'a>; N], Fault> {
    let Lv::Table(Value::Object(m)) = v else {
        let mut out = [Lv::Nil; N];
        for (o, k) in out.iter_mut().zip(keys) {
            *o = v.field(k)?;
        }
        return Ok(out);
    };
    Ok(crate::json::members_in_order(m, keys).map(|item| item.map_or(Lv::Nil, Lv::of)))
}

pub(crate) use crate::json::key_order;

/// A JSON value as a script holds it: `null` members and `null` list items gone (the later
/// items move down), numbers as the engine reads Lua numbers back.
pub(crate) fn view(v: &Value) -> Value {
    // Most objects are views already (no `null`s, integers Lua keeps): a copy that keeps the
    // maps as they are, without rebuilding them.
    if is_view(v) { v.clone() } else { rebuild_view(v) }
}

/// Whether [`view`] of `v` is `v` itself.
fn is_view(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().all(|v| !v.is_null() && is_view(v)),
        Value::Array(a) => a.iter().all(|v| !v.is_null() && is_view(v)),
        // Integers up to 2^53 are Lua numbers exactly; others are when Lua reads them back.
        Value::Number(n) => {
            n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53)
                || number(n.as_f64().unwrap_or(0.0)).is_ok_and(|l| l == *v)
        }
        _ => true,
    }
}

/// Whether `v` is its own [`view`] and reads back from its encoding as itself (no empty map
/// as a list's item, which the encoding turns into `[]`): where the members an action did not
/// change are the same in its result, so its patch is the patch of its changes alone.
pub(crate) fn plain(v: &Value) -> bool {
    plain_at(v, false)
}

/// [`plain`] for a list's item (`item`) or a map's member.
pub(crate) fn plain_at(v: &Value, item: bool) -> bool {
    match v {
        Value::Object(m) if m.is_empty() => !item,
        Value::Object(m) => m.values().all(|v| !v.is_null() && plain_at(v, false)),
        Value::Array(a) => a.iter().all(|v| !v.is_null() && plain_at(v, true)),
        other => is_view(other),
    }
}

/// A number as [`view`] holds it.
pub(crate) fn view_number(v: &Value) -> Value {
    match v {
        Value::Number(n) if !is_view(v) => number(n.as_f64().unwrap_or(0.0)).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

fn rebuild_view(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), rebuild_view(v)))
                .collect(),
        ),
        Value::Array(a) => {
            Value::Array(a.iter().filter(|v| !v.is_null()).map(rebuild_view).collect())
        }
        Value::Number(n) => number(n.as_f64().unwrap_or(0.0)).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// A Lua number as the engine encodes it: an integral value as an integer, any other finite
/// value as a float; `NaN` and the infinities are errors, as in gopher-json.
pub(crate) fn number(n: f64) -> Result<Value, Fault> {
    if n.is_nan() {
        return Err(Fault::new("json: unsupported value: NaN"));
    }
    if n.is_infinite() {
        let s = if n > 0.0 { "+Inf" } else { "-Inf" };
        return Err(Fault::new(format!("json: unsupported value: {s}")));
    }
    // The engine reads a number back as an integer when it is one in i64's range (`-0` stays
    // a float).
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && (-TWO_63..TWO_63).contains(&n) && !(n == 0.0 && n.is_sign_negative()) {
        return Ok(Value::from(n as i64));
    }
    Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
}

/// A value read from the object as the script's result holds it: `None` for `nil` (no member).
pub(crate) fn out(v: Lv<'_>) -> Result<Option<Value>, Fault> {
    Ok(match v {
        Lv::Nil => None,
        Lv::Bool(b) => Some(Value::Bool(b)),
        Lv::Num(n) => Some(number(n)?),
        Lv::Str(s) => Some(Value::String(s.to_string())),
        Lv::Table(t) => Some(encode(view(t))),
    })
}

/// A returned table as gopher-json encodes it: every empty table (`{}` or `[]`) as `[]`.
pub(crate) fn encode(mut v: Value) -> Value {
    encode_in_place(&mut v);
    v
}

/// [`encode`] where the value lies: only empty maps change, no map is rebuilt.
fn encode_in_place(v: &mut Value) {
    match v {
        Value::Object(m) if m.is_empty() => *v = Value::Array(Vec::new()),
        Value::Object(m) => m.values_mut().for_each(encode_in_place),
        Value::Array(a) => a.iter_mut().for_each(encode_in_place),
        _ => {}
    }
}

/// A table literal: its members, `nil` ones left out (`{}` when all are).
pub(crate) fn table<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    let mut m = Map::new();
    insert_all(&mut m, members);
    Value::Object(m)
}

/// Inserts `members` (`nil` ones left out) into `m`, one by one: a few members, where
/// collecting sorts a buffer first (in the order written: members written sorted each go
/// last, where nothing moves).
pub(crate) fn insert_all<const N: usize>(
    m: &mut Map<String, Value>,
    members: [(&str, Option<Value>); N],
) {
    for (k, v) in members {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    }
}

/// A copy of `shape` (a map or list) with its holes (`null` members and items) filled by
/// `values`, in the order of a walk of its members by name, depth first (a value filled in
/// is not walked). A hole left when `values` runs out stays `null`.
pub(crate) fn filled<const N: usize>(shape: &Value, values: [Value; N]) -> Value {
    /// A call per map or list, none per member.
    fn fill<'a, const N: usize>(
        items: impl Iterator<Item = &'a mut Value>,
        values: &mut std::array::IntoIter<Value, N>,
    ) {
        for v in items {
            match v {
                Value::Null => {
                    if let Some(x) = values.next() {
                        // A `null` owns nothing: no drop to run.
                        std::mem::forget(std::mem::replace(v, x));
                    }
                }
                Value::Object(m) => fill(m.values_mut(), values),
                Value::Array(a) => fill(a.iter_mut(), values),
                _ => {}
            }
        }
    }
    let mut copy = shape.clone();
    fill(std::iter::once(&mut copy), &mut values.into_iter());
    copy
}

/// Lua's `==`: equal scalars (`nil` equals `nil`); two tables from the object are never the
/// same table.
pub(crate) fn lua_eq(a: Lv<'_>, b: Lv<'_>) -> bool {
    match (a, b) {
        (Lv::Table(_), _) | (_, Lv::Table(_)) => false,
        (a, b) => a == b,
    }
}

/// `{}`: a new empty table.
pub(crate) fn empty() -> Value {
    Value::Object(Map::new())
}

/// What the setters write into: a table an action builds ([`Value`]) or the object it runs
/// on ([`Obj`]).
pub(crate) trait Table {
    /// `t.<path>` read as [`Field::fields`] reads it: right for `nil`, the type and scalars;
    /// a table of [`Obj`] whose members were changed is its source table (look inside with
    /// [`Obj::read`]).
    fn probe(&self, path: &[&str]) -> Result<Lv<'_>, Fault>;
    /// `t.<path>.key = value` where `t.<path>` is a table.
    fn put(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault>;
    /// [`set`]: `t.<path>.key = value`, an error where `t.<path>` is not a table.
    fn set_member(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        indexable(self.probe(path)?, key)?;
        self.put(path, key, value)
    }
    /// [`annotate`] with the text made.
    fn annotate_text(
        &mut self,
        meta: &[&'static str],
        name: &'static str,
        text: String,
    ) -> Result<(), Fault>
    where
        Self: Sized,
    {
        annotate_by_steps(self, meta, name, text)
    }
}

impl Table for Value {
    fn probe(&self, path: &[&str]) -> Result<Lv<'_>, Fault> {
        Lv::of(self).fields(path)
    }

    fn put(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        put_value(self, path, key, value)
    }

    fn set_member(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        // Down maps that hold each member of the path, one walk (`probe` reads the same
        // there); anything else is read as `probe` reads it, for its error.
        if let Some(t) = maps_along(self, path) {
            indexable(Lv::of(t), key)?;
            return put_member(t, key, value);
        }
        indexable(self.probe(path)?, key)?;
        put_value(self, path, key, value)
    }
}

/// The value at `path` where each step is a map holding the member.
fn maps_along<'v>(mut t: &'v mut Value, path: &[&str]) -> Option<&'v mut Value> {
    for k in path {
        t = t.as_object_mut()?.get_mut(*k)?;
    }
    Some(t)
}

/// [`Table::put`] into a value.
fn put_value(obj: &mut Value, path: &[&str], key: &str, value: Option<Value>) -> Result<(), Fault> {
    // The path holds tables all the way (anything else reads as nil and fails in `set`).
    let mut t = obj;
    for k in path {
        let Some(next) = t.get_mut(*k) else {
            return Err(Fault::new(format!("attempt to index a nil value (field `{k}`)")));
        };
        t = next;
    }
    put_member(t, key, value)
}

/// `t.key = value` where `t` is a table.
fn put_member(t: &mut Value, key: &str, value: Option<Value>) -> Result<(), Fault> {
    match (t, value) {
        (Value::Object(m), Some(v)) => {
            m.insert(key.to_string(), v);
        }
        (Value::Object(m), None) => {
            m.remove(key);
        }
        (Value::Array(_), None) => {}
        (t @ Value::Array(_), Some(v)) if t.as_array().is_some_and(Vec::is_empty) => {
            *t = Value::Object(Map::from_iter([(key.to_string(), v)]));
        }
        (Value::Array(_), Some(_)) => {
            return Err(Fault::new(format!(
                "cannot encode mixed or invalid key types (a list given the field `{key}`)"
            )));
        }
        _ => {}
    }
    Ok(())
}

/// `obj.<path>.key = value` (`None` is `nil`: the member goes). The table at `path` is read
/// with Lua's rules; it must be a table. A list with items given a named field is a table
/// gopher-json cannot encode, an error here (no built-in reads such a table again).
pub(crate) fn set(
    obj: &mut impl Table,
    path: &[&'static str],
    key: &'static str,
    value: Option<Value>,
) -> Result<(), Fault> {
    obj.set_member(path, key, value)
}

/// `t.key = ...` needs `t` (here `at`) to be a table.
fn indexable(at: Lv<'_>, key: &str) -> Result<(), Fault> {
    match at {
        Lv::Table(_) => Ok(()),
        other => Err(Fault::new(format!(
            "attempt to index a {} value (field `{key}`)",
            other.type_name()
        ))),
    }
}

/// `if obj.<path>.key == nil then obj.<path>.key = {} end`.
pub(crate) fn ensure(
    obj: &mut impl Table,
    path: &[&'static str],
    key: &'static str,
) -> Result<(), Fault> {
    if with_key(path, key, |at| obj.probe(at))?.is_nil() {
        set(obj, path, key, Some(empty()))?;
    }
    Ok(())
}

/// `obj.<path>.key = "text"`.
pub(crate) fn set_text(
    obj: &mut impl Table,
    path: &[&'static str],
    key: &'static str,
    text: impl Into<String>,
) -> Result<(), Fault> {
    set(obj, path, key, Some(Value::String(text.into())))
}

/// `obj.<path>.key = true` (or `false`).
pub(crate) fn set_bool(
    obj: &mut impl Table,
    path: &[&'static str],
    key: &'static str,
    b: bool,
) -> Result<(), Fault> {
    set(obj, path, key, Some(Value::Bool(b)))
}

/// `obj.<path>.annotations[name] = "text"` after making `annotations` a table when it is nil,
/// as most actions do (`path` leads to the metadata).
pub(crate) fn annotate(
    obj: &mut impl Table,
    meta: &[&'static str],
    name: &'static str,
    text: impl Into<String>,
) -> Result<(), Fault> {
    obj.annotate_text(meta, name, text.into())
}

/// [`annotate`] as the script does it: [`ensure`] the table, then [`set_text`] in it.
fn annotate_by_steps(
    obj: &mut impl Table,
    meta: &[&'static str],
    name: &'static str,
    text: String,
) -> Result<(), Fault> {
    ensure(obj, meta, "annotations")?;
    with_key(meta, "annotations", |at| set_text(obj, at, name, text))
}

/// `return obj`: the object as the action left it; reading a built-in's result settles its
/// empty tables as the engine's encoding would (`actions::result::read_builtin`).
pub(crate) fn done(obj: Obj<'_>) -> Result<Out, Fault> {
    Ok(Out::Object(obj.into_edits()))
}

/// What an action returns: the object it ran on, as its changes ([`Edits`]), or the one
/// object it creates (the list `{{operation = "create", resource = ...}}`), as JSON.
#[derive(Debug, PartialEq)]
pub(crate) enum Out {
    /// `return obj`.
    Object(Edits),
    /// `{{operation = "create", resource = <the value>}}`, the value encoded.
    Create(Value),
    /// [`Out::Create`] of an object whose `apiVersion` (of `group`), `kind` and
    /// `metadata.name` (a non-empty string, valid for the kind when `name_valid`) the action
    /// set itself and whose `metadata.namespace` is the source's, as [`out`] reads it: the
    /// create check need not read them back.
    Made {
        resource: Value,
        group: &'static str,
        kind: &'static str,
        /// `group/kind`.
        group_kind: &'static str,
        name_valid: bool,
    },
}

/// The object an action runs on: read where it lies (reading through [`Lv`] sees what a
/// script sees: `null` is `nil`, numbers are Lua's) and changed without a copy: each change is
/// kept by its path ([`Edits`]), over the source; only an action that looks inside a table it
/// changed gets a copy ([`view`]) with the changes applied, and goes on in it.
#[derive(Debug)]
pub(crate) struct Obj<'a> {
    source: &'a Value,
    edits: Edits,
    identity: Option<Identity<'a>>,
}

/// What finding an action's kind read of its object (`actions::run::identity`), kept for the
/// action so that it need not walk the same members again: of an object that is a map with a
/// `metadata` map, its `apiVersion`, `kind` and `metadata` members and the metadata's `name`
/// and `namespace` (`None`: missing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Identity<'a> {
    pub(crate) api_version: Option<&'a Value>,
    pub(crate) kind: Option<&'a Value>,
    pub(crate) metadata: &'a Map<String, Value>,
    pub(crate) name: Option<&'a Value>,
    pub(crate) namespace: Option<&'a Value>,
}

/// A member read as [`Field::field`] reads it from a map: `nil` when missing.
pub(crate) fn lv_of(v: Option<&Value>) -> Lv<'_> {
    v.map_or(Lv::Nil, Lv::of)
}

/// `m[key]` looked for from the map's end (its members are sorted by name): a step or two for
/// a name that sorts late among them, as `uid` does among a metadata's.
pub(crate) fn last_member<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    for (k, v) in m.iter().rev() {
        match key_order(k, key) {
            Ordering::Equal => return Some(v),
            Ordering::Less => return None,
            Ordering::Greater => {}
        }
    }
    None
}

/// The changes of an action to its object: by member, over the source's maps (`node`), or,
/// once a copy was needed, the whole object as the action left it (`whole`).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Edits {
    pub(crate) node: Node,
    pub(crate) whole: Option<Value>,
}

/// The changed members of one of the source's maps, sorted by name (a few: a list, not a
/// map; the names are the actions' own, not copied).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Node(Vec<(&'static str, Slot)>);

impl Node {
    /// The member `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Slot> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
    }

    /// Whether the member `key` is changed.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Whether no member is changed.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The changed members.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Slot> {
        self.0.iter().map(|(_, s)| s)
    }

    /// The changed members, sorted by name.
    pub(crate) fn into_sorted(self) -> std::vec::IntoIter<(&'static str, Slot)> {
        self.0.into_iter()
    }

    /// Where the member `key` is, or where it goes.
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| (*k).cmp(key))
    }

    /// The member `key`, made `Into` an unchanged map of the source when it was not changed.
    fn entry(&mut self, key: &'static str) -> &mut Slot {
        let i = match self.position(key) {
            Ok(i) => i,
            Err(i) => {
                self.insert(i, key, Slot::Into(Node::default()));
                i
            }
        };
        &mut self.0[i].1
    }

    /// Sets the member `key`.
    fn put(&mut self, key: &'static str, slot: Slot) {
        match self.position(key) {
            Ok(i) => self.0[i].1 = slot,
            Err(i) => self.insert(i, key, slot),
        }
    }

    /// A new member at `i`; the list made for two at first (most changes are one or two
    /// members), not grown from nothing.
    fn insert(&mut self, i: usize, key: &'static str, slot: Slot) {
        if self.0.capacity() == 0 {
            self.0 = Vec::with_capacity(2);
        }
        self.0.insert(i, (key, slot));
    }
}

/// One changed member.
#[derive(Debug, PartialEq)]
pub(crate) enum Slot {
    /// Set to a new value (its own members changed in it).
    Set(Value),
    /// Set to `nil`.
    Gone,
    /// The source's map, some of its members changed.
    Into(Node),
}

/// One step `k` of a walk through the changes from `at`, the source's member, and `node`, its
/// changes: the member reached, its changes, and `Some(true)` where a set member was reached,
/// `Some(false)` a removed one (both end the changes below them).
#[inline]
fn step<'s>(
    at: Lv<'s>,
    node: Option<&'s Node>,
    k: &str,
) -> Result<(Lv<'s>, Option<&'s Node>, Option<bool>), Fault> {
    Ok(match node.and_then(|n| n.get(k)) {
        Some(Slot::Set(v)) => (Lv::of(v), None, Some(true)),
        Some(Slot::Gone) => (Lv::Nil, None, Some(false)),
        Some(Slot::Into(n)) => (at.field(k)?, Some(n), None),
        None => (at.field(k)?, None, None),
    })
}

impl<'a> Obj<'a> {
    /// The object `source`, not changed yet, nothing read of it (for tests: a run hands over
    /// what finding the kind read, [`Obj::with_identity`]).
    #[cfg(test)]
    pub(crate) fn new(source: &'a Value) -> Self {
        Obj { source, edits: Edits::default(), identity: None }
    }

    /// The object `source`, not changed yet, with what was read of it to find its kind
    /// (`identity`, the members of `source` itself).
    pub(crate) fn with_identity(source: &'a Value, identity: Option<Identity<'a>>) -> Self {
        Obj { source, edits: Edits::default(), identity }
    }

    /// What was read of the source to find its kind, while nothing is changed (the members
    /// are the source's).
    pub(crate) fn identity(&self) -> Option<Identity<'a>> {
        if self.edits.whole.is_some() || !self.edits.node.is_empty() {
            return None;
        }
        self.identity
    }

    /// The object copied at once, as built-ins were handed it before `Obj` (for tests).
    #[cfg(test)]
    pub(crate) fn viewed(source: &'a Value) -> Self {
        let edits = Edits { node: Node::default(), whole: Some(view(source)) };
        Obj { source, edits, identity: None }
    }

    /// The object as a whole, for an action that reads it: the source while nothing changed;
    /// else the copy with the changes.
    pub(crate) fn lv(&mut self) -> Lv<'_> {
        if self.edits.whole.is_none() && self.edits.node.is_empty() {
            return Lv::of(self.source);
        }
        Lv::of(self.copied())
    }

    /// `obj.<path>`, changes included.
    pub(crate) fn read(&mut self, path: &[&str]) -> Result<Lv<'_>, Fault> {
        if self.edits.whole.is_none() && self.changed_within(path) {
            self.copied();
        }
        match &self.edits.whole {
            Some(w) => Lv::of(w).fields(path),
            None => self.walk(path),
        }
    }

    /// Whether the table at `path` has a changed member (reading it from the source would
    /// miss the change).
    fn changed_within(&self, path: &[&str]) -> bool {
        let mut node = &self.edits.node;
        for k in path {
            match node.get(k) {
                Some(Slot::Into(n)) => node = n,
                _ => return false,
            }
        }
        !node.is_empty()
    }

    /// The copy with the changes, made once.
    fn copied(&mut self) -> &Value {
        if self.edits.whole.is_none() {
            let mut whole = view(self.source);
            apply(&mut whole, std::mem::take(&mut self.edits.node));
            self.edits.whole = Some(whole);
        }
        self.edits.whole.as_ref().unwrap_or(self.source)
    }

    /// `obj.<path>` through the changes: a set member is its new value, a removed one `nil`,
    /// the rest the source's.
    fn walk(&self, path: &[&str]) -> Result<Lv<'_>, Fault> {
        let mut at = Lv::of(self.source);
        let mut node = Some(&self.edits.node);
        for k in path {
            (at, node, _) = step(at, node, k)?;
        }
        Ok(at)
    }

    /// The changes, for the result.
    pub(crate) fn into_edits(self) -> Edits {
        self.edits
    }
}

impl Table for Obj<'_> {
    fn probe(&self, path: &[&str]) -> Result<Lv<'_>, Fault> {
        match &self.edits.whole {
            Some(w) => Lv::of(w).fields(path),
            None => self.walk(path),
        }
    }

    fn put(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        // Kept by path while the path runs through the source's maps or into a new value;
        // a list of the source given a member (or anything odd) is changed in a copy.
        if self.edits.whole.is_none() && !self.by_path(path) {
            self.copied();
        }
        self.put_kept(path, key, value)
    }

    fn set_member(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        if self.edits.whole.is_none() {
            // `probe` and `by_path` in one walk.
            let (at, kept) = self.walk_keeping(path)?;
            indexable(at, key)?;
            if !kept {
                self.copied();
            }
            return self.put_kept(path, key, value);
        }
        indexable(self.probe(path)?, key)?;
        self.put(path, key, value)
    }

    /// On an object not changed yet whose `meta` and `annotations` are maps of the source (or
    /// `annotations` is missing or `null`), the changes [`annotate_by_steps`] keeps, written
    /// in one walk of the source and none of the changes; else that.
    fn annotate_text(
        &mut self,
        meta: &[&'static str],
        name: &'static str,
        text: String,
    ) -> Result<(), Fault> {
        let slot = match self.fresh_map(meta).map(|m| m.get("annotations")) {
            // `ensure` sets `{}`, then the name goes into it.
            Some(None | Some(Value::Null)) => {
                let mut a = Map::new();
                a.insert(name.to_string(), Value::String(text));
                Slot::Set(Value::Object(a))
            }
            Some(Some(Value::Object(_))) => {
                Slot::Into(Node(vec![(name, Slot::Set(Value::String(text)))]))
            }
            _ => return annotate_by_steps(self, meta, name, text),
        };
        self.edits.node = nested(meta, Node(vec![("annotations", slot)]));
        Ok(())
    }
}

/// `inner` as the changes at `path` of an object with no other change.
fn nested(path: &[&'static str], inner: Node) -> Node {
    path.iter().rev().fold(inner, |n, k| Node(vec![(*k, Slot::Into(n))]))
}

impl<'a> Obj<'a> {
    /// The source's map at `path`, when nothing is changed yet and each step of the path
    /// (the source included) is a map of the source: where changes are kept by path, and
    /// [`Field::fields`] of it reads the map.
    fn fresh_map(&self, path: &[&str]) -> Option<&'a Map<String, Value>> {
        if self.edits.whole.is_some() || !self.edits.node.is_empty() {
            return None;
        }
        let mut m = self.source.as_object()?;
        for k in path {
            m = m.get(*k)?.as_object()?;
        }
        Some(m)
    }

    /// [`set`] of each of `members` in the table at `path`, in turn: on an object not changed
    /// yet whose `path` leads through maps of the source, the changes are written at once,
    /// without a walk per member.
    pub(crate) fn set_members<const N: usize>(
        &mut self,
        path: &[&'static str],
        members: [(&'static str, Option<Value>); N],
    ) -> Result<(), Fault> {
        if self.fresh_map(path).is_none() {
            for (k, v) in members {
                set(self, path, k, v)?;
            }
            return Ok(());
        }
        self.edits.node = nested(path, node_of(members));
        Ok(())
    }

    /// On an object not changed yet whose `path` leads through maps of the source
    /// ([`Obj::fresh_map`]): `decide` reads the map there and gives the members to [`set`] in
    /// it, written at once as [`Obj::set_members`] writes them (`None`: nothing set). `false`,
    /// with nothing done and `decide` not called, on any other object: the caller then goes
    /// the script's way (`path` may be `nil` or not a table there).
    pub(crate) fn set_in_fresh_map<const N: usize>(
        &mut self,
        path: &[&'static str],
        decide: impl FnOnce(&'a Map<String, Value>) -> Option<[(&'static str, Option<Value>); N]>,
    ) -> bool {
        let Some(m) = self.fresh_map(path) else { return false };
        if let Some(members) = decide(m) {
            self.edits.node = nested(path, node_of(members));
        }
        true
    }
}

/// The changes of `members` set in one table: given sorted by name, the node as they come;
/// others put in place (a later one of the same name wins, as a later `set` does).
fn node_of<const N: usize>(members: [(&'static str, Option<Value>); N]) -> Node {
    if members.windows(2).all(|w| w[0].0 < w[1].0) {
        Node(members.into_iter().map(|(k, v)| (k, v.map_or(Slot::Gone, Slot::Set))).collect())
    } else {
        let mut inner = Node(Vec::with_capacity(N));
        for (k, v) in members {
            inner.put(k, v.map_or(Slot::Gone, Slot::Set));
        }
        inner
    }
}

impl Obj<'_> {
    /// Whether a change at `path` can be kept by path: each step is a map of the source (or
    /// a value set before), and the source is a map.
    fn by_path(&self, path: &[&'static str]) -> bool {
        let mut src = Some(self.source);
        let mut node = Some(&self.edits.node);
        if !self.source.is_object() {
            return false;
        }
        for k in path {
            match node.and_then(|n| n.get(k)) {
                Some(Slot::Set(_)) => return true,
                Some(Slot::Gone) => return false,
                Some(Slot::Into(n)) => node = Some(n),
                None => node = None,
            }
            src = src.and_then(|s| s.get(*k));
            if !src.is_some_and(Value::is_object) {
                return false;
            }
        }
        true
    }

    /// [`Obj::walk`] of `path` and [`Obj::by_path`] of it, in one walk (the source's members
    /// looked up once).
    fn walk_keeping(&self, path: &[&str]) -> Result<(Lv<'_>, bool), Fault> {
        let mut at = Lv::of(self.source);
        let mut node = Some(&self.edits.node);
        // `None` while the walk follows the source's maps: `by_path` has not decided.
        let mut kept = if self.source.is_object() { None } else { Some(false) };
        for k in path {
            let set;
            (at, node, set) = step(at, node, k)?;
            if let Some(set) = set {
                kept.get_or_insert(set);
            }
            if kept.is_none() && !matches!(at, Lv::Table(Value::Object(_))) {
                kept = Some(false);
            }
        }
        Ok((at, kept.unwrap_or(true)))
    }

    /// [`Table::put`] once the copy is made if it had to be.
    fn put_kept(
        &mut self,
        path: &[&'static str],
        key: &'static str,
        value: Option<Value>,
    ) -> Result<(), Fault> {
        if let Some(w) = &mut self.edits.whole {
            return put_value(w, path, key, value);
        }
        let mut node = &mut self.edits.node;
        for (i, k) in path.iter().enumerate() {
            match node.entry(k) {
                Slot::Set(v) => return put_value(v, &path[i + 1..], key, value),
                Slot::Into(n) => node = n,
                Slot::Gone => {
                    return Err(Fault::new(format!("attempt to index a nil value (field `{k}`)")));
                }
            }
        }
        node.put(key, value.map_or(Slot::Gone, Slot::Set));
        Ok(())
    }
}

/// Applies changes kept by path to (a copy of) their source.
fn apply(v: &mut Value, node: Node) {
    let Value::Object(m) = v else { return };
    for (k, slot) in node.0 {
        match slot {
            Slot::Set(new) => {
                m.insert(k.to_string(), new);
            }
            Slot::Gone => {
                m.remove(k);
            }
            Slot::Into(n) => {
                if let Some(member) = m.get_mut(k) {
                    apply(member, n);
                }
            }
        }
    }
}

impl Edits {
    /// The object as the action left it, from its `source`.
    pub(crate) fn into_value(self, source: &Value) -> Value {
        if let Some(w) = self.whole {
            return w;
        }
        let mut whole = view(source);
        apply(&mut whole, self.node);
        whole
    }
}

/// Lua's `deepCopy` of the create actions: a copy of a table without its empty tables (an
/// empty table copies as `nil`; a table whose members all copy as `nil` is an empty table); a
/// list left with a gap is an error, as gopher-json refuses a sparse array. Anything that is
/// not a table is itself.
pub(crate) fn deep_copy(v: Lv<'_>) -> Result<Option<Value>, Fault> {
    let Lv::Table(t) = v else { return out(v) };
    // A clone builds the maps without looking each key up; what does not copy as itself is
    // then put right where it lies, in one walk (no map rebuilt member by member, no subtree
    // walked once per table above it).
    let mut copy = t.clone();
    Ok(if settle_copy(&mut copy)? { Some(copy) } else { None })
}

/// [`deep_copy`] of the table (or value) `v`, made where it lies: `false` when it copies as
/// `nil` (`v` is then to be dropped). The same walk, and so the same first error, as
/// [`copy_members`]: members in order, a list's items before its gap.
fn settle_copy(v: &mut Value) -> Result<bool, Fault> {
    // One walk per table: whether any member is set (none: `nil`) is told on the way.
    match v {
        Value::Object(m) => {
            let (mut any, mut gone) = (false, false);
            for item in m.values_mut() {
                if item.is_null() {
                    gone = true;
                    continue;
                }
                any = true;
                // A member that copies as `nil` is marked `null` (a kept one never is).
                if !settle_copy(item)? {
                    (*item, gone) = (Value::Null, true);
                }
            }
            if !any {
                return Ok(false);
            }
            if gone {
                m.retain(|_, item| !item.is_null());
            }
            if m.is_empty() {
                *v = Value::Array(Vec::new());
            }
            Ok(true)
        }
        Value::Array(a) => {
            let (mut any, mut gap, mut sparse, mut gone) = (false, false, false, false);
            for item in a.iter_mut() {
                if item.is_null() {
                    gone = true;
                    continue;
                }
                any = true;
                if settle_copy(item)? {
                    sparse |= gap;
                } else {
                    (gap, gone) = (true, true);
                    *item = Value::Null;
                }
            }
            if !any {
                return Ok(false);
            }
            if sparse {
                return Err(Fault::new("cannot encode sparse array"));
            }
            if gone {
                a.retain(|item| !item.is_null());
            }
            Ok(true)
        }
        other if is_view(other) => Ok(true),
        other => match out(Lv::of(other))? {
            Some(x) => {
                *other = x;
                Ok(true)
            }
            None => Ok(false),
        },
    }
}

/// [`deep_copy`] of the table `t`, member by member: the general way, which
/// [`settle_copy`] follows (`deep_copy_drops_empty_tables`).
#[cfg(test)]
fn copy_members(t: &Value) -> Result<Option<Value>, Fault> {
    match t {
        Value::Object(m) => {
            if m.values().all(Value::is_null) {
                return Ok(None);
            }
            let mut copy = Map::new();
            for (k, item) in m {
                if let Some(c) = copy_of(item)? {
                    copy.insert(k.clone(), c);
                }
            }
            // The members are encoded already: only this table may be empty.
            Ok(Some(if copy.is_empty() { Value::Array(Vec::new()) } else { Value::Object(copy) }))
        }
        Value::Array(a) => {
            if a.iter().all(Value::is_null) {
                return Ok(None);
            }
            // Every item is copied first (an item's error comes before the gap's); a gap
            // (an item copied as `nil`) before a later item is a sparse array.
            let (mut list, mut gap, mut sparse) = (Vec::with_capacity(a.len()), false, false);
            for item in a.iter().filter(|v| !v.is_null()) {
                match copy_of(item)? {
                    Some(c) => {
                        sparse |= gap;
                        list.push(c);
                    }
                    None => gap = true,
                }
            }
            if sparse {
                return Err(Fault::new("cannot encode sparse array"));
            }
            // The items are encoded already.
            Ok(Some(Value::Array(list)))
        }
        _ => out(Lv::of(t)),
    }
}

/// JSON values of every type, empty and not, for the tests that compare a shortcut with the
/// general way on each (as a member, a patch's side or a list item).
#[cfg(test)]
pub(crate) fn values_of_every_type() -> Vec<Value> {
    use serde_json::json;
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1.5),
        json!(""),
        json!("x"),
        json!([]),
        json!([1]),
        json!([1, "a"]),
        json!({}),
        json!({"a": 1}),
        json!({"a": 1, "b": [2]}),
        json!({"a": 2, "c": null}),
    ]
}

/// [`copy_members`] of a table, [`out`] of anything else.
#[cfg(test)]
fn copy_of(v: &Value) -> Result<Option<Value>, Fault> {
    match v {
        Value::Object(_) | Value::Array(_) => copy_members(v),
        other => out(Lv::of(other)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn changes_follow_lua() {
        let mut o = view(&json!({"a": {"b": null, "l": [1, null, 2.5], "e": []}, "s": "x"}));
        assert_eq!(o, json!({"a": {"l": [1, 2.5], "e": []}, "s": "x"}));
        set_text(&mut o, &["a", "e"], "k", "v").unwrap();
        assert_eq!(o["a"]["e"], json!({"k": "v"}));
        assert!(set_text(&mut o, &["a", "l"], "k", "v").is_err());
        assert!(set_text(&mut o, &["s"], "k", "v").is_err());
        assert!(set_text(&mut o, &["z"], "k", "v").is_err());
        annotate(&mut o, &["m"], "x", "y").unwrap_err();
        ensure(&mut o, &[], "m").unwrap();
        annotate(&mut o, &["m"], "x", "y").unwrap();
        assert_eq!(encode(json!({"a": {}, "b": [{}]})), json!({"a": [], "b": [[]]}));
        assert_eq!(number(3.0).unwrap(), json!(3));
        assert_eq!(number(0.5).unwrap(), json!(0.5));
        assert_eq!(number(-0.0).unwrap(), json!(-0.0));
        assert_eq!(number(1e20).unwrap(), json!(1e20));
        assert!(number(f64::INFINITY).is_err());
    }

    #[test]
    fn key_order_is_str_order() {
        let names = ["", "a", "ab", "b", "B", "name", "namespace", "metadata", "é", "\u{7f}"];
        for a in names {
            for b in names {
                assert_eq!(key_order(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn fields_in_one_walk_are_fields_one_by_one() {
        let keys = ["a", "b", "bb", "name", "uid"];
        for v in [
            json!({"a": 1, "b": null, "ba": 2, "bb": "x", "c": {}, "name": [1], "uid": true}),
            json!({"A": 1, "bb": 3, "z": 4}),
            json!({"name": "n"}),
            json!({}),
            json!([1, 2]),
            json!("s"),
            json!(null),
            json!(3),
        ] {
            let one = fields_of(Lv::of(&v), keys);
            let each: Result<Vec<_>, _> = keys.iter().map(|k| Lv::of(&v).field(k)).collect();
            assert_eq!(one.map(Vec::from), each, "{v}");
        }
    }

    #[test]
    fn a_view_is_copied_as_it_is_and_anything_else_rebuilt() {
        for v in [
            json!({"a": [1, 2.5, "x", {"b": true}], "c": {}, "d": []}),
            json!({"a": {"b": null}}),
            json!([1, null, 2]),
            json!({"n": 1.0, "m": -0.0, "big": 9_007_199_254_740_993_i64, "u": u64::MAX}),
            json!({"e": 1e300, "f": 9_007_199_254_740_992_i64, "g": 1_i64 << 60}),
        ] {
            assert_eq!(view(&v), rebuild_view(&v), "{v}");
            assert_eq!(is_view(&v), rebuild_view(&v) == v, "{v}");
        }
    }

    #[test]
    fn deep_copy_drops_empty_tables() {
        let v = json!({"a": {}, "b": {"c": {}}, "d": [1, {}], "e": "x"});
        assert_eq!(deep_copy(Lv::of(&v)).unwrap(), Some(json!({"b": [], "d": [1], "e": "x"})));
        assert!(deep_copy(Lv::of(&json!([{}, 1]))).is_err());
        assert_eq!(deep_copy(Lv::of(&json!({}))).unwrap(), None);
        assert_eq!(deep_copy(Lv::of(&json!([null, 1, {}, null]))).unwrap(), Some(json!([1])));
        assert_eq!(deep_copy(Lv::of(&json!([null, {}]))).unwrap(), Some(json!([])));
        assert!(deep_copy(Lv::of(&json!([1, {}, 2]))).is_err());
        // Copied whole where it copies as itself, the same as member by member.
        let n = 9_007_199_254_740_993_i64;
        for (v, whole) in [
            (json!({"a": {"b": [1, "x", true, {"c": 2.5}]}, "n": 1_i64 << 53}), true),
            (json!({"a": {"b": [1, null]}}), false),
            (json!({"a": [[1], {"b": {"c": []}}]}), false),
            (json!({"a": {"e": {}}, "b": 1}), false),
            (json!({"f": 1.0, "n": n}), false),
        ] {
            // Copied whole: the copy is the value itself.
            assert_eq!(deep_copy(Lv::of(&v)).ok() == Some(Some(v.clone())), whole, "{v}");
            assert_eq!(deep_copy(Lv::of(&v)).ok(), copy_members(&v).ok(), "{v}");
        }
        // Made where it lies, the same as member by member: values and errors, on tables
        // nested in every way from parts that copy as themselves, as `nil`, as `[]`, as
        // rebuilt numbers and as errors.
        let parts = [
            json!(null),
            json!({}),
            json!([]),
            json!("x"),
            json!(1.0),
            json!(n),
            json!({"a": {}}),
            json!([null, {}]),
            json!([{}, 2]),
            json!({"k": [1, {"z": null}]}),
            json!([[], [3]]),
        ];
        let mut compared = 0;
        for a in &parts {
            for b in &parts {
                for v in [
                    json!({"a": a, "b": b}),
                    json!([a, b]),
                    json!([a, null, b, {}]),
                    json!({"l": [a, b], "m": {"x": a, "y": [b]}}),
                    json!([{"p": a}, [b, a]]),
                ] {
                    assert_eq!(deep_copy(Lv::of(&v)), copy_members(&v), "{v}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, parts.len() * parts.len() * 5);
    }

    /// Objects whose members at `metadata`, `spec.template.metadata` and `status` are of every
    /// type, with and without the annotations and the members the shortcuts set.
    fn shapes() -> Vec<Value> {
        let members = [
            json!(null),
            json!("s"),
            json!(1.5),
            json!(true),
            json!([]),
            json!(["x"]),
            json!({}),
            json!({"a": 1, "phase": "old", "zz": null}),
        ];
        let mut objects = vec![json!(null), json!("x"), json!([]), json!({})];
        for m in &members {
            let mut with = vec![m.clone()];
            if m.is_object() {
                with.extend(members.iter().map(|a| json!({"annotations": a, "name": "n"})));
                with.push(json!({"annotations": {"k": "v", "r/at": "old"}}));
            }
            for w in with {
                objects.push(json!({"metadata": w, "status": w, "kind": "K"}));
                objects.push(json!({"spec": {"template": {"metadata": w}}, "status": w}));
                objects.push(json!({"spec": w, "metadata": {"name": "n"}}));
            }
        }
        objects
    }

    /// [`Obj`]'s [`annotate`] keeps the changes (and raises the errors) of
    /// [`annotate_by_steps`], the script's steps, on every shape and on an object changed
    /// before.
    #[test]
    fn annotated_at_once_is_annotated_by_steps() {
        let mut compared = 0;
        for source in &shapes() {
            for meta in [&["metadata"][..], &["spec", "template", "metadata"], &[]] {
                for changed_before in [false, true] {
                    let run = |by_steps: bool| {
                        let mut obj = Obj::new(source);
                        if changed_before {
                            set(&mut obj, &[], "kind", Some(json!("J")))?;
                        }
                        if by_steps {
                            annotate_by_steps(&mut obj, meta, "r/at", "now".into())?;
                        } else {
                            annotate(&mut obj, meta, "r/at", "now")?;
                        }
                        done(obj)
                    };
                    assert_eq!(run(false), run(true), "{source} {meta:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 150, "{compared}");
    }

    /// [`Obj::set_members`] keeps the changes (and raises the errors) of a [`set`] per member,
    /// on every shape, with members set twice or to `nil`, and on an object changed before.
    #[test]
    fn members_set_at_once_are_set_one_by_one() {
        let members = || {
            [
                ("targetPrimary", Some(json!("p-2"))),
                ("phase", Some(json!("Switchover"))),
                ("a", None),
                ("zz", Some(json!({"x": []}))),
                ("phase", Some(json!(2))),
                ("q", None),
            ]
        };
        // Given sorted (the node as they come).
        let sorted = || [("a", None), ("phase", Some(json!("S"))), ("z", Some(json!([1])))];
        let mut compared = 0;
        for source in &shapes() {
            for path in [&["status"][..], &["spec", "template", "metadata"], &[]] {
                for changed_before in [false, true] {
                    let run = |one_by_one: bool| {
                        let mut obj = Obj::new(source);
                        if changed_before {
                            set(&mut obj, &[], "kind", Some(json!("J")))?;
                        }
                        if one_by_one {
                            for (k, v) in members().into_iter().chain(sorted()) {
                                set(&mut obj, path, k, v)?;
                            }
                        } else {
                            obj.set_members(path, members())?;
                            obj.set_members(path, sorted())?;
                        }
                        done(obj)
                    };
                    assert_eq!(run(false), run(true), "{source} {path:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 150, "{compared}");
    }

    /// [`Call::date`] and [`Call::after`] of the stamp formats are `os_date`'s
    /// ([`crate::vocabulary::stamp_samples`]).
    #[test]
    fn stamp_is_os_date() {
        let params = BTreeMap::new();
        let same = |now: i64| {
            let call = Call { params: &params, now };
            for f in [STAMP, STAMP_Z] {
                let slow = crate::vocabulary::os_date(f, now);
                assert_eq!(call.date(f), slow, "{now} {f}");
                assert_eq!(call.after("at: ", f), format!("at: {slow}"), "{now} {f}");
            }
        };
        crate::vocabulary::stamp_samples(same, 0x853c_49e6_748f_ea9b, 10_000);
    }
}
