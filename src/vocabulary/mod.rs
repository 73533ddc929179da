//! Argo CD's vocabulary, below diff, health, sync and preview: the annotation names, hook
//! classification, sync options and time, each read by one rule here.
//!
//! Most of it is the crate's own: a host passes objects as they are and never spells an
//! annotation. Public are the types other areas' results carry ([`AppOptions`],
//! [`HookDeletePolicy`], [`PropagationPolicy`], [`Timestamp`]) and the few names a host writes
//! itself ([`HOOK_FINALIZER`], [`COMPARE_OPTIONS_ANNOTATION`]).
//!
//! - Annotations: the names Argo CD and Helm write on objects, and one reading of their
//!   comma-separated values (gitops-engine `GetAnnotationCSVs`).
//! - Hooks: whether an object is a hook, its types, delete policies and wave
//!   (`is_hook`, `wave`, `HookType`, [`HookDeletePolicy`]).
//! - Sync options: the app-level list ([`AppOptions`]) and a resource's annotation, read once
//!   per resource and carried with it; each rule that resolves them is named after its Argo CD
//!   source.
//! - Time: one point-in-time type ([`Timestamp`]), Go durations (`GoDuration`) and the
//!   civil-time arithmetic under both (RFC 3339, time zones, `strftime`).
//!
//! - Go's `%q` of a string, as messages quote names and input (`go_quote`).
//!
//! Everything cites Argo CD 3.6.2 (`argo-cd/v3` and its `gitops-engine`), the release whose
//! answers this crate gives.

mod annotations;
mod go_text;
mod hooks;
mod sync_options;
mod time;

pub use annotations::{COMPARE_OPTIONS_ANNOTATION, has_annotation_option};
// Argo CD's annotation names: facts the crate reads and writes itself; a host passes objects
// as they are and never needs to spell one.
pub(crate) use annotations::{
    CLIENT_SIDE_APPLY_MANAGER_ANNOTATION, DEFAULT_INSTANCE_LABEL, DELETION_APPROVED_ANNOTATION,
    IGNORE_HEALTHCHECK_ANNOTATION, IGNORE_RESOURCE_UPDATES_ANNOTATION,
    IGNORE_RESTART_POLICY_ANNOTATION, INSTALLATION_ID_ANNOTATION, SKIP_RECONCILE_ANNOTATION,
    SYNC_OPTIONS_ANNOTATION, TRACKING_ID_ANNOTATION,
};
pub(crate) use annotations::{csv, first_option_value, go_atoi};
pub(crate) use go_text::go_quote;
pub use hooks::{HOOK_FINALIZER, HookDeletePolicy};
pub(crate) use hooks::{
    HookFacts, add_hook_finalizer, delete_policies, drop_hook_finalizer, has_hook_annotation,
    hook_types, is_app_hook, is_deletion_hook_only, is_ignored, is_post_delete_hook,
    is_pre_delete_hook, is_skip, wave_of,
};
pub(crate) use hooks::{HookType, has_hook_finalizer, is_hook, wave};
pub(crate) use sync_options::FIELD_MANAGER;
pub use sync_options::{AppOptions, PropagationPolicy};
pub(crate) use sync_options::{
    ResourceOptions, Write, apply_object, filter_out_of_sync, kept_at_deletion, prune_disabled,
    prune_last, prune_object, prune_requires_confirmation, requires_deletion_confirmation,
    skip_dry_run_on_missing_resource, validate,
};
pub(crate) use time::GoDuration;
#[cfg(test)]
pub(crate) use time::stamp_samples;
pub(crate) use time::{
    Location, Wall, format_go_duration, format_rfc3339, format_utc, minute_stamp_into, os_date,
    os_date_into, parse_go_duration, parse_rfc3339, parse_rfc3339_parts, push_digits, push_padded,
    second_stamp, utc_stamp,
};
pub use time::{TimeError, Timestamp};
#[cfg(feature = "lua")]
pub(crate) use time::{days_from_civil, strftime};
