//! Expressions: the value of an expression, of a name, of an operator, of a cast, and of the
//! built-in thread and block indices.
use super::pointers::{Lvalue, Place, Pointer};
use super::{is_integer, Executor, Value, MAX_MACRO_NESTING};
use crate::affine::sym::{Atom, Axis, Op, Sym, Unknown};
use crate::parse::{AccessKind, BinaryOp, EscapeKind, Expr, ExprKind, Span, UnaryOp};

impl<'a> Executor<'a> {
    /// The direct accesses (front-end subscripts of the array's name) at `expr`, if any.
    pub(super) fn direct(&self, expr: &Expr) -> Option<Vec<(usize, usize)>> {
        // A record declared with no extent is accessed by its name (`s.m[i]`).
        let candidate = match expr.kind {
            ExprKind::Index { .. } => true,
            ExprKind::Name(_) => self.named_accesses,
            _ => false,
        };
        if self.macro_site.is_some() || !candidate {
            return None;
        }
        self.accesses.get(&expr.span).cloned()
    }

    pub(super) fn eval(&mut self, expr: &Expr) -> Value {
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
            ExprKind::Opaque(what) => {
                // Spans inside a macro body match nothing in the file.
                if self.macro_site.is_none() {
                    self.opaque.push((expr.span, what.clone()));
                }
                Value::Data(what.clone())
            }
        }
    }

    /// `ty` with the type parameters of the running instance replaced by their types.
    fn bound_type(&self, ty: &str) -> String {
        if self.bindings.types.is_empty() {
            return ty.to_string();
        }
        crate::parse::replace_identifiers(ty, |name| self.bindings.types.get(name).cloned())
    }

    /// `(ty)operand`, `static_cast<ty>(operand)`.
    pub(super) fn cast(&mut self, ty: &str, operand: &Expr, expr: &Expr) -> Value {
        // `acc_t *` in an instance that binds `acc_t` is a pointer to that type.
        let bound = self.bound_type(ty);
        let ty = bound.as_str();
        match self.eval(operand) {
            Value::Pointer(p) if self.keeps_elements(p.array, ty) => {
                Value::Pointer(p.to_elements())
            }
            Value::Pointer(p) => match self.vector_view(p.array, ty) {
                Some(view) => Value::Pointer(Pointer {
                    view: Some(view),
                    ..p.to_elements()
                }),
                None => {
                    self.escape(&p, expr.span, EscapeKind::Cast(ty.to_string()));
                    Value::Data(format!("cast to `{ty}`"))
                }
            },
            v if is_integer(ty) => v,
            _ => Value::Data(format!("cast to `{ty}`")),
        }
    }

    pub(super) fn eval_int(&mut self, expr: &Expr) -> Sym {
        let v = self.eval(expr);
        self.int(v, expr)
    }

    /// `value` as an integer; a pointer used as one is out of sight.
    pub(super) fn int(&mut self, value: Value, at: &Expr) -> Sym {
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
                let compared = Sym::binary(BinaryOp::op(op), p.offset, q.offset);
                Value::Int(if op == BinaryOp::Sub {
                    Sym::binary(Op::Div, compared, Sym::Const(step))
                } else {
                    compared
                })
            }
            (op, l, r) => {
                let l = self.int(l, lhs);
                let r = self.int(r, rhs);
                Value::Int(Sym::binary(BinaryOp::op(op), l, r))
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
                        self.check_inactive(name, &new, expr.span);
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
            return self.expand(name, at, |ex| ex.eval(body));
        }
        if self.shared.contains(name) && self.calls.is_empty() {
            return Value::Data(format!("the address of `{name}`"));
        }
        Value::Int(Sym::Unknown(Unknown::UnknownName(name.to_string())))
    }

    /// The value of macro `name`, used at `at`, whose body `run` evaluates. As in C, a macro
    /// is not expanded again inside its own expansion (`#define A A`, or `B` → `C` → `B`): the
    /// name is left as an unknown one. Expansions nest [`MAX_MACRO_NESTING`] deep at most.
    pub(super) fn expand(
        &mut self,
        name: &str,
        at: Span,
        run: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        if self.expanding.iter().any(|m| m == name) {
            return Value::Int(Sym::Unknown(Unknown::UnknownName(name.to_string())));
        }
        if self.expanding.len() >= MAX_MACRO_NESTING {
            return Value::Int(Sym::Unknown(Unknown::TooComplex(format!(
                "`{name}` expands macros nested more than {MAX_MACRO_NESTING} deep"
            ))));
        }
        self.expanding.push(name.to_string());
        let recording = std::mem::replace(&mut self.recording, false);
        let value = self.in_macro(at, run);
        self.recording = recording;
        self.expanding.pop();
        value
    }

    /// Runs `run` as the expansion of the macro used at `at` (spans inside a macro body are
    /// relative to its text and match nothing in the source).
    pub(super) fn in_macro<T>(&mut self, at: Span, run: impl FnOnce(&mut Self) -> T) -> T {
        // The outermost use of a macro is where its expansion shows in the source.
        let site = self.macro_site.or(Some(at));
        let saved = std::mem::replace(&mut self.macro_site, site);
        let value = run(self);
        self.macro_site = saved;
        value
    }

    /// `threadIdx.x`, `blockDim.y`, `blockIdx.z`, `gridDim.x`.
    pub(super) fn builtin(&mut self, base: &Expr, field: &str) -> Option<Value> {
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
}
