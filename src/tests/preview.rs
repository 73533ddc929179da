//! Pull-request previews: the exact cases of `testdata/preview/` and the worked example of
//! `examples/preview/`, whose Markdown is committed.

use std::path::Path;

use crate::preview::{Preview, PreviewInput, Verdict};
use crate::sync::BlastRadiusGuard;
use crate::{config::Application, config::Settings, object::parse_manifests};
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
struct File<C> {
    cases: Vec<C>,
}

/// The cases of every file directly below `dir` of `testdata/`.
fn read_cases<C: serde::de::DeserializeOwned>(dir: &str) -> Vec<C> {
    let mut out = Vec::new();
    for path in yaml_files(&[dir]) {
        let text = std::fs::read_to_string(&path).expect("read case file");
        let file: File<C> =
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.extend(file.cases);
    }
    out
}

/// A case's app: `shop`, destination namespace `shop`, unless the case gives one.
fn app_of(doc: Option<&Value>) -> Application {
    let default =
        json!({"metadata": {"name": "shop"}, "spec": {"destination": {"namespace": "shop"}}});
    Application::from_value(doc.unwrap_or(&default)).expect("case app")
}

fn preview_of(case: &Case) -> Preview {
    let app = app_of(case.app.as_ref());
    let settings = Settings::default();
    let guard = BlastRadiusGuard::default();
    let mut input = PreviewInput::new(&app, &settings, &case.base, &case.head, &guard);
    if let Some(live) = &case.live {
        input = input.with_live(live);
    }
    Preview::new(vec![input.compare().unwrap_or_else(|e| panic!("{}: {e}", case.name))])
}

#[test]
fn preview_cases() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in read_cases::<Case>("preview").iter().filter(|c| selected(&c.name)) {
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
    let preview = Preview::new(vec![input.compare().expect("compare")]);
    let markdown = preview.render_markdown(Preview::DEFAULT_MAX_MARKDOWN_BYTES);
    let expected = std::fs::read_to_string(root.join("preview.md")).expect("preview.md");
    assert_eq!(markdown, expected);
    assert_eq!(preview.verdict(), Verdict::Changes);
    // Secret values never show.
    for secret in ["s3cret-old", "s3cret-new"] {
        assert!(!markdown.contains(secret), "{secret:?} shows");
    }
}

/// A case of `testdata/preview/markdown/`: hostile input, and what its Markdown must not do.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MarkdownCase {
    name: String,
    #[serde(default)]
    app: Option<Value>,
    base: Vec<Value>,
    head: Vec<Value>,
    #[serde(default)]
    added: usize,
    /// The kind of the added objects (default ConfigMap).
    #[serde(default)]
    added_kind: Option<String>,
    #[serde(default)]
    max_bytes: Option<usize>,
    #[serde(default)]
    shows: Vec<String>,
    #[serde(default)]
    last_line: Option<String>,
}

/// The preview's own tags, the only HTML its Markdown may hold.
const OWN_TAGS: [&str; 6] =
    ["<details>", "</details>", "<summary>", "</summary>", "<code>", "</code>"];

