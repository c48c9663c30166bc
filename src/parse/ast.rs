//! A small owned expression tree, so that no stage after parsing sees tree-sitter types.
//!
//! Lowering is bounded in depth: a subtree nested deeper than [`MAX_DEPTH`] becomes
//! [`ExprKind::Opaque`], so adversarial input (10,000 nested parentheses) cannot overflow the stack.
use super::symbols::{child, kind, FIELDS};
use super::syntax::Node;
use crate::c_int::Op;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::LazyLock;

/// Nesting depth beyond which an expression is kept as opaque text.
pub const MAX_DEPTH: usize = 200;

/// What an expression past [`MAX_DEPTH`] is kept as.
pub const TOO_DEEP: &str = "expression nested too deeply";

/// A byte range in the source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "StartAndLength", into = "StartAndLength")]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// How a [`Span`] is packed: its length is a one- or two-byte varint where the end offset
/// in a large file takes four, and every packed expression has a span.
#[derive(Serialize, Deserialize)]
struct StartAndLength(usize, usize);

impl From<Span> for StartAndLength {
    fn from(span: Span) -> Self {
        // Wrapping: lossless for any pair, even an end before the start.
        StartAndLength(span.start, span.end.wrapping_sub(span.start))
    }
}

impl From<StartAndLength> for Span {
    fn from(StartAndLength(start, length): StartAndLength) -> Self {
        Span {
            start,
            end: start.wrapping_add(length),
        }
    }
}

