//! `gitops-core serve` driven through pipes: the built binary, spawned with its standard input
//! and output connected to this test.
//!
//! This file is its own test target (`[[test]] serve_pipes` in Cargo.toml), not a module of
//! the library's tests: only test targets of that kind get the binary built for them and its
//! path in `CARGO_BIN_EXE_gitops-core`.
#![forbid(unsafe_code)]
// A test is a host: it reads testdata/ and the README.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

#[path = "transcript.rs"]
mod transcript;

const BIN: &str = env!("CARGO_BIN_EXE_gitops-core");

/// How long a test waits for one response before it fails (rather than hangs).
const PATIENCE: Duration = Duration::from_secs(30);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("serve")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {BIN}: {e}"))
}

/// Sends `input` (from a thread, so a large input cannot dead-lock against the output) and
/// collects everything until the server exits.
fn run(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = thread::spawn(move || {
        // The server may stop reading early only if it fails, which the caller checks.
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("waiting for the server");
    writer.join().expect("writer thread");
    output
}

/// A live conversation: one request written, one response read, in turn.
struct Conversation {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Conversation {
    fn start(args: &[&str]) -> Conversation {
        let mut child = spawn(args);
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Conversation { child, stdin, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(line.as_bytes()).and_then(|()| stdin.write_all(b"\n")).unwrap();
        stdin.flush().unwrap();
    }

    /// The next response; fails if none comes, which is also how a missing flush shows.
    fn receive(&mut self) -> String {
        self.lines.recv_timeout(PATIENCE).expect("a response within the time allowed")
    }

    /// Closes standard input and waits for the exit; returns the status code and stderr.
    fn finish(mut self) -> (Option<i32>, String, Vec<String>) {
        drop(self.stdin.take());
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut stderr).unwrap();
        }
        let status = self.child.wait().unwrap();
        let rest: Vec<String> = self.lines.try_iter().collect();
        (status.code(), stderr, rest)
    }
}

/// Every conversation of `testdata/serve/` gives the same responses through the binary as
/// through the library's `Server`.
#[test]
fn conversations_through_pipes() {
    let dir = root().join("testdata/serve");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for path in names {
        let script = transcript::Transcript::parse(&std::fs::read_to_string(&path).unwrap());
        let mut input = script.requests.join("\n").into_bytes();
        input.push(b'\n');
        let out = run(&[], input);
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{}", path.display());
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.is_empty() || stdout.ends_with('\n'));
        let got: Vec<String> = stdout.lines().map(str::to_string).collect();
        if let Some(diff) = script.compare(&got, env!("CARGO_PKG_VERSION")) {
            panic!("{}: {diff}", path.display());
        }
    }
}

/// Request, response, request, response: each response arrives before the next request is
/// sent (the server flushes after each), bad lines in between get their error and the
/// conversation carries on.
#[test]
fn interactive_conversation() {
    let mut c = Conversation::start(&[]);
    c.send(r#"{"id":"hello","method":"configure","params":{"protocolVersion":1}}"#);
    let hello = c.receive();
    assert!(hello.starts_with(r#"{"id":"hello","result":{"#), "{hello}");
    c.send("this is not json");
    assert_eq!(
        c.receive(),
        r#"{"id":null,"error":{"code":"parse_error","message":"parse error: expected ident at line 1 column 2","object":null,"path":null}}"#
    );
    c.send("");
    c.send(r#"{"id":2,"method":"apply"}"#);
    assert_eq!(
        c.receive(),
        r#"{"id":2,"error":{"code":"unknown_method","message":"unknown method `apply`: expected one of diff, health, plan, step, decide, configure","object":null,"path":null}}"#
    );
    c.send(r#"{"id":3,"method":"configure","params":{"limits":{"maxRequestBytes":64}}}"#);
    assert!(c.receive().contains(r#""maxRequestBytes":64"#));
    c.send(&format!(r#"{{"id":4,"method":"configure","params":{{"x":"{}"}}}}"#, "y".repeat(100)));
    assert_eq!(
        c.receive(),
        r#"{"id":null,"error":{"code":"request_too_large","message":"request too large: 147 bytes, the limit is 64","object":null,"path":null}}"#
    );
    c.send(r#"{"id":5,"method":"configure"}"#);
    assert!(c.receive().starts_with(r#"{"id":5,"result":{"#));
    let (code, stderr, rest) = c.finish();
    assert_eq!((code, stderr.as_str(), rest.len()), (Some(0), "", 0));
}

/// A line far over the limit streams past without being kept, gets one error, and the next
/// request is answered.
#[test]
fn huge_line_is_discarded() {
    let mut input = vec![b'{'; 8 << 20];
    input.extend_from_slice(b"\n{\"id\":1,\"method\":\"configure\"}\n");
    let out = run(&["--max-request-bytes", "4096"], input);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(
        lines[0],
        r#"{"id":null,"error":{"code":"request_too_large","message":"request too large: 8388608 bytes, the limit is 4096","object":null,"path":null}}"#
    );
    assert!(lines[1].contains(r#""maxRequestBytes":4096"#), "{}", lines[1]);
}

/// The end of input ends the server with status 0, after answering a last line that has no
/// newline; empty input gives no output at all.
#[test]
fn end_of_input() {
    let out = run(&[], br#"{"id":1,"method":"configure"}"#.to_vec());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with(r#"{"id":1,"result":{"#) && stdout.ends_with("}\n"), "{stdout}");
    assert_eq!(stdout.lines().count(), 1);
    let out = run(&[], Vec::new());
    assert_eq!((out.status.code(), out.stdout.len(), out.stderr.len()), (Some(0), 0, 0));
    let out = run(&[], b"\n \r\n\t\n".to_vec());
    assert_eq!((out.status.code(), out.stdout.len(), out.stderr.len()), (Some(0), 0, 0));
}

/// A client that stops reading ends the server quietly.
#[test]
fn closed_output_ends_the_server() {
    let mut child = spawn(&[]);
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    // Writes may fail once the server has gone; that is the point.
    for _ in 0..100 {
        if stdin.write_all(b"{\"id\":1,\"method\":\"configure\"}\n").is_err() {
            break;
        }
    }
    drop(stdin);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(stderr, "");
}

#[test]
fn bad_arguments() {
    for (args, message) in [
        (
            &["--max-request-bytes", "0"][..],
            "gitops-core: --max-request-bytes: expected a positive number of bytes, found `0`\n",
        ),
        (
            &["--max-request-bytes", "lots"][..],
            "gitops-core: --max-request-bytes: expected a positive number of bytes, found `lots`\n",
        ),
    ] {
        let out = run(args, Vec::new());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message);
        assert!(out.stdout.is_empty());
    }
    let out = run(&["--verbose"], Vec::new());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("gitops-core: invalid option '--verbose'")
    );
}

/// The Python client of README-serve.md runs against the binary and prints what the README
/// says it prints. Skipped, with a message, where `python3` is not installed.
#[test]
fn readme_python_client() {
    let readme = std::fs::read_to_string(root().join("README-serve.md")).unwrap();
    let code = fenced_block(&readme, "```python").expect("a python block in README-serve.md");
    let expected = fenced_block(&readme, "```text\n$ python3 client.py").expect("its output");
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped readme_python_client: python3 is not installed");
        return;
    }
    let out = Command::new("python3")
        .arg("-c")
        .arg(&code)
        .env("GITOPS_CORE", BIN)
        .output()
        .expect("running python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, expected);
}

/// The body of the first fenced block whose opening line (and what follows it, for a
/// multi-line `start`) is `start`.
fn fenced_block(text: &str, start: &str) -> Option<String> {
    let at = text.find(&format!("{start}\n"))? + start.len() + 1;
    let end = text[at..].find("```\n").or_else(|| text[at..].find("```"))?;
    Some(text[at..at + end].to_string())
}
