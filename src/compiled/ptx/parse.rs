//! PTX text → functions of decoded instructions. Only what the evaluator needs is kept: the
//! integer and address arithmetic, control flow, barriers and memory accesses; every other
//! instruction keeps its destination so that its result is known to be unknown.

use std::collections::HashMap;

/// A PTX module: its kernels and device functions.
#[derive(Debug, Default)]
pub(crate) struct Module {
    pub functions: Vec<Function>,
    /// Module-scope `.shared` variables (`extern __shared__` arrays): name → bytes, 0 when
    /// unsized.
    pub shared: Vec<(String, u64)>,
    /// `.file N "path"`: the source files `.loc` numbers.
    pub files: HashMap<u32, String>,
}

#[derive(Debug)]
pub(crate) struct Function {
    /// The mangled name.
    pub name: String,
    pub is_kernel: bool,
    /// Parameter names, in order, with their size in bytes.
    pub params: Vec<(String, u32)>,
    /// Function-scope `.shared` variables: name → bytes.
    pub shared: Vec<(String, u64)>,
    pub body: Vec<Instruction>,
    /// Registers named in the body (`%r12`, `%p3`, …), numbered from 0.
    pub registers: usize,
}

/// A source position from `.loc`: file number, line, column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Instruction {
    /// `@%p` / `@!%p`: the predicate register and whether it is negated.
    pub guard: Option<(usize, bool)>,
    pub op: Op,
    pub operands: Vec<Operand>,
    pub loc: Loc,
}

/// An integer type: width in bits (1 for predicates) and signedness; floats are `float`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Type {
    pub bits: u32,
    pub signed: bool,
    pub float: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    Shared,
    Global,
    Param,
    Local,
    Const,
    /// A generic address: shared when it points into a shared variable.
    Generic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Half {
    Lo,
    Hi,
    Wide,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul(Half),
    Mad(Half),
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unary {
    Mov,
    Not,
    /// `cnot`: 1 for 0, else 0.
    LogicalNot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
}

/// What an instruction does, as far as the evaluator models it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Unary(Unary, Type),
    Arith(Arith, Type),
    /// `selp d, a, b, p`.
    Select(Type),
    /// `setp.cmp[.combine].type p[|q], a, b[, c]`.
    SetPredicate(Compare, Option<Combine>, Type),
    /// `cvt.dst.src` / `cvta`: destination and source types.
    Convert(Type, Type),
    /// `bfe d, a, start, len`.
    BitExtract(Type),
    /// `bfi d, a, b, start, len`: `a`'s low `len` bits into `b` at `start`.
    BitInsert(Type),
    /// `prmt.b32 d, a, b, selector` (the default mode).
    Permute,
    /// `lop3.b32 d, a, b, c, lut`.
    Lop3,
    /// `shf.{l,r}.{wrap,clamp} d, lo, hi, n`: left?, clamp?
    FunnelShift(bool, bool),
    /// A load of `bytes` per element and `count` elements (`.v2`/`.v4`); `ordered` for
    /// `.volatile` and the memory-model orders, which no compiler may reuse.
    Load {
        space: Space,
        bytes: u32,
        count: u32,
        ordered: bool,
    },
    Store {
        space: Space,
        bytes: u32,
        count: u32,
    },
    /// `atom`/`red`: `red` has no destination.
    Atomic {
        space: Space,
        bytes: u32,
        returns: bool,
    },
    /// `ldmatrix`/`stmatrix` `.x1/.x2/.x4`: 16-byte rows from the first 8·n lanes.
    Matrix {
        store: bool,
        matrices: u32,
    },
    /// `cp.async [shared], [global], bytes`.
    CopyAsync,
    Barrier,
    Branch,
    Exit,
    Call,
    /// No effect the evaluator needs (fences, warp barriers, prefetches).
    Nothing,
    /// Writes its first operand with a value the evaluator does not compute.
    Opaque,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    Register(usize),
    /// A predicate operand written `!%p`.
    NotRegister(usize),
    Immediate(u64),
    Special(Special),
    /// A parameter, shared variable, label or function, by name.
    Symbol(String),
    /// `[base+offset]`.
    Address(Box<Operand>, i64),
    Vector(Vec<Operand>),
    /// `_` (a sink).
    Sink,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    Tid(usize),
    Ntid(usize),
    Ctaid(usize),
    Nctaid(usize),
    LaneId,
    /// Any other special register (`%clock`, `%smid`, …).
    Other,
}

