//! What every command shares: reading objects from files and directories, reading the
//! Application and argocd-cm, and printing.

use std::ffi::OsString;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use gitops_core::config::{Application, Settings};
use gitops_core::object::{DuplicateKeys, ParseOptions};
use serde_json::Value;

/// An error of the command-line tool, printed on stderr with exit status 2.
#[derive(Debug)]
pub enum CliError {
    /// Wrong arguments.
    Usage(String),
    /// A file could not be read or understood; the message names the file.
    Input(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Input(m) => f.write_str(m),
        }
    }
}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> Self {
        CliError::Usage(e.to_string())
    }
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// Argo-style text.
    #[default]
    Text,
    /// JSON.
    Json,
    /// YAML: the same document as JSON.
    Yaml,
}

impl Output {
    /// Parses `text`, `json` or `yaml`.
    pub fn parse(v: &str) -> Result<Output, CliError> {
        match v {
            "text" => Ok(Output::Text),
            "json" => Ok(Output::Json),
            "yaml" => Ok(Output::Yaml),
            other => Err(CliError::Usage(format!(
                "unknown output `{other}`: expected text, json or yaml"
            ))),
        }
    }
}

/// The names of one `--fail-on` value: a comma-separated list of statuses, each one of `valid`
/// (Argo CD's spelling, case-sensitive). An unknown name is a usage error naming it and the
/// valid ones.
pub fn parse_fail_on(list: &str, valid: &[&str]) -> Result<Vec<String>, CliError> {
    list.split(',')
        .map(str::trim)
        .map(|name| {
            if valid.contains(&name) {
                Ok(name.to_string())
            } else {
                let (last, first) = valid.split_last().unwrap_or((&"", &[]));
                Err(CliError::Usage(format!(
                    "--fail-on: unknown status `{name}`: expected {} or {last}",
                    first.join(", ")
                )))
            }
        })
        .collect()
}

/// How every command reads its inputs, from the global input flags (`--max-input-bytes`,
/// `--max-objects`, `--max-string-bytes`, `--strict-keys`, `--recursive`), passed down to each
/// command; it also remembers whether standard input was read.
#[derive(Debug, Default)]
pub struct Input {
    /// The limits and what a repeated key does.
    pub options: ParseOptions,
    /// `--recursive`: a PATH folder stands for the manifests of its subfolders too.
    pub recursive: bool,
    /// Standard input is read at most once: a second `-` is an error.
    stdin_taken: std::cell::Cell<bool>,
}

/// Takes the global input flags out of `args`: the [`Input`] they make and the other arguments.
pub fn take_input_flags(args: Vec<OsString>) -> Result<(Input, Vec<OsString>), CliError> {
    let mut options = ParseOptions::default();
    let mut recursive = false;
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (text.clone(), None),
        };
        if flag == "--" {
            rest.push(arg);
            rest.extend(args);
            break;
        }
        let mut number = |name: &str| -> Result<usize, CliError> {
            let v = match &inline {
                Some(v) => v.clone(),
                None => args.next().map(|v| v.to_string_lossy().into_owned()).ok_or_else(|| {
                    CliError::Usage(format!("missing argument for option '{name}'"))
                })?,
            };
            v.parse().map_err(|_| CliError::Usage(format!("{name}: `{v}` is not a whole number")))
        };
        match flag.as_str() {
            "--max-input-bytes" => options.max_bytes = number("--max-input-bytes")?,
            "--max-objects" => options.max_objects = number("--max-objects")?,
            "--max-string-bytes" => options.max_string_bytes = number("--max-string-bytes")?,
            "--strict-keys" => options.duplicate_keys = DuplicateKeys::Refuse,
            "--recursive" => recursive = true,
            _ => rest.push(arg),
        }
    }
    Ok((Input { options, recursive, stdin_taken: std::cell::Cell::new(false) }, rest))
}

impl Output {
    /// Prints a structured document as JSON or YAML; `false` for text, which the command
    /// renders itself.
    pub fn print_document(self, v: &impl serde::Serialize) -> bool {
        match self {
            Output::Text => false,
            Output::Json => {
                print_json(v);
                true
            }
            Output::Yaml => {
                print_yaml(v);
                true
            }
        }
    }
}

