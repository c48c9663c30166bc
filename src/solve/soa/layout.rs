//! Where the struct-of-arrays layout applies: the element is a struct of scalars without
//! padding, the array static and not escaping, and every access a member access, a
//! whole-record store that is an entire statement, or a whole-record read used as a value.
use super::{PosedLayout, RecordMember, RecordUse, StructOfArrays};
use crate::affine::FunctionAffine;
use crate::bank::BankConfig;
use crate::parse::{
    Access, AccessKind, Decl, Expr, ExprKind, Function, SharedArray, Span, Stmt, TypeTable,
};

/// Array number `array_index` of `function` posed to the solver as a struct of arrays, or
/// why that layout does not apply to it.
pub fn posed(
    function: &Function,
    array_index: usize,
    affine: &FunctionAffine,
    types: &TypeTable,
    config: &BankConfig,
) -> Result<PosedLayout, String> {
    let array = function.arrays.get(array_index).ok_or("no such array")?;
    let layout = layout(function, array, types)?;
    PosedLayout::pose(layout, affine, array_index, array, config)
}

/// The struct-of-arrays layout of `array` (declared in `function`), or why it does not
/// apply: the element must be a struct of scalars without padding, the array static and not
/// escaping, and every access a member access, a whole-record store that is an entire
/// statement, or a whole-record read used as a value.
pub fn layout(
    function: &Function,
    array: &SharedArray,
    types: &TypeTable,
) -> Result<StructOfArrays, String> {
    if let Some(reason) = array.reason() {
        return Err(format!("it escapes: {reason}"));
    }
    if array.is_extern {
        return Err("an `extern __shared__` array: the launch sizes it as one block".into());
    }
    let extent = array.extents()?.into_iter().fold(1u64, u64::saturating_mul);
    let record = &array.elem_type;
    let members = record_members(record, array.elem_bytes, types)?;
    // Whole-record accesses are found in the body's statements: unpacked once, and only
    // when there are such accesses.
    let statements = if array.accesses.iter().any(|a| a.detail().member.is_none()) {
        function.body.statements()
    } else {
        Vec::new()
    };
    let uses = array
        .accesses
        .iter()
        .map(|access| record_use(function, &statements, array.dims.len(), access, &members))
        .collect::<Result<Vec<_>, String>>()?;
    let (members, uses, dropped) = without_unread_members(array, members, uses)?;
    let spelled = record
        .split_whitespace()
        .filter(|w| !matches!(*w, "struct" | "union" | "class" | "const" | "volatile"))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(StructOfArrays::new(extent, spelled, members, uses).dropping(dropped))
}

/// The members some access reads, the uses renumbered for them, the others' names.
type ReadMembers = (Vec<RecordMember>, Vec<RecordUse>, Vec<String>);

/// The members some access reads, the uses renumbered for them, and the names of the others.
/// A member never read gets no array: its array would only be written, which costs shared
/// memory for nothing and makes nvcc warn (#550-D, "set but never used"), failing a
/// `-Werror` build. Its stores come only from whole-record stores, whose other members are
/// still stored; a member stored on its own (`a[i].c = E;`) and never read keeps the
/// layout out, since dropping that statement would drop E's evaluation.
fn without_unread_members(
    array: &SharedArray,
    members: Vec<RecordMember>,
    uses: Vec<RecordUse>,
) -> Result<ReadMembers, String> {
    let mut read = vec![false; members.len()];
    for (access, use_) in array.accesses.iter().zip(&uses) {
        if access.kind != AccessKind::Store {
            for m in use_.members(members.len()) {
                read[m] = true;
            }
        }
    }
    if read.iter().all(|r| *r) {
        return Ok((members, uses, Vec::new()));
    }
    for (access, use_) in array.accesses.iter().zip(&uses) {
        if let RecordUse::Member(m) = *use_ {
            if !read[m] {
                return Err(format!(
                    "line {}: member `{}` is written there but never read: its own array \
                     would be set and never used",
                    access.at.line, members[m].name
                ));
            }
        }
    }
    if !read.iter().any(|r| *r) {
        return Err("no member is ever read".into());
    }
    let renumbered: Vec<Option<usize>> = read
        .iter()
        .scan(0, |next, &r| {
            let number = r.then_some(*next);
            *next += usize::from(r);
            Some(number)
        })
        .collect();
    let uses = uses
        .into_iter()
        .map(|use_| match use_ {
            RecordUse::Member(m) => RecordUse::Member(renumbered[m].unwrap_or(m)),
            other => other,
        })
        .collect();
    let (kept, dropped): (Vec<_>, Vec<_>) = members.into_iter().zip(&read).partition(|(_, r)| **r);
    Ok((
        kept.into_iter().map(|(m, _)| m).collect(),
        uses,
        dropped.into_iter().map(|(m, _)| m.name).collect(),
    ))
}

