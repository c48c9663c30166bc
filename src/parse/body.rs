//! Function bodies as a small owned statement tree, for the analyses that follow variables
//! through their definitions, loops and conditions (see [`Stmt`]).
//!
//! Lowering recurses over statements only, and no deeper than [`MAX_STMT_DEPTH`]: a statement
//! nested deeper becomes [`Stmt::Opaque`], whose contents are collected by an iterative walk.
//! Expressions are lowered with [`ast::lower`] (bounded by [`ast::MAX_DEPTH`]), so every span is
//! the one the rest of the front end uses, and adversarial bodies cannot overflow the stack.
use super::ast::{self, compact_text, Expr, ExprKind, Span};
use super::extract::{leftmost_identifier, walk};
use super::statements::{Decl, Lambda, Param, Stmt};
use super::symbols::{child, children_in, field_of, kind, FIELDS};
use super::syntax::Node;
use std::collections::HashSet;
use std::ops::Range;

/// Statement nesting depth beyond which a statement is kept as [`Stmt::Opaque`].
const MAX_STMT_DEPTH: usize = 200;

/// Why a statement is kept opaque: a node kind, or a fixed reason.
type Why<'t> = &'t str;

/// Expression nodes kinds whose lowering is collected into [`Stmt::Opaque::exprs`]: the ones
/// that can hold an access (bare names and literals cannot).
const EXPRESSION_ROOTS: &[&str] = &[
    "assignment_expression",
    "update_expression",
    "call_expression",
    "subscript_expression",
    "field_expression",
    "binary_expression",
    "unary_expression",
    "pointer_expression",
    "conditional_expression",
    "comma_expression",
    "cast_expression",
    "parenthesized_expression",
];

/// Node kinds that [`ast::lower`] keeps opaque although they contain statements or effects the
/// analysis must see: a statement holding one is lowered as [`Stmt::Opaque`].
const HIDES_STATEMENTS: &[&str] = &[
    "lambda_expression",
    "gnu_asm_expression",
    "compound_statement",
];

/// What lowering needs besides the tree: the source text, the dead `#if` branches of the body,
/// and how a `#if`/`#ifdef`/`#elif` condition evaluates (`None`: undecidable).
pub(super) struct Lowering<'a> {
    pub src: &'a str,
    pub dead: &'a [Range<usize>],
    pub condition: &'a dyn Fn(Node) -> Option<bool>,
}

