//! `gitops-core demo` (in progress).

use crate::common::CliError;

/// Runs the command.
pub fn run(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`demo` is not available yet".into()))
}
