//! Helpers shared by the table-driven tests.

use std::path::PathBuf;

/// The `testdata/` folder.
pub(crate) fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Reads a file below `testdata/` as text.
pub(crate) fn read(rel: &str) -> String {
    let path = testdata().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every file below `testdata/` (all depths), sorted by path.
pub(crate) fn all_files() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if p.is_dir() { walk(&p, out) } else { out.push(p) }
        }
    }
    let mut files = Vec::new();
    walk(&testdata(), &mut files);
    files.sort();
    files
}

/// Reads a file as text, `None` when it is not UTF-8.
pub(crate) fn read_path(path: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A case filter from the environment, as regex-test's `REGEX_TEST`: only names containing
/// `GITOPS_TEST` run.
pub(crate) fn selected(name: &str) -> bool {
    std::env::var("GITOPS_TEST").map_or(true, |f| name.contains(&f))
}

/// The `.yaml` files directly below these folders of `testdata/`, sorted by path.
pub(crate) fn yaml_files(dirs: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(testdata().join(d)).unwrap_or_else(|e| panic!("{d}: {e}")))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// A property's case count: `n` in an ordinary run, `PROPTEST_CASES` when it is set, so that a
/// long round by hand deepens every property, those with a count of their own too (proptest's
/// own reading of the variable gives way to an explicit count).
pub(crate) fn cases(n: u32) -> proptest::test_runner::Config {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(n);
    proptest::test_runner::Config::with_cases(n)
}

/// An interrupt that says stop after `n` checks of an evaluation.
#[derive(Debug)]
pub(crate) struct Countdown(pub(crate) u64);

impl crate::script::Interrupt for Countdown {
    fn start(&self) -> Box<dyn crate::script::InterruptCheck> {
        Box::new(CountdownCheck(std::cell::Cell::new(self.0)))
    }
}

struct CountdownCheck(std::cell::Cell<u64>);

impl crate::script::InterruptCheck for CountdownCheck {
    fn stop(&self) -> Option<String> {
        let left = self.0.get();
        self.0.set(left.saturating_sub(1));
        (left == 0).then(|| "the test's countdown ran out".to_string())
    }
}

/// Every file below `dir`, by path relative to it.
pub(crate) fn files_below(dir: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    fn walk(
        base: &std::path::Path,
        dir: &std::path::Path,
        out: &mut std::collections::BTreeMap<String, String>,
    ) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).expect("below base");
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Copies of `objects` without `metadata.managedFields`.
pub(crate) fn without_managed_fields(objects: &[serde_json::Value]) -> Vec<serde_json::Value> {
    objects
        .iter()
        .map(|o| {
            let mut o = o.clone();
            o["metadata"].as_object_mut().map(|m| m.remove("managedFields"));
            o
        })
        .collect()
}
