//! The preprocessor: `#define`s and function-like macro expansion, and which `#if`/`#ifdef`
//! branches are live (at file scope and inside function bodies).
use super::walk::{named_children, Preorder};
use super::Extractor;
use crate::parse::ast;
use crate::parse::consts::{identifier_tokens, Macro};
use crate::parse::model::Location;
use crate::parse::symbols::{self, child, FIELDS};
use crate::parse::syntax::Node;

impl<'s> Extractor<'s> {
    /// The items of a preprocessor conditional that can be live. An undecidable condition keeps
    /// both branches (the first definition of a name wins).
    pub(super) fn live_preproc_items<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
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
    pub(super) fn preproc_condition(&self, node: Node) -> Option<bool> {
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
                let name = self.text(child(node, FIELDS.name)?);
                if self.env.varies_between_passes(name) {
                    return None;
                }
                Some(self.env.is_defined(name) != negated)
            }
            _ => child(node, FIELDS.condition)
                .and_then(|cond| self.env.eval_condition(&ast::lower(cond, self.src)).ok()),
        }
    }

    /// Records a `#define`; `undecided` is the innermost conditional around it that the
    /// analysis cannot decide, where a second, different definition makes the macro
    /// ambiguous.
    pub(super) fn define(&mut self, node: Node, undecided: Option<Node>) {
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
        if let (Some(conditional), Some(earlier)) = (undecided, self.env.source_macro(&name)) {
            if earlier.body.trim() != body.trim() {
                let text = self.text(conditional);
                let directive = text.lines().next().unwrap_or(text).trim().to_string();
                self.env.ambiguous.entry(name.clone()).or_insert(directive);
            }
        }
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

    /// Byte ranges of `#if`/`#ifdef` branches inside `body` that are known to be dead.
    pub(super) fn dead_branches(
        &self,
        body: Node,
        nodes: &Preorder,
    ) -> Vec<std::ops::Range<usize>> {
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
}

impl Extractor<'_> {
    /// The first line of a preprocessor conditional (`#if __CUDA_ARCH__ >= 800`).
    pub(super) fn directive_line(&self, node: Node) -> String {
        let text = self.text(node);
        text.lines().next().unwrap_or(text).trim().to_string()
    }

    /// Where byte `at` of `dead`, a branch of a preprocessor conditional that this
    /// configuration leaves out, is, and the directive that opens the branch.
    pub(super) fn inactive_branch(&self, dead: Node, at: usize) -> (Location, String) {
        let first_line = |node: Node| self.directive_line(node);
        let opens_itself = matches!(
            symbols::kind(dead),
            "preproc_else" | "preproc_elif" | "preproc_elifdef"
        );
        let directive = match dead.parent() {
            // A dead `#else` names the conditional it belongs to.
            Some(parent) if opens_itself && first_line(dead).starts_with("#else") => {
                format!("{} after {}", first_line(dead), first_line(parent))
            }
            Some(parent) if !opens_itself => first_line(parent),
            _ => first_line(dead),
        };
        (self.lines.location(at), directive)
    }
}

impl Extractor<'_> {
    /// The first macro `text` uses, directly or through other macros, that is
    /// [ambiguous](crate::parse::ConstEnv::ambiguous), with the conditional that makes it so.
    pub(super) fn ambiguous_macro_in(&self, text: &str) -> Option<(String, String)> {
        if self.env.ambiguous.is_empty() {
            return None;
        }
        let mut pending: Vec<(String, usize)> = identifier_tokens(text)
            .map(|t| (t.to_string(), 0))
            .collect();
        let mut seen = std::collections::HashSet::new();
        while let Some((name, depth)) = pending.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            if let Some(directive) = self.env.ambiguous.get(&name) {
                return Some((name, directive.clone()));
            }
            if depth < MAX_MACRO_DEPTH {
                if let Some(mac) = self.env.macro_named(&name) {
                    pending
                        .extend(identifier_tokens(&mac.body).map(|t| (t.to_string(), depth + 1)));
                }
            }
        }
        None
    }
}

/// Macros inside macros followed when looking for an ambiguous one.
const MAX_MACRO_DEPTH: usize = 16;

/// Substitutes a function-like macro's parameters by the argument texts.
pub(super) fn expand_macro(mac: &Macro, args: &[&str]) -> String {
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
