//! RFC 3339 times as the host passes them in (`now`).

/// A point in time read from RFC 3339 text, as Go's `time.RFC3339Nano` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Timestamp {
    /// Seconds since the Unix epoch, UTC.
    pub(crate) unix_seconds: i64,
    /// Nanoseconds within the second.
    pub(crate) nanos: u32,
    /// The text as given.
    pub(crate) text: String,
}

impl Timestamp {
    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `t` and `z` may be lowercase.
    pub(crate) fn parse(text: &str) -> Result<Timestamp, String> {
        let bad = |why: &str| format!("invalid RFC 3339 time `{text}`: {why}");
        let b = text.as_bytes();
        let digits = |from: usize, n: usize| -> Option<i64> {
            let s = b.get(from..from + n)?;
            s.iter()
                .all(u8::is_ascii_digit)
                .then(|| s.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        };
        let shape = "expected the form 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00";
        let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) =
            (digits(0, 4), digits(5, 2), digits(8, 2), digits(11, 2), digits(14, 2), digits(17, 2))
        else {
            return Err(bad(shape));
        };
        if b.get(4) != Some(&b'-')
            || b.get(7) != Some(&b'-')
            || !matches!(b.get(10), Some(b'T' | b't'))
            || b.get(13) != Some(&b':')
            || b.get(16) != Some(&b':')
        {
            return Err(bad(shape));
        }
        let mut i = 19;
        let mut nanos = 0u32;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return Err(bad("expected digits after the decimal point"));
            }
            for _ in (i - start).min(9)..9 {
                nanos *= 10;
            }
        }
        let offset_seconds = match b.get(i) {
            Some(b'Z' | b'z') if i + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
                let (Some(h), Some(m)) = (digits(i + 1, 2), digits(i + 4, 2)) else {
                    return Err(bad(shape));
                };
                if h > 23 || m > 59 {
                    return Err(bad("offset out of range"));
                }
                let off = h * 3600 + m * 60;
                if *sign == b'-' { -off } else { off }
            }
            _ => return Err(bad(shape)),
        };
        if !(1..=12).contains(&month) {
            return Err(bad("month out of range"));
        }
        if day < 1 || day > days_in_month(year, month) {
            return Err(bad("day out of range"));
        }
        if hour > 23 || minute > 59 || second > 59 {
            return Err(bad("time of day out of range"));
        }
        let days = days_from_civil(year, month, day);
        let unix_seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
        Ok(Timestamp { unix_seconds, nanos, text: text.to_string() })
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::Timestamp;

    #[test]
    fn reads_rfc3339() {
        let t = Timestamp::parse("1970-01-01T00:00:00Z").unwrap();
        assert_eq!((t.unix_seconds, t.nanos), (0, 0));
        let t = Timestamp::parse("2024-02-29T12:30:45.5+01:30").unwrap();
        assert_eq!((t.unix_seconds, t.nanos), (1_709_204_445, 500_000_000));
        let t = Timestamp::parse("2026-12-03t01:10:09.123456789123z").unwrap();
        assert_eq!((t.unix_seconds, t.nanos), (1_796_260_209, 123_456_789));
        let t = Timestamp::parse("1969-12-31T23:59:59-00:00").unwrap();
        assert_eq!(t.unix_seconds, -1);
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        let cases = [
            ("2024-02-30T00:00:00Z", "day out of range"),
            ("2023-02-29T00:00:00Z", "day out of range"),
            ("2024-13-01T00:00:00Z", "month out of range"),
            ("2024-01-01T24:00:00Z", "time of day out of range"),
            ("2024-01-01T00:00:00.Z", "expected digits after the decimal point"),
            ("2024-01-01T00:00:00+24:00", "offset out of range"),
            (
                "2024-01-01 00:00:00Z",
                "expected the form 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00",
            ),
            (
                "2024-01-01T00:00:00",
                "expected the form 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00",
            ),
            ("", "expected the form 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00"),
            (
                "2024-01-01T00:00:00Zjunk",
                "expected the form 2006-01-02T15:04:05Z or 2006-01-02T15:04:05+07:00",
            ),
        ];
        for (text, why) in cases {
            assert_eq!(
                Timestamp::parse(text).unwrap_err(),
                format!("invalid RFC 3339 time `{text}`: {why}"),
                "{text}"
            );
        }
    }
}
