//! `gitops-core demo`: the bookstore example (built into the binary, from `testdata/demo/`):
//! an `argocd app get`-style status table, the diff of the drift, and who wrote it.

use gitops_core::config::{Application, Settings};
use gitops_core::diff::{self, AppDiff, AppDiffInput, ResourceExplanation};
use gitops_core::object::Scopes;

use crate::common::CliError;

const DESIRED: &str = include_str!("../../../testdata/demo/desired.yaml");
const LIVE: &str = include_str!("../../../testdata/demo/live.yaml");
const APP: &str = include_str!("../../../testdata/demo/app.yaml");

pub const HELP: &str = "\
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
                outln!("{HELP}");
                Ok(0)
            }
            other => Err(CliError::Usage(format!(
                "{}\n{HELP}",
                crate::completion::unexpected(other, HELP)
            ))),
        };
    }
    crate::common::write_out(&run_render()?);
    Ok(0)
}

/// The demo's whole output.
fn run_render() -> Result<String, CliError> {
    let embedded = |what: &str, e: &dyn std::fmt::Display| {
        CliError::Input(format!("built-in demo data {what}: {e}"))
    };
    let desired =
        gitops_core::object::parse_manifests(DESIRED).map_err(|e| embedded("desired.yaml", &e))?;
    let live = gitops_core::object::parse_manifests(LIVE).map_err(|e| embedded("live.yaml", &e))?;
    let app_doc = gitops_core::object::parse_documents(APP)
        .map_err(|e| embedded("app.yaml", &e))?
        .into_iter()
        .next()
        .unwrap_or_default();
    let app = Application::from_value(&app_doc).map_err(|e| embedded("app.yaml", &e))?;
    let settings = Settings::default();
    let scopes = Scopes::builtin();
    let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
    let result = diff::diff_app(&input)
        .map_err(|e| CliError::Input(format!("comparing the demo app: {e}")))?;
    let explained = result.explain(&input);
    render(&app, &result, &desired, &live, &explained)
}

fn render(
    app: &Application,
    result: &AppDiff,
    desired: &[serde_json::Value],
    live: &[serde_json::Value],
    explained: &[ResourceExplanation],
) -> Result<String, CliError> {
    // The demo's clock is fixed so its output is the same on every run.
    let ctx = gitops_core::health::HealthContext::new(0);
    let health = gitops_core::health::AppHealth::of_diff(result, desired, live, &ctx);
    let mut out = crate::status::header(app, result, &health);
    out.push('\n');
    out.push_str(&crate::status::table(result, &health));
    // The demo shows what `argocd app diff` prints: the classic form.
    let text = result.render_text().map_err(|e| CliError::Input(format!("the demo app: {e}")))?;
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
    Ok(out)
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
