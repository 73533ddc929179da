//! The Lua engine: a pool of LuaJIT states the engine owns, each evaluation in a fresh
//! environment.

mod action;
mod convert;
mod cost;
mod numbers;
mod operators;
mod order;
mod os;
mod pattern;
mod strlib;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mlua::chunk::ChunkMode;
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

use super::{Interrupt, ScriptLimits};
use crate::object::ObjectRef;

pub use convert::LuaHealth;

/// Chunk name of every script, so errors read `<string>:<line>: <message>` as in Argo CD.
const CHUNK_NAME: &str = "=<string>";
/// Compiled scripts kept per state before the cache is emptied.
const CACHE_ENTRIES: usize = 512;
/// Garbage (bytes above the state's size after its last full collection) that triggers a
/// full collection before an evaluation.
const GARBAGE_BYTES: usize = 4 << 20;

/// Runs Lua health scripts with Argo CD's contract, sandboxed and with deterministic limits.
///
/// The engine runs the script it is handed. To give a health assessment the scripts of
/// `argocd-cm` or of a `resource_customizations/` folder, wrap it with the scripts in
/// [`ScriptedHealth`](crate::health::ScriptedHealth), the crate's
/// [`ScriptHealth`](crate::health::parts::ScriptHealth) for Lua (the engine alone has no table of
/// which script belongs to which kind, so it does not implement that trait).
///
/// The engine is `Send + Sync` and cheap to share. It owns its LuaJIT states: an evaluation
/// takes one from the engine's pool (one pool per library mode), or builds one when every
/// state is in use on another thread, and gives it back when it is done. The engine's clones
/// (and [`LuaEngine::for_request`]) share the pool, so keep one engine for the life of the
/// host: a new engine starts with no state. Each state keeps the scripts it has compiled,
/// keyed by their text. Every evaluation gets a fresh global environment, so globals a script
/// assigns never leak into the next evaluation. No state is kept anywhere but in the engine.
///
/// # What a script sees
///
/// - `obj`: the object, converted as Argo CD does (JSON null and null array items are dropped,
///   numbers are Lua numbers, so `3` prints as `3`). `actionParams` is an empty table.
/// - Base functions: `assert`, `error`, `ipairs`, `next`, `pairs`, `pcall`, `xpcall`,
///   `rawequal`, `rawget`, `rawset`, `select`, `getmetatable`, `setmetatable`, `tonumber`,
///   `tostring`, `type`, `unpack`, `_G`, `_VERSION` (`Lua 5.1`); `print` does nothing and
///   `collectgarbage` returns 0; `loadstring` and `load` compile text only (the chunk gets the
///   script's environment) and refuse binary chunks; `require("os")` gives the safe `os`,
///   anything else is an error. `pairs` and `next` walk a table in one order on every run:
///   the array part `1..n`, other numbers ascending, strings byte by byte, `false`, `true`
///   (LuaJIT's own order changes from state to state; gopher-lua's is the order keys were set).
/// - `table`: `concat`, `getn`, `insert`, `maxn`, `remove`, `sort`.
/// - With open libraries only (`use_open_libs`): `string` (without `dump`; `find`, `match`,
///   `gmatch`, `gsub` run on a step-counted matcher, `rep` is size-checked), string methods
///   (`s:find(...)`), `math` (without `random`, `randomseed`), and `os` with `time`, `date`,
///   `clock` and `difftime`, whose clock is the `now` the host passes in (time zone UTC).
/// - Never: `io`, `debug`, `package`, `ffi`, `jit`, `coroutine`, `dofile`, `loadfile`,
///   `getfenv`, `setfenv`, `newproxy`, `module`, `string.dump`.
///
/// # Examples
///
/// ```
/// use gitops_core::script::LuaEngine;
///
/// let engine = LuaEngine::default();
/// let obj = serde_json::json!({"status": {"ready": 3, "wanted": 3}});
/// let script = r#"
///   if obj.status.ready == obj.status.wanted then
///     return {status = "Healthy", message = obj.status.ready .. " ready"}
///   end
///   return {status = "Progressing"}
/// "#;
/// let h = engine.eval_health("example", script, false, &obj, 0).unwrap();
/// assert_eq!((h.status.as_str(), h.message.as_str()), ("Healthy", "3 ready"));
/// ```
#[derive(Clone, Default)]
pub struct LuaEngine {
    limits: ScriptLimits,
    /// The host's backstop, asked now and then during an evaluation.
    interrupt: Option<Arc<dyn Interrupt>>,
    /// What is left of the request's budget, shared by the clones made for one request
    /// ([`LuaEngine::for_request`]).
    request: Option<Arc<AtomicU64>>,
    /// The Lua states not in use, shared by every clone of the engine.
    pool: Arc<Pool>,
}

/// The states an engine keeps between evaluations: index 0 with closed libraries, 1 with
/// open ones. A state is in the pool or in the hands of one evaluation, never both.
#[derive(Default)]
struct Pool([Mutex<Vec<State>>; 2]);

impl Pool {
    /// The states of one library mode. A lock is held only to push or pop, which cannot
    /// panic; a poisoned lock is used as it is.
    fn slot(&self, open: bool) -> MutexGuard<'_, Vec<State>> {
        self.0[usize::from(open)].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for LuaEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaEngine")
            .field("limits", &self.limits)
            .field("interrupt", &self.interrupt.is_some())
            .field("request_left", &self.request.as_ref().map(|r| r.load(Ordering::Relaxed)))
            .field("pooled", &[self.pool.slot(false).len(), self.pool.slot(true).len()])
            .finish()
    }
}

