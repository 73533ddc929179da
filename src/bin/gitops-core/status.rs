//! `gitops-core status --desired PATH --live PATH [--app APP.yaml] [-n NAMESPACE]
//! [--argocd-cm CM.yaml] [--output text|json|yaml]`: the `argocd app get` view of your own
//! files: the app's sync and health status, and per resource its sync status, health, hook
//! and message.
//!
//! Exit status: 0 when the app is Synced, 1 when it is not, 2 on an error; with `--fail-on`,
//! 1 exactly when the app's sync or health status is one of the list.

use std::path::PathBuf;

use gitops_core::config::Application;
use gitops_core::diff::{self, AppDiff, SyncStatus};
use gitops_core::health::HealthStatus;
use gitops_core::health::{AppHealth, HealthContext};
use gitops_core::object::ObjectIndex;
use serde_json::{Value, json};

use crate::common::{self, CliError, Output};

pub const HELP: &str = "\
usage: gitops-core status --desired PATH --live PATH [--app APP.yaml | -n NAMESPACE]
                          [--argocd-cm CM.yaml] [--project PROJECT.yaml [--cluster PATH]]
                          [--output text|json|yaml] [--fail-on STATUS,...]
                          [--no-builtin-health]

Prints what `argocd app get` prints for an application made of your files: the sync status
and health of the app, then one row per resource with its sync status, health, hook and
message. PATH is a file (YAML stream, JSON or List), a directory of .yaml/.yml/.json files, or
- for standard input; --desired and --live may be given more than once.
--app            an Argo CD Application (destination namespace, ignoreDifferences, options)
-n, --namespace  the destination namespace, without --app (overrides the app's with it)
--argocd-cm      the argocd-cm ConfigMap (customizations, Lua health scripts)
--project        an AppProject: live objects it does not permit are left out and resources of
                 kinds it does not permit are Unknown; with spec.orphanedResources, the objects
                 of the destination namespace among --live that no app owns are listed after
                 the resources, with Argo CD's OrphanedResourceWarning when
                 orphanedResources.warn is true
--cluster        Argo CD cluster Secrets (may be repeated), for the project's
                 permitOnlyProjectScopedClusters (a destination only on a cluster whose
                 Secret names the project) and the destination's cluster name or server
--output         text (default), json or yaml
--fail-on        exit 1 when the app's health status (Healthy, Suspended, Progressing,
                 Missing, Degraded, Unknown) or its sync status (OutOfSync, Unknown) is one
                 of this comma-separated list (case-sensitive, may be repeated; Unknown
                 matches either), instead of when it is not Synced: with Degraded,Missing
                 a Healthy app that is OutOfSync exits 0
--no-builtin-health
                 without the built-in rules for the kinds Argo CD 3.6.2 ships a health
                 script for: only argocd-cm's scripts and the checks of Kubernetes' own
                 kinds give health

exit status: 0 Synced, 1 OutOfSync (or Unknown), 2 error; with --fail-on, 1 when the app's
sync or health status is one of the list, else 0 (2 error)";

struct Args {
    desired: Vec<PathBuf>,
    live: Vec<PathBuf>,
    app: Option<PathBuf>,
    namespace: Option<String>,
    cm: Option<PathBuf>,
    project: Option<PathBuf>,
    clusters: Vec<PathBuf>,
    output: Output,
    fail_on: Vec<String>,
    builtin_rules: bool,
}

fn parse(mut p: lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let mut a = Args {
        desired: Vec::new(),
        live: Vec::new(),
        app: None,
        namespace: None,
        cm: None,
        project: None,
        clusters: Vec::new(),
        output: Output::Text,
        fail_on: Vec::new(),
        builtin_rules: true,
    };
    while let Some(arg) = p.next()? {
        match arg {
            Long("desired") => a.desired.push(PathBuf::from(p.value()?)),
            Long("live") => a.live.push(PathBuf::from(p.value()?)),
            Long("app") => a.app = Some(PathBuf::from(p.value()?)),
            Long("namespace") | Short('n') => a.namespace = Some(p.value()?.string()?),
            Long("argocd-cm") => a.cm = Some(PathBuf::from(p.value()?)),
            Long("project") => a.project = Some(PathBuf::from(p.value()?)),
            Long("cluster") => a.clusters.push(PathBuf::from(p.value()?)),
            Long("output") | Short('o') => a.output = Output::parse(&p.value()?.string()?)?,
            Long("no-builtin-health") => a.builtin_rules = false,
            Long("fail-on") => {
                let mut names = HealthStatus::ALL.map(HealthStatus::as_str).to_vec();
                names.push(SyncStatus::OutOfSync.as_str());
                a.fail_on.extend(common::parse_fail_on(&p.value()?.string()?, &names)?);
            }
            Long("help") | Short('h') => {
                outln!("{HELP}");
                return Ok(None);
            }
            other => {
                let message = crate::completion::unexpected(other, HELP);
                return Err(CliError::Usage(format!("{message}\n{HELP}")));
            }
        }
    }
    if a.desired.is_empty() {
        return Err(CliError::Usage(format!("missing --desired\n{HELP}")));
    }
    if a.live.is_empty() {
        return Err(CliError::Usage(format!("missing --live\n{HELP}")));
    }
    if a.project.is_none() && !a.clusters.is_empty() {
        return Err(CliError::Usage(format!("--cluster is read for --project\n{HELP}")));
    }
    Ok(Some(a))
}

