//! `ignoreResourceUpdates`: whether a watch event on an object needs the app refreshed, as
//! Argo CD's cluster cache decides it (`skipResourceUpdate`, `shouldHashManifest`).
//!
//! Argo CD skips an update when the feature is on (`resource.ignoreResourceUpdatesEnabled`,
//! on unless set to false), both versions are hashed, their hashes are equal and their health
//! status is the same. An object is hashed when its tracking names an app, when it is an
//! Application, or when its `argocd.argoproj.io/ignore-resource-updates` annotation is true.
//! The hash is taken after removing the `ignoreResourceUpdates` paths of `argocd-cm` (and the
//! `ignoreDifferences` ones with `resource.compareoptions`
//! `ignoreDifferencesOnResourceUpdates: true`, `/status` among them), and, for every kind,
//! `/metadata/resourceVersion`, `/metadata/generation` and `/metadata/managedFields`. Here the
//! two normalised objects are compared instead of their hashes.

use serde_json::Value;

use super::{IgnoreError, IgnoreNormalizer};
use crate::config::Settings;
use crate::health::HealthStatus;
use crate::object::annotation;
use crate::vocabulary::IGNORE_RESOURCE_UPDATES_ANNOTATION;

/// The paths every kind's update check leaves out.
const ALWAYS_IGNORED: [&str; 3] =
    ["/metadata/resourceVersion", "/metadata/generation", "/metadata/managedFields"];

/// One watch event: the object before and after, with the health status the host assessed
/// for each (`None` when the kind has no health check).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ResourceUpdate<'a> {
    /// The object before the event.
    pub old: &'a Value,
    /// The object after the event.
    pub new: &'a Value,
    /// The old object's health status.
    pub old_health: Option<HealthStatus>,
    /// The new object's health status.
    pub new_health: Option<HealthStatus>,
}

impl<'a> ResourceUpdate<'a> {
    /// An event from `old` to `new`, with their health statuses.
    pub fn new(
        old: &'a Value,
        new: &'a Value,
        old_health: Option<HealthStatus>,
        new_health: Option<HealthStatus>,
    ) -> Self {
        ResourceUpdate { old, new, old_health, new_health }
    }
}

/// The settings the update check normalises with: each override's `ignoreResourceUpdates`
/// (plus its `ignoreDifferences` when asked) in place of its `ignoreDifferences`, and the
/// paths every kind leaves out.
fn update_settings(settings: &Settings) -> Settings {
    let mut s = settings.clone();
    for o in s.overrides.values_mut() {
        let mut rules = std::mem::take(&mut o.ignore_resource_updates);
        if settings.ignore_differences_on_resource_updates {
            let d = &o.ignore_differences;
            rules.json_pointers.extend(d.json_pointers.iter().cloned());
            rules.jq_path_expressions.extend(d.jq_path_expressions.iter().cloned());
            rules.managed_fields_managers.extend(d.managed_fields_managers.iter().cloned());
        }
        o.ignore_differences = rules;
    }
    let all = s.overrides.entry("*/*".to_string()).or_default();
    for p in ALWAYS_IGNORED {
        if !all.ignore_differences.json_pointers.iter().any(|q| q == p) {
            all.ignore_differences.json_pointers.push(p.to_string());
        }
    }
    s
}

/// Whether Argo CD hashes an object for the update check (`shouldHashManifest`).
fn hashed(obj: &Value, settings: &Settings) -> bool {
    let application = obj.get("kind").and_then(Value::as_str) == Some("Application")
        && obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| crate::object::split_api_version(v).0 == "argoproj.io");
    if settings.tracked_app(obj).is_some() || application {
        return true;
    }
    annotation(obj, IGNORE_RESOURCE_UPDATES_ANNOTATION)
        .and_then(crate::config::parse_go_bool)
        .unwrap_or(false)
}

impl ResourceUpdate<'_> {
    /// Whether a watch event needs the app refreshed: `false` only when Argo CD would skip it
    /// (see the module documentation).
    ///
    /// # Errors
    ///
    /// An ignore rule of `argocd-cm` that does not compile or stops at a limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::ignore::ResourceUpdate;
    /// use gitops_core::config::Settings;
    /// use gitops_core::health::HealthStatus;
    /// use serde_json::json;
    /// let cm = json!({"data": {"resource.customizations.ignoreResourceUpdates.all":
    ///     "jsonPointers:\n- /status\n"}});
    /// let settings = Settings::from_config_map(&cm).unwrap();
    /// let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
    ///     "resourceVersion": "1", "annotations": {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:ns/a"}},
    ///     "status": {"x": 1}});
    /// let mut new = old.clone();
    /// new["metadata"]["resourceVersion"] = json!("2");
    /// new["status"]["x"] = json!(2);
    /// let healthy = Some(HealthStatus::Healthy);
    /// assert!(!ResourceUpdate::new(&old, &new, healthy, healthy).needs_refresh(&settings).unwrap());
    /// new["data"] = json!({"k": "v"});
    /// assert!(ResourceUpdate::new(&old, &new, healthy, healthy).needs_refresh(&settings).unwrap());
    /// ```
    pub fn needs_refresh(&self, settings: &Settings) -> Result<bool, IgnoreError> {
        let update = self;
        if !settings.ignore_resource_updates_enabled
            || update.old_health != update.new_health
            || !hashed(update.old, settings)
            || !hashed(update.new, settings)
        {
            return Ok(true);
        }
        let normalizer =
            IgnoreNormalizer::new(&[], &update_settings(settings))?.with_annotation(false);
        let (mut old, mut new) = (update.old.clone(), update.new.clone());
        normalizer.normalize(&mut old)?;
        normalizer.normalize(&mut new)?;
        Ok(old != new)
    }
}