/// The files a PATH stands for: `-` (standard input), the file itself, or every `.yaml`,
/// `.yml` and `.json` entry of the directory, sorted by path. Subfolders are read with
/// `--recursive` (Argo CD's `directory.recurse`; a symbolic link to a folder is not followed,
/// as Argo CD's walk does not follow it); without it, or for such a link, a note on stderr
/// names each folder not read. An entry that cannot be read (a dangling symbolic link, a link
/// loop, no permission) is an error naming it, never skipped: a desired object that vanished
/// would be marked for pruning.
pub fn files_of(input: &Input, path: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut said = Vec::new();
    let files = files_in(input, path, &mut said);
    say(said);
    files
}

/// Prints on stderr the lines that reading would have printed as it went.
fn say(said: Vec<String>) {
    for line in said {
        eprintln!("{line}");
    }
}

/// [`files_of`], its notes kept in `said` instead of printed.
fn files_in(input: &Input, path: &Path, said: &mut Vec<String>) -> Result<Vec<PathBuf>, CliError> {
    if is_stdin(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let meta =
        std::fs::metadata(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let recursive = input.recursive;
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    let mut folders = vec![path.to_path_buf()];
    while let Some(dir) = folders.pop() {
        for (p, meta) in crate::folders::entries(&dir)? {
            let link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_symlink());
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let manifest = matches!(ext, "yaml" | "yml" | "json");
            match meta {
                Ok(m) if m.is_dir() => {
                    if recursive && !link {
                        folders.push(p);
                    } else {
                        skipped.push((p, link));
                    }
                }
                _ if !manifest => {}
                Ok(m) if m.is_file() => files.push(p),
                Ok(_) => {
                    return Err(CliError::Input(format!("{}: not a regular file", p.display())));
                }
                Err(e) => {
                    let what = if link { " (a symbolic link that cannot be followed)" } else { "" };
                    return Err(CliError::Input(format!("{}: {e}{what}", p.display())));
                }
            }
        }
    }
    files.sort();
    skipped.sort();
    for (folder, link) in skipped {
        said.push(if link {
            format!(
                "note: {}: a symbolic link to a folder, not followed: its manifests are not read",
                folder.display()
            )
        } else {
            format!(
                "note: {}: a subfolder, not read (--recursive reads subfolders, as Argo CD's \
                 directory.recurse)",
                folder.display()
            )
        });
    }
    Ok(files)
}

/// Whether PATH is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a file, or standard input for `-`, as text, naming it in the error. Text longer than
/// `--max-input-bytes` is refused before it is all read.
pub fn read_text(input: &Input, path: &Path) -> Result<String, CliError> {
    let bytes = read_bytes(input, path)?;
    String::from_utf8(bytes)
        .map_err(|e| CliError::Input(format!("{}: not UTF-8 text: {e}", display_name(path))))
}

/// The bytes of a file, or of standard input for `-`, up to `--max-input-bytes`.
fn read_bytes(input: &Input, path: &Path) -> Result<Vec<u8>, CliError> {
    let limit = input.options.max_bytes;
    let name =
        if is_stdin(path) { "standard input".to_string() } else { path.display().to_string() };
    let fail = |e: std::io::Error| CliError::Input(format!("{name}: {e}"));
    // A file's buffer is made at its size once (`read_to_end` through `take` would double it
    // from empty: a 35 MB file cost a 64 MiB buffer and the copies into it, and the freed
    // smaller buffers stay resident until the allocator purges them, on the peak; see
    // benches/README.md, "Whole process").
    let (reader, size): (Box<dyn Read>, u64) = if is_stdin(path) {
        if input.stdin_taken.replace(true) {
            return Err(CliError::Usage("standard input (`-`) can be read only once".into()));
        }
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let file = std::fs::File::open(path).map_err(fail)?;
        let size = file.metadata().map_or(0, |m| m.len());
        (Box::new(file), size)
    };
    // One byte more than the size, so that reading to the end does not grow it to find the
    // end; never more than the limit allows to be read.
    // Asked for, not required: a buffer the allocator refuses grows as it is read instead.
    let capacity = size.saturating_add(1).min(limit as u64 + 1);
    let mut bytes = Vec::new();
    let _ = bytes.try_reserve_exact(usize::try_from(capacity).unwrap_or(0));
    let read = reader.take(limit as u64 + 1).read_to_end(&mut bytes).map_err(fail)?;
    if read > limit {
        return Err(CliError::Input(format!(
            "{name}: the input exceeds the limit of {limit} bytes (raise it with --max-input-bytes)"
        )));
    }
    Ok(bytes)
}

/// Reads a manifest file as Argo CD's repo-server reads an app's files (utfutil with its UTF-8
/// hint, over golang.org/x/text's `BOMOverride`): a UTF-16 text with its byte order mark
/// (`FF FE` little-endian, `FE FF` big-endian) is decoded, and bytes that are not UTF-8 in a
/// text without a mark read as U+FFFD, one for each maximal ill-formed part (a warning counts
/// them). A text that starts with UTF-8's mark is taken as it is, and refused when it is not
/// UTF-8 (go-yaml v2 refuses it then).
fn read_manifest_text(
    input: &Input,
    path: &Path,
    said: &mut Vec<String>,
) -> Result<String, CliError> {
    let bytes = read_bytes(input, path)?;
    let name = display_name(path);
    let (text, replaced) = decode_manifest(bytes)
        .map_err(|e| CliError::Input(format!("{name}: not UTF-8 text: {e}")))?;
    if replaced > 0 {
        let s = if replaced == 1 { "" } else { "s" };
        said.push(format!(
            "gitops-core: warning: {name}: {replaced} ill-formed UTF-8 sequence{s} read as \
             U+FFFD, as Argo CD's repo-server reads them"
        ));
    }
    Ok(text)
}

/// The text of a manifest file's bytes (see [`read_manifest_text`]) and how many ill-formed
/// UTF-8 sequences were replaced; the error of a text with UTF-8's mark that is not UTF-8.
fn decode_manifest(bytes: Vec<u8>) -> Result<(String, usize), std::string::FromUtf8Error> {
    let utf16 = |big: bool| {
        let pairs = bytes[2..].chunks_exact(2);
        let odd = !pairs.remainder().is_empty();
        let mut units = pairs
            .map(|c| {
                if big {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            })
            .peekable();
        let mut text = String::with_capacity(bytes.len());
        while let Some(unit) = units.next() {
            if !(0xd800..0xe000).contains(&unit) {
                text.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}'));
                continue;
            }
            // x/text pairs a surrogate with a low surrogate after it, whatever the first one
            // is (a low one before a low one is one U+FFFD for both); an unpaired one is U+FFFD.
            let low = units.next_if(|low| (0xdc00..0xe000).contains(low));
            let ch = low
                .filter(|_| unit < 0xdc00)
                .and_then(|low| {
                    char::from_u32(
                        0x10000 + ((u32::from(unit) - 0xd800) << 10) + (u32::from(low) - 0xdc00),
                    )
                })
                .unwrap_or('\u{fffd}');
            text.push(ch);
        }
        if odd {
            // A last single byte.
            text.push('\u{fffd}');
        }
        text
    };
    match bytes.get(..3) {
        Some([0xef, 0xbb, 0xbf]) => return String::from_utf8(bytes).map(|t| (t, 0)),
        _ if bytes.starts_with(&[0xff, 0xfe]) => return Ok((utf16(false), 0)),
        _ if bytes.starts_with(&[0xfe, 0xff]) => return Ok((utf16(true), 0)),
        _ => {}
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, 0)),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut replaced = 0;
            let mut rest = bytes.as_slice();
            while let Err(e) = std::str::from_utf8(rest) {
                replaced += 1;
                rest = &rest
                    [e.valid_up_to() + e.error_len().unwrap_or(rest.len() - e.valid_up_to())..];
            }
            Ok((String::from_utf8_lossy(&bytes).into_owned(), replaced))
        }
    }
}

