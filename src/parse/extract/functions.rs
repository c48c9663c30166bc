//! `__global__`/`__device__` function definitions: the function's model, and the walk over its
//! body that finds the shared arrays in scope and every use of their names.
use super::arrays::mark_dynamic_aliases;
use super::constants::is_scope;
use super::templates::{template_parameters, Prototype, TemplateCall};
use super::walk::{children, named_children, walk, Lineage, Preorder};
use super::{function_name, leftmost_identifier, Extractor};
use crate::parse::ast::{self, compact_text, Expr, Span};
use crate::parse::body::{parameters, Lowering};
use crate::parse::consts::{identifier_tokens, name_tokens, Bindings};
use crate::parse::model::*;
use crate::parse::packed::{Body, Packed};
use crate::parse::symbols::{self, child, children_in, FIELDS};
use crate::parse::syntax::Node;
use std::collections::{HashMap, HashSet};

impl<'s> Extractor<'s> {
    pub(super) fn function(&mut self, node: Node) {
        let Some(name) = function_name(node, self.src) else {
            return;
        };
        let kind = if has_modifier(node, self.src, "__global__") {
            FunctionKind::Kernel
        } else if has_modifier(node, self.src, "__device__") {
            FunctionKind::Device
        } else if let Some(kind) = self
            .kind_behind_macro(node, &name)
            .or_else(|| self.kind_from_specifier_macros(node))
        {
            kind
        } else {
            return;
        };
        let Some(body) = child(node, FIELDS.body) else {
            return;
        };
        let outer = match node.parent() {
            Some(parent) if symbols::kind(parent) == "template_declaration" => parent,
            _ => node,
        };
        let syntax_error = outer.has_error().then(|| {
            let mut first = None;
            walk(outer, |n| {
                if first.is_none() && (n.is_error() || n.is_missing()) {
                    first = Some(self.at(n));
                }
                first.is_none() && n.has_error()
            });
            first.unwrap_or_else(|| self.at(outer))
        });
        // Constructs tree-sitter reads without an error node but C++ forbids in a body; the
        // analysis would otherwise follow them as code.
        let syntax_error = syntax_error.or_else(|| self.invalid_in_body(body));
        let launch_bounds = named_children(node)
            .into_iter()
            .find(|c| symbols::kind(*c) == "launch_bounds")
            .and_then(|lb| named_children(lb).first().copied())
            .map(|e| ast::lower(e, self.src));
        // Above the template head, or between it and the function.
        let annotated_block = self.block_annotation(outer).or_else(|| {
            (outer.id() != node.id())
                .then(|| self.block_annotation(node))
                .flatten()
        });
        let template_params = template_parameters(outer, self.src);
        let mut function = Function {
            name,
            kind,
            template_args: Vec::new(),
            bindings: Bindings::default(),
            at: self.at(node),
            span: Span {
                start: self
                    .specifier_macros_before(node)
                    .unwrap_or(node.start_byte()),
                end: node.end_byte(),
            },
            launch_bounds: None,
            annotated_block,
            assumed_before: assumed_before(self.text(body)),
            assumed_types: Vec::new(),
            thread_axes: ["threadIdx.x", "threadIdx.y", "threadIdx.z"]
                .map(|axis| self.text(body).contains(axis)),
            callees: Vec::new(),
            syntax_error,
            arrays: Vec::new(),
            params: parameters(node, self.src),
            body: Body::default(),
            unseen_uses: Vec::new(),
        };
        let skipped = self.skipped.is_some_and(|skipped| skipped.skips(&function));
        let constants = match syntax_error {
            None if !skipped => {
                // The body is walked several times: once with a cursor, then from a list.
                let nodes = Preorder::of(body);
                let dead = self.dead_branches(body, &nodes);
                let constants = self.analyse_body(&mut function, body, &nodes, &dead);
                let lowering = Lowering {
                    src: self.src,
                    dead: &dead,
                    condition: &|node| self.preproc_condition(node),
                };
                function.body = Body::new(&lowering.body(body));
                constants
            }
            _ => Vec::new(),
        };
        let mut prototype = Prototype {
            function: Box::new(function),
            params: template_params,
            constants: Packed::new(&constants),
            launch_bounds,
        };
        if prototype.params.is_empty() {
            let arrays = std::mem::take(&mut prototype.function.arrays);
            let function = self.instantiate(&prototype, arrays, Vec::new(), Bindings::default());
            self.functions.push(function);
        } else {
            // Instantiated once every instantiation and launch of the file is known.
            self.templates.push(prototype);
        }
    }

