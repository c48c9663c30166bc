//! Accesses through pointers into the array: the functions a pointer reaches are copied with
//! their accesses going through the map, and the declarators that must change with them.
use super::*;

/// The rewrites of the accesses through pointers.
pub(super) struct ThroughPointers {
    /// Edits of the array's own function.
    pub(super) edits: Vec<Edit>,
    pub(super) accesses: Vec<AccessRewrite>,
    /// Copies of the `__device__` functions the pointer is passed to, whose accesses go
    /// through the map, in the order of their originals.
    pub(super) copies: Vec<FunctionCopy>,
}

/// A copy of a `__device__` function whose accesses through a pointer into the array go
/// through the array's map.
pub(super) struct FunctionCopy {
    pub(super) name: String,
    pub(super) original: String,
    /// With its comment and a blank line after it.
    pub(super) text: String,
}

/// The parameter that carries the array's first element into a copied function, when an
/// access there needs it.
pub(super) const BASE_PARAMETER: &str = "bankwise_base";

/// Every access of the array through a pointer, through the map function `name` (whose
/// body is `expr`): `p[i]` → `p[name(i)]` when `p` points at the array's first element,
/// else `p[i]` → `base[name(&p[i] - base)]` and `*q` → `base[name(q - base)]`, which
/// subscript the array's first element with the map of the element's offset.
///
/// An access inside a `__device__` function the pointer is passed to is rewritten in a copy
/// of that function (`f_name`), and the calls that lead there call the copies: the original
/// stays for its other callers, which may pass other pointers (global memory too). Where an
/// access in a copy needs the first element, the copies take it as a last parameter.
pub(super) fn through_pointers(
    target: &Target,
    expr: &MapExpr,
    name: &str,
) -> Result<ThroughPointers, String> {
    let alu = expr.ops();
    let pointers: Vec<&Access> = target
        .array
        .accesses
        .iter()
        .filter(|a| a.detail().via_pointer.is_some())
        .collect();
    let graph = CallGraph::of(target, &pointers, name)?;
    // A place reached more than once (a function called twice) has one form for all.
    let at_first = |access: &Access| {
        pointers
            .iter()
            .filter(|a| a.span == access.span)
            .all(|a| a.detail().pointer_offset == Some(0))
    };
    let needs_base = pointers
        .iter()
        .any(|a| graph.container(a.span.start).is_some() && !at_first(a));
    let base_param = needs_base.then_some(BASE_PARAMETER);
    let mut result = ThroughPointers {
        edits: Vec::new(),
        accesses: Vec::new(),
        copies: Vec::new(),
    };
    let mut copy_edits: Vec<Vec<Edit>> = vec![Vec::new(); graph.callees.len()];
    for access in &pointers {
        let (base, function_text) = match graph.container(access.span.start) {
            Some(c) => (base_param.map(str::to_string), graph.text(target, c)),
            None => (target.base(), target.function_text),
        };
        let (edit, rewrite) = pointer_access(
            target,
            access,
            name,
            alu,
            base,
            function_text,
            at_first(access),
        )?;
        match graph.container(access.span.start) {
            Some(c) => copy_edits[c].push(edit),
            None => result.edits.push(edit),
        }
        result.accesses.push(rewrite);
    }
    for &(at, callee) in &graph.calls {
        let text = target.source.text;
        let callee_name = &target.functions[graph.callees[callee]].name;
        let (_, name_at) = qualifier_at(text, at);
        let open = call_paren(text, name_at, callee_name.len()).ok_or("a call without its `(`")?;
        let close = matching_paren(text, open).ok_or("a call without its `)`")?;
        let name_end = name_at + callee_name.len();
        let mut edits = vec![Edit::replace(
            name_at..name_end,
            format!("{callee_name}_{name}"),
        )];
        if needs_base {
            let argument = match graph.container(at) {
                Some(_) => BASE_PARAMETER.to_string(),
                None => target.base().ok_or_else(|| {
                    format!(
                        "`{}` is passed to `{callee_name}` and has no name to pass beside it",
                        target.array.name
                    )
                })?,
            };
            let empty = text[open + 1..close].trim().is_empty();
            let separator = if empty { "" } else { ", " };
            edits.push(Edit::insert(close, format!("{separator}{argument}")));
        }
        match graph.container(at) {
            Some(c) => copy_edits[c].extend(edits),
            None => result.edits.extend(edits),
        }
    }
    for (c, mut edits) in copy_edits.into_iter().enumerate() {
        let function = &target.functions[graph.callees[c]];
        let start = function.span.start;
        let text = graph.text(target, c);
        // The same place reached through several calls gives the same edit several times.
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        edits.dedup();
        let mut local: Vec<Edit> = edits
            .into_iter()
            .map(|e| Edit::replace(e.range.start - start..e.range.end - start, e.replacement))
            .collect();
        local.extend(declarator_edits(
            text,
            &function.name,
            name,
            target,
            base_param,
        )?);
        let copy = crate::rewrite::edit::apply(text, &local).map_err(|e| e.to_string())?;
        let head = template_head(target.source.text, start)
            .map_or("", |head_start| &target.source.text[head_start..start]);
        let newline = target.source.newline;
        // Called as `ns::f`, the copy goes in `namespace ns`, reopened: its body sees what the
        // original's sees. A call from inside a copy is unqualified or relative to the
        // callee's namespace, and the copy goes at file scope, which encloses every namespace.
        let namespaces: Vec<String> = graph
            .calls
            .iter()
            .filter(|&&(at, called)| called == c && graph.container(at).is_none())
            .map(|&(at, _)| qualifier_at(target.source.text, at).0)
            .collect();
        let namespace = match namespaces.split_first() {
            Some((first, rest)) if rest.iter().all(|n| n == first) => first.clone(),
            Some(_) => {
                return Err(format!(
                    "`{}` is called through different namespaces",
                    function.name
                ))
            }
            None => String::new(),
        };
        let copy = if namespace.is_empty() {
            format!("{head}{copy}")
        } else {
            let open: String = namespace
                .split("::")
                .map(|part| format!("namespace {part} {{{newline}"))
                .collect();
            let close: String = namespace
                .rsplit("::")
                .map(|part| format!("}} // namespace {part}{newline}"))
                .collect();
            format!("{open}{head}{copy}{newline}{close}")
        };
        result.copies.push(FunctionCopy {
            name: format!("{}_{name}", function.name),
            original: function.name.clone(),
            text: format!(
                "// bankwise: a copy of `{}` whose accesses to `{}` go through {name}(){newline}\
                 {copy}{newline}{newline}",
                function.name, target.array.name
            ),
        });
    }
    Ok(result)
}

