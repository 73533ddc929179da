//! Turning fuzzer bytes into structured input.
//!
//! Every target reads its first byte as a mode: even means the rest is JSON text (what the
//! seed corpora hold, built from `testdata/`), odd means the rest drives [`Gen`], which builds
//! Kubernetes-shaped values from a vocabulary so that mutations stay near the paths the
//! schema, the health checks and the planner care about.

use serde_json::{Map, Value};

/// Keys that the diff, merge, health and sync code look at, with the strategic merge patch
/// directives.
pub(crate) const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "spec",
    "replicas",
    "template",
    "containers",
    "initContainers",
    "image",
    "env",
    "value",
    "ports",
    "containerPort",
    "protocol",
    "volumes",
    "strategy",
    "type",
    "rollingUpdate",
    "maxSurge",
    "selector",
    "matchLabels",
    "resources",
    "limits",
    "cpu",
    "args",
    "rules",
    "aggregationRule",
    "volumeClaimTemplates",
    "status",
    "conditions",
    "reason",
    "message",
    "phase",
    "readyReplicas",
    "updatedReplicas",
    "availableReplicas",
    "observedGeneration",
    "generation",
    "containerStatuses",
    "ready",
    "state",
    "waiting",
    "loadBalancer",
    "ingress",
    "ip",
    "data",
    "x",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$setElementOrder/env",
    "$setElementOrder/finalizers",
    "$deleteFromPrimitiveList/finalizers",
    "$deleteFromPrimitiveList/args",
];

/// Strings the same code compares against.
pub(crate) const STRINGS: &[&str] = &[
    "",
    "a",
    "b",
    "80",
    "1",
    "-1",
    "delete",
    "replace",
    "merge",
    "RollingUpdate",
    "Recreate",
    "True",
    "False",
    "Available",
    "Progressing",
    "NewReplicaSetAvailable",
    "ProgressDeadlineExceeded",
    "Running",
    "Pending",
    "Succeeded",
    "Failed",
    "LoadBalancer",
    "ClusterIP",
    "Bound",
    "100m",
    "0.1",
    "1Gi",
    "nginx",
    "TCP",
    "Ready",
    "Complete",
    "2024-01-01T00:00:00Z",
];

/// A reader of fuzzer bytes that never fails: past the end it reads zeros.
pub(crate) struct Gen<'a> {
    data: &'a [u8],
    pos: usize,
    /// Values built so far, to bound the size of one input's values.
    budget: usize,
}

