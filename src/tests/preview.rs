//! Pull-request previews: the exact cases of `testdata/preview/` and the worked example of
//! `examples/preview/`, whose Markdown is committed.

use std::path::Path;

use crate::preview::{DEFAULT_MAX_MARKDOWN_BYTES, Preview, PreviewInput, Verdict, compare};
use crate::sync::guard::BlastRadiusGuard;
use crate::{Application, Settings, parse_manifests};
use serde::Deserialize;
use serde_json::{Value, json};

use super::support::{selected, yaml_files};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    app: Option<Value>,
    base: Vec<Value>,
    head: Vec<Value>,
    #[serde(default)]
    live: Option<Vec<Value>>,
    verdict: Verdict,
    text: String,
}

#[derive(Deserialize)]
struct File {
    cases: Vec<Case>,
}

fn preview_of(case: &Case) -> Preview {
    let app_doc = case.app.clone().unwrap_or_else(
        || json!({"metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}}),
    );
    let app = Application::from_value(&app_doc).expect("case app");
    let settings = Settings::default();
    let guard = BlastRadiusGuard::default();
    let mut input = PreviewInput::new(&app, &settings, &case.base, &case.head, &guard);
    if let Some(live) = &case.live {
        input = input.with_live(live);
    }
    Preview::new(vec![compare(&input).unwrap_or_else(|e| panic!("{}: {e}", case.name))])
}

#[test]
fn preview_cases() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in yaml_files(&["preview"]) {
        let text = std::fs::read_to_string(&path).expect("read case file");
        let file: File =
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for case in file.cases.iter().filter(|c| selected(&c.name)) {
            ran += 1;
            let preview = preview_of(case);
            let verdict = preview.verdict();
            let text = preview.render_text();
            if verdict != case.verdict || text != case.text {
                failures.push(format!(
                    "{}: verdict {verdict:?} (expected {:?}), text:\n{text}",
                    case.name, case.verdict
                ));
            }
        }
    }
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no preview cases ran");
    assert!(failures.is_empty(), "{} failed:\n{}", failures.len(), failures.join("\n"));
}

/// The objects of every YAML file in a folder of `examples/preview/`, in name order.
fn example_objects(dir: &Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| parse_manifests(&std::fs::read_to_string(f).expect("read")).expect("parse"))
        .collect()
}

/// The README's worked example: the bookstore pull request (image bump, Service removed,
/// PreSync migration Job added, Secret edited) prints the committed Markdown.
#[test]
fn bookstore_pull_request_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/preview");
    let app_text = std::fs::read_to_string(root.join("bookstore.yaml")).expect("app");
    let app_doc = parse_manifests(&app_text).expect("app yaml").remove(0);
    let app = Application::from_value(&app_doc).expect("app");
    let base = example_objects(&root.join("base/bookstore"));
    let head = example_objects(&root.join("head/bookstore"));
    let settings = Settings::default();
    let guard = BlastRadiusGuard::default();
    let input = PreviewInput::new(&app, &settings, &base, &head, &guard);
    let preview = Preview::new(vec![compare(&input).expect("compare")]);
    let markdown = preview.render_markdown(DEFAULT_MAX_MARKDOWN_BYTES);
    let expected = std::fs::read_to_string(root.join("preview.md")).expect("preview.md");
    assert_eq!(markdown, expected);
    assert_eq!(preview.verdict(), Verdict::Changes);
    // Secret values never show.
    for secret in ["s3cret-old", "s3cret-new"] {
        assert!(!markdown.contains(secret), "{secret:?} shows");
    }
}
