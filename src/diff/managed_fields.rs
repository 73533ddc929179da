//! Field ownership: `metadata.managedFields` (`fieldsV1`) as field sets, and what is built on
//! them without I/O: structured-merge diff (spec §5.1), the pure part of server-side diff
//! from a host-provided dry-run result (§5.2), and `managedFieldsManagers` (§7.5).
//!
//! Structured merge needs to know which lists are associative (and by which keys) and which
//! are sets. That comes from a [`ListSchema`]. Until the generated Kubernetes schema is wired
//! in, [`InferredSchema`] reads it from the `fieldsV1` of the objects themselves: a list whose
//! entries are recorded as `k:{...}` is a map keyed by those fields, one recorded as `v:...`
//! is a set, and every other list is atomic.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::json::{canonical_eq, remove_annotation};
use super::pipeline::{finish, normalize};
use super::{DiffError, DiffMode, DiffOptions, DiffResult, apply_defaults, is_builtin, remarshal};
use crate::config::LAST_APPLIED_ANNOTATION;
use crate::object::{ObjectRef, escape_pointer_token, split_api_version};

/// One element of a field path, as `fieldsV1` spells it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PathElement {
    /// `f:<name>`: a field of a map or struct.
    Field(String),
    /// `k:{...}`: an element of an associative list, by its key fields (name → JSON text).
    Key(Vec<(String, String)>),
    /// `v:<json>`: an element of a set, by its JSON text.
    Value(String),
    /// `i:<n>`: an element of an atomic list, by position.
    Index(usize),
}

/// A set of field paths, as a tree: `member` says the path to this node is in the set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    member: bool,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// Parses a `fieldsV1` object.
    pub(crate) fn from_fields_v1(v: &Value, at: &str) -> Result<FieldSet, String> {
        let Value::Object(map) = v else {
            return Err(format!("{at}: expected an object"));
        };
        let mut set = FieldSet::default();
        for (k, child) in map {
            if k == "." {
                set.member = true;
                continue;
            }
            let pe = parse_element(k).ok_or_else(|| format!("{at}: invalid path element `{k}`"))?;
            let sub_at = format!("{at}/{}", escape_pointer_token(k));
            let mut node = FieldSet::from_fields_v1(child, &sub_at)?;
            if child.as_object().is_some_and(Map::is_empty) {
                node.member = true;
            }
            set.children.insert(pe, node);
        }
        Ok(set)
    }

    fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    fn union(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (k, v) in &other.children {
            self.children.entry(k.clone()).or_default().union(v);
        }
    }

    /// Members of `self` that are not members of `other`.
    fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && !other.member, children: BTreeMap::new() };
        for (k, v) in &self.children {
            let d = match other.children.get(k) {
                Some(o) => v.difference(o),
                None => v.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// Drops members that have a member strictly below them in `owned` (spec §5.2: ancestors of
    /// owned leaves are not removed).
    fn exclude_owned_ancestors(&mut self, owned: &FieldSet) {
        if self.member && owned.children.values().any(|c| !c.is_empty()) {
            self.member = false;
        }
        for (k, v) in self.children.iter_mut() {
            if let Some(o) = owned.children.get(k) {
                v.exclude_owned_ancestors(o);
            }
        }
        self.children.retain(|_, v| !v.is_empty());
    }

    /// Drops key fields of composite-key list elements (spec §5.2), so element identity stays.
    fn exclude_composite_key_fields(&mut self) {
        for (k, v) in self.children.iter_mut() {
            if let PathElement::Key(keys) = k
                && keys.len() > 1
            {
                for (name, _) in keys {
                    if let Some(field) = v.children.get_mut(&PathElement::Field(name.clone())) {
                        field.member = false;
                    }
                }
            }
            v.exclude_composite_key_fields();
        }
        self.children.retain(|_, v| !v.is_empty());
    }
}

fn parse_element(k: &str) -> Option<PathElement> {
    let (prefix, rest) = k.split_at_checked(2)?;
    match prefix {
        "f:" => Some(PathElement::Field(rest.to_string())),
        "k:" => {
            let Ok(Value::Object(m)) = serde_json::from_str::<Value>(rest) else { return None };
            Some(PathElement::Key(m.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()))
        }
        "v:" => serde_json::from_str::<Value>(rest).ok().map(|v| PathElement::Value(v.to_string())),
        "i:" => rest.parse().ok().map(PathElement::Index),
        _ => None,
    }
}

/// How a list merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// An associative list keyed by these fields.
    Map(Vec<String>),
    /// A set of scalars.
    Set,
}

