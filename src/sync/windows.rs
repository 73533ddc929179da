//! Sync windows (§5.5): which windows match an app, which are active at a time, and whether a
//! sync may run. Schedules are 5-field cron expressions evaluated in UTC.

use serde::{Deserialize, Serialize};

use super::time::{GoDuration, civil_from_days};
use crate::glob::glob_match;

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
    /// The time zone of the schedule: `UTC` (or empty), `GMT`, or a fixed offset `Etc/GMT±N`.
    pub time_zone: String,
    /// Every set list must match (instead of any).
    pub and_operator: bool,
    /// A sync started while allowed may run past the window.
    pub sync_overrun: bool,
}

/// What a window is matched against.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct WindowTarget {
    /// The app name.
    pub application: String,
    /// The destination namespace.
    pub namespace: String,
    /// The destination server URL.
    pub server: String,
    /// The destination cluster name.
    pub cluster_name: String,
}

/// A bad schedule, duration or time zone.
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
    /// A time zone other than UTC.
    #[error("unsupported time zone `{0}`")]
    TimeZone(String),
}

/// The offset from UTC in seconds of the zones this crate knows without a time zone database:
/// `""`, `UTC`, `Etc/UTC`, `GMT`, `Etc/GMT` and `Etc/GMT±N` (POSIX signs: `Etc/GMT+5` is UTC−5).
fn zone_offset(zone: &str) -> Option<i64> {
    match zone {
        "" | "UTC" | "Etc/UTC" | "GMT" | "Etc/GMT" | "Etc/UCT" | "UCT" | "Etc/Zulu" | "Zulu" => {
            Some(0)
        }
        _ => {
            let rest = zone.strip_prefix("Etc/GMT")?;
            let (sign, digits) = match rest.as_bytes().first()? {
                b'+' => (-1, &rest[1..]),
                b'-' => (1, &rest[1..]),
                _ => return None,
            };
            let hours: i64 = digits.parse().ok().filter(|h| (0..=14).contains(h))?;
            if digits.len() > 2 || digits.starts_with('0') && digits.len() > 1 {
                return None;
            }
            Some(sign * hours * 3600)
        }
    }
}

fn any_glob(patterns: &[String], text: &str) -> bool {
    patterns.iter().any(|p| glob_match(p, text))
}

impl SyncWindow {
    /// Whether the window applies to the target (`Matches`): with `and_operator`, every list
    /// that is set matches and at least one is set; else some set list matches. A cluster glob
    /// is matched against the destination's server and name where they are not empty.
    pub fn matches(&self, t: &WindowTarget) -> bool {
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
    /// (now − duration, now). As with Argo CD's cron library, a schedule with no start in the
    /// next five years counts as open.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::windows::SyncWindow;
    /// use gitops_core::sync::time::parse_rfc3339;
    /// let mut w = SyncWindow::default();
    /// w.kind = "deny".into();
    /// w.schedule = "0 22 * * *".into();
    /// w.duration = "1h".into();
    /// assert!(w.active(parse_rfc3339("2024-05-01T22:30:00Z").unwrap()).unwrap());
    /// assert!(!w.active(parse_rfc3339("2024-05-01T23:00:00Z").unwrap()).unwrap());
    /// ```
    pub fn active(&self, now: i64) -> Result<bool, WindowError> {
        let cron = Cron::parse(&self.schedule)?;
        let d =
            crate::civil::parse_go_duration(&self.duration).map(GoDuration).map_err(|message| {
                WindowError::Duration { duration: self.duration.clone(), message }
            })?;
        // Read after the schedule and the duration, whose errors Argo CD reports first.
        let offset = zone_offset(&self.time_zone)
            .ok_or_else(|| WindowError::TimeZone(self.time_zone.clone()))?;
        let local = now.saturating_add(offset);
        Ok(match cron.next_after(local.saturating_sub(d.seconds())) {
            Some(next) => next < local,
            None => true,
        })
    }
}

/// The sync windows matching one app.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SyncWindows(pub Vec<SyncWindow>);

impl SyncWindows {
    /// The windows of a project that match the target.
    pub fn matching(all: &[SyncWindow], t: &WindowTarget) -> SyncWindows {
        SyncWindows(all.iter().filter(|w| w.matches(t)).cloned().collect())
    }

