//! `gitops-core diff --desired PATH --live PATH [--app APP.yaml] [--argocd-cm CM.yaml]
//! [--output text|json] [--diff-format unified|classic] [--color auto|always|never]
//! [--explain] [--unmanaged]`: compares desired and live objects as Argo CD does and prints
//! the text diff as `kubectl diff` does (unified) or as `argocd app diff` does (classic), or
//! runs `KUBECTL_EXTERNAL_DIFF`; `--explain` names who last wrote each differing field,
//! `--unmanaged` lists the live fields Git never declared that someone added.
//!
//! Exit status: 0 when nothing differs, 1 when something does (a resource requiring pruning
//! included), 2 on an error (the message names the file, the document and the field); with
//! `KUBECTL_EXTERNAL_DIFF`, the program's 0 or 1.

use std::io::Write;
use std::path::PathBuf;

use gitops_core::config::{Application, Settings};
use gitops_core::diff::{
    self, AppDiff, Condition, ObjectText, PatchOp, ResourceDiff, ResourceExplanation, SyncStatus,
};
use gitops_core::object::ObjectIndex;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::common::{self, CliError, Output};
use crate::paint::ColorChoice;

pub const HELP: &str = "\
usage: gitops-core diff --desired PATH --live PATH [--app APP.yaml | -n NAMESPACE]
                        [--argocd-cm CM.yaml] [--output text|json|yaml] [--show-secrets]
                        [--diff-format unified|classic] [--color auto|always|never]
                        [--dry-run PATH] [--explain] [--unmanaged] [--no-ignore-annotation]

PATH is a file (YAML stream, JSON or List), a directory (its .yaml/.yml/.json files, sorted)
or - for standard input; --desired and --live may be given more than once.
--app          an Argo CD Application (destination namespace, ignoreDifferences, sync options)
-n, --namespace
               the destination namespace: without --app, namespaced objects without a
               namespace get it (with --app, it replaces the app's)
--argocd-cm    the argocd-cm ConfigMap (resource customizations, compare options, tracking)
--output       text (default), json or yaml
--diff-format  the text diff: unified (default, as `kubectl diff` prints it: per object a
               `diff -u -N live/NAME merged/NAME` line, `---`/`+++` lines and `@@` hunks,
               NAME as kubectl names the file: group.version.Kind.namespace.name) or
               classic (as `argocd app diff` prints it: `===== group/Kind namespace/name
               ======` and `4c4` hunks)
--color        colour the text diff: auto (default: on a terminal, unless NO_COLOR is set),
               always or never
--show-secrets print Secret values instead of masks
--dry-run      server-side diff: the results of `kubectl apply --server-side --dry-run=server
               --field-manager=argocd-controller --force-conflicts -o json
               --show-managed-fields` of the desired objects (PATH as above); without
               --show-managed-fields kubectl leaves out the managedFields the diff needs
--explain      after each resource header, one line per differing field: desired and live
               values and who last wrote it (from the live object's managedFields, which
               `kubectl get` prints only with --show-managed-fields)
--unmanaged    list, per resource, the live fields Git never declared that a person or tool
               added (self-heal keeps them; a Replace sync removes them), then the live
               objects that are not the app's (neither desired nor tracked for it, or owned
               by another object): they are not compared and never pruned
--no-ignore-annotation
               do not read the gitops-core.io/ignore-differences annotation of desired
               objects (read by default: it ignores fields for the annotated object only)

KUBECTL_EXTERNAL_DIFF names a program run instead of printing the text diff, as `kubectl diff`
runs it: on a LIVE and a MERGED folder with one YAML file per object (words after the program
made of letters, digits, - and = are passed after the folders); its exit status 0 or 1 is
passed through, any other is an error.

exit status: 0 nothing differs, 1 something differs, 2 error";

/// The parsed arguments.
struct Args {
    desired: Vec<PathBuf>,
    live: Vec<PathBuf>,
    app: Option<PathBuf>,
    namespace: Option<String>,
    cm: Option<PathBuf>,
    output: Output,
    show_secrets: bool,
    dry_run: Vec<PathBuf>,
    explain: bool,
    unmanaged: bool,
    ignore_annotation: bool,
    /// `--diff-format`, when given.
    format: Option<DiffFormat>,
    /// `--color`, when given.
    color: Option<ColorChoice>,
}