/// Why a script failed: the script, the object it ran on, and what went wrong.
///
/// Displayed as `health script <script> on <object>: <reason>`, or without ` on <object>`
/// when the object has no name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptError {
    /// The script's name (where it came from, e.g. `argocd-cm apps/Deployment` or the
    /// path of a `health.lua`).
    pub script: String,
    /// The object the script ran on (empty when the caller did not say).
    pub object: Box<ObjectRef>,
    /// What went wrong.
    pub kind: ScriptErrorKind,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "health script {}", self.script)?;
        if !self.object.name.is_empty() {
            write!(f, " on {}", self.object)?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for ScriptError {}

/// What went wrong in a script.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptErrorKind {
    /// The script does not compile; the text is LuaJIT's message.
    #[error("{0}")]
    Syntax(String),
    /// The script raised an error; the text is Lua's message, `<string>:<line>: ...`,
    /// without the stack trace.
    #[error("{0}")]
    Runtime(String),
    /// The script ran more VM instructions than its budget.
    #[error("instruction limit of {0} exceeded")]
    Instructions(u64),
    /// The scripts of one request ([`LuaEngine::for_request`]) spent the request's budget;
    /// later scripts of the request do not run.
    #[error("request instruction limit of {0} exceeded (shared by every script of the request)")]
    RequestInstructions(u64),
    /// The host's interrupt ([`Interrupt`]) stopped the evaluation: a deadline by the host's
    /// clock, not a deterministic budget.
    #[error("stopped by the host: {0}")]
    Interrupted(String),
    /// The script's heap grew past its limit.
    #[error("memory limit of {0} bytes exceeded")]
    Memory(usize),
    /// Pattern matching took more steps than its budget.
    #[error("pattern matching step limit of {0} exceeded")]
    PatternSteps(u64),
    /// The script's result cannot be read, e.g.
    /// `expect table output from Lua script, not function`.
    #[error("{0}")]
    Result(String),
    /// The Lua state could not be set up (a bug or an exhausted host).
    #[error("lua engine: {0}")]
    Engine(String),
}

impl ScriptError {
    fn new(script: &str, kind: ScriptErrorKind) -> Self {
        ScriptError { script: script.to_string(), object: Box::default(), kind }
    }

    /// The same error, naming the object.
    pub fn with_object(mut self, object: ObjectRef) -> Self {
        self.object = Box::new(object);
        self
    }

    /// The error text without the script name: what Argo CD shows as the message of an
    /// `Unknown` health.
    pub fn reason(&self) -> String {
        self.kind.to_string()
    }
}

/// The check of the host's interrupt for the evaluation running now.
#[derive(Default)]
struct Check(Option<Box<dyn super::InterruptCheck>>);

/// `get` and `set` on the counters of [`Control`], as on a `Cell`: a state is used by one
/// evaluation at a time, so the atomics need no ordering (relaxed loads and stores compile to
/// plain moves); they are atomics so that a state can move to another thread between
/// evaluations.
pub(super) trait Relaxed<T> {
    fn get(&self) -> T;
    fn set(&self, value: T);
}

macro_rules! relaxed {
    ($($atomic:ty => $t:ty),*) => {$(
        impl Relaxed<$t> for $atomic {
            fn get(&self) -> $t {
                self.load(Ordering::Relaxed)
            }
            fn set(&self, value: $t) {
                self.store(value, Ordering::Relaxed)
            }
        }
    )*};
}
relaxed!(AtomicU64 => u64, AtomicBool => bool, AtomicUsize => usize, AtomicI64 => i64, AtomicU32 => u32);

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Check(set)" } else { "Check(none)" })
    }
}

/// Per-evaluation counters shared with the hook and the library functions.
#[derive(Debug, Default)]
pub(super) struct Control {
    /// Budget units left: VM instructions and the native work charged as instructions
    /// (`cost.rs`).
    units_left: AtomicU64,
    instructions_exceeded: AtomicBool,
    /// The host's interrupt check (`has_check`: whether there is one, read without the
    /// lock), and whether it stopped this evaluation (with its reason).
    check: Mutex<Check>,
    has_check: AtomicBool,
    interrupted: Mutex<Option<String>>,
    /// Pattern steps left.
    pattern_steps: AtomicU64,
    pattern_exceeded: AtomicBool,
    /// `string.gsub` replacement callbacks running now (each holds native stack frames).
    callback_depth: AtomicU32,
    /// The script failed with Lua's out-of-memory error.
    memory_exceeded: AtomicBool,
    /// Largest string a library function may build.
    string_bytes: AtomicUsize,
    /// Bytes library functions hold outside the Lua heap (`gmatch` iterators' subjects), and
    /// how many may be held: what the heap may still grow by.
    outside_bytes: AtomicUsize,
    outside_limit: AtomicUsize,
    /// The host's clock, whole seconds since the Unix epoch.
    now: AtomicI64,
}

/// The lock of a [`Control`] field. Held only for a read or a write that cannot panic; a
/// poisoned lock is used as it is.
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Control {
    /// Whether a limit was hit in this evaluation; once hit, the script cannot go on.
    fn tripped(&self) -> bool {
        self.instructions_exceeded.get()
            || self.pattern_exceeded.get()
            || locked(&self.interrupted).is_some()
    }

    /// Counts `bytes` held outside the Lua heap against the memory limit.
    pub(super) fn hold_outside(&self, bytes: usize) -> mlua::Result<()> {
        let held = self.outside_bytes.get().saturating_add(bytes);
        if held > self.outside_limit.get() {
            self.memory_exceeded.set(true);
            return Err(mlua::Error::RuntimeError("not enough memory".into()));
        }
        self.outside_bytes.set(held);
        Ok(())
    }

    /// Spends `units` of the budget, and asks the host's interrupt whether to go on. Once
    /// the budget is spent or the host said stop, every later call fails too.
    pub(super) fn charge(&self, units: u64) -> mlua::Result<()> {
        if self.tripped() {
            return Err(mlua::Error::RuntimeError("limit exceeded".into()));
        }
        let left = self.units_left.get();
        if units > left {
            self.units_left.set(0);
            self.instructions_exceeded.set(true);
            return Err(mlua::Error::RuntimeError("instruction limit exceeded".into()));
        }
        self.units_left.set(left - units);
        if !self.has_check.get() {
            return Ok(());
        }
        let stop = locked(&self.check).0.as_ref().and_then(|c| c.stop());
        if let Some(reason) = stop {
            *locked(&self.interrupted) = Some(reason);
            return Err(mlua::Error::RuntimeError("interrupted".into()));
        }
        Ok(())
    }
}

