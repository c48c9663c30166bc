//! Symbolic execution of one function body: follows local variables through their
//! definitions (in statement order, with branches joined by a select and loops given
//! counters), and records for every shared access its element index as a [`Sym`], the loops
//! around it and the condition under which a lane executes it.
//!
//! This module holds the results ([`FunctionAffine`], [`Site`], [`Loop`]), the executor's
//! state and [`analyse_function`]; the executor's work is split by concern:
//!
//! - `statements`: statements, branches joined by a select, scopes and local names.
//! - `loops`: loop counters, the inductions of loop-carried variables, and the scans of what
//!   a loop body assigns.
//! - `expressions`: the value of an expression: names, operators, casts, built-ins.
//! - `pointers`: pointers into shared arrays, what they designate, and where they go out of
//!   sight.
//! - `sites`: the site recorded for each shared access, direct or through a pointer.
//! - `calls`: calls: macros, atomics, cooperative groups, inlined functions and lambdas.
mod calls;
mod expressions;
mod loops;
mod pointers;
mod sites;
mod statements;

use pointers::Pointer;

use super::class::{classify, Class};
use super::digits::{normalize, Context, DigitAffine, NotAffine};
use super::sym::{Atom, AtomValues, LoopId, Op, Sym};
use crate::c_int::Semantics;
use crate::parse::{
    AccessKind, Bindings, ConstEnv, EscapeKind, Function, Lambda, Span, Stmt, UnseenUse,
};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// Loops are simulated up to this many iterations; beyond, the counter is a uniform unknown.
pub const MAX_TRIPS: usize = 1 << 16;

/// Macro expansions inside one another beyond which a value is unknown: real code nests a
/// few; a generated chain thousands deep would exhaust the stack.
const MAX_MACRO_NESTING: usize = 200;

/// How a loop counter moves from one iteration to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Add(i64),
    Mul(i64),
    Shl(i64),
    Shr(i64),
    Div(i64),
}

impl Step {
    fn apply(self, v: i64) -> Option<i64> {
        match self {
            Step::Add(k) => v.checked_add(k),
            Step::Mul(k) => v.checked_mul(k),
            Step::Shl(k) => Op::Shl.apply(v, k, Semantics::Device),
            Step::Shr(k) => Op::Shr.apply(v, k, Semantics::Device),
            Step::Div(k) => v.checked_div(k),
        }
    }
}

/// The values a loop atom takes.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopValues {
    /// A uniform counter: `init`, then `step` while `cond` holds (`cond` may mention the
    /// counter's own atom and enclosing loops' atoms).
    Counter {
        init: Sym,
        cond: Option<Sym>,
        step: Step,
    },
    /// The iteration number 0, 1, … of a loop whose counter depends on the thread
    /// (`for (i = tx; i < n; i += 256)` is `i = tx + 256*k`): it runs while `cond` holds for
    /// any thread of the block.
    Trips { cond: Sym },
    /// Bounds the analysis cannot evaluate: the counter is a uniform unknown.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    pub name: String,
    pub values: LoopValues,
    pub parent: Option<LoopId>,
}

/// The analysis of one access of one array.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// The element index, subscripts linearised row-major.
    pub index: Sym,
    /// The loops around the access, outermost first.
    pub loops: Vec<LoopId>,
    /// The condition for a lane to execute the access (`Const(1)`: every lane).
    pub active: Sym,
    pub form: Result<DigitAffine, NotAffine>,
    pub class: Class,
    /// When the form exists only per iteration (a mask by a loop counter, as in FWT): the
    /// form of each iteration, with the loop values that give it.
    pub iterations: Vec<Iteration>,
    /// The values of the member path's subscripts, in order (`t % 4` in `q[i].v[t % 4]`);
    /// empty when the path has none.
    pub member: Vec<Sym>,
    /// The value of each subscript of a direct access, outermost first (empty through a
    /// pointer): the index is their row-major combination.
    pub subscripts: Vec<Sym>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    pub loop_values: Vec<(String, i64)>,
    pub form: DigitAffine,
    pub class: Class,
}