    /// Whether the operand of `operator` (`sizeof`, `alignof`, `decltype`) is one element of
    /// `array` of a scalar type (`sizeof(a[i][j])`), which no map changes.
    fn scalar_element_of(&self, operator: Node, array: &SharedArray) -> bool {
        let Some(mut operand) = child(operator, FIELDS.value)
            .or_else(|| child(operator, FIELDS.argument))
            .or_else(|| named_children(operator).into_iter().next())
        else {
            return false;
        };
        let mut rank = 0;
        loop {
            match symbols::kind(operand) {
                "parenthesized_expression" => match named_children(operand).into_iter().next() {
                    Some(inner) => operand = inner,
                    None => return false,
                },
                "subscript_expression" => match child(operand, FIELDS.argument) {
                    Some(inner) => {
                        rank += 1;
                        operand = inner;
                    }
                    None => return false,
                },
                "identifier" => {
                    return self.text(operand) == array.name
                        && rank == array.dims.len()
                        && self.env.types.is_scalar(&array.elem_type);
                }
                _ => return false,
            }
        }
    }

    /// Finds the function's shared arrays and classifies every use; returns the body's
    /// integer constants, for binding per template instantiation.
    /// `dead` are the body's dead `#if` branches ([`Extractor::dead_branches`]).
    fn analyse_body(
        &mut self,
        function: &mut Function,
        body: Node,
        nodes: &Preorder,
        dead: &[std::ops::Range<usize>],
    ) -> Vec<(String, Expr)> {
        let is_dead = |node: Node| dead.iter().any(|r| r.contains(&node.start_byte()));
        let definitions = self.local_definitions(nodes, dead, None);
        let mut locals = self.bind_constants(&definitions.constants, &function.bindings);
        // `using E = float;`, `typedef typename K::Element F;` in the body: an element type
        // written with them is their target (resolved per instance when it names a
        // template parameter).
        nodes.walk(|node| {
            if is_dead(node) {
                return false;
            }
            if let Some((name, target)) = self.type_alias(node) {
                locals.types.entry(name).or_insert(target);
            }
            true
        });
        let decl_nodes = definitions.shared;
        let mut arrays = Vec::new();
        for decl in &decl_nodes {
            arrays.extend(self.shared_arrays(*decl, &locals, false, None));
        }
        arrays.extend(self.macro_declared_arrays(&definitions.shared_macro_calls, &locals));
        let local_count = arrays.len();
        arrays.extend(self.file_scope_arrays.iter().cloned());

        let candidates: HashSet<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
        let declarator_starts: HashSet<usize> = decl_nodes
            .iter()
            .flat_map(|d| {
                let mut starts = Vec::new();
                walk(*d, |n| {
                    if symbols::kind(n) == "identifier" {
                        starts.push(n.start_byte());
                    }
                    true
                });
                starts
            })
            .collect();
        let declaring_macros: Vec<Span> = arrays[..local_count]
            .iter()
            .filter(|a| a.declared_by_macro.is_some())
            .map(|a| a.decl_span)
            .collect();
        // Scopes by node id: the shared arrays (by index) and the other names declared in
        // them so far. Source order makes "so far" the C++ rule.
        let mut shared_in_scope: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut others_in_scope: HashMap<usize, HashSet<String>> = HashMap::new();
        let parameters = function_parameters(body, self.src);
        others_in_scope.insert(body.id(), parameters);
        let mut uses: Vec<Vec<Lineage>> = (0..arrays.len()).map(|_| Vec::new()).collect();
        let mut asm_uses: Vec<Vec<Node>> = vec![Vec::new(); arrays.len()];
        let mut callees = Vec::new();
        let mut template_calls = Vec::new();
        let mut provider_calls = Vec::new();
        // `scopes`: the ids of the scopes around a node, outermost first.
        let resolve = |name: &str,
                       scopes: &[(usize, usize)],
                       shared_in_scope: &HashMap<usize, Vec<usize>>,
                       others_in_scope: &HashMap<usize, HashSet<String>>|
         -> Option<usize> {
            for &(_, scope) in scopes.iter().rev() {
                let mut shared = shared_in_scope.get(&scope).into_iter().flatten();
                if let Some(&i) = shared.rfind(|&&i| arrays[i].name == name) {
                    return Some(i);
                }
                if others_in_scope
                    .get(&scope)
                    .is_some_and(|names| names.contains(name))
                {
                    return None;
                }
            }
            (local_count..arrays.len()).find(|&i| arrays[i].name == name)
        };
        // The scopes around the node being visited, as (depth, node id), kept as the walk
        // goes: looking them up among the ancestors took time in the square of an
        // expression's depth (31,775 reads in one sum: 2.1 s).
        let mut scopes: Vec<(usize, usize)> = Vec::new();
        // The outermost node of each dead branch: a name in one is an access in another
        // configuration.
        let mut dead_nodes = Vec::new();
        // Names declared in the branches of an undecidable conditional, with where it starts
        // and its first line.
        let mut branch_declared: Vec<(&str, Location, String)> = Vec::new();
        // (name, variable, declarator) of each object constructed from what a name gives.
        let mut constructed: Vec<(&str, String, Node)> = Vec::new();
        // (array name, operator) of each `sizeof`/`alignof`/`decltype` that names an array.
        let mut unevaluated: Vec<(&str, Node)> = Vec::new();
        nodes.walk_with_ancestors(|node, ancestors| {
            let depth = ancestors.len();
            while scopes.last().is_some_and(|&(d, _)| d >= depth) {
                scopes.pop();
            }
            if is_dead(node) {
                dead_nodes.push(node);
                return false;
            }
            // The innermost scope around the node (the body's for its own statements).
            let scope = scopes.last().map_or(body.id(), |&(_, id)| id);
            match symbols::kind(node) {
                // Operands of sizeof/alignof/decltype are not evaluated: no access, but
                // what they give may depend on the layout.
                "sizeof_expression" | "alignof_expression" | "decltype" => {
                    for token in name_tokens(self.text(node)) {
                        if candidates.contains(token) {
                            unevaluated.push((token, node));
                        }
                    }
                    return false;
                }
                // In a body, `Ref r(a[i][j]);` parses as the declaration of a function `r`:
                // it constructs `r` from the element. Its names are not parameters.
                "function_declarator" => {
                    let var = child(node, FIELDS.declarator)
                        .map(|d| leftmost_identifier(d, self.src).to_string())
                        .unwrap_or_default();
                    // `DECL(float, tile, 64)`: a macro's use, read as a declaration.
                    let macro_use = self.env.macro_named(&var).is_some();
                    let parameters = child(node, FIELDS.parameters).filter(|_| !macro_use);
                    if let Some(parameters) = parameters {
                        for token in name_tokens(self.text(parameters)) {
                            constructed.push((token, var.clone(), node));
                        }
                    }
                    return false;
                }
                // Its branches are one scope with the body around them, which the lowered
                // body cannot say: a pointer kept in a variable declared in one is not
                // followed.
                "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef"
                    if self.preproc_condition(node).is_none() =>
                {
                    let (at, directive) = (self.at(node), self.directive_line(node));
                    walk(node, |inner| {
                        if symbols::kind(inner) == "declaration" {
                            for declarator in children_in(inner, FIELDS.declarator) {
                                let name = leftmost_identifier(declarator, self.src);
                                branch_declared.push((name, at, directive.clone()));
                            }
                        }
                        true
                    });
                }
                // `Ref r{p[i]}`: an object built from what a pointer reaches (an element of
                // an array is classified where it is used).
                "init_declarator" => {
                    let value = child(node, FIELDS.value).filter(|v| {
                        matches!(symbols::kind(*v), "argument_list" | "initializer_list")
                    });
                    let object = node.parent().is_some_and(|d| {
                        symbols::kind(d) == "declaration" && self.declares_object(d)
                    });
                    if let (Some(value), true) = (value, object) {
                        let var = leftmost_identifier(node, self.src).to_string();
                        for token in name_tokens(self.text(value)) {
                            if !candidates.contains(token) {
                                constructed.push((token, var.clone(), node));
                            }
                        }
                    }
                }
                "gnu_asm_expression" => {
                    // An asm statement holds no scope: the names in it resolve where it is.
                    let mut inner_uses = Vec::new();
                    walk(node, |inner| {
                        if symbols::kind(inner) == "identifier"
                            && candidates.contains(self.text(inner))
                        {
                            inner_uses.push(self.text(inner));
                        }
                        true
                    });
                    for name in inner_uses {
                        if let Some(i) = resolve(name, &scopes, &shared_in_scope, &others_in_scope)
                        {
                            asm_uses[i].push(node);
                        }
                    }
                    return false;
                }
                "identifier" => {
                    let name = self.text(node);
                    let in_declaring_macro = declaring_macros
                        .iter()
                        .any(|span| (span.start..span.end).contains(&node.start_byte()));
                    if candidates.contains(name)
                        && !declarator_starts.contains(&node.start_byte())
                        && !in_declaring_macro
                    {
                        if let Some(i) = resolve(name, &scopes, &shared_in_scope, &others_in_scope)
                        {
                            uses[i].push(Lineage::new(node, ancestors.len()));
                        }
                    }
                }
                "call_expression" => {
                    if let Some(f) = child(node, FIELDS.function) {
                        // `f<BM, BK>(…)` and `ns::f<BM, BK>(…)` call an instance of a template.
                        let template = match symbols::kind(f) {
                            "template_function" => Some(f),
                            "qualified_identifier" => child(f, FIELDS.name)
                                .filter(|n| symbols::kind(*n) == "template_function"),
                            _ => None,
                        };
                        if let Some(template) = template {
                            let (name, args) = self.template_id(template);
                            let name = name.rsplit("::").next().unwrap_or(&name).to_string();
                            callees.push(name.clone());
                            template_calls.push(TemplateCall {
                                caller: function.span.start,
                                callee: name,
                                args,
                            });
                        } else if matches!(symbols::kind(f), "identifier" | "qualified_identifier")
                        {
                            let name = compact_text(f, self.src);
                            callees.push(name.rsplit("::").next().unwrap_or(&name).to_string());
                        }
                    }
                    if !self.shared_providers.is_empty() {
                        provider_calls.extend(self.provider_call(node, &locals));
                    }
                }
                _ => {}
            }
            let span = Span::of(node);
            let declares = |i: &usize| arrays[*i].decl_span == span;
            // Checked before collecting: most nodes declare no array.
            if (0..local_count).any(|i| declares(&i)) {
                let declared = (0..local_count).filter(declares);
                shared_in_scope.entry(scope).or_default().extend(declared);
            } else if matches!(symbols::kind(node), "declaration" | "parameter_declaration") {
                let names = children_in(node, FIELDS.declarator)
                    .into_iter()
                    .map(|d| leftmost_identifier(d, self.src).to_string());
                others_in_scope.entry(scope).or_default().extend(names);
            }
            if is_scope(symbols::kind(node)) {
                scopes.push((depth, node.id()));
            }
            true
        });
        callees.sort();
        callees.dedup();
        callees.shrink_to_fit();
        function.callees = callees;
        self.template_calls.extend(template_calls);

        // Escapes no use in the walk shows: names in dead branches, objects built from an
        // element.
        let mut unseen: Vec<Vec<Escape>> = vec![Vec::new(); arrays.len()];
        // The variables and parameters a dead branch names: where a pointer into an array
        // may go that no access of this configuration shows.
        let declared: HashSet<&str> = others_in_scope
            .values()
            .flatten()
            .map(String::as_str)
            .collect();
        for node in dead_nodes {
            let text = self.text(node);
            for token in name_tokens(text) {
                let at = node.start_byte() + offset_in(text, token);
                if declared.contains(token) && !function.unseen_uses.iter().any(|n| n.name == token)
                {
                    let (at, directive) = self.inactive_branch(node, at);
                    function.unseen_uses.push(UnseenUse {
                        name: token.to_string(),
                        at,
                        how: Unseen::InactiveBranch(directive),
                    });
                }
                for (i, array) in arrays.iter().enumerate() {
                    // Any array of the name: scopes are not followed into a dead branch.
                    if array.name == token && unseen[i].is_empty() {
                        let (at, directive) = self.inactive_branch(node, at);
                        unseen[i].push(Escape {
                            at,
                            text: directive.clone(),
                            kind: EscapeKind::InactiveBranch(directive),
                            name_use: None,
                            calls: Vec::new(),
                        });
                    }
                }
            }
        }
        for declared in shared_in_scope.values() {
            for (k, &i) in declared.iter().enumerate() {
                let twin = declared[..k].iter().chain(&declared[k + 1..]).find(|&&j| {
                    arrays[j].name == arrays[i].name && arrays[j].decl_span != arrays[i].decl_span
                });
                if let Some(&j) = twin {
                    unseen[i].push(Escape {
                        kind: EscapeKind::DeclaredInBranches(arrays[j].at.line),
                        at: arrays[i].at,
                        text: arrays[i].name.clone(),
                        name_use: None,
                        calls: Vec::new(),
                    });
                }
            }
        }
        for (name, at, directive) in branch_declared {
            if !function.unseen_uses.iter().any(|u| u.name == name) {
                function.unseen_uses.push(UnseenUse {
                    name: name.to_string(),
                    at,
                    how: Unseen::DeclaredInBranch(directive),
                });
            }
        }
        for &(name, ref var, node) in &constructed {
            if declared.contains(name) && !function.unseen_uses.iter().any(|u| u.name == name) {
                function.unseen_uses.push(UnseenUse {
                    name: name.to_string(),
                    at: self.at(node),
                    how: Unseen::Constructor(var.clone()),
                });
            }
        }
        for (name, var, node) in constructed {
            for (i, array) in arrays.iter().enumerate() {
                if array.name == name {
                    let kind = EscapeKind::ConstructorArgument(var.clone());
                    unseen[i].push(self.escape(kind, node, None));
                }
            }
        }
        for (name, node) in unevaluated {
            for (i, array) in arrays.iter().enumerate() {
                if array.name == name && !self.scalar_element_of(node, array) {
                    unseen[i].push(self.escape(EscapeKind::Unevaluated, node, None));
                }
            }
        }
        let body_text = self.text(body);
        let mut kept = Vec::new();
        for (i, mut array) in arrays.into_iter().enumerate() {
            if i >= local_count
                && uses[i].is_empty()
                && asm_uses[i].is_empty()
                && unseen[i].is_empty()
            {
                continue;
            }
            array.escapes.append(&mut unseen[i]);
            for lineage in &uses[i] {
                self.classify_use(&mut array, lineage);
            }
            for asm in &asm_uses[i] {
                array.escapes.push(self.escape(EscapeKind::Asm, *asm, None));
            }
            for macro_name in self.macro_mentions.get(&array.name).into_iter().flatten() {
                let Some(mac) = self.env.macro_named(macro_name) else {
                    continue;
                };
                let declares = Some(macro_name) == array.declared_by_macro.as_ref();
                let parameter = mac
                    .params
                    .as_ref()
                    .is_some_and(|params| params.contains(&array.name));
                // Reachable from this body: named in it, or in another macro's body (a
                // macro may expand another, so this errs on the side of an escape).
                let reachable = identifier_tokens(body_text).any(|t| t == macro_name)
                    || self.macro_mentions.contains_key(macro_name);
                if !declares && !parameter && reachable {
                    array.escapes.push(Escape {
                        kind: EscapeKind::MacroBody(macro_name.clone()),
                        at: Location {
                            line: mac.line,
                            col: 1,
                        },
                        text: mac.body.clone(),
                        name_use: None,
                        calls: Vec::new(),
                    });
                }
            }
            array.escapes.sort_by_key(|e| e.at);
            // Kept until the end of the run, for every function of the file: no spare capacity.
            array.accesses.shrink_to_fit();
            kept.push(array);
        }
        kept.extend(self.provided_arrays(provider_calls));
        mark_dynamic_aliases(&mut kept);
        kept.shrink_to_fit();
        function.arrays = kept;
        definitions.constants
    }
}

