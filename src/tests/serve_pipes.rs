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

use gitops_core_testkit::transcript;

/// Whether this build has a feature a conversation needs (`# needs: jq, lua`).
fn has_feature(feature: &str) -> bool {
    match feature {
        "jq" => cfg!(feature = "jq"),
        "lua" => cfg!(feature = "lua"),
        _ => true,
    }
}

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
    let kinds =
        serde_json::to_string(&gitops_core::health::HealthContext::builtin_kinds()).unwrap();
    for path in names {
        let script = transcript::Transcript::parse(&std::fs::read_to_string(&path).unwrap());
        if !script.runnable(has_feature) {
            continue;
        }
        let mut input = script.requests.join("\n").into_bytes();
        input.push(b'\n');
        let out = run(&[], input);
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{}", path.display());
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.is_empty() || stdout.ends_with('\n'));
        let got: Vec<String> = stdout.lines().map(str::to_string).collect();
        if let Some(diff) = script.compare(&got, env!("CARGO_PKG_VERSION"), &kinds) {
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
    c.send(r#"{"id":"hello","method":"configure","params":{"protocolVersion":2}}"#);
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

/// The Python client of README.md runs against the binary and prints what the README
/// says it prints. Skipped, with a message, where `python3` is not installed.
#[test]
fn readme_python_client() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let code = fenced_block(&readme, "```python").expect("a python block in README.md");
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

/// Runs the CLI and returns its standard output as JSON.
fn cli_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(BIN).args(args).current_dir(root()).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The objects of a manifest file, as JSON.
fn objects(rel: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    serde_json::Value::Array(gitops_core::object::parse_manifests(&text).unwrap())
}

/// The first document of a YAML file, as JSON.
fn document(rel: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    gitops_core::object::parse_documents(&text).unwrap().remove(0)
}

/// Each method's `result` is the JSON its CLI command prints with `--output json`, on the
/// demo data.
#[test]
fn results_are_what_the_cli_prints() {
    let desired = objects("testdata/demo/desired.yaml");
    let live = objects("testdata/demo/live.yaml");
    let app = document("testdata/demo/app.yaml");
    let requests = [
        (
            serde_json::json!({"desired": desired, "live": live, "app": app}),
            "diff",
            cli_json(&[
                "diff",
                "--desired",
                "testdata/demo/desired.yaml",
                "--live",
                "testdata/demo/live.yaml",
                "--app",
                "testdata/demo/app.yaml",
                "--output",
                "json",
            ]),
        ),
        (
            serde_json::json!({"objects": live}),
            "health",
            cli_json(&["health", "testdata/demo/live.yaml", "--output", "json"]),
        ),
    ];
    let mut input = String::new();
    for (i, (params, method, _)) in requests.iter().enumerate() {
        input += &serde_json::json!({"id": i, "method": method, "params": params}).to_string();
        input.push('\n');
    }
    let out = run(&[], input.into_bytes());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let responses: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(responses.len(), requests.len(), "{stdout}");
    for ((_, method, cli), response) in requests.iter().zip(&responses) {
        assert_eq!(&response["result"], cli, "{method}: {response}");
    }
}

/// A whole sync driven through `step` on one warm process, as a host drives it: apply what
/// each step asks, report each outcome by id, pass the returned state back, until done.
#[test]
fn step_drives_a_sync_to_the_end() {
    let request = serde_json::json!({
        "appNamespace": "shop",
        "targets": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api",
                "annotations": {"argocd.argoproj.io/sync-wave": "-1"}}}
        ],
        "revision": "0123456789abcdef"
    });
    let mut c = Conversation::start(&[]);
    let mut cluster: Vec<serde_json::Value> = Vec::new();
    let mut state = serde_json::Value::Null;
    let mut outcomes: Vec<serde_json::Value> = Vec::new();
    let mut now = 1_700_000_000i64;
    let mut applied = Vec::new();
    for pass in 0.. {
        assert!(pass < 50, "the sync did not finish");
        let live: Vec<_> = cluster
            .iter()
            .map(|o| serde_json::json!({"object": o, "health": {"status": "Healthy"}}))
            .collect();
        let mut params = serde_json::json!({
            "request": request,
            "observations": {"live": live, "outcomes": std::mem::take(&mut outcomes)},
            "now": gitops_core::vocabulary::Timestamp::from_unix_seconds(now).to_string(),
        });
        if !state.is_null() {
            params["state"] = state.clone();
        }
        c.send(&serde_json::json!({"id": pass, "method": "step", "params": params}).to_string());
        let response: serde_json::Value = serde_json::from_str(&c.receive()).unwrap();
        assert_eq!(response["id"], pass);
        let step = &response["result"];
        assert!(step.is_object(), "{response}");
        for action in step["actions"].as_array().unwrap() {
            let key = &action["key"];
            let name =
                format!("{}/{}", key["kind"].as_str().unwrap(), key["name"].as_str().unwrap());
            let same = |o: &serde_json::Value| {
                o["kind"] == key["kind"] && o["metadata"]["name"] == key["name"]
            };
            if action["dryRun"] == false {
                match action["kind"].as_str().unwrap() {
                    "Delete" => cluster.retain(|o| !same(o)),
                    "RemoveFinalizer" => cluster
                        .iter_mut()
                        .filter(|o| same(o))
                        .for_each(|o| o["metadata"]["finalizers"] = serde_json::json!([])),
                    kind => {
                        applied.push(format!("{kind} {name}"));
                        cluster.retain(|o| !same(o));
                        cluster.push(action["object"].clone());
                    }
                }
            }
            outcomes.push(serde_json::json!({"id": action["id"], "status": "Succeeded"}));
        }
        state = step["state"].clone();
        if step["done"] == true {
            break;
        }
        now += 2;
    }
    assert_eq!(state["phase"], "Succeeded", "{state}");
    assert_eq!(state["message"], "successfully synced (all tasks run)");
    assert_eq!(applied, ["Apply Service/api", "Apply ConfigMap/settings"]);
    let (code, stderr, _) = c.finish();
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
}