/// One access through a pointer, as an edit of its span; `base` is the array's first
/// element where the access is (`None`: there is none to name), `function_text` the text
/// of the function it is in, `at_first` whether its pointer is the first element wherever
/// it is reached.
pub(super) fn pointer_access(
    target: &Target,
    access: &Access,
    name: &str,
    alu: u32,
    base: Option<String>,
    function_text: &str,
    at_first: bool,
) -> Result<(Edit, AccessRewrite), String> {
    let line = access.at.line;
    let refuse = |why: &str| Err(format!("line {line}: `{}` {why}", access.text));
    if access.detail().member.is_some() {
        return refuse("touches a member through a pointer, which this version does not rewrite");
    }
    let span = access.span.start..access.span.end;
    let text = target.source.text.get(span.clone()).unwrap_or("");
    let Some(element) = parse_expression_text(text) else {
        return refuse("cannot be read back");
    };
    let piece = |e: &Expr| text.get(e.span.start..e.span.end).unwrap_or("");
    if let Some(bytes) = access.detail().vector_bytes {
        if function_text != target.function_text {
            return refuse(&format!(
                "reads or writes {bytes} bytes at a time in a function it is passed to, which \
                 this version does not rewrite"
            ));
        }
        let elem_bytes = target.array.elem_bytes.unwrap_or(0).max(1);
        return vector_access(target, &element, text, span.start, name, bytes / elem_bytes)
            .map(|(edit, new)| (edit, AccessRewrite { text: new, alu }))
            .ok_or_else(|| {
                format!(
                    "line {line}: `{}` reads or writes {bytes} bytes at a time in a form this \
                     version does not rewrite (it rewrites `reinterpret_cast<V *>(&a[i])[0]`, \
                     `*(V *)&a[i]` and `reinterpret_cast<V *>(a)[v]`)",
                    access.text
                )
            });
    }
    match &element.kind {
        // The pointer is the array's first element: its subscript is the element index.
        ExprKind::Index { base, index } if at_first => {
            let argument =
                parenthesised(piece(index), !matches!(index.kind, ExprKind::Comma { .. }));
            let call = format!("{name}({argument})");
            let at = span.start + index.span.start..span.start + index.span.end;
            Ok((
                Edit::replace(at, call.clone()),
                AccessRewrite {
                    text: format!("{}[{call}]", piece(base)),
                    alu,
                },
            ))
        }
        ExprKind::Index { .. }
        | ExprKind::Unary {
            op: UnaryOp::Deref, ..
        } => {
            let Some(first) = base else {
                return refuse(&format!(
                    "goes through a pointer that does not start at `{}`'s first element, and \
                     the array has no name to subscript",
                    target.array.name
                ));
            };
            // The new subscript goes through the array's own name, which would drop a
            // `volatile` the pointer carries.
            if may_be_volatile(function_text, &element, text) {
                return refuse(
                    "may go through a `volatile` pointer, whose qualifier a subscript of the \
                     array would drop",
                );
            }
            let address = match &element.kind {
                ExprKind::Unary { operand, .. } => {
                    parenthesised(piece(operand), is_primary(operand))
                }
                _ => format!("&{text}"),
            };
            let subscriptable = parenthesised(&first, !first.starts_with('&'));
            let new = format!("{subscriptable}[{name}({address} - {first})]");
            // The pointer difference is one subtraction more.
            Ok((
                Edit::replace(span, new.clone()),
                AccessRewrite {
                    text: new,
                    alu: alu + 1,
                },
            ))
        }
        _ => refuse("is not a subscript or a dereference of a pointer"),
    }
}