/// One Lua state with its sandbox pieces.
struct State {
    lua: Lua,
    control: Arc<Control>,
    /// Builds a fresh environment: `make_env(obj)` returns the table.
    make_env: Function,
    /// Calls the script in protected mode and re-raises its error as text: `run(f)`.
    runner: Function,
    cache: HashMap<Box<str>, Function>,
    /// The counted helpers rewritten chunks are called with (`operators.rs`).
    helpers: MultiValue,
    /// Heap size after the last full collection.
    baseline: usize,
}

impl LuaEngine {
    /// An engine with the given limits.
    pub fn new(limits: ScriptLimits) -> Self {
        LuaEngine { limits, interrupt: None, request: None, pool: Arc::default() }
    }

    /// The same engine for one request (a `health` call, a `serve` request, an assessment of
    /// a whole app): every evaluation through the returned engine, and its clones, also
    /// spends from one budget of [`ScriptLimits::request_instructions`] units. Once it is
    /// spent, the evaluation running stops and later ones fail at once with
    /// [`ScriptErrorKind::RequestInstructions`]. Without this call only the per-evaluation
    /// budget applies.
    #[must_use]
    pub fn for_request(&self) -> Self {
        LuaEngine {
            limits: self.limits,
            interrupt: self.interrupt.clone(),
            request: Some(Arc::new(AtomicU64::new(self.limits.request_instructions))),
            pool: Arc::clone(&self.pool),
        }
    }

    /// The same engine with the host's backstop: asked when each evaluation starts and then
    /// every [`ScriptLimits::HOOK_INTERVAL`] instructions and at every charged library call;
    /// when it says stop, the evaluation ends with [`ScriptErrorKind::Interrupted`]. The
    /// library reads no clock: a deadline is the host's (the CLI and `serve` install one of
    /// 1 s per evaluation, [`super::Deadline`]).
    #[must_use]
    pub fn with_interrupt(mut self, interrupt: Arc<dyn Interrupt>) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// The engine's limits.
    pub fn limits(&self) -> &ScriptLimits {
        &self.limits
    }

    /// Runs a health script on `obj` and reads its result as Argo CD does (see [`LuaHealth`]).
    ///
    /// `name` names the script in errors. `use_open_libs` gives the script the `string`,
    /// `math` and safe `os` libraries (Argo CD's `useOpenLibs`, always on for built-in
    /// scripts). `now` is the clock `os.time()` and `os.date()` read, in unix seconds (the
    /// crate's one time type).
    pub fn eval_health(
        &self,
        name: &str,
        source: &str,
        use_open_libs: bool,
        obj: &serde_json::Value,
        now: i64,
    ) -> Result<LuaHealth, ScriptError> {
        self.evaluate(name, source, use_open_libs, obj, None, now, convert::read_health)
    }

    /// Runs a script on a state of the engine's pool and reads its last return value with `read`;
    /// `params` (when given) becomes the script's `actionParams` table.
    #[allow(clippy::too_many_arguments)]
    fn evaluate<T>(
        &self,
        name: &str,
        source: &str,
        use_open_libs: bool,
        obj: &serde_json::Value,
        params: Option<&BTreeMap<String, String>>,
        now: i64,
        read: fn(Value) -> Result<T, convert::ReadError>,
    ) -> Result<T, ScriptError> {
        // A spent request fails before it takes a state from the pool: a state taken and
        // dropped would make the next evaluation build a new one.
        let mut limits = self.limits;
        let request_left = self.request.as_ref().map(|r| r.load(Ordering::Relaxed));
        if let Some(left) = request_left {
            if left == 0 {
                let kind = ScriptErrorKind::RequestInstructions(self.limits.request_instructions);
                return Err(ScriptError::new(name, kind));
            }
            limits.instructions = limits.instructions.min(left);
        }
        let taken = self.pool.slot(use_open_libs).pop();
        let mut state = match taken {
            Some(s) => s,
            None => State::new(use_open_libs)
                .map_err(|e| ScriptError::new(name, ScriptErrorKind::Engine(e.to_string())))?,
        };
        let check = self.interrupt.as_ref().map(|i| i.start());
        let (mut result, reusable) =
            state.eval(name, source, obj, params, now, &limits, check, read);
        if let (Some(request), Some(left)) = (&self.request, request_left) {
            let spent = limits.instructions.saturating_sub(state.control.units_left.get());
            let _ = request.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                Some(l.saturating_sub(spent))
            });
            // The evaluation stopped at the request's budget, not its own.
            if let Err(e) = &mut result
                && e.kind == ScriptErrorKind::Instructions(limits.instructions)
                && left < self.limits.instructions
            {
                e.kind = ScriptErrorKind::RequestInstructions(self.limits.request_instructions);
            }
        }
        if reusable {
            self.pool.slot(use_open_libs).push(state);
        }
        result
    }
}

