//! Strategic merge patch creation and application: no panic on directive-laden patches, computed patches reproduce their target.
//! The checks are in `gitops_core::fuzzing::strategic_merge`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::strategic_merge(data));
