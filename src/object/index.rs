//! [`ObjectIndex`]: where objects sit in a list, by identity, built once so that pairing two
//! lists of N objects costs N lookups instead of N × N comparisons.

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::{ObjectRef, RefParts};

/// Group, kind, namespace and name: the identity [`ObjectRef::same_object`] compares.
pub(crate) type Key<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The positions of objects in a list by identity (group, kind, namespace and name; the
/// version aside, as [`ObjectRef::same_object`] compares): one pass to build, one hash lookup
/// per question. It borrows the identities from the list it indexes.
///
/// # Examples
///
/// ```
/// use gitops_core::object::ObjectRef;
/// use gitops_core::object::ObjectIndex;
/// let cm = |name: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": name, "namespace": "shop"}});
/// let objects = [cm("a"), cm("b"), cm("a")];
/// let index = ObjectIndex::of_objects(&objects);
/// let a = ObjectRef::new("", "v2", "ConfigMap", "shop", "a");
/// assert_eq!((index.first(&a), index.last(&a)), (Some(0), Some(2)));
/// assert_eq!(index.first(&ObjectRef::new("", "v1", "ConfigMap", "other", "a")), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ObjectIndex<'a> {
    /// First and last position of each identity.
    exact: FxHashMap<Key<'a>, (usize, usize)>,
    /// First position of each group, kind and name, whatever the namespace.
    by_name: FxHashMap<(&'a str, &'a str, &'a str), usize>,
}

impl<'a> ObjectIndex<'a> {
    /// Indexes objects by the identity [`ObjectRef::from_object_lossy`] reads (empty strings
    /// for what is missing).
    pub fn of_objects(objects: impl IntoIterator<Item = &'a Value>) -> Self {
        Self::of_keys(objects.into_iter().map(|o| RefParts::of(o).key()))
    }

    /// Indexes references: position `i` is the `i`-th of `refs`.
    pub fn of_refs(refs: impl IntoIterator<Item = &'a ObjectRef>) -> Self {
        Self::of_keys(
            refs.into_iter().map(|r| {
                (r.group.as_str(), r.kind.as_str(), r.namespace.as_str(), r.name.as_str())
            }),
        )
    }

    /// Indexes identities given as group, kind, namespace and name (for callers that adjust
    /// them, e.g. clear the namespace of a cluster-scoped object).
    pub(crate) fn of_keys(keys: impl IntoIterator<Item = Key<'a>>) -> Self {
        let mut index = ObjectIndex::default();
        for (i, k) in keys.into_iter().enumerate() {
            index.exact.entry(k).and_modify(|(_, last)| *last = i).or_insert((i, i));
            index.by_name.entry((k.0, k.1, k.3)).or_insert(i);
        }
        index
    }

    /// The position of the first object that is `r` (any version).
    pub fn first(&self, r: &ObjectRef) -> Option<usize> {
        self.get(r, &r.namespace).map(|(first, _)| first)
    }

    /// The position of the last object that is `r` (any version).
    pub fn last(&self, r: &ObjectRef) -> Option<usize> {
        self.get(r, &r.namespace).map(|(_, last)| last)
    }

    /// The first object of `r`'s group, kind and name (`r` as group, kind, namespace and
    /// name) whose namespace is `r`'s or empty (an
    /// object written without one, before the destination namespace is set); when `r` has no
    /// namespace and `any_when_empty` holds, the first in any namespace.
    pub(crate) fn first_lenient(&self, r: Key<'_>, any_when_empty: bool) -> Option<usize> {
        let (group, kind, namespace, name) = r;
        if namespace.is_empty() && any_when_empty {
            return self.by_name.get(&(group, kind, name)).copied();
        }
        let exact = self.exact.get(&r).map(|(first, _)| *first);
        let bare = self.exact.get(&(group, kind, "", name)).map(|(first, _)| *first);
        match (exact, bare) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn get(&self, r: &ObjectRef, namespace: &str) -> Option<(usize, usize)> {
        self.exact.get(&(r.group.as_str(), r.kind.as_str(), namespace, r.name.as_str())).copied()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cm(ns: Option<&str>, name: &str) -> Value {
        let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        if let Some(ns) = ns {
            o["metadata"]["namespace"] = json!(ns);
        }
        o
    }

    /// Every lookup answers what the linear search it replaces answered.
    #[test]
    fn answers_as_the_linear_search() {
        let objects = [
            cm(Some("b"), "x"),
            cm(None, "x"),
            cm(Some("a"), "x"),
            cm(Some("a"), "y"),
            cm(Some("a"), "x"),
            json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        ];
        let index = ObjectIndex::of_objects(&objects);
        let refs: Vec<ObjectRef> = objects.iter().map(ObjectRef::from_object_lossy).collect();
        let mut probes = refs.clone();
        probes.push(ObjectRef::new("", "v1", "ConfigMap", "c", "x"));
        probes.push(ObjectRef::new("", "v1", "Secret", "a", "x"));
        for p in &probes {
            let first = refs.iter().position(|r| r.same_object(p));
            let last = refs.iter().rposition(|r| r.same_object(p));
            assert_eq!((index.first(p), index.last(p)), (first, last), "{p}");
            let lenient = |any: bool| {
                refs.iter().position(|r| {
                    r.group == p.group
                        && r.kind == p.kind
                        && r.name == p.name
                        && (r.namespace == p.namespace
                            || r.namespace.is_empty()
                            || (any && p.namespace.is_empty()))
                })
            };
            let k = (p.group.as_str(), p.kind.as_str(), p.namespace.as_str(), p.name.as_str());
            assert_eq!(index.first_lenient(k, false), lenient(false), "{p}");
            assert_eq!(index.first_lenient(k, true), lenient(true), "{p}");
        }
        assert_eq!(ObjectIndex::of_refs(&refs).last(&refs[0]), Some(0));
    }
}
