//! The `gitops-core.io/ignore-differences` annotation: an ignore rule a desired object declares
//! for itself.
//!
//! The value takes one of two forms:
//!
//! - a YAML or JSON mapping with the fields of an `ignoreDifferences` rule that say *what* to
//!   ignore: `jsonPointers`, `jqPathExpressions` and `managedFieldsManagers`, each a list of
//!   strings. `group`, `kind`, `name` and `namespace` are refused: the rule is scoped to the
//!   annotated object. Any other key is refused too, so a misspelt field cannot quietly ignore
//!   nothing;
//! - a short form, recognised by a first non-blank character `/`: one JSON pointer per line
//!   (lines trimmed, blank lines skipped).
//!
//! A value that is empty or only blanks declares nothing. Every pointer must be empty-free,
//! start with `/` and use only the escapes `~0` and `~1`; every jq expression must compile
//! in the accepted subset; every manager must be a non-empty string. Anything else is an
//! [`IgnoreError::InvalidAnnotation`] naming the object, the annotation and, as an RFC 6901
//! pointer into the mapping, the entry at fault.

use serde_json::Value;

use super::{IgnoreError, IgnoreNote, RuleSource, Step, apply_steps, jq_step};
use crate::object::{ObjectRef, annotation};

/// [`AnnotationRule::ANNOTATION`].
pub(crate) const IGNORE_DIFFERENCES_ANNOTATION: &str = "gitops-core.io/ignore-differences";

/// How a jq expression becomes a step: compiled, or taken from a normalizer's cache.
pub(super) type JqCompiler<'a> = dyn Fn(&RuleSource, &str) -> Result<Step, IgnoreError> + 'a;

/// The fields the mapping form accepts, in the order messages list them.
const FIELDS: [&str; 3] = ["jsonPointers", "jqPathExpressions", "managedFieldsManagers"];

/// The ignore rule of one object, read from its `gitops-core.io/ignore-differences`
/// annotation and compiled: applied like an app-level rule whose group, kind, name and
/// namespace are exactly the object's.
///
/// # Examples
///
/// ```
/// use gitops_core::ignore::AnnotationRule;
/// let desired = serde_json::json!({
///     "apiVersion": "apps/v1", "kind": "Deployment",
///     "metadata": {"name": "api", "annotations": {
///         "gitops-core.io/ignore-differences": "/spec/replicas"}},
///     "spec": {"replicas": 3, "paused": false}
/// });
/// let rule = AnnotationRule::from_object(&desired).unwrap().unwrap();
/// let mut live = desired.clone();
/// rule.normalize(&mut live).unwrap();
/// assert_eq!(live["spec"], serde_json::json!({"paused": false}));
/// ```
#[derive(Debug)]
pub struct AnnotationRule {
    object: ObjectRef,
    steps: Vec<Step>,
    managers: Vec<String>,
    /// What each jq step may spend, as the normalizer that read the rule allows.
    pub(super) budget: super::StepBudget,
}

impl AnnotationRule {
    /// The annotation by which a desired object declares fields to ignore for itself:
    /// `gitops-core.io/ignore-differences`.
    pub const ANNOTATION: &'static str = IGNORE_DIFFERENCES_ANNOTATION;

    /// Reads and compiles the annotation of a desired object: `Ok(None)` when the object has
    /// no such annotation, or one that declares nothing.
    ///
    /// # Errors
    ///
    /// [`IgnoreError::InvalidAnnotation`] when the value is not a rule (see the module docs).
    pub fn from_object(desired: &Value) -> Result<Option<AnnotationRule>, IgnoreError> {
        let Some(text) = annotation(desired, IGNORE_DIFFERENCES_ANNOTATION) else {
            return Ok(None);
        };
        let object = ObjectRef::from_object_lossy(desired);
        AnnotationRule::parse(text, &object)
    }

    /// As [`AnnotationRule::from_object`], compiling jq expressions with `jq`.
    pub(super) fn from_object_with(
        desired: &Value,
        jq: &JqCompiler<'_>,
    ) -> Result<Option<AnnotationRule>, IgnoreError> {
        let Some(text) = annotation(desired, IGNORE_DIFFERENCES_ANNOTATION) else {
            return Ok(None);
        };
        let object = ObjectRef::from_object_lossy(desired);
        AnnotationRule::parse_with(text, &object, jq)
    }

