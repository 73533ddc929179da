//! `gitops-core health` and `gitops-core test-health`.

use std::path::{Path, PathBuf};

use gitops_core::config::Settings;
use gitops_core::health::HealthStatus;
use gitops_core::health::{
    self, AppHealth, HealthContext, ResourceHealthInput, parts::ScriptHealth,
};

use crate::common::{self, CliError, Output};

pub const HEALTH_USAGE: &str = "\
usage: gitops-core health PATH... [--customizations DIR] [--argocd-cm CM.yaml]
                         [--output text|json|yaml] [--condition-fallback]
                         [--no-builtin-health] [--fail-on STATUS,...]

Assesses the health of the live objects in PATH (files, directories of .yaml, .yml and .json
files, or - for standard input) as Argo CD does, and the health of an application made of
them. An object needs apiVersion and kind; a name is not required.

options:
  --customizations DIR  health scripts in the layout of Argo CD's resource_customizations/
                        (<group>/<Kind>/health.lua)
  --argocd-cm CM.yaml   an argocd-cm ConfigMap, for its resource.customizations health scripts
  --output FORMAT       text (default): the resource table and the app health;
                        json or yaml: {\"status\", \"message\", \"resources\": [...]}
  --condition-fallback  a custom resource with no script, no built-in rule and no
                        built-in check gets its health from status.observedGeneration and
                        its Stalled/Failed, Reconciling/Progressing and Ready/Available
                        conditions (kstatus order) instead of none
  --no-builtin-health   without the built-in rules for the kinds Argo CD 3.6.2 ships a
                        health script for (cert-manager, Argo Rollouts, Flux...): only the
                        scripts of --customizations and --argocd-cm, and the checks of
                        Kubernetes' own kinds, give health
  --fail-on STATUS,...  exit 1 when the app's health status is one of these (Healthy,
                        Suspended, Progressing, Missing, Degraded, Unknown; case-sensitive;
                        may be repeated), as `argocd app wait --health` fails; the output
                        is printed first

exit status: 0, 1 when the app's health status is one of --fail-on, or 2 on an error (a file
that cannot be read or parsed, named with its document)";

/// The options of `health`.
struct HealthArgs {
    paths: Vec<PathBuf>,
    customizations: Option<PathBuf>,
    argocd_cm: Option<PathBuf>,
    output: Output,
    condition_fallback: bool,
    builtin_rules: bool,
    fail_on: Vec<String>,
}

fn parse_args(mut args: lexopt::Parser) -> Result<Option<HealthArgs>, CliError> {
    use lexopt::prelude::*;
    let mut out = HealthArgs {
        paths: Vec::new(),
        customizations: None,
        argocd_cm: None,
        output: Output::Text,
        condition_fallback: false,
        builtin_rules: true,
        fail_on: Vec::new(),
    };
    while let Some(arg) = args.next()? {
        match arg {
            Long("customizations") => out.customizations = Some(args.value()?.into()),
            Long("argocd-cm") => out.argocd_cm = Some(args.value()?.into()),
            Long("output") | Short('o') => {
                out.output = Output::parse(&args.value()?.string()?)?;
            }
            Long("condition-fallback") => out.condition_fallback = true,
            Long("no-builtin-health") => out.builtin_rules = false,
            Long("fail-on") => {
                let names = HealthStatus::ALL.map(HealthStatus::as_str);
                out.fail_on.extend(common::parse_fail_on(&args.value()?.string()?, &names)?);
            }
            Long("help") | Short('h') => {
                outln!("{HEALTH_USAGE}");
                return Ok(None);
            }
            Value(path) => out.paths.push(path.into()),
            other => {
                return Err(CliError::Usage(format!(
                    "{}\n{HEALTH_USAGE}",
                    crate::completion::unexpected(other, HEALTH_USAGE)
                )));
            }
        }
    }
    if out.paths.is_empty() {
        return Err(CliError::Usage(format!("no PATH given\n{HEALTH_USAGE}")));
    }
    Ok(Some(out))
}

