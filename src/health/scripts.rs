//! Where Lua health scripts come from, and the runner of Argo CD's `health_test.yaml` files.
//!
//! [`HealthScripts`] finds the script for a kind with Argo CD's precedence:
//!
//! 1. the `argocd-cm` override whose key is exactly `group/Kind` (`Kind` for the core group)
//!    and whose `health.lua` is not empty, with its `useOpenLibs`;
//! 2. the first `argocd-cm` override whose key is a glob matching `group/Kind` (gobwas
//!    semantics: `*` crosses `/`) and whose `health.lua` is not empty. Argo CD walks a Go map
//!    here, so when several globs match it picks one at random; this crate takes the first key
//!    in byte order, so the answer is the same on every run;
//! 3. the directory's `group/Kind/health.lua` (Argo CD's `resource_customizations/` layout),
//!    with open libraries;
//! 4. the first directory, in byte order, whose path holds `_` and matches `group/Kind` with
//!    `_` read as `*` and each path segment matched on its own (so `_.crossplane.io/_`
//!    matches `ec2.aws.crossplane.io/Instance` but not `crossplane.io/X`), with open libraries.
//!
//! The library reads no files: the host passes the directory as a map from relative path to
//! script text.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::Settings;
use crate::glob::glob_match;

/// A health script and how to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthScript {
    /// Where it came from: `argocd-cm <key>` or the relative path of the `health.lua`.
    pub name: String,
    /// The Lua source.
    pub source: String,
    /// Whether the script gets the `string`, `math` and safe `os` libraries.
    pub use_open_libs: bool,
}

impl HealthScript {
    /// A script with its name, text and library mode.
    pub fn new(name: impl Into<String>, source: impl Into<String>, use_open_libs: bool) -> Self {
        HealthScript { name: name.into(), source: source.into(), use_open_libs }
    }
}

/// The health scripts of `argocd-cm` and of a `resource_customizations/`-style directory.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use gitops_core::health::HealthScripts;
///
/// let mut dir = BTreeMap::new();
/// dir.insert("_.crossplane.io/_/health.lua".to_string(), "return {status = 'Healthy'}".to_string());
/// dir.insert("argoproj.io/Rollout/health.lua".to_string(), "return nil".to_string());
/// let scripts = HealthScripts::new().with_directory(&dir);
///
/// assert_eq!(scripts.find("argoproj.io", "Rollout").unwrap().name, "argoproj.io/Rollout/health.lua");
/// assert_eq!(scripts.find("ec2.aws.crossplane.io", "Instance").unwrap().name, "_.crossplane.io/_/health.lua");
/// assert!(scripts.find("crossplane.io", "X").is_none());
/// assert!(scripts.find("", "Pod").is_none());
/// ```
///
/// A clone is cheap (the tables are shared), so a host keeps one and hands a clone to each
/// request's [`ScriptedHealth`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthScripts {
    tables: Arc<Tables>,
}

/// The scripts of [`HealthScripts`], shared by its clones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tables {
    /// argocd-cm key → (script, useOpenLibs), only entries with a script.
    overrides: BTreeMap<String, (String, bool)>,
    /// `group/Kind` (or `Kind`) → (path, script), directories without `_`.
    exact: BTreeMap<String, (String, String)>,
    /// (segment globs, path, script), directories with `_`, sorted by path.
    wildcard: Vec<(Vec<String>, String, String)>,
}

impl HealthScripts {
    /// No scripts.
    pub fn new() -> Self {
        HealthScripts::default()
    }

    /// The scripts of `argocd-cm` (`resource.customizations.health.<group>_<Kind>` and the
    /// legacy `resource.customizations` block).
    pub fn from_settings(settings: &Settings) -> Self {
        HealthScripts::new().with_settings(settings)
    }

    /// Adds (replaces) the `argocd-cm` scripts.
    pub fn with_settings(mut self, settings: &Settings) -> Self {
        Arc::make_mut(&mut self.tables).overrides = settings
            .overrides
            .iter()
            .filter(|(_, o)| !o.health_lua.is_empty())
            .map(|(k, o)| (k.clone(), (o.health_lua.clone(), o.use_open_libs)))
            .collect();
        self
    }