impl Lowering<'_> {
    /// The statements of a function body (a `compound_statement`).
    pub fn body(&self, body: Node) -> Vec<Stmt> {
        let mut out = Vec::new();
        self.items(body, 0, &mut out);
        tight(out)
    }

    /// Lowers the block items of `node` (a compound statement, a case, a preprocessor branch)
    /// into `out`, skipping the guards of preprocessor conditionals and case values.
    fn items(&self, node: Node, depth: usize, out: &mut Vec<Stmt>) {
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return;
        }
        let guards = [
            FIELDS.condition,
            FIELDS.name,
            FIELDS.alternative,
            FIELDS.value,
        ];
        loop {
            let item = cursor.node();
            let guard = field_of(&cursor).is_some_and(|id| guards.contains(&id));
            // Comments are the grammar's only named extras.
            if item.is_named() && !guard && !item.is_extra() {
                self.item(item, depth, out);
            }
            if !cursor.goto_next_sibling() {
                return;
            }
        }
    }

    fn item(&self, node: Node, depth: usize, out: &mut Vec<Stmt>) {
        let kind = kind(node);
        match kind {
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef"
            | "preproc_else" => self.preproc(node, depth + 1, out),
            // `#pragma unroll`, local `#define`s, …: no run-time effect.
            "preproc_call" | "preproc_def" | "preproc_function_def" | "preproc_include" => {}
            // Case labels are dropped: their statements run in place.
            "case_statement" => self.items(node, depth + 1, out),
            _ => self.stmt(node, kind, depth, out),
        }
    }

    /// Inlines the live branch of a preprocessor conditional; both branches of an
    /// undecidable one become an `If` whose condition is opaque.
    fn preproc(&self, node: Node, depth: usize, out: &mut Vec<Stmt>) {
        if depth > MAX_STMT_DEPTH {
            out.push(self.opaque(node, "statement nested too deeply"));
            return;
        }
        let alternative = child(node, FIELDS.alternative);
        let decided = match kind(node) {
            "preproc_else" => Some(true),
            _ => (self.condition)(node),
        };
        match decided {
            Some(true) => self.items(node, depth, out),
            Some(false) => {
                if let Some(alternative) = alternative {
                    self.preproc(alternative, depth + 1, out);
                }
            }
            None => {
                let guard = child(node, FIELDS.condition)
                    .or_else(|| child(node, FIELDS.name))
                    .unwrap_or(node);
                let directive = self.src[node.byte_range()].lines().next().unwrap_or("");
                let cond = Expr {
                    kind: ExprKind::Opaque(format!(
                        "preprocessor condition `{}`",
                        directive.trim()
                    )),
                    span: Span::of(guard),
                };
                let mut then = Vec::new();
                self.items(node, depth, &mut then);
                let mut otherwise = Vec::new();
                if let Some(alternative) = alternative {
                    self.preproc(alternative, depth + 1, &mut otherwise);
                }
                out.push(Stmt::If {
                    cond,
                    then: tight(then),
                    otherwise: tight(otherwise),
                });
            }
        }
    }

    /// Lowers one statement of kind `kind` into `out` (a declaration may give several), or an
    /// `Opaque`.
    fn stmt<'t>(&self, node: Node<'t>, kind: &'t str, depth: usize, out: &mut Vec<Stmt>) {
        if depth > MAX_STMT_DEPTH {
            out.push(self.opaque(node, "statement nested too deeply"));
            return;
        }
        let mark = out.len();
        if let Err(why) = self.lower_stmt(node, kind, depth, out) {
            out.truncate(mark);
            out.push(self.opaque(node, why));
        }
    }

    /// Each compound statement is lowered by its own method, which keeps this frame small:
    /// it is on the stack once per nesting level.
    fn lower_stmt<'t>(
        &self,
        node: Node<'t>,
        kind: &'t str,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        match kind {
            "expression_statement" | "macro_invocation_statement" => self.expression(node, out)?,
            "declaration" => self.declaration(node, Some(depth), out)?,
            "compound_statement" => self.block(node, depth, out),
            "if_statement" => self.if_statement(node, depth, out)?,
            "for_statement" => self.for_statement(node, depth, out)?,
            "while_statement" => self.while_statement(node, depth, out)?,
            "do_statement" => self.do_statement(node, depth, out)?,
            "switch_statement" => self.switch_statement(node, depth, out)?,
            "return_statement" => self.return_statement(node, out)?,
            "break_statement" => out.push(Stmt::Break),
            "continue_statement" => out.push(Stmt::Continue),
            "labeled_statement" | "attributed_statement" => self.labeled(node, depth, out),
            other => return Err(other),
        }
        Ok(())
    }

    fn expression<'t>(&self, node: Node<'t>, out: &mut Vec<Stmt>) -> Result<(), Why<'t>> {
        if let Some(expr) = first_named(node) {
            out.push(Stmt::Expr(self.expr(expr)?));
        }
        Ok(())
    }

    fn return_statement<'t>(&self, node: Node<'t>, out: &mut Vec<Stmt>) -> Result<(), Why<'t>> {
        let value = match first_named(node) {
            Some(value) => Some(self.expr(value)?),
            None => None,
        };
        out.push(Stmt::Return(value));
        Ok(())
    }

    /// A nested block.
    fn block(&self, node: Node, depth: usize, out: &mut Vec<Stmt>) {
        let mut items = Vec::new();
        self.items(node, depth + 1, &mut items);
        out.push(Stmt::Block(tight(items)));
    }

    fn if_statement<'t>(
        &self,
        node: Node<'t>,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let (mut prefix, cond) = self.condition(child(node, FIELDS.condition), depth, true)?;
        let then = self.branch(child(node, FIELDS.consequence), depth);
        let otherwise = child(node, FIELDS.alternative).and_then(first_named);
        let otherwise = self.branch(otherwise, depth);
        let stmt = Stmt::If {
            cond,
            then,
            otherwise,
        };
        out.push(wrap(&mut prefix, stmt));
        Ok(())
    }

    fn for_statement<'t>(
        &self,
        node: Node<'t>,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let ForHeader { init, cond, update } = self.for_header(node)?;
        let body = self.branch(child(node, FIELDS.body), depth);
        out.push(Stmt::For {
            init,
            cond,
            update,
            body,
            span: Span::of(node),
        });
        Ok(())
    }

    /// The initializer, condition and updates of a `for`, lowered in a frame of their own
    /// (not on the stack while the body is lowered).
    fn for_header<'t>(&self, node: Node<'t>) -> Result<ForHeader, Why<'t>> {
        let mut init = Vec::new();
        match child(node, FIELDS.initializer) {
            Some(decl) if kind(decl) == "declaration" => self.declaration(decl, None, &mut init)?,
            Some(expr) => {
                for part in split_commas(expr) {
                    init.push(Stmt::Expr(self.expr(part)?));
                }
            }
            None => {}
        }
        let cond = child(node, FIELDS.condition)
            .map(|c| self.expr(c))
            .transpose()?;
        let parts = child(node, FIELDS.update)
            .map(split_commas)
            .unwrap_or_default();
        let mut update = Vec::with_capacity(parts.len());
        for part in parts {
            update.push(self.expr(part)?);
        }
        Ok(ForHeader {
            init: tight(init),
            cond,
            update,
        })
    }

    fn while_statement<'t>(
        &self,
        node: Node<'t>,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let clause = child(node, FIELDS.condition);
        let (prefix, cond) = self.condition(clause, depth, false)?;
        if !prefix.is_empty() {
            return Err("while_statement");
        }
        let body = self.branch(child(node, FIELDS.body), depth);
        out.push(Stmt::While { cond, body });
        Ok(())
    }

    fn do_statement<'t>(
        &self,
        node: Node<'t>,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let cond = child(node, FIELDS.condition).ok_or("do_statement")?;
        let cond = self.expr(cond)?;
        let body = self.branch(child(node, FIELDS.body), depth);
        out.push(Stmt::DoWhile { body, cond });
        Ok(())
    }

    fn switch_statement<'t>(
        &self,
        node: Node<'t>,
        depth: usize,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let clause = child(node, FIELDS.condition);
        let (mut prefix, cond) = self.condition(clause, depth, true)?;
        let mut body = Vec::new();
        if let Some(block) = child(node, FIELDS.body) {
            self.items(block, depth + 1, &mut body);
        }
        let body = tight(body);
        out.push(wrap(&mut prefix, Stmt::Switch { cond, body }));
        Ok(())
    }

    /// A labeled or attributed statement: the label or attributes are dropped.
    fn labeled(&self, node: Node, depth: usize, out: &mut Vec<Stmt>) {
        let mut cursor = node.walk();
        let inner: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| {
                !c.is_extra()
                    && !matches!(kind(*c), "statement_identifier" | "attribute_declaration")
            })
            .collect();
        for statement in inner {
            self.item(statement, depth + 1, out);
        }
    }

    /// The body of a branch or loop: a block's items, or the one statement.
    fn branch(&self, node: Option<Node>, depth: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        match node {
            Some(block) if kind(block) == "compound_statement" => {
                self.items(block, depth + 1, &mut out)
            }
            Some(statement) => self.item(statement, depth + 1, &mut out),
            None => {}
        }
        tight(out)
    }

    /// A `condition_clause`: the statements to run first (an init-statement, a declared
    /// condition variable) and the condition.
    fn condition<'t>(
        &self,
        clause: Option<Node<'t>>,
        depth: usize,
        allow_declaration: bool,
    ) -> Result<(Vec<Stmt>, Expr), Why<'t>> {
        let clause = clause.ok_or("condition_clause")?;
        let mut prefix = Vec::new();
        if let Some(init) = child(clause, FIELDS.initializer) {
            let mut cursor = init.walk();
            let statements: Vec<Node> = init
                .named_children(&mut cursor)
                .filter(|c| !c.is_extra())
                .collect();
            for statement in statements {
                self.item(statement, depth + 1, &mut prefix);
            }
        }
        let value = child(clause, FIELDS.value).ok_or("condition_clause")?;
        if kind(value) != "declaration" {
            return Ok((prefix, self.expr(value)?));
        }
        if !allow_declaration {
            return Err("declaration in a loop condition");
        }
        self.declaration(value, None, &mut prefix)?;
        let declarator = child(value, FIELDS.declarator).ok_or("condition_clause")?;
        let (name, _) = declarator_shape(declarator, false)?;
        let cond = Expr {
            kind: ExprKind::Name(self.text(name).to_string()),
            span: Span::of(name),
        };
        Ok((prefix, cond))
    }

    /// One `Decl` per declarator of a declaration.
    /// `auto f = [captures] (params) { body };`, one declarator: `None` for any other
    /// declaration, an error for a lambda whose captures are mixed or `mutable`.
    fn lambda<'t>(
        &self,
        specifiers: &Specifiers<'t>,
        depth: usize,
    ) -> Option<Result<Lambda, Why<'t>>> {
        let [declarator] = specifiers.declarators.as_slice() else {
            return None;
        };
        let value = child(*declarator, FIELDS.value).filter(|v| kind(*v) == "lambda_expression")?;
        let name = child(*declarator, FIELDS.declarator).filter(|n| kind(*n) == "identifier")?;
        Some(
            self.lambda_parts(value, depth)
                .map(|(params, body, by_reference)| Lambda {
                    name: self.text(name).to_string(),
                    params,
                    body,
                    by_reference,
                    span: Span::of(*declarator),
                }),
        )
    }

    fn lambda_parts<'t>(
        &self,
        lambda: Node<'t>,
        depth: usize,
    ) -> Result<(Vec<Param>, Vec<Stmt>, bool), Why<'t>> {
        const UNMODELLED: Why<'static> = "lambda with mixed or mutable captures";
        let captures = child(lambda, FIELDS.captures).ok_or(UNMODELLED)?;
        let mut cursor = captures.walk();
        let by_reference: Vec<bool> = captures
            .children(&mut cursor)
            .filter(|c| !matches!(self.text(*c), "[" | "]" | ","))
            .map(|c| self.text(c).starts_with('&'))
            .collect();
        let by_reference = match by_reference.as_slice() {
            [] => false,
            [first, rest @ ..] if rest.iter().all(|r| r == first) => *first,
            _ => return Err(UNMODELLED),
        };
        let declarator = child(lambda, FIELDS.declarator);
        if !by_reference && declarator.is_some_and(|d| self.text(d).contains("mutable")) {
            return Err(UNMODELLED);
        }
        let params = declarator.map_or_else(Vec::new, |d| lambda_parameters(d, self.src));
        let body = child(lambda, FIELDS.body).ok_or(UNMODELLED)?;
        if by_reference && self.writes_captured(body, &params) {
            // Its calls would change enclosing variables where the analysis does not look:
            // as an opaque statement, what it assigns is forgotten.
            return Err("lambda that assigns captured variables");
        }
        let mut stmts = Vec::new();
        self.items(body, depth + 1, &mut stmts);
        Ok((params, tight(stmts), by_reference))
    }

    /// Whether a lambda body assigns (or takes the address of) a variable it does not declare:
    /// an enclosing one, captured by reference. Writes through pointers and into arrays
    /// (`p[i] = v`, `*p = v`) change no variable. A nested lambda counts as a write.
    fn writes_captured(&self, body: Node, params: &[Param]) -> bool {
        let mut declared: HashSet<&str> = params.iter().map(|p| p.name.as_str()).collect();
        let mut written: Vec<&str> = Vec::new();
        let mut nested = false;
        walk(body, |n| {
            let target = match kind(n) {
                "lambda_expression" => {
                    nested = true;
                    return false;
                }
                "declaration" => {
                    for declarator in children_in(n, FIELDS.declarator) {
                        declared.insert(leftmost_identifier(declarator, self.src));
                    }
                    None
                }
                "assignment_expression" => child(n, FIELDS.left),
                "update_expression" => child(n, FIELDS.argument),
                "pointer_expression"
                    if child(n, FIELDS.operator).is_some_and(|op| self.text(op) == "&") =>
                {
                    child(n, FIELDS.argument)
                }
                _ => None,
            };
            if let Some(target) = target.filter(|t| {
                matches!(
                    kind(*t),
                    "identifier" | "field_expression" | "parenthesized_expression"
                )
            }) {
                written.push(leftmost_identifier(target, self.src));
            }
            true
        });
        nested || written.iter().any(|w| !declared.contains(w))
    }

    /// A declaration statement at nesting `depth`, where a lambda bound to a name is lowered;
    /// `None` in a `for` header or a condition, which keep lambdas opaque.
    fn declaration<'t>(
        &self,
        node: Node<'t>,
        depth: Option<usize>,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Why<'t>> {
        let type_node = child(node, FIELDS.type_);
        if let Some(ty) = type_node {
            let class = matches!(
                kind(ty),
                "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier"
            );
            if class && child(ty, FIELDS.body).is_some() {
                return Err(kind(ty));
            }
        }
        let specifiers = Specifiers::of(node, self.src);
        if let Some(lambda) = depth.and_then(|depth| self.lambda(&specifiers, depth)) {
            out.push(Stmt::Lambda(lambda?));
            return Ok(());
        }
        for &declarator in &specifiers.declarators {
            // A condition declaration (`if (int x = f())`) has its value on the declaration.
            let (target, value, span) = if kind(declarator) == "init_declarator" {
                let target = child(declarator, FIELDS.declarator).ok_or("init_declarator")?;
                let value = child(declarator, FIELDS.value);
                (target, value, Span::of(declarator))
            } else {
                match child(node, FIELDS.value) {
                    Some(value) => (declarator, Some(value), Span::of(node)),
                    None => (declarator, None, Span::of(declarator)),
                }
            };
            let (name, shape) = declarator_shape(target, false)?;
            let init = match value {
                Some(value) => Some(self.initializer(value, type_node, &specifiers.ty)?),
                None => None,
            };
            out.push(Stmt::Decl(Decl {
                name: self.text(name).to_string(),
                ty: specifiers.ty.clone(),
                pointer: shape.pointer,
                reference: shape.reference,
                array: shape.array,
                is_static: specifiers.is_static,
                is_extern: specifiers.is_extern,
                is_shared: specifiers.is_shared,
                init,
                span,
            }));
        }
        Ok(())
    }

    /// An initializer; `(…)` and `{…}` become a call of the type.
    fn initializer(
        &self,
        value: Node,
        type_node: Option<Node>,
        ty: &str,
    ) -> Result<Expr, Why<'static>> {
        if !matches!(kind(value), "argument_list" | "initializer_list") {
            return self.expr(value);
        }
        let mut cursor = value.walk();
        let args = value
            .named_children(&mut cursor)
            .filter(|c| !c.is_extra())
            .map(|arg| self.expr(arg))
            .collect::<Result<_, _>>()?;
        let callee = Expr {
            kind: ExprKind::Name(
                type_node.map_or_else(|| ty.to_string(), |t| compact_text(t, self.src)),
            ),
            span: Span::of(type_node.unwrap_or(value)),
        };
        Ok(Expr {
            kind: ExprKind::Call {
                callee: Box::new(callee),
                template_args: Default::default(),
                args,
            },
            span: Span::of(value),
        })
    }

    /// Lowers an expression; one that hides statements (a lambda, inline asm) makes the
    /// statement holding it opaque.
    fn expr(&self, node: Node) -> Result<Expr, Why<'static>> {
        let expr = ast::lower(node, self.src);
        match hidden_statements(&expr) {
            Some(why) => Err(why),
            None => Ok(expr),
        }
    }

    fn text(&self, node: Node) -> &str {
        &self.src[node.byte_range()]
    }

    fn is_dead(&self, node: Node) -> bool {
        self.dead.iter().any(|r| r.contains(&node.start_byte()))
    }

    /// `node` as an opaque statement: the names it may write and the expressions in it, found
    /// by an iterative walk that skips dead `#if` branches and unevaluated operands.
    fn opaque(&self, node: Node, what: &str) -> Stmt {
        let mut assigned = Vec::new();
        let mut seen = HashSet::new();
        let mut exprs = Vec::new();
        let mut covered_until = 0;
        let mut guards = Vec::new();
        walk(node, |n| {
            if self.is_dead(n) || guards.contains(&n.id()) {
                return false;
            }
            let field = |id| child(n, id);
            let mut targets = Vec::new();
            match kind(n) {
                "sizeof_expression" | "alignof_expression" | "decltype" => return false,
                "preproc_if" | "preproc_elif" => {
                    guards.extend(field(FIELDS.condition).map(|c| c.id()))
                }
                "assignment_expression" => targets.extend(field(FIELDS.left)),
                "update_expression" => targets.extend(field(FIELDS.argument)),
                "pointer_expression"
                    if field(FIELDS.operator).is_some_and(|op| self.text(op) == "&") =>
                {
                    targets.extend(field(FIELDS.argument))
                }
                "gnu_asm_output_operand" => targets.extend(field(FIELDS.value)),
                "declaration" | "for_range_loop" => {
                    for declarator in children_in(n, FIELDS.declarator) {
                        let declarator = match kind(declarator) {
                            "init_declarator" => match child(declarator, FIELDS.declarator) {
                                Some(inner) => inner,
                                None => continue,
                            },
                            _ => declarator,
                        };
                        if kind(declarator) == "structured_binding_declarator" {
                            let mut inner = declarator.walk();
                            targets.extend(declarator.named_children(&mut inner));
                        } else {
                            targets.push(declarator);
                        }
                    }
                }
                _ => {}
            }
            for target in targets {
                let name = leftmost_identifier(target, self.src);
                if !name.is_empty() && seen.insert(name) {
                    assigned.push(name.to_string());
                }
            }
            if n.start_byte() >= covered_until && EXPRESSION_ROOTS.contains(&kind(n)) {
                let expr = ast::lower(n, self.src);
                // One that hides statements is not kept: the walk finds what is inside.
                if hidden_statements(&expr).is_none() {
                    covered_until = n.end_byte();
                    exprs.push(expr);
                }
            }
            true
        });
        Stmt::Opaque {
            what: what.to_string(),
            span: Span::of(node),
            assigned,
            exprs,
        }
    }
}

