//! Walks one syntax tree and extracts functions, shared arrays, their uses and launch sites.
//!
//! Every walk here is iterative (a tree cursor or an explicit stack), so deeply nested input
//! cannot overflow the stack.
//!
//! This module holds the entry point, the [`Extractor`] that accumulates a file's model and
//! its top-level walk; each concern of the walk is in a submodule.
mod arrays;
mod constants;
mod functions;
mod host_bounds;
mod launches;
mod preprocess;
mod providers;
mod templates;
mod types;
mod uses;
mod walk;

use self::launches::dynamic_extent_from_launches;
use self::providers::SharedProvider;
use self::templates::Prototype;
pub use self::uses::is_atomic;
use self::walk::named_children;
pub(crate) use self::walk::walk;
use super::ast::compact_text;
use super::consts::{Bindings, ConstEnv};
use super::model::*;
use super::source::LineIndex;
use super::specifiers::{self, SpecifierUse};
use super::symbols::{self, child, FIELDS};
use super::syntax::{Node, SyntaxTree};
use crate::parse::include::Prelude;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

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
    /// The names written before a `<<<` anywhere in the file: a function launched so is a
    /// kernel, however its `__global__` is spelled (`RAFT_KERNEL f(…)` from a header).
    launched_names: HashSet<String>,
    /// The names of the functions the file declares `__global__`, found in the text: a call
    /// that passes one of them with a grid and a block launches it.
    kernel_names: HashSet<String>,
    /// Launches in host function templates, bound once every instantiation is known.
    host_template_launches: Vec<launches::HostTemplateLaunch>,
    /// The names written with template arguments somewhere in the file (`f<512>(…)`),
    /// found in one scan when first asked.
    template_named: std::cell::OnceCell<HashSet<String>>,
    /// Calls with template arguments (`loadFromGmem<BM, BK>(…)`), each an instance to make.
    template_calls: Vec<templates::TemplateCall>,
    /// Host functions that may compute a block size, by name ([`host_bounds`]).
    host_functions: HashMap<String, host_bounds::HostFunction>,
    /// Launches in other files of kernels that are not templates, with the dynamic shared
    /// memory they pass: they size this file's `extern __shared__` arrays, nothing else.
    sizing_launches: Vec<LaunchSite>,
    /// The byte range of every comment in the file, found in one scan when first asked.
    comment_spans: std::cell::OnceCell<Vec<std::ops::Range<usize>>>,
    /// Uses of macros standing for `__global__`/`__device__` that were parsed as spaces, in
    /// order ([`specifiers`]).
    specifier_uses: &'s [SpecifierUse],
    /// Kernels kept as their names, places and kinds only: no arrays, uses or body
    /// ([`Skipped`]).
    skipped: Option<&'s Skipped>,
    /// The named namespaces around the item being read, outermost first.
    namespace: Vec<String>,
}

/// Syntax errors reported one by one per file; the rest are counted in one note.
const MAX_SYNTAX_ERRORS_SHOWN: usize = 20;

/// Keeps the first [`MAX_SYNTAX_ERRORS_SHOWN`] syntax errors of `diagnostics` (in source
/// order) and counts the rest in one note where they start: past a few, more lines tell
/// nothing new, and a file that is not C at all gives hundreds.
fn limit_syntax_errors(diagnostics: &mut Vec<Diagnostic>) {
    let is_syntax =
        |d: &Diagnostic| d.severity == Severity::Error && d.message.starts_with("syntax error");
    let mut syntax: Vec<Location> = diagnostics
        .iter()
        .filter(|d| is_syntax(d))
        .map(|d| d.at)
        .collect();
    if syntax.len() <= MAX_SYNTAX_ERRORS_SHOWN {
        return;
    }
    syntax.sort();
    let last_shown = syntax[MAX_SYNTAX_ERRORS_SHOWN - 1];
    let first_hidden = syntax[MAX_SYNTAX_ERRORS_SHOWN];
    let hidden = syntax.len() - MAX_SYNTAX_ERRORS_SHOWN;
    let mut kept = 0;
    diagnostics.retain(|d| {
        if !is_syntax(d) {
            return true;
        }
        kept += 1;
        d.at <= last_shown && kept <= MAX_SYNTAX_ERRORS_SHOWN
    });
    diagnostics.push(Diagnostic {
        severity: Severity::Note,
        at: first_hidden,
        message: format!("{hidden} more syntax errors from here on are not shown"),
    });
}

pub fn extract(src: &str, defines: &[String]) -> ParsedFile {
    extract_with(src, defines, &Prelude::default(), &[], &Skipped::default())
}