impl State {
    fn new(open: bool) -> mlua::Result<State> {
        let mut libs = StdLib::TABLE | StdLib::JIT;
        if open {
            libs |= StdLib::STRING | StdLib::MATH;
        }
        let lua = Lua::new_with(libs, LuaOptions::new())?;
        let control = Arc::new(Control::default());
        // Library functions that copy their arguments charge through it.
        lua.set_app_data(Arc::clone(&control));
        let globals = lua.globals();

        // The hook only runs in the interpreter: turn the JIT compiler off for good, then
        // drop the library.
        if let Ok(jit) = globals.raw_get::<Table>("jit") {
            jit.get::<Function>("off")?.call::<()>(())?;
        }
        globals.raw_set("jit", Value::Nil)?;

        control.units_left.set(u64::MAX);
        arm_hook(&lua, &control)?;

        let base = lua.create_table()?;
        for name in [
            "assert",
            "error",
            "ipairs",
            "next",
            "pairs",
            "rawequal",
            "rawget",
            "rawset",
            "select",
            "getmetatable",
            "setmetatable",
            "tonumber",
            "tostring",
            "type",
            "unpack",
            "_VERSION",
        ] {
            base.raw_set(name, globals.raw_get::<Value>(name)?)?;
        }
        let (number_text, format_args) = numbers::install(&lua, &base)?;
        cost::wrap_base(&lua, &control, &base)?;
        base.raw_set("print", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
        base.raw_set("collectgarbage", lua.create_function(|_, _: MultiValue| Ok(0))?)?;

        let libs_table = lua.create_table()?;
        let table_lib = lua.create_table()?;
        let real_table: Table = globals.raw_get("table")?;
        for name in ["concat", "getn", "insert", "maxn", "remove", "sort"] {
            table_lib.raw_set(name, real_table.raw_get::<Value>(name)?)?;
        }
        cost::wrap_table(&lua, &control, &table_lib)?;
        libs_table.raw_set("table", table_lib)?;
        if open {
            let string: Table = globals.raw_get("string")?;
            strlib::install(&lua, &string, &control)?;
            cost::wrap_string(&lua, &control, &string)?;
            libs_table.raw_set("string", string)?;
            // Protect the string metatable: scripts cannot reach or change it.
            if let Some(mt) = lua.load("return getmetatable('')").eval::<Option<Table>>()? {
                mt.raw_set("__metatable", false)?;
            }
            let math: Table = globals.raw_get("math")?;
            math.raw_set("random", Value::Nil)?;
            math.raw_set("randomseed", Value::Nil)?;
            cost::wrap_math(&lua, &control, &math)?;
            libs_table.raw_set("math", math)?;
        }
        let safe_os = os::create(&lua, &control)?;
        cost::wrap_os(&lua, &control, &safe_os)?;

        let check = {
            let control = Arc::clone(&control);
            lua.create_function(move |lua, mut args: MultiValue| {
                if control.tripped() {
                    return Err(mlua::Error::RuntimeError("limit exceeded".into()));
                }
                // An error raised by a library function reaches the script as its text, as
                // an error from Lua code does.
                if let (Some(Value::Boolean(false)), Some(Value::Error(e))) =
                    (args.front(), args.get(1))
                {
                    let text = match root_cause((**e).clone()) {
                        mlua::Error::RuntimeError(m) => strip_traceback(&m).to_string(),
                        other => strip_traceback(&other.to_string()).to_string(),
                    };
                    args[1] = Value::String(lua.create_string(text)?);
                }
                Ok(args)
            })?
        };
        let mut helpers = operator_helpers(&lua, &control, &number_text)?;
        if let Some(select) = helpers.pop_back() {
            base.raw_set("select", select)?;
        }
        let load_text = {
            let control = Arc::clone(&control);
            let helpers = helpers.clone();
            lua.create_function(move |lua, args: (Table, mlua::LuaString, Option<String>)| {
                control.charge(cost::compile(args.1.as_bytes().len()))?;
                load_text(lua, &helpers, args)
            })?
        };
        let keys_of = {
            let control = Arc::clone(&control);
            lua.create_function(
                move |lua, (t, with_pos, array_end): (Table, bool, Option<i64>)| {
                    order::keys_of(lua, &control, &t, with_pos, array_end)
                },
            )?
        };
        let first_of = {
            let control = Arc::clone(&control);
            lua.create_function(move |_, t: Table| order::first_of(&control, &t))?
        };
        let mark_memory = {
            let control = Arc::clone(&control);
            lua.create_function(move |_, ()| {
                control.memory_exceeded.set(true);
                Ok(())
            })?
        };

        let (make_env, runner): (Function, Function) =
            lua.load(ENV_BUILDER).set_name("=sandbox").set_mode(ChunkMode::Text).call((
                base,
                libs_table,
                safe_os,
                globals.raw_get::<Function>("pcall")?,
                globals.raw_get::<Function>("xpcall")?,
                check,
                load_text,
                open,
                globals.raw_get::<Function>("collectgarbage")?,
                mark_memory,
                number_text,
                format_args,
                keys_of,
                first_of,
            ))?;

        // Nothing reaches the real globals any more; empty them all the same.
        let names: Vec<Value> =
            globals.pairs::<Value, Value>().filter_map(|kv| kv.ok().map(|(k, _)| k)).collect();
        for k in names {
            globals.raw_set(k, Value::Nil)?;
        }

        lua.gc_collect()?;
        let baseline = lua.used_memory();
        Ok(State { lua, control, make_env, runner, cache: HashMap::new(), helpers, baseline })
    }

    /// Runs one evaluation; the flag says whether the state may be reused.
    #[allow(clippy::too_many_arguments)]
    fn eval<T>(
        &mut self,
        name: &str,
        source: &str,
        obj: &serde_json::Value,
        params: Option<&BTreeMap<String, String>>,
        now: i64,
        limits: &ScriptLimits,
        check: Option<Box<dyn super::InterruptCheck>>,
        read: fn(Value) -> Result<T, convert::ReadError>,
    ) -> (Result<T, ScriptError>, bool) {
        let err = |kind| Err(ScriptError::new(name, kind));
        if self.lua.used_memory() > self.baseline.saturating_add(GARBAGE_BYTES) {
            if let Err(e) = self.lua.gc_collect() {
                return (err(ScriptErrorKind::Engine(e.to_string())), false);
            }
            self.baseline = self.lua.used_memory();
        }
        let c = &self.control;
        c.units_left.set(limits.instructions);
        c.outside_bytes.set(0);
        c.outside_limit.set(limits.memory_bytes);
        c.instructions_exceeded.set(false);
        c.has_check.set(check.is_some());
        locked(&c.check).0 = check;
        *locked(&c.interrupted) = None;
        c.pattern_steps.set(limits.pattern_steps);
        c.pattern_exceeded.set(false);
        c.memory_exceeded.set(false);
        c.callback_depth.set(0);
        c.string_bytes.set(limits.string_bytes.min(limits.memory_bytes));
        c.now.set(now);
        if let Err(e) = arm_hook(&self.lua, &self.control) {
            return (err(ScriptErrorKind::Engine(e.to_string())), false);
        }
        // With the collector stopped, everything the script allocates counts against the
        // memory limit, garbage included: work done by allocating (building strings in a
        // loop) is bounded by it, the same on every run.
        self.lua.gc_stop();
        let result = self.run(source, obj, params, limits, read);
        self.lua.gc_restart();
        self.control.has_check.set(false);
        locked(&self.control.check).0 = None;
        // Lift the limit again for the host's own work on the state (the cache).
        let _ = self.lua.set_memory_limit(0);
        match result {
            Ok(h) => (Ok(h), true),
            Err(RunError::Lua(e)) => {
                let kind = self.classify(e, limits);
                let reusable = !matches!(
                    kind,
                    ScriptErrorKind::Memory(_)
                        | ScriptErrorKind::Instructions(_)
                        | ScriptErrorKind::RequestInstructions(_)
                        | ScriptErrorKind::Interrupted(_)
                        | ScriptErrorKind::Engine(_)
                );
                (err(kind), reusable)
            }
            Err(RunError::Script(kind)) => {
                let kind = if self.control.tripped() { self.limit_kind(limits) } else { kind };
                (err(kind), true)
            }
        }
    }

    fn run<T>(
        &mut self,
        source: &str,
        obj: &serde_json::Value,
        params: Option<&BTreeMap<String, String>>,
        limits: &ScriptLimits,
        read: fn(Value) -> Result<T, convert::ReadError>,
    ) -> Result<T, RunError> {
        let func = match self.cache.get(source) {
            Some(f) => f.clone(),
            None => {
                // Outside the budget: a cached script and a fresh one start alike.
                self.control.units_left.set(u64::MAX);
                let compiled =
                    compile(&self.lua, source.as_bytes(), CHUNK_NAME, None, &self.helpers);
                arm_hook(&self.lua, &self.control).map_err(RunError::Lua)?;
                self.control.units_left.set(limits.instructions);
                let f = match compiled {
                    Ok(Ok(f)) => f,
                    Ok(Err(message)) => {
                        return Err(RunError::Script(ScriptErrorKind::Syntax(message)));
                    }
                    Err(e) => return Err(RunError::Lua(e)),
                };
                if self.cache.len() >= CACHE_ENTRIES {
                    self.cache.clear();
                }
                self.cache.insert(source.into(), f.clone());
                f
            }
        };
        // Convert without a limit set (mlua then skips a protected call per table write),
        // and charge the object to the script's allowance afterwards.
        let start = self.lua.used_memory();
        let lua_obj = convert::to_lua(&self.lua, obj).map_err(RunError::Lua)?;
        let used = self.lua.used_memory().saturating_sub(start);
        if used > limits.memory_bytes {
            return Err(RunError::Script(ScriptErrorKind::Memory(limits.memory_bytes)));
        }
        let limit = start.saturating_add(limits.memory_bytes);
        self.lua
            .set_memory_limit(limit)
            .map_err(|e| RunError::Script(ScriptErrorKind::Engine(e.to_string())))?;
        let env: Table = self.make_env.call(lua_obj).map_err(RunError::Lua)?;
        if let Some(params) = params {
            action::set_params(&self.lua, &env, params).map_err(RunError::Lua)?;
        }
        func.set_environment(env).map_err(RunError::Lua)?;
        let out: MultiValue = self.runner.call(func).map_err(RunError::Lua)?;
        if self.control.tripped() {
            return Err(RunError::Script(self.limit_kind(limits)));
        }
        let last = out.into_iter().last().unwrap_or(Value::Nil);
        read(last).map_err(|e| match e {
            convert::ReadError::Lua(e) => RunError::Lua(e),
            convert::ReadError::Result(m) => RunError::Script(ScriptErrorKind::Result(m)),
        })
    }

    fn limit_kind(&self, limits: &ScriptLimits) -> ScriptErrorKind {
        let interrupted = locked(&self.control.interrupted).clone();
        if let Some(reason) = interrupted {
            ScriptErrorKind::Interrupted(reason)
        } else if self.control.instructions_exceeded.get() {
            ScriptErrorKind::Instructions(limits.instructions)
        } else {
            ScriptErrorKind::PatternSteps(limits.pattern_steps)
        }
    }

    fn classify(&self, e: mlua::Error, limits: &ScriptLimits) -> ScriptErrorKind {
        if self.control.tripped() {
            return self.limit_kind(limits);
        }
        if self.control.memory_exceeded.get() {
            return ScriptErrorKind::Memory(limits.memory_bytes);
        }
        match root_cause(e) {
            mlua::Error::MemoryError(_) => ScriptErrorKind::Memory(limits.memory_bytes),
            mlua::Error::RuntimeError(m) => {
                let m = strip_traceback(&m);
                if m == "not enough memory" || m == "error in error handling" {
                    ScriptErrorKind::Memory(limits.memory_bytes)
                } else {
                    ScriptErrorKind::Runtime(without_addresses(m))
                }
            }
            mlua::Error::SyntaxError { message, .. } => ScriptErrorKind::Syntax(message),
            other => {
                ScriptErrorKind::Runtime(without_addresses(strip_traceback(&other.to_string())))
            }
        }
    }
}

/// Sets the instruction hook, which also restarts its count: every evaluation starts at
/// instruction 0 of a block, so the budget runs out at the same instruction on every run.
fn arm_hook(lua: &Lua, control: &Arc<Control>) -> mlua::Result<()> {
    let control = Arc::clone(control);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(ScriptLimits::HOOK_INTERVAL),
        move |_, _| {
            control.charge(u64::from(ScriptLimits::HOOK_INTERVAL))?;
            Ok(mlua::VmState::Continue)
        },
    )
}

