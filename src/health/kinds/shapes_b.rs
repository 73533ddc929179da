//! Shapes and Lua operators shared by several groups' rules (the `b` share of issue 29; the
//! lead folds them with the others' shapes).
//!
//! The operators follow gopher-lua, the Lua of Argo CD: `==` between values of different types
//! is false and tables are equal only to themselves ([`eq`]); `<` compares two numbers or two
//! strings and fails on anything else ([`lt`]); `+` and `-` take numbers and strings that read
//! as numbers ([`arith`]); `..` takes strings and numbers ([`cat`]).

pub(super) use super::lua::status_conditions;
pub(super) use super::lua::{cat, eq, le, lt, or};
use super::{Env, Fault, Hs, Lv};

/// `v` as an operand of `+` or `-`: a number, or a string gopher-lua's `parseNumber` reads;
/// an error else.
pub(super) fn arith(v: Lv<'_>) -> Result<f64, Fault> {
    match v {
        Lv::Num(n) => Ok(n),
        Lv::Str(s) => go_parse_number(s)
            .ok_or_else(|| Fault(format!("cannot perform arithmetic on the string {s:?}"))),
        other => Err(Fault(format!("cannot perform arithmetic on a {} value", other.type_name()))),
    }
}

/// `tonumber(v)` as gopher-lua runs it: a number as it is; a string (trimmed of spaces, tabs
/// and line feeds) with a `.` as a float, with a `0x` prefix as hexadecimal, else as a decimal
/// integer; `nil` for anything else.
pub(super) fn to_number(v: Lv<'_>) -> Option<f64> {
    match v {
        Lv::Num(n) => Some(n),
        Lv::Str(s) => {
            let t = s.trim_matches([' ', '\n', '\t']);
            if t.contains('.') {
                go_float(t)
            } else if t.len() >= 2 && t.is_char_boundary(2) && t[..2].eq_ignore_ascii_case("0x") {
                let (neg, digits) = sign(&t[2..]);
                go_int(digits, 16, false).map(|n| signed(neg, n))
            } else {
                let (neg, digits) = sign(t);
                go_int(digits, 10, false).map(|n| signed(neg, n))
            }
        }
        _ => None,
    }
}

/// `string.format("%d", v)` in gopher-lua (Go's `fmt` on the value): a number truncated to
/// an integer; a string as it is when it reads as a number, `0` when it does not.
pub(super) fn format_d(v: Lv<'_>) -> String {
    match v {
        Lv::Num(n) => (n as i64).to_string(),
        Lv::Str(s) if go_parse_number(s).is_some() => s.to_string(),
        _ => "0".to_string(),
    }
}

/// gopher-lua's `parseNumber` (how `+` and `-` read a string): trimmed of spaces, tabs and
/// line feeds, an integer in Go's syntax (`0x`, `0o`, `0b` and `0` prefixes, `_` between
/// digits), else a float.
fn go_parse_number(s: &str) -> Option<f64> {
    let t = s.trim_matches([' ', '\t', '\n']);
    let (neg, digits) = sign(t);
    let prefixed = |p: &str| {
        (digits.len() >= 2 && digits.is_char_boundary(2) && digits[..2].eq_ignore_ascii_case(p))
            .then(|| &digits[2..])
    };
    let int = if let Some(h) = prefixed("0x") {
        go_int(h.strip_prefix('_').unwrap_or(h), 16, true)
    } else if let Some(b) = prefixed("0b") {
        go_int(b.strip_prefix('_').unwrap_or(b), 2, true)
    } else if let Some(o) = prefixed("0o") {
        go_int(o.strip_prefix('_').unwrap_or(o), 8, true)
    } else if digits.len() > 1 && digits.starts_with('0') {
        go_int(&digits[1..], 8, true)
    } else if digits.starts_with('_') {
        None
    } else {
        go_int(digits, 10, true)
    };
    match int {
        Some(n) => Some(signed(neg, n)),
        None => go_float(t),
    }
}

/// Go's `strconv.ParseInt` of digits in a base, without a sign (`_` between digits when
/// `underscores`, as base 0 allows): `None` when malformed or out of the 64-bit range.
fn go_int(s: &str, radix: u32, underscores: bool) -> Option<f64> {
    if s.is_empty() || s.ends_with('_') || s.contains("__") || (!underscores && s.contains('_')) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    if clean.is_empty() || !clean.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = i128::from_str_radix(&clean, radix).ok()?;
    i64::try_from(n).ok().map(|n| n as f64)
}

