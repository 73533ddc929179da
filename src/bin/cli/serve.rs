//! `gitops-core serve` (in progress).

use crate::common::CliError;

/// Runs the command.
pub fn run(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`serve` is not available yet".into()))
}
