//! Time helpers: RFC 3339 timestamps and Go durations, as unix seconds / nanoseconds.

use std::fmt;

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

/// Parses an RFC 3339 timestamp as Go's `time.Parse(time.RFC3339, ..)` does
/// (`2024-05-01T10:00:00Z`, fractions and offsets allowed) into unix seconds (fractions are
/// dropped).
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
    crate::civil::parse_rfc3339(s)
        .map(|(secs, _)| secs)
        .ok_or_else(|| TimeError::Timestamp(s.to_string()))
}

/// Formats unix seconds as RFC 3339 in UTC (`2023-11-14T22:13:20Z`).
pub fn format_rfc3339(secs: i64) -> String {
    format!("{}Z", crate::civil::format_utc(secs))
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
    /// Go's `Duration.String` (`1h30m0s`, `5s`, `1.5ms`, `0s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::civil::format_go_duration(self.0))
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
    crate::civil::parse_go_duration(s)
        .map(GoDuration)
        .map_err(|_| TimeError::Duration(s.to_string()))
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
    if let Some(n) = crate::vocabulary::go_atoi(s) {
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
