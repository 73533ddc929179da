//! The `yaml` area: generated manifest texts read by gitops-core (`parse_manifests_with`, Argo
//! CD's reading: a repeated key keeps its last value) and by Argo CD (`kube.SplitYAML`, the
//! oracle's `yaml` method), compared object by object. The texts mix YAML 1.1 scalars (plain,
//! quoted, tagged, as keys and values), anchors and aliases, merge keys, odd indentation, and
//! anchored lists referenced often enough to probe go-yaml v2's limit on aliasing from both sides.

use serde_json::{Value, json};

use super::generate::Rng;

/// Scalars whose reading YAML 1.1 decides: every form go-yaml v2 resolves, and near misses.
const SCALARS: &[&str] = &[
    "0644",
    "-0644",
    "+0644",
    "08",
    "09.5",
    "0o17",
    "0O17",
    "0x1F",
    "0X1f",
    "0x_1f",
    "+0x1F",
    "-0x1F",
    "1_000",
    "1__0",
    "_1",
    "1_",
    "1_0.5",
    "0b1010",
    "0B11",
    "-0b101",
    "0b+101",
    "0b",
    "0x",
    "+1",
    "-1",
    "+",
    "-",
    "1e3",
    "1E+3",
    "1.",
    ".5",
    "+.5",
    "-.5e3",
    "1.0",
    "-0.0",
    "3.14",
    "0.1",
    "1e400",
    "1e-400",
    "1e21",
    "1e20",
    ".inf",
    ".iNf",
    "190:20:30",
    "1:20",
    "yes",
    "Yes",
    "YES",
    "yES",
    "y",
    "Y",
    "n",
    "N",
    "no",
    "No",
    "on",
    "On",
    "ON",
    "oN",
    "off",
    "OFF",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "False",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "2001-12-14",
    "2001-12-14T21:59:43.10Z",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "0x8000000000000000",
    "123456789012345678",
    "abc",
    "0",
    "00",
    "-0",
    ".",
    "._1",
    "012345678",
    "0.0000001",
    "1234567.5",
    "16777217.0",
    "0x1p3",
    "1_000_000.5e-3",
];

/// Tags put in front of a scalar now and then.
const TAGS: &[&str] =
    &["!!str", "!!int", "!!float", "!!bool", "!!null", "!custom", "!", "!!timestamp"];

fn scalar(rng: &mut Rng) -> String {
    let s = *rng.pick(SCALARS);
    match rng.below(24) {
        0 => format!("'{s}'"),
        1 => format!("\"{s}\""),
        2 => format!("{} {s}", rng.pick(TAGS)),
        3 => format!("{} '{s}'", rng.pick(TAGS)),
        _ => s.to_string(),
    }
}

/// A key: a plain name mostly, a YAML 1.1 scalar now and then (never two in one mapping, so
/// that no two keys of different types meet as one JSON key, which Go's map order decides).
fn key(rng: &mut Rng, i: usize, special: &mut bool, anchors: &[String]) -> String {
    let scalars: Vec<&String> = anchors.iter().filter(|a| a.starts_with('s')).collect();
    if !*special && !scalars.is_empty() && rng.chance(5) {
        *special = true;
        return format!("*{} ", rng.pick(&scalars));
    }
    if !*special && rng.chance(15) {
        *special = true;
        return scalar(rng);
    }
    format!("k{i}")
}

/// A value at `indent` spaces, after `key:` (block values start on the next line).
fn value(rng: &mut Rng, indent: usize, depth: usize, anchors: &mut Vec<String>) -> String {
    let step = *rng.pick(&[1usize, 2, 3, 4]);
    match rng.below(if depth > 2 { 3 } else { 8 }) {
        0 if rng.chance(30) => {
            // An anchored scalar, for aliases as values and as keys.
            let name = format!("s{}", anchors.len());
            let body = format!(" &{name} {}\n", scalar(rng));
            anchors.push(name);
            body
        }
        0 | 1 => format!(" {}\n", scalar(rng)),
        2 if !anchors.is_empty() => format!(" *{}\n", rng.pick(anchors)),
        2 => format!(" {}\n", scalar(rng)),
        3 => {
            let items: Vec<String> = (0..rng.below(4)).map(|_| scalar(rng)).collect();
            format!(" [{}]\n", items.join(", "))
        }
        4 => {
            let name = format!("a{}", anchors.len());
            let body = mapping(rng, indent + step, depth + 1, anchors);
            anchors.push(name.clone());
            format!(" &{name}\n{body}")
        }
        5 => {
            // A block sequence, indented or at the key's column.
            let at = if rng.chance(50) { indent } else { indent + step };
            let pad = " ".repeat(at);
            let mut out = "\n".to_string();
            for _ in 0..1 + rng.below(3) {
                out.push_str(&format!("{pad}- {}\n", scalar(rng)));
            }
            out
        }
        6 => {
            let mut out = "\n".to_string();
            if rng.chance(30) {
                // An explicit key before the merge: go-yaml v2 lets the merge set it again.
                out.push_str(&format!("{}k0: {}\n", " ".repeat(indent + step), scalar(rng)));
            }
            out.push_str(&format!("{}<<: ", " ".repeat(indent + step)));
            let maps: Vec<String> =
                anchors.iter().filter(|a| a.starts_with('a')).cloned().collect();
            match (maps.len(), rng.below(3)) {
                (0, _) | (_, 0) => {
                    out.push_str(&format!("{{k0: {}, k9: {}}}\n", scalar(rng), scalar(rng)))
                }
                (_, 1) => out.push_str(&format!("*{}\n", rng.pick(&maps))),
                _ => {
                    let a = rng.pick(&maps).to_string();
                    let b = rng.pick(&maps).to_string();
                    out.push_str(&format!("[*{a}, *{b}]\n"));
                }
            }
            out.push_str(&mapping_lines(rng, indent + step, depth + 1, anchors));
            out
        }
        _ => format!("\n{}", mapping(rng, indent + step, depth + 1, anchors)),
    }
}

