//! YAML text to JSON values, read as Kubernetes' reader (sigs.k8s.io/yaml over go-yaml v2) and
//! so Argo CD, Helm and kubectl read it.
//!
//! libyaml's events (through libyaml-safer, a safe port of the C library go-yaml v2 was ported
//! from) are built into a tree per document, anchors registered as their node starts; the tree
//! is then decoded as go-yaml v2 decodes into `interface{}`: scalars resolved by YAML 1.1
//! (`resolve.rs`), an alias decoded again each time it is met, merge keys (`<<`) spread in, and
//! go-yaml v2's limit on aliasing applied to what the decoding builds.

use libyaml_safer::{EventData, Mark, Parser, ScalarStyle};
use serde_json::Value;

use super::decode::{Context, MapBuilder, wrong_merge};
use super::resolve::{self, Scalar};
use super::{Lines, Location, ParseError, ParseOptions, ParseWarning, escape_pointer_token};

/// Stands for a value or key with no JSON form (NaN, a null key) until the document is built:
/// go-yaml v2 builds the whole document first and only its JSON conversion fails, so such a
/// value that a later key or a merge replaces is no error.
const NO_JSON: &str = "\u{0}gitops-core: no json form\u{0}";

/// Deepest nesting of mappings and sequences in a decoded document, aliases expanded.
pub(super) const MAX_DEPTH: usize = 128;

/// One node of a document, as go-yaml v2's parser builds it.
struct Node {
    mark: Mark,
    kind: Kind,
}

enum Kind {
    Scalar {
        value: String,
        tag: Option<String>,
        /// Plain and untagged (or tagged `!`): go-yaml's `implicit`.
        plain: bool,
    },
    Seq(Vec<usize>),
    /// Keys and values, one after the other.
    Map(Vec<usize>),
    Alias {
        target: usize,
        name: String,
    },
}

/// The message of a text libyaml-safer panics on.
const SCANNER_FAILED: &str = "the YAML scanner (libyaml-safer) failed on this text";

/// The line breaks of YAML 1.1 (libyaml's `IS_BREAK`).
const BREAKS: [char; 5] = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];

/// The line break [`read`] adds to a text read as given ([`Lines::AsGiven`]) that ends without
/// one, so that libyaml-safer 0.3 never reaches the end of the text inside a line: it reads
/// past the end (and panics) on a block scalar's last line and on a double-quoted scalar's
/// final backslash, where libyaml (and so go-yaml v2) ends the line there. A line break at the end changes no reading but a block
/// scalar's: the added break may end up at the end of its value, where libyaml has nothing.
/// U+2028 and U+2029 are the breaks libyaml keeps as they are in a block scalar's value, so
/// the added one is told from the text's own by being one the text does not hold.
struct Added {
    /// The break added.
    ch: char,
    /// Whether a value ending in `ch` ends in the added break: `false` only for a text that
    /// holds both breaks and whose last scalar does not take the other one when it is added.
    taken: bool,
}

/// Reads every document of a YAML stream, its last line as `lines` says.
pub(super) fn read(
    text: &str,
    options: &ParseOptions,
    lines: Lines,
    warnings: &mut Vec<ParseWarning>,
) -> Result<Vec<Value>, ParseError> {
    let apostrophes = apostrophe_escapes(text);
    let (text, apostrophe) = match &apostrophes {
        Some((respelled, marker)) => (respelled.as_str(), Some(*marker)),
        None => (text, None),
    };
    let spelled = go_yaml_tags(text);
    let text = spelled.as_deref().unwrap_or(text);
    let unmarked = match lines {
        Lines::Kubernetes => document_boms(text),
        Lines::AsGiven => None,
    };
    let text = unmarked.as_deref().unwrap_or(text);
    let marked = content_boms(text);
    let (text, bom) = match &marked {
        Some((respelled, marker)) => (respelled.as_str(), Some(*marker)),
        None => (text, None),
    };
    let respelled = Respelled { apostrophe, bom, chunks: lines == Lines::Kubernetes };
    if lines == Lines::Kubernetes {
        if text.is_empty() || text.ends_with('\n') {
            return read_events(text, None, &respelled, options, warnings);
        }
        // The `\n` Kubernetes' reader gives the last line: the value keeps it.
        return read_events(&format!("{text}\n"), None, &respelled, options, warnings);
    }
    if text.is_empty() || text.ends_with(BREAKS) {
        return read_events(text, None, &respelled, options, warnings);
    }
    let (ch, taken) = match (text.contains('\u{2028}'), text.contains('\u{2029}')) {
        (false, _) => ('\u{2028}', true),
        (true, false) => ('\u{2029}', true),
        // Both: the last scalar ends in the added break if it does with either one added (its
        // value is otherwise the same, and cannot end in both).
        (true, true) => ('\u{2028}', last_scalar_ends_in(&format!("{text}\u{2029}"), '\u{2029}')),
    };
    let added = Added { ch, taken };
    read_events(&format!("{text}{ch}"), Some(&added), &respelled, options, warnings)
}

