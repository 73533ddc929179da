//! `parse_manifests` on any text: never panics, and every object it returns has an identity
//! and survives a JSON round trip through the parser unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(objs) = gitops_core::parse_manifests(text) else { return };
    for obj in &objs {
        gitops_core::ObjectRef::from_object(obj).expect("parsed objects have an identity");
    }
    let json = serde_json::to_string(&objs).expect("values serialize");
    let again = gitops_core::parse_manifests(&json).expect("our own JSON parses");
    assert_eq!(again, objs);
});
