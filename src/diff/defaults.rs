//! Kubernetes defaulting of built-in types (gitops-engine pkg/diff/diff.go
//! `generateSchemeDefaultPatch`: the scheme's `SetDefaults_*`), applied to untyped JSON the way
//! Argo CD applies it (`applyPatch`): the object is decoded leniently into its type (`T0`, unknown
//! fields dropped), the defaulters run on a copy (`T1`), and the two-way strategic patch `T0 → T1`
//! is applied onto the untyped object, so unknown fields survive. An object that does not decode as
//! its type (a type mismatch) is returned unchanged.
//!
//! The defaulters walk the typed object parent-first, like the generated
//! `SetObjectDefaults_*` functions: each definition's `SetDefaults_*` runs before those of
//! the structs nested in it. Version-specific defaults (apps/v1beta1, extensions/v1beta1,
//! admissionregistration v1beta1) use the object's own apiVersion.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::error::PatchFailure;
use super::quantity::Quantity;
use super::remarshal::{Decode, omitted, typed_round_trip_cow};
use super::smp::{
    apply_typed_in_place, element_round_trips, entry_round_trips, map_round_trips,
    merged_list_round_trips, patch_round_trips, two_way_typed, value_round_trips,
};
use crate::schema::{self, Scalar, Shape, TypeRef};

/// Returns `obj` with the Kubernetes defaults of its built-in type applied; unknown kinds and
/// objects that do not decode as their type are returned unchanged, and so is an object whose
/// defaults patch cannot be made or applied (see [`apply_defaults_in_place`]).
#[cfg(test)]
pub(crate) fn apply_defaults(obj: &Value) -> Value {
    let mut v = obj.clone();
    // The object is left as it was when its defaults cannot be applied.
    let _ = apply_defaults_in_place(&mut v);
    v
}

/// [`apply_defaults`] on the working copy itself. When the object is already what the typed
/// round trip gives (nothing unknown, every scalar canonical) and the two-way patch
/// round-trips on it ([`patch_round_trips`]), `T0` is the object and `T0 + patch(T0 → T1)` is
/// `T1`, so the defaulters run on the object itself: no typed copy, no comparison, no patch.
/// Otherwise the patch's own path ([`defaults_by_patch`]).
///
/// # Errors
///
/// The defaults patch cannot be made or applied (the object is then left as it was), as
/// when Argo CD's `patchDefaultValues` fails: a container without a name, whose typed copy
/// carries the merge key `name: ""` that the object lacks.
pub(crate) fn apply_defaults_in_place(obj: &mut Value) -> Result<(), PatchFailure> {
    let Some((t, ctx)) = typed(obj) else { return Ok(()) };
    // The typed copy borrows the object where the round trip would not change it.
    let Ok(t0) = typed_round_trip_cow(obj, t, Decode::Lenient) else { return Ok(()) };
    if !t0.is_object() {
        return Ok(());
    }
    if matches!(t0, Cow::Borrowed(_)) && patch_round_trips(&t0, Some(t)) {
        drop(t0);
        walk(obj, t, &ctx);
        return Ok(());
    }
    let patch = defaults_patch(&t0, t, &ctx);
    drop(t0);
    apply_defaults_patch(obj, patch?, t)
}

/// A built-in object whose defaults [`apply_defaults_in_place`] writes into the object
/// itself (its in-place path), found by [`in_place`]: its type and defaulting context.
pub(crate) struct InPlace {
    t: TypeRef<'static>,
    ctx: Ctx,
}

/// `Some` when [`apply_defaults_in_place`] takes the in-place path for `obj` (the object is
/// what its typed round trip gives, and the two-way patch round-trips on it). Both
/// conditions are asked in one walk ([`object_in_place`]), each field looked up once.
#[cfg(test)]
pub(crate) fn in_place(obj: &Value) -> Option<InPlace> {
    in_place_as(obj, None)
}

/// [`in_place`], with the type taken from `known` when `obj` has its `apiVersion` and `kind`.
pub(crate) fn in_place_as(obj: &Value, known: Option<Known>) -> Option<InPlace> {
    let (t, ctx) = typed_as(obj, known)?;
    let Value::Object(m) = obj else { return None };
    object_in_place(obj, m, t, false).then_some(InPlace { t, ctx })
}

/// A built-in type the caller has looked up already (`is_builtin`, then `lookup`) for an
/// `apiVersion` and `kind` split as `gvk`: the prediction looks up its object's type once for
/// the patch and both sides' defaults instead of once for each step (about 460 instructions a
/// look-up).
#[derive(Clone, Copy)]
pub(crate) struct Known<'a> {
    pub(crate) t: TypeRef<'static>,
    pub(crate) gvk: (&'a str, &'a str, &'a str),
}

/// [`typed`], from `known` when `obj` is of its `apiVersion` and `kind`, else looked up.
fn typed_as(obj: &Value, known: Option<Known>) -> Option<(TypeRef<'static>, Ctx)> {
    builtin_type_as(obj, known).map(|(t, g, v)| (t, Ctx::new(g, v)))
}

/// [`builtin_type`], from `known` when `obj` is of its `apiVersion` and `kind` (the same
/// strings give the same type), else looked up.
fn builtin_type_as<'a>(
    obj: &'a Value,
    known: Option<Known<'a>>,
) -> Option<(TypeRef<'static>, &'a str, &'a str)> {
    match known {
        Some(Known { t, gvk }) if schema::gvk_of(obj) == Some(gvk) => Some((t, gvk.0, gvk.1)),
        _ => builtin_type(obj),
    }
}

/// Both conditions of [`in_place`] for the map `v` (that is `m`) at a position of type `t`
/// (a `retainKeys` position when `retain_keys` is set): its typed round trip gives it back
/// ([`typed_round_trip_cow`] borrows it), and the two-way patch round-trips below it
/// ([`map_round_trips`]). The two walks look up the same field for each entry (a struct's
/// entry has to be its field, named exactly, for the round trip to borrow it, and that
/// field's type is the patch's metadata too), so one walk asks both; any other position
/// is asked both ways (`one_walk_answers_as_the_two_walks` compares them).
fn object_in_place(v: &Value, m: &Map<String, Value>, t: TypeRef, retain_keys: bool) -> bool {
    match t.shape() {
        Shape::Struct => m.iter().all(|(k, fv)| {
            !(k.starts_with('$') || (retain_keys && fv.is_null()))
                && t.field(k).is_some_and(|ft| !omitted(fv, ft) && value_in_place(fv, ft))
        }),
        Shape::Map => match t.values() {
            // The round trip makes a null value its type's zero value.
            Some(vt) => {
                m.iter().all(|(k, e)| !k.starts_with('$') && !e.is_null() && value_in_place(e, vt))
            }
            None => map_round_trips(m, Some(t), retain_keys),
        },
        _ => borrows(v, t) && map_round_trips(m, Some(t), retain_keys),
    }
}

/// [`object_in_place`] for any value `v` of type `t`, below an entry that passed.
fn value_in_place(v: &Value, t: TypeRef) -> bool {
    match (v, t.shape()) {
        (Value::Object(m), Shape::Struct | Shape::Map) => {
            object_in_place(v, m, t, t.strategy().retain_keys)
        }
        (Value::Array(l), Shape::List) if t.items().is_some() => {
            let Some(it) = t.items() else { return false };
            let retain_keys = t.strategy().retain_keys;
            (!t.strategy().merge || merged_list_round_trips(l, t.merge_key()))
                && l.iter().all(|e| match e {
                    // The round trip makes a null element its type's zero value; the patch
                    // does not round-trip lists of lists.
                    Value::Null | Value::Array(_) => false,
                    Value::Object(o) => object_in_place(e, o, it, retain_keys),
                    _ => value_in_place(e, it),
                })
        }
        // The round trips that return the scalar as it is, the patch's too.
        (Value::String(_), Shape::Scalar(Scalar::String))
        | (Value::Bool(_), Shape::Scalar(Scalar::Boolean)) => true,
        _ => borrows(v, t) && value_round_trips(v, t),
    }
}

/// Whether the typed round trip of `v` gives it back as it is.
fn borrows(v: &Value, t: TypeRef) -> bool {
    matches!(typed_round_trip_cow(v, t, Decode::Lenient), Ok(Cow::Borrowed(_)))
}

impl InPlace {
    /// [`apply_defaults_in_place`] for the object [`in_place`] was asked about, or for one that
    /// [`InPlace::holds_after`] vouches for.
    pub(crate) fn apply(&self, obj: &mut Value) {
        walk(obj, self.t, &self.ctx);
    }