/// What [`read`] respelled in the text before libyaml-safer reads it, to be read back in the
/// values.
struct Respelled {
    /// The control character a double-quoted scalar's `\'` escape was respelled to (see
    /// [`apostrophe_escapes`]): `'` in a double-quoted value.
    apostrophe: Option<char>,
    /// The character a byte order mark inside the text was respelled to (see
    /// [`content_boms`]): U+FEFF in a value.
    bom: Option<char>,
    /// Whether the stream is read as Kubernetes' reader splits it at its `---` lines and hands
    /// each piece to go-yaml v2 as a stream of its own.
    chunks: bool,
}

/// The escapes of double-quoted scalars that decode to a control character, by the letter after
/// the backslash. libyaml refuses every raw control character but a tab and the line breaks,
/// so a value holds one only through its escape (`\a`, or `\x07`, `\u0007`, `\U00000007`).
const CONTROL_ESCAPES: [(u8, char); 6] = [
    (b'a', '\u{7}'),
    (b'e', '\u{1b}'),
    (b'v', '\u{b}'),
    (b'f', '\u{c}'),
    (b'b', '\u{8}'),
    (b'0', '\u{0}'),
];

/// Whether `text` holds `ch` as it is, or as a hexadecimal escape (`\x`, `\u`, `\U`) in any
/// case, or (with `letter`) as that letter's escape.
fn holds(text: &str, ch: char, letter: Option<u8>) -> bool {
    if text.contains(ch) {
        return true;
    }
    let bytes = text.as_bytes();
    let code = u32::from(ch);
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|&b| b == b'\\') {
        let at = i + at;
        let Some(&next) = bytes.get(at + 1) else { break };
        if Some(next) == letter {
            return true;
        }
        let digits = match next {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => 0,
        };
        if digits > 0
            && let Some(hex) = text.get(at + 2..at + 2 + digits)
            && u32::from_str_radix(hex, 16) == Ok(code)
        {
            return true;
        }
        // `\\` is one escape: the second backslash starts nothing.
        i = if next == b'\\' { at + 2 } else { at + 1 };
    }
    false
}

