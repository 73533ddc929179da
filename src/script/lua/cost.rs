//! What native library calls cost: each charges the work it does to the evaluation's
//! instruction budget, so that a script stops at the same point on every run however its
//! work is split between the VM and native code.
//!
//! The VM's instructions are counted by the hook; a library function runs as one call
//! instruction, so each one that can do work proportional to its input is wrapped here and
//! charges, before it runs, [`BYTES_PER_UNIT`] bytes read, copied or built per unit, one unit
//! per element moved or visited, [`COMPARE_UNITS`] per comparison of a sort and
//! [`COMPILE_UNITS`] per chunk compiled. Allocations are bounded besides by the memory limit:
//! the collector is stopped during an evaluation, so everything a script allocates counts,
//! garbage included, and a loop that builds large strings stops at the memory limit.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::{Control, Relaxed as _};

/// Bytes per budget unit: copying or scanning 16 bytes costs about what one VM instruction
/// does.
pub(super) const BYTES_PER_UNIT: u64 = 16;
/// Units per comparison of `table.sort` (a comparison calls through the VM's metamethod
/// path; a Lua comparator's own instructions are counted by the hook besides).
pub(super) const COMPARE_UNITS: u64 = 4;
/// Units per call of a library function implemented in Rust (or wrapped by one): crossing
/// into native code and back costs about a microsecond, a hundred VM instructions' worth.
pub(super) const CALL_UNITS: u64 = 100;
/// Units per chunk `loadstring`/`load` compiles, besides its bytes.
pub(super) const COMPILE_UNITS: u64 = 1000;

/// How much a call costs, from its arguments.
type CostFn = fn(&MultiValue) -> u64;

fn arg(args: &MultiValue, i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Nil)
}

/// The length in bytes of a string argument (0 for anything else).
fn str_len(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.as_bytes().len() as u64,
        _ => 0,
    }
}

/// The border (`#t`) of a table argument (0 for anything else).
fn table_len(v: &Value) -> u64 {
    match v {
        Value::Table(t) => t.raw_len() as u64,
        _ => 0,
    }
}

/// What converting a string argument to a number may cost (a native function that takes a
/// number converts a string, scanning its leading blanks and digits): the bytes of a string
/// longer than [`super::operators::FREE_BYTES`] that starts as a number may, nothing for any
/// other value (the scan stops at the first byte that cannot start a number).
pub(super) fn scan(v: &Value) -> u64 {
    match v {
        Value::String(s) => {
            let b = s.as_bytes();
            let numeric = matches!(b.first(), Some(c) if c.is_ascii_digit()
                || c.is_ascii_whitespace() || matches!(c, b'+' | b'-' | b'.' | 0x0b));
            if b.len() > super::operators::FREE_BYTES && numeric {
                bytes(b.len() as u64)
            } else {
                0
            }
        }
        _ => 0,
    }
}

fn bytes(n: u64) -> u64 {
    n / BYTES_PER_UNIT + 1
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(n) => Some(*n),
        Value::Number(n) if n.is_finite() => Some(*n as i64),
        _ => None,
    }
}

/// Most values a native function pushes before it refuses with its own error ("too many
/// results to unpack", "string slice too long"): what it can cost at most.
const MAX_PUSHED: u64 = 1 << 16;