enum RunError {
    Lua(mlua::Error),
    Script(ScriptErrorKind),
}

fn root_cause(e: mlua::Error) -> mlua::Error {
    match e {
        mlua::Error::CallbackError { cause, .. } => root_cause((*cause).clone()),
        mlua::Error::WithContext { cause, .. } => root_cause((*cause).clone()),
        other => other,
    }
}

fn strip_traceback(m: &str) -> &str {
    m.split("\nstack traceback:").next().unwrap_or(m)
}

/// An error text with every `table: 0x…`-style address removed (`table`, `function`,
/// `userdata`, `thread`, `cdata`, `builtin` followed by `: 0x` and hex digits): the
/// sandbox's own `tostring` never shows addresses, and this keeps the texts of the engine and
/// the binding from bringing one in, so the same input gives the same bytes.
fn without_addresses(m: &str) -> String {
    const WORDS: [&str; 6] = ["table", "function", "userdata", "thread", "cdata", "builtin"];
    let mut out = String::with_capacity(m.len());
    let mut rest = m;
    while let Some(at) = rest.find(": 0x") {
        let (head, tail) = rest.split_at(at);
        let hex = tail[4..].bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex > 0 && WORDS.iter().any(|w| head.ends_with(w)) {
            out.push_str(head);
            rest = &tail[4 + hex..];
        } else {
            out.push_str(head);
            out.push_str(&tail[..4]);
            rest = &tail[4..];
        }
    }
    out.push_str(rest);
    out
}

