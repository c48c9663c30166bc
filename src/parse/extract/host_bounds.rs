//! The most a block size computed at run time by a host function of the file can be.
//!
//! apex's `SoftMax_getBlockSize(ILP, dim_size)` doubles a size while it is below half of
//! `min(dim_size / ILP, 1024)`, then takes at least 32: whatever `dim_size` is, the block has
//! at most 512 threads. A kernel launched with such a block is analysed at that bound, the
//! worst case the code allows, and the warning says which function gave it.
//!
//! The evaluation is an abstract interpretation over ranges of non-negative integers that
//! also know when every value is a power of two (sizes made by doubling): loops run to a
//! fixed point, bounded by [`MAX_ROUNDS`], past which nothing is known.
use super::Extractor;
use crate::c_int::Semantics;
use crate::parse::ast::{BinaryOp, Expr, ExprKind};
use crate::parse::body::Lowering;
use crate::parse::consts::{Bindings, ConstEnv};
use crate::parse::statements::Stmt;
use crate::parse::symbols::{child, FIELDS};
use crate::parse::syntax::Node;
use std::collections::HashMap;

/// Rounds a loop is run for before its variables are taken as unknown.
const MAX_ROUNDS: usize = 64;

/// Statements of a helper beyond which it is not evaluated.
const MAX_STATEMENTS: usize = 64;

/// A host function that may compute a block size: its parameters and statements.
pub(super) struct HostFunction {
    params: Vec<String>,
    body: Vec<Stmt>,
}

/// Non-negative integers in `lo..=hi`, all powers of two when `pow2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    lo: u64,
    hi: u64,
    pow2: bool,
}

impl Range {
    const ANY: Range = Range {
        lo: 0,
        hi: u64::MAX,
        pow2: false,
    };

    fn exactly(v: u64) -> Range {
        Range {
            lo: v,
            hi: v,
            pow2: v.is_power_of_two(),
        }
    }

    /// Bounds tightened to the powers of two inside them.
    fn normal(self) -> Option<Range> {
        if !self.pow2 {
            return (self.lo <= self.hi).then_some(self);
        }
        let lo = self.lo.max(1).checked_next_power_of_two()?;
        let hi = 1u64 << (63 - self.hi.max(1).leading_zeros());
        (lo <= hi && self.hi >= 1).then_some(Range { lo, hi, pow2: true })
    }

    fn join(self, other: Range) -> Range {
        Range {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            pow2: self.pow2 && other.pow2,
        }
    }
}

/// The values of a helper's names; `None` for one whose value is not an integer known to
/// be non-negative.
type Env = HashMap<String, Option<Range>>;

impl Extractor<'_> {
    /// Keeps a host function that returns `dim3` or an integer, for [`Self::block_bound`].
    pub(super) fn host_function(&mut self, node: Node) {
        let returns = child(node, FIELDS.type_).map(|t| self.one_line(t));
        let sizes =
            returns.is_some_and(|ty| ty == "dim3" || super::constants::is_integer_type(&ty));
        let has = |keyword| super::functions::has_modifier(node, self.src, keyword);
        if has("__global__") || (has("__device__") && !has("__host__")) {
            return;
        }
        let (Some(name), Some(body), true) = (
            super::function_name(node, self.src),
            child(node, FIELDS.body),
            sizes,
        ) else {
            return;
        };
        let lowering = Lowering {
            src: self.src,
            dead: &[],
            condition: &|node| self.preproc_condition(node),
        };
        let body = lowering.body(body);
        if count(&body) > MAX_STATEMENTS {
            return;
        }
        let params = crate::parse::body::parameters(node, self.src)
            .into_iter()
            .map(|p| p.name)
            .collect();
        self.host_functions
            .insert(name, HostFunction { params, body });
    }

    /// The most each dimension of a launch's block can be, when its components are calls of
    /// host functions of the file (or one call returning a `dim3`) whose results are bounded:
    /// the bound and the function that gives it.
    pub(super) fn block_bound(
        &self,
        components: &[Expr],
        scope: &Bindings,
    ) -> Option<([u32; 3], String)> {
        let mut shape = [1u32; 3];
        let mut named = None;
        let mut slot = 0;
        for component in components {
            let (values, name) = match &component.kind {
                ExprKind::Call { callee, args, .. } => match &callee.kind {
                    ExprKind::Name(name) => (self.returned(name, args, scope)?, name.clone()),
                    _ => return None,
                },
                _ => {
                    let bounds = Bounds {
                        consts: &self.env,
                        scope,
                    };
                    (vec![bounds.range(component, &Env::new())?], String::new())
                }
            };
            if !name.is_empty() {
                named.get_or_insert(name);
            }
            for value in values {
                *shape.get_mut(slot)? = u32::try_from(value.hi).ok().filter(|&v| v > 0)?;
                slot += 1;
            }
        }
        let name = named?;
        crate::parse::check_block_shape(shape, "").ok()?;
        Some((shape, name))
    }

    /// The ranges of the values `name(args)` returns: one per component of a `dim3`.
    fn returned(&self, name: &str, args: &[Expr], scope: &Bindings) -> Option<Vec<Range>> {
        let function = self.host_functions.get(name)?;
        let outside = Bounds {
            consts: &self.env,
            scope,
        };
        let mut env = Env::new();
        for (param, arg) in function.params.iter().zip(args) {
            env.insert(param.clone(), outside.range(arg, &Env::new()));
        }
        let mut returns: Option<Vec<Range>> = None;
        outside.run(&function.body, &mut env, &mut returns)?;
        returns
    }
}