    /// Adds the scripts of a directory in the layout of Argo CD's `resource_customizations/`:
    /// `files` maps each relative path (`/`-separated) to its text. Only files named
    /// `health.lua` one or two folders deep (`<Kind>/health.lua`, `<group>/<Kind>/health.lua`)
    /// are scripts; everything else is ignored.
    pub fn with_directory(mut self, files: &BTreeMap<String, String>) -> Self {
        let tables = Arc::make_mut(&mut self.tables);
        for (path, text) in files {
            let Some(dir) = path.strip_suffix("/health.lua") else { continue };
            let dir = dir.trim_start_matches("./");
            let segments: Vec<&str> = dir.split('/').collect();
            if segments.is_empty() || segments.len() > 2 || segments.iter().any(|s| s.is_empty()) {
                continue;
            }
            if dir.contains('_') {
                let globs = segments.iter().map(|s| s.replace('_', "*")).collect();
                tables.wildcard.push((globs, path.clone(), text.clone()));
            } else {
                tables.exact.insert(dir.to_string(), (path.clone(), text.clone()));
            }
        }
        tables.wildcard.sort_by(|a, b| a.1.cmp(&b.1));
        self
    }

    /// Whether there are no scripts at all.
    pub fn is_empty(&self) -> bool {
        let t = &self.tables;
        t.overrides.is_empty() && t.exact.is_empty() && t.wildcard.is_empty()
    }

    /// The script for a kind (any version), by Argo CD's precedence (see the module docs).
    pub fn find(&self, group: &str, kind: &str) -> Option<HealthScript> {
        let key = crate::object::group_kind_key(group, kind);
        if let Some((source, open)) = self.tables.overrides.get(&key) {
            return Some(HealthScript {
                name: format!("argocd-cm {key}"),
                source: source.clone(),
                use_open_libs: *open,
            });
        }
        if let Some((k, (source, open))) =
            self.tables.overrides.iter().find(|(k, _)| k.as_str() != key && glob_match(k, &key))
        {
            return Some(HealthScript {
                name: format!("argocd-cm {k}"),
                source: source.clone(),
                use_open_libs: *open,
            });
        }
        if let Some((path, source)) = self.tables.exact.get(&key) {
            return Some(HealthScript {
                name: path.clone(),
                source: source.clone(),
                use_open_libs: true,
            });
        }
        let key_segments: Vec<&str> = key.split('/').collect();
        self.tables
            .wildcard
            .iter()
            .find(|(globs, _, _)| {
                globs.len() == key_segments.len()
                    && globs.iter().zip(&key_segments).all(|(g, s)| glob_match(g, s))
            })
            .map(|(_, path, source)| HealthScript {
                name: path.clone(),
                source: source.clone(),
                use_open_libs: true,
            })
    }
}

#[cfg(feature = "lua")]
#[cfg_attr(docsrs, doc(cfg(feature = "lua")))]
pub use with_lua::*;

#[cfg(feature = "lua")]
mod with_lua {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::Value;

    use std::sync::Arc;

    use super::{HealthScript, HealthScripts};
    use crate::health::{HealthError, HealthResult, parts::ScriptHealth, parts::ScriptOutput};
    use crate::object::ObjectRef;
    use crate::script::{LuaEngine, LuaHealth, ScriptError};

    /// A script's answer as [`assess`](crate::health::assess) reads it: the empty health (see
    /// [`LuaHealth`]) is no health (`health: None`, final all the same), any other status is
    /// that status with the message; `deletionMessage` is kept for an object being deleted.
    ///
    /// ```
    /// use gitops_core::health::{HealthStatus, parts::ScriptOutput};
    /// use gitops_core::script::LuaEngine;
    ///
    /// let engine = LuaEngine::default();
    /// let obj = serde_json::json!({});
    /// let raw = engine.eval_health("s", "return {status = 'Degraded', message = 'x'}", false, &obj, 0);
    /// let out = ScriptOutput::from(raw.unwrap());
    /// assert_eq!(out.health.unwrap().status, HealthStatus::Degraded);
    /// let empty = engine.eval_health("s", "return {}", false, &obj, 0).unwrap();
    /// assert_eq!(ScriptOutput::from(empty).health, None);
    /// ```
    impl From<LuaHealth> for ScriptOutput {
        fn from(h: LuaHealth) -> ScriptOutput {
            // The engine gives one of the six codes or "" (the empty health).
            if h.returned_nil {
                return ScriptOutput::nil();
            }
            let health = h.status.parse().ok().map(|status| HealthResult::new(status, h.message));
            ScriptOutput::new(health, h.deletion_message)
        }
    }

