//! Symbolic execution of one function body: follows local variables through their
//! definitions (in statement order, with branches joined by a select and loops given
//! counters), and records for every shared access its element index as a [`Sym`], the loops
//! around it and the condition under which a lane executes it.
use super::class::{classify, Class};
use super::digits::{normalize, Context, DigitAffine, NotAffine};
use super::sym::{Atom, AtomValues, Axis, LoopId, Op, Sym, Unknown};
use crate::parse::{
    is_atomic, AccessKind, BinaryOp, Bindings, ConstEnv, Decl, EscapeKind, Expr, ExprKind,
    Function, Lambda, Span, Stmt, UnaryOp,
};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// Loops are simulated up to this many iterations; beyond, the counter is a uniform unknown.
pub const MAX_TRIPS: usize = 1 << 16;
/// Nesting beyond which loop-carried variables are not followed (each level runs its body
/// twice).
const MAX_INDUCTION_DEPTH: usize = 6;

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
            Step::Shl(k) => Op::Shl.apply(v, k),
            Step::Shr(k) => Op::Shr.apply(v, k),
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
    /// Alignment (log2) and non-negativity of each atom that is not a thread index.
    facts: HashMap<Atom, (u32, bool)>,
    block: [u32; 3],
}

impl FunctionAffine {
    pub fn block(&self) -> [u32; 3] {
        self.block
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

/// A lambda defined in the body, run where it is called.
struct LambdaDef<'a> {
    lambda: &'a Lambda,
    /// By copy: the enclosing variables as they were at the definition.
    captured: Option<Vec<(String, Value)>>,
    called: bool,
}

/// A pointer into one of the analysed function's shared arrays.
#[derive(Debug, Clone, PartialEq)]
struct Pointer {
    array: usize,
    /// Offset from the array's start, in elements.
    offset: Sym,
    /// The extents below the one the pointer steps over: empty for a pointer to elements,
    /// `[33]` for `float tile[32][33]` decayed to a pointer to its rows.
    inner: Vec<i64>,
    /// The uses of the array's name it was made from.
    origins: Vec<Span>,
}

impl Pointer {
    /// `self + by`, in steps of what it points to.
    fn advanced(&self, by: Sym) -> Pointer {
        let step: i64 = self.inner.iter().product();
        Pointer {
            offset: Sym::binary(
                Op::Add,
                self.offset.clone(),
                Sym::binary(Op::Mul, by, Sym::Const(step)),
            ),
            ..self.clone()
        }
    }

    /// The same address as a pointer to single elements (`tile[i]` decays to `&tile[i][0]`).
    fn to_elements(&self) -> Pointer {
        Pointer {
            inner: Vec::new(),
            ..self.clone()
        }
    }

    fn same_target(&self, other: &Pointer) -> bool {
        self.array == other.array && self.inner == other.inner
    }