/// `text` with each `\'` escape of a double-quoted scalar respelled to the escape of a control
/// character the text does not hold otherwise, and that character; `None` when there is no such
/// escape (the common case: no `\'` in the text). go-yaml v2 reads `\'` as `'` (an escape of
/// its own); libyaml-safer, as libyaml, has no such escape and refuses the text. Both escapes
/// take two characters, so positions stay. Where a `\'` is (double-quoted, single-quoted, plain,
/// a comment) is found out by scanning the text with every `\'` respelled: the scan is the text's
/// own up to the first one in a single-quoted scalar (where the `'` ends the scalar or starts
/// `''`), which is then put back and the text scanned again. After 16 such scans the escapes
/// not yet placed are left as they are (a double-quoted one among them is then refused, as
/// before).
fn apostrophe_escapes(text: &str) -> Option<(String, char)> {
    if !text.contains("\\'") {
        return None;
    }
    let bytes = text.as_bytes();
    // Each backslash that starts an escape (an odd one in its run) followed by `'`.
    let mut candidates = Vec::new();
    let mut run = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\\' {
            run += 1;
            continue;
        }
        if b == b'\'' && run % 2 == 1 {
            candidates.push(i - 1);
        }
        run = 0;
    }
    if candidates.is_empty() {
        return None;
    }
    let (letter, marker) =
        CONTROL_ESCAPES.into_iter().find(|&(letter, ch)| !holds(text, ch, Some(letter)))?;
    // Whether each candidate is a double-quoted scalar's escape; those before `placed` are
    // known, the others are taken as escapes in the next scan.
    let mut taken = vec![true; candidates.len()];
    let mut placed = 0;
    let mut out = bytes.to_vec();
    for _ in 0..16 {
        for (&at, &yes) in candidates.iter().zip(&taken) {
            out[at + 1] = if yes { letter } else { b'\'' };
        }
        let (spans, reached, stopped) = quoted_spans(std::str::from_utf8(&out).ok()?);
        let mut desync = false;
        while placed < candidates.len() {
            let at = candidates[placed] as u64;
            if at >= stopped {
                // The scan stopped at an error before it: left as it is.
                break;
            }
            let within = spans.partition_point(|&(start, _, _)| start < at);
            match within.checked_sub(1).map(|i| spans[i]).filter(|&(_, end, _)| at < end) {
                Some((_, _, true)) => {}
                // A single-quoted scalar (its `'` ends it), or a token the scan never gave
                // because it stopped at an error after it (a single-quoted key the respelling
                // ran on to the next line): not an escape, and the scan is wrong past it.
                Some((_, _, false)) => {
                    taken[placed] = false;
                    placed += 1;
                    desync = true;
                    break;
                }
                None if at >= reached => {
                    taken[placed] = false;
                    placed += 1;
                    desync = true;
                    break;
                }
                // Plain, a comment, a block scalar: `\a` reads there as `\'` does.
                None => taken[placed] = false,
            }
            placed += 1;
        }
        if !desync {
            break;
        }
    }
    let mut any = false;
    for (i, &at) in candidates.iter().enumerate() {
        let yes = i < placed && taken[i];
        any |= yes;
        out[at + 1] = if yes { letter } else { b'\'' };
    }
    if !any {
        return None;
    }
    Some((String::from_utf8(out).ok()?, marker))
}

/// The quoted scalars of `text` as libyaml-safer's scanner finds them, (start, end,
/// double-quoted) in order; the end of the last token it gave; and where it stopped at an
/// error (`u64::MAX` when it read the whole text).
fn quoted_spans(text: &str) -> (Vec<(u64, u64, bool)>, u64, u64) {
    let mut scanner = libyaml_safer::Scanner::new();
    let mut input = text.as_bytes();
    scanner.set_input(&mut input);
    let mut spans = Vec::new();
    let mut reached = 0;
    let mut stopped = u64::MAX;
    // A panic (see [`Added`]) ends the scan as an error does, where the last token ended.
    let scan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for token in scanner.by_ref() {
            let token = match token {
                Ok(token) => token,
                Err(e) => {
                    stopped = e.problem_mark().map_or(reached, |m| m.index);
                    return;
                }
            };
            reached = token.end_mark.index;
            if let libyaml_safer::TokenData::Scalar { style, .. } = token.data {
                let double = match style {
                    ScalarStyle::DoubleQuoted => true,
                    ScalarStyle::SingleQuoted => false,
                    _ => continue,
                };
                spans.push((token.start_mark.index, token.end_mark.index, double));
            }
        }
        reached = u64::MAX;
    }));
    if scan.is_err() {
        stopped = reached;
    }
    (spans, reached, stopped)
}

/// `text` with every byte order mark in it respelled to a private-use character it does not
/// hold, and that character; `None` when it holds no mark. go-yaml v2 skips a mark that starts
/// a line only when its working buffer starts with one (its check looks at the buffer's first
/// bytes, not the mark's), which a mark after the start of a stream is not but by the chance
/// of a 512-byte read ending right before it; it reads one anywhere else in a document as a
/// character of the scalar it starts or is in (`\u{feff}  k: v` under `data:` is the top-level
/// key `"\u{feff}  k"`). libyaml-safer skips one that starts a line; a private-use character
/// of the same length reads as go-yaml v2 reads the mark, and is read back in the values. The
/// text's leading mark and those after a `---` line (Kubernetes' reader) are taken off first.
fn content_boms(text: &str) -> Option<(String, char)> {
    if !text.contains('\u{feff}') {
        return None;
    }
    let marker = ('\u{e000}'..='\u{f8ff}').find(|&ch| !holds(text, ch, None))?;
    Some((text.replace('\u{feff}', marker.encode_utf8(&mut [0; 4])), marker))
}