    /// Lua health scripts as the [`ScriptHealth`] of a health assessment: [`HealthScripts`]
    /// finds the script for an object's kind (Argo CD's precedence), a [`LuaEngine`] runs it.
    ///
    /// This is the one way to give [`assess`](crate::health::assess) (and
    /// [`ResourceHealthInput::from_objects`](crate::health::ResourceHealthInput::from_objects))
    /// Lua scripts: pass it with [`HealthContext::with_scripts`](crate::health::HealthContext::with_scripts). The only `health` method is
    /// the trait's, [`ScriptHealth::health`]. [`LuaEngine`] alone does not implement
    /// [`ScriptHealth`]: it runs whatever script it is handed and has no table of which script
    /// belongs to which kind, so it could only answer "no script" for every object.
    ///
    /// A script from `argocd-cm` comes in through [`HealthScripts::from_settings`]; a
    /// `health.lua` of your own through [`HealthScripts::with_directory`], keyed by its path in
    /// Argo CD's `resource_customizations/` layout (`<group>/<Kind>/health.lua`).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::health::{HealthScripts, ScriptedHealth};
    /// use gitops_core::health::{HealthContext, assess};
    /// use gitops_core::script::LuaEngine;
    /// use gitops_core::config::Settings;
    /// use gitops_core::health::HealthStatus;
    ///
    /// // From argocd-cm:
    /// let cm = serde_json::json!({"data": {
    ///     "resource.customizations.health.example.com_Widget":
    ///         "if obj.status.ready then return {status = 'Healthy'} end\n\
    ///          return {status = 'Progressing', message = 'waiting'}"
    /// }});
    /// let scripts = HealthScripts::from_settings(&Settings::from_config_map(&cm).unwrap());
    /// let health = ScriptedHealth::new(scripts, LuaEngine::default());
    /// let obj = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
    ///     "metadata": {"name": "w"}, "status": {"ready": false}});
    /// // At the time 0 (unix seconds):
    /// let h = assess(&obj, &HealthContext::new(0).with_scripts(&health)).unwrap().unwrap();
    /// assert_eq!((h.status, h.message.as_str()), (HealthStatus::Progressing, "waiting"));
    ///
    /// // A health.lua of your own, for the same kind:
    /// let files = std::collections::BTreeMap::from([(
    ///     "example.com/Widget/health.lua".to_string(),
    ///     "return {status = 'Suspended', message = 'paused'}".to_string(),
    /// )]);
    /// let health = ScriptedHealth::new(HealthScripts::new().with_directory(&files), LuaEngine::default());
    /// let h = assess(&obj, &HealthContext::new(0).with_scripts(&health)).unwrap().unwrap();
    /// assert_eq!(h.status, HealthStatus::Suspended);
    /// ```
    #[derive(Debug, Clone, Default)]
    pub struct ScriptedHealth {
        scripts: HealthScripts,
        engine: LuaEngine,
    }

    impl ScriptedHealth {
        /// Scripts run on an engine.
        pub fn new(scripts: HealthScripts, engine: LuaEngine) -> Self {
            ScriptedHealth { scripts, engine }
        }

        /// The same scripts on an engine scoped to one request ([`LuaEngine::for_request`]):
        /// every script the returned value runs spends from one request budget.
        #[must_use]
        pub fn for_request(&self) -> Self {
            ScriptedHealth { scripts: self.scripts.clone(), engine: self.engine.for_request() }
        }

        /// The scripts.
        pub fn scripts(&self) -> &HealthScripts {
            &self.scripts
        }