/// `--diff-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffFormat {
    /// `diff -u`, as `kubectl diff` prints it.
    #[default]
    Unified,
    /// The classic `diff` format, as `argocd app diff` prints it.
    Classic,
}

fn parse(mut p: lexopt::Parser) -> Result<Option<Args>, CliError> {
    use lexopt::prelude::*;
    let (mut desired, mut live, mut app, mut cm) = (Vec::new(), Vec::new(), None, None);
    let mut namespace = None;
    let mut output = Output::Text;
    let mut show_secrets = false;
    let mut dry_run = Vec::new();
    let (mut explain, mut unmanaged) = (false, false);
    let mut ignore_annotation = true;
    let (mut format, mut color) = (None, None);
    while let Some(arg) = p.next()? {
        match arg {
            Long("desired") => desired.push(PathBuf::from(p.value()?)),
            Long("live") => live.push(PathBuf::from(p.value()?)),
            Long("app") => app = Some(PathBuf::from(p.value()?)),
            Long("namespace") | Short('n') => namespace = Some(p.value()?.string()?),
            Long("argocd-cm") => cm = Some(PathBuf::from(p.value()?)),
            Long("output") | Short('o') => {
                output = Output::parse(&p.value()?.to_string_lossy())?;
            }
            Long("show-secrets") => show_secrets = true,
            Long("dry-run") => dry_run.push(PathBuf::from(p.value()?)),
            Long("explain") => explain = true,
            Long("unmanaged") => unmanaged = true,
            Long("no-ignore-annotation") => ignore_annotation = false,
            Long("diff-format") => {
                format = match p.value()?.string()?.as_str() {
                    "unified" => Some(DiffFormat::Unified),
                    "classic" => Some(DiffFormat::Classic),
                    other => {
                        return Err(CliError::Usage(format!(
                            "--diff-format: unknown format `{other}`: expected unified or classic"
                        )));
                    }
                }
            }
            Long("color") => color = Some(ColorChoice::parse(&p.value()?.string()?)?),
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
    let missing = |what: &str| CliError::Usage(format!("missing --{what}\n{HELP}"));
    if desired.is_empty() {
        return Err(missing("desired"));
    }
    if live.is_empty() {
        return Err(missing("live"));
    }
    Ok(Some(Args {
        desired,
        live,
        app,
        namespace,
        cm,
        output,
        show_secrets,
        dry_run,
        explain,
        unmanaged,
        ignore_annotation,
        format,
        color,
    }))
}

/// A note on stderr for each explained live object that has no `metadata.managedFields`: its
/// writers are unknown, most often because `kubectl get` left them out (it prints them only
/// with `--show-managed-fields`).
fn note_unrecorded_writers(live: &[serde_json::Value], explained: &[ResourceExplanation]) {
    // One index of the live objects, not a search of them all per resource (issue 27's repeat:
    // `diff --explain` and `--unmanaged` grew with the square of the object count). The first
    // and the last live object of an identity are looked at (kubectl prints each once).
    let index = ObjectIndex::of_objects(live);
    for e in explained.iter().filter(|e| !e.changes.is_empty() || !e.unmanaged.is_empty()) {
        let unrecorded = [index.first(&e.object), index.last(&e.object)]
            .into_iter()
            .flatten()
            .any(|i| live[i].pointer("/metadata/managedFields").is_none());
        if unrecorded {
            eprintln!(
                "note: {} has no managedFields, so no writer is known (`kubectl get` prints them \
                 only with --show-managed-fields)",
                e.object
            );
        }
    }
}

/// Runs the command.
pub fn run(input: &common::Input, args: lexopt::Parser) -> Result<u8, CliError> {
    let Some(args) = parse(args)? else { return Ok(0) };
    // The text rendering and the explanations read the objects; JSON and YAML do not.
    let keep = args.output == Output::Text || args.explain || args.unmanaged;
    fn configure<'a>(
        input: diff::AppDiffInput<'a>,
        args: &Args,
        keep: bool,
    ) -> diff::AppDiffInput<'a> {
        input
            .with_reveal_secrets(args.show_secrets)
            .with_ignore_annotation(args.ignore_annotation)
            .with_objects(keep)
    }
    // Live's managedFields are read only when the comparison may read them (the library
    // says; with kept objects or dry-run results it always may, and the inputs are read in
    // their usual order).
    let leave_out = |desired: &[serde_json::Value], app: &Application, settings: &Settings| {
        let scopes = gitops_core::object::Scopes::builtin();
        let input = diff::AppDiffInput::new(desired, &[], app, settings, &scopes);
        !configure(input, &args, keep).reads_live_managed_fields()
    };
    let mut c = common::Comparison::read_leaving_out(
        input,
        &args.desired,
        &args.live,
        args.app.as_deref(),
        args.namespace.as_deref(),
        args.cm.as_deref(),
        Some(&leave_out as common::LeaveOut<'_>).filter(|_| !keep && args.dry_run.is_empty()),
    )?;
    let dry_runs = common::read_all_objects(input, &args.dry_run)?;
    // Only the explanations read the objects after the comparison (the text diff reads the
    // result's): otherwise they are handed over, each the working copy of its own comparison
    // (`diff_app_owned`: no copy of them is made), and the input lends none.
    let hand_over = !(args.explain || args.unmanaged);
    let (desired, live) = if hand_over {
        (std::mem::take(&mut c.desired), std::mem::take(&mut c.live))
    } else {
        (Vec::new(), Vec::new())
    };
    let mut input = configure(c.input(), &args, keep);
    if !dry_runs.is_empty() {
        input = input.with_dry_runs(&dry_runs);
    }
    let result = diff::diff_app_owned(&input, desired, live)
        .map_err(|e| CliError::Input(format!("comparing objects: {e}")))?;
    common::print_notes(&result, args.app.is_some());
    let explained =
        if args.explain || args.unmanaged { result.explain(&input) } else { Vec::new() };
    note_unrecorded_writers(&c.live, &explained);
    let show = Show { explain: args.explain, unmanaged: args.unmanaged };
    let mut external_status = None;
    match args.output {
        Output::Json if !(show.explain || show.unmanaged) => print_plain_json(&result),
        Output::Json | Output::Yaml => {
            args.output.print_document(&json_explained(&result, &explained, show));
        }
        Output::Text => {
            let texts = result.texts().map_err(|e| CliError::Input(e.to_string()))?;
            let program = std::env::var("KUBECTL_EXTERNAL_DIFF").ok();
            if let Some((program, words)) = program.as_deref().and_then(crate::external::command) {
                if args.format.is_some() || args.color.is_some() {
                    eprintln!(
                        "note: KUBECTL_EXTERNAL_DIFF is set: {program} prints the diff, so \
                         --diff-format and --color do not apply"
                    );
                }
                external_status = Some(crate::external::run(&program, &words, &texts)?);
                if show.explain {
                    common::write_out(&render_section(
                        "Who wrote the differences (--explain):",
                        "nothing differs",
                        explained.iter().map(|e| {
                            (&e.object, e.changes.iter().map(|c| c.to_string()).collect())
                        }),
                    ));
                }
                let rest = Show { explain: false, ..show };
                common::write_out(&render_explained(
                    &[],
                    &result,
                    &explained,
                    rest,
                    Style::default(),
                ));
            } else {
                use std::io::IsTerminal;
                let terminal = std::io::stdout().is_terminal();
                let no_color = std::env::var_os("NO_COLOR");
                let style = Style {
                    format: args.format.unwrap_or_default(),
                    color: args.color.unwrap_or_default().enabled(terminal, no_color.as_deref()),
                };
                common::write_out(&render_explained(&texts, &result, &explained, show, style));
            }
        }
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
    let status = match external_status {
        Some(status) => status,
        None if result.has_differences() => 1,
        None => 0,
    };
    // The process ends with this command: its memory goes back to the system whole, so the
    // objects read and the comparison are not freed node by node first (every map and string
    // of both inputs: benches/README.md, "Full diff against its floor").
    std::mem::forget((c, dry_runs, result, explained));
    Ok(status)
}

/// How the text diff is printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// Unified or classic.
    pub format: DiffFormat,
    /// In colour.
    pub color: bool,
}

/// The JSON document of `--output json`: the library's, which `serve` answers too.
pub fn json_output(result: &AppDiff) -> gitops_core::protocol::Document<'_> {
    gitops_core::protocol::Document::Diff(result)
}

