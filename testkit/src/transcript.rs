//! Conversation scripts of the `serve` tests (see gitops-core's `src/tests/serve.rs` for the
//! format), shared by the library's `serve` tests and the pipe tests of the built binary.

/// A parsed conversation.
pub struct Transcript {
    /// The lines to send, in order.
    pub requests: Vec<String>,
    /// The response lines expected, in order.
    pub responses: Vec<String>,
    /// Features the conversation needs, from a `# needs: jq, lua` line.
    pub needs: Vec<String>,
}

impl Transcript {
    /// Parses a script.
    pub fn parse(text: &str) -> Transcript {
        let mut requests = Vec::new();
        let mut responses = Vec::new();
        let mut needs = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix('>') {
                requests.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            } else if let Some(rest) = line.strip_prefix("< ") {
                responses.push(rest.to_string());
            } else if let Some(rest) = line.strip_prefix("# needs:") {
                needs.extend(rest.split(',').map(|f| f.trim().to_string()));
            } else if !(line.starts_with('#') || line.trim().is_empty()) {
                panic!("line {}: expected `> `, `< ` or `#`: {line}", i + 1);
            }
        }
        Transcript { requests, responses, needs }
    }

    /// Whether the build under test has every feature the conversation needs: `enabled` says
    /// whether it has one (the caller's `cfg!(feature = ...)`, which this crate cannot see).
    pub fn runnable(&self, enabled: impl Fn(&str) -> bool) -> bool {
        self.needs.iter().all(|f| enabled(f))
    }

    /// The expected responses with `$ENGINE_VERSION` and `$BUILTIN_HEALTH_KINDS` filled in.
    pub fn expected(&self, version: &str, kinds: &str) -> Vec<String> {
        self.responses.iter().map(|r| fill(r, version, kinds)).collect()
    }

    /// `None` when `got` is what the script expects, else a description of the first
    /// difference.
    pub fn compare(&self, got: &[String], version: &str, kinds: &str) -> Option<String> {
        let want = self.expected(version, kinds);
        for (i, (w, g)) in want.iter().zip(got).enumerate() {
            if w != g {
                return Some(format!("response {}:\n  want {w}\n  got  {g}", i + 1));
            }
        }
        if want.len() != got.len() {
            return Some(format!(
                "expected {} responses, got {}: {:?}",
                want.len(),
                got.len(),
                got.get(want.len()..).or(want.get(got.len()..))
            ));
        }
        None
    }
}

/// An expected line with its placeholders filled in: `$ENGINE_VERSION` (the crate version)
/// and `$BUILTIN_HEALTH_KINDS` (`kinds`: the JSON list of `health::HealthContext::builtin_kinds()`, which
/// grows with every rule and is checked against the README's list elsewhere).
pub fn fill(line: &str, version: &str, kinds: &str) -> String {
    line.replace("$ENGINE_VERSION", version).replace("$BUILTIN_HEALTH_KINDS", kinds)
}
