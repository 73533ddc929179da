//! Manifest parsing: the table of `testdata/parse/cases.yaml`, and hostile inputs built in code
//! (too large to keep as files), each with its exact error.

use serde::Deserialize;

use std::collections::BTreeMap;

use super::support::{read, selected};
use crate::object::{ParseOptions, parse_manifests};

#[derive(Deserialize)]
struct Cases {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    input: String,
    /// How to read: absent is `parse_manifests` (strict); present is `ParseOptions::parse_manifests`
    /// these options over the defaults (Argo CD's reading).
    #[serde(default)]
    options: Option<Options>,
    /// Read as given, with `ParseOptions::parse_documents` (over `options`, or the defaults): the text
    /// as sigs.k8s.io/yaml's `Unmarshal` reads it, not as Kubernetes' reader hands manifests on.
    #[serde(default)]
    documents: bool,
    #[serde(default)]
    objects: Option<Vec<String>>,
    /// Values in the objects read, by RFC 6901 pointer into the list of objects.
    #[serde(default)]
    values: BTreeMap<String, serde_json::Value>,
    /// The exact warnings, in order (only with `options`).
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Options {
    #[serde(default)]
    strict: bool,
    max_bytes: Option<usize>,
    max_objects: Option<usize>,
    max_string_bytes: Option<usize>,
    require_name: Option<bool>,
}

impl Options {
    fn build(&self) -> ParseOptions {
        let mut o = ParseOptions::default();
        if self.strict {
            o = o.strict();
        }
        if let Some(n) = self.max_bytes {
            o = o.with_max_bytes(n);
        }
        if let Some(n) = self.max_objects {
            o = o.with_max_objects(n);
        }
        if let Some(n) = self.max_string_bytes {
            o = o.with_max_string_bytes(n);
        }
        if let Some(yes) = self.require_name {
            o = o.with_require_name(yes);
        }
        o
    }
}

#[test]
fn parse_cases() {
    let cases: Cases = serde_norway::from_str(&read("parse/cases.yaml")).expect("cases.yaml");
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in cases.cases.iter().filter(|c| selected(&c.name)) {
        ran += 1;
        let (got, warnings) = match &case.options {
            _ if case.documents => {
                let options =
                    case.options.as_ref().map_or_else(ParseOptions::default, Options::build);
                match options.parse_documents(&case.input) {
                    Ok((docs, w)) => (Ok(docs), w.iter().map(ToString::to_string).collect()),
                    Err(e) => (Err(e), Vec::new()),
                }
            }
            None => (parse_manifests(&case.input), Vec::new()),
            Some(o) => match o.build().parse_manifests(&case.input) {
                Ok(m) => (Ok(m.objects), m.warnings.iter().map(ToString::to_string).collect()),
                Err(e) => (Err(e), Vec::new()),
            },
        };
        let outcome = match (&got, &case.objects, &case.error) {
            (Ok(objs), Some(want), None) => {
                let names: Vec<String> = objs
                    .iter()
                    .map(|o| crate::object::ObjectRef::from_object_lossy(o).to_string())
                    .collect();
                let all = serde_json::Value::Array(objs.clone());
                let wrong_value = case.values.iter().find_map(|(pointer, want)| {
                    let got = all.pointer(pointer);
                    (got != Some(want)).then(|| format!("at {pointer}: got {got:?}, want {want}"))
                });
                if &names != want {
                    Err(format!("got {names:?}, want {want:?}"))
                } else if let Some(w) = wrong_value {
                    Err(w)
                } else if warnings != case.warnings {
                    Err(format!("got warnings {warnings:?}, want {:?}", case.warnings))
                } else {
                    Ok(())
                }
            }
            (Err(e), None, Some(want)) => {
                let path = e.location().map(|l| l.path.clone());
                if &e.to_string() != want {
                    Err(format!("got error {:?}, want {want:?}", e.to_string()))
                } else if case.path.is_some() && path != case.path {
                    Err(format!("got path {path:?}, want {:?}", case.path))
                } else {
                    Ok(())
                }
            }
            (got, _, _) => Err(format!("unexpected outcome {got:?}")),
        };
        if let Err(msg) = outcome {
            failures.push(format!("{}: {msg}", case.name));
        }
    }
    assert!(ran > 0, "no case selected");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";

#[test]
fn alias_bomb_is_refused() {
    let mut text = format!("{HEAD}data:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10u8 {
        let (name, prev) = ((b'a' + i) as char, (b'a' + i - 1) as char);
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("  {name}: &{name} [{refs}]\n"));
    }
    let err = parse_manifests(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 1: excessive aliasing at /data/d/4/5/0/8: 5149 of the 5201 values decoded come from aliases, over the 99.00% allowed"
    );
}

/// The campaign's input (issue 27): three documents, each with an anchored list of 50,000
/// items referenced 95 times (303 KB), built 14 million values and 1.33 GB in `plan`. go-yaml
/// v2 refuses it once aliases make up more than the allowed share of what it decodes, and so
/// does this reader, before building the rest.
#[test]
fn anchored_list_referenced_95_times_is_refused() {
    let items = vec!["0"; 50_000].join(",");
    let refs = vec!["*a"; 95].join(", ");
    let doc = |i: usize| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb{i}\nlist: &a [{items}]\nrefs: [{refs}]\n"
        )
    };
    let text = (0..3).map(doc).collect::<Vec<_>>().join("---\n");
    assert_eq!(text.len(), 301_367);
    assert_eq!(
        parse_manifests(&text).unwrap_err().to_string(),
        "document 1: excessive aliasing at /refs/12/14168: 614182 of the 664209 values decoded come from aliases, over the 92.47% allowed"
    );
    // Below the limit, aliases are expanded as go-yaml expands them.
    let small = format!("{HEAD}list: &a [1, 2]\nrefs: [*a, *a]\n");
    let objs = parse_manifests(&small).unwrap();
    assert_eq!(objs[0]["refs"], serde_json::json!([[1, 2], [1, 2]]));
}