/// Which explanations a diff prints.
#[derive(Debug, Clone, Copy, Default)]
pub struct Show {
    /// `--explain`: who wrote each differing field.
    pub explain: bool,
    /// `--unmanaged`: the unmanaged additions.
    pub unmanaged: bool,
}

/// The text output: the diff of `texts` in `style` with, under each object's first header
/// line, the explanation lines of its differing fields (`--explain`); then, for
/// `--unmanaged`, an `Unmanaged additions` section with one block per resource (`none` when
/// there is nothing).
pub fn render_explained(
    texts: &[ObjectText],
    result: &AppDiff,
    explained: &[ResourceExplanation],
    show: Show,
    style: Style,
) -> String {
    let index = ObjectIndex::of_refs(explained.iter().map(|e| &e.object));
    let mut out = String::new();
    for t in texts {
        let mut block = match style.format {
            DiffFormat::Unified => t.unified(),
            DiffFormat::Classic => t.classic(),
        };
        let changes = match index.first(&t.object) {
            Some(i) if show.explain => explained[i].changes.as_slice(),
            _ => &[],
        };
        if block.is_empty() && !changes.is_empty() {
            // The YAML texts are the same but the objects differ: the header still carries
            // the explanation.
            let name = t.file_name();
            block = format!("diff -u -N live/{name} merged/{name}\n");
        }
        if style.color {
            block = match style.format {
                DiffFormat::Unified => crate::paint::unified(&block),
                DiffFormat::Classic => crate::paint::classic(&block),
            };
        }
        let (header, rest) = block.split_at(block.find('\n').map_or(block.len(), |i| i + 1));
        out.push_str(header);
        for c in changes {
            out.push_str(&format!("{c}\n"));
        }
        out.push_str(rest);
    }
    if show.unmanaged {
        out.push_str(&render_unmanaged(explained));
        out.push_str(&render_unmanaged_objects(&result.unmanaged));
    }
    out
}

