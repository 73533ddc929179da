//! The preview as Markdown (for a pull-request comment) and as text.

use std::fmt::Write as _;

use super::{AppPreview, Change, Preview, ResourceChange, Verdict};

/// The default size cap of the Markdown: below the 65,536 characters a GitHub comment holds.
pub const DEFAULT_MAX_MARKDOWN_BYTES: usize = 60_000;

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

/// Mermaid text: quotes and angle brackets as entities.
fn mermaid_text(s: &str) -> String {
    s.replace('"', "#quot;").replace('<', "#lt;").replace('>', "#gt;")
}

/// The head's plan as a Mermaid flowchart, one node per phase and wave.
fn mermaid(app: &AppPreview) -> String {
    let mut out = String::from("```mermaid\nflowchart LR\n");
    for (i, w) in app.plan.iter().enumerate() {
        let mut label = format!("{} wave {}", w.phase, w.wave);
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
    out.push_str("```\n");
    out
}

/// The classic line diff with `-`/`+` prefixes, which code-hosting sites colour.
fn diff_block(text: &str) -> String {
    let mut out = String::from("```diff\n");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("< ") {
            let _ = writeln!(out, "-{rest}");
        } else if let Some(rest) = line.strip_prefix("> ") {
            let _ = writeln!(out, "+{rest}");
        } else {
            let _ = writeln!(out, "{line}");
        }
    }
    out.push_str("```\n");
    out
}

fn resource_details(r: &ResourceChange) -> String {
    format!(
        "<details><summary>{} <code>{}</code></summary>\n\n{}\n</details>\n\n",
        change_word(r),
        r.object,
        diff_block(&r.text_diff)
    )
}

impl Preview {
    /// Markdown for a pull-request comment: the verdict, every warning, a summary table per
    /// app, then per app the head's plan as a Mermaid diagram, how the plan changed, and a
    /// collapsible diff per resource. When the text would pass `max_bytes`, resource diffs
    /// are left out from the end and a closing note says how many.
    pub fn render_markdown(&self, max_bytes: usize) -> String {
        let mut out = String::from("## gitops-core preview\n\n");
        out.push_str(verdict_line(self.verdict()));
        out.push_str("\n\n");
        let warnings: Vec<String> = self
            .apps
            .iter()
            .flat_map(|a| a.warnings.iter().map(move |w| format!("- **{}**: {w}\n", a.app)))
            .collect();
        if !warnings.is_empty() {
            out.push_str("### Warnings\n\n");
            out.extend(warnings);
            out.push('\n');
        }
        out.push_str(
            "| App | Added | Changed | Removed | Pruned | Unchanged | Hooks | Guard |\n\
             |---|---:|---:|---:|---:|---:|---:|---|\n",
        );
        for a in &self.apps {
            let [added, changed, removed, pruned, unchanged] = counts(a);
            let guard = guard_word(a);
            let _ = writeln!(
                out,
                "| {} | {added} | {changed} | {removed} | {pruned} | {unchanged} | {} | {guard} |",
                a.app, a.hooks
            );
        }
        out.push('\n');
        let mut cut = 0;
        for a in &self.apps {
            let _ = writeln!(out, "### {}\n", a.app);
            if !a.has_changes() {
                out.push_str("No change.\n\n");
                continue;
            }
            out.push_str("Sync plan of the head (phases and waves in run order):\n\n");
            out.push_str(&mermaid(a));
            out.push('\n');
            if !a.plan_added.is_empty() || !a.plan_removed.is_empty() {
                out.push_str("Plan changes against the base:\n\n");
                for t in &a.plan_added {
                    let _ = writeln!(out, "- new: {t}");
                }
                for t in &a.plan_removed {
                    let _ = writeln!(out, "- gone: {t}");
                }
                out.push('\n');
            }
            for r in &a.resources {
                let details = resource_details(r);
                if cut > 0 || out.len() + details.len() > max_bytes.saturating_sub(200) {
                    cut += 1;
                } else {
                    out.push_str(&details);
                }
            }
        }
        if cut > 0 {
            let _ = writeln!(
                out,
                "_{cut} resource diffs left out to keep this comment under {max_bytes} bytes; \
                 `gitops-core preview --output text` prints them all._"
            );
        }
        out
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