/// Schema information structured merge needs: the kind of each list field, by the dotted
/// path of field names from the object root (`spec.template.spec.containers`). `None` means
/// atomic. The generated Kubernetes schema plugs in here.
pub(crate) trait ListSchema {
    /// The kind of the list at `path` in objects of `group/kind`.
    fn list_kind(&self, path: &str) -> Option<ListKind>;
}

/// List kinds read from the `fieldsV1` of managed-fields entries.
#[derive(Debug, Default)]
pub(crate) struct InferredSchema {
    lists: BTreeMap<String, ListKind>,
}

impl InferredSchema {
    /// Learns from every entry's field set.
    pub(crate) fn learn(&mut self, set: &FieldSet) {
        self.walk(set, "");
    }

    fn walk(&mut self, set: &FieldSet, path: &str) {
        for (k, child) in &set.children {
            match k {
                PathElement::Field(name) => {
                    let p = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                    for ck in child.children.keys() {
                        match ck {
                            PathElement::Key(keys) => {
                                let names = keys.iter().map(|(n, _)| n.clone()).collect();
                                self.lists.entry(p.clone()).or_insert(ListKind::Map(names));
                            }
                            PathElement::Value(_) => {
                                self.lists.entry(p.clone()).or_insert(ListKind::Set);
                            }
                            _ => {}
                        }
                    }
                    self.walk(child, &p);
                }
                _ => self.walk(child, path),
            }
        }
    }
}

impl ListSchema for InferredSchema {
    fn list_kind(&self, path: &str) -> Option<ListKind> {
        self.lists.get(path).cloned()
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

/// The key element of a list item, with the key fields the item has.
fn key_of(item: &Value, keys: &[String]) -> PathElement {
    PathElement::Key(
        keys.iter().filter_map(|k| item.get(k).map(|v| (k.clone(), v.to_string()))).collect(),
    )
}

/// Whether a list item matches a key element: every key field the element names that the
/// item also has is equal (a key field missing on one side counts as its default).
fn item_matches(item: &Value, key: &[(String, String)]) -> bool {
    let mut any = false;
    for (name, text) in key {
        if let Some(v) = item.get(name) {
            if &v.to_string() != text {
                return false;
            }
            any = true;
        }
    }
    any
}

fn find_item(list: &[Value], pe: &PathElement) -> Option<usize> {
    match pe {
        PathElement::Key(key) => list.iter().position(|i| item_matches(i, key)),
        PathElement::Value(text) => list.iter().position(|i| &i.to_string() == text),
        PathElement::Index(n) => (*n < list.len()).then_some(*n),
        PathElement::Field(_) => None,
    }
}

/// The field set of every leaf of a value (scalars, empty maps, atomic lists) and of every
/// element of associative lists and sets.
fn value_set(v: &Value, schema: &dyn ListSchema, path: &str) -> FieldSet {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut set = FieldSet::default();
            for (k, child) in m {
                set.children.insert(
                    PathElement::Field(k.clone()),
                    value_set(child, schema, &join(path, k)),
                );
            }
            set
        }
        Value::Array(items) if !items.is_empty() => match schema.list_kind(path) {
            Some(ListKind::Map(keys)) => {
                let mut set = FieldSet::default();
                for item in items {
                    let mut node = value_set(item, schema, path);
                    node.member = true;
                    set.children.insert(key_of(item, &keys), node);
                }
                set
            }
            Some(ListKind::Set) => {
                let mut set = FieldSet::default();
                for item in items {
                    set.children.insert(
                        PathElement::Value(item.to_string()),
                        FieldSet { member: true, children: BTreeMap::new() },
                    );
                }
                set
            }
            None => FieldSet { member: true, children: BTreeMap::new() },
        },
        _ => FieldSet { member: true, children: BTreeMap::new() },
    }
}

