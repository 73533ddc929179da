//! The part of an object a path expression can look at, worked out from its syntax tree once,
//! when the rule is compiled.
//!
//! An accepted expression has no variables, no `$__loc__`, no `getpath` and no `input`: it
//! reaches the values of the object only by walking down from its input. A static key step
//! (`.spec`, `."a"`, `.["a"]`) goes to one known place; everything else (`.[]`, `.[0]`, `..`,
//! a slice, a filter such as `first` or `has`) may look anywhere below the value it runs on.
//! So the expression's footprint is a set of key paths from the root: some *read* (the
//! expression may look at anything below them: their whole subtree is needed) and some only
//! *walked through* (the expression steps into them by key, so the objects on the way must be
//! there, with the keys it steps through, but nothing else of them is looked at).
//!
//! The evaluator (`run`) converts only the footprint into jq values: each object on a walked
//! path with only the keys walked through it, each read subtree whole, and every value that is
//! not an object where a walk steps through it whole too (so that jq's own error on it, such as
//! indexing a string, is the same). The paths the expression selects in that partial copy are
//! the paths it selects in the whole object, with the same errors, in the same order: the
//! parts left out are parts it never looks at.
//!
//! Errors count as looking: where a path is expected (`path(E)` evaluates `E` for its paths),
//! a term that computes a value (a literal, a comparison, `true`) fails with an error showing
//! its whole input, so it reads that input whole.
//!
//! The analysis is conservative: a construct it does not follow counts as reading everything
//! below the value it runs on, and a footprint of more than [`MAX_FOOTPRINT_PATHS`] paths is
//! the whole object. A property test checks that paths and errors on the footprint are those
//! on the whole object.

use std::collections::BTreeMap;

use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::path::Part;

use super::literal_text;

/// Most paths a footprint tracks before it becomes the whole object.
pub(crate) const MAX_FOOTPRINT_PATHS: usize = 256;

/// A key path from the value a term runs on.
type KeyPath = Vec<String>;

/// The places below the root an expression walks to or reads, as a tree of keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    /// Everything below this node may be read.
    pub(crate) whole: bool,
    /// The keys walked through this node (empty when `whole`).
    pub(crate) keys: BTreeMap<String, Footprint>,
}

impl Footprint {
    /// The whole object.
    pub(crate) fn everything() -> Footprint {
        Footprint { whole: true, keys: BTreeMap::new() }
    }

    /// The footprint of a checked path expression.
    pub(crate) fn of(t: &Term<&str>) -> Footprint {
        let Some(access) = access(t, Mode::Paths) else { return Footprint::everything() };
        let mut root = Footprint::default();
        for p in &access.walked {
            root.insert(p, false);
        }
        for p in &access.read {
            root.insert(p, true);
        }
        root
    }

    /// Whether the expression may look at the value at `path` (keys from the root) or at
    /// anything below it: a node on the way is read whole, or the path is walked to. A value
    /// it may not look at can be absent from the object without changing the paths it
    /// selects, their order or its errors (see the module documentation).
    pub(crate) fn may_look_at(&self, path: &[&str]) -> bool {
        if self.whole {
            return true;
        }
        match path.split_first() {
            None => true,
            Some((first, rest)) => self.keys.get(*first).is_some_and(|f| f.may_look_at(rest)),
        }
    }

    fn insert(&mut self, path: &[String], whole: bool) {
        if self.whole {
            return;
        }
        match path.split_first() {
            None => {
                if whole {
                    self.whole = true;
                    self.keys.clear();
                }
            }
            Some((first, rest)) => self.keys.entry(first.clone()).or_default().insert(rest, whole),
        }
    }
}

/// What a term does to the document, relative to the value it runs on.
#[derive(Debug, Default)]
struct Access {
    /// Places whose whole subtree the term may look at.
    read: Vec<KeyPath>,
    /// Places the term steps into by key (each output's place among them).
    walked: Vec<KeyPath>,
    /// The exact places of the outputs that are values of the document. Outputs at places not
    /// known exactly always lie inside a subtree in `read`; constants and computed values
    /// (a comparison, `length`) have no place.
    at: Vec<KeyPath>,
}

impl Access {
    /// A term that may look at everything below its input and yield any value below it.
    fn everything() -> Access {
        Access { read: vec![Vec::new()], walked: Vec::new(), at: vec![Vec::new()] }
    }

