//! The diff engine: Argo CD's three-way, two-way, structured-merge and server-side diffs, with
//! its normalizations, Secret masking and sync-status roll-up.
//!
//! Two entry points:
//!
//! - [`diff`] compares one desired object with one live object, as gitops-engine's `Diff`.
//! - [`diff_app`] runs Argo CD's comparison of a whole application (Argo CD 3.6.2
//!   controller/state.go `CompareAppState`): namespace defaulting, hooks, tracking, pairing, ignore
//!   rules, per-resource diffs and the sync status roll-up of `CompareAppState`, with Secrets
//!   masked in every rendered object. [`diff_app_owned`] is the same comparison on objects the
//!   caller gives away (each becomes its comparison's working copy: no copy of it is made).
//!
//! Every rendered object has its Secret values masked as gitops-engine's `HideSecretData`
//! masks them (pkg/diff/diff.go); [`ObjectText`] gives a resource's two YAML texts and their
//! classic (what `argocd app diff` prints) and unified line diffs.
//!
//! # Examples
//!
//! ```
//! use gitops_core::diff::{self, DiffOptions};
//! use serde_json::json;
//!
//! let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "c"}, "data": {"a": "1"}});
//! // A live object missing: creating it is a difference.
//! let r = diff::diff(Some(&desired), None, &DiffOptions::default()).unwrap();
//! assert!(r.modified);
//! assert_eq!(r.normalized_live, serde_json::Value::Null);
//! ```
//!
//! A whole application, as the README shows it:
//!
//! ```
//! use gitops_core::diff::{self, AppDiffInput, SyncStatus};
//! use gitops_core::config::{Application, Settings};
//! use gitops_core::object::{Scopes, parse_manifests};
//!
//! fn check(git: &str, live: &str, app: &str, cm: &str) -> Result<bool, Box<dyn std::error::Error>> {
//!     let desired = parse_manifests(git)?;
//!     let live = parse_manifests(live)?;
//!     let app = Application::from_value(&parse_manifests(app)?[0])?;
//!     let settings = Settings::from_config_map(&parse_manifests(cm)?[0])?;
//!     let scopes = Scopes::builtin();
//!     // The text rendering needs the normalised and predicted objects: ask for them.
//!     let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
//!     let result = diff::diff_app(&input)?;
//!     for r in &result.resources {
//!         println!("{} {:?} pruning={} ops={}", r.object, r.status, r.requires_pruning, r.diff.len());
//!     }
//!     print!("{}", result.render_text()?);
//!     Ok(result.sync_status == SyncStatus::Synced)
//! }
//! # let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\n";
//! # let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop}\n";
//! # let live = "apiVersion: v1\nkind: Service\nmetadata: {name: old, namespace: shop, annotations: {argocd.argoproj.io/tracking-id: 'shop:/Service:shop/old'}}\n";
//! # assert!(!check("", live, app, cm).unwrap());
//! ```

mod app;
mod compare;
mod defaults;
mod error;
mod explain;
mod ignore_seam;
mod linediff;
mod mask;
mod merge_patch;
mod normalize;
mod pipeline;
mod predict;
mod quantity;
mod remarshal;
mod respect;
mod smp;
mod structured_merge;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(test)]
pub(crate) use crate::managed_fields::normalize_managed_fields;
pub(crate) use app::to_yaml;
pub use app::{
    AppDiff, AppDiffInput, Condition, ObjectText, ResourceDiff, SyncStatus, diff_app,
    diff_app_owned,
};
/// Seams of the application comparison for the prepared app (`crate::reconcile`).
pub(crate) use app::{
    Compared, Desired, Key, Shared, Targets, changed_managed_namespace_metadata, comparison_error,
    invalid_spec, key, managed_namespace_key, not_permitted, server_side, shared_warning,
    synthesized_namespace, targets, unknown, unknown_if_not_permitted,
};
pub(crate) use compare::{json_patch_ops, json_patch_ops_at};
pub use error::DiffError;
pub use explain::{ExplainOptions, FieldChange, FieldWriter, ResourceExplanation, UnmanagedField};
pub(crate) use ignore_seam::AppNormalizer;
pub(crate) use linediff::{line_diff, unified_diff};
pub(crate) use mask::hide_secret_data;
pub(crate) use mask::is_secret;
pub use pipeline::diff;
pub use respect::RespectedTarget;

