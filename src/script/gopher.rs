//! How gopher-lua, the Lua of Argo CD, turns numbers into text and text into numbers. One
//! place for the built-in health rules, the built-in actions and the Lua engine, which all
//! answer as Argo CD's scripts do:
//!
//! - [`number_text`]: `tostring(n)` and `n .. ""` (an integral value in `int64`'s range as an
//!   integer, `-0` as `0`; any other as Go's `%v`: `0.5`, `1.2345675e+06`, `+Inf`, `NaN`);
//! - [`tonumber`]: the base library's `tonumber(s [, base])` on a string (text with a `.` read
//!   as Go's `strconv.ParseFloat`, any other by `strconv.ParseInt` in base 10, or 16 after a
//!   `0x`: `"1e3"`, `"1e400"` and `"inf"` are no numbers, `"010"` is 10);
//! - [`coerce`]: a string as an operand of arithmetic (`"010" + 0` is 8: `ParseInt` with the
//!   base read from the prefix, then `ParseFloat`).
//!
//! Go's parsers fail on a value out of range (`1.5e400`), so these give no number there.

/// `2^63`: the first value past `int64`.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// Go's `int64(n)` on amd64: the value truncated toward zero; `NaN` and values out of range
/// give the smallest `int64`.
pub(crate) fn go_int64(n: f64) -> i64 {
    if n.is_nan() || !(-TWO_63..TWO_63).contains(&n) { i64::MIN } else { n as i64 }
}

