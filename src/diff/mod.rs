//! The diff engine: Argo CD's three-way, two-way, structured-merge and server-side diffs, with
//! its normalizations, Secret masking and sync-status roll-up.

mod defaults;
mod error;
mod merge_patch;
mod quantity;
mod remarshal;
mod smp;

pub use error::DiffError;

/// Seams between the parts of the diff engine (crate-internal).
#[allow(unused_imports)]
pub(crate) use self::{
    defaults::apply_defaults,
    merge_patch::{
        apply_merge_patch, remove_list_fields, remove_map_fields, three_way_json_merge_patch,
    },
    quantity::canonical_quantity,
    remarshal::{
        Decode, base64_decode, base64_encode, default_known_type_fields, json_round_trip,
        normalize_known_types, remarshal, typed_round_trip,
    },
    smp::{
        PatchFailure, apply_strategic_patch, apply_typed, is_builtin, remove_namespace_annotation,
        three_way_predict, three_way_strategic_patch, three_way_typed, two_way_strategic_patch,
        two_way_typed,
    },
};
