//! Path expressions of key steps and iterations only (`.spec.volumeClaimTemplates[]?.status`),
//! evaluated on the object itself instead of through jaq.
//!
//! Such an expression's paths follow from jaq's own rules for its two kinds of step
//! (jaq-core `path::Part::paths`, jaq-json `Val::index` and `Val::key_values`):
//!
//! - a key step `.k` on an object gives the value at `k`, or `null` when there is none; on
//!   `null` it gives `null`; on anything else it fails;
//! - an iteration `.[]` on an array gives each element with its index, on an object each value
//!   with its key in the object's order (the converted object keeps serde_json's order); on
//!   anything else, `null` included, it fails;
//! - a step marked `?` drops its failures; a failure of an unmarked step ends the evaluation
//!   with an error.
//!
//! Only the answers without an error are given here: wherever an unmarked step would fail,
//! [`SimplePath::paths`] gives up (`None`) and the caller runs jaq, which words the error. So
//! the paths are jaq's, in jaq's order, checked by a property test against jaq itself.

use jaq_core::load::parse::Term;
use jaq_core::path::{Opt, Part};
use serde_json::Value;

use super::{PathPart, literal_text};

/// One step of a [`SimplePath`].
#[derive(Debug, Clone)]
enum Step {
    /// `.k`, `."k"`, `.["k"]`.
    Key(String),
    /// `.[]`.
    Each,
}

/// A path expression made of key steps and iterations from the input, each maybe marked `?`.
#[derive(Debug, Clone)]
pub(crate) struct SimplePath(Vec<(Step, Opt)>);

impl SimplePath {
    /// The expression as a simple path, when it is one.
    pub(crate) fn of(t: &Term<&str>) -> Option<SimplePath> {
        let Term::Path(base, path) = t else { return None };
        if !matches!(**base, Term::Id) || path.0.is_empty() {
            return None;
        }
        let steps = path.0.iter().map(|(part, opt)| {
            let step = match part {
                Part::Index(key) => Step::Key(literal_text(key)?),
                Part::Range(None, None) => Step::Each,
                Part::Range(..) => return None,
            };
            Some((step, *opt))
        });
        steps.collect::<Option<Vec<_>>>().map(SimplePath)
    }

    /// The paths the expression selects in `doc`, in jaq's order; `None` when an unmarked step
    /// fails (jaq's error is then the answer) or when there are more than `most`.
    pub(crate) fn paths(&self, doc: &Value, most: usize) -> Option<Vec<Vec<PathPart>>> {
        let mut out = Vec::new();
        let mut prefix = Vec::with_capacity(self.0.len());
        walk(doc, &self.0, &mut prefix, &mut out, most)?;
        Some(out)
    }
}

