//! Evaluating a compiled path expression on one object, on a budget.
//!
//! Every evaluation (one rule's expression on one object) spends from one budget of units,
//! about a nanosecond of work each: each value of the object converted (20 units, standing
//! for the expression's walk over it too, and 1 per 16 bytes of a string; only the part of the
//! object the expression can look at is converted, see [`Footprint`]), each call of `test`
//! (100 units plus the size of the pattern, as each search sets up its matcher, and per byte
//! scanned the weight of the pattern), each path selected (10 units and 1 per step). The counts stop the same expression on the
//! same object at the same point on every run; the host's [`Interrupt`], asked at every
//! charge, backstops them with a clock of its own.
//!
//! Regular expressions are compiled once per rule when the pattern is a literal (an invalid
//! or too large one fails the rule's compilation, naming it), or once per evaluation when it
//! is computed; `test` keeps no matches (it answers whether there is one), so no list of
//! matches can grow.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

use jaq_core::box_iter::box_once;
use jaq_core::data::HasLut;
use jaq_core::{Ctx, DataT, Error, Exn, Lut, ValR, ValXs, Vars, unwrap_valr};
use jaq_json::Val;
use regex::bytes::{Regex, RegexBuilder};
use serde_json::Value;

use super::footprint::Footprint;
use super::{JqPath, PathPart};
use crate::script::Interrupt;

/// Most paths one evaluation may select.
pub(crate) const MAX_PATHS: usize = 10_000;
/// Deepest document evaluated (serde_json's own parsing limit is 128 too).
pub(crate) const MAX_DOC_DEPTH: usize = 128;
/// Units one evaluation may spend by default: about 50 ms of work.
pub(crate) const DEFAULT_UNITS: u64 = 50_000_000;
/// Largest compiled regular expression, in bytes of the regex crate's program.
pub(crate) const MAX_REGEX_BYTES: usize = 1 << 20;
/// Most patterns computed at run time one evaluation may compile.
pub(crate) const MAX_RUNTIME_REGEXES: usize = 16;

const CALL_UNITS: u64 = 100;
const VALUE_UNITS: u64 = 20;
const PATH_UNITS: u64 = 10;
const STRING_BYTES_PER_UNIT: u64 = 16;
const COMPILE_UNITS: u64 = 1_000;

/// Why an evaluation produced no paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JqFailure {
    /// The expression failed on this object, as it would in Argo CD (jq's own error, e.g.
    /// `.a[]` on a string): Argo CD logs it and carries on without the rule.
    Eval(String),
    /// A limit of this engine stopped the expression: the caller must not carry on as if the
    /// rule had been applied.
    Limit(String),
    /// The host's interrupt (its wall-clock backstop) stopped the expression: not a count, so
    /// another run may finish; the caller must not carry on as if the rule had been applied,
    /// nor decide anything from the stop.
    Interrupted(String),
}

impl std::fmt::Display for JqFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JqFailure::Eval(m) | JqFailure::Limit(m) | JqFailure::Interrupted(m) => f.write_str(m),
        }
    }
}

/// The budget of one evaluation and the host's backstop.
#[derive(Clone, Copy)]
pub(crate) struct JqBudget<'i> {
    /// Units the evaluation may spend.
    pub units: u64,
    /// Asked at every charge; a stop ends the evaluation.
    pub interrupt: Option<&'i dyn Interrupt>,
}

impl Default for JqBudget<'_> {
    fn default() -> Self {
        JqBudget { units: DEFAULT_UNITS, interrupt: None }
    }
}

/// A regular expression with its cost per byte scanned.
#[derive(Debug)]
pub(crate) struct Compiled {
    regex: Regex,
    /// Units per byte: 1, plus 1 per 4 KiB of compiled size when the pattern is large (a big
    /// program makes each byte cost more when the lazy DFA falls back to simulation).
    weight: u64,
    /// Units per call on top of [`CALL_UNITS`]: the pattern's expanded size.
    setup: u64,
}

