//! Walks one syntax tree and extracts functions, shared arrays, their uses and launch sites.
//!
//! Every walk here is iterative (a tree cursor or an explicit stack), so deeply nested input
//! cannot overflow the stack.
use super::ast::{self, compact_text, Expr, ExprKind, Span};
use super::body::{parameters, Lowering};
use super::consts::{identifier_tokens, Bindings, ConstEnv, Macro, Unresolved};
use super::model::*;
use super::packed::{Body, Packed};
use super::source::LineIndex;
use super::symbols::{self, child, children_in, FIELDS};
use super::syntax::{Node, SyntaxTree};
use super::types::{aggregate_offsets, Layout, Member};
use std::collections::{HashMap, HashSet};

/// Struct nesting depth beyond which a layout is given up as unknown.
const MAX_TYPE_DEPTH: usize = 32;

/// Calls `visit` on `root` and its descendants in source order; `visit` returns whether to
/// descend into the node's children.
pub(crate) fn walk<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    let mut descend = visit(root);
    loop {
        if descend && cursor.goto_first_child() {
            descend = visit(cursor.node());
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = visit(cursor.node());
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Source bytes parsed as one tree: larger files are split at top-level boundaries. A
/// tree-sitter tree takes ~36 bytes per source byte, its flat copy ([`SyntaxTree`]) ~11; a
/// parser thread holds one of each at a time, and up to `PARSE_THREADS + 1` copies are alive.
/// 32 KB rather than 64 lowered the frontend bench's peak by 3 MB at the same speed.
const CHUNK_BYTES: usize = 32 * 1024;

/// Threads that parse pieces ahead of the analysis (the CI machine has 2 cores). Each keeps
/// at most one parsed tree waiting.
const PARSE_THREADS: usize = 2;

/// Accumulates a file's model chunk by chunk. It holds no syntax nodes between chunks,
/// so only one chunk's tree is alive at a time.
struct Extractor<'s> {
    src: &'s str,
    lines: LineIndex,
    env: ConstEnv,
    /// Macro names by the identifiers their bodies mention (for macro-body escapes).
    macro_mentions: HashMap<String, Vec<String>>,
    diagnostics: Vec<Diagnostic>,
    syntax_errors: Vec<Location>,
    /// Template arguments by function name, from `template __global__ void k<16>(…);`.
    instantiations: HashMap<String, Vec<Vec<String>>>,
    launches: Vec<LaunchSite>,
    file_scope_arrays: Vec<SharedArray>,
    /// Template functions, instantiated once every instantiation and launch is known.
    templates: Vec<Prototype>,
    functions: Vec<Function>,
    /// Functions (and structs with a pointer conversion, like the CUDA samples'
    /// `SharedMemory<T>`) that return the dynamic shared memory, by name.
    shared_providers: HashMap<String, SharedProvider>,
    /// Whether the file declares any `extern __shared__` array (else no provider exists).
    mentions_extern_shared: bool,
}

/// A call of a [`SharedProvider`] in a function body.
struct ProviderCall {
    span: Span,
    at: Location,
    text: String,
    /// The array it stands for, named after the call as written: `SharedMemory<T>()`.
    array: String,
    elem_type: String,
}

/// A function whose result is the `extern __shared__` array it declares, as `T *`.
struct SharedProvider {
    /// The element type of the returned pointer, as written (`T`, `float`).
    pointee: String,
    /// The provider's template parameters, for binding `pointee` at a call.
    template_params: Vec<String>,
}

pub fn extract(src: &str, defines: &[String]) -> ParsedFile {
    // Parse plans, cheapest first: 32 KB pieces; the whole file (a boundary may have been
    // wrong, e.g. a macro with braces); one piece per top-level item, which keeps a syntax
    // error from swallowing the kernels around it. The first clean plan wins; otherwise the
    // one that analyses the most functions without a syntax error.
    // Each plan is made only when the ones before it had syntax errors.
    let coarse = super::chunks::top_level_chunks(src, CHUNK_BYTES);
    let whole = (coarse.len() > 1).then(|| super::chunks::whole(src));
    let plans = std::iter::once(coarse)
        .chain(whole)
        .chain(std::iter::once_with(|| {
            super::chunks::top_level_chunks(src, 0)
        }));
    let mut best: Option<(usize, Extractor)> = None;
    for plan in plans {
        let (clean, ex) = Extractor::run(src, defines, &plan);
        if clean {
            return ex.finish();
        }
        let analysed = ex
            .functions
            .iter()
            .filter(|f| f.syntax_error.is_none())
            .count();
        // On a tie the later, finer plan wins: its errors are more local.
        if best.as_ref().is_none_or(|(most, _)| analysed >= *most) {
            best = Some((analysed, ex));
        }
    }
    match best {
        Some((_, ex)) => ex.finish(),
        None => Extractor::run(src, defines, &super::chunks::whole(src))
            .1
            .finish(),
    }
}

impl<'s> Extractor<'s> {
    /// Extracts the file parsing `ranges` one at a time; also says whether no piece had a
    /// syntax error.
    fn run(src: &'s str, defines: &[String], ranges: &[std::ops::Range<usize>]) -> (bool, Self) {
        let mut ex = Extractor::new(src, ConstEnv::with_command_line(defines));
        let mut clean = true;
        let mut consume = |ex: &mut Extractor,
                           range: &std::ops::Range<usize>,
                           tree: Option<SyntaxTree>| match tree {
            Some(tree) => {
                clean &= !tree.root_node().has_error();
                ex.scan_tree(&tree);
            }
            None => {
                clean = false;
                let at = ex.lines.location(range.start);
                ex.syntax_errors.push(at);
                ex.diagnose(Severity::Error, at, "the parser gave up here".into());
            }
        };
        if let [range] = ranges {
            let tree = ex.parse_range(range.clone());
            consume(&mut ex, range, tree);
        } else {
            // Parse the next pieces on other threads while this one is analysed: parsing costs
            // more than the analysis, so it gets [`PARSE_THREADS`]. Parser `p` parses pieces
            // p, p + PARSE_THREADS, …; the pieces are taken back from the parsers in turn, so
            // they are analysed in order. The channels hold nothing: a parsed tree waits until
            // it is taken, so at most one tree per parser is alive besides the one analysed.
            let included: Vec<tree_sitter::Range> = ranges
                .iter()
                .map(|r| ex.included_range(r.clone()))
                .collect();
            let parsers = PARSE_THREADS.min(ranges.len());
            std::thread::scope(|scope| {
                let receivers: Vec<_> = (0..parsers)
                    .map(|first| {
                        let (sender, receiver) = std::sync::mpsc::sync_channel(0);
                        let mine: Vec<tree_sitter::Range> = included
                            .iter()
                            .skip(first)
                            .step_by(parsers)
                            .copied()
                            .collect();
                        scope.spawn(move || {
                            for range in mine {
                                if sender.send(super::parse_ranges(src, &[range])).is_err() {
                                    break;
                                }
                            }
                        });
                        receiver
                    })
                    .collect();
                for (i, range) in ranges.iter().enumerate() {
                    // Every parser sends each of its pieces, so a receive fails only if a
                    // parser thread panicked; the scope then re-raises that panic.
                    let Ok(tree) = receivers[i % parsers].recv() else {
                        break;
                    };
                    consume(&mut ex, range, tree);
                }
            });
        }
        ex.analyse_templates();
        (clean, ex)
    }

    fn finish(mut self) -> ParsedFile {
        self.functions.sort_by_key(|f| f.span.start);
        // Each kernel's launches looked up by name: scanning every launch for every kernel
        // grows with the square of the file.
        let mut launches_of: HashMap<&str, Vec<&LaunchSite>> = HashMap::new();
        for launch in &self.launches {
            launches_of.entry(&launch.kernel).or_default().push(launch);
        }
        for function in &mut self.functions {
            let launches = launches_of
                .get(function.name.as_str())
                .map_or(&[][..], Vec::as_slice);
            dynamic_extent_from_launches(function, launches);
        }
        ParsedFile {
            functions: self.functions,
            launches: self.launches,
            diagnostics: self.diagnostics,
            syntax_errors: self.syntax_errors,
            constants: self.env,
        }
    }

    /// Template functions, once every instantiation and launch of the file is known.
    fn analyse_templates(&mut self) {
        // Each template's launches are found by binary search in launch indices sorted (stably)
        // by kernel: maps keyed by cloned names took ~1 MB per 10,000 kernels, at the moment
        // the front end holds the most.
        let mut by_kernel: Vec<usize> = (0..self.launches.len()).collect();
        by_kernel.sort_by(|&a, &b| self.launches[a].kernel.cmp(&self.launches[b].kernel));
        let prototypes = std::mem::take(&mut self.templates);
        // Every template has at least one instance: growing `functions` by doubling instead
        // holds two buffers while it copies and ends with up to twice the room it needs
        // (a 10 MB file has ~10,000 templates of 312 bytes).
        self.functions.reserve_exact(prototypes.len());
        for mut prototype in prototypes {
            let name = prototype.function.name.clone();
            let first = by_kernel.partition_point(|&i| self.launches[i].kernel < name);
            let launches: Vec<usize> = by_kernel[first..]
                .iter()
                .copied()
                .take_while(|&i| self.launches[i].kernel == name)
                .collect();
            let instances = self.instantiations_of(&name, &prototype.params, &launches);
            let last = instances.len().saturating_sub(1);
            for (i, (args, bindings)) in instances.into_iter().enumerate() {
                // The last instance takes the prototype's arrays rather than a copy.
                let arrays = if i == last {
                    std::mem::take(&mut prototype.function.arrays)
                } else {
                    prototype.function.arrays.clone()
                };
                let function = self.instantiate(&prototype, arrays, args, bindings);
                self.functions.push(function);
            }
            // Tie each launch of this template to the instance it runs.
            for &i in &launches {
                let (args, _) = self.instance(&prototype.params, &self.launches[i].template_args);
                self.launches[i].instance = Some(instance_name(&name, &args));
            }
        }
    }

    /// A fresh state for `src` with the given constants.
    fn new(src: &'s str, env: ConstEnv) -> Self {
        Extractor {
            src,
            lines: LineIndex::new(src),
            env,
            macro_mentions: HashMap::new(),
            diagnostics: Vec::new(),
            syntax_errors: Vec::new(),
            instantiations: HashMap::new(),
            launches: Vec::new(),
            file_scope_arrays: Vec::new(),
            templates: Vec::new(),
            functions: Vec::new(),
            shared_providers: HashMap::new(),
            mentions_extern_shared: src.contains("extern") && src.contains("__shared__"),
        }
    }

    /// Parses only `range` of the file; node offsets stay offsets into the whole file.
    fn parse_range(&self, range: std::ops::Range<usize>) -> Option<SyntaxTree> {
        super::parse_ranges(self.src, &[self.included_range(range)])
    }

    fn included_range(&self, range: std::ops::Range<usize>) -> tree_sitter::Range {
        let point = |offset: usize| {
            let at = self.lines.location(offset);
            tree_sitter::Point::new(at.line - 1, at.col - 1)
        };
        tree_sitter::Range {
            start_byte: range.start,
            end_byte: range.end,
            start_point: point(range.start),
            end_point: point(range.end),
        }
    }

    fn scan_tree(&mut self, tree: &SyntaxTree) {
        let root = tree.root_node();
        let errors = self.collect_syntax_errors(root);
        self.syntax_errors.extend(errors);
        if self.mentions_extern_shared {
            self.find_shared_providers(root);
        }
        self.scan_top_level(root);
    }

    /// Registers every function of `root` that returns its own `extern __shared__` array.
    fn find_shared_providers(&mut self, root: Node) {
        let mut definitions = Vec::new();
        walk(root, |node| {
            if node.kind() == "function_definition" {
                definitions.push(node);
                return false;
            }
            true
        });
        for definition in definitions {
            if let Some((name, provider)) = self.shared_provider(definition) {
                self.shared_providers.insert(name, provider);
            }
        }
    }

    /// `definition`'s name and what it returns, when its body declares an `extern __shared__`
    /// array and returns it (possibly cast): `T *f() { extern __shared__ T s[]; return s; }`,
    /// or a struct's `operator T *()` of that form (named after the struct).
    fn shared_provider(&self, definition: Node) -> Option<(String, SharedProvider)> {
        let body = child(definition, FIELDS.body)?;
        let statements = named_children(body);
        let (array, elem_type) = statements.iter().find_map(|s| {
            if s.kind() != "declaration"
                || !has_qualifier(*s, self.src, "__shared__")
                || !has_qualifier(*s, self.src, "extern")
            {
                return None;
            }
            let declarator = child(*s, FIELDS.declarator)?;
            let ty = child(*s, FIELDS.type_)?;
            (declarator.kind() == "array_declarator")
                .then(|| (leftmost_identifier(declarator, self.src), self.one_line(ty)))
        })?;
        let returned = statements
            .iter()
            .find(|s| s.kind() == "return_statement")?
            .named_child(0)?;
        let pointee = match returned.kind() {
            "identifier" if self.text(returned) == array => elem_type,
            "cast_expression" => {
                let value = child(returned, FIELDS.value)?;
                if value.kind() != "identifier" || self.text(value) != array {
                    return None;
                }
                let target = self.one_line(child(returned, FIELDS.type_)?);
                target.trim_end().strip_suffix('*')?.trim().to_string()
            }
            "call_expression" => {
                let function = child(returned, FIELDS.function)?;
                let cast = child(function, FIELDS.name)?;
                let argument = child(returned, FIELDS.arguments)?.named_child(0)?;
                if function.kind() != "template_function"
                    || !self.text(cast).ends_with("_cast")
                    || self.text(argument) != array
                {
                    return None;
                }
                let target = child(function, FIELDS.arguments)?.named_child(0)?;
                self.one_line(target)
                    .trim_end()
                    .strip_suffix('*')?
                    .trim()
                    .to_string()
            }
            _ => return None,
        };
        let declarator = child(definition, FIELDS.declarator)?;
        let (name, template) = if declarator.kind() == "operator_cast" {
            let structure = definition.parent()?.parent()?;
            let name = child(structure, FIELDS.name)?;
            (self.text(name).to_string(), structure.parent())
        } else {
            (function_name(definition, self.src)?, definition.parent())
        };
        let template_params = template
            .map(|t| template_parameters(t, self.src))
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.name)
            .collect();
        Some((
            name,
            SharedProvider {
                pointee,
                template_params,
            },
        ))
    }

    fn text(&self, node: Node) -> &'s str {
        &self.src[node.byte_range()]
    }

    fn at(&self, node: Node) -> Location {
        self.lines.location(node.start_byte())
    }

    fn one_line(&self, node: Node) -> String {
        compact_text(node, self.src)
    }

    fn diagnose(&mut self, severity: Severity, at: Location, message: String) {
        self.diagnostics.push(Diagnostic {
            severity,
            at,
            message,
        });
    }

    fn collect_syntax_errors(&mut self, root: Node) -> Vec<Location> {
        let mut errors = Vec::new();
        walk(root, |node| {
            if node.is_error() || node.is_missing() {
                errors.push((
                    self.at(node),
                    node.is_missing(),
                    symbols::kind(node).to_string(),
                ));
                return false;
            }
            node.has_error()
        });
        for (at, missing, kind) in &errors {
            let message = if *missing {
                format!("syntax error: expected `{kind}`")
            } else {
                "syntax error: code here could not be parsed".to_string()
            };
            self.diagnose(Severity::Error, *at, message);
        }
        errors.into_iter().map(|(at, _, _)| at).collect()
    }

    /// Collects, in source order, the constants, types, functions and instantiations of the
    /// file, following `#ifdef`/`#if` branches that can be decided and both branches otherwise.
    /// Order matters: a function is analysed with the definitions that precede it.
    fn scan_top_level(&mut self, root: Node) {
        let mut stack = vec![named_children(root).into_iter()];
        while let Some(items) = stack.last_mut() {
            let Some(item) = items.next() else {
                stack.pop();
                continue;
            };
            match symbols::kind(item) {
                "preproc_def" | "preproc_function_def" => self.define(item),
                "function_definition" => {
                    self.function(item);
                    self.launch_sites(item);
                }
                "template_declaration" => {
                    for child in named_children(item) {
                        match symbols::kind(child) {
                            "function_definition" => {
                                self.function(child);
                                self.launch_sites(child);
                            }
                            "declaration" => self.declaration_at_file_scope(child),
                            _ => {}
                        }
                    }
                }
                "template_instantiation" => self.instantiation(item),
                "declaration" => self.declaration_at_file_scope(item),
                "type_definition" => self.type_definition(item),
                "alias_declaration" => self.alias(item),
                "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                    self.type_specifier(item);
                }
                "namespace_definition" | "linkage_specification" => {
                    match child(item, FIELDS.body) {
                        Some(body) if symbols::kind(body) == "declaration_list" => {
                            stack.push(named_children(body).into_iter())
                        }
                        // `extern "C" __global__ void k() {…}`: the body is the item itself.
                        Some(body) => stack.push(vec![body].into_iter()),
                        None => {}
                    }
                }
                "declaration_list" | "preproc_else" => stack.push(named_children(item).into_iter()),
                "preproc_ifdef" | "preproc_if" | "preproc_elif" | "preproc_elifdef" => {
                    stack.push(self.live_preproc_items(item).into_iter())
                }
                _ => {}
            }
        }
    }

    /// The items of a preprocessor conditional that can be live. An undecidable condition keeps
    /// both branches (the first definition of a name wins).
    fn live_preproc_items<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let condition = self.preproc_condition(node);
        let alternative = child(node, FIELDS.alternative);
        let guards = [
            alternative,
            child(node, FIELDS.condition),
            child(node, FIELDS.name),
        ];
        let body: Vec<Node> = named_children(node)
            .into_iter()
            .filter(|item| !guards.contains(&Some(*item)))
            .collect();
        match condition {
            Some(true) => body,
            Some(false) => alternative.into_iter().collect(),
            None => body.into_iter().chain(alternative).collect(),
        }
    }

    /// Whether the condition of an `#if`/`#ifdef`/`#elif` holds; `None` when undecidable.
    fn preproc_condition(&self, node: Node) -> Option<bool> {
        match symbols::kind(node) {
            "preproc_ifdef" | "preproc_elifdef" => {
                let negated = self
                    .text(node)
                    .trim_start_matches('#')
                    .trim_start()
                    .starts_with("ifndef")
                    || self
                        .text(node)
                        .trim_start_matches('#')
                        .trim_start()
                        .starts_with("elifndef");
                child(node, FIELDS.name).map(|name| self.env.is_defined(self.text(name)) != negated)
            }
            _ => child(node, FIELDS.condition)
                .and_then(|cond| self.env.eval_condition(&ast::lower(cond, self.src)).ok()),
        }
    }

    fn define(&mut self, node: Node) {
        let Some(name) = child(node, FIELDS.name) else {
            return;
        };
        let params = child(node, FIELDS.parameters).map(|list| {
            named_children(list)
                .into_iter()
                .map(|p| self.text(p).to_string())
                .collect()
        });
        let body = child(node, FIELDS.value).map_or("", |value| self.text(value));
        let line = self.at(node).line;
        let name = self.text(name).to_string();
        if self.env.macro_named(&name).is_none() {
            let mut mentioned: Vec<&str> = identifier_tokens(body).collect();
            mentioned.sort_unstable();
            mentioned.dedup();
            for token in mentioned {
                self.macro_mentions
                    .entry(token.to_string())
                    .or_default()
                    .push(name.clone());
            }
        }
        self.env.define_macro(&name, Macro::new(params, body, line));
    }

    fn instantiation(&mut self, node: Node) {
        let Some(declarator) = child(node, FIELDS.declarator) else {
            return;
        };
        let mut target = None;
        walk(declarator, |n| {
            if symbols::kind(n) == "template_function" && target.is_none() {
                target = Some(n);
            }
            target.is_none()
        });
        if let Some(function) = target {
            let (name, args) = self.template_id(function);
            self.instantiations.entry(name).or_default().push(args);
        }
    }

    /// A namespace-scope declaration: integer constants, `__shared__` arrays, and any struct
    /// or enum it defines.
    fn declaration_at_file_scope(&mut self, node: Node) {
        if let Some(ty) = child(node, FIELDS.type_) {
            self.type_specifier(ty);
        }
        if has_qualifier(node, self.src, "__shared__") {
            let arrays = self.shared_arrays(node, &Bindings::default(), true, None);
            self.file_scope_arrays.extend(arrays);
            return;
        }
        let definitions = self.integer_definitions(node, &HashSet::new());
        for (name, value) in self.bind_constants(&definitions, &Bindings::default()).ints {
            self.env.define_value(&name, value);
        }
    }

    /// The integer variables `node` declares with an initializer, when they are
    /// `const`/`constexpr` or never assigned afterwards (`reassigned`), as `(name, value)`.
    fn integer_definitions(&self, node: Node, reassigned: &HashSet<String>) -> Vec<(String, Expr)> {
        let mut definitions = Vec::new();
        let Some(ty) = child(node, FIELDS.type_) else {
            return definitions;
        };
        if !is_integer_type(&self.one_line(ty)) {
            return definitions;
        }
        let constant =
            has_qualifier(node, self.src, "const") || has_qualifier(node, self.src, "constexpr");
        for declarator in children_in(node, FIELDS.declarator) {
            if symbols::kind(declarator) != "init_declarator" {
                continue;
            }
            let (Some(name), Some(value)) = (
                child(declarator, FIELDS.declarator),
                child(declarator, FIELDS.value),
            ) else {
                continue;
            };
            if symbols::kind(name) != "identifier" {
                continue;
            }
            let name = self.text(name).to_string();
            if !constant && reassigned.contains(&name) {
                continue;
            }
            let value = match symbols::kind(value) {
                "initializer_list" | "argument_list" => match named_children(value).as_slice() {
                    [only] => *only,
                    _ => continue,
                },
                _ => value,
            };
            definitions.push((name, ast::lower(value, self.src)));
        }
        definitions
    }

    /// `base` plus the constants of `definitions` that evaluate, in order.
    fn bind_constants(&self, definitions: &[(String, Expr)], base: &Bindings) -> Bindings {
        let mut scope = base.clone();
        for (name, value) in definitions {
            if let Ok(v) = self.env.eval(value, &scope) {
                scope.ints.insert(name.clone(), v);
            }
        }
        scope
    }

    fn type_definition(&mut self, node: Node) {
        let Some(ty) = child(node, FIELDS.type_) else {
            return;
        };
        let layout = self.type_specifier(ty);
        let aggregate = matches!(
            ty.kind(),
            "struct_specifier" | "union_specifier" | "class_specifier"
        );
        // What the new name names: a tagged struct or another type by name, or the members
        // of an anonymous struct.
        let target = match child(ty, FIELDS.name) {
            Some(name) if aggregate => Some(self.text(name).to_string()),
            _ if aggregate => None,
            _ => Some(self.one_line(ty)),
        };
        let anonymous = match target {
            None => self.aggregate(ty, 0).map(|(_, members)| members),
            Some(_) => None,
        };
        for declarator in children_in(node, FIELDS.declarator) {
            if declarator.kind() != "type_identifier" {
                continue;
            }
            let name = self.text(declarator);
            match (&target, &anonymous, layout) {
                (Some(target), _, _) if self.env.types.define_alias(name, target).is_some() => {}
                (_, Some(members), Some(layout)) => {
                    self.env
                        .types
                        .define_aggregate(name, layout, members.clone());
                    if declares_data_only(ty) {
                        self.env.types.mark_plain_data(name);
                    }
                }
                (_, _, Some(layout)) => self.env.types.define(name, layout),
                _ => {}
            }
        }
    }

    fn alias(&mut self, node: Node) {
        let (Some(name), Some(ty)) = (child(node, FIELDS.name), child(node, FIELDS.type_)) else {
            return;
        };
        self.env
            .types
            .define_alias(self.text(name), &self.one_line(ty));
    }

    /// Registers the struct/union/enum a type specifier defines and returns the type's layout.
    fn type_specifier(&mut self, node: Node) -> Option<Layout> {
        match symbols::kind(node) {
            "enum_specifier" => {
                if let Some(body) = child(node, FIELDS.body) {
                    self.enumerators(body);
                }
                Some(Layout { size: 4, align: 4 })
            }
            "struct_specifier" | "union_specifier" | "class_specifier" => {
                let aggregate = self.aggregate(node, 0);
                if let (Some(name), Some((layout, members))) =
                    (child(node, FIELDS.name), &aggregate)
                {
                    self.env
                        .types
                        .define_aggregate(self.text(name), *layout, members.clone());
                    if declares_data_only(node) {
                        self.env.types.mark_plain_data(self.text(name));
                    }
                }
                if child(node, FIELDS.body).is_none() {
                    return child(node, FIELDS.name)
                        .and_then(|name| self.env.types.layout(self.text(name)));
                }
                aggregate.map(|(layout, _)| layout)
            }
            _ => self.env.types.layout(&self.one_line(node)),
        }
    }

    fn enumerators(&mut self, body: Node) {
        let mut next = 0i64;
        for enumerator in named_children(body) {
            if symbols::kind(enumerator) != "enumerator" {
                continue;
            }
            let Some(name) = child(enumerator, FIELDS.name) else {
                continue;
            };
            let value = match child(enumerator, FIELDS.value) {
                Some(value) => self
                    .env
                    .eval(&ast::lower(value, self.src), &Bindings::default())
                    .ok(),
                None => Some(next),
            };
            if let Some(value) = value {
                self.env.define_value(self.text(name), value);
                next = value.wrapping_add(1);
            }
        }
    }

    /// A struct or union's layout and members.
    fn aggregate(&self, node: Node, depth: usize) -> Option<(Layout, Vec<Member>)> {
        let body = child(node, FIELDS.body)?;
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        let forced_align = named_children(node)
            .into_iter()
            .find(|child| symbols::kind(*child).contains("align"))
            .and_then(|align| {
                let expr = named_children(align).into_iter().last()?;
                self.env
                    .eval(&ast::lower(expr, self.src), &Bindings::default())
                    .ok()
            })
            .map(|v| v as u64);
        let mut members = Vec::new();
        for field in named_children(body) {
            if symbols::kind(field) != "field_declaration" {
                continue;
            }
            let ty = child(field, FIELDS.type_)?;
            let base = match ty.kind() {
                "struct_specifier" | "union_specifier" | "class_specifier" => self
                    .aggregate(ty, depth + 1)
                    .map(|(layout, _)| layout)
                    .or_else(|| {
                        child(ty, FIELDS.name).and_then(|n| self.env.types.layout(self.text(n)))
                    })?,
                "enum_specifier" => Layout { size: 4, align: 4 },
                _ => self.env.types.layout(&self.one_line(ty))?,
            };
            // A nested struct is looked into by its name (anonymous ones are not).
            let type_name = match child(ty, FIELDS.name) {
                Some(name) if ty.kind() != "primitive_type" => self.text(name).to_string(),
                _ => self.one_line(ty),
            };
            for declarator in children_in(field, FIELDS.declarator) {
                let (layout, extents) = self.member_layout(declarator, base)?;
                let name = leftmost_identifier(declarator, self.src).to_string();
                let type_name = if declarator.kind() == "pointer_declarator" {
                    format!("{type_name}*")
                } else {
                    type_name.clone()
                };
                members.push((name, layout, type_name, extents));
            }
            if named_children(field)
                .iter()
                .any(|c| symbols::kind(*c) == "bitfield_clause")
            {
                return None;
            }
        }
        let layouts: Vec<Layout> = members.iter().map(|m| m.1).collect();
        let (layout, offsets) =
            aggregate_offsets(&layouts, node.kind() == "union_specifier", forced_align);
        let members = members
            .into_iter()
            .zip(offsets)
            .map(|((name, layout, type_name, extents), offset)| Member {
                name,
                offset,
                layout,
                type_name,
                extents,
            })
            .collect();
        Some((layout, members))
    }

    /// A member's layout, and its extents (outermost first) when it is an array.
    fn member_layout(&self, declarator: Node, base: Layout) -> Option<(Layout, Vec<u64>)> {
        match declarator.kind() {
            "field_identifier" => Some((base, Vec::new())),
            "pointer_declarator" => Some((Layout { size: 8, align: 8 }, Vec::new())),
            "array_declarator" => {
                let (inner, mut extents) =
                    self.member_layout(child(declarator, FIELDS.declarator)?, base)?;
                let count = self
                    .env
                    .eval(
                        &ast::lower(child(declarator, FIELDS.size)?, self.src),
                        &Bindings::default(),
                    )
                    .ok()?;
                let count = u64::try_from(count).ok()?;
                let layout = Layout {
                    size: inner.size.checked_mul(count)?,
                    align: inner.align,
                };
                extents.push(count);
                Some((layout, extents))
            }
            _ => None,
        }
    }

    /// The name and the argument texts of a template id `k<16, float>`.
    fn template_id(&self, node: Node) -> (String, Vec<String>) {
        let name = child(node, FIELDS.name)
            .map(|n| self.one_line(n))
            .unwrap_or_default();
        let args = child(node, FIELDS.arguments)
            .map(|list| {
                named_children(list)
                    .into_iter()
                    .map(|a| self.one_line(a))
                    .collect()
            })
            .unwrap_or_default();
        (name, args)
    }

    /// Records the kernel launches inside `function`.
    fn launch_sites(&mut self, function: Node) {
        // Only a function that mentions `<<<` can launch a kernel.
        if !self.text(function).contains("<<<") {
            return;
        }
        // The function's constants and dim3 variables, for every launch in it.
        let locals = child(function, FIELDS.body)
            .map(|body| self.local_definitions(&Preorder::of(body), &[]));
        let scope = locals.as_ref().map_or_else(Bindings::default, |l| {
            self.bind_constants(&l.constants, &Bindings::default())
        });
        let dim3s = locals.map(|l| l.dim3s).unwrap_or_default();
        let found = launch_calls(function, self.src);
        let sites: Vec<LaunchSite> = found
            .into_iter()
            .map(|(kernel, config, launch)| {
                let (name, template_args) = match symbols::kind(kernel) {
                    "template_function" => self.template_id(kernel),
                    _ => (self.one_line(kernel), Vec::new()),
                };
                let block = match named_children(config).get(1) {
                    Some(block) => self.launch_block(*block, &scope, &dim3s),
                    None => Err("the launch has no block argument".to_string()),
                };
                let shared_bytes = named_children(config).get(2).and_then(|bytes| {
                    let value = self.env.eval(&ast::lower(*bytes, self.src), &scope).ok()?;
                    u64::try_from(value).ok()
                });
                LaunchSite {
                    kernel: name.rsplit("::").next().unwrap_or(&name).to_string(),
                    template_args,
                    instance: None,
                    at: self.at(launch),
                    block,
                    shared_bytes,
                }
            })
            .collect();
        self.launches.extend(sites);
    }

    /// Evaluates a launch's block argument: a constant, `dim3(…)`, or a local `dim3` variable.
    fn launch_block(
        &self,
        block: Node,
        scope: &Bindings,
        dim3s: &HashMap<String, Vec<Expr>>,
    ) -> Result<[u32; 3], String> {
        let expr = ast::lower(block, self.src);
        let components: Vec<Expr> = match &expr.kind {
            ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n == "dim3") => {
                args.to_vec()
            }
            ExprKind::Name(name) if dim3s.contains_key(name) => dim3s[name].clone(),
            _ => vec![expr.clone()],
        };
        if components.is_empty() || components.len() > 3 {
            return Err(format!(
                "cannot read block shape `{}`",
                self.one_line(block)
            ));
        }
        let mut shape = [1u32; 3];
        for (slot, component) in shape.iter_mut().zip(&components) {
            let value = self
                .env
                .eval(component, scope)
                .map_err(|why| format!("block shape `{}`: {why}", self.one_line(block)))?;
            *slot = u32::try_from(value)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("block shape `{}` is not positive", self.one_line(block)))?;
        }
        super::check_block_shape(shape, &self.one_line(block))
    }

    /// What a function body declares that evaluation needs: integer constants (in order,
    /// unevaluated, so a template can bind them per instantiation), `dim3` variables, and the
    /// `__shared__` declarations, direct or through a macro. `dead` branches are skipped.
    fn local_definitions<'t>(
        &self,
        body: &Preorder<'t>,
        dead: &[std::ops::Range<usize>],
    ) -> LocalDefinitions<'t> {
        let mut reassigned = HashSet::new();
        let mut declarations = Vec::new();
        let mut shared = Vec::new();
        let mut shared_macro_calls = Vec::new();
        body.walk(|node| {
            if dead.iter().any(|r| r.contains(&node.start_byte())) {
                return false;
            }
            match symbols::kind(node) {
                "assignment_expression" | "update_expression" => {
                    let target = child(node, FIELDS.left).or_else(|| child(node, FIELDS.argument));
                    if let Some(target) = target {
                        let root = leftmost_identifier(target, self.src);
                        reassigned.insert(root.to_string());
                    }
                }
                "declaration" if has_qualifier(node, self.src, "__shared__") => shared.push(node),
                "declaration" => declarations.push(node),
                "call_expression" => {
                    let declares = child(node, FIELDS.function)
                        .and_then(|f| self.env.macro_named(self.text(f)))
                        .is_some_and(|mac| mac.body.contains("__shared__"));
                    if declares {
                        shared_macro_calls.push(node);
                    }
                }
                _ => {}
            }
            true
        });
        let mut constants = Vec::new();
        let mut dim3s = HashMap::new();
        for declaration in declarations {
            constants.extend(self.integer_definitions(declaration, &reassigned));
            let is_dim3 = child(declaration, FIELDS.type_).is_some_and(|t| self.text(t) == "dim3");
            if !is_dim3 {
                continue;
            }
            for declarator in children_in(declaration, FIELDS.declarator) {
                let (Some(name), Some(value)) = (
                    child(declarator, FIELDS.declarator),
                    child(declarator, FIELDS.value),
                ) else {
                    continue;
                };
                let name = self.text(name).to_string();
                if reassigned.contains(&name) {
                    continue;
                }
                let args = match symbols::kind(value) {
                    "argument_list" | "initializer_list" => named_children(value)
                        .into_iter()
                        .map(|a| ast::lower(a, self.src))
                        .collect(),
                    _ => match ast::lower(value, self.src).kind {
                        ExprKind::Call { args, .. } => args.into_vec(),
                        other => vec![Expr {
                            kind: other,
                            span: Span::of(value),
                        }],
                    },
                };
                dim3s.insert(name, args);
            }
        }
        LocalDefinitions {
            constants,
            dim3s,
            shared,
            shared_macro_calls,
        }
    }

    fn function(&mut self, node: Node) {
        let kind = if has_modifier(node, self.src, "__global__") {
            FunctionKind::Kernel
        } else if has_modifier(node, self.src, "__device__") {
            FunctionKind::Device
        } else {
            return;
        };
        let Some(name) = function_name(node, self.src) else {
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
        let launch_bounds = named_children(node)
            .into_iter()
            .find(|c| symbols::kind(*c) == "launch_bounds")
            .and_then(|lb| named_children(lb).first().copied())
            .map(|e| ast::lower(e, self.src));
        let annotated_block = self.block_annotation(outer);
        let template_params = template_parameters(outer, self.src);
        let mut function = Function {
            name,
            kind,
            template_args: Vec::new(),
            bindings: Bindings::default(),
            at: self.at(node),
            span: Span::of(node),
            launch_bounds: None,
            annotated_block,
            callees: Vec::new(),
            syntax_error,
            arrays: Vec::new(),
            params: parameters(node, self.src),
            body: Body::default(),
        };
        let constants = match syntax_error {
            None => {
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
            Some(_) => Vec::new(),
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

    /// A function with its template arguments bound: the constants, extents, element types
    /// and launch bounds evaluated with them.
    /// `arrays` are the prototype's (its own or a copy), bound here.
    fn instantiate(
        &mut self,
        prototype: &Prototype,
        arrays: Vec<SharedArray>,
        template_args: Vec<(String, String)>,
        bindings: Bindings,
    ) -> Function {
        let template = &prototype.function;
        let scope = self.bind_constants(&prototype.constants.unpack(), &bindings);
        let arrays = arrays
            .into_iter()
            .map(|mut array| {
                if !array.file_scope {
                    let (base, pointers) = split_pointer(&array.elem_type);
                    if let Some(bound) = bindings.types.get(base) {
                        array.elem_type = format!("{bound}{pointers}");
                    }
                    array.elem_bytes = self.env.types.layout(&array.elem_type).map(|l| l.size);
                    for detail in array.accesses.iter_mut().filter_map(Access::detail_mut) {
                        detail.member_bytes = detail
                            .member
                            .as_deref()
                            .and_then(|m| self.env.types.member_range(&array.elem_type, m));
                        detail.member_layout = detail
                            .member
                            .as_deref()
                            .and_then(|m| self.env.types.member_layout(&array.elem_type, m));
                    }
                    array.dims = array
                        .dim_exprs
                        .unpack()
                        .iter()
                        .map(|e| self.extent(e.as_ref(), &scope))
                        .collect();
                }
                array
            })
            .collect();
        let launch_bounds = prototype
            .launch_bounds
            .as_ref()
            .and_then(|e| self.env.eval(e, &bindings).ok())
            .and_then(|v| u32::try_from(v).ok());
        let function = Function {
            name: template.name.clone(),
            kind: template.kind,
            template_args,
            bindings,
            at: template.at,
            span: template.span,
            launch_bounds,
            annotated_block: template.annotated_block,
            callees: template.callees.clone(),
            syntax_error: template.syntax_error,
            arrays,
            params: template.params.clone(),
            body: template.body.clone(),
        };
        for array in &function.arrays {
            self.report_unknown_extents(&function, array);
        }
        function
    }

    fn extent(&self, size: Option<&Expr>, scope: &Bindings) -> Option<u64> {
        self.env
            .eval(size?, scope)
            .ok()
            .and_then(|v| u64::try_from(v).ok())
    }

    /// A `// bankwise: block=XxY` comment in the run of comments directly above `node`.
    fn block_annotation(&mut self, node: Node) -> Option<[u32; 3]> {
        let mut below = node;
        while let Some(comment) = comment_above(below, &self.lines) {
            let text = self.text(comment);
            let body = text
                .trim_start_matches('/')
                .trim_start_matches('*')
                .trim_end_matches("*/")
                .trim();
            if let Some(directive) = body.strip_prefix("bankwise:") {
                let shape = directive
                    .trim()
                    .strip_prefix("block")
                    .map(|rest| rest.trim_start().trim_start_matches('=').trim());
                match shape.map(super::parse_block_shape) {
                    Some(Ok(shape)) => return Some(shape),
                    Some(Err(why)) => {
                        let at = self.at(comment);
                        self.diagnose(Severity::Warning, at, format!("bankwise annotation: {why}"));
                    }
                    None => {
                        let at = self.at(comment);
                        self.diagnose(
                            Severity::Warning,
                            at,
                            format!(
                                "cannot read bankwise annotation `{}`; expected `// bankwise: block=32x8`",
                                text.trim()
                            ),
                        );
                    }
                }
            }
            below = comment;
        }
        None
    }

    /// Every known set of template arguments for a function: explicit instantiations, launch
    /// sites, then `-D` values and defaults. One empty set for non-templates.
    fn instantiations_of(
        &mut self,
        name: &str,
        params: &[TemplateParam],
        launches: &[usize],
    ) -> Vec<(Vec<(String, String)>, Bindings)> {
        if params.is_empty() {
            return vec![(Vec::new(), Bindings::default())];
        }
        // Launches `k<64><<<…>>>` instantiate templates like `template … k<64>(…);` does; a
        // launch without arguments (`k<<<…>>>`) instantiates the defaults.
        let mut arg_lists = self.instantiations.get(name).cloned().unwrap_or_default();
        arg_lists.extend(
            launches
                .iter()
                .map(|&i| self.launches[i].template_args.clone()),
        );
        if arg_lists.is_empty() {
            arg_lists.push(Vec::new());
        }
        let mut seen = Vec::new();
        for args in arg_lists {
            let entry = self.instance(params, &args);
            if !seen.contains(&entry) {
                seen.push(entry);
            }
        }
        seen
    }

    /// The template arguments and bindings that `args` (as written, possibly fewer than the
    /// parameters) give, completed from `-D` values and defaults.
    fn instance(
        &self,
        params: &[TemplateParam],
        args: &[String],
    ) -> (Vec<(String, String)>, Bindings) {
        let mut shown = Vec::new();
        let mut bindings = Bindings::default();
        for (i, param) in params.iter().enumerate() {
            let value = args
                .get(i)
                .cloned()
                .or_else(|| {
                    self.env
                        .command_line_value(&param.name)
                        .and_then(Result::ok)
                        .map(|v| v.to_string())
                })
                .or_else(|| param.default.clone());
            let Some(value) = value else { continue };
            if param.is_type {
                bindings.types.insert(param.name.clone(), value.clone());
            } else if let Some(expr) = super::parse_expression_text(&value) {
                match self.env.eval(&expr, &bindings) {
                    Ok(v) => {
                        bindings.ints.insert(param.name.clone(), v);
                    }
                    Err(_) => continue,
                }
            }
            shown.push((param.name.clone(), value));
        }
        (shown, bindings)
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
        let definitions = self.local_definitions(nodes, dead);
        let locals = self.bind_constants(&definitions.constants, &function.bindings);
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
        let mut provider_calls = Vec::new();
        let resolve = |name: &str,
                       ancestors: &[Node],
                       shared_in_scope: &HashMap<usize, Vec<usize>>,
                       others_in_scope: &HashMap<usize, HashSet<String>>|
         -> Option<usize> {
            for scope in ancestors
                .iter()
                .rev()
                .filter(|a| is_scope(symbols::kind(**a)))
            {
                let mut shared = shared_in_scope.get(&scope.id()).into_iter().flatten();
                if let Some(&i) = shared.rfind(|&&i| arrays[i].name == name) {
                    return Some(i);
                }
                if others_in_scope
                    .get(&scope.id())
                    .is_some_and(|names| names.contains(name))
                {
                    return None;
                }
            }
            (local_count..arrays.len()).find(|&i| arrays[i].name == name)
        };
        nodes.walk_with_ancestors(|node, ancestors| {
            if is_dead(node) {
                return false;
            }
            let scope = || {
                ancestors
                    .iter()
                    .rev()
                    .find(|a| is_scope(symbols::kind(**a)))
                    .map_or(body.id(), |a| a.id())
            };
            match symbols::kind(node) {
                // Operands of sizeof/alignof/decltype are not evaluated: no access.
                "sizeof_expression" | "alignof_expression" | "decltype" => return false,
                "gnu_asm_expression" => {
                    let mut inner_uses = Vec::new();
                    walk_with_ancestors(node, |inner, inner_ancestors| {
                        if symbols::kind(inner) == "identifier"
                            && candidates.contains(self.text(inner))
                        {
                            let chain: Vec<Node> =
                                ancestors.iter().chain(inner_ancestors).copied().collect();
                            inner_uses.push((self.text(inner), chain));
                        }
                        true
                    });
                    for (name, chain) in inner_uses {
                        if let Some(i) = resolve(name, &chain, &shared_in_scope, &others_in_scope) {
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
                        if let Some(i) =
                            resolve(name, ancestors, &shared_in_scope, &others_in_scope)
                        {
                            let chain = std::iter::once(node)
                                .chain(ancestors.iter().rev().copied())
                                .collect();
                            uses[i].push(Lineage { chain });
                        }
                    }
                }
                "call_expression" => {
                    if let Some(f) = child(node, FIELDS.function) {
                        if matches!(symbols::kind(f), "identifier" | "qualified_identifier") {
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
                shared_in_scope.entry(scope()).or_default().extend(declared);
            } else if matches!(symbols::kind(node), "declaration" | "parameter_declaration") {
                let names = children_in(node, FIELDS.declarator)
                    .into_iter()
                    .map(|d| leftmost_identifier(d, self.src).to_string());
                others_in_scope.entry(scope()).or_default().extend(names);
            }
            true
        });
        callees.sort();
        callees.dedup();
        callees.shrink_to_fit();
        function.callees = callees;

        let body_text = self.text(body);
        let mut kept = Vec::new();
        for (i, mut array) in arrays.into_iter().enumerate() {
            if i >= local_count && uses[i].is_empty() && asm_uses[i].is_empty() {
                continue;
            }
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

    /// For a call of a shared-memory provider (`SharedMemory<T>()`): its name and the
    /// element type of the pointer it returns here.
    fn provider_call(&self, call: Node, scope: &Bindings) -> Option<ProviderCall> {
        let function = child(call, FIELDS.function)?;
        let (name, arguments) = match function.kind() {
            "template_function" => {
                let name = child(function, FIELDS.name)?;
                let arguments = function
                    .child_by_field_id(FIELDS.arguments)
                    .map(named_children)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| self.one_line(a))
                    .collect();
                (self.text(name), arguments)
            }
            "identifier" => (self.text(function), Vec::new()),
            _ => return None,
        };
        let provider = self.shared_providers.get(name)?;
        let pointee = match provider
            .template_params
            .iter()
            .position(|p| *p == provider.pointee)
        {
            Some(i) => arguments.get(i)?.clone(),
            None => provider.pointee.clone(),
        };
        let elem_type = scope.types.get(&pointee).cloned().unwrap_or(pointee);
        Some(ProviderCall {
            span: Span::of(call),
            at: self.at(call),
            text: self.one_line(call),
            array: compact_text(call, self.src),
            elem_type,
        })
    }

    /// One `extern` array per provider and element type the body calls for, named after the
    /// call (`SharedMemory<float>()`). Each call is an escape the affine stage lifts when it
    /// follows the pointer the call returns.
    fn provided_arrays(&self, calls: Vec<ProviderCall>) -> Vec<SharedArray> {
        let mut arrays: Vec<SharedArray> = Vec::new();
        for call in calls {
            let escape = Escape {
                kind: EscapeKind::Pointer(format!(
                    "the pointer `{}` returns is not followed",
                    call.array
                )),
                at: call.at,
                text: call.text,
                name_use: Some(call.span),
                calls: Vec::new(),
            };
            if let Some(array) = arrays.iter_mut().find(|a| a.name == call.array) {
                array.escapes.push(escape);
                continue;
            }
            arrays.push(SharedArray {
                elem_bytes: self.env.types.layout(&call.elem_type).map(|l| l.size),
                name: call.array,
                elem_type: call.elem_type,
                dims: vec![None],
                dim_exprs: Packed::new(&vec![None]),
                dim_texts: vec![String::new()],
                is_extern: true,
                file_scope: false,
                declared_by_macro: None,
                at: call.at,
                decl_span: call.span,
                accesses: Vec::new(),
                escapes: vec![escape],
            });
        }
        arrays
    }

    /// Byte ranges of `#if`/`#ifdef` branches inside `body` that are known to be dead.
    fn dead_branches(&self, body: Node, nodes: &Preorder) -> Vec<std::ops::Range<usize>> {
        let mut dead = Vec::new();
        if !self.text(body).contains('#') {
            return dead;
        }
        nodes.walk(|node| {
            if matches!(
                symbols::kind(node),
                "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef"
            ) {
                let live: Vec<Node> = self.live_preproc_items(node);
                let guards = [child(node, FIELDS.condition), child(node, FIELDS.name)];
                for child in named_children(node) {
                    if !live.contains(&child) && !guards.contains(&Some(child)) {
                        dead.push(child.byte_range());
                    }
                }
            }
            true
        });
        dead
    }

    fn report_unknown_extents(&mut self, function: &Function, array: &SharedArray) {
        let params: Vec<&str> = function
            .template_args
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        let dim_exprs = array.dim_exprs.unpack();
        let extents = array.dims.iter().zip(&dim_exprs).zip(&array.dim_texts);
        for (i, ((dim, expr), text)) in extents.enumerate() {
            if dim.is_some() || (array.is_extern && i == 0) {
                continue;
            }
            let Some(expr) = expr else {
                continue;
            };
            let why = match self.env.eval(expr, &function.bindings) {
                Err(Unresolved::UnknownName(name)) if !params.contains(&name.as_str()) => {
                    format!("`{name}` has no known value; pass -D {name}=<value>")
                }
                Err(why) => why.to_string(),
                Ok(_) => continue,
            };
            let message = format!(
                "extent `{text}` of `{}` in `{}` is unknown: {why}",
                array.name,
                function.display_name()
            );
            self.diagnose(Severity::Warning, array.at, message);
        }
        if array.elem_bytes.is_none() {
            let message = format!(
                "element type `{}` of `{}` in `{}` has no known size",
                array.elem_type,
                array.name,
                function.display_name()
            );
            self.diagnose(Severity::Warning, array.at, message);
        }
    }

    /// The arrays one `__shared__` declaration declares (scalars are skipped).
    fn shared_arrays(
        &self,
        decl: Node,
        scope: &Bindings,
        file_scope: bool,
        declared_by_macro: Option<(&str, Location, Span)>,
    ) -> Vec<SharedArray> {
        let Some(ty) = child(decl, FIELDS.type_) else {
            return Vec::new();
        };
        let type_text = self.one_line(ty);
        let is_extern = named_children(decl)
            .iter()
            .any(|c| symbols::kind(*c) == "storage_class_specifier" && self.text(*c) == "extern");
        let mut arrays = Vec::new();
        for declarator in children_in(decl, FIELDS.declarator) {
            let mut node = declarator;
            if symbols::kind(node) == "init_declarator" {
                match child(node, FIELDS.declarator) {
                    Some(inner) => node = inner,
                    None => continue,
                }
            }
            let mut pointer = false;
            if symbols::kind(node) == "pointer_declarator" {
                pointer = true;
                match child(node, FIELDS.declarator) {
                    Some(inner) => node = inner,
                    None => continue,
                }
            }
            let mut sizes = Vec::new();
            while symbols::kind(node) == "array_declarator" {
                sizes.push(child(node, FIELDS.size));
                match child(node, FIELDS.declarator) {
                    Some(inner) => node = inner,
                    None => break,
                }
            }
            if sizes.is_empty() || symbols::kind(node) != "identifier" {
                continue;
            }
            sizes.reverse();
            let elem_type = {
                let bound = scope.types.get(&type_text).cloned();
                let base = bound.unwrap_or_else(|| type_text.clone());
                if pointer {
                    format!("{base}*")
                } else {
                    base
                }
            };
            let elem_bytes = self.env.types.layout(&elem_type).map(|l| l.size);
            let dim_exprs: Vec<Option<Expr>> = sizes
                .iter()
                .map(|size| size.map(|s| ast::lower(s, self.src)))
                .collect();
            let dims = dim_exprs
                .iter()
                .map(|e| self.extent(e.as_ref(), scope))
                .collect();
            let dim_texts = sizes
                .iter()
                .map(|size| size.map(|s| self.one_line(s)).unwrap_or_default())
                .collect();
            let (at, decl_span) = match declared_by_macro {
                Some((_, at, span)) => (at, span),
                None => (self.at(node), Span::of(decl)),
            };
            arrays.push(SharedArray {
                name: self.text(node).to_string(),
                elem_type,
                elem_bytes,
                dims,
                dim_exprs: Packed::new(&dim_exprs),
                dim_texts,
                is_extern,
                file_scope,
                declared_by_macro: declared_by_macro.map(|(m, _, _)| m.to_string()),
                at,
                decl_span,
                accesses: Vec::new(),
                escapes: Vec::new(),
            });
        }
        arrays
    }

    /// Arrays declared by invoking a macro whose body contains `__shared__`: the invocation is
    /// expanded textually and parsed on its own.
    fn macro_declared_arrays(&self, calls: &[Node], scope: &Bindings) -> Vec<SharedArray> {
        let mut arrays = Vec::new();
        for &call in calls {
            let Some(callee) = child(call, FIELDS.function) else {
                continue;
            };
            let name = self.text(callee);
            let Some(mac) = self.env.macro_named(name) else {
                continue;
            };
            let args: Vec<&str> = child(call, FIELDS.arguments)
                .map(|list| {
                    named_children(list)
                        .into_iter()
                        .map(|a| self.text(a))
                        .collect()
                })
                .unwrap_or_default();
            let snippet = format!(
                "void bankwise_expansion() {{ {}; }}",
                expand_macro(mac, &args)
            );
            let Some(tree) = super::parse_text(&snippet) else {
                continue;
            };
            let inner = Extractor::new(&snippet, ConstEnv::default());
            let mut declarations = Vec::new();
            walk(tree.root_node(), |node| {
                if symbols::kind(node) == "declaration"
                    && has_qualifier(node, &snippet, "__shared__")
                {
                    declarations.push(node);
                }
                true
            });
            for decl in declarations {
                // Evaluate sizes with this file's constants: reuse `self`'s environment by
                // resolving the size texts afterwards.
                for mut array in inner.shared_arrays(
                    decl,
                    scope,
                    false,
                    Some((name, self.at(call), Span::of(call))),
                ) {
                    array.elem_bytes = self.env.types.layout(&array.elem_type).map(|l| l.size);
                    let dim_exprs: Vec<Option<Expr>> = array
                        .dim_texts
                        .iter()
                        .map(|text| super::parse_expression_text(text))
                        .collect();
                    array.dims = dim_exprs
                        .iter()
                        .map(|e| self.extent(e.as_ref(), scope))
                        .collect();
                    array.dim_exprs = Packed::new(&dim_exprs);
                    arrays.push(array);
                }
            }
        }
        arrays
    }

    /// Classifies one use of `array`'s name: an element access, or an escape.
    fn classify_use(&self, array: &mut SharedArray, name: &Lineage) {
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
        } else {
            let (kind, site) = self.pointer_use(name, level);
            let name_use = Some(Span::of(name.node(0)));
            array.escapes.push(self.escape(kind, site, name_use));
        }
    }

    fn escape(&self, kind: EscapeKind, node: Node, name_use: Option<Span>) -> Escape {
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
                },
            )
        };
        let Some(parent) = lineage.parent(user) else {
            array.accesses.push(access(AccessKind::Load, None));
            return;
        };
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

/// The first extent of a kernel's one `extern __shared__` array, from the dynamic shared
/// memory its launches in this file pass (all the same): `k<<<g, 256, 256 * sizeof(float)>>>`
/// makes `extern __shared__ float s[]` 256 elements. `launches` are those of kernels named
/// like `function`.
fn dynamic_extent_from_launches(function: &mut Function, launches: &[&LaunchSite]) {
    if function.kind != FunctionKind::Kernel {
        return;
    }
    let display = function.display_name();
    let mut sizes = launches
        .iter()
        .filter(|l| l.kernel == function.name && l.instance.as_ref().is_none_or(|i| *i == display))
        .map(|l| l.shared_bytes);
    let Some(Some(bytes)) = sizes.next() else {
        return;
    };
    if bytes == 0 || sizes.any(|other| other != Some(bytes)) {
        return;
    }
    let mut dynamic = function.arrays.iter_mut().filter(|a| a.is_extern);
    let (Some(array), None) = (dynamic.next(), dynamic.next()) else {
        return;
    };
    if array.file_scope || array.dims.first() != Some(&None) {
        return;
    }
    // Bytes per first-dimension index: the element times the other extents.
    let row = array.dims[1..]
        .iter()
        .try_fold(array.elem_bytes.unwrap_or(0), |acc, d| {
            acc.checked_mul((*d)?)
        });
    if let Some(row) = row.filter(|&r| r > 0 && bytes % r == 0) {
        array.dims[0] = Some(bytes / row);
    }
}

/// Every `extern __shared__` array of a kernel starts at the same address: when a function
/// reaches more than one, none of them can be remapped alone.
fn mark_dynamic_aliases(arrays: &mut [SharedArray]) {
    let dynamic: Vec<(String, Location)> = arrays
        .iter()
        .filter(|a| a.is_extern)
        .map(|a| (a.name.clone(), a.at))
        .collect();
    if dynamic.len() < 2 {
        return;
    }
    for array in arrays.iter_mut().filter(|a| a.is_extern) {
        let others: Vec<String> = dynamic
            .iter()
            .filter(|(name, _)| *name != array.name)
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        array.escapes.push(Escape {
            kind: EscapeKind::Pointer(format!(
                "shares the dynamic shared memory with {}",
                others.join(", ")
            )),
            at: array.at,
            text: array.name.clone(),
            name_use: None,
            calls: Vec::new(),
        });
    }
}

/// The launches `k<args><<<grid, block, …>>>(…)` inside `root`, in source order, as
/// (kernel, configuration, call) nodes: a `call_expression` with a named `function` and a
/// `kernel_call_syntax` child after it. Only nodes that contain a `<` are searched.
fn launch_calls<'t>(root: Node<'t>, src: &str) -> Vec<(Node<'t>, Node<'t>, Node<'t>)> {
    let angles: Vec<usize> = src[root.byte_range()]
        .match_indices('<')
        .map(|(i, _)| root.start_byte() + i)
        .collect();
    let has_angle = |node: Node| {
        let first = angles.partition_point(|&at| at < node.start_byte());
        angles.get(first).is_some_and(|&at| at < node.end_byte())
    };
    let mut found = Vec::new();
    walk(root, |node| {
        if !has_angle(node) {
            return false;
        }
        if symbols::kind(node) == "call_expression" {
            if let Some(kernel) = child(node, FIELDS.function).filter(|f| f.is_named()) {
                let mut cursor = node.walk();
                found.extend(
                    node.children(&mut cursor)
                        .filter(|c| {
                            c.start_byte() >= kernel.end_byte()
                                && symbols::kind(*c) == "kernel_call_syntax"
                        })
                        .map(|config| (kernel, config, node)),
                );
            }
        }
        true
    });
    found
}

/// A node and its ancestors, nearest first. Climbing is O(1) per step, whereas
/// `Node::parent` walks down from the root each time (quadratic on deeply nested input).
struct Lineage<'t> {
    chain: Vec<Node<'t>>,
}

impl<'t> Lineage<'t> {
    /// The node `level` steps above the use (0 is the use itself).
    fn node(&self, level: usize) -> Node<'t> {
        self.chain[level]
    }

    fn parent(&self, level: usize) -> Option<Node<'t>> {
        self.chain.get(level + 1).copied()
    }
}

/// Like [`walk`], also passing each node's ancestors (root first, `root` included).
fn walk_with_ancestors<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>, &[Node<'t>]) -> bool) {
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    let mut descend = visit(root, &ancestors);
    loop {
        if descend {
            let parent = cursor.node();
            if cursor.goto_first_child() {
                ancestors.push(parent);
                descend = visit(cursor.node(), &ancestors);
                continue;
            }
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = visit(cursor.node(), &ancestors);
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            ancestors.pop();
        }
    }
}

/// The nodes of a subtree in source order (pre-order), for the walks a function body gets
/// several times: the flat tree stores them in that order, so a walk is a pass over an
/// array range.
struct Preorder<'t> {
    root: Node<'t>,
}

impl<'t> Preorder<'t> {
    fn of(root: Node<'t>) -> Self {
        Preorder { root }
    }

    /// [`walk`] over the subtree.
    fn walk(&self, mut visit: impl FnMut(Node<'t>) -> bool) {
        let mut next = Some(self.root);
        while let Some(node) = next {
            let descend = visit(node);
            next = node.next_in_preorder(descend, self.root);
        }
    }

    /// [`walk_with_ancestors`] over the subtree.
    fn walk_with_ancestors(&self, mut visit: impl FnMut(Node<'t>, &[Node<'t>]) -> bool) {
        let mut ancestors: Vec<Node<'t>> = Vec::new();
        let mut next = Some(self.root);
        while let Some(node) = next {
            while ancestors.last().is_some_and(|a| !a.subtree_contains(node)) {
                ancestors.pop();
            }
            let descend = visit(node, &ancestors);
            if descend {
                ancestors.push(node);
            }
            next = node.next_in_preorder(descend, self.root);
        }
    }
}

/// A function analysed once; template functions are instantiated from it per argument set.
struct Prototype {
    /// Boxed: the prototypes are collected in a vector that grows by doubling, and a
    /// function is 312 bytes.
    function: Box<Function>,
    params: Vec<TemplateParam>,
    /// The body's integer constants, unevaluated (they may depend on template arguments).
    /// Packed: every template's are kept until the whole file is scanned.
    constants: Packed<Vec<(String, Expr)>>,
    launch_bounds: Option<Expr>,
}

/// What a function body declares: see [`Extractor::local_definitions`].
struct LocalDefinitions<'t> {
    constants: Vec<(String, Expr)>,
    dim3s: HashMap<String, Vec<Expr>>,
    shared: Vec<Node<'t>>,
    /// Invocations of macros whose bodies declare `__shared__` arrays.
    shared_macro_calls: Vec<Node<'t>>,
}

