//! Symbolic execution of one function body: follows local variables through their
//! definitions (in statement order, with branches joined by a select and loops given
//! counters), and records for every shared access its element index as a [`Sym`], the loops
//! around it and the condition under which a lane executes it.
use super::class::{classify, Class};
use super::digits::{normalize, Context, DigitAffine, NotAffine};
use super::sym::{Atom, AtomValues, Axis, LoopId, Op, Sym, Unknown};
use crate::parse::{
    BinaryOp, ConstEnv, Decl, Expr, ExprKind, Function, Param, Span, Stmt, UnaryOp,
};
use std::collections::{HashMap, HashSet};

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
}

#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    pub loop_values: Vec<(String, i64)>,
    pub form: DigitAffine,
    pub class: Class,
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
}

impl Value {
    fn sym(self) -> Sym {
        match self {
            Value::Int(sym) => sym,
            Value::Data(what) => Sym::Unknown(Unknown::DataDependent(what)),
        }
    }
}

struct Executor<'a> {
    function: &'a Function,
    constants: &'a ConstEnv,
    block: [u32; 3],
    /// Access span → (array, access) pairs.
    accesses: HashMap<Span, Vec<(usize, usize)>>,
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
}

/// Analyses every shared access of `function` on a block of shape `block`.
pub fn analyse_function(
    function: &Function,
    body: &[Stmt],
    params: &[Param],
    block: [u32; 3],
    constants: &ConstEnv,
) -> FunctionAffine {
    let mut accesses: HashMap<Span, Vec<(usize, usize)>> = HashMap::new();
    for (a, array) in function.arrays.iter().enumerate() {
        for (i, access) in array.accesses.iter().enumerate() {
            accesses.entry(access.span).or_default().push((a, i));
        }
    }
    let mut executor = Executor {
        function,
        constants,
        block,
        accesses,
        locals: Vec::new(),
        scopes: Vec::new(),
        params: params
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
    };
    executor.block_of(body);
    let mut result = FunctionAffine {
        loops: executor.loops,
        sites: executor.sites,
        facts: executor.facts,
        block,
    };
    let facts = Facts {
        block,
        facts: &result.facts,
    };
    let mut sites = std::mem::take(&mut result.sites);
    for site in sites.iter_mut().flatten().flatten() {
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
    fn block_of(&mut self, stmts: &[Stmt]) {
        self.scopes.push(self.locals.len());
        for stmt in stmts {
            self.stmt(stmt);
        }
        let start = self.scopes.pop().unwrap_or(0);
        self.locals.truncate(start);
    }

    fn stmt(&mut self, stmt: &Stmt) {
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
                let c = self.eval(cond).sym();
                self.branches(&c, |ex| ex.block_of(then), |ex| ex.block_of(otherwise));
            }
            Stmt::Switch { cond, body } => {
                let c = self.eval(cond).sym();
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
                    self.eval(value);
                }
                self.active = Sym::Const(0);
            }
            // The rest of this iteration is skipped; later iterations are still counted.
            Stmt::Break | Stmt::Continue => self.active = Sym::Const(0),
            Stmt::Opaque {
                assigned, exprs, ..
            } => {
                for expr in exprs {
                    self.eval(expr);
                }
                for name in assigned {
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
        for (slot, then_value) in self.locals.iter_mut().zip(then_locals) {
            if slot.1 != then_value.1 {
                slot.1 = match (then_value.1, slot.1.clone()) {
                    (Value::Int(t), Value::Int(e)) => Value::Int(Sym::select(c.clone(), t, e)),
                    _ => Value::Data(format!("`{}` set on one branch", slot.0)),
                };
            }
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

    fn declare(&mut self, decl: &Decl) {
        if decl.is_shared {
            return;
        }
        let value = match &decl.init {
            Some(init) => {
                let v = self.eval(init);
                if decl.pointer || decl.array || decl.reference || !is_integer(&decl.ty) {
                    Value::Data(format!("`{}`", decl.name))
                } else {
                    v
                }
            }
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

    fn forget(&mut self, name: &str) {
        self.assign(
            name,
            Value::Int(Sym::Unknown(Unknown::Reassigned(name.to_string()))),
        );
    }

    /// A fresh uniform atom standing for an unknown but warp-uniform value.
    fn fresh_uniform(&mut self, name: &str) -> Atom {
        self.fresh += 1;
        Atom::Uniform(format!("{name}'{}", self.fresh))
    }

    fn for_loop(&mut self, init: &[Stmt], cond: Option<&Expr>, update: &[Expr], body: &[Stmt]) {
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
                let v = self.eval(c).sym();
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
        self.loop_body(body, &name, progress, update);
        self.enclosing.pop();
        self.active = outer_active;
        // After the loop the counter's value depends on where it stopped.
        self.forget(&name);
    }

    /// A `for` loop without a counter the analysis can step.
    fn uncounted_loop(&mut self, cond: Option<&Expr>, body: &[Stmt], update: &[Expr]) {
        let mut assigned = Vec::new();
        for expr in update {
            assigned_in_expr(expr, &mut assigned);
        }
        for name in &assigned {
            self.forget(name);
        }
        self.opaque_loop(cond, body, true);
        for expr in update {
            self.eval(expr);
        }
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
        let value = self.eval(expr).sym().constant();
        self.recording = recording;
        value
    }

    /// Runs a loop body once with every variable it assigns (other than the counter) made
    /// an induction of the counter when it is one, unknown otherwise.
    fn loop_body(
        &mut self,
        body: &[Stmt],
        counter: &str,
        progress: Option<Progress>,
        update: &[Expr],
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
                self.assign(name, Value::Int(Sym::Atom(atom.clone())));
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
                        induction(atom, &v0, &end, &progress)
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
                    self.assign(name, Value::Int(v));
                }
                None => self.forget(name),
            }
        }
        let active = self.active.clone();
        self.block_of(body);
        self.active = active;
        for name in &assigned {
            self.forget(name);
        }
    }

    /// A `while`/`do` loop or a `for` the analysis cannot count: its body is analysed once,
    /// with every variable it assigns unknown.
    fn opaque_loop(&mut self, cond: Option<&Expr>, body: &[Stmt], cond_first: bool) {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        if let Some(cond) = cond {
            assigned_in_expr(cond, &mut assigned);
        }
        for name in &assigned {
            self.forget(name);
        }
        let active = self.active.clone();
        if let (Some(cond), true) = (cond, cond_first) {
            let c = self.eval(cond).sym();
            self.active = Sym::binary(Op::LogAnd, active.clone(), c);
        }
        self.block_of(body);
        if let (Some(cond), false) = (cond, cond_first) {
            self.eval(cond);
        }
        self.active = active;
        for name in &assigned {
            self.forget(name);
        }
    }

    fn eval(&mut self, expr: &Expr) -> Value {
        if let Some(entries) = self.accesses.get(&expr.span).cloned() {
            if matches!(expr.kind, ExprKind::Index { .. }) {
                self.record(&entries);
                return Value::Data(format!("shared `{}`", expr));
            }
        }
        match &expr.kind {
            ExprKind::Int(v) => Value::Int(Sym::Const(*v)),
            ExprKind::Float(_) => Value::Data("a float".into()),
            ExprKind::Name(name) => self.name(name),
            ExprKind::Member { base, field, arrow } => self.member(base, field, *arrow),
            ExprKind::Index { base, index } => {
                self.eval(base);
                self.eval(index);
                Value::Data(format!("`{expr}`"))
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand);
                match op {
                    UnaryOp::Neg => Value::Int(Sym::negate(v.sym())),
                    UnaryOp::Plus => v,
                    UnaryOp::Not => Value::Int(Sym::logical_not(v.sym())),
                    UnaryOp::BitNot => Value::Int(Sym::bit_not(v.sym())),
                    UnaryOp::AddressOf | UnaryOp::Deref => Value::Data(format!("`{expr}`")),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.eval(lhs).sym();
                // `&&`/`||` short-circuit: the right side runs only when the left allows it.
                let r = match op {
                    BinaryOp::LogAnd | BinaryOp::LogOr => {
                        let active = self.active.clone();
                        let guard = if *op == BinaryOp::LogAnd {
                            l.clone()
                        } else {
                            Sym::logical_not(l.clone())
                        };
                        self.active = Sym::binary(Op::LogAnd, active.clone(), guard);
                        let r = self.eval(rhs).sym();
                        self.active = active;
                        r
                    }
                    _ => self.eval(rhs).sym(),
                };
                Value::Int(Sym::binary(op_of(*op), l, r))
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                let c = self.eval(cond).sym();
                let active = self.active.clone();
                self.active = Sym::binary(Op::LogAnd, active.clone(), c.clone());
                let t = self.eval(then);
                self.active = Sym::binary(Op::LogAnd, active.clone(), Sym::logical_not(c.clone()));
                let e = self.eval(otherwise);
                self.active = active;
                match (t, e) {
                    (Value::Int(t), Value::Int(e)) => Value::Int(Sym::select(c, t, e)),
                    (Value::Data(d), _) | (_, Value::Data(d)) => Value::Data(d),
                }
            }
            ExprKind::Assign { op, target, value } => {
                let v = self.eval(value);
                match &target.kind {
                    ExprKind::Name(name) => {
                        let new = match op {
                            None => v,
                            Some(op) => {
                                let old = self.name(name).sym();
                                Value::Int(Sym::binary(op_of(*op), old, v.sym()))
                            }
                        };
                        if self.lookup(name).is_some() {
                            let stored = match self.lookup(name) {
                                Some(Value::Data(_)) => Value::Data(format!("`{name}`")),
                                _ => new.clone(),
                            };
                            self.assign(name, stored);
                        }
                        new
                    }
                    _ => {
                        self.eval(target);
                        v
                    }
                }
            }
            ExprKind::Step {
                increment,
                prefix,
                operand,
            } => match &operand.kind {
                ExprKind::Name(name) => {
                    let old = self.name(name).sym();
                    let op = if *increment { Op::Add } else { Op::Sub };
                    let new = Sym::binary(op, old.clone(), Sym::Const(1));
                    if matches!(self.lookup(name), Some(Value::Int(_))) {
                        self.assign(name, Value::Int(new.clone()));
                    }
                    Value::Int(if *prefix { new } else { old })
                }
                _ => {
                    self.eval(operand);
                    Value::Data(format!("`{expr}`"))
                }
            },
            ExprKind::Call { callee, args, .. } => self.call(callee, args),
            ExprKind::Cast { ty, operand } => {
                let v = self.eval(operand);
                if is_integer(ty) {
                    v
                } else {
                    Value::Data(format!("cast to `{ty}`"))
                }
            }
            ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => {
                match self.constants.eval(expr, &self.function.bindings) {
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

    fn record(&mut self, entries: &[(usize, usize)]) {
        let Some(&(array_index, access_index)) = entries.first() else {
            return;
        };
        let array = &self.function.arrays[array_index];
        let access = &array.accesses[access_index];
        let dims = array.dims.clone();
        let indices = access.indices.clone();
        let mut index = Sym::Const(0);
        let mut known_dims = true;
        for (i, subscript) in indices.iter().enumerate() {
            let value = self.eval(subscript).sym();
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
        for &(a, i) in entries {
            self.sites[a][i] = Some(Site {
                index: index.clone(),
                loops: self.enclosing.clone(),
                active: self.active.clone(),
                form: Err(NotAffine::Other(String::new())),
                class: Class::Random(String::new()),
                iterations: Vec::new(),
            });
        }
    }

    fn name(&mut self, name: &str) -> Value {
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
        if let Ok(v) = self.constants.eval(&as_expr, &self.function.bindings) {
            return Value::Int(Sym::Const(v));
        }
        if let Some(body) = self
            .constants
            .macro_named(name)
            .filter(|m| m.params.is_none())
            .and_then(|m| m.expr())
        {
            let recording = std::mem::replace(&mut self.recording, false);
            let value = self.eval(body);
            self.recording = recording;
            return value;
        }
        if self.shared.contains(name) {
            return Value::Data(format!("the address of `{name}`"));
        }
        Value::Int(Sym::Unknown(Unknown::UnknownName(name.to_string())))
    }

    fn member(&mut self, base: &Expr, field: &str, arrow: bool) -> Value {
        if let (ExprKind::Name(builtin), false) = (&base.kind, arrow) {
            let axis = match field {
                "x" => Some(Axis::X),
                "y" => Some(Axis::Y),
                "z" => Some(Axis::Z),
                _ => None,
            };
            if let Some(axis) = axis {
                match builtin.as_str() {
                    "threadIdx" => return Value::Int(Sym::thread(axis)),
                    "blockDim" => {
                        return Value::Int(Sym::Const(i64::from(self.block[axis.index()])))
                    }
                    "blockIdx" | "gridDim" => {
                        let atom = Atom::Uniform(format!("{builtin}.{field}"));
                        self.facts.insert(atom.clone(), (0, true));
                        return Value::Int(Sym::Atom(atom));
                    }
                    _ => {}
                }
            }
        }
        self.eval(base);
        Value::Data(format!("`{field}`"))
    }

    fn call(&mut self, callee: &Expr, args: &[Expr]) -> Value {
        let name = match &callee.kind {
            ExprKind::Name(name) => name.rsplit("::").next().unwrap_or(name).to_string(),
            _ => String::new(),
        };
        if let Some(mac) = self.constants.macro_named(&name) {
            if let (Some(params), Some(body)) = (&mac.params, mac.expr()) {
                if params.len() == args.len() {
                    let values: Vec<Value> = args.iter().map(|a| self.eval(a)).collect();
                    self.scopes.push(self.locals.len());
                    for (param, value) in params.iter().zip(values) {
                        self.locals.push((param.clone(), value));
                    }
                    let recording = std::mem::replace(&mut self.recording, false);
                    let value = self.eval(body);
                    self.recording = recording;
                    let start = self.scopes.pop().unwrap_or(0);
                    self.locals.truncate(start);
                    return value;
                }
            }
        }
        let values: Vec<Sym> = args.iter().map(|a| self.eval(a).sym()).collect();
        match (name.as_str(), values.as_slice()) {
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
            Stmt::Return(None) | Stmt::Break | Stmt::Continue => {}
        }
    }
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