/// Compiles a pattern as gojq does (flags `g`, `i`, `m`; `(?<name>` groups), with a size
/// limit. The message is gojq's where it has one.
/// Why a pattern was not compiled: its text, and whether it was the size limit (a limit of
/// this engine, where the rest are errors gojq would give too).
#[derive(Debug)]
pub(crate) struct RegexError {
    pub(crate) message: String,
    pub(crate) too_big: bool,
}

pub(crate) fn compile_regex(pattern: &str, flags: &str) -> Result<Compiled, RegexError> {
    let invalid = |message| RegexError { message, too_big: false };
    if flags.chars().any(|c| !matches!(c, 'g' | 'i' | 'm')) {
        return Err(invalid(format!("unsupported regular expression flag: {flags:?}")));
    }
    let mut b = RegexBuilder::new(pattern);
    b.case_insensitive(flags.contains('i'))
        .dot_matches_new_line(flags.contains('m'))
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(2 << 20)
        .nest_limit(64);
    let regex = b.build().map_err(|e| match e {
        regex::Error::CompiledTooBig(limit) => RegexError {
            message: format!(
                "regular expression {pattern:?} compiles to more than the limit of {limit} bytes"
            ),
            too_big: true,
        },
        other => {
            let text = other.to_string();
            let last = text.lines().last().unwrap_or_default().trim().to_string();
            invalid(format!("invalid regular expression {pattern:?}: {last}"))
        }
    })?;
    // Estimate the program size from the pattern's repetition-expanded length.
    let size = u64::try_from(expanded_len(pattern)).unwrap_or(u64::MAX);
    Ok(Compiled { regex, weight: 1 + size / 4096, setup: size })
}

/// The length of a pattern with its counted repetitions expanded (an upper bound on the
/// number of program states, up to a constant).
fn expanded_len(pattern: &str) -> usize {
    match regex_syntax::Parser::new().parse(pattern) {
        Ok(hir) => hir_size(&hir),
        Err(_) => pattern.len(),
    }
}

fn hir_size(h: &regex_syntax::hir::Hir) -> usize {
    use regex_syntax::hir::HirKind;
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len(),
        HirKind::Class(_) => 4,
        HirKind::Repetition(r) => {
            let n = r.max.unwrap_or(r.min).max(1) as usize;
            hir_size(&r.sub).saturating_mul(n)
        }
        HirKind::Capture(c) => hir_size(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => {
            v.iter().map(hir_size).fold(0usize, usize::saturating_add)
        }
    }
}

/// The data of one evaluation, reachable from the native filters.
pub(crate) struct Rule;

impl DataT for Rule {
    type V<'a> = Val;
    type Data<'a> = Env<'a>;
}

/// The look-up table of the compiled filter and the evaluation's meter.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a> {
    lut: &'a Lut<Rule>,
    meter: &'a Meter<'a>,
}

impl<'a> HasLut<'a, Rule> for Env<'a> {
    fn lut(&self) -> &'a Lut<Rule> {
        self.lut
    }
}

/// A pattern and its flags.
type RegexKey = (String, String);

/// What one evaluation has spent, and why it stopped.
pub(crate) struct Meter<'a> {
    left: Cell<u64>,
    limit: u64,
    check: Option<Box<dyn crate::script::InterruptCheck>>,
    stopped: RefCell<Option<String>>,
    /// The host's interrupt, not a count, stopped it.
    interrupted: Cell<bool>,
    /// Patterns compiled when the rule was.
    fixed: &'a BTreeMap<(String, String), Arc<Compiled>>,
    /// Patterns computed and compiled during this evaluation.
    computed: RefCell<Vec<(RegexKey, Arc<Compiled>)>>,
}

impl<'a> Meter<'a> {
    fn new(budget: JqBudget<'_>, fixed: &'a BTreeMap<(String, String), Arc<Compiled>>) -> Self {
        Meter {
            left: Cell::new(budget.units),
            limit: budget.units,
            check: budget.interrupt.map(|i| i.start()),
            stopped: RefCell::new(None),
            interrupted: Cell::new(false),
            fixed,
            computed: RefCell::new(Vec::new()),
        }
    }

