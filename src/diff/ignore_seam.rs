//! The seam to the `ignoreDifferences` engine (`crate::ignore`) and the known-types
//! normaliser: everything the pipeline asks of them goes through [`AppNormalizer`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::{DiffError, Normalizer, normalize_known_types};
use crate::config::{IgnoreDifferences, KnownTypeField, Settings};
use crate::object::ObjectRef;

/// The app's ignore rules merged with `argocd-cm`'s (spec §7.3, §7.4).
pub(crate) struct IgnoreRules<'a> {
    inner: Compiled<'a>,
}

/// Rules compiled for this comparison, or compiled once by the host and lent to it.
enum Compiled<'a> {
    Owned(crate::ignore::IgnoreNormalizer),
    Borrowed(&'a crate::ignore::IgnoreNormalizer),
}

impl<'a> IgnoreRules<'a> {
    /// Builds the rules; a jq expression that does not parse is an error naming the rule.
    /// `prebuilt`, when given, is used as it is (it was built from the same rules).
    pub(crate) fn new(
        rules: &[IgnoreDifferences],
        settings: &Settings,
        prebuilt: Option<&'a crate::ignore::IgnoreNormalizer>,
    ) -> Result<Self, DiffError> {
        if let Some(n) = prebuilt {
            return Ok(IgnoreRules { inner: Compiled::Borrowed(n) });
        }
        let inner = crate::ignore::IgnoreNormalizer::new(rules, settings)
            .map_err(|e| DiffError::IgnoreRules { message: e.to_string() })?;
        Ok(IgnoreRules { inner: Compiled::Owned(inner) })
    }

    fn compiled(&self) -> &crate::ignore::IgnoreNormalizer {
        match &self.inner {
            Compiled::Owned(n) => n,
            Compiled::Borrowed(n) => n,
        }
    }

    /// Applies every matching JSON-pointer and jq rule to one object. Errors are skipped, as
    /// Argo CD logs them and carries on.
    pub(crate) fn normalize(&self, obj: &mut Value) {
        let _ = self.compiled().normalize(obj);
    }

    /// The merged `managedFieldsManagers` for an object (spec §7.3 lookup).
    pub(crate) fn managers(&self, object: &ObjectRef) -> Vec<String> {
        self.compiled().managed_fields_managers(object)
    }
}

/// Argo CD's full normaliser for an app: ignore rules, then known types.
pub(crate) struct AppNormalizer<'a> {
    pub(crate) ignore: IgnoreRules<'a>,
    known_types: BTreeMap<(String, String), Vec<KnownTypeField>>,
}

impl<'a> AppNormalizer<'a> {
    /// Builds the normaliser from the app's rules and `argocd-cm`, or from rules the host
    /// compiled once.
    pub(crate) fn new(
        rules: &[IgnoreDifferences],
        settings: &Settings,
        prebuilt: Option<&'a crate::ignore::IgnoreNormalizer>,
    ) -> Result<Self, DiffError> {
        let ignore = IgnoreRules::new(rules, settings, prebuilt)?;
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
        known_types.entry(("argoproj.io".into(), "Rollout".into())).or_insert_with(|| {
            vec![KnownTypeField {
                field: "spec.template.spec".into(),
                type_: "core/v1/PodSpec".into(),
            }]
        });
        Ok(AppNormalizer { ignore, known_types })
    }
}

impl Normalizer for AppNormalizer<'_> {
    fn normalize(&self, obj: &mut Value) {
        self.ignore.normalize(obj);
        let r = ObjectRef::from_object_lossy(obj);
        if let Some(fields) = self.known_types.get(&(r.group, r.kind)) {
            // Errors are logged by Argo CD and the object is compared as it is.
            let _ = normalize_known_types(obj, fields);
        }
    }
}
