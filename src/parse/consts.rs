//! Integer constants of a translation unit: `-D` values, `#define` (object-like and
//! function-like), enumerators, `const`/`constexpr` integers, template parameters and `sizeof`.
use super::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use super::types::TypeTable;
use crate::c_int::Semantics;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Macro expansion depth beyond which evaluation gives up (guards `#define A A`).
const MAX_EXPANSION_DEPTH: usize = 64;

/// Why an expression has no known constant value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// A name with no known value: a template parameter without an instantiation, a variable.
    UnknownName(String),
    /// Something that is not an integer constant expression (a call, a float, a pointer…).
    NotConstant(String),
    /// Overflow or division by zero.
    Arithmetic,
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::UnknownName(name) => write!(f, "`{name}` has no known value"),
            Unresolved::NotConstant(what) => write!(f, "{what} is not an integer constant"),
            Unresolved::Arithmetic => write!(f, "overflow or division by zero"),
        }
    }
}

/// A preprocessor macro. Its body is parsed as an expression on first use.
#[derive(Debug)]
pub struct Macro {
    pub params: Option<Vec<String>>,
    pub body: String,
    pub line: usize,
    /// A lock rather than a cell: the later stages share the constants between threads.
    /// Shared: generated code repeats bodies, and macros with the same body share one tree.
    expr: OnceLock<Option<Arc<Expr>>>,
}

impl Macro {
    pub fn new(params: Option<Vec<String>>, body: &str, line: usize) -> Self {
        Macro {
            params,
            body: body.trim().to_string(),
            line,
            expr: OnceLock::new(),
        }
    }

    pub fn expr(&self) -> Option<&Expr> {
        self.expr
            .get_or_init(|| match super::ast::parse_int_literal(&self.body) {
                // Most macros are plain numbers: no need for the parser.
                Some(value) => Some(Arc::new(Expr {
                    kind: ExprKind::Int(value),
                    span: super::ast::Span {
                        start: 0,
                        end: self.body.len(),
                    },
                })),
                None => super::parse_expression_text(&self.body).map(Arc::new),
            })
            .as_deref()
    }
}

/// The identifier tokens of a piece of C text (string and char literals skipped).
pub fn identifier_tokens(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'"' || c == b'\'' {
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                return Some(&text[start..i]);
            } else if c.is_ascii_digit() {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
            } else {
                i += 1;
            }
        }
        None
    })
}

/// The identifiers of a piece of C text that can name a variable: as
/// [`identifier_tokens`], less comments and members (`s.z`, `p->z`).
pub fn name_tokens(text: &str) -> impl Iterator<Item = &str> {
    let code = without_comments(text);
    identifier_tokens(text).filter(move |token| {
        let at = token.as_ptr() as usize - text.as_ptr() as usize;
        let before = text[..at].trim_end();
        code.get(at).copied().unwrap_or(false) && !before.ends_with('.') && !before.ends_with("->")
    })
}

