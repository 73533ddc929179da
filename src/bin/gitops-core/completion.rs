//! `completion bash|zsh|fish`: shell completion scripts, and "did you mean" for a mistyped
//! command or flag. Both read the one table of commands ([`crate::COMMANDS`]) and the flags
//! each command's usage text names ([`flags_of`]), so a flag added to a usage text completes
//! and is suggested with no other change.

use crate::common::CliError;

pub const USAGE: &str = "\
usage: gitops-core completion bash|zsh|fish

Prints a completion script for the shell: commands and their flags. For example:
  bash: source <(gitops-core completion bash)
  zsh:  gitops-core completion zsh > \"${fpath[1]}/_gitops-core\"
  fish: gitops-core completion fish > ~/.config/fish/completions/gitops-core.fish";

/// The flags a usage text names: every `--flag` and `-x` of its synopsis (the lines up to the
/// first empty one), and the first words of its option lines (lines that start with `-`
/// indented by at most two spaces), sorted, without repeats; `--help` included.
pub fn flags_of(usage: &str) -> Vec<String> {
    let mut out = vec!["--help".to_string()];
    let mut synopsis = true;
    for line in usage.lines() {
        if line.trim().is_empty() {
            synopsis = false;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let words: Vec<&str> = if synopsis {
            line.split_whitespace().collect()
        } else if indent <= 2 && line.trim_start().starts_with('-') {
            // `-n, --namespace  the ...`: the flags before the description.
            line.split_whitespace().take_while(|w| w.starts_with('-')).collect()
        } else {
            continue;
        };
        for w in words {
            let w = w.trim_matches(|c: char| matches!(c, '[' | ']' | ',' | '.' | '|'));
            let long = w.strip_prefix("--").is_some_and(|n| {
                n.starts_with(|c: char| c.is_ascii_lowercase())
                    && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            });
            let short = w.len() == 2
                && w.starts_with('-')
                && w[1..].starts_with(|c: char| c.is_ascii_alphabetic());
            if long || short {
                out.push(w.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The closest of `candidates` to `typed`, when it is close enough (Jaro similarity above 0.7,
/// the threshold clap suggests with).
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro(typed, c), c))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The message of an argument a command does not take: lexopt's, with ` (did you mean
/// '--flag'?)` when a flag of `usage` is close to a mistyped one.
pub fn unexpected(arg: lexopt::Arg<'_>, usage: &str) -> String {
    let typed = match arg {
        lexopt::Arg::Long(name) => Some(format!("--{name}")),
        lexopt::Arg::Short(c) => Some(format!("-{c}")),
        lexopt::Arg::Value(_) => None,
    };
    let message = arg.unexpected().to_string();
    let flags = flags_of(usage);
    match typed.as_deref().and_then(|t| closest(t, flags.iter().map(String::as_str))) {
        Some(flag) => format!("{message} (did you mean '{flag}'?)"),
        None => message,
    }
}

/// The global input flags, from their help text.
fn input_flags() -> Vec<String> {
    let mut flags = flags_of(crate::INPUT_FLAGS);
    flags.retain(|f| f != "--help");
    flags
}

/// Runs `completion SHELL`.
pub fn run(mut args: lexopt::Parser) -> Result<u8, CliError> {
    use lexopt::prelude::*;
    let mut shell = None;
    while let Some(arg) = args.next()? {
        match arg {
            Long("help") | Short('h') => {
                outln!("{USAGE}");
                return Ok(0);
            }
            Value(v) if shell.is_none() => shell = Some(v.string()?),
            other => return Err(CliError::Usage(format!("{}\n{USAGE}", unexpected(other, USAGE)))),
        }
    }
    let script = match shell.as_deref() {
        Some("bash") => bash(),
        Some("zsh") => zsh(),
        Some("fish") => fish(),
        Some(other) => {
            return Err(CliError::Usage(format!(
                "completion: unknown shell `{other}`: expected bash, zsh or fish"
            )));
        }
        None => return Err(CliError::Usage(format!("missing SHELL\n{USAGE}"))),
    };
    crate::common::write_out(&script);
    Ok(0)
}

/// Every command with its flags (its usage text's and the input flags).
fn commands() -> Vec<(&'static str, &'static str, Vec<String>)> {
    let input = input_flags();
    crate::COMMANDS
        .iter()
        .map(|c| {
            let mut flags: Vec<String> = c.usage.iter().flat_map(|u| flags_of(u)).collect();
            flags.extend(input.iter().cloned());
            flags.sort();
            flags.dedup();
            (c.name, c.summary, flags)
        })
        .collect()
}

fn bash() -> String {
    let mut cases = String::new();
    for (name, _, flags) in commands() {
        cases.push_str(&format!("        {name}) flags=\"{}\" ;;\n", flags.join(" ")));
    }
    let names: Vec<&str> = crate::COMMANDS.iter().map(|c| c.name).collect();
    format!(
        "# bash completion for gitops-core: source <(gitops-core completion bash)
_gitops_core() {{
    local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" command=\"\" flags=\"\" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case \"${{COMP_WORDS[i]}}\" in
            -*) ;;
            *) command=\"${{COMP_WORDS[i]}}\"; break ;;
        esac
    done
    if [[ -z \"$command\" ]]; then
        COMPREPLY=($(compgen -W \"{commands} help --help --version\" -- \"$cur\"))
        return
    fi
    case \"$command\" in
{cases}        help) COMPREPLY=($(compgen -W \"{commands}\" -- \"$cur\")); return ;;
    esac
    if [[ \"$cur\" == -* ]]; then
        COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))
    else
        COMPREPLY=($(compgen -f -- \"$cur\"))
    fi
}}
complete -o filenames -F _gitops_core gitops-core
",
        commands = names.join(" ")
    )
}

fn zsh() -> String {
    let mut list = String::new();
    let mut cases = String::new();
    for (name, summary, flags) in commands() {
        list.push_str(&format!("        '{name}:{}'\n", summary.replace('\'', "'\\''")));
        // Any flag may be given again (`--desired` and `--live` are repeated).
        let specs: Vec<String> = flags.iter().map(|f| format!("'*{f}'")).collect();
        cases.push_str(&format!(
            "        {name}) _arguments '*:file:_files' {} ;;\n",
            specs.join(" ")
        ));
    }
    format!(
        "#compdef gitops-core
# zsh completion for gitops-core: gitops-core completion zsh > \"${{fpath[1]}}/_gitops-core\"
_gitops-core() {{
    local -a commands
    commands=(
{list}    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
        return
    fi
    case \"${{words[2]}}\" in
{cases}        help) _describe 'command' commands ;;
    esac
}}
_gitops-core \"$@\"
"
    )
}

fn fish() -> String {
    let mut out = String::from(
        "# fish completion for gitops-core: gitops-core completion fish > \
         ~/.config/fish/completions/gitops-core.fish\n",
    );
    let names: Vec<&str> = crate::COMMANDS.iter().map(|c| c.name).collect();
    let none = format!("not __fish_seen_subcommand_from {}", names.join(" "));
    for (name, summary, flags) in commands() {
        out.push_str(&format!(
            "complete -c gitops-core -n '{none}' -f -a {name} -d '{}'\n",
            summary.replace('\'', "\\'")
        ));
        for f in &flags {
            let option = match f.strip_prefix("--") {
                Some(long) => format!("-l {long}"),
                None => format!("-s {}", &f[1..]),
            };
            out.push_str(&format!(
                "complete -c gitops-core -n '__fish_seen_subcommand_from {name}' {option}\n"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{closest, flags_of};

    #[test]
    fn flags_of_a_usage_text() {
        let usage = "usage: x diff --desired PATH [--app APP.yaml | -n NAMESPACE]\n\
                     [--output text|json]\n\nPATH is read.\n--explain      who wrote it, as \
                     `kubectl --show-managed-fields`\n               --not-this one\n  --guard  \
                     the guard\n-n, --namespace  the namespace";
        assert_eq!(
            flags_of(usage),
            [
                "--app",
                "--desired",
                "--explain",
                "--guard",
                "--help",
                "--namespace",
                "--output",
                "-n"
            ]
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("dif", ["demo", "diff", "status"]), Some("diff"));
        assert_eq!(closest("--explian", ["--explain", "--app"]), Some("--explain"));
        assert_eq!(closest("zzz", ["demo", "diff"]), None);
    }

    /// The commands section of the usage names every command of the table, and each
    /// command's usage text is its own.
    #[test]
    fn the_table_is_the_commands() {
        for c in crate::COMMANDS {
            assert!(crate::usage().contains(&format!("\n  {}", c.name)), "{}", c.name);
            let usage = c.usage.concat();
            assert!(usage.starts_with(&format!("usage: gitops-core {}", c.name)), "{}", c.name);
        }
    }

    /// The bash script completes a command and a flag of it, run in bash where there is one.
    #[test]
    fn bash_completes() {
        let script = super::bash();
        let probe = "\nCOMP_WORDS=(gitops-core di); COMP_CWORD=1; _gitops_core; echo \"${COMPREPLY[*]}\"\n\
                     COMP_WORDS=(gitops-core diff --expl); COMP_CWORD=2; _gitops_core; echo \"${COMPREPLY[*]}\"\n";
        let run =
            std::process::Command::new("bash").arg("-c").arg(format!("{script}{probe}")).output();
        let Ok(out) = run else { return }; // no bash on this machine
        assert_eq!(String::from_utf8_lossy(&out.stdout), "diff\n--explain\n");
    }

    /// The fish script completes a command (with its summary) and a flag of it, run in fish
    /// where there is one; the zsh script parses (`zsh -n`) where zsh is.
    #[test]
    fn fish_completes_and_zsh_parses() {
        let probe = format!(
            "{}\ncomplete -C 'gitops-core di'\ncomplete -C 'gitops-core diff --expl'\n",
            super::fish()
        );
        if let Ok(out) = std::process::Command::new("fish").arg("-c").arg(&probe).output() {
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "diff\tcompare desired and live objects (exit 1 when they differ)\n--explain\n"
            );
        }
        if let Ok(out) =
            std::process::Command::new("zsh").arg("-n").arg("-c").arg(super::zsh()).output()
        {
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
