//! Strategic merge patch (apimachinery `strategicpatch`): creating two- and three-way patches
//! and applying them, driven by the merge keys and strategies of `crate::schema`.
//!
//! Creation follows k8s.io/apimachinery v0.37.0 pkg/util/strategicpatch/patch.go (`diffMaps`,
//! `diffLists`, `$retainKeys`, `$setElementOrder`, `$deleteFromPrimitiveList`, deletions as
//! `$patch: delete`), the three-way patch is the merge of the deletions patch with the delta patch
//! (patch.go `CreateThreeWayMergePatch`, `overwrite=true`: no conflict check), and application
//! follows patch.go `StrategicMergePatch`.
//!
//! Deliberate difference: a field the schema does not know (the table is Kubernetes 1.37
//! with the Go facts of k8s.io/api v0.37.0; a field newer than that) is treated as untyped
//! (maps merged, lists replaced) instead of failing the patch.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::error::PatchFailure;
use crate::schema::{self, Strategy, TypeRef};

type Result<T> = std::result::Result<T, PatchFailure>;

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ORDER: &str = "$setElementOrder/";
const DELETE_PRIMITIVE: &str = "$deleteFromPrimitiveList/";
/// What makes a patch key an order or deletion directive when applying: the prefix without
/// its `/` (a key `$setElementOrderX` is a malformed directive, not a field).
const SET_ORDER_PREFIX: &str = "$setElementOrder";
const DELETE_PRIMITIVE_PREFIX: &str = "$deleteFromPrimitiveList";

/// The field a directive key `{prefix}/{field}` names (Go's `extractKey`).
fn directive_field<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    key.split_once('/').filter(|(head, _)| *head == prefix).map(|(_, field)| field)
}

/// Whether `group/version, kind` is a type registered in client-go's scheme (built-in), so that
/// kubectl uses a strategic merge patch for it (gitops-engine pkg/diff/diff.go
/// `threeWayMergePatch`).
pub(crate) fn is_builtin(group: &str, version: &str, kind: &str) -> bool {
    schema::is_builtin(group, version, kind)
}

fn type_of(group: &str, version: &str, kind: &str) -> Result<TypeRef<'static>> {
    schema::lookup(group, version, kind).ok_or_else(|| {
        let gv = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
        PatchFailure::new("", format!("no schema for {gv}, Kind={kind}"))
    })
}

fn as_object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| PatchFailure::new("", format!("{what} is not a JSON object")))
}

/// `CreateThreeWayMergePatch(original, modified, current, overwrite=true)` for a built-in type.
pub(crate) fn three_way_strategic_patch(
    original: &Value,
    modified: &Value,
    current: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> std::result::Result<Value, PatchFailure> {
    let t = type_of(group, version, kind)?;
    three_way_typed(original, modified, current, Some(t))
}

/// `CreateThreeWayMergePatch` for a schema position, e.g. a custom resource's type from
/// `schema::lookup_in_openapi`; `None` treats everything as untyped (maps merged, lists
/// replaced).
pub(crate) fn three_way_typed(
    original: &Value,
    modified: &Value,
    current: &Value,
    t: Option<TypeRef>,
) -> std::result::Result<Value, PatchFailure> {
    three_way_maps(original, modified, current, t, false)
}

/// [`three_way_typed`], by the general way only when `general` is set.
fn three_way_maps(
    original: &Value,
    modified: &Value,
    current: &Value,
    t: Option<TypeRef>,
    general: bool,
) -> std::result::Result<Value, PatchFailure> {
    let original = as_object(original, "original")?;
    let modified = as_object(modified, "modified")?;
    let current = as_object(current, "current")?;
    let delta_opts = DiffOptions {
        ignore_deletions: true,
        set_element_order: true,
        general,
        ..Default::default()
    };
    let delta = diff_maps(current, modified, t, delta_opts, At::Root)?;
    let deletion_opts = DiffOptions {
        ignore_changes_and_additions: true,
        set_element_order: true,
        general,
        ..Default::default()
    };
    let deletions = diff_maps(original, modified, t, deletion_opts, At::Root)?;
    Ok(Value::Object(merge_map(deletions, delta, t, MergeOptions::PATCHES, At::Root)?))
}

/// `CreateTwoWayMergePatch(original, modified)` for a built-in type (the fuzz target's
/// invariants check it against the three-way patch).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn two_way_strategic_patch(
    original: &Value,
    modified: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> std::result::Result<Value, PatchFailure> {
    let t = type_of(group, version, kind)?;
    two_way_typed(original, modified, Some(t))
}

/// Two-way patch for a schema position (used by defaulting).
pub(crate) fn two_way_typed(
    original: &Value,
    modified: &Value,
    t: Option<TypeRef>,
) -> std::result::Result<Value, PatchFailure> {
    let original = as_object(original, "original")?;
    let modified = as_object(modified, "modified")?;
    let opts = DiffOptions { set_element_order: true, ..Default::default() };
    Ok(Value::Object(diff_maps(original, modified, t, opts, At::Root)?))
}

/// Whether the two-way patch round-trips on `doc`: for any `modified` that only adds fields to
/// `doc` or changes the values of fields that are not merge keys (what Kubernetes defaulting
/// does), applying `two_way_typed(doc, modified)` onto `doc` gives `modified` exactly, so a
/// caller may write the changes into `doc` itself instead of diffing and patching. It holds
/// when every list merged by key has object elements with distinct keys (by `%v`, as the
/// patch matches them), every merged list of scalars has distinct scalars, no key is a patch
/// directive (starts with `$`), and no map at a `retainKeys` position holds a null (the
/// directive lists only non-null keys, so applying it would remove them). Anything else —
/// a missing or repeated merge key, mixed elements — makes the patch fail or merge elements
/// together, and the caller must take the patch's own path.
pub(crate) fn patch_round_trips(doc: &Value, t: Option<TypeRef>) -> bool {
    doc.as_object().is_some_and(|m| map_round_trips(m, t, false))
}

pub(crate) fn map_round_trips(
    m: &Map<String, Value>,
    t: Option<TypeRef>,
    retain_keys: bool,
) -> bool {
    m.iter().all(|(key, v)| entry_round_trips(key, v, t, retain_keys))
}

/// [`patch_round_trips`]' condition on one entry `key: v` of a map at position `t` (at a
/// `retainKeys` position when `retain_keys` is set): the entry and everything below it. A map
/// round-trips when each of its entries does, so a caller that knows the rest of a map
/// round-trips checks the entries that changed.
pub(crate) fn entry_round_trips(
    key: &str,
    v: &Value,
    t: Option<TypeRef>,
    retain_keys: bool,
) -> bool {
    if key.starts_with('$') || (retain_keys && v.is_null()) {
        return false;
    }
    // Scalars hold as they are: no look-up of the key's metadata.
    !(v.is_object() || v.is_array()) || below_round_trips(v, meta(t, key))
}

/// [`entry_round_trips`]' condition below a value `v` at the typed position `t` (the key of
/// its entry and a null at a `retainKeys` position are the caller's to check).
pub(crate) fn value_round_trips(v: &Value, t: TypeRef) -> bool {
    below_round_trips(v, Meta { t: Some(t), strategy: t.strategy(), merge_key: t.merge_key() })
}

/// [`entry_round_trips`]' condition below a value `v` of a key whose metadata is `m`.
fn below_round_trips(v: &Value, m: Meta) -> bool {
    match v {
        Value::Object(o) => map_round_trips(o, m.t, m.strategy.retain_keys),
        Value::Array(l) => {
            let items = m.t.and_then(TypeRef::items);
            (!m.strategy.merge || merged_list_round_trips(l, m.merge_key))
                && l.iter().all(|e| element_round_trips(e, items, m.strategy.retain_keys))
        }
        _ => true,
    }
}

/// [`patch_round_trips`]' condition on an element `e` of a list whose elements have type
/// `items` (a `retainKeys` list when `retain_keys` is set), apart from the list's own.
pub(crate) fn element_round_trips(e: &Value, items: Option<TypeRef>, retain_keys: bool) -> bool {
    match e {
        Value::Object(o) => map_round_trips(o, items, retain_keys),
        Value::Array(_) => false,
        _ => true,
    }
}

/// [`patch_round_trips`]' condition on a list merged by `merge_key` itself (not its
/// elements'): distinct elements, as the patch matches them.
pub(crate) fn merged_list_round_trips<'a>(l: &'a [Value], merge_key: Option<&str>) -> bool {
    let form = |e: &'a Value| match (merge_key, e) {
        (Some(mk), Value::Object(o)) => o.get(mk).map(go_format),
        (None, Value::Object(_) | Value::Array(_)) | (Some(_), _) => None,
        (None, scalar) => Some(go_format(scalar)),
    };
    // Most merged lists are short: their forms compared with each other, no hashing.
    if l.len() <= SHORT_LIST {
        let mut seen: Vec<Cow<'a, str>> = Vec::with_capacity(l.len());
        return l.iter().all(|e| {
            let Some(f) = form(e) else { return false };
            let new = !seen.contains(&f);
            seen.push(f);
            new
        });
    }
    let mut seen = std::collections::HashSet::with_capacity(l.len());
    l.iter().all(|e| form(e).is_some_and(|f| seen.insert(f)))
}

