//! Glob patterns as Argo CD matches them (gobwas/glob without separators).
//!
//! `*` matches any run of characters (including `.` and `/`), `?` one character, `[abc]`,
//! `[a-z]` and `[!abc]` a class, `{a,b}` alternatives (which may hold patterns), and `\`
//! escapes the next character. A pattern that does not compile matches nothing, as in Argo CD.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    Any,
    AnyRun,
    Class { negated: bool, ranges: Vec<(char, char)> },
    Alternatives(Vec<Vec<Token>>),
}

/// A compiled glob pattern.
///
/// # Examples
///
/// ```
/// use gitops_core::glob::Glob;
/// let g = Glob::new("*.crossplane.io/*").unwrap();
/// assert!(g.matches("ec2.aws.crossplane.io/Instance"));
/// assert!(!g.matches("crossplane.io/X"));
/// assert!(Glob::new("{apps,batch}").unwrap().matches("batch"));
/// assert!(Glob::new("[").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    tokens: Vec<Token>,
}

/// Upper bound on the work one match may do, so a hostile pattern cannot take long.
const MAX_STEPS: usize = 1 << 20;

impl Glob {
    /// Compiles a pattern; `None` when it is malformed (an unclosed `[` or `{`, a trailing `\`).
    pub fn new(pattern: &str) -> Option<Glob> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut pos = 0;
        let tokens = parse_seq(&chars, &mut pos, false)?;
        if pos != chars.len() {
            return None;
        }
        Some(Glob { tokens })
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let mut steps = 0;
        match_seq(&self.tokens, &chars, 0, &mut steps, &mut |i, _| i == chars.len())
    }
}

/// Whether `text` matches `pattern`; a malformed pattern matches nothing (as
/// [`Glob::new`] then [`Glob::matches`]).
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    if !pattern.contains(['*', '?', '[', '{', '\\']) {
        return pattern == text;
    }
    Glob::new(pattern).is_some_and(|g| g.matches(text))
}

/// Whether `text` matches `pattern` as Go's `path/filepath.Match` decides it, which AppProject
/// resource lists use (`isResourceInList`, `isNamedResourceInList`): `*` is any run of
/// characters but `/`, `?` one character but `/`, `[a-z]` and `[^a-z]` a class, `\` escapes
/// the next character; no `{a,b}`. A malformed pattern (an unclosed `[`, an empty class, a
/// trailing `\`) matches nothing: Argo CD reads its `ErrBadPattern` as no match.
pub(crate) fn path_match(pattern: &str, text: &str) -> bool {
    let Some(tokens) = parse_path_pattern(pattern) else { return false };
    let text: Vec<char> = text.chars().collect();
    // can[i][j]: tokens[i..] match text[j..].
    let (n, m) = (tokens.len(), text.len());
    let mut can = vec![vec![false; m + 1]; n + 1];
    can[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            can[i][j] = match &tokens[i] {
                Token::AnyRun => can[i + 1][j] || (j < m && text[j] != '/' && can[i][j + 1]),
                Token::Any => j < m && text[j] != '/' && can[i + 1][j + 1],
                Token::Literal(c) => j < m && text[j] == *c && can[i + 1][j + 1],
                Token::Class { negated, ranges } => {
                    j < m
                        && ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&text[j])) != *negated
                        && can[i + 1][j + 1]
                }
                Token::Alternatives(_) => false,
            };
        }
    }
    can[0][0]
}

/// The tokens of a `filepath.Match` pattern; `None` when Go calls it malformed.
fn parse_path_pattern(pattern: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // One character of a class: `\` escapes, an unescaped `-` or `]` is malformed.
    let class_char = |i: &mut usize| -> Option<char> {
        let c = *chars.get(*i)?;
        *i += 1;
        match c {
            '-' | ']' => None,
            '\\' => {
                let e = *chars.get(*i)?;
                *i += 1;
                Some(e)
            }
            c => Some(c),
        }
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => out.push(Token::AnyRun),
            '?' => out.push(Token::Any),
            '\\' => {
                out.push(Token::Literal(*chars.get(i)?));
                i += 1;
            }
            '[' => {
                let negated = chars.get(i) == Some(&'^');
                if negated {
                    i += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    if chars.get(i) == Some(&']') && !ranges.is_empty() {
                        i += 1;
                        break;
                    }
                    let lo = class_char(&mut i)?;
                    let hi = if chars.get(i) == Some(&'-') {
                        i += 1;
                        class_char(&mut i)?
                    } else {
                        lo
                    };
                    ranges.push((lo, hi));
                }
                out.push(Token::Class { negated, ranges });
            }
            c => out.push(Token::Literal(c)),
        }
    }
    Some(out)
}