/// For each byte of `text`, whether it lies outside every comment.
fn without_comments(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut code = vec![true; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    code[i] = false;
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for flag in &mut code[i..end] {
                    *flag = false;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    code
}

/// Names bound in one scope: template arguments and function-local constants.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Bindings {
    pub ints: HashMap<String, i64>,
    /// Type template parameters bound to a type's spelling.
    pub types: HashMap<String, String>,
}

/// The file-wide constants and types.
#[derive(Debug, Default)]
pub struct ConstEnv {
    /// `-D` definitions: they win over `#define`, as with `#ifndef N / #define N …` guards.
    command_line: HashMap<String, Macro>,
    macros: HashMap<String, Macro>,
    values: HashMap<String, i64>,
    pub types: TypeTable,
    /// The first macro defined with each body: a later macro with the same body takes its
    /// parsed expression instead of parsing the text again (generated code repeats bodies).
    first_with_body: HashMap<String, String>,
    /// Struct templates with integer members or member types (`template <int M> struct
    /// Traits { static constexpr int kBlockM = M; using Element = half; };`), by name.
    records: HashMap<String, TemplateRecord>,
    /// Each instance member's value once worked out (`Traits<64, 128>::kBlockM`); one being
    /// worked out is `None`, so a member defined through itself ends. Without it a member
    /// that names another instance's member twice doubles the work at every level.
    record_values: std::sync::Mutex<HashMap<String, Option<i64>>>,
    /// Macros defined two ways in the branches of a conditional the analysis cannot decide
    /// (`#if __CUDA_ARCH__ >= 800`), with its first line: which definition a compilation
    /// sees depends on the pass.
    pub ambiguous: HashMap<String, String>,
}

/// A struct template's parameters and what its members say in terms of them.
#[derive(Debug, Clone, Default)]
pub struct TemplateRecord {
    /// `(name, is_type, default)`, in order.
    pub params: Vec<(String, bool, Option<String>)>,
    /// `static constexpr` integer members, in order (later ones may use earlier ones).
    pub values: Vec<(String, Expr)>,
    /// Member types, `using Element = T;` as `("Element", "T")`.
    pub types: Vec<(String, String)>,
}

impl ConstEnv {
    /// `defines` are `NAME=VALUE`, `NAME` (value 1) or `NAME(a,b)=BODY`, as given to `-D`.
    pub fn with_command_line(defines: &[String]) -> Self {
        let mut env = ConstEnv::default();
        // What nvcc itself defines for every CUDA file: `#if defined(__CUDACC__)` picks the
        // branch a CUDA build compiles (raft's `RAFT_KERNEL` is `static __global__ void`
        // there, `static void` otherwise).
        for predefined in ["__CUDACC__", "__NVCC__"] {
            env.command_line
                .insert(predefined.to_string(), Macro::new(None, "1", 0));
        }
        for define in defines {
            let (name, value) = define.split_once('=').unwrap_or((define, "1"));
            // `-D 'F(a,b)=((a) * (b))'`: a function-like macro, as nvcc takes it.
            let (name, params) = match name.split_once('(') {
                Some((name, rest)) => {
                    let list = rest.trim_end().trim_end_matches(')');
                    let params = list
                        .split(',')
                        .map(|p| p.trim().to_string())
                        .filter(|p| !p.is_empty())
                        .collect();
                    (name, Some(params))
                }
                None => (name, None),
            };
            env.command_line
                .insert(name.trim().to_string(), Macro::new(params, value, 0));
        }
        env
    }

    pub fn define_macro(&mut self, name: &str, mac: Macro) {
        if self.macros.contains_key(name) {
            return;
        }
        match self.first_with_body.get(&mac.body) {
            Some(first) => {
                let parsed = self.macros.get(first).and_then(|m| m.expr.get());
                if let Some(expr) = parsed {
                    // The expression depends on the body alone, so it is the same.
                    let _ = mac.expr.set(expr.clone());
                }
            }
            None => {
                self.first_with_body
                    .insert(mac.body.clone(), name.to_string());
            }
        }
        self.macros.insert(name.to_string(), mac);
    }

    pub fn define_value(&mut self, name: &str, value: i64) {
        self.values.entry(name.to_string()).or_insert(value);
    }

    /// The integer constants defined so far (for a header's prelude).
    pub fn values(&self) -> impl Iterator<Item = (&str, i64)> {
        self.values
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
    }

    pub fn define_record(&mut self, name: &str, record: TemplateRecord) {
        self.records.entry(name.to_string()).or_insert(record);
    }

    pub fn records(&self) -> impl Iterator<Item = (&str, &TemplateRecord)> {
        self.records
            .iter()
            .map(|(name, record)| (name.as_str(), record))
    }

    /// The record a template id names (`Traits<64, 128>`, also through a namespace) and its
    /// parameters bound to the arguments, completed by defaults.
    fn record_instance(&self, id: &str, depth: usize) -> Option<(&TemplateRecord, Bindings)> {
        let open = id.find('<')?;
        let name = id[..open].trim();
        let args = template_id_arguments(&id[open..])?;
        let record = self
            .records
            .get(name)
            .or_else(|| self.records.get(name.rsplit("::").next()?))?;
        let mut bindings = Bindings::default();
        for (i, (param, is_type, default)) in record.params.iter().enumerate() {
            let Some(arg) = args.get(i).cloned().or_else(|| default.clone()) else {
                continue;
            };
            if *is_type {
                bindings.types.insert(param.clone(), arg);
            } else if let Some(value) = crate::parse::parse_expression_text(&arg)
                .and_then(|e| self.eval_at(&e, &bindings, depth + 1).ok())
            {
                bindings.ints.insert(param.clone(), value);
            }
        }
        Some((record, bindings))
    }

    /// `Traits<64, 128>::kBlockM`: the member of a struct template's instance.
    fn record_value(&self, name: &str, depth: usize) -> Option<i64> {
        let (id, member) = name.rsplit_once("::")?;
        if depth > MAX_EXPANSION_DEPTH || !id.ends_with('>') {
            return None;
        }
        let memo = |value: Option<Option<i64>>| -> Option<Option<i64>> {
            let mut values = self.record_values.lock().unwrap_or_else(|e| e.into_inner());
            match value {
                Some(value) => values.insert(name.to_string(), value),
                None => values.get(name).copied(),
            }
        };
        if let Some(known) = memo(None) {
            return known;
        }
        memo(Some(None));
        let value = self.record_member(id, member, depth);
        memo(Some(value));
        value
    }

    fn record_member(&self, id: &str, member: &str, depth: usize) -> Option<i64> {
        let (record, mut bindings) = self.record_instance(id, depth)?;
        for (field, expr) in &record.values {
            let value = self.eval_at(expr, &bindings, depth + 1).ok();
            if field == member {
                return value;
            }
            if let Some(value) = value {
                bindings.ints.insert(field.clone(), value);
            }
        }
        None
    }

    /// `Traits<64, 128>::Element`: the type a struct template's instance names, with its
    /// parameters replaced by the arguments; `None` when `ty` names no such member.
    pub fn record_type(&self, ty: &str) -> Option<String> {
        let (id, member) = ty.trim().rsplit_once("::")?;
        if !id.ends_with('>') {
            return None;
        }
        let (record, bindings) = self.record_instance(id, 0)?;
        let (_, target) = record.types.iter().find(|(name, _)| name == member)?;
        Some(replace_identifiers(target, |name| {
            bindings
                .types
                .get(name)
                .cloned()
                .or_else(|| bindings.ints.get(name).map(i64::to_string))
        }))
    }

    /// The macros the file defines (not the command line's).
    pub fn file_macros(&self) -> impl Iterator<Item = (&str, &Macro)> {
        self.macros.iter().map(|(name, mac)| (name.as_str(), mac))
    }

    pub fn macro_named(&self, name: &str) -> Option<&Macro> {
        self.command_line
            .get(name)
            .or_else(|| self.macros.get(name))
    }

    /// A macro the source defines (`#define`), not one from the command line: `-D BS=128`
    /// may only bind a template parameter for the analysis.
    pub fn source_macro(&self, name: &str) -> Option<&Macro> {
        self.macros.get(name)
    }

    pub fn is_defined(&self, name: &str) -> bool {
        self.macro_named(name).is_some()
    }

    /// The value given on the command line for `name` (used for template parameters).
    pub fn command_line_value(&self, name: &str) -> Option<Result<i64, Unresolved>> {
        let mac = self.command_line.get(name)?;
        Some(self.eval_macro_body(mac, &Bindings::default(), 0))
    }

    /// The body of an object-like `-D` definition as written: a type for a type template
    /// parameter (`-D T=half`).
    pub fn command_line_text(&self, name: &str) -> Option<&str> {
        let mac = self.command_line.get(name)?;
        let body = mac.body.trim();
        (mac.params.is_none() && !body.is_empty()).then_some(body)
    }

    /// Whether `name` is a macro nvcc defines differently from one compilation of the same
    /// build to another, and the command line does not fix: `__CUDA_ARCH__` (each device
    /// pass its own, the host pass none) and the toolkit's version. A condition on it holds
    /// in some configuration nvcc compiles, whichever branch the analysis would pick.
    pub fn varies_between_passes(&self, name: &str) -> bool {
        (name.starts_with("__CUDA_ARCH") || name.starts_with("__CUDACC_VER"))
            && !self.command_line.contains_key(name)
    }

    /// Evaluates an `#if` condition as the preprocessor does: a name that is not a macro
    /// (nor a known constant) is 0. A condition on a macro that
    /// [varies between passes](Self::varies_between_passes) is undecidable.
    pub fn eval_condition(&self, expr: &Expr) -> Result<bool, Unresolved> {
        let mut scope = Bindings::default();
        for name in expr.names() {
            if self.varies_between_passes(name) {
                return Err(Unresolved::UnknownName(name.to_string()));
            }
            let unknown = Err(Unresolved::UnknownName(name.to_string()));
            if self.eval_name(name, &scope, 0) == unknown {
                scope.ints.insert(name.to_string(), 0);
            }
        }
        self.eval(expr, &scope).map(|v| v != 0)
    }

    pub fn eval(&self, expr: &Expr, scope: &Bindings) -> Result<i64, Unresolved> {
        self.eval_at(expr, scope, 0)
    }

    /// A template argument as written in a call (`BM`, `BK / 2`, `T`), as an instance spells
    /// it under `scope`, the caller's bindings: an integer's value, a bound type's spelling,
    /// else the text as written.
    pub fn template_argument(&self, written: &str, scope: &Bindings) -> String {
        if let Some(bound) = scope.types.get(written.trim()) {
            return bound.clone();
        }
        crate::parse::parse_expression_text(written)
            .and_then(|expr| self.eval(&expr, scope).ok())
            .map_or_else(|| written.to_string(), |value| value.to_string())
    }

    fn eval_macro_body(
        &self,
        mac: &Macro,
        scope: &Bindings,
        depth: usize,
    ) -> Result<i64, Unresolved> {
        match mac.expr() {
            Some(expr) => self.eval_at(expr, scope, depth + 1),
            None => Err(Unresolved::NotConstant(format!(
                "macro body `{}`",
                mac.body
            ))),
        }
    }

    fn eval_at(&self, expr: &Expr, scope: &Bindings, depth: usize) -> Result<i64, Unresolved> {
        if depth > MAX_EXPANSION_DEPTH {
            return Err(Unresolved::NotConstant("recursive macro".into()));
        }
        let eval = |e: &Expr| self.eval_at(e, scope, depth + 1);
        match &expr.kind {
            ExprKind::Int(v) => Ok(*v),
            ExprKind::Name(name) => self.eval_name(name, scope, depth),
            ExprKind::Unary { op, operand } => {
                let v = eval(operand)?;
                match op {
                    UnaryOp::Neg => v.checked_neg().ok_or(Unresolved::Arithmetic),
                    UnaryOp::Plus => Ok(v),
                    UnaryOp::Not => Ok(i64::from(v == 0)),
                    UnaryOp::BitNot => Ok(!v),
                    UnaryOp::AddressOf | UnaryOp::Deref => {
                        Err(Unresolved::NotConstant("a pointer".into()))
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = eval(lhs)?;
                // Short-circuit like C so `N > 0 && X / N` stays defined.
                match op {
                    BinaryOp::LogAnd if l == 0 => return Ok(0),
                    BinaryOp::LogOr if l != 0 => return Ok(1),
                    _ => {}
                }
                binary(*op, l, eval(rhs)?)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                if eval(cond)? != 0 {
                    eval(then)
                } else {
                    eval(otherwise)
                }
            }
            // An address is no integer constant (`2 * (uint4 *)N` is not an extent).
            ExprKind::Cast { ty, .. } if ty.contains('*') => {
                Err(Unresolved::NotConstant(format!("a cast to `{ty}`")))
            }
            ExprKind::Cast { operand, .. } => eval(operand),
            ExprKind::SizeofType(ty) => {
                let ty = scope.types.get(ty).map(String::as_str).unwrap_or(ty);
                self.types
                    .layout(ty)
                    .map(|layout| layout.size as i64)
                    .ok_or_else(|| Unresolved::UnknownName(ty.to_string()))
            }
            ExprKind::Call { callee, args, .. } => {
                let name = match &callee.kind {
                    ExprKind::Name(name) => name.as_str(),
                    _ => return Err(Unresolved::NotConstant("a call".into())),
                };
                if name == "defined" {
                    return match args.first().map(|a| &a.kind) {
                        Some(ExprKind::Name(macro_name))
                            if self.varies_between_passes(macro_name) =>
                        {
                            Err(Unresolved::UnknownName(macro_name.clone()))
                        }
                        Some(ExprKind::Name(macro_name)) => {
                            Ok(i64::from(self.is_defined(macro_name)))
                        }
                        _ => Err(Unresolved::NotConstant("defined(…)".into())),
                    };
                }
                let Some(mac) = self.macro_named(name) else {
                    return Err(Unresolved::NotConstant(format!("call of `{name}`")));
                };
                let Some(params) = &mac.params else {
                    return Err(Unresolved::NotConstant(format!("call of `{name}`")));
                };
                if params.len() != args.len() {
                    return Err(Unresolved::NotConstant(format!(
                        "`{name}` called with {} arguments",
                        args.len()
                    )));
                }
                let mut inner = scope.clone();
                for (param, arg) in params.iter().zip(args) {
                    inner.ints.insert(param.clone(), eval(arg)?);
                }
                self.eval_macro_body(mac, &inner, depth)
            }
            ExprKind::Comma { second, .. } => eval(second),
            ExprKind::Float(text) => Err(Unresolved::NotConstant(format!("`{text}`"))),
            ExprKind::Opaque(what) => Err(Unresolved::NotConstant(what.clone())),
            ExprKind::Member { .. }
            | ExprKind::Index { .. }
            | ExprKind::Assign { .. }
            | ExprKind::Step { .. }
            | ExprKind::SizeofExpr(_) => Err(Unresolved::NotConstant(format!("`{expr}`"))),
        }
    }

    fn eval_name(&self, name: &str, scope: &Bindings, depth: usize) -> Result<i64, Unresolved> {
        if let Some(v) = scope.ints.get(name) {
            return Ok(*v);
        }
        if let Some(mac) = self.macro_named(name) {
            if mac.params.is_none() {
                return self.eval_macro_body(mac, scope, depth);
            }
        }
        if let Some(value) = self.values.get(name) {
            return Ok(*value);
        }
        // `::N` is `N`; `P::kRows` with `P` bound to `cfg::Policy` is `cfg::Policy::kRows`.
        if let Some(global) = name.strip_prefix("::") {
            return self.eval_name(global, scope, depth);
        }
        if let Some(value) = self.record_value(name, depth) {
            return Ok(value);
        }
        if let Some((first, rest)) = name.split_once("::") {
            let bound = scope.types.get(first).filter(|b| *b != first);
            if let (Some(bound), true) = (bound, depth < MAX_EXPANSION_DEPTH) {
                let bound = bound.trim_start_matches("typename ").trim();
                return self.eval_name(&format!("{bound}::{rest}"), scope, depth + 1);
            }
        }
        Err(Unresolved::UnknownName(name.to_string()))
    }
}

/// `text` with each identifier replaced by what `replace` gives for it (kept when `None`):
/// a type with its template parameters bound.
pub fn replace_identifiers(text: &str, replace: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.push_str(&rest[..start]);
        let word = &rest[start..];
        let end = word
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(word.len());
        let name = &word[..end];
        match replace(name) {
            Some(replacement) => out.push_str(&replacement),
            None => out.push_str(name),
        }
        rest = &word[end..];
    }
    out.push_str(rest);
    out
}

/// The arguments of `<a, b<c, d>, e>` (what follows a template's name), split at its
/// top-level commas; `None` unless the text is one such list.
fn template_id_arguments(list: &str) -> Option<Vec<String>> {
    let inner = list.trim().strip_prefix('<')?.strip_suffix('>')?;
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    if !inner.trim().is_empty() {
        args.push(inner[start..].trim().to_string());
    }
    Some(args)
}

fn binary(op: BinaryOp, l: i64, r: i64) -> Result<i64, Unresolved> {
    op.op()
        .apply(l, r, Semantics::Constant)
        .ok_or(Unresolved::Arithmetic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_expression_text;
    use crate::parse::types::builtin;

    fn eval(env: &ConstEnv, text: &str) -> Result<i64, Unresolved> {
        let expr = parse_expression_text(text).expect("test expression parses");
        env.eval(&expr, &Bindings::default())
    }

    fn env_with(macros: &[(&str, Option<&[&str]>, &str)]) -> ConstEnv {
        let mut env = ConstEnv::default();
        for (name, params, body) in macros {
            let params = params.map(|p| p.iter().map(|s| s.to_string()).collect());
            env.define_macro(name, Macro::new(params, body, 1));
        }
        env
    }

    #[test]
    fn object_and_function_like_macros() {
        let env = env_with(&[
            ("TILE", None, "32"),
            ("PAD", Some(&["n"]), "((n) + 1)"),
            ("ROWS", None, "(TILE / 4)"),
        ]);
        assert_eq!(eval(&env, "TILE"), Ok(32));
        assert_eq!(eval(&env, "PAD(TILE)"), Ok(33));
        assert_eq!(eval(&env, "TILE * 2 + 1"), Ok(65));
        assert_eq!(eval(&env, "ROWS << 1"), Ok(16));
        assert!(eval(&env, "PAD(1, 2)").is_err());
    }

    #[test]
    fn a_macro_with_a_body_seen_before_reuses_its_expression() {
        let mut env = ConstEnv::default();
        env.define_macro("PAD", Macro::new(Some(vec!["n".into()]), "((n) + 1)", 1));
        assert_eq!(eval(&env, "PAD(32)"), Ok(33));
        // Same body, other parameter name: the parsed body is shared, the binding is not.
        env.define_macro("NEXT", Macro::new(Some(vec!["k".into()]), " ((n) + 1) ", 2));
        let next = env.macro_named("NEXT").unwrap();
        assert_eq!(next.expr(), env.macro_named("PAD").unwrap().expr());
        assert!(eval(&env, "NEXT(4)").is_err());
        env.define_macro("PAD2", Macro::new(Some(vec!["n".into()]), "((n) + 1)", 3));
        assert_eq!(eval(&env, "PAD2(7)"), Ok(8));
        // A redefinition is ignored, as before.
        env.define_macro("PAD", Macro::new(None, "5", 4));
        assert_eq!(eval(&env, "PAD(1)"), Ok(2));
    }

    #[test]
    fn command_line_defines_win_over_the_file() {
        let mut env = ConstEnv::with_command_line(&["TILE=64".into(), "FLAG".into()]);
        env.define_macro("TILE", Macro::new(None, "32", 1));
        assert_eq!(eval(&env, "TILE"), Ok(64));
        assert_eq!(eval(&env, "FLAG"), Ok(1));
        assert_eq!(eval(&env, "defined(FLAG) + defined(OTHER)"), Ok(1));
    }

    #[test]
    fn enums_consts_sizeof_and_bindings() {
        let mut env = ConstEnv::default();
        env.define_value("BLOCK", 128);
        env.types.define("Particle", builtin("float4").unwrap());
        assert_eq!(eval(&env, "BLOCK / 32"), Ok(4));
        assert_eq!(eval(&env, "sizeof(float4) / sizeof(float)"), Ok(4));
        assert_eq!(eval(&env, "sizeof(Particle)"), Ok(16));
        assert_eq!(eval(&env, "(int)sizeof(double2)"), Ok(16));
        let mut scope = Bindings::default();
        scope.ints.insert("BS".into(), 16);
        scope.types.insert("T".into(), "double".into());
        let expr = parse_expression_text("BS * sizeof(T)").unwrap();
        assert_eq!(env.eval(&expr, &scope), Ok(128));
        assert_eq!(
            eval(&env, "BS * 2"),
            Err(Unresolved::UnknownName("BS".into()))
        );
    }

    #[test]
    fn arithmetic_errors_and_recursion_are_reported_not_panics() {
        let env = env_with(&[("A", None, "A + 1"), ("Z", None, "0")]);
        assert!(eval(&env, "A").is_err());
        assert_eq!(eval(&env, "1 / Z"), Err(Unresolved::Arithmetic));
        assert_eq!(
            eval(&env, "9223372036854775807 + 1"),
            Err(Unresolved::Arithmetic)
        );
        assert_eq!(eval(&env, "1 << 70"), Err(Unresolved::Arithmetic));
        assert_eq!(eval(&env, "Z && 1 / Z"), Ok(0));
        assert_eq!(eval(&env, "Z ? 1 / Z : 7"), Ok(7));
    }

    #[test]
    fn name_tokens_skip_comments_and_members() {
        let tokens: Vec<_> =
            name_tokens("if (blockDim.z != 1) t[p->x] = a; // z of b\n/* c */ d").collect();
        assert_eq!(tokens, ["if", "blockDim", "t", "p", "a", "d"]);
    }

    #[test]
    fn identifier_tokens_skip_literals_and_numbers() {
        let tokens: Vec<_> = identifier_tokens(r#"buf[i] + "buf" + 0x1f + b2"#).collect();
        assert_eq!(tokens, ["buf", "i", "b2"]);
    }
}
