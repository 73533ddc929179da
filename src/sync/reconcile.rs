//! Reconciling desired and live objects into pairs (§1).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use super::hooks;
use crate::object::{ObjectRef, Scope, Scopes};

/// A desired/live pair: create (live `None`), update (both), prune (target `None`).
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub target: Option<Value>,
    pub live: Option<Value>,
}

/// The reconciled input of a sync.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reconciled {
    /// Pairs keyed by resource key (live key if live, else target key), in key order.
    pub pairs: Vec<((String, String, String, String), Pair)>,
    /// Hook objects, in input order.
    pub hooks: Vec<Value>,
}

pub(crate) fn key4(r: &ObjectRef) -> (String, String, String, String) {
    (r.group.clone(), r.kind.clone(), r.namespace.clone(), r.name.clone())
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
    let mut order: Vec<(String, String, String, String)> = Vec::new();
    // Lookups only; the output follows `order`, so a hash map keeps it deterministic.
    let mut by_key: HashMap<(String, String, String, String), (Value, usize)> = HashMap::new();
    for (index, t) in targets.iter().enumerate() {
        let mut t = t.clone();
        scopes.default_namespace(&mut t, app_namespace);
        let r = ObjectRef::from_object_lossy(&t);
        let mut k = key4(&r);
        if meta_str(&t, "name").is_empty() && !meta_str(&t, "generateName").is_empty() {
            k.3 = format!("{}{index}", meta_str(&t, "generateName"));
        }
        match by_key.get_mut(&k) {
            Some(entry) => {
                entry.0 = t;
                entry.1 += 1;
            }
            None => {
                order.push(k.clone());
                by_key.insert(k, (t, 1));
            }
        }
    }
    let mut out = Vec::new();
    for k in order {
        let Some((t, n)) = by_key.remove(&k) else { continue };
        if n > 1 {
            warnings.push(format!(
                "Resource {}/{}/{}/{} appeared {n} times among application resources.",
                k.0, k.1, k.2, k.3
            ));
        }
        if hooks::is_deletion_hook_only(&t) {
            continue;
        }
        out.push(t);
    }
    warnings.sort();
    out
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
        if hooks::is_ignored(&t) {
            continue;
        }
        if hooks::is_hook(&t) {
            out.hooks.push(t);
        } else {
            managed.push(t);
        }
    }
    // Live objects by key; a repeated key keeps the last one. Leftovers are sorted below.
    let mut live_map: HashMap<(String, String, String, String), Value> = HashMap::new();
    // A cluster-scoped live object carrying a namespace anyway (the API server never returns
    // one; a host might) is keyed without it: it is the one object of that name. Beside the
    // same object without a namespace it gives way; of two such with different namespaces, the
    // first namespace in order stays, so the pairing never depends on the input order; of two
    // with the same namespace, the last one stays, as for any repeated key.
    let mut stray: HashMap<(String, String, String, String), String> = HashMap::new();
    for l in live {
        let mut k = key4(&ObjectRef::from_object_lossy(l));
        if k.2.is_empty() || scopes.scope(&k.0, &k.1) != Some(Scope::Cluster) {
            stray.remove(&k);
            live_map.insert(k, l.clone());
            continue;
        }
        let ns = std::mem::take(&mut k.2);
        let keep_old = live_map.contains_key(&k) && stray.get(&k).is_none_or(|old| *old < ns);
        if !keep_old {
            stray.insert(k.clone(), ns);
            live_map.insert(k, l.clone());
        }
    }
    // The same object under two API groups: keep the key a target uses.
    let target_keys: HashSet<_> =
        managed.iter().map(|t| key4(&ObjectRef::from_object_lossy(t))).collect();
    let mut by_uid: BTreeMap<String, Vec<(String, String, String, String)>> = BTreeMap::new();
    for (k, l) in &live_map {
        let uid = meta_str(l, "uid");
        if !uid.is_empty() {
            by_uid.entry(uid.to_string()).or_default().push(k.clone());
        }
    }
    for keys in by_uid.values_mut() {
        // Key order, whatever the map's iteration order was.
        keys.sort();
        let mut left = keys.len();
        for k in keys {
            if left <= 1 {
                break;
            }
            if !target_keys.contains(k) {
                live_map.remove(k);
                left -= 1;
            }
        }
    }
    let mut pairs: Vec<Pair> = Vec::new();
    for t in managed {
        let r = ObjectRef::from_object_lossy(&t);
        let ns = if r.namespace.is_empty() { app_namespace } else { &r.namespace };
        let scope = scopes.scope(&r.group, &r.kind);
        let mut found = None;
        if scope != Some(Scope::Cluster) {
            found =
                live_map.remove(&(r.group.clone(), r.kind.clone(), ns.to_string(), r.name.clone()));
        }
        if found.is_none() && scope != Some(Scope::Namespaced) {
            found =
                live_map.remove(&(r.group.clone(), r.kind.clone(), String::new(), r.name.clone()));
        }
        pairs.push(Pair { target: Some(t), live: found });
    }
    let mut leftovers: Vec<_> = live_map.into_iter().collect();
    leftovers.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, l) in leftovers {
        pairs.push(Pair { target: None, live: Some(l) });
    }
    // Keyed like Argo CD's `groupResources` map: a later pair with the same key replaces an
    // earlier one. Sorted by key (a stable sort, so the last of equal keys is last).
    let mut keyed: Vec<_> = pairs
        .into_iter()
        .filter_map(|p| {
            let obj = p.live.as_ref().or(p.target.as_ref())?;
            Some((key4(&ObjectRef::from_object_lossy(obj)), p))
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, p) in keyed {
        match out.pairs.last_mut() {
            Some(last) if last.0 == k => last.1 = p,
            _ => out.pairs.push((k, p)),
        }
    }
    out
}
