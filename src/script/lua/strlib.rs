//! The bounded parts of the `string` library: `find`, `match`, `gmatch` (and its alias
//! `gfind`), `gsub` on the step-counted matcher, and a size-checked `rep`.

use std::cell::Cell;
use std::sync::Arc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::convert::lua_type_name;
use super::pattern::{Capture, Matcher, PatternError, find_plain, is_plain};
use super::{Control, Relaxed as _};

use super::cost::position;

fn error(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::RuntimeError(format!("{}{message}", position(lua)))
}

fn arg(args: &MultiValue, i: usize) -> &Value {
    args.get(i - 1).unwrap_or(&Value::Nil)
}

fn check_bytes(lua: &Lua, args: &MultiValue, i: usize, fname: &str) -> mlua::Result<Vec<u8>> {
    match arg(args, i) {
        Value::String(s) => {
            // The copy is work: charged as the bytes it copies.
            let control = lua.app_data_ref::<Arc<Control>>();
            if let Some(control) = control {
                control.charge(super::cost::copy(s.as_bytes().len()))?;
            }
            Ok(s.as_bytes().to_vec())
        }
        // A number is read as gopher-lua writes it.
        Value::Integer(n) => Ok(n.to_string().into_bytes()),
        Value::Number(n) => Ok(super::numbers::text(*n).into_bytes()),
        other => Err(error(
            lua,
            format!("bad argument #{i} to '{fname}' (string expected, got {})", arg_type(other)),
        )),
    }
}

fn arg_type(v: &Value) -> &'static str {
    if matches!(v, Value::Nil) { "no value" } else { lua_type_name(v) }
}

fn opt_int(lua: &Lua, args: &MultiValue, i: usize, fname: &str, default: i64) -> mlua::Result<i64> {
    match arg(args, i) {
        Value::Nil => Ok(default),
        Value::Integer(n) => Ok(*n),
        Value::Number(n) => Ok(*n as i64),
        v @ Value::String(_) => {
            // Converting the text scans it: charged as its bytes.
            if let Some(control) = lua.app_data_ref::<Arc<Control>>() {
                control.charge(super::cost::scan(v))?;
            }
            opt_number(lua, v, i, fname)
        }
        other => Err(error(
            lua,
            format!(
                "bad argument #{i} to '{fname}' (number expected, got {})",
                lua_type_name(other)
            ),
        )),
    }
}

fn opt_number(lua: &Lua, v: &Value, i: usize, fname: &str) -> mlua::Result<i64> {
    match lua.coerce_number(v.clone())? {
        Some(n) => Ok(n as i64),
        None => {
            Err(error(lua, format!("bad argument #{i} to '{fname}' (number expected, got string)")))
        }
    }
}

fn pattern_error(lua: &Lua, control: &Control, e: PatternError) -> mlua::Error {
    match e {
        PatternError::Malformed(m) => error(lua, m),
        PatternError::TooComplex => error(lua, "pattern too complex"),
        PatternError::Steps => {
            control.pattern_exceeded.set(true);
            error(lua, "pattern matching step limit exceeded")
        }
    }
}

fn capture_value(lua: &Lua, src: &[u8], c: Capture) -> mlua::Result<Value> {
    Ok(match c {
        Capture::Text(a, b) => Value::String(lua.create_string(&src[a..b])?),
        Capture::Position(p) => Value::Number(p as f64),
    })
}

/// Start offset of `init` (1-based, negative from the end) clamped into the subject, as Lua 5.1.
fn start_of(init: i64, len: usize) -> usize {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let pos = if init < 0 { (init + len_i + 1).max(0) } else { init };
    usize::try_from((pos - 1).clamp(0, len_i)).unwrap_or(0)
}

fn find_aux(
    lua: &Lua,
    control: &Control,
    args: MultiValue,
    find: bool,
) -> mlua::Result<MultiValue> {
    let fname = if find { "find" } else { "match" };
    control.charge(super::cost::CALL_UNITS)?;
    let s = check_bytes(lua, &args, 1, fname)?;
    let p = check_bytes(lua, &args, 2, fname)?;
    let init = start_of(opt_int(lua, &args, 3, fname, 1)?, s.len());
    let steps = &control.pattern_steps;
    let nil = || Ok(MultiValue::from(vec![Value::Nil]));
    if find && (is_truthy(arg(&args, 4)) || is_plain(&p)) {
        return match find_plain(&s[init..], &p, steps)
            .map_err(|e| pattern_error(lua, control, e))?
        {
            Some(i) => Ok(MultiValue::from(vec![
                Value::Number((init + i + 1) as f64),
                Value::Number((init + i + p.len()) as f64),
            ])),
            None => nil(),
        };
    }
    let (anchor, p0) = if p.first() == Some(&b'^') { (true, 1) } else { (false, 0) };
    let mut m = Matcher::new(&s, &p, steps);
    let mut s1 = init;
    loop {
        if let Some(e) = m.try_at(s1, p0).map_err(|e| pattern_error(lua, control, e))? {
            let caps = m.captures(s1, e, !find).map_err(|e| pattern_error(lua, control, e))?;
            let mut out = Vec::with_capacity(caps.len() + 2);
            if find {
                out.push(Value::Number((s1 + 1) as f64));
                out.push(Value::Number(e as f64));
            }
            for c in caps {
                out.push(capture_value(lua, &s, c)?);
            }
            return Ok(MultiValue::from(out));
        }
        s1 += 1;
        if s1 > s.len() || anchor {
            return nil();
        }
    }
}

