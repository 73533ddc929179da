//! Kubernetes label selectors in their string form (`tier=web,env in (a,b),!canary`), read and
//! matched as k8s.io/apimachinery `labels.Parse` and `Requirement.Matches` do: what argocd-cm's
//! `resource.selectors` holds.
//!
//! The grammar: requirements separated by `,`; each is `key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`.
//! Keys are qualified names (`prefix/name`), values label values (63 characters at most,
//! alphanumeric at both ends, `-`, `_` and `.` inside), `>`/`<` take an integer; a value set
//! may hold empty values (`()`, `(a,)`). What parses and how it matches are apimachinery's; the
//! errors are this crate's words, not apimachinery's (listed in `docs/behaviours.md`, row 22).

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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    NotEq,
    Open,
    Close,
    Comma,
    Greater,
    Less,
}

fn lex(s: &str) -> Vec<Token> {
    let special = |c: char| "!=(),<>".contains(c);
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        i += 1;
        let t = match c {
            c if c.is_whitespace() => continue,
            '!' if next == Some('=') => {
                i += 1;
                Token::NotEq
            }
            '=' if next == Some('=') => {
                i += 1;
                Token::Eq
            }
            '!' => Token::Not,
            '=' => Token::Eq,
            '(' => Token::Open,
            ')' => Token::Close,
            ',' => Token::Comma,
            '>' => Token::Greater,
            '<' => Token::Less,
            _ => {
                let start = i - 1;
                while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
                    i += 1;
                }
                Token::Ident(chars[start..i].iter().collect())
            }
        };
        out.push(t);
    }
    out
}

/// A label name or value: 63 characters at most, alphanumeric at both ends, `-`, `_`, `.`
/// inside.
fn is_name(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric();
    s.len() <= 63
        && s.starts_with(ok)
        && s.ends_with(ok)
        && s.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'))
}

/// A DNS-1123 subdomain: lower-case alphanumeric labels with `-` inside, joined by `.`.
fn is_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        l.starts_with(ok) && l.ends_with(ok) && l.chars().all(|c| ok(c) || c == '-')
    };
    s.len() <= 253 && s.split('.').all(label)
}

fn check_key(key: &str) -> Result<(), String> {
    let valid = match key.split_once('/') {
        Some((prefix, name)) => is_subdomain(prefix) && is_name(name),
        None => is_name(key),
    };
    if valid { Ok(()) } else { Err(format!("invalid label key `{key}`")) }
}

fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() || is_name(value) {
        Ok(())
    } else {
        Err(format!("invalid label value `{value}`"))
    }
}

impl LabelSelector {
    /// Parses a selector; an empty one selects everything.
    pub(crate) fn parse(s: &str) -> Result<LabelSelector, String> {
        let tokens = lex(s);
        let mut p = Parser { tokens: &tokens, pos: 0 };
        let mut requirements = Vec::new();
        if tokens.is_empty() {
            return Ok(LabelSelector { requirements });
        }
        loop {
            requirements.push(p.requirement()?);
            match p.next() {
                None => return Ok(LabelSelector { requirements }),
                Some(Token::Comma) => {}
                Some(t) => return Err(format!("found {t:?}, expected `,` or the end")),
            }
        }
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

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
}

impl Parser<'_> {
    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.pos);
        self.pos += 1;
        t
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn ident(&mut self, what: &str) -> Result<String, String> {
        match self.next() {
            Some(Token::Ident(s)) => Ok(s.clone()),
            Some(t) => Err(format!("found {t:?}, expected {what}")),
            None => Err(format!("found the end, expected {what}")),
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let negated = self.peek() == Some(&Token::Not);
        if negated {
            self.pos += 1;
        }
        let key = self.ident("a label key")?;
        check_key(&key)?;
        if matches!(self.peek(), None | Some(Token::Comma)) {
            let op = if negated { Op::DoesNotExist } else { Op::Exists };
            return Ok(Requirement { key, op, values: Vec::new() });
        }
        if negated {
            return Err(format!("`!{key}` takes no operator"));
        }
        let (op, values) = match self.next().cloned() {
            Some(Token::Ident(w)) if w == "in" || w == "notin" => {
                let op = if w == "in" { Op::In } else { Op::NotIn };
                (op, self.value_set()?)
            }
            Some(Token::Eq) => (Op::In, vec![self.exact_value()?]),
            Some(Token::NotEq) => (Op::NotIn, vec![self.exact_value()?]),
            Some(t @ (Token::Greater | Token::Less)) => {
                let v = self.ident("an integer")?;
                let n = v.parse::<i64>().map_err(|_| format!("`{v}` is not an integer"))?;
                let op = if t == Token::Greater { Op::Greater(n) } else { Op::Less(n) };
                (op, Vec::new())
            }
            t => return Err(format!("found {t:?} after `{key}`, expected an operator")),
        };
        for v in &values {
            check_value(v)?;
        }
        Ok(Requirement { key, op, values })
    }

    /// The value after `=`, `==` or `!=`: empty before `,` or the end.
    fn exact_value(&mut self) -> Result<String, String> {
        if matches!(self.peek(), None | Some(Token::Comma)) {
            return Ok(String::new());
        }
        self.ident("a label value")
    }

    /// `(v1, v2, ...)`, as apimachinery's `parseValues` reads it: `()` is the empty value, and
    /// an empty entry (`(,a)`, `(a,,b)`, `(a,)`) is one too.
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        if self.next() != Some(&Token::Open) {
            return Err("expected `(` after `in` or `notin`".into());
        }
        if self.peek() == Some(&Token::Close) {
            self.pos += 1;
            return Ok(vec![String::new()]);
        }
        let mut values = Vec::new();
        loop {
            match self.next().cloned() {
                Some(Token::Ident(v)) => {
                    values.push(v);
                    match self.peek() {
                        Some(Token::Comma) => {}
                        Some(Token::Close) => {
                            self.pos += 1;
                            return Ok(values);
                        }
                        t => return Err(format!("found {t:?}, expected `,` or `)`")),
                    }
                }
                Some(Token::Comma) => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.peek() {
                        Some(Token::Close) => {
                            self.pos += 1;
                            values.push(String::new());
                            return Ok(values);
                        }
                        Some(Token::Comma) => values.push(String::new()),
                        _ => {}
                    }
                }
                t => return Err(format!("found {t:?}, expected a label value")),
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
        assert_eq!(LabelSelector::parse("a=-b").unwrap_err(), "invalid label value `-b`");
    }
}
