//! The calls from the protocol into the engines: one function per method.
//!
//! Each takes the server state (with the configured settings and the engines' caches) and the
//! checked params, and returns the same JSON the corresponding CLI command prints with
//! `--output json`.

use serde_json::Value;

use super::error::ProtocolError;
use super::server::{Config, DecideInput, DiffInput, HealthInput, PlanInput, State, StepInput};
use super::wire::Method;

/// The methods this build answers, in protocol order.
pub(crate) fn available_methods() -> Vec<Method> {
    vec![Method::Configure]
}

/// Installs a new configuration, compiling what later requests reuse. On error the previous
/// configuration stays.
pub(crate) fn engine_configure(state: &mut State, config: Config) -> Result<(), ProtocolError> {
    state.max_request_bytes =
        config.limits.max_request_bytes.unwrap_or(state.initial_max_request_bytes);
    state.config = config;
    Ok(())
}

/// `diff`: as `gitops-core diff --output json`.
pub(crate) fn engine_diff(_state: &mut State, _input: DiffInput) -> Result<Value, ProtocolError> {
    Err(ProtocolError::Unavailable { method: Method::Diff })
}

/// `health`: as `gitops-core health --output json`.
pub(crate) fn engine_health(
    _state: &mut State,
    _input: HealthInput,
) -> Result<Value, ProtocolError> {
    Err(ProtocolError::Unavailable { method: Method::Health })
}

/// `plan`: as `gitops-core plan --output json`.
pub(crate) fn engine_plan(_state: &mut State, _input: PlanInput) -> Result<Value, ProtocolError> {
    Err(ProtocolError::Unavailable { method: Method::Plan })
}

/// `step`: the next actions of a sync operation, or its outcome.
pub(crate) fn engine_step(_state: &mut State, _input: StepInput) -> Result<Value, ProtocolError> {
    Err(ProtocolError::Unavailable { method: Method::Step })
}

/// `decide`: as `gitops-core decide --output json`.
pub(crate) fn engine_decide(
    _state: &mut State,
    _input: DecideInput,
) -> Result<Value, ProtocolError> {
    Err(ProtocolError::Unavailable { method: Method::Decide })
}
