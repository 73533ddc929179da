//! Sync windows (Argo CD 3.6.2 pkg/apis/application/v1alpha1/types.go `SyncWindows`: `Matches`,
//! `Active`, `CanSync`): which windows match an app, which are active at a time, and whether a sync
//! may run. Schedules are 5-field cron expressions read as Argo CD reads them: in UTC shifted by
//! the offset the window's `timeZone` has at the current instant, or in the zone of a `CRON_TZ=`
//! prefix, with its daylight saving (zones from the IANA database bundled into the binary).

use serde::{Deserialize, Serialize};

use crate::glob::glob_match;
use crate::vocabulary::{Location, Wall};

/// A sync window of an AppProject (`spec.syncWindows[]`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SyncWindow {
    /// `allow` or `deny`.
    pub kind: String,
    /// A 5-field cron schedule: minute, hour, day of month, month, day of week.
    pub schedule: String,
    /// How long the window stays open after each start, a Go duration.
    pub duration: String,
    /// App name globs.
    pub applications: Vec<String>,
    /// Destination namespace globs.
    pub namespaces: Vec<String>,
    /// Destination cluster server or name globs.
    pub clusters: Vec<String>,
    /// Manual syncs are allowed while the window blocks.
    pub manual_sync: bool,
    /// The IANA time zone of the schedule (`Europe/Paris`); empty is UTC. As in Argo CD, the
    /// schedule is read in UTC shifted by the offset this zone has at the current instant, and
    /// a name Go cannot load (unknown, or not in its exact case) is UTC.
    pub time_zone: String,
    /// Every set list must match (instead of any).
    pub and_operator: bool,
    /// A sync started while allowed may run past the window.
    pub sync_overrun: bool,
}

/// What a window is matched against: an app's name and destination.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WindowTarget {
    /// The app name.
    pub(crate) application: String,
    /// The destination namespace.
    pub(crate) namespace: String,
    /// The destination server URL.
    pub(crate) server: String,
    /// The destination cluster name.
    pub(crate) cluster_name: String,
}

/// A bad schedule or duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WindowError {
    /// The cron schedule could not be read.
    #[error("cannot parse schedule '{schedule}': {message}")]
    Schedule {
        /// The schedule.
        schedule: String,
        /// What is wrong.
        message: String,
    },
    /// The duration could not be read.
    #[error("cannot parse duration '{duration}': {message}")]
    Duration {
        /// The duration.
        duration: String,
        /// What is wrong, as Go's `time.ParseDuration` words it.
        message: String,
    },
}

fn any_glob(patterns: &[String], text: &str) -> bool {
    patterns.iter().any(|p| glob_match(p, text))
}

impl SyncWindow {
    /// Whether the window applies to `app` (`Matches`), by its name and its destination's
    /// namespace, server and cluster name: with `and_operator`, every list that is set matches
    /// and at least one is set; else some set list matches. A cluster glob is matched against
    /// the destination's server and name where they are not empty.
    pub fn matches(&self, app: &crate::config::Application) -> bool {
        self.matches_target(&WindowTarget::for_app(app))
    }

    /// [`SyncWindow::matches`] on an app's name and destination.
    pub(crate) fn matches_target(&self, t: &WindowTarget) -> bool {
        let apps = || any_glob(&self.applications, &t.application);
        let clusters = || {
            (!t.server.is_empty() && any_glob(&self.clusters, &t.server))
                || (!t.cluster_name.is_empty() && any_glob(&self.clusters, &t.cluster_name))
        };
        let nss = || any_glob(&self.namespaces, &t.namespace);
        if self.and_operator {
            let any_set = !(self.applications.is_empty()
                && self.clusters.is_empty()
                && self.namespaces.is_empty());
            any_set
                && (self.applications.is_empty() || apps())
                && (self.clusters.is_empty() || clusters())
                && (self.namespaces.is_empty() || nss())
        } else {
            (!self.namespaces.is_empty() && nss())
                || (!self.clusters.is_empty() && clusters())
                || (!self.applications.is_empty() && apps())
        }
    }