/// An access of a shared array through a pointer (`row[tx]` after `float *row = &tile[ty][0]`,
/// `s[i]` inside a device function called with the array).
#[derive(Debug, Clone, PartialEq)]
pub struct AliasAccess {
    pub array: usize,
    pub kind: AccessKind,
    /// The element expression (`row[tx]`, `*p`, `p->x`).
    pub span: Span,
    /// The member path touched, as for direct accesses (`.x`).
    pub member: Option<String>,
    pub atomic_op: Option<String>,
    /// The calls it is reached through, outermost first, when it lies in an inlined function.
    pub calls: Vec<Span>,
    pub site: Site,
    /// The offset from the array's start, in elements, of the pointer that is subscripted or
    /// dereferenced (`p` in `p[i]`, `*p`), when it is a constant: the rewriter maps `p[i]`
    /// in place when it is 0.
    pub base_offset: Option<i64>,
    /// The bytes one lane touches through a pointer cast to a wider type (`float4`).
    pub vector_bytes: Option<u64>,
}

/// A pointer made from an array whose uses the analysis could not follow.
#[derive(Debug, Clone, PartialEq)]
pub struct PointerEscape {
    pub array: usize,
    /// Where the pointer goes out of sight.
    pub span: Span,
    pub kind: EscapeKind,
    /// The inlined calls it happens in, outermost first.
    pub calls: Vec<Span>,
}

/// Statements one function's analysis may execute, inlined calls included. A kernel runs
/// each of its statements once here (loops are followed symbolically), so only calls
/// inlined inside calls multiply them: ten calls to a helper that makes ten calls, eight
/// deep, are 10^8 statements (minutes and gigabytes). Past the budget the analysis stops
/// and the function is not simulated.
pub const MAX_STATEMENTS: u64 = 1 << 18;

/// Iterations beyond which per-iteration forms are not listed.
const MAX_LISTED_ITERATIONS: usize = 64;

/// Values for loop atoms, for evaluating loop bounds and specialising forms.
#[derive(Debug, Clone, Default)]
pub struct LoopPoint(pub Vec<(Atom, i64)>);

impl AtomValues for LoopPoint {
    fn value(&self, atom: &Atom) -> Option<i64> {
        self.0.iter().find(|(a, _)| a == atom).map(|(_, v)| *v)
    }
}

/// The result for one function: per array, per access (same order as in the `Function`).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionAffine {
    pub loops: Vec<Loop>,
    pub sites: Vec<Vec<Option<Site>>>,
    /// Accesses through pointers, in execution order.
    pub aliases: Vec<AliasAccess>,
    /// Uses of an array's name (the `name_use` of the front end's escapes) whose pointer the
    /// analysis followed; a pointer that went out of sight is in `pointer_escapes` instead.
    pub followed: HashSet<Span>,
    pub pointer_escapes: Vec<PointerEscape>,
    /// Expressions the front end kept as opaque text that the analysis met, with what
    /// they are: the accesses inside one are not reached ([`FunctionAffine::why_unreached`]).
    pub opaque: Vec<(Span, String)>,
    /// Alignment (log2) and non-negativity of each atom that is not a thread index.
    facts: HashMap<Atom, (u32, bool)>,
    block: [u32; 3],
    /// Whether the analysis stopped at [`MAX_STATEMENTS`]: its sites are then incomplete.
    pub exhausted: bool,
}

impl FunctionAffine {
    pub fn block(&self) -> [u32; 3] {
        self.block
    }

    /// Why the access at `span` has no site: the innermost opaque expression around it, when
    /// the analysis met one.
    pub fn why_unreached(&self, span: Span) -> String {
        let around = self
            .opaque
            .iter()
            .filter(|(at, _)| at.start <= span.start && span.end <= at.end)
            .min_by_key(|(at, _)| at.end - at.start);
        match around {
            Some((_, what)) if what == crate::parse::TOO_DEEP => format!(
                "it lies in an expression nested more than {} levels deep, which the analysis \
                 does not follow",
                crate::parse::MAX_EXPR_DEPTH
            ),
            Some((_, what)) => {
                format!("it lies in an expression the analysis does not follow (`{what}`)")
            }
            None => "the access is not reached by the analysis".to_string(),
        }
    }