/// The kernels (by name) whose bodies the front end does not read: translation validation
/// skips the output's kernels whose text, callees and context the rewrite left as they were
/// (`pipeline::validate`), whose analysis is the input's. Each keeps its name, kind, place
/// and block annotations; it has no arrays and no body.
#[derive(Debug, Default, Clone)]
pub struct Skipped {
    pub kernels: HashSet<String>,
}

impl Skipped {
    /// Whether `function` is one of the kernels whose bodies are not read.
    pub fn skips(&self, function: &Function) -> bool {
        function.kind == FunctionKind::Kernel && self.kernels.contains(&function.name)
    }
}

/// [`extract`] with what the file's headers define.
/// [`extract`] with what the file's headers define, and the launches in other files of the
/// run of templates the file may define (each makes an instance).
pub fn extract_with(
    src: &str,
    defines: &[String],
    prelude: &Prelude,
    launches_elsewhere: &[LaunchSite],
    skipped: &Skipped,
) -> ParsedFile {
    let parsed = super::pragmas::blank_loop_pragmas(src, |name| {
        macro_body(name, src, defines, prelude).is_some_and(|body| super::pragmas::is_code(&body))
    });
    let (parsed, specifier_uses) = mask_specifier_macros(parsed, defines, prelude);
    extract_parsed(
        &parsed,
        defines,
        prelude,
        launches_elsewhere,
        &specifier_uses,
        skipped,
    )
}

/// `src` with the uses of macros that stand for declaration specifiers parsed as the
/// specifiers that matter ([`specifiers`]), from every definition the file, `-D` and the
/// headers give.
fn mask_specifier_macros<'s>(
    src: Cow<'s, str>,
    defines: &[String],
    prelude: &Prelude,
) -> (Cow<'s, str>, Vec<SpecifierUse>) {
    // Every definition of every name, indexed once: the masking asks for each identifier.
    let mut known: HashMap<&str, Vec<specifiers::Definition>> = HashMap::new();
    let own = specifiers::file_definitions(&src);
    for (name, all) in &own {
        known
            .entry(name)
            .or_default()
            .extend(all.iter().map(specifiers::FileDefinition::definition));
    }
    let command_line: Vec<(&str, Option<Vec<String>>, &str)> = defines
        .iter()
        .map(|d| {
            let (head, body) = d.split_once('=').unwrap_or((d, "1"));
            match head.split_once('(') {
                Some((name, params)) => (
                    name,
                    Some(
                        params
                            .trim_end_matches(')')
                            .split(',')
                            .map(|p| p.trim().to_string())
                            .collect(),
                    ),
                    body,
                ),
                None => (head, None, body),
            }
        })
        .collect();
    let others = command_line
        .iter()
        .map(|(name, params, body)| (*name, params, *body))
        .chain(
            prelude
                .macros
                .iter()
                .map(|(name, params, body)| (name.as_str(), params, body.as_str())),
        );
    for (name, params, body) in others {
        known.entry(name).or_default().push(specifiers::Definition {
            params: params.as_deref(),
            body,
        });
    }
    let definitions = |name: &str| -> Vec<specifiers::Definition> {
        known.get(name).cloned().unwrap_or_default()
    };
    let (masked, uses) = specifiers::mask_specifier_macros(&src, &definitions);
    match masked {
        Cow::Borrowed(_) => (src, uses),
        Cow::Owned(text) => (Cow::Owned(text), uses),
    }
}

/// The replacement text of macro `name` as the file, `-D` or the headers define it.
fn macro_body(name: &str, src: &str, defines: &[String], prelude: &Prelude) -> Option<String> {
    let own = src.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix('#')?.trim_start();
        let rest = rest
            .strip_prefix("define")?
            .trim_start()
            .strip_prefix(name)?;
        rest.starts_with(|c: char| c.is_whitespace() || c == '(')
            .then(|| rest.to_string())
            .or_else(|| rest.is_empty().then(String::new))
    });
    let command_line = defines.iter().find_map(|d| {
        let rest = d.strip_prefix(name)?;
        rest.strip_prefix('=')
            .map(str::to_string)
            .or_else(|| rest.is_empty().then(|| "1".to_string()))
    });
    let header = prelude
        .macros
        .iter()
        .find(|(defined, _, _)| defined == name)
        .map(|(_, _, body)| body.clone());
    own.or(command_line).or(header)
}