fn is_truthy(v: &Value) -> bool {
    !matches!(v, Value::Nil | Value::Boolean(false))
}

fn gmatch(lua: &Lua, control: &Arc<Control>, args: MultiValue) -> mlua::Result<Function> {
    let s = check_bytes(lua, &args, 1, "gmatch")?;
    let p = check_bytes(lua, &args, 2, "gmatch")?;
    // The iterator keeps a copy of its subject outside the Lua heap: it counts against the
    // memory limit as the heap does (nothing is freed while the script runs).
    control.hold_outside(s.len() + p.len())?;
    let pos = Cell::new(0usize);
    let control = Arc::clone(control);
    lua.create_function(move |lua, _: MultiValue| {
        control.charge(super::cost::CALL_UNITS)?;
        let s: &[u8] = &s;
        let mut m = Matcher::new(s, &p, &control.pattern_steps);
        let mut src = pos.get();
        while src <= s.len() {
            if let Some(e) = m.try_at(src, 0).map_err(|e| pattern_error(lua, &control, e))? {
                pos.set(if e == src { e + 1 } else { e });
                let caps = m.captures(src, e, true).map_err(|e| pattern_error(lua, &control, e))?;
                return caps
                    .into_iter()
                    .map(|c| capture_value(lua, s, c))
                    .collect::<mlua::Result<MultiValue>>();
            }
            src += 1;
        }
        pos.set(src);
        Ok(MultiValue::new())
    })
}