/// The second part of `--unmanaged`: `Live objects that are not the app's (not compared, not
/// pruned):`, then one `group/Kind namespace/name: reason` line per object (`none` when
/// there are none).
pub fn render_unmanaged_objects(unmanaged: &[gitops_core::ownership::Unmanaged]) -> String {
    let mut out = "Live objects that are not the app's (not compared, not pruned):\n".to_string();
    for u in unmanaged {
        let o = &u.object;
        out.push_str(&format!(
            "  {}/{} {}/{}: {}\n",
            o.group, o.kind, o.namespace, o.name, u.reason
        ));
    }
    if unmanaged.is_empty() {
        out.push_str("  none\n");
    }
    out
}

/// The `--unmanaged` section: `Unmanaged additions (kept by the diff and self-heal; a Replace
/// sync removes them):`, then per resource `group/Kind namespace/name` and its fields
/// indented by two spaces (`none` when there are none).
pub fn render_unmanaged(explained: &[ResourceExplanation]) -> String {
    render_section(
        "Unmanaged additions (kept by the diff and self-heal; a Replace sync removes them):",
        "none",
        explained.iter().map(|e| (&e.object, e.unmanaged.iter().map(|u| u.to_string()).collect())),
    )
}

/// A titled section: a `group/Kind namespace/name` line per resource that has lines, each of
/// them indented by two spaces; `empty` (indented) when no resource has any.
pub fn render_section<'a>(
    title: &str,
    empty: &str,
    blocks: impl Iterator<Item = (&'a gitops_core::object::ObjectRef, Vec<String>)>,
) -> String {
    let mut out = format!("{title}\n");
    let mut any = false;
    for (o, lines) in blocks.filter(|(_, lines)| !lines.is_empty()) {
        any = true;
        out.push_str(&format!("{}/{} {}/{}\n", o.group, o.kind, o.namespace, o.name));
        for l in lines {
            out.push_str(&format!("  {l}\n"));
        }
    }
    if !any {
        out.push_str(&format!("  {empty}\n"));
    }
    out
}