struct ForHeader {
    init: Vec<Stmt>,
    cond: Option<Expr>,
    update: Vec<Expr>,
}

/// `stmt` after the statements `prefix` of its condition, as one block when there are any.
fn wrap(prefix: &mut Vec<Stmt>, stmt: Stmt) -> Stmt {
    if prefix.is_empty() {
        stmt
    } else {
        prefix.push(stmt);
        Stmt::Block(tight(std::mem::take(prefix)))
    }
}

/// `stmts` without spare capacity: bodies are kept for the whole run, and most blocks are
/// short.
fn tight(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
    stmts.shrink_to_fit();
    stmts
}

fn first_named(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    let first = node.named_children(&mut cursor).find(|c| !c.is_extra());
    first
}

/// The operands of a chain of comma operators, `a, b, c` → `[a, b, c]`.
fn split_commas(node: Node) -> Vec<Node> {
    let mut parts = Vec::new();
    let mut rest = node;
    while kind(rest) == "comma_expression" {
        let (Some(left), Some(right)) = (child(rest, FIELDS.left), child(rest, FIELDS.right))
        else {
            break;
        };
        parts.push(left);
        rest = right;
    }
    parts.push(rest);
    parts
}

/// The kind of the first node that [`ast::lower`] kept opaque although it holds statements.
fn hidden_statements(expr: &Expr) -> Option<Why<'static>> {
    let mut pending = vec![expr];
    while let Some(expr) = pending.pop() {
        if let ExprKind::Opaque(why) = &expr.kind {
            if let Some(kind) = HIDES_STATEMENTS.iter().find(|k| **k == why.as_str()) {
                return Some(*kind);
            }
        }
        expr.for_each_child(|child| pending.push(child));
    }
    None
}

