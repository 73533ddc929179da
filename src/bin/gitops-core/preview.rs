//! `gitops-core preview`: what merging a pull request would change, prune and run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gitops_core::config::Application;
use gitops_core::preview::{Preview, PreviewInput, Verdict};
use gitops_core::sync::BlastRadiusGuard;
use lexopt::prelude::*;
use serde_json::{Value, json};

use crate::common::{CliError, Input, files_of, read_all_objects, read_app, read_settings};

pub const USAGE: &str = "\
usage: gitops-core preview --base DIR --head DIR [--live DIR] [--app APP.yaml]...
                           [--argocd-cm CM.yaml] [--output markdown|text|json]
                           [--max-bytes N]

Compares the manifests rendered from a pull request's base and head branches, per
application: resources added, changed, removed (pruned, kept by Prune=false, or waiting for
Prune=confirm), the head's sync plan and how it differs from the base's, and the default
blast-radius guard's verdict on a pruning sync. With --live, also the changes made by hand in
the cluster that the merge would overwrite. Secret values are masked.
Each DIR holds one folder per application (its .yaml, .yml and .json files), or the files of
one application. An --app whose metadata.name names a folder sets that application's
destination namespace and sync options; a folder without one is an app of that name with no
destination namespace. A symbolic link under a DIR must lead to a place inside it.
The Markdown (the default) is for a pull-request comment, names and messages escaped so that
they show as text; --max-bytes caps the whole comment (default 60000) and a closing line says
what was left out.
exit status: 0 no change, 1 changes, 3 the guard refuses or a protected kind is pruned
(ask for an approval), 2 error.";

#[derive(Clone, Copy)]
enum Format {
    Markdown,
    Text,
    Json,
}

/// The application folders of DIR: its subfolders by name, or DIR itself as one app. A
/// folder reached through a symbolic link must lie inside DIR.
fn app_dirs(dir: &Path) -> Result<Vec<(String, PathBuf)>, CliError> {
    let mut out = Vec::new();
    for (p, meta) in crate::folders::entries(dir)? {
        if meta.is_ok_and(|m| m.is_dir()) {
            crate::folders::confine(dir, &p)?;
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            out.push((name, p));
        }
    }
    Ok(out)
}

/// The objects of app `name` under DIR (none when DIR has no folder for it). Every file read
/// must lie inside DIR, symbolic links resolved.
fn objects(input: &Input, dir: &Path, name: &str, single: bool) -> Result<Vec<Value>, CliError> {
    let path = if single { dir.to_path_buf() } else { dir.join(name) };
    if !single && !path.is_dir() {
        return Ok(Vec::new());
    }
    let files = files_of(input, &path)?;
    for f in &files {
        crate::folders::confine(dir, f)?;
    }
    read_all_objects(input, &files)
}

/// Runs `preview`.
pub fn run(input: &Input, mut p: lexopt::Parser) -> Result<u8, CliError> {
    let (mut base, mut head, mut live) = (None, None, None);
    let mut apps: Vec<PathBuf> = Vec::new();
    let mut cm: Option<PathBuf> = None;
    let mut format = Format::Markdown;
    let mut max_bytes = Preview::DEFAULT_MAX_MARKDOWN_BYTES;
    while let Some(arg) = p.next()? {
        match arg {
            Long("base") => base = Some(PathBuf::from(p.value()?)),
            Long("head") => head = Some(PathBuf::from(p.value()?)),
            Long("live") => live = Some(PathBuf::from(p.value()?)),
            Long("app") => apps.push(p.value()?.into()),
            Long("argocd-cm") => cm = Some(p.value()?.into()),
            Long("max-bytes") => {
                let v = p.value()?.string()?;
                max_bytes = v.parse().map_err(|_| {
                    CliError::Usage(format!("--max-bytes: expected a count, found `{v}`"))
                })?;
            }
            Long("output") | Short('o') => {
                format = match p.value()?.string()?.as_str() {
                    "markdown" | "md" => Format::Markdown,
                    "text" => Format::Text,
                    "json" => Format::Json,
                    other => {
                        return Err(CliError::Usage(format!(
                            "--output: expected markdown, text or json, found `{other}`"
                        )));
                    }
                }
            }
            Long("help") | Short('h') => {
                outln!("{USAGE}");
                return Ok(0);
            }
            other => {
                let message = crate::completion::unexpected(other, USAGE);
                return Err(CliError::Usage(format!("{message}\n{USAGE}")));
            }
        }
    }
    let missing = |flag: &str| CliError::Usage(format!("missing {flag}\n{USAGE}"));
    let base = base.ok_or_else(|| missing("--base"))?;
    let head = head.ok_or_else(|| missing("--head"))?;
    let settings = cm.as_deref().map(|p| read_settings(input, p)).transpose()?.unwrap_or_default();
    let specs = apps.iter().map(|a| read_app(input, a)).collect::<Result<Vec<_>, _>>()?;

    let base_dirs = app_dirs(&base)?;
    let head_dirs = app_dirs(&head)?;
    let single = base_dirs.is_empty() && head_dirs.is_empty();
    let names: Vec<String> = if single {
        match specs.as_slice() {
            [one] => vec![one.metadata.name.clone()],
            [] => {
                vec![base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()]
            }
            _ => {
                return Err(CliError::Usage(
                    "--base and --head hold the files of one app, but more than one --app was given"
                        .to_string(),
                ));
            }
        }
    } else {
        let set: BTreeSet<String> =
            base_dirs.iter().chain(&head_dirs).map(|(n, _)| n.clone()).collect();
        if let Some(spec) = specs.iter().find(|s| !set.contains(&s.metadata.name)) {
            return Err(CliError::Input(format!(
                "--app {}: no folder of that name under {} or {}",
                spec.metadata.name,
                base.display(),
                head.display()
            )));
        }
        set.into_iter().collect()
    };

    let guard = BlastRadiusGuard::default();
    let mut previews = Vec::new();
    for name in &names {
        let app = match specs.iter().find(|s| &s.metadata.name == name) {
            Some(spec) => spec.clone(),
            None => Application::from_value(&json!({"metadata": {"name": name}}))
                .map_err(|e| CliError::Input(format!("app {name}: {e}")))?,
        };
        let base_objects = objects(input, &base, name, single)?;
        let head_objects = objects(input, &head, name, single)?;
        let live_objects = live.as_deref().map(|l| objects(input, l, name, single)).transpose()?;
        let mut request = PreviewInput::new(&app, &settings, &base_objects, &head_objects, &guard);
        if let Some(l) = &live_objects {
            request = request.with_live(l);
        }
        previews.push(request.compare().map_err(|e| CliError::Input(format!("app {name}: {e}")))?);
    }
    let preview = Preview::new(previews);
    match format {
        Format::Markdown => crate::common::write_out(&preview.render_markdown(max_bytes)),
        Format::Text => crate::common::write_out(&preview.render_text()),
        Format::Json => crate::common::print_json(&preview),
    }
    Ok(match preview.verdict() {
        Verdict::NoChange => 0,
        Verdict::Changes => 1,
        _ => 3,
    })
}