/// The text an HTML fragment shows: its own tags dropped, character references decoded.
fn html_text(html: &str) -> String {
    let mut s = html.to_string();
    for tag in OWN_TAGS {
        s = s.replace(tag, "");
    }
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let c = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            e => e.strip_prefix('#').and_then(|n| n.parse().ok()).and_then(char::from_u32),
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// What is wrong with `markdown` as the comment of `preview`: input-made tags, comments,
/// headings, links or images, a broken table or Mermaid label, a missing text.
fn markdown_problems(markdown: &str, preview: &Preview, case: &MarkdownCase) -> Vec<String> {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

    let mut problems = Vec::new();
    let mut headings: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    let mut text = String::new();
    let (mut opened, mut closed) = (0, 0);
    let mut cells: Option<usize> = None;
    // The first cell of a row of the summary table: an app's name.
    let mut first_cell: Option<String> = None;
    let mut in_first = false;
    let apps: Vec<&str> = preview.apps.iter().map(|a| a.app.as_str()).collect();
    let mut block: Option<String> = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => {
                let mut rest = h.to_string();
                opened += rest.matches("<details>").count();
                closed += rest.matches("</details>").count();
                for tag in OWN_TAGS {
                    rest = rest.replace(tag, "");
                }
                if rest.contains('<') {
                    problems.push(format!("HTML made of input: {h:?}"));
                }
                text.push_str(&html_text(&h));
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => {
                problems.push("a link or an image".to_string());
            }
            Event::Start(Tag::TableRow | Tag::TableHead) => cells = Some(0),
            Event::Start(Tag::TableCell) => {
                let n = cells.get_or_insert(0);
                *n += 1;
                in_first = *n == 1;
            }
            Event::End(TagEnd::TableCell) => in_first = false,
            Event::End(TagEnd::TableHead) => {
                first_cell = None;
                cells = None;
            }
            Event::End(TagEnd::TableRow) => {
                if cells.take() != Some(8) {
                    problems.push("a table row without its 8 cells".to_string());
                }
                let first = first_cell.take().unwrap_or_default();
                if !apps.contains(&first.as_str()) {
                    problems.push(format!("a table row of app {first:?}"));
                }
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) => {
                block = Some(lang.to_string()).filter(|l| l == "mermaid");
            }
            Event::End(TagEnd::CodeBlock) => block = None,
            Event::Text(t) | Event::Code(t) => {
                if block.is_some() {
                    for line in t.lines() {
                        let node = line
                            .strip_prefix("  w")
                            .and_then(|l| l.split_once("[\""))
                            .and_then(|(n, label)| Some((n, label.strip_suffix("\"]")?)));
                        let digits =
                            |n: &str| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit());
                        let ok = line == "flowchart LR"
                            || node.is_some_and(|(n, label)| {
                                digits(n)
                                    && !label
                                        .replace("<br/>", "")
                                        .contains(['"', '[', ']', '<', '>'].as_slice())
                            })
                            || line.strip_prefix("  w").is_some_and(|l| {
                                l.split_once(" --> w").is_some_and(|(a, b)| digits(a) && digits(b))
                            });
                        if !ok {
                            problems.push(format!("a Mermaid line made of input: {line:?}"));
                        }
                    }
                }
                if let Some(h) = &mut heading {
                    h.push_str(&t);
                }
                if in_first {
                    first_cell.get_or_insert_with(String::new).push_str(&t);
                }
                text.push_str(&t);
            }
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            _ => {}
        }
    }
    if opened != closed {
        problems.push(format!("{opened} <details> but {closed} </details>"));
    }
    let allowed: Vec<&str> =
        ["gitops-core preview", "Warnings"].into_iter().chain(apps.iter().copied()).collect();
    for h in &headings {
        if !allowed.contains(&h.as_str()) {
            problems.push(format!("a heading made of input: {h:?}"));
        }
    }
    if headings.len() > allowed.len() {
        problems.push(format!("{} headings", headings.len()));
    }
    for s in &case.shows {
        if !text.contains(s.as_str()) {
            problems.push(format!("does not show {s:?}"));
        }
    }
    let max = case.max_bytes.unwrap_or(Preview::DEFAULT_MAX_MARKDOWN_BYTES);
    if markdown.len() > max {
        problems.push(format!("{} bytes, over {max}", markdown.len()));
    }
    if let Some(last) = &case.last_line
        && markdown.lines().last() != Some(last.as_str())
    {
        problems.push(format!("last line {:?}", markdown.lines().last()));
    }
    problems
}

#[test]
fn preview_markdown_of_hostile_input() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in read_cases::<MarkdownCase>("preview/markdown").iter().filter(|c| selected(&c.name))
    {
        ran += 1;
        let app = app_of(case.app.as_ref());
        let mut head = case.head.clone();
        head.extend((0..case.added).map(|i| {
            let kind = case.added_kind.as_deref().unwrap_or("ConfigMap");
            json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": format!("cm-{i}")}})
        }));
        let (settings, guard) = (Settings::default(), BlastRadiusGuard::default());
        let input = PreviewInput::new(&app, &settings, &case.base, &head, &guard);
        let preview =
            Preview::new(vec![input.compare().unwrap_or_else(|e| panic!("{}: {e}", case.name))]);
        let markdown =
            preview.render_markdown(case.max_bytes.unwrap_or(Preview::DEFAULT_MAX_MARKDOWN_BYTES));
        let problems = markdown_problems(&markdown, &preview, case);
        if !problems.is_empty() {
            failures.push(format!("{}: {}\n{markdown}", case.name, problems.join("; ")));
        }
    }
    assert!(ran > 0 || std::env::var("GITOPS_TEST").is_ok(), "no Markdown cases ran");
    assert!(failures.is_empty(), "{} failed:\n{}", failures.len(), failures.join("\n\n"));
}