/// The name of a file in messages: `standard input` for `-`.
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) { "standard input".to_string() } else { path.display().to_string() }
}

/// Reads the objects of every file under PATH (see [`files_of`]) with the options given
/// (health reads objects without a name). Warnings of the reading go to stderr, naming the
/// file.
pub fn read_objects_with(
    input: &Input,
    path: &Path,
    options: &ParseOptions,
) -> Result<Vec<Value>, CliError> {
    let mut said = Vec::new();
    let mut out = Vec::new();
    let read = objects_in(input, path, options, &mut said, &mut out);
    say(said);
    read.map(|()| out)
}

/// [`read_objects_with`] into `out`, its notes and warnings kept in `said` instead of printed.
fn objects_in(
    input: &Input,
    path: &Path,
    options: &ParseOptions,
    said: &mut Vec<String>,
    out: &mut Vec<Value>,
) -> Result<(), CliError> {
    for file in files_in(input, path, said)? {
        let text = read_manifest_text(input, &file, said)?;
        let name = display_name(&file);
        let read =
            options.parse_manifests(&text).map_err(|e| CliError::Input(format!("{name}: {e}")))?;
        for w in &read.warnings {
            said.push(format!("gitops-core: warning: {name}: {w}"));
        }
        out.extend(read.objects);
    }
    Ok(())
}