impl Span {
    pub fn of(node: Node) -> Self {
        Span {
            start: node.start_byte(),
            end: node.end_byte(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    AddressOf,
    Deref,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    /// The operator as every evaluator applies it ([`crate::c_int`]).
    pub fn op(self) -> Op {
        match self {
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    Int(i64),
    Float(String),
    /// An identifier or a qualified name (`ns::N`).
    Name(String),
    Member {
        base: Box<Expr>,
        field: String,
        arrow: bool,
    },
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Conditional {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `x = e`, `x += e`: `op` is `None` for plain assignment.
    Assign {
        op: Option<BinaryOp>,
        target: Box<Expr>,
        value: Box<Expr>,
    },
    /// `++x`, `x--`.
    Step {
        increment: bool,
        prefix: bool,
        operand: Box<Expr>,
    },
    /// Kept within 32 bytes (a boxed slice and [`TemplateArgs`], not vectors): this was the
    /// largest variant, and every expression node is as large as the largest.
    Call {
        callee: Box<Expr>,
        template_args: TemplateArgs,
        args: Box<[Expr]>,
    },
    Cast {
        ty: String,
        operand: Box<Expr>,
    },
    SizeofType(String),
    SizeofExpr(Box<Expr>),
    Comma {
        first: Box<Expr>,
        second: Box<Expr>,
    },
    /// Anything the analysis does not model, with the reason (usually the node kind).
    Opaque(String),
}

/// The explicit template arguments of a call as written (`16` in `f<16>(x)`); reads as a
/// slice. One pointer, and nothing allocated for the usual call without them.
// A boxed vector is a thin pointer (a boxed slice is two words), and it is boxed only when
// there are arguments, which is rare.
#[allow(clippy::box_collection)]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TemplateArgs(Option<Box<Vec<String>>>);

impl std::ops::Deref for TemplateArgs {
    type Target = [String];

    fn deref(&self) -> &[String] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl From<Vec<String>> for TemplateArgs {
    fn from(args: Vec<String>) -> Self {
        TemplateArgs((!args.is_empty()).then(|| Box::new(args)))
    }
}

impl BinaryOp {
    pub fn from_token(token: &str) -> Option<Self> {
        Some(match token {
            "+" => Self::Add,
            "-" => Self::Sub,
            "*" => Self::Mul,
            "/" => Self::Div,
            "%" => Self::Rem,
            "<<" => Self::Shl,
            ">>" => Self::Shr,
            "&" => Self::BitAnd,
            "|" => Self::BitOr,
            "^" => Self::BitXor,
            "&&" => Self::LogAnd,
            "||" => Self::LogOr,
            "==" => Self::Eq,
            "!=" => Self::Ne,
            "<" => Self::Lt,
            "<=" => Self::Le,
            ">" => Self::Gt,
            ">=" => Self::Ge,
            _ => return None,
        })
    }

    pub fn token(self) -> &'static str {
        match self {
            Self::Add => "+",
            Self::Sub => "-",
            Self::Mul => "*",
            Self::Div => "/",
            Self::Rem => "%",
            Self::Shl => "<<",
            Self::Shr => ">>",
            Self::BitAnd => "&",
            Self::BitOr => "|",
            Self::BitXor => "^",
            Self::LogAnd => "&&",
            Self::LogOr => "||",
            Self::Eq => "==",
            Self::Ne => "!=",
            Self::Lt => "<",
            Self::Le => "<=",
            Self::Gt => ">",
            Self::Ge => ">=",
        }
    }
}

/// Parses a C integer literal: decimal, hex, octal, binary, digit separators, `u`/`l` suffixes.
pub fn parse_int_literal(text: &str) -> Option<i64> {
    let cleaned: String = text.chars().filter(|&c| c != '\'').collect();
    let body = cleaned.trim_end_matches(['u', 'U', 'l', 'L']);
    let (digits, radix) = if let Some(hex) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (hex, 16)
    } else if let Some(bin) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (bin, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    u64::from_str_radix(digits, radix)
        .ok()
        .and_then(|v| i64::try_from(v).ok())
}

/// Lowers a tree-sitter expression node.
pub fn lower(node: Node, src: &str) -> Expr {
    lower_at(node, src, 0)
}

fn boxed(node: Option<Node>, src: &str, depth: usize) -> Box<Expr> {
    Box::new(match node {
        Some(n) => lower_at(n, src, depth + 1),
        None => Expr {
            kind: ExprKind::Opaque("missing operand".into()),
            span: Span { start: 0, end: 0 },
        },
    })
}

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

/// Source text with runs of whitespace collapsed, for type names and qualified names.
pub fn compact_text(node: Node, src: &str) -> String {
    one_line(text(node, src))
}

/// Source text on one line, as the preprocessor reads it: a line continuation (a backslash
/// at the end of a line, `2 * \` then `POINTS`) is spliced away, and every run of white
/// space becomes one space. A backslash kept in text written elsewhere would continue that
/// line instead.
pub fn one_line(text: &str) -> String {
    let mut spliced = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        spliced.push_str(&rest[..at]);
        let after = rest[at + 1..].trim_start_matches([' ', '\t', '\r']);
        match after.strip_prefix('\n') {
            Some(next_line) => rest = next_line,
            None => {
                spliced.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    spliced.push_str(rest);
    spliced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The kind id of `parenthesized_expression` (comparing ids is cheaper than kind names).
static PARENTHESIZED: LazyLock<u16> =
    LazyLock::new(|| super::language::cuda().id_for_node_kind("parenthesized_expression", true));

fn lower_at(node: Node, src: &str, depth: usize) -> Expr {
    let span = Span::of(node);
    let kind = if depth > MAX_DEPTH {
        ExprKind::Opaque(TOO_DEEP.into())
    } else if node.kind_id() == *PARENTHESIZED && node.named_child_count() == 1 {
        // `(e)` is `e`, with `e`'s span: an access `(t[i])` keeps the span of `t[i]`.
        // Through `lower_at`, so the depth limit applies to parentheses too.
        match node.named_child(0) {
            Some(inner) => return lower_at(inner, src, depth + 1),
            None => ExprKind::Opaque("parenthesized_expression".into()),
        }
    } else {
        lower_kind(node, src, depth)
    };
    Expr { kind, span }
}

fn lower_kind(node: Node, src: &str, depth: usize) -> ExprKind {
    let field = |id: u16| child(node, id);
    let operator = || field(FIELDS.operator).map(|op| text(op, src)).unwrap_or("");
    match kind(node) {
        "number_literal" => match parse_int_literal(text(node, src)) {
            Some(v) => ExprKind::Int(v),
            None => ExprKind::Float(text(node, src).to_string()),
        },
        "true" => ExprKind::Int(1),
        "false" => ExprKind::Int(0),
        "identifier" | "qualified_identifier" | "field_identifier" => {
            let name = text(node, src);
            // Only a qualified name written with spaces (`ns :: N`) needs them removed.
            if name.contains(char::is_whitespace) {
                ExprKind::Name(name.split_whitespace().collect())
            } else {
                ExprKind::Name(name.to_string())
            }
        }
        // With one operand, handled by `lower_at`.
        "parenthesized_expression" => ExprKind::Opaque("parenthesized_expression".into()),
        "field_expression" => ExprKind::Member {
            base: boxed(field(FIELDS.argument), src, depth),
            field: field(FIELDS.field)
                .map(|f| text(f, src).to_string())
                .unwrap_or_default(),
            arrow: operator() == "->",
        },
        "subscript_expression" => {
            let index = field(FIELDS.indices)
                .and_then(|list| list.named_child(0))
                .or_else(|| field(FIELDS.index));
            ExprKind::Index {
                base: boxed(field(FIELDS.argument), src, depth),
                index: boxed(index, src, depth),
            }
        }
        "binary_expression" => match BinaryOp::from_token(operator()) {
            Some(op) => ExprKind::Binary {
                op,
                lhs: boxed(field(FIELDS.left), src, depth),
                rhs: boxed(field(FIELDS.right), src, depth),
            },
            None => ExprKind::Opaque(format!("operator {}", operator())),
        },
        "unary_expression" | "pointer_expression" => {
            let op = match operator() {
                "-" => UnaryOp::Neg,
                "+" => UnaryOp::Plus,
                "!" | "not" => UnaryOp::Not,
                "~" | "compl" => UnaryOp::BitNot,
                "&" => UnaryOp::AddressOf,
                "*" => UnaryOp::Deref,
                other => return ExprKind::Opaque(format!("operator {other}")),
            };
            ExprKind::Unary {
                op,
                operand: boxed(field(FIELDS.argument), src, depth),
            }
        }
        "update_expression" => {
            let op = operator();
            let prefix = field(FIELDS.operator)
                .zip(field(FIELDS.argument))
                .is_some_and(|(o, a)| o.start_byte() < a.start_byte());
            ExprKind::Step {
                increment: op == "++",
                prefix,
                operand: boxed(field(FIELDS.argument), src, depth),
            }
        }
        "assignment_expression" => {
            let op = operator();
            let compound = op.strip_suffix('=').filter(|o| !o.is_empty());
            let op = match compound {
                None => None,
                Some(token) => match BinaryOp::from_token(token) {
                    Some(op) => Some(op),
                    None => return ExprKind::Opaque(format!("operator {op}")),
                },
            };
            ExprKind::Assign {
                op,
                target: boxed(field(FIELDS.left), src, depth),
                value: boxed(field(FIELDS.right), src, depth),
            }
        }
        "conditional_expression" => ExprKind::Conditional {
            cond: boxed(field(FIELDS.condition), src, depth),
            then: boxed(field(FIELDS.consequence), src, depth),
            otherwise: boxed(field(FIELDS.alternative), src, depth),
        },
        "comma_expression" => ExprKind::Comma {
            first: boxed(field(FIELDS.left), src, depth),
            second: boxed(field(FIELDS.right), src, depth),
        },
        "call_expression" => lower_call(node, src, depth),
        // `T{a, b}`: a call of the type, as a declaration's brace initializer is.
        "compound_literal_expression" => match (field(FIELDS.type_), field(FIELDS.value)) {
            (Some(ty), Some(list)) => {
                let mut cursor = list.walk();
                ExprKind::Call {
                    callee: Box::new(Expr {
                        kind: ExprKind::Name(compact_text(ty, src)),
                        span: Span::of(ty),
                    }),
                    template_args: TemplateArgs::default(),
                    args: list
                        .named_children(&mut cursor)
                        .filter(|arg| kind(*arg) != "comment")
                        .map(|arg| lower_at(arg, src, depth + 1))
                        .collect(),
                }
            }
            _ => ExprKind::Opaque("compound_literal_expression".into()),
        },
        "preproc_defined" => ExprKind::Call {
            callee: Box::new(Expr {
                kind: ExprKind::Name("defined".into()),
                span: Span::of(node),
            }),
            template_args: TemplateArgs::default(),
            args: node
                .named_child(0)
                .map(|name| lower_at(name, src, depth + 1))
                .into_iter()
                .collect(),
        },
        "cast_expression" => ExprKind::Cast {
            ty: field(FIELDS.type_)
                .map(|t| compact_text(t, src))
                .unwrap_or_default(),
            operand: boxed(field(FIELDS.value), src, depth),
        },
        "sizeof_expression" => match (field(FIELDS.type_), field(FIELDS.value)) {
            (Some(ty), _) => ExprKind::SizeofType(type_descriptor_text(ty, src)),
            (None, Some(value)) => match kind(value) {
                // `sizeof(float4)` parses as a parenthesised identifier expression.
                "parenthesized_expression" => match value.named_child(0) {
                    Some(inner) if kind(inner) == "identifier" => {
                        ExprKind::SizeofType(text(inner, src).to_string())
                    }
                    _ => ExprKind::SizeofExpr(boxed(Some(value), src, depth)),
                },
                _ => ExprKind::SizeofExpr(boxed(Some(value), src, depth)),
            },
            _ => ExprKind::Opaque("sizeof".into()),
        },
        other => ExprKind::Opaque(other.to_string()),
    }
}

fn type_descriptor_text(node: Node, src: &str) -> String {
    compact_text(node, src)
}

/// The source from the start of `outer` to the end of `inner`, on one line.
fn compact_text_between(outer: Node, inner: Node, src: &str) -> String {
    one_line(
        src.get(outer.start_byte()..inner.end_byte())
            .unwrap_or_default(),
    )
}

fn lower_call(node: Node, src: &str, depth: usize) -> ExprKind {
    let function = child(node, FIELDS.function);
    // `f<16>(x)`, `ns::f<16>(x)`: the template arguments apart, the name as written before
    // them.
    let template = function.and_then(|mut f| {
        while kind(f) == "qualified_identifier" {
            f = child(f, FIELDS.name)?;
        }
        (kind(f) == "template_function").then_some(f)
    });
    let (callee, template_args) = match (function, template) {
        (Some(outer), Some(f)) => {
            let name = child(f, FIELDS.name).map(|name| Expr {
                kind: ExprKind::Name(compact_text_between(outer, name, src)),
                span: Span {
                    start: outer.start_byte(),
                    end: name.end_byte(),
                },
            });
            let args = child(f, FIELDS.arguments)
                .map(|list| {
                    let mut cursor = list.walk();
                    list.named_children(&mut cursor)
                        .map(|arg| compact_text(arg, src))
                        .collect()
                })
                .unwrap_or_default();
            let callee = match name {
                Some(name) => Box::new(name),
                None => boxed(None, src, depth),
            };
            (callee, args)
        }
        (other, _) => (boxed(other, src, depth), Vec::new()),
    };
    let args = child(node, FIELDS.arguments)
        .map(|list| {
            let mut cursor = list.walk();
            list.named_children(&mut cursor)
                .filter(|arg| kind(*arg) != "comment")
                .map(|arg| lower_at(arg, src, depth + 1))
                .collect()
        })
        .unwrap_or_default();
    ExprKind::Call {
        callee,
        template_args: template_args.into(),
        args,
    }
}

impl Expr {
    /// Whether evaluating the expression twice is the same as once: no assignment, step or
    /// call (an operand of `sizeof` is not evaluated). Iterative: any depth.
    pub fn is_pure(&self) -> bool {
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            match &expr.kind {
                ExprKind::Assign { .. }
                | ExprKind::Step { .. }
                | ExprKind::Call { .. }
                | ExprKind::Comma { .. }
                | ExprKind::Opaque(_) => return false,
                ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => {}
                _ => expr.for_each_child(|child| pending.push(child)),
            }
        }
        true
    }

    /// Calls `visit` on each direct subexpression, in source order.
    pub fn for_each_child<'a>(&'a self, mut visit: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Member { base, .. } => visit(base),
            ExprKind::Index { base, index } => {
                visit(base);
                visit(index);
            }
            ExprKind::Unary { operand, .. }
            | ExprKind::Cast { operand, .. }
            | ExprKind::Step { operand, .. }
            | ExprKind::SizeofExpr(operand) => visit(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                visit(lhs);
                visit(rhs);
            }
            ExprKind::Assign { target, value, .. } => {
                visit(target);
                visit(value);
            }
            ExprKind::Comma { first, second } => {
                visit(first);
                visit(second);
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                visit(cond);
                visit(then);
                visit(otherwise);
            }
            ExprKind::Call { callee, args, .. } => {
                visit(callee);
                args.iter().for_each(visit);
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Name(_)
            | ExprKind::SizeofType(_)
            | ExprKind::Opaque(_) => {}
        }
    }

    /// [`Expr::for_each_child`] for changing the children.
    pub fn for_each_child_mut<'a>(&'a mut self, mut visit: impl FnMut(&'a mut Expr)) {
        match &mut self.kind {
            ExprKind::Member { base, .. } => visit(base),
            ExprKind::Index { base, index } => {
                visit(base);
                visit(index);
            }
            ExprKind::Unary { operand, .. }
            | ExprKind::Cast { operand, .. }
            | ExprKind::Step { operand, .. }
            | ExprKind::SizeofExpr(operand) => visit(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                visit(lhs);
                visit(rhs);
            }
            ExprKind::Assign { target, value, .. } => {
                visit(target);
                visit(value);
            }
            ExprKind::Comma { first, second } => {
                visit(first);
                visit(second);
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                visit(cond);
                visit(then);
                visit(otherwise);
            }
            ExprKind::Call { callee, args, .. } => {
                visit(callee);
                args.iter_mut().for_each(visit);
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Name(_)
            | ExprKind::SizeofType(_)
            | ExprKind::Opaque(_) => {}
        }
    }

    /// Every identifier the expression mentions, outside `defined(…)`.
    pub fn names(&self) -> Vec<&str> {
        let mut names = Vec::new();
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            match &expr.kind {
                ExprKind::Name(name) => names.push(name.as_str()),
                ExprKind::Call { callee, .. } if matches!(&callee.kind, ExprKind::Name(n) if n == "defined") =>
                    {}
                _ => expr.for_each_child(|child| pending.push(child)),
            }
        }
        names
    }

    /// Moves every span of the tree `by` bytes towards the start (an expression parsed from
    /// wrapped text, re-based onto the text itself).
    pub fn rebase(&mut self, by: usize) {
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            expr.span = Span {
                start: expr.span.start.saturating_sub(by),
                end: expr.span.end.saturating_sub(by),
            };
            expr.for_each_child_mut(|child| pending.push(child));
        }
    }

    /// The callee's name when this is a call of a named function or macro.
    pub fn callee_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Name(name) => Some(name),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Prints the expression in C syntax, fully parenthesised where precedence could be misread.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Int(v) => write!(f, "{v}"),
            ExprKind::Float(text) | ExprKind::Name(text) => write!(f, "{text}"),
            ExprKind::Member { base, field, arrow } => {
                write!(f, "{base}{}{field}", if *arrow { "->" } else { "." })
            }
            ExprKind::Index { base, index } => write!(f, "{base}[{index}]"),
            ExprKind::Unary { op, operand } => {
                let token = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::Not => "!",
                    UnaryOp::BitNot => "~",
                    UnaryOp::AddressOf => "&",
                    UnaryOp::Deref => "*",
                };
                write!(f, "{token}{operand}")
            }
            ExprKind::Binary { op, lhs, rhs } => write!(f, "({lhs} {} {rhs})", op.token()),
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => write!(f, "({cond} ? {then} : {otherwise})"),
            ExprKind::Assign { op, target, value } => {
                let token = op.map(BinaryOp::token).unwrap_or("");
                write!(f, "{target} {token}= {value}")
            }
            ExprKind::Step {
                increment,
                prefix,
                operand,
            } => {
                let token = if *increment { "++" } else { "--" };
                if *prefix {
                    write!(f, "{token}{operand}")
                } else {
                    write!(f, "{operand}{token}")
                }
            }
            ExprKind::Call {
                callee,
                template_args,
                args,
            } => {
                write!(f, "{callee}")?;
                if !template_args.is_empty() {
                    write!(f, "<{}>", template_args.join(", "))?;
                }
                let args: Vec<String> = args.iter().map(ToString::to_string).collect();
                write!(f, "({})", args.join(", "))
            }
            ExprKind::Cast { ty, operand } => write!(f, "(({ty}){operand})"),
            ExprKind::SizeofType(ty) => write!(f, "sizeof({ty})"),
            ExprKind::SizeofExpr(e) => write!(f, "sizeof({e})"),
            ExprKind::Comma { first, second } => write!(f, "({first}, {second})"),
            ExprKind::Opaque(what) => write!(f, "<{what}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_splices_continuations_and_collapses_white_space() {
        assert_eq!(one_line("2 * \\\nPOINTS"), "2 * POINTS");
        assert_eq!(one_line("a \\  \r\n  b"), "a b");
        assert_eq!(one_line("'\\\\' \\ x"), "'\\\\' \\ x");
        assert_eq!(one_line("  x\n\t+ y  "), "x + y");
    }

    /// The model holds hundreds of thousands of expression nodes, each boxed: their size
    /// is most of its memory.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn expression_nodes_stay_small() {
        assert_eq!(std::mem::size_of::<Expr>(), 56);
        assert_eq!(std::mem::size_of::<TemplateArgs>(), 8);
    }

    #[test]
    fn integer_literals_in_every_base() {
        assert_eq!(parse_int_literal("42"), Some(42));
        assert_eq!(parse_int_literal("0x20u"), Some(32));
        assert_eq!(parse_int_literal("0b101"), Some(5));
        assert_eq!(parse_int_literal("017"), Some(15));
        assert_eq!(parse_int_literal("1'024ULL"), Some(1024));
        assert_eq!(parse_int_literal("0"), Some(0));
        assert_eq!(parse_int_literal("1.5f"), None);
        assert_eq!(parse_int_literal("1e3"), None);
    }
}
