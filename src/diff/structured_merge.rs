//! Prediction by field ownership: structured-merge diff (sigs.k8s.io/structured-merge-diff v6, as
//! gitops-engine releases before v3.6.2 ran it in `StructuredMergeDiff`) and the pure part of
//! server-side diff from a host-provided dry-run result (gitops-engine pkg/diff/diff.go
//! `serverSideDiff`, `removeWebhookMutation`), built on the field sets of `metadata.managedFields`
//! (`crate::managed_fields`) and a schema of the object's type.
//!
//! Structured merge needs to know which lists are associative (and by which keys) or sets,
//! and which maps and structs are atomic. [`SmdSchema`] answers from the generated
//! Kubernetes schema (`crate::schema`: `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! merge strategies, `x-kubernetes-map-type`) for built-in kinds, walking from the object's
//! kind through fields, list items and map values. Where the schema has no answer (custom
//! resources, untyped or unknown fields) it falls back to [`InferredSchema`], read from the
//! `fieldsV1` of the objects themselves: a list whose entries are recorded as `k:{...}` is a
//! map keyed by those fields, one recorded as `v:...` a set, every other list atomic.
//!
//! Every recorded field set is reconciled with the schema before merging (`reconcile`: atomic
//! positions recorded field by field are owned whole, granular ones recorded whole are owned
//! field by field), and pruning treats the struct fields on the way to what Argo CD applied
//! last time as applied too (`orphaned_struct_fields`), as structured-merge-diff does.
//!
//! Field sets recorded at another `apiVersion` than the applied object are converted first
//! (`set_at_version`): built-in kinds keep their field names, HPA autoscaling/v1 and v2 map
//! `targetCPUUtilizationPercentage` and `metrics` (and the round-trip annotations) onto each
//! other, and entries that cannot be converted (custom resources at another version) are
//! dropped, as structured-merge-diff drops a manager whose version is missing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::compare::finish;
use super::defaults::{self, apply_defaults_in_place};
use super::normalize::normalize;
use super::remarshal::remarshal;
use super::smp::is_builtin;
use super::{DiffError, DiffMode, DiffOptions, DiffResult};
use crate::config::LAST_APPLIED_ANNOTATION;
use crate::json::{canonical_eq, remove_annotation};
use crate::managed_fields::{
    Entry, FieldSet, PathElement, child_of, keys_compatible, leaf, managed_fields, remove_items,
};
use crate::object::{ObjectRef, split_api_version};
use crate::schema::{self, ListType, OpenApiSchema, Shape, TypeRef};

/// How a list merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// An associative list keyed by these fields.
    Map(Vec<String>),
    /// A set of scalars.
    Set,
}

/// List kinds and atomic objects read from the `fieldsV1` of managed-fields entries, by the
/// dotted path of field names from the object root (`spec.template.spec.containers`): a list
/// whose entries are recorded as `k:{...}` is a map keyed by those fields, one recorded as
/// `v:...` a set; an object recorded only as a leaf (never with fields below it) is atomic.
#[derive(Debug, Default)]
pub(crate) struct InferredSchema {
    lists: BTreeMap<String, ListKind>,
    leaves: BTreeSet<String>,
    granular: BTreeSet<String>,
}

impl InferredSchema {
    /// Learns from one entry's field set.
    pub(crate) fn learn(&mut self, set: &FieldSet) {
        self.walk(set, "");
    }

    fn walk(&mut self, set: &FieldSet, path: &str) {
        for (k, child) in &set.children {
            match k {
                PathElement::Field(name) => {
                    let p = join(path, name);
                    if child.children.is_empty() {
                        self.leaves.insert(p.clone());
                    }
                    for ck in child.children.keys() {
                        match ck {
                            PathElement::Key(keys) => {
                                let names = keys.iter().map(|(n, _)| n.clone()).collect();
                                self.lists.entry(p.clone()).or_insert(ListKind::Map(names));
                            }
                            PathElement::Value(_) => {
                                self.lists.entry(p.clone()).or_insert(ListKind::Set);
                            }
                            PathElement::Field(_) => {
                                self.granular.insert(p.clone());
                            }
                            PathElement::Index(_) => {}
                        }
                    }
                    self.walk(child, &p);
                }
                _ => self.walk(child, path),
            }
        }
    }

    pub(crate) fn list_kind(&self, path: &str) -> Option<ListKind> {
        self.lists.get(path).cloned()
    }

    fn atomic_object(&self, path: &str) -> bool {
        self.leaves.contains(path) && !self.granular.contains(path)
    }
}

/// Where a value sits: the dotted path of field names (what [`InferredSchema`] is keyed by)
/// and its position in the generated schema, when the schema knows it.
#[derive(Clone)]
pub(crate) struct At<'s> {
    path: String,
    ty: Option<TypeRef<'s>>,
}