    /// Whether `after`, the object `before` (which [`in_place`] accepted) with the strategic
    /// `patch` applied, takes the in-place path too, checking only what the patch touched:
    /// both conditions of [`in_place`] hold for a map when they hold for each of its entries,
    /// and an entry the patch does not name is `before`'s own. `false` may be too careful
    /// (the caller then takes [`apply_defaults_in_place`]'s own way), `true` never is.
    pub(crate) fn holds_after(&self, after: &Value, before: &Value, patch: &Value) -> bool {
        let (Value::Object(a), Value::Object(b), Value::Object(p)) = (after, before, patch) else {
            return false;
        };
        // The type and defaulting context stay those of `before` only if the patch leaves
        // `apiVersion` and `kind` (and every other root field) where they were.
        let keeps_the_type =
            p.keys().all(|k| !k.starts_with('$') && k != "apiVersion" && k != "kind");
        keeps_the_type && node_holds(a, b, p, self.t, false)
    }
}

/// [`InPlace::holds_after`] at a map of type `t` (at a `retainKeys` position when
/// `retain_keys` is set) that `before` has too and that passed there.
fn node_holds(
    after: &Map<String, Value>,
    before: &Map<String, Value>,
    patch: &Map<String, Value>,
    t: TypeRef,
    retain_keys: bool,
) -> bool {
    patch.iter().all(|(k, pv)| {
        let field = match k.strip_prefix('$') {
            None => k.as_str(),
            // Only removes entries: what is left passed in `before`.
            Some("retainKeys") => return true,
            Some(directive) => match directive.split_once('/') {
                // Only orders the list (merged by its own key when the patch has one).
                Some(("setElementOrder", f)) if patch.contains_key(f) => return true,
                Some(("setElementOrder", f)) if same_length(after.get(f), before.get(f)) => {
                    return true;
                }
                Some(("setElementOrder" | "deleteFromPrimitiveList", f)) => f,
                // `$patch` replaces or deletes the whole map: checked by the caller's way.
                _ => return false,
            },
        };
        let Some(av) = after.get(field) else { return true };
        // A non-empty map or list under a key `before` has: the key itself passed there, and
        // such a value is never omitted.
        let below = match (av, before.get(field), pv, t.child(field)) {
            _ if k.starts_with('$') => None,
            (Value::Object(am), Some(Value::Object(bm)), Value::Object(pm), Some(ct))
                if !am.is_empty()
                    && !ct.strategy().replace
                    && matches!(ct.shape(), Shape::Struct | Shape::Map) =>
            {
                Some(node_holds(am, bm, pm, ct, ct.strategy().retain_keys))
            }
            (Value::Array(al), Some(Value::Array(bl)), Value::Array(pl), Some(ct))
                if !al.is_empty() =>
            {
                list_holds(al, bl, pl, ct)
            }
            _ => None,
        };
        below.unwrap_or_else(|| entry_holds(field, av, t, retain_keys))
    })
}

/// The element of `l` whose merge key `mk` is `key`; `Err` when there are several.
fn element_of_key<'l>(l: &'l [Value], mk: &str, key: &Value) -> Result<Option<&'l Value>, ()> {
    let mut found = l.iter().filter(|e| e.get(mk) == Some(key));
    let first = found.next();
    if found.next().is_some() { Err(()) } else { Ok(first) }
}

/// Whether both are lists of one length.
fn same_length(a: Option<&Value>, b: Option<&Value>) -> bool {
    matches!((a, b), (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len())
}

/// [`node_holds`] for a list of type `t` merged by key, whose elements are structs: each
/// element the patch names is checked where the patch touched it (against `before`'s element
/// of its key), one it does not name is `before`'s own. `None` for any other list (the
/// caller checks it whole).
fn list_holds(after: &[Value], before: &[Value], patch: &[Value], t: TypeRef) -> Option<bool> {
    let (Some(mk), Some(items)) = (t.merge_key(), t.items()) else { return None };
    if !t.strategy().merge || !matches!(items.shape(), Shape::Struct) {
        return None;
    }
    let retain_keys = t.strategy().retain_keys;
    if !merged_list_round_trips(after, Some(mk)) {
        return Some(false);
    }
    // Each element of `after` has its merge key, once (just checked).
    let of_key = |l, key| element_of_key(l, mk, key);
    Some(after.iter().all(|e| {
        let (Value::Object(em), Some(key)) = (e, e.get(mk)) else { return false };
        match (of_key(patch, key), of_key(before, key)) {
            (Ok(None), Ok(Some(_))) => true,
            (Ok(Some(Value::Object(pm))), Ok(Some(Value::Object(bm)))) => {
                node_holds(em, bm, pm, items, retain_keys)
            }
            (Ok(_), Ok(_)) => {
                element_round_trips(e, Some(items), retain_keys)
                    && matches!(
                        typed_round_trip_cow(e, items, Decode::Lenient),
                        Ok(Cow::Borrowed(_))
                    )
            }
            _ => false,
        }
    }))
}

/// Both conditions of [`in_place`] for the entry `key: v` of a map of type `t`, checked whole.
/// The typed round trip borrows an entry of a struct only under its field's exact name, and
/// the field's type is then the patch's metadata too: one walk asks both ([`value_in_place`]).
fn entry_holds(key: &str, v: &Value, t: TypeRef, retain_keys: bool) -> bool {
    if key.starts_with('$') || (retain_keys && v.is_null()) {
        return false;
    }
    match t.shape() {
        Shape::Struct => {
            t.field(key).is_some_and(|ft| !may_be_omitted(v, ft) && value_in_place(v, ft))
        }
        Shape::Map => match t.values() {
            // The round trip makes a null value its type's zero value.
            Some(vt) => !v.is_null() && value_in_place(v, vt),
            None => entry_round_trips(key, v, Some(t), retain_keys),
        },
        // Not met below a built-in object's maps that passed; too careful is allowed.
        _ => false,
    }
}

/// [`entry_holds`] the way it was first written, a walk for each condition (the reference
/// `entry_holds_answers_as_the_two_walks` compares it with).
#[cfg(test)]
fn entry_holds_by_two_walks(key: &str, v: &Value, t: TypeRef, retain_keys: bool) -> bool {
    let typed = match t.shape() {
        Shape::Struct => t
            .field_folded(key)
            .is_some_and(|(name, ft)| name == key && !may_be_omitted(v, ft) && borrows(v, ft)),
        Shape::Map => t.values().is_none_or(|vt| !v.is_null() && borrows(v, vt)),
        _ => false,
    };
    typed && entry_round_trips(key, v, Some(t), retain_keys)
}

/// Whether the typed round trip might leave out `v` of a field of type `t`: a zero value of
/// an `omitempty` or `omitzero` field (a superset of the round trip's own rule).
fn may_be_omitted(v: &Value, t: TypeRef) -> bool {
    let zero = match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(l) => l.is_empty(),
        Value::Object(m) => m.is_empty(),
    };
    zero && (t.omitempty() || t.omitzero())
}

/// Whether [`apply_defaults_in_place`] may take the patch path for `obj`, the only one that
/// can fail: a built-in object whose strategic patch does not round-trip (a merge key
/// repeated, say).
pub(crate) fn may_take_the_patch_path(obj: &Value, known: Option<Known>) -> bool {
    builtin_type_as(obj, known).is_some_and(|(t, ..)| !patch_round_trips(obj, Some(t)))
}

/// The schema type of a built-in object and its defaulting context.
fn typed(obj: &Value) -> Option<(TypeRef<'static>, Ctx)> {
    builtin_type(obj).map(|(t, g, v)| (t, Ctx::new(g, v)))
}

/// The schema type of a built-in object, with its group and version.
fn builtin_type(obj: &Value) -> Option<(TypeRef<'static>, &str, &str)> {
    let (g, v, k) = schema::gvk_of(obj)?;
    if !schema::is_builtin(g, v, k) {
        return None;
    }
    Some((schema::lookup(g, v, k)?, g, v))
}

/// Defaulting as Argo CD does it, whatever the object holds: the defaulters run on a copy
/// `T1` of the typed object `T0`, and the two-way strategic patch `T0 → T1` is applied onto
/// the object (left as it was when the patch cannot be made or applied).
#[cfg(test)]
fn defaults_by_patch(obj: &mut Value) {
    let Some((t, ctx)) = typed(obj) else { return };
    let Ok(t0) = typed_round_trip_cow(obj, t, Decode::Lenient) else { return };
    if t0.is_object() {
        let patch = defaults_patch(&t0, t, &ctx);
        drop(t0);
        if let Ok(patch) = patch {
            let _ = apply_defaults_patch(obj, patch, t);
        }
    }
}