/// The diff engine's defaulting, for the conformance runner of `src/tests/smp.rs`.
#[cfg(test)]
pub(crate) use self::defaults::apply_defaults;

/// Seams between the parts of the diff engine, for the rest of the crate.
pub(crate) use self::{
    merge_patch::three_way_json_merge_patch, remarshal::normalize_known_types,
    smp::three_way_strategic_patch,
};

/// The diff engine's parts, for the conformance runners of `src/tests/` and the fuzz targets'
/// invariants (`crate::fuzzing`).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use self::smp::{apply_strategic_patch, two_way_strategic_patch};
#[cfg(test)]
pub(crate) use self::{
    error::PatchFailure, merge_patch::apply_merge_patch, normalize::remove_namespace_annotation,
    predict::three_way_predict, quantity::canonical_quantity, remarshal::remarshal,
};

/// Something that removes what should not be compared from an object, in place (Argo CD's
/// "full normaliser": `ignoreDifferences` JSON pointers and jq expressions, then known types).
///
/// Argo CD logs a normaliser's errors and carries on, so this trait has no error: an
/// implementation skips what it cannot apply.
pub trait Normalizer {
    /// Normalises one object in place.
    fn normalize(&self, obj: &mut Value);
}

/// How one diff is computed (gitops-engine pkg/diff/diff_options.go). [`DiffOptions::default`] is
/// Argo CD's default for a client-side comparison: three-way with last-applied, two-way otherwise.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct DiffOptions<'a> {
    /// `resource.compareoptions.ignoreAggregatedRoles`: a ClusterRole or Role with an
    /// `aggregationRule` compares without its `rules`.
    pub ignore_aggregated_roles: bool,
    /// Structured-merge diff, emulated from the live object's `managedFields`: Argo CD 3.2's
    /// diff of an app with `ServerSideApply=true`. Argo CD 3.6 compares such an app by
    /// server-side diff, and so does [`diff_app`]; this stays for callers who ask.
    pub structured_merge: bool,
    /// Server-side diff: the predicted live object is [`DiffOptions::dry_run`].
    pub server_side_diff: bool,
    /// The result of a server-side dry-run apply of the desired object, for server-side diff.
    pub dry_run: Option<&'a Value>,
    /// The field manager (Argo CD: [`DiffOptions::ARGOCD_MANAGER`]).
    pub manager: &'a str,
    /// Server-side diff: revert fields the manager does not own in the dry-run result
    /// (mutation webhooks). On by default; `IncludeMutationWebhook=true` turns it off.
    pub ignore_mutation_webhook: bool,
    /// The full normaliser (ignore rules, known types).
    pub normalizer: Option<&'a dyn Normalizer>,
    /// An OpenAPI v2 document describing custom resources (the cluster's `/openapi/v2`, or
    /// the `definitions` of their CRDs with `x-kubernetes-group-version-kind`). Structured
    /// merge and server-side diff read a custom resource's list types and atomic maps from
    /// it, as Argo CD reads them from the cluster's schema; without it they are inferred from
    /// the managed fields. Built-in kinds always use the generated Kubernetes schema.
    pub openapi: Option<&'a crate::schema::OpenApiSchema>,
}

impl Default for DiffOptions<'_> {
    fn default() -> Self {
        DiffOptions {
            ignore_aggregated_roles: false,
            structured_merge: false,
            server_side_diff: false,
            dry_run: None,
            manager: DiffOptions::ARGOCD_MANAGER,
            ignore_mutation_webhook: true,
            normalizer: None,
            openapi: None,
        }
    }
}

