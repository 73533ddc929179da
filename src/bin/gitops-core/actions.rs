//! `gitops-core actions list|run` and `gitops-core test-actions`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{self, CliError, Output};

pub const ACTIONS_USAGE: &str = "\
usage: gitops-core actions list OBJ [--customizations DIR] [--argocd-cm CM.yaml]
                                    [--no-builtin-actions] [--output text|json|yaml]
       gitops-core actions run OBJ NAME [--param NAME=VALUE]... [--now RFC3339]
                                        [--customizations DIR] [--argocd-cm CM.yaml]
                                        [--no-builtin-actions] [--output yaml|json]
                                        [--show-secrets]

Argo CD's resource actions on one object (OBJ: a YAML or JSON file, or - for standard input).
`list` prints the actions the object offers (its kind's discovery.lua); `run` runs one
(its action.lua) and prints the resources it changes: a patch of the object (the new object
and the RFC 6902 patch against OBJ) or an object to create (a Job or Workflow), a Secret's
values masked as diff masks them (--show-secrets shows them). A created object without a
namespace is created in OBJ's; names are checked as the API server checks them. Nothing is
applied. Scripts run in the health-script sandbox, without the open libraries, as Argo CD's
API server runs them. The kinds Argo CD 3.6.2 ships actions for (restart a Deployment,
create a Job from a CronJob, suspend a Flux Kustomization, ...) have them built in, with no
Lua; a DIR folder for the kind replaces them, and argocd-cm's actions come first.

options:
  --customizations DIR  scripts in the layout of Argo CD's resource_customizations/
                        (<group>/<Kind>/actions/discovery.lua, .../actions/NAME/action.lua)
  --argocd-cm CM.yaml   an argocd-cm ConfigMap, for its resource.customizations.actions
                        (definitions, discovery.lua, mergeBuiltinActions); it wins over DIR
  --no-builtin-actions  only the actions of argocd-cm and DIR, none built in
  --param NAME=VALUE    an action parameter, the script's actionParams[NAME] (repeatable)
  --now RFC3339         the clock of os.date and os.time (default: now)
  --output FORMAT       list: text (default), json or yaml; run: yaml (default) or json
  --show-secrets        run: print a Secret's values instead of masks

exit status: 0, 1 when the action fails (a script error or a result that is refused, printed
on stderr), 2 on a usage error or a file that cannot be read";

pub const TEST_USAGE: &str = "\
usage: gitops-core test-actions DIR

Runs every action_test.yaml below DIR (Argo CD's resource_customizations layout) with the
scripts below DIR, as Argo CD's own test does; a kind with no scripts there runs its built-in
actions, and its lines end in `, built-in`. A discovery case passes when every discovered
action is in its `result` (a field left out there is its zero value); an action case passes
when it fails with exactly its expectedErrorMessage, or when each impacted resource matches an
object of its expectedOutputPath (by kind, name and namespace; a Job created from a CronJob or
a Workflow from a CronWorkflow or WorkflowTemplate by the prefix of the source's name) with no
difference by Argo CD's diff (numbers compared as Kubernetes compares them). The scripts' clock
is 0001-01-01T00:00:00Z, the time Argo CD's expected files hold. A test file or input that
cannot be read is a failed case and the run goes on; it always ends with `N passed, N failed`.
Exit 0 when every case passes, 1 when a case fails, 2 when a file could not be read.";

struct Args {
    command: String,
    obj: Option<PathBuf>,
    name: Option<String>,
    customizations: Option<PathBuf>,
    argocd_cm: Option<PathBuf>,
    params: BTreeMap<String, String>,
    now: Option<String>,
    output: Option<Output>,
    show_secrets: bool,
    no_builtin: bool,
}

fn parse_args(mut p: lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let mut a = Args {
        command: String::new(),
        obj: None,
        name: None,
        customizations: None,
        argocd_cm: None,
        params: BTreeMap::new(),
        now: None,
        output: None,
        show_secrets: false,
        no_builtin: false,
    };
    let usage = |m: String| CliError::Usage(format!("{m}\n{ACTIONS_USAGE}"));
    while let Some(arg) = p.next()? {
        match arg {
            Long("customizations") => a.customizations = Some(p.value()?.into()),
            Long("argocd-cm") => a.argocd_cm = Some(p.value()?.into()),
            Long("param") | Short('p') => {
                let v = p.value()?.string()?;
                let Some((k, v)) = v.split_once('=') else {
                    return Err(usage(format!("--param `{v}`: expected NAME=VALUE")));
                };
                a.params.insert(k.to_string(), v.to_string());
            }
            Long("now") => a.now = Some(p.value()?.string()?),
            Long("show-secrets") => a.show_secrets = true,
            Long("no-builtin-actions") => a.no_builtin = true,
            Long("output") | Short('o') => a.output = Some(Output::parse(&p.value()?.string()?)?),
            Long("help") | Short('h') => {
                outln!("{ACTIONS_USAGE}");
                return Ok(None);
            }
            Value(v) if a.command.is_empty() => a.command = v.string()?,
            Value(v) if a.obj.is_none() => a.obj = Some(v.into()),
            Value(v) if a.name.is_none() && a.command == "run" => a.name = Some(v.string()?),
            other => return Err(usage(crate::completion::unexpected(other, ACTIONS_USAGE))),
        }
    }
    match a.command.as_str() {
        "list" | "run" => {}
        "" => return Err(usage("missing `list` or `run`".into())),
        other => return Err(usage(format!("unknown actions command `{other}`"))),
    }
    if a.obj.is_none() {
        return Err(usage("no OBJ given".into()));
    }
    if a.command == "run" && a.name.is_none() {
        return Err(usage("no action NAME given".into()));
    }
    if a.command == "list" && (!a.params.is_empty() || a.now.is_some() || a.show_secrets) {
        return Err(usage("--param, --now and --show-secrets are options of `run`".into()));
    }
    if a.command == "run" && a.output == Some(Output::Text) {
        return Err(usage("`run` prints yaml or json".into()));
    }
    Ok(Some(a))
}

/// Runs `actions`.
pub fn run(input: &common::Input, p: lexopt::Parser) -> Result<u8, CliError> {
    use gitops_core::actions::{ActionScripts, Actions};

    let Some(a) = parse_args(p)? else { return Ok(0) };
    let mut scripts = match &a.argocd_cm {
        Some(cm) => ActionScripts::from_settings(&common::read_settings(input, cm)?),
        None => ActionScripts::new(),
    }
    .with_builtin_actions(!a.no_builtin);
    if let Some(dir) = &a.customizations {
        if !dir.is_dir() {
            return Err(CliError::Input(format!("{}: not a directory", dir.display())));
        }
        scripts = scripts.with_directory(&read_action_scripts(input, dir)?);
    }
    let obj_path = a.obj.as_deref().unwrap_or(Path::new("-"));
    let obj = common::read_document(input, obj_path)?;
    let now = match &a.now {
        Some(s) => gitops_core::vocabulary::Timestamp::parse(s)
            .map(gitops_core::vocabulary::Timestamp::unix_seconds)
            .map_err(|e| CliError::Usage(format!("--now: {e}")))?,
        None => common::clock_now(),
    };
    let actions = Actions::new(scripts).with_reveal_secrets(a.show_secrets);
    // One run is one request, each script under the 1 s deadline.
    #[cfg(feature = "lua")]
    let actions = actions.with_engine(crate::health::lua_engine().for_request());
    if a.command == "list" {
        let found = match actions.discover(&obj, now) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("gitops-core: {e}");
                return Ok(1);
            }
        };
        let output = a.output.unwrap_or(Output::Text);
        if !output.print_document(&gitops_core::protocol::Document::Actions(&found)) {
            common::write_out(&list_text(&found));
        }
        return Ok(0);
    }
    let name = a.name.as_deref().unwrap_or_default();
    match actions.run(&obj, name, &a.params, now) {
        Ok(result) => {
            let out = gitops_core::protocol::Document::ActionRun(&result, &obj);
            a.output.unwrap_or(Output::Yaml).print_document(&out);
            Ok(0)
        }
        Err(e) => {
            eprintln!("gitops-core: {e}");
            Ok(1)
        }
    }
}

/// The text of `actions list`: one row per action.
fn list_text(found: &[gitops_core::actions::ResourceAction]) -> String {
    if found.is_empty() {
        return "no actions\n".to_string();
    }
    let rows: Vec<[String; 4]> = found
        .iter()
        .map(|a| {
            let params: Vec<&str> = a.params.iter().map(|p| p.name.as_str()).collect();
            [
                a.name.clone(),
                if a.disabled { "disabled".into() } else { "enabled".into() },
                a.display_name.clone(),
                params.join(","),
            ]
        })
        .collect();
    let head = ["NAME", "STATE", "DISPLAY NAME", "PARAMS"];
    let mut widths = head.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 4]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(head);
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3]]));
    }
    out
}