/// The two-way patch `T0 → T1`; `None` when the defaults change nothing.
///
/// Go's typed copy has every merge key its type does not mark `omitempty` (a container
/// without a name has `name: ""`), so Go can always make the patch; the typed round trip
/// here leaves a missing key out. When the patch cannot be made for that reason, it is made
/// again from copies with those keys written as their zero values, as Go's are: the patch then
/// names such an item by its zero key, and does not fit the object if it touches the item.
///
/// # Errors
///
/// The patch cannot be made (a list item without a merge key Go leaves out too).
fn defaults_patch(t0: &Value, t: TypeRef, ctx: &Ctx) -> Result<Option<Value>, PatchFailure> {
    let mut t1 = t0.clone();
    walk(&mut t1, t, ctx);
    if t1 == *t0 {
        return Ok(None);
    }
    match two_way_typed(t0, &t1, Some(t)) {
        Ok(patch) => Ok(Some(patch)),
        Err(failure) => {
            let mut t0 = t0.clone();
            if !zero_merge_keys(&mut t0, t) {
                return Err(failure);
            }
            let mut t1 = t0.clone();
            walk(&mut t1, t, ctx);
            two_way_typed(&t0, &t1, Some(t)).map(Some)
        }
    }
}

/// Writes the zero value of each missing merge key that Go's type does not mark `omitempty`
/// into the items of `v`'s lists; whether one was written.
fn zero_merge_keys(v: &mut Value, t: TypeRef) -> bool {
    let mut wrote = false;
    match (t.shape(), v) {
        (Shape::Struct, Value::Object(m)) => {
            for (k, child) in m.iter_mut().filter(|(_, c)| c.is_object() || c.is_array()) {
                if let Some(ft) = t.field(k) {
                    wrote |= zero_merge_keys(child, ft);
                }
            }
        }
        (Shape::List, Value::Array(l)) => {
            let Some(it) = t.items() else { return false };
            let key = t.merge_key().and_then(|k| Some((k, it.field(k)?)));
            let zero = key.filter(|(_, kt)| !kt.omitempty()).and_then(|(k, kt)| {
                let z = match kt.scalar()? {
                    Scalar::String => json!(""),
                    Scalar::Integer => json!(0),
                    _ => return None,
                };
                Some((k, z))
            });
            for e in l.iter_mut() {
                if let (Some((k, z)), Value::Object(m)) = (&zero, &mut *e)
                    && !m.contains_key(*k)
                {
                    m.insert((*k).to_owned(), z.clone());
                    wrote = true;
                }
                wrote |= zero_merge_keys(e, it);
            }
        }
        (Shape::Map, Value::Object(m)) => {
            if let Some(vt) = t.values() {
                for e in m.values_mut() {
                    wrote |= zero_merge_keys(e, vt);
                }
            }
        }
        _ => {}
    }
    wrote
}

/// Applies the defaults' patch.
///
/// # Errors
///
/// The patch cannot be applied; the object is then left as it was.
fn apply_defaults_patch(
    obj: &mut Value,
    patch: Option<Value>,
    t: TypeRef,
) -> Result<(), PatchFailure> {
    let Some(patch) = patch else { return Ok(()) };
    let before = obj.clone();
    apply_typed_in_place(obj, patch, Some(t)).inspect_err(|_| *obj = before)
}

/// `item`, an object of definition `definition` inside an object of `group/version`, with
/// the `SetDefaults_*` of that definition applied (not those of the structs nested in it):
/// the values Kubernetes gives the fields it omits. Structured merge takes the key fields of
/// associative-list items from it (`protocol` of a port is `TCP`).
pub(crate) fn defaulted_fields(
    definition: &str,
    item: &Value,
    group: &str,
    version: &str,
) -> Value {
    let Value::Object(m) = item else { return item.clone() };
    let mut m = m.clone();
    let ctx = Ctx::new(group, version);
    default_definition(definition, &mut m, &ctx);
    Value::Object(m)
}

/// The object's `apiVersion`, made once per object (the version-specific defaults read it).
struct Ctx {
    gv: String,
}

impl Ctx {
    fn new(group: &str, version: &str) -> Ctx {
        let gv = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
        Ctx { gv }
    }
}

fn walk(v: &mut Value, t: TypeRef, ctx: &Ctx) {
    if let (Some(name), Value::Object(m)) = (t.definition_name(), &mut *v) {
        default_definition(name, m, ctx);
    }
    match t.shape() {
        Shape::Struct => {
            if let Value::Object(m) = v {
                // Only objects and lists hold anything to default (no lookup for scalars).
                for (k, child) in m.iter_mut().filter(|(_, c)| c.is_object() || c.is_array()) {
                    if let Some(ft) = t.field(k) {
                        walk(child, ft, ctx);
                    }
                }
            }
        }
        Shape::List => {
            if let (Some(it), Value::Array(l)) = (t.items(), &mut *v) {
                for e in l {
                    walk(e, it, ctx);
                }
            }
        }
        Shape::Map => {
            let Some(vt) = t.values() else { return };
            let Value::Object(m) = v else { return };
            if vt.is_quantity() {
                // SetDefaults_ResourceList: every quantity rounded up to milli.
                for q in m.values_mut() {
                    if let Some(parsed) = q.as_str().and_then(|s| Quantity::parse(s).ok()) {
                        *q = Value::String(parsed.round_up(3).canonical());
                    }
                }
            } else {
                for e in m.values_mut() {
                    walk(e, vt, ctx);
                }
            }
        }
        Shape::Scalar(_) | Shape::Untyped => {}
    }
}

// ---------------------------------------------------------------------------------------
// Helpers: "unset" is what the Go defaulters test (nil pointer, empty string, zero value).

fn unset(m: &Map<String, Value>, key: &str) -> bool {
    match m.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn default(m: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    // The value is made only when it is set (most fields are already there).
    if unset(m, key) {
        m.insert(key.to_owned(), value.into());
    }
}

/// [`default`] of a field Go declares as a pointer: only a nil pointer (absent or null) is
/// set; an empty string is a value.
fn default_nil(m: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_owned(), value.into());
    }
}

fn empty_or_absent(m: &Map<String, Value>, key: &str) -> bool {
    match m.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// The object at `key`, created (or replaced when not an object) if needed.
fn obj<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = m.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(o) => o,
        // The slot was made an object just above; this arm cannot be reached.
        _ => unreachable!("replaced by an object just above"),
    }
}

/// `spec.selector` and `metadata.labels` default to the pod template labels (old API versions).
fn selector_and_labels_from_template(m: &mut Map<String, Value>, selector_is_label_selector: bool) {
    let labels = m
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|md| md.get("labels"))
        .filter(|l| l.as_object().is_some_and(|o| !o.is_empty()))
        .cloned();
    let Some(labels) = labels else { return };
    let spec = obj(m, "spec");
    if selector_is_label_selector {
        if unset(spec, "selector") {
            spec.insert("selector".into(), json!({"matchLabels": labels.clone()}));
        }
    } else if empty_or_absent(spec, "selector") {
        spec.insert("selector".into(), labels.clone());
    }
    let meta = obj(m, "metadata");
    if empty_or_absent(meta, "labels") {
        meta.insert("labels".into(), labels);
    }
}

