//! The blast-radius guard: a limit on what an automated sync may delete.
//!
//! Argo CD's only limit is `automated.allowEmpty`: it stops an automated sync that would
//! prune every resource of the app, and nothing less. A render that loses half of an app (a
//! wrong path, a broken values file) prunes that half. The guard refuses an automated sync
//! that would prune
//!
//! - more than a fraction of the app's live resources ([`BlastRadiusGuard::max_prune_fraction`],
//!   0.5 by default),
//! - more than a number of resources ([`BlastRadiusGuard::max_prune_count`], no limit by
//!   default),
//! - or any resource of a protected kind ([`BlastRadiusGuard::protected_kinds`]: StatefulSets,
//!   PersistentVolumeClaims, Namespaces and CustomResourceDefinitions by default),
//!
//! with a message that lists every resource the sync would prune. A manual sync is not
//! affected: the guard sits only in the automated-sync decision ([`super::decide::auto_sync`],
//! after Argo CD's wipe-out check). The guard is off unless the host passes one
//! ([`super::decide::AutoSyncInput::guard`]), so Argo CD's answers stay the same by default.
//!
//! An operator lets one refused sync through with the Application annotation
//! [`ALLOW_PRUNE_ANNOTATION`] (`gitops-core.io/allow-prune: "<count>"`): an automated sync that
//! prunes at most that many resources then goes ahead, whatever their kinds. Or they sync
//! manually.
//!
//! A pruned StatefulSet leaves its PersistentVolumeClaims behind unless its
//! `persistentVolumeClaimRetentionPolicy.whenDeleted` is `Delete`: the StatefulSet controller
//! created them, so no application tracks them. `claims_of` lists them, and the verdict
//! states them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::status::ResourceStatus;
use crate::config::Application;
use crate::glob::{Glob, glob_match};
use crate::object::{ObjectIndex, ObjectRef};
use crate::vocabulary::{AppOptions, PropagationPolicy, ResourceOptions, prune_disabled};

/// The Application annotation that lets an automated sync prune up to its value (a count) of
/// resources, whatever the guard's limits and protected kinds.
pub(super) const ALLOW_PRUNE_ANNOTATION: &str = "gitops-core.io/allow-prune";

/// The default [`BlastRadiusGuard::max_prune_fraction`].
pub(super) const DEFAULT_MAX_PRUNE_FRACTION: f64 = 0.5;

/// The default [`BlastRadiusGuard::protected_kinds`]: what holds data or other apps' objects.
pub(super) const DEFAULT_PROTECTED_KINDS: [&str; 4] = [
    "apps/StatefulSet",
    "PersistentVolumeClaim",
    "Namespace",
    "apiextensions.k8s.io/CustomResourceDefinition",
];

/// At most this many ordinals of a StatefulSet are listed from its `spec.replicas` (claims
/// found among the live objects are listed whatever their ordinal).
const MAX_LISTED_ORDINALS: u64 = 1024;

/// The guard's settings. Every field is optional in JSON; `{}` is the default guard.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::BlastRadiusGuard;
/// let g: BlastRadiusGuard =
///     serde_json::from_value(serde_json::json!({"maxPruneCount": 10})).unwrap();
/// assert_eq!(g.max_prune_fraction, Some(0.5));
/// assert_eq!(g.max_prune_count, Some(10));
/// assert_eq!(g.protected_kinds.len(), 4);
/// let off: BlastRadiusGuard = serde_json::from_value(serde_json::json!(
///     {"maxPruneFraction": null, "protectedKinds": []})).unwrap();
/// assert_eq!(off.max_prune_fraction, None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct BlastRadiusGuard {
    /// Refuse when the sync would prune more than this fraction (0 to 1) of the app's live
    /// resources; `None` (JSON `null`) sets no such limit. Default 0.5.
    pub max_prune_fraction: Option<f64>,
    /// Refuse when the sync would prune more than this many resources; `None` sets no such
    /// limit (the default).
    pub max_prune_count: Option<u64>,
    /// Kinds an automated sync never prunes, as `group/Kind` (`Kind` or `/Kind` for the core
    /// group); group and kind may be globs (`*.cnpg.io/*`, `*/Secret`). Default
    /// `apps/StatefulSet`, `PersistentVolumeClaim`, `Namespace` and
    /// `apiextensions.k8s.io/CustomResourceDefinition`.
    pub protected_kinds: Vec<String>,
}