/// Reads the functions of a PTX listing.
pub(crate) fn module(text: &str) -> Module {
    let text = strip_comments(text);
    let mut module = Module::default();
    let mut rest = text.as_str();
    while let Some(at) = next_function(rest) {
        let (is_kernel, after) = at;
        let Some((function, remaining)) = function(after, is_kernel) else {
            break;
        };
        if let Some(function) = function {
            module.functions.push(function);
        }
        rest = remaining;
    }
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix(".file") {
            let rest = rest.trim();
            let number = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            let path = rest.split('"').nth(1);
            if let (Some(number), Some(path)) = (number, path) {
                module.files.insert(number, path.to_string());
            }
        }
    }
    for statement in text.split(';') {
        let statement = statement.trim();
        if let Some(position) = statement.find(".shared") {
            let head = &statement[..position];
            // Module scope only: a function's variables are read with its body.
            if head.contains(".extern") || head.trim().is_empty() || head.contains(".visible") {
                if let Some(variable) = variable(&statement[position..]) {
                    if !module
                        .functions
                        .iter()
                        .any(|f| f.shared.iter().any(|(name, _)| *name == variable.0))
                    {
                        module.shared.push(variable);
                    }
                }
            }
        }
    }
    module
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |end| &rest[l + end..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |end| &rest[b + end + 2..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// The text after the next `.entry` or `.func` keyword, and whether it is a kernel.
fn next_function(text: &str) -> Option<(bool, &str)> {
    let entry = find_word(text, ".entry");
    let func = find_word(text, ".func");
    match (entry, func) {
        (Some(e), f) if f.is_none_or(|f| e < f) => Some((true, &text[e + 6..])),
        (_, Some(f)) => Some((false, &text[f + 5..])),
        _ => None,
    }
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let at = from + at;
        let after = text[at + word.len()..].chars().next();
        if after.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// One function from just after its keyword: the function (None for a declaration without
/// a body) and the text after it.
fn function(text: &str, is_kernel: bool) -> Option<(Option<Function>, &str)> {
    let mut rest = text.trim_start();
    if rest.starts_with('(') {
        // `.func (.param .b32 func_retval0) name(…)`.
        let close = matching(rest, '(', ')')?;
        rest = rest[close + 1..].trim_start();
    }
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .unwrap_or(rest.len());
    let name = rest[..name_end].to_string();
    rest = rest[name_end..].trim_start();
    let mut params = Vec::new();
    if rest.starts_with('(') {
        let close = matching(rest, '(', ')')?;
        for param in rest[1..close].split(',') {
            if let Some((param_name, bytes)) = variable(param.trim()) {
                params.push((param_name, bytes as u32));
            }
        }
        rest = &rest[close + 1..];
    }
    let body_start = rest.find(['{', ';'])?;
    if rest.as_bytes()[body_start] == b';' {
        return Some((None, &rest[body_start + 1..]));
    }
    let body_text = &rest[body_start..];
    let close = matching(body_text, '{', '}')?;
    let function = body(name, is_kernel, params, &body_text[1..close]);
    Some((Some(function), &body_text[close + 1..]))
}

/// The index of the bracket closing the one `text` starts with.
fn matching(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `[.param|.shared] [.align N] .type name[[N]]` → name and bytes.
fn variable(declaration: &str) -> Option<(String, u64)> {
    let mut words: Vec<&str> = declaration.split_whitespace().collect();
    let last = words.pop()?;
    let element = words
        .iter()
        .rev()
        .find_map(|w| scalar_type(w.trim_start_matches('.')))
        .map_or(1, |t| u64::from(t.bits.max(8) / 8));
    let (name, count) = match last.find('[') {
        Some(open) => {
            let inside = last[open + 1..].trim_end_matches(']');
            (&last[..open], inside.parse::<u64>().unwrap_or(0))
        }
        None => (last, 1),
    };
    Some((name.to_string(), element.saturating_mul(count)))
}

fn scalar_type(word: &str) -> Option<Type> {
    let (signed, float, digits) = match word.as_bytes().first()? {
        b's' => (true, false, &word[1..]),
        b'u' | b'b' => (false, false, &word[1..]),
        b'f' if word != "f16x2" && word != "ftz" => (true, true, &word[1..]),
        b'p' if word == "pred" => return Some(Type::PREDICATE),
        _ => return None,
    };
    let bits = digits.parse::<u32>().ok()?;
    matches!(bits, 8 | 16 | 32 | 64 | 128).then_some(Type {
        bits,
        signed,
        float,
    })
}

impl Type {
    pub const PREDICATE: Type = Type {
        bits: 1,
        signed: false,
        float: false,
    };
}

/// Decodes the statements of a function body.
fn body(name: String, is_kernel: bool, params: Vec<(String, u32)>, text: &str) -> Function {
    let mut registers: HashMap<String, usize> = HashMap::new();
    let mut shared = Vec::new();
    let mut instructions = Vec::new();
    let mut labels: Vec<(String, usize)> = Vec::new();
    let mut loc = Loc::default();
    // `.loc` ends at its line, every other statement at `;`.
    let mut statements = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with(".loc") {
            statements.push(line.to_string());
        } else {
            match statements.last_mut() {
                Some(last) if !last.ends_with(';') && !last.starts_with(".loc") => {
                    last.push(' ');
                    last.push_str(line);
                }
                _ => statements.push(line.to_string()),
            }
            while let Some(last) = statements.last_mut() {
                let Some(end) = last.find(';') else { break };
                if end + 1 == last.len() {
                    break;
                }
                let tail = last[end + 1..].to_string();
                last.truncate(end + 1);
                statements.push(tail);
            }
        }
    }
    for statement in statements {
        let mut statement = statement.trim().trim_end_matches(';').trim();
        statement = statement.trim_start_matches(['{', '}']).trim();
        // Leading labels, `$L__BB0_2:`.
        while let Some(colon) = statement.find(':') {
            let head = &statement[..colon];
            if head.is_empty()
                || !head
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                break;
            }
            labels.push((head.to_string(), instructions.len()));
            statement = statement[colon + 1..].trim();
        }
        statement = statement.trim_matches(['{', '}', ' ']);
        if statement.is_empty() {
            continue;
        }
        if let Some(rest) = statement.strip_prefix(".loc") {
            let numbers: Vec<u32> = rest
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter_map(|w| w.parse().ok())
                .take(3)
                .collect();
            if let [file, line, col] = numbers[..] {
                loc = Loc { file, line, col };
            }
            continue;
        }
        if statement.starts_with(".shared") || statement.contains(" .shared ") {
            if let Some(variable) = variable(statement) {
                shared.push(variable);
            }
            continue;
        }
        if statement.starts_with('.') {
            continue;
        }
        if let Some(instruction) = instruction(statement, loc, &mut registers) {
            instructions.push(instruction);
        }
    }
    // Branch targets become instruction indices.
    let targets: HashMap<String, usize> = labels.into_iter().collect();
    for instruction in &mut instructions {
        if instruction.op == Op::Branch {
            if let Some(Operand::Symbol(label)) = instruction.operands.first() {
                let target = targets.get(label).copied().unwrap_or(usize::MAX);
                instruction.operands[0] = Operand::Immediate(target as u64);
            }
        }
    }
    Function {
        name,
        is_kernel,
        params,
        shared,
        body: instructions,
        registers: registers.len(),
    }
}

fn instruction(
    statement: &str,
    loc: Loc,
    registers: &mut HashMap<String, usize>,
) -> Option<Instruction> {
    let mut rest = statement;
    let mut guard = None;
    if let Some(predicated) = rest.strip_prefix('@') {
        let end = predicated.find(char::is_whitespace)?;
        let (negated, name) = match predicated[..end].strip_prefix('!') {
            Some(name) => (true, name),
            None => (false, &predicated[..end]),
        };
        guard = Some((register(name, registers), negated));
        rest = predicated[end..].trim_start();
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let opcode = &rest[..end];
    let operands = split_operands(rest[end..].trim())
        .into_iter()
        .map(|o| operand(o, registers))
        .collect();
    Some(Instruction {
        guard,
        op: decode(opcode),
        operands,
        loc,
    })
}

fn register(name: &str, registers: &mut HashMap<String, usize>) -> usize {
    let next = registers.len();
    *registers.entry(name.to_string()).or_insert(next)
}

/// Splits at commas outside brackets, braces and parentheses; `p|q` counts as two operands.
fn split_operands(text: &str) -> Vec<&str> {
    let mut operands = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' | '|' if depth == 0 => {
                operands.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        operands.push(text[start..].trim());
    }
    operands
}

fn operand(text: &str, registers: &mut HashMap<String, usize>) -> Operand {
    let text = text.trim();
    if let Some(inside) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let inside = inside.replace(' ', "");
        let (base, offset) = match inside
            .find('+')
            .or_else(|| inside[1..].find('-').map(|i| i + 1))
        {
            Some(split) => {
                let offset = inside[split..].trim_start_matches('+');
                (
                    &inside[..split],
                    parse_integer(offset).map_or(0, |v| v as i64),
                )
            }
            None => (inside.as_str(), 0),
        };
        return Operand::Address(Box::new(operand(base, registers)), offset);
    }
    if let Some(inside) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        return Operand::Vector(
            split_operands(inside)
                .into_iter()
                .map(|o| operand(o, registers))
                .collect(),
        );
    }
    if text == "_" {
        return Operand::Sink;
    }
    if let Some(name) = text.strip_prefix('!') {
        return Operand::NotRegister(register(name, registers));
    }
    if let Some(name) = text.strip_prefix('%') {
        let dimension = |suffix: &str| match suffix {
            "x" => 0,
            "y" => 1,
            _ => 2,
        };
        let special = match name.split_once('.') {
            Some(("tid", d)) => Some(Special::Tid(dimension(d))),
            Some(("ntid", d)) => Some(Special::Ntid(dimension(d))),
            Some(("ctaid", d)) => Some(Special::Ctaid(dimension(d))),
            Some(("nctaid", d)) => Some(Special::Nctaid(dimension(d))),
            Some(_) => Some(Special::Other),
            None if name == "laneid" => Some(Special::LaneId),
            None if ["clock", "clock64", "smid", "warpid", "nsmid", "lanemask_lt"]
                .contains(&name)
                || name.starts_with("globaltimer")
                || name.starts_with("lanemask") =>
            {
                Some(Special::Other)
            }
            None => None,
        };
        return match special {
            Some(special) => Operand::Special(special),
            None => Operand::Register(register(text, registers)),
        };
    }
    match parse_integer(text) {
        Some(value) => Operand::Immediate(value),
        None => Operand::Symbol(text.to_string()),
    }
}

