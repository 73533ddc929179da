//! Line diffs: the classic `diff` output format, which `argocd app diff` prints (it runs
//! `diff` on the live and the target YAML), and the unified format of `diff -u`, which
//! `kubectl diff` prints.

/// The lines of `old` and `new` that differ, in the unified format of `diff -u`: a `--- OLD`
/// and a `+++ NEW` line naming the two sides, then hunks headed `@@ -l,s +l,s @@` with up to
/// three lines of context around the changes, removed lines prefixed `-`, added ones `+`,
/// kept ones a space. Empty when the texts have the same lines.
///
/// The alignment is Myers' (the `similar` crate), with no time limit, so the output is
/// deterministic.
pub(crate) fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

/// The lines of `old` and `new` that differ, in the classic `diff` format: hunks headed
/// `3c3`, `5a6,7`, `9d8`, removed lines prefixed `< `, added lines `> `, a `---` between the
/// two halves of a change. Empty when the texts have the same lines.
///
/// The alignment is a longest common subsequence of lines (after trimming the common head
/// and tail), so the output is deterministic.
pub(crate) fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut head = 0;
    while head < a.len() && head < b.len() && a[head] == b[head] {
        head += 1;
    }
    let mut tail = 0;
    while tail < a.len() - head
        && tail < b.len() - head
        && a[a.len() - 1 - tail] == b[b.len() - 1 - tail]
    {
        tail += 1;
    }
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    // lcs[i][j] = length of the LCS of ma[i..] and mb[j..].
    let w = mb.len() + 1;
    let mut lcs = vec![0u32; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            lcs[i * w + j] = if ma[i] == mb[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < ma.len() || j < mb.len() {
        if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
            i += 1;
            j += 1;
            continue;
        }
        let (si, sj) = (i, j);
        while (i < ma.len() || j < mb.len()) && !(i < ma.len() && j < mb.len() && ma[i] == mb[j]) {
            if j >= mb.len() || (i < ma.len() && lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                i += 1;
            } else {
                j += 1;
            }
        }
        hunk(&mut out, &ma[si..i], &mb[sj..j], head + si, head + sj);
    }
    out
}

fn range(start: usize, len: usize) -> String {
    // `start` is 0-based; ranges print 1-based and inclusive.
    if len == 1 { format!("{}", start + 1) } else { format!("{},{}", start + 1, start + len) }
}

fn hunk(out: &mut String, del: &[&str], add: &[&str], at_a: usize, at_b: usize) {
    use std::fmt::Write;
    let header = match (del.is_empty(), add.is_empty()) {
        (false, true) => format!("{}d{}", range(at_a, del.len()), at_b),
        (true, false) => format!("{}a{}", at_a, range(at_b, add.len())),
        _ => format!("{}c{}", range(at_a, del.len()), range(at_b, add.len())),
    };
    let _ = writeln!(out, "{header}");
    for l in del {
        let _ = writeln!(out, "< {l}");
    }
    if !del.is_empty() && !add.is_empty() {
        out.push_str("---\n");
    }
    for l in add {
        let _ = writeln!(out, "> {l}");
    }
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn classic_format() {
        assert_eq!(line_diff("a\nb\n", "a\nb\n"), "");
        assert_eq!(line_diff("a\nb\nc\n", "a\nc\n"), "2d1\n< b\n");
        assert_eq!(line_diff("a\nc\n", "a\nb\nc\n"), "1a2\n> b\n");
        assert_eq!(line_diff("", "x\ny\n"), "0a1,2\n> x\n> y\n");
        assert_eq!(line_diff("x\ny\n", ""), "1,2d0\n< x\n< y\n");
        assert_eq!(
            line_diff("a\nb\nc\nd\n", "a\nx\nc\ny\n"),
            "2c2\n< b\n---\n> x\n4c4\n< d\n---\n> y\n"
        );
    }
}

#[cfg(test)]
mod unified {
    use serde_json::json;

    use crate::diff::{AppDiffInput, DiffError, ObjectText, diff_app, unified_diff};
    use crate::{config::Application, config::Settings, object::ObjectRef, object::Scopes};

    fn text(
        group: &str,
        namespace: &str,
        name: &str,
        live: Option<&str>,
        merged: Option<&str>,
    ) -> ObjectText {
        let object = ObjectRef {
            group: group.into(),
            version: "v1".into(),
            kind: "Thing".into(),
            namespace: namespace.into(),
            name: name.into(),
        };
        ObjectText { object, live: live.map(Into::into), merged: merged.map(Into::into) }
    }

