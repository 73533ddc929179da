//! The order `pairs` and `next` walk a table in: the same on every run and in every state.
//!
//! LuaJIT walks a table's hash part in slot order, and it seeds its string hash per state, so
//! its own `next` gives the keys of one table in an order that changes from one process (or
//! state) to the next. The sandbox's `pairs` and `next` walk the keys in this order instead:
//!
//! 1. the array part, `1..n` (the integer keys from 1 up to the first missing one), as
//!    gopher-lua and LuaJIT both walk it;
//! 2. the other numbers, ascending;
//! 3. strings, byte by byte;
//! 4. `false`, then `true`;
//! 5. keys that have no order of their own (tables, functions, userdata, threads), by type
//!    and then by address: fixed for one evaluation, not from run to run.
//!
//! Collecting and sorting the keys is native work, charged to the evaluation's budget
//! (`cost.rs`) before the keys are handed out.

use std::cmp::Ordering;

use mlua::{Lua, Table, Value};

use super::Control;
use super::cost::{BYTES_PER_UNIT, CALL_UNITS, COMPARE_UNITS};

/// The class of a key, in the order classes are walked (the array part is class 0).
fn class(v: &Value) -> u8 {
    match v {
        Value::Integer(_) | Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Boolean(_) => 3,
        Value::Table(_) => 4,
        Value::Function(_) => 5,
        Value::Thread(_) => 6,
        _ => 7,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// A script's result table's pairs sorted by key in the order above, with no array part (every
/// number a key of class 2): the same table is read the same way on every run (`convert.rs`).
/// Each key is turned into its [`Key`] once.
pub(super) fn sorted_by_key(pairs: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
    let mut keyed: Vec<(Key, (Value, Value))> =
        pairs.into_iter().map(|p| (Key::of(&p.0, 0.0), p)).collect();
    keyed.sort_by(|a, b| a.0.order(&b.0));
    keyed.into_iter().map(|(_, p)| p).collect()
}

/// A key as sorted: its class, and its number, bytes or address. Owned, so that a table's
/// keys are sorted without holding a Lua reference to each (mlua keeps those on a stack of
/// some thousands of slots).
#[derive(Debug, PartialEq, PartialOrd)]
enum Key {
    Number(u8, f64),
    Text(Box<[u8]>),
    Bool(bool),
    Other(u8, usize),
}

impl Key {
    /// The key of `v`; `border` is the end of the array part (`1..=border`).
    fn of(v: &Value, border: f64) -> Key {
        match v {
            Value::String(s) => Key::Text(s.as_bytes().to_vec().into_boxed_slice()),
            Value::Boolean(b) => Key::Bool(*b),
            _ => match number(v) {
                Some(x) => {
                    let array = (1.0..=border).contains(&x) && x.fract() == 0.0;
                    Key::Number(u8::from(!array), x)
                }
                None => Key::Other(class(v), v.to_pointer() as usize),
            },
        }
    }

    fn order(&self, other: &Key) -> Ordering {
        // Derived `PartialOrd` orders the variants as declared; a key is never NaN.
        self.partial_cmp(other).unwrap_or(Ordering::Equal)
    }
}

/// The end of the array part of `t`: the largest n with `t[1]` .. `t[n]` all set.
fn border(t: &Table) -> mlua::Result<f64> {
    let mut n: i64 = 0;
    while !t.raw_get::<Value>(n + 1)?.is_nil() {
        n += 1;
    }
    Ok(n as f64)
}

/// What sorting `n` keys costs: the comparisons, each [`COMPARE_UNITS`] and a unit per
/// [`BYTES_PER_UNIT`] bytes of the longest string key.
fn sort_units(n: u64, longest: u64) -> u64 {
    n * u64::from(64 - n.leading_zeros()) * (COMPARE_UNITS + longest / BYTES_PER_UNIT)
}

/// `keys_of(t, with_pos, array_end)`: the keys of `t` in walking order as a sequence, and
/// with `with_pos` each key's place in it (what `next(t, k)` needs to go on from `k`). Given
/// `array_end` (`pairs`, which walked the array part `1..array_end` itself), only the keys
/// after the array part. Charged: the array part one unit per key, every other key three
/// units and its bytes (copied to be sorted), and the comparisons of the sort.
pub(super) fn keys_of(
    lua: &Lua,
    control: &Control,
    t: &Table,
    with_pos: bool,
    array_end: Option<i64>,
) -> mlua::Result<(Table, Option<Table>)> {
    let (border, array) = match array_end {
        Some(n) => (n as f64, 0),
        None => {
            let b = border(t)?;
            (b, b as usize)
        }
    };
    control.charge(CALL_UNITS + border as u64)?;
    let mut keys = Vec::new();
    let mut bytes = 0;
    let mut longest = 0;
    // Values are read as booleans: nothing is converted or referenced.
    t.for_each::<Value, bool>(|k, _| {
        let key = Key::of(&k, border);
        if let Key::Text(b) = &key {
            bytes += b.len() as u64;
            longest = longest.max(b.len() as u64);
        }
        if !matches!(key, Key::Number(0, _)) {
            keys.push(key);
        }
        Ok(())
    })?;
    let n = keys.len() as u64;
    control.charge(3 * n + bytes / BYTES_PER_UNIT + sort_units(n, longest))?;
    if keys.is_empty() && array == 0 {
        return Ok((lua.create_table()?, None));
    }
    keys.sort_unstable_by(Key::order);
    let seq = lua.create_table_with_capacity(array + keys.len(), 0)?;
    let pos =
        if with_pos { Some(lua.create_table_with_capacity(array, keys.len())?) } else { None };
    for i in 1..=array {
        seq.raw_set(i, i)?;
        if let Some(pos) = &pos {
            pos.raw_set(i, i)?;
        }
    }
    if keys.is_empty() {
        return Ok((seq, pos));
    }
    // A second pass puts each key at its place (found by a binary search), holding one
    // reference at a time.
    t.for_each::<Value, bool>(|k, _| {
        let key = Key::of(&k, border);
        if matches!(key, Key::Number(0, _)) {
            return Ok(());
        }
        let at = array + 1 + keys.binary_search_by(|probe| probe.order(&key)).unwrap_or_default();
        if let Some(pos) = &pos {
            pos.raw_set(k.clone(), at)?;
        }
        seq.raw_set(at, k)
    })?;
    Ok((seq, pos))
}

/// `first_of(t)`: the first key of `t` in walking order when `t[1]` is nil (so there is no
/// array part), or nil: one pass, a unit per key and a comparison each.
pub(super) fn first_of(control: &Control, t: &Table) -> mlua::Result<Value> {
    let mut first: Option<(Key, Value)> = None;
    let mut n = 0u64;
    let mut longest = 0;
    t.for_each::<Value, bool>(|k, _| {
        let key = Key::of(&k, 0.0);
        n += 1;
        if let Key::Text(b) = &key {
            longest = longest.max(b.len() as u64);
        }
        if first.as_ref().is_none_or(|(f, _)| key.order(f) == Ordering::Less) {
            first = Some((key, k));
        }
        Ok(())
    })?;
    control.charge(CALL_UNITS + n * (1 + COMPARE_UNITS + longest / BYTES_PER_UNIT))?;
    Ok(first.map_or(Value::Nil, |(_, k)| k))
}
