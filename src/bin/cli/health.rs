//! `gitops-core health` and `gitops-core test-health` (in progress).

use crate::common::CliError;

/// Runs `health`.
pub fn run(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`health` is not available yet".into()))
}

/// Runs `test-health`.
pub fn run_tests(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`test-health` is not available yet".into()))
}
