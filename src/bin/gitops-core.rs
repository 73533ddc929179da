//! `gitops-core`: Argo CD's diff, health and sync planning on files.
//!
//! A thin layer over the library: it reads files, calls the public API and prints the result.
#![forbid(unsafe_code)]
// The command-line tool is the host: it is the one place that reads files and the clock.
#![allow(clippy::disallowed_methods)]

#[path = "cli/common.rs"]
mod common;
#[path = "cli/demo.rs"]
mod demo;
#[path = "cli/diff.rs"]
mod diff;
#[path = "cli/health.rs"]
mod health;
#[path = "cli/plan.rs"]
mod plan;
#[path = "cli/serve.rs"]
mod serve;

use std::process::ExitCode;

const USAGE: &str = "\
usage: gitops-core <command> [options]

commands:
  demo                 run the bookstore example: status table and diff
  diff                 compare desired and live objects (exit 1 when they differ)
  health               assess the health of objects
  test-health DIR      run every health_test.yaml below DIR
  plan                 print the ordered sync tasks
  decide               decide whether an automated sync runs now
  serve                answer JSON-lines requests on stdin

run `gitops-core <command> --help` for the options of a command";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest: Vec<_> = args.collect();
    let parser = lexopt::Parser::from_args(rest);
    let result = match command.to_string_lossy().as_ref() {
        "demo" => demo::run(parser),
        "diff" => diff::run(parser),
        "health" => health::run(parser),
        "test-health" => health::run_tests(parser),
        "plan" => plan::run_plan(parser),
        "decide" => plan::run_decide(parser),
        "serve" => serve::run(parser),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(0)
        }
        other => Err(common::CliError::Usage(format!("unknown command `{other}`\n{USAGE}"))),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("gitops-core: {e}");
            ExitCode::from(2)
        }
    }
}