    /// The values of loop `id` given values for its enclosing loops; `Err` when the trip count
    /// cannot be known (bounds on unknown values, more than [`MAX_TRIPS`] iterations).
    pub fn loop_values(&self, id: LoopId, outer: &impl AtomValues) -> Result<Vec<i64>, String> {
        let lp = &self.loops[id];
        let atom = Atom::Loop {
            id,
            name: lp.name.clone(),
        };
        let mut values = Vec::new();
        match &lp.values {
            LoopValues::Unknown(why) => return Err(why.clone()),
            LoopValues::Counter { init, cond, step } => {
                let mut v = init
                    .eval(outer)
                    .ok_or_else(|| format!("the start of loop `{}` is not known", lp.name))?;
                loop {
                    let with = With {
                        atom: &atom,
                        value: v,
                        rest: outer,
                    };
                    let go = match cond {
                        Some(cond) => cond.eval(&with).ok_or_else(|| {
                            format!("the condition of loop `{}` is not known", lp.name)
                        })?,
                        None => 1,
                    };
                    if go == 0 {
                        break;
                    }
                    if values.len() == MAX_TRIPS {
                        return Err(format!(
                            "loop `{}` runs more than {MAX_TRIPS} iterations",
                            lp.name
                        ));
                    }
                    values.push(v);
                    match step.apply(v) {
                        Some(next) if next != v => v = next,
                        _ => return Err(format!("loop `{}` does not terminate", lp.name)),
                    }
                }
            }
            LoopValues::Trips { cond } => {
                for k in 0.. {
                    let with = With {
                        atom: &atom,
                        value: k,
                        rest: outer,
                    };
                    let mut any = false;
                    for thread in threads(self.block) {
                        let point = WithThread {
                            thread,
                            rest: &with,
                        };
                        match cond.eval(&point) {
                            Some(0) => {}
                            Some(_) => {
                                any = true;
                                break;
                            }
                            None => {
                                return Err(format!(
                                    "the condition of loop `{}` is not known",
                                    lp.name
                                ))
                            }
                        }
                    }
                    if !any {
                        break;
                    }
                    if values.len() == MAX_TRIPS {
                        return Err(format!(
                            "loop `{}` runs more than {MAX_TRIPS} iterations",
                            lp.name
                        ));
                    }
                    values.push(k);
                }
            }
        }
        Ok(values)
    }
}

/// Every thread of a block, in linear-id order.
pub fn threads(block: [u32; 3]) -> impl Iterator<Item = [i64; 3]> {
    let [bx, by, bz] = block.map(|d| i64::from(d.max(1)));
    (0..bz).flat_map(move |z| (0..by).flat_map(move |y| (0..bx).map(move |x| [x, y, z])))
}

/// `atom = value`, the rest from `rest`.
pub struct With<'a, R> {
    pub atom: &'a Atom,
    pub value: i64,
    pub rest: &'a R,
}

impl<R: AtomValues> AtomValues for With<'_, R> {
    fn value(&self, atom: &Atom) -> Option<i64> {
        if atom == self.atom {
            Some(self.value)
        } else {
            self.rest.value(atom)
        }
    }
}

/// One thread's indices, the rest from `rest`.
pub struct WithThread<'a, R> {
    pub thread: [i64; 3],
    pub rest: &'a R,
}

impl<R: AtomValues> AtomValues for WithThread<'_, R> {
    fn value(&self, atom: &Atom) -> Option<i64> {
        match atom {
            Atom::Thread(axis) => Some(self.thread[axis.index()]),
            other => self.rest.value(other),
        }
    }
}

struct Facts<'a> {
    block: [u32; 3],
    facts: &'a HashMap<Atom, (u32, bool)>,
}

impl Context for Facts<'_> {
    fn block(&self) -> [u32; 3] {
        self.block
    }
    fn alignment(&self, atom: &Atom) -> u32 {
        self.facts.get(atom).map_or(0, |f| f.0)
    }
    fn nonnegative(&self, atom: &Atom) -> bool {
        self.facts.get(atom).is_some_and(|f| f.1)
    }
}

/// What a local name holds.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(Sym),
    /// A float, a struct, a pointer into global memory: reading it gives data.
    Data(String),
    Pointer(Pointer),
    /// A cooperative group: the whole block (`this_thread_block()`), or tiles of so many
    /// threads (`tiled_partition<32>(block)`).
    Group(Option<u32>),
    /// A lambda of the function (index into `Executor::lambdas`).
    Lambda(usize),
}

impl Value {
    /// The value with its integer part bounded (see [`Sym::bounded`]).
    fn bounded(self) -> Value {
        match self {
            Value::Int(sym) => Value::Int(sym.bounded()),
            Value::Pointer(pointer) => Value::Pointer(Pointer {
                offset: pointer.offset.bounded(),
                ..pointer
            }),
            other => other,
        }
    }
}

/// A lambda defined in the body, run where it is called.
struct LambdaDef<'a> {
    lambda: &'a Lambda,
    /// By copy: the enclosing variables as they were at the definition.
    captured: Option<Vec<(String, Value)>>,
    called: bool,
}