fn extract_parsed(
    src: &str,
    defines: &[String],
    prelude: &Prelude,
    launches_elsewhere: &[LaunchSite],
    specifier_uses: &[SpecifierUse],
    skipped: &Skipped,
) -> ParsedFile {
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
        let (clean, ex) = Extractor::run(
            src,
            defines,
            prelude,
            launches_elsewhere,
            specifier_uses,
            skipped,
            &plan,
        );
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
        None => Extractor::run(
            src,
            defines,
            prelude,
            launches_elsewhere,
            specifier_uses,
            skipped,
            &super::chunks::whole(src),
        )
        .1
        .finish(),
    }
}

impl<'s> Extractor<'s> {
    /// Extracts the file parsing `ranges` one at a time; also says whether no piece had a
    /// syntax error.
    fn run(
        src: &'s str,
        defines: &[String],
        prelude: &Prelude,
        launches_elsewhere: &[LaunchSite],
        specifier_uses: &'s [SpecifierUse],
        skipped: &'s Skipped,
        ranges: &[std::ops::Range<usize>],
    ) -> (bool, Self) {
        let mut env = ConstEnv::with_command_line(defines);
        prelude.seed(&mut env);
        let mut ex = Extractor::new(src, env);
        ex.specifier_uses = specifier_uses;
        ex.skipped = Some(skipped);
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
        ex.bind_host_template_launches();
        // Launches of templates from other files: only those of templates defined here.
        let defined: HashSet<&str> = ex
            .templates
            .iter()
            .map(|t| t.function.name.as_str())
            .collect();
        let (wanted, sizing): (Vec<LaunchSite>, Vec<LaunchSite>) = launches_elsewhere
            .iter()
            .cloned()
            .partition(|l| !l.template_args.is_empty());
        ex.launches.extend(
            wanted
                .into_iter()
                .filter(|l| defined.contains(l.kernel.as_str())),
        );
        // The others are the launches of kernels that are not templates, for the dynamic
        // shared memory they pass: their block shapes reach the analysis another way.
        ex.sizing_launches = sizing;
        ex.analyse_templates();
        (clean, ex)
    }

    fn finish(mut self) -> ParsedFile {
        self.functions.sort_by_key(|f| f.span.start);
        limit_syntax_errors(&mut self.diagnostics);
        // Each kernel's launches looked up by name: scanning every launch for every kernel
        // grows with the square of the file.
        let mut launches_of: HashMap<&str, Vec<&LaunchSite>> = HashMap::new();
        for launch in self.launches.iter().chain(&self.sizing_launches) {
            launches_of.entry(&launch.kernel).or_default().push(launch);
        }
        for function in &mut self.functions {
            let launches = launches_of
                .get(function.name.as_str())
                .map_or(&[][..], Vec::as_slice);
            if let Some(note) = dynamic_extent_from_launches(function, launches) {
                self.diagnostics.push(note);
            }
        }
        ParsedFile {
            functions: self.functions,
            launches: self.launches,
            diagnostics: self.diagnostics,
            syntax_errors: self.syntax_errors,
            constants: self.env,
            suppressions: crate::parse::suppress::suppressions(self.src),
            headers: Vec::new(),
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
            launched_names: launched_names(src),
            kernel_names: global_function_names(src),
            host_template_launches: Vec::new(),
            template_named: std::cell::OnceCell::new(),
            comment_spans: std::cell::OnceCell::new(),
            sizing_launches: Vec::new(),
            template_calls: Vec::new(),
            host_functions: HashMap::new(),
            specifier_uses: &[],
            skipped: None,
            namespace: Vec::new(),
        }
    }