/// Builds the health-script engine from `--argocd-cm` and `--customizations`.
///
/// The one place where the Lua engine is constructed for the CLI: scripts from `argocd-cm`
/// and from a `resource_customizations/`-style directory, with the default limits.
#[cfg(feature = "lua")]
pub fn script_engine(
    input: &common::Input,
    settings: Option<&Settings>,
    customizations: Option<&Path>,
) -> Result<Option<Box<dyn ScriptHealth>>, CliError> {
    use gitops_core::health::{HealthScripts, ScriptedHealth};
    let mut scripts = match settings {
        Some(s) => HealthScripts::from_settings(s),
        None => HealthScripts::new(),
    };
    if let Some(dir) = customizations {
        scripts = scripts.with_directory(&read_customizations(input, dir)?);
    }
    // One CLI run is one request: its scripts share the request budget.
    Ok(Some(Box::new(ScriptedHealth::new(scripts, lua_engine().for_request()))))
}

/// The CLI's Lua engine: the default limits, and the host's backstop of 1 s of wall clock
/// per evaluation (Argo CD's own timeout for a script).
#[cfg(feature = "lua")]
pub fn lua_engine() -> gitops_core::script::LuaEngine {
    gitops_core::script::LuaEngine::default().with_interrupt(crate::common::deadline())
}

/// Without the `lua` feature only the built-in checks run.
#[cfg(not(feature = "lua"))]
pub fn script_engine(
    input: &common::Input,
    settings: Option<&Settings>,
    customizations: Option<&Path>,
) -> Result<Option<Box<dyn ScriptHealth>>, CliError> {
    let _ = (input, settings, customizations);
    Ok(None)
}

/// Runs `health`.
pub fn run(input: &common::Input, args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(args) = parse_args(args)? else {
        return Ok(0);
    };
    let settings =
        args.argocd_cm.as_deref().map(|p| common::read_settings(input, p)).transpose()?;
    if let Some(dir) = &args.customizations
        && !dir.is_dir()
    {
        return Err(CliError::Input(format!("{}: not a directory", dir.display())));
    }
    let engine = script_engine(input, settings.as_ref(), args.customizations.as_deref())?;
    if engine.is_none() && (settings.is_some() || args.customizations.is_some()) {
        eprintln!(
            "gitops-core: warning: health scripts are not available in this build; \
             --customizations and --argocd-cm have no effect"
        );
    }
    // Health needs no name: any object with apiVersion and kind is assessed.
    let options = input.options.clone().with_require_name(false);
    let mut objects = Vec::new();
    for p in &args.paths {
        objects.extend(common::read_objects_with(input, p, &options)?);
    }

    let mut ctx = HealthContext::new(crate::common::clock_now())
        .with_condition_fallback(args.condition_fallback)
        .with_builtin_rules(args.builtin_rules);
    if let Some(engine) = engine.as_deref() {
        ctx = ctx.with_scripts(engine);
    }
    let inputs: Vec<ResourceHealthInput> = objects
        .iter()
        .filter_map(|obj| ResourceHealthInput::from_objects(None, Some(obj), &ctx))
        .collect();
    let app = health::AppHealth::aggregate(&inputs);
    if let Some(e) = app.interrupted() {
        return Err(CliError::Input(format!("assessing health: {e}")));
    }
    match args.output {
        Output::Json | Output::Yaml => {
            args.output.print_document(&to_json(&app));
        }
        Output::Text => common::write_out(&to_text(&app)),
    }
    Ok(u8::from(args.fail_on.iter().any(|s| s == app.status.as_str())))
}

/// The JSON output: the app's status and message, and each resource, sorted by group, kind,
/// namespace and name (the library's, which `serve` answers too).
fn to_json(app: &AppHealth) -> gitops_core::protocol::Document<'_> {
    gitops_core::protocol::Document::Health(app)
}

