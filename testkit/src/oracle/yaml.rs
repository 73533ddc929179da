//! The `yaml` area's comparison: a manifest text read by gitops-core (`ParseOptions::parse_manifests`,
//! Argo CD's reading) and by Argo CD (`kube.SplitYAML`, the oracle's `yaml` method), object by
//! object, with the signatures of the divergences `testdata/oracle/explained.txt` explains.
//! Shared by the oracle's runner (`oracle/yaml.rs` generates the texts) and the replay of its
//! recorded cases (`testdata/oracle/yaml-*.json`).

use serde_json::{Value, json};

/// gitops-core's reading: the objects, or the error.
pub fn ours(text: &str) -> Value {
    let options = gitops_core::object::ParseOptions::default();
    match options.parse_manifests(text) {
        Ok(m) => json!({"objects": m.objects}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// Numbers are equal as JSON numbers (Go writes a float that is a whole number without a
/// fraction, which reads back as an integer).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || (x.as_f64().is_some() && x.as_f64() == y.as_f64() && (x.is_f64() || y.is_f64()))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(u, v)| same(u, v))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, u)| y.get(k).is_some_and(|v| same(u, v)))
        }
        _ => a == b,
    }
}

/// Argo CD's objects with each `List` replaced by its items, as the repo-server does with what
/// it read (`kube.SplitYAML` leaves a `List` as it is; gitops-core reads its items).
fn flatten_lists(objects: &Value) -> Value {
    let mut out = Vec::new();
    for o in objects.as_array().into_iter().flatten() {
        match (o["kind"].as_str(), o["items"].as_array()) {
            (Some("List"), Some(items)) => out.extend(items.iter().cloned()),
            _ => out.push(o.clone()),
        }
    }
    Value::Array(out)
}

/// The first place the two readings differ: a signature, the pointer, both values. `text` is
/// what both read: a JSON text's divergences that testdata/oracle/explained.txt explains get
/// signatures of their own.
pub fn compare(ours: &Value, argo: &Value, text: &str) -> Option<(String, String, Value, Value)> {
    let json = text.trim_start().starts_with('{');
    let says = |e: &Value, what: &str| e.as_str().is_some_and(|e| e.contains(what));
    let argo_objects = flatten_lists(&argo["objects"]);
    match (ours.get("error"), argo.get("error")) {
        (Some(_), Some(_)) => return None,
        (Some(e), None) => {
            let sig = if says(e, "excessive aliasing") {
                "yaml:refused:aliasing"
            } else {
                "yaml:refused:gitops-core"
            };
            return Some((sig.into(), String::new(), e.clone(), argo_objects));
        }
        (None, Some(e)) => {
            let sig = if says(e, "excessive aliasing") {
                "yaml:accepted:aliasing"
            } else if json
                && ((says(e, "found unknown escape character") && text.contains("\\/"))
                    || says(e, "found invalid Unicode character escape code"))
            {
                "yaml:refused:argo:json-escape"
            } else if json && text.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
                "yaml:refused:argo:json-line-break"
            } else {
                "yaml:refused:argo"
            };
            return Some((sig.into(), String::new(), ours["objects"].clone(), e.clone()));
        }
        (None, None) => {}
    }
    let sig =
        if json && text.contains('\u{85}') { "yaml:value:json-line-break" } else { "yaml:value" };
    first_difference(&ours["objects"], &argo_objects, String::new())
        .map(|(p, x, y)| (sig.to_string(), p, x, y))
}

fn first_difference(a: &Value, b: &Value, at: String) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, format!("{at}/{i}"))),
        (Value::Object(x), Value::Object(y))
            if x.len() == y.len() && x.keys().all(|k| y.contains_key(k)) =>
        {
            x.iter().find_map(|(k, u)| first_difference(u, &y[k], format!("{at}/{k}")))
        }
        _ if same(a, b) => None,
        _ => Some((at, a.clone(), b.clone())),
    }
}