/// `text` without the byte order marks that start a document after a `---` line, or `None`
/// when it has none. Kubernetes' reader splits a stream at its `---` lines (the rest of the
/// line blank or a comment) and go-yaml v2 then skips a byte order mark at the start of each
/// document's text; libyaml skips one at the start of a line too, but counts it as a column, so
/// the document's first key would stand one column to the right of the next.
fn document_boms(text: &str) -> Option<String> {
    if !text.contains("\n\u{feff}") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut after_separator = false;
    for line in text.split_inclusive('\n') {
        let line = match line.strip_prefix('\u{feff}') {
            Some(rest) if after_separator => rest,
            _ => line,
        };
        after_separator = line.strip_prefix("---").is_some_and(|rest| {
            let rest = rest.trim();
            rest.is_empty() || rest.starts_with('#')
        });
        out.push_str(line);
    }
    Some(out)
}

/// Whether the last scalar token of `text` (which ends in a line break) ends in `ch`.
fn last_scalar_ends_in(text: &str, ch: char) -> bool {
    let mut scanner = libyaml_safer::Scanner::new();
    let mut input = text.as_bytes();
    scanner.set_input(&mut input);
    let mut last = false;
    // The text ends in a line break and its tags are respelled: nothing is known to panic.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for token in scanner.by_ref() {
            match token {
                Ok(token) => {
                    if let libyaml_safer::TokenData::Scalar { value, .. } = token.data {
                        last = value.ends_with(ch);
                    }
                }
                Err(_) => break,
            }
        }
    }));
    last
}

/// Whether `c` goes on a tag's URI in libyaml-safer's scanner (libyaml 0.2.5's set for a node's
/// tag, which never takes `,`, `[` or `]`).
fn tag_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_;/?:@&=+$.%!~*'()".contains(&c)
}

/// Whether go-yaml v2 takes `c` on a tag's URI: libyaml-safer's set and `,`, `[`, `]`, in flow
/// collections too.
fn go_tag_char(c: u8) -> bool {
    tag_char(c) || matches!(c, b',' | b'[' | b']')
}

/// `text` with every tag that goes on with `,`, `[` or `]` spelled so that libyaml-safer reads the
/// tag go-yaml v2 reads: go-yaml v2 takes those characters on the tag's URI wherever it is
/// (`{k: !!str, j: 1}` has the tag `!!str,` on the scalar `j`, and is then refused), where
/// libyaml-safer 0.3 ends the tag before them and then refuses the text or, before a `,` in a
/// flow collection, panics. The three are percent-escaped in the tag (`%2C`, `%5B`, `%5D`), which
/// both readers decode to the same tag; positions after them on that line move by two columns.
/// `None` when no tag needs it (the common case: no `!` followed by tag characters and one of
/// the three). A `!` that only looks like a tag (in a quoted scalar, a comment, a plain scalar)
/// is found out by scanning the text first with a space before each of those characters: only
/// the `!`s that start a tag token there are respelled.
fn go_yaml_tags(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // Each `!` that may start a tag ending before `,`, `[` or `]`: (its offset, where the
    // libyaml-safer tag ends).
    let mut candidates = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'!' {
            let mut end = i + 1;
            while end < bytes.len() && tag_char(bytes[end]) {
                end += 1;
            }
            if end < bytes.len() && matches!(bytes[end], b',' | b'[' | b']') {
                candidates.push((i, end));
            }
            i = end;
        } else {
            i += 1;
        }
    }
    if candidates.is_empty() {
        return None;
    }
    // The probe: a space before the character after each candidate, so that no tag is followed
    // by it and a plain scalar's `,` still ends the scalar.
    let mut probe = String::with_capacity(text.len() + candidates.len());
    let mut from = 0;
    for &(_, end) in &candidates {
        probe.push_str(&text[from..end]);
        probe.push(' ');
        from = end;
    }
    probe.push_str(&text[from..]);
    // A line break at the end: libyaml-safer's other panics (see [`Added`]) need a text without
    // one.
    probe.push('\n');
    let mut scanner = libyaml_safer::Scanner::new();
    let mut input = probe.as_bytes();
    scanner.set_input(&mut input);
    let mut tag_starts = std::collections::HashSet::new();
    // The probe has no tag followed by `,` and ends in a line break; a panic left is caught.
    let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for token in scanner.by_ref() {
            let Ok(token) = token else { break };
            if matches!(token.data, libyaml_safer::TokenData::Tag { .. }) {
                tag_starts.insert(token.start_mark.index);
            }
        }
    }));
    if scanned.is_err() || tag_starts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut from = 0;
    for (n, &(start, _)) in candidates.iter().enumerate() {
        // The probe has one added space before each earlier candidate's end.
        if !tag_starts.contains(&((start + n) as u64)) || start < from {
            continue;
        }
        let mut end = start + 1;
        while end < bytes.len() && go_tag_char(bytes[end]) {
            end += 1;
        }
        out.push_str(&text[from..start]);
        for &c in &bytes[start..end] {
            match c {
                b',' => out.push_str("%2C"),
                b'[' => out.push_str("%5B"),
                b']' => out.push_str("%5D"),
                // ASCII: every tag character is.
                c => out.push(char::from(c)),
            }
        }
        from = end;
    }
    if from == 0 {
        return None;
    }
    out.push_str(&text[from..]);
    Some(out)
}

