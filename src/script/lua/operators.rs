//! Operators that do native work in one VM instruction, made to pay for it.
//!
//! Three kinds of LuaJIT instruction do work proportional to the length of a string and are
//! seen by the instruction hook as one instruction each:
//!
//! - `..` (`BC_CAT`) copies its operands into a new string, and hashes and compares it on
//!   interning (`s .. ''` of a 10 MB string is a 10 MB copy whose result already exists, so
//!   the heap does not grow either);
//! - `<`, `<=`, `>`, `>=` on two strings compare them byte by byte up to the first
//!   difference;
//! - arithmetic (`+ - * / % ^`, unary `-`) and the bounds of a numeric `for` convert a string
//!   operand to a number, scanning all its leading blanks and digits.
//!
//! A fourth does work proportional to a count: `...` (`BC_VARG`) copies every extra argument
//! of the function, up to some 65,000 (`f(unpack(t))` once, then `g(...)` in a loop).
//!
//! Before a script (or a chunk given to `loadstring`/`load`) is compiled, its source is parsed
//! and these operators are rewritten so that the string operands pass through counted
//! helpers, which charge [`super::cost::BYTES_PER_UNIT`] bytes per unit, as the string
//! library does. The operator itself still runs as the VM's instruction on the same values,
//! so results, metamethods and error texts (`attempt to perform arithmetic on local 'x' (a
//! nil value)`) stay the VM's, and every insertion is on the line of the text it wraps, so
//! error positions do not move:
//!
//! - each concatenation becomes a call: `a .. b .. c` becomes `VAL(a .. VAL(b .. c))`. The
//!   helper charges the length of a string result and returns it unchanged. The VM reduces a
//!   chain from the right, pair by pair (calling `__concat` where an operand has one), so the
//!   same pairs meet in the same order; the call keeps LuaJIT from fusing the two into one
//!   instruction, so every copy the VM makes is the result of one counted instruction, even
//!   a copy that is passed on to a `__concat` metamethod. The operands are loaded by the same
//!   instructions as before, so an error still names them (`attempt to concatenate local 'x'
//!   (a nil value)`). An operand that may be a number (anything but a string literal, a call
//!   or another `..`) is given as gopher-lua writes it: a name or constant field chain `x`
//!   becomes `(TEXT(x) or x)` (`TEXT` gives the text of a number and nothing otherwise), any
//!   other operand `TEXTV(x)` (the text of a number, any other value as it is);
//! - a comparison `a < b` becomes `a < VAL(b)`: a comparison of two strings reads at most
//!   the shorter one, so charging the right operand's length bounds it (comparison errors
//!   name types only, so wrapping an operand changes no text);
//! - an arithmetic operand `x` that is a name or a chain of constant field accesses
//!   (`obj.status.replicas`) becomes `(NUM(x) or x)`: the helper charges a long string and
//!   returns nothing, and the operand is then loaded by the same kind of instruction as
//!   before, so the VM's error still names it; any other operand (a call, an index by an
//!   expression) becomes `VAL(x)`, whose value has no name in an error either way.
//!   Numbers written in the source are left alone;
//! - `...` becomes `ARGS(...)`, which charges one unit per value beyond 64 and returns them
//!   all (in every place `...` may stand, a call returning the same values means the same).
//!
//! The helpers are locals of a function wrapped around the chunk on its first line, under
//! names the chunk does not contain, so a script can neither see nor replace them.

use std::collections::HashMap;

use full_moon::ast::{BinOp, Expression, Index, NumericFor, Prefix, Suffix, UnOp, Var};
use full_moon::node::Node;
use full_moon::tokenizer::{Lexer, LexerResult, Symbol, TokenType};
use full_moon::visitors::Visitor;

/// Strings up to this length are not charged: comparing, copying or scanning them costs
/// about what the instruction itself is counted for.
pub(super) const FREE_BYTES: usize = 256;

/// The names of the helpers in one rewritten chunk.
struct Names {
    args: String,
    val: String,
    num: String,
    text: String,
    textv: String,
}