    fn merged_origins(&self, other: &Pointer) -> Vec<Span> {
        let mut origins = self.origins.clone();
        origins.extend(other.origins.iter().copied());
        origins.sort_by_key(|s| (s.start, s.end));
        origins.dedup();
        origins
    }
}

/// Where a pointer was made (for diagnostics).
fn origin(pointer: &Pointer) -> Span {
    pointer
        .origins
        .first()
        .copied()
        .unwrap_or(Span { start: 0, end: 0 })
}

/// An element of a shared array reached through a pointer, and the member path touched.
struct Place {
    pointer: Pointer,
    member: Option<String>,
    /// The values of the subscripts in `member`, in order.
    member_subscripts: Vec<Sym>,
    /// The constant offset of the pointer it was reached from (see `AliasAccess`).
    base_offset: Option<i64>,
}

/// What an expression designates: a shared element reached through a pointer, or a value.
enum Lvalue {
    Place(Place),
    Value(Value),
}

struct Executor<'a> {
    function: &'a Function,
    /// The file's functions, for inlining calls that pass a pointer into a shared array.
    functions: &'a Callees<'a>,
    constants: &'a ConstEnv,
    /// Template bindings of the function whose body runs (the callee's while inlining).
    bindings: &'a Bindings,
    block: [u32; 3],
    /// Access span → (array, access) pairs.
    accesses: HashMap<Span, Vec<(usize, usize)>>,
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
    aliases: Vec<AliasAccess>,
    followed: HashSet<Span>,
    pointer_escapes: Vec<PointerEscape>,
    lambdas: Vec<LambdaDef<'a>>,
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

/// Calls inlined inside one another beyond which a pointer argument is not followed.
const MAX_INLINE_DEPTH: usize = 8;

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
        block,
        accesses,
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
        aliases: Vec::new(),
        followed: HashSet::new(),
        pointer_escapes: Vec::new(),
        lambdas: Vec::new(),
    };
    executor.block_of(&statements);
    let mut result = FunctionAffine {
        loops: executor.loops,
        sites: executor.sites,
        aliases: executor.aliases,
        followed: executor.followed,
        pointer_escapes: executor.pointer_escapes,
        facts: executor.facts,
        block,
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

impl<'a> Executor<'a> {
    fn block_of(&mut self, stmts: &'a [Stmt]) {
        self.scopes.push(self.locals.len());
        for stmt in stmts {
            self.stmt(stmt);
        }
        let start = self.scopes.pop().unwrap_or(0);
        self.locals.truncate(start);
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Decl(decl) => self.declare(decl),
            Stmt::Expr(expr) => {
                self.eval(expr);
            }
            Stmt::Block(stmts) => self.block_of(stmts),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.eval_int(cond);
                self.branches(&c, |ex| ex.block_of(then), |ex| ex.block_of(otherwise));
            }
            Stmt::Switch { cond, body } => {
                let c = self.eval_int(cond);
                let unknown = Sym::Unknown(Unknown::DataDependent(format!("switch on `{c}`")));
                self.branches(&unknown, |ex| ex.block_of(body), |_| {});
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                self.scopes.push(self.locals.len());
                for stmt in init {
                    self.stmt(stmt);
                }
                self.for_loop(init, cond.as_ref(), update, body);
                let start = self.scopes.pop().unwrap_or(0);
                self.locals.truncate(start);
            }
            Stmt::While { cond, body } => self.opaque_loop(Some(cond), body, true),
            Stmt::DoWhile { body, cond } => self.opaque_loop(Some(cond), body, false),
            Stmt::Return(value) => {
                if let Some(value) = value {
                    let v = self.eval(value);
                    self.lose(v, value, EscapeKind::Returned);
                }
                self.active = Sym::Const(0);
            }
            // The rest of this iteration is skipped; later iterations are still counted.
            Stmt::Break | Stmt::Continue => self.active = Sym::Const(0),
            Stmt::Lambda(lambda) => {
                let captured = (!lambda.by_reference).then(|| self.locals.clone());
                self.lambdas.push(LambdaDef {
                    lambda,
                    captured,
                    called: false,
                });
                let value = Value::Lambda(self.lambdas.len() - 1);
                self.locals.push((lambda.name.clone(), value));
            }
            Stmt::Opaque {
                assigned,
                exprs,
                span,
                ..
            } => {
                for expr in exprs {
                    let v = self.eval(expr);
                    self.lose(v, expr, EscapeKind::UsedAsPointer);
                }
                for name in assigned {
                    if let Some(Value::Pointer(p)) = self.lookup(name).cloned() {
                        let why = format!("`{name}` is assigned where the analysis cannot see");
                        self.escape(&p, *span, EscapeKind::Pointer(why));
                    }
                    self.forget(name);
                }
            }
        }
    }

    /// Runs two branches under `c` and `!c`, then joins what they assigned with a select.
    fn branches(
        &mut self,
        c: &Sym,
        then: impl FnOnce(&mut Self),
        otherwise: impl FnOnce(&mut Self),
    ) {
        let before_locals = self.locals.clone();
        let before_active = self.active.clone();
        self.active = Sym::binary(Op::LogAnd, before_active.clone(), c.clone());
        let then_start = self.active.clone();
        then(self);
        let then_locals = std::mem::replace(&mut self.locals, before_locals);
        let then_active = std::mem::replace(
            &mut self.active,
            Sym::binary(
                Op::LogAnd,
                before_active.clone(),
                Sym::logical_not(c.clone()),
            ),
        );
        let else_start = self.active.clone();
        otherwise(self);
        let else_active = self.active.clone();
        let mut joined = Vec::new();
        for (i, ((name, else_value), (_, then_value))) in
            self.locals.iter().zip(then_locals).enumerate()
        {
            if *else_value != then_value {
                joined.push((i, name.clone(), then_value, else_value.clone()));
            }
        }
        for (i, name, then_value, else_value) in joined {
            let why = format!("`{name}` set on one branch");
            self.locals[i].1 = self.join(c, then_value, else_value, why);
        }
        let then_same = then_active == then_start;
        let else_same = else_active == else_start;
        self.active = match (then_same, else_same) {
            (true, true) => before_active,
            (false, true) if then_active == Sym::Const(0) => else_start,
            (true, false) if else_active == Sym::Const(0) => then_start,
            _ => Sym::binary(Op::LogOr, then_active, else_active),
        };
    }

    /// `c ? then : otherwise` as one value. A pointer joined with anything but a pointer into
    /// the same array goes out of sight: accesses through the result could hit either.
    fn join(&mut self, c: &Sym, then: Value, otherwise: Value, why: String) -> Value {
        match (then, otherwise) {
            (Value::Int(t), Value::Int(e)) => Value::Int(Sym::select(c.clone(), t, e)),
            (Value::Pointer(t), Value::Pointer(e)) if t.same_target(&e) => {
                Value::Pointer(Pointer {
                    offset: Sym::select(c.clone(), t.offset.clone(), e.offset.clone()),
                    origins: t.merged_origins(&e),
                    ..t
                })
            }
            (t, e) => {
                for value in [&t, &e] {
                    if let Value::Pointer(p) = value {
                        self.escape(
                            p,
                            origin(p),
                            EscapeKind::Pointer(format!("may point elsewhere: {why}")),
                        );
                    }
                }
                Value::Data(why)
            }
        }
    }

    fn declare(&mut self, decl: &Decl) {
        if decl.is_shared {
            return;
        }
        let value = match &decl.init {
            Some(init) => match self.eval(init) {
                Value::Pointer(p) if decl.reference || decl.array => {
                    let kind = if decl.reference {
                        EscapeKind::BoundToReference(decl.name.clone())
                    } else {
                        EscapeKind::Pointer(format!("is stored in array `{}`", decl.name))
                    };
                    self.escape(&p, init.span, kind);
                    Value::Data(format!("`{}`", decl.name))
                }
                value @ (Value::Pointer(_) | Value::Group(_)) => value,
                _ if decl.pointer || decl.array || decl.reference || !is_integer(&decl.ty) => {
                    Value::Data(format!("`{}`", decl.name))
                }
                v => v,
            },
            None if decl.pointer || decl.array || !is_integer(&decl.ty) => {
                Value::Data(format!("`{}`", decl.name))
            }
            None => Value::Int(Sym::Unknown(Unknown::UnknownName(decl.name.clone()))),
        };
        self.locals.push((decl.name.clone(), value));
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    fn assign(&mut self, name: &str, value: Value) -> bool {
        match self.locals.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1 = value;
                true
            }
            None => false,
        }
    }

    /// Makes `name`'s value unknown; a pointer keeps its array (every value a loop can give
    /// it is checked to be one, see `settle`).
    fn forget(&mut self, name: &str) {
        self.stand_in(name, Sym::Unknown(Unknown::Reassigned(name.to_string())));
    }

    /// Gives `name` the value `sym`: its offset, when it holds a pointer.
    fn stand_in(&mut self, name: &str, sym: Sym) {
        let value = match self.lookup(name) {
            Some(Value::Pointer(p)) => Value::Pointer(Pointer {
                offset: sym,
                ..p.clone()
            }),
            _ => Value::Int(sym),
        };
        self.assign(name, value);
    }

    /// After one run of a loop body from `start` (each name's value on entry): a name that
    /// holds a pointer at one end and something else at the other may point into the array
    /// in iterations the single run did not see.
    fn settle(&mut self, start: &[(String, Option<Value>)]) {
        for (name, before) in start {
            let after = self.lookup(name).cloned();
            let escaped = match (before, &after) {
                (Some(Value::Pointer(b)), Some(Value::Pointer(a))) if b.same_target(a) => None,
                (Some(Value::Pointer(p)), _) | (_, Some(Value::Pointer(p))) => Some(p.clone()),
                _ => None,
            };
            if let Some(p) = escaped {
                let why = format!("`{name}` changes what it points to inside a loop");
                self.escape(&p, origin(&p), EscapeKind::Pointer(why));
                self.assign(name, Value::Data(format!("`{name}`")));
            }
        }
    }

    fn values_of(&self, names: &[String]) -> Vec<(String, Option<Value>)> {
        names
            .iter()
            .map(|n| (n.clone(), self.lookup(n).cloned()))
            .collect()
    }

    /// A fresh uniform atom standing for an unknown but warp-uniform value.
    fn fresh_uniform(&mut self, name: &str) -> Atom {
        self.fresh += 1;
        Atom::Uniform(format!("{name}'{}", self.fresh))
    }

    fn for_loop(&mut self, init: &[Stmt], cond: Option<&Expr>, update: &[Expr], body: &'a [Stmt]) {
        let counter = init.iter().rev().find_map(|stmt| match stmt {
            Stmt::Decl(decl) => Some(decl.name.clone()),
            Stmt::Expr(Expr {
                kind: ExprKind::Assign { target, .. },
                ..
            }) => match &target.kind {
                ExprKind::Name(name) => Some(name.clone()),
                _ => None,
            },
            _ => None,
        });
        let step = counter.as_deref().and_then(|c| self.step_of(c, update));
        let start = counter
            .as_deref()
            .and_then(|c| self.lookup(c).cloned())
            .and_then(|v| match v {
                Value::Int(sym) if sym.unknown().is_none() => Some(sym),
                _ => None,
            });
        let (Some(name), Some(step), Some(init)) = (counter, step, start) else {
            self.uncounted_loop(cond, body, update);
            return;
        };
        let id = self.loops.len();
        let thread_dependent = init.mentions_thread();
        let (atom, counter_value) = if thread_dependent {
            // i = init + step·k over the iteration number k.
            let Step::Add(stride) = step else {
                self.uncounted_loop(cond, body, update);
                return;
            };
            let atom = Atom::Loop {
                id,
                name: format!("k_{name}"),
            };
            let value = Sym::binary(
                Op::Add,
                init.clone(),
                Sym::binary(Op::Mul, Sym::Atom(atom.clone()), Sym::Const(stride)),
            );
            (atom, value)
        } else {
            let atom = Atom::Loop {
                id,
                name: name.clone(),
            };
            (atom.clone(), Sym::Atom(atom))
        };
        self.assign(&name, Value::Int(counter_value.clone()));
        let cond_sym = match cond {
            Some(c) => {
                let recording = std::mem::replace(&mut self.recording, false);
                let v = self.eval_int(c);
                self.recording = recording;
                v
            }
            None => Sym::Const(1),
        };
        // Bounds on something unknown (a parameter, blockIdx): the counter is a uniform
        // unknown.
        let evaluable = |sym: &Sym| {
            sym.unknown().is_none() && sym.atoms().iter().all(|a| !matches!(a, Atom::Uniform(_)))
        };
        let bounded = evaluable(&cond_sym) && (thread_dependent || evaluable(&init));
        let (atom, counter_value, cond_sym, values) = if bounded {
            let values = if thread_dependent {
                LoopValues::Trips {
                    cond: cond_sym.clone(),
                }
            } else {
                LoopValues::Counter {
                    init: init.clone(),
                    cond: Some(cond_sym.clone()),
                    step,
                }
            };
            (atom, counter_value, cond_sym, values)
        } else {
            let uniform = Atom::Uniform(atom.to_string());
            let swap = |sym: &Sym| {
                sym.substitute(&|a: &Atom| (a == &atom).then(|| Sym::Atom(uniform.clone())))
            };
            let values = LoopValues::Unknown(format!(
                "the bounds of loop `{name}` depend on values the analysis does not know"
            ));
            (
                uniform.clone(),
                swap(&counter_value),
                swap(&cond_sym),
                values,
            )
        };
        self.assign(&name, Value::Int(counter_value.clone()));
        self.record_facts(&atom, &values, &init, step);
        let progress = Progress::of(&counter_value, &init, step);
        // Where the counter stops, when the loop runs the same way in every case.
        let exit = match (&values, thread_dependent || may_leave_early(body)) {
            (LoopValues::Counter { init, cond, step }, false) => {
                exit_value(&atom, init, cond.as_ref(), *step).map(|v| (atom.clone(), v))
            }
            _ => None,
        };
        self.loops.push(Loop {
            name: atom.to_string(),
            values,
            parent: self.enclosing.last().copied(),
        });
        let outer_active = self.active.clone();
        if thread_dependent {
            // Each thread runs only the iterations its own counter allows.
            self.active = Sym::binary(Op::LogAnd, self.active.clone(), cond_sym);
        }
        self.enclosing.push(id);
        self.loop_body(body, &name, progress, update, exit.as_ref());
        self.enclosing.pop();
        self.active = outer_active;
        match exit {
            Some((_, value)) => {
                self.assign(&name, Value::Int(Sym::Const(value)));
            }
            None => self.forget(&name),
        }
    }

    /// A `for` loop without a counter the analysis can step.
    fn uncounted_loop(&mut self, cond: Option<&Expr>, body: &'a [Stmt], update: &[Expr]) {
        let mut assigned = Vec::new();
        for expr in update {
            assigned_in_expr(expr, &mut assigned);
        }
        for name in &assigned {
            self.forget(name);
        }
        let start = self.values_of(&assigned);
        self.opaque_loop(cond, body, true);
        for expr in update {
            self.eval(expr);
        }
        self.settle(&start);
        for name in &assigned {
            self.forget(name);
        }
    }

    fn record_facts(&mut self, atom: &Atom, values: &LoopValues, init: &Sym, step: Step) {
        let facts = match values {
            LoopValues::Trips { .. } => (0, true),
            LoopValues::Counter { .. } | LoopValues::Unknown(_) => {
                let init_alignment = match init.constant() {
                    Some(0) => 62,
                    Some(v) => v.trailing_zeros(),
                    None => 0,
                };
                let alignment = match step {
                    Step::Add(k) => init_alignment.min(k.trailing_zeros()),
                    Step::Mul(_) | Step::Shl(_) => init_alignment,
                    Step::Shr(_) | Step::Div(_) => 0,
                };
                let nonnegative = init.constant().is_some_and(|v| v >= 0)
                    && match step {
                        Step::Add(k) => k >= 0,
                        Step::Mul(k) | Step::Div(k) => k > 0,
                        Step::Shl(_) | Step::Shr(_) => true,
                    };
                (alignment, nonnegative)
            }
        };
        self.facts.insert(atom.clone(), facts);
    }

    /// The counter's step when `update` is a single `+= k`, `-= k`, `++`, `--`, `*= k`,
    /// `<<= k`, `>>= k`, `/= k` (or `i = i op k`) with a constant `k`.
    fn step_of(&mut self, counter: &str, update: &[Expr]) -> Option<Step> {
        let [update] = update else { return None };
        let is_counter = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == counter);
        let constant = |ex: &mut Self, e: &Expr| ex.constant_of(e);
        match &update.kind {
            ExprKind::Step {
                increment, operand, ..
            } if is_counter(operand) => Some(Step::Add(if *increment { 1 } else { -1 })),
            ExprKind::Assign { op, target, value } if is_counter(target) => {
                let (op, k) = match op {
                    Some(op) => (*op, constant(self, value)?),
                    None => match &value.kind {
                        ExprKind::Binary { op, lhs, rhs } if is_counter(lhs) => {
                            (*op, constant(self, rhs)?)
                        }
                        ExprKind::Binary {
                            op: op @ (BinaryOp::Add | BinaryOp::Mul),
                            lhs,
                            rhs,
                        } if is_counter(rhs) => (*op, constant(self, lhs)?),
                        _ => return None,
                    },
                };
                match op {
                    BinaryOp::Add => Some(Step::Add(k)),
                    BinaryOp::Sub => Some(Step::Add(k.checked_neg()?)),
                    BinaryOp::Mul => Some(Step::Mul(k)),
                    BinaryOp::Shl => Some(Step::Shl(k)),
                    BinaryOp::Shr => Some(Step::Shr(k)),
                    BinaryOp::Div => Some(Step::Div(k)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn constant_of(&mut self, expr: &Expr) -> Option<i64> {
        let recording = std::mem::replace(&mut self.recording, false);
        let value = self.eval_int(expr).constant();
        self.recording = recording;
        value
    }

    /// Runs a loop body once with every variable it assigns (other than the counter) made
    /// an induction of the counter when it is one, unknown otherwise. With `exit` (the
    /// counter's atom and the value it stops at), an induction keeps its value after the loop.
    fn loop_body(
        &mut self,
        body: &'a [Stmt],
        counter: &str,
        progress: Option<Progress>,
        update: &[Expr],
        exit: Option<&(Atom, i64)>,
    ) {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        for expr in update {
            assigned_in_expr(expr, &mut assigned);
        }
        assigned.retain(|n| n != counter && self.lookup(n).is_some());
        assigned.sort();
        assigned.dedup();
        let mut inductions = Vec::new();
        if let (Some(progress), false) = (
            progress,
            self.enclosing.len() > MAX_INDUCTION_DEPTH || assigned.is_empty(),
        ) {
            // Dry run with each variable a placeholder for its value on entry.
            let saved_locals = self.locals.clone();
            let saved_active = self.active.clone();
            let recording = std::mem::replace(&mut self.recording, false);
            let placeholders: Vec<Atom> = assigned
                .iter()
                .map(|name| self.fresh_uniform(name))
                .collect();
            for (name, atom) in assigned.iter().zip(&placeholders) {
                self.stand_in(name, Sym::Atom(atom.clone()));
            }
            self.block_of(body);
            for expr in update {
                self.eval(expr);
            }
            let ends: Vec<Option<Value>> =
                assigned.iter().map(|n| self.lookup(n).cloned()).collect();
            self.locals = saved_locals;
            self.active = saved_active;
            self.recording = recording;
            for ((name, atom), end) in assigned.iter().zip(&placeholders).zip(ends) {
                let value = match (self.lookup(name).cloned(), end) {
                    (Some(Value::Int(v0)), Some(Value::Int(end))) => {
                        induction(atom, &v0, &end, &progress).map(Value::Int)
                    }
                    (Some(Value::Pointer(p0)), Some(Value::Pointer(end)))
                        if p0.same_target(&end) =>
                    {
                        induction(atom, &p0.offset, &end.offset, &progress).map(|offset| {
                            Value::Pointer(Pointer {
                                offset,
                                origins: p0.merged_origins(&end),
                                ..p0
                            })
                        })
                    }
                    _ => None,
                };
                inductions.push((name.clone(), value));
            }
        }
        for name in &assigned {
            let value = inductions
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone());
            match value {
                Some(v) => {
                    self.assign(name, v);
                }
                None => self.forget(name),
            }
        }
        let start = self.values_of(&assigned);
        let active = self.active.clone();
        self.block_of(body);
        self.active = active;
        let recording = std::mem::replace(&mut self.recording, false);
        for expr in update {
            self.eval(expr);
        }
        self.recording = recording;
        self.settle(&start);
        for name in &assigned {
            let induction = inductions.iter().find(|(n, _)| n == name);
            let after = match (exit, induction) {
                (Some((atom, value)), Some((_, Some(Value::Int(sym))))) => Some(Value::Int(
                    sym.substitute(&|a| (a == atom).then_some(Sym::Const(*value))),
                )),
                (Some((atom, value)), Some((_, Some(Value::Pointer(p))))) => {
                    Some(Value::Pointer(Pointer {
                        offset: p
                            .offset
                            .substitute(&|a| (a == atom).then_some(Sym::Const(*value))),
                        ..p.clone()
                    }))
                }
                _ => None,
            };
            match after {
                Some(value) => {
                    self.assign(name, value);
                }
                None => self.forget(name),
            }
        }
    }

    /// A `while`/`do` loop or a `for` the analysis cannot count: its body is analysed once,
    /// with every variable it assigns unknown.
    fn opaque_loop(&mut self, cond: Option<&Expr>, body: &'a [Stmt], cond_first: bool) {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        if let Some(cond) = cond {
            assigned_in_expr(cond, &mut assigned);
        }
        for name in &assigned {
            self.forget(name);
        }
        let start = self.values_of(&assigned);
        let active = self.active.clone();
        if let (Some(cond), true) = (cond, cond_first) {
            let c = self.eval_int(cond);
            self.active = Sym::binary(Op::LogAnd, active.clone(), c);
        }
        self.block_of(body);
        if let (Some(cond), false) = (cond, cond_first) {
            self.eval(cond);
        }
        self.active = active;
        self.settle(&start);
        for name in &assigned {
            self.forget(name);
        }
    }

    /// The direct accesses (front-end subscripts of the array's name) at `expr`, if any.
    fn direct(&self, expr: &Expr) -> Option<Vec<(usize, usize)>> {
        if self.macro_site.is_some() || !matches!(expr.kind, ExprKind::Index { .. }) {
            return None;
        }
        self.accesses.get(&expr.span).cloned()
    }

    fn eval(&mut self, expr: &Expr) -> Value {
        if let Some(entries) = self.direct(expr) {
            self.record(&entries);
            return Value::Data(format!("shared `{}`", expr));
        }
        match &expr.kind {
            ExprKind::Int(v) => Value::Int(Sym::Const(*v)),
            ExprKind::Float(_) => Value::Data("a float".into()),
            ExprKind::Name(name) => match self.name_use(expr) {
                Some(array) => self.array_pointer(array, expr),
                None => self.name(name, expr.span),
            },
            // `threadIdx.x` and the other built-ins are values of `lvalue` too.
            ExprKind::Member { .. }
            | ExprKind::Index { .. }
            | ExprKind::Unary {
                op: UnaryOp::Deref, ..
            } => match self.lvalue(expr) {
                Lvalue::Place(place) => {
                    self.record_alias(&place, AccessKind::Load, None, expr);
                    Value::Data(format!("shared `{expr}`"))
                }
                Lvalue::Value(v) => v,
            },
            ExprKind::Unary {
                op: UnaryOp::AddressOf,
                operand,
            } => match self.lvalue(operand) {
                Lvalue::Place(Place {
                    pointer,
                    member: None,
                    ..
                }) => Value::Pointer(pointer),
                Lvalue::Place(place) => {
                    self.escape(&place.pointer, expr.span, EscapeKind::AddressTaken);
                    Value::Data(format!("`{expr}`"))
                }
                Lvalue::Value(v) => {
                    self.lose(v, expr, EscapeKind::AddressTaken);
                    Value::Data(format!("`{expr}`"))
                }
            },
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand);
                match op {
                    UnaryOp::Plus => v,
                    UnaryOp::Neg => Value::Int(Sym::negate(self.int(v, operand))),
                    UnaryOp::Not => Value::Int(Sym::logical_not(self.int(v, operand))),
                    UnaryOp::BitNot => Value::Int(Sym::bit_not(self.int(v, operand))),
                    UnaryOp::AddressOf | UnaryOp::Deref => Value::Data(format!("`{expr}`")),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.eval(lhs);
                // `&&`/`||` short-circuit: the right side runs only when the left allows it.
                let r = match op {
                    BinaryOp::LogAnd | BinaryOp::LogOr => {
                        let l = self.int(l.clone(), lhs);
                        let active = self.active.clone();
                        let guard = if *op == BinaryOp::LogAnd {
                            l
                        } else {
                            Sym::logical_not(l)
                        };
                        self.active = Sym::binary(Op::LogAnd, active.clone(), guard);
                        let r = self.eval(rhs);
                        self.active = active;
                        r
                    }
                    _ => self.eval(rhs),
                };
                self.binary(*op, l, r, lhs, rhs)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                let c = self.eval_int(cond);
                let active = self.active.clone();
                self.active = Sym::binary(Op::LogAnd, active.clone(), c.clone());
                let t = self.eval(then);
                self.active = Sym::binary(Op::LogAnd, active.clone(), Sym::logical_not(c.clone()));
                let e = self.eval(otherwise);
                self.active = active;
                match (t, e) {
                    (Value::Data(d), Value::Data(_) | Value::Int(_))
                    | (Value::Int(_), Value::Data(d)) => Value::Data(d),
                    (t, e) => self.join(&c, t, e, format!("`{expr}`")),
                }
            }
            ExprKind::Assign { op, target, value } => self.assignment(*op, target, value, expr),
            ExprKind::Step {
                increment,
                prefix,
                operand,
            } => match &operand.kind {
                ExprKind::Name(name) if self.name_use(operand).is_none() => {
                    let old = self.name(name, operand.span);
                    let by = Sym::Const(if *increment { 1 } else { -1 });
                    let new = match &old {
                        Value::Pointer(p) => Value::Pointer(p.advanced(by)),
                        other => {
                            Value::Int(Sym::binary(Op::Add, self.int(other.clone(), operand), by))
                        }
                    };
                    if matches!(self.lookup(name), Some(Value::Int(_) | Value::Pointer(_))) {
                        self.assign(name, new.clone());
                    }
                    if *prefix {
                        new
                    } else {
                        old
                    }
                }
                _ => {
                    if let Lvalue::Place(place) = self.lvalue(operand) {
                        self.record_alias(&place, AccessKind::Load, None, operand);
                        self.record_alias(&place, AccessKind::Store, None, operand);
                    }
                    Value::Data(format!("`{expr}`"))
                }
            },
            ExprKind::Call { callee, args, .. } => self.call(callee, args, expr),
            ExprKind::Cast { ty, operand } => self.cast(ty, operand, expr),
            ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => {
                match self.constants.eval(expr, self.bindings) {
                    Ok(v) => Value::Int(Sym::Const(v)),
                    Err(_) => Value::Data(format!("`{expr}`")),
                }
            }
            ExprKind::Comma { first, second } => {
                self.eval(first);
                self.eval(second)
            }
            ExprKind::Opaque(what) => Value::Data(what.clone()),
        }
    }

    /// `(ty)operand`, `static_cast<ty>(operand)`.
    fn cast(&mut self, ty: &str, operand: &Expr, expr: &Expr) -> Value {
        match self.eval(operand) {
            Value::Pointer(p) if self.keeps_elements(p.array, ty) => {
                Value::Pointer(p.to_elements())
            }
            Value::Pointer(p) => {
                self.escape(&p, expr.span, EscapeKind::Cast(ty.to_string()));
                Value::Data(format!("cast to `{ty}`"))
            }
            v if is_integer(ty) => v,
            _ => Value::Data(format!("cast to `{ty}`")),
        }
    }

    fn eval_int(&mut self, expr: &Expr) -> Sym {
        let v = self.eval(expr);
        self.int(v, expr)
    }

    /// `value` as an integer; a pointer used as one is out of sight.
    fn int(&mut self, value: Value, at: &Expr) -> Sym {
        match value {
            Value::Int(sym) => sym,
            Value::Data(what) => Sym::Unknown(Unknown::DataDependent(what)),
            Value::Group(_) | Value::Lambda(_) => {
                Sym::Unknown(Unknown::DataDependent(format!("`{at}`")))
            }
            Value::Pointer(p) => {
                self.escape(&p, at.span, EscapeKind::UsedAsPointer);
                Sym::Unknown(Unknown::DataDependent(format!("`{at}`")))
            }
        }
    }

    /// Drops `value`; a pointer dropped this way is out of sight (`why`).
    fn lose(&mut self, value: Value, at: &Expr, kind: EscapeKind) {
        if let Value::Pointer(p) = value {
            self.escape(&p, at.span, kind);
        }
    }

    /// `pointer` goes out of sight at `span`; a `Pointer(why)` reason reads as a sentence
    /// about it.
    fn escape(&mut self, pointer: &Pointer, span: Span, kind: EscapeKind) {
        let array = &self.function.arrays[pointer.array].name;
        let kind = match kind {
            EscapeKind::Pointer(why) => {
                EscapeKind::Pointer(format!("a pointer into `{array}` {why}"))
            }
            other => other,
        };
        self.escape_array(pointer.array, span, kind);
    }

    fn escape_array(&mut self, array: usize, span: Span, kind: EscapeKind) {
        self.pointer_escapes.push(PointerEscape {
            array,
            span: self.macro_site.unwrap_or(span),
            kind,
            calls: self.calls.iter().map(|(span, _)| *span).collect(),
        });
    }

    /// The array whose name `expr` uses to make a pointer (an escape of the front end).
    fn name_use(&self, expr: &Expr) -> Option<usize> {
        if self.macro_site.is_some() || !self.calls.is_empty() {
            return None;
        }
        self.name_uses.get(&expr.span).copied()
    }

    /// The array's name as a value: a pointer to its first element (row, for 2-D and up).
    fn array_pointer(&mut self, array: usize, expr: &Expr) -> Value {
        self.followed.insert(expr.span);
        let dims = &self.function.arrays[array].dims;
        let inner: Option<Vec<i64>> = dims
            .iter()
            .skip(1)
            .map(|d| d.and_then(|d| i64::try_from(d).ok()))
            .collect();
        let pointer = Pointer {
            array,
            offset: Sym::Const(0),
            inner: inner.clone().unwrap_or_default(),
            origins: vec![expr.span],
        };
        if inner.is_none() {
            self.escape(
                &pointer,
                expr.span,
                EscapeKind::Pointer("has an unknown extent".into()),
            );
            return Value::Data(format!("`{expr}`"));
        }
        Value::Pointer(pointer)
    }

    /// Whether a cast to `ty` leaves a pointer into `array` a pointer to its elements
    /// (`(float *)tile`, `(volatile float *)s`).
    fn keeps_elements(&self, array: usize, ty: &str) -> bool {
        let words = |t: &str| -> Vec<String> {
            t.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict__"))
                .map(str::to_string)
                .collect()
        };
        let Some(pointee) = ty.trim_end().strip_suffix('*') else {
            return false;
        };
        !pointee.contains('*') && words(pointee) == words(&self.function.arrays[array].elem_type)
    }

    /// What `expr` designates when it may be a shared element reached through a pointer
    /// (`p[i]`, `*p`, `p->x`, `p[i].x`); any other expression is evaluated.
    fn lvalue(&mut self, expr: &Expr) -> Lvalue {
        if self.direct(expr).is_some() {
            return Lvalue::Value(self.eval(expr));
        }
        match &expr.kind {
            ExprKind::Index { base, index } => {
                let base_value = self.lvalue(base);
                let i = self.eval_int(index);
                match base_value {
                    Lvalue::Place(mut place) if place.member.is_some() => {
                        if let Some(member) = place.member.as_mut() {
                            member.push_str(&format!("[{index}]"));
                        }
                        place.member_subscripts.push(i);
                        Lvalue::Place(place)
                    }
                    Lvalue::Place(place) => {
                        self.record_alias(&place, AccessKind::Load, None, base);
                        Lvalue::Value(Value::Data(format!("`{expr}`")))
                    }
                    Lvalue::Value(Value::Pointer(p)) => {
                        let base_offset = p.offset.constant();
                        match self.step_into(p.advanced(i)) {
                            Lvalue::Place(place) => Lvalue::Place(Place {
                                base_offset,
                                ..place
                            }),
                            value => value,
                        }
                    }
                    Lvalue::Value(_) => Lvalue::Value(Value::Data(format!("`{expr}`"))),
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Deref,
                operand,
            } => match self.eval(operand) {
                Value::Pointer(p) => self.step_into(p),
                _ => Lvalue::Value(Value::Data(format!("`{expr}`"))),
            },
            ExprKind::Member { base, field, arrow } => {
                if !*arrow {
                    if let Some(v) = self.builtin(base, field) {
                        return Lvalue::Value(v);
                    }
                }
                let base_value = if *arrow {
                    match self.eval(base) {
                        Value::Pointer(p) => self.step_into(p),
                        v => Lvalue::Value(v),
                    }
                } else {
                    self.lvalue(base)
                };
                match base_value {
                    Lvalue::Place(mut place) => {
                        place
                            .member
                            .get_or_insert_with(String::new)
                            .push_str(&format!(".{field}"));
                        Lvalue::Place(place)
                    }
                    Lvalue::Value(v) => {
                        self.lose(v, base, EscapeKind::UsedAsPointer);
                        Lvalue::Value(Value::Data(format!("`{field}`")))
                    }
                }
            }
            _ => Lvalue::Value(self.eval(expr)),
        }
    }

    /// What `*p` designates: an element, or (for a pointer to rows) the row, which decays to
    /// a pointer to its first element.
    fn step_into(&self, pointer: Pointer) -> Lvalue {
        if pointer.inner.is_empty() {
            Lvalue::Place(Place {
                base_offset: pointer.offset.constant(),
                pointer,
                member: None,
                member_subscripts: Vec::new(),
            })
        } else {
            let inner = pointer.inner[1..].to_vec();
            Lvalue::Value(Value::Pointer(Pointer { inner, ..pointer }))
        }
    }

    fn binary(&mut self, op: BinaryOp, l: Value, r: Value, lhs: &Expr, rhs: &Expr) -> Value {
        match (op, l, r) {
            (BinaryOp::Add, Value::Pointer(p), Value::Int(k))
            | (BinaryOp::Add, Value::Int(k), Value::Pointer(p)) => Value::Pointer(p.advanced(k)),
            (BinaryOp::Sub, Value::Pointer(p), Value::Int(k)) => {
                Value::Pointer(p.advanced(Sym::negate(k)))
            }
            (op, Value::Pointer(p), Value::Pointer(q))
                if p.same_target(&q)
                    && matches!(
                        op,
                        BinaryOp::Sub
                            | BinaryOp::Eq
                            | BinaryOp::Ne
                            | BinaryOp::Lt
                            | BinaryOp::Le
                            | BinaryOp::Gt
                            | BinaryOp::Ge
                    ) =>
            {
                let step: i64 = p.inner.iter().product();
                let compared = Sym::binary(op_of(op), p.offset, q.offset);
                Value::Int(if op == BinaryOp::Sub {
                    Sym::binary(Op::Div, compared, Sym::Const(step))
                } else {
                    compared
                })
            }
            (op, l, r) => {
                let l = self.int(l, lhs);
                let r = self.int(r, rhs);
                Value::Int(Sym::binary(op_of(op), l, r))
            }
        }
    }

    fn assignment(
        &mut self,
        op: Option<BinaryOp>,
        target: &Expr,
        value: &Expr,
        expr: &Expr,
    ) -> Value {
        let v = self.eval(value);
        match &target.kind {
            ExprKind::Name(name) if self.name_use(target).is_none() => {
                let new = match op {
                    None => v,
                    Some(op) => {
                        let old = self.name(name, target.span);
                        self.binary(op, old, v, target, value)
                    }
                };
                match self.lookup(name) {
                    Some(Value::Data(_)) if !matches!(new, Value::Pointer(_)) => {
                        self.assign(name, Value::Data(format!("`{name}`")));
                    }
                    Some(_) => {
                        self.assign(name, new.clone());
                    }
                    None => {
                        let kind = EscapeKind::AssignedToPointer(name.clone());
                        self.lose(new.clone(), expr, kind);
                    }
                }
                new
            }
            _ => {
                if let Lvalue::Place(place) = self.lvalue(target) {
                    if op.is_some() {
                        self.record_alias(&place, AccessKind::Load, None, target);
                    }
                    self.record_alias(&place, AccessKind::Store, None, target);
                }
                self.lose(v, expr, EscapeKind::AssignedToPointer(target.to_string()));
                Value::Data(format!("`{expr}`"))
            }
        }
    }

    fn record(&mut self, entries: &[(usize, usize)]) {
        let Some(&(array_index, access_index)) = entries.first() else {
            return;
        };
        let array = &self.function.arrays[array_index];
        let access = &array.accesses[access_index];
        let dims = array.dims.clone();
        let indices = access.indices.unpack();
        let member_subscripts = access.detail().member_subscripts.clone();
        let mut index = Sym::Const(0);
        let mut known_dims = true;
        for (i, subscript) in indices.iter().enumerate() {
            let value = self.eval_int(subscript);
            let extent = if i == 0 {
                Some(0)
            } else {
                dims.get(i).copied().flatten().map(|d| d as i64)
            };
            match extent {
                Some(extent) if i > 0 => {
                    index = Sym::binary(
                        Op::Add,
                        Sym::binary(Op::Mul, index, Sym::Const(extent)),
                        value,
                    );
                }
                Some(_) => index = value,
                None => known_dims = false,
            }
        }
        if !self.recording {
            return;
        }
        if !known_dims {
            index = Sym::Unknown(Unknown::UnknownName(format!(
                "an extent of `{}`",
                array.name
            )));
        }
        let site = Site {
            member: self.member_values(&member_subscripts),
            ..self.site(index)
        };
        for &(a, i) in entries {
            self.sites[a][i] = Some(site.clone());
        }
    }

    /// The values of a direct access's member subscripts. The expression around the element
    /// evaluates them again, so only those without side effects are evaluated here, and the
    /// accesses they contain are recorded there, not here.
    fn member_values(&mut self, subscripts: &[Expr]) -> Vec<Sym> {
        let recording = std::mem::replace(&mut self.recording, false);
        let values = subscripts
            .iter()
            .map(|subscript| {
                if has_side_effects(subscript) {
                    Sym::Unknown(Unknown::DataDependent(format!(
                        "`{subscript}`, a member subscript with side effects"
                    )))
                } else {
                    self.eval_int(subscript)
                }
            })
            .collect();
        self.recording = recording;
        values
    }

    fn site(&self, index: Sym) -> Site {
        Site {
            index,
            loops: self.enclosing.clone(),
            active: self.active.clone(),
            form: Err(NotAffine::Other(String::new())),
            class: Class::Random(String::new()),
            iterations: Vec::new(),
            member: Vec::new(),
        }
    }

    /// An access through a pointer at `expr`.
    fn record_alias(
        &mut self,
        place: &Place,
        kind: AccessKind,
        atomic_op: Option<String>,
        expr: &Expr,
    ) {
        if self.macro_site.is_some() {
            let why = "is dereferenced inside a macro expansion".to_string();
            self.escape(&place.pointer, expr.span, EscapeKind::Pointer(why));
            return;
        }
        if !self.recording {
            return;
        }
        let site = Site {
            member: place.member_subscripts.clone(),
            ..self.site(place.pointer.offset.clone())
        };
        self.aliases.push(AliasAccess {
            array: place.pointer.array,
            kind,
            span: expr.span,
            member: place.member.clone(),
            atomic_op,
            calls: self.calls.iter().map(|(span, _)| *span).collect(),
            site,
            base_offset: place.base_offset,
        });
    }

    /// The value of `name`, used at `at`.
    fn name(&mut self, name: &str, at: Span) -> Value {
        if let Some(value) = self.lookup(name) {
            return value.clone();
        }
        if let Some(&non_integer) = self.params.get(name) {
            return if non_integer {
                Value::Data(format!("parameter `{name}`"))
            } else {
                Value::Int(Sym::Atom(Atom::Uniform(name.to_string())))
            };
        }
        if name == "warpSize" {
            return Value::Int(Sym::Const(32));
        }
        let as_expr = Expr {
            kind: ExprKind::Name(name.to_string()),
            span: Span { start: 0, end: 0 },
        };
        if let Ok(v) = self.constants.eval(&as_expr, self.bindings) {
            return Value::Int(Sym::Const(v));
        }
        if let Some(body) = self
            .constants
            .macro_named(name)
            .filter(|m| m.params.is_none())
            .and_then(|m| m.expr())
        {
            let recording = std::mem::replace(&mut self.recording, false);
            let value = self.in_macro(at, |ex| ex.eval(body));
            self.recording = recording;
            return value;
        }
        if self.shared.contains(name) && self.calls.is_empty() {
            return Value::Data(format!("the address of `{name}`"));
        }
        Value::Int(Sym::Unknown(Unknown::UnknownName(name.to_string())))
    }

    /// Runs `run` as the expansion of the macro used at `at` (spans inside a macro body are
    /// relative to its text and match nothing in the source).
    fn in_macro<T>(&mut self, at: Span, run: impl FnOnce(&mut Self) -> T) -> T {
        // The outermost use of a macro is where its expansion shows in the source.
        let site = self.macro_site.or(Some(at));
        let saved = std::mem::replace(&mut self.macro_site, site);
        let value = run(self);
        self.macro_site = saved;
        value
    }

    /// `threadIdx.x`, `blockDim.y`, `blockIdx.z`, `gridDim.x`.
    fn builtin(&mut self, base: &Expr, field: &str) -> Option<Value> {
        let ExprKind::Name(builtin) = &base.kind else {
            return None;
        };
        let axis = match field {
            "x" => Axis::X,
            "y" => Axis::Y,
            "z" => Axis::Z,
            _ => return None,
        };
        match builtin.as_str() {
            "threadIdx" => Some(Value::Int(Sym::thread(axis))),
            "blockDim" => Some(Value::Int(Sym::Const(i64::from(self.block[axis.index()])))),
            "blockIdx" | "gridDim" => {
                let atom = Atom::Uniform(format!("{builtin}.{field}"));
                self.facts.insert(atom.clone(), (0, true));
                Some(Value::Int(Sym::Atom(atom)))
            }
            _ => None,
        }
    }

    fn call(&mut self, callee: &Expr, args: &[Expr], expr: &Expr) -> Value {
        // A provider of the dynamic shared memory (`SharedMemory<T>()`).
        if let Some(array) = self.name_use(expr) {
            return self.array_pointer(array, expr);
        }
        let name = match &callee.kind {
            ExprKind::Name(name) => name.rsplit("::").next().unwrap_or(name).to_string(),
            _ => String::new(),
        };
        // Most bodies define no lambda: no scan of the locals for every call.
        if !self.lambdas.is_empty() {
            if let Some(&Value::Lambda(index)) = self.lookup(&name) {
                return self.call_lambda(index, args, expr);
            }
        }
        if let Some(mac) = self.constants.macro_named(&name) {
            if let (Some(params), Some(body)) = (&mac.params, mac.expr()) {
                if params.len() == args.len() {
                    let values: Vec<Value> = args.iter().map(|a| self.eval(a)).collect();
                    self.scopes.push(self.locals.len());
                    for (param, value) in params.iter().zip(values) {
                        self.locals.push((param.clone(), value));
                    }
                    let recording = std::mem::replace(&mut self.recording, false);
                    let value = self.in_macro(expr.span, |ex| ex.eval(body));
                    self.recording = recording;
                    let start = self.scopes.pop().unwrap_or(0);
                    self.locals.truncate(start);
                    return value;
                }
            }
        }
        if is_atomic(&name) {
            return self.atomic(&name, args, expr);
        }
        if let Some(group) = self.group_call(&name, callee, args, expr) {
            return group;
        }
        if let (true, [ty], [operand]) = (name.ends_with("_cast"), template_args(expr), args) {
            return self.cast(ty, operand, expr);
        }
        let target = self.callee(&name, args.len(), expr).ok();
        let mut values = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            let reference = target.and_then(|f| f.params.get(i)).filter(|p| {
                p.reference && !p.pointer && !p.ty.split_whitespace().any(|w| w == "const")
            });
            let Some(param) = reference else {
                values.push(self.eval(arg));
                continue;
            };
            // A shared element bound to a reference parameter may be written through it.
            let kind = EscapeKind::BoundToReference(param.name.clone());
            for (array, _) in self.direct(arg).unwrap_or_default() {
                self.escape_array(array, arg.span, kind.clone());
            }
            values.push(match self.lvalue(arg) {
                Lvalue::Place(place) => {
                    self.escape(&place.pointer, arg.span, kind);
                    Value::Data(format!("`{arg}`"))
                }
                Lvalue::Value(v) => v,
            });
        }
        if values.iter().any(|v| matches!(v, Value::Pointer(_))) {
            return self.inline(&name, callee, values, args, expr);
        }
        let mut ints = Vec::with_capacity(values.len());
        for (value, arg) in values.into_iter().zip(args) {
            ints.push(self.int(value, arg));
        }
        match (name.as_str(), ints.as_slice()) {
            ("min" | "umin" | "max" | "umax", [a, b]) => {
                let op = if name.ends_with("min") {
                    Op::Lt
                } else {
                    Op::Gt
                };
                let c = Sym::binary(op, a.clone(), b.clone());
                Value::Int(Sym::select(c, a.clone(), b.clone()))
            }
            ("__mul24" | "__umul24", [a, b]) => {
                Value::Int(Sym::binary(Op::Mul, a.clone(), b.clone()))
            }
            _ => Value::Data(format!("the result of `{callee}`")),
        }
    }

    /// Cooperative groups: `this_thread_block()`, `tiled_partition<32>(g)` (or
    /// `tiled_partition(g, 32)`), and a group's `thread_rank()`, `size()`, `num_threads()`,
    /// `meta_group_rank()`, `meta_group_size()`.
    fn group_call(
        &mut self,
        name: &str,
        callee: &Expr,
        args: &[Expr],
        call: &Expr,
    ) -> Option<Value> {
        match (name, args) {
            ("this_thread_block", []) => return Some(Value::Group(None)),
            ("tiled_partition", [parent]) | ("tiled_partition", [parent, _]) => {
                self.eval(parent);
                let size = match (template_args(call), args) {
                    ([size], [_]) => size.parse().ok(),
                    (_, [_, size]) => self.eval_int(size).constant(),
                    _ => None,
                };
                return Some(match size.and_then(|s| u32::try_from(s).ok()) {
                    Some(size) if size > 0 => Value::Group(Some(size)),
                    _ => Value::Data(format!("`{call}`")),
                });
            }
            _ => {}
        }
        let ExprKind::Member {
            base,
            field,
            arrow: false,
        } = &callee.kind
        else {
            return None;
        };
        let Value::Group(tile) = self.eval(base) else {
            return None;
        };
        let threads: i64 = self.block.iter().map(|&d| i64::from(d.max(1))).product();
        let rank = self.linear_thread();
        let value = match (field.as_str(), tile.map(i64::from)) {
            ("thread_rank", None) => rank,
            ("thread_rank", Some(n)) => Sym::binary(Op::Rem, rank, Sym::Const(n)),
            ("size" | "num_threads", None) => Sym::Const(threads),
            ("size" | "num_threads", Some(n)) => Sym::Const(n),
            ("meta_group_rank", Some(n)) => Sym::binary(Op::Div, rank, Sym::Const(n)),
            ("meta_group_size", Some(n)) => Sym::Const((threads + n - 1) / n),
            _ => {
                for arg in args {
                    self.eval(arg);
                }
                return Some(Value::Data(format!("`{call}`")));
            }
        };
        Some(Value::Int(value))
    }

    /// `tx + Bx·ty + Bx·By·tz`, the thread's rank in its block.
    fn linear_thread(&self) -> Sym {
        let [bx, by, _] = self.block.map(|d| i64::from(d.max(1)));
        let term = |axis, scale| Sym::binary(Op::Mul, Sym::thread(axis), Sym::Const(scale));
        Sym::binary(
            Op::Add,
            Sym::thread(Axis::X),
            Sym::binary(Op::Add, term(Axis::Y, bx), term(Axis::Z, bx * by)),
        )
    }

    /// `atomicAdd(p + i, v)`, `atomicAdd(&p[i], v)`: an atomic access through a pointer.
    /// (Atomics on the array's own elements are the front end's.)
    fn atomic(&mut self, name: &str, args: &[Expr], expr: &Expr) -> Value {
        let Some((address, rest)) = args.split_first() else {
            return Value::Data(format!("the result of `{name}`"));
        };
        let place = match &address.kind {
            ExprKind::Unary {
                op: UnaryOp::AddressOf,
                operand,
            } => match self.lvalue(operand) {
                Lvalue::Place(place) => Some((place, &**operand)),
                Lvalue::Value(_) => None,
            },
            _ => match self.eval(address) {
                Value::Pointer(p) => match self.step_into(p) {
                    Lvalue::Place(place) => Some((place, address)),
                    Lvalue::Value(v) => {
                        self.lose(v, address, EscapeKind::PassedToFunction(name.to_string()));
                        None
                    }
                },
                _ => None,
            },
        };
        if let Some((place, at)) = place {
            self.record_alias(&place, AccessKind::Atomic, Some(name.to_string()), at);
        }
        for arg in rest {
            let v = self.eval(arg);
            self.lose(v, arg, EscapeKind::PassedToFunction(name.to_string()));
        }
        Value::Data(format!("the result of `{expr}`"))
    }

    /// A call with a pointer into a shared array among its arguments: the callee's body runs
    /// with its parameters bound to the arguments, when it is defined in this file.
    fn inline(
        &mut self,
        name: &str,
        callee: &Expr,
        values: Vec<Value>,
        args: &[Expr],
        expr: &Expr,
    ) -> Value {
        let result = Value::Data(format!("the result of `{callee}`"));
        let target = match self.callee(name, args.len(), expr) {
            Ok(target) => target,
            Err(why) => {
                for (value, arg) in values.into_iter().zip(args) {
                    self.lose(value, arg, EscapeKind::Pointer(why.clone()));
                }
                return result;
            }
        };
        let mut bound = Vec::with_capacity(values.len());
        for ((value, arg), param) in values.into_iter().zip(args).zip(&target.params) {
            let value = match value {
                Value::Pointer(p) if param.reference => {
                    let why = format!("is passed by reference to `{name}`");
                    self.escape(&p, arg.span, EscapeKind::Pointer(why));
                    Value::Data(format!("`{}`", param.name))
                }
                pointer @ Value::Pointer(_)
                    if param.pointer || param.array || !is_integer(&param.ty) =>
                {
                    pointer
                }
                Value::Int(sym) if is_integer(&param.ty) && !param.pointer && !param.array => {
                    Value::Int(sym)
                }
                other => {
                    let why = format!("is passed to `{name}` as `{}`", param.name);
                    self.lose(other, arg, EscapeKind::Pointer(why));
                    Value::Data(format!("`{}`", param.name))
                }
            };
            bound.push((param.name.clone(), value));
        }
        let saved_locals = std::mem::replace(&mut self.locals, bound);
        let saved_scopes = std::mem::take(&mut self.scopes);
        let saved_params = std::mem::take(&mut self.params);
        let saved_bindings = std::mem::replace(&mut self.bindings, &target.bindings);
        let saved_active = self.active.clone();
        self.calls.push((expr.span, &target.name));
        self.block_of(self.functions.statements(target));
        self.calls.pop();
        self.active = saved_active;
        self.bindings = saved_bindings;
        self.params = saved_params;
        self.scopes = saved_scopes;
        self.locals = saved_locals;
        result
    }

    /// A call of a lambda of the body: its body runs with the parameters bound, seeing the
    /// enclosing variables (by reference) or their values at the definition (by copy). Only
    /// the first call is followed: a site keeps one execution, so the accesses of a lambda
    /// called again are left unknown rather than counted once.
    fn call_lambda(&mut self, index: usize, args: &[Expr], expr: &Expr) -> Value {
        let values: Vec<Value> = args.iter().map(|a| self.eval(a)).collect();
        let lambda = self.lambdas[index].lambda;
        let result = Value::Data(format!("the result of `{}`", lambda.name));
        let why = if self.lambdas[index].called {
            Some(format!(
                "the lambda `{}` is called more than once",
                lambda.name
            ))
        } else if self.calls.len() >= MAX_INLINE_DEPTH {
            Some(format!(
                "the lambda `{}` is called {MAX_INLINE_DEPTH} calls deep",
                lambda.name
            ))
        } else if lambda.params.len() != values.len()
            || lambda.params.iter().any(|p| {
                p.reference && !p.pointer && !p.ty.split_whitespace().any(|w| w == "const")
            })
        {
            Some(format!(
                "the lambda `{}` takes a reference it may write",
                lambda.name
            ))
        } else {
            None
        };
        if let Some(why) = why {
            for (value, arg) in values.into_iter().zip(args) {
                self.lose(value, arg, EscapeKind::Pointer(why.clone()));
            }
            self.unknown_inside(lambda.span, &why);
            return result;
        }
        self.lambdas[index].called = true;
        let bound: Vec<(String, Value)> = lambda
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(values)
            .collect();
        let saved_active = self.active.clone();
        let saved = match &self.lambdas[index].captured {
            Some(captured) => {
                let locals = captured.iter().cloned().chain(bound).collect();
                Some((
                    std::mem::replace(&mut self.locals, locals),
                    std::mem::take(&mut self.scopes),
                ))
            }
            None => {
                self.scopes.push(self.locals.len());
                self.locals.extend(bound);
                None
            }
        };
        self.calls.push((expr.span, &lambda.name));
        self.block_of(&lambda.body);
        self.calls.pop();
        match saved {
            Some((locals, scopes)) => {
                self.locals = locals;
                self.scopes = scopes;
            }
            None => {
                let start = self.scopes.pop().unwrap_or(0);
                self.locals.truncate(start);
            }
        }
        self.active = saved_active;
        result
    }

    /// Every access inside `span` gets an unknown index: not simulated, saying `why`.
    fn unknown_inside(&mut self, span: Span, why: &str) {
        let inside: Vec<(usize, usize)> = self
            .accesses
            .iter()
            .filter(|(at, _)| span.start <= at.start && at.end <= span.end)
            .flat_map(|(_, entries)| entries.iter().copied())
            .collect();
        let site = self.site(Sym::Unknown(Unknown::DataDependent(why.to_string())));
        for (a, i) in inside {
            self.sites[a][i] = Some(site.clone());
        }
    }

    /// The function a call with pointer arguments enters, or why it cannot be followed.
    fn callee(&self, name: &str, arity: usize, expr: &Expr) -> Result<&'a Function, String> {
        let template_args = template_args(expr);
        let candidates: Vec<&'a Function> = self
            .functions
            .named(name)
            .filter(|f| f.params.len() == arity && f.syntax_error.is_none())
            .filter(|f| {
                template_args.is_empty()
                    || f.template_args.len() == template_args.len()
                        && f.template_args
                            .iter()
                            .zip(template_args)
                            .all(|((_, value), arg)| value == arg)
            })
            .collect();
        match candidates.as_slice() {
            [] => Err(format!(
                "is passed to `{name}`, which is not defined in this file"
            )),
            [function] if function.body.is_empty() => {
                Err(format!("is passed to `{name}`, whose body is not analysed"))
            }
            [function] if self.calls.iter().any(|(_, f)| *f == function.name) => {
                Err(format!("is passed to `{name}` recursively"))
            }
            [_] if self.calls.len() >= MAX_INLINE_DEPTH => Err(format!(
                "is passed to `{name}` more than {MAX_INLINE_DEPTH} calls deep"
            )),
            [function] => Ok(function),
            _ => Err(format!(
                "is passed to `{name}`, which has several definitions here"
            )),
        }
    }
}

