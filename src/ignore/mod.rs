//! `ignoreDifferences`: which rules apply to an object, and removing the fields they name
//! (JSON pointers, jq path expressions); `RespectIgnoreDifferences`.
//!
//! Rules come from two places: the Application's `spec.ignoreDifferences` and the
//! `resource.customizations.ignoreDifferences.*` keys of `argocd-cm` (with `/status` added by
//! `resource.compareoptions`), both read into [`crate::config`]. An [`IgnoreNormalizer`] is
//! built once from both and applied to every object (desired, live and last-applied alike),
//! the way Argo CD's `NewIgnoreNormalizer` is.
//!
//! A third place is this crate's own: a desired object's `gitops-core.io/ignore-differences`
//! annotation ([`AnnotationRule`], [`AnnotationRule::ANNOTATION`]) declares a rule for that
//! object alone, applied after the app and `argocd-cm` rules. Only the desired (Git) object's
//! annotation is read, never the live one's. [`IgnoreNormalizer::annotation_rule`] reads it
//! (unless turned off with [`IgnoreNormalizer::with_annotation`]); the app diff and
//! [`IgnoreNormalizer::respect_ignore_differences`] apply it.
//!
//! ## Matching (Argo CD 3.6.2 util/argo/normalizers/diff_normalizer.go `NewIgnoreNormalizer`)
//!
//! Two matchers exist, as in Argo CD:
//!
//! - for JSON pointers and jq expressions, an app rule matches when its `group` and `kind`
//!   globs match the object's group and kind and its `name` and `namespace` are empty or
//!   equal; an `argocd-cm` override matches when the group and kind of its key (`group/Kind`,
//!   `Kind` for the core group) match as globs, so `*/*` matches everything;
//! - for `managedFieldsManagers` ([`IgnoreNormalizer::managed_fields_managers`]), overrides
//!   are looked up by the exact key `group/Kind` (`/Kind` for the core group) and `*/*`, with
//!   no globbing, then the app rules; a core-group override keyed `Kind` is never found.
//!
//! Rules apply in a fixed order: app rules in their order, then overrides in byte order of
//! their keys. Argo CD walks the overrides in Go map order, which is unspecified; the order
//! only matters for index-based pointers that two overrides both name.
//!
//! ## Removing fields (diff_normalizer.go `ignoreNormalizer.Normalize`)
//!
//! A JSON pointer removes like a JSON Patch `remove` in evanphx/json-patch: `~1` is `/`, `~0`
//! is `~`, negative array indices count from the end, and a missing path removes nothing.
//! A jq expression `E` deletes what `path(E)` selects, as `del(E)`; an expression that selects
//! nothing deletes nothing, and one that fails on an object (iterating `null`) is skipped for
//! that object. Misses and failures never fail the normalization: they are returned as
//! [`IgnoreNote`]s by [`IgnoreNormalizer::normalize_with_notes`], where Argo CD logs them.
//! jq expressions are limited to a path-selecting subset (see the `jq` feature docs of the
//! crate and `src/script/jq.rs`), and one outside it fails construction with an error naming
//! the rule, the expression and the position, never a silent ignore-all.

mod annotation;
#[cfg(feature = "jq")]
mod jq_delete;
mod pointer;
mod updates;

use serde::Serialize;
use serde_json::Value;

use crate::config::{IgnoreDifferences, KnownTypeField, Settings};
use crate::glob::Glob;
use crate::object::{ObjectRef, type_name};

pub use annotation::AnnotationRule;
use annotation::IGNORE_DIFFERENCES_ANNOTATION;
pub use updates::ResourceUpdate;

