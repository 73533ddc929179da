//! Lua 5.1 pattern matching with a step budget.
//!
//! LuaJIT's own `string.find`/`match`/`gmatch`/`gsub` backtrack in native code, which an
//! instruction hook cannot stop: `string.find(string.rep("a", 40), string.rep("a*", 40) .. "b")`
//! takes longer than the age of the universe. This matcher follows the Lua 5.1 reference
//! algorithm (same results, same error messages) but counts every step against a budget
//! shared by the whole evaluation, and bounds its recursion depth.

use std::sync::atomic::AtomicU64;

use super::Relaxed as _;

/// Most captures in one pattern (Lua's `LUA_MAXCAPTURES`).
const MAX_CAPTURES: usize = 32;
/// Deepest recursion of the matcher (Lua 5.2's `MAXCCALLS`). Only `?`, `*`, `+`, `-` and
/// captures recurse, so real patterns stay far below it.
const MAX_DEPTH: u32 = 200;

const CAP_UNFINISHED: isize = -1;
const CAP_POSITION: isize = -2;

/// Why a match failed with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PatternError {
    /// The pattern is malformed; the text is Lua's message.
    Malformed(&'static str),
    /// The step budget of the evaluation is spent.
    Steps,
    /// The recursion got too deep.
    TooComplex,
}

/// One capture of a successful match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Capture {
    /// A substring, as a byte range of the subject.
    Text(usize, usize),
    /// A position capture `()`, 1-based.
    Position(usize),
}

/// A matcher for one subject and one pattern.
pub(super) struct Matcher<'a> {
    src: &'a [u8],
    pat: &'a [u8],
    level: usize,
    caps: [(usize, isize); MAX_CAPTURES],
    steps: &'a AtomicU64,
    depth: u32,
}

impl<'a> Matcher<'a> {
    /// A matcher drawing on the step budget `steps` (steps left).
    pub(super) fn new(src: &'a [u8], pat: &'a [u8], steps: &'a AtomicU64) -> Self {
        Matcher { src, pat, level: 0, caps: [(0, 0); MAX_CAPTURES], steps, depth: 0 }
    }

    /// Tries to match the pattern starting at byte `p` of the pattern against the subject at
    /// `s`; gives the end of the match.
    pub(super) fn try_at(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        self.level = 0;
        self.depth = 0;
        self.do_match(s, p)
    }

    /// The captures of the last successful match from `s` to `e`: the whole match when the
    /// pattern has none (if `whole_if_none`).
    pub(super) fn captures(
        &self,
        s: usize,
        e: usize,
        whole_if_none: bool,
    ) -> Result<Vec<Capture>, PatternError> {
        let n = if self.level == 0 && whole_if_none { 1 } else { self.level };
        (0..n).map(|i| self.capture(i, s, e)).collect()
    }

    /// Capture `i` of the last match from `s` to `e`.
    pub(super) fn capture(&self, i: usize, s: usize, e: usize) -> Result<Capture, PatternError> {
        if i >= self.level {
            if i == 0 {
                return Ok(Capture::Text(s, e));
            }
            return Err(PatternError::Malformed("invalid capture index"));
        }
        let (start, len) = self.caps[i];
        match len {
            CAP_UNFINISHED => Err(PatternError::Malformed("unfinished capture")),
            CAP_POSITION => Ok(Capture::Position(start + 1)),
            // A finished capture has a non-negative length.
            len => Ok(Capture::Text(start, start + len.unsigned_abs())),
        }
    }

    fn step(&self) -> Result<(), PatternError> {
        let left = self.steps.get();
        if left == 0 {
            return Err(PatternError::Steps);
        }
        self.steps.set(left - 1);
        Ok(())
    }

    fn pat_at(&self, p: usize) -> u8 {
        self.pat.get(p).copied().unwrap_or(0)
    }

    fn class_end(&self, mut p: usize) -> Result<usize, PatternError> {
        let c = self.pat_at(p);
        p += 1;
        if c == b'%' {
            if p >= self.pat.len() {
                return Err(PatternError::Malformed("malformed pattern (ends with '%')"));
            }
            return Ok(p + 1);
        }
        if c == b'[' {
            if self.pat_at(p) == b'^' {
                p += 1;
            }
            loop {
                if p >= self.pat.len() {
                    return Err(PatternError::Malformed("malformed pattern (missing ']')"));
                }
                let cc = self.pat[p];
                p += 1;
                if cc == b'%' && p < self.pat.len() {
                    p += 1;
                }
                if self.pat_at(p) == b']' {
                    break;
                }
            }
            return Ok(p + 1);
        }
        Ok(p)
    }

    fn single_match(&self, s: usize, p: usize, ep: usize) -> bool {
        let Some(&c) = self.src.get(s) else { return false };
        match self.pat_at(p) {
            b'.' => true,
            b'%' => match_class(c, self.pat_at(p + 1)),
            b'[' => self.match_bracket_class(c, p, ep - 1),
            x => x == c,
        }
    }

