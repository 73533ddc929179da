//! Arbitrary Lua as a health script under small limits: clean result or error, and the engine still answers a known script.
//! The checks are in `gitops_core::fuzzing::lua_eval`, shared with the replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gitops_core::fuzzing::lua_eval(data));