#[test]
fn deep_yaml_nesting_is_refused_quickly() {
    let depth = 100_000;
    let text = format!("{HEAD}data: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    let err = parse_manifests(&text).unwrap_err();
    assert_eq!(err.to_string(), "document 1: invalid yaml: nesting deeper than 1000 levels");
}

#[test]
fn deep_json_nesting_is_refused() {
    let depth = 100_000;
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"x"}},"data":{}{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let err = parse_manifests(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 1: invalid json: nesting deeper than 128 levels at line 1 column 196"
    );
}

#[test]
fn deep_block_nesting_is_refused() {
    let mut text = format!("{HEAD}data:\n");
    for i in 0..2000 {
        text.push_str(&" ".repeat(i + 1));
        text.push_str(&format!("k{i}:\n"));
    }
    let err = parse_manifests(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "document 1: invalid yaml: nesting deeper than 128 levels at line 132 column 129"
    );
}

#[test]
fn fifty_megabyte_string_is_refused() {
    let big = "x".repeat(50 * 1024 * 1024);
    let text = format!("{HEAD}data:\n  k: \"{big}\"\n");
    assert_eq!(
        parse_manifests(&text).unwrap_err().to_string(),
        "document 1: a string of 52428800 bytes exceeds the limit of 16777216 bytes at /data/k"
    );
}

#[test]
fn fifty_megabyte_json_string_is_refused() {
    let big = "x".repeat(50 * 1024 * 1024);
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"x"}},"data":{{"k":"{big}"}}}}"#
    );
    assert_eq!(
        parse_manifests(&text).unwrap_err().to_string(),
        "document 1: a string of 52428800 bytes exceeds the limit of 16777216 bytes at /data/k"
    );
    // A long key is refused too (named by its object), and a string at the limit is data.
    let at_limit = "y".repeat(ParseOptions::DEFAULT_MAX_STRING_BYTES);
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"x"}},"data":{{"k":"{at_limit}","{big}":"v"}}}}"#
    );
    assert_eq!(
        parse_manifests(&text).unwrap_err().to_string(),
        "document 1: a string of 52428800 bytes exceeds the limit of 16777216 bytes at /data"
    );
}