/// The members of the record type `record`: scalars only, laid out without padding.
fn record_members(
    record: &str,
    elem_bytes: Option<u64>,
    types: &TypeTable,
) -> Result<Vec<RecordMember>, String> {
    // A struct with bit-fields has no layout, so no size.
    let bytes = elem_bytes.ok_or_else(|| format!("`{record}` has no known size"))?;
    let members = types
        .members(record)
        .ok_or_else(|| format!("the element type `{record}` is not a struct"))?;
    // A constructor, an operator or a base would make a copy or `T{…}` do more, or other,
    // than one member at a time.
    if !types.is_plain_data(record) {
        return Err(format!(
            "`{record}` declares more than data members (a constructor, a member function, an \
             operator or a base class): its copies may not go member by member"
        ));
    }
    let mut next = 0u64;
    let mut result = Vec::with_capacity(members.len());
    for member in members {
        let name = &member.name;
        if !member.extents.is_empty() {
            return Err(format!("member `{name}` of `{record}` is an array"));
        }
        if !types.is_scalar(&member.type_name) {
            return Err(format!(
                "member `{name}` of `{record}` is a `{}`, not a scalar",
                member.type_name
            ));
        }
        if member.offset != next {
            return Err(format!(
                "`{record}` has padding or overlapping members at member `{name}` (byte {}, \
                 not {next})",
                member.offset
            ));
        }
        next += member.layout.size;
        result.push(RecordMember {
            name: name.clone(),
            type_name: member.type_name.clone(),
            offset: member.offset,
            bytes: member.layout.size,
        });
    }
    if result.is_empty() || next != bytes {
        return Err(format!(
            "`{record}` has {} padding bytes: its members fill {next} of its {bytes}",
            bytes.saturating_sub(next)
        ));
    }
    Ok(result)
}

/// What `access` does with its record, or why the layout cannot express it.
fn record_use(
    function: &Function,
    statements: &[Stmt],
    rank: usize,
    access: &Access,
    members: &[RecordMember],
) -> Result<RecordUse, String> {
    let at = |why: String| Err(format!("line {}: `{}` {why}", access.at.line, access.text));
    if access.detail().via_pointer.is_some() {
        return at("goes through a pointer".into());
    }
    let indices = access.indices.unpack();
    if indices.len() != rank {
        return at("does not subscript every dimension".into());
    }
    if let Some(path) = &access.detail().member {
        let name = path.strip_prefix('.').unwrap_or_default();
        let Some(m) = members.iter().position(|m| m.name == name) else {
            return at(format!("names `{path}`, not one member of the record"));
        };
        let member = &members[m];
        if access.detail().member_bytes != Some((member.offset, member.bytes)) {
            return at(format!("does not touch member `{name}` whole"));
        }
        return Ok(RecordUse::Member(m));
    }
    let (parent, grandparent) = match context_of(statements, access.span) {
        Some(found) => found,
        None => return at("is not seen in the function's statements".into()),
    };
    let record_use = match (access.kind, parent) {
        (AccessKind::Store, Parent::Expression(assignment)) => match &assignment.kind {
            ExprKind::Assign {
                op: None,
                target,
                value,
            } if target.span == access.span && matches!(grandparent, Parent::Statement) => {
                RecordUse::Store {
                    assignment: assignment.span,
                    value: value.span,
                }
            }
            ExprKind::Assign { op: Some(_), .. } | ExprKind::Step { .. } => {
                return at("updates a whole record in place".into())
            }
            _ => return at("stores a whole record inside a larger expression".into()),
        },
        (AccessKind::Load, Parent::Initializer(decl)) if !decl.reference => RecordUse::Load,
        (AccessKind::Load, Parent::Expression(parent)) => match &parent.kind {
            ExprKind::Assign {
                op: None, value, ..
            } if value.span == access.span => RecordUse::Load,
            ExprKind::Assign { op: Some(_), .. } | ExprKind::Step { .. } => {
                return at("updates a whole record in place".into())
            }
            ExprKind::Call { .. } => return at("passes a whole record to a function".into()),
            _ => return at("reads a whole record where its value cannot stand".into()),
        },
        (AccessKind::Load, Parent::Initializer(_)) => {
            return at("binds a whole record to a reference".into())
        }
        (AccessKind::Load, _) => {
            return at("reads a whole record where its value cannot stand".into())
        }
        (AccessKind::Store, _) => {
            return at("stores a whole record where a block cannot stand".into())
        }
        (AccessKind::Atomic, _) => return at("is an atomic on a whole record".into()),
    };
    // The index is copied into each member's access (a read) or each member's store.
    let reads_shared = indices.iter().any(|index| {
        function.arrays.iter().any(|other| {
            other.accesses.iter().any(|a| {
                a.span != access.span
                    && index.span.start <= a.span.start
                    && a.span.end <= index.span.end
            })
        })
    });
    if reads_shared {
        return at("has an index that reads shared memory, which the rewrite would copy".into());
    }
    if record_use == RecordUse::Load && !indices.iter().all(Expr::is_pure) {
        return at("reads a whole record at an index with side effects".into());
    }
    Ok(record_use)
}