/// The evaluation of one helper under one launch's constants.
struct Bounds<'e> {
    consts: &'e ConstEnv,
    scope: &'e Bindings,
}

impl Bounds<'_> {
    /// Runs `statements`, joining every returned value into `returns`; `None` when a
    /// statement cannot be followed.
    fn run(
        &self,
        statements: &[Stmt],
        env: &mut Env,
        returns: &mut Option<Vec<Range>>,
    ) -> Option<()> {
        for statement in statements {
            match statement {
                Stmt::Decl(decl) => {
                    let value = decl.init.as_ref().and_then(|init| self.range(init, env));
                    env.insert(decl.name.clone(), value);
                }
                Stmt::Expr(expr) => self.assign(expr, env)?,
                Stmt::Block(inner) => self.run(inner, env, returns)?,
                Stmt::If {
                    then, otherwise, ..
                } => {
                    let mut other = env.clone();
                    self.run(then, env, returns)?;
                    self.run(otherwise, &mut other, returns)?;
                    join_into(env, &other);
                }
                Stmt::While { cond, body } => self.loop_(cond, body, &[], env, returns)?,
                Stmt::For {
                    init,
                    cond: Some(cond),
                    update,
                    body,
                    ..
                } => {
                    self.run(init, env, returns)?;
                    self.loop_(cond, body, update, env, returns)?;
                }
                Stmt::Return(Some(value)) => {
                    let values = self.components(value, env)?;
                    *returns = Some(match returns.take() {
                        Some(old) if old.len() == values.len() => {
                            old.iter().zip(&values).map(|(a, b)| a.join(*b)).collect()
                        }
                        Some(_) => return None,
                        None => values,
                    });
                    return Some(());
                }
                _ => return None,
            }
        }
        Some(())
    }

    /// A loop run to a fixed point: inside, its condition holds; after it, it does not.
    fn loop_(
        &self,
        cond: &Expr,
        body: &[Stmt],
        update: &[Expr],
        env: &mut Env,
        returns: &mut Option<Vec<Range>>,
    ) -> Option<()> {
        for _ in 0..MAX_ROUNDS {
            let mut inside = env.clone();
            self.refine(cond, true, &mut inside);
            self.run(body, &mut inside, returns)?;
            for step in update {
                self.assign(step, &mut inside)?;
            }
            let before = env.clone();
            join_into(env, &inside);
            if *env == before {
                self.refine(cond, false, env);
                return Some(());
            }
        }
        None
    }

    /// Narrows the range of the name a condition `name < e` (or `<=`, `>`, `>=`) compares,
    /// as the condition is `holds`.
    fn refine(&self, cond: &Expr, holds: bool, env: &mut Env) {
        let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
            return;
        };
        let ExprKind::Name(name) = &lhs.kind else {
            return;
        };
        let (Some(Some(value)), Some(bound)) = (env.get(name).copied(), self.range(rhs, env))
        else {
            return;
        };
        let below = match (op, holds) {
            (BinaryOp::Lt, true) | (BinaryOp::Ge, false) => Some(true),
            (BinaryOp::Ge, true) | (BinaryOp::Lt, false) => Some(false),
            _ => None,
        };
        let refined = match below {
            Some(true) => Range {
                hi: value.hi.min(bound.hi.saturating_sub(1)),
                ..value
            },
            Some(false) => Range {
                lo: value.lo.max(bound.lo),
                ..value
            },
            None => value,
        };
        // A condition no value meets leaves the range as it was (the branch is not taken).
        if let Some(refined) = refined.normal() {
            env.insert(name.clone(), Some(refined));
        }
    }

    /// `x = e`, `x op= e`, `++x`: the new value of `x`.
    fn assign(&self, expr: &Expr, env: &mut Env) -> Option<()> {
        match &expr.kind {
            ExprKind::Assign { op, target, value } => {
                let ExprKind::Name(name) = &target.kind else {
                    return None;
                };
                let value = match op {
                    None => self.range(value, env),
                    Some(op) => {
                        let old = env.get(name).copied().flatten()?;
                        let rhs = self.range(value, env)?;
                        binary(*op, old, rhs)
                    }
                };
                env.insert(name.clone(), value);
                Some(())
            }
            ExprKind::Step {
                increment, operand, ..
            } => {
                let ExprKind::Name(name) = &operand.kind else {
                    return None;
                };
                let old = env.get(name).copied().flatten();
                let new = old.and_then(|old| match increment {
                    true => binary(BinaryOp::Add, old, Range::exactly(1)),
                    false => binary(BinaryOp::Sub, old, Range::exactly(1)),
                });
                env.insert(name.clone(), new);
                Some(())
            }
            _ => None,
        }
    }

    /// The components of a returned value: `dim3(a, b)`'s, or the one integer.
    fn components(&self, value: &Expr, env: &Env) -> Option<Vec<Range>> {
        match &value.kind {
            ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n == "dim3") => {
                args.iter().map(|a| self.range(a, env)).collect()
            }
            _ => Some(vec![self.range(value, env)?]),
        }
    }

    /// The range of an integer expression; `None` when it may be negative or is not known
    /// to be an integer.
    fn range(&self, expr: &Expr, env: &Env) -> Option<Range> {
        if let ExprKind::Name(name) = &expr.kind {
            if let Some(value) = env.get(name) {
                return *value;
            }
        }
        if let Ok(v) = self.consts.eval(expr, self.scope) {
            return u64::try_from(v).ok().map(Range::exactly);
        }
        match &expr.kind {
            ExprKind::Int(v) => u64::try_from(*v).ok().map(Range::exactly),
            // A value from outside (a parameter not passed, a run-time value): any size.
            ExprKind::Name(_) => Some(Range::ANY),
            ExprKind::Binary { op, lhs, rhs } => {
                binary(*op, self.range(lhs, env)?, self.range(rhs, env)?)
            }
            ExprKind::Cast { operand, .. } => self.range(operand, env),
            ExprKind::Conditional {
                then, otherwise, ..
            } => Some(self.range(then, env)?.join(self.range(otherwise, env)?)),
            ExprKind::Call { callee, args, .. } => {
                let ExprKind::Name(name) = &callee.kind else {
                    return None;
                };
                let name = name.trim_start_matches("std::").trim_start_matches("::");
                match (name, &args[..]) {
                    ("static_cast", [value]) => self.range(value, env),
                    ("min" | "max" | "umin" | "umax", [a, b]) => {
                        let (a, b) = (self.range(a, env)?, self.range(b, env)?);
                        let pow2 = a.pow2 && b.pow2;
                        Some(match name {
                            "min" | "umin" => Range {
                                lo: a.lo.min(b.lo),
                                hi: a.hi.min(b.hi),
                                pow2,
                            },
                            _ => Range {
                                lo: a.lo.max(b.lo),
                                hi: a.hi.max(b.hi),
                                pow2,
                            },
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// `a op b` on ranges, for the operators sizes are computed with.
fn binary(op: BinaryOp, a: Range, b: Range) -> Option<Range> {
    let range = match op {
        BinaryOp::Add => Range {
            lo: a.lo.saturating_add(b.lo),
            hi: a.hi.saturating_add(b.hi),
            pow2: false,
        },
        BinaryOp::Sub => Range {
            lo: a.lo.checked_sub(b.hi)?,
            hi: a.hi.checked_sub(b.lo)?,
            pow2: false,
        },
        BinaryOp::Mul => Range {
            lo: a.lo.saturating_mul(b.lo),
            hi: a.hi.saturating_mul(b.hi),
            pow2: a.pow2 && b.pow2,
        },
        BinaryOp::Div => Range {
            lo: a.lo / b.hi.max(1),
            hi: a.hi / b.lo.max(1),
            pow2: false,
        },
        // The endpoints shift as a constant does (crate::c_int); ranges hold no negatives.
        BinaryOp::Shl | BinaryOp::Shr => {
            let shift = |value: u64, by: u64| -> Option<u64> {
                let value = i64::try_from(value).ok()?;
                let by = i64::try_from(by).ok()?;
                u64::try_from(op.op().apply(value, by, Semantics::Constant)?).ok()
            };
            if op == BinaryOp::Shl {
                Range {
                    lo: shift(a.lo, b.lo).unwrap_or(u64::MAX),
                    hi: shift(a.hi, b.hi)?,
                    pow2: a.pow2,
                }
            } else {
                Range {
                    lo: shift(a.lo, b.hi)?,
                    hi: shift(a.hi, b.lo)?,
                    pow2: false,
                }
            }
        }
        _ => return None,
    };
    range.normal()
}

/// `env` joined with `other`: a name either does not know is not known.
fn join_into(env: &mut Env, other: &Env) {
    for (name, value) in env.iter_mut() {
        *value = match (*value, other.get(name).copied().flatten()) {
            (Some(a), Some(b)) => Some(a.join(b)),
            _ => None,
        };
    }
}

/// Statements, nested ones included.
fn count(statements: &[Stmt]) -> usize {
    let mut counted = 0;
    crate::parse::walk_statements(statements, &mut |_| counted += 1);
    counted
}
