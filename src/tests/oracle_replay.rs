//! Replays the divergences from Argo CD kept under `testdata/oracle/` (found by `oracle/run`,
//! listed in `testdata/SKIPPED.md`): each file holds the request, the RFC 6901 pointer of the
//! compared field in the answer, and the value gitops-core and Argo CD's own code gave there.
//! The test fails when gitops-core's answer changes: either the divergence was fixed (delete
//! the case and its SKIPPED.md entry) or it changed shape (record it again).

use serde_json::{Value, json};

use super::support::{selected, testdata};
use crate::protocol::Server;

/// The health script every differential case is configured with.
fn configure_line() -> String {
    let script = std::fs::read_to_string(
        testdata().join("health/customizations/example.com/Canary/health.lua"),
    )
    .expect("the Canary health script");
    json!({"id": 0, "method": "configure",
        "params": {"customizations": {"example.com/Canary": script}}})
    .to_string()
}

#[test]
fn oracle_divergences_replay() {
    let dir = testdata().join("oracle");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/oracle exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "testdata/oracle holds no cases");
    let skipped = std::fs::read_to_string(testdata().join("SKIPPED.md")).expect("SKIPPED.md");
    let mut failures = Vec::new();
    for file in files {
        let name = file.file_name().unwrap_or_default().to_string_lossy().to_string();
        if !selected(&name) {
            continue;
        }
        if !skipped.contains(&format!("testdata/oracle/{name}")) {
            failures.push(format!("{name}: not listed in testdata/SKIPPED.md"));
        }
        let text = std::fs::read_to_string(&file).expect("a case file");
        let case: Value = serde_json::from_str(&text).expect("a JSON case");
        let mut server = Server::new();
        server.handle_line(configure_line().as_bytes());
        let request = json!({"id": 1, "method": case["method"], "params": case["params"]});
        let line = server.handle_line(request.to_string().as_bytes()).expect("an answer");
        let answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        let pointer = case["pointer"].as_str().expect("pointer");
        let got = answer["result"].pointer(pointer).cloned().unwrap_or(Value::Null);
        if got != case["gitopsCore"] {
            failures.push(format!(
                "{name}: {pointer} is now {got}, recorded {} (Argo CD: {})",
                case["gitopsCore"], case["argo"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
