//! Time, the one civil-time module: a point in time ([`Timestamp`]) and a Go duration
//! ([`GoDuration`]) as Go reads and writes them, and everything built on them: proleptic
//! Gregorian arithmetic on day counts since 1970-01-01, RFC 3339 timestamps (`metav1.Time` in
//! diffs, sync windows and operation times, `os.date` in Lua), Go durations (`metav1.Duration`
//! in diffs, retry and backoff settings in sync), the wall clock of a time zone (sync windows)
//! and `strftime` (Lua's `os.date`). Go's `time` package (`time.Parse(time.RFC3339, ..)`,
//! `Time.Format`, `time.ParseDuration`, `Duration.String`) is the reference.

use std::fmt;
use std::str::FromStr;

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

/// A point in time: unix seconds and the nanoseconds of a fraction, read from RFC 3339 text
/// as Go's `time.Parse(time.RFC3339, ..)` reads it and written as Go's `Format(time.RFC3339)`
/// writes it in UTC (no fraction).
///
/// # Examples
///
/// ```
/// use gitops_core::vocabulary::Timestamp;
/// let t = Timestamp::parse("2024-02-29T12:30:00.5+02:00").unwrap();
/// assert_eq!(t.unix_seconds(), Timestamp::parse("2024-02-29T10:30:00Z").unwrap().unix_seconds());
/// assert_eq!(t.subsec_nanos(), 500_000_000);
/// assert_eq!(Timestamp::from_unix_seconds(1_700_000_000).to_string(), "2023-11-14T22:13:20Z");
/// assert_eq!(Timestamp::parse("2024-02-30T00:00:00Z").unwrap_err().to_string(),
///            "invalid rfc 3339 time `2024-02-30T00:00:00Z`");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp {
    seconds: i64,
    nanos: u32,
}

impl Timestamp {
    /// Reads `2006-01-02T15:04:05Z`, with a fraction (digits past the ninth dropped) and a `Z`
    /// or `±hh:mm` offset; anything else, an impossible date included, is an error.
    pub fn parse(text: &str) -> Result<Timestamp, TimeError> {
        parse_rfc3339_parts(text)
            .map(|(seconds, nanos)| Timestamp { seconds, nanos })
            .ok_or_else(|| TimeError::Timestamp(text.to_string()))
    }

    /// The time `seconds` after 1970-01-01T00:00:00Z.
    pub fn from_unix_seconds(seconds: i64) -> Timestamp {
        Timestamp { seconds, nanos: 0 }
    }

    /// Seconds since 1970-01-01T00:00:00Z (the fraction dropped).
    pub fn unix_seconds(self) -> i64 {
        self.seconds
    }

    /// The nanoseconds of the fraction.
    pub fn subsec_nanos(self) -> u32 {
        self.nanos
    }
}

impl fmt::Display for Timestamp {
    /// `2023-11-14T22:13:20Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Z", format_utc(self.seconds))
    }
}

impl FromStr for Timestamp {
    type Err = TimeError;

    fn from_str(s: &str) -> Result<Timestamp, TimeError> {
        Timestamp::parse(s)
    }
}

/// Unix seconds of RFC 3339 text ([`Timestamp::parse`]).
pub(crate) fn parse_rfc3339(s: &str) -> Result<i64, TimeError> {
    Timestamp::parse(s).map(Timestamp::unix_seconds)
}

/// RFC 3339 text of unix seconds, in UTC ([`Timestamp`]'s `Display`).
pub(crate) fn format_rfc3339(secs: i64) -> String {
    Timestamp::from_unix_seconds(secs).to_string()
}

/// A Go `time.Duration`, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct GoDuration(pub i64);

impl GoDuration {
    /// Go's `time.ParseDuration`: a sequence of decimal numbers with units `ns`, `us` (`µs`),
    /// `ms`, `s`, `m`, `h`, with an optional sign; `0` alone is allowed.
    pub fn parse(s: &str) -> Result<GoDuration, TimeError> {
        parse_go_duration(s).map(GoDuration).map_err(|_| TimeError::Duration(s.to_string()))
    }