/// The paths of `steps` from `v` (reached by `prefix`) appended to `out`; `None` on a failure
/// of an unmarked step or past `most` paths.
fn walk(
    v: &Value,
    steps: &[(Step, Opt)],
    prefix: &mut Vec<PathPart>,
    out: &mut Vec<Vec<PathPart>>,
    most: usize,
) -> Option<()> {
    let Some(((step, opt), rest)) = steps.split_first() else {
        if out.len() == most {
            return None;
        }
        out.push(prefix.clone());
        return Some(());
    };
    let mut down = |part: PathPart, next: &Value, prefix: &mut Vec<PathPart>| {
        prefix.push(part);
        let r = walk(next, rest, prefix, out, most);
        prefix.pop();
        r
    };
    match (step, v) {
        (Step::Key(k), Value::Object(m)) => {
            down(PathPart::Key(k.clone()), m.get(k).unwrap_or(&Value::Null), prefix)
        }
        (Step::Key(k), Value::Null) => down(PathPart::Key(k.clone()), &Value::Null, prefix),
        (Step::Each, Value::Array(a)) => {
            for (i, e) in a.iter().enumerate() {
                down(PathPart::Index(i64::try_from(i).ok()?), e, prefix)?;
            }
            Some(())
        }
        (Step::Each, Value::Object(m)) => {
            for (k, e) in m {
                down(PathPart::Key(k.clone()), e, prefix)?;
            }
            Some(())
        }
        // The step fails on this value: `?` drops the failure, else jaq words the error.
        (_, _) => match opt {
            Opt::Optional => Some(()),
            Opt::Essential => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use jaq_core::load::{Lexer, Parser};
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::SimplePath;
    use crate::script::jq::{JqBudget, compile};

    fn simple(expr: &str) -> Option<SimplePath> {
        let tokens = Lexer::new(expr).lex().unwrap();
        let term = Parser::new(&tokens).parse(|p| p.term()).unwrap();
        SimplePath::of(&term)
    }

    #[test]
    fn key_steps_and_iterations_only() {
        for e in [".spec.volumeClaimTemplates[]?.status", ".a", ".\"a/b\".c?", ".[\"x\"][][]?"] {
            assert!(simple(e).is_some(), "{e}");
        }
        for e in [".", ".a[0]", ".a[1:]", ".a | .b", "(.a)?", ".a // .b", "..", ".[.a]", "first"] {
            assert!(simple(e).is_none(), "{e}");
        }
    }

    #[test]
    fn the_bench_rule_is_evaluated_here() {
        let p = compile(".spec.volumeClaimTemplates[]?.status").unwrap();
        let doc = json!({"spec": {"volumeClaimTemplates": [{"status": {"phase": "Pending"}}, {}]}});
        let fast = p.simple_paths(&doc, JqBudget::default()).expect("a simple path");
        assert_eq!(Ok(fast.clone()), p.jaq_paths(&doc, JqBudget::default()));
        assert_eq!(fast.len(), 2);
        // No claim templates: nothing selected, no error (`[]?` on null).
        assert_eq!(p.simple_paths(&json!({"spec": {}}), JqBudget::default()), Some(vec![]));
        // An unmarked step that fails is left to jaq, which words the error.
        let p = compile(".spec.x[]").unwrap();
        assert_eq!(p.simple_paths(&json!({"spec": {}}), JqBudget::default()), None);
        assert!(p.paths_within(&json!({"spec": {}}), JqBudget::default()).is_err());
    }

    const KEYS: &[&str] = &["a", "b", "spec"];

    fn doc() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..3).prop_map(Value::from),
            prop::sample::select(&["a", "spec", "a long string of more than sixteen bytes"][..])
                .prop_map(Value::from),
        ];
        let object = |inner| {
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|kvs| {
                Value::Object(
                    kvs.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>(),
                )
            })
        };
        let value = leaf.prop_recursive(5, 40, 4, move |inner| {
            prop_oneof![
                1 => prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                3 => object(inner),
            ]
        });
        object(value.boxed())
    }

    fn expr() -> impl Strategy<Value = String> {
        let step = prop_oneof![
            prop::sample::select(KEYS).prop_map(|k| format!(".{k}")),
            prop::sample::select(KEYS).prop_map(|k| format!(".[\"{k}\"]")),
            Just(".[]".to_string()),
        ];
        prop::collection::vec((step, any::<bool>()), 1..5).prop_map(|steps| {
            steps.into_iter().map(|(s, opt)| if opt { format!("{s}?") } else { s }).collect()
        })
    }

    proptest! {
        #![proptest_config(crate::tests::support::cases(1024))]

        /// Wherever the simple evaluation answers, it answers what jaq does, on the same
        /// budget: the same paths in the same order, and the same units spent (so the same
        /// limits stop both).
        #[test]
        fn simple_paths_are_jaqs(e in expr(), d in doc(), units in 0u64..400) {
            let p = compile(&e).unwrap();
            prop_assert!(p.is_simple(), "{}", e);
            for budget in [JqBudget::default(), JqBudget { units, interrupt: None }] {
                let jaq = p.jaq_paths(&d, budget);
                match p.simple_paths(&d, budget) {
                    Some(paths) => prop_assert_eq!(Ok(paths), jaq, "{} on {}", e, d),
                    // Given up: only where jaq fails (an unmarked step, a limit).
                    None => prop_assert!(jaq.is_err(), "{} on {}: {:?}", e, d, jaq),
                }
                prop_assert_eq!(p.paths_within(&d, budget), p.jaq_paths(&d, budget));
            }
        }
    }
}