    /// Whether the window is open at `now` (unix seconds): some start of the schedule lies in
    /// (now − duration, now), read on a clock shifted by the offset `time_zone` has at `now`
    /// (so on the day clocks change the window keeps its wall-clock times, not its length). As
    /// with Argo CD's cron library, a schedule with no start in the next five years counts as
    /// open.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::SyncWindow;
    /// use gitops_core::vocabulary::Timestamp;
    /// let parse_rfc3339 = |s| Timestamp::parse(s).map(Timestamp::unix_seconds);
    /// let mut w = SyncWindow::default();
    /// w.kind = "deny".into();
    /// w.schedule = "0 22 * * *".into();
    /// w.duration = "1h".into();
    /// assert!(w.active(parse_rfc3339("2024-05-01T22:30:00Z").unwrap()).unwrap());
    /// assert!(!w.active(parse_rfc3339("2024-05-01T23:00:00Z").unwrap()).unwrap());
    /// w.time_zone = "Europe/Paris".into(); // 22:00 CEST is 20:00 UTC in May
    /// assert!(w.active(parse_rfc3339("2024-05-01T20:30:00Z").unwrap()).unwrap());
    /// ```
    pub fn active(&self, now: i64) -> Result<bool, WindowError> {
        self.active_at(now, now)
    }

    /// Whether the window was open at `at`, its zone's offset taken at `now`, as Argo CD
    /// takes it (`scheduleOffsetByTimeZone` reads the clock, whatever the instant checked).
    fn active_at(&self, at: i64, now: i64) -> Result<bool, WindowError> {
        let cron = Cron::parse(&self.schedule)?;
        let d = crate::vocabulary::parse_go_duration(&self.duration).map_err(|message| {
            WindowError::Duration { duration: self.duration.clone(), message }
        })?;
        // Argo CD logs a warning and uses UTC for a zone Go cannot load.
        let offset = Location::load(&self.time_zone).unwrap_or_default().offset(now);
        let shifted = at.saturating_add(offset);
        // The cron library starts at the second after `shifted − duration`, a fraction of a
        // second in the duration included.
        let from = (i128::from(shifted) * 1_000_000_000 - i128::from(d)).div_euclid(1_000_000_000);
        let from = from.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
        let from = i64::try_from(from).unwrap_or_default();
        Ok(match cron.next_after(from) {
            Some(next) => next < shifted,
            None => true,
        })
    }
}

/// The sync windows matching one app.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SyncWindows(pub Vec<SyncWindow>);

impl SyncWindows {
    /// The windows of a project that match `app` ([`SyncWindow::matches`]).
    pub fn matching(all: &[SyncWindow], app: &crate::config::Application) -> SyncWindows {
        SyncWindows::matching_target(all, &WindowTarget::for_app(app))
    }

    /// [`SyncWindows::matching`] on an app's name and destination.
    pub(crate) fn matching_target(all: &[SyncWindow], t: &WindowTarget) -> SyncWindows {
        SyncWindows(all.iter().filter(|w| w.matches_target(t)).cloned().collect())
    }

    /// `CanSync`: whether a sync may run at `now`. `manual` is a manual sync; `op_start` the
    /// start of a running operation (for `syncOverrun`). An error counts as blocked.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::{SyncWindow, SyncWindows};
    /// let mut deny = SyncWindow::default();
    /// deny.kind = "deny".into();
    /// deny.schedule = "0 0 * * *".into();
    /// deny.duration = "24h".into();
    /// deny.manual_sync = true;
    /// let w = SyncWindows(vec![deny]);
    /// assert_eq!(w.can_sync(false, None, 1_700_000_000), Ok(false));
    /// assert_eq!(w.can_sync(true, None, 1_700_000_000), Ok(true));
    /// ```
    pub fn can_sync(
        &self,
        manual: bool,
        op_start: Option<i64>,
        now: i64,
    ) -> Result<bool, WindowError> {
        self.can_sync_at(manual, op_start, now, now)
    }

