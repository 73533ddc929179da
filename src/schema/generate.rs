//! Generator of `src/schema/table.json` and its freshness test.
//!
//! Input: `testdata/k8s/openapi-v2-k8s-1.37.json` (the Kubernetes v1.37.0 OpenAPI v2 document,
//! unchanged) and `testdata/k8s/overlay.json` (what the document does not say: the registered
//! group/versions (gitops-engine pkg/diff/diff.go `threeWayMergePatch`, `scheme.Scheme.New`) as
//! client-go v0.37.0's scheme registers them, the fallback versions, and from the Go types of
//! k8s.io/api v0.37.0 the pointer fields and the fields whose `omitempty` differs from the
//! document's `required`). Output: every definition of `io.k8s.api.*` and `io.k8s.apimachinery.*`,
//! reduced to what the diff engine reads, one definition per line, plus the GVK → definition map.
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

/// The OpenAPI document the table is generated from.
const OPENAPI: &str = "testdata/k8s/openapi-v2-k8s-1.37.json";

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

fn generate() -> String {
    let openapi = read_json(OPENAPI);
    let overlay = read_json("testdata/k8s/overlay.json");
    let empty = Map::new();
    let mut defs: BTreeMap<String, Value> = openapi["definitions"]
        .as_object()
        .unwrap_or(&empty)
        .iter()
        .filter(|(k, _)| keep_definition(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
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
    let omitzero: BTreeSet<String> = overlay["omitzero"]
        .as_array()
        .expect("omitzero")
        .iter()
        .map(|p| p.as_str().expect("omitzero names are strings").to_owned())
        .collect();
    for f in overlay["notOmitempty"].as_array().expect("notOmitempty") {
        let f = f.as_str().expect("field names are strings");
        let (def, field) = f.rsplit_once('.').expect("Def.field");
        let d = defs.get_mut(def).unwrap_or_else(|| panic!("notOmitempty names unknown {def}"));
        assert!(
            d["properties"].get(field).is_some(),
            "notOmitempty field {f} is not in the schema"
        );
        let req =
            d.as_object_mut().expect("definition").entry("required").or_insert_with(|| json!([]));
        req.as_array_mut().expect("required is a list").push(json!(field));
    }
    for f in overlay["omitempty"].as_array().expect("omitempty") {
        let f = f.as_str().expect("field names are strings");
        let (def, field) = f.rsplit_once('.').expect("Def.field");
        let d = defs.get_mut(def).unwrap_or_else(|| panic!("omitempty names unknown {def}"));
        let req = d.get_mut("required").and_then(Value::as_array_mut);
        let req = req.unwrap_or_else(|| panic!("omitempty field {f} is not required"));
        let before = req.len();
        req.retain(|r| r != field);
        assert!(req.len() < before, "omitempty field {f} is not required");
    }
    let mut gvks = BTreeMap::new();
    let mut reduced = BTreeMap::new();
    for (name, d) in &defs {
        let mut r = super::reduce(d, Some(name), &pointers);
        if let Some(props) = r.get_mut("props").and_then(Value::as_object_mut) {
            for (field, node) in props.iter_mut() {
                if omitzero.contains(&format!("{name}.{field}")) {
                    node["oz"] = json!(true);
                }
            }
        }
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
    out.push_str(&json!(format!("GENERATED by src/schema/generate.rs from {OPENAPI} (Kubernetes v1.37.0, Apache-2.0) and testdata/k8s/overlay.json (client-go and k8s.io/api v0.37.0); do not edit.")).to_string());
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

/// Both forms of the table: `table.json` from the documents, and `table.rs` (the constant
/// data the engine compiles in) from that JSON built the general way ([`super::parse_table`]).
#[test]
fn table_is_fresh() {
    let json = generate();
    let rust = rust_table(&json);
    for (name, generated) in [("table.json", &json), ("table.rs", &rust)] {
        let path = root().join("src/schema").join(name);
        if std::env::var("GITOPS_REGENERATE").is_ok_and(|v| v == "1") {
            std::fs::write(&path, generated).unwrap_or_else(|e| panic!("writing {name}: {e}"));
            continue;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == *generated,
            "src/schema/{name} is stale: run GITOPS_REGENERATE=1 cargo test --lib schema::generate"
        );
    }
}

/// `table.rs`: the schema [`super::parse_table`] builds from the JSON table, written as the
/// constant data [`super::fixed_schema`] reads (one definition per line), and the
/// group/versions, fallbacks and kinds in the order `build_schema` reads them.
fn rust_table(json: &str) -> String {
    use std::fmt::Write;
    let table: Value = serde_json::from_str(json).expect("the JSON table");
    let schema = super::parse_table(json);
    let mut out = String::from(
        "//! GENERATED by src/schema/generate.rs from src/schema/table.json; do not edit.\n\
         //! `GITOPS_REGENERATE=1 cargo test --lib schema::generate` rewrites it.\n\
         use super::{Fixed as N, FixedKind as K, ListType as T, Scalar as C};\n\n",
    );
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_owned)).collect()
    };
    let gvs = strings(&table["builtinGroupVersions"]);
    let _ = writeln!(out, "pub(super) static BUILTIN_GROUP_VERSIONS: &[&str] = &{gvs:?};\n");
    out.push_str("pub(super) static VERSION_FALLBACKS: &[(&str, &[&str])] = &[\n");
    for (group, list) in table["versionFallbacks"].as_object().into_iter().flatten() {
        let _ = writeln!(out, "({group:?}, &{:?}),", strings(list));
    }
    out.push_str("];\n\n/// (kind, group/version, definition)\n");
    out.push_str("pub(super) static GVKS: &[(&str, &str, u32)] = &[\n");
    for (key, d) in table["gvks"].as_object().into_iter().flatten() {
        if let (Some((gv, kind)), Some(i)) =
            (key.rsplit_once('/'), d.as_str().and_then(|d| schema.by_name.get(d)))
        {
            let _ = writeln!(out, "({kind:?}, {gv:?}, {i}),");
        }
    }
    out.push_str("];\n\npub(super) static DEFINITIONS: &[(&str, N)] = &[\n");
    for d in &schema.defs {
        let _ = write!(out, "({:?}, ", d.name);
        rust_node(&d.node, &mut out);
        out.push_str("),\n");
    }
    out.push_str("];\n");
    out
}

/// One node as a `Fixed` literal.
fn rust_node(n: &super::Node, out: &mut String) {
    use super::{Kind, ListType, fixed_flags as b};
    use std::fmt::Write;
    out.push_str("N{k:");
    match &n.kind {
        Kind::Ref(i) => {
            let _ = write!(out, "K::R({i})");
        }
        Kind::Struct(fields) => {
            out.push_str("K::S(&[");
            for (name, c) in fields.iter() {
                let _ = write!(out, "({name:?},");
                rust_node(c, out);
                out.push_str("),");
            }
            out.push_str("])");
        }
        Kind::List(c) | Kind::Map(c) => {
            out.push_str(if matches!(n.kind, Kind::List(_)) { "K::L(&" } else { "K::M(&" });
            rust_node(c, out);
            out.push(')');
        }
        Kind::Scalar(s) => {
            let _ = write!(out, "K::C(C::{s:?})");
        }
        Kind::Untyped => out.push_str("K::U"),
    }
    let flags = [
        (n.omitempty, b::OMITEMPTY),
        (n.omitzero, b::OMITZERO),
        (n.pointer, b::POINTER),
        (n.atomic, b::ATOMIC),
        (n.strategy.merge, b::MERGE),
        (n.strategy.replace, b::REPLACE),
        (n.strategy.retain_keys, b::RETAIN_KEYS),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |f, (_, bit)| f | bit);
    let list_type = match n.list_type {
        None => "None",
        Some(ListType::Atomic) => "Some(T::Atomic)",
        Some(ListType::Set) => "Some(T::Set)",
        Some(ListType::Map) => "Some(T::Map)",
    };
    let _ = write!(
        out,
        ",f:{flags},m:{:?},t:{list_type},l:&{:?}}}",
        n.merge_key.as_deref(),
        n.list_map_keys
    );
}

/// The definitions the table keeps: the Kubernetes API types and apimachinery's.
fn keep_definition(name: &str) -> bool {
    name.starts_with("io.k8s.api.") || name.starts_with("io.k8s.apimachinery.")
}