/// What structured merge needs to know about an object's type: which lists are associative
/// (and by which keys) or sets, which maps and structs are atomic, and the defaults of key
/// fields. The generated Kubernetes schema (`crate::schema`) answers for built-in kinds,
/// walked from the object's kind through struct fields, list items and map values; where it
/// has no answer (custom resources, untyped or unknown fields) the managed fields do
/// ([`InferredSchema`]). Every list neither source calls associative or a set is atomic.
pub(crate) struct SmdSchema<'s> {
    root: Option<TypeRef<'s>>,
    inferred: InferredSchema,
    group: String,
    version: String,
}

impl<'s> SmdSchema<'s> {
    /// The schema of `obj`'s kind: the generated one for a built-in kind, else the kind's
    /// definition in `openapi` (a custom resource), with `inferred` as the fallback.
    pub(crate) fn new(
        obj: &Value,
        openapi: Option<&'s OpenApiSchema>,
        inferred: InferredSchema,
    ) -> SmdSchema<'s> {
        let gvk = schema::gvk_of(obj);
        let (group, version) = match gvk {
            Some((g, v, _)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), String::new()),
        };
        let root = gvk.and_then(|(g, v, k)| {
            if schema::is_builtin(g, v, k) {
                schema::lookup(g, v, k)
            } else {
                openapi.and_then(|doc| doc.lookup(g, v, k))
            }
        });
        SmdSchema { root, inferred, group, version }
    }

    fn root(&self) -> At<'s> {
        At { path: String::new(), ty: self.root }
    }

    /// The field `name` of an object (struct field or map value).
    fn field(&self, at: &At<'s>, name: &str) -> At<'s> {
        At { path: join(&at.path, name), ty: at.ty.and_then(|t| t.child(name)) }
    }

    /// An item of a list.
    fn item(&self, at: &At<'s>) -> At<'s> {
        At { path: at.path.clone(), ty: at.ty.and_then(TypeRef::items) }
    }

    /// The schema position, when the schema says more than "anything goes".
    fn typed<'t>(at: &At<'t>) -> Option<TypeRef<'t>> {
        at.ty.filter(|t| t.shape() != Shape::Untyped)
    }

    /// The kind of the list at `at`; `None` means atomic.
    fn list_kind(&self, at: &At) -> Option<ListKind> {
        match Self::typed(at) {
            Some(t) if t.shape() == Shape::List => match t.list_type() {
                Some(ListType::Map) if !t.list_map_keys().is_empty() => {
                    Some(ListKind::Map(t.list_map_keys().to_vec()))
                }
                Some(ListType::Set) => Some(ListKind::Set),
                Some(ListType::Map) => self.inferred.list_kind(&at.path),
                Some(ListType::Atomic) | None => None,
            },
            _ => self.inferred.list_kind(&at.path),
        }
    }

    /// Whether the map or struct at `at` is replaced as a whole
    /// (`x-kubernetes-map-type: atomic`, e.g. a `LabelSelector`).
    fn atomic_object(&self, at: &At) -> bool {
        match Self::typed(at) {
            Some(t) => matches!(t.shape(), Shape::Struct | Shape::Map) && t.is_atomic(),
            None => self.inferred.atomic_object(&at.path),
        }
    }

    /// The key of an associative-list item: its key fields, sorted by name as `fieldsV1`
    /// spells them. A key field the item omits takes the default Kubernetes gives it (as
    /// structured-merge-diff takes a key field's schema default: `protocol` is `TCP`); one
    /// without a default is left out, and matches any value (see [`keys_compatible`]).
    fn key_of(&self, item_at: &At, item: &Value, keys: &[String]) -> Vec<(String, String)> {
        let mut defaulted: Option<Value> = None;
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(v) = item.get(k) {
                out.push((k.clone(), v.to_string()));
                continue;
            }
            let Some(def) = item_at.ty.and_then(TypeRef::definition_name) else { continue };
            let d = defaulted.get_or_insert_with(|| {
                defaults::defaulted_fields(def, item, &self.group, &self.version)
            });
            if let Some(v) = d.get(k) {
                out.push((k.clone(), v.to_string()));
            }
        }
        out.sort();
        out
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

/// The field set of every leaf of a value (scalars, empty maps, atomic lists, maps and
/// structs) and of every element of associative lists and sets.
fn value_set(v: &Value, schema: &SmdSchema, at: &At) -> FieldSet {
    match v {
        Value::Object(m) if !m.is_empty() && !schema.atomic_object(at) => {
            let mut set = FieldSet::default();
            for (k, child) in m {
                set.children.insert(
                    PathElement::Field(k.clone()),
                    value_set(child, schema, &schema.field(at, k)),
                );
            }
            set
        }
        Value::Array(items) if !items.is_empty() => match schema.list_kind(at) {
            Some(ListKind::Map(keys)) => {
                let item_at = schema.item(at);
                let mut set = FieldSet::default();
                for item in items {
                    let mut node = value_set(item, schema, &item_at);
                    node.member = true;
                    set.children
                        .insert(PathElement::Key(schema.key_of(&item_at, item, &keys)), node);
                }
                set
            }
            Some(ListKind::Set) => {
                let mut set = FieldSet::default();
                for item in items {
                    set.children.insert(PathElement::Value(item.to_string()), leaf());
                }
                set
            }
            None => leaf(),
        },
        _ => leaf(),
    }
}