    /// [`SyncWindows::can_sync`] at the instant `at`, the zones' offsets taken at `now`.
    fn can_sync_at(
        &self,
        manual: bool,
        op_start: Option<i64>,
        at: i64,
        now: i64,
    ) -> Result<bool, WindowError> {
        if self.0.is_empty() {
            return Ok(true);
        }
        let mut active_deny = Vec::new();
        let mut active_allow = Vec::new();
        let mut inactive_allow = Vec::new();
        for w in &self.0 {
            let on = w.active_at(at, now)?;
            match (w.kind.as_str(), on) {
                ("deny", true) => active_deny.push(w),
                ("allow", true) => active_allow.push(w),
                ("allow", false) => inactive_allow.push(w),
                _ => {}
            }
        }
        let overrun_ok = |ws: &[&SyncWindow]| -> Result<bool, WindowError> {
            match op_start {
                Some(start) if ws.iter().all(|w| w.sync_overrun) => {
                    self.can_sync_at(manual, None, start, now)
                }
                _ => Ok(false),
            }
        };
        if !active_deny.is_empty() {
            if manual && active_deny.iter().all(|w| w.manual_sync) {
                return Ok(true);
            }
            let denies: Vec<&SyncWindow> = self.0.iter().filter(|w| w.kind == "deny").collect();
            return overrun_ok(&denies);
        }
        if !active_allow.is_empty() {
            return Ok(true);
        }
        if !inactive_allow.is_empty() {
            if manual && inactive_allow.iter().all(|w| w.manual_sync) {
                return Ok(true);
            }
            let allows: Vec<&SyncWindow> = self.0.iter().filter(|w| w.kind == "allow").collect();
            return overrun_ok(&allows);
        }
        Ok(true)
    }
}

impl SyncWindows {
    /// The gate on a running operation (`syncWindowPreventsSync`): `None` when it may go on,
    /// else the message the controller writes while the phase stays Running:
    /// `Sync operation blocked by sync window[: <error>]`. `manual` is
    /// `!initiatedBy.automated`; `op_start` the operation's `startedAt`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::{SyncWindow, SyncWindows};
    /// let mut deny = SyncWindow::default();
    /// deny.kind = "deny".into();
    /// deny.schedule = "0 0 * * *".into();
    /// deny.duration = "24h".into();
    /// let w = SyncWindows(vec![deny]);
    /// assert_eq!(w.operation_blocked(false, Some(0), 1_700_000_000).as_deref(),
    ///            Some("Sync operation blocked by sync window"));
    /// ```
    pub fn operation_blocked(
        &self,
        manual: bool,
        op_start: Option<i64>,
        now: i64,
    ) -> Option<String> {
        match self.can_sync(manual, op_start, now) {
            Ok(true) => None,
            Ok(false) => Some("Sync operation blocked by sync window".to_string()),
            Err(e) => Some(format!("Sync operation blocked by sync window: {e}")),
        }
    }
}

impl WindowTarget {
    /// What an Application's windows are matched against: its name and destination.
    pub(crate) fn for_app(app: &crate::config::Application) -> WindowTarget {
        WindowTarget {
            application: app.metadata.name.clone(),
            namespace: app.spec.destination.namespace.clone(),
            server: app.spec.destination.server.clone(),
            cluster_name: app.spec.destination.name.clone(),
        }
    }
}

impl SyncWindow {
    /// The sync windows of an AppProject manifest (`spec.syncWindows`; none when it is left out
    /// or null).
    ///
    /// # Errors
    ///
    /// `expected kind AppProject, found kind <kind>` for a document whose `kind` is set to
    /// anything else; the error of the first window that does not have a window's shape (a field
    /// of the wrong type).
    pub fn of_project(project: &serde_json::Value) -> Result<Vec<SyncWindow>, serde_json::Error> {
        if let Err(e) = crate::config::check_kind(project, "AppProject") {
            return Err(<serde_json::Error as serde::de::Error>::custom(e));
        }
        match &project["spec"]["syncWindows"] {
            serde_json::Value::Null => Ok(Vec::new()),
            windows => Vec::<SyncWindow>::deserialize(windows),
        }
    }
}

impl SyncWindows {
    /// The gate before an automated sync: the controller looks at auto-sync only when the
    /// project's windows that match `app` allow a sync at `now` (unix seconds). `None` when they
    /// do, else the message it writes: `Sync prevented by sync window[: <error>]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::{SyncWindow, SyncWindows};
    /// let project = serde_json::json!({"kind": "AppProject", "spec": {"syncWindows": [
    ///     {"kind": "deny", "schedule": "0 0 * * *", "duration": "24h", "applications": ["*"]}]}});
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "metadata": {"name": "shop"}})).unwrap();
    /// let windows = SyncWindow::of_project(&project).unwrap();
    /// assert_eq!(SyncWindows::auto_sync_blocked(&windows, &app, 1_700_000_000).as_deref(),
    ///            Some("Sync prevented by sync window"));
    /// ```
    pub fn auto_sync_blocked(
        windows: &[SyncWindow],
        app: &crate::config::Application,
        now: i64,
    ) -> Option<String> {
        match SyncWindows::matching(windows, app).can_sync(false, None, now) {
            Ok(true) => None,
            Ok(false) => Some("Sync prevented by sync window".to_string()),
            Err(e) => Some(format!("Sync prevented by sync window: {e}")),
        }
    }
}