/// The edit of a vector view of the array, whose text `text` starts at `start` and parses
/// as `element`, and the access as it reads after it; `None` for a form not rewritten. The
/// vector's first element goes through the map, which keeps the `per_vector` elements of an
/// aligned vector together (the solver's `keeps_vectors`):
/// - `reinterpret_cast<V *>(&a[i])[0]`, `*(V *)&a[i]` → `a[name(i)]` inside, a
///   multi-dimensional subscript as the map function form writes its direct accesses;
/// - `reinterpret_cast<V *>(a)[v]` on a one-dimensional `a` → `[name((v) * W) / W]`.
fn vector_access(
    target: &Target,
    element: &Expr,
    text: &str,
    start: usize,
    name: &str,
    per_vector: u64,
) -> Option<(Edit, String)> {
    let piece = |e: &Expr| text.get(e.span.start..e.span.end).unwrap_or("");
    let (pointer, vector_index) = match &element.kind {
        ExprKind::Index { base, index } => (&**base, Some(&**index)),
        ExprKind::Unary {
            op: UnaryOp::Deref,
            operand,
        } => (&**operand, None),
        _ => return None,
    };
    let viewed = match &pointer.kind {
        ExprKind::Cast { operand, .. } => &**operand,
        ExprKind::Call { callee, args, .. }
            if matches!(&callee.kind, ExprKind::Name(n) if n.ends_with("_cast"))
                && args.len() == 1 =>
        {
            &args[0]
        }
        _ => return None,
    };
    let array = &target.array.name;
    let at_first = vector_index.is_none_or(|i| matches!(i.kind, ExprKind::Int(0)));
    match &viewed.kind {
        ExprKind::Unary {
            op: UnaryOp::AddressOf,
            operand,
        } if at_first => {
            let subscripts = subscript_chain(operand, array)?;
            if subscripts.len() != target.array.dims.len() {
                return None;
            }
            let indices: Vec<MapExpr> = subscripts
                .iter()
                .map(|e| MapExpr::Var(parenthesised(piece(e), is_primary(e))))
                .collect();
            let (at, new) = if indices.len() == 1 {
                let index = subscripts[0];
                let argument =
                    parenthesised(piece(index), !matches!(index.kind, ExprKind::Comma { .. }));
                (index.span, format!("{name}({argument})"))
            } else {
                let call = format!(
                    "{name}({})",
                    linear_text(&linear_expr(&indices, &target.extent_texts()))
                );
                let whole = match target.pointer_made_at {
                    None => format!("{array}[{call}]"),
                    Some(_) => format!("{}[{call}]", target.subscriptable_base()?),
                };
                (operand.span, whole)
            };
            let rewritten = format!("{}{new}{}", &text[..at.start], &text[at.end..]);
            Some((
                Edit::replace(start + at.start..start + at.end, new),
                rewritten,
            ))
        }
        ExprKind::Name(n) if n == array && target.array.dims.len() == 1 => {
            let index = vector_index?;
            let new = format!(
                "{name}({} * {per_vector}) / {per_vector}",
                parenthesised(piece(index), is_primary(index))
            );
            let at = index.span;
            let rewritten = format!("{}{new}{}", &text[..at.start], &text[at.end..]);
            Some((
                Edit::replace(start + at.start..start + at.end, new),
                rewritten,
            ))
        }
        _ => None,
    }
}

