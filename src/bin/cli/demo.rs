//! `gitops-core demo`: the bookstore example (built into the binary, from `testdata/demo/`):
//! an `argocd app get`-style status table, the diff of the drift, and who wrote it.

use gitops_core::diff::{
    self, AppDiff, AppDiffInput, ResourceDiff, ResourceExplanation, SyncStatus,
};
use gitops_core::{Application, Scopes, Settings};

use crate::common::CliError;

const DESIRED: &str = include_str!("../../../testdata/demo/desired.yaml");
const LIVE: &str = include_str!("../../../testdata/demo/live.yaml");
const APP: &str = include_str!("../../../testdata/demo/app.yaml");

const HELP: &str = "\
usage: gitops-core demo

Compares the built-in bookstore app (Git) with its drifted live state and prints the sync
status of every resource and the diff, as `argocd app get` and `argocd app diff` would, then
who wrote each difference and the unmanaged additions (`diff --explain --unmanaged`).";

/// Runs the command.
pub fn run(mut args: lexopt::Parser) -> Result<u8, CliError> {
    use lexopt::prelude::*;
    if let Some(arg) = args.next()? {
        return match arg {
            Long("help") | Short('h') => {
                println!("{HELP}");
                Ok(0)
            }
            other => Err(CliError::Usage(format!("{}\n{HELP}", other.unexpected()))),
        };
    }
    crate::diff::write_stdout(&run_render()?);
    Ok(0)
}

/// The demo's whole output.
fn run_render() -> Result<String, CliError> {
    let embedded = |what: &str, e: &dyn std::fmt::Display| {
        CliError::Input(format!("built-in demo data {what}: {e}"))
    };
    let desired =
        gitops_core::parse_manifests(DESIRED).map_err(|e| embedded("desired.yaml", &e))?;
    let live = gitops_core::parse_manifests(LIVE).map_err(|e| embedded("live.yaml", &e))?;
    let app_doc = gitops_core::object::parse_documents(APP)
        .map_err(|e| embedded("app.yaml", &e))?
        .into_iter()
        .next()
        .unwrap_or_default();
    let app = Application::from_value(&app_doc).map_err(|e| embedded("app.yaml", &e))?;
    let settings = Settings::default();
    let scopes = Scopes::builtin();
    let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes);
    let result = diff::diff_app(&input)
        .map_err(|e| CliError::Input(format!("comparing the demo app: {e}")))?;
    let explained = diff::explain_app(&input, &result);
    Ok(render(&app, &result, &live, &explained))
}

/// HEALTH column: the built-in health of the live object (blank when it has none, `Missing`
/// when it is not in the cluster).
fn health_of(resource: &ResourceDiff, live: &[serde_json::Value]) -> String {
    let Some(obj) = live
        .iter()
        .find(|o| gitops_core::ObjectRef::from_object_lossy(o).same_object(&resource.object))
    else {
        return "Missing".to_string();
    };
    // The demo's clock is fixed so its output is the same on every run.
    let ctx = gitops_core::health::HealthContext::new(std::time::SystemTime::UNIX_EPOCH);
    match gitops_core::health::assess(obj, &ctx) {
        Ok(Some(h)) => h.status.to_string(),
        Ok(None) => String::new(),
        Err(e) => format!("Unknown ({e})"),
    }
}

fn render(
    app: &Application,
    result: &AppDiff,
    live: &[serde_json::Value],
    explained: &[ResourceExplanation],
) -> String {
    let mut out = String::new();
    let field = |k: &str, v: &str| format!("{k:<20}{v}\n");
    out.push_str(&field("Name:", &format!("{}/{}", app.metadata.namespace, app.metadata.name)));
    out.push_str(&field("Project:", &app.spec.project));
    out.push_str(&field("Server:", &app.spec.destination.server));
    out.push_str(&field("Namespace:", &app.spec.destination.namespace));
    out.push_str(&field("Sync Status:", result.sync_status.as_str()));
    for c in &result.conditions {
        out.push_str(&field("Condition:", &format!("{}: {}", c.type_, c.message)));
    }
    out.push('\n');
    let header = ["GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "HOOK", "MESSAGE"];
    let rows: Vec<[String; 8]> = result
        .resources
        .iter()
        .map(|r| {
            [
                r.object.group.clone(),
                r.object.kind.clone(),
                r.object.namespace.clone(),
                r.object.name.clone(),
                r.status.map_or("", SyncStatus::as_str).to_string(),
                health_of(r, live),
                if r.hook { "hook".into() } else { String::new() },
                r.message.clone(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &[&str]| {
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
    out.push_str(&line(&header));
    for row in &rows {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    let text = result.render_text();
    if !text.is_empty() {
        out.push('\n');
        out.push_str(&text);
    }
    out.push('\n');
    out.push_str(&crate::diff::render_section(
        "Who wrote the drift (diff --explain):",
        "nothing differs",
        explained.iter().map(|e| (&e.object, e.changes.iter().map(|c| c.to_string()).collect())),
    ));
    out.push('\n');
    out.push_str(&crate::diff::render_unmanaged(explained));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_explains_the_drift() {
        let out = super::run_render().unwrap(); // the embedded demo data is valid
        let tail = &out[out.find("Who wrote the drift").unwrap_or(0)..];
        assert_eq!(
            tail,
            r#"Who wrote the drift (diff --explain):
apps/Deployment bookstore/api
  spec.replicas: desired 1, live 3, written by kubectl (Update, scale, 2026-12-02T22:38:02Z)

Unmanaged additions (kept by the diff and self-heal; a Replace sync removes them):
apps/Deployment bookstore/api
  spec.template.spec.containers[name=api].env[name=FEATURE_FLAGS]: {"name":"FEATURE_FLAGS","value":"fast-checkout"}, written by kubectl-set (Update, 2026-12-02T22:41:17Z)
"#
        );
        assert!(out.contains("===== apps/Deployment bookstore/api ======\n"), "{out}");
    }
}