fn default_definition(name: &str, m: &mut Map<String, Value>, ctx: &Ctx) {
    let gv = ctx.gv.as_str();
    match name {
        "io.k8s.api.apps.v1.Deployment" => deployment(m, gv),
        "io.k8s.api.apps.v1.StatefulSet" => stateful_set(m, gv),
        "io.k8s.api.apps.v1.DaemonSet" => daemon_set(m, gv),
        "io.k8s.api.apps.v1.ReplicaSet" => {
            if gv == "extensions/v1beta1" {
                selector_and_labels_from_template(m, true);
            }
            default(obj(m, "spec"), "replicas", 1);
        }
        "io.k8s.api.core.v1.ReplicationController" => {
            selector_and_labels_from_template(m, false);
            default(obj(m, "spec"), "replicas", 1);
        }
        "io.k8s.api.batch.v1.Job" => job(m),
        "io.k8s.api.batch.v1.CronJobSpec" | "io.k8s.api.batch.v1beta1.CronJobSpec" => {
            default(m, "concurrencyPolicy", "Allow");
            default(m, "suspend", false);
            default(m, "successfulJobsHistoryLimit", 3);
            default(m, "failedJobsHistoryLimit", 1);
        }
        "io.k8s.api.core.v1.Pod" => pod(m),
        "io.k8s.api.core.v1.PodSpec" => {
            service_account_alias(m);
            default(m, "dnsPolicy", "ClusterFirst");
            default(m, "restartPolicy", "Always");
            default(m, "securityContext", json!({}));
            default(m, "terminationGracePeriodSeconds", 30);
            default(m, "schedulerName", "default-scheduler");
        }
        "io.k8s.api.core.v1.Container" | "io.k8s.api.core.v1.EphemeralContainer" => {
            if unset(m, "imagePullPolicy") {
                let image = m.get("image").and_then(Value::as_str).unwrap_or("");
                let policy = if image_tag(image) == "latest" { "Always" } else { "IfNotPresent" };
                m.insert("imagePullPolicy".into(), json!(policy));
            }
            default(m, "terminationMessagePath", "/dev/termination-log");
            default(m, "terminationMessagePolicy", "File");
        }
        "io.k8s.api.core.v1.ContainerPort"
        | "io.k8s.api.core.v1.ServicePort"
        | "io.k8s.api.core.v1.EndpointPort"
        | "io.k8s.api.networking.v1.NetworkPolicyPort" => {
            default(m, "protocol", "TCP");
        }
        "io.k8s.api.discovery.v1.EndpointPort" => {
            if m.get("name").is_none_or(Value::is_null) {
                m.insert("name".into(), json!(""));
            }
            default(m, "protocol", "TCP");
        }
        "io.k8s.api.rbac.v1.RoleBinding" | "io.k8s.api.rbac.v1.ClusterRoleBinding" => {
            default(obj(m, "roleRef"), "apiGroup", "rbac.authorization.k8s.io");
        }
        "io.k8s.api.rbac.v1.Subject" if unset(m, "apiGroup") => {
            if matches!(m.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
                m.insert("apiGroup".into(), json!("rbac.authorization.k8s.io"));
            }
        }
        "io.k8s.api.core.v1.ISCSIVolumeSource"
        | "io.k8s.api.core.v1.ISCSIPersistentVolumeSource" => {
            default(m, "iscsiInterface", "default");
        }
        "io.k8s.api.core.v1.RBDVolumeSource" | "io.k8s.api.core.v1.RBDPersistentVolumeSource" => {
            default(m, "pool", "rbd");
            default(m, "user", "admin");
            default(m, "keyring", "/etc/ceph/keyring");
        }
        "io.k8s.api.core.v1.AzureDiskVolumeSource" => {
            default(m, "cachingMode", "ReadWrite");
            default(m, "kind", "Shared");
            default(m, "fsType", "ext4");
            default(m, "readOnly", false);
        }
        "io.k8s.api.core.v1.ScaleIOVolumeSource"
        | "io.k8s.api.core.v1.ScaleIOPersistentVolumeSource" => {
            default(m, "storageMode", "ThinProvisioned");
            default(m, "fsType", "xfs");
        }
        "io.k8s.api.core.v1.Probe" => {
            for (k, v) in [
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ] {
                if empty_or_absent(m, k) {
                    m.insert(k.into(), json!(v));
                }
            }
        }
        // A declarative default (`+default=""`): the generated defaulters set the nil pointer.
        "io.k8s.api.core.v1.GRPCAction" => default_nil(m, "service", ""),
        // `+default=false` of `env[].valueFrom.fileKeyRef.optional`.
        "io.k8s.api.core.v1.FileKeySelector" => default_nil(m, "optional", false),
        "io.k8s.api.core.v1.HTTPGetAction" => {
            default(m, "path", "/");
            default(m, "scheme", "HTTP");
        }
        "io.k8s.api.core.v1.Volume" => volume(m),
        "io.k8s.api.core.v1.SecretVolumeSource"
        | "io.k8s.api.core.v1.ConfigMapVolumeSource"
        | "io.k8s.api.core.v1.DownwardAPIVolumeSource"
        | "io.k8s.api.core.v1.ProjectedVolumeSource" => default(m, "defaultMode", 420),
        "io.k8s.api.core.v1.HostPathVolumeSource" if m.get("type").is_none_or(Value::is_null) => {
            m.insert("type".into(), json!(""));
        }
        "io.k8s.api.core.v1.ServiceAccountTokenProjection" => default(m, "expirationSeconds", 3600),
        "io.k8s.api.core.v1.ObjectFieldSelector" => default(m, "apiVersion", "v1"),
        "io.k8s.api.core.v1.Service" => service(m),
        "io.k8s.api.core.v1.Secret" => default(m, "type", "Opaque"),
        "io.k8s.api.core.v1.Namespace" => {
            let name = m
                .get("metadata")
                .and_then(|md| md.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                obj(obj(m, "metadata"), "labels")
                    .insert("kubernetes.io/metadata.name".into(), json!(name));
            }
            default(obj(m, "status"), "phase", "Active");
        }
        "io.k8s.api.core.v1.PersistentVolume" => {
            let spec = obj(m, "spec");
            default(spec, "persistentVolumeReclaimPolicy", "Retain");
            default(spec, "volumeMode", "Filesystem");
            default(obj(m, "status"), "phase", "Pending");
        }
        "io.k8s.api.core.v1.PersistentVolumeClaim" => {
            obj(m, "spec");
            default(obj(m, "status"), "phase", "Pending");
        }
        "io.k8s.api.core.v1.LimitRangeItem" => limit_range_item(m),
        "io.k8s.api.core.v1.PersistentVolumeClaimSpec" => default(m, "volumeMode", "Filesystem"),
        "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec" => default(m, "minReplicas", 1),
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec" => hpa_v2(m),
        "io.k8s.api.networking.v1.NetworkPolicySpec" if empty_or_absent(m, "policyTypes") => {
            let mut types = vec![json!("Ingress")];
            if !empty_or_absent(m, "egress") {
                types.push(json!("Egress"));
            }
            m.insert("policyTypes".into(), Value::Array(types));
        }
        "io.k8s.api.storage.v1.StorageClass" => {
            default_nil(m, "reclaimPolicy", "Delete");
            default_nil(m, "volumeBindingMode", "Immediate");
        }
        "io.k8s.api.storage.v1.CSIDriverSpec" => {
            default_nil(m, "attachRequired", true);
            default_nil(m, "podInfoOnMount", false);
            default_nil(m, "storageCapacity", false);
            default_nil(m, "fsGroupPolicy", "ReadWriteOnceWithFSType");
            if empty_or_absent(m, "volumeLifecycleModes") {
                m.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
            }
            default_nil(m, "requiresRepublish", false);
            // SELinuxMountReadWriteOncePod is on (GA and locked since Kubernetes 1.36).
            default_nil(m, "seLinuxMount", false);
            // VolumeLimitScaling is on (beta, on by default since Kubernetes 1.37).
            default_nil(m, "preventPodSchedulingIfMissing", false);
        }
        // `+default=86400` (Kubernetes 1.37).
        "io.k8s.api.certificates.v1.PodCertificateRequest"
        | "io.k8s.api.certificates.v1beta1.PodCertificateRequest" => {
            default_nil(obj(m, "spec"), "maxExpirationSeconds", 86400);
        }
        // `+default={"single": {}}` (Kubernetes 1.37); the `preemptionPolicy` default waits
        // for PodGroupPreemptionPolicy, off by default (alpha).
        "io.k8s.api.scheduling.v1beta1.PodGroup"
        | "io.k8s.api.scheduling.v1alpha3.PodGroup"
        | "io.k8s.api.scheduling.v1alpha3.CompositePodGroup" => {
            default_nil(obj(m, "spec"), "disruptionMode", json!({"single": {}}));
        }
        "io.k8s.api.scheduling.v1.PriorityClass" => {
            default_nil(m, "preemptionPolicy", "PreemptLowerPriority")
        }
        "io.k8s.api.networking.v1.IngressClassParametersReference" => {
            default(m, "scope", "Cluster")
        }
        "io.k8s.api.admissionregistration.v1.MutatingWebhook" => webhook(m, gv, true),
        "io.k8s.api.admissionregistration.v1.ValidatingWebhook" => webhook(m, gv, false),
        "io.k8s.api.admissionregistration.v1.RuleWithOperations" => default(m, "scope", "*"),
        // Admission policies (MutatingAdmissionPolicy v1 is new in Kubernetes 1.37; the
        // validating ones share the defaulters): `SetDefaults_*AdmissionPolicySpec`,
        // `SetDefaults_MatchResources` and `SetDefaults_Rule` of the match rules.
        "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec"
        | "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicySpec"
        | "io.k8s.api.admissionregistration.v1beta1.MutatingAdmissionPolicySpec"
        | "io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicySpec" => {
            default_nil(m, "failurePolicy", "Fail");
        }
        "io.k8s.api.admissionregistration.v1.MatchResources"
        | "io.k8s.api.admissionregistration.v1beta1.MatchResources"
        | "io.k8s.api.admissionregistration.v1alpha1.MatchResources" => {
            default_nil(m, "matchPolicy", "Equivalent");
            default_nil(m, "namespaceSelector", json!({}));
            default_nil(m, "objectSelector", json!({}));
        }
        "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations"
        | "io.k8s.api.admissionregistration.v1beta1.NamedRuleWithOperations"
        | "io.k8s.api.admissionregistration.v1alpha1.NamedRuleWithOperations" => {
            default_nil(m, "scope", "*");
        }
        "io.k8s.api.admissionregistration.v1alpha1.ParamRef" => {
            default_nil(m, "parameterNotFoundAction", "Deny");
        }
        "io.k8s.api.admissionregistration.v1.ServiceReference" => default(m, "port", 443),
        _ => {}
    }
}

