//! Time helpers: RFC 3339 timestamps and Go durations, as unix seconds / nanoseconds.

use std::fmt;

use crate::civil::days_from_civil;

/// A time value that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// Not an RFC 3339 timestamp.
    #[error("invalid rfc 3339 time `{0}`")]
    Timestamp(String),
    /// Not a Go duration (nor plain seconds where those are allowed).
    #[error("unable to parse {0} as a duration")]
    Duration(String),
}

/// (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let (y, m, d) = crate::civil::civil_from_days(z);
    // Month and day are 1..=12 and 1..=31.
    (y, m as u32, d as u32)
}

/// Parses an RFC 3339 timestamp (`2024-05-01T10:00:00Z`, fractions and offsets allowed) into
/// unix seconds (fractions are dropped).
///
/// # Examples
///
/// ```
/// use gitops_core::sync::time::{parse_rfc3339, format_rfc3339};
/// assert_eq!(parse_rfc3339("1970-01-02T00:00:00Z").unwrap(), 86_400);
/// assert_eq!(parse_rfc3339("2024-02-29T12:30:00.5+02:00").unwrap(),
///            parse_rfc3339("2024-02-29T10:30:00Z").unwrap());
/// assert_eq!(format_rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
/// assert!(parse_rfc3339("2024-13-01T00:00:00Z").is_err());
/// ```
pub fn parse_rfc3339(s: &str) -> Result<i64, TimeError> {
    let err = || TimeError::Timestamp(s.to_string());
    let b = s.as_bytes();
    if b.len() < 20 {
        return Err(err());
    }
    let num = |from: usize, to: usize| -> Result<i64, TimeError> {
        let part = s.get(from..to).ok_or_else(err)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return Err(err());
        }
        part.parse().map_err(|_| err())
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(err());
    }
    let (y, mo, d, h, mi, se) =
        (num(0, 4)?, num(5, 7)?, num(8, 10)?, num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo)
        || d < 1
        || d > mdays[(mo - 1) as usize]
        || h > 23
        || mi > 59
        || se > 60
    {
        return Err(err());
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(err());
        }
    }
    let offset = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1, i + 3)?, num(i + 4, i + 6)?);
            if oh > 23 || om > 59 {
                return Err(err());
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' { o } else { -o }
        }
        _ => return Err(err()),
    };
    Ok(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset)
}

/// Formats unix seconds as RFC 3339 in UTC (`2023-11-14T22:13:20Z`).
pub fn format_rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// A Go `time.Duration`, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct GoDuration(pub i64);

impl GoDuration {
    /// Whole seconds (truncated).
    pub fn seconds(self) -> i64 {
        self.0 / 1_000_000_000
    }
}

impl fmt::Display for GoDuration {
    /// Go's `Duration.String` for whole seconds and above (`1h30m0s`, `5s`), `Nms`/`0s` below.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return f.write_str("0s");
        }
        let neg = ns < 0;
        let mut u = ns.unsigned_abs();
        if neg {
            f.write_str("-")?;
        }
        if u < 1_000_000_000 {
            return if u.is_multiple_of(1_000_000) {
                write!(f, "{}ms", u / 1_000_000)
            } else {
                write!(f, "{u}ns")
            };
        }
        let frac = u % 1_000_000_000;
        u /= 1_000_000_000;
        let (h, m, s) = (u / 3600, u / 60 % 60, u % 60);
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if h > 0 || m > 0 {
            write!(f, "{m}m")?;
        }
        if frac == 0 {
            write!(f, "{s}s")
        } else {
            let digits = format!("{frac:09}");
            write!(f, "{s}.{}s", digits.trim_end_matches('0'))
        }
    }
}

/// Go's `time.ParseDuration`: a sequence of decimal numbers with units `ns`, `us` (`µs`),
/// `ms`, `s`, `m`, `h`, with an optional sign; `0` alone is allowed.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::time::parse_go_duration;
/// assert_eq!(parse_go_duration("1h30m").unwrap().seconds(), 5400);
/// assert_eq!(parse_go_duration("1.5s").unwrap().0, 1_500_000_000);
/// assert_eq!(parse_go_duration("500ms").unwrap().to_string(), "500ms");
/// assert!(parse_go_duration("5").is_err());
/// ```
pub fn parse_go_duration(s: &str) -> Result<GoDuration, TimeError> {
    let err = || TimeError::Duration(s.to_string());
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(GoDuration(0));
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest.bytes().take_while(|c| c.is_ascii_digit() || *c == b'.').count();
        if n == 0 {
            return Err(err());
        }
        let value: f64 = rest[..n].parse().map_err(|_| err())?;
        rest = &rest[n..];
        let u = rest.chars().take_while(|c| !c.is_ascii_digit() && *c != '.').collect::<String>();
        rest = &rest[u.len()..];
        let unit: f64 = match u.as_str() {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(err()),
        };
        total += value * unit;
    }
    if total > i64::MAX as f64 {
        return Err(err());
    }
    let ns = total.round() as i64;
    Ok(GoDuration(if neg { -ns } else { ns }))
}

/// A retry duration: plain integer seconds (Go `Atoi`), else a Go duration.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::time::parse_retry_duration;
/// assert_eq!(parse_retry_duration("30").unwrap().seconds(), 30);
/// assert_eq!(parse_retry_duration("2m").unwrap().seconds(), 120);
/// assert_eq!(parse_retry_duration("soon").unwrap_err().to_string(),
///            "unable to parse soon as a duration");
/// ```
pub fn parse_retry_duration(s: &str) -> Result<GoDuration, TimeError> {
    if let Some(n) = super::hooks::go_atoi(s) {
        return Ok(GoDuration(n.saturating_mul(1_000_000_000)));
    }
    parse_go_duration(s).map_err(|_| TimeError::Duration(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_many_days() {
        for secs in [-86_400 * 800, -1, 0, 951_782_400, 4_102_444_800, 1_709_164_800] {
            assert_eq!(parse_rfc3339(&format_rfc3339(secs)).unwrap(), secs);
        }
    }
}
