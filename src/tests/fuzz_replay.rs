//! Replays every input kept under `testdata/fuzz/<target>/` (the seeds and every input a fuzz
//! target of `fuzz/` ever failed on) through the same checks as the target,
//! `gitops_core::fuzzing::<target>`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::support::{selected, testdata};
use crate::fuzzing::TARGETS;

#[test]
fn fuzz_inputs_replay() {
    let root = testdata().join("fuzz");
    let mut failures = Vec::new();
    let mut total = 0;
    for entry in std::fs::read_dir(&root).expect("testdata/fuzz exists") {
        let dir = entry.expect("a directory entry").path();
        if dir.is_dir() {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            let disabled = name == "lua_eval" && !cfg!(feature = "lua");
            assert!(
                disabled || TARGETS.iter().any(|(t, _)| *t == name),
                "testdata/fuzz/{name} is not a fuzz target"
            );
        }
    }
    for (target, check) in TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "testdata/fuzz/{target} holds no inputs");
        for file in files {
            let name =
                format!("{target}/{}", file.file_name().unwrap_or_default().to_string_lossy());
            if !selected(&name) {
                continue;
            }
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("reading {name}: {e}"));
            total += 1;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{name}: {message}"));
            }
        }
    }
    assert!(total > 0 || std::env::var("GITOPS_TEST").is_ok(), "no fuzz inputs replayed");
    assert!(
        failures.is_empty(),
        "{} of {total} fuzz inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
