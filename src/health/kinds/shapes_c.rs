//! Shapes shared by several built-in rules: the conditions of `status`, Lua's `==` and `<`,
//! a string's `find` method, the Ready condition and Flux's Ready/Reconciling count.

pub(super) use super::lua::or;
pub(super) use super::lua::status_conditions;
pub(super) use super::lua::{eq as lua_eq, lt as lua_lt};
use super::{Env, Fault, Hs, Lv};

/// `s:find("^prefix") ~= nil`: a method call, so only a string has it; anything else is an
/// error.
pub(super) fn starts_with_method(v: Lv<'_>, prefix: &str) -> Result<bool, Fault> {
    match v {
        Lv::Str(s) => Ok(s.starts_with(prefix)),
        other => Err(Fault::new(format!(
            "attempt to call method `find` on a {} value",
            other.type_name()
        ))),
    }
}

/// The first `Ready` condition that is `True` (Healthy, with `healthy` or else the
/// condition's message) or `False` (Degraded, with its message); `None` when there is none.
pub(super) fn ready_condition(
    conditions: Lv<'_>,
    healthy: Option<&str>,
) -> Result<Option<Hs>, Fault> {
    for c in conditions.items()? {
        if c.get("type")?.is("Ready") {
            let status = c.get("status")?;
            if status.is("False") {
                return Ok(Some(Hs::new("Degraded", c.get("message")?)));
            }
            if status.is("True") {
                return Ok(Some(match healthy {
                    Some(m) => Hs::new("Healthy", m),
                    None => Hs::new("Healthy", c.get("message")?),
                }));
            }
        }
    }
    Ok(None)
}

/// Flux's count of `Ready` and `Reconciling`: suspended first (`spec.suspend` is `true`);
/// then, with conditions, `Ready` `True` counts as a success, `Ready` with `pending` and
/// `Reconciling` `True` count as pending, and the message is the last `Ready` reason. Two
/// pending give `two_pending`, one success Healthy, anything else Degraded. With no
/// conditions, Progressing, `Status unknown`.
pub(super) fn flux_counts(env: &Env<'_>, pending: &str, two_pending: &str) -> Result<Hs, Fault> {
    if env.obj.path(&["spec", "suspend"])?.is_bool(true) {
        let kind = env.obj.get("kind")?.text()?;
        return Ok(Hs::new("Suspended", format!("{kind} is suspended")));
    }
    if let Some(conditions) = status_conditions(env.obj)? {
        let (mut pending_count, mut succeeded) = (0, 0);
        let mut message = Lv::Str("");
        for c in conditions.items()? {
            let t = c.get("type")?;
            if t.is("Ready") {
                let status = c.get("status")?;
                if status.is("True") {
                    succeeded += 1;
                } else if status.is(pending) {
                    pending_count += 1;
                }
                message = c.get("reason")?;
            } else if t.is("Reconciling") && c.get("status")?.is("True") {
                pending_count += 1;
            }
        }
        let status = if pending_count == 2 {
            two_pending
        } else if succeeded == 1 {
            "Healthy"
        } else {
            "Degraded"
        };
        return Ok(Hs::new(status, message));
    }
    Ok(Hs::new("Progressing", "Status unknown"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equality_and_order_follow_lua() {
        let v = json!({"a": {}, "b": {}});
        let (a, b) = (Lv::of(&v["a"]), Lv::of(&v["b"]));
        assert!(lua_eq(a, a) && !lua_eq(a, b));
        assert!(!lua_eq(Lv::Num(1.0), Lv::Str("1")) && lua_eq(Lv::Nil, Lv::Nil));
        assert_eq!(lua_lt(Lv::Num(1.0), Lv::Num(2.0)), Ok(true));
        assert_eq!(lua_lt(Lv::Str("10"), Lv::Str("9")), Ok(true));
        assert_eq!(
            lua_lt(Lv::Num(0.0), Lv::Str("1")).unwrap_err().to_string(),
            "attempt to compare number with string"
        );
        assert!(starts_with_method(Lv::Nil, "x").is_err());
        assert_eq!(starts_with_method(Lv::Str("ERROR, x"), "ERROR"), Ok(true));
    }
}
