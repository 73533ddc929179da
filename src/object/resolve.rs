//! YAML 1.1 scalars as Kubernetes reads them: go-yaml v2's resolution (`resolve.go`), then the
//! JSON round trip of sigs.k8s.io/yaml and the API machinery's number reading.
//!
//! go-yaml v2 resolves a plain scalar by its first character: the words of its table
//! (`y`, `Yes`, `on`, `OFF`, `~`, `Null`, `.inf`, ...), then for a digit or a sign an integer
//! as Go's `strconv.ParseInt(s, 0, 64)` reads it once underscores are removed (`0x1F`, `0o17`,
//! `0b101`, `0644` octal), a `uint64`, a float of the form `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)
//! ([eE][-+]?[0-9]+)?`, and `0b`/`-0b` binary with a sign after the prefix; anything else is a
//! string (sexagesimal `190:20:30` included: go-yaml v2 leaves base 60 out). A quoted or block
//! scalar is a string unless tagged; a tag from `!!str`, `!!int`, `!!float`, `!!bool`,
//! `!!null` and `!!timestamp` must agree with what the text resolves to (an integer may be a
//! `!!float`); any other tag leaves the text a string, and `!!binary` decodes base64.
//!
//! The value then goes through JSON: a whole float that fits 64 bits becomes an integer, a
//! `uint64` becomes a float, NaN and the infinities have no JSON form, and a mapping key
//! becomes text (`true`, `420`, a float in Go's shortest 32-bit `%g`), except a null or
//! `uint64` key, which sigs.k8s.io/yaml refuses.

use serde_json::Value;

/// The tag prefix of `!!`.
const PREFIX: &str = "tag:yaml.org,2002:";

/// What a scalar resolves to, before JSON.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    /// Above `i64::MAX`: go-yaml's `uint64`.
    Uint(u64),
    Float(f64),
    /// The text itself, or the bytes `!!binary` decodes to, made valid UTF-8 as Go's JSON
    /// encoder makes them (each invalid byte a U+FFFD).
    Str(Option<String>),
}

/// Resolves a scalar: its text, its tag as the parser resolved it (`tag:yaml.org,2002:int`,
/// `!custom`, `!`) and whether it was plain and untagged (or tagged `!`). The error is
/// go-yaml's message.
pub(super) fn resolve(value: &str, tag: Option<&str>, plain: bool) -> Result<Scalar, String> {
    let tag = tag.unwrap_or("");
    if tag.is_empty() && !plain {
        return Ok(Scalar::Str(None));
    }
    let short = tag.strip_prefix(PREFIX);
    match short {
        Some("binary") => return binary(value).map(|s| Scalar::Str(Some(s))),
        Some("str" | "bool" | "int" | "float" | "null" | "timestamp") => {}
        None if tag.is_empty() => {}
        // Any other tag: the text, unresolved.
        _ => return Ok(Scalar::Str(None)),
    }
    let (rtag, out) =
        if short == Some("str") { ("str", Scalar::Str(None)) } else { implicit(value) };
    let timestamp = rtag == "str" && matches!(short, Some("timestamp")) && is_timestamp(value);
    match short {
        None | Some("str") => Ok(out),
        Some(t) if t == rtag || timestamp => Ok(out),
        Some("float") if rtag == "int" => match out {
            Scalar::Int(i) => Ok(Scalar::Float(i as f64)),
            _ => Err(format!("cannot decode !!{rtag} `{value}` as a !!float")),
        },
        Some(t) => Err(format!("cannot decode !!{rtag} `{value}` as a !!{t}")),
    }
}

/// go-yaml v2's resolution of an untagged plain scalar: the tag it finds and the value.
fn implicit(s: &str) -> (&'static str, Scalar) {
    let hint = match s.bytes().next() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return ("str", Scalar::Str(None)),
    };
    if let Some(found) = word(s) {
        return found;
    }
    match hint {
        b'.' => {
            if is_float(s)
                && let Some(f) = go_parse_float(s)
            {
                return ("float", Scalar::Float(f));
            }
        }
        b'D' | b'S' => {
            // A timestamp (`2001-12-14`) stays its text, as it would fall through to here.
            let plain = s.replace('_', "");
            if let Ok(i) = go_parse_int(&plain, 0) {
                return ("int", Scalar::Int(i));
            }
            if let Ok(u) = go_parse_uint(&plain, 0) {
                return ("int", Scalar::Uint(u));
            }
            if is_float(&plain)
                && let Some(f) = go_parse_float(&plain)
            {
                return ("float", Scalar::Float(f));
            }
            if let Some(rest) = plain.strip_prefix("0b") {
                if let Ok(i) = go_parse_int(rest, 2) {
                    return ("int", Scalar::Int(i));
                }
                if let Ok(u) = go_parse_uint(rest, 2) {
                    return ("int", Scalar::Uint(u));
                }
            } else if let Some(rest) = plain.strip_prefix("-0b")
                && let Ok(i) = go_parse_int(&format!("-{rest}"), 2)
            {
                return ("int", Scalar::Int(i));
            }
        }
        _ => {}
    }
    ("str", Scalar::Str(None))
}