/// Reads objects from several paths, in order.
pub fn read_all_objects(input: &Input, paths: &[PathBuf]) -> Result<Vec<Value>, CliError> {
    let mut said = Vec::new();
    let mut out = Vec::new();
    let read = all_objects_in(input, paths, &mut said, &mut out);
    say(said);
    read.map(|()| out)
}

/// [`read_all_objects`] into `out`, its notes and warnings kept in `said` instead of printed.
fn all_objects_in(
    input: &Input,
    paths: &[PathBuf],
    said: &mut Vec<String>,
    out: &mut Vec<Value>,
) -> Result<(), CliError> {
    paths.iter().try_for_each(|p| objects_in(input, p, &input.options, said, out))
}

/// Reads one YAML or JSON document.
pub fn read_document(input: &Input, path: &Path) -> Result<Value, CliError> {
    let mut said = Vec::new();
    let read = document_in(input, path, &mut said);
    say(said);
    read
}

/// [`read_document`], its warnings kept in `said` instead of printed.
fn document_in(input: &Input, path: &Path, said: &mut Vec<String>) -> Result<Value, CliError> {
    let text = read_text(input, path)?;
    let name = display_name(path);
    let (docs, warnings) = input
        .options
        .parse_documents(&text)
        .map_err(|e| CliError::Input(format!("{name}: {e}")))?;
    for w in &warnings {
        said.push(format!("gitops-core: warning: {name}: {w}"));
    }
    docs.into_iter()
        .find(|d| !d.is_null())
        .ok_or_else(|| CliError::Input(format!("{name}: no document")))
}

/// The Application a command compares with: `--app` (its destination namespace replaced by
/// `-n` when both are given), or an empty one in `-n`'s namespace. Without either, a note on
/// stderr says that namespaced desired objects without a namespace will not pair.
pub fn app_for(
    input: &Input,
    app: Option<&Path>,
    namespace: Option<&str>,
    desired: &[Value],
) -> Result<Application, CliError> {
    let mut said = Vec::new();
    let read = app_in(input, app, namespace, desired, &mut said);
    say(said);
    read
}

/// [`app_for`], its notes and warnings kept in `said` instead of printed.
fn app_in(
    input: &Input,
    app: Option<&Path>,
    namespace: Option<&str>,
    desired: &[Value],
    said: &mut Vec<String>,
) -> Result<Application, CliError> {
    let mut out = match app {
        Some(p) => app_file_in(input, p, said)?,
        None => Application::default(),
    };
    if let Some(ns) = namespace {
        out.spec.destination.namespace = ns.to_string();
    } else if app.is_none() {
        let scopes = gitops_core::object::Scopes::builtin();
        let unset = desired.iter().any(|o| {
            let r = gitops_core::object::ObjectRef::from_object_lossy(o);
            r.namespace.is_empty()
                && scopes.scope(&r.group, &r.kind) != Some(gitops_core::object::Scope::Cluster)
        });
        if unset {
            said.push(
                "note: no --app and no -n/--namespace: namespaced objects without a namespace \
                 will not pair with their live copies"
                    .to_string(),
            );
        }
    }
    Ok(out)
}

/// What `diff` and `status` compare: the desired and live objects, the Application, the
/// argocd-cm settings and the scopes (built-in kinds plus the CRDs among the objects).
pub struct Comparison {
    /// The objects from Git.
    pub desired: Vec<Value>,
    /// The live objects.
    pub live: Vec<Value>,
    /// The Application ([`app_for`]).
    pub app: Application,
    /// `--argocd-cm`, or the defaults.
    pub settings: Settings,
    /// Namespaced or cluster-scoped, per kind.
    pub scopes: gitops_core::object::Scopes,
    /// The backstop for the jq ignore rules ([`deadline`]).
    pub interrupt: std::sync::Arc<dyn gitops_core::script::Interrupt>,
}

/// Whether a command's use of the live objects cannot depend on their
/// `metadata.managedFields`, given the desired objects, the Application and the settings
/// (`diff` asks the library: `AppDiffInput::reads_live_managed_fields`).
pub type LeaveOut<'f> = &'f dyn Fn(&[Value], &Application, &Settings) -> bool;

