//! Numbers read and written as gopher-lua (Argo CD's Lua) does, not as LuaJIT does
//! ([`crate::script::gopher`]): `tonumber`, and the text of a number in `tostring`, in
//! `string.format`'s `%s` and in the string functions given a number.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::cost::position;
use crate::script::gopher;

fn error(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::RuntimeError(format!("{}{message}", position(lua)))
}

/// The text of a number as gopher-lua writes it.
pub(super) fn text(n: f64) -> String {
    gopher::number_text(n)
}

/// Replaces the base library's `tonumber` with gopher-lua's (`base` is the sandbox's table of
/// base functions, before they are wrapped to be charged), and gives the two helpers the
/// sandbox's `tostring` and `string.format` call: a number's text, and `string.format`'s
/// arguments with each number given to `%s` or `%q` as its text and each given to an integer
/// conversion (`%d`, `%i`, `%o`, `%x`, `%X`) as Go's `int64` of it.
pub(super) fn install(lua: &Lua, base: &Table) -> mlua::Result<(Function, Function)> {
    let tonumber = lua.create_function(|lua, args: MultiValue| {
        let radix = match args.get(1) {
            None | Some(Value::Nil) => None,
            Some(Value::Integer(i)) => Some(*i),
            Some(Value::Number(n)) => Some(gopher::go_int64(*n)),
            Some(other) => {
                return Err(error(
                    lua,
                    format!(
                        "bad argument #2 to 'tonumber' (number expected, got {})",
                        super::convert::lua_type_name(other)
                    ),
                ));
            }
        };
        Ok(match args.front() {
            None => return Err(error(lua, "bad argument #1 to 'tonumber' (value expected)")),
            Some(v @ (Value::Integer(_) | Value::Number(_))) => v.clone(),
            Some(Value::String(s)) => std::str::from_utf8(&s.as_bytes())
                .ok()
                .and_then(|s| gopher::tonumber(s, radix))
                .map_or(Value::Nil, Value::Number),
            Some(_) => Value::Nil,
        })
    })?;
    base.raw_set("tonumber", tonumber)?;
    let number_text = lua.create_function(|lua, n: f64| lua.create_string(text(n)))?;
    let format_args = lua.create_function(|lua, args: MultiValue| format_args(lua, args))?;
    Ok((number_text, format_args))
}

/// `fmt, ...` in, `...` out with the numbers converted (see [`install`]).
fn format_args(lua: &Lua, mut args: MultiValue) -> mlua::Result<MultiValue> {
    let Some(Value::String(fmt)) = args.pop_front() else {
        return Ok(args);
    };
    let fmt = fmt.as_bytes();
    let mut i = 0;
    let mut next_arg = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < fmt.len() && (b"-+ #0".contains(&fmt[i]) || fmt[i].is_ascii_digit()) {
            i += 1;
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                i += 1;
            }
        }
        let Some(&conversion) = fmt.get(i) else { break };
        i += 1;
        let Some(arg) = args.get_mut(next_arg) else { break };
        next_arg += 1;
        let n = match arg {
            Value::Number(n) => *n,
            Value::Integer(n) => *n as f64,
            _ => continue,
        };
        match conversion {
            b's' | b'q' => *arg = Value::String(lua.create_string(text(n))?),
            b'd' | b'i' | b'o' | b'x' | b'X' => *arg = Value::Number(gopher::go_int64(n) as f64),
            _ => {}
        }
    }
    Ok(args)
}