/// The words of go-yaml v2's table.
fn word(s: &str) -> Option<(&'static str, Scalar)> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            ("bool", Scalar::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            ("bool", Scalar::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => ("null", Scalar::Null),
        ".nan" | ".NaN" | ".NAN" => ("float", Scalar::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            ("float", Scalar::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => ("float", Scalar::Float(f64::NEG_INFINITY)),
        _ => return None,
    })
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, go-yaml v2's float form.
fn is_float(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i, i - start)
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if b.get(i) == Some(&b'.') {
        let (j, n) = digits(i + 1);
        if n == 0 {
            return false;
        }
        i = j;
    } else {
        let (j, n) = digits(i);
        if n == 0 {
            return false;
        }
        i = j;
        if b.get(i) == Some(&b'.') {
            i = digits(i + 1).0;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let (j, n) = digits(i);
        if n == 0 {
            return false;
        }
        i = j;
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` on text of [`is_float`]'s form: out of range is an error.
fn go_parse_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Why Go's integer parsing failed.
#[derive(Debug, PartialEq)]
enum IntError {
    Syntax,
    Range,
}

/// Go's `strconv.ParseUint(s, base, 64)` for base 0 (prefixes `0b`, `0o`, `0x`, and `0` for
/// octal) or 2. No sign; underscores are gone before this is called.
fn go_parse_uint(s: &str, base: u32) -> Result<u64, IntError> {
    if s.is_empty() {
        return Err(IntError::Syntax);
    }
    let (base, digits) = if base == 0 {
        let b = s.as_bytes();
        if b[0] != b'0' {
            (10, s)
        } else if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'b') {
            (2, &s[2..])
        } else if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'o') {
            (8, &s[2..])
        } else if b.len() >= 3 && b[1].eq_ignore_ascii_case(&b'x') {
            (16, &s[2..])
        } else {
            (8, &s[1..])
        }
    } else {
        (base, s)
    };
    let mut n: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(36).filter(|d| *d < base).ok_or(IntError::Syntax)?;
        match n.checked_mul(u64::from(base)).and_then(|m| m.checked_add(u64::from(d))) {
            Some(m) => n = m,
            None => overflow = true,
        }
    }
    if overflow { Err(IntError::Range) } else { Ok(n) }
}

/// Go's `strconv.ParseInt(s, base, 64)`: an optional sign, then [`go_parse_uint`].
fn go_parse_int(s: &str, base: u32) -> Result<i64, IntError> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_uint(rest, base)?;
    let cutoff = 1u64 << 63;
    if neg {
        if u > cutoff {
            return Err(IntError::Range);
        }
        Ok((u as i64).wrapping_neg())
    } else if u >= cutoff {
        Err(IntError::Range)
    } else {
        Ok(u as i64)
    }
}

/// Whether `!!timestamp` accepts the text: go-yaml v2's layouts `2006-1-2`,
/// `2006-1-2T15:4:5.999999999Z07:00` (`t` too) and `2006-1-2 15:4:5.999999999`, with Go's
/// ranges for each field.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, min: usize, max: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < max {
            *i += 1;
        }
        if *i - start < min {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let sep = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    let date = (|| {
        let year = num(&mut i, 4, 4)?;
        sep(&mut i, b'-')?;
        let month = num(&mut i, 1, 2)?;
        sep(&mut i, b'-')?;
        let day = num(&mut i, 1, 2)?;
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days).contains(&day).then_some(())
    })();
    if date.is_none() {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zone = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    let time = (|| {
        let h = num(&mut i, 1, 2)?;
        sep(&mut i, b':')?;
        let m = num(&mut i, 1, 2)?;
        sep(&mut i, b':')?;
        let sec = num(&mut i, 1, 2)?;
        if h >= 24 || m >= 60 || sec >= 60 {
            return None;
        }
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            num(&mut i, 1, 9)?;
        }
        if zone && sep(&mut i, b'Z').is_none() {
            if !matches!(b.get(i), Some(b'+' | b'-')) {
                return None;
            }
            i += 1;
            let zh = num(&mut i, 2, 2)?;
            sep(&mut i, b':')?;
            let zm = num(&mut i, 2, 2)?;
            if zh >= 24 || zm >= 60 {
                return None;
            }
        }
        Some(())
    })();
    time.is_some() && i == b.len()
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, line breaks skipped.
fn binary(value: &str) -> Result<String, String> {
    use base64::Engine as _;
    const STD: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    let text: String = value.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let bytes =
        STD.decode(text).map_err(|_| "!!binary value contains invalid base64 data".to_string())?;
    Ok(go_json_string(&bytes))
}

/// Bytes made valid UTF-8 as Go's JSON encoder makes them: each invalid byte a U+FFFD.
fn go_json_string(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len());
                out.extend(std::iter::repeat_n('\u{fffd}', bad));
                bytes = &rest[bad..];
            }
        }
    }
}

/// A resolved value as it comes out of Kubernetes' JSON round trip; the error is the number
/// with no JSON form.
pub(super) fn to_json(scalar: Scalar, text: &str) -> Result<Value, String> {
    Ok(match scalar {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(i) => Value::from(i),
        // Above i64::MAX: the API machinery reads it back as a float.
        Scalar::Uint(u) => Value::from(u as f64),
        Scalar::Float(f) => float(f)?,
        Scalar::Str(None) => Value::String(text.to_owned()),
        Scalar::Str(Some(s)) => Value::String(s),
    })
}

/// A number of a JSON document as go-yaml v2 and the API machinery read it (a JSON number is
/// a YAML 1.1 int or float): a whole float below 1e21 that fits 64 bits becomes an integer
/// (`3.0`, `1e3`, `-0.0` is 0), an integer above `i64::MAX` a float. `None` when it stays as
/// it is.
pub(super) fn json_number(n: &serde_json::Number) -> Option<Value> {
    match (n.as_u64(), n.as_f64()) {
        (Some(u), _) if u > i64::MAX as u64 => float(u as f64).ok(),
        (None, Some(f)) if n.is_f64() => float(f).ok(),
        _ => None,
    }
}

/// A resolved value as go-yaml v2 gives it to a typed reading ([`super::from_yaml_value`]):
/// [`to_json`], but a float stays a float and a `uint64` a `uint64`, the JSON step
/// (`json_number`) left to the reading. NaN and the infinities, which JSON cannot hold, are
/// the text sigs.k8s.io/yaml gives them where a string is wanted (`NaN`, `+Inf`, `-Inf`).
pub(super) fn to_go(scalar: Scalar, text: &str) -> Result<Value, String> {
    match scalar {
        Scalar::Float(f) => Ok(match serde_json::Number::from_f64(f) {
            Some(n) => Value::Number(n),
            None if f.is_nan() => Value::from("NaN"),
            None => Value::from(if f > 0.0 { "+Inf" } else { "-Inf" }),
        }),
        Scalar::Uint(u) => Ok(Value::from(u)),
        other => to_json(other, text),
    }
}

/// A float through Go's JSON encoder and the API machinery's reader. The encoder writes the
/// shortest digits that read back as the same float, in plain notation below 1e21 (`2^63` is
/// `9223372036854776000`); the reader takes text that parses as an int64 as one.
fn float(f: f64) -> Result<Value, String> {
    if !f.is_finite() {
        let name = if f.is_nan() {
            ".nan"
        } else if f > 0.0 {
            ".inf"
        } else {
            "-.inf"
        };
        return Err(format!("number {name} has no json form"));
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // `{:e}` gives the shortest digits; written out with zeros, as Go writes them.
        let sci = format!("{:e}", f.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let exp: usize = exp.parse().unwrap_or(0);
        let mut text = String::from(if f < 0.0 { "-" } else { "" });
        text.push_str(&digits);
        text.extend(std::iter::repeat_n('0', (exp + 1).saturating_sub(digits.len())));
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::from(i));
        }
    }
    Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
}

/// A resolved mapping key as sigs.k8s.io/yaml makes it a JSON key; the error names what it
/// refuses.
pub(super) fn key_text(scalar: Scalar, text: &str) -> Result<String, String> {
    Ok(match scalar {
        Scalar::Str(None) => text.to_owned(),
        Scalar::Str(Some(s)) => s,
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => go_float32_g(f),
        Scalar::Null => {
            return Err(format!("mapping key `{text}` is null, which json cannot hold"));
        }
        Scalar::Uint(u) => {
            return Err(format!(
                "mapping key `{u}` is an unsigned 64-bit integer, which json cannot hold"
            ));
        }
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, with `.inf`, `-.inf` and `.nan` for the
/// values it names `+Inf`, `-Inf` and `NaN`.
pub(super) fn go_float32_g(f: f64) -> String {
    let f = f as f32;
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` gives the shortest digits that read back as the same f32.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if f < 0.0 { "-" } else { "" };
    let nd = digits.len() as i32;
    if !(-4..6).contains(&exp) {
        let rest = &digits[1..];
        let dot = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{}{dot}e{esign}{:02}", &digits[..1], exp.abs());
    }
    let dp = exp + 1;
    let mut out = String::from(sign);
    if dp > 0 {
        for i in 0..dp {
            out.push(digits.as_bytes().get(i as usize).map_or('0', |&c| c as char));
        }
    } else {
        out.push('0');
    }
    let decimals = (nd - dp).max(0);
    if decimals > 0 {
        out.push('.');
        for i in 0..decimals {
            let at = dp + i;
            let c = if at >= 0 {
                digits.as_bytes().get(at as usize).map_or('0', |&c| c as char)
            } else {
                '0'
            };
            out.push(c);
        }
    }
    out
}
