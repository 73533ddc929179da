//! `gitops-core diff --desired PATH --live PATH [--app APP.yaml] [--argocd-cm CM.yaml]
//! [--output text|json]`: compares desired and live objects as Argo CD does.
//!
//! Exit status: 0 when nothing differs, 1 when something does (a resource requiring pruning
//! included), 2 on an error (the message names the file, the document and the field).

use std::path::PathBuf;

use gitops_core::diff::{self, AppDiff, AppDiffInput, SyncStatus};
use gitops_core::{Application, Scopes, Settings};

use crate::common::{self, CliError, Output};

const HELP: &str = "\
usage: gitops-core diff --desired PATH --live PATH [--app APP.yaml] [--argocd-cm CM.yaml]
                        [--output text|json] [--show-secrets] [--dry-run PATH]
                        [--no-ignore-annotation]

PATH is a file (YAML stream, JSON or List) or a directory (its .yaml/.yml/.json files, sorted);
--desired and --live may be given more than once.
--app          an Argo CD Application (destination namespace, ignoreDifferences, sync options)
--argocd-cm    the argocd-cm ConfigMap (resource customizations, compare options, tracking)
--output       text (default, as `argocd app diff`) or json
--show-secrets print Secret values instead of masks
--dry-run      server-side diff: the results of `kubectl apply --server-side --dry-run=server
               --field-manager=argocd-controller` of the desired objects (PATH as above)
--no-ignore-annotation
               do not read the gitops-core.io/ignore-differences annotation of desired
               objects (read by default: it ignores fields for the annotated object only)

exit status: 0 nothing differs, 1 something differs, 2 error";

/// The parsed arguments.
struct Args {
    desired: Vec<PathBuf>,
    live: Vec<PathBuf>,
    app: Option<PathBuf>,
    cm: Option<PathBuf>,
    output: Output,
    show_secrets: bool,
    dry_run: Vec<PathBuf>,
    ignore_annotation: bool,
}

fn parse(mut p: lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let (mut desired, mut live, mut app, mut cm) = (Vec::new(), Vec::new(), None, None);
    let mut output = Output::Text;
    let mut show_secrets = false;
    let mut dry_run = Vec::new();
    let mut ignore_annotation = true;
    while let Some(arg) = p.next()? {
        match arg {
            Long("desired") => desired.push(PathBuf::from(p.value()?)),
            Long("live") => live.push(PathBuf::from(p.value()?)),
            Long("app") => app = Some(PathBuf::from(p.value()?)),
            Long("argocd-cm") => cm = Some(PathBuf::from(p.value()?)),
            Long("output") | Short('o') => {
                output = Output::parse(&p.value()?.to_string_lossy())?;
            }
            Long("show-secrets") => show_secrets = true,
            Long("dry-run") => dry_run.push(PathBuf::from(p.value()?)),
            Long("no-ignore-annotation") => ignore_annotation = false,
            Long("help") | Short('h') => {
                println!("{HELP}");
                return Ok(None);
            }
            other => return Err(CliError::Usage(format!("{}\n{HELP}", other.unexpected()))),
        }
    }
    let missing = |what: &str| CliError::Usage(format!("missing --{what}\n{HELP}"));
    if desired.is_empty() {
        return Err(missing("desired"));
    }
    if live.is_empty() {
        return Err(missing("live"));
    }
    Ok(Some(Args { desired, live, app, cm, output, show_secrets, dry_run, ignore_annotation }))
}

/// Runs the command.
pub fn run(args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(args) = parse(args)? else { return Ok(0) };
    let desired = common::read_all_objects(&args.desired)?;
    let live = common::read_all_objects(&args.live)?;
    let app = match &args.app {
        Some(p) => common::read_app(p)?,
        None => Application::default(),
    };
    let settings = match &args.cm {
        Some(p) => common::read_settings(p)?,
        None => Settings::default(),
    };
    let mut scopes = Scopes::builtin();
    scopes.add_crds(desired.iter().chain(&live));
    let dry_runs = common::read_all_objects(&args.dry_run)?;
    let mut input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes)
        .with_reveal_secrets(args.show_secrets)
        .with_ignore_annotation(args.ignore_annotation);
    if !dry_runs.is_empty() {
        input = input.with_dry_runs(&dry_runs);
    }
    let result =
        diff::diff_app(&input).map_err(|e| CliError::Input(format!("comparing objects: {e}")))?;
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    match args.output {
        Output::Json => common::print_json(&json_output(&result)),
        Output::Text => write_stdout(&result.render_text()),
    }
    if result.sync_status == SyncStatus::Unknown {
        let messages: Vec<&str> = result
            .conditions
            .iter()
            .filter(|c| c.type_ == "ComparisonError")
            .map(|c| c.message.as_str())
            .collect();
        return Err(CliError::Input(messages.join("; ")));
    }
    Ok(if result.has_differences() { 1 } else { 0 })
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// The JSON document of `--output json`: the library's, which `serve` answers too.
pub fn json_output(result: &AppDiff) -> gitops_core::protocol::output::DiffOutput {
    gitops_core::protocol::output::DiffOutput::new(result)
}