fn deployment(m: &mut Map<String, Value>, gv: &str) {
    let (surge, history, deadline) = match gv {
        "apps/v1beta1" => (json!("25%"), json!(2), json!(600)),
        "extensions/v1beta1" => (json!(1), json!(i32::MAX), json!(i32::MAX)),
        _ => (json!("25%"), json!(10), json!(600)),
    };
    if matches!(gv, "apps/v1beta1" | "extensions/v1beta1") {
        selector_and_labels_from_template(m, true);
    }
    let spec = obj(m, "spec");
    default(spec, "replicas", 1);
    let made = !spec.contains_key("strategy");
    let strategy = obj(spec, "strategy");
    default(strategy, "type", "RollingUpdate");
    // extensions/v1beta1 also fills a `rollingUpdate` given with another type.
    let rolling_update_given =
        gv == "extensions/v1beta1" && strategy.get("rollingUpdate").is_some_and(|r| !r.is_null());
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") || rolling_update_given
    {
        let ru = obj(strategy, "rollingUpdate");
        default(ru, "maxUnavailable", surge.clone());
        default(ru, "maxSurge", surge);
    }
    if made {
        // Go's typed copy holds `strategy: {}` (a struct, never omitted), so the defaults
        // patch diffs it as a retainKeys struct and carries `$retainKeys`, which the merge
        // leaves in an object that had no strategy (it drops only `$patch` maps).
        let mut keys: Vec<&String> =
            strategy.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| k).collect();
        keys.sort();
        let keys = Value::from(keys.into_iter().cloned().collect::<Vec<_>>());
        strategy.insert("$retainKeys".into(), keys);
    }
    default(spec, "revisionHistoryLimit", history);
    default(spec, "progressDeadlineSeconds", deadline);
}

fn stateful_set(m: &mut Map<String, Value>, gv: &str) {
    if gv == "apps/v1beta1" {
        selector_and_labels_from_template(m, true);
    }
    let spec = obj(m, "spec");
    default(spec, "podManagementPolicy", "OrderedReady");
    let us = obj(spec, "updateStrategy");
    if gv == "apps/v1beta1" {
        default(us, "type", "OnDelete");
    } else if unset(us, "type") {
        us.insert("type".into(), json!("RollingUpdate"));
        obj(us, "rollingUpdate");
    }
    if us.get("type").and_then(Value::as_str) == Some("RollingUpdate")
        && let Some(Value::Object(ru)) = us.get_mut("rollingUpdate")
    {
        default(ru, "partition", 0);
        // MaxUnavailableStatefulSet is on (beta, on by default since Kubernetes 1.37).
        default_nil(ru, "maxUnavailable", 1);
    }
    // The StatefulSetAutoDeletePVC defaulting runs in every apps version (on by default
    // since Kubernetes 1.27, the libraries Argo CD v3 builds with).
    if matches!(gv, "apps/v1" | "apps/v1beta1" | "apps/v1beta2") {
        let policy = obj(spec, "persistentVolumeClaimRetentionPolicy");
        default(policy, "whenDeleted", "Retain");
        default(policy, "whenScaled", "Retain");
    }
    default(spec, "replicas", 1);
    default(spec, "revisionHistoryLimit", 10);
}

fn daemon_set(m: &mut Map<String, Value>, gv: &str) {
    if gv == "extensions/v1beta1" {
        selector_and_labels_from_template(m, true);
    }
    let spec = obj(m, "spec");
    let us = obj(spec, "updateStrategy");
    default(
        us,
        "type",
        json!(if gv == "extensions/v1beta1" { "OnDelete" } else { "RollingUpdate" }),
    );
    if us.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let ru = obj(us, "rollingUpdate");
        default(ru, "maxUnavailable", 1);
        default(ru, "maxSurge", 0);
    }
    default(spec, "revisionHistoryLimit", 10);
}

fn job(m: &mut Map<String, Value>) {
    let template_labels = m
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|md| md.get("labels"))
        .filter(|l| l.is_object())
        .cloned();
    let spec = obj(m, "spec");
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default(spec, "parallelism", 1);
    if unset(spec, "backoffLimit") {
        let limit = if unset(spec, "backoffLimitPerIndex") { json!(6) } else { json!(i32::MAX) };
        spec.insert("backoffLimit".into(), limit);
    }
    default(spec, "completionMode", "NonIndexed");
    default(spec, "suspend", false);
    // JobPodReplacementPolicy is on (GA and locked since Kubernetes 1.34).
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|p| !p.is_null());
    let replacement = if failure_policy { "Failed" } else { "TerminatingOrFailed" };
    default_nil(spec, "podReplacementPolicy", json!(replacement));
    default_nil(spec, "manualSelector", false);
    if let Some(labels) = template_labels {
        let meta = obj(m, "metadata");
        if empty_or_absent(meta, "labels") {
            meta.insert("labels".into(), labels);
        }
    }
}

/// `SetDefaults_Volume`: a volume without a source is an `emptyDir`; an image volume pulls as
/// a container image does (ImageVolume: on by default since Kubernetes 1.35, GA in 1.36).
fn volume(m: &mut Map<String, Value>) {
    if m.iter().all(|(k, v)| k == "name" || v.is_null()) {
        m.insert("emptyDir".into(), json!({}));
    }
    if let Some(Value::Object(image)) = m.get_mut("image")
        && unset(image, "pullPolicy")
    {
        let reference = image.get("reference").and_then(Value::as_str).unwrap_or("");
        let policy = if image_tag(reference) == "latest" { "Always" } else { "IfNotPresent" };
        image.insert("pullPolicy".into(), json!(policy));
    }
}

/// `SetDefaults_PodSpec` (Kubernetes 1.37): the deprecated `serviceAccount` and
/// `serviceAccountName` name one account, `serviceAccountName` winning when both are set.
fn service_account_alias(m: &mut Map<String, Value>) {
    let named = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    if let Some(name) = named("serviceAccountName").or_else(|| named("serviceAccount")) {
        let name = json!(name);
        m.insert("serviceAccountName".into(), name.clone());
        m.insert("serviceAccount".into(), name);
    }
}

/// `SetDefaults_PodStatus` (Kubernetes 1.37): `podIP` and `podIPs` agree, `podIP` winning.
fn pod_status(status: &mut Map<String, Value>) {
    let ip = status.get("podIP").and_then(Value::as_str).filter(|s| !s.is_empty());
    let first = match status.get("podIPs") {
        Some(Value::Array(l)) if !l.is_empty() => Some(l[0].get("ip").and_then(Value::as_str)),
        _ => None,
    };
    match (ip, first) {
        (Some(ip), None) => {
            let ips = json!([{"ip": ip}]);
            status.insert("podIPs".into(), ips);
        }
        (None, Some(first)) => {
            if let Some(first) = first.filter(|s| !s.is_empty()) {
                let first = json!(first);
                status.insert("podIP".into(), first);
            }
        }
        (Some(ip), Some(first)) if first != Some(ip) => {
            let ips = json!([{"ip": ip}]);
            status.insert("podIPs".into(), ips);
        }
        _ => {}
    }
}

fn pod(m: &mut Map<String, Value>) {
    if let Some(Value::Object(status)) = m.get_mut("status") {
        pod_status(status);
    }
    let spec = obj(m, "spec");
    // A negative grace period becomes 1 (the Pod only, not pod templates).
    if spec.get("terminationGracePeriodSeconds").and_then(Value::as_i64).is_some_and(|n| n < 0) {
        spec.insert("terminationGracePeriodSeconds".into(), json!(1));
    }
    for list in ["containers", "initContainers"] {
        let Some(Value::Array(cs)) = spec.get_mut(list) else { continue };
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            let Some(Value::Object(res)) = c.get_mut("resources") else { continue };
            let Some(Value::Object(limits)) = res.get("limits").cloned() else { continue };
            let requests = obj(res, "requests");
            for (k, v) in limits {
                requests.entry(k).or_insert(v);
            }
        }
    }
    default(spec, "enableServiceLinks", true);
    if spec.get("hostNetwork") == Some(&Value::Bool(true)) {
        for list in ["containers", "initContainers"] {
            let Some(Value::Array(cs)) = spec.get_mut(list) else { continue };
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                let Some(Value::Array(ports)) = c.get_mut("ports") else { continue };
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    if empty_or_absent(p, "hostPort")
                        && let Some(cp) = p.get("containerPort").cloned()
                    {
                        p.insert("hostPort".into(), cp);
                    }
                }
            }
        }
    }
}