impl Comparison {
    /// Reads every input of a comparison.
    pub fn read(
        input: &Input,
        desired: &[PathBuf],
        live: &[PathBuf],
        app: Option<&Path>,
        namespace: Option<&str>,
        argocd_cm: Option<&Path>,
    ) -> Result<Comparison, CliError> {
        Self::read_leaving_out(input, desired, live, app, namespace, argocd_cm, None)
    }

    /// [`Comparison::read`]; with `leave_out`, when every input is a file, the desired
    /// objects, the Application and the settings are read first, and the live objects are
    /// read without their `metadata.managedFields` when `leave_out` says they cannot count
    /// (`ParseOptions::leave_out_managed_fields`). What the user sees is the same: notes,
    /// warnings and the error that wins come in the same order.
    pub fn read_leaving_out(
        input: &Input,
        desired: &[PathBuf],
        live: &[PathBuf],
        app: Option<&Path>,
        namespace: Option<&str>,
        argocd_cm: Option<&Path>,
        leave_out: Option<LeaveOut<'_>>,
    ) -> Result<Comparison, CliError> {
        let paths = desired.iter().chain(live).map(PathBuf::as_path);
        let from_stdin = paths.chain(app).chain(argocd_cm).any(is_stdin);
        if let Some(leave_out) = leave_out.filter(|_| !from_stdin) {
            // The desired objects first (their error wins, their notes come first); the
            // Application's and the settings' notes and warnings are printed after the live
            // objects', as `read` prints them, and their errors only when those read.
            let desired = read_all_objects(input, desired)?;
            let mut app_said = Vec::new();
            let app = app_in(input, app, namespace, &desired, &mut app_said);
            let mut settings_said = Vec::new();
            let settings = argocd_cm.map(|p| settings_in(input, p, &mut settings_said));
            let default = Settings::default();
            let skip = match (&app, &settings) {
                (Ok(a), None) => leave_out(&desired, a, &default),
                (Ok(a), Some(Ok(s))) => leave_out(&desired, a, s),
                _ => false,
            };
            let options = input.options.clone().with_leave_out_managed_fields(skip);
            let (mut live_said, mut live_objects) = (Vec::new(), Vec::new());
            let live_read = live.iter().try_for_each(|p| {
                objects_in(input, p, &options, &mut live_said, &mut live_objects)
            });
            say(live_said);
            live_read?;
            say(app_said);
            let app = app?;
            say(settings_said);
            let settings = settings.transpose()?.unwrap_or_default();
            let mut scopes = gitops_core::object::Scopes::builtin();
            scopes.add_crds(desired.iter().chain(&live_objects));
            return Ok(Comparison {
                desired,
                live: live_objects,
                app,
                settings,
                scopes,
                interrupt: deadline(),
            });
        }
        // The live objects are read first, so that the larger text (a cluster's objects carry
        // status and managed fields) is freed before the desired objects are read: the peak
        // holds both trees and the desired text, not the live text (benches/README.md, "Whole
        // process"). What the user sees is as if desired were read first: its notes and
        // warnings come first, and its error wins (the live ones are then not printed).
        // Standard input, which only one side can read, keeps the order as given.
        let (desired, live) = if desired.iter().chain(live).any(|p| is_stdin(p)) {
            (read_all_objects(input, desired)?, read_all_objects(input, live)?)
        } else {
            let (mut live_said, mut live_objects) = (Vec::new(), Vec::new());
            let live_read = all_objects_in(input, live, &mut live_said, &mut live_objects);
            let desired = read_all_objects(input, desired)?;
            say(live_said);
            live_read?;
            (desired, live_objects)
        };
        let app = app_for(input, app, namespace, &desired)?;
        let settings = argocd_cm.map(|p| read_settings(input, p)).transpose()?.unwrap_or_default();
        let mut scopes = gitops_core::object::Scopes::builtin();
        scopes.add_crds(desired.iter().chain(&live));
        Ok(Comparison { desired, live, app, settings, scopes, interrupt: deadline() })
    }

    /// The library's input for comparing them.
    pub fn input(&self) -> gitops_core::diff::AppDiffInput<'_> {
        gitops_core::diff::AppDiffInput::new(
            &self.desired,
            &self.live,
            &self.app,
            &self.settings,
            &self.scopes,
        )
        .with_interrupt(&self.interrupt)
    }
}

/// Prints the notes of a comparison on stderr; without `--app` (`has_app` false), also says
/// how to have what the app tracks compared and pruned.
pub fn print_notes(result: &gitops_core::diff::AppDiff, has_app: bool) {
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    let unnamed = result
        .unmanaged
        .iter()
        .any(|u| matches!(u.reason, gitops_core::ownership::Unclaimed::NoAppName));
    if !has_app && unnamed {
        eprintln!(
            "note: without --app no live object is claimed by its tracking, so nothing that is \
             not desired is compared or pruned: pass --app APP.yaml to compare and prune what \
             the app tracks"
        );
    }
}