    /// A retry duration (Argo CD's `RetryStrategy` backoff): plain integer seconds (Go
    /// `strconv.Atoi`), else a Go duration.
    pub fn parse_retry(s: &str) -> Result<GoDuration, TimeError> {
        if let Some(n) = super::go_atoi(s) {
            return Ok(GoDuration(n.saturating_mul(1_000_000_000)));
        }
        GoDuration::parse(s)
    }

    /// Whole seconds (truncated).
    pub fn seconds(self) -> i64 {
        self.0 / 1_000_000_000
    }
}

impl fmt::Display for GoDuration {
    /// Go's `Duration.String` (`1h30m0s`, `5s`, `1.5ms`, `0s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

/// Days since 1970-01-01 of a date (month 1..=12, day 1..=31).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// A time zone as Go's `time.LoadLocation` gives it, with its offsets and daylight saving taken
/// from the IANA database bundled into the binary (jiff's `tzdb-bundle-always`): never read from
/// the file system or the environment. `None` is UTC.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Location(Option<jiff::tz::TimeZone>);

/// A wall-clock reading of an instant in a [`Location`] (month 1..=12, weekday 0 = Sunday).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wall {
    pub(crate) year: i64,
    pub(crate) month: i64,
    pub(crate) day: i64,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
    pub(crate) weekday: i64,
}

impl Wall {
    /// The wall clock in UTC of unix seconds.
    pub(crate) fn utc(secs: i64) -> Wall {
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        Wall {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            // 1970-01-01 was a Thursday.
            weekday: (days + 4).rem_euclid(7),
        }
    }
}

impl Location {
    /// UTC.
    pub(crate) const UTC: Location = Location(None);

    /// Go's `time.LoadLocation(name)`: `""` and `UTC` are UTC; `Local` is the controller's own
    /// zone, UTC in Argo CD's image; a name with `..` or a leading slash is
    /// `time: invalid location name`; any other name must be an IANA zone or link, spelled
    /// with its exact case, else `unknown time zone <name>`.
    pub(crate) fn load(name: &str) -> Result<Location, String> {
        if matches!(name, "" | "UTC" | "Local") {
            return Ok(Location::UTC);
        }
        if name.contains("..") || name.starts_with(['/', '\\']) {
            return Err("time: invalid location name".to_string());
        }
        // jiff looks names up without regard to case and knows CLDR's `Etc/Unknown`; Go reads a
        // file of that exact name, and there is none for `Etc/Unknown`.
        match jiff::tz::TimeZoneDatabase::bundled().get(name) {
            Ok(tz) if tz.iana_name() == Some(name) && name != "Etc/Unknown" => {
                Ok(Location(Some(tz)))
            }
            _ => Err(format!("unknown time zone {name}")),
        }
    }

    /// The offset from UTC in seconds at the instant `unix` (seconds).
    pub(crate) fn offset(&self, unix: i64) -> i64 {
        let Some(tz) = &self.0 else { return 0 };
        let min = jiff::Timestamp::MIN.as_second();
        let max = jiff::Timestamp::MAX.as_second();
        match jiff::Timestamp::from_second(unix.clamp(min, max)) {
            Ok(ts) => i64::from(tz.to_offset(ts).seconds()),
            Err(_) => 0,
        }
    }

    /// The wall clock of the instant `unix` in this zone.
    pub(crate) fn wall(&self, unix: i64) -> Wall {
        Wall::utc(unix.saturating_add(self.offset(unix)))
    }

    /// Go's `time.Date(year, month, day, hour, min, sec, 0, loc)` in unix seconds: fields out
    /// of range carry over (month 13 is January of the next year, day 32 of May is June 1).
    /// A wall time that a zone's clocks skip or show twice is resolved as Go does it: with the
    /// offset at the instant `local − offset(local)`, which takes the offset before a gap
    /// (02:30 on the day Paris springs forward is 03:30 CEST), and in an overlap the later
    /// instant east of Greenwich (Paris: 02:30 CET), the earlier west of it (New York:
    /// 01:30 EDT).
    pub(crate) fn date(
        &self,
        year: i64,
        month: i64,
        day: i64,
        hour: i64,
        min: i64,
        sec: i64,
    ) -> i64 {
        let (year, month) = (year + (month - 1).div_euclid(12), (month - 1).rem_euclid(12) + 1);
        // days_from_civil is linear in the day, so a day past the month's end carries over.
        let days = days_from_civil(year, month, 1) + day - 1;
        let local = days * 86_400 + hour * 3600 + min * 60 + sec;
        local - self.offset(local - self.offset(local))
    }
}