    /// `p` is at `[`, `ec` at the closing `]`.
    fn match_bracket_class(&self, c: u8, mut p: usize, ec: usize) -> bool {
        let mut sig = true;
        if self.pat_at(p + 1) == b'^' {
            sig = false;
            p += 1;
        }
        p += 1;
        while p < ec {
            let pc = self.pat_at(p);
            if pc == b'%' {
                p += 1;
                if match_class(c, self.pat_at(p)) {
                    return sig;
                }
            } else if self.pat_at(p + 1) == b'-' && p + 2 < ec {
                p += 2;
                if pc <= c && c <= self.pat_at(p) {
                    return sig;
                }
            } else if pc == c {
                return sig;
            }
            p += 1;
        }
        !sig
    }

    fn do_match(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(PatternError::TooComplex);
        }
        let r = self.match_inner(s, p);
        self.depth -= 1;
        r
    }

    fn match_inner(&mut self, mut s: usize, mut p: usize) -> Result<Option<usize>, PatternError> {
        loop {
            self.step()?;
            if p >= self.pat.len() {
                return Ok(Some(s));
            }
            match self.pat[p] {
                b'(' => {
                    return if self.pat_at(p + 1) == b')' {
                        self.start_capture(s, p + 2, CAP_POSITION)
                    } else {
                        self.start_capture(s, p + 1, CAP_UNFINISHED)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'%' if self.pat_at(p + 1) == b'b' => match self.match_balance(s, p + 2)? {
                    Some(e) => {
                        s = e;
                        p += 4;
                        continue;
                    }
                    None => return Ok(None),
                },
                b'%' if self.pat_at(p + 1) == b'f' => {
                    p += 2;
                    if self.pat_at(p) != b'[' {
                        return Err(PatternError::Malformed("missing '[' after '%f' in pattern"));
                    }
                    let ep = self.class_end(p)?;
                    let prev = if s == 0 { 0 } else { self.src[s - 1] };
                    let cur = self.src.get(s).copied().unwrap_or(0);
                    if self.match_bracket_class(prev, p, ep - 1)
                        || !self.match_bracket_class(cur, p, ep - 1)
                    {
                        return Ok(None);
                    }
                    p = ep;
                    continue;
                }
                b'%' if self.pat_at(p + 1).is_ascii_digit() => {
                    match self.match_capture(s, self.pat_at(p + 1))? {
                        Some(e) => {
                            s = e;
                            p += 2;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                _ => {}
            }
            let ep = self.class_end(p)?;
            let m = self.single_match(s, p, ep);
            match self.pat_at(ep) {
                b'?' if ep < self.pat.len() => {
                    if m && let Some(r) = self.do_match(s + 1, ep + 1)? {
                        return Ok(Some(r));
                    }
                    p = ep + 1;
                }
                b'*' if ep < self.pat.len() => return self.max_expand(s, p, ep),
                b'+' if ep < self.pat.len() => {
                    return if m { self.max_expand(s + 1, p, ep) } else { Ok(None) };
                }
                b'-' if ep < self.pat.len() => return self.min_expand(s, p, ep),
                _ => {
                    if !m {
                        return Ok(None);
                    }
                    s += 1;
                    p = ep;
                }
            }
        }
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> Result<Option<usize>, PatternError> {
        let mut i = 0;
        while self.single_match(s + i, p, ep) {
            self.step()?;
            i += 1;
        }
        loop {
            if let Some(r) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(r));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(
        &mut self,
        mut s: usize,
        p: usize,
        ep: usize,
    ) -> Result<Option<usize>, PatternError> {
        loop {
            if let Some(r) = self.do_match(s, ep + 1)? {
                return Ok(Some(r));
            }
            if self.single_match(s, p, ep) {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(
        &mut self,
        s: usize,
        p: usize,
        what: isize,
    ) -> Result<Option<usize>, PatternError> {
        if self.level >= MAX_CAPTURES {
            return Err(PatternError::Malformed("too many captures"));
        }
        self.caps[self.level] = (s, what);
        self.level += 1;
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.level -= 1;
        }
        Ok(r)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        let Some(l) = (0..self.level).rev().find(|&i| self.caps[i].1 == CAP_UNFINISHED) else {
            return Err(PatternError::Malformed("invalid pattern capture"));
        };
        // `s` is never before the capture's start: the matcher only moves forward.
        self.caps[l].1 = isize::try_from(s - self.caps[l].0).unwrap_or(isize::MAX);
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.caps[l].1 = CAP_UNFINISHED;
        }
        Ok(r)
    }

    fn match_balance(&self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        if p + 1 >= self.pat.len() {
            return Err(PatternError::Malformed("unbalanced pattern"));
        }
        let (b, e) = (self.pat[p], self.pat[p + 1]);
        if self.src.get(s) != Some(&b) {
            return Ok(None);
        }
        let mut cont = 1;
        let mut i = s + 1;
        while i < self.src.len() {
            self.step()?;
            let c = self.src[i];
            if c == e {
                cont -= 1;
                if cont == 0 {
                    return Ok(Some(i + 1));
                }
            } else if c == b {
                cont += 1;
            }
            i += 1;
        }
        Ok(None)
    }

    fn match_capture(&self, s: usize, digit: u8) -> Result<Option<usize>, PatternError> {
        let l = usize::from(digit.wrapping_sub(b'1'));
        if digit < b'1' || l >= self.level || self.caps[l].1 == CAP_UNFINISHED {
            return Err(PatternError::Malformed("invalid capture index"));
        }
        let (start, len) = self.caps[l];
        let len = len.max(0).unsigned_abs();
        let cap = &self.src[start..start + len];
        if self.src.len() - s >= len && &self.src[s..s + len] == cap {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }
}

/// Whether the byte `c` is in the class `%cl` (C locale).
fn match_class(c: u8, cl: u8) -> bool {
    let res = match cl.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        b'z' => c == 0,
        _ => return cl == c,
    };
    if cl.is_ascii_uppercase() { !res } else { res }
}

/// Whether the pattern has none of Lua's special characters (a plain search suffices).
pub(super) fn is_plain(pat: &[u8]) -> bool {
    // Lua stops at the first NUL (strpbrk on a C string).
    let end = pat.iter().position(|&b| b == 0).unwrap_or(pat.len());
    !pat[..end].iter().any(|b| b"^$*+?.([%-".contains(b))
}

/// The first occurrence of `needle` in `hay`, counting steps.
pub(super) fn find_plain(
    hay: &[u8],
    needle: &[u8],
    steps: &AtomicU64,
) -> Result<Option<usize>, PatternError> {
    if needle.is_empty() {
        return Ok(Some(0));
    }
    if needle.len() > hay.len() {
        return Ok(None);
    }
    // Charge the worst case up front: one step per candidate position.
    let cost = (hay.len() - needle.len() + 1) as u64;
    let left = steps.get();
    if left < cost {
        steps.set(0);
        return Err(PatternError::Steps);
    }
    steps.set(left - cost);
    Ok(hay.windows(needle.len()).position(|w| w == needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(s: &str, p: &str) -> Result<Option<(usize, usize)>, PatternError> {
        let steps = AtomicU64::new(1_000_000);
        let (anchor, p0) = if p.starts_with('^') { (true, 1) } else { (false, 0) };
        let mut m = Matcher::new(s.as_bytes(), p.as_bytes(), &steps);
        let mut s1 = 0;
        loop {
            if let Some(e) = m.try_at(s1, p0)? {
                return Ok(Some((s1, e)));
            }
            s1 += 1;
            if s1 > s.len() || anchor {
                return Ok(None);
            }
        }
    }

    #[test]
    fn matches_like_lua() {
        assert_eq!(find("hello world", "o w"), Ok(Some((4, 7))));
        assert_eq!(find("hello", "l+"), Ok(Some((2, 4))));
        assert_eq!(find("hello", "^h.-o$"), Ok(Some((0, 5))));
        assert_eq!(find("10m30s", "(%d+)m"), Ok(Some((0, 3))));
        assert_eq!(find("THE (quick) fox", "%((%a+)%)"), Ok(Some((4, 11))));
        assert_eq!(find("f(a(b)c)", "%b()"), Ok(Some((1, 8))));
        assert_eq!(find("THE quick", "%f[%a]%a+"), Ok(Some((0, 3))));
        assert_eq!(find("abcabc", "(abc)%1"), Ok(Some((0, 6))));
        assert_eq!(find("x]", "[]]"), Ok(Some((1, 2))));
        assert_eq!(find("a-b", "[%-]"), Ok(Some((1, 2))));
        assert_eq!(find("abc", "[^a]"), Ok(Some((1, 2))));
        assert_eq!(find("abc", "x?abc"), Ok(Some((0, 3))));
        assert_eq!(
            find("abc", "%"),
            Err(PatternError::Malformed("malformed pattern (ends with '%')"))
        );
        assert_eq!(
            find("abc", "[a"),
            Err(PatternError::Malformed("malformed pattern (missing ']')"))
        );
        assert_eq!(find("abc", "(a"), Ok(Some((0, 1))));
        assert_eq!(find("abc", "a)"), Err(PatternError::Malformed("invalid pattern capture")));
    }

    proptest::proptest! {
        /// Any pattern on any subject gives a match, no match or an error: never a panic,
        /// and never more steps than the budget.
        #[test]
        fn matcher_is_total(
            pat in "[ab%\\[\\]^$*+?.()\\-1fbdw]{0,12}",
            subject in "[ab(). -]{0,12}",
        ) {
            let steps = AtomicU64::new(10_000);
            let mut m = Matcher::new(subject.as_bytes(), pat.as_bytes(), &steps);
            for s in 0..=subject.len() {
                if let Ok(Some(e)) = m.try_at(s, 0) {
                    proptest::prop_assert!(e >= s && e <= subject.len());
                    let _ = m.captures(s, e, true);
                }
            }
            let _ = is_plain(pat.as_bytes());
            let _ = find_plain(subject.as_bytes(), pat.as_bytes(), &steps);
        }
    }

    #[test]
    fn pathological_pattern_runs_out_of_steps() {
        let s = "a".repeat(40);
        let p = format!("{}b", "a*".repeat(40));
        assert_eq!(find(&s, &p), Err(PatternError::Steps));
    }
}