/// The length up to which [`merged_list_round_trips`] looks for a repeated form by comparing
/// each with those before it.
const SHORT_LIST: usize = 16;

/// `StrategicMergePatch(doc, patch)` for a built-in type (directives `$patch`, `$retainKeys`,
/// `$setElementOrder`, `$deleteFromPrimitiveList` honoured).
pub(crate) fn apply_strategic_patch(
    doc: &Value,
    patch: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> std::result::Result<Value, PatchFailure> {
    let t = type_of(group, version, kind)?;
    apply_typed(doc, patch, Some(t))
}

/// Applies a strategic patch for a schema position (used by defaulting).
pub(crate) fn apply_typed(
    doc: &Value,
    patch: &Value,
    t: Option<TypeRef>,
) -> std::result::Result<Value, PatchFailure> {
    let mut doc = doc.clone();
    apply_typed_in_place(&mut doc, patch.clone(), t)?;
    Ok(doc)
}

/// [`apply_typed`] onto the document itself, consuming the patch. On an error the document is
/// left half patched: the caller patches a copy it can drop, or keeps one to go back to.
pub(crate) fn apply_typed_in_place(
    doc: &mut Value,
    patch: Value,
    t: Option<TypeRef>,
) -> std::result::Result<(), PatchFailure> {
    as_object(doc, "document")?;
    let Value::Object(patch) = patch else {
        return Err(PatchFailure::new("", "patch is not a JSON object"));
    };
    if let Value::Object(m) = doc {
        *m = merge_map(std::mem::take(m), patch, t, MergeOptions::APPLY, At::Root)?;
    }
    Ok(())
}

/// [`apply_strategic_patch`] onto the document itself (see [`apply_typed_in_place`]).
#[cfg(test)]
pub(crate) fn apply_strategic_patch_in_place(
    doc: &mut Value,
    patch: Value,
    group: &str,
    version: &str,
    kind: &str,
) -> std::result::Result<(), PatchFailure> {
    let t = type_of(group, version, kind)?;
    apply_typed_in_place(doc, patch, Some(t))
}

/// Whether applying `patch` onto `doc` surely changes nothing, so a caller may skip the copy,
/// the patch and the comparison: the patch only deletes (`null`) keys `doc` lacks, inside
/// maps `doc` has, reached through positions merged as maps (no `replace` or `retainKeys`
/// strategy), with no directive key. The usual patch of an unchanged object is of this kind
/// (an annotation last-applied had and neither the desired nor the live object has).
/// `false` says nothing: the caller applies the patch. The property
/// `a_patch_said_to_change_nothing_changes_nothing` compares it with the patch applied.
#[cfg(test)]
pub(crate) fn leaves_unchanged(
    doc: &Value,
    patch: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> bool {
    schema::lookup(group, version, kind).is_some_and(|t| leaves_unchanged_typed(doc, patch, t))
}

/// [`leaves_unchanged`] for a type already looked up.
pub(crate) fn leaves_unchanged_typed(doc: &Value, patch: &Value, t: TypeRef) -> bool {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => map_left_unchanged(d, p, Some(t)),
        _ => false,
    }
}

fn map_left_unchanged(
    doc: &Map<String, Value>,
    patch: &Map<String, Value>,
    t: Option<TypeRef>,
) -> bool {
    patch.iter().all(|(key, pv)| {
        if key.starts_with('$') {
            return false;
        }
        match (doc.get(key), pv) {
            (None, Value::Null) => true,
            (Some(Value::Object(d)), Value::Object(p)) if !p.is_empty() => {
                let m = meta(t, key);
                !m.strategy.replace && !m.strategy.retain_keys && map_left_unchanged(d, p, m.t)
            }
            _ => false,
        }
    })
}

// ---------------------------------------------------------------------------------------
// Schema metadata.

#[derive(Clone, Copy, Default)]
struct Meta<'s> {
    t: Option<TypeRef<'s>>,
    strategy: Strategy,
    merge_key: Option<&'s str>,
}

/// The metadata of key `key` below position `t`. Unknown positions are untyped.
fn meta<'s>(t: Option<TypeRef<'s>>, key: &str) -> Meta<'s> {
    let Some(t) = t else { return Meta::default() };
    match t.child(key) {
        Some(c) => Meta { t: Some(c), strategy: c.strategy(), merge_key: c.merge_key() },
        None => Meta::default(),
    }
}

/// Where the value being diffed or merged lies: a chain of borrowed tokens, made into its
/// JSON pointer text only when an error names it.
#[derive(Clone, Copy)]
enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    /// A list element, named by its merge key's value (`%v`).
    Elem(&'a At<'a>, &'a Value),
}

impl At<'_> {
    fn text(&self) -> String {
        let mut out = String::new();
        self.push_to(&mut out);
        out
    }

    fn push_to(&self, out: &mut String) {
        let key = match self {
            At::Root => return,
            At::Key(parent, key) => {
                parent.push_to(out);
                Cow::Borrowed(*key)
            }
            At::Elem(parent, key) => {
                parent.push_to(out);
                go_format(key)
            }
        };
        out.push('/');
        for c in key.chars() {
            match c {
                '~' => out.push_str("~0"),
                '/' => out.push_str("~1"),
                c => out.push(c),
            }
        }
    }

    fn fail(&self, message: impl Into<String>) -> PatchFailure {
        PatchFailure::new(&self.text(), message)
    }
}

/// Go's `reflect.TypeOf` classes of decoded JSON: integral and float numbers differ.
fn go_type(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(n) if n.is_f64() => 3,
        Value::Number(_) => 2,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// `fmt.Sprintf("%v", v)` for merge-key values (a string borrowed: most keys are strings,
/// and the form is only compared).
fn go_format(v: &Value) -> Cow<'_, str> {
    match v {
        Value::Null => Cow::Borrowed("<nil>"),
        Value::String(s) => Cow::Borrowed(s),
        Value::Number(n) => Cow::Owned(match n.as_f64() {
            Some(x) if n.is_f64() => go_float(x),
            _ => n.to_string(),
        }),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        other => Cow::Owned(other.to_string()),
    }
}