    /// Compiles an annotation value for `object`: `Ok(None)` when it declares nothing.
    ///
    /// # Errors
    ///
    /// [`IgnoreError::InvalidAnnotation`] when the value is not a rule.
    pub fn parse(text: &str, object: &ObjectRef) -> Result<Option<AnnotationRule>, IgnoreError> {
        AnnotationRule::parse_with(text, object, &jq_step)
    }

    fn parse_with(
        text: &str,
        object: &ObjectRef,
        compile: &JqCompiler<'_>,
    ) -> Result<Option<AnnotationRule>, IgnoreError> {
        let fail = |path: &str, message: String| IgnoreError::InvalidAnnotation {
            object: Box::new(object.clone()),
            annotation: IGNORE_DIFFERENCES_ANNOTATION,
            path: path.to_string(),
            message,
        };
        let trimmed = text.trim();
        let (pointers, jq, managers) = if trimmed.is_empty() {
            return Ok(None);
        } else if trimmed.starts_with('/') {
            let lines = trimmed.lines().map(str::trim).filter(|l| !l.is_empty());
            (lines.map(str::to_string).collect(), Vec::new(), Vec::new())
        } else {
            mapping(text).map_err(|(path, message)| fail(&path, message))?
        };
        for (i, p) in pointers.iter().enumerate() {
            check_pointer(p).map_err(|m| fail(&format!("/jsonPointers/{i}"), m))?;
        }
        for (i, m) in managers.iter().enumerate() {
            if m.is_empty() {
                return Err(fail(
                    &format!("/managedFieldsManagers/{i}"),
                    "manager name is empty".to_string(),
                ));
            }
        }
        let source = RuleSource::Annotation;
        let mut steps: Vec<Step> = pointers.into_iter().map(Step::pointer).collect();
        for (i, expr) in jq.iter().enumerate() {
            let step = compile(&source, expr).map_err(|e| match e {
                IgnoreError::InvalidJq { expression, position, message, .. } => fail(
                    &format!("/jqPathExpressions/{i}"),
                    format!("jq path expression `{expression}` at byte {position}: {message}"),
                ),
                IgnoreError::JqUnavailable { expression, .. } => fail(
                    &format!("/jqPathExpressions/{i}"),
                    format!("jq path expression `{expression}` needs the `jq` feature"),
                ),
                other => other,
            })?;
            steps.push(step);
        }
        if steps.is_empty() && managers.is_empty() {
            return Ok(None);
        }
        Ok(Some(AnnotationRule {
            object: object.clone(),
            steps,
            managers,
            budget: super::StepBudget::default(),
        }))
    }

    /// The object whose annotation this is.
    pub fn object(&self) -> &ObjectRef {
        &self.object
    }

    /// The `managedFieldsManagers` the annotation names, in its order.
    pub fn managed_fields_managers(&self) -> &[String] {
        &self.managers
    }

    /// Whether the annotation has a jq expression (see `IgnoreNormalizer::may_run_jq_reading`).
    pub(crate) fn has_jq(&self) -> bool {
        self.steps.iter().any(Step::is_jq)
    }

    /// Removes the fields the annotation names from an object (the desired object, its live
    /// counterpart or its last-applied configuration). Steps that remove nothing are skipped.
    ///
    /// # Errors
    ///
    /// [`IgnoreError::NotAnObject`] when `obj` is not a JSON object.
    pub fn normalize(&self, obj: &mut Value) -> Result<(), IgnoreError> {
        self.normalize_with_notes(obj).map(drop)
    }

    /// As [`AnnotationRule::normalize`], with a note for each step that removed nothing.
    ///
    /// # Errors
    ///
    /// [`IgnoreError::NotAnObject`] when `obj` is not a JSON object.
    pub fn normalize_with_notes(&self, obj: &mut Value) -> Result<Vec<IgnoreNote>, IgnoreError> {
        if !obj.is_object() {
            return Err(IgnoreError::NotAnObject { found: crate::object::type_name(obj) });
        }
        let r = ObjectRef::from_object_lossy(obj);
        let mut notes = Vec::new();
        apply_steps(obj, &r, &RuleSource::Annotation, &self.steps, &self.budget, Some(&mut notes))?;
        Ok(notes)
    }
}

/// The lists of the mapping form, or the RFC 6901 path inside the value and what is wrong.
type Lists = (Vec<String>, Vec<String>, Vec<String>);

