//! Limits on one script evaluation.

/// Resource limits for one evaluation of a script.
///
/// Every limit is counted, never timed, so the same script on the same input stops at the
/// same point on every run and on every machine. The defaults are thousands of times what a
/// health script needs: the Rollout-style script of the benchmark (conditions loops, replica
/// comparisons) runs in fewer than 2,000 instructions and 16 KiB, object included.
///
/// # Examples
///
/// ```
/// use gitops_core::script::ScriptLimits;
/// let limits = ScriptLimits::default().with_instructions(1_000_000).with_memory_bytes(8 << 20);
/// assert_eq!((limits.instructions, limits.memory_bytes), (1_000_000, 8 << 20));
/// assert_eq!(limits.pattern_steps, 2_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ScriptLimits {
    /// Budget units one evaluation may spend: Lua VM instructions (counted in blocks of
    /// [`ScriptLimits::HOOK_INTERVAL`]) and the native work of library calls charged as
    /// instructions (bytes read or built, elements moved, comparisons, chunks compiled, a
    /// hundred per call into native code). Default 10,000,000: about 50 ms on the
    /// interpreter.
    pub instructions: u64,
    /// Bytes the Lua heap may grow by during one evaluation, including the converted object.
    /// Default 64 MiB. Growth is counted from the heap's size at the start of the evaluation;
    /// up to 4 MiB of garbage left by earlier evaluations on the same thread may be freed
    /// during a run, so only a script ending within 4 MiB of the limit can pass on one run
    /// and fail on another.
    pub memory_bytes: usize,
    /// Steps the Lua pattern functions (`string.find`, `match`, `gmatch`, `gsub`) may take in
    /// one evaluation, in total. Pattern matching runs in native code that the instruction
    /// count does not see, so it has its own budget. Default 2,000,000.
    pub pattern_steps: u64,
    /// Largest string `string.rep` and `string.gsub` may build, in bytes (never more than
    /// `memory_bytes`); they allocate in one native call, so they are checked up front.
    /// Default 16 MiB.
    pub string_bytes: usize,
    /// Budget units all the evaluations of one request may spend together (a `health` call
    /// over many objects, a `serve` request, an assessment of a whole app), when the host
    /// scopes the engine to the request with `LuaEngine::for_request`. Default 200,000,000:
    /// about one second of interpreter time, twenty scripts that each spend their whole
    /// per-evaluation budget.
    pub request_instructions: u64,
}

impl ScriptLimits {
    /// How often the instruction hook runs, in VM instructions. A budget is checked at this
    /// granularity.
    pub const HOOK_INTERVAL: u32 = 100;

    /// The same limits with another instruction budget.
    #[must_use]
    pub fn with_instructions(mut self, instructions: u64) -> Self {
        self.instructions = instructions;
        self
    }

    /// The same limits with another memory limit.
    #[must_use]
    pub fn with_memory_bytes(mut self, memory_bytes: usize) -> Self {
        self.memory_bytes = memory_bytes;
        self
    }

    /// The same limits with another pattern step budget.
    #[must_use]
    pub fn with_pattern_steps(mut self, pattern_steps: u64) -> Self {
        self.pattern_steps = pattern_steps;
        self
    }

    /// The same limits with another budget per request.
    #[must_use]
    pub fn with_request_instructions(mut self, request_instructions: u64) -> Self {
        self.request_instructions = request_instructions;
        self
    }

    /// The same limits with another largest built string.
    #[must_use]
    pub fn with_string_bytes(mut self, string_bytes: usize) -> Self {
        self.string_bytes = string_bytes;
        self
    }
}

impl Default for ScriptLimits {
    fn default() -> Self {
        ScriptLimits {
            instructions: 10_000_000,
            memory_bytes: 64 << 20,
            pattern_steps: 2_000_000,
            string_bytes: 16 << 20,
            request_instructions: 200_000_000,
        }
    }
}