/// `SetDefaults_LimitRangeItem`: a container limit's `default` takes the `max` it lacks, and
/// its `defaultRequest` the `default`, then the `min`, it lacks. Go's empty maps are left out
/// by `omitempty`, so an empty result is not written.
fn limit_range_item(m: &mut Map<String, Value>) {
    if m.get("type").and_then(Value::as_str) != Some("Container") {
        return;
    }
    let fill = |m: &mut Map<String, Value>, to: &str, from: &str| {
        let Some(Value::Object(src)) = m.get(from) else { return };
        if src.is_empty() {
            return;
        }
        let src = src.clone();
        let dst = obj(m, to);
        for (k, v) in src {
            dst.entry(k).or_insert(v);
        }
    };
    fill(m, "default", "max");
    fill(m, "defaultRequest", "default");
    fill(m, "defaultRequest", "min");
}

fn service(m: &mut Map<String, Value>) {
    let spec = obj(m, "spec");
    default(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    default(spec, "type", "ClusterIP");
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default(p, "protocol", "TCP");
            let tp_zero = match p.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty(),
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                _ => false,
            };
            if tp_zero {
                let port = p.get("port").cloned().unwrap_or(json!(0));
                p.insert("targetPort".into(), port);
            }
        }
    }
    let ty = spec.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let externally_accessible = ty == "LoadBalancer"
        || ty == "NodePort"
        || (ty == "ClusterIP" && !empty_or_absent(spec, "externalIPs"));
    if externally_accessible {
        default(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default(spec, "internalTrafficPolicy", "Cluster");
    }
    if ty == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", true);
        // The load balancer's addresses are virtual IPs unless the status says otherwise
        // (LoadBalancerIPMode: on since Kubernetes 1.30, unconditional in 1.37).
        let ingress = m
            .get_mut("status")
            .and_then(|s| s.get_mut("loadBalancer"))
            .and_then(|l| l.get_mut("ingress"))
            .and_then(Value::as_array_mut);
        for i in ingress.into_iter().flatten().filter_map(Value::as_object_mut) {
            if i.get("ip").and_then(Value::as_str).is_some_and(|ip| !ip.is_empty()) {
                default_nil(i, "ipMode", "VIP");
            }
        }
    }
}

fn hpa_v2(m: &mut Map<String, Value>) {
    default(m, "minReplicas", 1);
    if empty_or_absent(m, "metrics") {
        m.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(Value::Object(behavior)) = m.get_mut("behavior") else { return };
    let up = obj(behavior, "scaleUp");
    default(up, "stabilizationWindowSeconds", 0);
    default(up, "selectPolicy", "Max");
    if unset(up, "policies") {
        up.insert(
            "policies".into(),
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
    }
    let down = obj(behavior, "scaleDown");
    default(down, "selectPolicy", "Max");
    if unset(down, "policies") {
        down.insert(
            "policies".into(),
            json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
    }
}

/// `SetDefaults_MutatingWebhook`/`SetDefaults_ValidatingWebhook` of the object's version:
/// admissionregistration v1 has no default for `sideEffects` and `admissionReviewVersions`
/// and a 10-second timeout; v1beta1 defaults both and waits 30 seconds.
fn webhook(m: &mut Map<String, Value>, gv: &str, mutating: bool) {
    let v1beta1 = gv.ends_with("/v1beta1");
    default_nil(m, "failurePolicy", json!(if v1beta1 { "Ignore" } else { "Fail" }));
    default_nil(m, "matchPolicy", json!(if v1beta1 { "Exact" } else { "Equivalent" }));
    default_nil(m, "namespaceSelector", json!({}));
    default_nil(m, "objectSelector", json!({}));
    if v1beta1 {
        default_nil(m, "sideEffects", "Unknown");
        default_nil(m, "timeoutSeconds", 30);
        if empty_or_absent(m, "admissionReviewVersions") {
            m.insert("admissionReviewVersions".into(), json!(["v1beta1"]));
        }
    } else {
        default_nil(m, "timeoutSeconds", 10);
    }
    if mutating {
        default_nil(m, "reinvocationPolicy", "Never");
    }
}

/// The tag of an image reference as `parsers.ParseImageName` sees it: `latest` when there is
/// neither tag nor digest, empty when there is only a digest or the name is empty.
fn image_tag(image: &str) -> &str {
    if image.is_empty() {
        return "";
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => tag,
        None if digest => "",
        None => "latest",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy(spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})
    }

    #[test]
    fn deployment_defaults() {
        let d = deploy(
            json!({"template": {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}),
        );
        let out = apply_defaults(&d);
        let spec = &out["spec"];
        assert_eq!(spec["replicas"], json!(1));
        assert_eq!(spec["revisionHistoryLimit"], json!(10));
        assert_eq!(spec["progressDeadlineSeconds"], json!(600));
        // The strategy the object lacked carries the `$retainKeys` of Go's defaults patch.
        assert_eq!(
            spec["strategy"],
            json!({"$retainKeys": ["rollingUpdate", "type"], "type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["dnsPolicy"], json!("ClusterFirst"));
        assert_eq!(pod["securityContext"], json!({}));
        assert_eq!(pod["terminationGracePeriodSeconds"], json!(30));
        let c = &pod["containers"][0];
        assert_eq!(c["imagePullPolicy"], json!("Always"));
        assert_eq!(c["terminationMessagePath"], json!("/dev/termination-log"));
        assert_eq!(c["ports"][0]["protocol"], json!("TCP"));
    }

    #[test]
    fn unknown_fields_survive_and_mismatches_abort() {
        let d = deploy(json!({"replicas": 2, "extra": {"x": 1}}));
        let out = apply_defaults(&d);
        assert_eq!(out["spec"]["extra"], json!({"x": 1}));
        assert_eq!(out["spec"]["replicas"], json!(2));
        let bad = deploy(json!({"replicas": "two"}));
        assert_eq!(apply_defaults(&bad), bad);
        let crd = json!({"apiVersion": "x.io/v1", "kind": "Deployment"});
        assert_eq!(apply_defaults(&crd), crd);
    }

    #[test]
    fn explicit_values_are_kept() {
        let d = deploy(json!({"replicas": 0, "strategy": {"type": "Recreate"}}));
        let out = apply_defaults(&d);
        assert_eq!(out["spec"]["replicas"], json!(0));
        assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn service_defaults() {
        let s = json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}], "sessionAffinity": "ClientIP"}});
        let out = apply_defaults(&s);
        assert_eq!(
            out["spec"]["ports"],
            json!([{"port": 80, "protocol": "TCP", "targetPort": 80}])
        );
        assert_eq!(out["spec"]["type"], json!("ClusterIP"));
        assert_eq!(out["spec"]["internalTrafficPolicy"], json!("Cluster"));
        assert_eq!(
            out["spec"]["sessionAffinityConfig"],
            json!({"clientIP": {"timeoutSeconds": 10800}})
        );
    }

    #[test]
    fn resource_lists_round_up_to_milli() {
        let p = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "i:1", "resources": {"limits": {"cpu": "0.0001"}}}]}});
        let out = apply_defaults(&p);
        let c = &out["spec"]["containers"][0];
        assert_eq!(c["resources"], json!({"limits": {"cpu": "1m"}, "requests": {"cpu": "1m"}}));
        assert_eq!(c["imagePullPolicy"], json!("IfNotPresent"));
        assert_eq!(out["spec"]["enableServiceLinks"], json!(true));
    }

    #[test]
    fn a_defaults_patch_that_does_not_fit_fails_and_leaves_the_object() {
        // The typed copy of a container without a name has `name: ""`: the patch's merge key.
        let d = deploy(
            json!({"template": {"spec": {"containers": [{"name": "a", "image": "i:1"}, {"image": "i:1"}]}}}),
        );
        let mut out = d.clone();
        let err = apply_defaults_in_place(&mut out).expect_err("the patch does not fit");
        assert_eq!(err.path, "/spec/template/spec/containers");
        assert_eq!(
            err.message,
            r#"map: {"image":"i:1"} does not contain declared merge key: name"#
        );
        assert_eq!(out, d);
        assert_eq!(apply_defaults(&d), d);
    }

    #[test]
    fn version_specific_webhook_defaults() {
        let hook = json!({"name": "w", "clientConfig": {"url": "https://x"}});
        let config = |api: &str, kind: &str| json!({"apiVersion": api, "kind": kind, "webhooks": [hook.clone()]});
        let v1 = apply_defaults(&config(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
        ));
        assert_eq!(
            v1["webhooks"][0],
            json!({"name": "w", "clientConfig": {"url": "https://x"}, "failurePolicy": "Fail",
                "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "timeoutSeconds": 10})
        );
        let beta = apply_defaults(&config(
            "admissionregistration.k8s.io/v1beta1",
            "MutatingWebhookConfiguration",
        ));
        assert_eq!(
            beta["webhooks"][0],
            json!({"name": "w", "clientConfig": {"url": "https://x"}, "failurePolicy": "Ignore",
                "matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {},
                "sideEffects": "Unknown", "timeoutSeconds": 30,
                "admissionReviewVersions": ["v1beta1"], "reinvocationPolicy": "Never"})
        );
    }

    #[test]
    fn image_tags() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.15"), "1.15");
        assert_eq!(image_tag("localhost:5000/nginx"), "latest");
        assert_eq!(image_tag("nginx@sha256:abc"), "");
        assert_eq!(image_tag("nginx:latest"), "latest");
        assert_eq!(image_tag(""), "");
    }

    #[test]
    fn volumes_and_webhooks() {
        let p = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"volumes": [{"name": "a"}, {"name": "b", "configMap": {"name": "x"}}]}});
        let out = apply_defaults(&p);
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "a", "emptyDir": {}}, {"name": "b", "configMap": {"name": "x", "defaultMode": 420}}])
        );
        let w = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingWebhookConfiguration",
            "webhooks": [{"name": "w", "clientConfig": {"service": {"name": "s", "namespace": "n"}}, "rules": [{"operations": ["CREATE"]}]}]});
        let out = apply_defaults(&w);
        let hook = &out["webhooks"][0];
        assert_eq!(hook["failurePolicy"], json!("Ignore"));
        assert_eq!(hook["admissionReviewVersions"], json!(["v1beta1"]));
        assert_eq!(hook["rules"][0]["scope"], json!("*"));
        assert_eq!(hook["clientConfig"]["service"]["port"], json!(443));
        assert_eq!(hook["reinvocationPolicy"], json!("Never"));
    }
}

