//! YAML text of a value that Kubernetes' reader reads back as the same value.
//!
//! serde_norway writes YAML 1.2: it quotes a string that its own reading would take for a
//! number, a boolean or a null (`'true'`, `'0644'`, `'~'`), but writes `yes`, `on`, `n` and
//! `1_000` plain. Argo CD, kubectl and Helm read YAML 1.1 (go-yaml v2), where those are a
//! boolean and an integer, so a string written that way would come back as another type. Here
//! every string that go-yaml v2 would resolve to something else (`resolve.rs`, the reader's own
//! rules) is written single-quoted, as serde_norway quotes the ones it knows.
//!
//! serde_norway has no setting for a scalar's style, so such a string is handed to it behind a
//! marker character that makes it plain text, and the marker is then turned into the quotes.
//! The strings concerned are short words and numbers (letters, digits, `_ . + -`), so the
//! marked text ends where the plain scalar does; a value whose text already holds the marker
//! is written by serde_norway as it is, with nothing marked.

use serde::Serialize;
use serde_norway::Value as Yaml;

use super::resolve::{Scalar, resolve};

/// Stands before a string that must be quoted (a private-use character: printable, so written
/// plain, and never produced by this crate).
const MARK: char = '\u{E000}';

/// A value serde could not write as YAML (a map whose keys are not text, a `Serialize` that
/// fails).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write YAML: {0}")]
pub struct WriteError(String);

/// The YAML text of `value` (block style, in the value's own key order), with every string
/// that YAML 1.1 would read as another type (`yes`, `on`, `n`, `1_000`, `0b101`) quoted, so
/// that kubectl, Helm and Argo CD read the text back as `value`.
///
/// ```
/// use serde_json::json;
/// let text = gitops_core::object::to_yaml(&json!({"data": {"enabled": "yes", "mode": 420}})).unwrap();
/// assert_eq!(text, "data:\n  enabled: 'yes'\n  mode: 420\n");
/// ```
///
/// # Errors
///
/// [`WriteError`] when serde cannot write the value as YAML.
pub fn to_yaml<T: Serialize + ?Sized>(value: &T) -> Result<String, WriteError> {
    let fail = |e: serde_norway::Error| WriteError(e.to_string());
    let mut yaml = serde_norway::to_value(value).map_err(fail)?;
    if holds_mark(&yaml) {
        return serde_norway::to_string(&yaml).map_err(fail);
    }
    let marked = mark(&mut yaml);
    let text = serde_norway::to_string(&yaml).map_err(fail)?;
    Ok(if marked { unmark(&text) } else { text })
}

/// Whether a string is read back as a string when written plain: go-yaml v2 resolves it to a
/// string. Strings of other characters are left to serde_norway (those it writes plain are
/// not numbers, booleans or nulls in YAML 1.1 either).
fn needs_quotes(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(word_char)
        && !matches!(resolve(s, None, true), Ok(Scalar::Str(_)))
}

/// The characters of the strings this module quotes: they need no escaping in single quotes,
/// and a run of them ends where the plain scalar serde_norway wrote does.
fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-' | '~')
}

fn holds_mark(v: &Yaml) -> bool {
    match v {
        Yaml::String(s) => s.contains(MARK),
        Yaml::Sequence(l) => l.iter().any(holds_mark),
        Yaml::Mapping(m) => m.iter().any(|(k, v)| holds_mark(k) || holds_mark(v)),
        Yaml::Tagged(t) => holds_mark(&t.value),
        Yaml::Null | Yaml::Bool(_) | Yaml::Number(_) => false,
    }
}

/// Puts the marker before every string that needs quotes; whether there was one.
fn mark(v: &mut Yaml) -> bool {
    match v {
        Yaml::String(s) if needs_quotes(s) => {
            s.insert(0, MARK);
            true
        }
        Yaml::Sequence(l) => l.iter_mut().fold(false, |any, x| mark(x) | any),
        Yaml::Mapping(m) => {
            let mut any = false;
            let old = std::mem::take(m);
            for (mut k, mut x) in old {
                any |= mark(&mut k);
                any |= mark(&mut x);
                m.insert(k, x);
            }
            any
        }
        Yaml::Tagged(t) => mark(&mut t.value),
        _ => false,
    }
}

/// Turns each marked plain string into a single-quoted one (its characters need no escaping
/// there).
fn unmark(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != MARK {
            out.push(c);
            continue;
        }
        out.push('\'');
        while let Some(&n) = chars.peek() {
            if word_char(n) {
                out.push(n);
                chars.next();
            } else {
                break;
            }
        }
        out.push('\'');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::object::parse_documents;

    /// Strings YAML 1.1 reads as other types, and ones it reads as strings.
    const STRINGS: &[&str] = &[
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "on",
        "On",
        "ON",
        "off",
        "y",
        "Y",
        "n",
        "N",
        "true",
        "False",
        "null",
        "Null",
        "~",
        "1_000",
        "0644",
        "-0644",
        "0b101",
        "0x1F",
        "0o17",
        "+1",
        "1e3",
        "1.5",
        ".5",
        ".inf",
        "-.Inf",
        ".nan",
        "08",
        "2001-12-14",
        "190:20:30",
        "yES",
        "oN",
        "hello",
        "api",
        "",
        "a b",
        "it's",
        "1.2.3",
        "v1",
        "-",
        "--",
        "0x",
        "1_0.5",
    ];

    /// Every string, as a value and as a key, reads back as itself.
    #[test]
    fn strings_read_back_as_strings() {
        for s in STRINGS {
            let value = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": s, *s: "v"}});
            let text = to_yaml(&value).unwrap();
            let back = parse_documents(&text).unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
            assert_eq!(back, vec![value.clone()], "{s:?} written as:\n{text}");
        }
    }

    #[test]
    fn quoted_as_serde_norway_quotes() {
        let text =
            to_yaml(&json!({"a": "yes", "b": "0644", "c": "1_000", "on": ["n", 1]})).unwrap();
        assert_eq!(text, "a: 'yes'\nb: '0644'\nc: '1_000'\n'on':\n- 'n'\n- 1\n");
    }

    /// A text that already holds the marker is written by serde_norway alone.
    #[test]
    fn a_marker_in_the_input_marks_nothing() {
        let v: Value = json!({"a": "\u{E000}x", "b": "yes"});
        assert_eq!(to_yaml(&v).unwrap(), serde_norway::to_string(&v).unwrap());
    }
}