    /// Spends `units`; once the budget is spent or the host said stop, every later charge
    /// fails too (the expression cannot catch its way past a limit).
    fn charge(&self, units: u64) -> Result<(), String> {
        if let Some(reason) = self.stopped.borrow().as_ref() {
            return Err(reason.clone());
        }
        let left = self.left.get();
        let reason = if units > left {
            self.left.set(0);
            Some(format!("cost limit of {} units exceeded", self.limit))
        } else {
            self.left.set(left - units);
            let stop = self.check.as_ref().and_then(|c| c.stop());
            self.interrupted.set(stop.is_some());
            stop.map(|r| format!("stopped by the host: {r}"))
        };
        match reason {
            Some(r) => {
                *self.stopped.borrow_mut() = Some(r.clone());
                Err(r)
            }
            None => Ok(()),
        }
    }

    /// The limit that stopped this evaluation, if one did: final even when the expression
    /// caught the error (`try`).
    fn stopped(&self) -> Result<(), JqFailure> {
        match self.stopped.borrow().clone() {
            Some(r) => Err(self.failure(r)),
            None => Ok(()),
        }
    }

    /// The failure of a charge that failed with `reason`: [`JqFailure::Interrupted`] when the
    /// host stopped the evaluation, else [`JqFailure::Limit`].
    fn failure(&self, reason: String) -> JqFailure {
        if self.interrupted.get() {
            JqFailure::Interrupted(reason)
        } else {
            JqFailure::Limit(reason)
        }
    }

    fn regex(&self, pattern: &str, flags: &str) -> Result<Arc<Compiled>, Error<Val>> {
        let key = (pattern.to_string(), flags.to_string());
        if let Some(c) = self.fixed.get(&key) {
            return Ok(Arc::clone(c));
        }
        if let Some((_, c)) = self.computed.borrow().iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(c));
        }
        if self.computed.borrow().len() == MAX_RUNTIME_REGEXES {
            let r = format!(
                "more than {MAX_RUNTIME_REGEXES} computed regular expressions in one evaluation"
            );
            *self.stopped.borrow_mut() = Some(r.clone());
            return Err(Error::str(r));
        }
        let units = COMPILE_UNITS.saturating_add(10 * u64::try_from(pattern.len()).unwrap_or(0));
        self.charge(units).map_err(Error::str)?;
        let c = Arc::new(compile_regex(pattern, flags).map_err(|e| {
            if e.too_big {
                *self.stopped.borrow_mut() = Some(e.message.clone());
            }
            Error::str(e.message)
        })?);
        self.computed.borrow_mut().push((key, Arc::clone(&c)));
        Ok(c)
    }
}

/// The native filters of the accepted subset that jaq's own would make unbounded: `test`
/// on a compiled-once regular expression, keeping no matches.
pub(crate) fn natives() -> impl Iterator<Item = jaq_core::native::Fun<Rule>> {
    let one: jaq_core::RunPtr<Rule> = test_1;
    let two: jaq_core::RunPtr<Rule> = test_2;
    [
        jaq_core::native::run::<Rule>(("test", jaq_core::native::v(1), one)),
        jaq_core::native::run::<Rule>(("test", jaq_core::native::v(2), two)),
    ]
    .into_iter()
}

