//! The pieces of the differential oracle (`oracle/`, Argo CD's own code against gitops-core)
//! that both its runner (`oracle/runner.rs`, the `oracle` example) and the replay of recorded
//! answers (`src/tests/oracle_replay.rs`) use: gitops-core's side of each compared area, and
//! the comparisons.

pub mod autosync;
pub mod deletion;
pub mod jq;
pub mod normalize;
pub mod objects;
#[cfg(feature = "lua")]
pub mod scripts;
pub mod syncsim;
pub mod tracking;
pub mod yaml;
