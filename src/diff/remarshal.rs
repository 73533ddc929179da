//! Type-driven canonicalisation of built-in kinds (gitops-engine pkg/diff/diff.go `remarshal`) and
//! the known-types normaliser (Argo CD 3.6.2 util/argo/normalizers/knowntypes_normalizer.go):
//! quantities, int-or-string, durations, omitempty.
//!
//! Both run a "typed round trip": the JSON is decoded against the schema the way Go's
//! `encoding/json` decodes into the k8s.io/api structs and encoded back. The round trip is
//! modelled directly on JSON: fields are matched by name (then case-insensitively, as Go
//! does), scalars are checked against their Go type, custom types are canonicalised
//! (Quantity, IntOrString, base64 `[]byte`), and `omitempty` drops `""`, `false`, `0`,
//! `null` and empty maps and lists unless the Go field is a pointer (structs are never
//! dropped). Deliberate simplification: absent non-`omitempty` fields are not synthesised
//! as zero values (the outputs are only ever compared after `RemoveMapFields` or as two
//! sides that are both normalised the same way).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::error::PatchFailure;
use super::merge_patch::retain_map_fields;
use super::quantity::{Quantity, canonical_quantity};
use crate::config::KnownTypeField;
use crate::schema::{self, Scalar, Shape, TypeRef};

/// Whether unknown fields abort the decode (`DisallowUnknownFields`) or are dropped.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decode {
    /// Unknown fields are an error.
    Strict,
    /// Unknown fields are dropped silently.
    Lenient,
}

/// Argo CD's `remarshal`: canonicalises a built-in object through its type; returns the plain
/// JSON round trip when the object does not strictly decode as its type.
pub(crate) fn remarshal(obj: &Value) -> Value {
    let mut v = obj.clone();
    remarshal_in_place(&mut v);
    v
}

/// [`remarshal`] on the working copy itself, in one walk: integral floats become integers, and a
/// built-in object is checked against its type and canonicalised field by field where it lies
/// (omitted fields removed, scalars rewritten) in the same pass, each change logged with what
/// it replaced. An object that turns out not to strictly decode gets its changes undone and
/// keeps the plain round trip. Only when a field is spelt in another case than its Go name
/// (`encoding/json` folds case) is the copying round trip used, since the renamed field moves.
pub(crate) fn remarshal_in_place(obj: &mut Value) {
    let Some(t) = schema::gvk_of(obj)
        .filter(|&(g, v, k)| schema::is_builtin(g, v, k))
        .and_then(|(g, v, k)| schema::lookup(g, v, k))
    else {
        integral_floats(obj);
        return;
    };
    let mut log = Vec::new();
    let Err(unfit) = check_and_canonicalize(obj, t, &mut log) else { return };
    // Rare: undo the changes (latest first), then finish the integral floats the walk left.
    for undo in log.into_iter().rev() {
        undo.apply(obj);
    }
    integral_floats(obj);
    if let Unfit::Folded = unfit
        && let Ok(mut typed) = typed_round_trip(obj, t, Decode::Strict, "")
    {
        retain_map_fields(obj, &mut typed);
        *obj = typed;
    }
}

/// One step of a path from the object's root.
enum Step {
    Key(String),
    Index(usize),
}

/// A change [`check_and_canonicalize`] made: the value that stood at `path` (its steps from the
/// changed value up to the root, appended on the way out; a removed field is put back).
struct Undo {
    path: Vec<Step>,
    old: Value,
}

impl Undo {
    fn apply(self, root: &mut Value) {
        let mut steps = self.path.into_iter().rev();
        let Some(last) = steps.next_back() else {
            *root = self.old;
            return;
        };
        let mut parent = root;
        for step in steps {
            parent = match (step, parent) {
                (Step::Key(k), Value::Object(m)) => m.get_mut(&k).expect("an undo path exists"),
                (Step::Index(i), Value::Array(l)) => &mut l[i],
                _ => unreachable!("an undo path follows the walk"),
            };
        }
        match (last, parent) {
            (Step::Key(k), Value::Object(m)) => {
                m.insert(k, self.old);
            }
            (Step::Index(i), Value::Array(l)) => l[i] = self.old,
            _ => unreachable!("an undo path follows the walk"),
        }
    }
}

/// Appends `step` to the paths of the changes logged since `start` (made below that step).
fn below_step(log: &mut [Undo], start: usize, step: impl Fn() -> Step) {
    for u in &mut log[start..] {
        u.path.push(step());
    }
}