/// `%v` of a float64: the shortest digits that read back, in decimal notation for decimal
/// exponents from -4 to 5 and in `e` notation (two exponent digits at least) otherwise, so
/// `8080.0` is `8080`, the same key as the integer `8080` where keys are compared as text.
fn go_float(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        format!("{x}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    }
}

// ---------------------------------------------------------------------------------------
// Creation.

#[derive(Clone, Copy, Default)]
struct DiffOptions {
    ignore_deletions: bool,
    ignore_changes_and_additions: bool,
    set_element_order: bool,
    build_retain_keys: bool,
    /// Only the general way, without the shortcuts of [`diff_maps`] (the two maps walked side
    /// by side instead of a look-up per key) and [`diff_paired_lists`]: the reference the
    /// tests compare the shortcuts with.
    general: bool,
}

fn diff_maps(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    t: Option<TypeRef>,
    opts: DiffOptions,
    path: At<'_>,
) -> Result<Map<String, Value>> {
    if opts.general {
        return diff_maps_by_lookup(a, b, t, opts, path);
    }
    let mut patch = Map::new();
    // Both maps are sorted: one walk of the two side by side finds each key's two values
    // (a look-up per key would compare keys again from each map's root). The keys both have
    // come in the order a walk of `b` gives them, so the first error is the general way's.
    let mut a_only_set = false;
    for (key, sides) in side_by_side(a, b) {
        match sides {
            Sides::Both(av, bv) => diff_key(&mut patch, key, av, bv, t, opts, path)?,
            Sides::B(bv) if !opts.ignore_changes_and_additions => {
                patch.insert(key.clone(), bv.clone());
            }
            Sides::A(av) => {
                a_only_set |= !av.is_null();
                if !opts.ignore_deletions {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            Sides::B(_) => {}
        }
    }
    if opts.build_retain_keys && (!patch.is_empty() || a_only_set) {
        insert_retain_keys(&mut patch, b);
    }
    Ok(patch)
}

/// [`diff_maps`] the general way: each key of `b` looked up in `a`, then each key of `a` in
/// `b` (the reference [`side_by_side`] is compared with).
fn diff_maps_by_lookup(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    t: Option<TypeRef>,
    opts: DiffOptions,
    path: At<'_>,
) -> Result<Map<String, Value>> {
    let mut patch = Map::new();
    for (key, bv) in b {
        match a.get(key) {
            Some(av) => diff_key(&mut patch, key, av, bv, t, opts, path)?,
            None if !opts.ignore_changes_and_additions => {
                patch.insert(key.clone(), bv.clone());
            }
            None => {}
        }
    }
    if !opts.ignore_deletions {
        for key in a.keys() {
            if !b.contains_key(key) {
                patch.insert(key.clone(), Value::Null);
            }
        }
    }
    if opts.build_retain_keys
        && (!patch.is_empty() || a.iter().any(|(k, v)| !v.is_null() && !b.contains_key(k)))
    {
        insert_retain_keys(&mut patch, b);
    }
    Ok(patch)
}

/// The `$retainKeys` directive: `b`'s non-null keys, sorted (as a sorted map gives them);
/// none when there are none.
fn insert_retain_keys(patch: &mut Map<String, Value>, b: &Map<String, Value>) {
    let retain_keys: Vec<Value> =
        b.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| Value::String(k.clone())).collect();
    if !retain_keys.is_empty() {
        patch.insert(RETAIN_KEYS.to_owned(), Value::Array(retain_keys));
    }
}

/// A key's values in the two maps of [`side_by_side`].
enum Sides<'m> {
    A(&'m Value),
    B(&'m Value),
    Both(&'m Value, &'m Value),
}

/// The keys of two sorted maps in order, each once, with its value on each side that has it.
fn side_by_side<'m>(
    a: &'m Map<String, Value>,
    b: &'m Map<String, Value>,
) -> impl Iterator<Item = (&'m String, Sides<'m>)> {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    std::iter::from_fn(move || {
        let order = match (a.peek(), b.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((ka, _)), Some((kb, _))) => ka.as_str().cmp(kb.as_str()),
        };
        Some(match order {
            std::cmp::Ordering::Less => a.next().map(|(k, v)| (k, Sides::A(v)))?,
            std::cmp::Ordering::Greater => b.next().map(|(k, v)| (k, Sides::B(v)))?,
            std::cmp::Ordering::Equal => {
                let ((k, av), (_, bv)) = (a.next()?, b.next()?);
                (k, Sides::Both(av, bv))
            }
        })
    })
}

/// What [`diff_maps`] writes into `patch` for a key both maps have.
fn diff_key(
    patch: &mut Map<String, Value>,
    key: &String,
    av: &Value,
    bv: &Value,
    t: Option<TypeRef>,
    opts: DiffOptions,
    path: At<'_>,
) -> Result<()> {
    let changes = !opts.ignore_changes_and_additions;
    if key == PATCH {
        // A directive in both documents (Go's `handleDirectiveMarker`): two strings, and a
        // changed one goes into the patch whatever the options say.
        let (Some(a), Some(b)) = (av.as_str(), bv.as_str()) else {
            return Err(path.fail(format!("invalid value for special key: {PATCH}")));
        };
        if a != b {
            patch.insert(key.clone(), bv.clone());
        }
        return Ok(());
    }
    if go_type(av) != go_type(bv) {
        if changes {
            patch.insert(key.clone(), bv.clone());
        }
        return Ok(());
    }
    match (av, bv) {
        (Value::Object(am), Value::Object(bm)) => {
            let m = meta(t, key);
            if m.strategy.replace {
                if changes {
                    patch.insert(key.clone(), bv.clone());
                }
            } else {
                let sub = DiffOptions { build_retain_keys: m.strategy.retain_keys, ..opts };
                let p = diff_maps(am, bm, m.t, sub, At::Key(&path, key))?;
                if !p.is_empty() {
                    patch.insert(key.clone(), Value::Object(p));
                }
            }
        }
        (Value::Array(al), Value::Array(bl)) => {
            let m = meta(t, key);
            if m.strategy.merge {
                let sub = DiffOptions { build_retain_keys: m.strategy.retain_keys, ..opts };
                let items = m.t.and_then(TypeRef::items);
                let p = At::Key(&path, key);
                let (add, del, order) = diff_lists(al, bl, items, m.merge_key, sub, p)?;
                if !add.is_empty() {
                    patch.insert(key.clone(), Value::Array(add));
                }
                if !del.is_empty() {
                    patch.insert(format!("{DELETE_PRIMITIVE}{key}"), Value::Array(del));
                }
                if !order.is_empty() {
                    patch.insert(format!("{SET_ORDER}{key}"), Value::Array(order));
                }
            } else if changes && al != bl {
                patch.insert(key.clone(), bv.clone());
            }
        }
        _ => {
            if changes && av != bv {
                patch.insert(key.clone(), bv.clone());
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ElemKind {
    Map,
    Scalar,
}

fn elem_kind(lists: &[&[Value]], path: At<'_>) -> Result<ElemKind> {
    let mut kind = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        let k = match v {
            Value::Object(_) => ElemKind::Map,
            Value::Array(_) => {
                return Err(path.fail("lists of lists are not supported"));
            }
            _ => ElemKind::Scalar,
        };
        match kind {
            None => kind = Some(k),
            Some(prev) if prev != k => {
                return Err(path.fail("list elements have mismatched types"));
            }
            _ => {}
        }
    }
    Ok(kind.unwrap_or(ElemKind::Map))
}

fn merge_key_value<'a>(v: &'a Value, mk: &str, path: At<'_>) -> Result<&'a Value> {
    v.as_object()
        .and_then(|m| m.get(mk))
        .ok_or_else(|| path.fail(format!("map: {v} does not contain declared merge key: {mk}")))
}

type ListDiff = (Vec<Value>, Vec<Value>, Vec<Value>);

fn diff_lists(
    a: &[Value],
    b: &[Value],
    items: Option<TypeRef>,
    merge_key: Option<&str>,
    opts: DiffOptions,
    path: At<'_>,
) -> Result<ListDiff> {
    if a.is_empty() {
        if b.is_empty() || opts.ignore_changes_and_additions {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        }
        return Ok((b.to_vec(), Vec::new(), Vec::new()));
    }
    if !opts.general
        && let Some(same_order) = diff_paired_lists(a, b, items, merge_key, opts, path)
    {
        return Ok(same_order);
    }
    match elem_kind(&[a, b], path)? {
        ElemKind::Map => {
            let mk = merge_key.ok_or_else(|| path.fail("cannot merge lists without merge key"))?;
            let (patch, deletions) = diff_lists_of_maps(a, b, items, mk, opts, path)?;
            let mut patch = normalize_slice_order(patch, b, Some(mk), ElemKind::Map, path)?;
            let order_same = a.len() == b.len()
                && a.iter().zip(b).try_fold(true, |acc, (x, y)| {
                    Ok::<bool, PatchFailure>(
                        acc && merge_key_value(x, mk, path)? == merge_key_value(y, mk, path)?,
                    )
                })?;
            patch.extend(deletions);
            let mut order = Vec::new();
            if opts.set_element_order
                && ((!opts.ignore_changes_and_additions && (!patch.is_empty() || !order_same))
                    || (!opts.ignore_deletions && !patch.is_empty()))
            {
                for v in b {
                    let mut m = Map::new();
                    m.insert(mk.to_owned(), merge_key_value(v, mk, path)?.clone());
                    order.push(Value::Object(m));
                }
            }
            Ok((patch, Vec::new(), order))
        }
        ElemKind::Scalar => {
            let (add, del, sorted_a_is_b) = diff_lists_of_scalars(a, b, opts);
            let add = normalize_slice_order(add, b, None, ElemKind::Scalar, path)?;
            // Go sorts the original list in place before comparing it with the modified one,
            // so an unsorted list that did not change still gets its order directive.
            let order = if opts.set_element_order
                && ((!opts.ignore_deletions && !del.is_empty())
                    || (!opts.ignore_changes_and_additions && !sorted_a_is_b))
            {
                b.to_vec()
            } else {
                Vec::new()
            };
            Ok((add, del, order))
        }
    }
}

/// [`diff_lists`] without sorting when both lists hold the same elements in the same order:
/// objects with the same merge keys index by index, or the same scalars in ascending order
/// of their `%v` forms. Each element then pairs with the one at its index (the sorts of both
/// lists are the same permutation), nothing is added or deleted and the order is the same,
/// so the patch is the elements' own patches. `None` sends the caller the general way: the
/// lists differ otherwise, an element's patch fails (the general way meets the elements in
/// sorted order, so it names the first failure), or more than one element has a patch or
/// one holds `$patch` (their order in the patch is the general way's to decide).
fn diff_paired_lists(
    a: &[Value],
    b: &[Value],
    items: Option<TypeRef>,
    merge_key: Option<&str>,
    opts: DiffOptions,
    path: At<'_>,
) -> Option<ListDiff> {
    if a.len() != b.len() {
        return None;
    }
    let Some(Value::Object(_)) = a.first() else {
        let ascending = a.iter().all(|v| !v.is_object() && !v.is_array())
            && a.windows(2).all(|w| go_format(&w[0]) < go_format(&w[1]));
        return (ascending && a == b).then(|| (Vec::new(), Vec::new(), Vec::new()));
    };
    let mk = merge_key?;
    let mut patch = Vec::new();
    for (x, y) in a.iter().zip(b) {
        let (Value::Object(xm), Value::Object(ym)) = (x, y) else { return None };
        let key = ym.get(mk)?;
        if xm.get(mk) != Some(key) {
            return None;
        }
        let mut p = diff_maps(xm, ym, items, opts, At::Elem(&path, key)).ok()?;
        if !p.is_empty() {
            if !patch.is_empty() || p.contains_key(PATCH) {
                return None;
            }
            p.insert(mk.to_owned(), key.clone());
            patch.push(Value::Object(p));
        }
    }
    // `diff_lists`' order directive with the order unchanged.
    let order = if opts.set_element_order
        && !patch.is_empty()
        && (!opts.ignore_changes_and_additions || !opts.ignore_deletions)
    {
        b.iter()
            .map(|v| {
                Value::Object(v.get(mk).map(|k| (mk.to_owned(), k.clone())).into_iter().collect())
            })
            .collect()
    } else {
        Vec::new()
    };
    Some((patch, Vec::new(), order))
}

fn sorted_by_key<'a>(
    l: &'a [Value],
    mk: &str,
    path: At<'_>,
) -> Result<Vec<(Cow<'a, str>, &'a Value)>> {
    let mut out = l
        .iter()
        .map(|v| Ok((go_format(merge_key_value(v, mk, path)?), v)))
        .collect::<Result<Vec<_>>>()?;
    go_sort(&mut out);
    Ok(out)
}

/// Go's `sort.Sort` of `SortableSliceOfMaps` and `SortableSliceOfScalars`, whose `Less` is
/// `<=` of the `%v` forms: ascending, and for up to 12 elements (an insertion sort) elements
/// of one form in reverse order, which decides the element a repeated merge key pairs with.
/// (Longer lists with a repeated form are ordered by Go's pattern-defeating quicksort; this
/// keeps the reverse order there too.)
fn go_sort<T>(v: &mut [(Cow<'_, str>, T)]) {
    v.sort_by(|x, y| x.0.cmp(&y.0));
    let mut i = 0;
    while i < v.len() {
        let run = v[i..].iter().take_while(|e| e.0 == v[i].0).count();
        v[i..i + run].reverse();
        i += run;
    }
}

fn diff_lists_of_maps(
    a: &[Value],
    b: &[Value],
    items: Option<TypeRef>,
    mk: &str,
    opts: DiffOptions,
    path: At<'_>,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let sa = sorted_by_key(a, mk, path)?;
    let sb = sorted_by_key(b, mk, path)?;
    let (mut i, mut j) = (0, 0);
    let mut patch = Vec::new();
    let mut deletions = Vec::new();
    while i < sa.len() || j < sb.len() {
        let cmp = match (sa.get(i), sb.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, None) => break,
        };
        // Indexing below is in bounds: each arm is only reached when the match above found the
        // element(s) it reads (Equal: both, Greater: `sb[j]`, Less: `sa[i]`).
        match cmp {
            std::cmp::Ordering::Equal => {
                let (x, y) = (sa[i].1, sb[j].1);
                let (Some(xm), Some(ym)) = (x.as_object(), y.as_object()) else {
                    return Err(path.fail("list element is not an object"));
                };
                let key = merge_key_value(y, mk, path)?;
                let p = diff_maps(xm, ym, items, opts, At::Elem(&path, key))?;
                if !p.is_empty() {
                    let mut p = p;
                    p.insert(mk.to_owned(), key.clone());
                    patch.push(Value::Object(p));
                }
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Greater => {
                if !opts.ignore_changes_and_additions {
                    patch.push(sb[j].1.clone());
                }
                j += 1;
            }
            std::cmp::Ordering::Less => {
                if !opts.ignore_deletions {
                    let mut d = Map::new();
                    d.insert(mk.to_owned(), merge_key_value(sa[i].1, mk, path)?.clone());
                    d.insert(PATCH.to_owned(), Value::String("delete".to_owned()));
                    deletions.push(Value::Object(d));
                }
                i += 1;
            }
        }
    }
    Ok((patch, deletions))
}

/// Scalars sorted by their `%v` form as `sortScalars` sorts them (duplicates kept).
fn sorted_scalars(l: &[Value]) -> Vec<(Cow<'_, str>, &Value)> {
    let mut out: Vec<(Cow<'_, str>, &Value)> = l.iter().map(|v| (go_format(v), v)).collect();
    go_sort(&mut out);
    out
}

/// The additions and deletions, and whether `a` sorted is `b`.
fn diff_lists_of_scalars(
    a: &[Value],
    b: &[Value],
    opts: DiffOptions,
) -> (Vec<Value>, Vec<Value>, bool) {
    let sa = sorted_scalars(a);
    let sb = sorted_scalars(b);
    let sorted_a_is_b = sa.len() == b.len() && sa.iter().zip(b).all(|(x, y)| x.1 == y);
    let (mut i, mut j) = (0, 0);
    let mut add = Vec::new();
    let mut del: Vec<Value> = Vec::new();
    while i < sa.len() || j < sb.len() {
        let cmp = match (sa.get(i), sb.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, None) => break,
        };
        // In bounds for the same reason as in `diff_lists_of_maps`.
        match cmp {
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Greater => {
                if !opts.ignore_changes_and_additions {
                    add.push(sb[j].1.clone());
                }
                j += 1;
            }
            std::cmp::Ordering::Less => {
                if !opts.ignore_deletions && !del.contains(sa[i].1) {
                    del.push(sa[i].1.clone());
                }
                i += 1;
            }
        }
    }
    (add, del, sorted_a_is_b)
}

/// Position of `v` in `order` (by merge key for maps), `-1` when absent, as Go's `index`.
fn index_of(order: &[Value], v: &Value, mk: Option<&str>, kind: ElemKind) -> isize {
    let pos = match (kind, mk) {
        (ElemKind::Map, Some(mk)) => {
            let Some(key) = v.as_object().and_then(|m| m.get(mk)) else { return -1 };
            order.iter().position(|o| o.as_object().and_then(|m| m.get(mk)) == Some(key))
        }
        _ => order.iter().position(|o| o == v),
    };
    pos.map_or(-1, |p| p as isize)
}

fn is_delete_directive(v: &Value) -> bool {
    v.get(PATCH).and_then(Value::as_str) == Some("delete")
}

fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    mk: Option<&str>,
    kind: ElemKind,
    path: At<'_>,
) -> Result<Vec<Value>> {
    let (mut keep, deletes): (Vec<Value>, Vec<Value>) = if kind == ElemKind::Map {
        if let Some(mk) = mk {
            for v in to_sort.iter().chain(order) {
                merge_key_value(v, mk, path)?;
            }
        }
        to_sort.into_iter().partition(|v| !is_delete_directive(v))
    } else {
        (to_sort, Vec::new())
    };
    keep.sort_by_key(|v| index_of(order, v, mk, kind));
    keep.extend(deletes);
    Ok(keep)
}

// ---------------------------------------------------------------------------------------
// Application (and merging of two patches).

#[derive(Clone, Copy)]
struct MergeOptions {
    merge_parallel_list: bool,
    ignore_unmatched_nulls: bool,
}

impl MergeOptions {
    /// Merging the deletions patch with the delta patch.
    const PATCHES: MergeOptions =
        MergeOptions { merge_parallel_list: false, ignore_unmatched_nulls: false };
    /// Applying a patch to a document.
    const APPLY: MergeOptions =
        MergeOptions { merge_parallel_list: true, ignore_unmatched_nulls: true };
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    t: Option<TypeRef>,
    opts: MergeOptions,
    path: At<'_>,
) -> Result<Map<String, Value>> {
    if let Some(d) = patch.get(PATCH) {
        return match d.as_str() {
            Some("replace") => {
                patch.remove(PATCH);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(path.fail(format!("unknown patch type: {d} in map"))),
        };
    }
    apply_retain_keys(&mut original, &mut patch, opts, path)?;
    merge_set_element_order(&mut original, &mut patch, t, opts, path)?;
    for (k, pv) in patch {
        let (key, is_delete_list) = if k.starts_with(DELETE_PRIMITIVE_PREFIX) {
            if !opts.merge_parallel_list {
                original.insert(k, pv);
                continue;
            }
            let Some(field) = directive_field(&k, DELETE_PRIMITIVE_PREFIX) else {
                return Err(path.fail("invalid patch format of primitive list"));
            };
            (field.to_owned(), true)
        } else {
            (k, false)
        };
        if pv.is_null() {
            original.remove(&key);
            if opts.ignore_unmatched_nulls {
                continue;
            }
        }
        let Some(ov) = original.get_mut(&key) else {
            if !is_delete_list && let Some(v) = take_added(pv, opts) {
                original.insert(key, v);
            }
            continue;
        };
        if go_type(ov) != go_type(&pv) {
            if !is_delete_list {
                match take_added(pv, opts) {
                    Some(v) => *ov = v,
                    None => {
                        original.remove(&key);
                    }
                }
            }
            continue;
        }
        let p = At::Key(&path, &key);
        match (ov, pv) {
            (Value::Object(om), Value::Object(pm)) => {
                let m = meta(t, &key);
                let merged = if m.strategy.replace {
                    pm
                } else {
                    merge_map(std::mem::take(om), pm, m.t, opts, p)?
                };
                *om = merged;
            }
            (Value::Array(ol), Value::Array(pl)) => {
                let m = meta(t, &key);
                let merged = if m.strategy.merge {
                    let items = m.t.and_then(TypeRef::items);
                    merge_slice(
                        std::mem::take(ol),
                        pl,
                        items,
                        m.merge_key,
                        opts,
                        is_delete_list,
                        p,
                    )?
                } else {
                    pl
                };
                *ol = merged;
            }
            (ov, pv) => *ov = pv,
        }
    }
    Ok(original)
}

/// A value the merge takes where the document has none (or one of another type), as Go's
/// `mergeMap` takes it: when applying, the nulls of its maps are dropped
/// (`discardNullValuesFromPatch`), then every map holding `$patch` goes, whatever its
/// directive, with the key or list element that holds it (`removeDirectives`). Nothing else
/// is cleaned: a `$retainKeys`, `$setElementOrder/...` or `$deleteFromPrimitiveList/...` key
/// inside the value stays in the result, as it does in Kubernetes. `None`: the value itself
/// holds `$patch`, and the key is dropped.
fn take_added(mut v: Value, opts: MergeOptions) -> Option<Value> {
    let drop_nulls = opts.ignore_unmatched_nulls;
    // Most values hold nothing to clean: a look first, a walk that changes them only then.
    (!needs_cleaning(&v, drop_nulls) || clean_taken(&mut v, drop_nulls)).then_some(v)
}

/// Whether [`clean_taken`] would change `v`.
fn needs_cleaning(v: &Value, drop_nulls: bool) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, c)| {
            k == PATCH || (drop_nulls && c.is_null()) || needs_cleaning(c, drop_nulls)
        }),
        Value::Array(l) => l.iter().any(|c| needs_cleaning(c, drop_nulls)),
        _ => false,
    }
}

/// Both Go steps of [`take_added`] in one walk, in place (a map's nulls go before it is
/// looked at for `$patch`, as the first step runs over the whole value before the second);
/// `false` when `v` itself is to be dropped.
fn clean_taken(v: &mut Value, drop_nulls: bool) -> bool {
    match v {
        Value::Object(m) => {
            if drop_nulls {
                m.retain(|_, c| !c.is_null());
            }
            if m.contains_key(PATCH) {
                return false;
            }
            m.retain(|_, c| clean_taken(c, drop_nulls));
            true
        }
        Value::Array(l) => {
            l.retain_mut(|c| clean_taken(c, drop_nulls));
            true
        }
        _ => true,
    }
}

fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    opts: MergeOptions,
    path: At<'_>,
) -> Result<()> {
    let Some(keys) = patch.remove(RETAIN_KEYS) else { return Ok(()) };
    if !opts.merge_parallel_list {
        match original.get(RETAIN_KEYS) {
            Some(existing) if *existing != keys => {
                return Err(path.fail(
                    format!(
                        "{existing} and {keys} are not deep equal: this may happen when calculating the 3-way diff patch"
                    ),
                ));
            }
            Some(_) => {}
            None => {
                original.insert(RETAIN_KEYS.to_owned(), keys);
            }
        }
        return Ok(());
    }
    let Value::Array(list) = keys else {
        return Err(path.fail("invalid patch format of retainKeys"));
    };
    let retained = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    // Every field the patch sets must be retained.
    if patch.iter().any(|(k, v)| {
        !(v.is_null()
            || k.starts_with(DELETE_PRIMITIVE_PREFIX)
            || k.starts_with(SET_ORDER_PREFIX)
            || retained(k))
    }) {
        return Err(path.fail("invalid patch format of retainKeys"));
    }
    original.retain(|k, _| retained(k));
    Ok(())
}

fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    t: Option<TypeRef>,
    opts: MergeOptions,
    path: At<'_>,
) -> Result<()> {
    let order_keys: Vec<String> =
        patch.keys().filter(|k| k.starts_with(SET_ORDER_PREFIX)).cloned().collect();
    for key in order_keys {
        let Some(order_v) = patch.remove(&key) else { continue };
        if !opts.merge_parallel_list {
            match original.get(&key) {
                Some(existing) if *existing != order_v => {
                    return Err(path.fail(
                        "invalid patch: the $setElementOrder lists of the two patches differ",
                    ));
                }
                Some(_) => {}
                None => {
                    original.insert(key.clone(), order_v.clone());
                }
            }
        }
        let Value::Array(order) = order_v else {
            return Err(path.fail(format!("{key} is not a list")));
        };
        let Some(field) = directive_field(&key, SET_ORDER_PREFIX) else {
            return Err(path.fail("invalid patch format of setElementOrder list"));
        };
        let p = At::Key(&path, field);
        // The lists are moved into the merge; the orders it needs after them are kept aside.
        let orig_list = match original.remove(field) {
            Some(Value::Array(l)) => Some(l),
            Some(other) => {
                original.insert(field.to_owned(), other);
                return Err(p.fail("expected a list"));
            }
            None => None,
        };
        let patch_list = match patch.remove(field) {
            Some(Value::Array(l)) => Some(l),
            Some(other) => {
                // Not a list: leave it to the ordinary merge.
                patch.insert(field.to_owned(), other);
                if let Some(l) = orig_list {
                    original.insert(field.to_owned(), Value::Array(l));
                }
                return Err(p.fail("expected a list"));
            }
            None => None,
        };
        let m = meta(t, field);
        let items = m.t.and_then(TypeRef::items);
        if let Some(pl) = &patch_list {
            check_set_element_order(pl, &order, m.merge_key, p)?;
        }
        // Checked after the merge, whose errors come first.
        let kind = elem_kind(
            &[orig_list.as_deref().unwrap_or(&[]), patch_list.as_deref().unwrap_or(&[])],
            p,
        );
        let order_mk = if matches!(kind, Ok(ElemKind::Map)) { m.merge_key } else { None };
        let server_order = order_of(orig_list.as_deref().unwrap_or(&[]), order_mk);
        let merged = match (orig_list, patch_list) {
            (Some(o), None) => o,
            // A list the document lacks: its `$patch` maps dropped, its nulls kept.
            (None, Some(mut pl)) => {
                if pl.iter().any(|c| needs_cleaning(c, false)) {
                    pl.retain_mut(|c| clean_taken(c, false));
                }
                pl
            }
            (Some(o), Some(pl)) => {
                if m.strategy.merge {
                    merge_slice(o, pl, items, m.merge_key, opts, false, p)?
                } else {
                    pl
                }
            }
            (None, None) => continue,
        };
        let kind = kind?;
        let (patch_items, server_only) = partition(merged, &order, m.merge_key, kind);
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            m.merge_key,
            kind,
            p,
        )?;
        original.insert(field.to_owned(), Value::Array(both));
    }
    Ok(())
}

