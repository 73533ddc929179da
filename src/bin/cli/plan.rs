//! `gitops-core plan` and `gitops-core decide`.

use std::path::PathBuf;

use gitops_core::ObjectRef;
use gitops_core::sync::decide::{AutoSyncInput, ResourceStatus, SyncStatusCode, auto_sync};
use gitops_core::sync::time::{format_rfc3339, parse_rfc3339};
use gitops_core::sync::windows::{SyncWindow, SyncWindows, WindowTarget};
use gitops_core::sync::{LiveObject, Observations, SyncRequest, TaskAction, hooks, plan};
use lexopt::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    CliError, Output, print_json, read_all_objects, read_app, read_document, read_settings,
};

const PLAN_USAGE: &str = "\
usage: gitops-core plan --desired PATH --live PATH [--app APP.yaml] [--argocd-cm CM.yaml]
                        [--prune] [--revision REV] [--now RFC3339] [--output text|json]

Prints the sync tasks in the order Argo CD runs them: phase, wave, kind order, name.
--desired and --live may be repeated; a directory stands for its .yaml, .yml and .json files.
--revision and --now (the operation start) name hooks that use generateName.";

const DECIDE_USAGE: &str = "\
usage: gitops-core decide --app APP.yaml --desired PATH --live PATH --revision REV
                          [--project PROJECT.yaml] [--now RFC3339] [--output text|json]

Decides whether an automated sync starts now, from the Application's spec and status.
With --project, the AppProject's sync windows that match the app are checked first.";

/// Per-resource sync status of desired against live, from the diff engine (the same
/// comparison `gitops-core diff` makes).
fn resource_statuses(
    desired: &[Value],
    live: &[Value],
    app: &gitops_core::Application,
    settings: &gitops_core::Settings,
) -> Result<Vec<ResourceStatus>, CliError> {
    let mut scopes = gitops_core::Scopes::builtin();
    scopes.add_crds(desired.iter().chain(live));
    let input = gitops_core::diff::AppDiffInput::new(desired, live, app, settings, &scopes);
    let result = gitops_core::diff::diff_app(&input)
        .map_err(|e| CliError::Input(format!("comparing desired and live: {e}")))?;
    Ok(gitops_core::protocol::output::resource_statuses(&result).1)
}

struct Args {
    desired: Vec<PathBuf>,
    live: Vec<PathBuf>,
    app: Option<PathBuf>,
    cm: Option<PathBuf>,
    project: Option<PathBuf>,
    revision: Option<String>,
    now: Option<String>,
    output: Output,
    prune: bool,
}

fn parse(mut p: lexopt::Parser, usage: &str) -> Result<Option<Args>, CliError> {
    let mut a = Args {
        desired: Vec::new(),
        live: Vec::new(),
        app: None,
        cm: None,
        project: None,
        revision: None,
        now: None,
        output: Output::Text,
        prune: false,
    };
    while let Some(arg) = p.next()? {
        match arg {
            Long("desired") => a.desired.push(p.value()?.into()),
            Long("live") => a.live.push(p.value()?.into()),
            Long("app") => a.app = Some(p.value()?.into()),
            Long("argocd-cm") => a.cm = Some(p.value()?.into()),
            Long("project") => a.project = Some(p.value()?.into()),
            Long("revision") => a.revision = Some(p.value()?.string()?),
            Long("now") => a.now = Some(p.value()?.string()?),
            Long("output") | Short('o') => a.output = Output::parse(&p.value()?.string()?)?,
            Long("prune") => a.prune = true,
            Long("help") | Short('h') => {
                println!("{usage}");
                return Ok(None);
            }
            other => return Err(CliError::Usage(format!("{}\n{usage}", other.unexpected()))),
        }
    }
    Ok(Some(a))
}

/// The objects of every PATH given for a repeatable flag (at least one).
fn objects_of(paths: &[PathBuf], flag: &str, usage: &str) -> Result<Vec<Value>, CliError> {
    if paths.is_empty() {
        return Err(CliError::Usage(format!("missing {flag}\n{usage}")));
    }
    read_all_objects(paths)
}

fn required<T>(v: Option<T>, flag: &str, usage: &str) -> Result<T, CliError> {
    v.ok_or_else(|| CliError::Usage(format!("missing {flag}\n{usage}")))
}

