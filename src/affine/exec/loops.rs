//! Loops: counters and their values, the inductions of loop-carried variables, where a loop
//! stops, and the scans of what a loop body assigns.
use super::pointers::{origin, Pointer};
use super::{Executor, Loop, LoopPoint, LoopValues, Step, Value, With, MAX_TRIPS};
use crate::affine::sym::{Atom, Op, Sym};
use crate::parse::{BinaryOp, EscapeKind, Expr, ExprKind, Stmt, UnaryOp};

/// Nesting beyond which loop-carried variables are not followed (each level runs its body
/// twice).
const MAX_INDUCTION_DEPTH: usize = 6;

impl<'a> Executor<'a> {
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

    pub(super) fn for_loop(
        &mut self,
        init: &[Stmt],
        cond: Option<&Expr>,
        update: &[Expr],
        body: &'a [Stmt],
    ) {
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
        self.counted_loop(counter, cond, update, body);
    }

    /// `while (i < n) { …; i += s; }` (and `do { …; i++; } while (i < n);` when its
    /// condition holds on entry) run as `for (; i < n; i += s) { … }`: a counter stepped
    /// once, by its last statement, and assigned nowhere else. Any other loop is opaque.
    pub(super) fn while_loop(&mut self, cond: &Expr, body: &'a [Stmt], cond_first: bool) {
        let Some((last, rest)) = body.split_last() else {
            return self.opaque_loop(Some(cond), body, cond_first);
        };
        let counter = match last {
            Stmt::Expr(update) => match &update.kind {
                ExprKind::Step { operand, .. } => match &operand.kind {
                    ExprKind::Name(name) => Some((name.clone(), update)),
                    _ => None,
                },
                ExprKind::Assign { target, .. } => match &target.kind {
                    ExprKind::Name(name) => Some((name.clone(), update)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let Some((counter, update)) = counter else {
            return self.opaque_loop(Some(cond), body, cond_first);
        };
        let mut assigned = Vec::new();
        assigned_names(rest, &mut assigned);
        assigned_in_expr(cond, &mut assigned);
        let in_cond = cond.names();
        let plain = !assigned.contains(&counter)
            && in_cond.contains(&counter.as_str())
            && assigned.iter().all(|a| !in_cond.contains(&a.as_str()))
            && !continues(rest);
        // A `do … while` runs once before its test: the same loop only when the test holds
        // on entry.
        let enters = cond_first || self.constant_of(cond).is_some_and(|v| v != 0);
        if plain && enters {
            self.counted_loop(
                Some(counter),
                Some(cond),
                std::slice::from_ref(update),
                rest,
            );
        } else {
            self.opaque_loop(Some(cond), body, cond_first);
        }
    }

    /// A loop whose counter is `counter` (its current value is the first), tested by `cond`
    /// and stepped by `update`; without a counter whose step and start are known, uncounted.
    fn counted_loop(
        &mut self,
        counter: Option<String>,
        cond: Option<&Expr>,
        update: &[Expr],
        body: &'a [Stmt],
    ) {
        let step = counter.as_deref().and_then(|c| self.step_of(c, update));
        let start = counter
            .as_deref()
            .and_then(|c| self.lookup(c).cloned())
            .and_then(|v| match v {
                Value::Int(sym) if sym.unknown().is_none() => Some(sym),
                _ => None,
            });
        let (Some(name), Some(step), Some(init)) = (counter.clone(), step, start.clone()) else {
            match (counter, start) {
                (Some(name), Some(init)) if step.is_none() && self.uniform_step(&name, update) => {
                    self.loop_with_unknown_step(name, init, cond, update, body);
                }
                _ => self.uncounted_loop(cond, body, update),
            }
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
        let cond_sym = cond.map_or(Sym::Const(1), |c| self.quiet_int(c));
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
    /// Whether `update` adds to `counter` (or subtracts from it) a value that is the same
    /// for every lane but not a known constant: `k += stride`, `i += blockDim.x * gridDim.x`.
    fn uniform_step(&mut self, counter: &str, update: &[Expr]) -> bool {
        let [update] = update else { return false };
        let is_counter = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == counter);
        let added = match &update.kind {
            ExprKind::Assign {
                op: Some(BinaryOp::Add | BinaryOp::Sub),
                target,
                value,
            } if is_counter(target) => value,
            ExprKind::Assign {
                op: None,
                target,
                value,
            } if is_counter(target) => match &value.kind {
                ExprKind::Binary {
                    op: BinaryOp::Add | BinaryOp::Sub,
                    lhs,
                    rhs,
                } if is_counter(lhs) => rhs,
                ExprKind::Binary {
                    op: BinaryOp::Add,
                    lhs,
                    rhs,
                } if is_counter(rhs) => lhs,
                _ => return false,
            },
            _ => return false,
        };
        let value = self.quiet_int(added);
        value.unknown().is_none() && !value.mentions_thread()
    }

    /// A loop stepped by a warp-uniform value the analysis does not know: in each iteration
    /// the counter is its start plus one unknown uniform value (the counter itself when it
    /// starts uniform), evaluated as any unknown uniform is; the figures are per iteration.
    fn loop_with_unknown_step(
        &mut self,
        name: String,
        init: Sym,
        cond: Option<&Expr>,
        update: &[Expr],
        body: &'a [Stmt],
    ) {
        let id = self.loops.len();
        let thread_dependent = init.mentions_thread();
        let (uniform, counter_value) = if thread_dependent {
            let uniform = Atom::Uniform(format!("{name}_offset"));
            let value = Sym::binary(Op::Add, init, Sym::Atom(uniform.clone()));
            (uniform, value)
        } else {
            let uniform = Atom::Uniform(name.clone());
            (uniform.clone(), Sym::Atom(uniform))
        };
        self.assign(&name, Value::Int(counter_value));
        let cond_sym = cond.map_or(Sym::Const(1), |c| self.quiet_int(c));
        self.loops.push(Loop {
            name: uniform.to_string(),
            values: LoopValues::Unknown(format!(
                "the step of loop `{name}` is a value the analysis does not know"
            )),
            parent: self.enclosing.last().copied(),
        });
        let outer_active = self.active.clone();
        if thread_dependent {
            // Each thread runs only the iterations its own counter allows.
            self.active = Sym::binary(Op::LogAnd, self.active.clone(), cond_sym);
        }
        self.enclosing.push(id);
        self.loop_body(body, &name, None, update, None);
        self.enclosing.pop();
        self.active = outer_active;
        self.forget(&name);
    }

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
        self.quiet_int(expr).constant()
    }

    /// `expr`'s value, its shared accesses not recorded (a loop's test or step, evaluated
    /// again where the loop runs them).
    fn quiet_int(&mut self, expr: &Expr) -> Sym {
        let recording = std::mem::replace(&mut self.recording, false);
        let value = self.eval_int(expr);
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
    pub(super) fn opaque_loop(&mut self, cond: Option<&Expr>, body: &'a [Stmt], cond_first: bool) {
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
    if let Some(masked) = masked_sum(placeholder, v0, end, progress) {
        return Some(masked);
    }
    let Sym::Binary(op, l, r) = end else {
        return None;
    };
    let (op, amount) = match (op, **l == p, **r == p) {
        (Op::Add | Op::Sub | Op::Mul | Op::Shl | Op::Shr | Op::Div, true, false) => {
            (*op, (**r).clone())
        }
        (Op::Add | Op::Mul, false, true) => (*op, (**l).clone()),
        _ => return None,
    };
    if !amount.is_uniform() || amount.atoms().contains(&placeholder) {
        return None;
    }
    // A power of two per iteration, as a shift: `v·2^b` each time is `v0 << b·n` after n.
    let log2 = |k: i64| (k > 0 && k.count_ones() == 1).then(|| i64::from(k.trailing_zeros()));
    let shift_by = |bits: i64, n: &Sym| Sym::binary(Op::Mul, n.clone(), Sym::Const(bits));
    match (op, progress) {
        (Op::Add | Op::Sub, Progress::Iterations(n)) => {
            let step = Sym::binary(Op::Mul, n.clone(), amount);
            Some(Sym::binary(op, v0.clone(), step))
        }
        // Shifts compose by adding their amounts, and truncating divisions by multiplying
        // their divisors; the GPU clamps a shift past the width as the repeated one ends.
        (Op::Shl | Op::Shr, Progress::Iterations(n)) => {
            let bits = amount.constant().filter(|b| (0..32).contains(b))?;
            Some(Sym::binary(op, v0.clone(), shift_by(bits, n)))
        }
        (Op::Mul, Progress::Iterations(n)) => {
            let bits = log2(amount.constant()?)?;
            Some(Sym::binary(Op::Shl, v0.clone(), shift_by(bits, n)))
        }
        (Op::Div, Progress::Iterations(n)) => {
            let bits = log2(amount.constant()?)?;
            let divisor = Sym::binary(Op::Shl, Sym::Const(1), shift_by(bits, n));
            Some(Sym::binary(Op::Div, v0.clone(), divisor))
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

/// A sum kept under a power-of-two mask each iteration (`pos = (pos + 4) & (N - 1)`, a ring
/// buffer): masking after every step is masking once, since `& (2^m - 1)` keeps the sum
/// modulo `2^m`. The first iteration sees the value on entry as it is.
fn masked_sum(placeholder: &Atom, v0: &Sym, end: &Sym, progress: &Progress) -> Option<Sym> {
    let Progress::Iterations(n) = progress else {
        return None;
    };
    let p = Sym::Atom(placeholder.clone());
    let Sym::Binary(Op::And, l, r) = end else {
        return None;
    };
    let low_mask = |s: &Sym| s.constant().filter(|&m| m > 0 && (m + 1).count_ones() == 1);
    let (sum, mask) = match (low_mask(r), low_mask(l)) {
        (Some(mask), _) => (&**l, mask),
        (None, Some(mask)) => (&**r, mask),
        _ => return None,
    };
    let Sym::Binary(op @ (Op::Add | Op::Sub), a, b) = sum else {
        return None;
    };
    let amount = match (**a == p, **b == p) {
        (true, false) => (**b).clone(),
        (false, true) if *op == Op::Add => (**a).clone(),
        _ => return None,
    };
    if !amount.is_uniform() || amount.atoms().contains(&placeholder) {
        return None;
    }
    let moved = Sym::binary(*op, v0.clone(), Sym::binary(Op::Mul, n.clone(), amount));
    let masked = Sym::binary(Op::And, moved, Sym::Const(mask));
    let first = Sym::binary(Op::Eq, n.clone(), Sym::Const(0));
    Some(Sym::select(first, v0.clone(), masked))
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
pub(super) fn has_side_effects(expr: &Expr) -> bool {
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

/// Whether `stmts` hold a `continue` of their own loop (not one of a loop inside them),
/// which would skip a `while` loop's last statement.
fn continues(stmts: &[Stmt]) -> bool {
    let mut stack: Vec<&Stmt> = stmts.iter().collect();
    while let Some(stmt) = stack.pop() {
        match stmt {
            Stmt::Continue => return true,
            Stmt::If {
                then, otherwise, ..
            } => stack.extend(then.iter().chain(otherwise)),
            Stmt::Block(inner) | Stmt::Switch { body: inner, .. } => stack.extend(inner),
            _ => {}
        }
    }
    false
}