/// The subscripts of `a[i][j]…` on the array `array`, outermost first; `None` when the
/// expression is not a chain of subscripts of that name.
fn subscript_chain<'e>(expr: &'e Expr, array: &str) -> Option<Vec<&'e Expr>> {
    let mut subscripts = Vec::new();
    let mut current = expr;
    loop {
        match &current.kind {
            ExprKind::Index { base, index } => {
                subscripts.push(&**index);
                current = base;
            }
            ExprKind::Name(n) if n == array => break,
            _ => return None,
        }
    }
    subscripts.reverse();
    Some(subscripts)
}

/// The `__device__` functions a pointer into the array is passed to, and the calls that
/// pass it.
pub(super) struct CallGraph {
    /// Indices into the file's functions, in source order.
    pub(super) callees: Vec<usize>,
    /// Their definitions.
    pub(super) spans: Vec<Span>,
    /// (offset of the call, index into `callees` of the function called), once each.
    pub(super) calls: Vec<(usize, usize)>,
}

impl CallGraph {
    fn of(target: &Target, pointers: &[&Access], name: &str) -> Result<Self, String> {
        let mut graph = CallGraph {
            callees: Vec::new(),
            spans: Vec::new(),
            calls: Vec::new(),
        };
        let mut at_calls: Vec<(usize, usize)> = Vec::new();
        for access in pointers {
            for call in access.detail().via_pointer.iter().flatten() {
                let at = call.offset;
                if at_calls.iter().any(|(a, _)| *a == at) {
                    continue;
                }
                let callee = callee_at(target, at, name).map_err(|why| {
                    format!(
                        "line {}: `{}` is reached through the call at line {}: {why}",
                        access.at.line, access.text, call.at.line
                    )
                })?;
                at_calls.push((at, callee));
            }
        }
        let mut callees: Vec<usize> = at_calls.iter().map(|(_, f)| *f).collect();
        callees.sort_by_key(|&f| target.functions[f].span.start);
        callees.dedup();
        graph.calls = at_calls
            .iter()
            .map(|(at, f)| (*at, callees.iter().position(|c| c == f).unwrap_or(0)))
            .collect();
        graph.spans = callees.iter().map(|&f| target.functions[f].span).collect();
        graph.callees = callees;
        // A copy serves one array. Another array may pass through the same call only if
        // `fix` never rewrites it (it would need its own copy there) and none of its
        // accesses in the copied functions is one of this array's (the copy maps those).
        let own = |other: &SharedArray| std::ptr::eq(other, target.array);
        let ours: Vec<Location> = pointers.iter().map(|a| a.at).collect();
        for (other, clean) in target.kernel_arrays.iter().zip(&target.clean_arrays) {
            if own(other) {
                continue;
            }
            let through_calls = |access: &&Access| {
                access
                    .detail()
                    .via_pointer
                    .iter()
                    .flatten()
                    .any(|call| graph.calls.iter().any(|c| c.0 == call.offset))
            };
            let Some(shared) = other.accesses.iter().find(through_calls) else {
                continue;
            };
            let entangled = other
                .accesses
                .iter()
                .filter(through_calls)
                .any(|access| ours.contains(&access.at));
            if !clean || entangled {
                let call = shared
                    .detail()
                    .via_pointer
                    .iter()
                    .flatten()
                    .next()
                    .map_or(0, |c| c.at.line);
                return Err(format!(
                    "`{}` is passed through the same call at line {call}: one copy of the \
                     function cannot serve two arrays",
                    other.name
                ));
            }
        }
        Ok(graph)
    }