/// The first value of a counter that fails the loop condition, when the condition depends on
/// nothing but the counter and the loop ends within [`MAX_TRIPS`] iterations.
fn exit_value(atom: &Atom, init: &Sym, cond: Option<&Sym>, step: Step) -> Option<i64> {
    let cond = cond?;
    if cond.atoms().iter().any(|a| *a != atom) {
        return None;
    }
    let mut value = init.constant()?;
    let nothing = LoopPoint::default();
    for _ in 0..=MAX_TRIPS {
        let at = With {
            atom,
            value,
            rest: &nothing,
        };
        if cond.eval(&at)? == 0 {
            return Some(value);
        }
        value = step.apply(value).filter(|&next| next != value)?;
    }
    None
}

/// Whether a loop body may end the loop, or skip the rest of an iteration, before its end:
/// then a variable's value after the loop is not its induction's.
fn may_leave_early(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Break | Stmt::Continue | Stmt::Return(_) | Stmt::Opaque { .. } => true,
        Stmt::If {
            then, otherwise, ..
        } => may_leave_early(then) || may_leave_early(otherwise),
        Stmt::Block(body) | Stmt::Switch { body, .. } => may_leave_early(body),
        // A nested loop's break and continue stay inside it; its return does not.
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::DoWhile { body, .. } => {
            returns(body)
        }
        Stmt::Decl(_) | Stmt::Expr(_) | Stmt::Lambda(_) => false,
    })
}