/// A parsed 5-field cron schedule (the standard syntax of robfig/cron: `*`, `?`, numbers,
/// ranges `a-b`, steps `/n`, lists `,`, month and weekday names), optionally led by
/// `CRON_TZ=<zone> ` or `TZ=<zone> ` naming the IANA zone the fields are read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cron {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    dom_star: bool,
    dow_star: bool,
    /// The schedule's own zone (`CRON_TZ=`/`TZ=`); UTC without, or with `Local`.
    location: Location,
}

const MONTHS: [&str; 12] =
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Go's `strconv.Atoi` as robfig/cron uses it (64-bit), for a value that must not be negative.
fn cron_int(s: &str) -> Result<u64, String> {
    match crate::vocabulary::go_atoi(s) {
        Some(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {s}")),
        // Checked non-negative just above.
        Some(n) => Ok(n as u64),
        None => {
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            let why = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                "value out of range"
            } else {
                "invalid syntax"
            };
            Err(format!("failed to parse int from {s}: strconv.Atoi: parsing \"{s}\": {why}"))
        }
    }
}

fn field(
    expr: &str,
    min: u64,
    max: u64,
    names: &[&str],
    name_base: u64,
) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    let num = |s: &str| -> Result<u64, String> {
        let lower = s.to_ascii_lowercase();
        if let Some(i) = names.iter().position(|n| *n == lower) {
            return Ok(i as u64 + name_base);
        }
        cron_int(s)
    };
    for part in expr.split(',') {
        // The bounds are read before the step, and each error is the first robfig/cron finds.
        let slashes: Vec<&str> = part.split('/').collect();
        let bounds: Vec<&str> = slashes[0].split('-').collect();
        let (lo, mut hi, mut is_star) = match bounds.as_slice() {
            ["*" | "?", ..] => (min, max, true),
            [v] => {
                let v = num(v)?;
                (v, v, false)
            }
            [a, b] => (num(a)?, num(b)?, false),
            _ => return Err(format!("too many hyphens: {part}")),
        };
        let step = match slashes.as_slice() {
            [_] => 1,
            [_, s] => {
                let s = cron_int(s)?;
                // `N/step` runs from N to the end.
                if bounds.len() == 1 {
                    hi = max;
                }
                // As robfig/cron: `*/n` with n > 1 is not a star (day of month and weekday
                // then match when either does).
                if s > 1 {
                    is_star = false;
                }
                s
            }
            _ => return Err(format!("too many slashes: {part}")),
        };
        star |= is_star;
        if lo < min {
            return Err(format!("beginning of range ({lo}) below minimum ({min}): {part}"));
        }
        if hi > max {
            return Err(format!("end of range ({hi}) above maximum ({max}): {part}"));
        }
        if lo > hi {
            return Err(format!("beginning of range ({lo}) beyond end of range ({hi}): {part}"));
        }
        if step == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
        // `hi` ≤ 59, so every shift below fits a u64; a step past the end ends the range.
        let mut v = lo;
        while v <= hi {
            bits |= 1 << v;
            let Some(next) = v.checked_add(step) else { break };
            v = next;
        }
    }
    Ok((bits, star))
}

