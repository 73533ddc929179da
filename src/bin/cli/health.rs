//! `gitops-core health` and `gitops-core test-health` (in progress).

use crate::common::CliError;

/// Runs `health`.
pub fn run(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`health` is not available yet".into()))
}

/// Runs `test-health`.
pub fn run_tests(mut args: lexopt::Parser) -> Result<u8, CliError> {
    use lexopt::prelude::*;
    let mut dir: Option<std::path::PathBuf> = None;
    while let Some(arg) = args.next()? {
        match arg {
            Value(v) if dir.is_none() => dir = Some(v.into()),
            Long("help") | Short('h') => {
                println!("{TEST_USAGE}");
                return Ok(0);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let Some(dir) = dir else { return Err(CliError::Usage(TEST_USAGE.into())) };
    run_test_dir(&dir)
}

const TEST_USAGE: &str = "\
usage: gitops-core test-health DIR

Runs every health_test.yaml below DIR (Argo CD's resource_customizations layout): each case's
object goes through the health.lua found for its kind (or the one beside the test file), and
the status and message are compared exactly. Exit 1 when a case fails, 2 on an unreadable file.";

#[cfg(feature = "lua")]
fn run_test_dir(dir: &std::path::Path) -> Result<u8, CliError> {
    use std::collections::BTreeMap;

    use gitops_core::health::scripts::{HealthScript, HealthScripts, run_health_tests};
    use gitops_core::script::LuaEngine;

    let mut files = Vec::new();
    walk(dir, &mut files)?;
    let scripts = HealthScripts::new().with_directory(&read_customizations(dir)?);
    let engine = LuaEngine::default();
    let now = std::time::SystemTime::now();
    let (mut passed, mut failed) = (0usize, 0usize);
    for test in files.iter().filter(|f| f.file_name().is_some_and(|n| n == "health_test.yaml")) {
        let test_dir = test.parent().unwrap_or(dir);
        let script_path = test_dir.join("health.lua");
        let default_script = HealthScript::new(
            relative(dir, &script_path),
            crate::common::read_text(&script_path)?,
            true,
        );
        let mut inputs = BTreeMap::new();
        let mut below = Vec::new();
        walk(test_dir, &mut below)?;
        for f in below {
            let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "yaml" | "yml" | "json") {
                inputs.insert(relative(test_dir, &f), crate::common::read_text(&f)?);
            }
        }
        let text = crate::common::read_text(test)?;
        let cases = run_health_tests(&text, &inputs, &scripts, &default_script, &engine, now)
            .map_err(|e| {
                let file = if e.file == "health_test.yaml" {
                    test.display().to_string()
                } else {
                    test_dir.join(&e.file).display().to_string()
                };
                CliError::Input(format!("{file}: {}", e.message))
            })?;
        let shown = relative(dir, test_dir);
        for case in cases {
            let name = if shown.is_empty() {
                case.input_path.clone()
            } else {
                format!("{shown}/{}", case.input_path)
            };
            if case.passed {
                passed += 1;
                println!("PASS {name}");
                continue;
            }
            failed += 1;
            println!("FAIL {name} ({})", case.script);
            println!("  expected: {} {:?}", case.expected.status, case.expected.message);
            match &case.got {
                Ok(h) => println!("  got:      {} {:?}", h.status, h.message),
                Err(e) => println!("  got:      error: {e}"),
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(u8::from(failed > 0))
}

#[cfg(not(feature = "lua"))]
fn run_test_dir(_dir: &std::path::Path) -> Result<u8, CliError> {
    Err(CliError::Usage("`test-health` needs the `lua` feature".into()))
}

/// The `health.lua` files below a directory in the layout of Argo CD's
/// `resource_customizations/`, by path relative to it, for
/// `HealthScripts::with_directory` (also what `health --customizations DIR` needs).
#[cfg(feature = "lua")]
pub fn read_customizations(
    dir: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    let mut out = std::collections::BTreeMap::new();
    for f in files.iter().filter(|f| f.file_name().is_some_and(|n| n == "health.lua")) {
        out.insert(relative(dir, f), crate::common::read_text(f)?);
    }
    Ok(out)
}

/// Every file below `dir`, recursively, sorted by path.
#[cfg(feature = "lua")]
fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), CliError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CliError::Input(format!("{}: {e}", dir.display())))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| CliError::Input(format!("{}: {e}", dir.display())))?;
        paths.push(entry.path());
    }
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// `path` relative to `base`, with `/` separators.
#[cfg(feature = "lua")]
fn relative(base: &std::path::Path, path: &std::path::Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(all(test, feature = "lua"))]
mod tests {
    use std::path::PathBuf;

    fn testdata(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel)
    }

    #[test]
    fn test_health_exit_codes() {
        assert_eq!(super::run_test_dir(&testdata("health/customizations")).ok(), Some(0));
        assert_eq!(super::run_test_dir(&testdata("health/lua-failing")).ok(), Some(1));
        let err = super::run_test_dir(&testdata("health/no-such-dir")).unwrap_err().to_string();
        assert!(err.contains("health/no-such-dir"), "{err}");
        let err = super::run_test_dir(&testdata("health/lua-invalid")).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "health/lua-invalid/example.com/Bad/health_test.yaml: `tests` is not a list"
            ),
            "{err}"
        );
        let err =
            super::run_test_dir(&testdata("health/lua-missing-input")).unwrap_err().to_string();
        assert!(
            err.ends_with("health/lua-missing-input/example.com/Lost/testdata/nowhere.yaml: input file not found"),
            "{err}"
        );
    }
}