/// In one walk: the integral floats of `v` become integers, `v` is checked to strictly decode
/// as `t` (what [`strict_check`] decides, the first unfit field in the same order) and is
/// canonicalised as [`canonicalize`] would, every change logged in `log`. On an error the walk
/// stops where it is; the caller undoes the log.
fn check_and_canonicalize(v: &mut Value, t: TypeRef, log: &mut Vec<Undo>) -> Result<(), Unfit> {
    match (t.shape(), v) {
        (Shape::Untyped, v) => {
            integral_floats(v);
            Ok(())
        }
        (Shape::Struct, v @ Value::Null) => {
            // The zero struct of a null that is not a pointer (see `typed_round_trip_cow`).
            if !t.is_pointer() {
                let old = std::mem::replace(v, Value::Object(Map::new()));
                log.push(Undo { path: Vec::new(), old });
            }
            Ok(())
        }
        (Shape::List | Shape::Map, Value::Null) => Ok(()),
        (Shape::Struct, Value::Object(m)) => {
            // Walked with `iter_mut`, which costs less than `retain`'s extracting walk; the
            // fields `omitempty` drops (rare) are removed after it, failed or not.
            let mut omit = Vec::new();
            let mut r = Ok(());
            for (k, fv) in m.iter_mut() {
                match field_in_place(k, fv, t, log) {
                    Ok(true) => {}
                    Ok(false) => omit.push(k.clone()),
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
            }
            for k in &omit {
                m.remove(k);
            }
            r
        }
        (Shape::List, Value::Array(l)) => {
            let Some(it) = t.items() else {
                l.iter_mut().for_each(integral_floats);
                return Ok(());
            };
            for (i, e) in l.iter_mut().enumerate() {
                let start = log.len();
                let r = element(e, it, log);
                if log.len() > start {
                    below_step(log, start, || Step::Index(i));
                }
                r?;
            }
            Ok(())
        }
        (Shape::Map, Value::Object(m)) => {
            let Some(vt) = t.values() else {
                m.values_mut().for_each(integral_floats);
                return Ok(());
            };
            for (k, e) in m.iter_mut() {
                let start = log.len();
                let r = element(e, vt, log);
                if log.len() > start {
                    below_step(log, start, || Step::Key(k.clone()));
                }
                r?;
            }
            Ok(())
        }
        (Shape::Struct | Shape::List | Shape::Map, _) => Err(Unfit::Fails),
        (Shape::Scalar(s), v) => scalar_in_place(v, s, log),
    }
}

/// One field of a struct in [`check_and_canonicalize`]: whether it stays (an omitted field
/// goes, logged). The changes below it get the field's step; a scalar already at rest that
/// stays takes no call, no log and no step.
fn field_in_place(k: &str, fv: &mut Value, t: TypeRef, log: &mut Vec<Undo>) -> Result<bool, Unfit> {
    let Some(ft) = t.field(k) else {
        return Err(if t.field_folded(k).is_some() { Unfit::Folded } else { Unfit::Fails });
    };
    // A scalar that `omitempty` drops takes the general way, which logs it for an undo.
    if let Shape::Scalar(s) = ft.shape()
        && scalar_at_rest(fv, s)
        && !omitted(fv, ft)
    {
        return Ok(true);
    }
    let start = log.len();
    let r = check_and_canonicalize(fv, ft, log);
    let keep = match r {
        Ok(()) if omitted(fv, ft) => {
            log.push(Undo { path: Vec::new(), old: std::mem::take(fv) });
            false
        }
        _ => true,
    };
    if log.len() > start {
        below_step(log, start, || Step::Key(k.to_owned()));
    }
    r.map(|()| keep)
}

/// A scalar of [`check_and_canonicalize`]: integral floats become integers, the value must fit
/// its type, and one the round trip changes is replaced and logged.
fn scalar_in_place(v: &mut Value, s: Scalar, log: &mut Vec<Undo>) -> Result<(), Unfit> {
    integral_floats(v);
    if !scalar_changes(v, s) {
        return if scalar_fits(v, s) { Ok(()) } else { Err(Unfit::Fails) };
    }
    // Where the round trip may change the value it accepts exactly what
    // `scalar_fits` accepts; a value already canonical is left and not logged.
    let c = scalar_round_trip(v, s, "").map_err(|_| Unfit::Fails)?;
    if c != *v {
        log.push(Undo { path: Vec::new(), old: std::mem::replace(v, c) });
    }
    Ok(())
}

/// Whether [`scalar_in_place`] leaves `v` as it is and accepts it, read at a glance: the common
/// scalars of an object (a string as a string, a boolean, an integer as an integer or a
/// number), so that the walk neither calls into them nor logs them.
fn scalar_at_rest(v: &Value, s: Scalar) -> bool {
    match (s, v) {
        (Scalar::String | Scalar::IntOrString, Value::String(_))
        | (Scalar::Boolean, Value::Bool(_)) => true,
        (Scalar::Integer | Scalar::Number | Scalar::IntOrString, Value::Number(n)) => n.is_i64(),
        _ => false,
    }
}

/// A list element or map value of [`check_and_canonicalize`]: null becomes the zero value.
fn element(e: &mut Value, t: TypeRef, log: &mut Vec<Undo>) -> Result<(), Unfit> {
    if let Shape::Scalar(s) = t.shape()
        && scalar_at_rest(e, s)
    {
        return Ok(());
    }
    if e.is_null() {
        log.push(Undo { path: Vec::new(), old: std::mem::replace(e, zero_value(t)) });
        Ok(())
    } else {
        check_and_canonicalize(e, t, log)
    }
}

/// Whether `v` strictly decodes as `t`, reading only (then it also decodes leniently).
pub(crate) fn decodes_strictly(v: &Value, t: TypeRef) -> bool {
    strict_check(v, t).is_ok()
}

/// Why a value cannot be canonicalised in place.
enum Unfit {
    /// It does not strictly decode as its type: the plain round trip stands.
    Fails,
    /// A struct field is spelt in another case than its Go name.
    Folded,
}

/// Whether `v` strictly decodes as `t` (what [`typed_round_trip`] would accept), reading only.
fn strict_check(v: &Value, t: TypeRef) -> Result<(), Unfit> {
    match (t.shape(), v) {
        (Shape::Untyped, _) | (Shape::Struct | Shape::List | Shape::Map, Value::Null) => Ok(()),
        (Shape::Struct, Value::Object(m)) => {
            for (k, fv) in m {
                match t.field(k) {
                    Some(ft) => strict_check(fv, ft)?,
                    None if t.field_folded(k).is_some() => return Err(Unfit::Folded),
                    None => return Err(Unfit::Fails),
                }
            }
            Ok(())
        }
        (Shape::List, Value::Array(l)) => match t.items() {
            Some(it) => l.iter().filter(|e| !e.is_null()).try_for_each(|e| strict_check(e, it)),
            None => Ok(()),
        },
        (Shape::Map, Value::Object(m)) => match t.values() {
            Some(vt) => m.values().filter(|e| !e.is_null()).try_for_each(|e| strict_check(e, vt)),
            None => Ok(()),
        },
        (Shape::Struct | Shape::List | Shape::Map, _) => Err(Unfit::Fails),
        (Shape::Scalar(s), _) => {
            if scalar_fits(v, s) {
                Ok(())
            } else {
                Err(Unfit::Fails)
            }
        }
    }
}

/// Whether [`scalar_round_trip`] accepts `v` as `s`.
fn scalar_fits(v: &Value, s: Scalar) -> bool {
    match (s, v) {
        (Scalar::String, Value::Null | Value::String(_))
        | (Scalar::Number, Value::Null | Value::Number(_))
        | (Scalar::Boolean, Value::Null | Value::Bool(_))
        | (Scalar::Integer, Value::Null)
        | (Scalar::IntOrString, Value::Null | Value::String(_))
        | (Scalar::Quantity | Scalar::Time | Scalar::MicroTime | Scalar::Bytes, Value::Null) => {
            true
        }
        (Scalar::Integer | Scalar::IntOrString, Value::Number(n)) => integral(n).is_some(),
        (Scalar::Quantity, Value::String(q)) => canonical_quantity(q).is_ok(),
        (Scalar::Quantity, Value::Number(n)) => canonical_quantity(&n.to_string()).is_ok(),
        (Scalar::Time | Scalar::MicroTime, Value::String(t)) => {
            crate::vocabulary::parse_rfc3339_parts(t).is_some()
        }
        (Scalar::Bytes, Value::String(b)) => base64_decode(b).is_some(),
        _ => false,
    }
}

/// The typed round trip of a value [`strict_check`] accepted, done where it lies: the same
/// result as [`typed_round_trip`] followed by [`retain_map_fields`] (the three-walk reading
/// that [`check_and_canonicalize`] is tested against).
#[cfg(test)]
fn canonicalize(v: &mut Value, t: TypeRef) {
    match (t.shape(), v) {
        (Shape::Struct, Value::Object(m)) => m.retain(|k, fv| match t.field(k) {
            Some(ft) => {
                canonicalize(fv, ft);
                !omitted(fv, ft)
            }
            None => false,
        }),
        (Shape::List, Value::Array(l)) => {
            if let Some(it) = t.items() {
                for e in l {
                    if e.is_null() {
                        *e = zero_value(it);
                    } else {
                        canonicalize(e, it);
                    }
                }
            }
        }
        (Shape::Map, Value::Object(m)) => {
            if let Some(vt) = t.values() {
                for e in m.values_mut() {
                    if e.is_null() {
                        *e = zero_value(vt);
                    } else {
                        canonicalize(e, vt);
                    }
                }
            }
        }
        // The zero struct of a null that is not a pointer (see `typed_round_trip_cow`).
        (Shape::Struct, v @ Value::Null) if !t.is_pointer() => {
            *v = Value::Object(Map::new());
        }
        (Shape::Scalar(s), v) => {
            if scalar_changes(v, s)
                && let Ok(c) = scalar_round_trip(v, s, "")
            {
                *v = c;
            }
        }
        _ => {}
    }
}

/// Whether the round trip of scalar `v` as `s` differs from `v` (integral floats already
/// being integers).
fn scalar_changes(v: &Value, s: Scalar) -> bool {
    matches!(
        (s, v),
        (Scalar::String | Scalar::Integer | Scalar::Number | Scalar::Boolean, Value::Null)
            | (
                Scalar::Quantity | Scalar::Time | Scalar::MicroTime | Scalar::Bytes,
                Value::String(_)
            )
            | (Scalar::Quantity, Value::Number(_))
    )
}

/// The JSON round trip of an unstructured object: integral floats become integers.
pub(crate) fn json_round_trip(v: &Value) -> Value {
    let mut out = v.clone();
    integral_floats(&mut out);
    out
}

/// Turns the integral floats of a value into integers, in place.
fn integral_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(i) = integral(n) {
                *v = Value::from(i);
            }
        }
        Value::Array(l) => l.iter_mut().for_each(integral_floats),
        Value::Object(m) => m.values_mut().for_each(integral_floats),
        _ => {}
    }
}

