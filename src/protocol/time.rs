//! RFC 3339 times as the host passes them in (`now`), read as the CLI reads `--now`.

/// A point in time read from RFC 3339 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Timestamp {
    /// Seconds since the Unix epoch, UTC (a fraction of a second is dropped).
    pub(crate) unix_seconds: i64,
}

impl Timestamp {
    /// Reads `2006-01-02T15:04:05Z`, with a fraction and an offset allowed
    /// (`sync::time::parse_rfc3339`, which `gitops-core decide --now` uses too).
    pub(crate) fn parse(text: &str) -> Result<Timestamp, String> {
        crate::sync::time::parse_rfc3339(text)
            .map(|unix_seconds| Timestamp { unix_seconds })
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::Timestamp;

    #[test]
    fn reads_rfc3339_as_the_cli_does() {
        let t = Timestamp::parse("2024-02-29T12:30:45.5+01:30").unwrap();
        assert_eq!(t.unix_seconds, 1_709_204_445);
        let t = Timestamp::parse("1969-12-31T23:59:59Z").unwrap();
        assert_eq!(t.unix_seconds, -1);
        assert_eq!(
            Timestamp::parse("2024-02-30T00:00:00Z").unwrap_err(),
            "invalid rfc 3339 time `2024-02-30T00:00:00Z`"
        );
        assert_eq!(Timestamp::parse("").unwrap_err(), "invalid rfc 3339 time ``");
    }
}
