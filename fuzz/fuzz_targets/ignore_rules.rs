//! `IgnoreNormalizer` from arbitrary JSON pointer and jq text: clean errors, removal only, determinism, idempotence, pointer/jq agreement.
//! The checks are in `gitops_core::fuzzing::ignore_rules`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::ignore_rules(data));
