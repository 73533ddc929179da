//! jq path expressions for `ignoreDifferences`, on jaq, bounded by construction.
//!
//! jq has no fuel: a recursive definition runs until the stack overflows and aborts the
//! process, and `range(1e12)` runs for hours. This module therefore compiles only expressions
//! whose parsed form stays inside a subset that selects paths, and caps sizes and outputs:
//!
//! - the expression is at most [`MAX_EXPR_BYTES`] bytes, its brackets nest at most
//!   [`MAX_NESTING`] deep (checked on the text before jaq's recursive parser sees it), and its
//!   syntax tree is at most [`MAX_NESTING`] levels deep;
//! - accepted terms: `.`, paths (`.a`, `."a"`, `.["a"]`, `.[0]`, `.[-1]`, `.[1:3]`, `.[]`,
//!   each optionally with `?`), `..` (at most once per expression), string literals without
//!   interpolation or `@format`, number literals (and their negation), `|` (without `as`
//!   bindings), `,`, `//`, `and`, `or`, comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`),
//!   `if ... then ... elif ... else ... end`, `try E` without `catch`, parentheses, and calls
//!   of the filters in [`ALLOWED_CALLS`] (such as `select/1`, `test/1`, `startswith/1`,
//!   `has/1`, `contains/1`, `any/0..2`, `all/0..2`, `length/0`, `not/0`, `type/0`, and `IN/1..2`,
//!   which jaq lacks and this module defines as jq's manual does); the collecting filters
//!   `map/1` and `with_entries/1` (whose filter must yield one value per child, so their output
//!   is never larger than their input by more than a constant per value), `to_entries/0`,
//!   `from_entries/0`, `tostring/0`, `paths/0` (an iteration, as `..`), `getpath/1` of a literal
//!   path and `limit/2` with a literal count (found missing by the oracle's `jq` area: Argo CD
//!   runs them); constant arrays and objects (`contains({"a": "b"})`);
//! - everything else is rejected with the offending construct named: `def`, variables
//!   (`$x`, `$ENV`, `$__loc__`), `as` bindings, `reduce`/`foreach`, `label`/`break`, array and
//!   object construction from anything but constants, arithmetic, assignments and updates, string interpolation and
//!   formats (`@sh`), and every other filter (`repeat`, `until`, `while`, `range`, `limit`,
//!   `recurse`, `paths/1`, `input`, `env`, `error`, ...);
//! - the number of alternatives an expression can produce from one input (`,`, `//`, `if`
//!   branches, multiplied along `|`) is at most [`MAX_ALTERNATIVES`], and evaluation stops with
//!   an error after [`run::MAX_PATHS`] paths;
//! - no cartesian products: where a part of the expression yields several values for one input
//!   and another part runs once per value on that same input, the other part must cost a
//!   constant amount (navigation without iteration, constants, comparisons with a constant,
//!   `select`, `not`, `has`, `type`). So `.a[] == .b[]`, `.a[] == .b`, `select(.a[] == 1) | .b[]`
//!   and `if .a[] then .b[] else . end` are rejected, while `select(.env[].name == "A")`, an
//!   iteration that walks down the document (`.a[] | .b[]`, `.. | select(.c[] == 1)`,
//!   `any(.a[]; .b == 1)`) and `select(.a[] == 1) | .b` are accepted;
//! - every evaluation spends from a budget of units (values converted, bytes scanned by `test`,
//!   paths selected; see [`run`]) and asks the host's interrupt as it goes; only the part of the
//!   object the expression can look at is converted ([`footprint`]: `.spec.template.spec.containers[]
//!   | select(...)` converts the containers, not the object), and a part it looks at nested
//!   deeper than [`run::MAX_DOC_DEPTH`] levels is not evaluated. A stop by a limit is a
//!   [`run::JqFailure::Limit`], which the caller reports: it never passes for an applied rule;
//! - `test` runs on the regex crate (linear time, a size limit on the compiled program); a
//!   literal pattern is compiled once, with the rule.
//!
//! Without variables, definitions or generators of their own, every accepted expression walks
//! the document downwards only: `..` visits each value once, `.[]` each child once, and a
//! condition at a value looks at most at that value's subtree. Its work is therefore bounded
//! by the number of values times the depth times the expression size times
//! [`MAX_ALTERNATIVES`], all of them capped.
//!
//! The expression is evaluated as `path(E)`. The text `path(\nE\n)` is compiled only after
//! checking that it parses to exactly a call of `path` on the syntax tree checked above, so
//! text in `E` cannot escape the call (Argo CD splices `E` into `del(...)`; see
//! `testdata/SKIPPED.md`, case N11).

mod footprint;
mod run;
mod simple;

use std::collections::BTreeMap;
use std::sync::Arc;

use jaq_core::Compiler;
use jaq_core::load::lex::{StrPart, Token};
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::load::{Arena, File, Lexer, Loader, Parser};
use jaq_core::path::Part;
pub(crate) use run::{JqBudget, JqFailure};

/// Largest accepted expression, in bytes.
pub(crate) const MAX_EXPR_BYTES: usize = 4096;
/// Deepest accepted nesting of brackets and of the syntax tree.
pub(crate) const MAX_NESTING: usize = 32;
/// Most alternatives an expression may produce from one input.
pub(crate) const MAX_ALTERNATIVES: u64 = 64;

/// The filters an expression may call, with their arity.
pub(crate) const ALLOWED_CALLS: &[(&str, usize)] = &[
    ("select", 1),
    ("empty", 0),
    ("not", 0),
    ("true", 0),
    ("false", 0),
    ("null", 0),
    ("length", 0),
    ("type", 0),
    ("test", 1),
    ("test", 2),
    ("startswith", 1),
    ("endswith", 1),
    ("ltrimstr", 1),
    ("rtrimstr", 1),
    ("ascii_downcase", 0),
    ("ascii_upcase", 0),
    ("has", 1),
    ("in", 1),
    ("contains", 1),
    ("inside", 1),
    ("IN", 1),
    ("IN", 2),
    ("keys", 0),
    ("keys_unsorted", 0),
    ("any", 0),
    ("any", 1),
    ("any", 2),
    ("all", 0),
    ("all", 1),
    ("all", 2),
    ("first", 0),
    ("last", 0),
    ("values", 0),
    ("nulls", 0),
    ("booleans", 0),
    ("numbers", 0),
    ("strings", 0),
    ("arrays", 0),
    ("objects", 0),
    ("iterables", 0),
    ("scalars", 0),
    // Collecting filters: one output per input, built from the input's children (`map` and
    // `with_entries` take a filter that yields one value per child).
    ("map", 1),
    ("with_entries", 1),
    ("to_entries", 0),
    ("from_entries", 0),
    ("tostring", 0),
    // The paths below the input, each an array no longer than the input is deep.
    ("paths", 0),
    // A literal path, a literal count.
    ("getpath", 1),
    ("limit", 2),
];

