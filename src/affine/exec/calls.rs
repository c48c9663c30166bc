//! Calls: macros with parameters, atomics, cooperative groups, calls into the file's
//! functions with pointer arguments (inlined), the values index helpers return, and lambdas
//! of the body.
use super::pointers::Lvalue;
use super::{is_integer, Executor, Value};
use crate::affine::sym::{Axis, Op, Sym, Unknown};
use crate::parse::{
    is_atomic, AccessKind, EscapeKind, Expr, ExprKind, Function, Span, Stmt, UnaryOp,
};

/// Calls inlined inside one another beyond which a pointer argument is not followed.
const MAX_INLINE_DEPTH: usize = 8;

impl<'a> Executor<'a> {
    pub(super) fn call(&mut self, callee: &Expr, args: &[Expr], expr: &Expr) -> Value {
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
                    let value = self.expand(&name, expr.span, |ex| ex.eval(body));
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
        // A callee that is an element access (`t[i](…)`, as a struct-of-arrays rewrite makes
        // `s[i].f(…)`) is one: recorded, as the member's base was by `group_call`.
        if let Some(entries) = self.direct(callee) {
            self.record(&entries);
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
            _ => match target.and_then(|f| self.returned_value(f, &name, ints, expr)) {
                Some(value) => value,
                None => Value::Data(format!("the result of `{callee}`")),
            },
        }
    }

    /// The value an index helper returns (`laneId() { return threadIdx.x & 31; }`,
    /// `int idx(int r, int c) { int w = c >> 2; return r * 33 + w; }`): a function of this
    /// file whose body is local declarations and one `return`, with integer parameters, is
    /// evaluated with them bound to the arguments. `None` for any other function.
    fn returned_value(
        &mut self,
        target: &'a Function,
        name: &str,
        args: Vec<Sym>,
        expr: &Expr,
    ) -> Option<Value> {
        let statements = self.functions.statements(target);
        let (Stmt::Return(Some(value)), declarations) = statements.split_last()? else {
            return None;
        };
        let simple = declarations.iter().all(|s| matches!(s, Stmt::Decl(_)))
            && target.params.len() == args.len()
            && target
                .params
                .iter()
                .all(|p| is_integer(&p.ty) && !p.pointer && !p.array && !p.reference)
            && self.calls.len() < MAX_INLINE_DEPTH
            && !self.calls.iter().any(|(_, f)| *f == target.name);
        if !simple || target.body.is_empty() {
            return None;
        }
        // Counted as a statement: helpers whose returns call helpers, many times each,
        // multiply like inlined calls do, and stop at the same budget.
        self.statements += 1;
        if self.statements > super::MAX_STATEMENTS {
            return None;
        }
        let bound = target
            .params
            .iter()
            .zip(args)
            .map(|(param, value)| (param.name.clone(), Value::Int(value)))
            .collect();
        let saved_locals = std::mem::replace(&mut self.locals, bound);
        let saved_scopes = std::mem::take(&mut self.scopes);
        let saved_params = std::mem::take(&mut self.params);
        let saved_bindings = std::mem::replace(&mut self.bindings, &target.bindings);
        self.calls.push((expr.span, &target.name));
        // In the callee's own scope (its locals are the ones just bound), kept for the return.
        for declaration in declarations {
            self.stmt(declaration);
        }
        // Bounded as a variable's value is: helpers that sum helpers grow the tree.
        let result = match self.eval(value) {
            Value::Int(sym) => Value::Int(sym.bounded()),
            _ => Value::Data(format!("the result of `{name}`")),
        };
        self.calls.pop();
        self.bindings = saved_bindings;
        self.params = saved_params;
        self.scopes = saved_scopes;
        self.locals = saved_locals;
        Some(result)
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
        // The callee's unseen uses first: a pointer bound to one of its parameters escapes.
        let saved_unseen = std::mem::replace(&mut self.unseen_uses, &target.unseen_uses);
        for ((name, value), arg) in bound.iter().zip(args) {
            self.check_inactive(name, value, arg.span);
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
        self.unseen_uses = saved_unseen;
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
        // `f<BM, BK>(…)` in an instance of a template calls the instance its bindings name.
        let template_args: Vec<String> = template_args(expr)
            .iter()
            .map(|arg| self.constants.template_argument(arg, self.bindings))
            .collect();
        let candidates: Vec<&'a Function> = self
            .functions
            .named(name)
            .filter(|f| f.params.len() == arity && f.syntax_error.is_none())
            .filter(|f| {
                template_args.is_empty()
                    || f.template_args.len() == template_args.len()
                        && f.template_args
                            .iter()
                            .zip(&template_args)
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

/// The explicit template arguments of a call (`f<16>(x)`), as written.
fn template_args(call: &Expr) -> &[String] {
    match &call.kind {
        ExprKind::Call { template_args, .. } => template_args,
        _ => &[],
    }
}
