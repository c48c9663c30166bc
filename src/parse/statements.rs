//! The statement tree of a function body ([`Stmt`]), as [`super::body`] lowers it, and the
//! one walk over its nested statements.
use super::ast::{Expr, Span};
use serde::{Deserialize, Serialize};

/// One statement of a function body, as far as the affine analysis follows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// One declarator of a declaration: `int i = e, *p = &x;` gives two.
    Decl(Decl),
    Expr(Expr),
    /// Also an undecidable `#if`/`#ifdef`/`#elif` in a body: its condition is then an
    /// [`ExprKind::Opaque`] that names the directive, and exactly one branch is live.
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// `for (init; cond; update) body`; a range-for is `Opaque`. Comma-separated
    /// initializer expressions and updates (`j += 2, ++m`) are split, one per entry.
    For {
        init: Vec<Stmt>,
        cond: Option<Expr>,
        update: Vec<Expr>,
        body: Vec<Stmt>,
        span: Span,
    },
    /// A `while` whose condition declares a variable (`while (int x = f())`) is `Opaque`.
    While {
        cond: Expr,
        body: Vec<Stmt>,
    },
    DoWhile {
        body: Vec<Stmt>,
        cond: Expr,
    },
    /// The case labels are dropped: every statement of the body may run.
    Switch {
        cond: Expr,
        body: Vec<Stmt>,
    },
    Block(Vec<Stmt>),
    Return(Option<Expr>),
    Break,
    Continue,
    /// `auto f = [&] __device__ (int i) { … };`: run where it is called.
    Lambda(Lambda),
    /// Anything else (goto, asm statements, range-for, try, other lambdas, local class definitions,
    /// statements nested too deeply, …); labels are dropped and their statement kept.
    /// `assigned` lists the local names it may write or declare (assignment targets, `++`/`--`
    /// operands, `&x`, asm outputs, declared names), so the analysis forgets their values;
    /// `exprs` holds the outermost expressions inside it that could be lowered, in source
    /// order, so that the accesses in them are still visible; `span` locates it.
    Opaque {
        what: String,
        span: Span,
        assigned: Vec<String>,
        exprs: Vec<Expr>,
    },
}

impl Stmt {
    /// The statement lists nested directly in this one, in source order. Every walk over
    /// nested statements goes through here, so a new kind of statement is reached by all of
    /// them (an opaque statement's contents are its `exprs`, not statements).
    pub fn nested(&self) -> Vec<&[Stmt]> {
        match self {
            Stmt::If {
                then, otherwise, ..
            } => vec![then, otherwise],
            Stmt::For { init, body, .. } => vec![init, body],
            Stmt::While { body, .. }
            | Stmt::DoWhile { body, .. }
            | Stmt::Switch { body, .. }
            | Stmt::Block(body) => vec![body],
            Stmt::Lambda(lambda) => vec![&lambda.body],
            Stmt::Decl(_)
            | Stmt::Expr(_)
            | Stmt::Return(_)
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Opaque { .. } => Vec::new(),
        }
    }
}

/// Every statement of `statements`, nested ones included, in source order; iterative, so no
/// walk recurses however deep the body (the lowering bounds it anyway).
pub fn walk_statements<'a>(statements: &'a [Stmt], visit: &mut impl FnMut(&'a Stmt)) {
    let mut pending: Vec<std::slice::Iter<'a, Stmt>> = vec![statements.iter()];
    while let Some(level) = pending.last_mut() {
        let Some(statement) = level.next() else {
            pending.pop();
            continue;
        };
        visit(statement);
        for nested in statement.nested().into_iter().rev() {
            pending.push(nested.iter());
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decl {
    pub name: String,
    /// The type as written without the declarator and without storage classes
    /// (`const unsigned int`, `float`, `T`).
    pub ty: String,
    /// Pointer declarator (`*p`, `* const p`), reference (`&r`), array (`a[4]`).
    pub pointer: bool,
    pub reference: bool,
    pub array: bool,
    pub is_static: bool,
    pub is_extern: bool,
    pub is_shared: bool,
    /// `= e` lowered as `e`. Constructor-style and brace initializers (`dim3 b(32, 8)`,
    /// `int a[2] = {x, y}`, `float4 v{…}`) are a [`ExprKind::Call`] of the type name (the
    /// callee's span is the type's) whose span is the argument or initializer list.
    pub init: Option<Expr>,
    /// The declarator, initializer included (`i = e`); for a condition declaration
    /// (`if (int x = f())`) the whole declaration.
    pub span: Span,
}

/// A lambda bound to a local name, whose captures the analysis can model: every capture by
/// reference (`[&]`, `[&x, &y]`), or every capture by copy and not `mutable` (`[=]`, `[x]`,
/// `[]`). Others stay [`Stmt::Opaque`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lambda {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    /// Captures by reference: the body sees the enclosing variables as they are at the call;
    /// by copy, as they were where the lambda was defined.
    pub by_reference: bool,
    /// The whole declarator, lambda included.
    pub span: Span,
}

/// A named function parameter; unnamed ones are skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    /// The type as written without the declarator (`const int`, `float`).
    pub ty: String,
    /// A function-pointer parameter (`float (*f)(int)`) is a pointer.
    pub pointer: bool,
    pub reference: bool,
    pub array: bool,
}