/// The collecting filters of [`ALLOWED_CALLS`]: each yields one value per input, whatever
/// its argument yields per child.
const COLLECTING: &[&str] = &["map", "with_entries"];

/// Why an expression was not compiled: a byte offset into the expression and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JqCompileError {
    /// Byte offset into the expression.
    pub position: usize,
    /// What is wrong, lowercase.
    pub message: String,
}

/// One step of a selected path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PathPart {
    /// An array index (negative counts from the end).
    Index(i64),
    /// An object key.
    Key(String),
    /// An array slice `[start:end)`.
    Slice(Option<i64>, Option<i64>),
}

/// A compiled path expression.
pub(crate) struct JqPath {
    filter: jaq_core::Filter<run::Rule>,
    /// Whether the expression is run as Argo CD runs it when it does not stand alone: the
    /// program `del(E)` whose output replaces the object (see [`compile`]).
    program: bool,
    /// The regular expressions of `test` calls with literal patterns, compiled with the rule.
    regexes: BTreeMap<(String, String), Arc<run::Compiled>>,
    /// The part of an object the expression can look at: only that part is converted.
    footprint: footprint::Footprint,
    /// The expression as key steps and iterations only, evaluated without jaq where it
    /// selects without an error ([`simple::SimplePath`]).
    simple: Option<simple::SimplePath>,
}

impl std::fmt::Debug for JqPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JqPath")
    }
}

fn err(position: usize, message: impl Into<String>) -> JqCompileError {
    JqCompileError { position, message: message.into() }
}

impl JqPath {
    /// Whether the expression may look at the value at `path` (keys from the root) or below
    /// it ([`footprint::Footprint::may_look_at`]); a program (`del(E)`, whose output replaces
    /// the object) looks at everything.
    pub(crate) fn may_look_at(&self, path: &[&str]) -> bool {
        self.footprint.may_look_at(path)
    }
}

impl JqPath {
    /// The same expression converting the whole object, as before footprints: what a
    /// footprint must not change.
    #[cfg(test)]
    pub(crate) fn with_whole_object(mut self) -> JqPath {
        self.footprint = footprint::Footprint::everything();
        self
    }

    /// Whether the expression is evaluated without jaq where it can be.
    #[cfg(test)]
    pub(crate) fn is_simple(&self) -> bool {
        self.simple.is_some()
    }
}

/// Compiles a path expression after checking it against the accepted subset.
pub(crate) fn compile(expr: &str) -> Result<JqPath, JqCompileError> {
    if expr.len() > MAX_EXPR_BYTES {
        return Err(err(
            MAX_EXPR_BYTES,
            format!("expression is {} bytes, more than the limit of {MAX_EXPR_BYTES}", expr.len()),
        ));
    }
    check_nesting(expr)?;
    let stands_alone = Lexer::new(expr)
        .lex()
        .ok()
        .is_some_and(|tokens| Parser::new(&tokens).parse(|p| p.term()).is_ok());
    match compile_path(expr) {
        // Argo CD compiles the text `del(E)`: an expression that does not parse on its own
        // but closes the call there (such as `.a) | .b |= (fromjson | del(.c) | tojson`) is
        // a program of its own. It is run the same way, if it stays inside the subset with
        // updates; otherwise the error is the one of the expression read on its own.
        Err(e) if !stands_alone => compile_program(expr).map_err(|_| e),
        other => other,
    }
}

/// The operations a program (`del(E)` when `E` does not stand alone) may use beyond a path
/// expression: `|=`, and these filters.
pub(crate) const PROGRAM_CALLS: &[(&str, usize)] = &[("del", 1), ("fromjson", 0), ("tojson", 0)];

/// Compiles `del(E)` as a program whose output replaces the object.
fn compile_program(expr: &str) -> Result<JqPath, JqCompileError> {
    let src = format!("del({expr})");
    let tokens = Lexer::new(src.as_str()).lex().map_err(|_| err(0, "cannot read the program"))?;
    let term = parse_term(&src, &tokens)?;
    let mut checker = Checker { src: &src, recurse_seen: false, program: true };
    checker.check(&term, 1)?;
    let mut regexes = BTreeMap::new();
    literal_regexes(&src, &term, &mut regexes)?;
    let filter = load(&src)?;
    // A program's output is the whole object.
    Ok(JqPath {
        filter,
        regexes,
        program: true,
        footprint: footprint::Footprint::everything(),
        simple: None,
    })
}

/// Compiles a path expression, evaluated as `path(E)`.
fn compile_path(expr: &str) -> Result<JqPath, JqCompileError> {
    let tokens = Lexer::new(expr).lex().map_err(|errs| match errs.first() {
        Some((_, rest)) if rest.starts_with([')', ']', '}']) => {
            err(offset(expr, rest), format!("unmatched `{}`", &rest[..1]))
        }
        Some((expect, rest)) => err(offset(expr, rest), format!("expected {}", expect.as_str())),
        None => err(0, "cannot read the expression"),
    })?;
    let term = parse_term(expr, &tokens)?;
    let mut checker = Checker { src: expr, recurse_seen: false, program: false };
    checker.check(&term, 1)?;
    let mut regexes = BTreeMap::new();
    literal_regexes(expr, &term, &mut regexes)?;

    // Compile `path(E)`, after making sure the text parses to that call on the checked tree.
    let src = format!("path(\n{expr}\n)");
    let wrapped_tokens = Lexer::new(src.as_str())
        .lex()
        .map_err(|_| err(0, "expression does not stand alone as a path expression"))?;
    let wrapped = parse_term(&src, &wrapped_tokens)
        .map_err(|_| err(0, "expression does not stand alone as a path expression"))?;
    match &wrapped {
        Term::Call(name, args)
            if *name == "path"
                && args.len() == 1
                && format!("{:?}", args[0]) == format!("{term:?}") => {}
        _ => return Err(err(0, "expression does not stand alone as a path expression")),
    }
    let filter = load(&src)?;
    let (footprint, simple) = (footprint::Footprint::of(&term), simple::SimplePath::of(&term));
    Ok(JqPath { filter, regexes, program: false, footprint, simple })
}

