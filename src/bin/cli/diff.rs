//! `gitops-core diff` (in progress).

use crate::common::CliError;

/// Runs the command.
pub fn run(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`diff` is not available yet".into()))
}