fn returns(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Return(_) | Stmt::Opaque { .. } => true,
        Stmt::If {
            then, otherwise, ..
        } => returns(then) || returns(otherwise),
        Stmt::Block(body)
        | Stmt::Switch { body, .. }
        | Stmt::For { body, .. }
        | Stmt::While { body, .. }
        | Stmt::DoWhile { body, .. } => returns(body),
        Stmt::Decl(_) | Stmt::Expr(_) | Stmt::Lambda(_) | Stmt::Break | Stmt::Continue => false,
    })
}

/// The explicit template arguments of a call (`f<16>(x)`), as written.
fn template_args(call: &Expr) -> &[String] {
    match &call.kind {
        ExprKind::Call { template_args, .. } => template_args,
        _ => &[],
    }
}

/// How far a loop has gone, for expressing its induction variables.
#[derive(Debug, Clone)]
enum Progress {
    /// The number of iterations so far, as a value.
    Iterations(Sym),
    /// A geometric counter `c`: `ratio` is the value that grows by `2^shift` per iteration
    /// (`c / c0` when it grows, `c0 / c` when it shrinks).
    Geometric { ratio: Sym, shift: i64 },
}

impl Progress {
    fn of(counter: &Sym, init: &Sym, step: Step) -> Option<Progress> {
        let log2 = |k: i64| (k > 0 && k.count_ones() == 1).then(|| i64::from(k.trailing_zeros()));
        let grows = || Sym::binary(Op::Div, counter.clone(), init.clone());
        let shrinks = || Sym::binary(Op::Div, init.clone(), counter.clone());
        match step {
            Step::Add(s) => Some(Progress::Iterations(Sym::binary(
                Op::Div,
                Sym::binary(Op::Sub, counter.clone(), init.clone()),
                Sym::Const(s),
            ))),
            Step::Mul(k) => Some(Progress::Geometric {
                ratio: grows(),
                shift: log2(k)?,
            }),
            Step::Shl(a) => Some(Progress::Geometric {
                ratio: grows(),
                shift: a,
            }),
            // c0 / c is exact only when c0 is a power of two.
            Step::Shr(_) | Step::Div(_) if init.constant().and_then(log2).is_none() => None,
            Step::Shr(a) => Some(Progress::Geometric {
                ratio: shrinks(),
                shift: a,
            }),
            Step::Div(k) => Some(Progress::Geometric {
                ratio: shrinks(),
                shift: log2(k)?,
            }),
        }
    }
}

