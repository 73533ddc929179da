//! Object names as the Kubernetes API server (v1.34) validates them, with its messages
//! (k8s.io/apimachinery's `IsDNS1123Subdomain`, `IsDNS1123Label`, `IsDNS1035Label` and
//! `IsValidPathSegmentName`): a Namespace's and a StatefulSet's name is a DNS-1123 label, a
//! Service's a DNS-1035 label; the RBAC kinds take any path segment (`system:node`), as do the
//! few kinds with rules of their own (an IPAddress is an IP, a CertificateSigningRequest
//! anything); every other kind's name, custom resources' included, is a DNS-1123 subdomain.

const LABEL_1123_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_1123_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case \
     alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_1035_FORMAT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric \
     characters or '-', start with an alphabetic character, and end with an alphanumeric \
     character";

/// Whether `s` is one DNS-1123 label: lower-case letters, digits and `-`, starting and ending
/// with a letter or digit (length not checked).
fn is_label(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let b = s.as_bytes();
    matches!((b.first(), b.last()), (Some(&f), Some(&l)) if alnum(f) && alnum(l))
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

/// Kubernetes' text for a value that does not match a format.
fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    let examples: String =
        examples.iter().map(|e| format!("'{e}', ")).collect::<Vec<_>>().join(" or ");
    format!("{message} (e.g. {examples}regex used for validation is '{format}')")
}

/// Which rule a kind's names follow.
enum Rule {
    Subdomain,
    Label,
    Dns1035Label,
    PathSegment,
}

fn rule(group: &str, kind: &str) -> Rule {
    match (if group == "core" { "" } else { group }, kind) {
        ("", "Namespace") | ("apps", "StatefulSet") => Rule::Label,
        ("", "Service") => Rule::Dns1035Label,
        (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        )
        | ("certificates.k8s.io", "CertificateSigningRequest" | "ClusterTrustBundle")
        | ("networking.k8s.io", "IPAddress")
        | ("internal.apiserver.k8s.io", "StorageVersion")
        | ("coordination.k8s.io", "LeaseCandidate") => Rule::PathSegment,
        _ => Rule::Subdomain,
    }
}

/// Why `name` is not a valid `metadata.name` of a `group`/`kind` object (for a
/// `generateName` prefix, `prefix`: a trailing `-` is allowed, as the API server masks it),
/// as the API server says it; `None` when it is valid.
pub(crate) fn name_problem(group: &str, kind: &str, name: &str, prefix: bool) -> Option<String> {
    let masked;
    let name = if prefix && name.len() > 1 && name.ends_with('-') {
        // As apimachinery's maskTrailingDash: the last two bytes become `a`.
        masked = format!("{}a", String::from_utf8_lossy(&name.as_bytes()[..name.len() - 2]));
        masked.as_str()
    } else {
        name
    };
    let rule = rule(group, kind);
    if is_valid(&rule, name.as_bytes()) {
        return None;
    }
    problems(&rule, name)
}

/// What [`classes`] marks a byte as: [`OTHER`] outside `[a-z0-9.-]`, [`DOT`] for `.`, 0 else.
const CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' {
            t[c] = 0;
        } else if b == b'.' {
            t[c] = DOT;
        }
        c += 1;
    }
    t
};
const OTHER: u8 = 1;
const DOT: u8 = 2;

/// The [`CLASS`] marks of `name`'s bytes together: 0 for `[a-z0-9-]*`, [`DOT`] when `.`
/// also occurs. A lookup and an `or` per byte, no branch (names are checked on every action
/// that creates or patches an object).
fn classes(name: &[u8]) -> u8 {
    name.iter().fold(0, |all, &c| all | CLASS[usize::from(c)])
}

/// Whether `name` follows `rule`, by its bytes' [`classes`] and its ends (pairs looked at only
/// when a `.` occurs): [`problems`] finds none exactly when this is true (pinned by
/// `one_byte_loop_is_the_problems_found`).
fn is_valid(rule: &Rule, name: &[u8]) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match rule {
        Rule::PathSegment => {
            !matches!(name, b"." | b"..") && !name.iter().any(|&c| c == b'/' || c == b'%')
        }
        Rule::Label | Rule::Dns1035Label => {
            let first_ok = match (rule, name.first()) {
                (Rule::Dns1035Label, Some(f)) => f.is_ascii_lowercase(),
                (_, Some(&f)) => alnum(f),
                (_, None) => false,
            };
            first_ok
                && name.len() <= 63
                && name.last().is_some_and(|&l| alnum(l))
                && classes(name) == 0
        }
        Rule::Subdomain => {
            let (Some(&first), Some(&last)) = (name.first(), name.last()) else { return false };
            if name.len() > 253 || !alnum(first) || !alnum(last) {
                return false;
            }
            // Labels start and end with a letter or digit: with the ends checked, a `.` is
            // never beside another `.` or a `-`; a name without a `.` is one label.
            match classes(name) {
                0 => true,
                DOT => !name.windows(2).any(|w| matches!(w, b".." | b".-" | b"-.")),
                _ => false,
            }
        }
    }
}

