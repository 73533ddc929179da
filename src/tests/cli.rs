//! The command-line tool run as a user runs it: every case of `testdata/cli/*.yaml` is the
//! built binary started with its arguments (from the crate's folder), what it reads on
//! standard input, and the exact exit status, standard output and standard error.
//!
//! A case's `setup` makes files (`executable` ones with mode 755) and symbolic links in a fresh
//! temporary folder first; `$TMP` in the arguments, the environment and the expected texts
//! stands for that folder. `env` sets environment variables; `KUBECTL_EXTERNAL_DIFF` and
//! `NO_COLOR` are unset unless a case sets them. `stdout: closed` runs the
//! command with its output pipe already closed, `stdout: full` with `/dev/full` as output.
//!
//! This file is its own test target (`[[test]] cli` in Cargo.toml): only test targets get the
//! binary built for them and its path in `CARGO_BIN_EXE_gitops-core`.
#![forbid(unsafe_code)]
// A test is a host: it makes files and runs the binary.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

const BIN: &str = env!("CARGO_BIN_EXE_gitops-core");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    args: Vec<String>,
    #[serde(default)]
    stdin: Option<String>,
    #[serde(default)]
    setup: Setup,
    /// Environment variables of the command.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Features of the crate the case needs (`lua`, `jq`).
    #[serde(default)]
    needs: Vec<String>,
    exit: i32,
    /// The exact output; `closed` and `full` are the special outputs above.
    #[serde(default)]
    stdout: String,
    /// The exact standard error.
    #[serde(default)]
    stderr: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Setup {
    /// Files to write, by path under `$TMP`.
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Symbolic links to make, by path under `$TMP`, to the target given (as written).
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
    /// Files of `files` made executable (mode 755), by path under `$TMP`.
    #[serde(default)]
    executable: Vec<String>,
    /// Files of `files` written in another encoding than UTF-8, by path under `$TMP`:
    /// `utf-16le` and `utf-16be` (with their byte order mark), or `latin-1` (one byte per
    /// character, U+0000 to U+00FF: bytes that are not UTF-8).
    #[serde(default)]
    encoding: BTreeMap<String, String>,
}

/// `text` in the encoding named (see [`Setup::encoding`]).
fn encode(text: &str, encoding: &str) -> Result<Vec<u8>, String> {
    match encoding {
        "utf-16le" => Ok([0xff, 0xfe]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect()),
        "utf-16be" => Ok([0xfe, 0xff]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect()),
        "latin-1" => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).map_err(|_| format!("{c:?} is not Latin-1")))
            .collect(),
        other => Err(format!("unknown encoding `{other}`")),
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn enabled(feature: &str) -> bool {
    match feature {
        "lua" => cfg!(feature = "lua"),
        "jq" => cfg!(feature = "jq"),
        other => panic!("unknown feature `{other}`"),
    }
}