fn mapping(text: &str) -> Result<Lists, (String, String)> {
    let docs = crate::object::parse_documents(text)
        .map_err(|e| (String::new(), format!("not a yaml or json mapping: {e}")))?;
    let doc = match docs.as_slice() {
        [doc] => doc,
        _ => {
            return Err((
                String::new(),
                format!("expected one yaml document, found {}", docs.len()),
            ));
        }
    };
    let map = match doc {
        Value::Object(m) => m,
        Value::Null => return Ok((Vec::new(), Vec::new(), Vec::new())),
        other => {
            return Err((
                String::new(),
                format!(
                    "expected a mapping or a list of json pointers starting with `/`, found {}",
                    crate::object::type_name(other)
                ),
            ));
        }
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        if FIELDS.contains(&key.as_str()) {
            continue;
        }
        let path = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
        let message = if ["group", "kind", "name", "namespace"].contains(&key.as_str()) {
            format!("field `{key}` is not accepted: the rule applies to the annotated object only")
        } else {
            format!("unknown field `{key}`, expected one of {}", FIELDS.join(", "))
        };
        return Err((path, message));
    }
    let list = |field: &str| -> Result<Vec<String>, (String, String)> {
        match map.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err((
                        format!("/{field}/{i}"),
                        format!("expected a string, found {}", crate::object::type_name(other)),
                    )),
                })
                .collect(),
            Some(other) => Err((
                format!("/{field}"),
                format!("expected a list of strings, found {}", crate::object::type_name(other)),
            )),
        }
    };
    Ok((list(FIELDS[0])?, list(FIELDS[1])?, list(FIELDS[2])?))
}