/// Runs `plan`.
pub fn run_plan(args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(a) = parse(args, PLAN_USAGE)? else { return Ok(0) };
    let desired = objects_of(&a.desired, "--desired", PLAN_USAGE)?;
    let live = objects_of(&a.live, "--live", PLAN_USAGE)?;
    let settings = match &a.cm {
        Some(cm) => read_settings(cm)?,
        None => gitops_core::Settings::default(),
    };
    let app_spec = a.app.as_deref().map(read_app).transpose()?;
    let mut request = match &app_spec {
        Some(app) => {
            let app = app.clone();
            // A requested operation (a manual sync) wins over the spec's defaults.
            if app.operation.is_null() {
                SyncRequest::for_app(&app, desired.clone(), "", 0)
            } else {
                SyncRequest::from_operation(&app, desired.clone(), 0)
            }
        }
        None => {
            let mut r = SyncRequest::default();
            r.targets = desired.clone();
            r
        }
    };
    request.prune |= a.prune;
    if let Some(rev) = &a.revision {
        request.revision = rev.clone();
    }
    if let Some(now) = &a.now {
        request.started_at = parse_rfc3339(now).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let diff_app = app_spec.clone().unwrap_or_else(|| {
        let mut app = gitops_core::Application::default();
        app.spec.destination.namespace = request.app_namespace.clone();
        app
    });
    let statuses = resource_statuses(&desired, &live, &diff_app, &settings)?;
    request.modified = Some(
        statuses
            .iter()
            .map(|r| {
                (
                    format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name),
                    r.status != SyncStatusCode::Synced,
                )
            })
            .collect(),
    );
    let mut observations = Observations::default();
    observations.live = live.into_iter().map(|o| LiveObject::new(o, None)).collect();
    let p = plan(&request, &observations);
    let rows: Vec<Value> = p
        .tasks()
        .map(|t| {
            let message = match &t.action {
                TaskAction::Skip { reason } => reason.clone(),
                _ => t.invalid.clone().unwrap_or_default(),
            };
            json!({
                "phase": t.phase.as_str(),
                "wave": t.wave,
                "group": t.key.group,
                "version": t.key.version,
                "kind": t.key.kind,
                "namespace": t.key.namespace,
                "name": t.key.name,
                "action": t.action.name(),
                "hook": t.hook_type().map(|p| p.as_str()),
                "message": message,
            })
        })
        .collect();
    match a.output {
        Output::Json => print_json(&json!({ "tasks": rows })),
        Output::Text => print_table(&rows),
    }
    Ok(if p.valid { 0 } else { 1 })
}

fn print_table(rows: &[Value]) {
    let header =
        ["PHASE", "WAVE", "GROUP", "KIND", "NAMESPACE", "NAME", "ACTION", "HOOK", "MESSAGE"];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        let s = |k: &str| match &r[k] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        table.push(
            ["phase", "wave", "group", "kind", "namespace", "name", "action", "hook", "message"]
                .iter()
                .map(|k| s(k))
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| table.iter().map(|row| row[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in table {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", line.trim_end());
    }
}

/// Runs `decide`.
pub fn run_decide(args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(a) = parse(args, DECIDE_USAGE)? else { return Ok(0) };
    let app = read_app(&required(a.app, "--app", DECIDE_USAGE)?)?;
    let desired = objects_of(&a.desired, "--desired", DECIDE_USAGE)?;
    let live = objects_of(&a.live, "--live", DECIDE_USAGE)?;
    let revision = required(a.revision, "--revision", DECIDE_USAGE)?;
    let now = match &a.now {
        Some(s) => parse_rfc3339(s).map_err(|e| CliError::Usage(e.to_string()))?,
        // The command-line tool is the host: the one place that reads the clock.
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    let settings = match &a.cm {
        Some(cm) => read_settings(cm)?,
        None => gitops_core::Settings::default(),
    };
    let resources = resource_statuses(&desired, &live, &app, &settings)?;
    // A live-only object marked `IgnoreExtraneous` stays OutOfSync itself but does not make
    // the app OutOfSync.
    let extraneous_ignored = |r: &ResourceStatus| {
        r.requires_pruning
            && live.iter().any(|l| {
                let k = ObjectRef::from_object_lossy(l);
                (k.group.as_str(), k.kind.as_str(), k.namespace.as_str(), k.name.as_str())
                    == (r.group.as_str(), r.kind.as_str(), r.namespace.as_str(), r.name.as_str())
                    && hooks::has_annotation_option(
                        l,
                        "argocd.argoproj.io/compare-options",
                        "IgnoreExtraneous",
                    )
            })
    };
    let status =
        if resources.iter().any(|r| r.status != SyncStatusCode::Synced && !extraneous_ignored(r)) {
            SyncStatusCode::OutOfSync
        } else {
            SyncStatusCode::Synced
        };
    // The controller looks at auto-sync only when the project's windows allow it.
    let blocked = match &a.project {
        Some(path) => {
            let project = read_document(path)?;
            let windows: Vec<SyncWindow> =
                serde_json::from_value(project["spec"]["syncWindows"].clone())
                    .or_else(|e| {
                        if project["spec"]["syncWindows"].is_null() {
                            Ok(Vec::new())
                        } else {
                            Err(e)
                        }
                    })
                    .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
            let mut target = WindowTarget::default();
            target.application = app.metadata.name.clone();
            target.namespace = app.spec.destination.namespace.clone();
            target.server = app.spec.destination.server.clone();
            target.cluster_name = app.spec.destination.name.clone();
            match SyncWindows::matching(&windows, &target).can_sync(false, None, now) {
                Ok(true) => None,
                Ok(false) => Some("Sync prevented by sync window".to_string()),
                Err(e) => Some(format!("Sync prevented by sync window: {e}")),
            }
        }
        None => None,
    };
    let out = if let Some(message) = blocked {
        json!({"sync": false, "message": message, "selfHeal": false, "nextAttemptAt": null})
    } else {
        let input = AutoSyncInput::new(status, resources, vec![revision], now);
        let d = auto_sync(&app, &input);
        let message = d.condition.clone().unwrap_or_else(|| d.message.clone());
        json!({
            "sync": d.sync,
            "message": message,
            "selfHeal": d.self_heal,
            "nextAttemptAt": d.next_attempt_at.map(format_rfc3339),
        })
    };
    match a.output {
        Output::Json => print_json(&out),
        Output::Text => {
            println!("sync: {}", out["sync"]);
            println!("message: {}", out["message"].as_str().unwrap_or(""));
            println!("self-heal: {}", out["selfHeal"]);
            if let Some(t) = out["nextAttemptAt"].as_str() {
                println!("next attempt at: {t}");
            }
        }
    }
    Ok(0)
}