/// Where an expression stands.
#[derive(Debug, Clone, Copy)]
enum Parent<'a> {
    /// The whole expression of an expression statement that a block could replace.
    Statement,
    /// The initializer of a declaration.
    Initializer(&'a Decl),
    Expression(&'a Expr),
    /// A condition, a `for` header, a return value, an opaque statement.
    Elsewhere,
}

/// The parent and grandparent of the subscript expression that spans `span` in `body`.
fn context_of(body: &[Stmt], span: Span) -> Option<(Parent<'_>, Parent<'_>)> {
    let mut found = None;
    statements(body, &mut |expr, parent, grandparent| {
        if found.is_none() && expr.span == span && matches!(expr.kind, ExprKind::Index { .. }) {
            found = Some((parent, grandparent));
        }
    });
    found
}

type Visit<'f, 'a> = dyn FnMut(&'a Expr, Parent<'a>, Parent<'a>) + 'f;

fn statements<'a>(body: &'a [Stmt], visit: &mut Visit<'_, 'a>) {
    for stmt in body {
        statement(stmt, true, visit);
    }
}

/// Visits every expression of `stmt`; `in_block`: the statement stands where a block could.
fn statement<'a>(stmt: &'a Stmt, in_block: bool, visit: &mut Visit<'_, 'a>) {
    let elsewhere = |expr: &'a Expr, visit: &mut Visit<'_, 'a>| {
        expression(expr, Parent::Elsewhere, Parent::Elsewhere, visit)
    };
    match stmt {
        Stmt::Decl(decl) => {
            if let Some(init) = &decl.init {
                expression(init, Parent::Initializer(decl), Parent::Elsewhere, visit);
            }
        }
        Stmt::Expr(expr) => {
            let parent = if in_block {
                Parent::Statement
            } else {
                Parent::Elsewhere
            };
            expression(expr, parent, Parent::Elsewhere, visit);
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            elsewhere(cond, visit);
            statements(then, visit);
            statements(otherwise, visit);
        }
        Stmt::For {
            init,
            cond,
            update,
            body,
            ..
        } => {
            for stmt in init {
                statement(stmt, false, visit);
            }
            if let Some(cond) = cond {
                elsewhere(cond, visit);
            }
            for expr in update {
                elsewhere(expr, visit);
            }
            statements(body, visit);
        }
        Stmt::While { cond, body } | Stmt::DoWhile { body, cond } | Stmt::Switch { cond, body } => {
            elsewhere(cond, visit);
            statements(body, visit);
        }
        Stmt::Block(body) => statements(body, visit),
        Stmt::Return(value) => {
            if let Some(value) = value {
                elsewhere(value, visit);
            }
        }
        Stmt::Lambda(lambda) => statements(&lambda.body, visit),
        Stmt::Opaque { exprs, .. } => {
            for expr in exprs {
                elsewhere(expr, visit);
            }
        }
        Stmt::Break | Stmt::Continue => {}
    }
}

fn expression<'a>(
    expr: &'a Expr,
    parent: Parent<'a>,
    grandparent: Parent<'a>,
    visit: &mut Visit<'_, 'a>,
) {
    visit(expr, parent, grandparent);
    expr.for_each_child(|child| expression(child, Parent::Expression(expr), parent, visit));
}