/// The value of a loop-carried variable in the current iteration, from one run of the body
/// (`end`, with the variable's value on entry to the iteration a placeholder): `v + d` per
/// iteration is `v0 + d·n`, `v·2^b` per iteration follows a geometric counter of the same
/// ratio.
fn induction(placeholder: &Atom, v0: &Sym, end: &Sym, progress: &Progress) -> Option<Sym> {
    let p = Sym::Atom(placeholder.clone());
    if end == &p {
        return Some(v0.clone());
    }
    if let Some(toggled) = toggle(placeholder, v0, end) {
        let even = match progress {
            Progress::Iterations(n) => Sym::binary(
                Op::Eq,
                Sym::binary(Op::And, n.clone(), Sym::Const(1)),
                Sym::Const(0),
            ),
            // ratio = 2^(shift·k): k is even when its one bit is at a multiple of 2·shift.
            Progress::Geometric { ratio, shift } => {
                let period = 2 * *shift;
                let mask = (0..63)
                    .step_by(usize::try_from(period).ok().filter(|&p| p > 0)?)
                    .fold(0i64, |mask, bit| mask | 1 << bit);
                Sym::binary(
                    Op::Ne,
                    Sym::binary(Op::And, ratio.clone(), Sym::Const(mask)),
                    Sym::Const(0),
                )
            }
        };
        return Some(Sym::select(even, v0.clone(), toggled));
    }
    let Sym::Binary(op, l, r) = end else {
        return None;
    };
    let (op, amount) = match (op, **l == p, **r == p) {
        (Op::Add | Op::Sub | Op::Mul | Op::Shl, true, false) => (*op, (**r).clone()),
        (Op::Add | Op::Mul, false, true) => (*op, (**l).clone()),
        _ => return None,
    };
    if !amount.is_uniform() || amount.atoms().contains(&placeholder) {
        return None;
    }
    match (op, progress) {
        (Op::Add | Op::Sub, Progress::Iterations(n)) => {
            let step = Sym::binary(Op::Mul, n.clone(), amount);
            Some(Sym::binary(op, v0.clone(), step))
        }
        (Op::Mul | Op::Shl, Progress::Geometric { ratio, shift }) => {
            let per_iteration = match (op, amount.constant()?) {
                (Op::Mul, m) if m > 0 && m.count_ones() == 1 => i64::from(m.trailing_zeros()),
                (Op::Shl, b) => b,
                _ => return None,
            };
            (per_iteration == *shift).then(|| Sym::binary(Op::Mul, v0.clone(), ratio.clone()))
        }
        _ => None,
    }
}