    /// The copied function whose original contains `offset`, if one does.
    fn container(&self, offset: usize) -> Option<usize> {
        self.spans
            .iter()
            .position(|s| s.start <= offset && offset < s.end)
    }

    fn text<'t>(&self, target: &Target<'t>, callee: usize) -> &'t str {
        let span = self.spans[callee];
        target.source.text.get(span.start..span.end).unwrap_or("")
    }
}

/// The function called at `at`, which can be copied for the map function `name`: a
/// `__device__` function of this file, defined once and before the array's function, not a
/// template, with no shared array of its own (a copy would have its own).
pub(super) fn callee_at(target: &Target, at: usize, name: &str) -> Result<usize, String> {
    let text = target.source.text;
    let (namespace, name_at) = qualifier_at(text, at);
    let called: String = text[name_at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // The copy of `ns::f` is written in `namespace ns { … }` beside the array's function,
    // which must then be at file scope for the namespace to be the same one.
    if !namespace.is_empty() {
        let at_file_scope = target
            .function_at
            .is_some_and(|start| crate::parse::brace_depth_at(text, start) == 0);
        if !at_file_scope {
            return Err(format!(
                "`{namespace}::{called}` is called through its namespace from inside braces \
                 (a namespace or a class), where its copy's namespace would not be the same"
            ));
        }
    }
    let mut found = target
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name == called);
    let (Some((index, function)), None) = (found.next(), found.next()) else {
        return Err(format!("`{called}` is not one function of this file"));
    };
    let is_template =
        !function.template_args.is_empty() || text[..function.span.start].trim_end().ends_with('>');
    // A template's copy is a template too: its head is copied with it.
    if is_template && template_head(text, function.span.start).is_none() {
        return Err(format!(
            "`{called}` is a template whose head is not `template <…>`"
        ));
    }
    if function.kind != FunctionKind::Device || !function.arrays.is_empty() {
        return Err(format!(
            "`{called}` is not a `__device__` function without shared arrays of its own"
        ));
    }
    if target
        .function_at
        .is_none_or(|start| function.span.end > start)
    {
        return Err(format!(
            "`{called}` is not defined before `{}`",
            target.function
        ));
    }
    if call_paren(text, name_at, called.len()).is_none() {
        return Err(format!(
            "the call of `{called}` is not `{called}(…)` or `{called}<…>(…)`"
        ));
    }
    let copy = format!("{called}_{name}");
    let taken = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == copy);
    if taken {
        return Err(format!("the name `{copy}` is taken"));
    }
    Ok(index)
}

/// The namespace a call that starts at `at` names (`a::b` for `::a::b::f<…>(…)`, empty for
/// `f(…)`) and where its unqualified name starts.
fn qualifier_at(text: &str, at: usize) -> (String, usize) {
    let path: &str = text.get(at..).map_or("", |rest| {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        &rest[..end]
    });
    match path.rfind("::") {
        Some(last) => (
            path[..last].trim_start_matches("::").to_string(),
            at + last + 2,
        ),
        None => (String::new(), at),
    }
}