#[test]
fn quotes_and_comments_do_not_hide_brackets_from_the_depth_check() {
    // Brackets inside quotes and comments are not nesting; a plain scalar with an apostrophe
    // does not open a quote.
    let text = format!(
        "{HEAD}data:\n  a: \"{}\"\n  b: don't {}\n  # {}\n",
        "[".repeat(5000),
        "[".repeat(5000),
        "{".repeat(5000)
    );
    let err = parse_manifests(&text).unwrap_err();
    assert_eq!(err.to_string(), "document 1: invalid yaml: nesting deeper than 1000 levels");
    let text = format!("{HEAD}data:\n  a: \"{}\"\n  # {}\n", "[".repeat(5000), "{".repeat(5000));
    assert!(parse_manifests(&text).is_ok());
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use crate::object::parse_manifests;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1.0e12f64..1.0e12).prop_map(Value::from),
            // Strings that look like other YAML scalars must survive the round trip too (those
            // that serde_norway writes quoted: it writes YAML 1.1 words and numbers such as
            // `yes` or `1_000` plain, which Kubernetes reads as booleans and numbers).
            prop_oneof![
                "[a-zA-Z0-9 ._:/-]{0,12}".prop_filter("plain in YAML 1.1", |s| !yaml_1_1_word(s)),
                Just("~".to_string()),
                Just("0x1F".to_string()),
                Just("1e3".to_string()),
                Just("- a".to_string()),
                Just("'q'".to_string()),
                Just("#c".to_string()),
                Just("line\nbreak".to_string()),
            ]
            .prop_map(Value::String),
        ]
    }

    /// Text that YAML 1.1 may read as something other than a string when written plain.
    fn yaml_1_1_word(s: &str) -> bool {
        let words = ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"];
        s.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
            || words.contains(&s.to_ascii_lowercase().as_str())
    }

    /// A value as Kubernetes reads it back from YAML: whole floats that fit an int64 as integers.
    fn whole_floats_as_integers(v: &Value) -> Value {
        match v {
            Value::Number(n) if n.is_f64() => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
                _ => v.clone(),
            },
            Value::Array(items) => {
                Value::Array(items.iter().map(whole_floats_as_integers).collect())
            }
            Value::Object(m) => Value::Object(
                m.iter().map(|(k, x)| (k.clone(), whole_floats_as_integers(x))).collect(),
            ),
            _ => v.clone(),
        }
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map(
                    "[a-zA-Z0-9./_-]{1,10}".prop_filter("plain in YAML 1.1", |s| !yaml_1_1_word(s)),
                    inner,
                    0..5,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Value> {
        (value(), "[a-z][a-z0-9-]{0,20}".prop_filter("plain in YAML 1.1", |s| !yaml_1_1_word(s)))
            .prop_map(|(data, name)| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
        })
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(256))]

        /// Whatever serde writes as JSON or YAML, one object or a stream, reads back the same.
        #[test]
        fn json_and_yaml_round_trip(objs in prop::collection::vec(object(), 1..4)) {
            let json_text = serde_json::to_string(&Value::Array(objs.clone())).unwrap();
            // Argo CD reads JSON through go-yaml v2 too: the same rule.
            prop_assert_eq!(&parse_manifests(&json_text).unwrap(), &objs.iter().map(whole_floats_as_integers).collect::<Vec<_>>());
            let yaml_text = objs
                .iter()
                .map(|o| serde_norway::to_string(o).unwrap())
                .collect::<Vec<_>>()
                .join("---\n");
            // Kubernetes reads a whole float (`0.0`) back as an integer.
            prop_assert_eq!(&parse_manifests(&yaml_text).unwrap(), &objs.iter().map(whole_floats_as_integers).collect::<Vec<_>>());
        }

        /// Any text gives objects or an error, never a panic.
        #[test]
        fn parsing_is_total(text in "\\PC{0,200}") {
            let _ = parse_manifests(&text);
        }
    }
}

/// An empty text, or one of comments only, is one empty document (as an annotation's empty
/// value declares nothing), and documents are counted as before.
#[test]
fn empty_stream_is_one_empty_document() {
    use crate::object::parse_documents;
    let null = serde_json::Value::Null;
    assert_eq!(parse_documents("").unwrap(), vec![null.clone()]);
    assert_eq!(parse_documents("# only a comment\n").unwrap(), vec![null.clone()]);
    assert_eq!(parse_documents("a: 1\n---\n# c\n").unwrap().len(), 2);
}