/// A leading `+` or `-` taken off: whether it was `-`, and the rest.
fn sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// `-n` when `neg`.
fn signed(neg: bool, n: f64) -> f64 {
    if neg { -n } else { n }
}

/// Go's `strconv.ParseFloat` for the forms these rules meet: decimal and exponent forms,
/// `inf`/`infinity`/`nan` in any case.
fn go_float(s: &str) -> Option<f64> {
    if s.contains('_') {
        return None;
    }
    s.parse::<f64>().ok()
}

/// Whether the conditions of a Gateway API status entry (a route's parent, a policy's
/// ancestor) are of the object's generation: yes when the object has no generation; no when
/// the entry has no conditions; else when none names another generation. `strict`: a missing
/// `metadata` is an error (HTTPRoute's, GRPCRoute's and Envoy Gateway's scripts), else it
/// means yes (TLSRoute's).
pub(super) fn generation_observed(
    env: &Env<'_>,
    parent: Lv<'_>,
    strict: bool,
) -> Result<bool, Fault> {
    let metadata = env.obj.get("metadata")?;
    if !strict && metadata.is_nil() {
        return Ok(true);
    }
    let generation = metadata.get("generation")?;
    if generation.is_nil() {
        return Ok(true);
    }
    let conditions = parent.get("conditions")?;
    if conditions.is_nil() || conditions.len()? == 0 {
        return Ok(false);
    }
    // The script reads `obj.metadata.generation` again for each condition: the same value,
    // and no error once the first read passed.
    for c in conditions.items()? {
        let g = c.get("observedGeneration")?;
        if !g.is_nil() && !eq(g, generation) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first `Ready` condition that is `False` (Degraded) or `True` (Healthy), with its
/// message; else Progressing with `waiting`.
pub(super) fn ready_or(env: &Env<'_>, waiting: &'static str) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready") {
                let status = c.get("status")?;
                if status.is("False") {
                    return Ok(Hs::new("Degraded", c.get("message")?));
                }
                if status.is("True") {
                    return Ok(Hs::new("Healthy", c.get("message")?));
                }
            }
        }
    }
    Ok(Hs::new("Progressing", waiting))
}

/// Solo.io's (Gloo's) shape: the `state` of each namespace's status in `status.statuses`
/// (the first that decides), then `status.state`: Accepted (or 1) Healthy, Warning (3) and
/// Rejected (2) Degraded with the reason, Pending (0) Suspended; else Progressing,
/// `Update in progress`. Namespaces are read in key order (Argo CD's is Go's map order).
pub(super) fn solo_state(env: &Env<'_>) -> Result<Hs, Fault> {
    fn state(status: Lv<'_>) -> Result<Option<Hs>, Fault> {
        let s = status.get("state")?;
        let is = |name: &str, n: f64| s.is(name) || s.is_num(n);
        Ok(if is("Accepted", 1.0) {
            Some(Hs::new("Healthy", "The resource has been validated"))
        } else if is("Warning", 3.0) {
            Some(Hs::new("Degraded", status.get("reason")?))
        } else if is("Pending", 0.0) {
            Some(Hs::new("Suspended", "The resource has not yet been validated"))
        } else if is("Rejected", 2.0) {
            Some(Hs::new("Degraded", status.get("reason")?))
        } else {
            None
        })
    }
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let statuses = status.get("statuses")?;
        if !statuses.is_nil() {
            for (_, ns) in statuses.pairs()? {
                if let Some(hs) = state(ns)? {
                    return Ok(hs);
                }
            }
        }
        if !status.get("state")?.is_nil()
            && let Some(hs) = state(status)?
        {
            return Ok(hs);
        }
    }
    Ok(Hs::new("Progressing", "Update in progress"))
}

/// Flux's counting shape (HelmRelease and the image automation kinds): the conditions
/// counted into progressing and succeeded, with the last `Ready` condition's reason as the
/// message.
pub(super) struct FluxCount {
    /// Whether `spec.suspend == true` makes the object Suspended first.
    pub(super) suspend: bool,
    /// The `Ready` status that counts as progressing (`Unknown` or `False`).
    pub(super) ready_progressing: &'static str,
    /// The reasons of a `Reconciling` `True` condition that count as progressing (`None`: any).
    pub(super) reconciling_reasons: Option<&'static [&'static str]>,
    /// Whether `Released` and `TestSuccess` conditions that are `True` count as succeeded.
    pub(super) released: bool,
    /// The number of succeeded conditions that makes the object Healthy.
    pub(super) succeeded: u32,
}