/// [`read`] on the events of `text`; `added`: the line break [`read`] added at its end, taken
/// off the block scalar whose value it ends. Positions need no change: libyaml puts the end of
/// a text that ends inside a line on the next line (its stream end forces a new line), as the
/// added break does.
fn read_events(
    text: &str,
    added: Option<&Added>,
    respelled: &Respelled,
    options: &ParseOptions,
    warnings: &mut Vec<ParseWarning>,
) -> Result<Vec<Value>, ParseError> {
    let mut parser = Parser::new();
    parser.set_input(text.as_bytes());
    let mut docs = Vec::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut anchors: std::collections::HashMap<String, usize> = Default::default();
    let mut open: Vec<usize> = Vec::new();
    let mut root: Option<usize> = None;
    // Whether the document being read started with a `---` line.
    let mut explicit = false;
    loop {
        let document = docs.len();
        // libyaml-safer 0.3 panics where libyaml has a case the port left out (a tag followed
        // by `,` in a flow collection, which `go_yaml_tags` respells first; the end of a text
        // inside a line, which `read` ends with a line break): a text that still makes it
        // panic is refused as a syntax error (the panic's message is printed on stderr).
        let event = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse()))
            .map_err(|_| ParseError::Syntax {
                document,
                format: "yaml",
                message: SCANNER_FAILED.to_string(),
            })?
            .map_err(|e| syntax(document, &e))?;
        let mark = event.start_mark;
        let end = event.end_mark.index;
        let at_end = end == text.len() as u64;
        let (kind, anchor, opens) = match event.data {
            EventData::StreamEnd => break,
            EventData::StreamStart { .. } => continue,
            EventData::DocumentStart { implicit, .. } => {
                nodes.clear();
                anchors.clear();
                open.clear();
                root = None;
                explicit = !implicit;
                continue;
            }
            EventData::DocumentEnd { implicit: false }
                if respelled.chunks && explicit && empty_document(&nodes, root, &anchors) =>
            {
                // Kubernetes' reader hands go-yaml v2 the text after the `---` line as a stream
                // of its own, which starts with `...`: go-yaml v2 finds no node for the
                // document its first token starts.
                return Err(ParseError::Syntax {
                    document,
                    format: "yaml",
                    message: format!(
                        "did not find expected node content at {}, while parsing a block node \
                         (Kubernetes' reader reads the text after a `---` line as a stream of \
                         its own)",
                        at(mark)
                    ),
                });
            }
            EventData::DocumentEnd { .. } => {
                let mut ctx = Context::new(document, options, warnings);
                let value = match root {
                    None => Value::Null,
                    Some(root) => Decoder::new(&nodes, &mut ctx).document(root)?,
                };
                docs.push(value);
                continue;
            }
            EventData::SequenceEnd | EventData::MappingEnd => {
                open.pop();
                continue;
            }
            EventData::Alias { anchor } => {
                let Some(&target) = anchors.get(&anchor) else {
                    return Err(ParseError::Syntax {
                        document,
                        format: "yaml",
                        message: format!("unknown anchor '{anchor}' referenced at {}", at(mark)),
                    });
                };
                (Kind::Alias { target, name: anchor }, None, false)
            }
            EventData::Scalar { anchor, tag, mut value, plain_implicit, style, .. } => {
                if let Some(marker) = respelled.apostrophe
                    && style == ScalarStyle::DoubleQuoted
                    && value.contains(marker)
                {
                    value = value.replace(marker, "'");
                }
                if let Some(marker) = respelled.bom
                    && value.contains(marker)
                {
                    value = value.replace(marker, "\u{feff}");
                }
                if style == ScalarStyle::DoubleQuoted
                    && let Some(escape) = slash_escape(text, mark.index, end)
                {
                    return Err(ParseError::Syntax {
                        document,
                        format: "yaml",
                        message: format!(
                            "found unknown escape character at {}, while scanning a quoted \
                             scalar at {}",
                            at(escape),
                            at(mark)
                        ),
                    });
                }
                // Only a block scalar's value can end in the last line break of the text.
                if let Some(added) = added
                    && added.taken
                    && at_end
                    && value.ends_with(added.ch)
                {
                    value.pop();
                }
                (Kind::Scalar { value, tag, plain: plain_implicit }, anchor, false)
            }
            EventData::SequenceStart { anchor, .. } => (Kind::Seq(Vec::new()), anchor, true),
            EventData::MappingStart { anchor, .. } => (Kind::Map(Vec::new()), anchor, true),
        };
        let id = nodes.len();
        nodes.push(Node { mark, kind });
        if let Some(name) = anchor {
            anchors.insert(name, id);
        }
        match open.last().map(|&p| &mut nodes[p].kind) {
            Some(Kind::Seq(children) | Kind::Map(children)) => children.push(id),
            _ => root = Some(id),
        }
        if opens {
            open.push(id);
        }
    }
    // An empty stream (or one of comments only) is one empty document, as it was read before.
    if docs.is_empty() {
        docs.push(Value::Null);
    }
    Ok(docs)
}