fn test_1(mut cv: jaq_core::Cv<'_, Rule>) -> ValXs<'_, Val> {
    let re = cv.0.pop_var();
    let data = *cv.0.data();
    once(test(data.meter, &cv.1, &re, &Val::Null))
}

fn test_2(mut cv: jaq_core::Cv<'_, Rule>) -> ValXs<'_, Val> {
    let flags = cv.0.pop_var();
    let re = cv.0.pop_var();
    let data = *cv.0.data();
    once(test(data.meter, &cv.1, &re, &flags))
}

fn once<'a>(r: Result<Val, Error<Val>>) -> ValXs<'a, Val> {
    box_once(r.map_err(Exn::from))
}

fn text(v: &Val) -> Option<&str> {
    match v {
        Val::TStr(b) => std::str::from_utf8(b).ok(),
        _ => None,
    }
}

/// `test(re; flags)`: whether the input string matches.
fn test(m: &Meter<'_>, input: &Val, re: &Val, flags: &Val) -> Result<Val, Error<Val>> {
    m.charge(CALL_UNITS).map_err(Error::str)?;
    let type_error = || {
        Error::str(format!(
            "test({}; {}) cannot be applied to: {}",
            preview(re),
            preview(flags),
            type_preview(input)
        ))
    };
    let flags = match flags {
        Val::Null => "",
        other => text(other).ok_or_else(type_error)?,
    };
    let (Val::TStr(subject), Some(pattern)) = (input, text(re)) else {
        return Err(type_error());
    };
    let compiled = m.regex(pattern, flags)?;
    let bytes = u64::try_from(subject.len()).unwrap_or(u64::MAX);
    let units = compiled.setup.saturating_add(bytes.saturating_mul(compiled.weight));
    m.charge(units).map_err(Error::str)?;
    Ok(Val::from(compiled.regex.is_match(subject)))
}

fn preview(v: &Val) -> String {
    let s = v.to_string();
    if s.len() > 30 {
        let cut = (0..=30).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{} ...", &s[..cut])
    } else {
        s
    }
}

fn type_preview(v: &Val) -> String {
    let t = match v {
        Val::Null => return "null".to_string(),
        Val::Bool(_) => "boolean",
        Val::Num(_) => "number",
        Val::TStr(_) | Val::BStr(_) => "string",
        Val::Arr(_) => "array",
        Val::Obj(_) => "object",
    };
    format!("{t} ({})", preview(v))
}

impl JqPath {
    /// The paths the expression selects in `doc`, within `budget`: without jaq when the
    /// expression is a simple path that selects them without an error
    /// ([`JqPath::simple_paths`]), else through jaq.
    pub(crate) fn paths_within(
        &self,
        doc: &Value,
        budget: JqBudget<'_>,
    ) -> Result<Vec<Vec<PathPart>>, JqFailure> {
        match self.simple_paths(doc, budget) {
            Some(paths) => Ok(paths),
            None => self.jaq_paths(doc, budget),
        }
    }

    /// The paths of a simple path expression ([`super::simple::SimplePath`]) read from `doc`
    /// itself, charging the units jaq's evaluation charges (the footprint's values as
    /// converted, then each path): `None` when the expression is not one, when a step fails
    /// without `?`, or when a limit or the host stops it; jaq then gives the answer, its
    /// error worded as ever.
    pub(crate) fn simple_paths(
        &self,
        doc: &Value,
        budget: JqBudget<'_>,
    ) -> Option<Vec<Vec<PathPart>>> {
        let simple = self.simple.as_ref()?;
        let meter = Meter::new(budget, &self.regexes);
        charge_within(doc, &self.footprint, 0, &meter).ok()?;
        let paths = simple.paths(doc, MAX_PATHS)?;
        for path in &paths {
            let units = PATH_UNITS.saturating_add(u64::try_from(path.len()).unwrap_or(0));
            meter.charge(units).ok()?;
        }
        Some(paths)
    }

    /// The paths the expression selects in `doc` through jaq, within `budget`.
    pub(crate) fn jaq_paths(
        &self,
        doc: &Value,
        budget: JqBudget<'_>,
    ) -> Result<Vec<Vec<PathPart>>, JqFailure> {
        self.evaluate(doc, budget, |outputs, meter| {
            let mut out = Vec::new();
            for item in outputs {
                meter.stopped()?;
                let path = item.map_err(|e| JqFailure::Eval(error_text(&e)))?;
                if out.len() == MAX_PATHS {
                    return Err(JqFailure::Limit(format!("more than {MAX_PATHS} paths selected")));
                }
                let path = from_path(&path).map_err(JqFailure::Eval)?;
                let units = PATH_UNITS.saturating_add(u64::try_from(path.len()).unwrap_or(0));
                meter.charge(units).map_err(|r| meter.failure(r))?;
                out.push(path);
            }
            meter.stopped()?;
            Ok(out)
        })
    }

    /// Converts `doc` and runs the filter on it within `budget`, handing its outputs and the
    /// meter to `read`.
    fn evaluate<T>(
        &self,
        doc: &Value,
        budget: JqBudget<'_>,
        read: impl FnOnce(&mut dyn Iterator<Item = ValR<Val>>, &Meter<'_>) -> Result<T, JqFailure>,
    ) -> Result<T, JqFailure> {
        let meter = Meter::new(budget, &self.regexes);
        let input = to_val_within(doc, &self.footprint, 0, &meter)?;
        let ctx = Ctx::<Rule>::new(Env { lut: &self.filter.lut, meter: &meter }, Vars::new([]));
        read(&mut self.filter.id.run((ctx, input)).map(unwrap_valr), &meter)
    }

    /// Whether the expression is a program whose output replaces the object
    /// ([`JqPath::run_within`]) rather than a path expression.
    pub(crate) fn is_program(&self) -> bool {
        self.program
    }

    /// Runs a program (`del(E)`) on `doc` within `budget`, as Argo CD does: the first output
    /// replaces the object; no output, an error or a second output is a failure.
    pub(crate) fn run_within(&self, doc: &Value, budget: JqBudget<'_>) -> Result<Value, JqFailure> {
        self.evaluate(doc, budget, |outputs, meter| {
            let first = outputs.next();
            meter.stopped()?;
            let first = match first {
                None => return Err(JqFailure::Eval("did not return any data".into())),
                Some(Err(e)) => return Err(JqFailure::Eval(error_text(&e))),
                Some(Ok(v)) => v,
            };
            let second = outputs.next();
            meter.stopped()?;
            if second.is_some() {
                return Err(JqFailure::Eval("returned multiple objects".into()));
            }
            let text = first.to_string();
            let units = u64::try_from(text.len()).unwrap_or(u64::MAX) / STRING_BYTES_PER_UNIT;
            meter.charge(units).map_err(|r| meter.failure(r))?;
            match serde_json::from_str::<Value>(&text) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(other) => Err(JqFailure::Eval(format!(
                    "returned {}, not an object",
                    crate::object::type_name(&other)
                ))),
                Err(e) => Err(JqFailure::Eval(format!("returned a value that is not JSON: {e}"))),
            }
        })
    }

    /// [`JqPath::paths_within`] on the default budget, without an interrupt.
    #[cfg(test)]
    pub(crate) fn paths(&self, doc: &Value) -> Result<Vec<Vec<PathPart>>, String> {
        self.paths_within(doc, JqBudget::default()).map_err(|e| e.to_string())
    }
}

/// A jq error as text: an error raised with a string is that string, not its JSON form.
fn error_text(e: &impl std::fmt::Display) -> String {
    let text = e.to_string();
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::String(inner)) => inner,
        _ => text,
    }
}