/// A function that charges `cost(args)` and then calls `raw` with the same arguments. An
/// error of `raw` reads as if the script had called it: its name and the script's position.
fn charged(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    name: &'static str,
    raw: Function,
    cost: fn(&MultiValue) -> u64,
) -> mlua::Result<Function> {
    let control = std::sync::Arc::clone(control);
    lua.create_function(move |lua, args: MultiValue| {
        let converted: u64 = args.iter().map(|v| 1 + scan(v)).sum();
        control.charge(CALL_UNITS + cost(&args) + converted)?;
        raw.call::<MultiValue>(args).map_err(|e| {
            let text = match super::root_cause(e.clone()) {
                // Out of memory, or a limit hit inside a callback: passed on as it is.
                mlua::Error::MemoryError(_) => {
                    control.memory_exceeded.set(true);
                    return e;
                }
                _ if control.tripped() => return e,
                mlua::Error::RuntimeError(m) => super::strip_traceback(&m).to_string(),
                other => super::strip_traceback(&other.to_string()).to_string(),
            };
            // An error raised by Lua code the function called back (a `table.sort`
            // comparator) has its own position already: passed on as gopher-lua does.
            if has_position(&text) {
                return mlua::Error::RuntimeError(text);
            }
            let text = text.replace("to '?'", &format!("to '{name}'"));
            mlua::Error::RuntimeError(format!("{}{text}", position(lua)))
        })
    })
}