        /// The engine.
        pub fn engine(&self) -> &LuaEngine {
            &self.engine
        }

        /// The script's raw answer, for tools that show what a script returned: runs the
        /// script for the object's kind, if there is one, and gives its [`LuaHealth`] (status
        /// text, `""` for the empty health, message, `deletionMessage`); `Ok(None)` when no
        /// script applies. No deletion rule is applied. [`ScriptHealth::health`] gives the
        /// same answer as `assess` reads it ([`ScriptOutput::from`]).
        ///
        /// # Errors
        ///
        /// A script that fails, naming the script and the object; Argo CD shows the object
        /// as `Unknown` with [`ScriptError::reason`] as the message.
        ///
        /// ```
        /// use gitops_core::health::{HealthScripts, ScriptedHealth};
        /// use gitops_core::config::Settings;
        /// use gitops_core::object::ObjectRef;
        ///
        /// let cm = serde_json::json!({"data": {
        ///     "resource.customizations.health.example.com_Widget": "error('no status yet')"
        /// }});
        /// let scripts = HealthScripts::from_settings(&Settings::from_config_map(&cm).unwrap());
        /// let health = ScriptedHealth::new(scripts, Default::default());
        /// let obj = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
        ///     "metadata": {"name": "w", "namespace": "shop"}});
        /// let r = ObjectRef::from_object(&obj).unwrap();
        /// let err = health.evaluate(&obj, &r, 0).unwrap_err();
        /// assert_eq!(err.to_string(),
        ///     "health script argocd-cm example.com/Widget on example.com/Widget:shop/w: \
        ///      <string>:1: no status yet");
        /// assert_eq!(err.reason(), "<string>:1: no status yet");
        /// ```
        pub fn evaluate(
            &self,
            obj: &Value,
            obj_ref: &ObjectRef,
            now: i64,
        ) -> Result<Option<LuaHealth>, ScriptError> {
            let Some(script) = self.scripts.find(&obj_ref.group, &obj_ref.kind) else {
                return Ok(None);
            };
            self.engine
                .eval_health(&script.name, &script.source, script.use_open_libs, obj, now)
                .map(Some)
                .map_err(|e| e.with_object(obj_ref.clone()))
        }
    }

    /// The script's answer as `assess` reads it ([`ScriptOutput::from`]), a script error as a
    /// health error naming the script.
    impl ScriptHealth for ScriptedHealth {
        fn health(
            &self,
            obj: &Value,
            object: &ObjectRef,
            now: i64,
        ) -> Result<Option<ScriptOutput>, HealthError> {
            let Some(script) = self.scripts.find(&object.group, &object.kind) else {
                return Ok(None);
            };
            self.engine
                .eval_health(&script.name, &script.source, script.use_open_libs, obj, now)
                .map(|out| Some(ScriptOutput::from(out)))
                .map_err(|e| match e.kind {
                    crate::script::ScriptErrorKind::Interrupted(_) => HealthError::Interrupted {
                        object: Box::new(object.clone()),
                        script: script.name.clone(),
                        message: e.reason(),
                    },
                    _ => HealthError::script(object, &script.name, e.reason()),
                })
        }
    }