impl FluxCount {
    /// Suspended (when `suspend` and `spec.suspend == true`); with conditions, Progressing
    /// when two count as progressing, Healthy when `succeeded` count as succeeded, Degraded
    /// otherwise; without, Progressing, `Status unknown`.
    pub(super) fn check(&self, env: &Env<'_>) -> Result<Hs, Fault> {
        if self.suspend && env.obj.path(&["spec", "suspend"])?.is_bool(true) {
            let kind = env.obj.get("kind")?;
            return Ok(Hs::new("Suspended", cat(&[kind, Lv::Str(" is suspended")])?));
        }
        let Some(conditions) = status_conditions(env.obj)? else {
            return Ok(Hs::new("Progressing", "Status unknown"));
        };
        let (mut progressing, mut succeeded) = (0u32, 0u32);
        let mut message = Lv::Str("");
        for c in conditions.items()? {
            let t = c.get("type")?;
            if t.is("Ready") {
                let s = c.get("status")?;
                if s.is("True") {
                    succeeded += 1;
                } else if s.is(self.ready_progressing) {
                    progressing += 1;
                }
                message = c.get("reason")?;
            } else if t.is("Reconciling") && c.get("status")?.is("True") {
                match self.reconciling_reasons {
                    None => progressing += 1,
                    Some(reasons) => {
                        let r = c.get("reason")?;
                        if reasons.iter().any(|x| r.is(x)) {
                            progressing += 1;
                        }
                    }
                }
            } else if self.released
                && (t.is("Released") || t.is("TestSuccess"))
                && c.get("status")?.is("True")
            {
                succeeded += 1;
            }
        }
        let status = if progressing == 2 {
            "Progressing"
        } else if succeeded == self.succeeded {
            "Healthy"
        } else {
            "Degraded"
        };
        Ok(Hs::new(status, message))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_read_as_gopher_lua_reads_them() {
        // `+` reads a string with Go's integer syntax first: `010` is octal, `1_000` is 1000.
        assert_eq!(arith(Lv::Str(" 010\n")), Ok(8.0));
        assert_eq!(arith(Lv::Str("1_000")), Ok(1000.0));
        assert_eq!(arith(Lv::Str("0x10")), Ok(16.0));
        assert_eq!(arith(Lv::Str("-2.5e1")), Ok(-25.0));
        assert!(arith(Lv::Str("1 0")).is_err() && arith(Lv::Bool(true)).is_err());
        // `tonumber` reads a float only with a `.`, else a decimal or `0x` integer.
        assert_eq!(to_number(Lv::Str("1e3")), None);
        assert_eq!(to_number(Lv::Str("1.5e3")), Some(1500.0));
        assert_eq!(to_number(Lv::Str("010")), Some(10.0));
        assert_eq!(to_number(Lv::Str("0X1f")), Some(31.0));
        assert_eq!(to_number(Lv::Str("1_000")), None);
        assert_eq!(to_number(Lv::Nil), None);
        // `string.format("%d", v)`: Go's fmt on gopher-lua's values.
        assert_eq!(format_d(Lv::Num(2.9)), "2");
        assert_eq!(format_d(Lv::Str("07")), "07");
        assert_eq!(format_d(Lv::Str("seven")), "0");
    }

    #[test]
    fn comparisons_follow_lua() {
        let (a, b) = (json!({}), json!({}));
        assert!(eq(Lv::Table(&a), Lv::Table(&a)) && !eq(Lv::Table(&a), Lv::Table(&b)));
        assert!(!eq(Lv::Num(1.0), Lv::Str("1")) && eq(Lv::Nil, Lv::Nil));
        assert_eq!(lt(Lv::Str("a"), Lv::Str("b")), Ok(true));
        assert_eq!(le(Lv::Num(2.0), Lv::Num(2.0)), Ok(true));
        assert_eq!(
            lt(Lv::Num(1.0), Lv::Str("2")).unwrap_err().to_string(),
            "attempt to compare number with string"
        );
        assert_eq!(cat(&[Lv::Str("n="), Lv::Num(3.0)]), Ok("n=3".to_string()));
        assert!(cat(&[Lv::Str("n="), Lv::Nil]).is_err());
    }
}