/// Runs the command.
pub fn run(input: &common::Input, args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(a) = parse(args)? else { return Ok(0) };
    let c = common::Comparison::read(
        input,
        &a.desired,
        &a.live,
        a.app.as_deref(),
        a.namespace.as_deref(),
        a.cm.as_deref(),
    )?;
    let project = match &a.project {
        Some(path) => Some(common::read_project(input, path, &a.clusters)?),
        None => None,
    };
    let mut comparison = c.input();
    if let Some(project) = &project {
        comparison = comparison.with_project(project);
    }
    let mut result = diff::diff_app(&comparison)
        .map_err(|e| CliError::Input(format!("comparing objects: {e}")))?;
    common::print_notes(&result, a.app.is_some());
    let orphans = match &project {
        Some(project) => {
            let o = gitops_core::orphans::Orphans::new(
                project,
                &c.app,
                &c.settings,
                &c.scopes,
                &c.desired,
                &c.live,
                None,
            );
            result.conditions.extend(o.condition);
            result.conditions.sort();
            Some(o.resources)
        }
        None => None,
    };
    let engine = crate::health::script_engine(input, Some(&c.settings), None)?;
    let mut ctx =
        HealthContext::new(crate::common::clock_now()).with_builtin_rules(a.builtin_rules);
    if let Some(engine) = engine.as_deref() {
        ctx = ctx.with_scripts(engine);
    }
    let health = gitops_core::health::AppHealth::of_diff(&result, &c.desired, &c.live, &ctx);
    if let Some(e) = health.interrupted() {
        return Err(CliError::Input(format!("assessing health: {e}")));
    }
    let mut doc = to_json(&result, &health);
    if let Some(orphans) = &orphans {
        doc["orphans"] = orphans.iter().map(|r| json!(r.key())).collect();
    }
    if !a.output.print_document(&doc) {
        let mut out = header(&c.app, &result, &health);
        out.push('\n');
        out.push_str(&table(&result, &health));
        if let Some(orphans) = &orphans {
            out.push_str("\nORPHANED RESOURCES\n");
            for r in orphans {
                out.push_str(&format!("{}/{} {}/{}\n", r.group, r.kind, r.namespace, r.name));
            }
            if orphans.is_empty() {
                out.push_str("none\n");
            }
        }
        common::write_out(&out);
    }
    Ok(u8::from(fails(&a.fail_on, result.sync_status, health.status)))
}

/// Whether the exit status is 1: without `--fail-on`, when the app is not Synced; with it,
/// when the app's sync or health status is one of the list.
fn fails(fail_on: &[String], sync: SyncStatus, health: HealthStatus) -> bool {
    if fail_on.is_empty() {
        return sync != SyncStatus::Synced;
    }
    fail_on.iter().any(|s| s == sync.as_str() || s == health.as_str())
}

/// The HEALTH cell of each resource of `result`, in its order: the status, `Missing` without a
/// live object, blank for none.
fn health_cells(result: &AppDiff, health: &AppHealth) -> Vec<String> {
    let index = ObjectIndex::of_refs(health.resources.iter().map(|h| &h.object));
    let cell = |r: &diff::ResourceDiff| {
        index
            .first(&r.object)
            .and_then(|i| health.resources[i].health.as_ref())
            .map_or_else(String::new, |h| h.status.to_string())
    };
    result.resources.iter().map(cell).collect()
}

/// The lines above the table, as `argocd app get` prints them.
pub fn header(app: &Application, result: &AppDiff, health: &AppHealth) -> String {
    let mut out = String::new();
    let field = |k: &str, v: &str| format!("{k:<20}{v}").trim_end().to_string() + "\n";
    out.push_str(&field("Name:", &format!("{}/{}", app.metadata.namespace, app.metadata.name)));
    out.push_str(&field("Project:", &app.spec.project));
    out.push_str(&field("Server:", &app.spec.destination.server));
    out.push_str(&field("Namespace:", &app.spec.destination.namespace));
    out.push_str(&field("Sync Status:", result.sync_status.as_str()));
    let mut h = health.status.to_string();
    if !health.message.is_empty() {
        h.push_str(&format!(" ({})", health.message));
    }
    out.push_str(&field("Health Status:", &h));
    for c in &result.conditions {
        out.push_str(&field("Condition:", &format!("{}: {}", c.type_, c.message)));
    }
    out
}

/// The resource table: GROUP, KIND, NAMESPACE, NAME, STATUS, HEALTH, HOOK, MESSAGE.
pub fn table(result: &AppDiff, health: &AppHealth) -> String {
    let header = ["GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "HOOK", "MESSAGE"];
    let rows: Vec<[String; 8]> = result
        .resources
        .iter()
        .zip(health_cells(result, health))
        .map(|(r, health)| {
            [
                r.object.group.clone(),
                r.object.kind.clone(),
                r.object.namespace.clone(),
                r.object.name.clone(),
                r.status.map_or("", SyncStatus::as_str).to_string(),
                health,
                if r.hook { "hook".into() } else { String::new() },
                r.message.replace(['\n', '\r', '\t'], " "),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header);
    for row in &rows {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    out
}

/// The JSON (and YAML) document.
fn to_json(result: &AppDiff, health: &AppHealth) -> Value {
    let resources: Vec<Value> = result
        .resources
        .iter()
        .zip(health_cells(result, health))
        .map(|(r, health)| {
            json!({
                "group": r.object.group,
                "kind": r.object.kind,
                "namespace": r.object.namespace,
                "name": r.object.name,
                "status": r.status.map(SyncStatus::as_str),
                "health": health,
                "hook": r.hook,
                "message": r.message,
            })
        })
        .collect();
    json!({
        "sync": {"status": result.sync_status.as_str()},
        "health": {"status": health.status.to_string(), "message": health.message},
        "conditions": result.conditions.iter().map(|c| json!({"type": c.type_, "message": c.message})).collect::<Vec<_>>(),
        "resources": resources,
    })
}