/// `load_text(env, text, chunkname)`: compiles text (never a binary chunk) into a function
/// running in `env`; `nil, message` when it does not compile.
fn load_text(
    lua: &Lua,
    helpers: &MultiValue,
    (env, text, name): (Table, mlua::LuaString, Option<String>),
) -> mlua::Result<MultiValue> {
    let bytes = text.as_bytes();
    if bytes.first() == Some(&0x1b) {
        return Err(mlua::Error::RuntimeError(format!(
            "{}binary chunks are not allowed",
            cost::position(lua)
        )));
    }
    let name = name.unwrap_or_else(|| text.to_string_lossy());
    match compile(lua, &bytes, &name, Some(env), helpers)? {
        Ok(f) => Ok(MultiValue::from(vec![Value::Function(f)])),
        Err(message) => {
            Ok(MultiValue::from(vec![Value::Nil, Value::String(lua.create_string(message)?)]))
        }
    }
}

/// Largest chunk (a script, or text given to `loadstring`/`load`) compiled: 256 KiB, some 30
/// times the largest `health.lua` Argo CD ships.
pub(crate) const MAX_CHUNK_BYTES: usize = 256 * 1024;

/// Compiles a chunk with its costly operators rewritten into counted ones
/// (`operators.rs`). `Ok(Err(message))` when it does not compile: LuaJIT's message for the
/// text as written, so syntax errors read as they always did.
fn compile(
    lua: &Lua,
    source: &[u8],
    name: &str,
    env: Option<Table>,
    helpers: &MultiValue,
) -> mlua::Result<Result<Function, String>> {
    let chunk = |text: &[u8]| {
        let chunk = lua.load(text).set_name(name).set_mode(ChunkMode::Text);
        match &env {
            Some(env) => chunk.set_environment(env.clone()),
            None => chunk,
        }
        .into_function()
    };
    // The text as written first: LuaJIT's own syntax errors, and its limits (nesting depth,
    // locals, constants) hold before the parser below sees the text.
    match chunk(source) {
        Ok(_) => {}
        Err(mlua::Error::SyntaxError { message, .. }) => return Ok(Err(message)),
        Err(e) => return Err(e),
    }
    let prefix = chunk_prefix(name);
    // Parsing below costs some hundreds of nanoseconds a byte: a chunk is bounded in size so
    // that compiling one (a script once, a `loadstring` chunk at 32 units a byte) stays far
    // under the time an evaluation may take.
    if source.len() > MAX_CHUNK_BYTES {
        return Ok(Err(format!(
            "{prefix}1: chunk of {} bytes is over the limit of {MAX_CHUNK_BYTES} bytes",
            source.len()
        )));
    }
    let Ok(text) = std::str::from_utf8(source) else {
        return Ok(Err(format!("{prefix}1: the chunk is not UTF-8 text")));
    };
    let rewritten = match operators::rewrite(text) {
        Ok(r) => r,
        Err((line, message)) => return Ok(Err(format!("{prefix}{line}: {message}"))),
    };
    // Each counted operand takes a register or two until its expression ends: a chain of
    // some 120 arithmetic operands or 80 concatenated pieces in one expression runs out of
    // LuaJIT's 250.
    let outer = match chunk(rewritten.as_bytes()) {
        Ok(f) => f,
        Err(mlua::Error::SyntaxError { message, .. }) => {
            return Ok(Err(format!("{message} (once its operators are counted)")));
        }
        Err(e) => return Err(e),
    };
    outer.call::<Function>(helpers.clone()).map(Ok)
}

/// `<chunk>:` as LuaJIT names a chunk in messages (`=name` as it is, text in brackets).
fn chunk_prefix(name: &str) -> String {
    match name.strip_prefix('=').or_else(|| name.strip_prefix('@')) {
        Some(plain) => format!("{plain}:"),
        None => format!("[string \"{}\"]:", name.lines().next().unwrap_or_default()),
    }
}