impl Cron {
    /// Parses a schedule.
    pub(crate) fn parse(schedule: &str) -> Result<Cron, WindowError> {
        let err = |m: String| WindowError::Schedule { schedule: schedule.to_string(), message: m };
        if schedule.is_empty() {
            return Err(err("empty spec string".to_string()));
        }
        // A leading `CRON_TZ=<zone> ` or `TZ=<zone> ` names the zone the fields are read in.
        let mut spec = schedule;
        let mut location = Location::UTC;
        if let Some(rest) = spec.strip_prefix("CRON_TZ=").or_else(|| spec.strip_prefix("TZ=")) {
            let Some((zone, fields)) = rest.split_once(' ') else {
                return Err(err(format!("no fields after the time zone: {schedule}")));
            };
            location = Location::load(zone)
                .map_err(|e| err(format!("provided bad location {zone}: {e}")))?;
            spec = fields.trim();
        }
        if spec.starts_with('@') {
            return Err(err(format!("parser does not accept descriptors: {spec}")));
        }
        let parts: Vec<&str> = spec.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                parts.len(),
                parts.join(" ")
            )));
        }
        // Five parts, checked above.
        let (minute, _) = field(parts[0], 0, 59, &[], 0).map_err(err)?;
        let (hour, _) = field(parts[1], 0, 23, &[], 0).map_err(err)?;
        let (dom, dom_star) = field(parts[2], 1, 31, &[], 0).map_err(err)?;
        let (month, _) = field(parts[3], 1, 12, &MONTHS, 1).map_err(err)?;
        let (dow, dow_star) = field(parts[4], 0, 6, &DAYS, 0).map_err(err)?;
        Ok(Cron { minute, hour, dom, month, dow, dom_star, dow_star, location })
    }

    /// robfig/cron's `dayMatches`.
    fn day_matches(&self, w: &Wall) -> bool {
        let dom = self.dom & (1 << w.day) != 0;
        let dow = self.dow & (1 << w.weekday) != 0;
        if self.dom_star || self.dow_star { dom && dow } else { dom || dow }
    }

    fn has(bits: u64, v: i64) -> bool {
        // Every field of a wall clock is in 0..=59.
        u32::try_from(v).is_ok_and(|v| v < 64 && bits & (1 << v) != 0)
    }

    /// The first start strictly after `t` (unix seconds), searching until the end of the fifth
    /// year ahead; the fields are read in the schedule's own zone when it names one, with its
    /// daylight saving as robfig/cron's `Next` meets it: a start in the hour the clocks skip
    /// does not happen that day (`0 2 * * *` in Paris: none on 2024-03-31), and one in the
    /// hour they repeat happens at both passes (00:00 and 01:00 UTC on 2024-10-27).
    pub(crate) fn next_after(&self, t: i64) -> Option<i64> {
        // robfig/cron's `SpecSchedule.Next`, step for step, on whole seconds: each `goto WRAP`
        // is a `seek_*` returning `false`, `time.Date` and `AddDate` are `Location::date`, and `Add` and
        // `Truncate` work on the instant.
        let loc = &self.location;
        // Years 0 to 9999 and five more: further out there is no start to find.
        if !(-62_167_219_200..=253_402_300_799).contains(&t) {
            return None;
        }
        let mut seek = Seek { t: t + 1, added: false };
        let year_limit = loc.wall(seek.t).year + 5;
        loop {
            if loc.wall(seek.t).year > year_limit {
                return None;
            }
            if !(self.seek_month(loc, &mut seek)
                && self.seek_day(loc, &mut seek)
                && self.seek_hour(loc, &mut seek)
                && self.seek_minute(loc, &mut seek))
            {
                continue;
            }
            // The seconds field is `0`: the seconds up to the next whole minute do not match.
            let second = loc.wall(seek.t).second;
            if second != 0 {
                seek.added = true;
                seek.t += 60 - second;
                continue;
            }
            return Some(seek.t);
        }
    }

    // Each `seek_*` moves to the next instant whose field matches: `true` when it found one,
    // `false` when the field wrapped around (robfig's `goto WRAP`: start over from the month).

    fn seek_month(&self, loc: &Location, seek: &mut Seek) -> bool {
        loop {
            let w = loc.wall(seek.t);
            if Self::has(self.month, w.month) {
                return true;
            }
            if !seek.added {
                seek.added = true;
                seek.t = loc.date(w.year, w.month, 1, 0, 0, 0);
            }
            let w = loc.wall(seek.t);
            seek.t = loc.date(w.year, w.month + 1, w.day, w.hour, w.minute, w.second);
            if loc.wall(seek.t).month == 1 {
                return false;
            }
        }
    }

    fn seek_day(&self, loc: &Location, seek: &mut Seek) -> bool {
        loop {
            let w = loc.wall(seek.t);
            if self.day_matches(&w) {
                return true;
            }
            if !seek.added {
                seek.added = true;
                seek.t = loc.date(w.year, w.month, w.day, 0, 0, 0);
            }
            let w = loc.wall(seek.t);
            seek.t = loc.date(w.year, w.month, w.day + 1, w.hour, w.minute, w.second);
            // Back to midnight when a change of the clocks moved it.
            let hour = loc.wall(seek.t).hour;
            if hour > 12 {
                seek.t += (24 - hour) * 3600;
            } else {
                seek.t -= hour * 3600;
            }
            if loc.wall(seek.t).day == 1 {
                return false;
            }
        }
    }

    fn seek_hour(&self, loc: &Location, seek: &mut Seek) -> bool {
        loop {
            let w = loc.wall(seek.t);
            if Self::has(self.hour, w.hour) {
                return true;
            }
            if !seek.added {
                seek.added = true;
                seek.t = loc.date(w.year, w.month, w.day, w.hour, 0, 0);
            }
            seek.t += 3600;
            if loc.wall(seek.t).hour == 0 {
                return false;
            }
        }
    }

    fn seek_minute(&self, loc: &Location, seek: &mut Seek) -> bool {
        loop {
            if Self::has(self.minute, loc.wall(seek.t).minute) {
                return true;
            }
            if !seek.added {
                seek.added = true;
                seek.t = seek.t.div_euclid(60) * 60;
            }
            seek.t += 60;
            if loc.wall(seek.t).minute == 0 {
                return false;
            }
        }
    }
}

