//! `gitops-core plan` and `gitops-core decide`.

use std::path::PathBuf;

use gitops_core::diff::SyncStatus;
use gitops_core::object::ObjectRef;
use gitops_core::protocol::Document;
use gitops_core::sync::{AutoSyncInput, Decision, ResourceStatus, SyncWindow, SyncWindows};
use gitops_core::sync::{BlastRadiusGuard, GuardVerdict};
use gitops_core::sync::{LiveObject, Observations, Plan, SyncRequest};

use gitops_core::vocabulary::{COMPARE_OPTIONS_ANNOTATION, has_annotation_option};
use lexopt::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    CliError, Input, Output, read_all_objects, read_app, read_document, read_settings,
};

pub const PLAN_USAGE: &str = "\
usage: gitops-core plan --desired PATH --live PATH [--app APP.yaml | -n NAMESPACE]
                        [--argocd-cm CM.yaml] [--project PROJECT.yaml [--cluster PATH]]
                        [--prune] [--allow-empty] [--revision REV]
                        [--now RFC3339] [--output text|json|yaml] [GUARD OPTIONS]

Prints the sync tasks in the order Argo CD runs them: phase, wave, kind order, name.
--desired and --live may be repeated; a directory stands for its .yaml, .yml and .json files,
- for standard input. -n sets the destination namespace (over the app's).
--revision and --now (the operation start) name hooks that use generateName.
A prune that waits for confirmation (Prune=confirm) says so in its MESSAGE.
When --desired holds no object and --prune would delete every resource of the app, the plan
is refused unless --allow-empty is given (or the app sets syncPolicy.automated.allowEmpty),
as Argo CD refuses such an automated sync: an empty render is more often a wrong path than
an intent. Only what the app tracks is ever pruned (see --app).
With --project (an AppProject), as `status --project`: live objects it does not permit are
left out (never pruned), and a task whose kind or namespace it does not permit fails the plan
(`resource GROUP:KIND is not permitted in project P`); --cluster gives Argo CD cluster Secrets
(may be repeated) for its permitOnlyProjectScopedClusters.
With a guard option, the plan is measured against the blast-radius guard too: a manual sync
is never refused, but what the guard would say of it is printed after the tasks.";

pub const DECIDE_USAGE: &str = "\
usage: gitops-core decide --app APP.yaml --desired PATH --live PATH --revision REV...
                          [--argocd-cm CM.yaml] [--project PROJECT.yaml] [--now RFC3339]
                          [--output text|json|yaml] [GUARD OPTIONS]

Decides whether an automated sync starts now, from the Application's spec and status.
A multi-source app (spec.sources) takes one --revision per source, in spec.sources order.
With --project, the AppProject's sync windows that match the app are checked first.
With a guard option, an automated sync that would prune too much is refused.";

pub const GUARD_USAGE: &str = "
guard options (any but --claims turns the blast-radius guard on):
  --guard                      the guard with its defaults: --max-prune-fraction 0.5, no
                               --max-prune, protected kinds apps/StatefulSet,
                               PersistentVolumeClaim, Namespace,
                               apiextensions.k8s.io/CustomResourceDefinition
  --max-prune-fraction F       refuse pruning more than F (0 to 1) of the live resources;
                               `none` for no such limit
  --max-prune N                refuse pruning more than N resources
  --protect-kind GROUP/KIND    a kind never pruned (KIND alone for the core group; globs
                               such as '*.cnpg.io/*' allowed); repeated, the list replaces
                               the defaults; `none` protects no kind
  --claims PATH                live PersistentVolumeClaims the app does not track, to name
                               those a pruned StatefulSet leaves behind (repeatable)
The Application annotation gitops-core.io/allow-prune: \"N\" lets an automated sync that
prunes at most N resources through.";

/// Per-resource sync status of desired against live, from the diff engine (the same
/// comparison `gitops-core diff` makes), and the live objects that are the app's (the others,
/// which it neither compares nor prunes, are named in notes on stderr).
fn resource_statuses(
    desired: &[Value],
    live: &[Value],
    app: &gitops_core::config::Application,
    settings: &gitops_core::config::Settings,
    has_app: bool,
    project: Option<&gitops_core::project::AppProject>,
) -> Result<(Vec<ResourceStatus>, Vec<Value>), CliError> {
    let mut scopes = gitops_core::object::Scopes::builtin();
    scopes.add_crds(desired.iter().chain(live));
    let interrupt = crate::common::deadline();
    let mut input = gitops_core::diff::AppDiffInput::new(desired, live, app, settings, &scopes)
        .with_interrupt(&interrupt);
    if let Some(project) = project {
        input = input.with_project(project);
    }
    let result = gitops_core::diff::diff_app(&input)
        .map_err(|e| CliError::Input(format!("comparing desired and live: {e}")))?;
    crate::common::print_notes(&result, has_app);
    for c in result.conditions.iter().filter(|c| c.type_ == "ExcludedResourceWarning") {
        eprintln!("note: {}: {} (not synced)", c.type_, c.message);
    }
    // The app's live objects, less those the project leaves out of the comparison.
    let left_out: std::collections::BTreeSet<_> =
        result.unmanaged.iter().map(|u| u.object.key()).collect();
    let managed = gitops_core::ownership::ManagedLive::new(desired, live, app, settings, &scopes)
        .managed
        .into_iter()
        .filter(|o| !left_out.contains(&ObjectRef::from_object_lossy(o).key()))
        .cloned()
        .collect();
    Ok((ResourceStatus::of_diff(&result).1, managed))
}

struct Args {
    desired: Vec<PathBuf>,
    live: Vec<PathBuf>,
    app: Option<PathBuf>,
    cm: Option<PathBuf>,
    project: Option<PathBuf>,
    /// `--cluster`: cluster Secrets for the project (plan).
    clusters: Vec<PathBuf>,
    /// `--revision`, once per source of a multi-source app.
    revisions: Vec<String>,
    /// `-n/--namespace`: the destination namespace without `--app`.
    namespace: Option<String>,
    now: Option<String>,
    output: Output,
    prune: bool,
    /// `--allow-empty`: plan a prune of everything from empty desired input.
    allow_empty: bool,
    /// The blast-radius guard, when a guard option was given.
    guard: Option<BlastRadiusGuard>,
    /// `--protect-kind` values, in order (they replace the defaults).
    protect: Option<Vec<String>>,
    claims: Vec<PathBuf>,
}

fn parse(mut p: lexopt::Parser, usage: &str) -> Result<Option<Args>, CliError> {
    let mut a = Args {
        desired: Vec::new(),
        live: Vec::new(),
        app: None,
        cm: None,
        project: None,
        clusters: Vec::new(),
        revisions: Vec::new(),
        namespace: None,
        now: None,
        output: Output::Text,
        prune: false,
        allow_empty: false,
        guard: None,
        protect: None,
        claims: Vec::new(),
    };
    let full_usage = format!("{usage}\n{GUARD_USAGE}");
    while let Some(arg) = p.next()? {
        match arg {
            Long("desired") => a.desired.push(p.value()?.into()),
            Long("live") => a.live.push(p.value()?.into()),
            Long("app") => a.app = Some(p.value()?.into()),
            Long("argocd-cm") => a.cm = Some(p.value()?.into()),
            Long("project") => a.project = Some(p.value()?.into()),
            Long("cluster") if usage == PLAN_USAGE => a.clusters.push(p.value()?.into()),
            Long("revision") => a.revisions.push(p.value()?.string()?),
            Long("namespace") | Short('n') => a.namespace = Some(p.value()?.string()?),
            Long("now") => a.now = Some(p.value()?.string()?),
            Long("output") | Short('o') => a.output = Output::parse(&p.value()?.string()?)?,
            Long("prune") => a.prune = true,
            Long("allow-empty") => a.allow_empty = true,
            Long("guard") => {
                a.guard.get_or_insert_with(BlastRadiusGuard::default);
            }
            Long("max-prune-fraction") => {
                let v = p.value()?.string()?;
                let fraction = match v.as_str() {
                    "none" => None,
                    text => Some(text.parse::<f64>().map_err(|_| {
                        CliError::Usage(format!(
                            "--max-prune-fraction: expected a number from 0 to 1 or `none`, \
                             found `{text}`"
                        ))
                    })?),
                };
                a.guard.get_or_insert_with(BlastRadiusGuard::default).max_prune_fraction = fraction;
            }
            Long("max-prune") => {
                let v = p.value()?.string()?;
                let count = v.parse::<u64>().map_err(|_| {
                    CliError::Usage(format!("--max-prune: expected a count, found `{v}`"))
                })?;
                a.guard.get_or_insert_with(BlastRadiusGuard::default).max_prune_count = Some(count);
            }
            Long("protect-kind") => {
                let v = p.value()?.string()?;
                a.guard.get_or_insert_with(BlastRadiusGuard::default);
                let kinds = a.protect.get_or_insert_with(Vec::new);
                if v != "none" {
                    kinds.push(v);
                }
            }
            Long("claims") => a.claims.push(p.value()?.into()),
            Long("help") | Short('h') => {
                outln!("{full_usage}");
                return Ok(None);
            }
            other => {
                return Err(CliError::Usage(format!(
                    "{}\n{full_usage}",
                    crate::completion::unexpected(other, &full_usage)
                )));
            }
        }
    }
    if a.project.is_none() && !a.clusters.is_empty() {
        return Err(CliError::Usage(format!("--cluster is read for --project\n{full_usage}")));
    }
    if let (Some(guard), Some(kinds)) = (a.guard.as_mut(), a.protect.take()) {
        guard.protected_kinds = kinds;
    }
    if let Some(Err(e)) = a.guard.as_ref().map(BlastRadiusGuard::check) {
        let flag = if e.pointer().starts_with("/protectedKinds") {
            "--protect-kind"
        } else {
            "--max-prune-fraction"
        };
        return Err(CliError::Usage(format!("{flag}: {e}")));
    }
    Ok(Some(a))
}

/// The objects of every PATH given for a repeatable flag (at least one).
fn objects_of(
    input: &Input,
    paths: &[PathBuf],
    flag: &str,
    usage: &str,
) -> Result<Vec<Value>, CliError> {
    if paths.is_empty() {
        return Err(CliError::Usage(format!("missing {flag}\n{usage}")));
    }
    read_all_objects(input, paths)
}

fn required<T>(v: Option<T>, flag: &str, usage: &str) -> Result<T, CliError> {
    v.ok_or_else(|| CliError::Usage(format!("missing {flag}\n{usage}")))
}

/// Runs `plan`.
pub fn run_plan(input: &Input, args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(a) = parse(args, PLAN_USAGE)? else { return Ok(0) };
    let desired = objects_of(input, &a.desired, "--desired", PLAN_USAGE)?;
    let live = objects_of(input, &a.live, "--live", PLAN_USAGE)?;
    let settings = match &a.cm {
        Some(cm) => read_settings(input, cm)?,
        None => gitops_core::config::Settings::default(),
    };
    let app_spec = a.app.as_deref().map(|p| read_app(input, p)).transpose()?;
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
    if let Some(ns) = &a.namespace {
        request.app_namespace = ns.clone();
    }
    match a.revisions.as_slice() {
        [] => {}
        [rev] => request.revision = rev.clone(),
        _ => {
            return Err(CliError::Usage(format!(
                "plan takes one --revision (the one that names generateName hooks)\n{PLAN_USAGE}"
            )));
        }
    }
    if let Some(now) = &a.now {
        request.started_at = unix_seconds(now).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let diff_app = app_spec.clone().unwrap_or_else(|| {
        let mut app = gitops_core::config::Application::default();
        app.spec.destination.namespace = request.app_namespace.clone();
        app
    });
    let project = match &a.project {
        Some(path) => Some(crate::common::read_project(input, path, &a.clusters)?),
        None => None,
    };
    let (statuses, live) = resource_statuses(
        &desired,
        &live,
        &diff_app,
        &settings,
        app_spec.is_some(),
        project.as_ref(),
    )?;
    if project.is_some() {
        request.destination = diff_app.spec.destination.clone();
    }
    request.project = project;
    // Kinds the settings exclude are not synced (the comparison warned about them).
    request.targets.retain(|t| {
        let r = ObjectRef::from_object_lossy(t);
        !settings.excludes(&r.group, &r.kind, &diff_app.spec.destination.server)
    });
    let allow_empty = a.allow_empty
        || diff_app.spec.sync_policy.automated.as_ref().is_some_and(|au| au.allow_empty);
    if desired.is_empty()
        && request.prune
        && !allow_empty
        && !statuses.is_empty()
        && ResourceStatus::wipes_out(&statuses)
    {
        return Err(CliError::Input(format!(
            "refusing to plan: the desired input holds no object, so the sync would prune every \
             resource of the app ({}; a wrong path or an empty render?); pass --allow-empty if \
             that is what you want (Argo CD: syncPolicy.automated.allowEmpty)",
            statuses.len()
        )));
    }
    request.modified = Some(
        statuses
            .iter()
            .map(|r| {
                (
                    format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name),
                    r.status != SyncStatus::Synced,
                )
            })
            .collect(),
    );
    // A manual sync is never refused: the guard only says what it would find.
    let verdict = match &a.guard {
        Some(guard) => {
            let claims = read_all_objects(input, &a.claims)?;
            let guard_live: Vec<Value> = live.iter().chain(&claims).cloned().collect();
            Some(guard.assess(&diff_app, request.prune, &statuses, &guard_live))
        }
        None => None,
    };
    let mut observations = Observations::default();
    observations.live = live.into_iter().map(|o| LiveObject::new(o, None)).collect();
    let p = request.plan(&observations);
    // The protocol's `plan` document, as a tree: the text table reads its rows.
    let output = serde_json::to_value(Document::Plan(&p))
        .map_err(|e| CliError::Input(format!("cannot print the plan: {e}")))?;
    match a.output {
        Output::Json | Output::Yaml => {
            let doc = match &verdict {
                Some(v) => json!({ "guard": Document::Guard(v), "tasks": output["tasks"] }),
                None => json!({ "tasks": output["tasks"] }),
            };
            a.output.print_document(&doc);
        }
        Output::Text => {
            print_table(&p, &output);
            if let Some(v) = &verdict {
                outln!();
                print_verdict(v, true);
            }
        }
    }
    Ok(if p.valid { 0 } else { 1 })
}

/// The tasks as a table, actions in words (`server-side apply`).
fn print_table(p: &Plan, output: &Value) {
    let header =
        ["PHASE", "WAVE", "GROUP", "KIND", "NAMESPACE", "NAME", "ACTION", "HOOK", "MESSAGE"];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let rows = output["tasks"].as_array().map(Vec::as_slice).unwrap_or_default();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    for (t, r) in p.tasks().zip(rows) {
        table.push(vec![
            text(&r["phase"]),
            r["wave"].to_string(),
            text(&r["group"]),
            text(&r["kind"]),
            text(&r["namespace"]),
            text(&r["name"]),
            t.action.name().to_string(),
            text(&r["hook"]),
            text(&r["message"]),
        ]);
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
        outln!("{}", line.trim_end());
    }
}

/// Runs `decide`.
pub fn run_decide(input: &Input, args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(a) = parse(args, DECIDE_USAGE)? else { return Ok(0) };
    if a.allow_empty {
        return Err(CliError::Usage(format!(
            "--allow-empty is an option of plan; decide reads the app's \
             syncPolicy.automated.allowEmpty\n{DECIDE_USAGE}"
        )));
    }
    let app = read_app(input, &required(a.app, "--app", DECIDE_USAGE)?)?;
    let desired = objects_of(input, &a.desired, "--desired", DECIDE_USAGE)?;
    let live = objects_of(input, &a.live, "--live", DECIDE_USAGE)?;
    if a.revisions.is_empty() {
        return Err(CliError::Usage(format!("missing --revision\n{DECIDE_USAGE}")));
    }
    AutoSyncInput::check_revisions(&app, &a.revisions)
        .map_err(|e| CliError::Usage(format!("--revision: {e}")))?;
    let revisions = a.revisions.clone();
    let now = match &a.now {
        Some(s) => unix_seconds(s).map_err(|e| CliError::Usage(e.to_string()))?,
        // The command-line tool is the host: the one place that reads the clock.
        None => crate::common::clock_now(),
    };
    let settings = match &a.cm {
        Some(cm) => read_settings(input, cm)?,
        None => gitops_core::config::Settings::default(),
    };
    let (resources, live) = resource_statuses(&desired, &live, &app, &settings, true, None)?;
    // A live-only object marked `IgnoreExtraneous` stays OutOfSync itself but does not make
    // the app OutOfSync.
    let extraneous_ignored = |r: &ResourceStatus| {
        r.requires_pruning
            && live.iter().any(|l| {
                let k = ObjectRef::from_object_lossy(l);
                (k.group.as_str(), k.kind.as_str(), k.namespace.as_str(), k.name.as_str())
                    == (r.group.as_str(), r.kind.as_str(), r.namespace.as_str(), r.name.as_str())
                    && has_annotation_option(l, COMPARE_OPTIONS_ANNOTATION, "IgnoreExtraneous")
            })
    };
    let status =
        if resources.iter().any(|r| r.status != SyncStatus::Synced && !extraneous_ignored(r)) {
            SyncStatus::OutOfSync
        } else {
            SyncStatus::Synced
        };
    // The controller does not process an app with skip-reconcile, and looks at auto-sync only
    // when the project's windows allow it.
    let blocked = match &a.project {
        _ if Decision::skips_reconcile(&app) => Some(Decision::SKIP_RECONCILE_MESSAGE.to_string()),
        Some(path) => {
            let project = read_document(input, path)?;
            let windows = SyncWindow::of_project(&project)
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
            SyncWindows::auto_sync_blocked(&windows, &app, now)
        }
        None => None,
    };
    let claims = read_all_objects(input, &a.claims)?;
    let (out, verdict) = if let Some(message) = blocked {
        let out = serde_json::to_value(Document::Blocked(&message))
            .map_err(|e| CliError::Input(format!("cannot print the decision: {e}")))?;
        (out, None)
    } else {
        let mut input = AutoSyncInput::new(status, resources, revisions, now);
        if a.guard.is_some() {
            input.guard = a.guard;
            input.live = live.iter().chain(&claims).cloned().collect();
        }
        let d = input.decide(&app);
        let out = serde_json::to_value(Document::Decision(&d))
            .map_err(|e| CliError::Input(format!("cannot print the decision: {e}")))?;
        (out, d.guard)
    };
    match a.output {
        Output::Json | Output::Yaml => {
            a.output.print_document(&out);
        }
        Output::Text => {
            outln!("sync: {}", out["sync"]);
            outln!("message: {}", out["message"].as_str().unwrap_or(""));
            outln!("self-heal: {}", out["selfHeal"]);
            if let Some(t) = out["nextAttemptAt"].as_str() {
                outln!("next attempt at: {t}");
            }
            if let Some(v) = &verdict {
                print_verdict(v, false);
            }
        }
    }
    Ok(0)
}

/// The guard's verdict as text: the outcome, the prunes, the claims left behind. For a plan
/// (`manual`), which the guard never refuses, the outcome says what it would do to an
/// automated sync.
fn print_verdict(v: &GuardVerdict, manual: bool) {
    let codes: Vec<&str> = v.exceeded.iter().map(|l| l.code()).collect();
    let outcome = match (v.allowed, v.overridden) {
        (false, _) if manual => {
            format!(
                "an automated sync would be refused ({}); a manual sync is not",
                codes.join(", ")
            )
        }
        (false, _) => format!("refused ({})", codes.join(", ")),
        (true, true) => format!("allowed by gitops-core.io/allow-prune ({})", codes.join(", ")),
        (true, false) => "allowed".to_string(),
    };
    outln!("guard: {outcome}");
    outln!("prunes: {} of {} live resources", v.prunes.len(), v.live_resources);
    for p in &v.prunes {
        outln!("  {}{}", p.key(), if p.protected { " (protected)" } else { "" });
    }
    if !v.claims.is_empty() {
        outln!("claims of pruned StatefulSets:");
        for c in &v.claims {
            outln!(
                "  {}/{}: {} ({}){}",
                c.namespace,
                c.name,
                if c.survives { "survives, tracked by no one" } else { "deleted" },
                c.reason,
                if c.found { "" } else { ", not among the live objects" }
            );
        }
    }
}

/// Unix seconds of RFC 3339 text (`--now`).
fn unix_seconds(text: &str) -> Result<i64, gitops_core::vocabulary::TimeError> {
    gitops_core::vocabulary::Timestamp::parse(text)
        .map(gitops_core::vocabulary::Timestamp::unix_seconds)
}