fn mapping_lines(rng: &mut Rng, indent: usize, depth: usize, anchors: &mut Vec<String>) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    let mut special = false;
    for i in 1..1 + rng.below(4) as usize {
        let k = key(rng, i, &mut special, anchors);
        let v = value(rng, indent, depth, anchors);
        out.push_str(&format!("{pad}{k}:{v}"));
    }
    out
}

fn mapping(rng: &mut Rng, indent: usize, depth: usize, anchors: &mut Vec<String>) -> String {
    let lines = mapping_lines(rng, indent, depth, anchors);
    if lines.is_empty() { format!("{}k0: x\n", " ".repeat(indent)) } else { lines }
}

/// One divergence: its signature, pointer, gitops-core's and Argo CD's values, and the text.
pub type Example = (String, String, Value, Value, String);

/// Runs `cases` generated texts through both readers: (cases, explained, unexplained) and
/// one example of each divergence signature.
pub fn run(
    cases: u64,
    seed: u64,
    argo: &mut super::Peer,
    known: &[String],
) -> Result<(u64, u64, u64, Vec<Example>), String> {
    // A stream of its own, so that the other areas' cases stay those of the seed.
    let mut rng = Rng::new(seed ^ 0x5941_4d4c);
    let (mut explained, mut unexplained, mut refused) = (0, 0, 0);
    let mut reasons = std::collections::BTreeMap::new();
    let mut examples: Vec<Example> = Vec::new();
    for _ in 0..cases {
        let text = case(&mut rng);
        let a = ours(&text);
        let b = argo.call("yaml", &json!({"text": text}))?;
        let Some((sig, pointer, x, y)) = compare(&a, &b) else {
            if let Some(e) = a["error"].as_str() {
                refused += 1;
                let reason = e.split_once(": ").map_or(e, |(_, r)| r);
                let reason = reason.split(" at ").next().unwrap_or(reason);
                let reason: String = reason.chars().take_while(|c| *c != '`').collect();
                *reasons.entry(reason).or_insert(0u64) += 1;
            }
            continue;
        };
        if known.iter().any(|k| super::covers(k, &sig)) {
            explained += 1;
        } else {
            unexplained += 1;
        }
        if !examples.iter().any(|e| e.0 == sig) {
            examples.push((sig, pointer, x, y, text));
        }
    }
    println!(
        "yaml: {refused} of {cases} texts refused by both readers, the others read alike unless listed"
    );
    for (reason, n) in &reasons {
        println!("  refused by both, {n}: {reason}");
    }
    Ok((cases, explained, unexplained, examples))
}

/// One generated text: one to three documents, or an anchored list referenced many times.
pub fn case(rng: &mut Rng) -> String {
    if rng.chance(15) {
        let items = vec!["0"; 1 + rng.below(300) as usize].join(", ");
        let refs = vec!["*l"; 1 + rng.below(3000) as usize].join(", ");
        return format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\nlist: &l [{items}]\nrefs: [{refs}]\n"
        );
    }
    let mut docs = Vec::new();
    for d in 0..1 + rng.below(3) {
        let mut anchors = Vec::new();
        let indent = *rng.pick(&[1usize, 2, 4]);
        let body = mapping(rng, indent, 1, &mut anchors);
        docs.push(format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n{}name: c{d}\ndata:\n{body}",
            " ".repeat(indent)
        ));
    }
    docs.join("---\n")
}

/// gitops-core's reading: the objects, or the error.
pub fn ours(text: &str) -> Value {
    let options = gitops_core::object::ParseOptions::default();
    match gitops_core::object::parse_manifests_with(text, &options) {
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

/// The first place the two readings differ: a signature, the pointer, both values.
pub fn compare(ours: &Value, argo: &Value) -> Option<(String, String, Value, Value)> {
    match (ours.get("error"), argo.get("error")) {
        (Some(_), Some(_)) => return None,
        (Some(e), None) => {
            let sig = if e.as_str().is_some_and(|e| e.contains("excessive aliasing")) {
                "yaml:refused:aliasing"
            } else {
                "yaml:refused:gitops-core"
            };
            return Some((sig.into(), String::new(), e.clone(), argo["objects"].clone()));
        }
        (None, Some(e)) => {
            let sig = if e.as_str().is_some_and(|e| e.contains("excessive aliasing")) {
                "yaml:accepted:aliasing"
            } else {
                "yaml:refused:argo"
            };
            return Some((sig.into(), String::new(), ours["objects"].clone(), e.clone()));
        }
        (None, None) => {}
    }
    first_difference(&ours["objects"], &argo["objects"], String::new())
        .map(|(p, x, y)| ("yaml:value".to_string(), p, x, y))
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