/// Loads and compiles checked jq text with the engine's filters.
fn load(src: &str) -> Result<jaq_core::Filter<run::Rule>, JqCompileError> {
    // `test` is the native one of `run` (compiled once, no matches kept), not jaq's
    // definition over `matches`.
    let std_defs = jaq_std::defs().filter(|d| d.name != "test");
    let defs = jaq_core::defs().chain(std_defs).chain(jaq_json::defs()).chain(extra_defs());
    let funs =
        run::natives().chain(jaq_core::funs()).chain(jaq_std::funs()).chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, File { code: src, path: () })
        .map_err(|_| err(0, "expression does not parse"))?;
    Compiler::default().with_funs(funs).compile(modules).map_err(|errs| {
        let name = errs
            .first()
            .and_then(|(_, e)| e.first())
            .map(|(name, _)| (*name).to_string())
            .unwrap_or_default();
        err(0, format!("cannot compile `{name}`"))
    })
}

/// Compiles the pattern of every `test` call whose pattern (and flags) are literals; an
/// invalid or too large pattern fails the expression, pointing at the call.
fn literal_regexes(
    src: &str,
    t: &Term<&str>,
    out: &mut BTreeMap<(String, String), Arc<run::Compiled>>,
) -> Result<(), JqCompileError> {
    let mut result = Ok(());
    visit(t, &mut |t| {
        if result.is_err() {
            return;
        }
        let Term::Call(name, args) = t else { return };
        if *name != "test" {
            return;
        }
        let (pattern, flags) = match args.as_slice() {
            [p] => (literal_text(p), Some(String::new())),
            [p, f] => (literal_text(p), literal_text(f)),
            _ => return,
        };
        let (Some(pattern), Some(flags)) = (pattern, flags) else { return };
        match run::compile_regex(&pattern, &flags) {
            Ok(c) => {
                out.insert((pattern, flags), Arc::new(c));
            }
            Err(e) => result = Err(err(offset(src, name), e.message)),
        }
    });
    result
}

/// The text of a plain string literal.
fn literal_text(t: &Term<&str>) -> Option<String> {
    let Term::Str(None, parts) = t else { return None };
    let mut s = String::new();
    for p in parts {
        match p {
            StrPart::Str(x) => s.push_str(x),
            StrPart::Char(c) => s.push(*c),
            StrPart::Term(_) => return None,
        }
    }
    Some(s)
}

