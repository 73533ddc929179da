//! An external diff program, named the way `KUBECTL_EXTERNAL_DIFF` names it for
//! `kubectl diff` (kubectl's `pkg/cmd/diff/diff.go`, `DiffProgram.getCommand` and `Run`): the
//! value is split on spaces, the first word is the program and each further word made only of
//! letters, digits, `-` and `=` is passed after the two folders (any other word is left out,
//! with a note); the program is run on a `LIVE` and a `MERGED` folder holding one YAML file per
//! object, named as kubectl names it; its exit status 0 or 1 is the command's, any other is an
//! error (exit status 2).

use std::path::{Path, PathBuf};

use gitops_core::diff::ObjectText;

use crate::common::CliError;

/// The program and its arguments from the value of `KUBECTL_EXTERNAL_DIFF`; a note on stderr
/// for each word kubectl would leave out. `None` for an empty value.
pub fn command(value: &str) -> Option<(String, Vec<String>)> {
    let mut words = value.split(' ');
    let program = words.next().filter(|p| !p.is_empty())?.to_string();
    let valid = |w: &str| {
        !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '=')
    };
    let mut args = Vec::new();
    for w in words.filter(|w| !w.is_empty()) {
        if valid(w) {
            args.push(w.to_string());
        } else {
            eprintln!(
                "note: KUBECTL_EXTERNAL_DIFF: `{w}` is not passed to {program}, as kubectl does not \
                 pass it (only words of letters, digits, - and =)"
            );
        }
    }
    Some((program, args))
}

/// A folder of the system's temporary folder made for one run, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, CliError> {
        let base = std::env::temp_dir();
        let mut last = None;
        for n in 0..100u32 {
            let path = base.join(format!("gitops-core-diff-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(folder_error(&path, &e)),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
        Err(folder_error(&base, &e))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn folder_error(path: &Path, e: &std::io::Error) -> CliError {
    CliError::Input(format!(
        "{}: cannot write the folders of the external diff: {e}",
        path.display()
    ))
}

/// Writes the objects into `LIVE` and `MERGED` and runs the program on the two folders, its
/// output going to this process's output. Returns the exit status to end with (0 or 1).
pub fn run(program: &str, args: &[String], texts: &[ObjectText]) -> Result<u8, CliError> {
    let dir = TempDir::new()?;
    let (live, merged) = (dir.0.join("LIVE"), dir.0.join("MERGED"));
    for folder in [&live, &merged] {
        std::fs::create_dir(folder).map_err(|e| folder_error(folder, &e))?;
    }
    for t in texts {
        let name = t.file_name();
        // A name from the input must not reach outside the folders.
        if name.contains(['/', '\\']) || name.contains(char::is_control) {
            return Err(CliError::Input(format!(
                "{}: its name cannot be a file name for KUBECTL_EXTERNAL_DIFF (`{name}`)",
                t.object
            )));
        }
        // As kubectl: the live file exists (empty) for an object that would be created; no
        // merged file for one that would be pruned.
        let write = |path: PathBuf, text: &str| {
            std::fs::write(&path, text).map_err(|e| folder_error(&path, &e))
        };
        write(live.join(&name), t.live.as_deref().unwrap_or_default())?;
        if let Some(m) = &t.merged {
            write(merged.join(&name), m)?;
        }
    }
    let status = std::process::Command::new(program)
        .arg(&live)
        .arg(&merged)
        .args(args)
        .status()
        .map_err(|e| CliError::Input(format!("failed to run \"{program}\": {e}")))?;
    match status.code() {
        Some(0) => Ok(0),
        Some(1) => Ok(1),
        _ => Err(CliError::Input(format!("failed to run \"{program}\": {status}"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_words() {
        assert_eq!(super::command(""), None);
        assert_eq!(
            super::command("colordiff -N -u"),
            Some(("colordiff".to_string(), vec!["-N".to_string(), "-u".to_string()]))
        );
        assert_eq!(
            super::command("diff  --color=always 'x'"),
            Some(("diff".to_string(), vec!["--color=always".to_string()]))
        );
    }
}