/// An error building or applying ignore rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IgnoreError {
    /// A jq expression is not a valid path expression, or is outside the accepted subset.
    #[error("{rule}: jq path expression `{expression}` at byte {position}: {message}")]
    InvalidJq {
        /// The rule: `ignoreDifferences[0]` for the first rule of the Application,
        /// ``argocd-cm override `apps/Deployment` `` for an `argocd-cm` override.
        rule: String,
        /// The expression, cut to its first 60 characters when longer than 80.
        expression: String,
        /// Byte offset of the problem in the expression.
        position: usize,
        /// What is wrong.
        message: String,
    },
    /// A jq expression was given but the crate was built without the `jq` feature.
    #[error("{rule}: jq path expression `{expression}` needs the `jq` feature")]
    JqUnavailable {
        /// The rule.
        rule: String,
        /// The expression, cut as in [`IgnoreError::InvalidJq`].
        expression: String,
    },
    /// A limit of this engine stopped a jq expression on an object (its cost budget, the
    /// host's interrupt, the number of paths it selects, the object's depth): the rule was not
    /// applied, so the object cannot be compared or synced as if it had been.
    #[error(
        "{rule}: jq path expression `{expression}` on {object}: {message}; the rule was not applied"
    )]
    JqLimit {
        /// The rule.
        rule: String,
        /// The expression, cut as in [`IgnoreError::InvalidJq`].
        expression: String,
        /// The object.
        object: Box<ObjectRef>,
        /// Which limit, with its value.
        message: String,
    },
    /// The host's interrupt (the CLI's and `serve`'s wall-clock backstop of 1 s) stopped a
    /// jq expression on an object. Not a limit of the input: the same rule may finish on
    /// another run, so the caller should retry rather than decide anything from it; the rule
    /// was not applied.
    #[error(
        "{rule}: jq path expression `{expression}` on {object}: {message}; the rule was not applied (the host's backstop, not a limit of the input: retry)"
    )]
    JqInterrupted {
        /// The rule.
        rule: String,
        /// The expression, cut as in [`IgnoreError::InvalidJq`].
        expression: String,
        /// The object.
        object: Box<ObjectRef>,
        /// The host's reason.
        message: String,
    },
    /// The object to normalize is not a JSON object.
    #[error("cannot normalize {found}: expected an object")]
    NotAnObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// The target and live lists given to `RespectIgnoreDifferences` differ in length.
    #[error("{targets} targets but {lives} live objects: the lists must pair up")]
    Unpaired {
        /// Number of targets.
        targets: usize,
        /// Number of live objects.
        lives: usize,
    },
    /// The `gitops-core.io/ignore-differences` annotation of a desired object is not a rule:
    /// `path` is the RFC 6901 pointer of the entry at fault inside the annotation's mapping
    /// (`/jsonPointers/1`), empty when the whole value is at fault.
    #[error("{object}: annotation `{annotation}`{}: {message}", at(path))]
    InvalidAnnotation {
        /// The annotated object.
        object: Box<ObjectRef>,
        /// The annotation key, [`AnnotationRule::ANNOTATION`].
        annotation: &'static str,
        /// RFC 6901 pointer of the entry inside the annotation's value.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Copying the live values into a target failed.
    #[error("{object}: cannot patch at {path}: {message}")]
    Patch {
        /// The object.
        object: Box<ObjectRef>,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// ` at <path>`, or nothing for an empty path.
fn at(path: &str) -> String {
    if path.is_empty() { String::new() } else { format!(" at {path}") }
}

/// A rule step that removed nothing from an object, with why. Argo CD logs these and carries
/// on; the normalization result is the same with or without them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IgnoreNote {
    /// The object.
    pub object: ObjectRef,
    /// The rule, named as in [`IgnoreError::InvalidJq`].
    pub rule: String,
    /// The JSON pointer or jq expression.
    pub step: String,
    /// What happened.
    pub message: String,
    /// Whether Argo CD treats it as expected and does not log it (a JSON pointer whose path
    /// or key is missing).
    pub expected: bool,
}

/// Where a rule comes from; its [`std::fmt::Display`] names it in errors and notes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RuleSource {
    App(usize),
    Override(String),
    Annotation,
}

impl std::fmt::Display for RuleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleSource::App(i) => write!(f, "ignoreDifferences[{i}]"),
            RuleSource::Override(key) => write!(f, "argocd-cm override `{key}`"),
            RuleSource::Annotation => write!(f, "annotation `{IGNORE_DIFFERENCES_ANNOTATION}`"),
        }
    }
}

/// Which objects a rule applies to (the glob matcher of diff_normalizer.go `NewIgnoreNormalizer`).
#[derive(Debug, Clone)]
struct Selector {
    group: Pattern,
    kind: Pattern,
    /// Exact name; empty matches any.
    name: String,
    /// Exact namespace; empty matches any.
    namespace: String,
}