/// The paths `live` has and `predicted` has not (structured-merge-diff's `Compare`, its
/// `Removed` set, as `removeWebhookMutation` takes it): a field or list item only `live` holds,
/// with everything below it. A leaf both hold (changed or not), an empty map or list in `live`
/// where `predicted` has a filled one, and anything only `predicted` holds are not removed. A
/// `null` in `predicted` where `live` has a filled map or list removes what is below it.
fn removed_paths(live: &Value, predicted: &Value, schema: &SmdSchema, at: &At) -> FieldSet {
    let only_live = |v: &Value, at: &At| {
        let mut node = value_set(v, schema, at);
        node.member = true;
        node
    };
    let mut set = FieldSet::default();
    match live {
        Value::Object(l) if !l.is_empty() && !schema.atomic_object(at) => {
            let r = match predicted {
                Value::Object(r) => Some(r),
                Value::Null => None,
                _ => return set,
            };
            for (k, lv) in l {
                let child_at = schema.field(at, k);
                let node = match r.and_then(|r| r.get(k)) {
                    Some(rv) => removed_paths(lv, rv, schema, &child_at),
                    None => only_live(lv, &child_at),
                };
                if !node.is_empty() {
                    set.children.insert(PathElement::Field(k.clone()), node);
                }
            }
        }
        Value::Array(l) if !l.is_empty() => {
            let r = match predicted {
                Value::Array(r) => r.as_slice(),
                Value::Null => &[],
                _ => return set,
            };
            match schema.list_kind(at) {
                Some(ListKind::Map(keys)) => {
                    let item_at = schema.item(at);
                    let rk: Vec<_> = r.iter().map(|i| schema.key_of(&item_at, i, &keys)).collect();
                    for item in l {
                        let key = schema.key_of(&item_at, item, &keys);
                        let other = rk.iter().position(|k| {
                            keys_compatible(&key, k) || (key.is_empty() && k.is_empty())
                        });
                        let node = match other {
                            Some(j) => removed_paths(item, &r[j], schema, &item_at),
                            None => only_live(item, &item_at),
                        };
                        if !node.is_empty() {
                            set.children.insert(PathElement::Key(key), node);
                        }
                    }
                }
                Some(ListKind::Set) => {
                    for item in l.iter().filter(|i| !r.contains(i)) {
                        set.children.insert(PathElement::Value(item.to_string()), leaf());
                    }
                }
                None => {}
            }
        }
        _ => {}
    }
    set
}

/// The first associative list in `v` with two items of one key (every key field given or
/// defaulted): its RFC 6901 pointer below `pointer`, and structured-merge-diff's words for it.
fn duplicate_key(
    v: &Value,
    schema: &SmdSchema,
    at: &At,
    pointer: &str,
) -> Option<(String, String)> {
    match v {
        Value::Object(m) if !schema.atomic_object(at) => m.iter().find_map(|(k, child)| {
            let p = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
            duplicate_key(child, schema, &schema.field(at, k), &p)
        }),
        Value::Array(items) => {
            let Some(ListKind::Map(keys)) = schema.list_kind(at) else { return None };
            let item_at = schema.item(at);
            let mut seen = BTreeSet::new();
            for item in items {
                let key = schema.key_of(&item_at, item, &keys);
                if key.len() == keys.len() && !seen.insert(key.clone()) {
                    let spelled: Vec<String> =
                        key.iter().map(|(n, v)| format!("{n}={v}")).collect();
                    let message = format!("duplicate entries for key [{}]", spelled.join(","));
                    return Some((pointer.to_string(), message));
                }
            }
            items.iter().enumerate().find_map(|(i, item)| {
                duplicate_key(item, schema, &item_at, &format!("{pointer}/{i}"))
            })
        }
        _ => None,
    }
}

/// Merges `rhs` into `lhs`, `rhs` winning: maps key by key, associative lists and sets item by
/// item (see [`merge_items`]), atomic values replaced.
fn merge(lhs: &Value, rhs: &Value, schema: &SmdSchema, at: &At) -> Value {
    match (lhs, rhs) {
        (Value::Object(l), Value::Object(r)) if !schema.atomic_object(at) => {
            let mut out = l.clone();
            for (k, rv) in r {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, rv, schema, &schema.field(at, k)),
                    None => rv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(r)) => match schema.list_kind(at) {
            Some(ListKind::Map(keys)) => {
                let item_at = schema.item(at);
                let lk: Vec<_> = l.iter().map(|i| schema.key_of(&item_at, i, &keys)).collect();
                let rk: Vec<_> = r.iter().map(|i| schema.key_of(&item_at, i, &keys)).collect();
                // Items without any key field (structured-merge-diff refuses them) pair in
                // order, so an object merged with itself stays itself.
                let same = |i: usize, j: usize| {
                    keys_compatible(&lk[i], &rk[j]) || (lk[i].is_empty() && rk[j].is_empty())
                };
                Value::Array(merge_items(l, r, same, |a, b| merge(a, b, schema, &item_at)))
            }
            Some(ListKind::Set) => {
                Value::Array(merge_items(l, r, |i, j| l[i] == r[j], |_, b| b.clone()))
            }
            None => rhs.clone(),
        },
        _ => rhs.clone(),
    }
}

