//! Generator of `src/schema/table.json` and its freshness test.
//!
//! Input: `testdata/k8s/openapi-v2-k8s-1.24.json` (the Kubernetes 1.24 OpenAPI v2 document)
//! and `testdata/k8s/overlay.json` (the newer merge keys of spec diff.md §6.2, the
//! registered group/versions of §6.3 and the Go pointer fields). Output: every definition of
//! `io.k8s.api.*` and `io.k8s.apimachinery.*`, reduced to what the diff engine reads, one
//! definition per line, plus the GVK → definition map.
//!
//! `GITOPS_REGENERATE=1 cargo test --lib schema::generate` rewrites the table; without it the
//! test fails when the checked-in table is stale.
#![allow(clippy::disallowed_methods)] // the generator reads and writes files in tests only

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Map, Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(rel: &str) -> Value {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

fn short_ref(r: &str) -> &str {
    r.strip_prefix("#/definitions/").unwrap_or(r)
}

fn keep_definition(name: &str) -> bool {
    name.starts_with("io.k8s.api.") || name.starts_with("io.k8s.apimachinery.")
}

/// Reduces one schema node; `owner` is `Some("Def.field")` for a struct property.
fn reduce(node: &Value, owner: Option<&str>, pointers: &BTreeSet<String>) -> Value {
    let mut out = Map::new();
    let get = |k: &str| node.get(k);
    if let Some(r) = get("$ref").and_then(Value::as_str) {
        out.insert("ref".into(), json!(short_ref(r)));
    } else {
        if let Some(t) = get("type") {
            out.insert("type".into(), t.clone());
        }
        if let Some(f) = get("format") {
            out.insert("format".into(), f.clone());
        }
        if get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            out.insert("ios".into(), json!(true));
        }
        if let Some(items) = get("items") {
            out.insert("items".into(), reduce(items, None, pointers));
        }
        if let Some(ap) = get("additionalProperties").filter(|a| a.is_object()) {
            out.insert("values".into(), reduce(ap, None, pointers));
        }
        if let Some(props) = get("properties").and_then(Value::as_object) {
            let mut p = Map::new();
            for (k, v) in props {
                let owner = format!("{}.{k}", owner.unwrap_or(""));
                p.insert(k.clone(), reduce(v, Some(&owner), pointers));
            }
            out.insert("props".into(), Value::Object(p));
            if let Some(req) = get("required") {
                out.insert("req".into(), req.clone());
            }
        }
    }
    for (src, dst) in [
        ("x-kubernetes-patch-strategy", "ps"),
        ("x-kubernetes-patch-merge-key", "mk"),
        ("x-kubernetes-list-type", "lt"),
        ("x-kubernetes-list-map-keys", "lk"),
    ] {
        if let Some(v) = get(src) {
            out.insert(dst.into(), v.clone());
        }
    }
    if let Some(v) = get("x-kubernetes-map-type").or_else(|| get("x-kubernetes-struct-type")) {
        out.insert("mt".into(), v.clone());
    }
    if let Some(o) = owner
        && pointers.contains(o)
    {
        out.insert("ptr".into(), json!(true));
    }
    Value::Object(out)
}

fn generate() -> String {
    let openapi = read_json("testdata/k8s/openapi-v2-k8s-1.24.json");
    let overlay = read_json("testdata/k8s/overlay.json");
    let empty = Map::new();
    let mut defs: BTreeMap<String, Value> = openapi["definitions"]
        .as_object()
        .unwrap_or(&empty)
        .iter()
        .filter(|(k, _)| keep_definition(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in overlay["definitions"].as_object().unwrap_or(&empty) {
        defs.insert(k.clone(), v.clone());
    }
    for (def, fields) in overlay["fields"].as_object().unwrap_or(&empty) {
        let d = defs.get_mut(def).unwrap_or_else(|| panic!("overlay names unknown {def}"));
        let props = d["properties"].as_object_mut().expect("overlay target has properties");
        for (k, v) in fields.as_object().expect("overlay fields are objects") {
            props.insert(k.clone(), v.clone());
        }
    }
    let pointers: BTreeSet<String> = overlay["pointers"]
        .as_array()
        .expect("pointers")
        .iter()
        .map(|p| p.as_str().expect("pointer names are strings").to_owned())
        .collect();
    for p in &pointers {
        let (def, field) = p.rsplit_once('.').expect("Def.field");
        assert!(
            defs.get(def).and_then(|d| d["properties"].get(field)).is_some(),
            "pointer field {p} is not in the schema"
        );
    }
    let mut gvks = BTreeMap::new();
    let mut reduced = BTreeMap::new();
    for (name, d) in &defs {
        let mut r = reduce(d, Some(name), &pointers);
        if name == QUANTITY {
            r["format"] = json!("quantity");
        }
        if name == MICRO_TIME {
            r["format"] = json!("micro-time");
        }
        reduced.insert(name.clone(), r);
        if !name.starts_with("io.k8s.api.") {
            continue;
        }
        for gvk in
            d.get("x-kubernetes-group-version-kind").and_then(Value::as_array).into_iter().flatten()
        {
            let g = gvk["group"].as_str().unwrap_or("");
            let v = gvk["version"].as_str().unwrap_or("");
            let k = gvk["kind"].as_str().unwrap_or("");
            let gv = if g.is_empty() { v.to_owned() } else { format!("{g}/{v}") };
            gvks.insert(format!("{gv}/{k}"), name.clone());
        }
    }
    let mut out = String::new();
    out.push_str("{\n\"_comment\": ");
    out.push_str(&json!("GENERATED by src/schema/generate.rs from testdata/k8s/openapi-v2-k8s-1.24.json (Kubernetes v1.24.0, Apache-2.0) and testdata/k8s/overlay.json; do not edit.").to_string());
    out.push_str(",\n\"builtinGroupVersions\": ");
    out.push_str(&overlay["builtinGroupVersions"].to_string());
    out.push_str(",\n\"versionFallbacks\": ");
    out.push_str(&overlay["versionFallbacks"].to_string());
    out.push_str(",\n\"gvks\": {\n");
    let gvk_lines: Vec<String> =
        gvks.iter().map(|(k, v)| format!("{}: {}", json!(k), json!(v))).collect();
    out.push_str(&gvk_lines.join(",\n"));
    out.push_str("\n},\n\"definitions\": {\n");
    let def_lines: Vec<String> =
        reduced.iter().map(|(k, v)| format!("{}: {}", json!(k), v)).collect();
    out.push_str(&def_lines.join(",\n"));
    out.push_str("\n}\n}\n");
    out
}

#[test]
fn table_is_fresh() {
    let generated = generate();
    let path = root().join("src/schema/table.json");
    if std::env::var("GITOPS_REGENERATE").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("writing table.json");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "src/schema/table.json is stale: run GITOPS_REGENERATE=1 cargo test --lib schema::generate"
    );
}