/// Go's `validatePatchWithSetOrderList`: the patch list's elements (its `$patch: delete`
/// ones aside, its other directive elements skipped) must occur in the `$setElementOrder`
/// list in their order, matched by merge key (by value for scalars), each order entry
/// matching at most one element: a patch list of two elements of one key is refused where
/// the order lists that key once, or later apart.
fn check_set_element_order(
    patch: &[Value],
    order: &[Value],
    mk: Option<&str>,
    path: At<'_>,
) -> Result<()> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let mut kept = Vec::with_capacity(patch.len());
    for v in patch {
        if mk.is_some() && !v.is_object() {
            return Err(path.fail(format!("expected a map, got {v}")));
        }
        if !(mk.is_some() && is_delete_directive(v)) {
            kept.push(v);
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < kept.len() && j < order.len() {
        if kept[i].get(PATCH).is_some() {
            i += 1;
            continue;
        }
        let same = match mk {
            None => kept[i] == &order[j],
            Some(mk) => {
                let Some(o) = order[j].as_object() else {
                    return Err(path.fail(format!("expected a map, got {}", order[j])));
                };
                let key = merge_key_value(kept[i], mk, path)?;
                let Some(ok) = o.get(mk) else {
                    return Err(path.fail(format!(
                        "map: {} does not contain declared merge key: {mk}",
                        order[j]
                    )));
                };
                key == ok
            }
        };
        if same {
            i += 1;
        }
        j += 1;
    }
    if i < kept.len() {
        return Err(path.fail(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ORDER_PREFIX} list:\n{}\n",
            Value::Array(patch.to_vec()),
            Value::Array(order.to_vec())
        )));
    }
    Ok(())
}

/// What the ordering steps read of a list: with a merge key, each element's key alone (a
/// one-key map, all [`index_of`] compares), so that the elements themselves can move on;
/// otherwise, or when an element has no key (its error message shows the element), the
/// elements themselves.
fn order_of(l: &[Value], mk: Option<&str>) -> Vec<Value> {
    match mk {
        Some(mk) if l.iter().all(|v| v.get(mk).is_some()) => l
            .iter()
            .map(|v| {
                let mut m = Map::new();
                m.insert(mk.to_owned(), v.get(mk).cloned().unwrap_or(Value::Null));
                Value::Object(m)
            })
            .collect(),
        _ => l.to_vec(),
    }
}

fn partition(
    merged: Vec<Value>,
    by: &[Value],
    mk: Option<&str>,
    kind: ElemKind,
) -> (Vec<Value>, Vec<Value>) {
    let mk = if kind == ElemKind::Map { mk } else { None };
    merged.into_iter().partition(|v| {
        index_of(by, v, mk, if mk.is_some() { ElemKind::Map } else { ElemKind::Scalar }) >= 0
    })
}

fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    mk: Option<&str>,
    kind: ElemKind,
    path: At<'_>,
) -> Result<Vec<Value>> {
    let mk = if kind == ElemKind::Map { mk } else { None };
    let patch = normalize_slice_order(patch, patch_order, mk, kind, path)?;
    let server_only = normalize_slice_order(server_only, server_order, mk, kind, path)?;
    // Interleave: a server-only item goes first when both it and the next patch item occur
    // in the server order and it comes earlier there.
    let mut out = Vec::with_capacity(patch.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch.into_iter().peekable();
    loop {
        match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (Some(l), Some(r)) => {
                let li = index_of(server_order, l, mk, kind);
                let ri = index_of(server_order, r, mk, kind);
                if li >= 0 && ri >= 0 && li < ri {
                    out.extend(left.next());
                } else {
                    out.extend(right.next());
                }
            }
        }
    }
    Ok(out)
}

fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Option<TypeRef>,
    merge_key: Option<&str>,
    opts: MergeOptions,
    is_delete_list: bool,
    path: At<'_>,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = elem_kind(&[&original, &patch], path)?;
    let (server_order, patch_order, merged) = if kind == ElemKind::Scalar {
        if opts.merge_parallel_list && is_delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        let mut merged: Vec<Value> = Vec::new();
        for v in original.iter().chain(&patch) {
            if !merged.contains(v) {
                merged.push(v.clone());
            }
        }
        (original, patch, merged)
    } else {
        let mk = merge_key.ok_or_else(|| path.fail("cannot merge lists without merge key"))?;
        let (original, patch) = merge_special_elements(original, patch, mk, path)?;
        // The elements move into the merge; the orders are kept aside (keys only).
        let (server_order, patch_order) =
            (order_of(&original, Some(mk)), order_of(&patch, Some(mk)));
        let mut merged = original;
        for v in patch {
            let key = merge_key_value(&v, mk, path)?;
            let found =
                merged.iter().position(|o| o.as_object().and_then(|m| m.get(mk)) == Some(key));
            match (found, v) {
                (Some(i), Value::Object(mut pm)) => {
                    // `i` comes from `position` on `merged` just above.
                    let Value::Object(om) = &mut merged[i] else {
                        return Err(path.fail("list element is not an object"));
                    };
                    let key = pm.get(mk).cloned().unwrap_or(Value::Null);
                    let p = At::Elem(&path, &key);
                    *om = merge_map(std::mem::take(om), std::mem::take(&mut pm), items, opts, p)?;
                }
                (Some(_), _) => return Err(path.fail("list element is not an object")),
                // Appended as the patch has it: nulls and directives inside stay, as in Go.
                (None, v) => merged.push(v),
            }
        }
        (server_order, patch_order, merged)
    };
    let mk = if kind == ElemKind::Map { merge_key } else { None };
    let (patch_items, server_only) = partition(merged, &patch_order, mk, kind);
    normalize_element_order(patch_items, server_only, &patch_order, &server_order, mk, kind, path)
}

