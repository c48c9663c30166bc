//! Integer constants, at file scope and in function bodies, and what else a body declares
//! that evaluation needs (`dim3` variables, `__shared__` declarations).
use super::walk::{named_children, Preorder};
use super::{has_qualifier, leftmost_identifier, Extractor};
use crate::parse::ast::{self, Expr, ExprKind, Span};
use crate::parse::consts::Bindings;
use crate::parse::symbols::{self, child, children_in, FIELDS};
use crate::parse::syntax::Node;
use std::collections::{HashMap, HashSet};

impl<'s> Extractor<'s> {
    /// The integer variables `node` declares with an initializer, when they are
    /// `const`/`constexpr` or never assigned afterwards (`reassigned`), as `(name, value)`.
    pub(super) fn integer_definitions(
        &self,
        node: Node,
        reassigned: &HashSet<String>,
    ) -> Vec<(String, Expr)> {
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
    pub(super) fn bind_constants(
        &self,
        definitions: &[(String, Expr)],
        base: &Bindings,
    ) -> Bindings {
        let mut scope = base.clone();
        for (name, value) in definitions {
            if let Ok(v) = self.env.eval(value, &scope) {
                scope.ints.insert(name.clone(), v);
            }
        }
        scope
    }

    /// What a function body declares that evaluation needs: integer constants (in order,
    /// unevaluated, so a template can bind them per instantiation), `dim3` variables, and the
    /// `__shared__` declarations, direct or through a macro. `dead` branches are skipped.
    pub(super) fn local_definitions<'t>(
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
}

/// What a function body declares: see [`Extractor::local_definitions`].
pub(super) struct LocalDefinitions<'t> {
    pub(super) constants: Vec<(String, Expr)>,
    pub(super) dim3s: HashMap<String, Vec<Expr>>,
    pub(super) shared: Vec<Node<'t>>,
    /// Invocations of macros whose bodies declare `__shared__` arrays.
    pub(super) shared_macro_calls: Vec<Node<'t>>,
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