/// The text output: the app health line, then Argo CD's resource table.
fn to_text(app: &AppHealth) -> String {
    let mut rows =
        vec![["GROUP", "KIND", "NAMESPACE", "NAME", "HEALTH", "MESSAGE"].map(String::from)];
    for r in &app.resources {
        let o = &r.object;
        let (status, message) = match &r.health {
            Some(h) => (h.status.as_str(), h.message.as_str()),
            None => ("", ""),
        };
        // One line per resource: line breaks in script messages become spaces.
        let message = message.replace(['\n', '\r', '\t'], " ");
        rows.push([
            o.group.clone(),
            o.kind.clone(),
            o.namespace.clone(),
            o.name.clone(),
            status.to_string(),
            message,
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = format!("{:<20}{}", "Health Status:", app.status);
    if !app.message.is_empty() {
        out.push_str(&format!(" ({})", app.message));
    }
    out.push_str("\n\n");
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Runs `test-health`.
pub fn run_tests(input: &common::Input, args: lexopt::Parser) -> Result<u8, CliError> {
    match test_dir_argument(args, TEST_USAGE)? {
        Some(dir) => run_test_dir(input, &dir, &mut |line| common::write_out(line)),
        None => Ok(0),
    }
}

/// The DIR of a `test-*` command; `None` after printing `usage` for `--help`.
pub fn test_dir_argument(
    mut args: lexopt::Parser,
    usage: &str,
) -> Result<Option<std::path::PathBuf>, CliError> {
    use lexopt::prelude::*;
    let mut dir: Option<std::path::PathBuf> = None;
    while let Some(arg) = args.next()? {
        match arg {
            Value(v) if dir.is_none() => dir = Some(v.into()),
            Long("help") | Short('h') => {
                outln!("{usage}");
                return Ok(None);
            }
            other => return Err(CliError::Usage(crate::completion::unexpected(other, usage))),
        }
    }
    dir.map(Some).ok_or_else(|| CliError::Usage(usage.into()))
}

pub const TEST_USAGE: &str = "\
usage: gitops-core test-health DIR

Runs every health_test.yaml below DIR (Argo CD's resource_customizations layout): each case's
object goes through the health.lua found for its kind (or the one beside the test file);
without one, through the built-in rule of its kind (the kinds Argo CD 3.6.2 ships a script
for). The status, message and deletionMessage are compared exactly; each case names what ran
(the script's path, or `built-in <group>/<Kind>`). A test file, script or input that cannot
be read is a failed case and the run goes on; it always ends with `N passed, N failed`.
Exit 0 when every case passes, 1 when a case fails, 2 when a file could not be read.";

/// Runs the `health_test.yaml` files below `dir`, giving each line of the report (with its
/// newline) to `out`: standard output for the command, a string in tests.
#[cfg(feature = "lua")]
fn run_test_dir(
    input: &common::Input,
    dir: &std::path::Path,
    out: &mut dyn FnMut(&str),
) -> Result<u8, CliError> {
    use gitops_core::health::HealthScripts;

    let mut say = |line: String| out(&format!("{line}\n"));

    let files = crate::folders::walk(dir)?;
    let scripts = HealthScripts::new().with_directory(&read_customizations(input, dir)?);
    let engine = lua_engine();
    let now = crate::common::clock_now();
    let (mut passed, mut failed, mut unreadable) = (0usize, 0usize, false);
    for test in files.iter().filter(|f| f.file_name().is_some_and(|n| n == "health_test.yaml")) {
        let test_dir = test.parent().unwrap_or(dir);
        let shown = relative(dir, test_dir);
        // A test file, script or input that cannot be read is one failed case; the run goes
        // on and still ends with its summary.
        // Each test file is one request.
        let cases = match run_test_file(input, dir, test, &scripts, &engine.for_request(), now) {
            Ok(cases) => cases,
            Err(e) => {
                failed += 1;
                unreadable = true;
                say(format!(
                    "FAIL {}",
                    if shown.is_empty() { "health_test.yaml".into() } else { shown }
                ));
                say(format!("  error: {e}"));
                continue;
            }
        };
        for case in cases {
            let name = if shown.is_empty() {
                case.input_path.clone()
            } else {
                format!("{shown}/{}", case.input_path)
            };
            if case.passed {
                passed += 1;
                say(format!("PASS {name} ({})", case.script));
                continue;
            }
            failed += 1;
            say(format!("FAIL {name} ({})", case.script));
            say(format!("  expected: {}", show_health(&case.expected)));
            match &case.got {
                Ok(h) => say(format!("  got:      {}", show_health(h))),
                Err(e) => say(format!("  got:      error: {e}")),
            }
        }
    }
    say(format!("{passed} passed, {failed} failed"));
    Ok(if unreadable { 2 } else { u8::from(failed > 0) })
}

/// A health as a failed case shows it: the status and the quoted message, and the
/// `deletionMessage` when there is one.
#[cfg(feature = "lua")]
fn show_health(h: &gitops_core::script::LuaHealth) -> String {
    let mut out = format!("{} {:?}", h.status, h.message);
    if !h.deletion_message.is_empty() {
        out.push_str(&format!(" deletionMessage {:?}", h.deletion_message));
    }
    out
}

/// The cases of one `health_test.yaml`.
#[cfg(feature = "lua")]
fn run_test_file(
    input: &common::Input,
    dir: &std::path::Path,
    test: &std::path::Path,
    scripts: &gitops_core::health::HealthScripts,
    engine: &gitops_core::script::LuaEngine,
    now: i64,
) -> Result<Vec<gitops_core::health::HealthTestCase>, CliError> {
    use std::collections::BTreeMap;

    use gitops_core::health::parts::HealthScript;

    let test_dir = test.parent().unwrap_or(dir);
    let script_path = test_dir.join("health.lua");
    // No script beside the test file: the cases test the built-in rules.
    let default_script = match std::fs::symlink_metadata(&script_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(HealthScript::new(
            relative(dir, &script_path),
            crate::common::read_text(input, &script_path)?,
            true,
        )),
    };
    let mut inputs = BTreeMap::new();
    let below = crate::folders::walk(test_dir)?;
    for f in below {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "yaml" | "yml" | "json") {
            // An input that cannot be read fails only the cases that use it.
            if let Ok(text) = crate::common::read_text(input, &f) {
                inputs.insert(relative(test_dir, &f), text);
            }
        }
    }
    let text = crate::common::read_text(input, test)?;
    scripts.run_tests(&text, &inputs, default_script.as_ref(), engine, now).map_err(|e| {
        let file = if e.file == "health_test.yaml" {
            test.display().to_string()
        } else {
            test_dir.join(&e.file).display().to_string()
        };
        CliError::Input(format!("{file}: {}", e.message))
    })
}

#[cfg(not(feature = "lua"))]
fn run_test_dir(
    _input: &common::Input,
    _dir: &std::path::Path,
    _out: &mut dyn FnMut(&str),
) -> Result<u8, CliError> {
    Err(CliError::Usage("`test-health` needs the `lua` feature".into()))
}

/// The `health.lua` files below a directory in the layout of Argo CD's
/// `resource_customizations/`, by path relative to it, for
/// `HealthScripts::with_directory` (also what `health --customizations DIR` needs).
#[cfg(feature = "lua")]
pub fn read_customizations(
    input: &common::Input,
    dir: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    let files = crate::folders::walk(dir)?;
    let mut out = std::collections::BTreeMap::new();
    for f in files.iter().filter(|f| f.file_name().is_some_and(|n| n == "health.lua")) {
        out.insert(relative(dir, f), crate::common::read_text(input, f)?);
    }
    Ok(out)
}

/// `path` relative to `base`, with `/` separators.
#[cfg(feature = "lua")]
pub fn relative(base: &std::path::Path, path: &std::path::Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(all(test, feature = "lua"))]
mod test_health_tests {
    use std::path::PathBuf;

    fn testdata(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(rel)
    }

    /// Runs `test-health` on a folder of testdata: its exit status (or error) and its report,
    /// kept for the assertion messages instead of printed.
    fn run(rel: &str) -> (Result<u8, String>, String) {
        let mut report = String::new();
        let code =
            super::run_test_dir(&crate::common::Input::default(), &testdata(rel), &mut |line| {
                report.push_str(line)
            });
        (code.map_err(|e| e.to_string()), report)
    }

    #[test]
    fn test_health_exit_codes() {
        let (code, report) = run("health/customizations");
        assert_eq!(code, Ok(0), "{report}");
        assert!(report.ends_with("\n12 passed, 0 failed\n"), "{report}");
        let (code, report) = run("health/lua-failing");
        assert_eq!(code, Ok(1), "{report}");
        assert!(report.ends_with("\n1 passed, 2 failed\n"), "{report}");
        let (code, report) = run("health/no-such-dir");
        let err = code.unwrap_err();
        assert!(err.contains("health/no-such-dir"), "{err}\n{report}");
        // A test file that cannot be read is one failed case: the run goes on, prints its
        // summary and exits 2.
        let (code, report) = run("health/lua-invalid");
        assert_eq!(code, Ok(2), "{report}");
        assert!(report.ends_with("\n0 passed, 1 failed\n"), "{report}");
        // An input that cannot be found fails its case only.
        let (code, report) = run("health/lua-missing-input");
        assert_eq!(code, Ok(1), "{report}");
        assert!(report.ends_with("\n0 passed, 1 failed\n"), "{report}");
        // Argo CD 3.6.2's cases, with no script: the built-in rules, every case passing.
        let (code, report) = run("health/argo-cd-3.6");
        assert_eq!(code, Ok(0), "{report}");
        assert!(report.contains("(built-in cert-manager.io/Certificate)\n"), "{report}");
        assert!(report.ends_with(" passed, 0 failed\n"), "{report}");
    }
}

#[cfg(test)]
mod tests {
    use gitops_core::health::{AppHealth, ResourceHealthInput};
    use gitops_core::health::{HealthResult, HealthStatus};
    use gitops_core::object::ObjectRef;

    use super::{to_json, to_text};

    fn app() -> gitops_core::health::AppHealth {
        AppHealth::aggregate(&[
            ResourceHealthInput::new(
                ObjectRef::new("", "v1", "ConfigMap", "bookstore-dev", "settings"),
                None,
            ),
            ResourceHealthInput::new(
                ObjectRef::new("apps", "v1", "Deployment", "bookstore-dev", "api"),
                Some(HealthResult::new(
                    HealthStatus::Degraded,
                    "Deployment \"api\" exceeded its progress deadline",
                )),
            ),
            ResourceHealthInput::new(
                ObjectRef::new("", "v1", "Service", "bookstore-dev", "api"),
                Some(HealthResult::status(HealthStatus::Healthy)),
            ),
        ])
    }

    #[test]
    fn text_output() {
        assert_eq!(
            to_text(&app()),
            "\
Health Status:      Degraded (Caused by apps/Deployment:bookstore-dev/api)

GROUP  KIND        NAMESPACE      NAME      HEALTH    MESSAGE
       ConfigMap   bookstore-dev  settings
       Service     bookstore-dev  api       Healthy
apps   Deployment  bookstore-dev  api       Degraded  Deployment \"api\" exceeded its progress deadline
"
        );
    }

    #[test]
    fn errors_name_the_file_and_document() {
        let dir = std::env::temp_dir().join(format!("gitops-core-health-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap(); // test scaffolding
        let file = dir.join("bad.yaml");
        std::fs::write(&file, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\n")
            .unwrap(); // test scaffolding
        let result = super::run(
            &crate::common::Input::default(),
            lexopt::Parser::from_args([file.as_os_str()]),
        );
        let _ = std::fs::remove_dir_all(&dir);
        let Err(crate::common::CliError::Input(message)) = result else {
            panic!("expected an input error, got {result:?}");
        };
        assert_eq!(message, format!("{}: document 2: missing field `apiVersion`", file.display()));
    }

    #[test]
    fn usage_errors() {
        let result = super::run(
            &crate::common::Input::default(),
            lexopt::Parser::from_args(["--output", "xml", "x.yaml"]),
        );
        assert!(
            matches!(&result, Err(crate::common::CliError::Usage(m)) if m == "unknown output `xml`: expected text, json or yaml"),
            "{result:?}"
        );
        let result = super::run(
            &crate::common::Input::default(),
            lexopt::Parser::from_args(Vec::<&str>::new()),
        );
        assert!(
            matches!(&result, Err(crate::common::CliError::Usage(m)) if m.starts_with("no PATH given")),
            "{result:?}"
        );
    }

    #[test]
    fn json_output() {
        let json = serde_json::to_string(&to_json(&app())).unwrap(); // serializing plain data
        assert_eq!(
            json,
            r#"{"status":"Degraded","message":"Caused by apps/Deployment:bookstore-dev/api","resources":[{"group":"","version":"v1","kind":"ConfigMap","namespace":"bookstore-dev","name":"settings","status":null,"message":""},{"group":"","version":"v1","kind":"Service","namespace":"bookstore-dev","name":"api","status":"Healthy","message":""},{"group":"apps","version":"v1","kind":"Deployment","namespace":"bookstore-dev","name":"api","status":"Degraded","message":"Deployment \"api\" exceeded its progress deadline"}]}"#
        );
    }
}