/// Where `Cron::next_after` is in its search: the instant, and whether a field has moved it
/// already (robfig's `added`: the first move truncates the smaller fields).
struct Seek {
    t: i64,
    added: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cron_parse_checks_the_schedule() {
        assert!(Cron::parse("*/15 9-17 * * mon-fri").is_ok());
        assert!(Cron::parse("0 0 * *").is_err());
        assert!(Cron::parse("61 * * * *").is_err());
    }

    #[test]
    fn cron_next_after_reads_the_zone() {
        use crate::vocabulary::Timestamp;
        let parse_rfc3339 = |s| Timestamp::parse(s).map(Timestamp::unix_seconds);
        let format_rfc3339 = |s| Timestamp::from_unix_seconds(s).to_string();
        let t = parse_rfc3339("2024-05-01T00:00:00Z").unwrap();
        let utc = Cron::parse("0 9 * * *").unwrap().next_after(t).unwrap();
        assert_eq!(format_rfc3339(utc), "2024-05-01T09:00:00Z");
        let paris = Cron::parse("CRON_TZ=Europe/Paris 0 9 * * *").unwrap().next_after(t).unwrap();
        assert_eq!(format_rfc3339(paris), "2024-05-01T07:00:00Z");
    }

    use proptest::prelude::*;

    use super::*;

    /// Minute by minute, the definition of "next start after t".
    fn naive_next(c: &Cron, t: i64) -> Option<i64> {
        let first = t.div_euclid(60) + 1;
        (first..first + 40 * 24 * 60).find_map(|m| {
            let mod_day = m.rem_euclid(1440);
            let wall = Location::UTC.wall(m * 60);
            (Cron::has(c.month, wall.month)
                && c.day_matches(&wall)
                && c.hour & (1 << (mod_day / 60)) != 0
                && c.minute & (1 << (mod_day % 60)) != 0)
                .then_some(m * 60)
        })
    }

    /// Day-of-month and weekday fields, every pair but a stepped day of month with a weekday:
    /// those can be months apart, past the naive search. Generated, not filtered, so the
    /// property holds at any case count.
    fn day_pairs() -> Vec<(&'static str, &'static str)> {
        let doms = ["*", "1", "15,28", "*/10"];
        let dows = ["*", "mon-fri", "0", "sat,sun", "3"];
        doms.iter()
            .flat_map(|&dom| dows.iter().map(move |&dow| (dom, dow)))
            .filter(|&(dom, dow)| !(dom.starts_with("*/") && dow != "*"))
            .collect()
    }

    proptest! {
        #[test]
        fn next_after_agrees_with_a_minute_by_minute_search(
            minute in prop::sample::select(vec!["*", "0", "*/15", "5,35", "10-20/5", "59"]),
            hour in prop::sample::select(vec!["*", "0", "9-17", "*/6", "23"]),
            (dom, dow) in prop::sample::select(day_pairs()),
            t in 1_704_067_200i64..1_767_225_600,
        ) {
            let c = Cron::parse(&format!("{minute} {hour} {dom} * {dow}")).unwrap();
            prop_assert_eq!(c.next_after(t), naive_next(&c, t));
        }
    }
}