    /// The health of `obj` with `script` as the Lua health script of its kind: one call for a
    /// `health.lua` and an object.
    ///
    /// The script is the kind's `health.lua` in a `resource_customizations/` folder of the
    /// host's, named `<group>/<Kind>/health.lua` (`<Kind>/health.lua` for the core group) in
    /// errors, with the `string`, `math` and safe `os` libraries, on a [`LuaEngine`] with the
    /// default limits ([`crate::script::ScriptLimits`]), `os.time()` reading `now` (unix
    /// seconds). Its answer goes through [`assess`](crate::health::assess) as any script's
    /// does, with the default [`HealthContext`](crate::health::HealthContext): the deletion
    /// rule applies, and a script that returns `nil` hands over to the kind's built-in check.
    /// The same as [`assess`](crate::health::assess) with a [`ScriptedHealth`] holding that one
    /// script; for `argocd-cm`'s scripts, a whole folder, other limits or a request budget,
    /// build a [`ScriptedHealth`].
    ///
    /// # Errors
    ///
    /// As [`assess`](crate::health::assess): a script that fails is a
    /// [`HealthError::Script`] naming the script and the object; the object's health is then
    /// [`HealthError::health`].
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::health::{self, HealthStatus};
    ///
    /// let script = r#"
    ///     if obj.status ~= nil and obj.status.ready then
    ///         return {status = "Healthy"}
    ///     end
    ///     return {status = "Progressing", message = "waiting for " .. obj.metadata.name}"#;
    /// let widget = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
    ///     "metadata": {"name": "w"}});
    /// let h = health::assess_lua(&widget, script, 0).unwrap().unwrap();
    /// assert_eq!((h.status, h.message.as_str()), (HealthStatus::Progressing, "waiting for w"));
    ///
    /// let err = health::assess_lua(&widget, "error('no status yet')", 0).unwrap_err();
    /// assert_eq!(err.to_string(), "<string>:1: no status yet");
    /// assert_eq!(err.health().status, HealthStatus::Unknown);
    /// ```
    pub fn assess_lua(
        obj: &Value,
        script: &str,
        now: i64,
    ) -> Result<Option<HealthResult>, HealthError> {
        let object = ObjectRef::from_object_lossy(obj);
        let key = crate::object::group_kind_key(&object.group, &object.kind);
        let name =
            if key.is_empty() { "health.lua".to_string() } else { format!("{key}/health.lua") };
        // Keyed by the object's own kind, whatever its spelling (a `_` in a kind is no
        // wildcard here, and an object without a kind still runs the script).
        let mut scripts = HealthScripts::new();
        Arc::make_mut(&mut scripts.tables).exact.insert(key, (name, script.to_string()));
        let scripted = ScriptedHealth::new(scripts, LuaEngine::default());
        crate::health::assess(obj, &crate::health::HealthContext::new(now).with_scripts(&scripted))
    }