/// A group or kind pattern, compiled once: text without glob syntax matches itself only,
/// `*` matches anything (as the glob does, without reading the text), and a malformed glob
/// matches nothing (as `crate::glob::glob_match`).
#[derive(Debug, Clone)]
enum Pattern {
    Exact(String),
    Any,
    Glob(Option<Glob>),
}

impl Pattern {
    fn new(text: &str) -> Pattern {
        if text == "*" {
            Pattern::Any
        } else if text.contains(['*', '?', '[', '{', '\\']) {
            Pattern::Glob(Glob::new(text))
        } else {
            Pattern::Exact(text.to_string())
        }
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Exact(p) => p == text,
            Pattern::Any => true,
            Pattern::Glob(g) => g.as_ref().is_some_and(|g| g.matches(text)),
        }
    }
}

impl Selector {
    fn new(group: &str, kind: &str, name: &str, namespace: &str) -> Selector {
        Selector {
            group: Pattern::new(group),
            kind: Pattern::new(kind),
            name: name.to_string(),
            namespace: namespace.to_string(),
        }
    }

    fn matches(&self, r: &ObjectRef) -> bool {
        self.matches_parts(&r.group, &r.kind, &r.namespace, &r.name)
    }

    /// [`Selector::matches`] on an identity's parts.
    fn matches_parts(&self, group: &str, kind: &str, namespace: &str, name: &str) -> bool {
        self.group.matches(group)
            && self.kind.matches(kind)
            && (self.name.is_empty() || self.name == name)
            && (self.namespace.is_empty() || self.namespace == namespace)
    }
}

/// Splits an override key into group and kind: `a/b` → (a, b), `b` → ("", b), more than one
/// `/` → ("", ""), which matches nothing (Argo CD logs a warning).
fn override_group_kind(key: &str) -> (String, String) {
    match key.split('/').collect::<Vec<_>>().as_slice() {
        [kind] => (String::new(), (*kind).to_string()),
        [group, kind] => ((*group).to_string(), (*kind).to_string()),
        _ => (String::new(), String::new()),
    }
}

#[derive(Debug)]
enum Step {
    /// A JSON pointer, as written and parsed once.
    Pointer(String, pointer::Pointer),
    #[cfg(feature = "jq")]
    Jq(String, std::sync::Arc<crate::script::jq::JqPath>),
}

impl Step {
    /// A JSON pointer step, parsed once here rather than on each object.
    fn pointer(text: String) -> Step {
        let parsed = pointer::Pointer::new(&text);
        Step::Pointer(text, parsed)
    }

    /// Whether the step is a jq expression.
    fn is_jq(&self) -> bool {
        match self {
            Step::Pointer(..) => false,
            #[cfg(feature = "jq")]
            Step::Jq(..) => true,
        }
    }

    /// Whether the step may look at the value at `path` (keys from the root) to decide what
    /// it removes: only a jq expression whose footprint reaches it; a pointer removes what it
    /// names and reads nothing.
    fn may_look_at(&self, path: &[&str]) -> bool {
        match self {
            Step::Pointer(..) => {
                let _ = path;
                false
            }
            #[cfg(feature = "jq")]
            Step::Jq(_, expr) => expr.may_look_at(path),
        }
    }
}

#[derive(Debug)]
struct Rule {
    source: RuleSource,
    selector: Selector,
    steps: Vec<Step>,
}