/// Removes every member of `set` from `v`.
fn remove_items(v: &mut Value, set: &FieldSet) {
    match v {
        Value::Object(m) => {
            for (pe, child) in &set.children {
                let PathElement::Field(k) = pe else { continue };
                if child.member {
                    m.remove(k);
                } else if let Some(sub) = m.get_mut(k) {
                    remove_items(sub, child);
                }
            }
        }
        Value::Array(items) => {
            let mut drop = Vec::new();
            for (pe, child) in &set.children {
                let Some(i) = find_item(items, pe) else { continue };
                if child.member {
                    drop.push(i);
                } else {
                    remove_items(&mut items[i], child);
                }
            }
            drop.sort_unstable();
            drop.dedup();
            for i in drop.into_iter().rev() {
                items.remove(i);
            }
        }
        _ => {}
    }
}

/// Merges `rhs` into `lhs`, `rhs` winning: maps key by key, associative lists and sets item by
/// item (lhs order, new items appended), everything else replaced.
fn merge(lhs: &Value, rhs: &Value, schema: &dyn ListSchema, path: &str) -> Value {
    match (lhs, rhs) {
        (Value::Object(l), Value::Object(r)) => {
            let mut out = l.clone();
            for (k, rv) in r {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, rv, schema, &join(path, k)),
                    None => rv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(r)) => match schema.list_kind(path) {
            Some(ListKind::Map(keys)) => {
                let same = |a: &Value, b: &Value| match key_of(a, &keys) {
                    PathElement::Key(key) => !key.is_empty() && item_matches(b, &key),
                    _ => false,
                };
                Value::Array(merge_items(l, r, same, |a, b| merge(a, b, schema, path)))
            }
            Some(ListKind::Set) => Value::Array(merge_items(l, r, |a, b| a == b, |_, b| b.clone())),
            None => rhs.clone(),
        },
        _ => rhs.clone(),
    }
}

/// Merges two associative lists (or sets) in structured-merge-diff's order: items of both
/// come in `r`'s order, an item only in `l` keeps its place relative to them, an item only in
/// `r` is inserted where `r` has it.
fn merge_items(
    l: &[Value],
    r: &[Value],
    same: impl Fn(&Value, &Value) -> bool,
    merge_one: impl Fn(&Value, &Value) -> Value,
) -> Vec<Value> {
    let mut r_of_l: Vec<Option<usize>> = vec![None; l.len()];
    let mut l_of_r: Vec<Option<usize>> = vec![None; r.len()];
    for (j, rv) in r.iter().enumerate() {
        if let Some(i) = (0..l.len()).find(|i| r_of_l[*i].is_none() && same(&l[*i], rv)) {
            r_of_l[i] = Some(j);
            l_of_r[j] = Some(i);
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

/// One parsed `managedFields` entry.
struct Entry {
    manager: String,
    operation: String,
    set: FieldSet,
}

fn managed_fields(obj: &Value) -> Result<Vec<Entry>, (String, String)> {
    let mf = match obj.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(("/metadata/managedFields".into(), "expected an array".into()));
        }
    };
    let mut out = Vec::with_capacity(mf.len());
    for (i, e) in mf.iter().enumerate() {
        let at = format!("/metadata/managedFields/{i}");
        let manager = e.get("manager").and_then(Value::as_str).unwrap_or("").to_string();
        let operation = e.get("operation").and_then(Value::as_str).unwrap_or("").to_string();
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(f) => FieldSet::from_fields_v1(f, &format!("{at}/fieldsV1"))
                .map_err(|m| (at.clone(), m))?,
        };
        out.push(Entry { manager, operation, set });
    }
    Ok(out)
}

/// The list schema for structured merge. MERGE POINT: once `crate::schema` offers list types
/// (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`), look them up first and fall back
/// to what the managed fields record.
fn schema_from(entries: &[&[Entry]]) -> InferredSchema {
    let mut schema = InferredSchema::default();
    for list in entries {
        for e in *list {
            schema.learn(&e.set);
        }
    }
    schema
}

fn builtin(obj: &Value) -> bool {
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (g, v) = split_api_version(api);
    is_builtin(g, v, obj.get("kind").and_then(Value::as_str).unwrap_or(""))
}