/// `("T", "**")` for `T**`.
fn split_pointer(ty: &str) -> (&str, &str) {
    let base = ty.trim_end_matches('*').trim_end();
    (base, &ty[base.len()..])
}

/// Node kinds that open a C++ scope for the names declared in them.
fn is_scope(kind: &str) -> bool {
    matches!(
        kind,
        "compound_statement"
            | "for_statement"
            | "for_range_loop"
            | "lambda_expression"
            | "if_statement"
            | "while_statement"
            | "switch_statement"
            | "catch_clause"
    )
}

/// The names of the parameters of the function whose body is `body`.
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

/// The comment directly above `node` (on the line before it, or the same line).
fn comment_above<'t>(node: Node<'t>, lines: &LineIndex) -> Option<Node<'t>> {
    node.prev_sibling()
        .filter(|s| symbols::kind(*s) == "comment")
        .filter(|c| lines.location(c.end_byte()).line + 1 >= lines.location(node.start_byte()).line)
}

/// Whether `callee` names one of CUDA's atomic functions (`atomicAdd`, `::atomicCAS`, ...).
pub fn is_atomic(callee: &str) -> bool {
    callee.starts_with("atomic") || callee.starts_with("::atomic")
}

fn is_integer_type(ty: &str) -> bool {
    let ty = ty
        .trim_start_matches("static ")
        .trim_start_matches("const ")
        .trim_start_matches("constexpr ");
    matches!(
        ty,
        "int"
            | "unsigned"
            | "unsigned int"
            | "long"
            | "unsigned long"
            | "long long"
            | "unsigned long long"
            | "short"
            | "unsigned short"
            | "size_t"
            | "int32_t"
            | "uint32_t"
            | "int64_t"
            | "uint64_t"
            | "uint"
            | "auto"
    )
}

