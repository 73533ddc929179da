//! The seam to the `ignoreDifferences` engine (`crate::ignore`) and the known-types
//! normaliser: everything the pipeline asks of them goes through [`AppNormalizer`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::{DiffError, Normalizer, normalize_known_types};
use crate::config::{IgnoreDifferences, KnownTypeField, Settings};
use crate::ignore::AnnotationRule;
use crate::object::ObjectRef;

/// The app's ignore rules merged with `argocd-cm`'s (Argo CD 3.6.2
/// util/argo/normalizers/diff_normalizer.go `NewIgnoreNormalizer`).
pub(crate) struct IgnoreRules<'a> {
    inner: Compiled<'a>,
}

/// Rules compiled for this comparison, or compiled once by the host and lent to it.
enum Compiled<'a> {
    Owned(Box<crate::ignore::IgnoreNormalizer>),
    Borrowed(&'a crate::ignore::IgnoreNormalizer),
}

impl<'a> IgnoreRules<'a> {
    /// Builds the rules; a jq expression that does not parse is an error naming the rule.
    /// `prebuilt`, when given, is used as it is (it was built from the same rules).
    pub(crate) fn new(
        rules: &[IgnoreDifferences],
        settings: &Settings,
        prebuilt: Option<&'a crate::ignore::IgnoreNormalizer>,
        interrupt: Option<&std::sync::Arc<dyn crate::script::Interrupt>>,
    ) -> Result<Self, DiffError> {
        if let Some(n) = prebuilt {
            return Ok(IgnoreRules { inner: Compiled::Borrowed(n) });
        }
        let mut inner = crate::ignore::IgnoreNormalizer::new(rules, settings)
            .map_err(|e| DiffError::IgnoreRules { message: e.to_string() })?;
        if let Some(i) = interrupt {
            inner = inner.with_interrupt(std::sync::Arc::clone(i));
        }
        Ok(IgnoreRules { inner: Compiled::Owned(Box::new(inner)) })
    }

    fn compiled(&self) -> &crate::ignore::IgnoreNormalizer {
        match &self.inner {
            Compiled::Owned(n) => n,
            Compiled::Borrowed(n) => n,
        }
    }

    /// Applies every matching JSON-pointer and jq rule to one object. A step that removes
    /// nothing is skipped, as Argo CD logs it and carries on; a jq expression a limit stopped
    /// is the error returned.
    pub(crate) fn normalize(&self, obj: &mut Value) -> Result<(), crate::ignore::IgnoreError> {
        self.compiled().normalize(obj)
    }

    /// The merged `managedFieldsManagers` for an object (the lookup of `NewIgnoreNormalizer`), then
    /// those its own annotation rule names, without duplicates.
    pub(crate) fn managers(&self, object: &ObjectRef, own: Option<&AnnotationRule>) -> Vec<String> {
        let mut out = self.compiled().managed_fields_managers(object);
        for m in own.iter().flat_map(|o| o.managed_fields_managers()) {
            if !out.contains(m) {
                out.push(m.clone());
            }
        }
        out
    }

    /// Whether a jq rule (the app's, `argocd-cm`'s or the object's own) may look at the
    /// `metadata.managedFields` of an object of `group` and `kind` (`None`: of any object):
    /// the app's and `argocd-cm`'s by their footprints, the object's own whenever it has a jq
    /// step.
    pub(crate) fn may_read_managed_fields(
        &self,
        of: Option<(&str, &str)>,
        own: Option<&AnnotationRule>,
    ) -> bool {
        self.compiled().may_run_jq_reading(of, &["metadata", "managedFields"])
            || own.is_some_and(AnnotationRule::has_jq)
    }

    /// The rule a desired object declares in its `gitops-core.io/ignore-differences`
    /// annotation, when `enabled` and the compiled rules allow it. An invalid annotation fails
    /// the comparison, like an invalid app rule.
    pub(crate) fn annotation_rule(
        &self,
        desired: &Value,
        enabled: bool,
    ) -> Result<Option<AnnotationRule>, DiffError> {
        if !enabled {
            return Ok(None);
        }
        self.compiled()
            .annotation_rule(desired)
            .map_err(|e| DiffError::IgnoreRules { message: e.to_string() })
    }
}

/// Argo CD's full normaliser for an app: ignore rules, then known types.
pub(crate) struct AppNormalizer<'a> {
    pub(crate) ignore: IgnoreRules<'a>,
    known_types: BTreeMap<(String, String), Vec<KnownTypeField>>,
    /// The first jq rule a limit stopped when the app's normaliser is used directly (each
    /// resource's own normaliser keeps its own).
    limit: std::sync::Mutex<Option<crate::ignore::IgnoreError>>,
}