impl Names {
    /// Names that do not occur anywhere in `source`, so no identifier of the chunk can refer
    /// to them.
    fn unused_in(source: &str) -> Names {
        let mut n = 0u32;
        loop {
            let suffix = if n == 0 { String::new() } else { n.to_string() };
            let names = Names {
                args: format!("__cost_args{suffix}"),
                val: format!("__cost_val{suffix}"),
                num: format!("__cost_num{suffix}"),
                text: format!("__cost_text{suffix}"),
                textv: format!("__cost_textv{suffix}"),
            };
            if ![&names.args, &names.val, &names.num, &names.text, &names.textv]
                .iter()
                .any(|name| source.contains(name.as_str()))
            {
                return names;
            }
            n += 1;
        }
    }
}

/// The chunk `source` rewritten: a chunk that, called with the five helpers (`ARGS`, `VAL`,
/// `NUM`, `TEXT`, `TEXTV`), returns the script as a function. `Err` holds the parser's message
/// and line when the parser does not accept the text (LuaJIT accepted it).
pub(super) fn rewrite(source: &str) -> Result<String, (usize, String)> {
    let source = without_header(source);
    let text = parser_text(source);
    let count = operator_count(&text)?;
    if count <= INLINE_OPERATORS {
        return rewrite_parsed(source, &text);
    }
    // The parser and the walk recurse once per operator of a left-nested chain
    // (`x + x + ... + x`): a deep one runs on a stack of its own, sized for the most allowed.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lua-rewrite".into())
            .stack_size(PARSE_STACK_BYTES)
            .spawn_scoped(scope, || rewrite_parsed(source, &text))
            .map_err(|e| (1, format!("cannot start the parser: {e}")))?
            .join()
            .unwrap_or_else(|_| Err((1, "the parser failed".to_string())))
    })
}

/// `source` without what LuaJIT skips before it reads a chunk and the parser would read as
/// Lua: a first line that starts with `#` (a `#!` header), up to and not including its line
/// break, so that lines keep their numbers.
fn without_header(source: &str) -> &str {
    if source.starts_with('#') {
        let end = source.find(['\n', '\r']).unwrap_or(source.len());
        &source[end..]
    } else {
        source
    }
}

/// The text the parser reads: `source` with every backtick made a `$`, one byte for one, so
/// that positions hold in both. LuaJIT has accepted the chunk, so a backtick is in a string
/// or a comment, where either character means nothing to the parser; but where the parser
/// reads the text differently from LuaJIT after an error it recovers from (a name of
/// non-ASCII bytes, which LuaJIT accepts), it would stop on a backtick, and reports the `$`
/// as an unexpected character instead. Text the rewrite copies comes from `source`.
fn parser_text(source: &str) -> std::borrow::Cow<'_, str> {
    if source.contains('`') {
        std::borrow::Cow::Owned(source.replace('`', "$"))
    } else {
        std::borrow::Cow::Borrowed(source)
    }
}

/// Most operators one chunk may have: LuaJIT accepts any number in a chain, the parser
/// needs stack for each.
pub(super) const MAX_OPERATORS: usize = 8192;
/// Chunks with at most this many operators are parsed on the caller's stack.
const INLINE_OPERATORS: usize = 64;
/// The parser's stack for a larger chunk (reserved, and touched only as deep as it goes).
const PARSE_STACK_BYTES: usize = 256 << 20;

/// How many operators the chunk has (outside strings and comments); an error naming the line
/// of the first one past [`MAX_OPERATORS`].
fn operator_count(source: &str) -> Result<usize, (usize, String)> {
    let tokens = match Lexer::new(source, full_moon::LuaVersion::luajit()).collect() {
        LexerResult::Ok(tokens) => tokens,
        LexerResult::Fatal(errors) | LexerResult::Recovered(_, errors) => {
            let first = errors.into_iter().next();
            let line = first.as_ref().map_or(1, |e| e.range().0.line());
            return Err((line, first.map_or_else(String::new, |e| e.to_string())));
        }
    };
    let mut count = 0;
    for token in &tokens {
        if let TokenType::Symbol { symbol } = token.token_type()
            && is_operator(*symbol)
        {
            count += 1;
            if count > MAX_OPERATORS {
                return Err((
                    token.start_position().line(),
                    format!(
                        "more than {MAX_OPERATORS} operators in one chunk (the sandbox parses at most that many)"
                    ),
                ));
            }
        }
    }
    Ok(count)
}

