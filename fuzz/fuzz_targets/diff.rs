//! `diff::diff` on generated desired/live pairs: deterministic, its RFC 6902 patch turns normalised live into predicted live, self-comparison is unmodified.
//! The checks are in `gitops_core::fuzzing::diff`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::diff(data));