impl<'a> AppNormalizer<'a> {
    /// Builds the normaliser from the app's rules and `argocd-cm`, or from rules the host
    /// compiled once.
    pub(crate) fn new(
        rules: &[IgnoreDifferences],
        settings: &Settings,
        prebuilt: Option<&'a crate::ignore::IgnoreNormalizer>,
        interrupt: Option<&std::sync::Arc<dyn crate::script::Interrupt>>,
    ) -> Result<Self, DiffError> {
        let ignore = IgnoreRules::new(rules, settings, prebuilt, interrupt)?;
        let mut known_types = BTreeMap::new();
        for (key, o) in &settings.overrides {
            if o.known_type_fields.is_empty() {
                continue;
            }
            // Known-type overrides are looked up by exact group and kind (no globs).
            let (group, kind) = match key.split_once('/') {
                Some((g, k)) => (g.to_string(), k.to_string()),
                None => (String::new(), key.clone()),
            };
            known_types.insert((group, kind), o.known_type_fields.clone());
        }
        // The built-in Rollout entry, unless the user configured Rollout.
        known_types
            .entry(("argoproj.io".into(), "Rollout".into()))
            .or_insert_with(|| crate::ignore::default_known_type_fields("argoproj.io", "Rollout"));
        Ok(AppNormalizer { ignore, known_types, limit: std::sync::Mutex::default() })
    }
}

/// Keeps the first jq rule a limit stopped.
fn note_limit(
    slot: &std::sync::Mutex<Option<crate::ignore::IgnoreError>>,
    result: Result<(), crate::ignore::IgnoreError>,
) {
    use crate::ignore::IgnoreError;
    if let Err(e @ (IgnoreError::JqLimit { .. } | IgnoreError::JqInterrupted { .. })) = result {
        slot.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
    }
}

impl<'a> AppNormalizer<'a> {
    /// The normaliser of one resource: the app's, with the rule the resource's desired
    /// object declares applied after the app and `argocd-cm` rules.
    pub(crate) fn for_resource<'n>(
        &'n self,
        own: Option<&'n AnnotationRule>,
    ) -> ResourceNormalizer<'n, 'a> {
        ResourceNormalizer { app: self, own, limit: std::sync::Mutex::default() }
    }

    fn normalize_with(
        &self,
        obj: &mut Value,
        own: Option<&AnnotationRule>,
        limit: &std::sync::Mutex<Option<crate::ignore::IgnoreError>>,
    ) {
        note_limit(limit, self.ignore.normalize(obj));
        if let Some(own) = own {
            // As for the app rules: only a limit counts (a non-object cannot reach here).
            note_limit(limit, own.normalize(obj));
        }
        // The object's kind read in place, and its group only when a configured kind is it
        // (no identity copied or read whole for each object).
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let fields = if self.known_types.keys().any(|(_, k)| k == kind) {
            let group = crate::object::RefParts::of(obj).group;
            self.known_types.iter().find(|((g, k), _)| g == group && k == kind).map(|(_, f)| f)
        } else {
            None
        };
        if let Some(fields) = fields {
            // Errors are logged by Argo CD and the object is compared as it is.
            let _ = normalize_known_types(obj, fields);
        }
    }
}

impl Normalizer for AppNormalizer<'_> {
    fn normalize(&self, obj: &mut Value) {
        self.normalize_with(obj, None, &self.limit);
    }
}

/// One resource's normaliser: the app's rules and the resource's own annotation rule.
pub(crate) struct ResourceNormalizer<'n, 'a> {
    app: &'n AppNormalizer<'a>,
    own: Option<&'n AnnotationRule>,
    /// The first jq rule a limit stopped on this resource's objects.
    limit: std::sync::Mutex<Option<crate::ignore::IgnoreError>>,
}

impl ResourceNormalizer<'_, '_> {
    /// The jq rule a limit or the host's interrupt stopped while normalizing this resource's
    /// objects, as the comparison error it makes.
    pub(crate) fn take_limit(&self) -> Option<DiffError> {
        let e = self.limit.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        let message = e.to_string();
        Some(match e {
            crate::ignore::IgnoreError::JqInterrupted { .. } => DiffError::Interrupted { message },
            _ => DiffError::IgnoreLimit { message },
        })
    }
}

impl Normalizer for ResourceNormalizer<'_, '_> {
    fn normalize(&self, obj: &mut Value) {
        self.app.normalize_with(obj, self.own, &self.limit);
    }
}
