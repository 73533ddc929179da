//! The preview as Markdown (for a pull-request comment) and as text.

use std::fmt::Write as _;

use super::{AppPreview, Change, Preview, ResourceChange, Verdict};

/// Tasks named per wave in the Mermaid diagram; the rest are counted.
const TASKS_PER_NODE: usize = 6;

fn change_word(r: &ResourceChange) -> String {
    match (r.change, r.prune) {
        (Change::Added, _) => "added".to_string(),
        (Change::Changed, _) => "changed".to_string(),
        (Change::Removed, Some(fate)) => format!("removed, {}", fate.as_str()),
        (Change::Removed, None) => "removed".to_string(),
    }
}

/// Added, changed, removed, pruned and unchanged resources of an app.
fn counts(a: &AppPreview) -> [usize; 5] {
    [
        a.count(Change::Added),
        a.count(Change::Changed),
        a.count(Change::Removed),
        a.guard.prunes.len(),
        a.unchanged,
    ]
}

fn guard_word(a: &AppPreview) -> &'static str {
    if a.guard.allowed { "allowed" } else { "refused" }
}

fn verdict_line(v: Verdict) -> &'static str {
    match v {
        Verdict::NoChange => "Merging this pull request changes nothing.",
        Verdict::Changes => "Merging this pull request changes the resources below.",
        Verdict::NeedsApproval => {
            "**Needs approval**: the blast-radius guard refuses the sync or a protected kind is pruned."
        }
    }
}

/// Text from the input (names, namespaces, kinds, app names, messages) made inert for
/// Markdown and for HTML alike: every character that can start CommonMark or GitHub markup or
/// an HTML tag, entity or comment (`< > & \ ` * _ [ ] | ~ # $ @ !`) and every control
/// character (a line break included) becomes a numeric character reference, which both a
/// Markdown paragraph, a table cell and an HTML block show as the character itself.
pub(super) fn inert(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '$' | '@' | '!' => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for a quoted Mermaid label: letters, digits, spaces and `/:.,=-+_` as they are, every
/// other character as Mermaid's `#code;` entity (so no quote, bracket, line break or markup
/// reaches the diagram's syntax or its HTML).
fn mermaid_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_alphanumeric() && !c.is_control() || " /:.,=-+_".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", u32::from(c));
        }
    }
    out
}

/// Waves drawn as nodes of the Mermaid diagram; the rest are counted in a last node.
const WAVES_PER_DIAGRAM: usize = 40;

/// The head's plan as a Mermaid flowchart, one node per phase and wave.
fn mermaid(app: &AppPreview) -> String {
    let mut out = String::from("```mermaid\nflowchart LR\n");
    let shown = app.plan.len().min(WAVES_PER_DIAGRAM);
    for (i, w) in app.plan.iter().take(shown).enumerate() {
        let mut label = mermaid_text(&format!("{} wave {}", w.phase, w.wave));
        for t in w.tasks.iter().take(TASKS_PER_NODE) {
            label.push_str("<br/>");
            label.push_str(&mermaid_text(t));
        }
        if w.tasks.len() > TASKS_PER_NODE {
            let _ = write!(label, "<br/>and {} more", w.tasks.len() - TASKS_PER_NODE);
        }
        let _ = writeln!(out, "  w{i}[\"{label}\"]");
        if i > 0 {
            let _ = writeln!(out, "  w{} --> w{i}", i - 1);
        }
    }
    if app.plan.len() > shown {
        let _ = writeln!(out, "  w{shown}[\"and {} more waves\"]", app.plan.len() - shown);
        let _ = writeln!(out, "  w{} --> w{shown}", shown - 1);
    }
    out.push_str("```\n");
    out
}

/// A fence of backticks longer than any run of backticks in `text` (at least three), so that
/// no line of the text closes the block.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

