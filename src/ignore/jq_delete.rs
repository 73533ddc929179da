//! Deleting the paths a jq expression selects, as jq's `del(E)` (`delpaths([path(E)])`) does:
//! every path is resolved against the document first (negative indices and slices become
//! plain indices), then the paths are deleted longest and highest index first, each once, so
//! earlier deletions never shift later ones.

use serde_json::Value;

use crate::script::jq::{JqBudget, JqFailure, JqPath, PathPart};

/// One resolved step.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Index(usize),
    Key(String),
}

/// Applies `del(E)` to `doc` within `budget`. An error (jaq's, or a limit) leaves the
/// document unchanged.
pub(crate) fn delete(
    doc: &mut Value,
    expr: &JqPath,
    budget: JqBudget<'_>,
) -> Result<(), JqFailure> {
    if expr.is_program() {
        *doc = expr.run_within(doc, budget)?;
        return Ok(());
    }
    let paths = expr.paths_within(doc, budget)?;
    let mut resolved: Vec<Vec<Step>> = Vec::new();
    let mut prefix = Vec::new();
    for path in &paths {
        resolve(doc, path, &mut prefix, &mut resolved);
    }
    if resolved.iter().any(Vec::is_empty) {
        return Err(JqFailure::Eval("cannot delete the whole object".to_string()));
    }
    resolved.sort();
    resolved.dedup();
    for path in resolved.iter().rev() {
        delete_one(doc, path);
    }
    Ok(())
}

/// Resolves `path` against `value` (reached by `prefix`), pushing every concrete path it
/// names (a slice names several; a path through a missing or null value names nothing, as
/// deleting it is a no-op). `prefix` is as it was on return.
fn resolve(value: &Value, path: &[PathPart], prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let Some((first, rest)) = path.split_first() else {
        out.push(prefix.clone());
        return;
    };
    let mut descend = |step: Step, next: Option<&Value>, prefix: &mut Vec<Step>| {
        // An absent value: deleting it does nothing, so the path is dropped.
        if let Some(v) = next {
            prefix.push(step);
            resolve(v, rest, prefix, out);
            prefix.pop();
        }
    };
    match (first, value) {
        (PathPart::Key(k), Value::Object(m)) => {
            if let Some(v) = m.get(k) {
                descend(Step::Key(k.clone()), Some(v), prefix);
            }
        }
        (PathPart::Index(i), Value::Array(a)) => {
            if let Some(abs) = absolute(*i, a.len()) {
                descend(Step::Index(abs), a.get(abs), prefix);
            }
        }
        (PathPart::Slice(from, to), Value::Array(a)) => {
            let len = a.len();
            let start = from.map_or(0, |f| clamp(f, len));
            let end = to.map_or(len, |t| clamp(t, len));
            for i in start..end.max(start) {
                descend(Step::Index(i), a.get(i), prefix);
            }
        }
        // Anything else under null or a mismatched type: nothing to delete.
        _ => {}
    }
}

fn absolute(i: i64, len: usize) -> Option<usize> {
    let len_i = i64::try_from(len).ok()?;
    let abs = if i < 0 { i + len_i } else { i };
    if abs < 0 || abs >= len_i { None } else { usize::try_from(abs).ok() }
}

fn clamp(i: i64, len: usize) -> usize {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let abs = if i < 0 { i + len_i } else { i };
    usize::try_from(abs.clamp(0, len_i)).unwrap_or(len)
}

fn delete_one(doc: &mut Value, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = doc;
    for step in parents {
        let next = match (step, cur) {
            (Step::Key(k), Value::Object(m)) => m.get_mut(k),
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return,
        }
    }
    match (last, cur) {
        (Step::Key(k), Value::Object(m)) => {
            m.remove(k);
        }
        (Step::Index(i), Value::Array(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::jq::compile;
    use serde_json::json;

    fn del(expr: &str, mut doc: Value) -> Value {
        delete(&mut doc, &compile(expr).unwrap(), JqBudget::default()).unwrap();
        doc
    }

    #[test]
    fn jq_del_semantics() {
        assert_eq!(del(".[0], .[0]", json!([1, 2, 3])), json!([2, 3]));
        assert_eq!(del(".[-3], .[2]", json!([1, 2, 3])), json!([2]));
        assert_eq!(del(".[1:]", json!([1, 2, 3])), json!([1]));
        assert_eq!(del(".a, .a.b", json!({"a": {"b": 1}, "c": 2})), json!({"c": 2}));
        assert_eq!(del(".x.y", json!({"c": 2})), json!({"c": 2}));
        assert_eq!(del(".[] | select(. > 1)", json!([1, 2, 3, 1])), json!([1, 1]));
        let mut d = json!({"a": 1});
        assert!(delete(&mut d, &compile(".").unwrap(), JqBudget::default()).is_err());
        assert!(delete(&mut d, &compile(".x[]").unwrap(), JqBudget::default()).is_err());
        assert_eq!(d, json!({"a": 1}));
    }
}
