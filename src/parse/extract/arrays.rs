//! `__shared__` array declarations (direct, or through a macro) and their extents, and the
//! aliasing of a kernel's `extern __shared__` arrays.
use super::preprocess::expand_macro;
use super::walk::{named_children, walk};
use super::{has_qualifier, Extractor};
use crate::parse::ast::{self, Expr, Span};
use crate::parse::consts::{Bindings, ConstEnv, Unresolved};
use crate::parse::model::*;
use crate::parse::packed::Packed;
use crate::parse::symbols::{self, child, children_in, FIELDS};
use crate::parse::syntax::Node;

impl<'s> Extractor<'s> {
    pub(super) fn extent(&self, size: Option<&Expr>, scope: &Bindings) -> Option<u64> {
        self.env
            .eval(size?, scope)
            .ok()
            .and_then(|v| u64::try_from(v).ok())
    }

    /// Warns about the extents and the element type of `array` that stay unknown;
    /// `type_params` are the function's type template parameters, which `-D` can bind.
    pub(super) fn report_unknown_extents(
        &mut self,
        function: &Function,
        array: &SharedArray,
        type_params: &[&str],
    ) {
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
            let base = array.elem_type.trim_end_matches(['*', ' ']);
            let hint = if type_params.contains(&base) {
                format!("; pass -D {base}=<type>")
            } else {
                String::new()
            };
            let message = format!(
                "element type `{}` of `{}` in `{}` has no known size{hint}",
                array.elem_type,
                array.name,
                function.display_name()
            );
            self.diagnose(Severity::Warning, array.at, message);
        }
    }

    /// The arrays one `__shared__` declaration declares (scalars are skipped).
    pub(super) fn shared_arrays(
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
            if symbols::kind(node) != "identifier" {
                continue;
            }
            // A scalar is no array, unless it is a record with array members: then it is one
            // element, whose members' accesses are simulated like those of `s[0]`.
            let record_scalar = sizes.is_empty() && !pointer && {
                let ty = scope.types.get(&type_text).unwrap_or(&type_text);
                self.env
                    .types
                    .members(ty)
                    .is_some_and(|members| members.iter().any(|m| !m.extents.is_empty()))
            };
            if sizes.is_empty() && !record_scalar {
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
            let mut dims: Vec<Option<u64>> = dim_exprs
                .iter()
                .map(|e| self.extent(e.as_ref(), scope))
                .collect();
            let mut dim_texts: Vec<String> = sizes
                .iter()
                .map(|size| size.map(|s| self.one_line(s)).unwrap_or_default())
                .collect();
            if record_scalar {
                dims.push(Some(1));
                dim_texts.push(String::new());
            }
            let (at, decl_span) = match declared_by_macro {
                Some((_, at, span)) => (at, span),
                None => (self.at(node), Span::of(decl)),
            };
            let escapes = dim_texts
                .iter()
                .find_map(|text| self.ambiguous_macro_in(text))
                .map(|(name, directive)| Escape {
                    kind: EscapeKind::AmbiguousExtent(name, directive),
                    at,
                    text: dim_texts.join("]["),
                    name_use: None,
                    calls: Vec::new(),
                })
                .into_iter()
                .collect();
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
                record_scalar,
                at,
                decl_span,
                accesses: Vec::new(),
                escapes,
            });
        }
        arrays
    }

    /// Arrays declared by invoking a macro whose body contains `__shared__`: the invocation is
    /// expanded textually and parsed on its own.
    pub(super) fn macro_declared_arrays(
        &self,
        calls: &[Node],
        scope: &Bindings,
    ) -> Vec<SharedArray> {
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
            let Some(tree) = crate::parse::parse_text(&snippet) else {
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
                        .map(|text| crate::parse::parse_expression_text(text))
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
}

/// Every `extern __shared__` array of a kernel starts at the same address: when a function
/// reaches more than one, none of them can be remapped alone.
pub(super) fn mark_dynamic_aliases(arrays: &mut [SharedArray]) {
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