    /// The outcome of one case of a `health_test.yaml`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    pub struct HealthTestCase {
        /// The case's `inputPath`.
        pub input_path: String,
        /// The script that ran (found by the object's kind, as Argo CD's test does).
        pub script: String,
        /// The expected status and message.
        pub expected: LuaHealth,
        /// What the script gave: its health, or the error text (also when the input file
        /// could not be read: the case fails and the others still run).
        pub got: Result<LuaHealth, String>,
        /// Whether `got` equals `expected` (status, message and `deletionMessage`, exactly, as
        /// Argo CD's test compares them).
        pub passed: bool,
    }

    /// A `health_test.yaml` or one of its inputs cannot be used.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("{file}: {message}")]
    #[non_exhaustive]
    pub struct HealthTestError {
        /// The file (the test file, or an input path relative to it).
        pub file: String,
        /// What is wrong.
        pub message: String,
    }

    impl HealthScripts {
        /// Runs the cases of one `health_test.yaml` (Argo CD's format: `tests:` with `inputPath`
        /// and `healthStatus: {status, message}`, keys in any case).
        ///
        /// `test_yaml` is the file's text, `inputs` the text of each `inputPath` it names. Each
        /// case's script is found by the object's kind in these scripts, as Argo CD's own test does,
        /// and falls back to `default_script` (the `health.lua` beside the file). Without one,
        /// the case runs through the built-in rule of the object's kind
        /// ([`builtin_rule`](crate::health::parts::builtin_rule), named `built-in <group>/<Kind>`), and
        /// fails when there is none. Scripts and rules run directly, without the deletion rule,
        /// with open libraries for directory scripts.
        #[cfg_attr(docsrs, doc(cfg(feature = "lua")))]
        pub fn run_tests(
            &self,
            test_yaml: &str,
            inputs: &BTreeMap<String, String>,
            default_script: Option<&HealthScript>,
            engine: &LuaEngine,
            now: i64,
        ) -> Result<Vec<HealthTestCase>, HealthTestError> {
            let scripts = self;
            let fail =
                |file: &str, message: String| HealthTestError { file: file.to_string(), message };
            // Read as Argo CD reads YAML: a repeated key keeps its last value.
            let lenient = crate::object::ParseOptions::default();
            let read = |text: &str| lenient.parse_documents(text).map(|d| d.0);
            let doc = read(test_yaml)
                .map_err(|e| fail("health_test.yaml", e.to_string()))?
                .into_iter()
                .next()
                .unwrap_or(Value::Null);
            let tests = match field(&doc, "tests") {
                Some(Value::Array(t)) => t.clone(),
                Some(Value::Null) | None => Vec::new(),
                Some(_) => return Err(fail("health_test.yaml", "`tests` is not a list".into())),
            };
            let mut out = Vec::with_capacity(tests.len());
            for (i, case) in tests.iter().enumerate() {
                let at = "health_test.yaml";
                let Some(Value::String(input_path)) = field(case, "inputPath") else {
                    return Err(fail(at, format!("test {i}: missing `inputPath`")));
                };
                let status = field(case, "healthStatus");
                let text_of = |name: &str| match status.and_then(|s| field(s, name)) {
                    Some(Value::String(s)) => s.clone(),
                    _ => String::new(),
                };
                let expected = LuaHealth {
                    status: text_of("status"),
                    message: text_of("message"),
                    deletion_message: text_of("deletionMessage"),
                    returned_nil: false,
                };
                // An input that cannot be read fails its case; the other cases still run.
                let obj = match inputs.get(input_path) {
                    None => Err(format!("{input_path}: input file not found")),
                    Some(text) => read(text)
                        .map(|docs| docs.into_iter().find(|d| !d.is_null()).unwrap_or(Value::Null))
                        .map_err(|e| format!("{input_path}: {e}")),
                };
                let obj = match obj {
                    Ok(obj) => obj,
                    Err(message) => {
                        let script =
                            default_script.map_or_else(|| "built-in".into(), |s| s.name.clone());
                        out.push(HealthTestCase {
                            input_path: input_path.clone(),
                            script,
                            expected,
                            got: Err(message),
                            passed: false,
                        });
                        continue;
                    }
                };
                let r = ObjectRef::from_object_lossy(&obj);
                let (script, got) =
                    match scripts.find(&r.group, &r.kind).or(default_script.cloned()) {
                        Some(script) => {
                            let got = engine
                                .eval_health(
                                    &script.name,
                                    &script.source,
                                    script.use_open_libs,
                                    &obj,
                                    now,
                                )
                                .map_err(|e| e.reason());
                            (script.name, got)
                        }
                        None => builtin_case(&obj, &r),
                    };
                // As Argo CD's test compares the whole health: the deletionMessage too.
                let passed = got.as_ref().is_ok_and(|g| {
                    g.status == expected.status
                        && g.message == expected.message
                        && g.deletion_message == expected.deletion_message
                });
                out.push(HealthTestCase {
                    input_path: input_path.clone(),
                    script,
                    expected,
                    got,
                    passed,
                });
            }
            Ok(out)
        }
    }

    /// A case run through the built-in rule of the object's kind: the rule's name
    /// (`built-in <group>/<Kind>`) and its answer as a script's.
    fn builtin_case(obj: &Value, r: &ObjectRef) -> (String, Result<LuaHealth, String>) {
        let Some(rule) = crate::health::kinds::find(&r.group, &r.kind) else {
            return (
                "built-in".into(),
                Err(format!("no health.lua and no built-in rule for {}", r.group_kind())),
            );
        };
        let got = match crate::health::kinds::evaluate(obj, r) {
            Some(Ok(out)) => Ok(LuaHealth {
                status: out.health.as_ref().map_or("", |h| h.status.as_str()).to_string(),
                message: out.health.map(|h| h.message).unwrap_or_default(),
                deletion_message: out.deletion_message,
                returned_nil: out.returned_nil,
            }),
            Some(Err(e)) => Err(e.to_string()),
            None => Err(format!("no health.lua and no built-in rule for {}", r.group_kind())),
        };
        (format!("built-in {}", rule.name()), got)
    }

    /// A member of an object, with the name matched case-insensitively (the file is read
    /// through Go's JSON decoder); the last match wins.
    fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
        v.as_object()?.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }
}
