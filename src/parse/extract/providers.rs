//! Shared-memory providers: functions (like the CUDA samples' `SharedMemory<T>`) that return
//! the dynamic shared memory, and the arrays their calls stand for.
use super::templates::template_parameters;
use super::walk::{named_children, walk};
use super::{function_name, has_qualifier, leftmost_identifier, Extractor};
use crate::parse::ast::{compact_text, Span};
use crate::parse::consts::Bindings;
use crate::parse::model::*;
use crate::parse::packed::Packed;
use crate::parse::symbols::{child, FIELDS};
use crate::parse::syntax::Node;

/// A call of a [`SharedProvider`] in a function body.
pub(super) struct ProviderCall {
    span: Span,
    at: Location,
    text: String,
    /// The array it stands for, named after the call as written: `SharedMemory<T>()`.
    array: String,
    elem_type: String,
}

/// A function whose result is the `extern __shared__` array it declares, as `T *`.
pub(super) struct SharedProvider {
    /// The element type of the returned pointer, as written (`T`, `float`).
    pointee: String,
    /// The provider's template parameters, for binding `pointee` at a call.
    template_params: Vec<String>,
}

impl<'s> Extractor<'s> {
    /// Registers every function of `root` that returns its own `extern __shared__` array.
    pub(super) fn find_shared_providers(&mut self, root: Node) {
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
        // A member of a struct (template): its call names the struct (`SharedMemory<T>::
        // GetPointer()`), whose template parameters bind the pointee.
        let structure = definition
            .parent()
            .filter(|list| list.kind() == "field_declaration_list")
            .and_then(|list| list.parent());
        let (name, template) = match structure {
            Some(structure) if declarator.kind() == "operator_cast" => {
                let name = child(structure, FIELDS.name)?;
                (self.text(name).to_string(), structure.parent())
            }
            Some(structure) => {
                let name = child(structure, FIELDS.name)?;
                let member = function_name(definition, self.src)?;
                (format!("{}::{member}", self.text(name)), structure.parent())
            }
            None => (function_name(definition, self.src)?, definition.parent()),
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

    /// For a call of a shared-memory provider (`SharedMemory<T>()`): its name and the
    /// element type of the pointer it returns here.
    pub(super) fn provider_call(
        &self,
        call: Node,
        scope_bindings: &Bindings,
    ) -> Option<ProviderCall> {
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
            // `SharedMemory<float>::GetPointer()`: a static member of a struct template.
            "qualified_identifier" => {
                let scope = child(function, FIELDS.scope)?;
                let member = child(function, FIELDS.name)?;
                let (structure, arguments) = match scope.kind() {
                    "template_type" => (
                        self.text(child(scope, FIELDS.name)?),
                        scope
                            .child_by_field_id(FIELDS.arguments)
                            .map(named_children)
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| self.one_line(a))
                            .collect(),
                    ),
                    _ => (self.text(scope), Vec::new()),
                };
                let qualified = format!("{structure}::{}", self.text(member));
                let provider = self.shared_providers.get(&qualified)?;
                return self.provided(call, provider, &arguments, scope_bindings);
            }
            _ => return None,
        };
        let provider = self.shared_providers.get(name)?;
        self.provided(call, provider, &arguments, scope_bindings)
    }

    /// The array a call of `provider` with template `arguments` stands for.
    fn provided(
        &self,
        call: Node,
        provider: &SharedProvider,
        arguments: &[String],
        scope: &Bindings,
    ) -> Option<ProviderCall> {
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
    pub(super) fn provided_arrays(&self, calls: Vec<ProviderCall>) -> Vec<SharedArray> {
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
                record_scalar: false,
                at: call.at,
                decl_span: call.span,
                accesses: Vec::new(),
                escapes: vec![escape],
            });
        }
        arrays
    }
}