/// The `ignoreDifferences` of an app and of `argocd-cm`, compiled once and applied to any
/// number of objects.
///
/// # Examples
///
/// ```
/// use gitops_core::ignore::IgnoreNormalizer;
/// use gitops_core::config::{IgnoreDifferences, Settings};
/// let rule: IgnoreDifferences = serde_json::from_value(serde_json::json!({
///     "group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]
/// })).unwrap();
/// let n = IgnoreNormalizer::new(&[rule], &Settings::default()).unwrap();
/// let mut obj = serde_json::json!({
///     "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
///     "spec": {"replicas": 3, "paused": false}, "status": {"replicas": 3}
/// });
/// n.normalize(&mut obj).unwrap();
/// // `/status` comes from the default `resource.compareoptions`.
/// assert_eq!(obj["spec"], serde_json::json!({"paused": false}));
/// assert!(obj.get("status").is_none());
/// ```
#[derive(Debug)]
pub struct IgnoreNormalizer {
    rules: Vec<Rule>,
    app: Vec<IgnoreDifferences>,
    /// The selectors of `app`, for the managedFieldsManagers lookup.
    app_selectors: Vec<Selector>,
    settings: Settings,
    /// Whether desired objects' `gitops-core.io/ignore-differences` annotations count.
    annotation: bool,
    /// jq expressions of annotations compiled so far, by text: a host that keeps the
    /// normalizer (serve) compiles each distinct expression once, not once per comparison.
    #[cfg(feature = "jq")]
    jq_cache: std::sync::Mutex<
        std::collections::BTreeMap<String, std::sync::Arc<crate::script::jq::JqPath>>,
    >,
    /// What one jq expression may spend on one object, and the host's backstop.
    budget: StepBudget,
}

/// What one jq expression may spend on one object: [`IgnoreNormalizer::JQ_UNITS`] units by
/// default, and the host's interrupt when it installed one.
#[derive(Clone)]
pub(crate) struct StepBudget {
    pub(crate) units: u64,
    pub(crate) interrupt: Option<std::sync::Arc<dyn crate::script::Interrupt>>,
}

impl Default for StepBudget {
    fn default() -> Self {
        StepBudget { units: IgnoreNormalizer::JQ_UNITS, interrupt: None }
    }
}

impl std::fmt::Debug for StepBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepBudget")
            .field("units", &self.units)
            .field("interrupt", &self.interrupt.is_some())
            .finish()
    }
}

/// The most annotation jq expressions a normalizer keeps compiled; past it, more are compiled
/// each time they are read.
#[cfg(feature = "jq")]
const JQ_CACHE_ENTRIES: usize = 1024;

/// How an expression is shown in messages: whole up to 80 characters, else its first 60.
fn shown(expr: &str) -> String {
    if expr.chars().count() <= 80 {
        expr.to_string()
    } else {
        let head: String = expr.chars().take(60).collect();
        format!("{head}…")
    }
}

impl IgnoreNormalizer {
    /// Compiles the rules of an app and of `argocd-cm`. Fails on the first jq expression that
    /// does not compile or is outside the accepted subset.
    pub fn new(app: &[IgnoreDifferences], settings: &Settings) -> Result<Self, IgnoreError> {
        let mut rules = Vec::new();
        for (i, r) in app.iter().enumerate() {
            let source = RuleSource::App(i);
            let selector = Selector::new(&r.group, &r.kind, &r.name, &r.namespace);
            let steps = steps(&source, &r.json_pointers, &r.jq_path_expressions)?;
            rules.push(Rule { source, selector, steps });
        }
        for (key, o) in &settings.overrides {
            let d = &o.ignore_differences;
            if d.json_pointers.is_empty() && d.jq_path_expressions.is_empty() {
                continue;
            }
            let source = RuleSource::Override(key.clone());
            let (group, kind) = override_group_kind(key);
            let selector = Selector::new(&group, &kind, "", "");
            let steps = steps(&source, &d.json_pointers, &d.jq_path_expressions)?;
            rules.push(Rule { source, selector, steps });
        }
        let app_selectors =
            app.iter().map(|r| Selector::new(&r.group, &r.kind, &r.name, &r.namespace)).collect();
        Ok(IgnoreNormalizer {
            rules,
            app: app.to_vec(),
            app_selectors,
            settings: settings.clone(),
            annotation: true,
            #[cfg(feature = "jq")]
            jq_cache: std::sync::Mutex::default(),
            budget: StepBudget::default(),
        })
    }

    /// Units one jq expression may spend on one object by default: each value of the object
    /// converted (only the part the expression can look at), each byte `test` scans, each path
    /// selected (about 50 ms of work).
    pub const JQ_UNITS: u64 = 50_000_000;

    /// The same rules with another budget per jq expression and object.
    #[must_use]
    pub fn with_jq_units(mut self, units: u64) -> Self {
        self.budget.units = units;
        self
    }