    /// A term that yields constants and looks at nothing.
    fn constant() -> Access {
        Access::default()
    }

    fn size(&self) -> usize {
        self.read.len() + self.walked.len() + self.at.len()
    }

    /// Each place once.
    fn deduplicated(mut self) -> Access {
        for places in [&mut self.read, &mut self.walked, &mut self.at] {
            places.sort();
            places.dedup();
        }
        self
    }

    /// Both terms on the same input (`,`, the operands of a comparison).
    fn union(mut self, other: Access) -> Access {
        self.read.extend(other.read);
        self.walked.extend(other.walked);
        self.at.extend(other.at);
        self
    }

    /// The outputs' values are looked at (a condition, a comparison, `//`): they are read.
    fn looked_at(mut self) -> Access {
        let at = std::mem::take(&mut self.at);
        self.read.extend(at);
        self
    }

    /// `self | next`: `next` runs on each output of `self`.
    fn then(self, next: Access) -> Option<Access> {
        let join = |bases: &[KeyPath], tails: &[KeyPath]| -> Vec<KeyPath> {
            let mut out = Vec::with_capacity(bases.len() * tails.len());
            for b in bases {
                for t in tails {
                    out.push(b.iter().chain(t).cloned().collect());
                }
            }
            out
        };
        let products = self.at.len().saturating_mul(next.size());
        if products > MAX_FOOTPRINT_PATHS {
            return None;
        }
        let mut read = self.read;
        read.extend(join(&self.at, &next.read));
        let mut walked = self.walked;
        walked.extend(join(&self.at, &next.walked));
        let at = join(&self.at, &next.at);
        Some(Access { read, walked, at })
    }
}

/// How a term is evaluated: for its paths (`path(E)` evaluates `E` so, and with it the sides
/// of `|` and `,`, the branches of `if`, the body of `try`), or for its values (conditions,
/// operands of comparisons, the left side of `//`, arguments of filters).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Paths,
    Values,
}

/// The access of a term evaluated in `mode`, or `None` when it is too large to track.
fn access(t: &Term<&str>, mode: Mode) -> Option<Access> {
    let a = match t {
        Term::Id => Access { read: Vec::new(), walked: Vec::new(), at: vec![Vec::new()] },
        // Asked for its paths, a term that computes a value fails with an error that shows
        // its whole input ("invalid path expression with input ...").
        Term::Num(_)
        | Term::Neg(_)
        | Term::Str(..)
        | Term::Arr(_)
        | Term::Obj(_)
        | Term::BinOp(_, BinaryOp::And | BinaryOp::Or | BinaryOp::Cmp(_), _)
            if mode == Mode::Paths =>
        {
            Access { read: vec![Vec::new()], walked: Vec::new(), at: Vec::new() }
        }
        Term::Call(name, args) if mode == Mode::Paths && args.is_empty() && is_constant(name) => {
            Access { read: vec![Vec::new()], walked: Vec::new(), at: Vec::new() }
        }
        Term::Num(_) | Term::Neg(_) => Access::constant(),
        Term::Str(None, _) | Term::Arr(_) | Term::Obj(_) if super::is_literal(t) => {
            Access::constant()
        }
        Term::Path(base, path) => {
            let a = access(base, mode)?;
            let mut tail: KeyPath = Vec::new();
            let mut dynamic = false;
            for (part, _) in &path.0 {
                match part {
                    Part::Index(key) => match literal_text(key) {
                        Some(k) => tail.push(k),
                        None => {
                            dynamic = true;
                            break;
                        }
                    },
                    Part::Range(..) => {
                        dynamic = true;
                        break;
                    }
                }
            }
            // From the first step that is not a key on, anything below may be looked at (and
            // the indices are literals, which look at nothing).
            let read = if dynamic { vec![tail.clone()] } else { Vec::new() };
            a.then(Access { read, walked: vec![tail.clone()], at: vec![tail] })?
        }
        Term::BinOp(l, BinaryOp::Pipe(None), r) => access(l, mode)?.then(access(r, mode)?)?,
        Term::BinOp(l, BinaryOp::Comma, r) => access(l, mode)?.union(access(r, mode)?),
        Term::BinOp(l, BinaryOp::Alt, r) => {
            // `l // r` looks at the values of `l` to decide, then yields those of `l` or `r`.
            // `l` is followed once, in `mode`: asked for paths, it reads all it reads for its
            // values and more, with the same outputs (following it twice per `//` would take
            // time exponential in their nesting).
            let left = access(l, mode)?;
            let looked = left.at.clone();
            let mut a = left.union(access(r, mode)?);
            a.read.extend(looked);
            a
        }
        Term::BinOp(l, BinaryOp::And | BinaryOp::Or | BinaryOp::Cmp(_), r) => {
            access(l, Mode::Values)?.looked_at().union(access(r, Mode::Values)?.looked_at())
        }
        Term::TryCatch(body, None) => access(body, mode)?,
        Term::IfThenElse(branches, otherwise) => {
            let mut a = Access::constant();
            for (cond, then) in branches {
                a = a.union(access(cond, Mode::Values)?.looked_at()).union(access(then, mode)?);
            }
            match otherwise {
                Some(e) => a.union(access(e, mode)?),
                // Without `else`, the input is yielded as it is.
                None => a.union(access(&Term::Id, mode)?),
            }
        }
        Term::Call(name, args) => match (*name, args.as_slice()) {
            ("select", [cond]) => {
                access(cond, Mode::Values)?.looked_at().union(access(&Term::Id, mode)?)
            }
            ("empty", []) => Access::constant(),
            (name, []) if is_constant(name) => Access::constant(),
            // Any other filter may look at its whole input, and its arguments run on it or
            // below it.
            _ => Access::everything(),
        },
        // Outside the subset (rejected by the checker before this runs): everything.
        _ => Access::everything(),
    };
    let a = a.deduplicated();
    if a.size() > MAX_FOOTPRINT_PATHS { None } else { Some(a) }
}

