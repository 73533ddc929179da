//! Reconciling desired and live objects into pairs (gitops-engine pkg/sync/reconcile.go
//! `Reconcile`).

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::object::{RefParts, Scope, Scopes, split_api_version};
use crate::vocabulary::{self, HookFacts, ResourceOptions};

/// A desired object, borrowed from the request, keyed as the controller's normalization leaves it
/// (Argo CD 3.6.2 controller/state.go `NormalizeTargetObjects`: a cluster-scoped object without its
/// namespace, a namespaced one with the app's namespace when it has none), with what sending it
/// does to its namespace. Nothing is copied: the namespace fix-up is read, and applied when the
/// object is sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Desired<'a> {
    pub obj: &'a Value,
    /// Group, kind, normalized namespace, name (or `generateName`).
    pub key: RefKey<'a>,
    /// The version of its `apiVersion`.
    pub version: &'a str,
    /// It has no name but a `generateName` (the key's name).
    pub generated: bool,
    /// What its hook annotations make of it.
    pub hooks: HookFacts,
    /// Its sync wave ([`vocabulary::wave`]).
    pub wave: i64,
    /// Its sync-options annotation, read.
    pub options: ResourceOptions,
    /// Its kind's scope, if known.
    pub scope: Option<Scope>,
    /// What sending the object does to its namespace, once every target has one (gitops-engine
    /// pkg/sync/sync_context.go `getSyncTasks`: an object still without a namespace gets the
    /// app's).
    pub edit: Edit,
}

/// What sending a desired object does to its `metadata.namespace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    Keep,
    /// Set to the app's namespace.
    SetApp,
    Remove,
}

impl<'a> Desired<'a> {
    /// `obj` normalized for an app in `app_namespace` (`Scopes::default_namespace`, then the
    /// namespace every target gets), read without copying it.
    pub(super) fn of(obj: &'a Value, app_namespace: &'a str, scopes: &Scopes) -> Self {
        let meta = obj.get("metadata").and_then(Value::as_object);
        let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or("");
        let str_of = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
        let (group, version) = split_api_version(str_of("apiVersion"));
        let (name, generate_name) = (field("name"), field("generateName"));
        let generated = name.is_empty() && !generate_name.is_empty();
        let mut key = (
            group,
            str_of("kind"),
            field("namespace"),
            if name.is_empty() { generate_name } else { name },
        );
        let app = !app_namespace.is_empty();
        let scope = scopes.scope(key.0, key.1);
        let edit = match meta {
            // `metadata` that is not a map is left alone by the defaulting; the namespace
            // every target gets replaces it.
            None => {
                if app {
                    Edit::SetApp
                } else {
                    Edit::Keep
                }
            }
            Some(_) => {
                let has_ns = !key.2.is_empty();
                if scope == Some(Scope::Cluster) && (has_ns || app) {
                    // A cluster-scoped object is keyed without a namespace; it is sent with
                    // the app's, or (there is none) without its own.
                    key.2 = "";
                    if app { Edit::SetApp } else { Edit::Remove }
                } else if !has_ns && app {
                    key.2 = app_namespace;
                    Edit::SetApp
                } else {
                    Edit::Keep
                }
            }
        };
        // Everything planning reads of the object is read here, in one visit.
        let annotations = meta.and_then(|m| m.get("annotations")).and_then(Value::as_object);
        let hooks = HookFacts::with_annotations(obj, annotations);
        let wave = vocabulary::wave_of(annotations);
        let options = ResourceOptions::with_annotations(annotations);
        Desired { obj, key, version, generated, hooks, wave, options, scope, edit }
    }
}

/// A live object with its key and its sync-options annotation, read.
pub(crate) type Live<'a> = (&'a Value, RefKey<'a>, ResourceOptions);

/// A desired/live pair: create (live `None`), update (both), prune (target `None`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pair<'a> {
    pub target: Option<Desired<'a>>,
    pub live: Option<Live<'a>>,
}

impl<'a> Pair<'a> {
    /// The key of the pair: the live object's if any, else the target's.
    pub(super) fn key(&self) -> Option<RefKey<'a>> {
        self.live.map(|l| l.1).or(self.target.map(|t| t.key))
    }
}