fn gsub(lua: &Lua, control: &Control, args: MultiValue) -> mlua::Result<(mlua::LuaString, f64)> {
    control.charge(super::cost::CALL_UNITS)?;
    let src = check_bytes(lua, &args, 1, "gsub")?;
    let p = check_bytes(lua, &args, 2, "gsub")?;
    let repl = arg(&args, 3).clone();
    if !matches!(
        repl,
        Value::Integer(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Function(_)
            | Value::Table(_)
    ) {
        return Err(error(lua, "bad argument #3 to 'gsub' (string/function/table expected)"));
    }
    let repl_bytes = match &repl {
        Value::Function(_) | Value::Table(_) => None,
        _ => Some(check_bytes(lua, &args, 3, "gsub")?),
    };
    let len_i = i64::try_from(src.len()).unwrap_or(i64::MAX);
    let max_s = opt_int(lua, &args, 4, "gsub", len_i.saturating_add(1))?;
    let (anchor, p0) = if p.first() == Some(&b'^') { (true, 1) } else { (false, 0) };
    let limit = control.string_bytes.get();
    let mut m = Matcher::new(&src, &p, &control.pattern_steps);
    let mut out: Vec<u8> = Vec::new();
    let mut i = 0;
    let mut n: i64 = 0;
    while n < max_s {
        let e = m.try_at(i, p0).map_err(|e| pattern_error(lua, control, e))?;
        if let Some(e) = e {
            n += 1;
            add_value(lua, control, &m, &src, i, e, &repl, repl_bytes.as_deref(), &mut out)?;
        }
        match e {
            Some(e) if e > i => i = e,
            _ if i < src.len() => {
                out.push(src[i]);
                i += 1;
            }
            _ => break,
        }
        if out.len() > limit {
            return Err(error(
                lua,
                format!("string.gsub: result is larger than the limit of {limit} bytes"),
            ));
        }
        if anchor {
            break;
        }
    }
    out.extend_from_slice(&src[i..]);
    if out.len() > limit {
        return Err(error(
            lua,
            format!("string.gsub: result is larger than the limit of {limit} bytes"),
        ));
    }
    Ok((lua.create_string(&out)?, n as f64))
}

#[allow(clippy::too_many_arguments)]
fn add_value(
    lua: &Lua,
    control: &Control,
    m: &Matcher<'_>,
    src: &[u8],
    s: usize,
    e: usize,
    repl: &Value,
    repl_bytes: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> mlua::Result<()> {
    let perr = |err| pattern_error(lua, control, err);
    if let Some(news) = repl_bytes {
        let mut k = 0;
        while k < news.len() {
            let c = news[k];
            if c != b'%' {
                out.push(c);
            } else {
                k += 1;
                let d = news.get(k).copied().unwrap_or(0);
                if !d.is_ascii_digit() {
                    out.push(d);
                } else if d == b'0' {
                    out.extend_from_slice(&src[s..e]);
                } else {
                    match m.capture(usize::from(d - b'1'), s, e).map_err(perr)? {
                        Capture::Text(a, b) => out.extend_from_slice(&src[a..b]),
                        Capture::Position(p) => out.extend_from_slice(p.to_string().as_bytes()),
                    }
                }
            }
            k += 1;
        }
        return Ok(());
    }
    let depth = control.callback_depth.get();
    if depth >= MAX_CALLBACK_DEPTH {
        return Err(error(
            lua,
            format!("string.gsub: replacements nested more than {MAX_CALLBACK_DEPTH} deep"),
        ));
    }
    control.callback_depth.set(depth + 1);
    let value = replacement(lua, m, src, s, e, repl, &perr);
    control.callback_depth.set(depth);
    let value = value?;
    match value {
        Value::Nil | Value::Boolean(false) => out.extend_from_slice(&src[s..e]),
        v @ (Value::String(_) | Value::Integer(_) | Value::Number(_)) => {
            match lua.coerce_string(v)? {
                Some(s) => out.extend_from_slice(&s.as_bytes()),
                None => out.extend_from_slice(&src[s..e]),
            }
        }
        other => {
            return Err(error(
                lua,
                format!("invalid replacement value (a {})", lua_type_name(&other)),
            ));
        }
    }
    Ok(())
}

/// Native stack frames pile up for each `string.gsub` whose replacement calls `string.gsub`
/// again; past this depth the call is an error instead of a stack overflow.
const MAX_CALLBACK_DEPTH: u32 = 16;

fn replacement(
    lua: &Lua,
    m: &Matcher<'_>,
    src: &[u8],
    s: usize,
    e: usize,
    repl: &Value,
    perr: &dyn Fn(PatternError) -> mlua::Error,
) -> mlua::Result<Value> {
    Ok(match repl {
        Value::Function(f) => {
            let caps = m.captures(s, e, true).map_err(perr)?;
            let args = caps
                .into_iter()
                .map(|c| capture_value(lua, src, c))
                .collect::<mlua::Result<MultiValue>>()?;
            f.call::<MultiValue>(args)?.into_iter().next().unwrap_or(Value::Nil)
        }
        Value::Table(t) => {
            let key = capture_value(lua, src, m.capture(0, s, e).map_err(perr)?)?;
            t.get::<Value>(key)?
        }
        _ => Value::Nil,
    })
}

/// Replaces the unbounded functions of the real `string` table (which is also the `__index`
/// of the string metatable, so method calls get the same functions).
pub(super) fn install(lua: &Lua, string: &Table, control: &Arc<Control>) -> mlua::Result<()> {
    string.raw_set("dump", Value::Nil)?;
    let c = Arc::clone(control);
    string.raw_set("find", lua.create_function(move |lua, args| find_aux(lua, &c, args, true))?)?;
    let c = Arc::clone(control);
    string
        .raw_set("match", lua.create_function(move |lua, args| find_aux(lua, &c, args, false))?)?;
    let c = Arc::clone(control);
    let gm = lua.create_function(move |lua, args| gmatch(lua, &c, args))?;
    string.raw_set("gmatch", gm.clone())?;
    string.raw_set("gfind", gm)?;
    let c = Arc::clone(control);
    string.raw_set("gsub", lua.create_function(move |lua, args| gsub(lua, &c, args))?)?;
    let raw_rep: Function = string.raw_get("rep")?;
    let c = Arc::clone(control);
    string.raw_set(
        "rep",
        lua.create_function(move |lua, args: MultiValue| {
            c.charge(super::cost::CALL_UNITS)?;
            let s = check_bytes(lua, &args, 1, "rep")?;
            let n = opt_int(lua, &args, 2, "rep", i64::MIN)?;
            if n == i64::MIN {
                return Err(error(lua, "bad argument #2 to 'rep' (number expected, got no value)"));
            }
            let sep = match arg(&args, 3) {
                Value::Nil => 0,
                _ => check_bytes(lua, &args, 3, "rep")?.len(),
            };
            if n > 0 {
                let n = u128::try_from(n).unwrap_or(0);
                let total = (s.len() as u128) * n + (sep as u128) * (n - 1);
                let limit = c.string_bytes.get();
                if total > limit as u128 {
                    return Err(error(
                        lua,
                        format!("string.rep: result of {total} bytes is larger than the limit of {limit} bytes"),
                    ));
                }
                // Building it is work even when the result exists already (strings are
                // interned, so the heap does not grow): charged as the bytes written.
                c.charge(super::cost::copy(usize::try_from(total).unwrap_or(usize::MAX)))?;
            }
            raw_rep.call::<MultiValue>(args)
        })?,
    )?;
    Ok(())
}