    /// Whether the file writes `name` with template arguments anywhere (`name<…>`, not
    /// `name << …`).
    fn named_with_template_arguments(&self, name: &str) -> bool {
        self.template_named
            .get_or_init(|| names_before_angle(self.src))
            .contains(name)
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
        // Each level's items, whether it opened a named namespace, and the innermost
        // undecidable conditional around it.
        let mut stack = vec![(named_children(root).into_iter(), false, None::<Node>)];
        while let Some((items, _, undecided)) = stack.last_mut() {
            let undecided = *undecided;
            let Some(item) = items.next() else {
                if let Some((_, true, _)) = stack.pop() {
                    self.namespace.pop();
                }
                continue;
            };
            match symbols::kind(item) {
                "preproc_def" | "preproc_function_def" => self.define(item, undecided),
                "function_definition" => {
                    self.function(item);
                    self.host_function(item);
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
                            "struct_specifier" | "class_specifier" => {
                                self.template_record(item, child)
                            }
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
                    let named = match child(item, FIELDS.name) {
                        Some(name) if symbols::kind(item) == "namespace_definition" => {
                            self.namespace.push(self.one_line(name));
                            true
                        }
                        _ => false,
                    };
                    match child(item, FIELDS.body) {
                        Some(body) if symbols::kind(body) == "declaration_list" => {
                            stack.push((named_children(body).into_iter(), named, undecided))
                        }
                        // `extern "C" __global__ void k() {…}`: the body is the item itself.
                        Some(body) => stack.push((vec![body].into_iter(), named, undecided)),
                        None if named => {
                            self.namespace.pop();
                        }
                        None => {}
                    }
                }
                "declaration_list" | "preproc_else" => {
                    stack.push((named_children(item).into_iter(), false, undecided))
                }
                "preproc_ifdef" | "preproc_if" | "preproc_elif" | "preproc_elifdef" => {
                    let undecided = match self.preproc_condition(item) {
                        None => Some(item),
                        Some(_) => undecided,
                    };
                    stack.push((self.live_preproc_items(item).into_iter(), false, undecided))
                }
                _ => {}
            }
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
            self.define_scoped_value(&name, value);
        }
    }

    /// A namespace-scope constant, by its name and (in a namespace) its qualified name:
    /// `cfg::kTile` is how code outside `namespace cfg` names it.
    fn define_scoped_value(&mut self, name: &str, value: i64) {
        self.env.define_value(name, value);
        if !self.namespace.is_empty() {
            let qualified = format!("{}::{name}", self.namespace.join("::"));
            self.env.define_value(&qualified, value);
        }
    }
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

#[cfg(test)]
mod tests;

/// The names written before each `<<<` of `src` (`k<<<`, `k<T, 4> <<<`, `ns::k<<<`), found in
/// the text, before any parse: the last identifier before the launch's template arguments.
fn launched_names(src: &str) -> HashSet<String> {
    let bytes = src.as_bytes();
    let mut names = HashSet::new();
    let mut from = 0;
    while let Some(found) = src[from..].find("<<<") {
        let launch = from + found;
        from = launch + 3;
        let skip_space = |mut at: usize| {
            while at > 0 && bytes[at - 1].is_ascii_whitespace() {
                at -= 1;
            }
            at
        };
        let mut end = skip_space(launch);
        if end > 0 && bytes[end - 1] == b'>' {
            // Template arguments: back to the `<` that opens them.
            let mut depth = 0usize;
            while end > 0 {
                end -= 1;
                match bytes[end] {
                    b'>' => depth += 1,
                    b'<' => depth -= 1,
                    b';' | b'{' | b'}' => break,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
            }
            end = skip_space(end);
        }
        let name = identifier_ending_at(src, end);
        if !name.is_empty() {
            names.insert(name.to_string());
        }
    }
    names
}

/// The identifier characters of `text` that end at byte `end` (empty when there are none).
fn identifier_ending_at(text: &str, end: usize) -> &str {
    let bytes = text.as_bytes();
    let mut start = end;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    &text[start..end]
}

/// The names of the functions declared `__global__` in `src`, found in the text: the name
/// before the first `(` after each `__global__` (past `__launch_bounds__(…)`).
fn global_function_names(src: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    for (at, _) in src.match_indices("__global__") {
        let rest = &src[at + "__global__".len()..];
        // The head is near: 512 bytes at most, cut where a character starts.
        let mut cut = rest.len().min(512);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut rest = &rest[..cut];
        if let Some(bounds) = rest.find("__launch_bounds__") {
            // Skip the bounds' own parentheses.
            let after = &rest[bounds..];
            let close = after.find(')').map_or(after.len(), |c| c + 1);
            rest = &after[close..];
        }
        let Some(open) = rest.find('(') else {
            continue;
        };
        let before = rest[..open].trim_end();
        let name = identifier_ending_at(before, before.len());
        if !name.is_empty() {
            names.insert(name.to_string());
        }
    }
    names
}

/// The identifiers of `src` followed by `<` (and not `<<`), spaces between allowed: the names
/// the file may write with template arguments.
fn names_before_angle(src: &str) -> HashSet<String> {
    let bytes = src.as_bytes();
    let mut names = HashSet::new();
    for (at, _) in src.match_indices('<') {
        if bytes.get(at + 1) == Some(&b'<') || (at > 0 && bytes[at - 1] == b'<') {
            continue;
        }
        let mut end = at;
        while end > 0 && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let name = identifier_ending_at(src, end);
        if !name.is_empty() {
            names.insert(name.to_string());
        }
    }
    names
}
