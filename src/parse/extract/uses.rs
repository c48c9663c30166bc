//! Classifies each use of a shared array's name: an element access (load, store, atomic) or
//! an escape (address taken, pointer arithmetic, passed to a function, cast, asm, …).
use super::walk::Lineage;
use super::{leftmost_identifier, Extractor};
use crate::parse::ast::{self, Expr, Span};
use crate::parse::model::*;
use crate::parse::packed::Packed;
use crate::parse::symbols::{child, FIELDS};
use crate::parse::syntax::Node;

impl<'s> Extractor<'s> {
    /// Classifies one use of `array`'s name: an element access, or an escape.
    pub(super) fn classify_use(&self, array: &mut SharedArray, name: &Lineage) {
        if array.record_scalar {
            // `s.m…` is `s[0].m…`; any other use of the record is one of its address.
            let member = name.parent(0).is_some_and(|parent| {
                parent.kind() == "field_expression"
                    && parent
                        .child_by_field_id(FIELDS.operator)
                        .is_some_and(|op| self.text(op) == ".")
            });
            if member {
                let zero = Expr {
                    kind: ast::ExprKind::Int(0),
                    span: Span::of(name.node(0)),
                };
                self.classify_element(array, name, 0, vec![zero]);
            } else {
                let (kind, site) = self.pointer_use(name, 0);
                let name_use = Some(Span::of(name.node(0)));
                array.escapes.push(self.escape(kind, site, name_use));
            }
            return;
        }
        let rank = array.dims.len();
        let mut level = 0;
        let mut indices = Vec::new();
        while indices.len() < rank {
            match name.parent(level) {
                Some(parent)
                    if parent.kind() == "subscript_expression"
                        && child(parent, FIELDS.argument) == Some(name.node(level)) =>
                {
                    let index = parent
                        .child_by_field_id(FIELDS.indices)
                        .and_then(|list| list.named_child(0));
                    match index {
                        Some(index) => indices.push(ast::lower(index, self.src)),
                        None => break,
                    }
                    level += 1;
                }
                _ => break,
            }
        }
        if indices.len() == rank {
            self.classify_element(array, name, level, indices);
        } else if let Some(site) = self.assigned_as_whole(name, level) {
            // No pointer for the affine stage to follow: the escape stays.
            array
                .escapes
                .push(self.escape(EscapeKind::AssignedAsWhole, site, None));
        } else {
            let (kind, site) = self.pointer_use(name, level);
            let name_use = Some(Span::of(name.node(0)));
            array.escapes.push(self.escape(kind, site, name_use));
        }
    }