/// The unified diff in a ```diff block, which code-hosting sites colour.
fn diff_block(text: &str) -> String {
    let fence = fence_for(text);
    // The text is already in the unified form that ```diff highlights.
    let mut out = format!("{fence}diff\n");
    for line in text.lines() {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{fence}");
    out
}

fn resource_details(r: &ResourceChange) -> String {
    format!(
        "<details><summary>{} <code>{}</code></summary>\n\n{}\n</details>\n\n",
        change_word(r),
        inert(&r.object.to_string()),
        diff_block(&r.text_diff)
    )
}

/// What a Markdown comment may leave out to stay under its size, in the order the closing
/// note names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Warning,
    SummaryRow,
    AppSection,
    Diagram,
    PlanChange,
    ResourceDiff,
}

impl Part {
    fn name(self, n: usize) -> String {
        let (one, many) = match self {
            Part::Warning => ("warning", "warnings"),
            Part::SummaryRow => ("summary row", "summary rows"),
            Part::AppSection => ("app heading", "app headings"),
            Part::Diagram => ("plan diagram", "plan diagrams"),
            Part::PlanChange => ("plan change", "plan changes"),
            Part::ResourceDiff => ("resource diff", "resource diffs"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

/// Room kept at the end of a Markdown comment for the closing note.
const NOTE_ROOM: usize = 400;

/// A Markdown comment written block by block under a size. A block that does not fit is left
/// out and counted, and so is every later block of its kind; warnings may fill at most half
/// the room, so that the summary table and the apps still show. The closing note counts what
/// was left out.
struct Page {
    out: String,
    room: usize,
    max_bytes: usize,
    cut: std::collections::BTreeSet<Part>,
    left_out: std::collections::BTreeMap<Part, usize>,
}

impl Page {
    fn new(max_bytes: usize) -> Page {
        Page {
            out: String::new(),
            room: max_bytes.saturating_sub(NOTE_ROOM),
            max_bytes,
            cut: std::collections::BTreeSet::new(),
            left_out: std::collections::BTreeMap::new(),
        }
    }

    /// Writes `text`, one `part` of the comment, if it fits; whether it was written. A byte
    /// stays free after it, for the blank line that closes a list ([`Page::close`]).
    fn block(&mut self, part: Part, text: &str) -> bool {
        let room = if part == Part::Warning { self.room / 2 } else { self.room };
        if !self.cut.contains(&part) && self.out.len() + text.len() < room {
            self.out.push_str(text);
            true
        } else {
            self.leave(part, 1);
            false
        }
    }

    /// Counts `n` parts of a kind as left out (and every later one of that kind).
    fn leave(&mut self, part: Part, n: usize) {
        if n > 0 {
            self.cut.insert(part);
            *self.left_out.entry(part).or_default() += n;
        }
    }

    /// The blank line that closes a list or table of which a block was written (in the byte
    /// [`Page::block`] kept free).
    fn close(&mut self) {
        self.out.push('\n');
    }

    fn finish(mut self) -> String {
        if !self.left_out.is_empty() {
            let parts: Vec<String> = self.left_out.iter().map(|(p, n)| p.name(*n)).collect();
            let _ = writeln!(
                self.out,
                "_Left out to keep this comment under {} bytes: {}. \
                 `gitops-core preview --output text` prints everything._",
                self.max_bytes,
                parts.join(", ")
            );
        }
        self.out
    }
}

impl Preview {
    /// The default size cap of [`Preview::render_markdown`], in bytes: below the 65,536
    /// characters a GitHub comment holds.
    pub const DEFAULT_MAX_MARKDOWN_BYTES: usize = 60_000;

    /// Markdown for a pull-request comment: the verdict, every warning, a summary table per
    /// app, then per app the head's plan as a Mermaid diagram, how the plan changed, and a
    /// collapsible diff per resource. Everything that comes from the input (names,
    /// namespaces, kinds, app names, messages) is escaped: it shows as text, never as a tag,
    /// a heading, a link or a comment.
    ///
    /// The whole text stays under `max_bytes` (from about 600 bytes up, room for the verdict
    /// and the closing note): the parts (warnings, summary rows, an app's heading, diagram and
    /// plan changes, resource diffs) are written in order; once a part would pass the cap (for
    /// warnings, half of it), it and every later part of its kind are left out, and a closing
    /// note counts them by kind. An app whose heading is left out shows nothing.
    pub fn render_markdown(&self, max_bytes: usize) -> String {
        let mut page = Page::new(max_bytes);
        page.out.push_str("## gitops-core preview\n\n");
        page.out.push_str(verdict_line(self.verdict()));
        page.out.push_str("\n\n");
        let mut wrote = false;
        for a in &self.apps {
            for w in &a.warnings {
                let head = if wrote { "" } else { "### Warnings\n\n" };
                let line = format!("{head}- **{}**: {}\n", inert(&a.app), inert(w));
                wrote |= page.block(Part::Warning, &line);
            }
        }
        if wrote {
            page.close();
        }
        let header = "| App | Added | Changed | Removed | Pruned | Unchanged | Hooks | Guard |\n\
                      |---|---:|---:|---:|---:|---:|---:|---|\n";
        let mut wrote = false;
        for a in &self.apps {
            let [added, changed, removed, pruned, unchanged] = counts(a);
            let row = format!(
                "{}| {} | {added} | {changed} | {removed} | {pruned} | {unchanged} | {} | {} |\n",
                if wrote { "" } else { header },
                inert(&a.app),
                a.hooks,
                guard_word(a)
            );
            wrote |= page.block(Part::SummaryRow, &row);
        }
        if wrote {
            page.close();
        }
        for a in &self.apps {
            let mut head = format!("### {}\n\n", inert(&a.app));
            if !a.has_changes() {
                head.push_str("No change.\n\n");
                page.block(Part::AppSection, &head);
                continue;
            }
            let changes = a.plan_added.len() + a.plan_removed.len();
            if !page.block(Part::AppSection, &head) {
                // An app's parts show only under its heading.
                page.leave(Part::Diagram, 1);
                page.leave(Part::PlanChange, changes);
                page.leave(Part::ResourceDiff, a.resources.len());
                continue;
            }
            let diagram = format!(
                "Sync plan of the head (phases and waves in run order):\n\n{}\n",
                mermaid(a)
            );
            page.block(Part::Diagram, &diagram);
            let mut wrote = false;
            let lines = a.plan_added.iter().map(|t| ("new", t));
            for (what, t) in lines.chain(a.plan_removed.iter().map(|t| ("gone", t))) {
                let intro = if wrote { "" } else { "Plan changes against the base:\n\n" };
                let line = format!("{intro}- {what}: {}\n", inert(t));
                wrote |= page.block(Part::PlanChange, &line);
            }
            if wrote {
                page.close();
            }
            for r in &a.resources {
                page.block(Part::ResourceDiff, &resource_details(r));
            }
        }
        page.finish()
    }

    /// Plain text: per app the warnings, the counts, the plan by wave, and every resource
    /// diff.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for a in &self.apps {
            let [added, changed, removed, pruned, unchanged] = counts(a);
            let _ = writeln!(
                out,
                "app {}: {added} added, {changed} changed, {removed} removed, {pruned} pruned, \
                 {unchanged} unchanged, guard {}",
                a.app,
                guard_word(a)
            );
            for w in &a.warnings {
                let _ = writeln!(out, "warning: {w}");
            }
            for w in &a.plan {
                let _ = writeln!(out, "plan {} wave {}: {}", w.phase, w.wave, w.tasks.join(", "));
            }
            for t in &a.plan_added {
                let _ = writeln!(out, "plan new: {t}");
            }
            for t in &a.plan_removed {
                let _ = writeln!(out, "plan gone: {t}");
            }
            for r in &a.resources {
                let _ = writeln!(out, "===== {} ({}) =====", r.object, change_word(r));
                out.push_str(&r.text_diff);
            }
        }
        out.push_str(match self.verdict() {
            Verdict::NoChange => "verdict: no change\n",
            Verdict::Changes => "verdict: changes\n",
            Verdict::NeedsApproval => "verdict: needs approval\n",
        });
        out
    }
}