/// `ParseOptions::leave_out_managed_fields` reads what the full reading reads, objects'
/// `metadata.managedFields` aside, with the same warnings and errors; and it keeps the field
/// (reading the text again in full) wherever it cannot prove that the field is as the API
/// server writes it and that the object's own last-applied annotation cannot hold one.
#[test]
fn managed_fields_left_out_read_the_same_but_for_them() {
    use serde_json::{Value, json};
    let la = "kubectl.kubernetes.io/last-applied-configuration";
    let mf = json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl",
        "operation": "Update", "time": "2024-02-29T23:59:59Z", "subresource": "status",
        "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "k:{\"type\":\"Ready\"}": {}}}]);
    let obj = |name: &str, meta: Value| {
        let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "managedFields": mf},
            "data": {"a": "1"}});
        for (k, v) in meta.as_object().into_iter().flatten() {
            o["metadata"][k] = v.clone();
        }
        o
    };
    let list = |items: Vec<Value>| json!({"apiVersion": "v1", "items": items, "kind": "List"});
    let without = crate::tests::support::without_managed_fields;
    let with_mf = |edit: &dyn Fn(&mut Value)| {
        let mut o = obj("x", json!({}));
        edit(&mut o["metadata"]["managedFields"]);
        list(vec![o]).to_string()
    };
    let nested = {
        let mut o = obj("n", json!({}));
        o["spec"] = json!({"template": {"metadata": {"managedFields": mf}}});
        o
    };
    // Left out: a List (its `kind` after its items), an array, an object, a nested object's
    // field kept, a last-applied text with an escape that spells no letter.
    let left_out = [
        list(vec![
            obj("a", json!({})),
            obj("b", json!({"annotations": {la: "{\"a\":\"\\u0026\"}"}})),
        ])
        .to_string(),
        json!([obj("a", json!({})), nested]).to_string(),
        format!("  {}\n{}", obj("a", json!({})), obj("b", json!({}))),
        with_mf(&|m| m[0]["fieldsV1"] = json!({})),
    ];
    // Kept: what a typed reading might refuse or a last-applied text might hold, what the
    // reading warns about or refuses, a document whose `items` are no List's, YAML.
    let kept = [
        list(vec![obj("a", json!({"annotations": {la: "{\"metadata\":{\"managedFields\":[]}}"}}))])
            .to_string(),
        list(vec![obj(
            "a",
            json!({"annotations": {la: "{\"metadata\":{\"managedFi\\u0065lds\":[]}}"}}),
        )])
        .to_string(),
        with_mf(&|m| m[0]["time"] = json!("2024-02-30T00:00:00Z")),
        with_mf(&|m| m[0]["time"] = json!("2024-02-01T00:00:00.5Z")),
        with_mf(&|m| m[0]["time"] = json!(null)),
        with_mf(&|m| m[0]["Manager"] = json!("kubectl")),
        with_mf(&|m| m[0]["manager"] = json!(1)),
        with_mf(&|m| m[0]["fieldsV1"] = json!("f:data")),
        with_mf(&|m| *m = json!(null)),
        with_mf(&|m| *m = json!({})),
        with_mf(&|m| m[0]["fieldsV1"]["f:long"] = json!("x".repeat(100))),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "items": [obj("a", json!({}))]})
        .to_string(),
        list(vec![obj("a", json!({}))])
            .to_string()
            .replace("\"data\":{\"a\":\"1\"}", "\"data\":{\"a\":\"1\",\"a\":\"2\"}"),
        with_mf(&|_| {}).replace("\"f:a\":{}", "\"f:a\":{},\"f:a\":{}"),
        with_mf(&|_| {}).replace("\"manager\"", "\"manager\":\"a\",\"manager\""),
        with_mf(&|_| {}).replace("\"name\":\"x\"", "\"name\":\"x\",\"managedFields\":[]"),
        with_mf(&|_| {}).replace("\"f:a\":{}", "\"f:a\":1e999"),
        with_mf(&|_| {}).replace("\"f:a\":{}", "\"f:\\ud800\":{}"),
        with_mf(&|_| {}).replace("\"ns\"}", "\"ns\""),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  managedFields: {mf}\n"),
    ];
    for options in [
        ParseOptions::default().with_max_string_bytes(64),
        ParseOptions::default().strict().with_max_string_bytes(64),
    ] {
        let lean = options.clone().with_leave_out_managed_fields(true);
        for text in &left_out {
            let full = options.parse_manifests(text).expect("reads");
            let read = lean.parse_manifests(text).expect("reads");
            assert_ne!(read.objects, full.objects, "{text}");
            assert_eq!(read.objects, without(&full.objects), "{text}");
            assert_eq!(read.warnings, full.warnings, "{text}");
        }
        for text in &kept {
            assert_eq!(lean.parse_manifests(text), options.parse_manifests(text), "{text}");
        }
    }
    // The nested object's own field is read.
    let read = ParseOptions::default().with_leave_out_managed_fields(true);
    let read = read.parse_manifests(&left_out[1]).expect("reads");
    assert_eq!(read.objects[1].pointer("/spec/template/metadata/managedFields"), Some(&mf));
}