#[derive(Default)]
struct Shape {
    pointer: bool,
    reference: bool,
    array: bool,
}

/// The declared identifier of a declarator and whether it declares a pointer, reference or
/// array. A function declarator is a pointer when `function_pointers` (parameters) and
/// unsupported otherwise, like structured bindings: the error is the declarator's kind.
fn declarator_shape<'t>(
    declarator: Node<'t>,
    function_pointers: bool,
) -> Result<(Node<'t>, Shape), Why<'t>> {
    let mut shape = Shape::default();
    let mut node = declarator;
    loop {
        let next = match kind(node) {
            "identifier" => return Ok((node, shape)),
            "pointer_declarator" => {
                shape.pointer = true;
                child(node, FIELDS.declarator)
            }
            "reference_declarator" => {
                shape.reference = true;
                node.named_child(0)
            }
            "array_declarator" => {
                shape.array = true;
                child(node, FIELDS.declarator)
            }
            "function_declarator" if function_pointers => {
                shape.pointer = true;
                child(node, FIELDS.declarator)
            }
            "parenthesized_declarator" | "attributed_declarator" => node.named_child(0),
            other => return Err(other),
        };
        node = next.ok_or(kind(node))?;
    }
}

/// The type and storage of a declaration as written, and its declarators (one pass over the
/// children).
struct Specifiers<'t> {
    ty: String,
    is_static: bool,
    is_extern: bool,
    is_shared: bool,
    declarators: Vec<Node<'t>>,
}