fn integral(n: &serde_json::Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    let f = n.as_f64()?;
    // Only floats that are exact integers within i64 range convert.
    (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
}

fn type_error(path: &str, v: &Value, go_type: &str) -> PatchFailure {
    let what = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    PatchFailure::new(path, format!("cannot unmarshal {what} into Go value of type {go_type}"))
}

fn zero_value(t: TypeRef) -> Value {
    match t.shape() {
        Shape::Struct => Value::Object(Map::new()),
        Shape::Scalar(Scalar::String) => Value::String(String::new()),
        Shape::Scalar(Scalar::Integer | Scalar::Number) => Value::from(0),
        Shape::Scalar(Scalar::Boolean) => Value::Bool(false),
        _ => Value::Null,
    }
}

/// Whether `omitempty` drops this encoded value of field type `t`.
pub(crate) fn omitted(v: &Value, t: TypeRef) -> bool {
    if v.is_null() && t.omitzero() {
        return true;
    }
    if !t.omitempty() {
        return false;
    }
    if v.is_null() {
        // A zero `metav1.Time` struct encodes as null and is kept; a nil pointer is dropped.
        return !matches!(t.scalar(), Some(Scalar::Time | Scalar::MicroTime)) || t.is_pointer();
    }
    if t.is_pointer() {
        return false;
    }
    match (t.shape(), v) {
        (Shape::Map | Shape::List, Value::Object(m)) => m.is_empty(),
        (Shape::Map | Shape::List, Value::Array(l)) => l.is_empty(),
        (Shape::Scalar(Scalar::String | Scalar::Bytes), Value::String(s)) => s.is_empty(),
        (Shape::Scalar(Scalar::Boolean), Value::Bool(b)) => !b,
        (Shape::Scalar(Scalar::Integer | Scalar::Number), Value::Number(n)) => {
            n.as_f64() == Some(0.0)
        }
        _ => false,
    }
}

/// Decodes `v` as type `t` and encodes it back (see the module docs). An error names the
/// pointer of the field below `path`.
pub(crate) fn typed_round_trip(
    v: &Value,
    t: TypeRef,
    mode: Decode,
    path: &str,
) -> Result<Value, PatchFailure> {
    typed_round_trip_cow(v, t, mode).map(Cow::into_owned).map_err(|mut e| {
        e.path.insert_str(0, path);
        e
    })
}

/// Prefixes an error's pointer with the step that led to it (paths are built only on the way
/// out of an error, not for every field on the way in).
fn below(mut e: PatchFailure, step: impl std::fmt::Display) -> PatchFailure {
    e.path.insert_str(0, &format!("/{step}"));
    e
}

fn escaped(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The typed round trip, borrowing what it leaves as it is: the result is `Cow::Borrowed(v)`
/// when it equals `v` (an object already canonical for its type), and an owned tree otherwise,
/// which copies only what lies beside the changes. Errors' pointers are relative to `v`.
pub(crate) fn typed_round_trip_cow<'v>(
    v: &'v Value,
    t: TypeRef,
    mode: Decode,
) -> Result<Cow<'v, Value>, PatchFailure> {
    match t.shape() {
        Shape::Untyped => Ok(if has_integral_floats(v) {
            Cow::Owned(json_round_trip(v))
        } else {
            Cow::Borrowed(v)
        }),
        Shape::Struct => match v {
            // Go decodes null into a struct field that is not a pointer as the zero struct,
            // which encodes as `{}` (`omitempty` never drops a struct).
            Value::Null if !t.is_pointer() => Ok(Cow::Owned(Value::Object(Map::new()))),
            Value::Null => Ok(Cow::Borrowed(v)),
            Value::Object(m) => {
                // `None` while every field so far is kept as it is.
                let mut out: Option<Map<String, Value>> = None;
                for (i, (k, fv)) in m.iter().enumerate() {
                    let Some((name, ft)) = t.field_folded(k) else {
                        if mode == Decode::Strict {
                            return Err(PatchFailure::new(
                                &format!("/{}", escaped(k)),
                                format!("unknown field \"{k}\""),
                            ));
                        }
                        copied_prefix(&mut out, m, i);
                        continue;
                    };
                    let enc =
                        typed_round_trip_cow(fv, ft, mode).map_err(|e| below(e, escaped(k)))?;
                    let omit = omitted(&enc, ft);
                    if out.is_none() && !omit && name == k && matches!(enc, Cow::Borrowed(_)) {
                        continue;
                    }
                    let o = copied_prefix(&mut out, m, i);
                    if omit {
                        o.remove(name);
                    } else {
                        o.insert(name.to_owned(), enc.into_owned());
                    }
                }
                Ok(out.map_or(Cow::Borrowed(v), |o| Cow::Owned(Value::Object(o))))
            }
            other => Err(type_error("", other, "struct")),
        },
        Shape::List => match v {
            Value::Null => Ok(Cow::Borrowed(v)),
            Value::Array(l) => {
                let Some(it) = t.items() else { return Ok(Cow::Borrowed(v)) };
                let mut out: Option<Vec<Value>> = None;
                for (i, e) in l.iter().enumerate() {
                    let enc = element_cow(e, it, mode).map_err(|e| below(e, i))?;
                    if out.is_none() && matches!(enc, Cow::Borrowed(_)) {
                        continue;
                    }
                    out.get_or_insert_with(|| l.iter().take(i).cloned().collect())
                        .push(enc.into_owned());
                }
                Ok(out.map_or(Cow::Borrowed(v), |o| Cow::Owned(Value::Array(o))))
            }
            other => Err(type_error("", other, "slice")),
        },
        Shape::Map => match v {
            Value::Null => Ok(Cow::Borrowed(v)),
            Value::Object(m) => {
                let Some(vt) = t.values() else { return Ok(Cow::Borrowed(v)) };
                let mut out: Option<Map<String, Value>> = None;
                for (i, (k, e)) in m.iter().enumerate() {
                    let enc = element_cow(e, vt, mode).map_err(|e| below(e, escaped(k)))?;
                    if out.is_none() && matches!(enc, Cow::Borrowed(_)) {
                        continue;
                    }
                    copied_prefix(&mut out, m, i).insert(k.clone(), enc.into_owned());
                }
                Ok(out.map_or(Cow::Borrowed(v), |o| Cow::Owned(Value::Object(o))))
            }
            other => Err(type_error("", other, "map")),
        },
        Shape::Scalar(s) => match (s, v) {
            // The round trips that return the value as it is.
            (Scalar::String, Value::String(_))
            | (Scalar::Boolean, Value::Bool(_))
            | (Scalar::IntOrString, Value::Null | Value::String(_))
            | (Scalar::Quantity | Scalar::Time | Scalar::MicroTime | Scalar::Bytes, Value::Null) => {
                Ok(Cow::Borrowed(v))
            }
            _ => {
                let r = scalar_round_trip(v, s, "")?;
                Ok(if r == *v { Cow::Borrowed(v) } else { Cow::Owned(r) })
            }
        },
    }
}