/// Merges two associative lists (or sets) in structured-merge-diff's order: items of both
/// come in `r`'s order, an item only in `l` keeps its place relative to them, an item only in
/// `r` is inserted where `r` has it. `same(i, j)`: `l[i]` and `r[j]` are the same item.
fn merge_items(
    l: &[Value],
    r: &[Value],
    same: impl Fn(usize, usize) -> bool,
    merge_one: impl Fn(&Value, &Value) -> Value,
) -> Vec<Value> {
    let mut r_of_l: Vec<Option<usize>> = vec![None; l.len()];
    let mut l_of_r: Vec<Option<usize>> = vec![None; r.len()];
    for (j, slot) in l_of_r.iter_mut().enumerate() {
        if let Some(i) = (0..l.len()).find(|i| r_of_l[*i].is_none() && same(*i, j)) {
            r_of_l[i] = Some(j);
            *slot = Some(i);
        }
    }
    // Indices into `r` of the shared items, and the next one to place.
    let shared: Vec<usize> = (0..r.len()).filter(|j| l_of_r[*j].is_some()).collect();
    let mut next = 0;
    let mut out = Vec::with_capacity(l.len().max(r.len()));
    let (mut li, mut ri) = (0, 0);
    while li < l.len() || ri < r.len() {
        if li < l.len() && ri < r.len() {
            if r_of_l[li] == Some(ri) {
                out.push(merge_one(&l[li], &r[ri]));
                li += 1;
                ri += 1;
                next += 1;
                continue;
            }
            if let Some(j) = r_of_l[li]
                && shared.get(next).is_some_and(|n| *n != j)
            {
                // A shared item placed (or to be placed) at its position in `r`.
                li += 1;
                continue;
            }
        }
        if li < l.len() && r_of_l[li].is_none() {
            out.push(l[li].clone());
            li += 1;
            continue;
        }
        if ri < r.len() {
            out.push(match l_of_r[ri] {
                Some(i) => merge_one(&l[i], &r[ri]),
                None => r[ri].clone(),
            });
            if shared.get(next) == Some(&ri) {
                next += 1;
            }
            ri += 1;
            continue;
        }
        // Only shared items already placed remain in `l`.
        li += 1;
    }
    out
}

/// Where autoscaling/v1 keeps what autoscaling/v2 has as fields: v1 paths and the v2 path
/// each converts to (Kubernetes' HPA conversion: the CPU utilisation target is the one
/// `Resource` metric v1 has, every other metric, the behavior and the conditions round-trip
/// through `autoscaling.alpha.kubernetes.io/*` annotations).
const HPA_V1_V2: &[PathPair] = &[
    (&["spec", "targetCPUUtilizationPercentage"], &["spec", "metrics"]),
    (&["metadata", "annotations", "autoscaling.alpha.kubernetes.io/metrics"], &["spec", "metrics"]),
    (
        &["metadata", "annotations", "autoscaling.alpha.kubernetes.io/behavior"],
        &["spec", "behavior"],
    ),
    (&["status", "currentCPUUtilizationPercentage"], &["status", "currentMetrics"]),
    (
        &["metadata", "annotations", "autoscaling.alpha.kubernetes.io/current-metrics"],
        &["status", "currentMetrics"],
    ),
    (
        &["metadata", "annotations", "autoscaling.alpha.kubernetes.io/conditions"],
        &["status", "conditions"],
    ),
];

type PathPair = (&'static [&'static str], &'static [&'static str]);

/// Moves what `set` owns at the `from` side of `pairs` to the other side: a field owned (in
/// whole or in part) at one version is owned as a whole at the other.
fn move_paths(set: &mut FieldSet, pairs: &[PathPair], v1_to_v2: bool) {
    let side = |p: &PathPair| {
        if v1_to_v2 { (p.0, p.1) } else { (p.1, p.0) }
    };
    let owned: Vec<bool> =
        pairs.iter().map(|p| set.node(side(p).0).is_some_and(|n| !n.is_empty())).collect();
    for (p, _) in pairs.iter().zip(&owned).filter(|(_, o)| **o) {
        set.remove_path(side(p).0);
    }
    for (p, _) in pairs.iter().zip(&owned).filter(|(_, o)| **o) {
        set.put_leaf(side(p).1);
    }
}

/// Whether objects of groups `a` and `b` convert into each other (the same group, or the
/// kinds `extensions` shared with `apps`, `networking.k8s.io` and `policy`).
fn same_hub(a: &str, b: &str) -> bool {
    const MOVED: [&str; 3] = ["apps", "networking.k8s.io", "policy"];
    a == b || (a == "extensions" && MOVED.contains(&b)) || (b == "extensions" && MOVED.contains(&a))
}