/// The names of the parameters of the function whose body is `body`.
/// The offset of `token`, a slice of `text`, in it.
fn offset_in(text: &str, token: &str) -> usize {
    token.as_ptr() as usize - text.as_ptr() as usize
}

fn function_parameters(body: Node, src: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    let declarator = body.parent().and_then(|f| child(f, FIELDS.declarator));
    let mut list = None;
    if let Some(declarator) = declarator {
        walk(declarator, |n| {
            if symbols::kind(n) == "parameter_list" && list.is_none() {
                list = Some(n);
            }
            list.is_none()
        });
    }
    for param in list.map(named_children).unwrap_or_default() {
        if let Some(declarator) = child(param, FIELDS.declarator) {
            names.insert(leftmost_identifier(declarator, src).to_string());
        }
    }
    names
}

impl Extractor<'_> {
    /// The kind of a function whose `__global__` or `__device__` is behind a macro written as
    /// its type (`RAFT_KERNEL f(…)`, `DI float g(…)`): from the macro's body when the file or
    /// its headers define it, else a kernel when the file launches a function of that name.
    fn kind_behind_macro(&self, function: Node, name: &str) -> Option<FunctionKind> {
        let ty = child(function, FIELDS.type_)?;
        if symbols::kind(ty) != "type_identifier" {
            return None;
        }
        let written = self.text(ty);
        let launched = self.launched_names.contains(name);
        match self.env.macro_named(written) {
            Some(mac) if mac.body.contains("__global__") => Some(FunctionKind::Kernel),
            Some(mac) if mac.body.contains("__device__") => Some(FunctionKind::Device),
            // A `<<<` launch says what the macro's branch for this build might not.
            _ if launched && self.env.types.layout(written).is_none() => Some(FunctionKind::Kernel),
            _ => None,
        }
    }
}