/// Structured-merge diff (spec §5.1): server-side apply of `config` onto `live` as the
/// manager `argocd-controller` with force, emulated from live's managed fields.
pub(crate) fn structured_merge_diff(
    config: &Value,
    live: &Value,
    object: &ObjectRef,
) -> Result<DiffResult, DiffError> {
    let entries = managed_fields(live).map_err(|(path, message)| DiffError::ManagedFields {
        object: Box::new(object.clone()),
        path,
        message,
    })?;
    let schema = schema_from(&[&entries]);
    let mut previous = FieldSet::default();
    let mut others = FieldSet::default();
    for e in &entries {
        if e.manager == super::ARGOCD_MANAGER && e.operation == "Apply" {
            previous.union(&e.set);
        } else {
            others.union(&e.set);
        }
    }
    let applied = value_set(config, &schema, "");
    let mut merged = merge(live, config, &schema, "");
    let mut stale = previous.difference(&applied).difference(&others);
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
    let out = |mut v: Value| {
        remove_annotation(&mut v, LAST_APPLIED_ANNOTATION);
        if builtin(&v) { apply_defaults(&v) } else { v }
    };
    Ok(finish(out(live.clone()), out(merged), DiffMode::StructuredMerge))
}

/// Server-side diff from the host's dry-run result (spec §5.2 steps 3–6).
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
        remove_webhook_mutation(dry_run, live, opts.manager, object)?
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
    let schema = schema_from(&[&entries, &live_entries]);
    let predicted_set = value_set(predicted, &schema, "");
    let mut non_argo = predicted_set.difference(&owned);
    non_argo.exclude_owned_ancestors(&owned);
    let removed = value_set(live, &schema, "").difference(&predicted_set).difference(&non_argo);
    non_argo.exclude_composite_key_fields();
    let mut p = predicted.clone();
    remove_items(&mut p, &non_argo);
    let mut p = merge(live, &p, &schema, "");
    remove_items(&mut p, &removed);
    Ok(p)
}

/// Argo CD's `managedFieldsNormalize` for `ignoreDifferences.managedFieldsManagers` (spec
/// §7.5): every field that an entry of the live object's `metadata.managedFields` by one of
/// `managers` owns, and that holds different values in `live` and `desired`, is removed from
/// both. Fields present on one side only are kept. Nothing changes when no entry belongs to
/// a trusted manager, or the managed fields cannot be read.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// let mut live = json!({"metadata": {"managedFields": [{"manager": "hpa", "operation": "Update",
///     "fieldsV1": {"f:spec": {"f:replicas": {}}}}]}, "spec": {"replicas": 5}});
/// let mut desired = json!({"spec": {"replicas": 1}});
/// gitops_core::diff::normalize_managed_fields(&mut live, &mut desired, &["hpa".to_string()]);
/// assert_eq!(desired, json!({"spec": {}}));
/// ```
pub fn normalize_managed_fields(live: &mut Value, config: &mut Value, managers: &[String]) {
    if managers.is_empty() {
        return;
    }
    let Ok(entries) = managed_fields(live) else { return };
    let mut trusted = FieldSet::default();
    let mut found = false;
    for e in entries.iter().filter(|e| managers.contains(&e.manager)) {
        trusted.union(&e.set);
        found = true;
    }
    if !found {
        return;
    }
    let mut differing = FieldSet::default();
    collect_differing(&trusted, Some(live), Some(config), &mut differing);
    remove_items(live, &differing);
    remove_items(config, &differing);
}

fn collect_differing(
    set: &FieldSet,
    live: Option<&Value>,
    config: Option<&Value>,
    out: &mut FieldSet,
) {
    let (Some(l), Some(c)) = (live, config) else { return };
    if set.member && set.children.is_empty() {
        out.member = !canonical_eq(l, c);
        return;
    }
    for (pe, child) in &set.children {
        let (lv, cv) = (child_of(l, pe), child_of(c, pe));
        let mut node = FieldSet::default();
        collect_differing(child, lv, cv, &mut node);
        if !node.is_empty() {
            out.children.insert(pe.clone(), node);
        }
    }
}

