//! `gitops-core plan` and `gitops-core decide` (in progress).

use crate::common::CliError;

/// Runs `plan`.
pub fn run_plan(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`plan` is not available yet".into()))
}

/// Runs `decide`.
pub fn run_decide(_args: lexopt::Parser) -> Result<u8, CliError> {
    Err(CliError::Usage("`decide` is not available yet".into()))
}