/// An entry's field set at `api_version` (structured-merge-diff converts every
/// manager's fields to the applied version through the internal hub version). `None` when
/// the recorded version cannot be converted (a custom resource, or a version or kind the
/// registered types lack): structured-merge-diff then drops the manager, so the entry owns
/// nothing. Built-in kinds keep their field names across versions, except
/// `HorizontalPodAutoscaler` between autoscaling/v1 and v2 (see [`HPA_V1_V2`]).
fn set_at_version(e: &Entry, api_version: &str, kind: &str) -> Option<FieldSet> {
    if e.api_version.is_empty() || e.api_version == api_version {
        return Some(e.set.clone());
    }
    let (fg, fv) = split_api_version(&e.api_version);
    let (tg, tv) = split_api_version(api_version);
    if !same_hub(fg, tg) || !schema::is_builtin(fg, fv, kind) || !schema::is_builtin(tg, tv, kind) {
        return None;
    }
    let mut set = e.set.clone();
    if fg == "autoscaling" && kind == "HorizontalPodAutoscaler" && (fv == "v1") != (tv == "v1") {
        move_paths(&mut set, HPA_V1_V2, fv == "v1");
    }
    Some(set)
}

fn builtin(obj: &Value) -> bool {
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (g, v) = split_api_version(api);
    is_builtin(g, v, obj.get("kind").and_then(Value::as_str).unwrap_or(""))
}

/// Reconciles a recorded field set with the schema, as structured-merge-diff does before
/// applying (the schema may have changed since the entry was written, and this crate's schema
/// is not the one of the server that wrote it): a list, map or struct the schema makes atomic
/// but that the set records field by field is owned as a whole; one recorded as a whole that
/// the schema makes granular is owned field by field, every field `live` has there. Untyped
/// positions are left as recorded. (structured-merge-diff keeps the node itself as a member
/// too; its pruning then treats it like any struct on the way to owned fields, which is what
/// dropping the membership here amounts to with [`orphaned_struct_fields`].)
///
/// `last_apply` is set for the applying manager's own last `Apply` entry: a node it recorded
/// as a whole that is not empty in `live` owns nothing below it then, since
/// structured-merge-diff takes back from its pruning only the exact paths of the last applied
/// set (`addBackDanglingItems`), never the fields under such a node.
fn reconcile(
    set: &mut FieldSet,
    live: Option<&Value>,
    schema: &SmdSchema,
    at: &At,
    last_apply: bool,
) {
    let Some(t) = SmdSchema::typed(at) else { return };
    let atomic = match t.shape() {
        Shape::List => schema.list_kind(at).is_none(),
        Shape::Struct | Shape::Map => schema.atomic_object(at),
        Shape::Scalar(_) | Shape::Untyped => return,
    };
    if atomic {
        if !set.children.is_empty() {
            set.children.clear();
            set.member = true;
        }
        return;
    }
    if set.member
        && set.children.is_empty()
        && let Some(v) = live
    {
        let fields = value_set(v, schema, at);
        if !fields.children.is_empty() && last_apply {
            set.member = false;
        } else if !fields.children.is_empty() {
            // Owned through its fields now; the node itself counts as owned while any of them
            // is (see `orphaned_struct_fields`).
            *set = fields;
            set.member = false;
        }
    }
    let item_at = schema.item(at);
    for (pe, child) in set.children.iter_mut() {
        let sub = live.and_then(|l| child_of(l, pe));
        match pe {
            PathElement::Field(name) => {
                reconcile(child, sub, schema, &schema.field(at, name), last_apply)
            }
            _ => reconcile(child, sub, schema, &item_at, last_apply),
        }
    }
}

/// The struct fields Argo CD's last apply went through under which nobody (Argo CD's new apply
/// included) owns anything any more. structured-merge-diff counts the named fields on the way
/// to an owned field as owned too (`EnsureNamedFieldsAreMembers`) when it prunes, so such a
/// struct goes as a whole, with the unowned fields below it (server defaults). Map keys and
/// list items are not named fields; untyped positions have none.
fn orphaned_struct_fields(
    previous: &FieldSet,
    owned: &FieldSet,
    schema: &SmdSchema,
    at: &At,
    out: &mut FieldSet,
) {
    let none = FieldSet::default();
    for (pe, child) in &previous.children {
        if child.children.is_empty() {
            continue;
        }
        let owned_child = owned.child(pe);
        let (child_at, named) = match pe {
            PathElement::Field(name) => (
                schema.field(at, name),
                SmdSchema::typed(at)
                    .is_some_and(|t| t.shape() == Shape::Struct && t.field(name).is_some()),
            ),
            _ => (schema.item(at), false),
        };
        let mut node = FieldSet::default();
        if named && owned_child.is_none_or(FieldSet::is_empty) {
            node.member = true;
        } else {
            orphaned_struct_fields(
                child,
                owned_child.unwrap_or(&none),
                schema,
                &child_at,
                &mut node,
            );
        }
        if !node.is_empty() {
            out.children.insert(pe.clone(), node);
        }
    }
}