/// A resource key borrowed from an object: group, kind, namespace, name.
pub(crate) type RefKey<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The resource key of an object, borrowed from it.
pub(crate) fn ref_key(obj: &Value) -> RefKey<'_> {
    RefParts::of(obj).key()
}

/// The reconciled input of a sync.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reconciled<'a> {
    /// Pairs in resource key order (live key if live, else target key), one per key.
    pub pairs: Vec<Pair<'a>>,
    /// Hook objects, in input order.
    pub hooks: Vec<Desired<'a>>,
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// The controller's target normalization (Argo CD 3.6.2 controller/state.go
/// `NormalizeTargetObjects`): namespace fix-up (read, see [`Desired`]), de-duplication (last one
/// wins, with a warning) and removal of PreDelete/PostDelete-only hooks.
pub(crate) fn normalize_targets<'a>(
    targets: &'a [Value],
    app_namespace: &'a str,
    scopes: &Scopes,
    warnings: &mut Vec<String>,
) -> Vec<Desired<'a>> {
    let objects: Vec<Desired<'a>> =
        targets.iter().map(|t| Desired::of(t, app_namespace, scopes)).collect();
    // Per key in order of first appearance: the index of its last object and how many
    // objects have it. The map is for lookups only, so a hash map keeps it deterministic.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    {
        let mut by_key: HashMap<(&str, &str, &str, Cow<'_, str>), usize> =
            HashMap::with_capacity(objects.len());
        for (index, d) in objects.iter().enumerate() {
            let (group, kind, namespace, name) = d.key;
            let name = if d.generated {
                Cow::Owned(format!("{name}{index}"))
            } else {
                Cow::Borrowed(name)
            };
            match by_key.entry((group, kind, namespace, name)) {
                Entry::Occupied(e) => {
                    if let Some(g) = groups.get_mut(*e.get()) {
                        *g = (index, g.1 + 1);
                    }
                }
                Entry::Vacant(e) => {
                    e.insert(groups.len());
                    groups.push((index, 1));
                }
            }
        }
    }
    for &(last, n) in &groups {
        if n > 1 {
            // Repeated keys have a name (a generated one carries its own index).
            let (g, k, ns, name) = objects[last].key;
            warnings.push(format!(
                "Resource {g}/{k}/{ns}/{name} appeared {n} times among application resources."
            ));
        }
    }
    warnings.sort();
    groups
        .iter()
        .filter_map(|(last, _)| objects.get(*last).copied())
        .filter(|t| !t.hooks.deletion_only)
        .collect()
}

/// `Reconcile` (gitops-engine pkg/sync/reconcile.go).
pub(crate) fn reconcile<'a>(
    targets: Vec<Desired<'a>>,
    live: impl IntoIterator<Item = &'a Value>,
    app_namespace: &'a str,
    scopes: &Scopes,
) -> Reconciled<'a> {
    let mut out = Reconciled::default();
    let mut managed = Vec::with_capacity(targets.len());
    for t in targets {
        let hook = t.hooks.hook;
        if hook && vocabulary::hook_types(t.obj).is_empty() {
            // `Ignore`: a hook with no valid type.
            continue;
        }
        if hook {
            out.hooks.push(t);
        } else {
            managed.push(t);
        }
    }
    // Pairing, on keys borrowed from the objects: the live object of each target, the live
    // objects left over, and which pairs stay (see `in_key_order`).
    let mut live_map = live_by_key(live, scopes);
    keep_one_key_per_uid(&mut live_map, &managed);
    let found: Vec<Option<Live<'a>>> = managed
        .iter()
        .map(|t| {
            let (group, kind, namespace, name) = t.key;
            let ns = if namespace.is_empty() { app_namespace } else { namespace };
            let scope = t.scope;
            let mut found = None;
            if scope != Some(Scope::Cluster) {
                found = live_map.remove(&(group, kind, ns, name));
            }
            if found.is_none() && scope != Some(Scope::Namespaced) {
                found = live_map.remove(&(group, kind, "", name));
            }
            found
        })
        .collect();
    let leftovers: Vec<Live<'a>> = live_map.into_values().collect();
    let pairs: Vec<Pair<'a>> = managed
        .into_iter()
        .zip(found)
        .map(|(t, live)| Pair { target: Some(t), live })
        .chain(leftovers.into_iter().map(|l| Pair { target: None, live: Some(l) }))
        .collect();
    out.pairs = in_key_order(pairs);
    out
}