/// `--output json` without `--explain` or `--unmanaged`: [`json_output`]'s document written
/// straight from the comparison, the same bytes as through a `serde_json::Value` (whose maps
/// order keys alphabetically: a patch operation's `from`, `op`, `path`, `value`, a
/// condition's `message`, `type`), without that tree, a copy of the patches or the text held
/// whole (issue 30: a large app's output cost as much memory again as its patches).
pub fn print_plain_json(result: &AppDiff) {
    let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut s =
        serde_json::Serializer::with_formatter(out, serde_json::ser::PrettyFormatter::new());
    let written = Plain(result).serialize(&mut s).map_err(std::io::Error::from).and_then(|()| {
        let mut out = s.into_inner();
        out.write_all(b"\n")?;
        out.flush()
    });
    if let Err(e) = written {
        common::write_failed(&e);
    }
}

/// The document of [`print_plain_json`].
struct Plain<'a>(&'a AppDiff);

impl Serialize for Plain<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_struct("DiffOutput", 4)?;
        m.serialize_field("conditions", &Seq(r.conditions.as_slice(), SortedCondition))?;
        if r.notes.is_empty() {
            m.skip_field("notes")?;
        } else {
            m.serialize_field("notes", &r.notes)?;
        }
        m.serialize_field("resources", &Seq(r.resources.as_slice(), SortedResource))?;
        m.serialize_field("syncStatus", r.sync_status.as_str())?;
        m.end()
    }
}

/// A slice serialised item by item through a wrapper.
struct Seq<'a, T, W>(&'a [T], fn(&'a T) -> W);

impl<'a, T, W: Serialize> Serialize for Seq<'a, T, W> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(self.1))
    }
}

/// A condition with its keys in alphabetical order.
struct SortedCondition<'a>(&'a Condition);

impl Serialize for SortedCondition<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Condition", 2)?;
        m.serialize_field("message", &self.0.message)?;
        m.serialize_field("type", &self.0.type_)?;
        m.end()
    }
}

/// A resource as `DiffOutputResource` serialises (its keys are in alphabetical order).
struct SortedResource<'a>(&'a ResourceDiff);

impl Serialize for SortedResource<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (r, o) = (self.0, &self.0.object);
        let mut m = s.serialize_struct("DiffOutputResource", 10)?;
        m.serialize_field("diff", &Seq(r.diff.as_slice(), SortedOp))?;
        m.serialize_field("group", &o.group)?;
        m.serialize_field("kind", &o.kind)?;
        m.serialize_field("message", &r.message)?;
        m.serialize_field("modified", &r.modified)?;
        m.serialize_field("name", &o.name)?;
        m.serialize_field("namespace", &o.namespace)?;
        m.serialize_field("requiresPruning", &r.requires_pruning)?;
        m.serialize_field("status", r.status.map_or("", |s| s.as_str()))?;
        m.serialize_field("version", &o.version)?;
        m.end()
    }
}

/// A patch operation with its keys in alphabetical order.
struct SortedOp<'a>(&'a PatchOp);

impl Serialize for SortedOp<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let op = self.0;
        let mut m = s.serialize_struct("PatchOp", 4)?;
        match &op.from {
            Some(from) => m.serialize_field("from", from)?,
            None => m.skip_field("from")?,
        }
        m.serialize_field("op", &op.op)?;
        m.serialize_field("path", &op.path)?;
        match &op.value {
            Some(value) => m.serialize_field("value", value)?,
            None => m.skip_field("value")?,
        }
        m.end()
    }
}