impl<'t> Specifiers<'t> {
    fn of(node: Node<'t>, src: &str) -> Self {
        let mut specifiers = Specifiers {
            ty: String::new(),
            is_static: false,
            is_extern: false,
            is_shared: false,
            declarators: Vec::new(),
        };
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return specifiers;
        }
        let not_type = [FIELDS.declarator, FIELDS.value, FIELDS.default_value];
        loop {
            let child = cursor.node();
            let field = field_of(&cursor);
            if field == Some(FIELDS.declarator) {
                specifiers.declarators.push(child);
            }
            if child.is_named()
                && !field.is_some_and(|id| not_type.contains(&id))
                && !child.is_extra()
            {
                let text = src[child.byte_range()].trim();
                let kind = kind(child);
                let storage = kind == "storage_class_specifier";
                let qualifier = matches!(kind, "type_qualifier" | "attribute_specifier");
                if text == "__shared__" && (storage || qualifier) {
                    specifiers.is_shared = true;
                } else if storage {
                    specifiers.is_static |= text == "static";
                    specifiers.is_extern |= text == "extern";
                } else {
                    // Whitespace collapsed, as `compact_text` does.
                    for word in text.split_whitespace() {
                        if !specifiers.ty.is_empty() {
                            specifiers.ty.push(' ');
                        }
                        specifiers.ty.push_str(word);
                    }
                }
            }
            if !cursor.goto_next_sibling() {
                return specifiers;
            }
        }
    }
}