/// Go's `time.Parse(time.RFC3339, s)`: `2024-05-01T10:00:00Z`, with an optional fraction and a
/// `Z` or `±hh:mm` offset. Returns unix seconds and the nanoseconds of the fraction (digits
/// past the ninth are dropped), or `None` for anything else, an impossible date included.
pub(crate) fn parse_rfc3339_parts(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    // Fixed positions below are in bounds: the length is checked first.
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let digits = &s[start..i.min(start + 9)];
        nanos = digits.parse::<u32>().ok()? * 10u32.pow(9 - u32::try_from(digits.len()).ok()?);
    }
    let offset = match s.get(i..)? {
        "Z" => 0,
        // `as_bytes()[3]` is in bounds: the length is checked first.
        rest if rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && rest.as_bytes()[3] == b':' =>
        {
            let (h, m) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if h > 23 || m > 59 {
                return None;
            }
            let o = h * 3600 + m * 60;
            if rest.starts_with('-') { -o } else { o }
        }
        _ => return None,
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    if day > month_days[usize::try_from(month - 1).ok()?] {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset;
    Some((secs, nanos))
}

/// `2006-01-02T15:04:05` of unix seconds, in UTC, without a zone.
pub(crate) fn format_utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
    }
    // The common case digit by digit (this runs for every timestamp a diff canonicalises).
    let mut out = String::with_capacity(32);
    push_digits(&mut out, y, 4);
    out.push('-');
    push_digits(&mut out, m, 2);
    out.push('-');
    push_digits(&mut out, d, 2);
    out.push('T');
    push_digits(&mut out, rem / 3600, 2);
    out.push(':');
    push_digits(&mut out, rem % 3600 / 60, 2);
    out.push(':');
    push_digits(&mut out, rem % 60, 2);
    out
}

/// Appends the `width` lowest decimal digits of `n` (not negative), zero-padded.
pub(crate) fn push_digits(out: &mut String, n: i64, width: u32) {
    for i in (0..width).rev() {
        let digit = n / 10_i64.pow(i) % 10;
        out.push(char::from(b'0' + u8::try_from(digit).unwrap_or(0)));
    }
}

/// Go `time.ParseDuration`, in nanoseconds; the error is Go's message.
pub(crate) fn parse_go_duration(s: &str) -> Result<i64, String> {
    let err = || format!("time: invalid duration \"{s}\"");
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let int_part = &rest[..int_end];
        rest = &rest[int_end..];
        let mut frac_part = "";
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            frac_part = &r[..end];
            rest = &r[end..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(err());
        }
        let unit_end = rest.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(rest.len());
        let unit: i128 = match &rest[..unit_end] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            u => {
                return Err(format!("time: unknown unit \"{u}\" in duration \"{s}\""));
            }
        };
        rest = &rest[unit_end..];
        let v: i128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| err())? };
        let mut value = v.checked_mul(unit).ok_or_else(err)?;
        if !frac_part.is_empty() {
            let digits = &frac_part[..frac_part.len().min(30)];
            let f: i128 = digits.parse().map_err(|_| err())?;
            let scale = 10i128
                .checked_pow(u32::try_from(digits.len()).map_err(|_| err())?)
                .ok_or_else(err)?;
            value += f * unit / scale;
        }
        total = total.checked_add(value).ok_or_else(err)?;
        if total > i128::from(i64::MAX) + 1 {
            return Err(err());
        }
    }
    let total = if neg { -total } else { total };
    i64::try_from(total).map_err(|_| err())
}