impl Default for BlastRadiusGuard {
    fn default() -> Self {
        BlastRadiusGuard {
            max_prune_fraction: Some(DEFAULT_MAX_PRUNE_FRACTION),
            max_prune_count: None,
            protected_kinds: DEFAULT_PROTECTED_KINDS.iter().map(|k| k.to_string()).collect(),
        }
    }
}

/// A guard setting that cannot be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The fraction is not a number from 0 to 1.
    #[error("maxPruneFraction must be a number from 0 to 1, found {value}")]
    Fraction {
        /// The value.
        value: f64,
        /// RFC 6901 pointer into the guard.
        pointer: String,
    },
    /// A protected kind is not `group/Kind`, or a glob in it does not compile.
    #[error(
        "protected kind `{kind}` is not `group/Kind` (`Kind` for the core group; each a name \
         or a glob)"
    )]
    Kind {
        /// The entry.
        kind: String,
        /// RFC 6901 pointer into the guard.
        pointer: String,
    },
}

impl GuardError {
    /// The RFC 6901 pointer of the setting into the guard, e.g. `/protectedKinds/4`.
    pub fn pointer(&self) -> &str {
        match self {
            GuardError::Fraction { pointer, .. } | GuardError::Kind { pointer, .. } => pointer,
        }
    }
}

impl BlastRadiusGuard {
    /// Checks the settings: a fraction from 0 to 1, protected kinds of the form `group/Kind`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::BlastRadiusGuard;
    /// let mut g = BlastRadiusGuard::default();
    /// g.protected_kinds.push("apps/v1/Deployment".into());
    /// let e = g.check().unwrap_err();
    /// assert_eq!(e.to_string(),
    ///     "protected kind `apps/v1/Deployment` is not `group/Kind` (`Kind` for the core group; \
    ///      each a name or a glob)");
    /// assert_eq!(e.pointer(), "/protectedKinds/4");
    /// ```
    pub fn check(&self) -> Result<(), GuardError> {
        if let Some(f) = self.max_prune_fraction
            && !(0.0..=1.0).contains(&f)
        {
            return Err(GuardError::Fraction { value: f, pointer: "/maxPruneFraction".into() });
        }
        for (i, k) in self.protected_kinds.iter().enumerate() {
            if split_group_kind(k).is_none() {
                return Err(GuardError::Kind {
                    kind: k.clone(),
                    pointer: format!("/protectedKinds/{i}"),
                });
            }
        }
        Ok(())
    }

    /// Whether `group`/`kind` is protected: an entry's group and kind match them, each
    /// exactly or as a glob ([`crate::glob`]: `*`, `?`, `[...]`, `{a,b}`).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::BlastRadiusGuard;
    /// let mut g = BlastRadiusGuard::default();
    /// assert!(g.protects("", "PersistentVolumeClaim"));
    /// assert!(!g.protects("example.com", "PersistentVolumeClaim"));
    /// g.protected_kinds = vec!["*.cnpg.io/*".into(), "*/Secret".into()];
    /// assert!(g.protects("postgresql.cnpg.io", "Cluster"));
    /// assert!(g.protects("", "Secret"));
    /// assert!(!g.protects("apps", "StatefulSet"));
    /// ```
    pub fn protects(&self, group: &str, kind: &str) -> bool {
        self.protected_kinds.iter().any(|k| {
            split_group_kind(k).is_some_and(|(g, kd)| glob_match(g, group) && glob_match(kd, kind))
        })
    }
}

/// `group/Kind`, `/Kind` or `Kind` split into group and kind patterns; `None` when malformed
/// (an empty kind, a second `/`, a space, a glob that does not compile).
fn split_group_kind(s: &str) -> Option<(&str, &str)> {
    let (group, kind) = s.split_once('/').unwrap_or(("", s));
    let well_formed = !kind.is_empty()
        && !kind.contains('/')
        && !s.contains(' ')
        && Glob::new(group).is_some()
        && Glob::new(kind).is_some();
    well_formed.then_some((group, kind))
}