impl std::fmt::Debug for DiffOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiffOptions")
            .field("ignore_aggregated_roles", &self.ignore_aggregated_roles)
            .field("structured_merge", &self.structured_merge)
            .field("server_side_diff", &self.server_side_diff)
            .field("dry_run", &self.dry_run.is_some())
            .field("manager", &self.manager)
            .field("ignore_mutation_webhook", &self.ignore_mutation_webhook)
            .field("normalizer", &self.normalizer.is_some())
            .field("openapi", &self.openapi.is_some())
            .finish()
    }
}

impl<'a> DiffOptions<'a> {
    /// The field manager Argo CD applies with (`common.ArgoCDSSAManager`), the default of
    /// [`DiffOptions::manager`].
    pub const ARGOCD_MANAGER: &'static str = "argocd-controller";

    /// Sets [`DiffOptions::ignore_aggregated_roles`].
    pub fn with_ignore_aggregated_roles(mut self, on: bool) -> Self {
        self.ignore_aggregated_roles = on;
        self
    }
    /// Sets [`DiffOptions::structured_merge`].
    pub fn with_structured_merge(mut self, on: bool) -> Self {
        self.structured_merge = on;
        self
    }
    /// Turns server-side diff on with the dry-run result of the desired object.
    pub fn with_server_side_diff(mut self, dry_run: Option<&'a Value>) -> Self {
        self.server_side_diff = true;
        self.dry_run = dry_run;
        self
    }
    /// Sets [`DiffOptions::ignore_mutation_webhook`].
    pub fn with_ignore_mutation_webhook(mut self, on: bool) -> Self {
        self.ignore_mutation_webhook = on;
        self
    }
    /// Sets the full normaliser.
    pub fn with_normalizer(mut self, n: &'a dyn Normalizer) -> Self {
        self.normalizer = Some(n);
        self
    }
    /// Sets the field manager.
    pub fn with_manager(mut self, manager: &'a str) -> Self {
        self.manager = manager;
        self
    }
    /// Sets [`DiffOptions::openapi`], the schema of custom resources.
    pub fn with_openapi(mut self, schema: &'a crate::schema::OpenApiSchema) -> Self {
        self.openapi = Some(schema);
        self
    }
}

/// Which algorithm produced a result (gitops-engine pkg/diff/diff.go `Diff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum DiffMode {
    /// Only the desired object exists: it would be created.
    Create,
    /// Only the live object exists.
    LiveOnly,
    /// kubectl's three-way patch with the last-applied configuration.
    ThreeWay,
    /// The three-way patch with the desired object as the original (no last-applied).
    TwoWay,
    /// Structured-merge emulation from the live object's managed fields.
    StructuredMerge,
    /// Server-side diff from a dry-run result.
    ServerSide,
}

/// One RFC 6902 operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PatchOp {
    /// `add`, `remove`, `replace`, `move`, `copy` or `test`.
    pub op: String,
    /// RFC 6901 pointer of the target.
    pub path: String,
    /// The value, for `add`, `replace` and `test` (`Some(Value::Null)` for a JSON `null`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub value: Option<Value>,
    /// The source pointer, for `move` and `copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// A present field is `Some`, even when it is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The result of comparing one desired object with one live object (gitops-engine's
/// `DiffResult`, plus a JSON Patch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiffResult {
    /// Whether the normalised live object differs from the predicted live object.
    pub modified: bool,
    /// The live object after normalisation; `null` when there is no live object.
    pub normalized_live: Value,
    /// What the live object would be after applying the desired one; `null` when there is no
    /// desired object.
    pub predicted_live: Value,
    /// RFC 6902 operations turning `normalized_live` into `predicted_live` (empty when only
    /// one side exists or nothing differs).
    pub patch: Vec<PatchOp>,
    /// The algorithm used.
    pub mode: DiffMode,
}