/// The counted helpers of rewritten chunks (`operators.rs`): `VAL` and `NUM` charge a string
/// longer than [`operators::FREE_BYTES`] at [`cost::BYTES_PER_UNIT`] bytes per unit, `ARGS`
/// one unit per value when there are more than 64.
fn operator_helpers(
    lua: &Lua,
    control: &Arc<Control>,
    number_text: &Function,
) -> mlua::Result<MultiValue> {
    let control = Arc::clone(control);
    let charge = lua.create_function(move |_, n: usize| control.charge(cost::copy(n)))?;
    lua.load(format!(
        r#"
local charge, type, select, number_text = ...
local function args(...)
  local n = select('#', ...)
  if n > 64 then charge(n * {per_value}) end
  return ...
end
local function val(v)
  if type(v) == "string" and #v > {free} then charge(#v) end
  return v
end
local function num(v)
  if type(v) == "string" and #v > {free} then charge(#v) end
end
-- Operands of `..`: numbers written as gopher-lua writes them.
local function text(v)
  if type(v) == "number" then return number_text(v) end
end
local function textv(v)
  if type(v) == "number" then return number_text(v) end
  return v
end
-- `select(n, ...)` converts a string `n` to a number: charged as `NUM` charges. In Lua, so
-- that its many arguments pass as they do to the VM's own.
local raw_select = select
local function select_(n, ...)
  if type(n) == "string" and #n > {free} then charge(#n) end
  return raw_select(n, ...)
end
return args, val, num, text, textv, select_
"#,
        free = operators::FREE_BYTES,
        per_value = cost::BYTES_PER_UNIT,
    ))
    .set_name("=sandbox")
    .set_mode(ChunkMode::Text)
    .call((
        charge,
        lua.globals().raw_get::<Function>("type")?,
        lua.globals().raw_get::<Function>("select")?,
        number_text.clone(),
    ))
}

/// Builds the environment of one evaluation from the pieces prepared once per state.
const ENV_BUILDER: &str = r##"
local base, libs, safe_os, raw_pcall, raw_xpcall, check, load_text, open, raw_collect, mark_memory,
  number_text, format_args, keys_of, first_of = ...
local next, type, tostring, error = next, type, tostring, error
local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end
-- Error values that are not text become text that does not depend on addresses.
local function finish(ok, ...)
  if ok then return ... end
  local e = ...
  local t = type(e)
  if e == "not enough memory" then
    -- The script's heap is garbage now: free it so the error can be reported.
    raw_collect()
    mark_memory()
  end
  if t == "string" or t == "userdata" then error(e, 0) end
  if t == "number" then error(tostring(e), 0) end
  error("(error object is a " .. t .. " value)", 0)
end
-- tostring without addresses: the same script gives the same text on every run; numbers as
-- gopher-lua writes them.
local raw_tostring, getmetatable, rawget = base.tostring, base.getmetatable, base.rawget
local function tostring_(v)
  local t = type(v)
  if t == "number" then
    return number_text(v)
  elseif t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and rawget(mt, "__tostring") ~= nil then return raw_tostring(v) end
    return "table"
  elseif t == "function" or t == "userdata" or t == "thread" then
    return t
  end
  return raw_tostring(v)
end
if libs.string then
  -- The same for `%s` in string.format (the real table: method calls see it too), and
  -- numbers as gopher-lua gives them to Go's fmt.
  local raw_format, unpack_, select = libs.string.format, base.unpack, base.select
  libs.string.format = function(fmt, ...)
    local n = select("#", ...)
    local args = {format_args(fmt, ...)}
    for i = 1, n do
      local t = type(args[i])
      if t == "table" or t == "function" or t == "userdata" or t == "thread" then
        args[i] = tostring_(args[i])
      end
    end
    return raw_format(fmt, unpack_(args, 1, n))
  end
end
-- `pairs` and `next` walk a table in one order on every run (`order.rs`).
local raw_select, setmetatable = base.select, base.setmetatable
local function not_table(name, n, t)
  local got = n == 0 and "no value" or type(t)
  error("bad argument #1 to '" .. name .. "' (table expected, got " .. got .. ")", 3)
end
local function pairs_(...)
  local t = ...
  if type(t) ~= "table" then not_table("pairs", raw_select("#", ...), t) end
  -- The array part here, then the other keys, sorted once it ends.
  local i, keys, j = 0, nil, 0
  return function()
    if keys == nil then
      i = i + 1
      local v = rawget(t, i)
      if v ~= nil then return i, v end
      keys = keys_of(t, false, i - 1)
    end
    while true do
      j = j + 1
      local k = keys[j]
      if k == nil then return nil end
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
  end, t, nil
end
-- `next(t)` is cheap (`t[1]`, or one pass); a walk by `next(t, k)` sorts the keys once, when
-- its second step runs, and goes on from the key's place (keys added during a walk are not
-- visited: Lua leaves that undefined).
local function walker()
  local walks = setmetatable({}, {__mode = "k"})
  return function(...)
    local t, k = ...
    if type(t) ~= "table" then not_table("next", raw_select("#", ...), t) end
    if k == nil then
      walks[t] = nil
      local v = rawget(t, 1)
      if v ~= nil then return 1, v end
      k = first_of(t)
      if k == nil then return nil end
      return k, rawget(t, k)
    end
    local walk = walks[t]
    local i = walk and walk[2][k]
    if i == nil then
      local keys, pos = keys_of(t, true, nil)
      walk = {keys, pos}
      walks[t] = walk
      i = pos[k]
      if i == nil then error("invalid key to 'next'", 2) end
    end
    local keys = walk[1]
    while true do
      i = i + 1
      local nk = keys[i]
      if nk == nil then
        walks[t] = nil
        return nil
      end
      local v = rawget(t, nk)
      if v ~= nil then return nk, v end
    end
  end