fn parse_seq(chars: &[char], pos: &mut usize, in_alt: bool) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    while *pos < chars.len() {
        let c = chars[*pos];
        match c {
            ',' | '}' if in_alt => return Some(out),
            '*' => {
                *pos += 1;
                if out.last() != Some(&Token::AnyRun) {
                    out.push(Token::AnyRun);
                }
            }
            '?' => {
                *pos += 1;
                out.push(Token::Any);
            }
            '\\' => {
                let next = *chars.get(*pos + 1)?;
                *pos += 2;
                out.push(Token::Literal(next));
            }
            '[' => {
                *pos += 1;
                let negated = chars.get(*pos) == Some(&'!');
                if negated {
                    *pos += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    let c = *chars.get(*pos)?;
                    if c == ']' {
                        *pos += 1;
                        break;
                    }
                    if chars.get(*pos + 1) == Some(&'-')
                        && chars.get(*pos + 2).is_some_and(|c| *c != ']')
                    {
                        let hi = chars[*pos + 2];
                        if hi < c {
                            return None;
                        }
                        ranges.push((c, hi));
                        *pos += 3;
                    } else {
                        ranges.push((c, c));
                        *pos += 1;
                    }
                }
                if ranges.is_empty() {
                    return None;
                }
                out.push(Token::Class { negated, ranges });
            }
            '{' => {
                *pos += 1;
                let mut alts = Vec::new();
                loop {
                    alts.push(parse_seq(chars, pos, true)?);
                    match chars.get(*pos)? {
                        ',' => *pos += 1,
                        '}' => {
                            *pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                out.push(Token::Alternatives(alts));
            }
            c => {
                *pos += 1;
                out.push(Token::Literal(c));
            }
        }
    }
    if in_alt {
        return None;
    }
    Some(out)
}

/// Matches `tokens` at `text[i..]`, calling `rest` with each end position until it accepts.
fn match_seq(
    tokens: &[Token],
    text: &[char],
    i: usize,
    steps: &mut usize,
    rest: &mut dyn FnMut(usize, &mut usize) -> bool,
) -> bool {
    *steps += 1;
    if *steps > MAX_STEPS {
        return false;
    }
    let Some((first, tail)) = tokens.split_first() else {
        return rest(i, steps);
    };
    match first {
        Token::Literal(c) => text.get(i) == Some(c) && match_seq(tail, text, i + 1, steps, rest),
        Token::Any => i < text.len() && match_seq(tail, text, i + 1, steps, rest),
        Token::Class { negated, ranges } => {
            let Some(c) = text.get(i) else { return false };
            let inside = ranges.iter().any(|(lo, hi)| lo <= c && c <= hi);
            inside != *negated && match_seq(tail, text, i + 1, steps, rest)
        }
        Token::AnyRun => {
            (i..=text.len()).any(|j| *steps <= MAX_STEPS && match_seq(tail, text, j, steps, rest))
        }
        Token::Alternatives(alts) => alts.iter().any(|alt| {
            match_seq(alt, text, i, steps, &mut |j, steps| match_seq(tail, text, j, steps, rest))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_match_is_go_filepath_match() {
        assert!(path_match("*", "Deployment"));
        assert!(path_match("", ""));
        assert!(!path_match("", "Deployment"));
        assert!(path_match("Deploy*", "Deployment"));
        assert!(path_match("*.k8s.io", "rbac.authorization.k8s.io"));
        assert!(!path_match("*", "a/b"));
        assert!(path_match("[^a-c]og", "dog"));
        assert!(!path_match("[!d]og", "fog"));
        assert!(path_match("[!d]og", "dog"));
        assert!(path_match("?ecret", "Secret"));
        assert!(path_match("\\*", "*"));
        assert!(!path_match("{apps,batch}", "apps"));
        for bad in ["[", "[]", "a[b", "[a-]", "\\", "[^]"] {
            assert!(!path_match(bad, "a"), "{bad}");
        }
    }

    #[test]
    fn gobwas_semantics() {
        let cases = [
            ("argoproj.io/*", "argoproj.io/Rollout", true),
            ("*.io/Rollout", "argoproj.io/Rollout", true),
            ("*.aws.crossplane.io/*", "ec2.aws.crossplane.io/Instance", true),
            ("*.aws*", "ec2.aws.crossplane.io/Instance", true),
            ("*", "", true),
            ("", "", true),
            ("", "apps", false),
            ("apps", "apps", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("[!a]pps", "apps", false),
            ("[a-c]pps", "bpps", true),
            ("{apps,batch}/*", "batch/Job", true),
            ("{apps,batch}/*", "core/Job", false),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("*/*", "Service", false),
            ("*/*", "/Service", true),
        ];
        for (p, t, want) in cases {
            assert_eq!(glob_match(p, t), want, "{p} ~ {t}");
        }
    }

    #[test]
    fn malformed_patterns_match_nothing() {
        for p in ["[", "{a,b", "a\\", "[z-a]", "[]"] {
            assert!(Glob::new(p).is_none(), "{p}");
            assert!(!glob_match(p, p));
        }
    }

    #[test]
    fn pathological_pattern_is_bounded() {
        let p = "*a".repeat(30) + "b";
        let t = "a".repeat(60);
        assert!(!glob_match(&p, &t));
    }
}