/// Go `time.Duration.String()`.
pub(crate) fn format_go_duration(d: i64) -> String {
    if d == 0 {
        return "0s".to_owned();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let sign = if neg { "-" } else { "" };
    fn frac(v: u64, unit: u64) -> String {
        let whole = v / unit;
        let rem = v % unit;
        if rem == 0 {
            return whole.to_string();
        }
        let width = unit.to_string().len() - 1;
        let digits = format!("{rem:0width$}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
    if u < 1_000_000_000 {
        return if u < 1_000 {
            format!("{sign}{u}ns")
        } else if u < 1_000_000 {
            format!("{sign}{}µs", frac(u, 1_000))
        } else {
            format!("{sign}{}ms", frac(u, 1_000_000))
        };
    }
    let secs = frac(u % 60_000_000_000, 1_000_000_000);
    let mins_total = u / 60_000_000_000;
    if mins_total == 0 {
        return format!("{sign}{secs}s");
    }
    let hours = mins_total / 60;
    let mins = mins_total % 60;
    if hours == 0 {
        format!("{sign}{mins}m{secs}s")
    } else {
        format!("{sign}{hours}h{mins}m{secs}s")
    }
}

const WEEKDAYS: [&str; 7] =
    ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// gopher-lua's strftime: each flag becomes a Go layout, printed in UTC.
#[cfg(any(feature = "lua", test))]
pub(crate) fn strftime(fmt: &str, t: &Wall) -> String {
    let mut out = String::with_capacity(fmt.len() + 16);
    strftime_into(&mut out, fmt, t);
    out
}

/// `n` in decimal, zero-padded to `width` digits (more when it has more).
pub(crate) fn push_padded(out: &mut String, n: u64, width: usize) {
    let mut digits = [0_u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in (digits.len() - i)..width {
        out.push('0');
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// A field of the wall clock (never negative but the year, printed apart), zero-padded.
fn push_field(out: &mut String, n: i64, width: usize) {
    push_padded(out, n.unsigned_abs(), width);
}

/// [`strftime`] appended to `out`.
pub(crate) fn strftime_into(out: &mut String, fmt: &str, t: &Wall) {
    let mut chars = fmt.chars();
    let month = MONTHS[(t.month - 1).clamp(0, 11) as usize];
    let weekday = WEEKDAYS[t.weekday.clamp(0, 6) as usize];
    let h12 = if t.hour % 12 == 0 { 12 } else { t.hour % 12 };
    let pm = t.hour >= 12;
    let hms = |out: &mut String, sep: char| {
        push_field(out, t.hour, 2);
        out.push(sep);
        push_field(out, t.minute, 2);
        out.push(sep);
        push_field(out, t.second, 2);
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(f) = chars.next() else {
            out.push('%');
            break;
        };
        match f {
            // Go's layout for it is `mon`, which is not a layout element: printed as is.
            'a' => out.push_str("mon"),
            'A' => out.push_str(weekday),
            'b' => out.push_str(&month[..3]),
            'B' => out.push_str(month),
            'c' => {
                push_field(out, t.day, 2);
                out.push(' ');
                out.push_str(&month[..3]);
                out.push(' ');
                push_field(out, t.year.rem_euclid(100), 2);
                out.push(' ');
                push_field(out, t.hour, 2);
                out.push(':');
                push_field(out, t.minute, 2);
                out.push_str(" UTC");
            }
            'd' => push_field(out, t.day, 2),
            'F' => {
                // `{:04}`: the sign counts in the width.
                if t.year < 0 {
                    out.push('-');
                    push_field(out, t.year, 3);
                } else {
                    push_field(out, t.year, 4);
                }
                out.push('-');
                push_field(out, t.month, 2);
                out.push('-');
                push_field(out, t.day, 2);
            }
            'H' => push_field(out, t.hour, 2),
            'I' => push_field(out, h12, 2),
            'm' => push_field(out, t.month, 2),
            'M' => push_field(out, t.minute, 2),
            'p' => out.push_str(if pm { "PM" } else { "AM" }),
            'P' => out.push_str(if pm { "pm" } else { "am" }),
            'S' => push_field(out, t.second, 2),
            'w' => push_field(out, t.weekday, 1),
            // Go's layout for it is `15/04/05`: the time, not the date.
            'x' => hms(out, '/'),
            'X' => hms(out, ':'),
            'y' => push_field(out, t.year.rem_euclid(100), 2),
            // Go's `2006`: at least four digits, after the sign (year 1 is `0001`).
            'Y' => {
                if t.year < 0 {
                    out.push('-');
                }
                push_field(out, t.year, 4);
            }
            'z' => out.push_str("+0000"),
            'Z' => out.push_str("UTC"),
            '%' => out.push('%'),
            other => {
                out.push('%');
                out.push(other);
            }
        }
    }
}

/// Lua's `os.date(format)` at unix seconds `secs`, as the safe `os` library gives it: a
/// leading `!` (UTC) is dropped, every time is UTC.
pub(crate) fn os_date(format: &str, secs: i64) -> String {
    let mut out = String::with_capacity(format.len() + 16);
    os_date_into(&mut out, format, secs);
    out
}

/// [`os_date`] appended to `out`.
pub(crate) fn os_date_into(out: &mut String, format: &str, secs: i64) {
    let format = format.strip_prefix('!').unwrap_or(format);
    strftime_into(out, format, &Wall::utc(secs.clamp(-(1 << 55), 1 << 55)));
}

/// [`os_date_into`] of `!%Y%m%d%H%M` (`full_year`) or `!%y%m%d%H%M` (the minute stamp in
/// the name of a Workflow or Job an action makes), its twelve or ten digits worked out in a
/// small buffer; a year outside 0..=9999 goes the long way. Pinned against [`os_date_into`]
/// by `minute_stamp_is_os_date`.
pub(crate) fn minute_stamp_into(out: &mut String, secs: i64, full_year: bool) {
    // 0000-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z.
    if !(-62_167_219_200..=253_402_300_799).contains(&secs) {
        let format = if full_year { "!%Y%m%d%H%M" } else { "!%y%m%d%H%M" };
        return os_date_into(out, format, secs);
    }
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let two = |n: i64| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let [y0, y1] = two(y / 100);
    let [y2, y3] = two(y % 100);
    let [m0, m1] = two(m);
    let [d0, d1] = two(d);
    let [h0, h1] = two(rem / 3600);
    let [n0, n1] = two(rem % 3600 / 60);
    let stamp = [y0, y1, y2, y3, m0, m1, d0, d1, h0, h1, n0, n1];
    let stamp = if full_year { &stamp[..] } else { &stamp[2..] };
    // Digits: text as they are, copied at once rather than pushed one by one.
    match std::str::from_utf8(stamp) {
        Ok(digits) => out.push_str(digits),
        Err(_) => out.extend(stamp.iter().map(|&b| char::from(b))),
    }
}

/// `os_date("!%Y-%m-%dT%H:%M:%S")` (`%X` is `%H:%M:%S`: the timestamp most actions write) as
/// [`format_utc`] writes it, digit by digit, where `strftime` reads the format letter by letter:
/// for the years 0 to 9999, where both write the same (`second_stamp_is_os_date`); `None`
/// outside them, where the caller goes the long way through [`os_date`].
pub(crate) fn utc_stamp(secs: i64) -> Option<String> {
    // 0000-01-01T00:00:00 ..= 9999-12-31T23:59:59.
    (-62_167_219_200..=253_402_300_799).contains(&secs).then(|| format_utc(secs))
}

/// [`os_date`] of `!%Y-%m-%dT%H:%M:%SZ` (the scheduled time a Workflow made from a
/// CronWorkflow is annotated with): [`utc_stamp`] and a `Z`.
pub(crate) fn second_stamp(secs: i64) -> String {
    match utc_stamp(secs) {
        Some(mut out) => {
            out.push('Z');
            out
        }
        None => os_date("!%Y-%m-%dT%H:%M:%SZ", secs),
    }
}

#[cfg(test)]
/// Calls `same` on every second of a few whole days at the edges of the years a stamp
/// writes itself (0 to 9999) and past them, on the extremes of `i64`, on every 13th day of
/// those years, and on `n` pairs of seconds at random from `seed`.
pub(crate) fn stamp_samples(mut same: impl FnMut(i64), seed: u64, n: usize) {
    let edges = [-62_167_219_200_i64, 253_402_300_799, 0, 951_782_400, 1_700_000_000];
    for edge in edges {
        for secs in edge - 86_400..=edge + 86_400 {
            same(secs);
        }
    }
    for secs in [i64::MIN, i64::MAX, -(1 << 55) - 1, 1 << 55, -62_167_219_201, 253_402_300_800] {
        same(secs);
    }
    // Every 13th day of the years written here, at a second that moves through the day.
    for day in (-719_528_i64..=2_932_896).step_by(13) {
        same(day * 86_400 + (day * 7_919).rem_euclid(86_400));
    }
    let mut rng = seed;
    for _ in 0..n {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        same(rng as i64);
        same((rng % 320_000_000_000) as i64 - 62_200_000_000);
    }
}

#[cfg(test)]
mod tests {
    /// The minute stamp's digits are `os_date`'s ([`super::stamp_samples`]).
    #[test]
    fn minute_stamp_is_os_date() {
        let same = |secs: i64| {
            for (full_year, format) in [(true, "!%Y%m%d%H%M"), (false, "!%y%m%d%H%M")] {
                let (mut fast, mut slow) = (String::from("wf-"), String::from("wf-"));
                super::minute_stamp_into(&mut fast, secs, full_year);
                super::os_date_into(&mut slow, format, secs);
                assert_eq!(fast, slow, "{secs} {format}");
            }
        };
        super::stamp_samples(same, 0x9e37_79b9_7f4a_7c15, 200_000);
    }

    /// The second stamp is `os_date`'s ([`super::stamp_samples`]).
    #[test]
    fn second_stamp_is_os_date() {
        let same = |secs: i64| {
            let slow = super::os_date("!%Y-%m-%dT%H:%M:%SZ", secs);
            assert_eq!(super::second_stamp(secs), slow, "{secs}");
        };
        super::stamp_samples(same, 0x2545_f491_4f6c_dd1d, 100_000);
    }

    #[test]
    fn go_duration_examples() {
        use super::GoDuration;
        assert_eq!(GoDuration::parse("1h30m").unwrap().seconds(), 5400);
        assert_eq!(GoDuration::parse("1.5s").unwrap().0, 1_500_000_000);
        assert_eq!(GoDuration::parse("500ms").unwrap().to_string(), "500ms");
        assert!(GoDuration::parse("5").is_err());
        assert_eq!(GoDuration::parse_retry("30").unwrap().seconds(), 30);
        assert_eq!(GoDuration::parse_retry("2m").unwrap().seconds(), 120);
        assert_eq!(
            GoDuration::parse_retry("soon").unwrap_err().to_string(),
            "unable to parse soon as a duration"
        );
    }

    use super::*;

    /// The pieces written in place are the ones `format!` wrote before, flag by flag.
    #[test]
    fn strftime_in_place_is_the_formatted_text() {
        fn formatted(fmt: &str, t: &Wall) -> String {
            let month = MONTHS[(t.month - 1).clamp(0, 11) as usize];
            let weekday = WEEKDAYS[t.weekday.clamp(0, 6) as usize];
            let h12 = if t.hour % 12 == 0 { 12 } else { t.hour % 12 };
            let (mut out, mut chars) = (String::new(), fmt.chars());
            while let Some(c) = chars.next() {
                if c != '%' {
                    out.push(c);
                    continue;
                }
                let Some(f) = chars.next() else {
                    out.push('%');
                    break;
                };
                out.push_str(&match f {
                    'a' => "mon".to_string(),
                    'A' => weekday.to_string(),
                    'b' => month[..3].to_string(),
                    'B' => month.to_string(),
                    'c' => format!(
                        "{:02} {} {:02} {:02}:{:02} UTC",
                        t.day,
                        &month[..3],
                        t.year.rem_euclid(100),
                        t.hour,
                        t.minute
                    ),
                    'd' => format!("{:02}", t.day),
                    'F' => format!("{:04}-{:02}-{:02}", t.year, t.month, t.day),
                    'H' => format!("{:02}", t.hour),
                    'I' => format!("{h12:02}"),
                    'm' => format!("{:02}", t.month),
                    'M' => format!("{:02}", t.minute),
                    'p' => (if t.hour >= 12 { "PM" } else { "AM" }).to_string(),
                    'P' => (if t.hour >= 12 { "pm" } else { "am" }).to_string(),
                    'S' => format!("{:02}", t.second),
                    'w' => t.weekday.to_string(),
                    'x' => format!("{:02}/{:02}/{:02}", t.hour, t.minute, t.second),
                    'X' => format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second),
                    'y' => format!("{:02}", t.year.rem_euclid(100)),
                    'Y' if t.year < 0 => format!("-{:04}", t.year.unsigned_abs()),
                    'Y' => format!("{:04}", t.year),
                    'z' => "+0000".to_string(),
                    'Z' => "UTC".to_string(),
                    '%' => "%".to_string(),
                    other => format!("%{other}"),
                });
            }
            out
        }
        let fmt = "%a %A %b %B %c|%d %F %H %I %m %M %p %P %S %w %x %X %y %Y %z %Z %% %q %é x%";
        for secs in [
            -(1_i64 << 55),
            -62_198_755_200,
            -62_167_219_201,
            -1,
            0,
            43_200,
            1_700_000_000,
            253_402_300_800,
            1 << 55,
        ] {
            let t = Wall::utc(secs);
            assert_eq!(strftime(fmt, &t), formatted(fmt, &t), "{secs}");
            assert_eq!(os_date(&format!("!{fmt}"), secs), formatted(fmt, &t), "{secs}");
        }
    }

    #[test]
    fn format_utc_digit_by_digit_is_the_formatted_text() {
        for secs in [-62_167_219_200_i64, -1, 0, 59, 951_782_400, 1_700_000_000, 253_402_300_799] {
            let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
            let (y, m, d) = civil_from_days(days);
            let expected = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60
            );
            assert_eq!(format_utc(secs), expected);
        }
    }

    #[test]
    fn round_trip_and_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        for z in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
    }

    #[test]
    fn durations() {
        for (input, want) in [
            ("90s", "1m30s"),
            ("1.5h", "1h30m0s"),
            ("0", "0s"),
            ("0s", "0s"),
            ("8760h", "8760h0m0s"),
            ("1h", "1h0m0s"),
            ("1.5s", "1.5s"),
            ("1500ms", "1.5s"),
            ("1ms", "1ms"),
            ("1.5ms", "1.5ms"),
            ("10us", "10µs"),
            ("3ns", "3ns"),
            ("-90s", "-1m30s"),
            ("1h2m3.004s", "1h2m3.004s"),
            ("2m", "2m0s"),
        ] {
            let d = parse_go_duration(input).unwrap_or_else(|e| panic!("{input}: {e:?}"));
            assert_eq!(format_go_duration(d), want, "{input}");
        }
        for bad in ["", "1", "1x", "h", "1.h5", "-"] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rfc3339_as_go_reads_it() {
        assert_eq!(parse_rfc3339_parts("1970-01-02T00:00:00Z"), Some((86_400, 0)));
        assert_eq!(parse_rfc3339_parts("1970-01-01T00:00:00.5+01:00"), Some((-3600, 500_000_000)));
        assert_eq!(
            parse_rfc3339_parts("2024-02-29T10:30:00.1234567891Z").map(|t| t.1),
            Some(123_456_789)
        );
        for bad in [
            "2024-02-30T00:00:00Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0100",
        ] {
            assert_eq!(parse_rfc3339_parts(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps_round_trip_and_read_as_the_cli_reads_now() {
        for secs in [-86_400 * 800, -1, 0, 951_782_400, 4_102_444_800, 1_709_164_800] {
            assert_eq!(parse_rfc3339(&format_rfc3339(secs)), Ok(secs));
        }
        let t = Timestamp::parse("2024-02-29T12:30:45.5+01:30").unwrap();
        assert_eq!(t.unix_seconds(), 1_709_204_445);
        assert_eq!(Timestamp::parse("1969-12-31T23:59:59Z").map(Timestamp::unix_seconds), Ok(-1));
        assert_eq!(Timestamp::parse("").unwrap_err().to_string(), "invalid rfc 3339 time ``");
    }
}
