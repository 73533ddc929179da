//! `parse_manifests` on any text: deterministic, every object has an identity and re-parses equal from its JSON.
//! The checks are in `gitops_core::fuzzing::parse_manifests`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::parse_manifests(data));