fn child_of<'a>(v: &'a Value, pe: &PathElement) -> Option<&'a Value> {
    match (v, pe) {
        (Value::Object(m), PathElement::Field(k)) => m.get(k),
        (Value::Array(items), _) => find_item(items, pe).map(|i| &items[i]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: Value) -> FieldSet {
        FieldSet::from_fields_v1(&v, "").unwrap()
    }

    #[test]
    fn fields_v1_parses_and_rejects() {
        let s = set(json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}":
            {".": {}, "f:name": {}}}}}));
        let ports = &s.children[&PathElement::Field("spec".into())].children
            [&PathElement::Field("ports".into())];
        let (k, node) = ports.children.iter().next().unwrap();
        assert_eq!(
            k,
            &PathElement::Key(vec![
                ("port".into(), "80".into()),
                ("protocol".into(), "\"TCP\"".into())
            ])
        );
        assert!(node.member);
        let err = FieldSet::from_fields_v1(&json!({"x:a": {}}), "/f").unwrap_err();
        assert_eq!(err, "/f: invalid path element `x:a`");
    }

    #[test]
    fn list_merge_order_follows_structured_merge() {
        let v = |xs: &[&str]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        let m = |l: &[&str], r: &[&str]| merge_items(&v(l), &v(r), |a, b| a == b, |_, b| b.clone());
        // live-only items keep their place; desired order wins for shared items.
        assert_eq!(m(&["a", "x", "b"], &["a", "b"]), v(&["a", "x", "b"]));
        assert_eq!(m(&["a", "b"], &["b", "a"]), v(&["b", "a"]));
        assert_eq!(m(&["a", "b"], &["a", "n", "b"]), v(&["a", "n", "b"]));
        assert_eq!(m(&["x", "a"], &["a", "n"]), v(&["x", "a", "n"]));
        assert_eq!(m(&[], &["a"]), v(&["a"]));
        assert_eq!(m(&["a"], &[]), v(&["a"]));
    }

    // Spec C49–C51 (TestExcludeManagerOwnedAncestors).
    #[test]
    fn owned_ancestors_are_not_removed() {
        let owned = set(json!({"f:spec": {"f:configuration": {"f:value": {}}}}));
        let mut remove = set(json!({"f:spec": {".": {}, "f:configuration": {}}}));
        remove.exclude_owned_ancestors(&owned);
        assert!(remove.is_empty(), "C49: {remove:?}");

        let mut remove =
            set(json!({"f:spec": {".": {}, "f:configuration": {".": {}, "f:other": {}}}}));
        remove.exclude_owned_ancestors(&owned);
        assert_eq!(remove, set(json!({"f:spec": {"f:configuration": {"f:other": {}}}})), "C50");

        let mut remove =
            set(json!({"f:spec": {".": {}, "f:configuration": {}, "f:unrelated": {}}}));
        remove.exclude_owned_ancestors(&owned);
        assert_eq!(remove, set(json!({"f:spec": {"f:unrelated": {}}})), "C51");
    }

    #[test]
    fn trusted_manager_fields_are_dropped_where_they_differ() {
        let mf = json!([{"manager": "hpa", "operation": "Update",
            "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}}}}]);
        let mut live =
            json!({"metadata": {"managedFields": mf}, "spec": {"replicas": 3, "paused": false}});
        let mut config = json!({"spec": {"replicas": 1, "paused": false}});
        normalize_managed_fields(&mut live, &mut config, &["hpa".to_string()]);
        assert_eq!(config, json!({"spec": {"paused": false}}));
        assert!(live["spec"].get("replicas").is_none());
        let mut config2 = json!({"spec": {"replicas": 1}});
        let mut live2 = json!({"metadata": {"managedFields": mf}, "spec": {"replicas": 3}});
        normalize_managed_fields(&mut live2, &mut config2, &["other".to_string()]);
        assert_eq!(config2, json!({"spec": {"replicas": 1}}));
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
        let r = structured_merge_diff(&config, &live, &obj).unwrap();
        assert!(r.modified);
        assert_eq!(
            r.predicted_live["spec"],
            json!({"a": 2, "extra": 5, "items": [{"name": "x", "v": 1}, {"name": "y"}]})
        );
    }
}