/// A list element or map value of [`typed_round_trip_cow`]: null decodes as the zero value.
fn element_cow<'v>(
    e: &'v Value,
    t: TypeRef<'_>,
    mode: Decode,
) -> Result<Cow<'v, Value>, PatchFailure> {
    if e.is_null() { Ok(Cow::Owned(zero_value(t))) } else { typed_round_trip_cow(e, t, mode) }
}

/// The output map of [`typed_round_trip_cow`], made on the first change from the `i` entries
/// before it (each kept as it was).
fn copied_prefix<'o>(
    out: &'o mut Option<Map<String, Value>>,
    m: &Map<String, Value>,
    i: usize,
) -> &'o mut Map<String, Value> {
    out.get_or_insert_with(|| m.iter().take(i).map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// Whether [`integral_floats`] would change `v`.
fn has_integral_floats(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64() && integral(n).is_some(),
        Value::Array(l) => l.iter().any(has_integral_floats),
        Value::Object(m) => m.values().any(has_integral_floats),
        _ => false,
    }
}

fn scalar_round_trip(v: &Value, s: Scalar, path: &str) -> Result<Value, PatchFailure> {
    match (s, v) {
        (Scalar::String, Value::Null) => Ok(Value::String(String::new())),
        (Scalar::String, Value::String(_)) => Ok(v.clone()),
        (Scalar::String, _) => Err(type_error(path, v, "string")),
        (Scalar::Integer, Value::Null) => Ok(Value::from(0)),
        (Scalar::Integer, Value::Number(n)) => {
            integral(n).map(Value::from).ok_or_else(|| type_error(path, v, "int64"))
        }
        (Scalar::Integer, _) => Err(type_error(path, v, "int64")),
        (Scalar::Number, Value::Null) => Ok(Value::from(0)),
        (Scalar::Number, Value::Number(n)) => {
            Ok(integral(n).map_or_else(|| v.clone(), Value::from))
        }
        (Scalar::Number, _) => Err(type_error(path, v, "float64")),
        (Scalar::Boolean, Value::Null) => Ok(Value::Bool(false)),
        (Scalar::Boolean, Value::Bool(_)) => Ok(v.clone()),
        (Scalar::Boolean, _) => Err(type_error(path, v, "bool")),
        (Scalar::IntOrString, Value::Null | Value::String(_)) => Ok(v.clone()),
        (Scalar::IntOrString, Value::Number(n)) => {
            integral(n).map(Value::from).ok_or_else(|| type_error(path, v, "int32"))
        }
        (Scalar::IntOrString, _) => Err(type_error(path, v, "intstr.IntOrString")),
        (Scalar::Quantity, Value::Null) => Ok(Value::Null),
        (Scalar::Quantity, Value::String(q)) => canonical_quantity(q)
            .map(Value::String)
            .map_err(|e| PatchFailure::new(path, e.to_string())),
        (Scalar::Quantity, Value::Number(n)) => canonical_quantity(&n.to_string())
            .map(Value::String)
            .map_err(|e| PatchFailure::new(path, e.to_string())),
        (Scalar::Quantity, _) => Err(type_error(path, v, "resource.Quantity")),
        (Scalar::Time | Scalar::MicroTime, Value::Null) => Ok(Value::Null),
        (Scalar::Time | Scalar::MicroTime, Value::String(t)) => {
            canonical_time(t, s == Scalar::MicroTime)
                .map(Value::String)
                .ok_or_else(|| PatchFailure::new(path, format!("parsing time \"{t}\" as RFC 3339")))
        }
        (Scalar::Time | Scalar::MicroTime, _) => Err(type_error(path, v, "v1.Time")),
        (Scalar::Bytes, Value::Null) => Ok(Value::Null),
        (Scalar::Bytes, Value::String(b)) => base64_decode(b)
            .map(|bytes| Value::String(base64_encode(&bytes)))
            .ok_or_else(|| PatchFailure::new(path, "illegal base64 data")),
        (Scalar::Bytes, _) => Err(type_error(path, v, "[]uint8")),
    }
}