/// The blast-radius guard options of `decide` and `plan` print what
/// `testdata/sync/guard/cli/*.txt` hold (their first line is the command), `decide --output
/// json` is the `decide` result of `serve` with `guard` and `claims`, and a bad option is a
/// usage error.
#[test]
fn guard_options_of_the_cli() {
    let dir = "testdata/sync/guard/cli";
    for name in ["decide", "plan"] {
        let expected = std::fs::read_to_string(root().join(dir).join(format!("{name}.txt")))
            .unwrap_or_else(|e| panic!("{name}.txt: {e}"));
        let (command, want) = expected.split_once('\n').expect("a command line first");
        let args: Vec<&str> = command
            .strip_prefix("$ gitops-core ")
            .expect("`$ gitops-core ...`")
            .split(' ')
            .collect();
        let out = Command::new(BIN).args(&args).current_dir(root()).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{command}");
    }

    let revision = "b".repeat(40);
    let mut args = vec!["decide", "--revision", &revision, "--now", "2024-01-01T00:00:00Z"];
    let files = [
        ("--app", format!("{dir}/app.yaml")),
        ("--desired", format!("{dir}/desired.yaml")),
        ("--live", format!("{dir}/live.yaml")),
        ("--claims", format!("{dir}/claims.yaml")),
    ];
    for (flag, path) in &files {
        args.extend([*flag, path.as_str()]);
    }
    args.extend(["--max-prune", "1", "--protect-kind", "batch/CronJob", "--output", "json"]);
    let cli = cli_json(&args);
    let params = serde_json::json!({
        "app": document(&files[0].1), "desired": objects(&files[1].1),
        "live": objects(&files[2].1), "claims": objects(&files[3].1),
        "revision": revision, "now": "2024-01-01T00:00:00Z",
        "guard": {"maxPruneCount": 1, "protectedKinds": ["batch/CronJob"]},
    });
    let request = serde_json::json!({"id": 1, "method": "decide", "params": params});
    let out = run(&[], format!("{request}\n").into_bytes());
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["result"], cli);
    assert_eq!(cli["guard"]["exceeded"], serde_json::json!(["maxPruneFraction", "maxPruneCount"]));

    for (bad, message) in [
        (
            ["--max-prune-fraction", "1.5"],
            "gitops-core: --max-prune-fraction: maxPruneFraction must be a number from 0 to 1, \
             found 1.5\n",
        ),
        (
            ["--max-prune-fraction", "half"],
            "gitops-core: --max-prune-fraction: expected a number from 0 to 1 or `none`, found \
             `half`\n",
        ),
        (["--max-prune", "-1"], "gitops-core: --max-prune: expected a count, found `-1`\n"),
        (
            ["--protect-kind", "apps/v1/StatefulSet"],
            "gitops-core: --protect-kind: protected kind `apps/v1/StatefulSet` is not \
             `group/Kind` (`Kind` for the core group; each a name or a glob)\n",
        ),
    ] {
        let out = Command::new(BIN)
            .args(["decide", "--app", &files[0].1, "--revision", "r"])
            .args(bad)
            .current_dir(root())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message, "{bad:?}");
    }
}
