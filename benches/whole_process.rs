//! The whole-process measurement of `gitops-core diff --output json` on a generated
//! application, and its yardstick: a program that only parses the same files into
//! `serde_json::Value` and serialises them again.
//!
//! `bash benches/whole-process.sh [N]` drives it (see benches/README.md):
//!
//! - `whole_process generate N DIR` writes `DIR/desired.json` and `DIR/live.json` (JSON
//!   `List`s of the N-resource application of `support/workload.rs`: fixture copies, one in
//!   ten drifted) and `DIR/app.json` (its Application, three ignore rules).
//! - `whole_process yardstick FILE...` parses each file and writes it back to standard output.
//!
//! Without arguments (as `cargo bench` runs it) it prints this usage and exits.
#![allow(missing_docs)]
#![allow(clippy::disallowed_methods)] // it writes and reads the files it is given

use std::io::Write;

use serde_json::{Value, json};

use gitops_core_testkit::workload as support;

/// The yardstick allocates as the `gitops-core` binary does (mimalloc, with the `cli` feature
/// that builds the binary), so that the ratio measures the work and not the allocator.
#[cfg(feature = "cli")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("generate") if args.len() == 3 => {
            let n: usize = args[1].parse().expect("N is a whole number");
            generate(n, std::path::Path::new(&args[2]));
        }
        Some("yardstick") => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            for file in &args[1..] {
                let text = std::fs::read_to_string(file).expect("readable");
                let v: Value = serde_json::from_str(&text).expect("JSON");
                serde_json::to_writer(&mut out, &v).expect("written");
                out.write_all(b"\n").expect("written");
            }
            out.flush().expect("written");
        }
        _ => println!("usage: whole_process generate N DIR | whole_process yardstick FILE..."),
    }
}

fn generate(n: usize, dir: &std::path::Path) {
    let w = support::workload_of(n);
    std::fs::create_dir_all(dir).expect("directory");
    let list = |items: &[Value]| json!({"apiVersion": "v1", "kind": "List", "items": items});
    let write = |name: &str, v: &Value| {
        std::fs::write(dir.join(name), serde_json::to_string(v).expect("JSON")).expect("written");
    };
    write("desired.json", &list(&w.desired));
    write("live.json", &list(&w.live));
    write("app.json", &support::app_document());
}