end
return function(obj)
  local env = copy(base)
  env.pairs = pairs_
  env.next = walker()
  env.tostring = tostring_
  for name, lib in next, libs do env[name] = copy(lib) end
  local os = copy(safe_os)
  if open then env.os = os end
  env._G = env
  env.obj = obj
  env.actionParams = {}
  env.pcall = function(...) return check(raw_pcall(...)) end
  env.xpcall = function(f, h)
    return check(raw_xpcall(f, function(e)
      local _, text = check(false, e)
      return h(text)
    end))
  end
  env.require = function(name)
    if name == "os" then return os end
    error("module '" .. tostring_(name) .. "' not found: only the safe os module can be required", 2)
  end
  env.loadstring = function(s, chunkname) return load_text(env, s, chunkname) end
  env.load = function(chunk, chunkname)
    if type(chunk) == "function" then
      local parts = {}
      while true do
        local piece = chunk()
        if piece == nil or piece == "" then break end
        if type(piece) ~= "string" then error("reader function must return a string", 2) end
        parts[#parts + 1] = piece
      end
      chunk = libs.table.concat(parts)
    end
    return load_text(env, chunk, chunkname or "=(load)")
  end
  return env
end, function(f)
  return finish(raw_pcall(f))
end
"##;

#[cfg(test)]
mod address_tests {
    use super::without_addresses;

    #[test]
    fn addresses_are_removed_and_other_text_kept() {
        assert_eq!(
            without_addresses("module 'table: 0x7fbf9ead1450' not found"),
            "module 'table' not found"
        );
        assert_eq!(
            without_addresses("function: builtin: 0x55d0 and thread: 0xABC, cdata: 0x1"),
            "function: builtin and thread, cdata"
        );
        assert_eq!(without_addresses("ratio: 0x12 and table: 0xzz"), "ratio: 0x12 and table: 0xzz");
        assert_eq!(without_addresses("ends with table: 0x"), "ends with table: 0x");
    }
}

#[cfg(test)]
mod request_tests {
    use super::*;

    /// A request whose budget is spent fails without touching the pool: the state stays
    /// there for the next evaluation instead of being built again (issue 27: each further
    /// object of a spent request cost a new Lua state, 0.23 ms). The request shares the
    /// engine's pool (issue 26: the engine owns its states).
    #[test]
    fn a_spent_request_keeps_the_pooled_state() {
        let limits =
            ScriptLimits::default().with_instructions(1_000).with_request_instructions(1_000);
        let engine = LuaEngine::new(limits);
        let request = engine.for_request();
        let obj = serde_json::json!({"metadata": {"name": "w"}});
        let spin = request.eval_health("spin", "while true do end", false, &obj, 0);
        assert_eq!(spin.map_err(|e| e.kind), Err(ScriptErrorKind::Instructions(1_000)));
        // Another engine's evaluation leaves a state in the pool.
        let healthy = engine.eval_health("ok", "return {status = 'Healthy'}", false, &obj, 0);
        assert_eq!(healthy.map(|h| h.status).as_deref(), Ok("Healthy"));
        let pooled = || engine.pool.slot(false).len() == 1 && request.pool.slot(false).len() == 1;
        assert!(pooled());
        let later = request.eval_health("spin", "while true do end", false, &obj, 0);
        assert_eq!(later.map_err(|e| e.kind), Err(ScriptErrorKind::RequestInstructions(1_000)));
        assert!(pooled(), "a spent request leaves the pooled state where it is");
    }
}

#[cfg(test)]
mod pool_tests {
    use super::*;

    const HEALTHY: &str = "return {status = 'Healthy'}";

    fn healthy(engine: &LuaEngine) -> String {
        let obj = serde_json::json!({"metadata": {"name": "w"}});
        engine.eval_health("ok", HEALTHY, true, &obj, 0).map(|h| h.status).unwrap_or_default()
    }

    fn pooled(engine: &LuaEngine) -> usize {
        engine.pool.slot(true).len()
    }

    /// Issue 26: the engine owns its states. A state built for one evaluation waits in the
    /// engine's pool, its clones and its requests use it, and another engine starts empty
    /// (with a per-thread static, the second engine found the first one's state).
    #[test]
    fn states_belong_to_the_engine_and_its_clones() {
        let engine = LuaEngine::default();
        assert_eq!(pooled(&engine), 0);
        assert_eq!(healthy(&engine), "Healthy");
        assert_eq!(pooled(&engine), 1);
        let clone = engine.clone();
        let request = engine.for_request();
        assert_eq!((healthy(&clone), healthy(&request)), ("Healthy".into(), "Healthy".into()));
        assert_eq!(pooled(&engine), 1, "the clones reused the engine's one state");
        let other = LuaEngine::default();
        assert_eq!(pooled(&other), 0, "another engine shares nothing");
        assert_eq!(pooled(&engine.clone()), 1);
    }

    /// The engine is shared by threads: a state built on one thread serves the next
    /// evaluation on another; an evaluation that finds every state in use builds one more,
    /// and the pool keeps both.
    #[test]
    fn threads_share_the_engine_states() {
        fn send_sync<T: Send + Sync>(_: &T) {}
        let engine = LuaEngine::default();
        send_sync(&engine);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(healthy(&engine), "Healthy"));
        });
        assert_eq!(pooled(&engine), 1, "the other thread's state came back");
        assert_eq!(healthy(&engine), "Healthy");
        assert_eq!(pooled(&engine), 1, "and served this thread");
        // The one state in use elsewhere (taken out by hand): the evaluation builds another.
        let in_use = engine.pool.slot(true).pop();
        assert!(in_use.is_some());
        assert_eq!(healthy(&engine), "Healthy");
        engine.pool.slot(true).extend(in_use);
        assert_eq!(pooled(&engine), 2);
    }
}
