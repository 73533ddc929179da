//! `metadata.managedFields` as field sets: the `fieldsV1` of each entry parsed into a [`FieldSet`]
//! tree, the set algebra structured merge needs (union, difference, pruning of owned ancestors),
//! finding the list item a path element names, removing a set from an object, and Argo CD's
//! `managedFieldsManagers` normalization (Argo CD 3.6.2 util/argo/managedfields/managed_fields.go
//! `Normalize`, the one implementation).
//!
//! Below both the diff engine (structured-merge and server-side diff, explanations) and the
//! ignore engine (`managedFieldsManagers` rules): it knows JSON and field paths, not schemas
//! or merge strategies.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::json::canonical_eq;
use crate::object::escape_pointer_token;

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
    pub(crate) member: bool,
    pub(crate) children: BTreeMap<PathElement, FieldSet>,
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

    pub(crate) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// Whether the path to this node is itself in the set.
    pub(crate) fn is_member(&self) -> bool {
        self.member
    }

    /// The elements below this node, in order.
    pub(crate) fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    pub(crate) fn union(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (k, v) in &other.children {
            self.children.entry(k.clone()).or_default().union(v);
        }
    }

    /// The child at `pe`; for an associative-list key not recorded exactly, the child with a
    /// compatible key (one side may lack a key field that has no default).
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&FieldSet> {
        if let Some(c) = self.children.get(pe) {
            return Some(c);
        }
        let PathElement::Key(key) = pe else { return None };
        self.children.iter().find_map(|(k, c)| match k {
            PathElement::Key(other) if keys_compatible(key, other) => Some(c),
            _ => None,
        })
    }

    /// Members of `self` that are not members of `other`.
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet { member: self.member && !other.member, children: BTreeMap::new() };
        for (k, v) in &self.children {
            let d = match other.child(k) {
                Some(o) => v.difference(o),
                None => v.clone(),
            };
            if !d.is_empty() {
                out.children.insert(k.clone(), d);
            }
        }
        out
    }

    /// The node at a path of field names.
    pub(crate) fn node(&self, path: &[&str]) -> Option<&FieldSet> {
        match path.split_first() {
            None => Some(self),
            Some((name, rest)) => {
                self.children.get(&PathElement::Field((*name).to_string()))?.node(rest)
            }
        }
    }

    /// Removes the node at a path of field names, with everything below it.
    pub(crate) fn remove_path(&mut self, path: &[&str]) {
        let Some((name, rest)) = path.split_first() else { return };
        let pe = PathElement::Field((*name).to_string());
        if rest.is_empty() {
            self.children.remove(&pe);
        } else if let Some(c) = self.children.get_mut(&pe) {
            c.remove_path(rest);
        }
    }

    /// Makes the path of field names a member.
    pub(crate) fn put_leaf(&mut self, path: &[&str]) {
        match path.split_first() {
            None => self.member = true,
            Some((name, rest)) => self
                .children
                .entry(PathElement::Field((*name).to_string()))
                .or_default()
                .put_leaf(rest),
        }
    }

    /// Drops members that have a member strictly below them in `owned` (gitops-engine
    /// pkg/diff/diff.go `excludeManagerOwnedAncestors`: ancestors of owned leaves are not removed).
    pub(crate) fn exclude_owned_ancestors(&mut self, owned: &FieldSet) {
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

    /// Drops key fields of composite-key list elements (gitops-engine pkg/diff/diff.go
    /// `filterOutCompositeKeyFields`), so element identity stays.
    pub(crate) fn exclude_composite_key_fields(&mut self) {
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

/// Whether two associative-list keys name the same item: every key field both have is
/// equal, and they share at least one (a key field one side lacks, with no default, matches).
pub(crate) fn keys_compatible(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let mut shared = false;
    for (name, text) in a {
        if let Some((_, other)) = b.iter().find(|(n, _)| n == name) {
            if other != text {
                return false;
            }
            shared = true;
        }
    }
    shared
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

pub(crate) fn find_item(list: &[Value], pe: &PathElement) -> Option<usize> {
    match pe {
        PathElement::Key(key) => list.iter().position(|i| item_matches(i, key)),
        PathElement::Value(text) => list.iter().position(|i| &i.to_string() == text),
        PathElement::Index(n) => (*n < list.len()).then_some(*n),
        PathElement::Field(_) => None,
    }
}

pub(crate) fn leaf() -> FieldSet {
    FieldSet { member: true, children: BTreeMap::new() }
}

/// Removes every member of `set` from `v`.
pub(crate) fn remove_items(v: &mut Value, set: &FieldSet) {
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

/// One parsed `managedFields` entry.
pub(crate) struct Entry {
    /// `manager`.
    pub(crate) manager: String,
    /// `operation`: `Apply` or `Update`.
    pub(crate) operation: String,
    /// The `apiVersion` the field set was recorded at (empty when the entry has none).
    pub(crate) api_version: String,
    /// `time`, empty when absent.
    pub(crate) time: String,
    /// `subresource`, empty when absent.
    pub(crate) subresource: String,
    /// `fieldsV1`.
    pub(crate) set: FieldSet,
}

/// The entries of an object's `metadata.managedFields`; an error names the pointer of the
/// entry (or of the list) that cannot be read.
pub(crate) fn managed_fields(obj: &Value) -> Result<Vec<Entry>, (String, String)> {
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
        let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(f) => FieldSet::from_fields_v1(f, &format!("{at}/fieldsV1"))
                .map_err(|m| (at.clone(), m))?,
        };
        out.push(Entry {
            manager: text("manager"),
            operation: text("operation"),
            api_version: text("apiVersion"),
            time: text("time"),
            subresource: text("subresource"),
            set,
        });
    }
    Ok(out)
}

/// Argo CD's `managedFieldsNormalize` for `ignoreDifferences.managedFieldsManagers` (spec
/// `Normalize`): every field that an entry of the live object's `metadata.managedFields` by one of
/// `managers` owns, and that holds different values in `live` and `desired`, is removed from
/// both. Fields present on one side only are kept. Nothing changes when no entry belongs to
/// a trusted manager, or the managed fields cannot be read.
pub(crate) fn normalize_managed_fields(live: &mut Value, config: &mut Value, managers: &[String]) {
    let _ = trusted_managers_normalize(live, config, managers);
}

/// [`normalize_managed_fields`], returning whether an entry of a trusted manager was found. The one
/// implementation of util/argo/managedfields/managed_fields.go `Normalize`: the diff and the ignore
/// engine both call it.
pub(crate) fn trusted_managers_normalize(
    live: &mut Value,
    config: &mut Value,
    managers: &[String],
) -> bool {
    if managers.is_empty() {
        return false;
    }
    let Ok(entries) = managed_fields(live) else { return false };
    let mut trusted = FieldSet::default();
    let mut found = false;
    for e in entries.iter().filter(|e| managers.contains(&e.manager)) {
        trusted.union(&e.set);
        found = true;
    }
    if !found {
        return false;
    }
    let mut differing = FieldSet::default();
    collect_differing(&trusted, Some(live), Some(config), &mut differing);
    remove_items(live, &differing);
    remove_items(config, &differing);
    true
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

pub(crate) fn child_of<'a>(v: &'a Value, pe: &PathElement) -> Option<&'a Value> {
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
    fn removes_owned_differing_fields_only() {
        let mut live = json!({
            "metadata": {"annotations": {"a": "2", "b": "x"}, "managedFields": [
                {"manager": "janitor", "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}, "f:b": {}}},
                 "f:spec": {"f:list": {"k:{\"name\":\"n\"}": {".": {}, "f:v": {}}}}}},
                {"manager": "other", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
            ]},
            "spec": {"replicas": 4, "list": [{"name": "n", "v": 1, "w": 1}]}
        });
        let mut config = json!({
            "metadata": {"annotations": {"a": "1", "b": "x"}},
            "spec": {"replicas": 1, "list": [{"name": "n", "v": 2, "w": 2}]}
        });
        assert!(trusted_managers_normalize(&mut live, &mut config, &["janitor".to_string()]));
        assert_eq!(
            config,
            json!({"metadata": {"annotations": {"b": "x"}},
            "spec": {"replicas": 1, "list": [{"name": "n", "w": 2}]}})
        );
        assert_eq!(live["metadata"]["annotations"], json!({"b": "x"}));
        assert_eq!(live["spec"]["list"], json!([{"name": "n", "w": 1}]));
        assert!(!trusted_managers_normalize(&mut live, &mut config, &["nobody".to_string()]));
    }

    fn fixture(text: &str) -> Value {
        serde_norway::from_str(text).expect("fixture parses")
    }

    fn managers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    const DESIRED: &str = include_str!("../testdata/diff/ignore/managed/desired_deployment.yaml");
    const LIVE: &str =
        include_str!("../testdata/diff/ignore/managed/live_deployment_with_managed_replica.yaml");

    /// M01: fields of trusted managers that differ are removed from both sides.
    #[test]
    fn m01_trusted_managers() {
        let (mut live, mut desired) = (fixture(LIVE), fixture(DESIRED));
        let trusted = managers(&["kube-controller-manager", "revision-history-manager"]);
        assert!(trusted_managers_normalize(&mut live, &mut desired, &trusted));
        for obj in [&live, &desired] {
            assert_eq!(obj.pointer("/spec/replicas"), None);
            assert_eq!(obj.pointer("/spec/revisionHistoryLimit"), None);
        }
        assert_eq!(desired["spec"]["selector"], fixture(DESIRED)["spec"]["selector"]);
    }

    /// M02: a manager that owns nothing leaves both sides as they are.
    #[test]
    fn m02_untrusted_manager() {
        let (mut live, mut desired) = (fixture(LIVE), fixture(DESIRED));
        assert!(!trusted_managers_normalize(
            &mut live,
            &mut desired,
            &managers(&["another-manager"])
        ));
        assert_eq!(
            (desired["spec"]["replicas"].clone(), live["spec"]["replicas"].clone()),
            (json!(3), json!(2))
        );
        assert_eq!(
            (
                desired["spec"]["revisionHistoryLimit"].clone(),
                live["spec"]["revisionHistoryLimit"].clone()
            ),
            (json!(1), json!(3))
        );
    }

    /// M06: a field inside a list item, found by its key (`k:{"name":...}`).
    #[test]
    fn m06_inside_a_list() {
        let mut live =
            fixture(include_str!("../testdata/diff/ignore/managed/live_validating_webhook.yaml"));
        let mut desired = fixture(include_str!(
            "../testdata/diff/ignore/managed/desired_validating_webhook.yaml"
        ));
        assert!(trusted_managers_normalize(
            &mut live,
            &mut desired,
            &managers(&["external-secrets"])
        ));
        for obj in [&live, &desired] {
            assert_eq!(obj.pointer("/webhooks/0/clientConfig/caBundle"), None);
            assert!(obj.pointer("/webhooks/0/clientConfig/service").is_some());
        }
    }
}
