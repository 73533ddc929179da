//! Colour in the text diff: `--color auto|always|never` and the `NO_COLOR` convention
//! (no-color.org). ANSI codes as git colours a diff: the file headers bold, hunk headers
//! cyan, removed lines red, added lines green.

use crate::common::CliError;

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour when standard output is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour (`NO_COLOR` does not turn it off: the flag is the user's word).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Parses `auto`, `always` or `never`.
    pub fn parse(v: &str) -> Result<ColorChoice, CliError> {
        match v {
            "auto" => Ok(ColorChoice::Auto),
            "always" => Ok(ColorChoice::Always),
            "never" => Ok(ColorChoice::Never),
            other => Err(CliError::Usage(format!(
                "--color: unknown value `{other}`: expected auto, always or never"
            ))),
        }
    }

    /// Whether to colour, given whether standard output is a terminal and the value of
    /// `NO_COLOR` (colour is off when it is set and not empty).
    pub fn enabled(self, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

const BOLD: &str = "\x1b[1m";
const CYAN: &str = "\x1b[36m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

fn paint_line(out: &mut String, colour: Option<&str>, line: &str) {
    match colour {
        Some(c) => {
            out.push_str(c);
            out.push_str(line);
            out.push_str(RESET);
        }
        None => out.push_str(line),
    }
    out.push('\n');
}

/// A block of [`gitops_core::diff::ObjectText::unified`] in colour: the lines before the
/// first hunk bold, `@@` lines cyan, `-` lines red, `+` lines green.
pub fn unified(block: &str) -> String {
    let mut out = String::with_capacity(block.len() * 2);
    let mut in_hunks = false;
    for line in block.lines() {
        let colour = if line.starts_with("@@ ") {
            in_hunks = true;
            Some(CYAN)
        } else if !in_hunks {
            Some(BOLD)
        } else if line.starts_with('-') {
            Some(RED)
        } else if line.starts_with('+') {
            Some(GREEN)
        } else {
            None
        };
        paint_line(&mut out, colour, line);
    }
    out
}

/// A block of [`gitops_core::diff::ObjectText::classic`] in colour: the `=====` header bold,
/// hunk headers (`4c4`) cyan, `<` lines red, `>` lines green.
pub fn classic(block: &str) -> String {
    let mut out = String::with_capacity(block.len() * 2);
    for line in block.lines() {
        let colour = if line.starts_with("===== ") {
            Some(BOLD)
        } else if line.starts_with("< ") {
            Some(RED)
        } else if line.starts_with("> ") {
            Some(GREEN)
        } else if line == "---" {
            None
        } else {
            Some(CYAN)
        };
        paint_line(&mut out, colour, line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ColorChoice;

    #[test]
    fn choice() {
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(ColorChoice::Auto.enabled(true, empty));
        assert!(!ColorChoice::Auto.enabled(true, set));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(ColorChoice::Always.enabled(false, set));
        assert!(!ColorChoice::Never.enabled(true, None));
    }

    #[test]
    fn painted_lines() {
        assert_eq!(
            super::unified("diff -u -N a b\n--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n z\n"),
            "\x1b[1mdiff -u -N a b\x1b[0m\n\x1b[1m--- a\x1b[0m\n\x1b[1m+++ b\x1b[0m\n\
             \x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-x\x1b[0m\n\x1b[32m+y\x1b[0m\n z\n"
        );
        assert_eq!(
            super::classic("===== /K a/b ======\n1c1\n< x\n---\n> y\n"),
            "\x1b[1m===== /K a/b ======\x1b[0m\n\x1b[36m1c1\x1b[0m\n\x1b[31m< x\x1b[0m\n---\n\
             \x1b[32m> y\x1b[0m\n"
        );
    }
}
