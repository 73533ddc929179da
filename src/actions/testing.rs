//! The runner of Argo CD's `action_test.yaml` files.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{Actions, ImpactedResource, Operation, ResourceAction};
use crate::diff::{self, DiffOptions, Normalizer};
use crate::object::ObjectRef;

/// Whether a case tests discovery or an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ActionTestKind {
    /// A `discoveryTests` entry.
    Discovery,
    /// An `actionTests` entry.
    Action,
}

/// The outcome of one case of an `action_test.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ActionTestCase {
    /// Discovery or action.
    pub kind: ActionTestKind,
    /// The action's name (empty for discovery).
    pub action: String,
    /// The case's `inputPath`.
    pub input_path: String,
    /// The expected actions (discovery cases).
    pub expected_actions: Vec<ResourceAction>,
    /// The discovered actions (discovery cases that ran).
    pub got_actions: Vec<ResourceAction>,
    /// The impacted resources (action cases that ran).
    pub got_resources: Vec<ImpactedResource>,
    /// How many objects the expected output file holds (action cases).
    pub expected_objects: usize,
    /// Whether the case passed.
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub message: String,
    /// What ran: the discovery scripts (joined by `, `) or the action's script, by name;
    /// `built-in <group>/<Kind>/actions/<name>` for a built-in action.
    pub script: String,
}

impl ActionTestCase {
    fn new(kind: ActionTestKind, action: &str, input_path: &str) -> Self {
        ActionTestCase {
            kind,
            action: action.to_string(),
            input_path: input_path.to_string(),
            expected_actions: Vec::new(),
            got_actions: Vec::new(),
            got_resources: Vec::new(),
            expected_objects: 0,
            passed: false,
            message: String::new(),
            script: String::new(),
        }
    }

    fn fail(mut self, message: impl Into<String>) -> Self {
        self.passed = false;
        self.message = message.into();
        self
    }
}

/// An `action_test.yaml` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
#[non_exhaustive]
pub struct ActionTestError {
    /// The file.
    pub file: String,
    /// What is wrong.
    pub message: String,
}

/// What Argo CD's action test removes before comparing (its `testNormalizer`), for the fields
/// the clock does not decide: a Deployment's `status`, `metadata.creationTimestamp` and
/// `metadata.generation`; a Workflow's `metadata.resourceVersion`, `metadata.uid` and
/// `workflows.argoproj.io/scheduled-time` annotation. Times written from `now` are compared
/// as they are (see [`Actions::TEST_NOW`]), and a created Job's metadata is compared in full.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ArgoTestNormalizer;

impl Normalizer for ArgoTestNormalizer {
    fn normalize(&self, obj: &mut Value) {
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let Some(o) = obj.as_object_mut() else { return };
        match kind.as_str() {
            "Deployment" => {
                o.remove("status");
                if let Some(Value::Object(m)) = o.get_mut("metadata") {
                    m.remove("creationTimestamp");
                    m.remove("generation");
                }
            }
            "Workflow" => {
                if let Some(Value::Object(m)) = o.get_mut("metadata") {
                    m.remove("resourceVersion");
                    m.remove("uid");
                    if let Some(Value::Object(a)) = m.get_mut("annotations") {
                        a.remove("workflows.argoproj.io/scheduled-time");
                    }
                }
            }
            _ => {}
        }
    }
}

/// A member of an object, the name matched case-insensitively (the file is read through Go's
/// JSON decoder); the last match wins.
fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.as_object()?.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

fn text<'a>(v: &'a Value, name: &str) -> &'a str {
    field(v, name).and_then(Value::as_str).unwrap_or_default()
}

impl Actions {
    /// The clock of action tests, in unix seconds: `0001-01-01T00:00:00Z`, Go's zero time.
    /// Argo CD's expected files hold it where an action writes the time (`restartedAt`,
    /// `restartAt`), so with this `now` they match exactly.
    pub const TEST_NOW: i64 = -62_135_596_800;

