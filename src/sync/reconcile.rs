//! Reconciling desired and live objects into pairs (§1).

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::hooks;
use crate::object::{RefParts, Scope, Scopes};

/// A desired/live pair: create (live `None`), update (both), prune (target `None`).
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub target: Option<Value>,
    pub live: Option<Value>,
}

impl Pair {
    /// The object the pair is keyed by: the live one if any, else the target.
    pub fn keyed_object(&self) -> Option<&Value> {
        self.live.as_ref().or(self.target.as_ref())
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
pub(crate) struct Reconciled {
    /// Pairs in resource key order (live key if live, else target key), one per key.
    pub pairs: Vec<Pair>,
    /// Hook objects, in input order.
    pub hooks: Vec<Value>,
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("")
}

/// The controller's target normalization (§1.1): namespace fix-up, de-duplication (last one
/// wins, with a warning) and removal of PreDelete/PostDelete-only hooks.
pub(crate) fn normalize_targets(
    targets: &[Value],
    app_namespace: &str,
    scopes: &Scopes,
    warnings: &mut Vec<String>,
) -> Vec<Value> {
    let objects: Vec<Value> = targets
        .iter()
        .map(|t| {
            let mut t = t.clone();
            scopes.default_namespace(&mut t, app_namespace);
            t
        })
        .collect();
    // Per key in order of first appearance: the index of its last object and how many
    // objects have it. The map is for lookups only, so a hash map keeps it deterministic.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    {
        let mut by_key: HashMap<(&str, &str, &str, Cow<'_, str>), usize> =
            HashMap::with_capacity(objects.len());
        for (index, t) in objects.iter().enumerate() {
            let (group, kind, namespace, name) = ref_key(t);
            let name = if meta_str(t, "name").is_empty() && !meta_str(t, "generateName").is_empty()
            {
                Cow::Owned(format!("{}{index}", meta_str(t, "generateName")))
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
            let (g, k, ns, name) = ref_key(&objects[last]);
            warnings.push(format!(
                "Resource {g}/{k}/{ns}/{name} appeared {n} times among application resources."
            ));
        }
    }
    warnings.sort();
    let mut slots: Vec<Option<Value>> = objects.into_iter().map(Some).collect();
    groups
        .iter()
        .filter_map(|(last, _)| slots.get_mut(*last).and_then(Option::take))
        .filter(|t| !hooks::is_deletion_hook_only(t))
        .collect()
}

/// `Reconcile` (§1.2).
pub(crate) fn reconcile<'a>(
    targets: Vec<Value>,
    live: impl IntoIterator<Item = &'a Value>,
    app_namespace: &str,
    scopes: &Scopes,
) -> Reconciled {
    let mut out = Reconciled::default();
    let mut managed = Vec::new();
    for t in targets {
        let hook = hooks::is_hook(&t);
        if hook && hooks::hook_types(&t).is_empty() {
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
    // objects left over, and which pairs stay (see below).
    let (found, leftovers, keep) = {
        // Live objects by key, with their own key; a repeated key keeps the last one.
        let mut live_map: HashMap<RefKey<'_>, (RefKey<'a>, &'a Value)> = HashMap::new();
        // A cluster-scoped live object carrying a namespace anyway (the API server never
        // returns one; a host might) is keyed without it: it is the one object of that name.
        // Beside the same object without a namespace it gives way; of two such with different
        // namespaces, the first namespace in order stays, so the pairing never depends on the
        // input order; of two with the same namespace, the last one stays, as for any
        // repeated key.
        let mut stray: HashMap<RefKey<'_>, &str> = HashMap::new();
        for l in live {
            let full = ref_key(l);
            let mut k = full;
            if k.2.is_empty() || scopes.scope(k.0, k.1) != Some(Scope::Cluster) {
                stray.remove(&k);
                live_map.insert(k, (full, l));
                continue;
            }
            let ns = std::mem::take(&mut k.2);
            let keep_old = live_map.contains_key(&k) && stray.get(&k).is_none_or(|old| *old < ns);
            if !keep_old {
                stray.insert(k, ns);
                live_map.insert(k, (full, l));
            }
        }
        // The same object under two API groups: keep the key a target uses.
        let mut uids: Vec<(&str, RefKey<'_>)> = live_map
            .iter()
            .filter_map(|(k, (_, l))| {
                let uid = meta_str(l, "uid");
                (!uid.is_empty()).then_some((uid, *k))
            })
            .collect();
        // By uid, then key order, whatever the map's iteration order was.
        uids.sort_unstable();
        if uids.windows(2).any(|w| w[0].0 == w[1].0) {
            let target_keys: HashSet<RefKey<'_>> = managed.iter().map(ref_key).collect();
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
        let found: Vec<(RefKey<'_>, Option<(RefKey<'a>, &'a Value)>)> = managed
            .iter()
            .map(|t| {
                let r = RefParts::of(t);
                let ns = if r.namespace.is_empty() { app_namespace } else { r.namespace };
                let scope = scopes.scope(r.group, r.kind);
                let mut found = None;
                if scope != Some(Scope::Cluster) {
                    found = live_map.remove(&(r.group, r.kind, ns, r.name));
                }
                if found.is_none() && scope != Some(Scope::Namespaced) {
                    found = live_map.remove(&(r.group, r.kind, "", r.name));
                }
                (r.key(), found)
            })
            .collect();
        let leftovers: Vec<(RefKey<'a>, &'a Value)> = live_map.into_values().collect();
        // Keyed like Argo CD's `groupResources` map (live key if live, else target key): a
        // later pair with the same key replaces an earlier one. Sorted by key (a stable sort,
        // so the last of equal keys is last). Pair `i` is the target `i`, or the leftover
        // `i - targets`; every leftover has its own key, and leftovers come after the
        // targets' pairs, so the order the leftovers were taken in does not show.
        let mut order: Vec<(RefKey<'_>, usize)> = found
            .iter()
            .map(|(target_key, live)| live.map_or(*target_key, |(k, _)| k))
            .chain(leftovers.iter().map(|(k, _)| *k))
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
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
        let found: Vec<Option<&'a Value>> = found.iter().map(|(_, l)| l.map(|l| l.1)).collect();
        let leftovers: Vec<&'a Value> = leftovers.iter().map(|l| l.1).collect();
        (found, leftovers, keep)
    };
    let targets = managed.len();
    let mut slots: Vec<Option<Value>> = managed.into_iter().map(Some).collect();
    out.pairs = keep
        .iter()
        .map(|&i| match i.checked_sub(targets) {
            None => Pair {
                target: slots.get_mut(i).and_then(Option::take),
                live: found.get(i).copied().flatten().cloned(),
            },
            Some(j) => Pair { target: None, live: leftovers.get(j).map(|l| (*l).clone()) },
        })
        .collect();
    out
}