/// The JSON output: [`json_output`], with an `explain` array (`--explain`) and an `unmanaged`
/// array (`--unmanaged`) in every resource.
pub fn json_explained(
    result: &AppDiff,
    explained: &[ResourceExplanation],
    show: Show,
) -> serde_json::Value {
    let mut doc = serde_json::to_value(json_output(result)).unwrap_or_default();
    if !(show.explain || show.unmanaged) {
        return doc;
    }
    if show.unmanaged
        && let Some(map) = doc.as_object_mut()
    {
        let objects = serde_json::to_value(&result.unmanaged).unwrap_or_default();
        map.insert("unmanagedObjects".into(), objects);
    }
    let Some(resources) = doc.get_mut("resources").and_then(|r| r.as_array_mut()) else {
        return doc;
    };
    let index = ObjectIndex::of_refs(explained.iter().map(|e| &e.object));
    // `Document::Diff` lists the resources of `result` in its order.
    for (r, out) in result.resources.iter().zip(resources) {
        let e = index.first(&r.object).map(|i| &explained[i]);
        let Some(map) = out.as_object_mut() else { continue };
        if show.explain {
            let changes = e.map(|e| e.changes.as_slice()).unwrap_or_default();
            map.insert("explain".into(), serde_json::to_value(changes).unwrap_or_default());
        }
        if show.unmanaged {
            let fields = e.map(|e| e.unmanaged.as_slice()).unwrap_or_default();
            map.insert("unmanaged".into(), serde_json::to_value(fields).unwrap_or_default());
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use gitops_core::config::Settings;
    use gitops_core::diff::{self, AppDiffInput};
    use gitops_core::object::Scopes;
    use serde_json::json;

    use super::{DiffFormat, Show, Style, json_explained, render_explained};

    fn objects() -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
        let desired = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "shop"}, "data": {"a": "1"}})];
        let live = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "shop", "labels": {"team": "payments"},
                "managedFields": [
                    {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
                     "time": "2026-12-01T10:00:00Z", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:data": {"f:a": {}}}},
                    {"manager": "kubectl-label", "operation": "Update", "apiVersion": "v1",
                     "time": "2026-12-01T11:00:00Z", "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}}]},
            "data": {"a": "2"}})];
        (desired, live)
    }

    fn outputs(show: Show) -> (String, String) {
        outputs_in(show, Style { format: DiffFormat::Classic, color: false })
    }

    fn outputs_in(show: Show, style: Style) -> (String, String) {
        let (desired, live) = objects();
        let (app, settings, scopes) =
            (gitops_core::config::Application::default(), Settings::default(), Scopes::builtin());
        let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
        let result = diff::diff_app(&input).unwrap(); // fixed, valid input
        let explained = result.explain(&input);
        let json = serde_json::to_string(&json_explained(&result, &explained, show)).unwrap(); // plain data
        let texts = result.texts().unwrap(); // kept
        (render_explained(&texts, &result, &explained, show, style), json)
    }

    #[test]
    fn text_with_explain_and_unmanaged() {
        let (text, _) = outputs(Show { explain: true, unmanaged: true });
        assert_eq!(
            text,
            r#"===== /ConfigMap shop/settings ======
data.a: desired "1", live "2", written by kubectl-edit (Update, 2026-12-01T10:00:00Z)
3c3
<   a: '2'
---
>   a: '1'
Unmanaged additions (kept by the diff and self-heal; a Replace sync removes them):
/ConfigMap shop/settings
  metadata.labels.team: payments, written by kubectl-label (Update, 2026-12-01T11:00:00Z)
Live objects that are not the app's (not compared, not pruned):
  none
"#
        );
    }

    #[test]
    fn unified_with_explain_in_colour() {
        let style = Style { format: DiffFormat::Unified, color: true };
        let (text, _) = outputs_in(Show { explain: true, unmanaged: false }, style);
        assert_eq!(
            text,
            "\x1b[1mdiff -u -N live/v1.ConfigMap.shop.settings merged/v1.ConfigMap.shop.settings\x1b[0m
data.a: desired \"1\", live \"2\", written by kubectl-edit (Update, 2026-12-01T10:00:00Z)
\x1b[1m--- live/v1.ConfigMap.shop.settings\x1b[0m
\x1b[1m+++ merged/v1.ConfigMap.shop.settings\x1b[0m
\x1b[36m@@ -1,6 +1,6 @@\x1b[0m
 apiVersion: v1
 data:
\x1b[31m-  a: '2'\x1b[0m
\x1b[32m+  a: '1'\x1b[0m
 kind: ConfigMap
 metadata:
   labels:
"
        );
    }

    #[test]
    fn text_without_flags_is_the_plain_diff() {
        let (text, json) = outputs(Show::default());
        assert!(text.starts_with("===== /ConfigMap shop/settings ======\n3c3\n"), "{text}");
        assert!(!text.contains("written by") && !text.contains("Unmanaged"), "{text}");
        assert!(!json.contains("\"explain\"") && !json.contains("\"unmanaged\""), "{json}");
    }

    #[test]
    fn json_with_explain_and_unmanaged() {
        let (_, json) = outputs(Show { explain: true, unmanaged: true });
        assert_eq!(
            json,
            r#"{"conditions":[],"resources":[{"diff":[{"op":"replace","path":"/data/a","value":"1"}],"explain":[{"desired":"1","live":"2","path":"data.a","pointer":"/data/a","writers":[{"manager":"kubectl-edit","operation":"Update","time":"2026-12-01T10:00:00Z"}]}],"group":"","kind":"ConfigMap","message":"","modified":true,"name":"settings","namespace":"shop","requiresPruning":false,"status":"OutOfSync","unmanaged":[{"live":"payments","path":"metadata.labels.team","pointer":"/metadata/labels/team","writers":[{"manager":"kubectl-label","operation":"Update","time":"2026-12-01T11:00:00Z"}]}],"version":"v1"}],"syncStatus":"OutOfSync","unmanagedObjects":[]}"#
        );
        let (_, json) = outputs(Show { explain: false, unmanaged: true });
        assert!(json.contains("\"unmanaged\":[{") && !json.contains("\"explain\""), "{json}");
    }

    /// `--output json` written straight from the comparison is the document through a
    /// `serde_json::Value`, byte for byte: conditions, notes, every operation's keys (`from`
    /// of a move, no value for a remove), a resource without a status, nested values.
    #[test]
    fn plain_json_is_the_document_through_a_value() {
        use serde::Serialize;
        let resource = |name: &str, status: serde_json::Value, diff: serde_json::Value| {
            json!({"object": {"group": "apps", "version": "v1", "kind": "Deployment",
                "namespace": "shop", "name": name}, "status": status, "modified": true,
                "requiresPruning": false, "requiresDeletionConfirmation": false, "hook": false,
                "diff": diff, "normalizedLive": null, "predictedLive": null,
                "mode": "threeWay", "message": "m\u{1}\"x\""})
        };
        let ops = json!([{"op": "move", "path": "/a", "from": "/b"}, {"op": "remove", "path": "/c"},
            {"op": "add", "path": "/d", "value": {"z": 1, "a": [1.5, null, "x\"y", {}, []]}},
            {"op": "replace", "path": "", "value": null}]);
        for notes in [json!([]), json!(["not compared or pruned: a", "b"])] {
            let doc = json!({"syncStatus": "OutOfSync", "hooks": [],
                "conditions": [{"type": "SharedResourceWarning", "message": "w"},
                    {"type": "A", "message": "z"}],
                "notes": notes,
                "resources": [resource("a", json!("OutOfSync"), ops.clone()),
                    resource("b", json!(null), json!([]))]});
            let result: diff::AppDiff = serde_json::from_value(doc).unwrap(); // fixed, valid
            let mut plain = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::new();
            super::Plain(&result)
                .serialize(&mut serde_json::Serializer::with_formatter(&mut plain, formatter))
                .unwrap(); // into a Vec
            let through = json_explained(&result, &[], Show::default());
            let through = serde_json::to_string_pretty(&through).unwrap(); // plain data
            assert_eq!(String::from_utf8(plain).unwrap(), through); // serde_json writes UTF-8
        }
    }

    #[test]
    fn flags_parse() {
        let args = super::parse(lexopt::Parser::from_args([
            "--desired",
            "d.yaml",
            "--live",
            "l.yaml",
            "--explain",
            "--unmanaged",
        ]))
        .unwrap() // valid arguments
        .unwrap(); // not --help
        assert!(args.explain && args.unmanaged);
    }
}