fn is_operator(symbol: Symbol) -> bool {
    matches!(
        symbol,
        Symbol::And
            | Symbol::Or
            | Symbol::Not
            | Symbol::Caret
            | Symbol::TwoDots
            | Symbol::TwoEqual
            | Symbol::TildeEqual
            | Symbol::GreaterThan
            | Symbol::GreaterThanEqual
            | Symbol::LessThan
            | Symbol::LessThanEqual
            | Symbol::Minus
            | Symbol::Percent
            | Symbol::Plus
            | Symbol::Slash
            | Symbol::Star
            | Symbol::Hash
    )
}

fn rewrite_parsed(source: &str, text: &str) -> Result<String, (usize, String)> {
    let ast = full_moon::parse_fallible(text, full_moon::LuaVersion::luajit())
        .into_result()
        .map_err(|errors| {
            let first = errors.into_iter().next();
            let line = first.as_ref().map_or(1, |e| e.range().0.line());
            (line, first.map_or_else(String::new, |e| e.error_message().into_owned()))
        })?;
    let names = Names::unused_in(source);
    let mut collector = Collector {
        source,
        names: &names,
        edits: Vec::new(),
        after: HashMap::new(),
        starts: HashMap::new(),
    };
    collector.visit_ast(&ast);
    let mut edits = collector.edits;
    // Stable: at one position, openings stay outer first and closings inner first.
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(source.len() + 64 + edits.len() * 16);
    out.push_str(&format!(
        "local {}, {}, {}, {}, {} = ...; return function(...) ",
        names.args, names.val, names.num, names.text, names.textv
    ));
    let mut at = 0;
    for (pos, text) in edits {
        out.push_str(&source[at..pos]);
        out.push_str(&text);
        at = pos;
    }
    out.push_str(&source[at..]);
    // On a line of its own: the chunk may end in a comment.
    out.push_str("\nend");
    Ok(out)
}

struct Collector<'a> {
    /// The chunk as written (the parser read [`parser_text`]).
    source: &'a str,
    names: &'a Names,
    /// Text to insert at byte offsets of the source, in the order the walk produced them.
    edits: Vec<(usize, String)>,
    /// Closing edits to insert when the walk leaves an expression, keyed by its address.
    after: HashMap<usize, Vec<(usize, String)>>,
    /// Where the binary operations seen so far start, keyed by their address: the start of a
    /// left-nested chain is found once, not once per link.
    starts: HashMap<usize, Option<usize>>,
}

/// Where an expression starts (its leading blanks and comments excluded), down its left
/// operands without recursion; `starts` remembers binary operations already seen.
fn start(e: &Expression, starts: &mut HashMap<usize, Option<usize>>) -> Option<usize> {
    let mut spine = Vec::new();
    let mut at = e;
    let found = loop {
        match at {
            Expression::BinaryOperator { lhs, .. } => {
                if let Some(known) = starts.get(&key(at)) {
                    break *known;
                }
                spine.push(key(at));
                at = lhs;
            }
            _ => break at.start_position().map(|p| p.bytes()),
        }
    };
    for k in spine {
        starts.insert(k, found);
    }
    found
}