/// Converts the part of `v` the expression can look at ([`Footprint`]): an object walked
/// through with only the keys walked through it (a key only walked to, never looked at, is
/// left out), a subtree read whole, and a value that is not an object whole. Each value
/// converted costs as in [`to_val`].
fn to_val_within(
    v: &Value,
    footprint: &Footprint,
    depth: usize,
    meter: &Meter<'_>,
) -> Result<Val, JqFailure> {
    let Value::Object(m) = v else { return to_val(v, depth, meter) };
    if footprint.whole {
        return to_val(v, depth, meter);
    }
    visit(depth, meter)?;
    let mut map = jaq_json::Map::default();
    for (k, inner) in &footprint.keys {
        if !inner.whole && inner.keys.is_empty() {
            continue;
        }
        if let Some(x) = m.get(k) {
            map.insert(Val::from(k.clone()), to_val_within(x, inner, depth + 1, meter)?);
        }
    }
    Ok(Val::obj(map))
}

/// Charges what [`to_val_within`] charges converting `v`, in the same order, converting
/// nothing.
fn charge_within(
    v: &Value,
    footprint: &Footprint,
    depth: usize,
    meter: &Meter<'_>,
) -> Result<(), JqFailure> {
    let Value::Object(m) = v else { return charge_whole(v, depth, meter) };
    if footprint.whole {
        return charge_whole(v, depth, meter);
    }
    visit(depth, meter)?;
    for (k, inner) in &footprint.keys {
        if !inner.whole && inner.keys.is_empty() {
            continue;
        }
        if let Some(x) = m.get(k) {
            charge_within(x, inner, depth + 1, meter)?;
        }
    }
    Ok(())
}