    /// The same rules with the host's backstop, asked while each jq expression runs on each
    /// object; a stop is an [`IgnoreError::JqInterrupted`], apart from the counted limits'
    /// [`IgnoreError::JqLimit`] (the CLI and `serve` install a 1 s wall-clock
    /// [`crate::script::Deadline`]).
    #[must_use]
    pub fn with_interrupt(
        mut self,
        interrupt: std::sync::Arc<dyn crate::script::Interrupt>,
    ) -> Self {
        self.budget.interrupt = Some(interrupt);
        self
    }

    /// Compiles the rules of an Application (`spec.ignoreDifferences`) and of `argocd-cm`.
    pub fn for_app(
        app: &crate::config::Application,
        settings: &Settings,
    ) -> Result<Self, IgnoreError> {
        IgnoreNormalizer::new(&app.spec.ignore_differences, settings)
    }

    /// Removes the ignored fields from one object. Steps that remove nothing are skipped (a
    /// note says why); an object that is not a JSON object is an error, and so is a jq
    /// expression a limit stopped ([`IgnoreError::JqLimit`]).
    pub fn normalize(&self, obj: &mut Value) -> Result<(), IgnoreError> {
        self.apply(obj, None)
    }

    /// As [`IgnoreNormalizer::normalize`], returning a note for each step that removed
    /// nothing because of a miss or an error (in rule order).
    pub fn normalize_with_notes(&self, obj: &mut Value) -> Result<Vec<IgnoreNote>, IgnoreError> {
        let mut notes = Vec::new();
        self.apply(obj, Some(&mut notes))?;
        Ok(notes)
    }