    /// Runs the cases of one `action_test.yaml` (Argo CD's format: `discoveryTests` with
    /// `inputPath` and `result`, `actionTests` with `action`, `inputPath`, `expectedOutputPath`,
    /// `parameters` and `expectedErrorMessage`), and compares as Argo CD's own test does:
    ///
    /// - discovery (run with the open libraries, as Argo CD's test runs it): every discovered
    ///   action must be in `result`, a field missing there counting as its zero value;
    /// - an action with `expectedErrorMessage` must fail with exactly that reason;
    /// - otherwise each impacted resource must match an object of the expected file (one object,
    ///   or a list of `{k8sOperation, unstructuredObj}` when the file starts with `-`) by group,
    ///   version, kind, name and namespace, a Job created from a CronJob or a Workflow from a
    ///   CronWorkflow or WorkflowTemplate by the prefix of the source's name (its name is then
    ///   taken from the expected object), and the two must not differ by Argo CD's diff after
    ///   its test normalizer (`testNormalizer`: a Deployment's `status`,
    ///   `metadata.creationTimestamp` and `metadata.generation`, a Workflow's
    ///   `metadata.resourceVersion`, `metadata.uid` and `workflows.argoproj.io/scheduled-time`
    ///   annotation removed): a field the expected object leaves out is not compared, and
    ///   numbers compare as Kubernetes compares them (`6` equals `6.0`).
    ///
    /// `files` maps the paths the test file names (relative to it) to their text. Cases run on
    /// these actions, their scripts found by the input object's kind; `now` is the scripts' clock
    /// (Argo CD's expected files are written for [`Actions::TEST_NOW`]). A missing or unreadable input
    /// fails its case; the other cases still run.
    pub fn run_tests(
        &self,
        test_yaml: &str,
        files: &BTreeMap<String, String>,
        now: i64,
    ) -> Result<Vec<ActionTestCase>, ActionTestError> {
        let actions = self;
        // Argo CD's expected objects hold a Secret's values.
        let actions = &actions.clone().with_reveal_secrets(true);
        let fail = |message: String| ActionTestError { file: "action_test.yaml".into(), message };
        let lenient = crate::object::ParseOptions::default();
        let read = |text: &str| lenient.parse_documents(text).map(|d| d.0);
        let doc = read(test_yaml)
            .map_err(|e| fail(e.to_string()))?
            .into_iter()
            .find(|d| !d.is_null())
            .unwrap_or(Value::Null);
        let list = |name: &str| match field(&doc, name) {
            Some(Value::Array(t)) => Ok(t.clone()),
            Some(Value::Null) | None => Ok(Vec::new()),
            Some(_) => Err(fail(format!("`{name}` is not a list"))),
        };
        let discovery_tests = list("discoveryTests")?;
        let action_tests = list("actionTests")?;
        let read_file = |path: &str| -> Result<(String, Value), String> {
            let text = files.get(path).ok_or_else(|| format!("{path}: file not found"))?;
            let docs = read(text).map_err(|e| format!("{path}: {e}"))?;
            let v = docs.into_iter().find(|d| !d.is_null()).unwrap_or(Value::Null);
            Ok((text.clone(), v))
        };

        let mut out = Vec::new();
        for (i, t) in discovery_tests.iter().enumerate() {
            let input_path = text(t, "inputPath");
            if input_path.is_empty() {
                return Err(fail(format!("discoveryTests/{i}: missing `inputPath`")));
            }
            let mut case = ActionTestCase::new(ActionTestKind::Discovery, "", input_path);
            let expected = field(t, "result").cloned().unwrap_or(Value::Array(Vec::new()));
            case.expected_actions =
                match serde_json::from_value::<Option<Vec<ResourceAction>>>(expected) {
                    Ok(v) => v.unwrap_or_default(),
                    Err(e) => return Err(fail(format!("discoveryTests/{i}/result: {e}"))),
                };
            let obj = match read_file(input_path) {
                Ok((_, obj)) => obj,
                Err(m) => {
                    out.push(case.fail(m));
                    continue;
                }
            };
            let o = ObjectRef::from_object_lossy(&obj);
            let sources = actions.scripts().discovery_sources(&o.group, &o.kind);
            case.script =
                sources.iter().map(|f| f.name("discovery")).collect::<Vec<_>>().join(", ");
            match actions.discover_with(&obj, now, true) {
                Err(e) => out.push(case.fail(e.to_string())),
                Ok(got) => {
                    let missing: Vec<&str> = got
                        .iter()
                        .filter(|a| !case.expected_actions.contains(a))
                        .map(|a| a.name.as_str())
                        .collect();
                    case.message = if missing.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "discovered actions not in `result` as discovered: {}",
                            missing.join(", ")
                        )
                    };
                    case.passed = missing.is_empty();
                    case.got_actions = got;
                    out.push(case);
                }
            }
        }

        for (i, t) in action_tests.iter().enumerate() {
            let (action, input_path) = (text(t, "action"), text(t, "inputPath"));
            if action.is_empty() || input_path.is_empty() {
                return Err(fail(format!("actionTests/{i}: missing `action` or `inputPath`")));
            }
            let mut case = ActionTestCase::new(ActionTestKind::Action, action, input_path);
            let params = match params_of(t) {
                Ok(p) => p,
                Err(m) => return Err(fail(format!("actionTests/{i}/parameters: {m}"))),
            };
            let source = match read_file(input_path) {
                Ok((_, obj)) => obj,
                Err(m) => {
                    out.push(case.fail(m));
                    continue;
                }
            };
            let o = ObjectRef::from_object_lossy(&source);
            case.script = actions
                .scripts()
                .action_source(&o.group, &o.kind, action)
                .map(|f| f.name(action))
                .unwrap_or_default();
            let ran = actions.run(&source, action, &params, now);
            let expected_error = text(t, "expectedErrorMessage");
            if !expected_error.is_empty() {
                out.push(match ran {
                    Ok(_) => case.fail(format!(
                        "expected the error `{expected_error}`, the action succeeded"
                    )),
                    Err(e) if e.reason() == expected_error => {
                        ActionTestCase { passed: true, ..case }
                    }
                    Err(e) => case.fail(format!("expected the error `{expected_error}`, got: {e}")),
                });
                continue;
            }
            let got = match ran {
                Ok(r) => r.resources,
                Err(e) => {
                    out.push(case.fail(e.to_string()));
                    continue;
                }
            };
            let expected_path = text(t, "expectedOutputPath");
            let expected = match read_file(expected_path)
                .and_then(|(raw, v)| expected_objects(&raw, v, expected_path))
            {
                Ok(e) => e,
                Err(m) => {
                    out.push(ActionTestCase { got_resources: got, ..case }.fail(m));
                    continue;
                }
            };
            let verdict = compare(&source, &got, &expected, expected_path);
            out.push(ActionTestCase {
                passed: verdict.is_ok(),
                message: verdict.err().unwrap_or_default(),
                expected_objects: expected.len(),
                got_resources: got,
                ..case
            });
        }
        Ok(out)
    }
}