/// Structured-merge diff (sigs.k8s.io/structured-merge-diff v6): server-side apply of `config` onto
/// `live` as the manager `argocd-controller` with force, emulated from live's managed fields.
///
/// The merged object is live with config merged in (by the schema of [`SmdSchema`]), minus
/// what Argo CD applied last time (its `Apply` entry), no longer applies, and no other
/// manager owns. Every entry's field set is first converted to config's `apiVersion`.
pub(crate) fn structured_merge_diff(
    config: &Value,
    live: &Value,
    openapi: Option<&OpenApiSchema>,
    object: &ObjectRef,
) -> Result<DiffResult, DiffError> {
    let entries = managed_fields(live).map_err(|(path, message)| DiffError::ManagedFields {
        object: Box::new(object.clone()),
        path,
        message,
    })?;
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut inferred = InferredSchema::default();
    let mut previous = FieldSet::default();
    let mut others = FieldSet::default();
    // Reconciling reads typed positions only; the inferred part is filled in below.
    let mut schema = SmdSchema::new(config, openapi, InferredSchema::default());
    for e in &entries {
        let Some(mut set) = set_at_version(e, api_version, kind) else { continue };
        let last_apply = e.manager == super::DiffOptions::ARGOCD_MANAGER && e.operation == "Apply";
        reconcile(&mut set, Some(live), &schema, &schema.root(), last_apply);
        inferred.learn(&set);
        if last_apply {
            previous.union(&set);
        } else {
            others.union(&set);
        }
    }
    schema.inferred = inferred;
    let root = schema.root();
    // As structured-merge-diff builds its typed values, live first: an associative list with
    // two items of one key is refused.
    for (side, v) in [("live", live), ("config", config)] {
        if let Some((path, message)) = duplicate_key(v, &schema, &root, "") {
            let object = Box::new(object.clone());
            return Err(DiffError::Schema { object, side, path, message });
        }
    }
    let applied = value_set(config, &schema, &root);
    let mut merged = merge(live, config, &schema, &root);
    let mut stale = previous.difference(&applied).difference(&others);
    let mut owned = applied.clone();
    owned.union(&others);
    let mut orphans = FieldSet::default();
    orphaned_struct_fields(&previous, &owned, &schema, &root, &mut orphans);
    stale.union(&orphans);
    // A field the manager applied empty before (`data: {}`) and now applies with content is
    // not stale: the structured-merge library makes the applied fields members before pruning.
    stale.exclude_owned_ancestors(&applied);
    remove_items(&mut merged, &stale);
    if canonical_eq(&merged, live) {
        return Ok(DiffResult {
            modified: false,
            normalized_live: live.clone(),
            predicted_live: live.clone(),
            patch: Vec::new(),
            mode: DiffMode::StructuredMerge,
        });
    }
    // As Argo CD's `normalizeTypedValue`, the predicted live object first: a side whose
    // defaults cannot be applied fails the comparison.
    let out = |mut v: Value, side: &'static str| {
        remove_annotation(&mut v, LAST_APPLIED_ANNOTATION);
        if builtin(&v) {
            apply_defaults_in_place(&mut v).map_err(|f| DiffError::Defaults {
                object: Box::new(object.clone()),
                side,
                path: f.path,
                message: f.message,
            })?;
        }
        Ok(v)
    };
    let predicted = out(merged, "predicted live")?;
    Ok(finish(out(live.clone(), "live")?, predicted, DiffMode::StructuredMerge))
}

/// Server-side diff from the host's dry-run result (gitops-engine pkg/diff/diff.go
/// `serverSideDiff`, `removeWebhookMutation`).
pub(crate) fn server_side_diff(
    config: &Value,
    live: &Value,
    opts: &DiffOptions<'_>,
    object: &ObjectRef,
) -> Result<DiffResult, DiffError> {
    let _ = config;
    let dry_run = opts
        .dry_run
        .ok_or_else(|| DiffError::MissingDryRun { object: Box::new(object.clone()) })?;
    let mut predicted = if opts.ignore_mutation_webhook {
        remove_webhook_mutation(dry_run, live, opts.manager, opts.openapi, object)?
    } else {
        dry_run.clone()
    };
    predicted = remarshal(&predicted);
    normalize(&mut predicted, opts, false);
    let mut live = live.clone();
    normalize(&mut live, opts, false);
    for v in [&mut predicted, &mut live] {
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
            meta.remove("resourceVersion");
            meta.remove("generation");
        }
        remove_annotation(v, LAST_APPLIED_ANNOTATION);
    }
    Ok(finish(live, predicted, DiffMode::ServerSide))
}