/// What the API server says of `name` under `rule`, each problem it finds; `None` when there
/// is none.
fn problems(rule: &Rule, name: &str) -> Option<String> {
    let too_long =
        |max: usize| (name.len() > max).then(|| format!("must be no more than {max} characters"));
    let problems: Vec<String> = match rule {
        Rule::Label => too_long(63)
            .into_iter()
            .chain((!is_label(name)).then(|| {
                if name.split('.').all(is_label) {
                    "must not contain dots".to_string()
                } else {
                    regex_error(LABEL_1123_MESSAGE, LABEL_1123_FORMAT, &["my-name", "123-abc"])
                }
            }))
            .collect(),
        Rule::Dns1035Label => too_long(63)
            .into_iter()
            .chain((!is_label(name) || !name.starts_with(|c: char| c.is_ascii_lowercase())).then(
                || regex_error(LABEL_1035_MESSAGE, LABEL_1035_FORMAT, &["my-name", "abc-123"]),
            ))
            .collect(),
        Rule::Subdomain => too_long(253)
            .into_iter()
            .chain(
                (!name.split('.').all(is_label))
                    .then(|| regex_error(SUBDOMAIN_MESSAGE, SUBDOMAIN_FORMAT, &["example.com"])),
            )
            .collect(),
        Rule::PathSegment => match name {
            "." | ".." => vec![format!("may not be '{name}'")],
            _ => ["/", "%"]
                .iter()
                .filter(|c| name.contains(*c))
                .map(|c| format!("may not contain '{c}'"))
                .collect(),
        },
    };
    (!problems.is_empty()).then(|| problems.join(", "))
}

#[cfg(test)]
mod tests {
    use super::{Rule, is_valid, name_problem, problems};

    const RULES: [Rule; 4] = [Rule::Subdomain, Rule::Label, Rule::Dns1035Label, Rule::PathSegment];

    /// The byte loop says valid exactly when the API server's checks find no problem.
    fn same_answer(name: &str) {
        for rule in &RULES {
            assert_eq!(
                is_valid(rule, name.as_bytes()),
                problems(rule, name).is_none(),
                "{name:?} under rule {}",
                RULES.iter().position(|r| std::ptr::eq(r, rule)).unwrap_or(9)
            );
        }
    }

    /// Every name of up to four characters over the ones the rules tell apart (letters, a
    /// capital, digits, `-`, `.`, `/`, `%`, `_`, a non-ASCII letter), and lengths around each
    /// limit.
    #[test]
    fn one_byte_loop_is_the_problems_found() {
        let alphabet = ["a", "z", "0", "9", "-", ".", "/", "%", "A", "_", "é"];
        let mut level = vec![String::new()];
        same_answer("");
        for _ in 0..4 {
            level = level
                .iter()
                .flat_map(|n| alphabet.iter().map(move |c| format!("{n}{c}")))
                .collect();
            for name in &level {
                same_answer(name);
            }
        }
        for len in [62, 63, 64, 252, 253, 254] {
            for fill in ["a", "a.", "a-", "-", "."] {
                let mut name: String = fill.repeat(len).chars().take(len).collect();
                same_answer(&name);
                name.replace_range(len - 1.., "0");
                same_answer(&name);
            }
        }
    }

    proptest::proptest! {
        /// Random names of any length up to past the longest limit, over the same bytes.
        #[test]
        fn one_byte_loop_is_the_problems_found_at_random(
            name in "[a-z0-9.\\-/%A_é]{0,6}|[a-c0-9.\\-]{55,70}|[a-c0-9.\\-]{240,260}|[a-z0-9]{60,70}|([a-z0-9]{1,20}\\.){10,16}[a-z]"
        ) {
            same_answer(&name);
            for (group, kind) in [("argoproj.io", "Workflow"), ("", "Namespace"),
                                  ("", "Service"), ("rbac.authorization.k8s.io", "Role")] {
                proptest::prop_assert_eq!(
                    name_problem(group, kind, &name, false),
                    problems(&super::rule(group, kind), &name)
                );
            }
        }
    }

    #[test]
    fn names_as_the_api_server_checks_them() {
        assert_eq!(name_problem("batch", "Job", "backup-1.x", false), None);
        assert_eq!(name_problem("batch", "Job", "job-", true), None);
        assert_eq!(
            name_problem("", "Namespace", "a.b", false).as_deref(),
            Some("must not contain dots")
        );
        assert_eq!(
            name_problem("", "Service", "1abc", false).as_deref(),
            Some(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
                 start with an alphabetic character, and end with an alphanumeric character \
                 (e.g. 'my-name',  or 'abc-123', regex used for validation is \
                 '[a-z]([-a-z0-9]*[a-z0-9])?')"
            )
        );
        assert!(name_problem("batch", "Job", &"a".repeat(254), false).is_some());
        assert!(name_problem("batch", "Job", "", false).is_some());
        assert!(name_problem("batch", "Job", "a..b", false).is_some());
        assert_eq!(
            name_problem("rbac.authorization.k8s.io", "ClusterRole", "system:node", false),
            None
        );
        assert_eq!(
            name_problem("rbac.authorization.k8s.io", "Role", "a/b%", false).as_deref(),
            Some("may not contain '/', may not contain '%'")
        );
        assert_eq!(
            name_problem("apps", "StatefulSet", "db.1", false).as_deref(),
            Some("must not contain dots")
        );
    }
}