impl Extractor<'_> {
    /// The kind of a function whose `__global__` or `__device__` comes from a specifier macro
    /// parsed as spaces (`DI float f(…)`, `constexpr HDI int g(…)`): one written among its
    /// specifiers, or just before them (after a template head).
    /// Where the specifier macros parsed as spaces just before `function` start (`DI` in
    /// `DI float f(…)`): the function's text starts there, so that a copy keeps them.
    fn specifier_macros_before(&self, function: Node) -> Option<usize> {
        let before = self.src[..function.start_byte()].trim_end().len();
        self.specifier_uses
            .iter()
            .find(|u| u.range.start >= before && u.range.end <= function.start_byte())
            .map(|u| u.range.start)
    }

    fn kind_from_specifier_macros(&self, function: Node) -> Option<FunctionKind> {
        let declarator = child(function, FIELDS.declarator)?.start_byte();
        let before = self.src[..function.start_byte()].trim_end().len();
        let uses = self
            .specifier_uses
            .iter()
            .filter(|u| u.range.start >= before && u.range.end <= declarator);
        let mut kind = None;
        for found in uses {
            if found.spaces.global {
                return Some(FunctionKind::Kernel);
            }
            if found.spaces.device {
                kind = Some(FunctionKind::Device);
            }
        }
        kind
    }
}

