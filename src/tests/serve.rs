//! The `serve` protocol: scripted conversations from `testdata/serve/*.txt` run through
//! [`Server`] line by line, and the checked-in JSON Schema.
//!
//! A conversation file has one line per event: `> ` and a request line to send (`>` alone or
//! followed by blanks sends a blank line), `< ` and the exact response expected, `#` for
//! comments, `# needs: jq` to run only in builds with those features. `$ENGINE_VERSION` in an
//! expected line stands for the crate version, `$BUILTIN_HEALTH_KINDS` for the JSON list of
//! `health::HealthContext::builtin_kinds()`. The same files
//! drive the built binary through pipes in `src/tests/serve_pipes.rs`.

use crate::protocol::{Response, Server};

use super::support::{read, selected, testdata};

use gitops_core_testkit::transcript;

/// Whether this build has a feature a conversation needs (`# needs: jq, lua`).
fn has_feature(feature: &str) -> bool {
    match feature {
        "jq" => cfg!(feature = "jq"),
        "lua" => cfg!(feature = "lua"),
        _ => true,
    }
}

/// `$BUILTIN_HEALTH_KINDS` of the conversations: the kinds as JSON.
fn builtin_kinds() -> String {
    serde_json::to_string(&crate::health::HealthContext::builtin_kinds())
        .expect("a list of strings")
}

#[test]
fn conversations() {
    let dir = testdata().join("serve");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut ran = 0;
    let mut failures = Vec::new();
    for name in &names {
        if !selected(name) {
            continue;
        }
        let script = transcript::Transcript::parse(&read(&format!("serve/{name}")));
        if !script.runnable(has_feature) {
            continue;
        }
        let mut server = Server::new();
        let mut got = Vec::new();
        for request in &script.requests {
            let Some(line) = server.handle_line(request.as_bytes()) else { continue };
            // Every response reads back as a `Response` (that a request that succeeded has the
            // shape the published schema describes, `conversations_follow_the_schema` checks).
            if let Err(e) = serde_json::from_str::<Response>(&line) {
                failures.push(format!("serve/{name}: {line}: not a Response: {e}"));
            }
            got.push(line);
        }
        if let Some(diff) = script.compare(&got, env!("CARGO_PKG_VERSION"), &builtin_kinds()) {
            failures.push(format!("serve/{name}: {diff}"));
        }
        ran += 1;
    }
    assert!(failures.is_empty(), "{} of {ran} failed:\n{}", failures.len(), failures.join("\n"));
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no conversation ran");
}

/// `schema/protocol.schema.json` is what the code generates; `GITOPS_REGENERATE=1` rewrites it.
#[test]
fn schema_is_checked_in() {
    let path = testdata().join("../schema/protocol.schema.json");
    let generated = Server::json_schema();
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    if std::env::var("GITOPS_REGENERATE").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("reading {}: {e} (run with GITOPS_REGENERATE=1 to write it)", path.display())
    });
    let stored_value: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert!(
        stored_value == generated && stored == text,
        "{} is out of date: run `GITOPS_REGENERATE=1 cargo test --lib schema_is_checked_in`",
        path.display()
    );
}