/// Whether a document is empty as libyaml reads `---` then `...` (comments and blank lines
/// between): one empty plain scalar, no tag, no anchor.
fn empty_document(
    nodes: &[Node],
    root: Option<usize>,
    anchors: &std::collections::HashMap<String, usize>,
) -> bool {
    anchors.is_empty()
        && nodes.len() == 1
        && root == Some(0)
        && matches!(&nodes[0].kind, Kind::Scalar { value, tag: None, plain: true } if value.is_empty())
}

/// Where the double-quoted scalar at `start..end` of `text` has a `\/` escape: libyaml-safer
/// (as libyaml 0.2.5, for YAML 1.2) reads it as `/`, go-yaml v2 refuses it (`found unknown
/// escape character`), and so does Argo CD.
fn slash_escape(text: &str, start: u64, end: u64) -> Option<Mark> {
    let source = text.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?;
    if !source.contains("\\/") {
        return None;
    }
    let bytes = source.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes[i + 1] == b'/' {
                // The column in characters, the line counted as libyaml counts it.
                let before = &text[..usize::try_from(start).ok()? + i];
                let line_start = before.rfind('\n').map_or(0, |n| n + 1);
                let mut mark = Mark::default();
                mark.index = before.len() as u64;
                mark.line = before.matches('\n').count() as u64;
                mark.column = before[line_start..].chars().count() as u64;
                return Some(mark);
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

/// `line L column C`, counted from 1.
fn at(mark: Mark) -> String {
    format!("line {} column {}", mark.line + 1, mark.column + 1)
}

/// libyaml's error as a syntax error of the document, worded as libyaml words it.
fn syntax(document: usize, e: &libyaml_safer::Error) -> ParseError {
    let mut message = e.problem().to_string();
    let problem_mark = e.problem_mark();
    match problem_mark {
        Some(m) if m.line != 0 || m.column != 0 => message.push_str(&format!(" at {}", at(m))),
        Some(m) => message.push_str(&format!(" at position {}", m.index)),
        None => {}
    }
    if let Some(context) = e.context() {
        message.push_str(&format!(", {context}"));
        if let Some(m) = e.context_mark()
            && (m.line != 0 || m.column != 0)
            && Some(m) != problem_mark
        {
            message.push_str(&format!(" at {}", at(m)));
        }
    }
    ParseError::Syntax { document, format: "yaml", message }
}

/// go-yaml v2's allowed share of decoded values that come from aliases: 99% up to 400,000
/// values decoded, 10% from 4,000,000, and in between a straight line from one to the other.
pub(super) fn allowed_alias_ratio(decoded: usize) -> f64 {
    const LOW: usize = 400_000;
    const HIGH: usize = 4_000_000;
    if decoded <= LOW {
        0.99
    } else if decoded >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decoded - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

/// Decodes one document's tree, counting as go-yaml v2 counts.
struct Decoder<'n, 'c, 'a> {
    nodes: &'n [Node],
    ctx: &'c mut Context<'a>,
    /// Values decoded so far (go-yaml's `decodeCount`): every node each time it is decoded.
    decoded: usize,
    /// Of those, the ones decoded inside an alias (`aliasCount`).
    aliased: usize,
    /// The alias nodes being expanded, innermost last.
    expanding: Vec<usize>,
    /// Mappings and sequences open around the value being decoded.
    depth: usize,
    /// Whether a [`NO_JSON`] stand-in was made.
    no_json: bool,
}

impl<'n, 'c, 'a> Decoder<'n, 'c, 'a> {
    fn new(nodes: &'n [Node], ctx: &'c mut Context<'a>) -> Self {
        Decoder {
            nodes,
            ctx,
            decoded: 0,
            aliased: 0,
            expanding: Vec::new(),
            depth: 0,
            no_json: false,
        }
    }

    fn document(mut self, root: usize) -> Result<Value, ParseError> {
        // The document node counts, as go-yaml counts it.
        self.count()?;
        let value = self.value(root)?;
        if self.no_json {
            let mut path = String::new();
            if let Some(message) = no_json(&value, &mut path) {
                let at = Location { document: self.ctx.document, item: None, path };
                return Err(ParseError::Unsupported { at, message });
            }
        }
        Ok(value)
    }

    /// One value decoded: go-yaml v2 refuses the document once more than 100 of over 1,000
    /// values come from aliases and their share is over [`allowed_alias_ratio`].
    fn count(&mut self) -> Result<(), ParseError> {
        self.decoded += 1;
        if !self.expanding.is_empty() {
            self.aliased += 1;
        }
        if self.aliased > 100
            && self.decoded > 1000
            && self.aliased as f64 / self.decoded as f64 > allowed_alias_ratio(self.decoded)
        {
            return Err(ParseError::ExcessiveAliasing {
                at: self.ctx.at(),
                aliased: self.aliased,
                decoded: self.decoded,
            });
        }
        Ok(())
    }

    /// Enters an alias (the node is counted already); the error is an alias inside itself.
    fn enter_alias(&mut self, id: usize, name: &str) -> Result<(), ParseError> {
        if self.expanding.contains(&id) {
            let message = format!("anchor '{name}' value contains itself");
            return Err(self.syntax(id, message));
        }
        self.expanding.push(id);
        Ok(())
    }

    fn syntax(&self, id: usize, message: String) -> ParseError {
        let message = format!("{message} at {}", at(self.nodes[id].mark));
        ParseError::Syntax { document: self.ctx.document, format: "yaml", message }
    }

    fn unsupported(&self, message: String) -> ParseError {
        ParseError::Unsupported { at: self.ctx.at(), message }
    }

    fn value(&mut self, id: usize) -> Result<Value, ParseError> {
        self.count()?;
        let nodes = self.nodes;
        match &nodes[id].kind {
            Kind::Alias { target, name } => {
                self.enter_alias(id, name)?;
                let value = self.value(*target);
                self.expanding.pop();
                value
            }
            Kind::Scalar { value, tag, plain } => {
                let scalar = resolve::resolve(value, tag.as_deref(), *plain)
                    .map_err(|m| self.unsupported(m))?;
                if let Scalar::Str(s) = &scalar {
                    self.ctx.string_fits(s.as_ref().map_or(value.len(), String::len))?;
                }
                let json = if self.ctx.options.go_numbers {
                    resolve::to_go(scalar, value)
                } else {
                    resolve::to_json(scalar, value)
                };
                match json {
                    Ok(v) => Ok(v),
                    Err(message) => {
                        self.no_json = true;
                        let stand_in =
                            std::iter::once((NO_JSON.to_string(), Value::String(message)));
                        Ok(Value::Object(stand_in.collect()))
                    }
                }
            }
            Kind::Seq(children) => {
                self.open(id)?;
                let mut out = Vec::with_capacity(children.len());
                for (i, &child) in children.iter().enumerate() {
                    self.ctx.push_index(i);
                    let item = self.value(child);
                    self.ctx.pop();
                    out.push(item?);
                }
                self.depth -= 1;
                Ok(Value::Array(out))
            }
            Kind::Map(children) => {
                self.open(id)?;
                let mut out = MapBuilder::default();
                for pair in children.chunks_exact(2) {
                    let (k, v) = (pair[0], pair[1]);
                    if self.is_merge(k) {
                        self.ctx.push_key("<<".to_string());
                        let merged = self.merge(v, &mut out);
                        self.ctx.pop();
                        merged?;
                        continue;
                    }
                    let key = self.key(k)?;
                    self.ctx.push_key(key);
                    let value = match self.value(v) {
                        Ok(value) => value,
                        Err(e) => {
                            self.ctx.pop();
                            return Err(e);
                        }
                    };
                    out.set(self.ctx, value)?;
                }
                self.depth -= 1;
                Ok(Value::Object(out.finish()))
            }
        }
    }

    /// Enters a mapping or sequence, refused past [`MAX_DEPTH`].
    fn open(&mut self, id: usize) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax(id, format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    /// go-yaml v2's merge key: a plain (or `!!merge`) `<<`.
    fn is_merge(&self, id: usize) -> bool {
        matches!(&self.nodes[id].kind, Kind::Scalar { value, tag, plain }
            if value == "<<" && (*plain || tag.as_deref() == Some("tag:yaml.org,2002:merge")))
    }

    /// Whether a merge may take the node: a mapping, or an alias of one.
    fn is_mapping(&self, id: usize) -> bool {
        match &self.nodes[id].kind {
            Kind::Map(_) => true,
            Kind::Alias { target, .. } => matches!(self.nodes[*target].kind, Kind::Map(_)),
            _ => false,
        }
    }

    /// Spreads a merge key's value into the mapping: a mapping (or an alias of one), or a
    /// sequence of them, the earlier ones taking precedence (the sequence itself is not
    /// decoded, so not counted).
    fn merge(&mut self, id: usize, out: &mut MapBuilder) -> Result<(), ParseError> {
        let nodes = self.nodes;
        let items: Vec<usize> = match &nodes[id].kind {
            Kind::Seq(children) => children.iter().rev().copied().collect(),
            _ => vec![id],
        };
        for item in items {
            if !self.is_mapping(item) {
                return Err(wrong_merge(self.ctx));
            }
            if let Value::Object(m) = self.value(item)? {
                out.merge(m);
            }
        }
        Ok(())
    }

    /// A mapping key: decoded and counted as a value, then made JSON text as sigs.k8s.io/yaml
    /// makes it.
    fn key(&mut self, id: usize) -> Result<String, ParseError> {
        self.count()?;
        let nodes = self.nodes;
        match &nodes[id].kind {
            Kind::Alias { target, name } => {
                self.enter_alias(id, name)?;
                let key = self.key(*target);
                self.expanding.pop();
                key
            }
            Kind::Scalar { value, tag, plain } => {
                let scalar = resolve::resolve(value, tag.as_deref(), *plain)
                    .map_err(|m| self.unsupported(m))?;
                let key = resolve::key_text(scalar, value).unwrap_or_else(|message| {
                    self.no_json = true;
                    format!("{NO_JSON}{message}")
                });
                self.ctx.string_fits(key.len())?;
                Ok(key)
            }
            Kind::Seq(_) | Kind::Map(_) => {
                Err(self.unsupported("a mapping key must be a scalar".to_string()))
            }
        }
    }
}

/// The first [`NO_JSON`] stand-in left in a built document: its message, with `path` set to
/// its pointer (of the mapping, for a key).
fn no_json(value: &Value, path: &mut String) -> Option<String> {
    let len = path.len();
    match value {
        Value::Object(m) => m.iter().find_map(|(k, v)| {
            if let Some(message) = k.strip_prefix(NO_JSON) {
                return Some(if message.is_empty() {
                    v.as_str().unwrap_or_default().to_string()
                } else {
                    message.to_string()
                });
            }
            path.push('/');
            path.push_str(&escape_pointer_token(k));
            let found = no_json(v, path);
            if found.is_none() {
                path.truncate(len);
            }
            found
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            path.push_str(&format!("/{i}"));
            let found = no_json(v, path);
            if found.is_none() {
                path.truncate(len);
            }
            found
        }),
        _ => None,
    }
}