    /// The assignment or step whose target is the part of the array at `level` (`t[i] = v`
    /// on a two-dimensional `t`, `t[i]++`), when it is one.
    fn assigned_as_whole<'t>(&self, lineage: &Lineage<'t>, mut level: usize) -> Option<Node<'t>> {
        while lineage
            .parent(level)
            .is_some_and(|p| p.kind() == "parenthesized_expression")
        {
            level += 1;
        }
        let parent = lineage.parent(level)?;
        let target = lineage.node(level);
        match parent.kind() {
            "assignment_expression" if child(parent, FIELDS.left) == Some(target) => Some(parent),
            "update_expression" => Some(parent),
            _ => None,
        }
    }

    pub(super) fn escape(&self, kind: EscapeKind, node: Node, name_use: Option<Span>) -> Escape {
        Escape {
            kind,
            at: self.at(node),
            text: self.one_line(node),
            name_use,
            calls: Vec::new(),
        }
    }

    /// Classifies the element access at `level` of `lineage` (`t[i][j]`) by what uses it.
    fn classify_element(
        &self,
        array: &mut SharedArray,
        lineage: &Lineage,
        level: usize,
        indices: Vec<Expr>,
    ) {
        let element = lineage.node(level);
        // Look through parentheses, `.member` and `.member[k]` to the expression that uses
        // the element.
        let mut user = level;
        let mut member: Option<String> = None;
        let mut member_subscripts = Vec::new();
        while let Some(parent) = lineage.parent(user) {
            match parent.kind() {
                "parenthesized_expression" => user += 1,
                "field_expression"
                    if child(parent, FIELDS.argument) == Some(lineage.node(user))
                        && parent
                            .child_by_field_id(FIELDS.operator)
                            .is_some_and(|op| self.text(op) == ".") =>
                {
                    let field = parent
                        .child_by_field_id(FIELDS.field)
                        .map_or("", |f| self.text(f));
                    member
                        .get_or_insert_with(String::new)
                        .push_str(&format!(".{field}"));
                    user += 1;
                }
                // `s[i].v[k]`: indexing a member array still touches element `s[i]`.
                "subscript_expression"
                    if member.is_some()
                        && child(parent, FIELDS.argument) == Some(lineage.node(user)) =>
                {
                    let index = parent
                        .child_by_field_id(FIELDS.indices)
                        .and_then(|list| list.named_child(0));
                    if let Some(path) = member.as_mut() {
                        let text = index.map(|i| self.one_line(i)).unwrap_or_default();
                        path.push_str(&format!("[{text}]"));
                    }
                    member_subscripts.extend(index.map(|i| ast::lower(i, self.src)));
                    user += 1
                }
                _ => break,
            }
        }
        let access = |kind: AccessKind, atomic_op: Option<String>| {
            Access::new(
                kind,
                self.at(element),
                Span::of(element),
                self.one_line(element),
                Packed::new(&indices),
                AccessDetail {
                    member: member.clone(),
                    atomic_op,
                    member_bytes: member
                        .as_deref()
                        .and_then(|m| self.env.types.member_range(&array.elem_type, m)),
                    member_subscripts: member_subscripts.clone(),
                    member_layout: member
                        .as_deref()
                        .and_then(|m| self.env.types.member_layout(&array.elem_type, m)),
                    via_pointer: None,
                    pointer_offset: None,
                    vector_bytes: None,
                },
            )
        };
        let Some(parent) = lineage.parent(user) else {
            array.accesses.push(access(AccessKind::Load, None));
            return;
        };
        let macro_taking_address = (parent.kind() == "argument_list")
            .then(|| self.address_taking_macro(lineage, user))
            .flatten();
        if let Some(name) = macro_taking_address {
            // No pointer for the affine stage to follow: the expansion is not in the tree.
            let call = lineage.parent(user + 1).unwrap_or(parent);
            array
                .escapes
                .push(self.escape(EscapeKind::MacroArgument(name), call, None));
            return;
        }
        let operator = parent
            .child_by_field_id(FIELDS.operator)
            .map_or("", |op| self.text(op));
        match parent.kind() {
            "assignment_expression" if child(parent, FIELDS.left) == Some(lineage.node(user)) => {
                if operator != "=" {
                    array.accesses.push(access(AccessKind::Load, None));
                }
                array.accesses.push(access(AccessKind::Store, None));
            }
            "update_expression" => {
                array.accesses.push(access(AccessKind::Load, None));
                array.accesses.push(access(AccessKind::Store, None));
            }
            "init_declarator"
                if parent
                    .child_by_field_id(FIELDS.declarator)
                    .is_some_and(|d| d.kind() == "reference_declarator") =>
            {
                let var = parent
                    .child_by_field_id(FIELDS.declarator)
                    .map(|d| leftmost_identifier(d, self.src).to_string())
                    .unwrap_or_default();
                let site = lineage.parent(user + 1).unwrap_or(parent);
                array
                    .escapes
                    .push(self.escape(EscapeKind::BoundToReference(var), site, None));
            }
            // `Ref r{a[i][j]}`, `Ref r = Ref(a[i][j])` is a call the affine stage follows.
            "argument_list" | "initializer_list" => match self.constructed_object(lineage, user) {
                Some(var) => {
                    let site = lineage.parent(user + 1).unwrap_or(parent);
                    let kind = EscapeKind::ConstructorArgument(var);
                    array.escapes.push(self.escape(kind, site, None));
                }
                None => array.accesses.push(access(AccessKind::Load, None)),
            },
            "pointer_expression" if operator == "&" => match self.atomic_call(lineage, user + 1) {
                Some(op) => array.accesses.push(access(AccessKind::Atomic, Some(op))),
                None => array.escapes.push(self.escape(
                    EscapeKind::AddressTaken,
                    parent,
                    Some(Span::of(lineage.node(0))),
                )),
            },
            _ => array.accesses.push(access(AccessKind::Load, None)),
        }
    }

    /// The function-like macro the argument at `level` is passed to, where its body takes
    /// that parameter's address (`&(p)`) or casts anything (`reinterpret_cast`, `(T *)`):
    /// the expansion accesses the element in a way the source does not show.
    fn address_taking_macro(&self, lineage: &Lineage, level: usize) -> Option<String> {
        let arguments = lineage.parent(level)?;
        let call = lineage
            .parent(level + 1)
            .filter(|c| c.kind() == "call_expression")?;
        let callee = child(call, FIELDS.function)?;
        let name = self.text(callee);
        let mac = self.env.macro_named(name)?;
        let params = mac.params.as_ref()?;
        let position = (0..arguments.named_child_count())
            .position(|i| arguments.named_child(i) == Some(lineage.node(level)))?;
        let param = params.get(position)?;
        let casts = ["reinterpret_cast", "static_cast", "const_cast", "*)", "&)"]
            .iter()
            .any(|cast| mac.body.contains(cast));
        (casts || address_of_parameter(&mac.body, param)).then(|| name.to_string())
    }

    /// The variable of class type that the argument at `level` initializes
    /// (`Ref r{a[i][j]}`, `Ref r(a[i][j])`), if any: its constructor may keep the element's
    /// address. A built-in type (`float v{a[i]}`) only reads it.
    fn constructed_object(&self, lineage: &Lineage, level: usize) -> Option<String> {
        let declarator = lineage
            .parent(level + 1)
            .filter(|d| d.kind() == "init_declarator")?;
        let declaration = lineage
            .parent(level + 2)
            .filter(|d| d.kind() == "declaration")?;
        self.declares_object(declaration)
            .then(|| leftmost_identifier(declarator, self.src).to_string())
    }

    /// Whether `declaration` declares variables of a class type, whose constructors may
    /// keep the address of what they are given (not `float`, a typedef of one, `auto`).
    pub(super) fn declares_object(&self, declaration: Node) -> bool {
        let Some(ty) = child(declaration, FIELDS.type_) else {
            return false;
        };
        match ty.kind() {
            // `auto v{a[i]}` is the element's own type.
            "primitive_type" | "sized_type_specifier" | "placeholder_type_specifier" | "auto" => {
                false
            }
            "type_identifier" => {
                let name = self.text(ty);
                crate::parse::types::builtin(name).is_none() && !self.env.types.is_scalar(name)
            }
            _ => true,
        }
    }

    /// The atomic function whose first argument is the address at `level`, if any.
    fn atomic_call(&self, lineage: &Lineage, mut level: usize) -> Option<String> {
        while lineage.parent(level)?.kind() == "parenthesized_expression" {
            level += 1;
        }
        let list = lineage
            .parent(level)
            .filter(|p| p.kind() == "argument_list")?;
        if list.named_child(0) != Some(lineage.node(level)) {
            return None;
        }
        let call = lineage
            .parent(level + 1)
            .filter(|p| p.kind() == "call_expression")?;
        let callee = self.text(child(call, FIELDS.function)?);
        is_atomic(callee).then(|| callee.to_string())
    }

    /// What a use of the array as a pointer value (its name, or a row `tile[i]`) at `level`
    /// does, and the node to show.
    fn pointer_use<'t>(&self, lineage: &Lineage<'t>, mut level: usize) -> (EscapeKind, Node<'t>) {
        let value = lineage.node(level);
        while lineage
            .parent(level)
            .is_some_and(|p| p.kind() == "parenthesized_expression")
        {
            level += 1;
        }
        let Some(parent) = lineage.parent(level) else {
            return (EscapeKind::UsedAsPointer, value);
        };
        let operator = parent
            .child_by_field_id(FIELDS.operator)
            .map_or("", |op| self.text(op));
        match parent.kind() {
            "pointer_expression" if operator == "&" => (EscapeKind::AddressTaken, parent),
            "pointer_expression" => (EscapeKind::PointerArithmetic, parent),
            "binary_expression" if operator == "+" || operator == "-" => {
                (EscapeKind::PointerArithmetic, parent)
            }
            "argument_list" => {
                let call = lineage
                    .parent(level + 1)
                    .filter(|c| c.kind() == "call_expression");
                let site = call.unwrap_or(parent);
                match call.and_then(|c| child(c, FIELDS.function)) {
                    Some(f) if f.kind() == "template_function" => {
                        let name = child(f, FIELDS.name).map_or("", |n| self.text(n));
                        if name.ends_with("_cast") {
                            let target = f
                                .child_by_field_id(FIELDS.arguments)
                                .map(|a| self.one_line(a))
                                .unwrap_or_default();
                            let target = target.trim_start_matches('<').trim_end_matches('>');
                            (EscapeKind::Cast(target.to_string()), site)
                        } else {
                            (EscapeKind::PassedToFunction(self.one_line(f)), site)
                        }
                    }
                    Some(f) => (EscapeKind::PassedToFunction(self.one_line(f)), site),
                    None => (EscapeKind::UsedAsPointer, parent),
                }
            }
            "cast_expression" => {
                let ty = parent
                    .child_by_field_id(FIELDS.type_)
                    .map(|t| self.one_line(t))
                    .unwrap_or_default();
                (EscapeKind::Cast(ty), parent)
            }
            "init_declarator" => {
                let var = parent
                    .child_by_field_id(FIELDS.declarator)
                    .map(|d| leftmost_identifier(d, self.src).to_string())
                    .unwrap_or_default();
                let site = lineage.parent(level + 1).unwrap_or(parent);
                (EscapeKind::AssignedToPointer(var), site)
            }
            "assignment_expression" => {
                let var = parent
                    .child_by_field_id(FIELDS.left)
                    .map(|d| self.one_line(d))
                    .unwrap_or_default();
                (EscapeKind::AssignedToPointer(var), parent)
            }
            "return_statement" => (EscapeKind::Returned, parent),
            _ => (EscapeKind::UsedAsPointer, parent),
        }
    }
}

/// Whether `callee` names one of CUDA's atomic functions (`atomicAdd`, `::atomicCAS`, ...).
/// Whether `body` applies `&` to `param` (through parentheses: `&(p)`, `& p`), not `&&`.
fn address_of_parameter(body: &str, param: &str) -> bool {
    let bytes = body.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    body.match_indices(param).any(|(at, _)| {
        let end = at + param.len();
        let whole =
            (at == 0 || !is_word(bytes[at - 1])) && (end == bytes.len() || !is_word(bytes[end]));
        let before = body[..at].trim_end_matches(|c: char| c == '(' || c.is_whitespace());
        whole && before.ends_with('&') && !before.ends_with("&&")
    })
}

pub fn is_atomic(callee: &str) -> bool {
    callee.starts_with("atomic") || callee.starts_with("::atomic")
}