fn merge_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    mk: &str,
    path: At<'_>,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for v in patch {
        let Some(directive) = v.get(PATCH) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let key = merge_key_value(&v, mk, path)?;
                original.retain(|o| o.as_object().and_then(|m| m.get(mk)) != Some(key));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(path.fail("merging lists cannot yet be specified in the patch"));
            }
            _ => {
                return Err(path.fail(format!("unknown patch type: {directive} in map: {v}")));
            }
        }
    }
    if replace { Ok((plain, Vec::new())) } else { Ok((original, plain)) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn three(o: Value, m: Value, c: Value, g: &str, v: &str, k: &str) -> Value {
        let p = three_way_strategic_patch(&o, &m, &c, g, v, k).expect("patch");
        apply_strategic_patch(&c, &p, g, v, k).expect("apply")
    }

    fn deploy(spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})
    }

    /// Whether `doc + two_way(doc → modified)` is `modified` (a patch that cannot be made or
    /// applied counts as not).
    fn two_way_round_trips(doc: &Value, modified: &Value) -> bool {
        let t = schema::lookup("apps", "v1", "Deployment");
        two_way_typed(doc, modified, t)
            .and_then(|p| apply_typed(doc, &p, t))
            .is_ok_and(|out| out == *modified)
    }

    /// `leaves_unchanged` on the patches of unchanged objects and near misses; wherever it
    /// says yes, the patch applied gives the document back.
    #[test]
    fn leaves_unchanged_says_when_a_patch_only_deletes_what_is_absent() {
        let live = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "a", "annotations": {"x": "1"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}});
        let cases = [
            (json!({"metadata": {"annotations": {"tracking": null}}}), true),
            (json!({"metadata": {"annotations": {"tracking": null, "y": null}, "z": null}}), true),
            (json!({"spec": {"template": {"spec": {"volumes": null}}}}), true),
            (json!({}), true),
            // A key live has is deleted, a map live lacks or an empty one, a list, a value.
            (json!({"metadata": {"annotations": {"x": null}}}), false),
            (json!({"metadata": {"labels": {"x": null}}}), false),
            (json!({"metadata": {"annotations": {}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": null}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}), false),
            (json!({"metadata": {"name": "a"}}), false),
            // Directives.
            (json!({"metadata": {"$patch": "replace"}}), false),
            (json!({"$retainKeys": []}), false),
        ];
        for (patch, says) in cases {
            let got = leaves_unchanged(&live, &patch, "apps", "v1", "StatefulSet");
            assert_eq!(got, says, "{patch}");
            if got {
                let out = apply_strategic_patch(&live, &patch, "apps", "v1", "StatefulSet");
                assert_eq!(out.as_ref(), Ok(&live), "{patch}");
            }
        }
        // A position with a `retainKeys` strategy is left to the patch.
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "spec": {"strategy": {"type": "Recreate"}}});
        let patch = json!({"spec": {"strategy": {"rollingUpdate": null}}});
        assert!(!leaves_unchanged(&deploy, &patch, "apps", "v1", "Deployment"));
        // Objects of no known schema are left to the patch.
        assert!(!leaves_unchanged(&live, &json!({}), "example.com", "v1", "Widget"));
    }

    #[test]
    fn patch_round_trips_says_when_the_patch_gives_the_modified_document() {
        let t = schema::lookup("apps", "v1", "Deployment");
        let pod =
            |containers: Value| deploy(json!({"template": {"spec": {"containers": containers}}}));
        // (doc, a modified document of the kind defaulting makes, whether the patch gives it,
        // what `patch_round_trips` says: never yes where the patch does not).
        let cases = [
            // Distinct merge keys: the changes land in the right elements.
            (
                pod(json!([{"name": "a"}, {"name": "b", "ports": [{"containerPort": 80}]}])),
                pod(
                    json!([{"name": "a", "x": "1"}, {"name": "b", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]),
                ),
                true,
                true,
            ),
            // A repeated merge key: both elements' changes are merged into the first.
            (
                pod(json!([{"name": "a", "image": "1"}, {"name": "a", "image": "2"}])),
                pod(
                    json!([{"name": "a", "image": "1", "x": "1"}, {"name": "a", "image": "2", "x": "2"}]),
                ),
                false,
                false,
            ),
            // Repeated by `%v` only: 80 and "80" are one key to the patch's pairing; this
            // patch happens to land well, the check does not count on it.
            (
                pod(
                    json!([{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": "80"}]}]),
                ),
                pod(
                    json!([{"name": "a", "ports": [{"containerPort": 80, "x": 1}, {"containerPort": "80", "x": 2}]}]),
                ),
                true,
                false,
            ),
            // A missing merge key: the patch cannot be made.
            (pod(json!([{"image": "1"}])), pod(json!([{"image": "1", "x": "1"}])), false, false),
            // A repeated scalar in a merged list of scalars.
            (
                json!({"metadata": {"finalizers": ["f", "f"], "name": "a"}}),
                json!({"metadata": {"finalizers": ["f", "f", "g"], "name": "a"}}),
                false,
                false,
            ),
            // A key that is a patch directive: changing its value makes the patch a directive.
            (
                json!({"spec": {"selector": {"matchLabels": {"$patch": "merge", "a": "1"}}}}),
                json!({"spec": {"selector": {"matchLabels": {"$patch": "replace", "a": "1"}}}}),
                false,
                false,
            ),
            // A null at a retainKeys position: `$retainKeys` lists only non-null keys.
            (
                deploy(json!({"strategy": {"type": "Recreate", "rollingUpdate": null}})),
                deploy(json!({"strategy": {"type": "Recreate", "rollingUpdate": null, "x": "1"}})),
                false,
                false,
            ),
            // A null elsewhere is kept.
            (
                deploy(json!({"paused": null, "strategy": {"type": "Recreate"}})),
                deploy(json!({"paused": null, "strategy": {"type": "Recreate", "x": "1"}})),
                true,
                true,
            ),
        ];
        for (doc, modified, round_trips, says) in cases {
            assert_eq!(two_way_round_trips(&doc, &modified), round_trips, "{doc} -> {modified}");
            assert_eq!(patch_round_trips(&doc, t), says, "{doc}");
        }
    }

    fn containers(c: Value) -> Value {
        deploy(json!({"template": {"spec": {"containers": c}}}))
    }

    #[test]
    fn env_added_in_cluster_is_kept() {
        let git = containers(json!([{"name": "a", "env": [{"name": "A", "value": "1"}]}]));
        let live = containers(
            json!([{"name": "a", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]}]),
        );
        let p = three_way_strategic_patch(&git, &git, &live, "apps", "v1", "Deployment")
            .expect("patch");
        assert_eq!(
            p,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$setElementOrder/env": [{"name": "A"}]}], "$setElementOrder/containers": [{"name": "a"}]}}}})
        );
        assert_eq!(
            apply_strategic_patch(&live, &p, "apps", "v1", "Deployment").expect("apply"),
            live
        );
    }

    #[test]
    fn env_changed_in_cluster_is_reverted() {
        let git = containers(json!([{"name": "a", "env": [{"name": "A", "value": "2"}]}]));
        let live = containers(json!([{"name": "a", "env": [{"name": "A", "value": "1"}]}]));
        assert_eq!(three(git.clone(), git.clone(), live, "apps", "v1", "Deployment"), git);
    }

    #[test]
    fn removed_from_git_is_deleted_with_last_applied() {
        let la = containers(
            json!([{"name": "a", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]),
        );
        let git = containers(json!([{"name": "a", "env": [{"name": "A", "value": "1"}]}]));
        let p =
            three_way_strategic_patch(&la, &git, &la, "apps", "v1", "Deployment").expect("patch");
        let env = &p["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(env["env"], json!([{"name": "B", "$patch": "delete"}]));
        assert_eq!(env["$setElementOrder/env"], json!([{"name": "A"}]));
        assert_eq!(apply_strategic_patch(&la, &p, "apps", "v1", "Deployment").expect("apply"), git);
    }

    #[test]
    fn atomic_list_is_replaced() {
        let git = deploy(json!({"template": {"spec": {"tolerations": [{"key": "t1"}]}}}));
        let live =
            deploy(json!({"template": {"spec": {"tolerations": [{"key": "t1"}, {"key": "t2"}]}}}));
        assert_eq!(three(git.clone(), git.clone(), live, "apps", "v1", "Deployment"), git);
    }

    #[test]
    fn annotations_added_in_cluster_are_kept() {
        let git = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {"x": "1"}}});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {"x": "1", "y": "2"}}});
        assert_eq!(three(git.clone(), git, live.clone(), "", "v1", "ConfigMap"), live);
    }

    #[test]
    fn labels_removed_from_last_applied_are_deleted() {
        let la =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"x": "1"}}});
        let git = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        let live = la.clone();
        let out = three(la, git, live, "", "v1", "ConfigMap");
        assert_eq!(out, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}));
    }

    #[test]
    fn retain_keys_on_strategy() {
        let git = deploy(json!({"strategy": {"type": "RollingUpdate"}}));
        let live = deploy(
            json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}}),
        );
        let p = three_way_strategic_patch(&git, &git, &live, "apps", "v1", "Deployment")
            .expect("patch");
        assert_eq!(p, json!({"spec": {"strategy": {"$retainKeys": ["type"]}}}));
        assert_eq!(three(git.clone(), git.clone(), live, "apps", "v1", "Deployment"), git);
    }

    #[test]
    fn container_ports_merge_by_container_port() {
        let git = containers(json!([{"name": "a", "ports": [{"containerPort": 80}]}]));
        let live =
            containers(json!([{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]));
        assert_eq!(three(git.clone(), git, live.clone(), "apps", "v1", "Deployment"), live);
    }

    #[test]
    fn merge_key_values_compare_raw() {
        let git =
            json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": "80"}]}});
        let live = json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80, "protocol": "TCP"}]}});
        let out = three(git.clone(), git, live, "", "v1", "Service");
        // "80" and 80 format alike when diffing (same element, the type change is the delta)
        // but never match when applying: the patch element is appended, ordered first.
        assert_eq!(out["spec"]["ports"], json!([{"port": "80"}, {"port": 80, "protocol": "TCP"}]));
    }

    #[test]
    fn finalizers_are_a_set() {
        let la = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"finalizers": ["a", "b"]}});
        let git = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"finalizers": ["a", "c"]}});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"finalizers": ["x", "a", "b"]}});
        let p = three_way_strategic_patch(&la, &git, &live, "", "v1", "ConfigMap").expect("patch");
        assert_eq!(p["metadata"]["$deleteFromPrimitiveList/finalizers"], json!(["b"]));
        assert_eq!(p["metadata"]["finalizers"], json!(["c"]));
        let out = apply_strategic_patch(&live, &p, "", "v1", "ConfigMap").expect("apply");
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "a", "c"]));
    }

    #[test]
    fn patch_directives_apply() {
        let doc = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}});
        let replace = json!({"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}});
        let out = apply_strategic_patch(&doc, &replace, "", "v1", "Pod").expect("apply");
        assert_eq!(out["spec"]["containers"], json!([{"name": "c"}]));
        let del = json!({"spec": {"$patch": "delete"}});
        let out = apply_strategic_patch(&doc, &del, "", "v1", "Pod").expect("apply");
        assert_eq!(out["spec"], json!({}));
        let rep = json!({"spec": {"$patch": "replace", "hostname": "h"}});
        let out = apply_strategic_patch(&doc, &rep, "", "v1", "Pod").expect("apply");
        assert_eq!(out["spec"], json!({"hostname": "h"}));
    }

    #[test]
    fn added_values_lose_only_their_patch_maps_and_nulls() {
        let doc = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
        // A value holding `$patch` is dropped whatever the directive says.
        let patch =
            json!({"spec": {"$patch": "replace", "hostname": "h"}, "status": {"$patch": "delete"}});
        let out = apply_strategic_patch(&doc, &patch, "", "v1", "Pod").expect("apply");
        assert_eq!(out, doc);
        // Inside one, `$patch` maps and nulls go; other directives stay.
        let patch = json!({"spec": {"hostname": "h", "containers": [{"name": "a", "x": null, "$setElementOrder/env": [{"name": "A"}]}, {"name": "b", "$patch": "delete"}], "x": null}});
        let out = apply_strategic_patch(&doc, &patch, "", "v1", "Pod").expect("apply");
        assert_eq!(
            out["spec"],
            json!({"hostname": "h", "containers": [{"name": "a", "$setElementOrder/env": [{"name": "A"}]}]})
        );
        // An element appended to a merged list is taken as it is.
        let doc =
            json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "z"}]}});
        let patch =
            json!({"spec": {"containers": [{"name": "a", "x": null, "p": {"$patch": "delete"}}]}});
        let out = apply_strategic_patch(&doc, &patch, "", "v1", "Pod").expect("apply");
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "x": null, "p": {"$patch": "delete"}}, {"name": "z"}])
        );
    }

    #[test]
    fn a_patch_map_in_the_delta_is_dropped_from_the_three_way_patch() {
        let git = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {"$patch": "note"}}, "data": {"a": "1"}});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {"x": "y"}}, "data": {"a": "2"}});
        let p = three_way_strategic_patch(&git, &git, &live, "", "v1", "ConfigMap").expect("patch");
        assert_eq!(p, json!({"metadata": {}, "data": {"a": "1"}}));
    }

    #[test]
    fn repeated_merge_keys_pair_in_reverse_order() {
        let a = containers(json!([{"name": "app", "image": "a"}, {"name": "app", "image": "b"}]));
        let b = containers(
            json!([{"name": "app", "image": "a", "x": "1"}, {"name": "app", "image": "b", "x": "2"}]),
        );
        let p = two_way_strategic_patch(&a, &b, "apps", "v1", "Deployment").expect("patch");
        assert_eq!(
            p["spec"]["template"]["spec"]["containers"],
            json!([{"name": "app", "x": "2"}, {"name": "app", "x": "1"}])
        );
        // Both land on the first element, the first pair's last; and the order directive,
        // which lists the key twice apart, refuses a patch list that holds it twice in a row.
        let out = apply_strategic_patch(&a, &p, "apps", "v1", "Deployment").expect("apply");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "app", "image": "a", "x": "1"}, {"name": "app", "image": "b"}])
        );
        let a = containers(json!([{"name": "app"}, {"name": "m"}, {"name": "app", "image": "b"}]));
        let b = containers(
            json!([{"name": "app", "x": "1"}, {"name": "m", "x": "1"}, {"name": "app", "image": "b", "x": "2"}]),
        );
        let p = two_way_strategic_patch(&a, &b, "apps", "v1", "Deployment").expect("patch");
        let err = apply_strategic_patch(&a, &p, "apps", "v1", "Deployment").expect_err("refused");
        assert_eq!(err.path, "/spec/template/spec/containers");
        assert!(err.message.starts_with("The order in patch list:"), "{}", err.message);
    }

    #[test]
    fn float_keys_format_as_go_does() {
        for (x, text) in [
            (8080.0, "8080"),
            (0.5, "0.5"),
            (123_456.0, "123456"),
            (1e6, "1e+06"),
            (1_234_567.0, "1.234567e+06"),
            (1e-4, "0.0001"),
            (1.234e-5, "1.234e-05"),
            (-2.5, "-2.5"),
            (1.5e300, "1.5e+300"),
        ] {
            assert_eq!(go_format(&json!(x)), text, "{x}");
        }
        assert_eq!(go_format(&json!(8080)), "8080");
    }

    #[test]
    fn set_element_order_keeps_server_only_position() {
        let doc = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a"}, {"name": "s"}, {"name": "b"}]}});
        let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "n"}], "containers": [{"name": "n"}]}});
        let out = apply_strategic_patch(&doc, &patch, "", "v1", "Pod").expect("apply");
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "s"}, {"name": "b"}, {"name": "a"}, {"name": "n"}])
        );
    }

    #[test]
    fn missing_merge_key_is_an_error() {
        let git = containers(json!([{"image": "x"}]));
        let live = containers(json!([{"name": "a"}]));
        let err = three_way_strategic_patch(&git, &git, &live, "apps", "v1", "Deployment")
            .expect_err("error");
        assert_eq!(err.path, "/spec/template/spec/containers");
        assert!(
            err.message.contains("does not contain declared merge key: name"),
            "{}",
            err.message
        );
    }

    #[test]
    fn replace_strategy_on_pdb_selector() {
        let git = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "spec": {"selector": {"matchLabels": {"app": "a"}}}});
        let live = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "spec": {"selector": {"matchLabels": {"app": "a", "x": "y"}}}});
        assert_eq!(
            three(git.clone(), git.clone(), live, "policy", "v1", "PodDisruptionBudget"),
            git
        );
    }
}