/// Where an expression ends (its trailing blanks and comments excluded), down its right
/// operands without recursion. The parser's range of an index in brackets stops before the
/// closing bracket, so that one is read from its span.
fn end(e: &Expression) -> Option<usize> {
    let mut at = e;
    loop {
        match at {
            Expression::BinaryOperator { rhs, .. } => at = rhs,
            Expression::UnaryOperator { expression, .. } => at = expression,
            Expression::Var(Var::Expression(v)) => {
                if let Some(Suffix::Index(Index::Brackets { brackets, .. })) = v.suffixes().last() {
                    return brackets.tokens().1.end_position().map(|p| p.bytes());
                }
                return at.end_position().map(|p| p.bytes());
            }
            _ => return at.end_position().map(|p| p.bytes()),
        }
    }
}

fn key(e: &Expression) -> usize {
    std::ptr::from_ref(e) as usize
}

/// A value written in the source that costs nothing to compare or convert: a number, `nil`,
/// `true`, `false`, or a short string.
fn is_cheap_literal(e: &Expression) -> bool {
    match e {
        Expression::Number(_) | Expression::Symbol(_) => true,
        Expression::String(t) => t.token().to_string().len() <= FREE_BYTES,
        Expression::Parentheses { expression, .. } => is_cheap_literal(expression),
        _ => false,
    }
}

/// The text of an operand that can be evaluated twice without a difference (a name, or a
/// chain of field accesses by a name or a constant, with no call), on one line; `None` for
/// any other operand.
fn pure_text(e: &Expression, source: &str) -> Option<String> {
    let text = match e {
        Expression::Var(Var::Name(t)) => t.token().to_string(),
        Expression::Var(Var::Expression(v)) => {
            let mut text = match v.prefix() {
                Prefix::Name(t) => t.token().to_string(),
                _ => return None,
            };
            for suffix in v.suffixes() {
                match suffix {
                    Suffix::Index(Index::Dot { name, .. }) => {
                        text.push('.');
                        text.push_str(&name.token().to_string());
                    }
                    Suffix::Index(Index::Brackets { expression, .. }) => {
                        let inner = match &**expression {
                            Expression::Number(t) => t.token().to_string(),
                            // As written: the parser's text may differ inside strings.
                            Expression::String(t) => source
                                .get(
                                    t.token().start_position().bytes()
                                        ..t.token().end_position().bytes(),
                                )?
                                .to_string(),
                            Expression::Var(Var::Name(t)) => t.token().to_string(),
                            _ => return None,
                        };
                        text.push('[');
                        text.push_str(&inner);
                        text.push(']');
                    }
                    _ => return None,
                }
            }
            text
        }
        _ => return None,
    };
    (!text.contains(['\n', '\r'])).then_some(text)
}

impl Collector<'_> {
    /// Wraps `e` in `open` … `close`; the closing is inserted when the walk leaves `e`, after
    /// the edits inside it.
    fn wrap(&mut self, e: &Expression, open: String, close: String) {
        if let (Some(s), Some(t)) = (start(e, &mut self.starts), end(e)) {
            self.edits.push((s, open));
            self.after.entry(key(e)).or_default().push((t, close));
        }
    }

    /// Wraps an operand whose string value the VM converts to a number.
    fn numeric_operand(&mut self, e: &Expression) {
        if is_cheap_literal(e) {
            return;
        }
        match pure_text(e, self.source) {
            Some(text) => self.wrap(e, format!("({}(", self.names.num), format!(") or {text})")),
            None => self.wrap(e, format!("{}(", self.names.val), ")".to_string()),
        }
    }

    /// Wraps an operand of `..` that may be a number, so that it is written as gopher-lua
    /// writes numbers (`crate::script::gopher::number_text`), not as LuaJIT does.
    fn concat_operand(&mut self, e: &Expression) {
        let literal_text = matches!(e, Expression::String(_));
        let chained = matches!(e, Expression::BinaryOperator { binop: BinOp::TwoDots(_), .. });
        // A call is left as it is: a frame more per `'a' .. f(n)` would change where a deep
        // recursion overflows the stack, and with it the error's text.
        let call = matches!(e, Expression::FunctionCall(_));
        if literal_text || chained || call {
            return;
        }
        match pure_text(e, self.source) {
            Some(text) => self.wrap(e, format!("({}(", self.names.text), format!(") or {text})")),
            None => self.wrap(e, format!("{}(", self.names.textv), ")".to_string()),
        }
    }
}