/// Whether a function definition carries `__global__` / `__device__` (as a modifier, not
/// inside its body).
pub(super) fn has_modifier(function: Node, src: &str, keyword: &str) -> bool {
    let body_start = child(function, FIELDS.body).map_or(function.end_byte(), |b| b.start_byte());
    if !src[function.start_byte()..body_start].contains(keyword) {
        return false;
    }
    children(function).iter().any(|c| {
        c.end_byte() <= body_start
            && (src[c.byte_range()].trim() == keyword
                || (symbols::kind(*c) != "function_declarator"
                    && c.child_count() > 0
                    && children(*c)
                        .iter()
                        .any(|g| src[g.byte_range()].trim() == keyword)))
    })
}

/// Whether a declaration declares a name with template arguments (`a<float4 *>`) or a
/// qualified name (`::a`, `ns::a`), under any pointer, reference, array or initializer.
fn declares_qualified_name(declaration: Node) -> bool {
    children_in(declaration, FIELDS.declarator)
        .into_iter()
        .any(|mut declarator| {
            // Each level holds the next in its `declarator` field; the name has none.
            while let Some(inner) = child(declarator, FIELDS.declarator) {
                declarator = inner;
            }
            matches!(
                symbols::kind(declarator),
                "template_function" | "qualified_identifier"
            )
        })
}