impl<'a> Gen<'a> {
    /// A generator over `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Gen { data, pos: 0, budget: 512 }
    }

    /// The next byte, 0 past the end.
    pub(crate) fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A number below `n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// A coin flip.
    pub(crate) fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// One of `items` (not empty).
    pub(crate) fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }

    /// A short string of raw bytes (lossy UTF-8), at most `max` bytes long.
    pub(crate) fn raw(&mut self, max: usize) -> String {
        let len = self.below(max + 1);
        let start = self.pos.min(self.data.len());
        let end = (start + len).min(self.data.len());
        self.pos += len;
        String::from_utf8_lossy(&self.data[start..end]).into_owned()
    }

    /// A string: mostly from `vocab`, sometimes raw bytes.
    pub(crate) fn string(&mut self, vocab: &[&str]) -> String {
        if self.below(8) == 0 { self.raw(12) } else { self.pick(vocab).to_string() }
    }

    /// A JSON value at most `depth` levels deep, keys from [`KEYS`] and `extra_keys`.
    pub(crate) fn value(&mut self, depth: usize, extra_keys: &[&str]) -> Value {
        if self.budget == 0 {
            return Value::Null;
        }
        self.budget -= 1;
        let choices = if depth == 0 { 6 } else { 9 };
        match self.below(choices) {
            0 => Value::Null,
            1 => Value::Bool(self.bool()),
            2 => Value::from(i64::from(self.byte() as i8)),
            3 | 4 => Value::String(self.string(STRINGS)),
            5 => match self.below(4) {
                0 => Value::from(f64::from(self.byte()) / 4.0),
                1 => Value::from(u64::MAX - u64::from(self.byte())),
                2 => Value::from(i64::MIN + i64::from(self.byte())),
                _ => Value::from(1e300),
            },
            6 => {
                let n = self.below(4);
                Value::Array((0..n).map(|_| self.value(depth - 1, extra_keys)).collect())
            }
            _ => Value::Object(self.map(depth - 1, extra_keys)),
        }
    }

    /// A JSON object with up to four keys.
    pub(crate) fn map(&mut self, depth: usize, extra_keys: &[&str]) -> Map<String, Value> {
        let n = self.below(5);
        let mut m = Map::new();
        for _ in 0..n {
            let key = if !extra_keys.is_empty() && self.bool() {
                self.string(extra_keys)
            } else {
                self.string(KEYS)
            };
            let v = self.value(depth, extra_keys);
            m.insert(key, v);
        }
        m
    }

    /// Edits `v` in place a few times: replaces, removes or adds a value somewhere below it.
    pub(crate) fn edit(&mut self, v: &mut Value, extra_keys: &[&str]) {
        let edits = self.below(4);
        for _ in 0..edits {
            // Walk down a few levels, recording an RFC 6901 pointer.
            let mut pointer = String::new();
            let mut at = &*v;
            for _ in 0..self.below(6) {
                let step = match at {
                    Value::Object(m) if !m.is_empty() => {
                        let i = self.below(m.len());
                        m.iter().nth(i).map(|(k, c)| (k.replace('~', "~0").replace('/', "~1"), c))
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let i = self.below(a.len());
                        a.get(i).map(|c| (i.to_string(), c))
                    }
                    _ => None,
                };
                let Some((token, child)) = step else { break };
                pointer.push('/');
                pointer.push_str(&token);
                at = child;
            }
            let Some(cur) = v.pointer_mut(&pointer) else { continue };
            match (self.below(3), cur) {
                (0, Value::Object(m)) if !m.is_empty() => {
                    let i = self.below(m.len());
                    if let Some(k) = m.keys().nth(i).cloned() {
                        m.remove(&k);
                    }
                }
                (0, Value::Array(a)) if !a.is_empty() => {
                    let i = self.below(a.len());
                    a.remove(i);
                }
                (1, Value::Object(m)) => {
                    let k = self.string(KEYS);
                    let val = self.value(2, extra_keys);
                    m.insert(k, val);
                }
                (1, Value::Array(a)) => {
                    let val = self.value(2, extra_keys);
                    let i = self.below(a.len() + 1);
                    a.insert(i, val);
                }
                // The root stays an object: the targets check objects, not arbitrary values.
                (_, cur) if !pointer.is_empty() => *cur = self.value(2, extra_keys),
                _ => {}
            }
        }
    }
}

/// The mode byte and the rest: `Some(rest)` when the rest is JSON text.
pub(crate) fn split(data: &[u8]) -> (bool, &[u8]) {
    match data.split_first() {
        Some((mode, rest)) => (mode % 2 == 0, rest),
        None => (false, data),
    }
}

/// Whether `small` is `big` with values removed: objects keep a subset of their keys, arrays
/// a subsequence of their elements (each possibly reduced), scalars are equal.
pub(crate) fn is_reduction(small: &Value, big: &Value) -> bool {
    match (small, big) {
        (Value::Object(s), Value::Object(b)) => {
            s.iter().all(|(k, v)| b.get(k).is_some_and(|bv| is_reduction(v, bv)))
        }
        (Value::Array(s), Value::Array(b)) => {
            // Greedy earliest match is optimal for an order-preserving embedding.
            let mut j = 0;
            for sv in s {
                while j < b.len() && !is_reduction(sv, &b[j]) {
                    j += 1;
                }
                if j == b.len() {
                    return false;
                }
                j += 1;
            }
            true
        }
        (s, b) => s == b,
    }
}

/// `v` without object members whose value is `null`, at every level.
pub(crate) fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Value::Array(l) => Value::Array(l.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// `v` with every number as the float64 Go's JSON decoding makes of it (`2` and `2.0` alike).
pub(crate) fn as_float64(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), as_float64(v))).collect())
        }
        Value::Array(l) => Value::Array(l.iter().map(as_float64).collect()),
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| v.clone(), Value::Number),
        other => other.clone(),
    }
}

/// Whether any object key or string below `v` starts with `$` (a merge patch directive).
pub(crate) fn has_directive(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, v)| k.starts_with('$') || has_directive(v)),
        Value::Array(l) => l.iter().any(has_directive),
        Value::String(s) => s.starts_with('$'),
        _ => false,
    }
}

/// The merge keys of the Kubernetes 1.37 schema (`x-kubernetes-patch-merge-key`).
const MERGE_KEYS: &[&str] = &[
    "containerPort",
    "devicePath",
    "ip",
    "mountPath",
    "name",
    "port",
    "resourceClaimName",
    "status",
    "topologyKey",
    "type",
    "uid",
];

/// Whether some array below `v` holds two equal scalars, two objects with the same value for
/// a merge key, or an object whose merge key is not a scalar: strategic merge patches do not round-trip such lists (in kubectl neither:
/// a merge key identifies one element).
pub(crate) fn has_duplicates(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().any(has_duplicates),
        Value::Array(l) => {
            let dup = l.iter().enumerate().any(|(i, x)| {
                l[..i].iter().any(|y| match (x, y) {
                    // Numbers as Go holds them: `0` and `0.0` are one element, one key.
                    (Value::Object(a), Value::Object(b)) => MERGE_KEYS.iter().any(|k| {
                        a.get(*k)
                            .is_some_and(|av| b.get(*k).map(as_float64) == Some(as_float64(av)))
                    }),
                    (Value::Array(_), _) | (_, Value::Array(_)) => false,
                    (x, y) => as_float64(x) == as_float64(y),
                })
            });
            // A merge key whose value is an object or an array identifies nothing either.
            let odd_key = l.iter().filter_map(Value::as_object).any(|m| {
                MERGE_KEYS.iter().any(|k| m.get(*k).is_some_and(|v| v.is_object() || v.is_array()))
            });
            dup || odd_key || l.iter().any(has_duplicates)
        }
        _ => false,
    }
}
