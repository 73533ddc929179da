//! `sync::SyncRequest::plan` with fuzzed waves, hooks and sync options: deterministic total order of waves, no delete under `Prune=false`.
//! The checks are in `gitops_core::fuzzing::plan_build`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::plan_build(data));