/// An RFC 6901 pointer: empty-free, starting with `/`, `~` only in `~0` and `~1`.
fn check_pointer(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("json pointer is empty: it would remove the whole object".to_string());
    }
    if !p.starts_with('/') {
        return Err(format!("json pointer `{p}` does not start with `/`"));
    }
    let bytes = p.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'~' && !matches!(bytes.get(i + 1), Some(b'0' | b'1')) {
            return Err(format!(
                "json pointer `{p}` has `~` at byte {i} not followed by `0` or `1`"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(value: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "api", "namespace": "shop",
                            "annotations": {IGNORE_DIFFERENCES_ANNOTATION: value}}})
    }

    fn err(value: &str) -> String {
        AnnotationRule::from_object(&obj(value)).unwrap_err().to_string()
    }

    #[test]
    fn short_form_and_empty_values() {
        let r = AnnotationRule::from_object(&obj("  /spec/replicas\n\n /metadata/labels/a~1b \n"))
            .unwrap()
            .unwrap();
        assert_eq!(r.steps.len(), 2);
        assert!(AnnotationRule::from_object(&obj("  \n")).unwrap().is_none());
        assert!(AnnotationRule::from_object(&obj("{}")).unwrap().is_none());
        assert!(AnnotationRule::from_object(&obj("jsonPointers: []")).unwrap().is_none());
        let plain = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(AnnotationRule::from_object(&plain).unwrap().is_none());
    }

    #[test]
    fn managers_only() {
        let r = AnnotationRule::from_object(&obj(r#"{"managedFieldsManagers": ["hpa"]}"#))
            .unwrap()
            .unwrap();
        assert_eq!(r.managed_fields_managers(), ["hpa".to_string()]);
    }

    #[test]
    fn errors_name_the_object_the_annotation_and_the_entry() {
        let head = "apps/Deployment:shop/api: annotation `gitops-core.io/ignore-differences`";
        assert_eq!(
            err("jsonPointers: [/a, spec/replicas]"),
            format!(
                "{head} at /jsonPointers/1: json pointer `spec/replicas` does not start with `/`"
            )
        );
        assert_eq!(
            err("/a~2b"),
            format!(
                "{head} at /jsonPointers/0: json pointer `/a~2b` has `~` at byte 2 not followed by `0` or `1`"
            )
        );
        assert_eq!(
            err("jsonPointers: ['']"),
            format!(
                "{head} at /jsonPointers/0: json pointer is empty: it would remove the whole object"
            )
        );
        assert_eq!(
            err("kind: Deployment\njsonPointers: [/a]"),
            format!(
                "{head} at /kind: field `kind` is not accepted: the rule applies to the annotated object only"
            )
        );
        assert_eq!(
            err("jsonPointer: [/a]"),
            format!(
                "{head} at /jsonPointer: unknown field `jsonPointer`, expected one of jsonPointers, jqPathExpressions, managedFieldsManagers"
            )
        );
        assert_eq!(
            err("jsonPointers: /a"),
            format!("{head} at /jsonPointers: expected a list of strings, found a string")
        );
        assert_eq!(
            err("managedFieldsManagers: [1]"),
            format!("{head} at /managedFieldsManagers/0: expected a string, found a number")
        );
        assert_eq!(
            err("managedFieldsManagers: ['']"),
            format!("{head} at /managedFieldsManagers/0: manager name is empty")
        );
        assert_eq!(
            err("spec.replicas"),
            format!(
                "{head}: expected a mapping or a list of json pointers starting with `/`, found a string"
            )
        );
        assert_eq!(err("a: 1\n---\nb: 2"), format!("{head}: expected one yaml document, found 2"));
        assert!(
            err("{jsonPointers: [").starts_with(&format!("{head}: not a yaml or json mapping: "))
        );
    }

    #[cfg(feature = "jq")]
    #[test]
    fn jq_errors_carry_the_position() {
        let e = err("jqPathExpressions: ['.spec.replicas', '.spec[']");
        assert!(
            e.starts_with(
                "apps/Deployment:shop/api: annotation `gitops-core.io/ignore-differences` at /jqPathExpressions/1: jq path expression `.spec[` at byte "
            ),
            "{e}"
        );
    }

    #[test]
    fn respect_reads_the_target_annotation_unless_turned_off() {
        use crate::ignore::IgnoreNormalizer;
        let cm = |stamp: &str, value: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "annotations": {IGNORE_DIFFERENCES_ANNOTATION: value}},
                   "data": {"stamp": stamp}})
        };
        let stamp = |n: &IgnoreNormalizer| {
            let out = n
                .respect_ignore_differences(
                    &[Some(cm("git", "/data/stamp"))],
                    &[Some(cm("live", ""))],
                )
                .unwrap();
            out[0].object.as_ref().unwrap()["data"]["stamp"].clone()
        };
        let n = IgnoreNormalizer::new(&[], &crate::config::Settings::default()).unwrap();
        assert_eq!(stamp(&n), "live");
        let off = IgnoreNormalizer::new(&[], &crate::config::Settings::default())
            .unwrap()
            .with_annotation(false);
        assert!(!off.annotation_enabled());
        assert_eq!(stamp(&off), "git");
        assert!(off.annotation_rule(&cm("git", "bad")).unwrap().is_none());
        let err = n
            .respect_ignore_differences(&[Some(cm("git", "data/stamp"))], &[Some(cm("live", ""))])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "ConfigMap:c: annotation `gitops-core.io/ignore-differences`: expected a mapping or a list of json pointers starting with `/`, found a string"
        );
    }

    #[test]
    fn notes_name_the_annotation() {
        let r = AnnotationRule::from_object(&obj("/spec/missing/deep")).unwrap().unwrap();
        let mut live = obj("");
        let notes = r.normalize_with_notes(&mut live).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].rule, "annotation `gitops-core.io/ignore-differences`");
        assert_eq!(notes[0].step, "/spec/missing/deep");
        assert!(notes[0].expected);
        assert_eq!(
            r.normalize(&mut json!([])).unwrap_err().to_string(),
            "cannot normalize an array: expected an object"
        );
    }

    #[cfg(feature = "jq")]
    #[test]
    fn a_normalizer_compiles_each_annotation_expression_once() {
        let n =
            crate::ignore::IgnoreNormalizer::new(&[], &crate::config::Settings::default()).unwrap();
        let value = "jqPathExpressions: ['.data.a', '.data.b']";
        let cm = |a: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "annotations": {IGNORE_DIFFERENCES_ANNOTATION: value}},
                   "data": {"a": a, "b": "x", "c": "y"}})
        };
        for _ in 0..3 {
            let rule = n.annotation_rule(&cm("1")).unwrap().unwrap();
            let mut obj = cm("2");
            rule.normalize(&mut obj).unwrap();
            assert_eq!(obj["data"], json!({"c": "y"}));
        }
        assert_eq!(n.jq_cache.lock().unwrap().len(), 2);
        // A failing expression is not kept.
        let bad = json!({"metadata": {"annotations": {IGNORE_DIFFERENCES_ANNOTATION:
            "jqPathExpressions: ['.a |= 1']"}}});
        assert!(n.annotation_rule(&bad).is_err());
        assert_eq!(n.jq_cache.lock().unwrap().len(), 2);
    }
}