    /// `CanSync`: whether a sync may run at `now`. `manual` is a manual sync; `op_start` the
    /// start of a running operation (for `syncOverrun`). An error counts as blocked.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::windows::{SyncWindow, SyncWindows};
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
        if self.0.is_empty() {
            return Ok(true);
        }
        let mut active_deny = Vec::new();
        let mut active_allow = Vec::new();
        let mut inactive_allow = Vec::new();
        for w in &self.0 {
            let on = w.active(now)?;
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
                    self.can_sync(manual, None, start)
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
    /// use gitops_core::sync::windows::{SyncWindow, SyncWindows};
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
    pub fn for_app(app: &crate::config::Application) -> WindowTarget {
        WindowTarget {
            application: app.metadata.name.clone(),
            namespace: app.spec.destination.namespace.clone(),
            server: app.spec.destination.server.clone(),
            cluster_name: app.spec.destination.name.clone(),
        }
    }
}

/// The sync windows of an AppProject manifest (`spec.syncWindows`; none when it is left out
/// or null).
///
/// # Errors
///
/// `expected kind AppProject, found kind <kind>` for a document whose `kind` is set to
/// anything else; the error of the first window that does not have a window's shape (a field
/// of the wrong type).
pub fn project_windows(project: &serde_json::Value) -> Result<Vec<SyncWindow>, serde_json::Error> {
    if let Err(e) = crate::config::check_kind(project, "AppProject") {
        return Err(<serde_json::Error as serde::de::Error>::custom(e));
    }
    match &project["spec"]["syncWindows"] {
        serde_json::Value::Null => Ok(Vec::new()),
        windows => Vec::<SyncWindow>::deserialize(windows),
    }
}

/// The gate before an automated sync: the controller looks at auto-sync only when the
/// project's windows that match `app` allow a sync at `now` (unix seconds). `None` when they
/// do, else the message it writes: `Sync prevented by sync window[: <error>]`.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::windows::{auto_sync_blocked, project_windows};
/// let project = serde_json::json!({"kind": "AppProject", "spec": {"syncWindows": [
///     {"kind": "deny", "schedule": "0 0 * * *", "duration": "24h", "applications": ["*"]}]}});
/// let app = gitops_core::Application::from_value(&serde_json::json!({
///     "metadata": {"name": "shop"}})).unwrap();
/// let windows = project_windows(&project).unwrap();
/// assert_eq!(auto_sync_blocked(&windows, &app, 1_700_000_000).as_deref(),
///            Some("Sync prevented by sync window"));
/// ```
pub fn auto_sync_blocked(
    windows: &[SyncWindow],
    app: &crate::config::Application,
    now: i64,
) -> Option<String> {
    match SyncWindows::matching(windows, &WindowTarget::for_app(app)).can_sync(false, None, now) {
        Ok(true) => None,
        Ok(false) => Some("Sync prevented by sync window".to_string()),
        Err(e) => Some(format!("Sync prevented by sync window: {e}")),
    }
}

/// A parsed 5-field cron schedule (the standard syntax of robfig/cron: `*`, `?`, numbers,
/// ranges `a-b`, steps `/n`, lists `,`, month and weekday names), optionally led by
/// `CRON_TZ=<zone> ` or `TZ=<zone> ` for a zone of a fixed offset (those of
/// [`SyncWindow::time_zone`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    dom_star: bool,
    dow_star: bool,
    /// The offset from UTC in seconds of the schedule's own zone (`CRON_TZ=`/`TZ=`), 0 without.
    offset: i64,
}

const MONTHS: [&str; 12] =
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Go's `strconv.Atoi` as robfig/cron uses it (64-bit), for a value that must not be negative.
fn cron_int(s: &str) -> Result<u64, String> {
    match super::hooks::go_atoi(s) {
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
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::windows::Cron;
    /// assert!(Cron::parse("*/15 9-17 * * mon-fri").is_ok());
    /// assert!(Cron::parse("0 0 * *").is_err());
    /// assert!(Cron::parse("61 * * * *").is_err());
    /// ```
    pub fn parse(schedule: &str) -> Result<Cron, WindowError> {
        let err = |m: String| WindowError::Schedule { schedule: schedule.to_string(), message: m };
        if schedule.is_empty() {
            return Err(err("empty spec string".to_string()));
        }
        // A leading `CRON_TZ=<zone> ` or `TZ=<zone> ` names the zone the fields are read in.
        let mut spec = schedule;
        let mut offset = 0;
        if let Some(rest) = spec.strip_prefix("CRON_TZ=").or_else(|| spec.strip_prefix("TZ=")) {
            let Some((zone, fields)) = rest.split_once(' ') else {
                return Err(err(format!("no fields after the time zone: {schedule}")));
            };
            offset = zone_offset(zone).ok_or_else(|| WindowError::TimeZone(zone.to_string()))?;
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
        Ok(Cron { minute, hour, dom, month, dow, dom_star, dow_star, offset })
    }

    fn day_matches(&self, days: i64) -> bool {
        let (_, m, d) = civil_from_days(days);
        // 1970-01-01 was a Thursday.
        let wd = (days + 4).rem_euclid(7) as u32;
        if self.month & (1 << m) == 0 {
            return false;
        }
        let dom = self.dom & (1 << d) != 0;
        let dow = self.dow & (1 << wd) != 0;
        if self.dom_star || self.dow_star { dom && dow } else { dom || dow }
    }

    /// The first start strictly after `t` (unix seconds), searching five years ahead; the
    /// fields are read in the schedule's own zone when it names one.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::windows::Cron;
    /// use gitops_core::sync::time::{format_rfc3339, parse_rfc3339};
    /// let t = parse_rfc3339("2024-05-01T00:00:00Z").unwrap();
    /// let utc = Cron::parse("0 9 * * *").unwrap().next_after(t).unwrap();
    /// assert_eq!(format_rfc3339(utc), "2024-05-01T09:00:00Z");
    /// let east = Cron::parse("CRON_TZ=Etc/GMT-2 0 9 * * *").unwrap().next_after(t).unwrap();
    /// assert_eq!(format_rfc3339(east), "2024-05-01T07:00:00Z");
    /// ```
    pub fn next_after(&self, t: i64) -> Option<i64> {
        let wall = self.next_after_wall(t.saturating_add(self.offset))?;
        Some(wall.saturating_sub(self.offset))
    }

    /// [`Cron::next_after`] on wall-clock seconds of the schedule's zone.
    fn next_after_wall(&self, t: i64) -> Option<i64> {
        let mut m = t.div_euclid(60) + 1; // minutes since the epoch
        let limit = m + 5 * 366 * 24 * 60;
        while m < limit {
            let days = m.div_euclid(24 * 60);
            if !self.day_matches(days) {
                m = (days + 1) * 24 * 60;
                continue;
            }
            let minute_of_day = m.rem_euclid(24 * 60);
            let hour = minute_of_day / 60;
            if self.hour & (1 << hour) == 0 {
                m = days * 24 * 60 + (hour + 1) * 60;
                continue;
            }
            if self.minute & (1 << (minute_of_day % 60)) == 0 {
                m += 1;
                continue;
            }
            return m.checked_mul(60);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Minute by minute, the definition of "next start after t".
    fn naive_next(c: &Cron, t: i64) -> Option<i64> {
        let first = t.div_euclid(60) + 1;
        (first..first + 40 * 24 * 60).find_map(|m| {
            let days = m.div_euclid(1440);
            let mod_day = m.rem_euclid(1440);
            (c.day_matches(days)
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