/// A variable that flips between two values each iteration (`pout = 1 - pout`, `b ^= 1`,
/// `f = !f`): its value in odd iterations, given `v0` in even ones.
fn toggle(placeholder: &Atom, v0: &Sym, end: &Sym) -> Option<Sym> {
    let p = &Sym::Atom(placeholder.clone());
    let uniform = |amount: &Sym| amount.is_uniform() && !amount.atoms().contains(&placeholder);
    match end {
        Sym::Not(inner) if **inner == *p => Some(Sym::logical_not(v0.clone())),
        Sym::Binary(Op::Sub, amount, rhs) if **rhs == *p && uniform(amount) => {
            Some(Sym::binary(Op::Sub, (**amount).clone(), v0.clone()))
        }
        Sym::Binary(Op::Xor, l, r) if **l == *p && uniform(r) => {
            Some(Sym::binary(Op::Xor, v0.clone(), (**r).clone()))
        }
        Sym::Binary(Op::Xor, l, r) if **r == *p && uniform(l) => {
            Some(Sym::binary(Op::Xor, (**l).clone(), v0.clone()))
        }
        _ => None,
    }
}

fn op_of(op: BinaryOp) -> Op {
    match op {
        BinaryOp::Add => Op::Add,
        BinaryOp::Sub => Op::Sub,
        BinaryOp::Mul => Op::Mul,
        BinaryOp::Div => Op::Div,
        BinaryOp::Rem => Op::Rem,
        BinaryOp::Shl => Op::Shl,
        BinaryOp::Shr => Op::Shr,
        BinaryOp::BitAnd => Op::And,
        BinaryOp::BitOr => Op::Or,
        BinaryOp::BitXor => Op::Xor,
        BinaryOp::LogAnd => Op::LogAnd,
        BinaryOp::LogOr => Op::LogOr,
        BinaryOp::Eq => Op::Eq,
        BinaryOp::Ne => Op::Ne,
        BinaryOp::Lt => Op::Lt,
        BinaryOp::Le => Op::Le,
        BinaryOp::Gt => Op::Gt,
        BinaryOp::Ge => Op::Ge,
    }
}

