//! `health::assess` on every built-in kind: total, deterministic, consistent with the built-in check (the crate-private `health::builtin`) and the deletion rule.
//! The checks are in `gitops_core::fuzzing::health_assess`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::health_assess(data));