fn is_constant(name: &str) -> bool {
    matches!(name, "true" | "false" | "null")
}

#[cfg(test)]
mod tests {
    use super::*;
    use jaq_core::load::{Lexer, Parser};

    fn footprint(expr: &str) -> Footprint {
        let tokens = Lexer::new(expr).lex().unwrap();
        let term = Parser::new(&tokens).parse(|p| p.term()).unwrap();
        Footprint::of(&term)
    }

    /// The footprint as text: `key` walked, `key*` read whole.
    fn show(f: &Footprint) -> String {
        if f.whole {
            return "*".into();
        }
        let parts: Vec<String> = f
            .keys
            .iter()
            .map(|(k, v)| {
                let inner = show(v);
                if inner.is_empty() { k.clone() } else { format!("{k}{inner}") }
            })
            .collect();
        if parts.is_empty() { String::new() } else { format!("({})", parts.join(" ")) }
    }

    #[test]
    fn static_steps_are_walked_and_the_rest_read() {
        let cases = [
            (".spec.replicas", "(spec(replicas))"),
            (".spec.volumeClaimTemplates[]?.status", "(spec(volumeClaimTemplates*))"),
            (
                ".spec.template.spec.containers[] | select(.name == \"a\") | .env[]",
                "(spec(template(spec(containers*))))",
            ),
            (
                ".metadata.annotations.\"a/b\", .[\"data\"].x",
                "(data(x) metadata(annotations(a/b)))",
            ),
            (".a // .b.c", "(a* b(c))"),
            ("select(.kind == \"X\") | .spec.x", "(kind* spec(x))"),
            ("if .a then .b else .c end", "(a* b c)"),
            (".spec | .template | .x[0]", "(spec(template(x*)))"),
            (".items[0]", "(items*)"),
            (".a | first", "(a*)"),
            ("..|select(type == \"string\")", "*"),
            (".", ""),
            ("empty", ""),
            (".a | select(has(\"b\")) | .c", "(a*)"),
            (".data[] | select(test(.))", "(data*)"),
        ];
        for (expr, want) in cases {
            assert_eq!(show(&footprint(expr)), want, "{expr}");
        }
    }