/// Wraps the functions of `lib` named in `costs` (those it has).
fn wrap(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    lib: &Table,
    costs: &[(&'static str, CostFn)],
) -> mlua::Result<()> {
    for (name, cost) in costs {
        if let Ok(raw) = lib.raw_get::<Function>(*name) {
            lib.raw_set(*name, charged(lua, control, name, raw, *cost)?)?;
        }
    }
    Ok(())
}

/// The string functions that are not replaced by the bounded matcher: each charges the bytes
/// it reads or builds.
pub(super) fn wrap_string(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    string: &Table,
) -> mlua::Result<()> {
    wrap(
        lua,
        control,
        string,
        &[
            ("upper", |a| bytes(str_len(arg(a, 0)))),
            ("lower", |a| bytes(str_len(arg(a, 0)))),
            ("reverse", |a| bytes(str_len(arg(a, 0)))),
            ("len", |_| 1),
            // `sub` copies at most the string; `byte` pushes one value per byte.
            ("sub", |a| bytes(str_len(arg(a, 0)))),
            ("byte", |a| bytes(str_len(arg(a, 0))) + span(a, str_len(arg(a, 0)))),
            ("char", |a| a.len() as u64 + 1),
            // `format` reads its format and every string it formats.
            ("format", |a| bytes(a.iter().map(str_len).sum())),
        ],
    )
}

/// How many values `byte(s, i, j)` pushes at most.
fn span(a: &MultiValue, len: u64) -> u64 {
    let i = int(arg(a, 1)).unwrap_or(1);
    let j = int(arg(a, 2)).unwrap_or(i);
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let abs = |p: i64| if p < 0 { len + p + 1 } else { p };
    u64::try_from(abs(j).min(len) - abs(i).max(1) + 1).unwrap_or(0).min(MAX_PUSHED)
}

/// The table functions: each charges the elements it moves or visits.
pub(super) fn wrap_table(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    table: &Table,
) -> mlua::Result<()> {
    wrap(
        lua,
        control,
        table,
        &[
            // `concat` visits every element and copies its bytes (counted by the memory
            // limit besides).
            ("concat", |a| {
                table_len(arg(a, 0)) + 1 + bytes(str_len(arg(a, 1)) * table_len(arg(a, 0)))
            }),
            // `insert(t, pos, v)` moves the elements after `pos`; `insert(t, v)` appends.
            ("insert", |a| match (a.len(), int(arg(a, 1))) {
                (3, Some(pos)) => table_len(arg(a, 0)).saturating_sub(pos.max(1) as u64 - 1) + 1,
                _ => 2,
            }),
            ("remove", |a| match int(arg(a, 1)) {
                Some(pos) => table_len(arg(a, 0)).saturating_sub(pos.max(1) as u64 - 1) + 1,
                None => 2,
            }),
            // A sort of n elements makes about n log2 n comparisons; without a comparator
            // the VM compares strings byte by byte, each comparison reading up to the
            // length of the longest (found by visiting every element once).
            ("sort", |a| {
                let n = table_len(arg(a, 0));
                let longest = match (arg(a, 0), arg(a, 1)) {
                    (Value::Table(t), Value::Nil) => (1..=n)
                        .map(|i| t.raw_get::<Value>(i).map_or(0, |v| str_len(&v)))
                        .max()
                        .unwrap_or(0),
                    _ => 0,
                };
                let compare = COMPARE_UNITS + longest / BYTES_PER_UNIT;
                n * u64::from(64 - n.leading_zeros()) * compare + n + 1
            }),
            // `maxn` visits every key; the border is the best estimate known before.
            ("maxn", |a| table_len(arg(a, 0)) + 1),
            ("getn", |_| 1),
        ],
    )
}

/// The base functions that do work in native code: `unpack` pushes one value per element,
/// `tonumber` and `tostring` read their argument.
pub(super) fn wrap_base(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    base: &Table,
) -> mlua::Result<()> {
    wrap(
        lua,
        control,
        base,
        &[
            ("unpack", |a| {
                let first = int(arg(a, 1)).unwrap_or(1);
                let last = int(arg(a, 2)).unwrap_or_else(|| table_len(arg(a, 0)) as i64);
                let n = u64::try_from(last.saturating_sub(first).saturating_add(1)).unwrap_or(0);
                n.min(MAX_PUSHED) + 1
            }),
            ("tonumber", |a| bytes(str_len(arg(a, 0)))),
        ],
    )
}

/// The `math` functions: each may convert string arguments to numbers, charged by [`scan`]
/// (plus a call and one unit per argument, as every wrapped function).
pub(super) fn wrap_math(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    math: &Table,
) -> mlua::Result<()> {
    const NAMES: [&str; 26] = [
        "abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor",
        "fmod", "frexp", "ldexp", "log", "log10", "max", "min", "modf", "pow", "rad", "sin",
        "sinh", "sqrt", "tan", "tanh",
    ];
    let costs: Vec<(&'static str, CostFn)> =
        NAMES.iter().map(|n| (*n, (|_| 0) as CostFn)).collect();
    wrap(lua, control, math, &costs)
}

/// The safe `os` functions: `date` builds a string from its format, up to about 12 bytes per
/// byte of format (`%c`), each written by formatting code: charged one unit per byte of
/// format and 16 bytes of output it may write.
pub(super) fn wrap_os(
    lua: &Lua,
    control: &std::sync::Arc<Control>,
    os: &Table,
) -> mlua::Result<()> {
    wrap(
        lua,
        control,
        os,
        &[("date", |a| str_len(arg(a, 0)) * 16), ("time", |_| 1), ("difftime", |_| 1)],
    )
}

/// What compiling a chunk of `len` bytes costs: LuaJIT compiles it, the parser reads it and
/// its operators are rewritten (`operators.rs`), and LuaJIT compiles it again: 32 units a
/// byte (the parser takes some 350 to 700 ns a byte of a large chunk), so that the largest
/// chunk ([`super::MAX_CHUNK_BYTES`]) fits one evaluation's default budget once.
pub(super) fn compile(len: usize) -> u64 {
    COMPILE_UNITS + 32 * len as u64
}

/// What copying `len` bytes costs.
pub(super) fn copy(len: usize) -> u64 {
    bytes(len as u64)
}

/// `<chunk>:<line>: ` of the Lua code calling the current library function, as `luaL_error`
/// prefixes its messages; empty when the caller is not Lua code.
/// Whether an error text starts with a script position (`<string>:12: `).
fn has_position(text: &str) -> bool {
    text.strip_prefix("<string>:").is_some_and(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(": ")
    })
}

pub(super) fn position(lua: &Lua) -> String {
    lua.inspect_stack(1, |d| {
        let line = d.current_line()?;
        let src = d.source().short_src?.into_owned();
        Some(format!("{src}:{line}: "))
    })
    .flatten()
    .unwrap_or_default()
}