/// `time.Parse(time.RFC3339, s)` then `UTC().Format(RFC3339)` (or `RFC3339Micro` for
/// `MicroTime`): the canonical form of a `metav1.Time`.
pub(crate) fn canonical_time(s: &str, micro: bool) -> Option<String> {
    let (secs, nanos) = crate::vocabulary::parse_rfc3339_parts(s)?;
    let mut out = crate::vocabulary::format_utc(secs);
    if micro {
        out.push('.');
        crate::vocabulary::push_digits(&mut out, i64::from(nanos / 1000), 6);
    }
    out.push('Z');
    Some(out)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        // `chunks` never yields an empty chunk, so `chunk[0]` exists.
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard padded base64 as Go decodes it (`\r` and `\n` skipped); `None` when invalid.
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'\r' && c != b'\n').collect();
    if !clean.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for (ci, chunk) in clean.chunks(4).enumerate() {
        let last = ci == clean.len() / 4 - 1;
        let mut n: u32 = 0;
        let mut pad = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'=' if last && i >= 2 => {
                    pad += 1;
                    0
                }
                _ if pad > 0 => return None,
                _ => B64.iter().position(|&x| x == c)? as u32,
            };
            n = (n << 6) | v;
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// The known-types normaliser: remarshals the values at the configured field paths.
/// A field whose value does not decode as its type is an error naming the path.
pub(crate) fn normalize_known_types(
    obj: &mut Value,
    fields: &[KnownTypeField],
) -> Result<(), PatchFailure> {
    for f in fields {
        let Some(kind) = KnownType::parse(&f.type_) else { continue };
        let parts: Vec<&str> = f.field.split('.').collect();
        normalize_path(obj, &parts, kind, "")?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum KnownType {
    Typed(TypeRef<'static>),
    Quantity,
    Duration,
}

impl KnownType {
    fn parse(name: &str) -> Option<KnownType> {
        match name {
            "core/Quantity" => Some(KnownType::Quantity),
            "meta/v1/Duration" => Some(KnownType::Duration),
            _ => {
                let t = name.strip_prefix("core/v1/")?;
                schema::definition(&format!("io.k8s.api.core.v1.{t}")).map(KnownType::Typed)
            }
        }
    }

    fn remarshal(self, v: &Value, path: &str) -> Result<Value, PatchFailure> {
        match self {
            KnownType::Typed(t) => typed_round_trip(v, t, Decode::Lenient, path),
            KnownType::Quantity => match v {
                Value::String(s) => Quantity::parse(s).map(|q| Value::String(q.canonical())),
                Value::Number(n) => {
                    Quantity::parse(&n.to_string()).map(|q| Value::String(q.canonical()))
                }
                Value::Null => Ok(Value::String("0".to_owned())),
                _ => return Err(type_error(path, v, "resource.Quantity")),
            }
            .map_err(|e| PatchFailure::new(path, e.to_string())),
            KnownType::Duration => match v {
                Value::String(s) => crate::vocabulary::parse_go_duration(s)
                    .map(|d| Value::String(crate::vocabulary::format_go_duration(d)))
                    .map_err(|e| PatchFailure::new(path, e)),
                Value::Null => Ok(Value::String("0s".to_owned())),
                _ => Err(type_error(path, v, "v1.Duration")),
            },
        }
    }
}

fn normalize_path(
    obj: &mut Value,
    parts: &[&str],
    kind: KnownType,
    base: &str,
) -> Result<(), PatchFailure> {
    for i in 1..=parts.len() {
        let pointer = pointer_of(&parts[..i]);
        let Some(Value::Array(items)) = obj.pointer_mut(&pointer) else { continue };
        let rest = &parts[i..];
        for (j, item) in items.iter_mut().enumerate() {
            if !item.is_object() {
                continue;
            }
            let p = format!("{base}{pointer}/{j}");
            if rest.is_empty() {
                *item = kind.remarshal(item, &p)?;
            } else {
                normalize_path(item, rest, kind, &p)?;
            }
        }
        return Ok(());
    }
    let pointer = pointer_of(parts);
    if let Some(v) = obj.pointer_mut(&pointer) {
        *v = kind.remarshal(v, &format!("{base}{pointer}"))?;
    }
    Ok(())
}

fn pointer_of(parts: &[&str]) -> String {
    parts.iter().map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1"))).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_typed_round_trip_is_the_canonicalization_in_place() {
        let live: Value =
            serde_json::from_str(include_str!("../../testdata/diff/inputs/deployment-live.json"))
                .unwrap();
        let t = schema::lookup("apps", "v1", "Deployment").unwrap();
        let mut cases = vec![live.clone(), pod(json!("500m")), pod(json!(0.5)), pod(json!(2.0))];
        let mut canonical = live.clone();
        remarshal_in_place(&mut canonical);
        cases.push(canonical.clone());
        for (pointer, value) in [
            ("/spec/template/spec/containers/0/unknownField", json!(1)),
            ("/spec/replicas", json!(3.0)),
            ("/spec/template/spec/containers/0/image", Value::Null),
            ("/spec/template/spec/containers/0/ports", json!([null])),
            ("/metadata/creationTimestamp", json!("2020-01-01T01:00:00+01:00")),
            ("/metadata/labels", json!({"a": null})),
            ("/spec/template/spec/containers/0/Image", json!("folded")),
            ("/spec/paused", json!("not a bool")),
        ] {
            let mut v = canonical.clone();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            if let Some(m) = v.pointer_mut(parent).and_then(Value::as_object_mut) {
                m.insert(key.to_owned(), value);
            }
            cases.push(v);
        }
        // The round trip against the two readings that do not build a tree: `strict_check`
        // decides what the strict round trip accepts, and an object it accepts is canonicalised
        // in place to what the round trip gives, fields the object lacks left out.
        for v in &cases {
            let t = schema::lookup_object(v).unwrap_or(t);
            let lenient = typed_round_trip_cow(v, t, Decode::Lenient);
            let strict = typed_round_trip_cow(v, t, Decode::Strict);
            match strict_check(v, t) {
                Ok(()) => {
                    let mut typed = strict.expect("a strictly decoding object").into_owned();
                    assert_eq!(lenient.expect("decodes leniently too").as_ref(), &typed);
                    retain_map_fields(v, &mut typed);
                    assert_eq!(typed, remarshal(v), "{v}");
                }
                Err(Unfit::Folded) => {
                    let strict = strict.expect("a folded field decodes");
                    assert_eq!(lenient.expect("decodes leniently too"), strict);
                }
                Err(Unfit::Fails) => assert!(strict.is_err(), "{v}"),
            }
        }
        // The canonical object is borrowed, not copied.
        let cow = typed_round_trip_cow(&canonical, t, Decode::Lenient).unwrap();
        assert!(matches!(cow, Cow::Borrowed(_)));
    }

    /// The remarshal of three walks (integral floats, strict check, canonicalisation) that the
    /// one walk replaced.
    fn three_walks(obj: &Value) -> Value {
        let mut v = obj.clone();
        integral_floats(&mut v);
        let Some(t) = schema::gvk_of(&v)
            .filter(|&(g, ver, k)| schema::is_builtin(g, ver, k))
            .and_then(|(g, ver, k)| schema::lookup(g, ver, k))
        else {
            return v;
        };
        match strict_check(&v, t) {
            Ok(()) => canonicalize(&mut v, t),
            Err(Unfit::Fails) => {}
            Err(Unfit::Folded) => {
                if let Ok(mut typed) = typed_round_trip(&v, t, Decode::Strict, "") {
                    retain_map_fields(&v, &mut typed);
                    v = typed;
                }
            }
        }
        v
    }

    #[test]
    fn one_walk_gives_what_three_walks_gave_also_when_changes_precede_a_failure() {
        let live: Value =
            serde_json::from_str(include_str!("../../testdata/diff/inputs/deployment-live.json"))
                .unwrap();
        // Changes the walk makes (a null port list entry, an omitted empty string, a quantity,
        // an integral float) and what stops it after them (an unknown field, a folded field, a
        // wrong type), alone and in pairs.
        let edits = [
            ("/spec/template/spec/containers/0/ports", json!([null, {"containerPort": 80.0}])),
            ("/spec/template/spec/containers/0/image", Value::Null),
            ("/spec/template/spec/containers/0/resources", json!({"limits": {"cpu": 0.5}})),
            ("/spec/replicas", json!(3.0)),
            ("/metadata/labels", json!({"a": null})),
            ("/spec/template/spec/nodeSelector", json!({"x": ""})),
            ("/status/zzzUnknown", json!(1)),
            ("/spec/template/spec/Hostname", json!("folded")),
            ("/spec/template/spec/containers/0/zzz", json!({"n": 2.0})),
            ("/spec/paused", json!("not a bool")),
            ("/spec/template/spec/containers/0/Image", json!("folded")),
            // An omitted field removed after the walk of its struct, beside a failure after it
            // in the same struct.
            ("/spec/minReadySeconds", json!(0.0)),
            ("/spec/zzzUnknown", json!(1)),
        ];
        let apply = |v: &mut Value, (pointer, value): &(&str, Value)| {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            if let Some(m) = v.pointer_mut(parent).and_then(Value::as_object_mut) {
                m.insert((*key).to_owned(), value.clone());
            }
        };
        let mut checked = 0;
        for a in &edits {
            for b in &edits {
                let mut v = live.clone();
                apply(&mut v, a);
                apply(&mut v, b);
                assert_eq!(remarshal(&v), three_walks(&v), "{} then {}", a.0, b.0);
                checked += 1;
            }
        }
        assert_eq!(checked, edits.len() * edits.len());
    }

    mod at_rest {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::super::*;

        proptest! {
            /// The walk's shortcut for scalars at rest against the general way: whatever
            /// `scalar_at_rest` takes, `scalar_in_place` accepts, leaves as it is and does not log.
            #[test]
            fn scalars_at_rest_are_what_the_general_way_leaves(
                v in prop_oneof![
                    Just(Value::Null),
                    any::<bool>().prop_map(Value::Bool),
                    any::<i64>().prop_map(Value::from),
                    any::<u64>().prop_map(Value::from),
                    proptest::num::f64::NORMAL.prop_map(Value::from),
                    (-5i32..5).prop_map(|i| Value::from(f64::from(i))),
                    "[ -~]{0,12}".prop_map(Value::String),
                    "[0-9]{1,3}(m|Mi|Gi)?".prop_map(Value::String),
                    Just(json!("2024-01-02T03:04:05+01:00")),
                    Just(json!("Zm9v\nYmFy")),
                    Just(json!([1])),
                    Just(json!({"a": 1})),
                ],
            ) {
                for s in [
                    Scalar::String,
                    Scalar::Integer,
                    Scalar::Number,
                    Scalar::Boolean,
                    Scalar::IntOrString,
                    Scalar::Quantity,
                    Scalar::Time,
                    Scalar::MicroTime,
                    Scalar::Bytes,
                ] {
                    if !scalar_at_rest(&v, s) {
                        continue;
                    }
                    let mut general = v.clone();
                    let mut log = Vec::new();
                    prop_assert!(scalar_in_place(&mut general, s, &mut log).is_ok(), "{:?} {}", s, v);
                    prop_assert!(log.is_empty(), "{:?} {}", s, v);
                    prop_assert_eq!(&general, &v, "{:?}", s);
                }
            }
        }
    }

    fn pod(cpu: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}})
    }

    #[test]
    fn remarshal_resources() {
        for (input, want) in [
            (json!(0.2), json!("200m")),
            (json!("0.2"), json!("200m")),
            (json!("invalid"), json!("invalid")),
        ] {
            let out = remarshal(&pod(input.clone()));
            assert_eq!(
                out["spec"]["containers"][0]["resources"]["requests"]["cpu"], want,
                "{input}"
            );
        }
    }

    #[test]
    fn remarshal_omitempty() {
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "creationTimestamp": null}, "imagePullSecrets": []});
        assert_eq!(
            remarshal(&sa),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a"}})
        );
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 0, "minReadySeconds": 0, "paused": false,
            "template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}], "resources": {}}]}}}});
        let out = remarshal(&d);
        assert_eq!(out["spec"]["replicas"], json!(0));
        assert!(out["spec"].get("minReadySeconds").is_none());
        assert!(out["spec"].get("paused").is_none());
        assert_eq!(out["spec"]["template"]["spec"]["containers"][0]["resources"], json!({}));
    }

    #[test]
    fn remarshal_aborts_on_unknown_field_or_type_mismatch() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "invalidKey": "asdf", "data": {}});
        assert_eq!(remarshal(&cm), cm);
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"revisionHistoryLimit": "badValue", "paused": false}});
        assert_eq!(remarshal(&d), d);
        let crd = json!({"apiVersion": "some.io/v1", "kind": "X", "spec": {"a": 1.0, "b": ""}});
        assert_eq!(
            remarshal(&crd),
            json!({"apiVersion": "some.io/v1", "kind": "X", "spec": {"a": 1, "b": ""}})
        );
    }

    #[test]
    fn remarshal_keeps_int_or_string_kind() {
        let svc = json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80, "targetPort": "80"}, {"port": 81, "targetPort": 81}]}});
        assert_eq!(remarshal(&svc), svc);
    }

    #[test]
    fn remarshal_base64() {
        let s = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "Zm9v\nYmFy"}});
        assert_eq!(remarshal(&s)["data"]["a"], json!("Zm9vYmFy"));
        let bad = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "!!"}});
        assert_eq!(remarshal(&bad), bad);
    }

    #[test]
    fn times() {
        assert_eq!(
            canonical_time("2024-01-02T03:04:05Z", false).as_deref(),
            Some("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            canonical_time("2024-01-02T03:04:05.123Z", false).as_deref(),
            Some("2024-01-02T03:04:05Z")
        );
        assert_eq!(
            canonical_time("2024-01-02T03:04:05+02:00", false).as_deref(),
            Some("2024-01-02T01:04:05Z")
        );
        assert_eq!(
            canonical_time("2024-01-01T01:00:00+02:30", false).as_deref(),
            Some("2023-12-31T22:30:00Z")
        );
        assert_eq!(
            canonical_time("2024-02-29T23:00:00-01:00", false).as_deref(),
            Some("2024-03-01T00:00:00Z")
        );
        assert_eq!(
            canonical_time("2024-01-02T03:04:05.1234567Z", true).as_deref(),
            Some("2024-01-02T03:04:05.123456Z")
        );
        assert_eq!(
            canonical_time("2024-01-02T03:04:05Z", true).as_deref(),
            Some("2024-01-02T03:04:05.000000Z")
        );
        for bad in [
            "2024-02-30T00:00:00Z",
            "2024-01-02 03:04:05Z",
            "2024-01-02T03:04:05",
            "yesterday",
            "2024-01-02T03:04:05.Z",
            "2024-13-01T00:00:00Z",
        ] {
            assert_eq!(canonical_time(bad, false), None, "{bad}");
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "status": {"startTime": "2024-01-02T03:04:05+01:00"}});
        assert_eq!(remarshal(&pod)["status"]["startTime"], json!("2024-01-02T02:04:05Z"));
    }

    #[test]
    fn base64_codec() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).as_deref(), Some(s.as_bytes()), "{e}");
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert!(base64_decode("Zm8").is_none());
        assert!(base64_decode("Z=m8").is_none());
    }

    #[test]
    fn rollout_is_preconfigured() {
        // N19: argoproj.io/Rollout gets spec.template.spec as a PodSpec unless configured.
        let fields = crate::ignore::default_known_type_fields("argoproj.io", "Rollout");
        assert_eq!(
            fields,
            vec![KnownTypeField {
                field: "spec.template.spec".into(),
                type_: "core/v1/PodSpec".into()
            }]
        );
        assert!(crate::ignore::default_known_type_fields("argoproj.io", "AnalysisRun").is_empty());
        let mut rollout = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
            "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 0.5}}}]}}}});
        normalize_known_types(&mut rollout, &fields).expect("normalises");
        assert_eq!(
            rollout["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            json!("500m")
        );
    }

    #[test]
    fn known_type_names() {
        // N21-like: the core/v1 types Argo CD users configure resolve to a type.
        for name in [
            "PodSpec",
            "Container",
            "Volume",
            "ResourceRequirements",
            "PodTemplateSpec",
            "ServiceSpec",
            "EnvVar",
            "Probe",
            "Toleration",
            "Affinity",
            "SecurityContext",
            "PersistentVolumeClaimSpec",
        ] {
            assert!(
                matches!(KnownType::parse(&format!("core/v1/{name}")), Some(KnownType::Typed(_))),
                "{name}"
            );
        }
        assert!(matches!(KnownType::parse("core/Quantity"), Some(KnownType::Quantity)));
        assert!(matches!(KnownType::parse("meta/v1/Duration"), Some(KnownType::Duration)));
        assert!(KnownType::parse("apps/v1/Deployment").is_none());
    }

    #[test]
    fn known_types_errors_name_the_path() {
        let mut obj = json!({"spec": {"ram": "lots"}});
        let fields = [KnownTypeField { field: "spec.ram".into(), type_: "core/Quantity".into() }];
        let err = normalize_known_types(&mut obj, &fields).expect_err("invalid");
        assert_eq!(err.path, "/spec/ram");
        let mut obj = json!({"spec": {"d": 5}});
        let fields = [KnownTypeField { field: "spec.d".into(), type_: "meta/v1/Duration".into() }];
        assert!(normalize_known_types(&mut obj, &fields).is_err());
        let mut obj = json!({"spec": {"d": 5}});
        let fields =
            [KnownTypeField { field: "spec.d".into(), type_: "core/v1/NoSuchType".into() }];
        assert!(normalize_known_types(&mut obj, &fields).is_ok());
    }
}