    #[test]
    fn unified_format() {
        assert_eq!(unified_diff("a\n", "a\n", "x", "y"), "");
        assert_eq!(unified_diff("", "a\nb\n", "x", "y"), "--- x\n+++ y\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert_eq!(unified_diff("a\n", "", "x", "y"), "--- x\n+++ y\n@@ -1 +0,0 @@\n-a\n");
        // Changes more than six lines apart make two hunks of three context lines.
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "x\n2\n3\n4\n5\n6\n7\n8\n9\ny\n";
        assert_eq!(
            unified_diff(old, new, "x", "y"),
            "--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+y\n"
        );
    }

    #[test]
    fn object_texts() {
        let t = text("apps", "shop", "web", None, Some("a: 1\n"));
        assert_eq!(t.file_name(), "apps.v1.Thing.shop.web");
        assert_eq!(
            t.unified(),
            "diff -u -N live/apps.v1.Thing.shop.web merged/apps.v1.Thing.shop.web\n\
             --- live/apps.v1.Thing.shop.web\n+++ merged/apps.v1.Thing.shop.web\n@@ -0,0 +1 @@\n+a: 1\n"
        );
        assert_eq!(t.classic(), "===== apps/Thing shop/web ======\n0a1\n> a: 1\n");
        let t = text("", "", "all", Some("a: 1\n"), Some("a: 1\n"));
        assert_eq!(t.file_name(), "v1.Thing..all");
        assert_eq!(t.unified(), "");
        // A line break in a hostile name stays escaped on the header lines.
        let t = text("", "shop", "a\n+++ b", Some("a: 1\n"), None);
        assert!(
            t.hunks().starts_with("--- live/v1.Thing.shop.a\\n+++ b\n+++ merged/"),
            "{}",
            t.hunks()
        );
    }

    #[test]
    fn texts_need_the_objects() {
        let desired = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "shop"}, "data": {"k": "1"}})];
        let (app, settings, scopes) =
            (Application::default(), Settings::default(), Scopes::builtin());
        let input = AppDiffInput::new(&desired, &[], &app, &settings, &scopes);
        let out = diff_app(&input).expect("compares");
        assert_eq!(out.render_text(), Err(DiffError::ObjectsNotKept));
        assert_eq!(out.render_unified(), Err(DiffError::ObjectsNotKept));
        assert_eq!(
            DiffError::ObjectsNotKept.to_string(),
            "the text diff needs the normalised and predicted objects, which this comparison did \
             not keep: compare with AppDiffInput::with_objects(true)"
        );
        let out = diff_app(&input.with_objects(true)).expect("compares");
        assert!(
            out.render_unified().expect("kept").starts_with("diff -u -N live/v1.ConfigMap.shop.a ")
        );
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    /// Applies classic-format hunks to `old`.
    fn apply(old: &[&str], diff: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut pos = 0; // next old line (0-based) not yet copied
        let mut lines = diff.lines().peekable();
        while let Some(header) = lines.next() {
            let op = header.find(['a', 'c', 'd']).expect("hunk header");
            let first: usize =
                header[..op].split(',').next().and_then(|n| n.parse().ok()).expect("start");
            let last: usize =
                header[..op].split(',').nth(1).and_then(|n| n.parse().ok()).unwrap_or(first);
            let (copy_to, skip) = match &header[op..op + 1] {
                "a" => (first, 0),
                _ => (first - 1, last - first + 1),
            };
            out.extend(old[pos..copy_to].iter().map(|s| s.to_string()));
            pos = copy_to + skip;
            while let Some(l) = lines.peek() {
                if let Some(added) = l.strip_prefix("> ") {
                    out.push(added.to_string());
                } else if !(l.starts_with("< ") || *l == "---") {
                    break;
                }
                lines.next();
            }
        }
        out.extend(old[pos..].iter().map(|s| s.to_string()));
        out
    }

    proptest! {
        #[test]
        fn diff_applies_back(a in prop::collection::vec("[abc]", 0..12),
                             b in prop::collection::vec("[abcd]", 0..12)) {
            let old = a.iter().map(|s| format!("{s}\n")).collect::<String>();
            let new = b.iter().map(|s| format!("{s}\n")).collect::<String>();
            let d = super::line_diff(&old, &new);
            let old_lines: Vec<&str> = old.lines().collect();
            prop_assert_eq!(apply(&old_lines, &d), b.clone());
            prop_assert_eq!(d.is_empty(), a == b);
        }
    }
}
