//! Kubernetes label selectors in their string form (`tier=web,env in (a,b),!canary`), read,
//! refused and matched as k8s.io/apimachinery v0.37.0 `labels.Parse` and `Requirement.Matches`
//! do: what argocd-cm's `resource.selectors` holds.
//!
//! The grammar: requirements separated by `,`; each is `key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`.
//! Keys are qualified names (`prefix/name`), values label values (63 bytes at most,
//! alphanumeric at both ends, `-`, `_` and `.` inside), `>`/`<` take an integer; a value set
//! may hold empty values (`()`, `(a,)`). A selector that does not parse is refused with
//! `labels.Parse`'s own message (`unable to parse requirement: values[0][tier]: Invalid value:
//! ...`), compared with apimachinery's in `testdata/selector/cases.json`.

use serde_json::Value;

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Greater(i64),
    Less(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A token of apimachinery's selector lexer; `in` and `notin` are keywords only where an
/// operator is read, identifiers elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    Ident,
    In,
    NotIn,
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Greater,
    Less,
    Open,
    Close,
    Comma,
}

/// The lexer's whitespace: other Unicode spaces are part of an identifier.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    b"=!(),><".contains(&b)
}

fn symbol(s: &str) -> Option<Tok> {
    Some(match s {
        "!" => Tok::Not,
        "=" => Tok::Eq,
        "==" => Tok::DoubleEq,
        "!=" => Tok::NotEq,
        ">" => Tok::Greater,
        "<" => Tok::Less,
        "(" => Tok::Open,
        ")" => Tok::Close,
        "," => Tok::Comma,
        _ => return None,
    })
}

/// Splits a selector into tokens and their text, as apimachinery's lexer does: byte by byte,
/// a NUL byte read like the end of the input (it ends an identifier; where a token starts it
/// ends the selector), and operators read longest first (`!=`, `==`).
fn lex(s: &str) -> Vec<(Tok, &str)> {
    let bytes = s.as_bytes();
    // The byte at `i` and the position after reading it; NUL past the end.
    let read = |i: usize| if i < bytes.len() { (bytes[i], i + 1) } else { (0, i) };
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let (mut b, mut next) = read(pos);
        while is_space(b) {
            (b, next) = read(next);
        }
        if b == 0 {
            out.push((Tok::End, ""));
            return out;
        }
        let start = next - 1;
        if is_special(b) {
            // The longest run of operator bytes that is one token.
            let (mut tok, mut end) = (symbol(&s[start..next]), next);
            pos = next;
            loop {
                let (b, after) = read(pos);
                if b == 0 {
                    pos = after;
                    break;
                }
                if !is_special(b) {
                    break;
                }
                match symbol(&s[start..after]) {
                    Some(t) => (tok, end, pos) = (Some(t), after, after),
                    None => break,
                }
            }
            // Every single operator byte is a token, so `tok` is set.
            let tok = tok.unwrap_or(Tok::End);
            out.push((tok, &s[start..end]));
        } else {
            pos = start;
            let mut end = start;
            loop {
                let (b, after) = read(pos);
                if b == 0 {
                    pos = after;
                    break;
                }
                if is_special(b) || is_space(b) {
                    break;
                }
                (end, pos) = (after, after);
            }
            let text = &s[start..end];
            let tok = match text {
                "in" => Tok::In,
                "notin" => Tok::NotIn,
                _ => Tok::Ident,
            };
            out.push((tok, text));
        }
    }
}

/// `name part must consist of ...`: the texts of apimachinery's `RegexError`.
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!("{msg} (e.g. {}regex used for validation is '{re}')", examples.join(" or "))
}

const NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn name_error() -> String {
    regex_error(NAME_MSG, NAME_FMT, &["MyName", "my.name", "123-abc"])
}

/// Matches `NAME_FMT`: alphanumeric at both ends, `-`, `_` and `.` inside (any length).
fn is_name(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(ok) && s.ends_with(ok) && s.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'))
}

/// Matches `SUBDOMAIN_FMT`: lower-case alphanumeric labels with `-` inside, joined by `.`.
fn is_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        l.starts_with(ok) && l.ends_with(ok) && l.chars().all(|c| ok(c) || c == '-')
    };
    s.split('.').all(label)
}

/// apimachinery's `IsLabelKey`: the texts that refuse a key, none when it is valid.
fn key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !is_subdomain(prefix) {
                    let msg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(msg, SUBDOMAIN_FMT, &["example.com"])
                    ));
                }
            }
            name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_error()
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_name(name) {
        errs.push(format!("name part {}", name_error()));
    }
    errs
}

/// apimachinery's `IsLabelValue`: the texts that refuse a value, none when it is valid.
fn value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_name(value) {
        let fmt = format!("({NAME_FMT})?");
        errs.push(regex_error(VALUE_MSG, &fmt, &["MyValue", "my_value", "12345"]));
    }
    errs
}