impl Visitor for Collector<'_> {
    fn visit_expression(&mut self, e: &Expression) {
        match e {
            Expression::BinaryOperator { lhs, binop, rhs } => match binop {
                BinOp::TwoDots(_) => {
                    self.wrap(e, format!("{}(", self.names.val), ")".to_string());
                    self.concat_operand(lhs);
                    self.concat_operand(rhs);
                }
                BinOp::LessThan(_)
                | BinOp::LessThanEqual(_)
                | BinOp::GreaterThan(_)
                | BinOp::GreaterThanEqual(_)
                    if !is_cheap_literal(lhs) && !is_cheap_literal(rhs) =>
                {
                    self.wrap(rhs, format!("{}(", self.names.val), ")".to_string());
                }
                BinOp::Plus(_)
                | BinOp::Minus(_)
                | BinOp::Star(_)
                | BinOp::Slash(_)
                | BinOp::Percent(_)
                | BinOp::Caret(_) => {
                    self.numeric_operand(lhs);
                    self.numeric_operand(rhs);
                }
                _ => {}
            },
            Expression::UnaryOperator { unop: UnOp::Minus(_), expression } => {
                self.numeric_operand(expression);
            }
            Expression::Symbol(t) if t.is_symbol(Symbol::Ellipsis) => {
                self.wrap(e, format!("{}(", self.names.args), ")".to_string());
            }
            _ => {}
        }
    }

    fn visit_expression_end(&mut self, e: &Expression) {
        if let Some(closes) = self.after.remove(&key(e)) {
            self.edits.extend(closes);
        }
    }

    fn visit_numeric_for(&mut self, f: &NumericFor) {
        // The bounds are converted when the loop starts (`'for' initial value must be a
        // number` names no operand).
        for bound in [Some(f.start()), Some(f.end()), f.step()].into_iter().flatten() {
            if !is_cheap_literal(bound) {
                self.wrap(bound, format!("{}(", self.names.val), ")".to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::script::LuaEngine;

    /// The script run on plain LuaJIT, as written: the `message` it returns, or its error.
    fn plain(script: &str) -> String {
        let lua = mlua::Lua::new();
        match lua.load(script).set_name("=<string>").eval::<mlua::Table>() {
            Ok(t) => t.get::<String>("message").unwrap_or_default(),
            Err(e) => {
                let text = match e {
                    mlua::Error::RuntimeError(m) => m,
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                text.split("\nstack traceback:").next().unwrap_or_default().to_string()
            }
        }
    }

    /// The same script in the sandbox, rewritten.
    fn sandboxed(script: &str) -> String {
        let obj = serde_json::json!({"spec": {"n": 3, "s": "12", "name": "x"}});
        match LuaEngine::default().eval_health("t", script, true, &obj, 0) {
            Ok(h) => h.message,
            Err(e) => e.reason(),
        }
    }

    /// Operators give the same results and the same error texts (names and lines) as the
    /// VM's own, with metamethods, on every kind of operand.
    /// A left-nested chain as long as allowed is parsed on its own stack; one operator more
    /// is refused with the line of that operator.
    #[test]
    fn chains_up_to_the_operator_limit_parse() {
        let chain = |n: usize| format!("return {}", vec!["x"; n + 1].join(" +\n"));
        assert!(super::rewrite(&chain(super::MAX_OPERATORS)).is_ok());
        assert_eq!(
            super::rewrite(&chain(super::MAX_OPERATORS + 1)),
            Err((
                super::MAX_OPERATORS + 1,
                "more than 8192 operators in one chunk (the sandbox parses at most that many)"
                    .to_string()
            ))
        );
    }

    /// What LuaJIT skips before a chunk (a first line starting with `#`) is skipped before
    /// the chunk is parsed too, whatever that line holds (a backtick
    /// stopped the parser), and the lines after it keep their numbers.
    #[test]
    fn a_header_line_is_skipped_as_the_vm_skips_it() {
        let cases = [
            "#!/usr/bin/env lua\nlocal x = 'a' .. 'b' return {status='Healthy', message = x}",
            "#!\nlocal x\nreturn {status='Healthy', message = tostring(x + 1)}",
            "#!`\rlocal x\rreturn {status='Healthy', message = tostring(x .. 1)}",
            "#!\r\nlocal x\r\nreturn {status='Healthy', message = tostring(x .. 1)}",
            "#`\n\n#`",
        ];
        for script in cases {
            assert_eq!(sandboxed(script), plain(script), "{script:?}");
        }
        assert_eq!(super::without_header("#` no line break"), "");
        // After a name the parser does not accept (LuaJIT does), the parser reads on
        // differently and meets the backtick of the comment: the chunk is refused for the
        // name, the parser's first error.
        assert_eq!(
            super::rewrite("s=\u{fffd}0b-- `"),
            Err((1, "unexpected character \u{fffd} (1:3 to 1:4)".to_string()))
        );
        assert_eq!(super::without_header("x # `"), "x # `");
    }

    /// Operators give the same results and the same error texts (names and lines) as the
    /// VM's own, with metamethods, on every kind of operand.
    #[test]
    fn rewritten_operators_behave_as_the_vm() {
        let prelude = "local obj = {spec = {n = 3, s = '12', name = 'x'}} ";
        let cases = [
            "local a, b = 'x', 'y' return {status='Healthy', message = a .. b .. 1 .. 2.5}",
            "local a = nil return {status='Healthy', message = 'x' .. a}",
            "local a = nil return {status='Healthy', message = a .. 'x'}",
            "return {status='Healthy', message = 'x' .. obj.spec.missing}",
            "return {status='Healthy', message = obj.spec.missing .. 'x' .. 'y'}",
            "return {status='Healthy', message = 'x' .. {} .. 'y'}",
            "return {status='Healthy', message = 'a' .. ('b' .. 'c') .. ('d' .. nosuch)}",
            "local mt = {__concat = function(a, b) return 'M' end} local t = setmetatable({}, mt) return {status='Healthy', message = 'x' .. t .. 'y' .. 'z'}",
            "local mt = {__concat = function(a, b) return setmetatable({}, getmetatable(a)) end} local t = setmetatable({}, mt) local r = t .. 'y' return {status='Healthy', message = type(r)}",
            "local mt = {__concat = function(a, b) return nil end} local t = setmetatable({}, mt) local r = t .. 'y' return {status='Healthy', message = tostring(r)}",
            "return {status='Healthy', message = tostring(obj.spec.n + obj.spec.s * 2 - -obj.spec.n % 2 ^ 2 / 1)}",
            "local x return {status='Healthy', message = tostring(x + 1)}",
            "local x return {status='Healthy', message = tostring(1 + x)}",
            "local x = {} return {status='Healthy', message = tostring(-x)}",
            "return {status='Healthy', message = tostring(obj.spec.missing + 1)}",
            "return {status='Healthy', message = tostring(obj.spec['missing'] * 2)}",
            "return {status='Healthy', message = tostring(obj.nothing.n * 2)}",
            "return {status='Healthy', message = tostring(nosuch - 2)}",
            "local function f() return nil end return {status='Healthy', message = tostring(f() - 2)}",
            "local t = {} local k = 'a' return {status='Healthy', message = tostring(t[k] - 2)}",
            "local u local function f() return u + 1 end return {status='Healthy', message = tostring(f())}",
            "return {status='Healthy', message = tostring('10' + '5')}",
            "return {status='Healthy', message = tostring('  0x10  ' * 1)}",
            "return {status='Healthy', message = tostring('abc' + 1)}",
            "local mt = {__add = function(a, b) return 'added' end, __unm = function() return 'neg' end} local t = setmetatable({}, mt) return {status='Healthy', message = (t + 1) .. (1 + t) .. -t}",
            "local mt = {__lt = function(a, b) return true end, __le = function() return false end} local t, u = setmetatable({}, mt), setmetatable({}, mt) return {status='Healthy', message = tostring(t < u) .. tostring(t <= u) .. tostring(t > u) .. tostring(t >= u)}",
            "local a, b = 'abc', 'abd' return {status='Healthy', message = tostring(a < b) .. tostring(a >= b)}",
            "local a = {} return {status='Healthy', message = tostring(a < 1)}",
            "local a, b = {}, {} return {status='Healthy', message = tostring(a < b)}",
            "local a, b = 1, 'x' return {status='Healthy', message = tostring(a <= b)}",
            "local s = 0 for i = '1', '3' do s = s + i end return {status='Healthy', message = tostring(s)}",
            "for i = {}, 2 do end return {status='Healthy'}",
            "for i = 1, nil do end return {status='Healthy'}",
            "for i = 1, 2, obj.spec.missing do end return {status='Healthy'}",
            "local x = 1\n\nlocal y = x\n  ..\n  nil\nreturn {status='Healthy'}",
            "local x = 1\nlocal y = (x\n+\nnil)\nreturn {status='Healthy'}",
            "local t = {x = 1}\nlocal y = t.\nx + t.missing\nreturn {status='Healthy'}",
            "local t = {}\nreturn {status='Healthy', message = tostring(t\n.x\n< 2)}",
            "local t = {['a`b'] = '5'} return {status='Healthy', message = tostring(t['a`b'] + 1) .. '`' .. [[`]] --[[ ` ]]}",
            "local t = {} return {status='Healthy', message = tostring(t['a`b'] * 2)}",
            "local s = 'a' -- comment .. 'b' + 1\nreturn {status='Healthy', message = s .. [[ .. ]] .. [==[ + ]==] .. '..' .. \"-\"}",
            "local function f(...) return select('#', ...) .. (...) end return {status='Healthy', message = f(1, 2, 3)}",
            "goto skip local x = 1 ::skip:: return {status='Healthy', message = 'jumped'}",
            "local function f(n) return 'a' .. f(n) end return f(1)",
            "return {status='Healthy', message = 1 .. 2}",
            "return {status='Healthy', message = tostring(1..2)}",
            "local a = 2 return {status='Healthy', message = tostring(-a^2) .. tostring(not a == 2) .. tostring(2^-a)}",
            "local x = {} x.y = {z = '5'} return {status='Healthy', message = tostring(x.y.z + x.y['z'])}",
            "return {status='Healthy', message = #'abc' + 1 .. ''}",
            "error(nil .. 'x')",
            "local a = true return {status='Healthy', message = 'x' .. tostring(a) .. a}",
            "local function f(...) local a, b = ... local t = {...} return a .. b .. #t .. select('#', ...) .. (...) .. tostring((select(2, ...))) end return {status='Healthy', message = f(1, 2, nil, 4)}",
            "return {status='Healthy', message = tostring(select(-5, 1))}",
            "return {status='Healthy', message = tostring(select('a', 1))}",
            "return {status='Healthy', message = tostring(select(-1, 1, 2)) .. select('#', 1, nil)}",
            "local function f(...) return ... end return {status='Healthy', message = select('#', f()) .. select('#', f(nil, nil))}",
            "local mt = {__concat = function(a, b) return (type(a) == 'table' and 'T' or a) .. '|' .. (type(b) == 'table' and 'T' or b) end} local t = setmetatable({}, mt) return {status='Healthy', message = 'a' .. 'b' .. t .. 'c' .. 'd' .. t .. t}",
        ];
        let mut failures = Vec::new();
        for case in cases {
            let script = format!("{prelude}{case}");
            let (want, got) = (plain(&script), sandboxed(&script));
            if want != got {
                failures.push(format!("{case}\n  plain:     {want}\n  sandboxed: {got}"));
            }
        }
        assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
    }
}