/// `removeWebhookMutation`: live, plus the dry-run values of the fields the manager owns,
/// minus the fields the dry-run deleted.
fn remove_webhook_mutation(
    predicted: &Value,
    live: &Value,
    manager: &str,
    openapi: Option<&OpenApiSchema>,
    object: &ObjectRef,
) -> Result<Value, DiffError> {
    let err = |path: &str, message: &str| DiffError::DryRun {
        object: Box::new(object.clone()),
        path: path.to_string(),
        message: message.to_string(),
    };
    let entries = managed_fields(predicted).map_err(|(p, m)| err(&p, &m))?;
    if entries.is_empty() {
        return Err(err("/metadata/managedFields", "no managed fields"));
    }
    let mut owned = FieldSet::default();
    for e in entries.iter().filter(|e| e.manager == manager) {
        owned.union(&e.set);
    }
    if owned.is_empty() {
        return Err(err(
            "/metadata/managedFields",
            &format!("no fields are managed by `{manager}`"),
        ));
    }
    let live_entries = managed_fields(live).unwrap_or_default();
    let mut inferred = InferredSchema::default();
    for e in entries.iter().chain(&live_entries) {
        inferred.learn(&e.set);
    }
    let schema = SmdSchema::new(predicted, openapi, inferred);
    let root = schema.root();
    let predicted_set = value_set(predicted, &schema, &root);
    let mut non_argo = predicted_set.difference(&owned);
    non_argo.exclude_owned_ancestors(&owned);
    let mut removed = removed_paths(live, predicted, &schema, &root).difference(&non_argo);
    // Server-side apply only removes what the applier owned: a path live's entries of the
    // manager neither own nor own something below was removed by someone else, not a diff.
    let mut live_owned = FieldSet::default();
    for e in live_entries.iter().filter(|e| e.manager == manager) {
        live_owned.union(&e.set);
    }
    let mut not_owned = removed.difference(&live_owned);
    not_owned.exclude_owned_ancestors(&live_owned);
    removed = removed.difference(&not_owned);
    non_argo.exclude_composite_key_fields();
    let mut p = predicted.clone();
    remove_items(&mut p, &non_argo);
    let mut p = merge(live, &p, &schema, &root);
    remove_items(&mut p, &removed);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v, "").unwrap()
    }

    #[test]
    fn list_merge_order_follows_structured_merge() {
        let v = |xs: &[&str]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        let m = |l: &[&str], r: &[&str]| {
            let (l, r) = (v(l), v(r));
            merge_items(&l, &r, |i, j| l[i] == r[j], |_, b| b.clone())
        };
        // live-only items keep their place; desired order wins for shared items.
        assert_eq!(m(&["a", "x", "b"], &["a", "b"]), v(&["a", "x", "b"]));
        assert_eq!(m(&["a", "b"], &["b", "a"]), v(&["b", "a"]));
        assert_eq!(m(&["a", "b"], &["a", "n", "b"]), v(&["a", "n", "b"]));
        assert_eq!(m(&["x", "a"], &["a", "n"]), v(&["x", "a", "n"]));
        assert_eq!(m(&[], &["a"]), v(&["a"]));
        assert_eq!(m(&["a"], &[]), v(&["a"]));
    }

    fn entry(api_version: &str, fields: Value) -> Entry {
        Entry {
            manager: "m".into(),
            operation: "Update".into(),
            api_version: api_version.into(),
            time: String::new(),
            subresource: String::new(),
            set: set(fields),
        }
    }

    #[test]
    fn field_sets_convert_between_api_versions() {
        const HPA: &str = "HorizontalPodAutoscaler";
        let v2 = entry(
            "autoscaling/v2",
            json!({"f:spec": {"f:metrics": {}, "f:behavior": {"f:scaleUp": {}}, "f:maxReplicas": {}}}),
        );
        let at_v1 = set_at_version(&v2, "autoscaling/v1", HPA).expect("convertible");
        assert_eq!(
            at_v1,
            set(json!({"f:spec": {"f:targetCPUUtilizationPercentage": {}, "f:maxReplicas": {}},
                "f:metadata": {"f:annotations": {
                    "f:autoscaling.alpha.kubernetes.io/metrics": {},
                    "f:autoscaling.alpha.kubernetes.io/behavior": {}}}}))
        );
        let v1 =
            entry("autoscaling/v1", json!({"f:spec": {"f:targetCPUUtilizationPercentage": {}}}));
        assert_eq!(
            set_at_version(&v1, "autoscaling/v2", HPA),
            Some(set(json!({"f:spec": {"f:metrics": {}}})))
        );
        // Same group, other version: field names kept; unregistered versions and custom
        // resources at another version: dropped.
        let d = entry("apps/v1beta1", json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(set_at_version(&d, "apps/v1", "Deployment"), Some(d.set.clone()));
        let beta = entry("autoscaling/v2beta2", json!({"f:spec": {"f:metrics": {}}}));
        assert_eq!(set_at_version(&beta, "autoscaling/v2", HPA), None);
        let cr = entry("example.com/v1alpha1", json!({"f:spec": {"f:a": {}}}));
        assert_eq!(set_at_version(&cr, "example.com/v1", "Widget"), None);
        assert!(set_at_version(&cr, "example.com/v1alpha1", "Widget").is_some());
    }

    #[test]
    fn list_keys_take_defaults_and_missing_fields_match_any() {
        let svc = json!({"apiVersion": "v1", "kind": "Service"});
        let schema = SmdSchema::new(&svc, None, InferredSchema::default());
        let ports = schema.field(&schema.field(&schema.root(), "spec"), "ports");
        assert_eq!(
            schema.list_kind(&ports),
            Some(ListKind::Map(vec!["port".into(), "protocol".into()]))
        );
        let key = schema.key_of(
            &schema.item(&ports),
            &json!({"port": 53}),
            &["port".into(), "protocol".into()],
        );
        assert_eq!(key, vec![("port".into(), "53".into()), ("protocol".into(), "\"TCP\"".into())]);
        let k = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        assert!(keys_compatible(&k(&[("port", "53")]), &k(&[("port", "53"), ("protocol", "x")])));
        assert!(!keys_compatible(&k(&[("port", "53")]), &k(&[("port", "54")])));
        assert!(!keys_compatible(&k(&[("a", "1")]), &k(&[("b", "1")])));
        let selector = schema.field(&schema.field(&schema.root(), "spec"), "selector");
        assert!(schema.atomic_object(&selector), "Service selector is an atomic map");
        let labels = schema.field(&schema.field(&schema.root(), "metadata"), "labels");
        assert!(!schema.atomic_object(&labels), "labels merge key by key");
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        let schema = SmdSchema::new(&d, None, InferredSchema::default());
        let selector = schema.field(&schema.field(&schema.root(), "spec"), "selector");
        assert!(schema.atomic_object(&selector), "LabelSelector is atomic");
    }

    #[test]
    fn inferred_schema_reads_lists_and_atomic_objects() {
        let mut inferred = InferredSchema::default();
        inferred.learn(&set(json!({"f:spec": {"f:items": {"k:{\"name\":\"a\"}": {}},
            "f:tags": {"v:\"x\"": {}}, "f:config": {}, "f:meta": {"f:a": {}}}})));
        inferred.learn(&set(json!({"f:spec": {"f:meta": {}}})));
        assert_eq!(inferred.list_kind("spec.items"), Some(ListKind::Map(vec!["name".into()])));
        assert_eq!(inferred.list_kind("spec.tags"), Some(ListKind::Set));
        assert!(inferred.atomic_object("spec.config"));
        assert!(!inferred.atomic_object("spec.meta"), "recorded with fields by another entry");
    }

    #[test]
    fn structured_merge_keeps_unowned_and_drops_stale_fields() {
        let live = json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w",
            "managedFields": [
                {"manager": "argocd-controller", "operation": "Apply", "fieldsV1":
                    {"f:spec": {"f:a": {}, "f:old": {}, "f:items": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}}}}}},
                {"manager": "other", "operation": "Update", "fieldsV1":
                    {"f:spec": {"f:items": {"k:{\"name\":\"y\"}": {".": {}, "f:name": {}}}}}}]},
            "spec": {"a": 1, "old": true, "extra": 5, "items": [{"name": "x"}, {"name": "y"}]}});
        let config = json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
            "spec": {"a": 2, "items": [{"name": "x", "v": 1}]}});
        let obj = ObjectRef::from_object_lossy(&config);
        let r = structured_merge_diff(&config, &live, None, &obj).unwrap();
        assert!(r.modified);
        assert_eq!(
            r.predicted_live["spec"],
            json!({"a": 2, "extra": 5, "items": [{"name": "x", "v": 1}, {"name": "y"}]})
        );
    }

    /// gitops-engine `removeWebhookMutation`: what the dry run lacks goes again after the merge
    /// onto live only where structured-merge-diff's `Compare` calls it removed (live holds it,
    /// the dry run nothing there: an empty map in live under a filled one is not) and live's
    /// entries of the manager own it or something below it (server-side apply removes only what
    /// the applier owned). Oracle case `diff-fixed-CronJob-ssd-jobTemplate-metadata.json`.
    #[test]
    fn webhook_removal_re_removes_only_owned_removed_fields() {
        let mf = |fields: Value| {
            json!([{"manager": "argocd-controller", "operation": "Apply",
            "apiVersion": "example.com/v1", "fieldsV1": fields}])
        };
        let obj = |spec: Value, fields: Value| {
            json!({"apiVersion": "example.com/v1",
            "kind": "W", "metadata": {"name": "w", "managedFields": mf(fields)}, "spec": spec})
        };
        let r = ObjectRef::from_object_lossy(&obj(json!({}), json!({})));
        let owned = json!({"f:spec": {"f:a": {}, "f:gone": {}, "f:m": {"f:x": {}}}});
        let dry_run = obj(json!({"a": 1, "m": {"x": null}}), owned.clone());
        let run = |live: &Value| {
            remove_webhook_mutation(&dry_run, live, "argocd-controller", None, &r)
                .map(|v| v["spec"].clone())
        };
        // `gone`, owned by the manager in live, is removed; `other`, nobody's, stays; the empty
        // `m` of live stays a map (the null `x` is the dry run's).
        let live = obj(json!({"a": 1, "gone": 2, "other": 3, "m": {}}), owned);
        assert_eq!(run(&live).unwrap(), json!({"a": 1, "other": 3, "m": {"x": null}}));
        // A live object without entries of the manager keeps all it has.
        let mut bare = live.clone();
        bare["metadata"]["managedFields"] = json!([]);
        assert_eq!(run(&bare).unwrap(), json!({"a": 1, "gone": 2, "other": 3, "m": {"x": null}}));
    }
}