/// The named parameters of a function definition, from its declarator's parameter list.
pub(super) fn parameters(function: Node, src: &str) -> Vec<Param> {
    let mut declarator = child(function, FIELDS.declarator);
    while let Some(node) = declarator.filter(|d| kind(*d) != "function_declarator") {
        declarator = child(node, FIELDS.declarator);
    }
    match declarator.and_then(|d| child(d, FIELDS.parameters)) {
        Some(list) => parameter_list(list, src),
        None => Vec::new(),
    }
}

/// The named parameters of a lambda declarator.
fn lambda_parameters(declarator: Node, src: &str) -> Vec<Param> {
    match child(declarator, FIELDS.parameters) {
        Some(list) => parameter_list(list, src),
        None => Vec::new(),
    }
}

fn parameter_list(list: Node, src: &str) -> Vec<Param> {
    let mut cursor = list.walk();
    let params: Vec<Node> = list.named_children(&mut cursor).collect();
    params
        .into_iter()
        .filter_map(|param| {
            let declarator = child(param, FIELDS.declarator)?;
            let (name, shape) = declarator_shape(declarator, true).ok()?;
            Some(Param {
                name: src[name.byte_range()].to_string(),
                ty: Specifiers::of(param, src).ty,
                pointer: shape.pointer,
                reference: shape.reference,
                array: shape.array,
            })
        })
        .collect()
}