#[cfg(test)]
mod robustness {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::{apply_strategic_patch, three_way_strategic_patch, two_way_strategic_patch};

    /// Small JSON values drawn from keys the Deployment schema knows, so that the typed paths
    /// (merge keys, retainKeys, atomic lists) are exercised with arbitrary shapes. Patch
    /// directives (`$patch`, `$retainKeys`, `$setElementOrder/...`) are drawn as keys and
    /// strings only when `directives` is set.
    fn value_with(directives: bool) -> impl Strategy<Value = Value> {
        let mut strings = vec!["a", "b", "80", "RollingUpdate"];
        let mut keys = vec![
            "name",
            "containers",
            "env",
            "ports",
            "containerPort",
            "strategy",
            "type",
            "rollingUpdate",
            "volumes",
            "finalizers",
            "x",
        ];
        if directives {
            strings.push("$patch");
            keys.extend(["$patch", "$retainKeys", "$setElementOrder/env"]);
        }
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..3).prop_map(Value::from),
            prop::sample::select(strings).prop_map(|s| Value::String(s.to_owned())),
        ];
        leaf.prop_recursive(4, 24, 4, move |inner| {
            let key = prop::sample::select(keys.clone());
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map(key.prop_map(str::to_owned), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Values that may carry patch directives anywhere.
    fn value() -> impl Strategy<Value = Value> {
        value_with(true)
    }

    fn deployment(spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": spec}}, "metadata": {"finalizers": ["a"]}})
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(96))]

        #[test]
        fn never_panics(a in value(), b in value(), c in value()) {
            let (a, b, c) = (deployment(a), deployment(b), deployment(c));
            if let Ok(p) = three_way_strategic_patch(&a, &b, &c, "apps", "v1", "Deployment") {
                let _ = apply_strategic_patch(&c, &p, "apps", "v1", "Deployment");
            }
            let _ = apply_strategic_patch(&a, &b, "apps", "v1", "Deployment");
            let _ = two_way_strategic_patch(&a, &b, "apps", "v1", "Deployment");
            let _ = crate::diff::remarshal(&a);
            let _ = crate::diff::apply_defaults(&b);
            let _ = crate::diff::three_way_json_merge_patch(&a, &b, &c);
        }

        /// The shortcuts (a deletions patch walked by the original's keys, lists paired
        /// index by index) give the general way's patch or error, also where the documents
        /// share lists (the two-way mode, an unchanged live object, last-applied as live).
        #[test]
        fn shortcuts_give_the_general_answer(a in value(), b in value(), c in value()) {
            let (a, b, c) = (deployment(a), deployment(b), deployment(c));
            let t = crate::schema::lookup("apps", "v1", "Deployment");
            for (o, m, l) in [(&a, &b, &c), (&b, &b, &c), (&a, &b, &b), (&a, &a, &c), (&c, &a, &c)] {
                prop_assert_eq!(
                    super::three_way_maps(o, m, l, t, false),
                    super::three_way_maps(o, m, l, t, true)
                );
            }
        }

        /// Every option of a map's diff (the two-way patch of the defaults, the delta and
        /// deletions patches, a `retainKeys` position) gives the general way's patch or error
        /// when the maps are walked side by side.
        #[test]
        fn side_by_side_gives_the_general_answer(a in value(), b in value()) {
            let (a, b) = (deployment(a), deployment(b));
            let t = crate::schema::lookup("apps", "v1", "Deployment");
            let (Some(am), Some(bm)) = (a.as_object(), b.as_object()) else { return Ok(()) };
            for bits in 0..16u8 {
                let opts = |general| super::DiffOptions {
                    ignore_deletions: bits & 1 != 0,
                    ignore_changes_and_additions: bits & 2 != 0,
                    set_element_order: true,
                    build_retain_keys: bits & 4 != 0,
                    general,
                };
                let at = super::At::Root;
                let (x, y) = if bits & 8 != 0 { (am, bm) } else { (bm, am) };
                prop_assert_eq!(
                    super::diff_maps(x, y, t, opts(false), at),
                    super::diff_maps(x, y, t, opts(true), at)
                );
            }
        }

        /// Wherever `leaves_unchanged` says a patch changes nothing, applying it gives the
        /// document back: patches made of the documents' own shapes with some values made
        /// null, and three-way patches between generated documents.
        #[test]
        fn a_patch_said_to_change_nothing_changes_nothing(
            a in value(), b in value(), c in value(), nulls in value(),
        ) {
            let (a, b, c) = (deployment(a), deployment(b), deployment(c));
            let mut patches = vec![nulled(&b, &nulls), nulled(&a, &nulls), b.clone()];
            if let Ok(p) = three_way_strategic_patch(&a, &b, &c, "apps", "v1", "Deployment") {
                patches.push(p);
            }
            for doc in [&a, &c] {
                for p in &patches {
                    if super::leaves_unchanged(doc, p, "apps", "v1", "Deployment") {
                        let out = apply_strategic_patch(doc, p, "apps", "v1", "Deployment");
                        prop_assert_eq!(out.as_ref(), Ok(doc));
                    }
                }
            }
        }

        /// The same where the lists are likely to pair: containers of few names, ports of
        /// one `%v` in several types, finalizers of few values.
        #[test]
        fn shortcuts_give_the_general_answer_on_paired_lists(
            a in pod(), b in pod(), c in pod(),
        ) {
            let t = crate::schema::lookup("apps", "v1", "Deployment");
            for (o, m, l) in [(&a, &b, &c), (&b, &b, &c), (&a, &b, &b), (&c, &a, &c)] {
                prop_assert_eq!(
                    super::three_way_maps(o, m, l, t, false),
                    super::three_way_maps(o, m, l, t, true)
                );
            }
        }

        #[test]
        fn two_way_patch_round_trips_without_directives(
            a in value_with(false),
            b in value_with(false),
        ) {
            // For documents without directive keys, applying the two-way patch from a to b
            // yields b (up to the order of merged lists, which follows b), when b's merged
            // lists are sets: the merge deduplicates scalars and merges elements of one key,
            // as Go's does (`[]` to `[true, true]` gives `[true]`), so other b are not what the
            // patch gives, in Kubernetes either (about one b in eight here).
            let (a, b) = (deployment(a), deployment(b));
            let t = crate::schema::lookup("apps", "v1", "Deployment");
            if super::patch_round_trips(&b, t)
                && let Ok(p) = two_way_strategic_patch(&a, &b, "apps", "v1", "Deployment")
                && let Ok(out) = apply_strategic_patch(&a, &p, "apps", "v1", "Deployment")
            {
                prop_assert_eq!(strip_nulls(out), strip_nulls(b));
            }
        }
    }

    /// A Deployment whose lists merged by key often hold the same keys on two sides.
    fn pod() -> impl Strategy<Value = Value> {
        let port = (
            prop::sample::select(vec![json!(80), json!("80"), json!(80.0), json!(81)]),
            prop::sample::select(vec![Value::Null, json!("TCP"), json!("UDP")]),
        )
            .prop_map(|(p, protocol)| json!({"containerPort": p, "protocol": protocol}));
        let container = (
            prop::sample::select(vec!["a", "b", "c"]),
            prop::collection::vec(port, 0..3),
            value_with(true),
        )
            .prop_map(|(name, ports, x)| json!({"name": name, "ports": ports, "x": x}));
        let finalizers = prop::collection::vec(
            prop::sample::select(vec![json!("a"), json!("b"), json!(1)]),
            0..3,
        );
        (prop::collection::vec(container, 0..4), finalizers).prop_map(|(containers, finalizers)| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"finalizers": finalizers},
                "spec": {"template": {"spec": {"containers": containers}}}})
        })
    }

    /// `v` with its scalars and lists made null where `shape` (walked alongside) is not a
    /// map, and with keys of `shape` it lacks added as nulls: deletions of present and
    /// absent keys at every depth.
    fn nulled(v: &Value, shape: &Value) -> Value {
        match (v, shape) {
            (Value::Object(m), Value::Object(s)) => {
                let mut out: Map<String, Value> = m
                    .iter()
                    .map(|(k, x)| (k.clone(), nulled(x, s.get(k).unwrap_or(&Value::Null))))
                    .collect();
                for k in s.keys() {
                    out.entry(k.clone()).or_insert(Value::Null);
                }
                Value::Object(out)
            }
            (Value::Object(m), _) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), nulled(x, &Value::Null))).collect())
            }
            _ => Value::Null,
        }
    }

    fn strip_nulls(v: Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k, strip_nulls(v)))
                    .collect(),
            ),
            Value::Array(l) => Value::Array(l.into_iter().map(strip_nulls).collect()),
            other => other,
        }
    }
}
