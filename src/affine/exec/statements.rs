//! Statements: blocks and their scopes, branches joined by a select, declarations, and the
//! local names they bind.
use super::pointers::{origin, Lvalue, Pointer};
use super::{is_integer, Executor, LambdaDef, Value};
use crate::affine::sym::{Op, Sym, Unknown};
use crate::parse::{Decl, EscapeKind, Stmt};

impl<'a> Executor<'a> {
    pub(super) fn block_of(&mut self, stmts: &'a [Stmt]) {
        self.scopes.push(self.locals.len());
        for stmt in stmts {
            self.stmt(stmt);
        }
        let start = self.scopes.pop().unwrap_or(0);
        self.locals.truncate(start);
    }

    pub(super) fn stmt(&mut self, stmt: &'a Stmt) {
        self.statements += 1;
        if self.statements > super::MAX_STATEMENTS {
            return;
        }
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
            Stmt::While { cond, body } => self.while_loop(cond, body, true),
            Stmt::DoWhile { body, cond } => self.while_loop(cond, body, false),
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
    pub(super) fn join(&mut self, c: &Sym, then: Value, otherwise: Value, why: String) -> Value {
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
            // Inside a call followed for a pointer, a shared array of the callee hides a
            // parameter of the same name: its accesses are the callee's own, not the
            // caller's array's.
            if !self.calls.is_empty() {
                let value = Value::Data(format!("`{}`, a shared array of the callee", decl.name));
                self.locals.push((decl.name.clone(), value));
            }
            return;
        }
        // `auto &r = p[i];`: writes through `r` reach the element unseen.
        let writable = !decl.ty.split_whitespace().any(|w| w == "const");
        if let (true, true, Some(init)) = (decl.reference, writable, &decl.init) {
            if let Lvalue::Place(place) = self.lvalue(init) {
                let kind = EscapeKind::BoundToReference(decl.name.clone());
                self.escape(&place.pointer, init.span, kind);
            }
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
        if let Some(init) = &decl.init {
            self.check_inactive(&decl.name, &value, init.span);
        }
        self.locals.push((decl.name.clone(), value.bounded()));
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Value> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    pub(super) fn assign(&mut self, name: &str, value: Value) -> bool {
        match self.locals.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1 = value.bounded();
                true
            }
            None => false,
        }
    }

    /// Makes `name`'s value unknown; a pointer keeps its array (every value a loop can give
    /// it is checked to be one, see `settle`).
    pub(super) fn forget(&mut self, name: &str) {
        self.stand_in(name, Sym::Unknown(Unknown::Reassigned(name.to_string())));
    }

    /// Gives `name` the value `sym`: its offset, when it holds a pointer.
    pub(super) fn stand_in(&mut self, name: &str, sym: Sym) {
        let value = match self.lookup(name) {
            Some(Value::Pointer(p)) => Value::Pointer(Pointer {
                offset: sym,
                ..p.clone()
            }),
            _ => Value::Int(sym),
        };
        self.assign(name, value);
    }
}
