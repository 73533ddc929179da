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
