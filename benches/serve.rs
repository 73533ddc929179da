//! `gitops-core serve`: small requests over a pipe, against one process per request.
//!
//! - `warm_round_trip`: one request written and its response read, on a warm `serve`
//!   process; the time per request of a client that waits for each answer.
//! - `warm_pipelined`: 1,000 requests written while their responses are read, on a warm
//!   process; divan reports requests per second.
//! - `process_per_request`: a new `gitops-core serve` for each request (spawn, one request,
//!   end of input, exit): what a host that spawns the CLI per call pays.
//! - `in_process`: the same request through `protocol::Server` without a pipe, the floor.
//!
//! The speed-up of a warm `serve` is `process_per_request / warm_round_trip`.
//!
//! Run with `cargo bench --bench serve`.
#![allow(clippy::disallowed_methods)] // a benchmark is a host: it spawns processes

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use divan::Bencher;
use divan::counter::ItemsCount;
use gitops_core::protocol::Server;

const BIN: &str = env!("CARGO_BIN_EXE_gitops-core");

fn main() {
    divan::main();
}

/// A small request of each kind:
/// - `configure`: an `argocd-cm` of a few keys, which the server parses each time;
/// - `diff`: the demo application of `testdata/demo/` (4 desired and 4 live objects: a
///   Deployment scaled by hand, an env var added with `kubectl set env`, a Service removed
///   from Git), about 4 KB of JSON.
fn request(method: &str) -> String {
    let params = match method {
        "configure" => serde_json::json!({
            "argocdCm": {
                "resource.customizations.ignoreDifferences.apps_Deployment":
                    "jsonPointers:\n- /spec/replicas\n",
                "resource.customizations.ignoreDifferences.all":
                    "managedFieldsManagers:\n- kube-controller-manager\n",
                "resource.compareoptions": "ignoreAggregatedRoles: true\n",
            }
        }),
        "diff" => {
            let read = |name: &str| {
                let path = format!("{}/testdata/demo/{name}", env!("CARGO_MANIFEST_DIR"));
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
            };
            let desired =
                gitops_core::object::parse_manifests(&read("desired.yaml")).expect("demo");
            let live = gitops_core::object::parse_manifests(&read("live.yaml")).expect("demo");
            let app = gitops_core::object::parse_documents(&read("app.yaml")).expect("demo");
            serde_json::json!({"desired": desired, "live": live, "app": app[0]})
        }
        other => panic!("no request for {other}"),
    };
    serde_json::json!({"id": 1, "method": method, "params": params}).to_string()
}

const METHODS: [&str; 2] = ["configure", "diff"];

struct Warm {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Warm {
    fn start() -> Warm {
        let mut child = Command::new(BIN)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawning gitops-core serve");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Warm { child, stdin: Some(stdin), stdout, line: String::new() }
    }

    fn stdin(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().expect("open until drop")
    }

    fn round_trip(&mut self, request: &[u8]) -> usize {
        let stdin = self.stdin();
        stdin.write_all(request).expect("writing a request");
        stdin.flush().expect("flushing");
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("reading a response")
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        // Closing standard input ends the server.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

#[divan::bench(args = METHODS)]
fn warm_round_trip(bencher: Bencher, method: &str) {
    let mut request = request(method).into_bytes();
    request.push(b'\n');
    let mut warm = Warm::start();
    warm.round_trip(&request);
    assert!(warm.line.starts_with(r#"{"id":1,"result":"#), "{}", warm.line);
    bencher.bench_local(|| warm.round_trip(&request));
}

const PIPELINED: usize = 1000;

#[divan::bench(args = METHODS, sample_count = 20)]
fn warm_pipelined(bencher: Bencher, method: &str) {
    let request = request(method);
    let mut batch = Vec::new();
    for _ in 0..PIPELINED {
        batch.extend_from_slice(request.as_bytes());
        batch.push(b'\n');
    }
    let mut warm = Warm::start();
    bencher.counter(ItemsCount::new(PIPELINED)).bench_local(|| {
        std::thread::scope(|s| {
            let stdin = warm.stdin.as_mut().expect("open until drop");
            let batch = &batch;
            s.spawn(move || {
                stdin.write_all(batch).expect("writing requests");
                stdin.flush().expect("flushing");
            });
            let mut bytes = 0;
            for _ in 0..PIPELINED {
                warm.line.clear();
                bytes += warm.stdout.read_line(&mut warm.line).expect("reading a response");
            }
            bytes
        })
    });
}

#[divan::bench(args = METHODS, sample_count = 30, sample_size = 1)]
fn process_per_request(bencher: Bencher, method: &str) {
    let mut request = request(method).into_bytes();
    request.push(b'\n');
    bencher.bench_local(|| {
        let mut child = Command::new(BIN)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawning gitops-core serve");
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(&request).expect("writing the request");
        drop(stdin);
        let out = child.wait_with_output().expect("waiting for the server");
        assert!(out.status.success() && out.stdout.starts_with(br#"{"id":1,"result":"#));
        out.stdout.len()
    });
}

#[divan::bench(args = METHODS)]
fn in_process(bencher: Bencher, method: &str) {
    let request = request(method);
    let mut server = Server::new();
    let first = server.handle_line(request.as_bytes()).unwrap_or_default();
    assert!(first.starts_with(r#"{"id":1,"result":"#), "{first}");
    bencher.bench_local(|| server.handle_line(request.as_bytes()));
}