    /// What the comparison asks before it leaves live's `metadata.managedFields` out of its
    /// working copy: whether a rule's expression may look at that field.
    #[test]
    fn may_look_at_names_what_the_expression_can_reach() {
        let managed = ["metadata", "managedFields"];
        let cases = [
            (".spec.volumeClaimTemplates[]?.status", false),
            (".metadata.annotations.\"a/b\"", false),
            (".spec.replicas", false),
            (".metadata.managedFields", true),
            (".metadata.managedFields[]?.fieldsV1", true),
            (".metadata[]", true),
            (".metadata | first", true),
            ("..|select(type == \"string\")", true),
            // The root's path only (deleting it is an error, the same with or without it).
            (".", false),
        ];
        for (expr, want) in cases {
            assert_eq!(footprint(expr).may_look_at(&managed), want, "{expr}");
        }
        let f = footprint(".spec.volumeClaimTemplates[]?.status");
        assert!(f.may_look_at(&["spec", "volumeClaimTemplates", "0"]));
        assert!(f.may_look_at(&["spec"]));
        assert!(!f.may_look_at(&["spec", "replicas"]));
    }

    #[test]
    fn nested_alternatives_are_followed_once() {
        // 31 levels of `//` nested on the left: a walk that followed each left side twice
        // would take 2^31 steps.
        let expr = (0..31).fold(".k".to_string(), |e, i| format!("({e}) // .k{i}"));
        let f = footprint(&expr);
        // Every left side is looked at; the last right side only yields its path.
        assert_eq!(f.keys.len(), 32);
        assert_eq!(f.keys.values().filter(|k| k.whole).count(), 31);
        assert!(!f.keys["k30"].whole);
    }

    #[test]
    fn large_footprints_are_the_whole_object() {
        let alternatives: Vec<String> = (0..40).map(|i| format!(".k{i}")).collect();
        let expr = format!("({}) | ({})", alternatives.join(", "), alternatives.join(", "));
        assert!(footprint(&expr).whole);
    }

    /// Evaluating on the footprint selects exactly what evaluating on the whole object does,
    /// with the same errors, for expressions built from every construct of the subset.
    mod same_as_whole {
        use crate::script::jq::{JqBudget, compile};
        use proptest::prelude::*;
        use serde_json::{Map, Value};

        const KEYS: &[&str] = &["a", "b", "name", "spec"];

        fn doc() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                (0i64..4).prop_map(Value::from),
                prop::sample::select(&["a", "ab", "b", "spec"][..]).prop_map(Value::from),
            ];
            let object = |inner| {
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kvs| {
                    Value::Object(
                        kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>(),
                    )
                })
            };
            // Mostly objects, as Kubernetes objects are, with arrays and scalars among them.
            let value = leaf.prop_recursive(5, 48, 5, move |inner| {
                prop_oneof![
                    1 => prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    3 => object(inner),
                ]
            });
            object(value.boxed())
        }

        fn expr() -> impl Strategy<Value = String> {
            let atom = prop::sample::select(
                &[
                    ".",
                    ".a",
                    ".b.a",
                    ".spec.name",
                    ".a[]",
                    ".a[]?",
                    ".b?",
                    ".[0]",
                    ".a[1:]",
                    ".a[-1]",
                    "..",
                    "empty",
                    "first",
                    "keys",
                    ".name.a?",
                    ".\"a\"",
                    ".[\"b\"]",
                    "select(.a == 1)",
                    "select(.name | startswith(\"a\"))",
                    "select(has(\"a\"))",
                    "select(.b | not)",
                    "select(type == \"object\")",
                    "select(length > 1)",
                    "select(.a[]? == \"a\")",
                    "select(any(.[]?; . == 1))",
                    "strings",
                    "1",
                    "select(test(\"a\"))",
                    "select(.spec.a // .b)",
                ][..],
            )
            .prop_map(str::to_string);
            atom.prop_recursive(4, 16, 2, |inner| {
                prop_oneof![
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} | {b}")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}), ({b})")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) // ({b})")),
                    (inner.clone(), inner.clone(), inner.clone())
                        .prop_map(|(c, a, b)| format!("if {c} then {a} else {b} end")),
                    inner.clone().prop_map(|a| format!("try ({a})")),
                    inner.clone().prop_map(|a| format!("({a}).a")),
                    inner.prop_map(|a| format!("({a})[]?")),
                ]
            })
        }

        proptest! {
            #![proptest_config(crate::tests::support::cases(512))]

            #[test]
            fn paths_and_errors_are_the_whole_objects(e in expr(), d in doc()) {
                let Ok(p) = compile(&e) else { return Ok(()) };
                let whole = p.with_whole_object();
                let Ok(p) = compile(&e) else { return Ok(()) };
                let budget = JqBudget::default();
                prop_assert_eq!(p.paths_within(&d, budget), whole.paths_within(&d, budget), "{}", e);
            }
        }
    }
}