    /// [`IgnoreNormalizer::normalize_with_notes`], its notes made only when asked for (the
    /// comparison drops them: making each one formats the rule, the step and the message).
    fn apply(
        &self,
        obj: &mut Value,
        mut notes: Option<&mut Vec<IgnoreNote>>,
    ) -> Result<(), IgnoreError> {
        if !obj.is_object() {
            return Err(IgnoreError::NotAnObject { found: type_name(obj) });
        }
        // The rules are matched on the identity read in place; it is copied only when a note
        // or a jq rule's error may name it.
        let parts = crate::object::RefParts::of(obj);
        let rules: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|rule| {
                rule.selector.matches_parts(parts.group, parts.kind, parts.namespace, parts.name)
            })
            .collect();
        if rules.is_empty() {
            return Ok(());
        }
        let named = notes.is_some() || rules.iter().any(|rule| rule.steps.iter().any(Step::is_jq));
        let r = if named { ObjectRef::from_object_lossy(obj) } else { ObjectRef::default() };
        for rule in rules {
            apply_steps(obj, &r, &rule.source, &rule.steps, &self.budget, notes.as_deref_mut())?;
        }
        Ok(())
    }

    /// Turns the `gitops-core.io/ignore-differences` annotation on (the default) or off for
    /// everything that uses this normalizer: [`IgnoreNormalizer::annotation_rule`],
    /// [`IgnoreNormalizer::respect_ignore_differences`] and the app diffs it is lent to.
    pub fn with_annotation(mut self, on: bool) -> Self {
        self.annotation = on;
        self
    }

    /// Whether the `gitops-core.io/ignore-differences` annotation counts.
    pub fn annotation_enabled(&self) -> bool {
        self.annotation
    }

    /// The rule a desired object declares in its `gitops-core.io/ignore-differences`
    /// annotation ([`AnnotationRule::from_object`]); `Ok(None)` when it declares none or the
    /// annotation is turned off. Only the desired object's annotation counts: the same
    /// annotation on a live object is never read.
    ///
    /// # Errors
    ///
    /// [`IgnoreError::InvalidAnnotation`] when the annotation is not a rule.
    pub fn annotation_rule(&self, desired: &Value) -> Result<Option<AnnotationRule>, IgnoreError> {
        if !self.annotation {
            return Ok(None);
        }
        let rule = AnnotationRule::from_object_with(desired, &|source, expr| {
            self.cached_jq_step(source, expr)
        })?;
        Ok(rule.map(|mut r| {
            r.budget = self.budget.clone();
            r
        }))
    }

    /// An annotation's jq step, from the cache when it was compiled before.
    #[cfg(feature = "jq")]
    fn cached_jq_step(&self, source: &RuleSource, expr: &str) -> Result<Step, IgnoreError> {
        // A poisoned lock only means another thread panicked mid-insert of a complete entry.
        let hit = self.jq_cache.lock().unwrap_or_else(|e| e.into_inner()).get(expr).cloned();
        if let Some(path) = hit {
            return Ok(Step::Jq(expr.to_string(), path));
        }
        let step = jq_step(source, expr)?;
        if let Step::Jq(_, path) = &step {
            let mut cache = self.jq_cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() < JQ_CACHE_ENTRIES {
                cache.insert(expr.to_string(), path.clone());
            }
        }
        Ok(step)
    }

    #[cfg(not(feature = "jq"))]
    fn cached_jq_step(&self, source: &RuleSource, expr: &str) -> Result<Step, IgnoreError> {
        jq_step(source, expr)
    }

    /// Whether any pointer or jq rule applies to the object.
    pub fn has_rules_for(&self, obj: &ObjectRef) -> bool {
        self.rules.iter().any(|rule| rule.selector.matches(obj))
    }

    /// Whether a jq rule that may apply to an object of `group` and `kind` (`None`: of any
    /// group and kind) may look at the value at `path` (keys from the root) or below it: where
    /// none may, that value can be absent from the object without changing what the rules
    /// remove.
    pub(crate) fn may_run_jq_reading(&self, of: Option<(&str, &str)>, path: &[&str]) -> bool {
        self.rules.iter().any(|rule| {
            of.is_none_or(|(group, kind)| {
                rule.selector.group.matches(group) && rule.selector.kind.matches(kind)
            }) && rule.steps.iter().any(|s| s.may_look_at(path))
        })
    }

    /// The `managedFieldsManagers` that apply to an object: the override keyed exactly
    /// `group/Kind`, then the `*/*` override, then the matching app rules in order, without
    /// duplicates (Argo CD's `HasIgnoreDifference`).
    pub fn managed_fields_managers(&self, obj: &ObjectRef) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |managers: &[String]| {
            for m in managers {
                if !out.contains(m) {
                    out.push(m.clone());
                }
            }
        };
        let exact = format!("{}/{}", obj.group, obj.kind);
        for key in [exact.as_str(), "*/*"] {
            if let Some(o) = self.settings.overrides.get(key) {
                add(&o.ignore_differences.managed_fields_managers);
            }
        }
        for (r, selector) in self.app.iter().zip(&self.app_selectors) {
            if selector.matches(obj) {
                add(&r.managed_fields_managers);
            }
        }
        out
    }

    /// The `knownTypeFields` configured for an object's group and kind: the override whose
    /// key is exactly `group/Kind` (`Kind` for the core group; no globs, as Argo CD's
    /// known-types normalizer). `argoproj.io/Rollout` has `spec.template.spec` as
    /// `core/v1/PodSpec` unless configured otherwise, as in Argo CD.
    pub fn known_type_fields(&self, obj: &ObjectRef) -> Vec<KnownTypeField> {
        let found = self.settings.overrides.iter().find(|(key, o)| {
            !o.known_type_fields.is_empty() && {
                let (g, k) = override_group_kind(key);
                g == obj.group && k == obj.kind
            }
        });
        match found {
            Some((_, o)) => o.known_type_fields.clone(),
            None => default_known_type_fields(&obj.group, &obj.kind),
        }
    }

    /// The settings the normalizer was built with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