/// What a previous fix wrote when it assumed the block shape (`rewrite::guard`'s check):
/// `// bankwise: the maps below were chosen for blocks of 2x16x1 (assumed: …)`.
fn assumed_before(body: &str) -> Option<[u32; 3]> {
    const GUARD: &str = "// bankwise: the maps below were chosen for blocks of ";
    body.lines().find_map(|line| {
        let rest = &line[line.find(GUARD)? + GUARD.len()..];
        let (shape, why) = rest.split_once(' ')?;
        why.starts_with("(assumed")
            .then(|| crate::parse::parse_block_shape(shape).ok())
            .flatten()
    })
}

impl Extractor<'_> {
    /// Where `body` holds a construct C++ forbids there, if anywhere: a syntax error, reported.
    /// - A template declaration: C++ declares no template at block scope, and tree-sitter
    ///   reads `template <int N> x = …` there as one.
    /// - A structured binding that is not `auto [a, b] = …`: tree-sitter reads the typeless
    ///   `extern h[y][x] = …` as a binding `[y]` of type `h` with an extent `[x]`.
    /// - A declaration of a name that is an object-like macro (see `declared_macro`).
    /// - A variable declared with a qualified name or template arguments, `float ::a = x[i];`
    ///   or `float a<float4 *> = x[i];`: C++ allows neither at block scope, and tree-sitter
    ///   reads both as declarators.
    fn invalid_in_body(&mut self, body: Node) -> Option<Location> {
        let mut found = None;
        walk(body, |n| {
            if found.is_none() {
                found = match symbols::kind(n) {
                    "declaration" if declares_qualified_name(n) => Some((
                        self.at(n),
                        "a variable declared inside a function body takes a plain name, \
                         without `::` or template arguments",
                    )),
                    "declaration" => self.declared_macro(n).map(|at| {
                        (
                            at,
                            "the declared name is an object-like macro, which expands to \
                             something that is not a name",
                        )
                    }),
                    "template_declaration" => Some((
                        self.at(n),
                        "a template cannot be declared inside a function body",
                    )),
                    "structured_binding_declarator" if !is_auto_binding(n) => Some((
                        self.at(n),
                        "a structured binding is declared with `auto` and no extent",
                    )),
                    _ => None,
                };
            }
            found.is_none()
        });
        let (at, why) = found?;
        self.diagnose(Severity::Error, at, format!("syntax error: {why}"));
        self.syntax_errors.push(at);
        Some(at)
    }

    /// Where `declaration` declares a name that is an object-like macro whose body is not a
    /// name (`fl POINTS;` under `#define POINTS 512`: C reads `fl 512;`), if it does.
    fn declared_macro(&self, declaration: Node) -> Option<Location> {
        children_in(declaration, FIELDS.declarator)
            .into_iter()
            .map(|d| (d, leftmost_identifier(d, self.src)))
            .find(|(_, name)| {
                self.env.source_macro(name).is_some_and(|m| {
                    let body = m.body.trim();
                    m.params.is_none()
                        && !(body.starts_with(|c: char| c.is_alphabetic() || c == '_')
                            && body.chars().all(|c| c.is_alphanumeric() || c == '_'))
                })
            })
            .map(|(d, _)| self.at(d))
    }
}

/// Whether the structured binding `binding` is C++'s `auto [a, b] = …` (also `auto &`,
/// `const auto &&`): its declarator chain up to the declaration holds only references and
/// an initializer, and the declared type is a placeholder.
fn is_auto_binding(binding: Node) -> bool {
    let mut node = binding;
    while let Some(parent) = node.parent() {
        match symbols::kind(parent) {
            "reference_declarator" | "init_declarator" => node = parent,
            "declaration" | "condition_declaration" | "for_range_loop" => {
                return parent
                    .child_by_field_name("type")
                    .is_some_and(|t| symbols::kind(t) == "placeholder_type_specifier");
            }
            _ => return false,
        }
    }
    false
}