/// A number as gopher-lua's `tostring` and `..` write it.
pub(crate) fn number_text(n: f64) -> String {
    // gopher-lua's isInteger: float64(int64(n)) == n.
    let i = go_int64(n);
    if i as f64 == n {
        return i.to_string();
    }
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    // Go's %v of a float64 (strconv's 'g' with the shortest digits): the exponent form when
    // the exponent is below -4 or at least 6, else plain digits.
    let e = format!("{n:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        format!("{n}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// The text `tonumber` reads: gopher-lua trims spaces, newlines and tabs (not `\r`).
fn trimmed(s: &str) -> &str {
    s.trim_matches([' ', '\n', '\t'])
}

/// gopher-lua's `tonumber(s, base)` of a string (`base` is `None` when not given).
pub(crate) fn tonumber(s: &str, base: Option<i64>) -> Option<f64> {
    let s = trimmed(s);
    if s.contains('.') {
        return parse_float(s);
    }
    match base {
        None if s.len() >= 2 && s.is_char_boundary(2) && s[..2].eq_ignore_ascii_case("0x") => {
            parse_int(&s[2..], 16)
        }
        None => parse_int(s, 10),
        Some(b) => parse_int(s, u32::try_from(b).ok()?),
    }
    .map(|i| i as f64)
}

/// A string as an operand of arithmetic in gopher-lua (its `parseNumber`).
pub(crate) fn coerce(s: &str) -> Option<f64> {
    let s = trimmed(s);
    parse_int(s, 0).map(|i| i as f64).or_else(|| parse_float(s))
}

/// Go's `underscoreOK`: underscores only between digits (or after a base prefix).
fn underscores_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let mut saw = b'^';
    let mut hex = false;
    if b.len() >= i + 2 && b[i] == b'0' && matches!(b[i + 1] | 0x20, b'b' | b'o' | b'x') {
        hex = b[i + 1] | 0x20 == b'x';
        saw = b'0';
        i += 2;
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.ParseInt(s, base, 64)`: `base` 0 reads the base from the prefix (`0x`, `0o`,
/// `0b`, a leading `0` for octal) and allows underscores between digits; 2 to 36 is that base.
fn parse_int(s: &str, base: u32) -> Option<i64> {
    if base == 1 || base > 36 {
        return None;
    }
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if base != 0 {
        (base, body)
    } else {
        let lower = body.get(..2).map(str::to_ascii_lowercase);
        match lower.as_deref() {
            Some("0x") => (16, &body[2..]),
            Some("0o") => (8, &body[2..]),
            Some("0b") => (2, &body[2..]),
            _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
            _ => (10, body),
        }
    };
    let digits: std::borrow::Cow<'_, str> = if base == 0 && digits.contains('_') {
        if !underscores_ok(s) {
            return None;
        }
        digits.replace('_', "").into()
    } else {
        digits.into()
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let magnitude = u64::from_str_radix(&digits, radix).ok()?;
    if negative { 0i64.checked_sub_unsigned(magnitude) } else { i64::try_from(magnitude).ok() }
}

/// Go's `strconv.ParseFloat(s, 64)`: decimal and hexadecimal (`0x1.8p1`) floating-point text,
/// underscores between digits, `inf`, `infinity` (signed) and `nan` in any case; a value out
/// of range is an error, so `None`.
fn parse_float(s: &str) -> Option<f64> {
    let (sign, body) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(sign * f64::INFINITY);
    }
    if s.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    if s.contains('_') && !underscores_ok(s) {
        return None;
    }
    let clean = s.replace('_', "");
    let body = clean.trim_start_matches(['+', '-']);
    let value = if body.len() >= 2 && body[..2].eq_ignore_ascii_case("0x") {
        sign * hex_float(&body[2..])?
    } else {
        if !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        clean.parse::<f64>().ok()?
    };
    value.is_finite().then_some(value)
}

/// The digits of a hexadecimal float after `0x`: a mantissa with at least one digit and an
/// optional point, then a mandatory `p` exponent in decimal.
fn hex_float(s: &str) -> Option<f64> {
    let (mantissa, exp) = s.split_once(['p', 'P'])?;
    let exp: i32 = match exp.strip_prefix('+') {
        Some(e) if !e.starts_with(['+', '-']) => e.parse().ok()?,
        _ => exp.parse().ok()?,
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut m: u64 = 0;
    let mut shift: i32 = 0;
    for (i, c) in int.chars().chain(frac.chars()).enumerate() {
        let d = u64::from(c.to_digit(16)?);
        let in_frac = i >= int.len();
        if m >> 56 == 0 {
            m = m * 16 + d;
            if in_frac {
                shift -= 4;
            }
        } else if !in_frac {
            shift += 4;
        }
    }
    Some(m as f64 * 2f64.powi(exp.saturating_add(shift)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text and the answer of gopher-lua 1.1.2 (Argo CD 3.6.2's), run with Go 1.26.
    #[test]
    fn tonumber_reads_as_gopher_lua() {
        let cases: &[(&str, Option<f64>)] = &[
            ("1e400", None),
            ("1e3", None),
            ("010", Some(10.0)),
            ("0x10", Some(16.0)),
            ("-0x10", None),
            ("0X1f", Some(31.0)),
            ("-0b11", None),
            ("0b11", None),
            ("+5", Some(5.0)),
            (" 7\n", Some(7.0)),
            ("1.5", Some(1.5)),
            ("1.5e400", None),
            ("1_000", None),
            ("inf", None),
            ("+Inf", None),
            ("nan", None),
            ("1.", Some(1.0)),
            (".5", Some(0.5)),
            ("0x1.8p1", Some(3.0)),
            ("0x", None),
            ("089", Some(89.0)),
            ("0x-1", Some(-1.0)),
            ("1e3.", None),
            ("-0", Some(0.0)),
            ("9223372036854775808", None),
            ("-9223372036854775808", Some(-9_223_372_036_854_775_808.0)),
            ("0o17", None),
            ("Inf.", None),
            ("0x1p-2", None),
            ("1_000.5", Some(1000.5)),
            ("\r1", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(tonumber(text, None), *want, "{text:?}");
        }
        assert_eq!(tonumber("ff", Some(16)), Some(255.0));
        assert_eq!(tonumber("0x10", Some(16)), None);
        assert_eq!(tonumber("0b11", Some(0)), Some(3.0));
        assert_eq!(tonumber("7", Some(1)), None);
    }

    #[test]
    fn arithmetic_reads_prefixes_as_gopher_lua() {
        for (text, want) in [
            ("010", Some(8.0)),
            ("0x10", Some(16.0)),
            ("-0b11", Some(-3.0)),
            ("1_000", Some(1000.0)),
            ("1e3", Some(1000.0)),
            ("inf", Some(f64::INFINITY)),
            ("1e400", None),
            ("abc", None),
        ] {
            assert_eq!(coerce(text), want, "{text:?}");
        }
    }

    /// gopher-lua 1.1.2's `tostring` of each number.
    #[test]
    fn numbers_are_written_as_gopher_lua_writes_them() {
        for (n, t) in [
            (3.0, "3"),
            (-1.0, "-1"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (1e15, "1000000000000000"),
            (1e20, "1e+20"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1_234_567.5, "1.2345675e+06"),
            (123_456.5, "123456.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (2f64.powi(63), "9.223372036854776e+18"),
            (-(2f64.powi(63)), "-9223372036854775808"),
            (123_456_789_012_345_678.0, "123456789012345680"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
        ] {
            assert_eq!(number_text(n), t, "{n}");
        }
    }
}
