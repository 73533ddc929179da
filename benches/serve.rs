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

/// A small request: `configure` with an `argocd-cm` of a few keys, which the server parses
/// each time.
fn request() -> String {
    serde_json::json!({
        "id": 1,
        "method": "configure",
        "params": {
            "argocdCm": {
                "resource.customizations.ignoreDifferences.apps_Deployment":
                    "jsonPointers:\n- /spec/replicas\n",
                "resource.customizations.ignoreDifferences.all":
                    "managedFieldsManagers:\n- kube-controller-manager\n",
                "resource.compareoptions": "ignoreAggregatedRoles: true\n",
            }
        }
    })
    .to_string()
}

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

#[divan::bench]
fn warm_round_trip(bencher: Bencher) {
    let mut request = request().into_bytes();
    request.push(b'\n');
    let mut warm = Warm::start();
    bencher.bench_local(|| warm.round_trip(&request));
}

const PIPELINED: usize = 1000;

#[divan::bench(sample_count = 20)]
fn warm_pipelined(bencher: Bencher) {
    let mut batch = Vec::new();
    for _ in 0..PIPELINED {
        batch.extend_from_slice(request().as_bytes());
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

#[divan::bench(sample_count = 30, sample_size = 1)]
fn process_per_request(bencher: Bencher) {
    let mut request = request().into_bytes();
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
        assert!(out.status.success());
        out.stdout.len()
    });
}

#[divan::bench]
fn in_process(bencher: Bencher) {
    let request = request();
    let mut server = Server::new();
    bencher.bench_local(|| server.handle_line(request.as_bytes()));
}
