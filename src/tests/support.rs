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
