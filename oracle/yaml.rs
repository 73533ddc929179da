//! The `yaml` area: generated manifest texts read by gitops-core (`ParseOptions::parse_manifests`, Argo
//! CD's reading: a repeated key keeps its last value) and by Argo CD (`kube.SplitYAML`, the
//! oracle's `yaml` method), compared object by object. The texts mix YAML 1.1 scalars (plain,
//! quoted, tagged, as keys and values), anchors and aliases, merge keys, odd indentation, and
//! anchored lists referenced often enough to probe go-yaml v2's limit on aliasing from both sides,
//! and JSON: a manifest file that is JSON (gitops-core reads it with its JSON parser, Argo CD
//! with go-yaml v2) and YAML streams of flow and JSON documents among block ones. Both readings
//! are compared by the testkit's `oracle::yaml`, which the replay of the recorded cases
//! (`testdata/oracle/yaml-*.json`) shares.

use serde_json::{Value, json};

use super::generate::Rng;
use gitops_core_testkit::oracle::yaml::{compare, ours};

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
    r#""it\'s""#,
    r#"'C:\'"#,
    r#""\'\\'""#,
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
        1 if rng.chance(30) => {
            // A block scalar, now and then with a last line of spaces.
            let header = *rng.pick(&["|", "|+", "|-", ">", ">+", ">-"]);
            let pad = " ".repeat(indent + step);
            let mut out = format!(" {header}\n");
            for _ in 0..1 + rng.below(3) {
                out.push_str(&format!("{pad}{}\n", rng.pick(SCALARS)));
            }
            if rng.chance(20) {
                out.push_str(&format!("{pad} \n"));
            }
            out
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

/// One divergence: its signature, pointer, gitops-core's and Argo CD's values, the text and
/// Argo CD's whole answer (what `--save` records).
pub type Example = (String, String, Value, Value, String, Value);

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
        let Some((sig, pointer, x, y)) = compare(&a, &b, &text) else {
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
            examples.push((sig, pointer, x, y, text, b));
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

/// JSON numbers whose reading the two parsers may decide differently.
const JSON_NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.0",
    "-0.0",
    "0.1",
    "1e6",
    "1E6",
    "1e+6",
    "1.5e-7",
    "1e21",
    "1e20",
    "100.0",
    "2.5",
    "1e400",
    "-1e400",
    "1e-400",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "16777217.0",
    "0.0000001",
];

/// JSON strings (as JSON text): escapes, and characters YAML reads otherwise (a raw U+2028 or
/// U+0085 is a line break to YAML, a surrogate pair escape is refused by libyaml).
const JSON_STRINGS: &[&str] = &[
    r#""a""#,
    r#""yes""#,
    r#""0644""#,
    r#""\/""#,
    r#""\u0041""#,
    r#""\u00e9\t\n""#,
    r#""\ud83d\ude00""#,
    r#""\u0000""#,
    r#""\u2028""#,
    "\"a\u{2028}b\"",
    "\"a\u{85}b\"",
    "\"a\u{feff}b\"",
    r#""a\\b""#,
    r#""\"q\"""#,
    r#""""#,
    r#""  a  ""#,
    "\"\u{e9}\"",
    r#""\b\f\r""#,
    r#""\uDBFF\uDFFF""#,
    r##""#a""##,
    r#""*a""#,
    r#""&a""#,
    r#""!a""#,
];

/// A JSON value of at most `depth` more levels.
fn json_value(rng: &mut Rng, depth: usize) -> String {
    match rng.below(if depth == 0 { 4 } else { 7 }) {
        0 => rng.pick(JSON_NUMBERS).to_string(),
        1 => rng.pick(JSON_STRINGS).to_string(),
        2 => rng.pick(&["true", "false", "null"]).to_string(),
        3 => rng.pick(JSON_NUMBERS).to_string(),
        4 => {
            let items: Vec<String> =
                (0..rng.below(4)).map(|_| json_value(rng, depth - 1)).collect();
            format!("[{}]", items.join(*rng.pick(&[",", ", ", " ,\n  ", ",\t"])))
        }
        _ => json_object(rng, depth - 1),
    }
}

/// A JSON object: mostly plain keys, an odd one now and then (a repeated key too).
fn json_object(rng: &mut Rng, depth: usize) -> String {
    let entries: Vec<String> = (0..rng.below(4))
        .map(|i| {
            let key = match rng.below(12) {
                0 => rng.pick(JSON_STRINGS).to_string(),
                1 => "\"k0\"".to_string(),
                _ => format!("\"k{i}\""),
            };
            format!("{key}{}{}", rng.pick(&[":", ": ", " : ", ":\t"]), json_value(rng, depth))
        })
        .collect();
    format!("{{{}}}", entries.join(*rng.pick(&[",", ", ", ",\n  "])))
}

/// A ConfigMap as one JSON document.
fn json_document(rng: &mut Rng, d: u64) -> String {
    let data = json_object(rng, 3);
    let sep = *rng.pick(&["", " ", "\n  "]);
    format!(
        "{{{sep}\"apiVersion\": \"v1\",{sep}\"kind\": \"ConfigMap\",{sep}\"metadata\": {{\"name\": \"j{d}\"}},{sep}\"data\": {data}{}}}",
        if sep.is_empty() { "" } else { "\n" }
    )
}

/// A text with JSON in it: a JSON file (one document, a `List`, or two documents one after
/// the other), or a YAML stream whose documents are JSON, flow or block.
fn json_case(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => json_document(rng, 0),
        1 => format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{}, {}]}}\n",
            json_document(rng, 0),
            json_document(rng, 1)
        ),
        2 => format!("{}\n{}\n", json_document(rng, 0), json_document(rng, 1)),
        _ => {
            let mut docs = Vec::new();
            for d in 0..1 + rng.below(3) {
                docs.push(match rng.below(3) {
                    0 => format!("{}\n", json_document(rng, d)),
                    1 => format!(
                        "{{apiVersion: v1, kind: ConfigMap, metadata: {{name: f{d}}}, data: {{a: {}, b: [{}, {}]}}}}\n",
                        scalar(rng),
                        scalar(rng),
                        rng.pick(JSON_NUMBERS)
                    ),
                    _ => format!(
                        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b{d}\ndata:\n  a: {}\n  b: {}\n",
                        rng.pick(JSON_STRINGS),
                        json_value(rng, 2)
                    ),
                });
            }
            let lead = if rng.chance(30) { "---\n" } else { "" };
            format!("{lead}{}", docs.join("---\n"))
        }
    }
}