/// Applies a rule's steps to an object (`r` is its identity), noting every step that removed
/// nothing; a jq expression stopped by a limit is an error.
fn apply_steps(
    obj: &mut Value,
    r: &ObjectRef,
    source: &RuleSource,
    steps: &[Step],
    budget: &StepBudget,
    mut notes: Option<&mut Vec<IgnoreNote>>,
) -> Result<(), IgnoreError> {
    #[cfg(not(feature = "jq"))]
    let _ = budget;
    for step in steps {
        // A miss is written out only when its note is kept.
        let noted = notes.is_some();
        let miss = match step {
            Step::Pointer(p, parsed) => pointer::remove_parsed(obj, parsed)
                .err()
                .filter(|_| noted)
                .map(|m| (p.as_str(), m.message(p), m.expected())),
            #[cfg(feature = "jq")]
            Step::Jq(text, path) => {
                let b = crate::script::jq::JqBudget {
                    units: budget.units,
                    interrupt: budget.interrupt.as_deref(),
                };
                match jq_delete::delete(obj, path, b) {
                    Ok(()) => None,
                    Err(crate::script::jq::JqFailure::Eval(_)) if !noted => None,
                    Err(crate::script::jq::JqFailure::Eval(m)) => {
                        Some((text.as_str(), format!("jq patch returned error: {m}"), false))
                    }
                    // A limit, or the host's stop: the rule was not applied.
                    Err(stop) => {
                        let (rule, expression) = (source.to_string(), shown(text));
                        let object = Box::new(r.clone());
                        return Err(match stop {
                            crate::script::jq::JqFailure::Interrupted(message) => {
                                IgnoreError::JqInterrupted { rule, expression, object, message }
                            }
                            other => IgnoreError::JqLimit {
                                rule,
                                expression,
                                object,
                                message: other.to_string(),
                            },
                        });
                    }
                }
            }
        };
        if let (Some((step, message, expected)), Some(notes)) = (miss, notes.as_deref_mut()) {
            notes.push(IgnoreNote {
                object: r.clone(),
                rule: source.to_string(),
                step: step.to_string(),
                message,
                expected,
            });
        }
    }
    Ok(())
}

fn steps(
    source: &RuleSource,
    pointers: &[String],
    jq: &[String],
) -> Result<Vec<Step>, IgnoreError> {
    let mut out: Vec<Step> = pointers.iter().map(|p| Step::pointer(p.clone())).collect();
    for expr in jq {
        out.push(jq_step(source, expr)?);
    }
    Ok(out)
}

#[cfg(feature = "jq")]
fn jq_step(source: &RuleSource, expr: &str) -> Result<Step, IgnoreError> {
    crate::script::jq::compile(expr).map(|p| Step::Jq(expr.to_string(), p.into())).map_err(|e| {
        IgnoreError::InvalidJq {
            rule: source.to_string(),
            expression: shown(expr),
            position: e.position,
            message: e.message,
        }
    })
}

#[cfg(not(feature = "jq"))]
fn jq_step(source: &RuleSource, expr: &str) -> Result<Step, IgnoreError> {
    Err(IgnoreError::JqUnavailable { rule: source.to_string(), expression: shown(expr) })
}

/// The known-type fields Argo CD gives a group and kind the user configured none for:
/// `argoproj.io/Rollout`'s `spec.template.spec` is a `core/v1/PodSpec`
/// (Argo CD 3.6.2 util/argo/normalizers/knowntypes_normalizer.go,
/// `ensureDefaultCRDsConfigured`).
pub(crate) fn default_known_type_fields(group: &str, kind: &str) -> Vec<KnownTypeField> {
    if group == "argoproj.io" && kind == "Rollout" {
        vec![KnownTypeField {
            field: "spec.template.spec".to_owned(),
            type_: "core/v1/PodSpec".to_owned(),
        }]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "jq"))]
    #[test]
    fn jq_rules_need_the_feature() {
        let rule: IgnoreDifferences =
            serde_json::from_value(serde_json::json!({"kind": "*", "jqPathExpressions": [".a"]}))
                .unwrap();
        let err = IgnoreNormalizer::new(&[rule], &Settings::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ignoreDifferences[0]: jq path expression `.a` needs the `jq` feature"
        );
    }

    /// `*` alone is matched without the glob engine, with the glob's answer.
    #[test]
    fn a_lone_star_matches_what_its_glob_matches() {
        assert!(matches!(Pattern::new("*"), Pattern::Any));
        let glob = Glob::new("*").expect("compiles");
        for text in ["", "apps", "rbac.authorization.k8s.io", "a/b", "*", "ünï"] {
            assert_eq!(Pattern::new("*").matches(text), glob.matches(text), "{text}");
        }
    }

    #[test]
    fn normalizer_is_shareable_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<IgnoreNormalizer>();
    }
}