/// Names a statement list may assign (left of `=`, operand of `++`/`--`, address taken).
fn assigned_names(stmts: &[Stmt], out: &mut Vec<String>) {
    for stmt in stmts {
        match stmt {
            Stmt::Decl(decl) => {
                if let Some(init) = &decl.init {
                    assigned_in_expr(init, out);
                }
            }
            Stmt::Expr(e) | Stmt::Return(Some(e)) => assigned_in_expr(e, out),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                assigned_in_expr(cond, out);
                assigned_names(then, out);
                assigned_names(otherwise, out);
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                assigned_names(init, out);
                if let Some(c) = cond {
                    assigned_in_expr(c, out);
                }
                for e in update {
                    assigned_in_expr(e, out);
                }
                assigned_names(body, out);
            }
            Stmt::While { cond, body }
            | Stmt::DoWhile { body, cond }
            | Stmt::Switch { cond, body } => {
                assigned_in_expr(cond, out);
                assigned_names(body, out);
            }
            Stmt::Block(stmts) => assigned_names(stmts, out),
            Stmt::Opaque { assigned, .. } => out.extend(assigned.iter().cloned()),
            // A lambda's body runs where it is called; one that assigns enclosing variables
            // stays opaque (see `parse::body`).
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Lambda(_) => {}
        }
    }
}

/// Whether evaluating `expr` may change a variable or call a function.
fn has_side_effects(expr: &Expr) -> bool {
    let mut pending = vec![expr];
    while let Some(e) = pending.pop() {
        if matches!(
            e.kind,
            ExprKind::Assign { .. } | ExprKind::Step { .. } | ExprKind::Call { .. }
        ) {
            return true;
        }
        e.for_each_child(|child| pending.push(child));
    }
    false
}

fn assigned_in_expr(expr: &Expr, out: &mut Vec<String>) {
    let mut pending = vec![expr];
    while let Some(e) = pending.pop() {
        let written = match &e.kind {
            ExprKind::Assign { target, .. } => Some(target),
            ExprKind::Step { operand, .. }
            | ExprKind::Unary {
                op: UnaryOp::AddressOf,
                operand,
            } => Some(operand),
            _ => None,
        };
        if let Some(ExprKind::Name(n)) = written.map(|w| &w.kind) {
            out.push(n.clone());
        }
        e.for_each_child(|child| pending.push(child));
    }
}