/// Reads an Argo CD Application manifest.
pub fn read_app(input: &Input, path: &Path) -> Result<Application, CliError> {
    let mut said = Vec::new();
    let read = app_file_in(input, path, &mut said);
    say(said);
    read
}

/// [`read_app`], its warnings kept in `said` instead of printed.
fn app_file_in(
    input: &Input,
    path: &Path,
    said: &mut Vec<String>,
) -> Result<Application, CliError> {
    let doc = document_in(input, path, said)?;
    Application::from_value(&doc)
        .map_err(|e| CliError::Input(format!("{}: {e}", display_name(path))))
}

/// Reads an `argocd-cm` ConfigMap.
pub fn read_settings(input: &Input, path: &Path) -> Result<Settings, CliError> {
    let mut said = Vec::new();
    let read = settings_in(input, path, &mut said);
    say(said);
    read
}

/// [`read_settings`], its warnings kept in `said` instead of printed.
fn settings_in(input: &Input, path: &Path, said: &mut Vec<String>) -> Result<Settings, CliError> {
    let doc = document_in(input, path, said)?;
    Settings::from_config_map(&doc)
        .map_err(|e| CliError::Input(format!("{}: {e}", display_name(path))))
}

/// Reads `--project` and the cluster Secrets of `--cluster` (every object under each PATH),
/// naming the file of a document that does not read.
pub fn read_project(
    input: &Input,
    path: &Path,
    clusters: &[PathBuf],
) -> Result<gitops_core::project::AppProject, CliError> {
    let doc = read_document(input, path)?;
    let mut project = gitops_core::project::AppProject::from_value(&doc)
        .map_err(|e| CliError::Input(format!("{}: {e}", display_name(path))))?;
    for p in clusters {
        for obj in read_objects_with(input, p, &input.options)? {
            let cluster = gitops_core::project::Cluster::from_value(&obj)
                .map_err(|e| CliError::Input(format!("{}: {e}", display_name(p))))?;
            project.clusters.push(cluster);
        }
    }
    Ok(project)
}

/// Prints a value as pretty JSON with a trailing newline.
pub fn print_json(v: &impl serde::Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => write_out(&format!("{s}\n")),
        Err(e) => eprintln!("gitops-core: cannot serialize output: {e}"),
    }
}

/// Prints a value as YAML (strings YAML 1.1 would read as other types quoted).
pub fn print_yaml(v: &impl serde::Serialize) {
    match gitops_core::object::to_yaml(v) {
        Ok(s) => write_out(&s),
        Err(e) => eprintln!("gitops-core: cannot serialize output: {e}"),
    }
}

/// The exit status of a process whose reader went away, as shells report a process ended by
/// SIGPIPE (128 + 13).
pub const CLOSED_PIPE_STATUS: i32 = 141;

/// Writes text to stdout. A closed pipe (`| head`) ends the process quietly with status 141,
/// as a Unix tool ended by SIGPIPE; any other write error (a full disk, `>/dev/full`) ends it
/// with a message and status 2.
pub fn write_out(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        write_failed(&e);
    }
}

/// Ends the process after a failed write to stdout (see [`write_out`]).
pub fn write_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(CLOSED_PIPE_STATUS);
    }
    eprintln!("gitops-core: cannot write standard output: {e}");
    std::process::exit(2);
}

/// `println!` to stdout through [`write_out`].
macro_rules! outln {
    () => { $crate::common::write_out("\n") };
    ($($arg:tt)*) => { $crate::common::write_out(&format!("{}\n", format_args!($($arg)*))) };
}

/// The clock, in unix seconds (the library's time type). The command-line tool is the host:
/// the one place that reads it, and only where `--now` is not given.
pub fn clock_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The host's backstop for untrusted code in one CLI run: each Lua script evaluation and each
/// jq ignore rule on each object stops after 1 s of wall clock (Argo CD's own timeout for a
/// script), whatever the deterministic budgets say.
pub fn deadline() -> std::sync::Arc<dyn gitops_core::script::Interrupt> {
    use std::time::{Duration, Instant};
    std::sync::Arc::new(gitops_core::script::Deadline::new(Duration::from_secs(1), Instant::now))
}