struct Executor<'a> {
    function: &'a Function,
    /// The file's functions, for inlining calls that pass a pointer into a shared array.
    functions: &'a Callees<'a>,
    constants: &'a ConstEnv,
    /// Template bindings of the function whose body runs (the callee's while inlining).
    bindings: &'a Bindings,
    /// The names a dead preprocessor branch of the function whose body runs uses.
    unseen_uses: &'a [UnseenUse],
    block: [u32; 3],
    /// Access span → (array, access) pairs.
    accesses: HashMap<Span, Vec<(usize, usize)>>,
    /// Whether an access is a name (a record declared with no extent, `s.m[i]`): only then
    /// is a name looked up among the accesses.
    named_accesses: bool,
    /// Uses of an array's name that make a pointer (from the front end's escapes) → array.
    name_uses: HashMap<Span, usize>,
    /// Local names, innermost last; `scopes` marks where each block's names start.
    locals: Vec<(String, Value)>,
    scopes: Vec<usize>,
    params: HashMap<&'a str, bool>,
    shared: HashSet<&'a str>,
    loops: Vec<Loop>,
    enclosing: Vec<LoopId>,
    active: Sym,
    recording: bool,
    sites: Vec<Vec<Option<Site>>>,
    facts: HashMap<Atom, (u32, bool)>,
    fresh: usize,
    /// The calls being inlined, outermost first, and the functions they enter.
    calls: Vec<(Span, &'a str)>,
    /// While a macro body runs: the span of the macro's use in the source (spans inside the
    /// body are relative to the macro text and match nothing).
    macro_site: Option<Span>,
    /// The macros being expanded, outermost first.
    expanding: Vec<String>,
    aliases: Vec<AliasAccess>,
    followed: HashSet<Span>,
    pointer_escapes: Vec<PointerEscape>,
    opaque: Vec<(Span, String)>,
    lambdas: Vec<LambdaDef<'a>>,
    /// Statements executed so far (see [`MAX_STATEMENTS`]).
    statements: u64,
}

/// The functions of a file by name, for following calls.
pub struct Callees<'a> {
    by_name: HashMap<&'a str, Vec<Callee<'a>>>,
}

struct Callee<'a> {
    function: &'a Function,
    /// The body, unpacked the first time a call is followed into it.
    statements: OnceLock<Vec<Stmt>>,
}

impl<'a> Callees<'a> {
    pub fn new(functions: &'a [Function]) -> Self {
        let mut by_name: HashMap<&str, Vec<Callee>> = HashMap::new();
        for function in functions {
            by_name.entry(&function.name).or_default().push(Callee {
                function,
                statements: OnceLock::new(),
            });
        }
        Callees { by_name }
    }

    fn named(&self, name: &str) -> impl Iterator<Item = &'a Function> + '_ {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|callee| callee.function)
    }

    /// The statements of `function`, one of this file's.
    fn statements(&self, function: &Function) -> &[Stmt] {
        self.by_name
            .get(function.name.as_str())
            .into_iter()
            .flatten()
            .find(|callee| std::ptr::eq(callee.function, function))
            .map_or(&[], |callee| {
                callee.statements.get_or_init(|| function.body.statements())
            })
    }
}