/// The offset of the `(` of the call whose name starts at `at` and is `name_len` bytes
/// long: right after the name, or after its template arguments (`f<BM, BK>(…)`).
fn call_paren(text: &str, at: usize, name_len: usize) -> Option<usize> {
    let after = at + name_len;
    let rest = text.get(after..)?;
    if rest.starts_with('(') {
        return Some(after);
    }
    if !rest.starts_with('<') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let close = after + i + 1;
                    let gap = text.get(close..)?;
                    let paren = close + (gap.len() - gap.trim_start().len());
                    return text[paren..].starts_with('(').then_some(paren);
                }
            }
            '(' | ')' | ';' | '{' | '}' => return None,
            _ => {}
        }
    }
    None
}

/// Where the `template <…>` head of the function that starts at `start` begins, when the
/// text right before the function is one.
fn template_head(text: &str, start: usize) -> Option<usize> {
    let inner = text.get(..start)?.trim_end().strip_suffix('>')?;
    let keyword = inner[..super::matching_open_angle(inner)?].trim_end();
    keyword
        .strip_suffix("template")
        .filter(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|rest| rest.len())
}

/// The offset of the `)` that closes the `(` at `open`.
pub(super) fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.get(open..)?.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The copy's declarator: `f` renamed `f_name`, and the first element's parameter added
/// when the copies need it.
pub(super) fn declarator_edits(
    text: &str,
    function: &str,
    name: &str,
    target: &Target,
    base_param: Option<&str>,
) -> Result<Vec<Edit>, String> {
    let mut search = 0;
    let at = loop {
        let found = search
            + text[search..]
                .find(function)
                .ok_or_else(|| format!("no declarator of `{function}`"))?;
        search = found + function.len();
        let word_before = text[..found]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !word_before && text[search..].trim_start().starts_with('(') {
            break found;
        }
    };
    let mut edits = vec![Edit::replace(
        at..at + function.len(),
        format!("{function}_{name}"),
    )];
    if let Some(param) = base_param {
        let open = search + text[search..].find('(').unwrap_or(0);
        let close = matching_paren(text, open).ok_or("a declarator without its `)`")?;
        let inner = text[open + 1..close].trim();
        let declared = format!("{} *{param}", target.array.elem_type);
        if inner.is_empty() || inner == "void" {
            edits.push(Edit::replace(open + 1..close, declared));
        } else {
            edits.push(Edit::insert(close, format!(", {declared}")));
        }
    }
    Ok(edits)
}

/// Whether the pointer `element` (whose text is `text`) goes through may be declared
/// `volatile` in `function`: a statement that mentions both `volatile` and the pointer's
/// name; any `volatile` at all when the pointer has no name.
pub(super) fn may_be_volatile(function: &str, element: &Expr, text: &str) -> bool {
    let words = |t: &str| {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let Some(pointer) = pointer_name(element).and_then(|e| text.get(e.span.start..e.span.end))
    else {
        return function.contains("volatile");
    };
    function.split([';', '{', '}']).map(words).any(|statement| {
        statement.iter().any(|w| w == "volatile") && statement.iter().any(|w| w == pointer)
    })
}

/// The name of the pointer an element expression starts from: `row` in `row[tx]`, `col` in
/// `*(col + 32 * tx)`.
pub(super) fn pointer_name(expr: &Expr) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Name(_) => Some(expr),
        ExprKind::Index { base, .. } => pointer_name(base),
        ExprKind::Unary { operand, .. } => pointer_name(operand),
        ExprKind::Binary {
            op: BinaryOp::Add | BinaryOp::Sub,
            lhs,
            rhs,
        } => pointer_name(lhs).or_else(|| pointer_name(rhs)),
        _ => None,
    }
}

/// The access rewrites in the array's access order, from those of its subscripts and those
/// through pointers (each in its own order).
pub(super) fn in_access_order(
    target: &Target,
    subscripts: Vec<AccessRewrite>,
    through: Vec<AccessRewrite>,
) -> Vec<AccessRewrite> {
    let (mut subscripts, mut through) = (subscripts.into_iter(), through.into_iter());
    target
        .array
        .accesses
        .iter()
        .filter_map(|access| match access.detail().via_pointer {
            Some(_) => through.next(),
            None => subscripts.next(),
        })
        .collect()
}
