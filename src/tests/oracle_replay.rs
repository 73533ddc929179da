//! Replays the answers of Argo CD's own code recorded under `testdata/oracle/` by `oracle/run
//! --save`: each file holds a request and checks, an RFC 6901 pointer into the answer and the
//! value Argo CD gave there. gitops-core must give the same value, except in a divergence
//! (a file with a `signature`, listed in `testdata/SKIPPED.md`), where it must still give the
//! recorded `gitopsCore` value: a fixed divergence turns into a failure until its case and
//! SKIPPED.md entry are removed. In a `diff` answer the normalized and predicted live objects
//! come from the library (`testkit/src/oracle/objects.rs`), as in the runner. A `sync` case holds Argo
//! CD's whole answer (`argo`): the operation is driven through `step` again (`testkit/src/oracle/syncsim.rs`)
//! and compared with it: every difference must be one `testdata/oracle/explained.txt` explains,
//! and a divergence case must still show its recorded signature. An `autosync` case holds Argo
//! CD's whole answer too, with the second its window functions read from the clock; gitops-core
//! answers it at that second (`testkit/src/oracle/autosync.rs`). A `scripts` case is answered
//! again by `testkit/src/oracle/scripts.rs` at its check's pointer. A `tracking`,
//! `normalize`, `jq` or `deletion` case holds
//! Argo CD's answer to its own method, compared as the runner compares it; a `yaml` case holds
//! a manifest text and Argo CD's reading of it, read again and compared as the runner does.

use serde_json::{Value, json};

use super::support::{selected, testdata};
use crate::protocol::Server;