/// What a text transcript cannot hold: bytes that are not UTF-8, CRLF line ends, a newline
/// passed in with the line, and the size limit counted without the `\r`.
#[test]
fn raw_lines() {
    let mut server = Server::with_max_request_bytes(40);
    assert_eq!(
        server.handle_line(b"{\"id\":\"\xff\"}").unwrap(),
        r#"{"id":null,"error":{"code":"parse_error","message":"parse error: invalid unicode code point at line 1 column 8","object":null,"path":null}}"#
    );
    let configure = br#"{"id":1,"method":"configure","params":{}}"#;
    assert_eq!(configure.len(), 41);
    let too_large = r#"{"id":null,"error":{"code":"request_too_large","message":"request too large: 41 bytes, the limit is 40","object":null,"path":null}}"#;
    assert_eq!(server.handle_line(configure).unwrap(), too_large);
    assert_eq!(server.handle_line(&[&configure[..], b"\r\n"].concat()).unwrap(), too_large);
    assert_eq!(server.too_large(41), too_large);
    let short = br#"{"id":1,"method":"configure"}"#;
    let want = server.handle_line(short).unwrap();
    assert!(want.starts_with(r#"{"id":1,"result":{"#), "{want}");
    assert_eq!(server.handle_line(&[&short[..], b"\r\n"].concat()).unwrap(), want);
    assert_eq!(server.handle_line(&[&short[..], b"\n"].concat()).unwrap(), want);
    assert_eq!(server.handle_line(b"\r\n"), None);
    assert_eq!(server.handle_line(b""), None);
    assert_eq!(server.max_request_bytes(), 40);
}

/// Any line gets exactly one response (none when blank), which is one line of JSON with the
/// shape of a `Response`, and the server goes on answering afterwards.
#[test]
fn any_line_gets_one_response() {
    use proptest::prelude::*;

    let requests = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        "[ -~]{0,120}".prop_map(String::into_bytes),
        (
            prop_oneof![
                Just("id".to_string()),
                Just("method".to_string()),
                Just("params".to_string()),
                "[a-z]{1,6}"
            ],
            prop_oneof![
                Just(serde_json::json!("configure")),
                Just(serde_json::json!("diff")),
                Just(serde_json::json!({"desired": [], "live": [{}]})),
                Just(serde_json::json!({"limits": {"maxRequestBytes": 0}})),
                Just(serde_json::json!(null)),
                any::<i64>().prop_map(serde_json::Value::from),
                "[ -~]{0,12}".prop_map(serde_json::Value::from),
            ],
        )
            .prop_map(|(k, v)| {
                let mut req = serde_json::json!({"id": 1, "method": "configure"});
                req[k] = v;
                req.to_string().into_bytes()
            }),
    ];
    let config = ProptestConfig { cases: 512, failure_persistence: None, ..Default::default() };
    proptest!(config, |(line in requests)| {
        let mut server = Server::new();
        match server.handle_line(&line) {
            None => prop_assert!(line.iter().all(u8::is_ascii_whitespace)),
            Some(out) => {
                prop_assert!(!out.contains('\n'));
                let parsed: Result<Response, _> = serde_json::from_str(&out);
                prop_assert!(parsed.is_ok(), "{}", out);
            }
        }
        let after = server.handle_line(br#"{"id":2,"method":"configure"}"#);
        let ok = after.is_some_and(|a| a.starts_with(r#"{"id":2,"result":"#));
        prop_assert!(ok, "the server did not carry on");
    });
}

/// Every line of every conversation under `testdata/serve/` checked against the published
/// schema with a JSON Schema validator: each response is a `Response`, each result is the
/// result type of its request's method (`x-methods`), and each request that got a result is a
/// `Request` whose params are its method's params. So the schema cannot drift from the server.
#[test]
fn conversations_follow_the_schema() {
    let schema = Server::json_schema();
    let defs = schema["$defs"].clone();
    let validator = |reference: &serde_json::Value| {
        let doc = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": defs.clone(),
            "allOf": [reference],
        });
        // Formats are checked too: every `now` is a `date-time` (RFC 3339).
        jsonschema::options()
            .should_validate_formats(true)
            .build(&doc)
            .unwrap_or_else(|e| panic!("schema {reference}: {e}"))
    };
    let request = validator(&serde_json::json!({ "$ref": "#/$defs/Request" }));
    let response = validator(&serde_json::json!({ "$ref": "#/$defs/Response" }));
    let methods = schema["x-methods"].as_object().unwrap();
    let by_method: std::collections::BTreeMap<
        &str,
        (jsonschema::Validator, jsonschema::Validator),
    > = methods
        .iter()
        .map(|(m, v)| (m.as_str(), (validator(&v["params"]), validator(&v["result"]))))
        .collect();
    let check = |v: &jsonschema::Validator, value: &serde_json::Value, what: String| {
        let errors: Vec<String> = v.iter_errors(value).map(|e| e.to_string()).collect();
        (errors.is_empty()).then_some(()).ok_or_else(|| format!("{what}: {}", errors.join("; ")))
    };
    let (mut requests, mut responses, mut results, mut enum_refusals) = (0, 0, 0, 0);
    let (mut well_formed_errors, mut malformed_refused) = (0, 0);
    let mut schema_takes = Vec::new();
    let mut failures = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(testdata().join("serve"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let mut last_request: Option<serde_json::Value> = None;
        for (n, line) in text.lines().enumerate() {
            let at = format!("{name}:{}", n + 1);
            if let Some(rest) = line.strip_prefix('>') {
                last_request = serde_json::from_str(rest.trim()).ok();
            } else if let Some(rest) = line.strip_prefix("< ") {
                let rest = transcript::fill(rest, env!("CARGO_PKG_VERSION"), &builtin_kinds());
                let value: serde_json::Value = serde_json::from_str(&rest)
                    .unwrap_or_else(|e| panic!("{at}: response is not JSON: {e}"));
                responses += 1;
                failures.extend(check(&response, &value, format!("{at} response")).err());
                // A value the server refuses as not one of an enum's spellings is refused by
                // the schema's `enum` too.
                if value["error"]["message"].as_str().is_some_and(|m| m.contains("unknown variant"))
                    && let Some(req) = &last_request
                    && let Some((params, _)) = req["method"].as_str().and_then(|m| by_method.get(m))
                {
                    enum_refusals += 1;
                    if params.is_valid(&req["params"]) {
                        failures.push(format!("{at}: the schema accepts what the server refuses"));
                    }
                }
                // A request the engine failed on was well formed: the schema takes it. One
                // refused as malformed is refused by the schema too, where the schema can say
                // so (a type, a missing field, an unknown method or version); refusals it
                // cannot express (a semantic check) are counted.
                if let (Some(code), Some(req)) = (value["error"]["code"].as_str(), &last_request) {
                    let method = req["method"].as_str().unwrap_or_default();
                    let params_ok = by_method.get(method).is_none_or(|(params, _)| {
                        req.get("params").is_none_or(|p| p.is_null() || params.is_valid(p))
                    });
                    let valid = request.is_valid(req) && params_ok;
                    match code {
                        // Too large: refused unread, whatever it holds.
                        "request_too_large" => {}
                        "engine_error" => {
                            well_formed_errors += 1;
                            if !valid {
                                failures.push(format!(
                                    "{at}: the schema refuses a request the server took"
                                ));
                            }
                        }
                        _ if valid => schema_takes.push(format!("{at} ({code})")),
                        _ => malformed_refused += 1,
                    }
                }
                let Some(result) = value.get("result") else { continue };
                let Some(req) = &last_request else {
                    failures.push(format!("{at}: a result with no request"));
                    continue;
                };
                let method = req["method"].as_str().unwrap_or_default();
                let Some((params, result_schema)) = by_method.get(method) else {
                    failures.push(format!("{at}: a result for unknown method {method:?}"));
                    continue;
                };
                results += 1;
                failures
                    .extend(check(result_schema, result, format!("{at} {method} result")).err());
                requests += 1;
                failures.extend(check(&request, req, format!("{at} request")).err());
                if let Some(p) = req.get("params").filter(|p| !p.is_null()) {
                    failures.extend(check(params, p, format!("{at} {method} params")).err());
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    // Every conversation file is read: a vanished directory cannot pass as empty.
    assert!(
        files.len() >= 9
            && responses >= 113
            && results >= 45
            && enum_refusals >= 3
            && well_formed_errors >= 6
            && malformed_refused >= 59,
        "{responses} {results} {enum_refusals} {well_formed_errors} {malformed_refused}"
    );
    eprintln!(
        "schema: {responses} responses, {results} results, {requests} requests validated \
         in {} files; {enum_refusals} refused enum values refused by the schema too; \
         {well_formed_errors} requests the engine failed on taken by the schema; \
         {malformed_refused} refused requests refused by the schema too, {} only by the \
         server: {}",
        files.len(),
        schema_takes.len(),
        schema_takes.join(", ")
    );
}