/// Calls `f` on every term of the tree.
fn visit<'s>(t: &Term<&'s str>, f: &mut dyn FnMut(&Term<&'s str>)) {
    f(t);
    match t {
        Term::Str(_, parts) => {
            for p in parts {
                if let StrPart::Term(inner) = p {
                    visit(inner, f);
                }
            }
        }
        Term::Arr(Some(i)) => visit(i, f),
        Term::Obj(kvs) => {
            for (k, v) in kvs {
                visit(k, f);
                if let Some(v) = v {
                    visit(v, f);
                }
            }
        }
        Term::Neg(inner) | Term::TryCatch(inner, None) => visit(inner, f),
        Term::TryCatch(b, Some(c)) => {
            visit(b, f);
            visit(c, f);
        }
        Term::BinOp(l, _, r) => {
            visit(l, f);
            visit(r, f);
        }
        Term::IfThenElse(branches, otherwise) => {
            for (c, b) in branches {
                visit(c, f);
                visit(b, f);
            }
            if let Some(o) = otherwise {
                visit(o, f);
            }
        }
        Term::Call(_, args) => {
            for a in args {
                visit(a, f);
            }
        }
        Term::Path(base, path) => {
            visit(base, f);
            for (p, _) in &path.0 {
                match p {
                    Part::Index(i) => visit(i, f),
                    Part::Range(a, b) => {
                        for x in [a, b].into_iter().flatten() {
                            visit(x, f);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// jq filters gojq has and jaq lacks, defined as jq's manual defines them.
const EXTRA_DEFS: &str = "def IN(s): any(s == .; .); def IN(src; s): any(src == s; .);";

fn extra_defs() -> impl Iterator<Item = jaq_core::load::parse::Def<&'static str>> {
    // The text above is a constant that parses; an empty list would only leave `IN` undefined.
    jaq_core::load::parse(EXTRA_DEFS, |p| p.defs()).unwrap_or_default().into_iter()
}

fn offset(whole: &str, part: &str) -> usize {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    if p >= w && p <= w + whole.len() { p - w } else { 0 }
}

fn parse_term<'s>(
    src: &'s str,
    tokens: &[Token<&'s str>],
) -> Result<Term<&'s str>, JqCompileError> {
    Parser::new(tokens).parse(|p| p.term()).map_err(|errs| match errs.first() {
        Some((expect, found)) => {
            let (pos, what) = match found {
                Some(tok) => (offset(src, tok.0), format!("`{}`", first_line(tok.0))),
                None => (src.len(), "the end".to_string()),
            };
            err(pos, format!("expected {}, found {what}", expect.as_str()))
        }
        None => err(0, "cannot parse the expression"),
    })
}

fn first_line(s: &str) -> String {
    let s = s.lines().next().unwrap_or("");
    s.chars().take(20).collect()
}

/// Bracket nesting of the text, outside strings (`\(...)` inside a string opens a level).
fn check_nesting(expr: &str) -> Result<(), JqCompileError> {
    // Each entry: true for a string, false for a bracket.
    let mut stack: Vec<bool> = Vec::new();
    let mut chars = expr.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let in_string = stack.last() == Some(&true);
        if in_string {
            match c {
                '\\' => {
                    if let Some((_, '(')) = chars.next() {
                        stack.push(false);
                    }
                }
                '"' => {
                    stack.pop();
                }
                _ => {}
            }
        } else {
            match c {
                '"' => stack.push(true),
                '(' | '[' | '{' => stack.push(false),
                ')' | ']' | '}' => {
                    stack.pop();
                }
                '#' => {
                    // A comment runs to the end of the line.
                    while chars.peek().is_some_and(|(_, c)| *c != '\n') {
                        chars.next();
                    }
                }
                _ => {}
            }
        }
        if stack.len() > MAX_NESTING {
            return Err(err(i, format!("nesting deeper than {MAX_NESTING} levels")));
        }
    }
    Ok(())
}

struct Checker<'a> {
    src: &'a str,
    recurse_seen: bool,
    /// Checking a program (`del(E)`), which may also update (`|=`) and call
    /// [`PROGRAM_CALLS`].
    program: bool,
}

impl<'a> Checker<'a> {
    /// Position of the first source slice in a term, for messages.
    fn pos(&self, t: &Term<&'a str>) -> usize {
        first_slice(t).map_or(0, |s| offset(self.src, s))
    }

    fn reject(&self, t: &Term<&'a str>, what: &str) -> JqCompileError {
        err(self.pos(t), format!("{what} is not allowed in a path expression"))
    }

    /// Rejects a construct that starts with `opener` (a keyword or a bracket) somewhere
    /// before the first source slice of the term, pointing at the opener.
    fn reject_at(&self, t: &Term<&'a str>, opener: &str, what: &str) -> JqCompileError {
        let first = self.pos(t);
        let at = self.src.get(..first).and_then(|head| head.rfind(opener)).unwrap_or(first);
        err(at, format!("{what} is not allowed in a path expression"))
    }

    /// Checks a term; returns how many alternatives it can produce from one input.
    fn check(&mut self, t: &Term<&'a str>, depth: usize) -> Result<u64, JqCompileError> {
        if depth > MAX_NESTING {
            return Err(err(self.pos(t), format!("nesting deeper than {MAX_NESTING} levels")));
        }
        let d = depth + 1;
        let n = match t {
            Term::Id => 1,
            Term::Recurse => {
                if self.recurse_seen {
                    return Err(err(0, "`..` may appear only once in a path expression"));
                }
                self.recurse_seen = true;
                1
            }
            Term::Num(_) => 1,
            Term::Str(fmt, parts) => {
                if let Some(f) = fmt {
                    return Err(err(
                        offset(self.src, f),
                        format!("format `{f}` is not allowed in a path expression"),
                    ));
                }
                if parts.iter().any(|p| matches!(p, StrPart::Term(_))) {
                    return Err(self.reject(t, "string interpolation"));
                }
                1
            }
            // Constant arrays and objects (of literals only) are data, not computation.
            Term::Arr(_) | Term::Obj(_) if is_literal(t) => 1,
            Term::Arr(_) => return Err(self.reject_at(t, "[", "array construction")),
            Term::Obj(_) => return Err(self.reject_at(t, "{", "object construction")),
            Term::Neg(inner) => match &**inner {
                Term::Num(_) => 1,
                _ => return Err(self.reject(t, "arithmetic")),
            },
            Term::BinOp(l, op, r) => {
                let what = match op {
                    BinaryOp::Pipe(Some(_)) => Some(("`as` binding", "as".to_string())),
                    BinaryOp::Math(m) => Some(("arithmetic", m.as_str().to_string())),
                    BinaryOp::Assign => Some(("assignment", "=".to_string())),
                    BinaryOp::Update if self.program => None,
                    BinaryOp::Update => Some(("assignment", "|=".to_string())),
                    BinaryOp::UpdateMath(m) => Some(("assignment", format!("{}=", m.as_str()))),
                    BinaryOp::UpdateAlt => Some(("assignment", "//=".to_string())),
                    BinaryOp::Pipe(None)
                    | BinaryOp::Comma
                    | BinaryOp::Alt
                    | BinaryOp::Or
                    | BinaryOp::And
                    | BinaryOp::Cmp(_) => None,
                };
                if let Some((what, op_text)) = what {
                    // Point at the operator: its first occurrence after the left operand starts.
                    let from = first_slice(l).map_or(0, |s| offset(self.src, s));
                    let at = self
                        .src
                        .get(from..)
                        .and_then(|rest| rest.find(op_text.as_str()))
                        .map_or(self.pos(t), |i| from + i);
                    return Err(err(at, format!("{what} is not allowed in a path expression")));
                }
                let (a, b) = (self.check(l, d)?, self.check(r, d)?);
                // Both sides run on the same input: several values on each side multiply.
                let product = match op {
                    // Comparing several values is fine against a constant only.
                    BinaryOp::Cmp(_) => (multi(l) || multi(r)) && !is_literal(l) && !is_literal(r),
                    BinaryOp::And | BinaryOp::Or => {
                        (multi(l) && !cheap(r)) || (multi(r) && !cheap(l))
                    }
                    // The right side runs once per value of the left: fine when those lie
                    // below the input, a product when the left repeats the input.
                    BinaryOp::Pipe(_) | BinaryOp::Update => dups(l) && !cheap(r),
                    _ => false,
                };
                if product {
                    return Err(self.reject(t, PRODUCT));
                }
                match op {
                    BinaryOp::Pipe(_) | BinaryOp::Cmp(_) | BinaryOp::Update => a.saturating_mul(b),
                    BinaryOp::Or | BinaryOp::And => a.saturating_mul(b.saturating_add(1)),
                    _ => a.saturating_add(b),
                }
            }
            Term::Label(..) => return Err(self.reject_at(t, "label", "`label`")),
            Term::Break(_) => return Err(self.reject_at(t, "break", "`break`")),
            Term::Fold(..) => return Err(self.reject(t, "`reduce`/`foreach`")),
            Term::TryCatch(body, catch) => {
                if catch.is_some() {
                    return Err(self.reject(t, "`catch`"));
                }
                self.check(body, d)?
            }
            Term::IfThenElse(branches, otherwise) => {
                let cond_multi = branches.iter().any(|(c, _)| multi(c));
                let branch_multi = branches.iter().any(|(_, b)| !cheap(b))
                    || otherwise.as_deref().is_some_and(|e| !cheap(e));
                if cond_multi && branch_multi {
                    return Err(self.reject(t, PRODUCT));
                }
                let mut total = 0u64;
                for (cond, then) in branches {
                    let c = self.check(cond, d)?;
                    total = total.saturating_add(c.saturating_mul(self.check(then, d)?));
                }
                total.saturating_add(match otherwise {
                    Some(e) => self.check(e, d)?,
                    None => 1,
                })
            }
            Term::Def(..) => return Err(self.reject_at(t, "def", "`def`")),
            Term::Call(name, args) => {
                let allowed = ALLOWED_CALLS.contains(&(*name, args.len()))
                    || (self.program && PROGRAM_CALLS.contains(&(*name, args.len())));
                if !allowed {
                    return Err(err(
                        offset(self.src, name),
                        format!("`{name}/{}` is not allowed in a path expression", args.len()),
                    ));
                }
                let mut n = 1u64;
                for a in args {
                    let m = self.check(a, d)?;
                    if COLLECTING.contains(name) && !yields_one(a) {
                        // `map(., .)` doubles its input: chained, it would grow without bound.
                        return Err(err(
                            offset(self.src, name),
                            format!(
                                "a filter yielding several values inside `{name}` is not allowed in a path expression"
                            ),
                        ));
                    }
                    n = n.saturating_mul(m);
                }
                match (*name, args.as_slice()) {
                    ("getpath", [p]) if !is_literal(p) => {
                        return Err(self.reject(p, "a computed `getpath` path"));
                    }
                    ("limit", [count, _]) if !matches!(count, Term::Num(_)) => {
                        return Err(self.reject(count, "a computed `limit` count"));
                    }
                    _ => {}
                }
                // `any(g; c)` and `all(g; c)` run `c` on what `g` yields; other filters
                // combine their arguments' outputs on the same input.
                let product = match (*name, args.as_slice()) {
                    ("any" | "all", [generator, condition]) => dups(generator) && !cheap(condition),
                    // `limit`'s count is a literal: it yields what its filter yields.
                    ("limit", [_, _]) => false,
                    _ => args.iter().enumerate().any(|(i, a)| {
                        multi(a) && args.iter().enumerate().any(|(j, b)| i != j && !cheap(b))
                    }),
                };
                if product {
                    return Err(self.reject(t, PRODUCT));
                }
                n
            }
            Term::Var(v) => {
                return Err(err(
                    offset(self.src, v),
                    format!("variable `{v}` is not allowed in a path expression"),
                ));
            }
            Term::Path(base, path) => {
                let n = self.check(base, d)?;
                if dups(base) && path.0.iter().any(|(p, _)| matches!(p, Part::Range(None, None))) {
                    return Err(self.reject(t, PRODUCT));
                }
                for (part, _opt) in &path.0 {
                    match part {
                        Part::Index(i) => self.check_index(i)?,
                        Part::Range(from, to) => {
                            for i in [from, to].into_iter().flatten() {
                                self.check_index(i)?;
                            }
                        }
                    }
                }
                n
            }
        };
        if n > MAX_ALTERNATIVES {
            return Err(err(
                self.pos(t),
                format!("more than {MAX_ALTERNATIVES} alternatives in a path expression"),
            ));
        }
        Ok(n)
    }

    /// An index or slice bound must be a literal: a string, a number or a negated number.
    fn check_index(&self, t: &Term<&'a str>) -> Result<(), JqCompileError> {
        match t {
            Term::Str(Some(f), _) => Err(err(
                offset(self.src, f),
                format!("format `{f}` is not allowed in a path expression"),
            )),
            Term::Str(None, parts) if parts.iter().any(|p| matches!(p, StrPart::Term(_))) => {
                Err(self.reject(t, "string interpolation"))
            }
            Term::Num(_) => Ok(()),
            Term::Neg(inner) if matches!(&**inner, Term::Num(_)) => Ok(()),
            Term::Str(None, parts) if parts.iter().all(|p| !matches!(p, StrPart::Term(_))) => {
                Ok(())
            }
            _ => Err(self.reject(t, "an index that is not a literal")),
        }
    }
}

const PRODUCT: &str = "combining two iterations (a cartesian product)";

/// Whether a term can yield several values for one input by walking down the document (`.[]`,
/// `..`): each value it yields lies below the input, so what follows runs once per value below.
fn iterates(t: &Term<&str>) -> bool {
    match t {
        // `paths` yields arrays no longer than the input is deep, one per value below it.
        Term::Recurse | Term::Call("paths", _) => true,
        Term::Call("limit", args) => args.last().is_some_and(iterates),
        Term::Path(base, path) => {
            iterates(base) || path.0.iter().any(|(p, _)| matches!(p, Part::Range(None, None)))
        }
        Term::BinOp(l, BinaryOp::Pipe(_) | BinaryOp::Comma | BinaryOp::Alt, r) => {
            iterates(l) || iterates(r)
        }
        Term::TryCatch(body, _) => iterates(body),
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().any(|(_, b)| iterates(b)) || otherwise.as_deref().is_some_and(iterates)
        }
        _ => false,
    }
}

/// Whether a term can yield the same value (or a boolean) several times for one input: a
/// filter whose argument yields several values (`select(.a[] == 1)` yields its input once per
/// match), a comparison of several values, a condition of several values.
fn dups(t: &Term<&str>) -> bool {
    match t {
        Term::Call("limit", args) => args.last().is_some_and(dups),
        Term::Call(name, args) => {
            !matches!(*name, "any" | "all" | "IN")
                && !COLLECTING.contains(name)
                && args.iter().any(|a| multi(a))
        }
        Term::BinOp(l, BinaryOp::Cmp(_) | BinaryOp::And | BinaryOp::Or, r) => multi(l) || multi(r),
        Term::BinOp(l, _, r) => dups(l) || dups(r),
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().any(|(c, b)| multi(c) || dups(b))
                || otherwise.as_deref().is_some_and(dups)
        }
        Term::TryCatch(body, _) => dups(body),
        Term::Path(base, _) => dups(base),
        _ => false,
    }
}

/// Whether a term costs a constant amount of work per input: navigation without iteration,
/// constants, comparisons with a constant, and filters that look at the input's type or one
/// key. Only such terms may run repeatedly on one input.
fn cheap(t: &Term<&str>) -> bool {
    match t {
        Term::Id | Term::Num(_) => true,
        Term::Str(..) | Term::Arr(_) | Term::Obj(_) | Term::Neg(_) => is_literal(t),
        Term::Path(base, path) => {
            cheap(base) && path.0.iter().all(|(p, _)| !matches!(p, Part::Range(None, None)))
        }
        Term::BinOp(l, BinaryOp::Cmp(_), r) => {
            cheap(l) && cheap(r) && (is_literal(l) || is_literal(r))
        }
        Term::BinOp(l, _, r) => cheap(l) && cheap(r),
        Term::TryCatch(body, _) => cheap(body),
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().all(|(c, b)| cheap(c) && cheap(b))
                && otherwise.as_deref().is_none_or(cheap)
        }
        Term::Call(name, args) => {
            matches!(
                *name,
                "select"
                    | "not"
                    | "true"
                    | "false"
                    | "null"
                    | "empty"
                    | "type"
                    | "has"
                    | "first"
                    | "last"
                    | "values"
                    | "nulls"
                    | "booleans"
                    | "numbers"
                    | "strings"
                    | "arrays"
                    | "objects"
                    | "iterables"
                    | "scalars"
                    | "getpath"
            ) && args.iter().all(cheap)
        }
        _ => false,
    }
}

