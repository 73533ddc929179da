//! `gitops-core`: Argo CD's diff, health and sync planning on files.
//!
//! A thin layer over the library: it reads files, calls the public API and prints the result.
#![forbid(unsafe_code)]
// The command-line tool is the host: it is the one place that reads files and the clock.
#![allow(clippy::disallowed_methods)]

#[macro_use]
mod common;
mod actions;
mod completion;
mod demo;
mod diff;
mod external;
mod folders;
mod health;
mod paint;
mod plan;
mod preview;
mod serve;
mod status;

use std::ffi::OsString;
use std::process::ExitCode;

use common::{CliError, Input};

/// The process's allocator: mimalloc, which gives freed pages back to the operating system
/// (after its purge delay, at the next allocation), so that a long-running `serve` returns near
/// its start size after its sessions are closed and after a large request; glibc's malloc keeps
/// the small blocks it freed. Measured in benches/README.md ("The allocator of the binary").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One command: its name, how the command list shows it, what it does, its usage text (the
/// flags completion and "did you mean" offer) and how it runs.
pub struct Command {
    /// The word on the command line.
    pub name: &'static str,
    /// How the command list of the usage shows it (`test-health DIR`).
    pub shown: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Its `--help` text, in parts.
    pub usage: &'static [&'static str],
    /// Runs it.
    pub run: fn(&Input, lexopt::Parser) -> Result<u8, CliError>,
}

/// Every command, in the order the usage lists them: the one table `main`, the usage,
/// completion and "did you mean" read.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "demo",
        shown: "demo",
        summary: "run the bookstore example: status table and diff",
        usage: &[demo::HELP],
        run: |_, p| demo::run(p),
    },
    Command {
        name: "diff",
        shown: "diff",
        summary: "compare desired and live objects (exit 1 when they differ)",
        usage: &[diff::HELP],
        run: diff::run,
    },
    Command {
        name: "status",
        shown: "status",
        summary: "the `argocd app get` table (sync, health, hook, message) for your files",
        usage: &[status::HELP],
        run: status::run,
    },
    Command {
        name: "health",
        shown: "health",
        summary: "assess the health of objects",
        usage: &[health::HEALTH_USAGE],
        run: health::run,
    },
    Command {
        name: "test-health",
        shown: "test-health DIR",
        summary: "run every health_test.yaml below DIR",
        usage: &[health::TEST_USAGE],
        run: health::run_tests,
    },
    Command {
        name: "actions",
        shown: "actions list|run",
        summary: "list an object's resource actions, or run one (prints the result)",
        usage: &[actions::ACTIONS_USAGE],
        run: actions::run,
    },
    Command {
        name: "test-actions",
        shown: "test-actions DIR",
        summary: "run every action_test.yaml below DIR",
        usage: &[actions::TEST_USAGE],
        run: actions::run_tests,
    },
    Command {
        name: "plan",
        shown: "plan",
        summary: "print the ordered sync tasks",
        usage: &[plan::PLAN_USAGE, plan::GUARD_USAGE],
        run: plan::run_plan,
    },
    Command {
        name: "decide",
        shown: "decide",
        summary: "decide whether an automated sync runs now",
        usage: &[plan::DECIDE_USAGE, plan::GUARD_USAGE],
        run: plan::run_decide,
    },
    Command {
        name: "preview",
        shown: "preview",
        summary: "what merging a pull request would change, prune and run",
        usage: &[preview::USAGE],
        run: preview::run,
    },
    Command {
        name: "serve",
        shown: "serve",
        summary: "answer JSON-lines requests on stdin",
        usage: &[serve::USAGE],
        run: |_, p| serve::run(p),
    },
    Command {
        name: "completion",
        shown: "completion SHELL",
        summary: "print a completion script for bash, zsh or fish",
        usage: &[completion::USAGE],
        run: |_, p| completion::run(p),
    },
];

/// The global input flags' help, at the end of the usage.
pub const INPUT_FLAGS: &str = include_str!("input-flags.txt");

/// The usage of the tool: its synopsis, the commands of [`COMMANDS`] and the input flags.
pub fn usage() -> String {
    let mut out = String::from(
        "\
usage: gitops-core <command> [options]
       gitops-core help <command>
       gitops-core --version

commands:
",
    );
    for c in COMMANDS {
        out.push_str(&format!("  {:<20} {}\n", c.shown, c.summary));
    }
    out.push_str(
        "
run `gitops-core <command> --help` for the options of a command; a PATH of `-` is standard
input (read once).

",
    );
    out.push_str(INPUT_FLAGS);
    out
}

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
        eprintln!("{}", usage());
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

fn dispatch(input: &Input, command: &str, rest: Vec<OsString>) -> Result<u8, CliError> {
    let parser = lexopt::Parser::from_args(rest);
    if let Some(c) = COMMANDS.iter().find(|c| c.name == command) {
        return (c.run)(input, parser);
    }
    match command {
        "help" | "--help" | "-h" => {
            outln!("{}", usage());
            Ok(0)
        }
        "version" | "--version" | "-V" => {
            outln!("gitops-core {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => {
            let names = COMMANDS.iter().map(|c| c.name);
            let hint = match completion::closest(other, names) {
                Some(name) => format!(" (did you mean `{name}`?)"),
                None => String::new(),
            };
            Err(CliError::Usage(format!(
                "unknown command `{other}`{hint}\nrun `gitops-core help` for the commands"
            )))
        }
    }
}