use gitops_core_testkit::oracle::{
    autosync, deletion, jq, normalize, objects, scripts as oracle_scripts, syncsim, tracking, yaml,
};

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
        let text = std::fs::read_to_string(&file).expect("a case file");
        let case: Value = serde_json::from_str(&text).expect("a JSON case");
        if case["method"] == "sync" || case["method"] == "autosync" {
            failures.extend(replay_sync(&name, &case, &skipped));
            continue;
        }
        if let Some(found) = replay_area(&case) {
            if let Some(signature) = case["signature"].as_str() {
                // A divergence kept on purpose: gitops-core must still answer what it did.
                if !skipped.contains(&format!("testdata/oracle/{name}")) {
                    failures
                        .push(format!("{name}: a divergence not listed in testdata/SKIPPED.md"));
                }
                let want = &case["checks"][0]["gitopsCore"];
                if !found.iter().any(|(sig, got)| sig == signature && got == want) {
                    failures.push(format!("{name}: {signature} is gone or changed: {found:?}"));
                }
            } else {
                failures.extend(
                    found.into_iter().map(|(sig, got)| format!("{name}: {sig}: gitops-core {got}")),
                );
            }
            continue;
        }
        let mut server = Server::new();
        server.handle_line(configure_line().as_bytes());
        let request = json!({"id": 1, "method": case["method"], "params": case["params"]});
        let line = server.handle_line(request.to_string().as_bytes()).expect("an answer");
        let mut answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        if case["method"] == "diff" {
            // The compared objects come from the library, as in the differential runner.
            objects::with_objects(&case["params"], &mut answer["result"])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let divergence = case.get("signature").is_some();
        if divergence && !skipped.contains(&format!("testdata/oracle/{name}")) {
            failures.push(format!("{name}: a divergence not listed in testdata/SKIPPED.md"));
        }
        for check in case["checks"].as_array().expect("checks") {
            let pointer = check["pointer"].as_str().expect("pointer");
            let got = answer["result"].pointer(pointer).cloned().unwrap_or(Value::Null);
            let want = if divergence { &check["gitopsCore"] } else { &check["argo"] };
            if &got != want {
                failures.push(format!(
                    "{name}: {pointer} is {got}, expected {want} (Argo CD: {})",
                    check["argo"]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every class `testdata/oracle/explained.txt` explains has a recorded case the test above
/// replays: a case whose `signature` the line covers, or, where gitops-core agrees with one of
/// Argo CD's answers that vary from run to run, an agreed case naming the line in `explains`.
#[test]
fn every_explained_class_is_recorded() {
    let dir = testdata().join("oracle");
    let mut recorded = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("testdata/oracle exists") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("a case file"))
                .expect("a JSON case");
        for key in ["signature", "explains"] {
            if let Some(s) = case[key].as_str() {
                recorded.push(s.to_string());
            }
        }
    }
    let missing: Vec<String> = explained()
        .into_iter()
        .filter(|line| !recorded.iter().any(|s| s.starts_with(line.as_str())))
        .collect();
    assert!(missing.is_empty(), "explained classes without a recorded case: {missing:?}");
}

/// Replays a recorded case of the `tracking`, `normalize`, `jq`, `deletion`, `yaml` or `scripts` area (`None` for another
/// method): what differs from Argo CD's recorded `argo` answer (an agreed case) or from its
/// recorded check (a divergence), as (signature, gitops-core's value).
fn replay_area(case: &Value) -> Option<Vec<(String, Value)>> {
    let params = &case["params"];
    let argo = if case.get("argo").is_some() { &case["argo"] } else { &case["checks"][0]["argo"] };
    let found = match case["method"].as_str()? {
        "tracking" => {
            let ours = tracking::ours(params).unwrap_or_else(|e| json!({"error": e}));
            tracking::compare(&ours, argo).into_iter().map(|(sig, _, x, _)| (sig, x)).collect()
        }
        "normalize" => {
            normalize::compare(params, argo).into_iter().map(|(sig, _, x, _)| (sig, x)).collect()
        }
        "deletion" => {
            deletion::compare(params, argo).into_iter().map(|(sig, _, x, _)| (sig, x)).collect()
        }
        "scripts" => {
            let sig = case["signature"].as_str().unwrap_or("scripts").to_string();
            let scripts = match params["scriptPaths"].as_array() {
                None => None,
                Some(paths) => match argo_scripts(paths) {
                    Some(s) => Some(s),
                    None => {
                        // Argo CD's scripts are not copied into this repository.
                        eprintln!(
                            "{sig}: not replayed, Argo CD 3.6.2's resource_customizations not found (ARGO_CD_RESOURCE_CUSTOMIZATIONS)"
                        );
                        return Some(vec![(sig, case["checks"][0]["gitopsCore"].clone())]);
                    }
                },
            };
            let pointer = case["checks"][0]["pointer"].as_str()?;
            let got = oracle_scripts::answer_at(params, pointer, scripts.as_ref());
            if &got == argo { vec![] } else { vec![(sig, got)] }
        }
        "yaml" => {
            // The text read again by gitops-core, against Argo CD's recorded reading.
            let text = params["text"].as_str()?;
            match yaml::compare(&yaml::ours(text), argo, text) {
                None => vec![],
                Some((sig, _, x, _)) => vec![(sig, x)],
            }
        }
        "jq" => {
            let ours = jq::ours(params);
            if jq::agree(&ours, argo) {
                vec![]
            } else {
                let what = ours["refused"].as_str().map(jq::construct);
                let sig = match what {
                    Some(w) => format!("jq:refused-by-gitops-core:{}", jq::slug(&w)),
                    None => "jq:object".into(),
                };
                vec![(sig, ours)]
            }
        }
        _ => return None,
    };
    Some(found)
}

/// The texts of Argo CD 3.6.2's scripts at `paths` of its `resource_customizations` folder:
/// `ARGO_CD_RESOURCE_CUSTOMIZATIONS`, else `../shared/argo-cd-3.6/resource_customizations`, else
/// the Go module cache's copy (as `benches/builtin_rules.rs` finds it); `None` without one.
fn argo_scripts(paths: &[Value]) -> Option<std::collections::BTreeMap<String, String>> {
    use std::path::PathBuf;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let module = "go/pkg/mod/github.com/argoproj/argo-cd/v3@v3.6.2/resource_customizations";
    let dir = [
        std::env::var_os("ARGO_CD_RESOURCE_CUSTOMIZATIONS").map(PathBuf::from),
        Some(root.join("../shared/argo-cd-3.6/resource_customizations")),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(module)),
    ]
    .into_iter()
    .flatten()
    .find(|d| d.is_dir())?;
    paths
        .iter()
        .map(|p| {
            let p = p.as_str()?;
            Some((p.to_string(), std::fs::read_to_string(dir.join(p)).ok()?))
        })
        .collect()
}

/// The signature prefixes `testdata/oracle/explained.txt` lists.
fn explained() -> Vec<String> {
    std::fs::read_to_string(testdata().join("oracle/explained.txt"))
        .expect("testdata/oracle/explained.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// gitops-core's answer to a recorded `autosync` case, at the second Argo CD's answer used,
/// its `decide` answered by an in-process server.
fn replay_autosync(case: &Value) -> Result<Value, String> {
    let now = case["argo"]["now"].as_str().ok_or("the recorded answer has no `now`")?;
    let mut server = Server::new();
    let mut decide = |params: &Value| -> Result<Value, String> {
        let request = json!({"id": 1, "method": "decide", "params": params});
        let line = server.handle_line(request.to_string().as_bytes()).ok_or("no answer")?;
        let answer: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        answer.get("result").cloned().ok_or_else(|| format!("decide: {answer}"))
    };
    autosync::run(&case["params"], now, &mut decide)
}

/// Replays one recorded sync operation or auto-sync decision; the failures found.
fn replay_sync(name: &str, case: &Value, skipped: &str) -> Vec<String> {
    let answer = if case["method"] == "autosync" {
        replay_autosync(case)
    } else {
        syncsim::run(&case["params"])
    };
    let ours = match answer {
        Ok(answer) => answer,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let found = if case["method"] == "autosync" {
        autosync::compare(&case["params"], &ours, &case["argo"])
    } else {
        syncsim::compare(&case["params"], &ours, &case["argo"])
    };
    let known = explained();
    let mut failures = Vec::new();
    if let Some(signature) = case["signature"].as_str() {
        if !skipped.contains(&format!("testdata/oracle/{name}")) {
            failures.push(format!("{name}: a divergence not listed in testdata/SKIPPED.md"));
        }
        if !found.contains_key(signature) {
            failures.push(format!("{name}: {signature} is gone: remove the case"));
        }
    }
    for (sig, (pointer, x, y)) in &found {
        if !known.iter().any(|k| sig.starts_with(k.as_str())) {
            failures.push(format!("{name}: {sig} at {pointer}: gitops-core {x} / Argo CD {y}"));
        }
    }
    failures
}

/// The `## ` and `### ` heading paths of a Markdown text that appear more than once, each
/// with the 1-based line numbers where it appears.
fn repeated_heading_paths(text: &str) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    let mut section = String::new();
    for (n, line) in text.lines().enumerate() {
        let path = if let Some(title) = line.strip_prefix("## ") {
            section = title.to_string();
            title.to_string()
        } else if let Some(title) = line.strip_prefix("### ") {
            format!("{section} > {title}")
        } else {
            continue;
        };
        seen.entry(path).or_default().push(n + 1);
    }
    seen.into_iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(path, lines)| format!("{path} (lines {lines:?})"))
        .collect()
}

#[test]
fn skipped_md_sections_appear_once() {
    assert_eq!(
        repeated_heading_paths("## A\n### B\n## C\n### B\n## A\n### B\n"),
        ["A (lines [1, 5])", "A > B (lines [2, 6])"]
    );
    let skipped = std::fs::read_to_string(testdata().join("SKIPPED.md")).expect("SKIPPED.md");
    let repeated = repeated_heading_paths(&skipped);
    assert!(repeated.is_empty(), "testdata/SKIPPED.md repeats sections: {repeated:#?}");
}