/// Charges what [`to_val`] charges converting `v`, in the same order, converting nothing.
fn charge_whole(v: &Value, depth: usize, meter: &Meter<'_>) -> Result<(), JqFailure> {
    visit(depth, meter)?;
    match v {
        Value::String(s) => charge_string(s, meter),
        Value::Array(a) => a.iter().try_for_each(|x| charge_whole(x, depth + 1, meter)),
        Value::Object(m) => m.values().try_for_each(|x| charge_whole(x, depth + 1, meter)),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// Charges a string's bytes.
fn charge_string(s: &str, meter: &Meter<'_>) -> Result<(), JqFailure> {
    let units = u64::try_from(s.len()).unwrap_or(u64::MAX) / STRING_BYTES_PER_UNIT;
    meter.charge(units).map_err(|r| meter.failure(r))
}

/// Charges one value at `depth`, or stops at a depth past [`MAX_DOC_DEPTH`].
fn visit(depth: usize, meter: &Meter<'_>) -> Result<(), JqFailure> {
    if depth > MAX_DOC_DEPTH {
        return Err(JqFailure::Limit(format!(
            "the object is nested deeper than {MAX_DOC_DEPTH} levels"
        )));
    }
    meter.charge(VALUE_UNITS).map_err(|r| meter.failure(r))
}

fn to_val(v: &Value, depth: usize, meter: &Meter<'_>) -> Result<Val, JqFailure> {
    visit(depth, meter)?;
    Ok(match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::from(*b),
        Value::Number(n) => match n.as_i64().and_then(|i| isize::try_from(i).ok()) {
            Some(i) => Val::from(i),
            None => Val::Num(jaq_json::Num::from_dec_str(&n.to_string())),
        },
        Value::String(s) => {
            charge_string(s, meter)?;
            Val::from(s.clone())
        }
        Value::Array(a) => a
            .iter()
            .map(|x| to_val(x, depth + 1, meter))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .collect(),
        Value::Object(m) => {
            let mut map = jaq_json::Map::default();
            for (k, x) in m {
                map.insert(Val::from(k.clone()), to_val(x, depth + 1, meter)?);
            }
            Val::obj(map)
        }
    })
}

fn from_path(path: &Val) -> Result<Vec<PathPart>, String> {
    let Val::Arr(parts) = path else {
        return Err(format!("path is not an array: {path}"));
    };
    parts.iter().map(part_of).collect()
}

fn int_of(v: &Val) -> Option<i64> {
    match v {
        Val::Num(n) => n.as_isize().and_then(|i| i64::try_from(i).ok()),
        _ => None,
    }
}

fn part_of(v: &Val) -> Result<PathPart, String> {
    match v {
        Val::TStr(b) | Val::BStr(b) => Ok(PathPart::Key(String::from_utf8_lossy(b).into_owned())),
        Val::Num(_) => {
            int_of(v).map(PathPart::Index).ok_or_else(|| format!("cannot index an array with {v}"))
        }
        Val::Obj(m) => {
            let bound = |key: &str| match m.get(&Val::from(key.to_string())) {
                None | Some(Val::Null) => Ok(None),
                Some(x) => {
                    int_of(x).map(Some).ok_or_else(|| format!("cannot slice an array with {x}"))
                }
            };
            Ok(PathPart::Slice(bound("start")?, bound("end")?))
        }
        other => Err(format!("cannot use {other} as a path step")),
    }
}