fn run_case(case: &Case, tmp: &Path) -> Result<(), String> {
    let subst = |s: &str| s.replace("$TMP", &tmp.display().to_string());
    for (rel, text) in &case.setup.files {
        let p = tmp.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file in a folder"))
            .map_err(|e| e.to_string())?;
        let bytes = match case.setup.encoding.get(rel) {
            Some(encoding) => encode(text, encoding)?,
            None => text.as_bytes().to_vec(),
        };
        std::fs::write(&p, bytes).map_err(|e| e.to_string())?;
    }
    for (rel, target) in &case.setup.symlinks {
        let p = tmp.join(rel);
        std::fs::create_dir_all(p.parent().expect("a link in a folder"))
            .map_err(|e| e.to_string())?;
        std::os::unix::fs::symlink(subst(target), &p).map_err(|e| e.to_string())?;
    }
    for rel in &case.setup.executable {
        use std::os::unix::fs::PermissionsExt;
        let p = tmp.join(rel);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let mut cmd = Command::new(BIN);
    cmd.env_remove("KUBECTL_EXTERNAL_DIFF").env_remove("NO_COLOR");
    for (name, value) in &case.env {
        cmd.env(name, subst(value));
    }
    cmd.args(case.args.iter().map(|a| subst(a))).current_dir(root()).stderr(Stdio::piped());
    cmd.stdin(if case.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    match case.stdout.as_str() {
        "full" => {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
            cmd.stdout(full.map_err(|e| format!("/dev/full: {e}"))?);
        }
        _ => {
            cmd.stdout(Stdio::piped());
        }
    }
    let mut child = cmd.spawn().map_err(|e| format!("spawning {BIN}: {e}"))?;
    if case.stdout == "closed" {
        // The reader goes away before the command writes anything.
        drop(child.stdout.take());
    }
    if let Some(input) = &case.stdin {
        let mut stdin = child.stdin.take().expect("piped");
        let input = input.clone();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let want_stdout = match case.stdout.as_str() {
        "closed" | "full" => String::new(),
        s => subst(s),
    };
    let code = out.status.code().unwrap_or(-1);
    if code != case.exit || stdout != want_stdout || stderr != subst(&case.stderr) {
        return Err(format!(
            "exit {code} (want {})\n--- stdout:\n{stdout}--- want:\n{want_stdout}--- stderr:\n{stderr}--- want:\n{}",
            case.exit,
            subst(&case.stderr)
        ));
    }
    Ok(())
}

#[test]
fn cli_cases() {
    let dir = root().join("testdata/cli");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/cli")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let (mut ran, mut failures) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let cases: Vec<Case> =
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (i, case) in cases.iter().enumerate() {
            if !case.needs.iter().all(|f| enabled(f)) {
                continue;
            }
            ran += 1;
            let tmp = std::env::temp_dir().join(format!(
                "gitops-core-cli-{}-{}-{i}",
                std::process::id(),
                ran
            ));
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp).expect("temporary folder");
            if let Err(e) = run_case(case, &tmp) {
                failures.push(format!("{}: {}: {e}", file.display(), case.name));
            }
            let _ = std::fs::remove_dir_all(&tmp);
        }
    }
    assert!(ran > 0, "no case ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The README's command-line examples (a ```sh block with one `$ command`, then the ```text
/// block of its output) and its reference (```text blocks that start with
/// `$ gitops-core help`) are what the tool prints.
#[test]
fn readme_examples_and_reference() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let bin_dir = Path::new(BIN).parent().expect("the binary's folder");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |command: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(root())
            .env("PATH", &path)
            .output()
            .unwrap_or_else(|e| panic!("sh: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut rest = readme.as_str();
    while let Some(at) = rest.find("```") {
        rest = &rest[at..];
        let (command, expected, after) = if let Some(body) = rest.strip_prefix("```sh\n$ ") {
            // The command, then its output in the next text block.
            let Some((command, tail)) = body.split_once("\n```\n\n```text\n") else {
                rest = &rest[3..];
                continue;
            };
            let Some((output, after)) = tail.split_once("```\n") else { break };
            (command, output, after)
        } else if let Some(body) = rest.strip_prefix("```text\n$ gitops-core help") {
            let Some((block, after)) = body.split_once("```\n") else { break };
            let (args, output) = block.split_once('\n').unwrap_or((block, ""));
            let command = format!("gitops-core help{args}");
            failures.extend(compare(&command, &run(&command), output));
            checked += 1;
            rest = after;
            continue;
        } else {
            rest = &rest[3..];
            continue;
        };
        failures.extend(compare(command, &run(command), expected));
        checked += 1;
        rest = after;
    }
    assert!(checked >= 12, "only {checked} README blocks found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn compare(command: &str, got: &str, want: &str) -> Option<String> {
    (got != want).then(|| format!("README: `{command}` printed:\n{got}--- the README has:\n{want}"))
}