/// A field error as apimachinery prints one: `<field>: Invalid value: "<value>": <detail>`.
fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!("{field}: Invalid value: {}: {detail}", crate::vocabulary::go_quote(value))
}

impl LabelSelector {
    /// Parses a selector; an empty one selects everything. The error is `labels.Parse`'s text.
    pub(crate) fn parse(s: &str) -> Result<LabelSelector, String> {
        let tokens = lex(s);
        let mut p = Parser { tokens: &tokens, pos: 0 };
        let mut requirements = Vec::new();
        loop {
            let (tok, text) = p.peek();
            match tok {
                Tok::Ident | Tok::Not => {
                    let r =
                        p.requirement().map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (tok, text) = p.next();
                    match tok {
                        Tok::End => break,
                        Tok::Comma => {
                            let (tok, text) = p.peek();
                            if !matches!(tok, Tok::Ident | Tok::Not) {
                                return Err(format!(
                                    "found '{text}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!(
                                "found '{text}', expected: ',' or 'end of string'"
                            ));
                        }
                    }
                }
                Tok::End => break,
                _ => {
                    return Err(format!(
                        "found '{text}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
        Ok(LabelSelector { requirements })
    }
    /// Whether an object's `metadata.labels` satisfy every requirement.
    #[cfg(test)]
    fn matches(&self, obj: &Value) -> bool {
        let none = serde_json::Map::new();
        self.matches_labels(
            obj.pointer("/metadata/labels").and_then(Value::as_object).unwrap_or(&none),
        )
    }

    /// Whether a label map satisfies every requirement.
    pub(crate) fn matches_labels(&self, labels: &serde_json::Map<String, Value>) -> bool {
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        self.requirements.iter().all(|r| {
            let v = label(&r.key);
            match &r.op {
                Op::In => v.is_some_and(|v| r.values.iter().any(|x| x == v)),
                Op::NotIn => v.is_none_or(|v| !r.values.iter().any(|x| x == v)),
                Op::Exists => v.is_some(),
                Op::DoesNotExist => v.is_none(),
                Op::Greater(n) => v.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v > *n),
                Op::Less(n) => v.and_then(|v| v.parse::<i64>().ok()).is_some_and(|v| v < *n),
            }
        })
    }
}

struct Parser<'t, 's> {
    tokens: &'t [(Tok, &'s str)],
    pos: usize,
}

impl<'s> Parser<'_, 's> {
    /// The next token, where `in` and `notin` are identifiers (values and keys).
    fn peek(&self) -> (Tok, &'s str) {
        let (tok, text) = self.peek_keyword();
        match tok {
            Tok::In | Tok::NotIn => (Tok::Ident, text),
            t => (t, text),
        }
    }

    /// The next token, with `in` and `notin` as operators.
    fn peek_keyword(&self) -> (Tok, &'s str) {
        // The lexer ends with `End`; the parser stops there, never reading past it.
        self.tokens.get(self.pos).copied().unwrap_or((Tok::End, ""))
    }

    fn next(&mut self) -> (Tok, &'s str) {
        let t = self.peek();
        self.pos += 1;
        t
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut tok, mut key) = self.next();
        let negated = tok == Tok::Not;
        if negated {
            (tok, key) = self.next();
        }
        if tok != Tok::Ident {
            return Err(format!("found '{key}', expected: identifier"));
        }
        let errs = key_errors(key);
        if !errs.is_empty() {
            return Err(invalid("<nil>", key, &errs.join("; ")));
        }
        let key = key.to_string();
        // `!key` ends its requirement whatever follows (`!a=b` fails on the `=` after it).
        if negated {
            return Ok(Requirement { key, op: Op::DoesNotExist, values: Vec::new() });
        }
        if matches!(self.peek().0, Tok::End | Tok::Comma) {
            return Ok(Requirement { key, op: Op::Exists, values: Vec::new() });
        }
        let (tok, text) = self.peek_keyword();
        self.pos += 1;
        let values = match tok {
            Tok::In | Tok::NotIn => self.value_set()?,
            Tok::Eq | Tok::DoubleEq | Tok::NotEq | Tok::Greater | Tok::Less => {
                vec![self.exact_value()?]
            }
            _ => {
                return Err(format!("found '{text}', expected: in, notin, =, ==, !=, gt, lt"));
            }
        };
        // The set's values sorted and without repeats, as apimachinery keeps them.
        let values: Vec<String> =
            values.into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        let mut errs = Vec::new();
        let mut bound = 0;
        if matches!(tok, Tok::Greater | Tok::Less) {
            // One value: `exact_value` reads one.
            match values[0].parse::<i64>() {
                Ok(n) => bound = n,
                Err(_) => errs.push(invalid(
                    "values[0]",
                    &values[0],
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                )),
            }
        }
        for (i, v) in values.iter().enumerate() {
            let e = value_errors(v);
            if !e.is_empty() {
                errs.push(invalid(&format!("values[{i}][{key}]"), v, &e.join("; ")));
            }
        }
        // An aggregate names each distinct message once.
        let mut seen = std::collections::BTreeSet::new();
        errs.retain(|e| seen.insert(e.clone()));
        match errs.len() {
            0 => {}
            1 => return Err(errs.remove(0)),
            _ => return Err(format!("[{}]", errs.join(", "))),
        }
        let op = match tok {
            Tok::In | Tok::Eq | Tok::DoubleEq => Op::In,
            Tok::NotIn | Tok::NotEq => Op::NotIn,
            Tok::Greater => Op::Greater(bound),
            _ => Op::Less(bound),
        };
        Ok(Requirement { key, op, values })
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`: empty before `,` or the end.
    fn exact_value(&mut self) -> Result<String, String> {
        match self.peek() {
            (Tok::End | Tok::Comma, _) => Ok(String::new()),
            (Tok::Ident, v) => {
                self.pos += 1;
                Ok(v.to_string())
            }
            (_, text) => Err(format!("found '{text}', expected: identifier")),
        }
    }

    /// `(v1, v2, ...)`, as apimachinery's `parseValues` reads it: `()` is the empty value, and
    /// an empty entry (`(,a)`, `(a,,b)`, `(a,)`) is one too.
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let (tok, text) = self.next();
        if tok != Tok::Open {
            return Err(format!("found '{text}' expected: '('"));
        }
        let (tok, text) = self.peek();
        match tok {
            Tok::Close => {
                self.pos += 1;
                return Ok(vec![String::new()]);
            }
            Tok::Ident | Tok::Comma => {}
            _ => return Err(format!("found '{text}', expected: ',', ')' or identifier")),
        }
        let values = self.identifiers()?;
        if self.next().0 != Tok::Close {
            // apimachinery names the token that opened the list here.
            return Err(format!("found '{text}', expected: ')'"));
        }
        Ok(values)
    }

    /// The comma-separated, possibly empty, entries of a value set, up to its `)`.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values = Vec::new();
        loop {
            let (tok, text) = self.next();
            match tok {
                Tok::Ident => {
                    values.push(text.to_string());
                    match self.peek() {
                        (Tok::Comma, _) => {}
                        (Tok::Close, _) => return Ok(values),
                        (_, t) => return Err(format!("found '{t}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.peek().0 {
                        Tok::Close => {
                            values.push(String::new());
                            return Ok(values);
                        }
                        Tok::Comma => values.push(String::new()),
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{text}', expected: ',', or identifier")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap()
    }

    #[test]
    fn selectors_match_as_apimachinery_does() {
        let web = json!({"metadata": {"labels": {"tier": "web", "n": "5"}}});
        let bare = json!({"metadata": {}});
        assert!(sel("").matches(&bare));
        assert!(sel("tier=web").matches(&web) && sel("tier==web").matches(&web));
        assert!(!sel("tier!=web").matches(&web) && sel("tier!=web").matches(&bare));
        assert!(sel("tier in (db, web)").matches(&web) && !sel("tier in (db)").matches(&bare));
        assert!(sel("tier notin (db)").matches(&bare));
        assert!(sel("!canary, tier").matches(&web) && !sel("!tier").matches(&web));
        assert!(
            sel("n>4").matches(&web) && !sel("n<5").matches(&web) && !sel("n>1").matches(&bare)
        );
        assert!(
            sel("example.com/team=")
                .matches(&json!({"metadata": {"labels": {"example.com/team": ""}}}))
        );
    }

    #[test]
    fn bad_selectors_are_refused() {
        for bad in ["!a=b", "a b", "a>b", "-a", "a=-b", ",", "a in (b", "A/b", "a in (b c)"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        // What apimachinery's labels.Parse accepts: an empty exact value, `()` and empty
        // entries of a value set (each the empty value).
        let empty = json!({"metadata": {"labels": {"x": ""}}});
        for (ok, matches_empty) in [
            ("tier=", false),
            ("x in ()", true),
            ("x in (,a)", true),
            ("x in (a,,b)", true),
            ("x in (a,)", true),
            ("x in (a)", false),
            ("x notin ()", false),
        ] {
            assert_eq!(sel(ok).matches(&empty), matches_empty, "{ok}");
        }
        // The exact texts: `testdata/selector/cases.json` (`tests::selector`).
        assert_eq!(
            LabelSelector::parse("!a=b").unwrap_err(),
            "found '=', expected: ',' or 'end of string'"
        );
    }
}