/// One generated text: one to three documents, an anchored list referenced many times, or
/// JSON (`json_case`).
pub fn case(rng: &mut Rng) -> String {
    if rng.chance(15) {
        return json_case(rng);
    }
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
    let mut text = docs.join("---\n");
    // A byte order mark at the start of a line of the last document's data now and then (go-yaml v2
    // reads it as a character; before `data:`, a key it starts leaves the object without its
    // name, which gitops-core refuses).
    if rng.chance(10) {
        let data = text.rfind("\ndata:\n").map_or(text.len(), |i| i + 7);
        let starts: Vec<usize> = text
            .match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(|&i| i > data && !text[i..].starts_with("---"))
            .collect();
        if !starts.is_empty() {
            let at = starts[rng.below(starts.len() as u64) as usize];
            text.insert(at, '\u{feff}');
        }
    }
    // A text whose last line has no line break now and then (Kubernetes' reader gives it one).
    if rng.chance(10) { text.trim_end_matches('\n').to_string() } else { text }
}

/// A text as `--save` records it for the replay (`src/tests/oracle_replay.rs`): Argo CD's
/// whole answer, and for a divergence its signature with the pointer and both values there
/// (the replay requires gitops-core's value again, and the signature, until the engine changes).
pub fn recorded(
    divergence: Option<(&str, &str, &Value, &Value)>,
    text: &str,
    argo: &Value,
) -> Value {
    let mut body = json!({"method": "yaml", "params": {"text": text}, "argo": argo});
    if let Some((sig, pointer, x, y)) = divergence {
        body["signature"] = json!(sig);
        body["checks"] = json!([{"pointer": pointer, "gitopsCore": x, "argo": y}]);
    }
    body
}

/// `--case FILE` of a `yaml` request (`{"text": ...}`): both readings, the divergence printed
/// and, with `--save`, recorded as `DIR/<name>.json` (an agreed reading too).
pub fn one(
    params: &Value,
    argo: &mut super::Peer,
    known: &[String],
    save_to: Option<(&std::path::Path, &str)>,
) -> Result<u64, String> {
    let text = params["text"].as_str().ok_or("a yaml case needs params.text")?;
    let b = argo.call("yaml", &json!({"text": text}))?;
    let found = compare(&ours(text), &b, text);
    if let Some((sig, pointer, x, y)) = &found {
        let is_known = known.iter().any(|k| super::covers(k, sig));
        println!(
            "{} {sig} at {pointer:?}: gitops-core {x} / Argo CD {y}",
            if is_known { "explained" } else { "UNEXPLAINED" }
        );
    }
    if let Some((dir, name)) = save_to {
        let divergence = found.as_ref().map(|(s, p, x, y)| (s.as_str(), p.as_str(), x, y));
        super::save(dir, name, &recorded(divergence, text, &b))?;
    }
    println!("{} divergences", u64::from(found.is_some()));
    Ok(u64::from(found.is_some()))
}
