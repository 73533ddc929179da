//! What a client-side apply sends: the request `kubectl apply` (the one Argo CD runs for an
//! [`ActionKind::Apply`](super::ActionKind::Apply) without server-side apply) makes for one
//! object, as data for a host that talks to the API server itself.
//!
//! kubectl records the object it applies in the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation (Go's JSON of the object without that annotation, keys sorted, ending in a
//! newline). An object that does not exist is created with the annotation; one that exists is
//! patched with the three-way patch of the last-applied configuration it holds (the original),
//! the object to apply (with its new annotation) and the live object: a strategic merge patch
//! for the built-in kinds, a JSON merge patch for anything else. An empty patch sends nothing.
//! The field manager is [`super::CLIENT_SIDE_APPLY_MANAGER`].

use serde_json::{Map, Value};

use crate::diff::{three_way_json_merge_patch, three_way_strategic_patch};
use crate::object::ObjectRef;
use crate::schema;

/// kubectl's annotation holding the last applied configuration.
pub(super) const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The request a client-side apply makes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientSideApply {
    /// The object does not exist: create this object (the target with its last-applied
    /// annotation).
    Create(Value),
    /// Patch the live object with `application/strategic-merge-patch+json`.
    StrategicMergePatch(Value),
    /// Patch the live object with `application/merge-patch+json` (kinds that are not built in).
    MergePatch(Value),
    /// The patch is empty: nothing to send (kubectl says "unchanged").
    Unchanged,
}

/// A client-side apply that cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The object to apply is not a JSON object.
    #[error("client-side apply of {object}: the object to apply is not a JSON object")]
    NotAnObject {
        /// The object, `group/Kind/namespace/name`.
        object: String,
    },
    /// The three-way patch cannot be made (a list whose merge key is missing, a type that does
    /// not match the schema).
    #[error("client-side apply of {object}: cannot compute the patch at {pointer}: {message}")]
    Patch {
        /// The object, `group/Kind/namespace/name`.
        object: String,
        /// RFC 6901 pointer of the field.
        pointer: String,
        /// What went wrong.
        message: String,
    },
}

impl ClientSideApply {
    /// The request `kubectl apply` makes to apply `target` over `live` (`None` when the object
    /// does not exist).
    ///
    /// A live last-applied annotation that is not a JSON object counts as none, as kubectl's
    /// patch then has no original (no field is removed).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::ClientSideApply;
    /// use serde_json::json;
    /// let target = json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "web", "namespace": "shop"}, "data": {"a": "1"}});
    /// let ClientSideApply::Create(created) = ClientSideApply::new(&target, None).unwrap() else {
    ///     panic!("a missing object is created")
    /// };
    /// assert_eq!(
    ///     created["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
    ///     "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"shop\"}}\n"
    /// );
    /// // Applied again over what the server holds, nothing changes.
    /// assert_eq!(ClientSideApply::new(&target, Some(&created)).unwrap(), ClientSideApply::Unchanged);
    /// ```
    pub fn new(target: &Value, live: Option<&Value>) -> Result<ClientSideApply, ApplyError> {
        let object = || ObjectRef::from_object_lossy(target).key();
        if !target.is_object() {
            return Err(ApplyError::NotAnObject { object: object() });
        }
        let modified = with_last_applied(target);
        let Some(live) = live else {
            return Ok(ClientSideApply::Create(modified));
        };
        let original = live
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::Object(Map::new()));
        let (g, v, k) = schema::gvk_of(target).unwrap_or(("", "", ""));
        let builtin = schema::is_builtin(g, v, k);
        let patch = if builtin {
            three_way_strategic_patch(&original, &modified, live, g, v, k)
        } else {
            three_way_json_merge_patch(&original, &modified, live)
        }
        .map_err(|e| ApplyError::Patch {
            object: object(),
            pointer: e.path,
            message: e.message,
        })?;
        Ok(match patch {
            Value::Object(m) if m.is_empty() => ClientSideApply::Unchanged,
            patch if builtin => ClientSideApply::StrategicMergePatch(patch),
            patch => ClientSideApply::MergePatch(patch),
        })
    }
}

/// The target with kubectl's last-applied annotation: Go's JSON of the target without the
/// annotation (its `annotations` map kept, empty or not), then a newline.
fn with_last_applied(target: &Value) -> Value {
    let mut out = target.clone();
    let meta = out
        .as_object_mut()
        .map(|o| o.entry("metadata").or_insert_with(|| Value::Object(Map::new())));
    if let Some(Value::Object(meta)) = meta {
        let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Value::Object(a) = annotations {
            a.remove(LAST_APPLIED_ANNOTATION);
        }
    }
    let text = go_json(&out) + "\n";
    if let Some(Value::Object(a)) = out.pointer_mut("/metadata/annotations") {
        a.insert(LAST_APPLIED_ANNOTATION.to_string(), Value::String(text));
    }
    out
}

/// Go's `encoding/json` text of a value: keys sorted, no spaces, and `<`, `>`, `&`, U+2028
/// and U+2029 escaped as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`.
fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(k, out);
                out.push(':');
                write_go_json(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        Value::String(s) => write_go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn write_go_string(s: &str, out: &mut String) {
    for c in Value::String(s.to_string()).to_string().chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}