/// Whether a term yields at most one value for one input: no `,` among its outputs, no
/// iteration, and `//` and `if` only between such terms (`.name // "none"` yields one value).
fn yields_one(t: &Term<&str>) -> bool {
    match t {
        Term::BinOp(_, BinaryOp::Comma, _) => false,
        Term::BinOp(l, BinaryOp::Alt | BinaryOp::Pipe(None), r) => yields_one(l) && yields_one(r),
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().all(|(c, b)| !multi(c) && yields_one(b))
                && otherwise.as_deref().is_none_or(yields_one)
        }
        Term::TryCatch(body, None) => yields_one(body),
        _ => !multi(t),
    }
}

/// Whether a term can yield several values for one input.
fn multi(t: &Term<&str>) -> bool {
    iterates(t) || dups(t)
}

/// Whether a term is a constant: a number, a plain string, `true`, `false`, `null`, or an
/// array or object built of constants only.
fn is_literal(t: &Term<&str>) -> bool {
    match t {
        Term::Num(_) => true,
        Term::Neg(inner) => matches!(&**inner, Term::Num(_)),
        Term::Str(None, parts) => parts.iter().all(|p| !matches!(p, StrPart::Term(_))),
        Term::Call(name, args) => args.is_empty() && matches!(*name, "true" | "false" | "null"),
        Term::Arr(None) => true,
        Term::Arr(Some(items)) => is_literal_list(items),
        Term::Obj(kvs) => kvs.iter().all(|(k, v)| {
            matches!(k, Term::Str(None, _)) && is_literal(k) && v.as_ref().is_some_and(is_literal)
        }),
        _ => false,
    }
}