/// The action scripts below a directory in the layout of Argo CD's `resource_customizations/`,
/// by path relative to it, for `ActionScripts::with_directory`.
fn read_action_scripts(
    input: &common::Input,
    dir: &Path,
) -> Result<BTreeMap<String, String>, CliError> {
    let files = crate::folders::walk(dir)?;
    let mut out = BTreeMap::new();
    for f in &files {
        let rel = crate::health::relative(dir, f);
        let is_script = rel.contains("/actions/")
            && (rel.ends_with("/actions/discovery.lua") || rel.ends_with("/action.lua"));
        if is_script {
            out.insert(rel, common::read_text(input, f)?);
        }
    }
    Ok(out)
}

/// Runs `test-actions`.
pub fn run_tests(input: &common::Input, p: lexopt::Parser) -> Result<u8, CliError> {
    match crate::health::test_dir_argument(p, TEST_USAGE)? {
        Some(dir) => run_test_dir(input, &dir, &mut |line| common::write_out(line)),
        None => Ok(0),
    }
}

/// Runs the `action_test.yaml` files below `dir`, giving each line of the report (with its
/// newline) to `out`.
fn run_test_dir(
    input: &common::Input,
    dir: &Path,
    out: &mut dyn FnMut(&str),
) -> Result<u8, CliError> {
    use gitops_core::actions::{ActionScripts, ActionTestKind, Actions};

    let mut say = |line: String| out(&format!("{line}\n"));

    let files = crate::folders::walk(dir)?;
    let actions =
        Actions::new(ActionScripts::new().with_directory(&read_action_scripts(input, dir)?));
    #[cfg(feature = "lua")]
    let actions = actions.with_engine(crate::health::lua_engine());
    let (mut passed, mut failed, mut unreadable) = (0usize, 0usize, false);
    for test in files.iter().filter(|f| f.file_name().is_some_and(|n| n == "action_test.yaml")) {
        let test_dir = test.parent().unwrap_or(dir);
        let shown = crate::health::relative(dir, test_dir);
        let prefix = if shown.is_empty() { String::new() } else { format!("{shown}/") };
        let cases = read_test_inputs(input, test_dir).and_then(|inputs| {
            let text = common::read_text(input, test)?;
            actions
                .run_tests(&text, &inputs, Actions::TEST_NOW)
                .map_err(|e| CliError::Input(format!("{}: {}", test.display(), e.message)))
        });
        let cases = match cases {
            Ok(c) => c,
            Err(e) => {
                failed += 1;
                unreadable = true;
                say(format!("FAIL {prefix}action_test.yaml"));
                say(format!("  error: {e}"));
                continue;
            }
        };
        for c in cases {
            let mut what = match c.kind {
                ActionTestKind::Discovery => "discovery".to_string(),
                _ => format!("action {}", c.action),
            };
            if c.script.starts_with("built-in ") {
                what.push_str(", built-in");
            }
            if c.passed {
                passed += 1;
                say(format!("PASS {prefix}{} ({what})", c.input_path));
            } else {
                failed += 1;
                say(format!("FAIL {prefix}{} ({what})", c.input_path));
                say(format!("  {}", c.message));
            }
        }
    }
    say(format!("{passed} passed, {failed} failed"));
    Ok(if unreadable { 2 } else { u8::from(failed > 0) })
}

/// The `.yaml`, `.yml` and `.json` files below a test's folder, by path relative to it; one
/// that cannot be read fails only the cases that use it.
fn read_test_inputs(
    input: &common::Input,
    test_dir: &Path,
) -> Result<BTreeMap<String, String>, CliError> {
    let below = crate::folders::walk(test_dir)?;
    let mut inputs = BTreeMap::new();
    for f in below {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "yaml" | "yml" | "json")
            && let Ok(text) = common::read_text(input, &f)
        {
            inputs.insert(crate::health::relative(test_dir, &f), text);
        }
    }
    Ok(inputs)
}
