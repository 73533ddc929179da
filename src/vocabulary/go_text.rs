//! Go's `%q` (`strconv.Quote`), as Argo CD's messages quote names and input in it.

/// Go's `%q` of a string (`strconv.Quote`): double quotes, with `"` and `\` escaped and every
/// character Go's `unicode.IsPrint` refuses (controls, formats, separators other than the ASCII
/// space, private use, unassigned) written as an escape.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if !is_go_printable(c) => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space
/// (Unicode 16 here, 17 in Go 1.27: a character new in 17 is escaped here, printed by Go).
fn is_go_printable(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    c == ' '
        || !matches!(
            get_general_category(c),
            G::Control
                | G::Format
                | G::Surrogate
                | G::PrivateUse
                | G::Unassigned
                | G::SpaceSeparator
                | G::LineSeparator
                | G::ParagraphSeparator
        )
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_what_go_does_not_print() {
        assert_eq!(super::go_quote("a b\"\\é"), r#""a b\"\\é""#);
        assert_eq!(super::go_quote("\t\u{1}\u{7f}"), r#""\t\x01\x7f""#);
        assert_eq!(
            super::go_quote("\u{a0}\u{200b}\u{3000}\u{e000}"),
            r#""\u00a0\u200b\u3000\ue000""#
        );
        assert_eq!(super::go_quote("\u{f0000}😀"), r#""\U000f0000😀""#);
    }
}