fn is_literal_list(t: &Term<&str>) -> bool {
    match t {
        Term::BinOp(l, BinaryOp::Comma, r) => is_literal_list(l) && is_literal_list(r),
        other => is_literal(other),
    }
}

fn first_slice<'a>(t: &Term<&'a str>) -> Option<&'a str> {
    match t {
        Term::Id | Term::Recurse => None,
        Term::Num(s) | Term::Var(s) | Term::Break(s) => Some(s),
        Term::Str(fmt, parts) => fmt.or_else(|| {
            parts.iter().find_map(|p| match p {
                StrPart::Str(s) => Some(*s),
                StrPart::Term(inner) => first_slice(inner),
                StrPart::Char(_) => None,
            })
        }),
        Term::Arr(inner) => inner.as_deref().and_then(first_slice),
        Term::Obj(kvs) => {
            kvs.iter().find_map(|(k, v)| first_slice(k).or(v.as_ref().and_then(first_slice)))
        }
        Term::Neg(inner) => first_slice(inner),
        Term::BinOp(l, _, r) => first_slice(l).or_else(|| first_slice(r)),
        Term::Label(s, _) => Some(s),
        Term::Fold(s, ..) => Some(s),
        Term::TryCatch(b, _) => first_slice(b),
        Term::IfThenElse(branches, _) => branches.first().and_then(|(c, _)| first_slice(c)),
        Term::Def(defs, body) => defs.first().map(|d| d.name).or_else(|| first_slice(body)),
        Term::Call(name, _) => Some(name),
        Term::Path(base, path) => first_slice(base).or_else(|| {
            path.0.iter().find_map(|(p, _)| match p {
                Part::Index(i) => first_slice(i),
                Part::Range(a, b) => {
                    a.as_ref().and_then(first_slice).or(b.as_ref().and_then(first_slice))
                }
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn paths(expr: &str, doc: Value) -> Vec<Vec<PathPart>> {
        compile(expr).unwrap().paths(&doc).unwrap()
    }

    #[test]
    fn selects_paths() {
        use PathPart::*;
        let doc = json!({"a": [{"n": "x"}, {"n": "y"}], "b": {"c": 1}});
        assert_eq!(
            paths(".a[] | select(.n == \"y\")", doc.clone()),
            [vec![Key("a".into()), Index(1)]]
        );
        assert_eq!(
            paths(".b.c, .a[0]", doc.clone()),
            [vec![Key("b".into()), Key("c".into())], vec![Key("a".into()), Index(0)]]
        );
        assert_eq!(paths(".a[1:2]", doc.clone()), [vec![Key("a".into()), Slice(Some(1), Some(2))]]);
        assert_eq!(paths(".a[-1]", doc.clone()), [vec![Key("a".into()), Index(-1)]]);
        assert_eq!(
            paths(".nothing.deeper", doc.clone()),
            [vec![Key("nothing".into()), Key("deeper".into())]]
        );
        assert!(compile(".nothing[]").unwrap().paths(&doc).is_err());
    }

    #[test]
    fn rejects_outside_the_subset() {
        let e = compile("def f: 1 + f; f").unwrap_err();
        assert_eq!(e.message, "`def` is not allowed in a path expression");
    }
}

#[cfg(test)]
mod bounds {
    use super::run::{JqBudget, JqFailure, MAX_DOC_DEPTH, MAX_PATHS};
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn output_count_is_capped() {
        let doc = json!({"items": (0..MAX_PATHS + 1).collect::<Vec<_>>()});
        let err = compile(".items[]").unwrap().paths(&doc).unwrap_err();
        assert_eq!(err, "more than 10000 paths selected");
        assert_eq!(compile(".items[0:10][]").unwrap().paths(&doc).unwrap().len(), 10);
    }

    #[test]
    fn deep_documents_are_not_evaluated() {
        let mut doc = json!(1);
        for _ in 0..MAX_DOC_DEPTH + 1 {
            doc = json!({ "a": doc });
        }
        let err = compile(".a[]").unwrap().paths_within(&doc, JqBudget::default()).unwrap_err();
        assert_eq!(err, JqFailure::Limit("the object is nested deeper than 128 levels".into()));
        let err = compile("..").unwrap().paths_within(&doc, JqBudget::default()).unwrap_err();
        assert_eq!(err, JqFailure::Limit("the object is nested deeper than 128 levels".into()));
        // The depth counts from the root along the part the expression looks at; a deep part
        // it never looks at is not converted, so not refused.
        let doc = json!({"deep": doc, "b": [1]});
        let p = compile(".b[]").unwrap();
        assert_eq!(p.paths_within(&doc, JqBudget::default()).unwrap().len(), 1);
        let p = compile(".deep.a").unwrap();
        assert_eq!(p.paths_within(&doc, JqBudget::default()).unwrap().len(), 1);
    }

    #[test]
    fn every_value_and_path_spends_from_the_budget() {
        // 20 units per value converted, 10 plus 1 per step for each path selected.
        let doc = json!({"items": vec![0; 300_000]});
        let p = compile(".items[0]").unwrap();
        assert_eq!(p.paths(&doc).unwrap().len(), 1);
        let budget = |units| JqBudget { units, interrupt: None };
        assert_eq!(p.paths_within(&doc, budget(300_002 * 20 + 12)).unwrap().len(), 1);
        assert_eq!(
            p.paths_within(&doc, budget(300_002 * 20 + 11)),
            Err(JqFailure::Limit("cost limit of 6000051 units exceeded".into()))
        );
        // Only the part the expression looks at is converted: next to the 300,000 items, `.small[]`
        // costs the root, `small` and its one value (60), and its one path (12).
        let big = json!({"items": vec![0; 300_000], "small": [1]});
        let p = compile(".small[]").unwrap();
        assert_eq!(p.paths_within(&big, budget(72)).unwrap().len(), 1);
        assert_eq!(
            p.paths_within(&big, budget(71)),
            Err(JqFailure::Limit("cost limit of 71 units exceeded".into()))
        );
        // `test` costs 100 per call plus the pattern's size (1 here) plus its bytes: the second
        // call is over 5 values, one call and 50 more. A limit cannot be caught by `try`.
        let caught = compile(r#".items[] | try select(test("x"))"#).unwrap();
        assert_eq!(
            caught.paths_within(&json!({"items": ["a", "b", "c"]}), budget(5 * 20 + 102 + 50)),
            Err(JqFailure::Limit("cost limit of 252 units exceeded".into()))
        );
    }

    #[test]
    fn recursion_once_over_a_wide_document_is_linear() {
        // 8,000 nodes: `..` visits each once; 111 names start with `n1`.
        let items: Vec<Value> =
            (0..2000).map(|i| json!({"name": format!("n{i}"), "port": i, "on": true})).collect();
        let doc = json!({ "items": items });
        let p = compile(r#"..|select(type == "string" and startswith("n1"))"#).unwrap();
        assert_eq!(p.paths(&doc).unwrap().len(), 1111);
    }

    #[test]
    fn cartesian_products_are_rejected() {
        for expr in [
            ".items[] | select(.a[] == .b[])",
            "..|select(.[] == .[])",
            "select(.a[] and .b[])",
            "if .a[] then .b[] else . end",
            ".x | select(test(.a[]; .b[]))",
            "select(IN(.a[]; .b[]))",
            "select(.a[] == 1) | select(.b[] == 1)",
            "select(.a[] == 1) | .c | .d[]",
            "select(.a[] == 1).d[]",
            "select(any(select(.a[] == 1); .b[] == 2))",
            "(.x[] | select(.a[] == 1)) | .y[]",
            "select(.a[] == 1) | select(any(.b[]; . == 2))",
            "select(.a[] == 1 and any(.b[]; .))",
            "select(.a[] == 1) | select(any)",
            "if .a[] then (.b | any(.c[]; .)) else . end",
            "select(.a[] == 1) | select(.s | test(\"x\"))",
            "select(.a[] == .b)",
            "select(.a[] == 1) | select(.x == .y)",
        ] {
            let e = compile(expr).err().unwrap_or_else(|| panic!("accepted: {expr}"));
            assert_eq!(
                e.message,
                "combining two iterations (a cartesian product) is not allowed in a path expression",
                "{expr}"
            );
        }
        for expr in [
            ".items[] | select(.a[] == \"x\")",
            ".items[] | select(any(.a[]; . == .b))",
            "select(any(.a[]; any(.b[]; . == 1)))",
            "if .a then .b[] else .c[] end",
            "select(IN(.a[]; \"x\"))",
            ".x[] | select(.a[] == 1)",
            "..|select(.a[] == 1)",
            ".spec.containers[] | select(.env[].name == \"A\") | .image",
            "select(.a[] == 1) | .b",
            "select(.a[] == 1) | select(.kind == \"x\" and has(\"y\")) | .z",
            "select(.a[].name == \"x\" or .b == \"y\")",
            "select(.a == .b)",
        ] {
            assert!(compile(expr).is_ok(), "{expr}");
        }
    }

    #[test]
    fn collecting_filters_select_by_what_they_build() {
        // Found by the oracle's `jq` area: Argo CD accepts these (gojq compiles `del(E)`).
        let doc = json!({"spec": {"containers": [
            {"name": "app", "env": [{"name": "DEBUG", "value": "1"}], "image": "a"},
            {"name": "side", "env": [{"name": "LOG", "value": "x"}], "image": "b"}]},
            "metadata": {"labels": {"app": "web", "team-a": "x"}}});
        let key = |k: &str| PathPart::Key(k.into());
        let one = |expr: &str| compile(expr).unwrap().paths(&doc).unwrap();
        assert_eq!(
            one(r#".spec.containers[] | select(.env | map(.name) | contains(["DEBUG"])) | .image"#),
            [vec![key("spec"), key("containers"), PathPart::Index(0), key("image")]]
        );
        assert_eq!(
            one(r#".metadata | select(.labels | to_entries | any(.value == "x")) | .labels.app"#),
            [vec![key("metadata"), key("labels"), key("app")]]
        );
        assert_eq!(
            one(
                r#".metadata.labels | select(with_entries(select(.key | startswith("team"))) | length == 1) | .app"#
            ),
            [vec![key("metadata"), key("labels"), key("app")]]
        );
        assert_eq!(one(r#"getpath(["spec", "containers", 1, "image"])"#).len(), 1);
        assert_eq!(one(".metadata | select(paths | length == 2) | .labels").len(), 2);
        assert_eq!(one("limit(1; .spec.containers[]) | .image").len(), 1);
        assert_eq!(
            one(r#".spec.containers[] | select(.env | map(.x // "none") | contains(["none"])) | .name"#)
                .len(),
            2
        );
        assert_eq!(
            one(".spec.containers[] | select(.env | tostring | test(\"DEBUG\")) | .name").len(),
            1
        );
        // What they build is no path: as in gojq, evaluating it as one fails.
        for expr in [".metadata.labels | to_entries", ".spec.containers | map(.name)", "paths"] {
            assert!(compile(expr).unwrap().paths(&doc).is_err(), "{expr}");
        }
    }

    #[test]
    fn collecting_filters_stay_bounded() {
        // `map(., .)` doubles its input; chained, it would grow without bound.
        for (expr, message) in [
            (
                "select(map(., .) | map(., .) | length > 1)",
                "a filter yielding several values inside `map` is not allowed in a path expression",
            ),
            (
                "select(with_entries(.value[]) | length > 1)",
                "a filter yielding several values inside `with_entries` is not allowed in a path expression",
            ),
            ("getpath(paths)", "a computed `getpath` path is not allowed in a path expression"),
            ("limit(.n; .a[])", "a computed `limit` count is not allowed in a path expression"),
            (
                "select(paths | length > 1) | select(paths | length > 2)",
                "combining two iterations (a cartesian product) is not allowed in a path expression",
            ),
        ] {
            let e = compile(expr).err().unwrap_or_else(|| panic!("accepted: {expr}"));
            assert_eq!(e.message, message, "{expr}");
        }
    }

    #[test]
    fn tree_depth_is_capped() {
        let expr = "select(".repeat(20) + "." + &")".repeat(20);
        assert!(compile(&expr).is_ok());
        // Nesting through pipes and `not` builds a deep tree without brackets.
        let expr = (0..40).map(|_| "not").collect::<Vec<_>>().join(" | ");
        let e = compile(&expr).unwrap_err();
        assert_eq!(e.message, "nesting deeper than 32 levels");
    }
}

#[cfg(test)]
mod subset {
    use super::*;
    use serde_json::json;

    /// Every construct of the accepted subset works as a path expression.
    #[test]
    fn accepted_constructs_select_paths() {
        let doc = json!({
            "a": null, "b": {"x": 1}, "l": [1, "s", {"name": "n", "v": true}],
            "m": {"k1": "v", "k2": "w"}, "t": "text"
        });
        let cases: &[(&str, usize)] = &[
            (".a // .b", 1),
            ("if .a then .b else .m end", 1),
            (".l | first", 1),
            (".l | last", 1),
            (".nope?", 1),
            (".t[]?", 0),
            (".l[] | strings", 1),
            (".l[] | objects | select(has(\"name\"))", 1),
            (".l[] | select(type == \"number\" or type == \"boolean\")", 1),
            (".m | select(any(.[]; . == \"w\")) | .k1", 1),
            (".m | select(all(.[]; length == 1)) | .k2", 1),
            (".m[] | select(test(\"^v\"))", 1),
            (".m[] | select(ascii_upcase | startswith(\"W\"))", 1),
            (".l[2] | select(.name | endswith(\"n\")) | .v", 1),
            (".l[] | select(. != null and (. | scalars | not))", 0),
            (".m | select(contains({\"k1\": \"v\"}) | not) | .k1", 0),
            (".b | select(.x >= 1 and .x < 2) | .x", 1),
            (".b | try .x", 1),
            (".l[1:] | .[]", 2),
            (". | ..| numbers", 2),
            (".m | select(contains({k1: \"v\"})) | .k2", 1),
            (".m[] | select(IN(\"v\", \"x\"))", 1),
            (".m | select(IN(.k1, .k2; \"w\")) | .k1", 1),
            (".m | select(keys == [\"k1\", \"k2\"]) | .k1", 1),
            (".m | select(\"k1\" | in({\"k1\": 1})) | .k1", 1),
            (".l[] | select(. == [1, \"a\", {\"x\": [null, true]}])", 0),
            (".m.k1, .m.k2, .b", 3),
            (".m[\"k1\"], .[\"t\"]", 2),
            (".l[] | values | select(length > 0)", 3),
            (".l[-1].v | booleans", 1),
            ("empty", 0),
        ];
        for (expr, n) in cases {
            let p = match compile(expr) {
                Ok(p) => p,
                Err(e) => panic!("{expr}: {e:?}"),
            };
            let got = p.paths(&doc).unwrap_or_else(|e| panic!("{expr}: {e}"));
            assert_eq!(got.len(), *n, "{expr}: {got:?}");
        }
    }
}
#[cfg(test)]
mod regex_bounds {
    use super::*;
    use serde_json::json;

    /// `test` runs on the regex crate: matching is linear in the text without backtracking,
    /// a literal pattern compiles once with the rule, and one that compiles too large fails
    /// the rule, not a stall.
    #[test]
    fn regexes_are_bounded() {
        let doc = json!({"items": vec!["a".repeat(64); 200]});
        let run =
            |re: &str| compile(&format!(".items[] | select(test(\"{re}\"))")).unwrap().paths(&doc);
        assert_eq!(run("((a*)*)*b"), Ok(vec![]));
        assert_eq!(run("(a|aa)*c"), Ok(vec![]));
        let e = compile(r#".items[] | select(test("(a{1000}){1000}"))"#).unwrap_err();
        assert_eq!(
            (e.position, e.message.as_str()),
            (
                18,
                "regular expression \"(a{1000}){1000}\" compiles to more than the limit of 1048576 bytes"
            )
        );
        let e = compile(r#".items[] | select(test("a"; "x"))"#).unwrap_err();
        assert_eq!(e.message, "unsupported regular expression flag: \"x\"");
        let e = compile(r#".items[] | select(test("(a"))"#).unwrap_err();
        assert_eq!(e.message, "invalid regular expression \"(a\": error: unclosed group");
        // gojq's flags: `i` ignores case, `m` lets `.` match a newline, `g` changes nothing.
        let doc = json!({"s": ["A\nb"]});
        let count = |expr: &str| compile(expr).unwrap().paths(&doc).unwrap().len();
        assert_eq!(count(r#".s[] | select(test("a.b"))"#), 0);
        assert_eq!(count(r#".s[] | select(test("a.b"; "i"))"#), 0);
        assert_eq!(count(r#".s[] | select(test("a.b"; "im"))"#), 1);
        assert_eq!(count(r#".s[] | select(test("A"; "g"))"#), 1);
        assert_eq!(count(r#".s[] | select(test("a"; null))"#), 0);
    }
}