/// Live objects by key, with their own key; a repeated key keeps the last one.
///
/// A cluster-scoped live object carrying a namespace anyway (the API server never returns
/// one; a host might) is keyed without it: it is the one object of that name. Beside the same
/// object without a namespace it gives way; of two such with different namespaces, the first
/// namespace in order stays, so the pairing never depends on the input order; of two with the
/// same namespace, the last one stays, as for any repeated key.
fn live_by_key<'a>(
    live: impl IntoIterator<Item = &'a Value>,
    scopes: &Scopes,
) -> HashMap<RefKey<'a>, Live<'a>> {
    let mut live_map: HashMap<RefKey<'a>, Live<'a>> = HashMap::new();
    let mut stray: HashMap<RefKey<'a>, &str> = HashMap::new();
    for l in live {
        let full = ref_key(l);
        let mut k = full;
        if k.2.is_empty() || scopes.scope(k.0, k.1) != Some(Scope::Cluster) {
            if !stray.is_empty() {
                stray.remove(&k);
            }
            live_map.insert(k, (l, full, ResourceOptions::of(l)));
            continue;
        }
        let ns = std::mem::take(&mut k.2);
        let keep_old = live_map.contains_key(&k) && stray.get(&k).is_none_or(|old| *old < ns);
        if !keep_old {
            stray.insert(k, ns);
            live_map.insert(k, (l, full, ResourceOptions::of(l)));
        }
    }
    live_map
}

/// The same object under two API groups: keep the key a target uses.
fn keep_one_key_per_uid<'a>(live_map: &mut HashMap<RefKey<'a>, Live<'a>>, managed: &[Desired<'a>]) {
    let mut uids: Vec<(&str, RefKey<'a>)> = live_map
        .iter()
        .filter_map(|(k, (l, _, _))| {
            let uid = meta_str(l, "uid");
            (!uid.is_empty()).then_some((uid, *k))
        })
        .collect();
    // By uid, then key order, whatever the map's iteration order was.
    uids.sort_unstable();
    if !uids.windows(2).any(|w| w[0].0 == w[1].0) {
        return;
    }
    let target_keys: HashSet<RefKey<'_>> = managed.iter().map(|t| t.key).collect();
    for same in uids.chunk_by(|a, b| a.0 == b.0) {
        let mut left = same.len();
        for (_, k) in same {
            if left <= 1 {
                break;
            }
            if !target_keys.contains(k) {
                live_map.remove(k);
                left -= 1;
            }
        }
    }
}

/// The pairs keyed like Argo CD's `groupResources` map (live key if live, else target key): a
/// later pair with the same key replaces an earlier one. Sorted by key (a stable sort, so the
/// last of equal keys is last). Pair `i` is the target `i`, or the leftover `i - targets`;
/// every leftover has its own key, and leftovers come after the targets' pairs, so the order
/// the leftovers were taken in does not show.
fn in_key_order(pairs: Vec<Pair<'_>>) -> Vec<Pair<'_>> {
    let mut order: Vec<(RefKey<'_>, usize)> =
        pairs.iter().enumerate().filter_map(|(i, p)| Some((p.key()?, i))).collect();
    order.sort_by(|a, b| a.0.cmp(&b.0));
    let mut keep: Vec<usize> = Vec::with_capacity(order.len());
    let mut last_key: Option<RefKey<'_>> = None;
    for (k, i) in order {
        match (last_key, keep.last_mut()) {
            (Some(prev), Some(slot)) if prev == k => *slot = i,
            _ => keep.push(i),
        }
        last_key = Some(k);
    }
    keep.iter().filter_map(|&i| pairs.get(i).copied()).collect()
}