/// Analyses every shared access of `function` on a block of shape `block`; `functions` are
/// the file's functions, for following pointers into calls.
pub fn analyse_function(
    function: &Function,
    functions: &Callees,
    block: [u32; 3],
    constants: &ConstEnv,
) -> FunctionAffine {
    let mut accesses: HashMap<Span, Vec<(usize, usize)>> = HashMap::new();
    let mut name_uses = HashMap::new();
    for (a, array) in function.arrays.iter().enumerate() {
        for (i, access) in array.accesses.iter().enumerate() {
            accesses.entry(access.span).or_default().push((a, i));
        }
        for escape in &array.escapes {
            if let Some(span) = escape.name_use {
                name_uses.insert(span, a);
            }
        }
    }
    let statements = function.body.statements();
    let mut executor = Executor {
        function,
        functions,
        constants,
        bindings: &function.bindings,
        unseen_uses: &function.unseen_uses,
        block,
        accesses,
        named_accesses: function.arrays.iter().any(|a| a.record_scalar),
        name_uses,
        locals: Vec::new(),
        scopes: Vec::new(),
        params: function
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.pointer || p.array || !is_integer(&p.ty)))
            .collect(),
        shared: function.arrays.iter().map(|a| a.name.as_str()).collect(),
        loops: Vec::new(),
        enclosing: Vec::new(),
        active: Sym::Const(1),
        recording: true,
        sites: function
            .arrays
            .iter()
            .map(|a| vec![None; a.accesses.len()])
            .collect(),
        facts: HashMap::new(),
        fresh: 0,
        calls: Vec::new(),
        macro_site: None,
        expanding: Vec::new(),
        aliases: Vec::new(),
        followed: HashSet::new(),
        pointer_escapes: Vec::new(),
        opaque: Vec::new(),
        lambdas: Vec::new(),
        statements: 0,
    };
    executor.block_of(&statements);
    let exhausted = executor.statements > MAX_STATEMENTS;
    let mut result = FunctionAffine {
        loops: executor.loops,
        sites: executor.sites,
        aliases: executor.aliases,
        followed: executor.followed,
        pointer_escapes: executor.pointer_escapes,
        opaque: executor.opaque,
        facts: executor.facts,
        block,
        exhausted,
    };
    let facts = Facts {
        block,
        facts: &result.facts,
    };
    let mut sites = std::mem::take(&mut result.sites);
    let mut aliases = std::mem::take(&mut result.aliases);
    let alias_sites = aliases.iter_mut().map(|alias| &mut alias.site);
    for site in sites.iter_mut().flatten().flatten().chain(alias_sites) {
        site.form = normalize(&site.index, &facts);
        site.class = match &site.form {
            Ok(form) => classify(form, block, 32, 0),
            Err(why) => Class::Random(why.to_string()),
        };
        if let Err(NotAffine::VariesByIteration(_)) = site.form {
            site.iterations = result.specialise(site, &facts).unwrap_or_default();
            if let Some(first) = site.iterations.first() {
                site.class = first.class.clone();
            }
        }
    }
    result.sites = sites;
    result.aliases = aliases;
    result.share_subtrees();
    result
}

impl FunctionAffine {
    /// Every combination of the values of the loops around `site` (outermost first).
    pub fn loop_points(&self, loops: &[LoopId], limit: usize) -> Result<Vec<LoopPoint>, String> {
        let mut points = vec![LoopPoint::default()];
        for &id in loops {
            let atom = self.loop_atom(id);
            let mut next = Vec::new();
            for point in &points {
                for value in self.loop_values(id, point)? {
                    if next.len() == limit {
                        return Err(format!("more than {limit} iterations"));
                    }
                    let mut extended = point.clone();
                    extended.0.push((atom.clone(), value));
                    next.push(extended);
                }
            }
            points = next;
        }
        Ok(points)
    }

    pub fn loop_atom(&self, id: LoopId) -> Atom {
        let name = self.loops[id].name.clone();
        match self.loops[id].values {
            LoopValues::Counter { .. } | LoopValues::Trips { .. } => Atom::Loop { id, name },
            LoopValues::Unknown(_) => Atom::Uniform(name),
        }
    }

    fn specialise(&self, site: &Site, facts: &Facts) -> Option<Vec<Iteration>> {
        let points = self.loop_points(&site.loops, MAX_LISTED_ITERATIONS).ok()?;
        points
            .iter()
            .map(|point| {
                let index = site
                    .index
                    .substitute(&|atom| point.value(atom).map(Sym::Const));
                let form = normalize(&index, facts).ok()?;
                let class = classify(&form, self.block, 32, 0);
                let loop_values = point
                    .0
                    .iter()
                    .map(|(atom, v)| (atom.to_string(), *v))
                    .collect();
                Some(Iteration {
                    loop_values,
                    form,
                    class,
                })
            })
            .collect()
    }
}

/// Whether a declared type holds an integer the analysis follows.
fn is_integer(ty: &str) -> bool {
    let words: Vec<&str> = ty
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| {
            !w.is_empty()
                && !matches!(
                    *w,
                    "const" | "volatile" | "constexpr" | "static" | "register" | "std"
                )
        })
        .collect();
    !words.is_empty()
        && words.iter().all(|w| {
            matches!(
                *w,
                "int"
                    | "unsigned"
                    | "signed"
                    | "short"
                    | "long"
                    | "char"
                    | "bool"
                    | "size_t"
                    | "uint"
                    | "ushort"
                    | "uchar"
                    | "ulong"
                    | "auto"
                    | "ptrdiff_t"
            ) || (w.starts_with("int") || w.starts_with("uint")) && w.ends_with("_t")
        })
}
