//! The safe `os` library: `time`, `date`, `clock`, `difftime`, on the host's clock.
//!
//! It follows Argo CD's `oslib_safe.go`: `os.time{...}` reads only numeric fields (`sec`,
//! `min`, `hour` default 0, 0, 12; `day`, `month`, `year` default -1) and normalizes them as
//! Go's `time.Date` does; `os.date` maps the strftime flags to Go layouts the way gopher-lua
//! does, quirks included (`%a` prints `mon`, `%x` prints the time). The library reads no time
//! zone: local time is UTC.

use std::sync::Arc;

use mlua::{Lua, Table, Value};

use super::cost::position;
use super::{Control, Relaxed as _};
use crate::vocabulary::{Wall, strftime};

/// Builds the safe `os` table.
pub(super) fn create(lua: &Lua, control: &Arc<Control>) -> mlua::Result<Table> {
    let os = lua.create_table()?;
    let c = Arc::clone(control);
    os.raw_set(
        "time",
        lua.create_function(move |lua, t: Value| match t {
            Value::Nil => Ok(c.now.get() as f64),
            Value::Table(t) => Ok(time_of_table(&t)? as f64),
            other => Err(mlua::Error::RuntimeError(format!(
                "{}bad argument #1 to 'time' (table expected, got {})",
                position(lua),
                super::convert::lua_type_name(&other)
            ))),
        })?,
    )?;
    let c = Arc::clone(control);
    os.raw_set(
        "date",
        lua.create_function(move |lua, (fmt, t): (Option<String>, Option<f64>)| {
            // `as` saturates; the clamp keeps the calendar arithmetic in range.
            let secs = t.map_or(c.now.get(), |t| t as i64).clamp(-(1 << 55), 1 << 55);
            let fmt = fmt.unwrap_or_else(|| "%c".to_string());
            let fmt = fmt.strip_prefix('!').unwrap_or(&fmt);
            let tm = Wall::utc(secs);
            if fmt.starts_with("*t") {
                let t = lua.create_table()?;
                t.raw_set("year", tm.year)?;
                t.raw_set("month", tm.month)?;
                t.raw_set("day", tm.day)?;
                t.raw_set("hour", tm.hour)?;
                t.raw_set("min", tm.minute)?;
                t.raw_set("sec", tm.second)?;
                t.raw_set("wday", tm.weekday + 1)?;
                t.raw_set("yday", 0)?;
                t.raw_set("isdst", false)?;
                return Ok(Value::Table(t));
            }
            Ok(Value::String(lua.create_string(strftime(fmt, &tm))?))
        })?,
    )?;
    os.raw_set("clock", lua.create_function(|_, ()| Ok(0.0))?)?;
    os.raw_set(
        "difftime",
        lua.create_function(|_, (a, b): (f64, Option<f64>)| Ok(a - b.unwrap_or(0.0)))?,
    )?;
    Ok(os)
}

/// Largest field value `os.time{...}` takes: far beyond any real date, small enough that the
/// arithmetic below cannot overflow.
const FIELD_RANGE: i64 = 1 << 40;

fn int_field(t: &Table, key: &str, default: i64) -> mlua::Result<i64> {
    let v = match t.raw_get::<Value>(key)? {
        Value::Integer(i) => i,
        Value::Number(n) if n.is_finite() => n as i64,
        _ => default,
    };
    Ok(v.clamp(-FIELD_RANGE, FIELD_RANGE))
}

/// `os.time{...}`: Go's `time.Date(year, month, day, hour, min, sec, 0, UTC).Unix()`.
fn time_of_table(t: &Table) -> mlua::Result<i64> {
    let sec = int_field(t, "sec", 0)?;
    let min = int_field(t, "min", 0)?;
    let hour = int_field(t, "hour", 12)?;
    let day = int_field(t, "day", -1)?;
    let month = int_field(t, "month", -1)?;
    let year = int_field(t, "year", -1)?;
    let m0 = month.saturating_sub(1);
    let year = year.saturating_add(m0.div_euclid(12));
    let month = m0.rem_euclid(12) + 1;
    let days =
        crate::vocabulary::days_from_civil(year, month, 1).saturating_add(day.saturating_sub(1));
    Ok(days
        .saturating_mul(86400)
        .saturating_add(hour.saturating_mul(3600))
        .saturating_add(min.saturating_mul(60))
        .saturating_add(sec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for secs in [0, 86399, 951_782_400, 1_700_000_000, -1, -86401] {
            let c = Wall::utc(secs);
            let back = crate::vocabulary::days_from_civil(c.year, c.month, c.day) * 86400
                + c.hour * 3600
                + c.minute * 60
                + c.second;
            assert_eq!(back, secs);
        }
        let c = Wall::utc(1_700_000_000);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second, c.weekday),
            (2023, 11, 14, 22, 13, 20, 2)
        );
        assert_eq!(
            strftime("%Y-%m-%dT%H:%M:%SZ %a %A %b %j %%", &c),
            "2023-11-14T22:13:20Z mon Tuesday Nov %j %"
        );
    }
}
