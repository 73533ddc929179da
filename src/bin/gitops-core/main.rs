//! `gitops-core`: Argo CD's diff, health and sync planning on files.
//!
//! A thin layer over the library: it reads files, calls the public API and prints the result.
#![forbid(unsafe_code)]
// The command-line tool is the host: it is the one place that reads files and the clock.
#![allow(clippy::disallowed_methods)]

#[macro_use]
mod common;
mod actions;
mod demo;
mod diff;
mod folders;
mod health;
mod plan;
mod preview;
mod serve;
mod status;

use std::process::ExitCode;

const USAGE: &str = concat!(
    "\
usage: gitops-core <command> [options]
       gitops-core help <command>
       gitops-core --version

commands:
  demo                 run the bookstore example: status table and diff
  diff                 compare desired and live objects (exit 1 when they differ)
  status               the `argocd app get` table (sync, health, hook, message) for your files
  health               assess the health of objects
  test-health DIR      run every health_test.yaml below DIR
  actions list|run     list an object's resource actions, or run one (prints the result)
  test-actions DIR     run every action_test.yaml below DIR
  plan                 print the ordered sync tasks
  decide               decide whether an automated sync runs now
  preview              what merging a pull request would change, prune and run
  serve                answer JSON-lines requests on stdin

run `gitops-core <command> --help` for the options of a command; a PATH of `-` is standard
input (read once).

",
    include_str!("input-flags.txt")
);

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let (input, args) = match common::take_input_flags(args) {
        Ok(taken) => taken,
        Err(e) => {
            eprintln!("gitops-core: {e}");
            return ExitCode::from(2);
        }
    };
    let mut args = args.into_iter();
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest: Vec<_> = args.collect();
    let result = match command.to_string_lossy().as_ref() {
        // `help SUBCOMMAND` is `SUBCOMMAND --help`.
        "help" if !rest.is_empty() => {
            dispatch(&input, &rest[0].to_string_lossy(), vec!["--help".into()])
        }
        name => dispatch(&input, name, rest),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("gitops-core: {e}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(
    input: &common::Input,
    command: &str,
    rest: Vec<std::ffi::OsString>,
) -> Result<u8, common::CliError> {
    let parser = lexopt::Parser::from_args(rest);
    match command {
        "demo" => demo::run(parser),
        "diff" => diff::run(input, parser),
        "status" => status::run(input, parser),
        "health" => health::run(input, parser),
        "test-health" => health::run_tests(input, parser),
        "actions" => actions::run(input, parser),
        "test-actions" => actions::run_tests(input, parser),
        "plan" => plan::run_plan(input, parser),
        "decide" => plan::run_decide(input, parser),
        "preview" => preview::run(input, parser),
        "serve" => serve::run(parser),
        "help" | "--help" | "-h" => {
            outln!("{USAGE}");
            Ok(0)
        }
        "version" | "--version" | "-V" => {
            outln!("gitops-core {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => Err(common::CliError::Usage(format!("unknown command `{other}`\n{USAGE}"))),
    }
}