/// The first identifier of a declarator or lvalue: `p` in `*p`, `p[3]`, `p.x = …`, and `v`
/// in a member's `v[4]`.
pub(super) fn leftmost_identifier<'s>(node: Node, src: &'s str) -> &'s str {
    let mut found = "";
    walk(node, |n| {
        if found.is_empty() && matches!(symbols::kind(n), "identifier" | "field_identifier") {
            found = &src[n.byte_range()];
        }
        found.is_empty()
    });
    found
}

fn has_qualifier(decl: Node, src: &str, keyword: &str) -> bool {
    // Most declarations do not mention the keyword at all: a text search rules them out
    // without visiting the children.
    if !src[decl.byte_range()].contains(keyword) {
        return false;
    }
    named_children(decl).iter().any(|c| {
        matches!(
            symbols::kind(*c),
            "type_qualifier" | "storage_class_specifier" | "attribute_specifier"
        ) && src[c.byte_range()].trim() == keyword
    })
}

/// Whether a function definition carries `__global__` / `__device__` (as a modifier, not
/// inside its body).
fn has_modifier(function: Node, src: &str, keyword: &str) -> bool {
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

fn function_name(function: Node, src: &str) -> Option<String> {
    let mut declarator = child(function, FIELDS.declarator)?;
    while symbols::kind(declarator) != "function_declarator" {
        declarator = child(declarator, FIELDS.declarator)?;
    }
    let name = child(declarator, FIELDS.declarator)?;
    let name = match symbols::kind(name) {
        "template_function" => child(name, FIELDS.name)?,
        _ => name,
    };
    let text = compact_text(name, src);
    Some(text.rsplit("::").next().unwrap_or(&text).to_string())
}

/// Whether a struct, union or class specifier declares data members only: no base class, and
/// nothing in its body but field declarations (a method declared there has no layout, so
/// the struct has none) and comments.
fn declares_data_only(specifier: Node) -> bool {
    let Some(body) = child(specifier, FIELDS.body) else {
        return false;
    };
    !named_children(specifier)
        .iter()
        .any(|c| symbols::kind(*c) == "base_class_clause")
        && named_children(body)
            .iter()
            .all(|c| matches!(symbols::kind(*c), "field_declaration" | "comment"))
}

struct TemplateParam {
    name: String,
    is_type: bool,
    default: Option<String>,
}

fn template_parameters(outer: Node, src: &str) -> Vec<TemplateParam> {
    if symbols::kind(outer) != "template_declaration" {
        return Vec::new();
    }
    let Some(list) = child(outer, FIELDS.parameters) else {
        return Vec::new();
    };
    named_children(list)
        .into_iter()
        .filter_map(|param| {
            let is_type = symbols::kind(param).contains("type_parameter");
            let name = if is_type {
                named_children(param)
                    .into_iter()
                    .find(|c| symbols::kind(*c) == "type_identifier")
                    .or_else(|| child(param, FIELDS.name))?
            } else {
                let declarator = child(param, FIELDS.declarator)?;
                let ident = leftmost_identifier(declarator, src);
                return Some(TemplateParam {
                    name: ident.to_string(),
                    is_type,
                    default: child(param, FIELDS.default_value).map(|d| compact_text(d, src)),
                });
            };
            Some(TemplateParam {
                name: src[name.byte_range()].to_string(),
                is_type,
                default: child(param, FIELDS.default_type).map(|d| compact_text(d, src)),
            })
        })
        .collect()
}

/// Substitutes a function-like macro's parameters by the argument texts.
fn expand_macro(mac: &Macro, args: &[&str]) -> String {
    let Some(params) = &mac.params else {
        return mac.body.clone();
    };
    let mut out = String::with_capacity(mac.body.len());
    let mut rest = mac.body.as_str();
    for token in identifier_tokens(&mac.body) {
        let offset = token.as_ptr() as usize - rest.as_ptr() as usize;
        out.push_str(&rest[..offset]);
        match params.iter().position(|p| p == token) {
            Some(i) => out.push_str(args.get(i).copied().unwrap_or("")),
            None => out.push_str(token),
        }
        rest = &rest[offset + token.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything the later stages read, in a comparable form.
    fn summary(file: &ParsedFile) -> String {
        let mut out = String::new();
        for f in &file.functions {
            out.push_str(&format!(
                "{} {:?} {:?} {:?}\n",
                f.display_name(),
                f.kind,
                f.launch_bounds,
                f.callees
            ));
            for a in &f.arrays {
                out.push_str(&format!(
                    "  {} {} {:?} {:?} {:?}\n",
                    a.name, a.elem_type, a.elem_bytes, a.dims, a.escapes
                ));
                for access in &a.accesses {
                    out.push_str(&format!(
                        "    {:?} {} {} {:?}\n",
                        access.kind,
                        access.at,
                        access.text,
                        access.detail().member
                    ));
                }
            }
        }
        for l in &file.launches {
            out.push_str(&format!(
                "launch {} {:?} {:?}\n",
                l.kernel, l.instance, l.block
            ));
        }
        out
    }

    #[test]
    fn chunked_parsing_gives_the_same_model_as_whole_file_parsing() {
        let mut src = String::from("__shared__ float shared_everywhere[32];\n");
        for i in 0..60 {
            src.push_str(&format!(
                "#define T{i} 32
#define MACRO_LOAD{i}(k) escaped{i}[k]
enum {{ E{i} = {i} + 1 }};
struct S{i} {{ float a, b; }};
template <int R = 8, typename V = float>
__global__ void __launch_bounds__(T{i} * R) kernel{i}(V *out) {{
    __shared__ V tile[T{i}][T{i} + 1];
    __shared__ S{i} pairs[E{i}], escaped{i}[4];
    for (int j = 0; j < T{i}; j += R) {{
        tile[threadIdx.y + j][threadIdx.x] += out[j];
    }}
    pairs[threadIdx.x % E{i}].b = tile[threadIdx.x][threadIdx.y] + shared_everywhere[threadIdx.x];
    out[0] = MACRO_LOAD{i}(1).a;
}}
void host{i}(float *p) {{ kernel{i}<4><<<1, dim3(T{i}, 4)>>>(p); kernel{i}<<<1, dim3(T{i}, 8)>>>(p); }}
"
            ));
        }
        let defines = ["T3=16".to_string()];
        let (whole_clean, whole) =
            Extractor::run(&src, &defines, &super::super::chunks::whole(&src));
        let chunks = super::super::chunks::top_level_chunks(&src, 1024);
        assert!(chunks.len() > 20, "{} chunks", chunks.len());
        let (chunked_clean, chunked) = Extractor::run(&src, &defines, &chunks);
        assert!(whole_clean && chunked_clean);
        let whole = summary(&whole.finish());
        assert_eq!(whole, summary(&chunked.finish()));
        assert!(
            whole.contains("kernel3<4, float> Kernel Some(64)"),
            "{whole}"
        );
        assert!(
            whole.contains("tile float Some(4) [Some(16), Some(17)]"),
            "{whole}"
        );
        assert!(
            whole.contains("launch kernel5 Some(\"kernel5<8, float>\")"),
            "{whole}"
        );
    }
}
