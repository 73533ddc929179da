//! What every command shares: reading objects from files and directories, reading the
//! Application and argocd-cm, and printing.

use std::fmt;
use std::path::{Path, PathBuf};

use gitops_core::{Application, Settings};
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
}

impl Output {
    /// Parses `text` or `json`.
    pub fn parse(v: &str) -> Result<Output, CliError> {
        match v {
            "text" => Ok(Output::Text),
            "json" => Ok(Output::Json),
            other => {
                Err(CliError::Usage(format!("unknown output `{other}`: expected text or json")))
            }
        }
    }
}

/// The files a PATH stands for: the file itself, or every `.yaml`, `.yml` and `.json` file
/// in the directory, sorted by name (not recursive).
pub fn files_of(path: &Path) -> Result<Vec<PathBuf>, CliError> {
    let meta =
        std::fs::metadata(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        let p = entry.path();
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if p.is_file() && matches!(ext, "yaml" | "yml" | "json") {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads a file as text, naming it in the error.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
}

/// Reads the objects of every file under PATH (see [`files_of`]).
pub fn read_objects(path: &Path) -> Result<Vec<Value>, CliError> {
    let mut out = Vec::new();
    for file in files_of(path)? {
        let text = read_text(&file)?;
        let objs = gitops_core::parse_manifests(&text)
            .map_err(|e| CliError::Input(format!("{}: {e}", file.display())))?;
        out.extend(objs);
    }
    Ok(out)
}

/// Reads objects from several paths, in order.
pub fn read_all_objects(paths: &[PathBuf]) -> Result<Vec<Value>, CliError> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(read_objects(p)?);
    }
    Ok(out)
}

/// Reads one YAML or JSON document.
pub fn read_document(path: &Path) -> Result<Value, CliError> {
    let text = read_text(path)?;
    let docs = gitops_core::object::parse_documents(&text)
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    docs.into_iter()
        .find(|d| !d.is_null())
        .ok_or_else(|| CliError::Input(format!("{}: no document", path.display())))
}

/// Reads an Argo CD Application manifest.
pub fn read_app(path: &Path) -> Result<Application, CliError> {
    let doc = read_document(path)?;
    Application::from_value(&doc).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
}

/// Reads an `argocd-cm` ConfigMap.
pub fn read_settings(path: &Path) -> Result<Settings, CliError> {
    let doc = read_document(path)?;
    Settings::from_config_map(&doc).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
}

/// Prints a value as pretty JSON with a trailing newline. A closed pipe (`| head`) is not an
/// error.
pub fn print_json(v: &impl serde::Serialize) {
    use std::io::Write;
    match serde_json::to_string_pretty(v) {
        Ok(s) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{s}").and_then(|()| out.flush());
        }
        Err(e) => eprintln!("gitops-core: cannot serialize output: {e}"),
    }
}