/// The in-place path against the patch's own path: wherever [`apply_defaults_in_place`]
/// writes into the object, the result is what Argo CD's diff-and-patch gives.
#[cfg(test)]
mod in_place_is_the_patch {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::remarshal::{Decode, remarshal, typed_round_trip_cow};
    use super::super::smp::{
        apply_strategic_patch_in_place, patch_round_trips, three_way_strategic_patch,
    };
    use super::{apply_defaults, defaults_by_patch, typed};

    fn by_patch(obj: &Value) -> Value {
        let mut v = obj.clone();
        defaults_by_patch(&mut v);
        v
    }

    /// Whether [`super::apply_defaults_in_place`] takes the in-place path for `obj`.
    fn in_place(obj: &Value) -> bool {
        let Some((t, _)) = typed(obj) else { return false };
        matches!(typed_round_trip_cow(obj, t, Decode::Lenient), Ok(std::borrow::Cow::Borrowed(t0))
            if t0.is_object() && patch_round_trips(t0, Some(t)))
    }

    /// Every object (a map with a string `apiVersion` and `kind`) at any depth of `v`.
    fn objects_in(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                if m.get("apiVersion").is_some_and(Value::is_string)
                    && m.get("kind").is_some_and(Value::is_string)
                {
                    out.push(v.clone());
                }
                m.values().for_each(|c| objects_in(c, out));
            }
            Value::Array(l) => l.iter().for_each(|c| objects_in(c, out)),
            _ => {}
        }
    }

    #[test]
    fn on_every_object_of_the_test_data() {
        let (mut objects, mut taken, mut changed) = (0, 0, 0);
        for p in crate::tests::support::all_files() {
            let Some(text) = crate::tests::support::read_path(&p) else { continue };
            let docs: Vec<Value> = match p.extension().and_then(|e| e.to_str()) {
                Some("json") => serde_json::from_str(&text).into_iter().collect(),
                Some("yaml" | "yml") => serde_norway::Deserializer::from_str(&text)
                    .filter_map(|d| serde::Deserialize::deserialize(d).ok())
                    .collect(),
                _ => continue,
            };
            let mut found = Vec::new();
            docs.iter().for_each(|d| objects_in(d, &mut found));
            for obj in found.iter().flat_map(|o| [o.clone(), remarshal(o)]) {
                objects += 1;
                if in_place(&obj) {
                    taken += 1;
                }
                assert_eq!(super::in_place(&obj).is_some(), in_place(&obj), "{obj}");
                let got = apply_defaults(&obj);
                if got != obj {
                    changed += 1;
                }
                assert_eq!(got, by_patch(&obj), "{}: {obj}", p.display());
            }
        }
        // The comparison means something only if the in-place path is taken and changes
        // objects (counts of today's test data: thousands of objects).
        assert!(objects > 1000 && taken > 500 && changed > 300, "{objects} {taken} {changed}");
    }

    /// Built-in objects shaped to reach the edges of the two-way patch: repeated and missing
    /// merge keys, the same port under two protocols, nulls, unknown fields, directive-like
    /// keys, retainKeys positions, floats where integers belong.
    fn object() -> impl Strategy<Value = Value> {
        // Mostly values a cluster holds, one draw in five from the edges.
        fn pick(clean: Vec<Value>, edge: Vec<Value>) -> impl Strategy<Value = Value> + Clone {
            prop_oneof![4 => prop::sample::select(clean), 1 => prop::sample::select(edge)]
        }
        let name = pick(vec![json!("a"), json!("b"), json!("c")], vec![json!("a"), Value::Null]);
        let image =
            prop::sample::select(vec!["nginx", "nginx:latest", "x@sha256:00", "r:5000/x:1"]);
        let port = pick(
            vec![
                json!({"containerPort": 80}),
                json!({"containerPort": 81, "protocol": "UDP"}),
                json!({"containerPort": 53, "protocol": "TCP", "name": "dns"}),
            ],
            vec![
                json!({"containerPort": 80, "protocol": "UDP"}),
                json!({"containerPort": "80"}),
                json!({"name": "p"}),
                json!({"containerPort": 82, "extra": 1}),
            ],
        );
        let extra = pick(
            vec![
                json!({}),
                json!({"imagePullPolicy": "Never"}),
                json!({"resources": {"limits": {"cpu": "0.0001", "memory": "1Gi"}}}),
                json!({"livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 0}}),
            ],
            vec![
                json!({"resources": {"limits": {"cpu": "1000m"}, "requests": {"cpu": 0.5}}}),
                json!({"unknownField": true}),
                json!({"securityContext": null}),
                json!({"$patch": "delete"}),
            ],
        );
        let container = (name, image, prop::collection::vec(port, 0..3), extra).prop_map(
            |(name, image, ports, extra)| {
                let mut c = json!({"image": image, "ports": ports});
                if !name.is_null() {
                    c["name"] = name;
                }
                if let (Some(c), Value::Object(e)) = (c.as_object_mut(), extra) {
                    c.extend(e);
                }
                c
            },
        );
        let volume = pick(
            vec![
                json!({"name": "v"}),
                json!({"name": "c", "configMap": {"name": "c"}}),
                json!({"name": "h", "hostPath": {"path": "/x"}}),
                json!({"name": "p", "projected": {"sources": []}}),
            ],
            vec![
                json!({"name": "v", "configMap": {"name": "c"}}),
                json!({"name": "w", "secret": {"secretName": "s"}, "extra": 1}),
                json!({"configMap": {}}),
                json!({"name": "e", "emptyDir": null}),
            ],
        );
        let strategy = pick(
            vec![json!({}), json!({"type": "Recreate"}), json!({"rollingUpdate": {"maxSurge": 1}})],
            vec![Value::Null, json!({"type": "RollingUpdate", "extra": 1}), json!({"type": null})],
        );
        let replicas = pick(vec![json!(2), json!(0)], vec![Value::Null, json!(2.0), json!("2")]);
        let labels = pick(
            vec![json!({"app": "x"}), json!({})],
            vec![json!({"$x": "y"}), json!({"app": null})],
        );
        let finalizers = pick(vec![json!([]), json!(["f"])], vec![json!(["f", "f"])]);
        let kind = prop::sample::select(vec![
            ("apps/v1", "Deployment"),
            ("apps/v1", "StatefulSet"),
            ("apps/v1", "DaemonSet"),
            ("apps/v1beta1", "Deployment"),
            ("extensions/v1beta1", "DaemonSet"),
            ("batch/v1", "Job"),
            ("v1", "Pod"),
            ("v1", "Service"),
            ("networking.k8s.io/v1", "NetworkPolicy"),
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ]);
        let service_port = pick(
            vec![
                json!({"port": 80}),
                json!({"port": 81, "protocol": "UDP", "targetPort": 0}),
                json!({"port": 443, "targetPort": "https", "name": "https"}),
            ],
            vec![json!({"port": 80, "protocol": "UDP"}), json!({"name": "x"})],
        );
        let service_type = prop::sample::select(vec![
            json!({}),
            json!({"type": "NodePort"}),
            json!({"type": "LoadBalancer", "sessionAffinity": "ClientIP"}),
            json!({"externalIPs": ["1.2.3.4"], "sessionAffinity": "None",
                "sessionAffinityConfig": {"clientIP": {}}}),
        ]);
        (
            kind,
            prop::collection::vec(container.clone(), 0..3),
            prop::collection::vec(container, 0..2),
            prop::collection::vec(volume, 0..3),
            (strategy, replicas, labels, finalizers),
            (prop::collection::vec(service_port, 0..3), service_type),
            any::<bool>(),
        )
            .prop_map(
                |(
                    (api, kind),
                    cs,
                    inits,
                    vols,
                    (strategy, replicas, labels, fin),
                    (sp, st),
                    host,
                )| {
                    let pod = json!({"containers": cs, "initContainers": inits,
                    "volumes": vols, "hostNetwork": host});
                    let mut o = json!({"apiVersion": api, "kind": kind,
                    "metadata": {"name": "o", "labels": labels, "finalizers": fin}});
                    o["spec"] = match kind {
                        "Pod" => pod,
                        "Service" => {
                            let mut s = json!({"ports": sp});
                            if let (Some(s), Value::Object(t)) = (s.as_object_mut(), st) {
                                s.extend(t);
                            }
                            s
                        }
                        "NetworkPolicy" => json!({"ingress": [{"ports": sp}],
                        "egress": if host { json!([{}]) } else { Value::Null }}),
                        "HorizontalPodAutoscaler" => json!({"maxReplicas": 3,
                        "minReplicas": replicas,
                        "behavior": if host { json!({"scaleUp": {}}) } else { Value::Null }}),
                        _ => json!({"replicas": replicas, "strategy": strategy.clone(),
                        "updateStrategy": strategy,
                        "template": {"metadata": {"labels": {"app": "x"}}, "spec": pod}}),
                    };
                    o
                },
            )
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(512))]

        #[test]
        fn on_generated_objects(obj in object()) {
            for obj in [remarshal(&obj), obj] {
                prop_assert_eq!(apply_defaults(&obj), by_patch(&obj), "{}", obj);
            }
        }

        /// [`super::in_place`]'s one walk answers as the typed round trip and the patch's
        /// round-trip check, each walking the whole object, do.
        #[test]
        fn one_walk_answers_as_the_two_walks(obj in object()) {
            for obj in [remarshal(&obj), obj] {
                prop_assert_eq!(super::in_place(&obj).is_some(), in_place(&obj), "{}", obj);
            }
        }

        /// [`super::entry_holds`]' one walk answers as its two walks on every entry of every
        /// map of the object, at a `retainKeys` position or not.
        #[test]
        fn entry_holds_answers_as_the_two_walks(obj in object()) {
            for obj in [remarshal(&obj), obj] {
                let Some((t, _)) = typed(&obj) else { continue };
                let mut disagree = Vec::new();
                entries_disagree(&obj, t, &mut disagree);
                prop_assert!(disagree.is_empty(), "{:?} in {}", disagree, obj);
            }
        }
    }

    /// The keys of the entries below `v` (of type `t`) where [`super::entry_holds`] and
    /// [`super::entry_holds_by_two_walks`] disagree.
    fn entries_disagree(v: &Value, t: crate::schema::TypeRef, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    for rk in [false, true] {
                        if super::entry_holds(k, c, t, rk)
                            != super::entry_holds_by_two_walks(k, c, t, rk)
                        {
                            out.push(k.clone());
                        }
                    }
                    if let Some(ct) = t.child(k) {
                        entries_disagree(c, ct, out);
                    }
                }
            }
            Value::Array(l) => {
                if let Some(it) = t.items() {
                    l.iter().for_each(|e| entries_disagree(e, it, out));
                }
            }
            _ => {}
        }
    }

    /// `live` patched by `patch` (built for `live`'s type), and whether
    /// [`super::InPlace::holds_after`] vouches for the result; `None` when `live` does not take
    /// the in-place path or the patch does not apply.
    fn patched(live: &Value, patch: &Value) -> Option<(Value, bool)> {
        let ip = super::in_place(live)?;
        let (g, v, k) = crate::schema::gvk_of(live)?;
        let mut after = live.clone();
        apply_strategic_patch_in_place(&mut after, patch.clone(), g, v, k).ok()?;
        let holds = ip.holds_after(&after, live, patch);
        Some((after, holds))
    }

    /// The patches [`patched`] is tried with: the three-way patch from `orig` and `config`
    /// (given `live`'s type), and `other` itself as a patch (without its type).
    fn patches_for(live: &Value, orig: &Value, config: &Value, other: &Value) -> Vec<Value> {
        let Some((g, v, k)) = crate::schema::gvk_of(live) else { return Vec::new() };
        let typed_as_live = |o: &Value| {
            let mut o = o.clone();
            o["apiVersion"] = live["apiVersion"].clone();
            o["kind"] = live["kind"].clone();
            o
        };
        let (orig, config) = (typed_as_live(orig), typed_as_live(config));
        let mut out: Vec<Value> = [
            three_way_strategic_patch(&orig, &config, live, g, v, k),
            three_way_strategic_patch(&config, &config, live, g, v, k),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut bare = other.clone();
        if let Some(m) = bare.as_object_mut() {
            m.remove("apiVersion");
            m.remove("kind");
        }
        out.push(bare);
        // What most predictions are: small changes of metadata and spec.
        out.extend([
            json!({"metadata": {"annotations": null}}),
            json!({"metadata": {"labels": {"app": "y", "x": null}}}),
            json!({"spec": {"replicas": 3, "template": {"metadata": {"labels": {"v": "2"}}}}}),
        ]);
        out
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(512))]

        /// [`super::InPlace::holds_after`] is never wrong: wherever it vouches for a patched
        /// object, that object takes the in-place path.
        #[test]
        fn holds_after_only_where_the_patched_object_is_in_place(
            live in object(), orig in object(), config in object(),
        ) {
            for live in [remarshal(&live), live.clone()] {
                for patch in patches_for(&live, &orig, &config, &config) {
                    if let Some((after, true)) = patched(&live, &patch) {
                        prop_assert!(super::in_place(&after).is_some(), "{} + {}", live, patch);
                    }
                }
            }
        }
    }

    /// [`super::InPlace::holds_after`] vouches for many generated patches (the property above
    /// would hold vacuously otherwise), and is seldom too careful (a prediction it does not
    /// vouch for takes the slower way, which gives the same answer).
    #[test]
    fn holds_after_is_reached_both_ways() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut yes, mut no) = (0, 0);
        let draw = |runner: &mut proptest::test_runner::TestRunner| {
            remarshal(&proptest::strategy::ValueTree::current(
                &object().new_tree(runner).expect("a value"),
            ))
        };
        for _ in 0..300 {
            let (live, orig, config) = (draw(&mut runner), draw(&mut runner), draw(&mut runner));
            for patch in patches_for(&live, &orig, &config, &config) {
                match patched(&live, &patch) {
                    Some((_, true)) => yes += 1,
                    Some((after, false)) if super::in_place(&after).is_some() => no += 1,
                    _ => {}
                }
            }
        }
        assert!(yes > 100 && no * 10 < yes, "{yes} {no}");
    }

    /// The generator reaches both paths (the property above would hold vacuously otherwise).
    #[test]
    fn the_generated_objects_take_both_paths() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut fast, mut slow) = (0, 0);
        for _ in 0..400 {
            let obj = proptest::strategy::ValueTree::current(
                &object().new_tree(&mut runner).expect("a value"),
            );
            if in_place(&remarshal(&obj)) {
                fast += 1;
            } else {
                slow += 1;
            }
        }
        assert!(fast > 40 && slow > 40, "{fast} {slow}");
    }
}