/// `group/Kind`, `Kind` for the core group.
fn group_kind(group: &str, kind: &str) -> String {
    if group.is_empty() { kind.to_string() } else { format!("{group}/{kind}") }
}

/// A limit of the guard: the stable codes of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum GuardLimit {
    /// More than `maxPruneFraction` of the live resources.
    MaxPruneFraction,
    /// More than `maxPruneCount` resources.
    MaxPruneCount,
    /// A resource of a protected kind.
    ProtectedKind,
}

impl GuardLimit {
    /// The code: `maxPruneFraction`, `maxPruneCount` or `protectedKind`.
    pub fn code(self) -> &'static str {
        match self {
            GuardLimit::MaxPruneFraction => "maxPruneFraction",
            GuardLimit::MaxPruneCount => "maxPruneCount",
            GuardLimit::ProtectedKind => "protectedKind",
        }
    }
}

/// A resource the sync would delete.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PrunedResource {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped resources.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Its kind is protected.
    pub protected: bool,
}

impl PrunedResource {
    /// Argo CD's resource key text, `group/Kind/namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}/{}", self.group, self.kind, self.namespace, self.name)
    }
}

/// A PersistentVolumeClaim of a pruned StatefulSet, and what becomes of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClaimFate {
    /// Namespace (the StatefulSet's).
    pub namespace: String,
    /// Name, `<template>-<statefulset>-<ordinal>`.
    pub name: String,
    /// The StatefulSet's name.
    pub stateful_set: String,
    /// The `volumeClaimTemplates` entry it comes from.
    pub template: String,
    /// The pod ordinal.
    pub ordinal: u64,
    /// It is among the live objects given (else it is expected from `spec.replicas`).
    pub found: bool,
    /// It stays after the prune, tracked by no one.
    pub survives: bool,
    /// Why: `whenDeleted Retain`, `whenDeleted Delete`, or `PrunePropagationPolicy=orphan`
    /// (the garbage collector leaves dependents of an orphaning delete).
    pub reason: String,
}

/// What the guard found about one sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GuardVerdict {
    /// The sync may go ahead: no limit is exceeded, or the override allows it.
    pub allowed: bool,
    /// The limits the sync exceeds, in [`GuardLimit`] order (empty: none).
    pub exceeded: Vec<GuardLimit>,
    /// The Application's `gitops-core.io/allow-prune` annotation let the sync through.
    pub overridden: bool,
    /// Every resource the sync would delete, sorted by group, kind, namespace, name.
    pub prunes: Vec<PrunedResource>,
    /// The app's resources that exist in the cluster (what the fraction is of).
    pub live_resources: usize,
    /// The PersistentVolumeClaims of the pruned StatefulSets, sorted by namespace,
    /// StatefulSet, template, ordinal.
    pub claims: Vec<ClaimFate>,
    /// What the guard has to say: the limits exceeded, the resources, the claims left behind
    /// and how to allow the sync; empty when there is nothing to say.
    pub message: String,
}

/// Looks an object up among `live` by group, kind, namespace (either side empty matches, for
/// cluster-scoped objects written with a namespace) and name.
/// `index` is the index of `live`.
fn find_live<'v>(
    live: &'v [Value],
    index: &ObjectIndex<'_>,
    r: &ResourceStatus,
) -> Option<&'v Value> {
    let key = (r.group.as_str(), r.kind.as_str(), r.namespace.as_str(), r.name.as_str());
    index.first_lenient(key, true).map(|i| &live[i])
}