/// `parameters`: a map of texts (numbers and booleans are read as their text).
fn params_of(t: &Value) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    match field(t, "parameters") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let v = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(format!(
                            "`{k}` is {}, expected text",
                            crate::object::type_name(other)
                        ));
                    }
                };
                out.insert(k.clone(), v);
            }
        }
        Some(other) => {
            return Err(format!("expected a map, found {}", crate::object::type_name(other)));
        }
    }
    Ok(out)
}

/// The expected objects with their operation, when the file names one.
fn expected_objects(
    raw: &str,
    v: Value,
    path: &str,
) -> Result<Vec<(Option<String>, Value)>, String> {
    let raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    if raw.starts_with('-') {
        let Value::Array(items) = v else {
            return Err(format!("{path}: expected a list of {{k8sOperation, unstructuredObj}}"));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match field(item, "unstructuredObj") {
                Some(obj @ Value::Object(_)) => {
                    let op =
                        field(item, "k8sOperation").and_then(Value::as_str).map(str::to_string);
                    Ok((op, obj.clone()))
                }
                _ => Err(format!("{path}: item {i}: missing `unstructuredObj`")),
            })
            .collect()
    } else if v.is_object() {
        Ok(vec![(None, v)])
    } else {
        Err(format!("{path}: expected an object, found {}", crate::object::type_name(&v)))
    }
}

/// Whether a created object's name derives from the source's (Argo CD's test matches those by
/// prefix).
fn derived_name(source: &ObjectRef, created: &ObjectRef) -> bool {
    (created.kind == "Job" && source.kind == "CronJob")
        || (created.kind == "Workflow"
            && (source.kind == "CronWorkflow" || source.kind == "WorkflowTemplate"))
}

fn compare(
    source: &Value,
    got: &[ImpactedResource],
    expected: &[(Option<String>, Value)],
    expected_path: &str,
) -> Result<(), String> {
    let src = ObjectRef::from_object_lossy(source);
    for (i, r) in got.iter().enumerate() {
        // A patch is compared as the object it makes of the input.
        let Some(mut result) = r.apply_to(source) else {
            return Err(format!("resource {i}: its patch does not apply to the input"));
        };
        let have = ObjectRef::from_object_lossy(&result);
        let by_prefix = r.operation == Operation::Create && derived_name(&src, &have);
        let found = expected.iter().find(|(_, e)| {
            let want = ObjectRef::from_object_lossy(e);
            let name_ok =
                if by_prefix { want.name.starts_with(&src.name) } else { want.name == have.name };
            want.group == have.group
                && want.version == have.version
                && want.kind == have.kind
                && want.namespace == have.namespace
                && name_ok
        });
        let Some((op, want)) = found else {
            return Err(format!(
                "resource {i} ({} {have}): no matching object in {expected_path}",
                op_name(r.operation)
            ));
        };
        if let Some(op) = op
            && op != op_name(r.operation)
        {
            return Err(format!(
                "resource {i} ({have}): operation {} but {expected_path} says {op}",
                op_name(r.operation)
            ));
        }
        if by_prefix {
            let name = ObjectRef::from_object_lossy(want).name;
            if let Some(Value::Object(m)) = result.get_mut("metadata") {
                m.insert("name".into(), Value::String(name));
            }
        }
        let opts = DiffOptions::default().with_normalizer(&ArgoTestNormalizer);
        let d = diff::diff(Some(want), Some(&result), &opts)
            .map_err(|e| format!("resource {i} ({have}): {e}"))?;
        if d.modified {
            let ops = serde_json::to_string(&d.patch).unwrap_or_default();
            return Err(format!(
                "resource {i} ({have}) differs from {expected_path}: the expected object needs {ops}"
            ));
        }
    }
    Ok(())
}

fn op_name(op: Operation) -> &'static str {
    match op {
        Operation::Patch => "patch",
        Operation::Create => "create",
    }
}