/// A PTX integer or float literal as its bits.
fn parse_integer(text: &str) -> Option<u64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = digits.trim_end_matches('U');
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if let Some(bits) = digits
        .strip_prefix("0f")
        .or_else(|| digits.strip_prefix("0F"))
        .or_else(|| digits.strip_prefix("0d"))
        .or_else(|| digits.strip_prefix("0D"))
    {
        u64::from_str_radix(bits, 16).ok()?
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<u64>().ok()?
    };
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// The evaluator's view of an opcode such as `ld.shared.v4.f32` or `setp.lt.and.s32`.
fn decode(opcode: &str) -> Op {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let modifiers: Vec<&str> = parts.collect();
    let types: Vec<Type> = modifiers.iter().filter_map(|m| scalar_type(m)).collect();
    let ty = types.last().copied().unwrap_or(Type {
        bits: 32,
        signed: false,
        float: false,
    });
    let has = |m: &str| modifiers.contains(&m);
    let space = if has("shared") || modifiers.iter().any(|m| m.starts_with("shared::")) {
        Space::Shared
    } else if has("global") {
        Space::Global
    } else if has("param") {
        Space::Param
    } else if has("local") {
        Space::Local
    } else if has("const") {
        Space::Const
    } else {
        Space::Generic
    };
    let count = if has("v4") {
        4
    } else if has("v2") {
        2
    } else if has("v8") {
        8
    } else {
        1
    };
    let half = if has("hi") {
        Half::Hi
    } else if has("wide") {
        Half::Wide
    } else {
        Half::Lo
    };
    let arith = |a: Arith| {
        if ty.float {
            Op::Opaque
        } else {
            Op::Arith(a, ty)
        }
    };
    let unary = |u: Unary| {
        if ty.float {
            Op::Opaque
        } else {
            Op::Unary(u, ty)
        }
    };
    match base {
        "mov" => Op::Unary(Unary::Mov, ty),
        "not" => unary(Unary::Not),
        "cnot" => unary(Unary::LogicalNot),
        "neg" => unary(Unary::Neg),
        "abs" => unary(Unary::Abs),
        "popc" => Op::Unary(Unary::Popc, ty),
        "clz" => Op::Unary(Unary::Clz, ty),
        "brev" => Op::Unary(Unary::Brev, ty),
        "add" => arith(Arith::Add),
        "sub" => arith(Arith::Sub),
        "mul" | "mul24" => arith(Arith::Mul(half)),
        "mad" | "mad24" => arith(Arith::Mad(half)),
        "div" => arith(Arith::Div),
        "rem" => arith(Arith::Rem),
        "and" => Op::Arith(Arith::And, ty),
        "or" => Op::Arith(Arith::Or, ty),
        "xor" => Op::Arith(Arith::Xor, ty),
        "shl" => Op::Arith(Arith::Shl, ty),
        "shr" => Op::Arith(Arith::Shr, ty),
        "min" => arith(Arith::Min),
        "max" => arith(Arith::Max),
        "selp" => Op::Select(ty),
        "setp" => {
            let compare = modifiers.iter().find_map(|m| match *m {
                "eq" | "equ" => Some(Compare::Eq),
                "ne" | "neu" => Some(Compare::Ne),
                "lt" | "lo" | "ltu" => Some(Compare::Lt),
                "le" | "ls" | "leu" => Some(Compare::Le),
                "gt" | "hi" | "gtu" => Some(Compare::Gt),
                "ge" | "hs" | "geu" => Some(Compare::Ge),
                _ => None,
            });
            let combine = modifiers.iter().find_map(|m| match *m {
                "and" => Some(Combine::And),
                "or" => Some(Combine::Or),
                "xor" => Some(Combine::Xor),
                _ => None,
            });
            match compare {
                Some(compare) if !ty.float => Op::SetPredicate(compare, combine, ty),
                _ => Op::Opaque,
            }
        }
        "cvt" => match types[..] {
            [to, from] if !to.float && !from.float => Op::Convert(to, from),
            _ => Op::Opaque,
        },
        "cvta" => Op::Unary(Unary::Mov, ty),
        "bfe" => Op::BitExtract(ty),
        "bfi" => Op::BitInsert(ty),
        "prmt" if modifiers.len() == 1 => Op::Permute,
        "lop3" => Op::Lop3,
        "shf" => Op::FunnelShift(has("l"), has("clamp")),
        "ld" | "ldu" => Op::Load {
            space,
            bytes: ty.bits.max(8) / 8,
            count,
            ordered: ["volatile", "relaxed", "acquire", "sc"]
                .iter()
                .any(|m| has(m)),
        },
        "st" => Op::Store {
            space,
            bytes: ty.bits.max(8) / 8,
            count,
        },
        "atom" | "red" => Op::Atomic {
            space,
            bytes: ty.bits.max(8) / 8,
            returns: base == "atom",
        },
        "ldmatrix" | "stmatrix" => Op::Matrix {
            store: base == "stmatrix",
            matrices: if has("x4") {
                4
            } else if has("x2") {
                2
            } else {
                1
            },
        },
        "cp" if has("async") && !has("bulk") && space == Space::Shared => Op::CopyAsync,
        "bar" | "barrier"
            if !has("warp") && !modifiers.iter().any(|m| m.starts_with("cluster")) =>
        {
            if has("arrive") {
                Op::Nothing
            } else {
                Op::Barrier
            }
        }
        "bar" | "barrier" | "membar" | "fence" | "prefetch" | "prefetchu" | "pragma" | "trap"
        | "nanosleep" | "cp" | "griddepcontrol" => Op::Nothing,
        "bra" | "brx" => Op::Branch,
        "ret" | "exit" => Op::Exit,
        "call" => Op::Call,
        _ => Op::Opaque,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = r#"
.version 9.5
.target sm_90
.extern .shared .align 16 .b8 dynamic[];
// a comment
.visible .entry _Z1kPfi(
	.param .u64 _Z1kPfi_param_0,
	.param .u32 _Z1kPfi_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<26>;
	.loc	1 23 0
	.shared .align 4 .b8 _ZZ1kPfiE4tile[4096];
	mov.u32 	%r5, %tid.x;
	.loc	1 30 9
	@%p1 bra 	$L__BB0_2;
	st.shared.v4.f32 	[%r16+-16], {%f1, %f2, %f3, %f4};
$L__BB0_2:
	setp.lt.and.s32 	%p1|%p2, %r1, 4, !%p3;
	bar.sync 	0;
	ret;
}
"#;

    #[test]
    fn a_kernel_is_read_with_its_variables_locations_and_branch_targets() {
        let module = module(LISTING);
        assert_eq!(module.shared, [("dynamic".to_string(), 0)]);
        let [kernel] = &module.functions[..] else {
            panic!("{module:?}")
        };
        assert!(kernel.is_kernel);
        assert_eq!(kernel.name, "_Z1kPfi");
        assert_eq!(
            kernel.params,
            [
                ("_Z1kPfi_param_0".to_string(), 8),
                ("_Z1kPfi_param_1".to_string(), 4)
            ]
        );
        assert_eq!(kernel.shared, [("_ZZ1kPfiE4tile".to_string(), 4096)]);
        let ops: Vec<Op> = kernel.body.iter().map(|i| i.op).collect();
        assert_eq!(
            ops,
            [
                Op::Unary(
                    Unary::Mov,
                    Type {
                        bits: 32,
                        signed: false,
                        float: false
                    }
                ),
                Op::Branch,
                Op::Store {
                    space: Space::Shared,
                    bytes: 4,
                    count: 4
                },
                Op::SetPredicate(
                    Compare::Lt,
                    Some(Combine::And),
                    Type {
                        bits: 32,
                        signed: true,
                        float: false
                    }
                ),
                Op::Barrier,
                Op::Exit,
            ]
        );
        assert_eq!(
            kernel.body[0].operands[1],
            Operand::Special(Special::Tid(0))
        );
        assert_eq!(
            kernel.body[1].guard,
            Some((kernel.body[1].guard.unwrap().0, false))
        );
        assert_eq!(kernel.body[1].operands[0], Operand::Immediate(3));
        assert_eq!(
            kernel.body[2].loc,
            Loc {
                file: 1,
                line: 30,
                col: 9
            }
        );
        assert!(matches!(
            &kernel.body[2].operands[0],
            Operand::Address(_, -16)
        ));
        assert_eq!(kernel.body[3].operands.len(), 5);
        assert!(matches!(
            kernel.body[3].operands[4],
            Operand::NotRegister(_)
        ));
    }

    #[test]
    fn literals_are_read_as_ptx_writes_them() {
        assert_eq!(parse_integer("-4"), Some(u64::MAX - 3));
        assert_eq!(parse_integer("0x10U"), Some(16));
        assert_eq!(parse_integer("0f3F800000"), Some(0x3F80_0000));
        assert_eq!(parse_integer("010"), Some(8));
        assert_eq!(parse_integer("name"), None);
    }
}