/// The resources a sync would delete: those that require pruning, when the sync prunes, and
/// whose `Prune=` option (the live annotation, else the app's sync options) is not `false`.
/// `Prune=confirm` and `PruneLast=true` resources are deleted too (later), so they count.
/// Sorted by group, kind, namespace, name. `index` is the index of `live`.
fn prunes_among(
    guard: &BlastRadiusGuard,
    app: &Application,
    prune: bool,
    resources: &[ResourceStatus],
    live: &[Value],
    index: &ObjectIndex<'_>,
) -> Vec<PrunedResource> {
    if !prune {
        return Vec::new();
    }
    let options = AppOptions::new(app.spec.sync_policy.sync_options.clone());
    let mut out: Vec<PrunedResource> = resources
        .iter()
        .filter(|r| {
            r.requires_pruning
                && !prune_disabled(&ResourceOptions::of_some(find_live(live, index, r)), &options)
        })
        .map(|r| PrunedResource {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            protected: guard.protects(&r.group, &r.kind),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The ordinal in `name` when it is `<prefix><ordinal>` with a canonical decimal ordinal.
fn ordinal_of(name: &str, prefix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    if canonical { digits.parse().ok() } else { None }
}

/// The PersistentVolumeClaims of a StatefulSet (its live object), from its
/// `volumeClaimTemplates`: `<template>-<name>-<ordinal>` in its namespace, for the ordinals of
/// `spec.replicas` (default 1, from `spec.ordinals.start`, at most 1024 listed) and for every
/// claim of that pattern among `live`. `whenDeleted: Delete` in
/// `persistentVolumeClaimRetentionPolicy` has them deleted with the StatefulSet unless the
/// prune orphans dependents (`PrunePropagationPolicy=orphan`); otherwise (`Retain`, the
/// default) they survive. Sorted by template, then ordinal.
pub(crate) fn claims_of(
    stateful_set: &Value,
    live: &[Value],
    propagation: PropagationPolicy,
) -> Vec<ClaimFate> {
    let sts = ObjectRef::from_object_lossy(stateful_set);
    let spec = &stateful_set["spec"];
    let replicas = spec["replicas"].as_u64().unwrap_or(1);
    let start = spec["ordinals"]["start"].as_u64().unwrap_or(0);
    let when_deleted = spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"].as_str();
    let (survives, reason) = match (when_deleted, propagation) {
        (Some("Delete"), PropagationPolicy::Orphan) => (true, "PrunePropagationPolicy=orphan"),
        (Some("Delete"), _) => (false, "whenDeleted Delete"),
        _ => (true, "whenDeleted Retain"),
    };
    let mut templates: Vec<&str> = spec["volumeClaimTemplates"]
        .as_array()
        .map(|ts| ts.iter().filter_map(|t| t["metadata"]["name"].as_str()).collect())
        .unwrap_or_default();
    templates.sort_unstable();
    templates.dedup();
    // (template, ordinal) -> found among live
    let mut found: BTreeMap<(&str, u64), bool> = BTreeMap::new();
    for t in &templates {
        for ordinal in start..start.saturating_add(replicas.min(MAX_LISTED_ORDINALS)) {
            found.insert((t, ordinal), false);
        }
        let prefix = format!("{t}-{}-", sts.name);
        for claim in live {
            let c = ObjectRef::from_object_lossy(claim);
            if c.group.is_empty()
                && c.kind == "PersistentVolumeClaim"
                && c.namespace == sts.namespace
                && let Some(ordinal) = ordinal_of(&c.name, &prefix)
            {
                found.insert((t, ordinal), true);
            }
        }
    }
    found
        .into_iter()
        .map(|((template, ordinal), found)| ClaimFate {
            namespace: sts.namespace.clone(),
            name: format!("{template}-{}-{ordinal}", sts.name),
            stateful_set: sts.name.clone(),
            template: template.to_string(),
            ordinal,
            found,
            survives,
            reason: reason.to_string(),
        })
        .collect()
}

/// The value of [`ALLOW_PRUNE_ANNOTATION`]: `Ok(None)` when absent, `Err(value)` when it is
/// not a count.
fn allowance(app: &Application) -> Result<Option<u64>, &str> {
    match app.metadata.annotations.get(ALLOW_PRUNE_ANNOTATION) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| v.as_str()),
    }
}

/// Items joined by `, `.
fn list(items: impl IntoIterator<Item = String>) -> String {
    items.into_iter().collect::<Vec<_>>().join(", ")
}

impl BlastRadiusGuard {
    /// Measures a sync against the guard: which resources it would delete
    /// ([`GuardVerdict::prunes`]), out of how many live ones, which limits that exceeds, the PersistentVolumeClaims left behind
    /// by pruned StatefulSets (see [`GuardVerdict::claims`]; `live` should hold the app's live objects and
    /// the PersistentVolumeClaims of its namespaces, which the app does not track), and whether
    /// the Application's `gitops-core.io/allow-prune` annotation lets it through.
    ///
    /// A resource is live when it requires pruning, is `Synced`, or is found among `live`. The
    /// fraction limit is exceeded when `prunes / live resources > maxPruneFraction`, the count
    /// limit when `prunes > maxPruneCount`. `prune` is whether the sync prunes at all
    /// (`automated.prune` for an automated sync). The guard's settings are not checked here
    /// (see [`BlastRadiusGuard::check`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::ResourceStatus;
    /// use gitops_core::sync::{BlastRadiusGuard, GuardLimit};
    /// let app = gitops_core::config::Application::default();
    /// let r = |name: &str, prune: bool| -> ResourceStatus {
    ///     serde_json::from_value(serde_json::json!({"kind": "ConfigMap", "namespace": "shop",
    ///         "name": name, "status": "OutOfSync", "requiresPruning": prune})).unwrap()
    /// };
    /// let resources = [r("a", true), r("b", true), r("c", false)];
    /// let mut guard = BlastRadiusGuard::default();
    /// guard.max_prune_count = Some(1);
    /// // `c` has no live object: it is about to be created, so 2 of 2 live resources go.
    /// let v = guard.assess(&app, true, &resources, &[]);
    /// assert!(!v.allowed);
    /// assert_eq!(v.exceeded, [GuardLimit::MaxPruneFraction, GuardLimit::MaxPruneCount]);
    /// assert_eq!(v.message, "pruning 2 of 2 live resources exceeds maxPruneFraction 0.5; \
    ///     pruning 2 resources exceeds maxPruneCount 1; would prune /ConfigMap/shop/a, \
    ///     /ConfigMap/shop/b; to allow it, sync manually or set the annotation \
    ///     gitops-core.io/allow-prune: \"2\" on the Application");
    /// ```
    pub fn assess(
        &self,
        app: &Application,
        prune: bool,
        resources: &[ResourceStatus],
        live: &[Value],
    ) -> GuardVerdict {
        let guard = self;
        use crate::diff::SyncStatus;
        let index = ObjectIndex::of_objects(live);
        let pruned = prunes_among(guard, app, prune, resources, live, &index);
        let live_resources = resources
            .iter()
            .filter(|r| {
                r.requires_pruning
                    || r.status == SyncStatus::Synced
                    || find_live(live, &index, r).is_some()
            })
            .count();
        let count = pruned.len();
        let (exceeded, mut parts) = limits_exceeded(guard, &pruned, live_resources);
        let propagation =
            AppOptions::new(app.spec.sync_policy.sync_options.clone()).propagation_policy();
        let mut claims = Vec::new();
        for p in pruned.iter().filter(|p| p.group == "apps" && p.kind == "StatefulSet") {
            let r = ObjectRef::new("apps", "", "StatefulSet", &p.namespace, &p.name);
            if let Some(sts) = index.first(&r).map(|i| &live[i]) {
                claims.extend(claims_of(sts, live, propagation));
            }
        }
        if !exceeded.is_empty() {
            parts.push(format!("would prune {}", list(pruned.iter().map(PrunedResource::key))));
        }
        parts.extend(claim_notes(&pruned, &claims));
        let mut overridden = false;
        if !exceeded.is_empty() {
            let (allowed, note) = allowance_note(app, count);
            overridden = allowed;
            parts.push(note);
        }
        GuardVerdict {
            allowed: exceeded.is_empty() || overridden,
            exceeded,
            overridden,
            prunes: pruned,
            live_resources,
            claims,
            message: parts.join("; "),
        }
    }
}

/// The limits the prunes exceed, each with its reason.
fn limits_exceeded(
    guard: &BlastRadiusGuard,
    pruned: &[PrunedResource],
    live_resources: usize,
) -> (Vec<GuardLimit>, Vec<String>) {
    let count = pruned.len();
    let mut exceeded = Vec::new();
    let mut reasons = Vec::new();
    if let Some(f) = guard.max_prune_fraction
        && count > 0
        && (count as f64) / (live_resources as f64) > f
    {
        exceeded.push(GuardLimit::MaxPruneFraction);
        reasons.push(format!(
            "pruning {count} of {live_resources} live resources exceeds maxPruneFraction {f}"
        ));
    }
    if let Some(max) = guard.max_prune_count
        && count as u64 > max
    {
        exceeded.push(GuardLimit::MaxPruneCount);
        let noun = if count == 1 { "resource" } else { "resources" };
        reasons.push(format!("pruning {count} {noun} exceeds maxPruneCount {max}"));
    }
    let mut protected: Vec<String> =
        pruned.iter().filter(|p| p.protected).map(|p| group_kind(&p.group, &p.kind)).collect();
    protected.sort();
    protected.dedup();
    if !protected.is_empty() {
        exceeded.push(GuardLimit::ProtectedKind);
        let noun = if protected.len() == 1 { "kind" } else { "kinds" };
        reasons.push(format!("pruning protected {noun} {}", list(protected)));
    }
    (exceeded, reasons)
}

/// For each pruned StatefulSet, the claims that survive it untracked and those deleted with it.
fn claim_notes(pruned: &[PrunedResource], claims: &[ClaimFate]) -> Vec<String> {
    let mut notes = Vec::new();
    for p in pruned.iter().filter(|p| p.group == "apps" && p.kind == "StatefulSet") {
        let of = |survive: bool| -> Vec<&ClaimFate> {
            claims
                .iter()
                .filter(|c| {
                    c.namespace == p.namespace && c.stateful_set == p.name && c.survives == survive
                })
                .collect()
        };
        let names = |cs: &[&ClaimFate]| list(cs.iter().map(|c| c.name.clone()));
        let kept = of(true);
        if let Some(first) = kept.first() {
            notes.push(format!(
                "PersistentVolumeClaims that survive the prune of {} and that no one tracks ({}): {}",
                p.key(),
                first.reason,
                names(&kept)
            ));
        }
        let deleted = of(false);
        if let Some(first) = deleted.first() {
            notes.push(format!(
                "PersistentVolumeClaims deleted with {} ({}): {}",
                p.key(),
                first.reason,
                names(&deleted)
            ));
        }
    }
    notes
}

/// Whether the app's allow-prune annotation lets `count` prunes through, and what to say of it.
fn allowance_note(app: &Application, count: usize) -> (bool, String) {
    match allowance(app) {
        Ok(Some(n)) if count as u64 <= n => {
            (true, format!("allowed by {ALLOW_PRUNE_ANNOTATION}: \"{n}\""))
        }
        Ok(Some(n)) => (
            false,
            format!(
                "{ALLOW_PRUNE_ANNOTATION}: \"{n}\" allows fewer; to allow it, sync manually or \
                 set the annotation to \"{count}\""
            ),
        ),
        Ok(None) => (
            false,
            format!(
                "to allow it, sync manually or set the annotation {ALLOW_PRUNE_ANNOTATION}: \
                 \"{count}\" on the Application"
            ),
        ),
        Err(v) => (
            false,
            format!(
                "{ALLOW_PRUNE_ANNOTATION}: {v:?} is not a count; to allow it, sync manually or \
                 set the annotation to \"{count}\""
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn claims_of_lists_the_claims_of_the_replicas() {
        use crate::vocabulary::PropagationPolicy;
        let sts = serde_json::json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {"replicas": 2, "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        let claims = claims_of(&sts, &[], PropagationPolicy::Foreground);
        let names: Vec<_> = claims.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["data-db-0", "data-db-1"]);
        assert!(claims[0].survives);
    }

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::diff::SyncStatus;
    use crate::sync::decide::{AutoSyncInput, AutoSyncOperation, Decision};
    use crate::sync::{LiveObject, Observations, SyncRequest, TaskAction};

    const KINDS: [(&str, &str); 5] = [
        ("", "ConfigMap"),
        ("", "Secret"),
        ("", "PersistentVolumeClaim"),
        ("apps", "StatefulSet"),
        ("apps", "Deployment"),
    ];

    /// One resource: its kind, whether Git and the cluster have it, whether it is drifted,
    /// and whether its live object says `Prune=false`.
    fn resource() -> impl Strategy<Value = (usize, bool, bool, bool, bool)> {
        (0..KINDS.len(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>())
    }

    fn object(i: usize, kind: usize, prune_false: bool) -> Value {
        let (group, kind) = KINDS[kind];
        let api = if group.is_empty() { "v1".to_string() } else { format!("{group}/v1") };
        let mut o = json!({"apiVersion": api, "kind": kind,
            "metadata": {"name": format!("r{i}"), "namespace": "shop"}});
        if prune_false {
            o["metadata"]["annotations"] =
                json!({"argocd.argoproj.io/sync-options": "Prune=false"});
        }
        o
    }

    proptest! {
        /// Every claim listed is named `<template>-<statefulset>-<ordinal>` in the
        /// StatefulSet's namespace; the ordinals of `spec.replicas` are all listed; a live
        /// claim is listed (as found) exactly when its name is that of a template and a
        /// canonical ordinal.
        #[test]
        fn claims_are_the_statefulset_s_by_name(
            replicas in prop::option::of(0u64..4),
            start in prop::option::of(0u64..3),
            templates in prop::collection::vec(prop::sample::select(vec!["data", "wal", "data-db"]), 0..3),
            names in prop::collection::vec(
                (prop::sample::select(vec!["data-db-", "wal-db-", "data-db-db-", "data-dbx-",
                                           "data-", "x-db-"]),
                 prop::sample::select(vec!["0", "1", "2", "7", "01", "", "a", "-1"]),
                 any::<bool>()),
                0..8),
            delete in any::<bool>(),
        ) {
            let mut spec = json!({"volumeClaimTemplates":
                templates.iter().map(|t| json!({"metadata": {"name": t}})).collect::<Vec<_>>()});
            if let Some(r) = replicas { spec["replicas"] = json!(r); }
            if let Some(s) = start { spec["ordinals"] = json!({"start": s}); }
            if delete {
                spec["persistentVolumeClaimRetentionPolicy"] = json!({"whenDeleted": "Delete"});
            }
            let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "shop"}, "spec": spec});
            let live: Vec<Value> = names.iter().map(|(prefix, ordinal, same_ns)| json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": format!("{prefix}{ordinal}"),
                             "namespace": if *same_ns { "shop" } else { "other" }}})).collect();
            let claims = claims_of(&sts, &live, PropagationPolicy::Foreground);
            for c in &claims {
                prop_assert_eq!(&c.name, &format!("{}-db-{}", c.template, c.ordinal));
                prop_assert_eq!(c.namespace.as_str(), "shop");
                prop_assert!(templates.contains(&c.template.as_str()));
                prop_assert_eq!(c.survives, !delete);
            }
            let first = start.unwrap_or(0);
            for t in &templates {
                for o in first..first + replicas.unwrap_or(1) {
                    prop_assert!(claims.iter().any(|c| c.template == *t && c.ordinal == o));
                }
            }
            for l in &live {
                let name = l["metadata"]["name"].as_str().unwrap_or("");
                let ours = l["metadata"]["namespace"] == "shop" && templates.iter().any(|t| {
                    name.strip_prefix(&format!("{t}-db-")).is_some_and(|n| {
                        n.parse::<u64>().is_ok_and(|v| v.to_string() == n)
                    })
                });
                let listed = l["metadata"]["namespace"] == "shop"
                    && claims.iter().any(|c| c.found && c.name == name);
                prop_assert_eq!(ours, listed, "{}", name);
            }
        }

        /// With the guard on and no override, an automated sync that starts never deletes a
        /// resource of a protected kind: the plan of the operation it starts has no such
        /// delete.
        #[test]
        fn an_automated_sync_never_prunes_a_protected_kind(
            resources in prop::collection::vec(resource(), 0..12),
            protected in prop::collection::vec(0..KINDS.len(), 0..4),
            prune in any::<bool>(),
            app_prune_false in any::<bool>(),
            fraction in prop::option::of(0.0f64..=1.0),
            count in prop::option::of(0u64..5),
        ) {
            let options: Vec<String> =
                if app_prune_false { vec!["Prune=false".into()] } else { Vec::new() };
            let app = Application::from_value(&json!({
                "metadata": {"name": "shop", "namespace": "argocd"},
                "spec": {"destination": {"namespace": "shop"},
                         "syncPolicy": {"automated": {"prune": prune, "allowEmpty": true},
                                        "syncOptions": options}}
            })).unwrap();
            let (desired, live, statuses) = sides(&resources);
            let guard = BlastRadiusGuard {
                max_prune_fraction: fraction,
                max_prune_count: count,
                protected_kinds: protected
                    .iter()
                    .map(|&k| group_kind(KINDS[k].0, KINDS[k].1))
                    .collect(),
            };
            let mut input = AutoSyncInput::new(
                SyncStatus::OutOfSync, statuses, vec!["b".repeat(40)], 0);
            input.guard = Some(guard.clone());
            input.live = live.clone();
            let d = input.decide(&app);
            // The guard only ever turns a sync into a refusal: otherwise the decision is
            // Argo CD's, verdict aside.
            let argo = (AutoSyncInput { guard: None, ..input.clone() }).decide(&app);
            match &d.guard {
                Some(v) if !v.allowed => {
                    prop_assert!(argo.sync && !d.sync && d.operation.is_none());
                    prop_assert!(d.condition.as_deref().is_some_and(|c| c.starts_with(
                        "Skipping sync attempt to [bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb]: \
                         blast-radius guard: ")));
                }
                _ => prop_assert_eq!(&Decision { guard: None, ..d.clone() }, &argo),
            }
            if let Some(op) = d.operation.clone().filter(|_| d.sync) {
                plan_deletes_what_the_guard_counted(&app, &guard, &d, &op, desired, &live, count)?;
            }
        }
    }

    /// Desired objects, live objects and resource statuses of generated resources (kind, in
    /// Git, in the cluster, drifted, `Prune=false` on the live object).
    fn sides(
        resources: &[(usize, bool, bool, bool, bool)],
    ) -> (Vec<Value>, Vec<Value>, Vec<ResourceStatus>) {
        let mut desired = Vec::new();
        let mut live = Vec::new();
        let mut statuses = Vec::new();
        for (i, &(kind, in_git, in_cluster, drifted, prune_false)) in resources.iter().enumerate() {
            if !in_git && !in_cluster {
                continue;
            }
            if in_git {
                desired.push(object(i, kind, false));
            }
            if in_cluster {
                live.push(object(i, kind, prune_false));
            }
            let synced = in_git && in_cluster && !drifted;
            statuses.push(
                serde_json::from_value::<ResourceStatus>(json!({
                    "group": KINDS[kind].0, "kind": KINDS[kind].1, "namespace": "shop",
                    "name": format!("r{i}"),
                    "status": if synced { "Synced" } else { "OutOfSync" },
                    "requiresPruning": in_cluster && !in_git,
                }))
                .unwrap(),
            );
        }
        (desired, live, statuses)
    }

    /// The plan of the operation an automated sync starts deletes no protected kind, and
    /// deletes what the guard counted.
    fn plan_deletes_what_the_guard_counted(
        app: &Application,
        guard: &BlastRadiusGuard,
        d: &Decision,
        op: &AutoSyncOperation,
        desired: Vec<Value>,
        live: &[Value],
        count: Option<u64>,
    ) -> Result<(), TestCaseError> {
        let mut request = SyncRequest::for_app(app, desired, &op.revisions[0], 0);
        request.prune = op.prune;
        let observations = Observations {
            live: live.iter().map(|o| LiveObject::new(o.clone(), None)).collect(),
            ..Observations::default()
        };
        let p = request.plan(&observations);
        let deletes: Vec<String> =
            p.tasks().filter(|t| t.action == TaskAction::Delete).map(|t| t.key.key()).collect();
        for t in p.tasks().filter(|t| t.action == TaskAction::Delete) {
            prop_assert!(!guard.protects(&t.key.group, &t.key.kind), "deletes {:?}", deletes);
        }
        // What the guard counted is what the plan deletes.
        let verdict = d.guard.as_ref().expect("the guard ran");
        let counted: Vec<String> = verdict.prunes.iter().map(|p| p.key()).collect();
        let mut planned = deletes.clone();
        planned.sort();
        prop_assert_eq!(counted, planned);
        if let Some(max) = count {
            prop_assert!(verdict.prunes.len() as u64 <= max);
        }
        Ok(())
    }
}
