//! Templates: their parameters, the prototype a template function is analysed into, explicit
//! instantiations, and instantiating a prototype once per set of template arguments.
use super::walk::{named_children, walk};
use super::{leftmost_identifier, Extractor};
use crate::parse::ast::{compact_text, Expr};
use crate::parse::consts::{identifier_tokens, Bindings};
use crate::parse::model::*;
use crate::parse::packed::Packed;
use crate::parse::symbols::{self, child, FIELDS};
use crate::parse::syntax::Node;
use std::collections::{HashMap, HashSet};

impl<'s> Extractor<'s> {
    /// Template functions, once every instantiation and launch of the file is known.
    pub(super) fn analyse_templates(&mut self) {
        // Each template's launches are found by binary search in launch indices sorted (stably)
        // by kernel: maps keyed by cloned names took ~1 MB per 10,000 kernels, at the moment
        // the front end holds the most.
        let mut by_kernel: Vec<usize> = (0..self.launches.len()).collect();
        by_kernel.sort_by(|&a, &b| self.launches[a].kernel.cmp(&self.launches[b].kernel));
        let prototypes = std::mem::take(&mut self.templates);
        let calls = self.calls_of_templates(&prototypes);
        // Every template has at least one instance: growing `functions` by doubling instead
        // holds two buffers while it copies and ends with up to twice the room it needs
        // (a 10 MB file has ~10,000 templates of 312 bytes).
        self.functions.reserve_exact(prototypes.len());
        for mut prototype in callers_first(prototypes, &calls) {
            let name = prototype.function.name.clone();
            let first = by_kernel.partition_point(|&i| self.launches[i].kernel < name);
            let launches: Vec<usize> = by_kernel[first..]
                .iter()
                .copied()
                .take_while(|&i| self.launches[i].kernel == name)
                .collect();
            let instances = self.instantiations_of(&name, &prototype.params, &launches);
            let instances = self.with_assumed_element_types(&prototype, instances);
            let last = instances.len().saturating_sub(1);
            let own_calls: Vec<&TemplateCall> = calls
                .iter()
                .filter(|c| c.caller == prototype.function.span.start)
                .collect();
            // Tie each launch of this template to the instance it runs (to each, when the
            // launch leaves an element type to assumption); before the last instance takes
            // the prototype's arrays.
            for &i in &launches {
                let mut instances =
                    self.launched_instances(&prototype, &self.launches[i].template_args);
                let first = instances.remove(0);
                for other in instances {
                    let mut site = self.launches[i].clone();
                    site.instance = Some(other);
                    self.launches.push(site);
                }
                self.launches[i].instance = Some(first);
            }
            for (i, (args, bindings, assumed)) in instances.into_iter().enumerate() {
                // The templates this instance calls with arguments get the instances it calls.
                for call in &own_calls {
                    let args = self.call_arguments(call, &bindings);
                    self.instantiations
                        .entry(call.callee.clone())
                        .or_default()
                        .push(args);
                }
                // The last instance takes the prototype's arrays rather than a copy.
                let arrays = if i == last {
                    std::mem::take(&mut prototype.function.arrays)
                } else {
                    prototype.function.arrays.clone()
                };
                let mut function = self.instantiate(&prototype, arrays, args, bindings);
                function.assumed_types = assumed;
                self.functions.push(function);
            }
        }
    }

    /// The calls with template arguments of the templates in `prototypes`. Those from
    /// functions that are not templates are instantiations already (their arguments are
    /// evaluated here); those from templates are returned, to be evaluated per instance.
    fn calls_of_templates(&mut self, prototypes: &[Prototype]) -> Vec<TemplateCall> {
        let names: HashSet<&str> = prototypes
            .iter()
            .map(|p| p.function.name.as_str())
            .collect();
        let templated: HashSet<usize> = prototypes.iter().map(|p| p.function.span.start).collect();
        let mut from_templates = Vec::new();
        for call in std::mem::take(&mut self.template_calls) {
            if !names.contains(call.callee.as_str()) {
                continue;
            }
            if templated.contains(&call.caller) {
                from_templates.push(call);
            } else {
                let args = self.call_arguments(&call, &Bindings::default());
                self.instantiations
                    .entry(call.callee)
                    .or_default()
                    .push(args);
            }
        }
        from_templates
    }

    /// The arguments of `call` as its callee's instance spells them, under the caller's
    /// `bindings`.
    fn call_arguments(&self, call: &TemplateCall, bindings: &Bindings) -> Vec<String> {
        call.args
            .iter()
            .map(|arg| self.env.template_argument(arg, bindings))
            .collect()
    }

    pub(super) fn instantiation(&mut self, node: Node) {
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

    /// The name and the argument texts of a template id `k<16, float>`.
    pub(super) fn template_id(&self, node: Node) -> (String, Vec<String>) {
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

    /// A function with its template arguments bound: the constants, extents, element types
    /// and launch bounds evaluated with them.
    /// `arrays` are the prototype's (its own or a copy), bound here.
    pub(super) fn instantiate(
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
                    if let Some(bound) = bound_type(base, &bindings) {
                        // A struct template's member type: what it stands for.
                        let bound = self.env.record_type(&bound).unwrap_or(bound);
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
            assumed_before: template.assumed_before,
            assumed_types: Vec::new(),
            thread_axes: template.thread_axes,
            callees: template.callees.clone(),
            syntax_error: template.syntax_error,
            arrays,
            params: template.params.clone(),
            body: template.body.clone(),
            unseen_uses: template.unseen_uses.clone(),
        };
        let type_params: Vec<&str> = prototype
            .params
            .iter()
            .filter(|p| p.is_type)
            .map(|p| p.name.as_str())
            .collect();
        for array in &function.arrays {
            self.report_unknown_extents(&function, array, &type_params);
        }
        function
    }

    /// `instances`, each that leaves a type parameter unbound which a shared array's element
    /// type names made one instance per [`ASSUMED_ELEMENT_TYPES`] (every such parameter
    /// taking the same type), with the assumption: a generic kernel nothing in view
    /// instantiates is analysed for the element sizes it is most likely used with, rather
    /// than not at all. A warning says so, once per template.
    fn with_assumed_element_types(
        &mut self,
        prototype: &Prototype,
        instances: Vec<Instance>,
    ) -> Vec<AssumedInstance> {
        let params = element_type_params(prototype);
        let mut warned = false;
        let mut out = Vec::new();
        for (args, bindings) in instances {
            let unbound = unbound_params(&params, &bindings, &self.env);
            if unbound.is_empty() {
                out.push((args, bindings, Vec::new()));
                continue;
            }
            if !warned {
                warned = true;
                let assumed: Vec<String> = ASSUMED_ELEMENT_TYPES
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect();
                self.diagnose(
                    Severity::Warning,
                    prototype.function.at,
                    format!(
                        "element type `{}` of `{}` in `{}` is not known: no instantiation or \
                         launch in view binds it to a type bankwise can size; analysed as {}, \
                         one instance each: findings on them assume it, and fixes resting on it \
                         are unsafe",
                        unbound[0].name,
                        unbound[0].array,
                        prototype.function.name,
                        assumed.join(", ")
                    ),
                );
            }
            for ty in ASSUMED_ELEMENT_TYPES {
                out.push(assume(prototype, &args, &bindings, &unbound, ty));
            }
        }
        out
    }

    /// The names of the instances a launch with `launched` template arguments runs: one, or
    /// one per assumed element type when its arguments leave one unbound (`k<<<…>>>(p)` with
    /// `T` deduced from `p`).
    fn launched_instances(&self, prototype: &Prototype, launched: &[String]) -> Vec<String> {
        let name = &prototype.function.name;
        let (args, bindings) = self.instance(&prototype.params, launched);
        let params = element_type_params(prototype);
        let unbound = unbound_params(&params, &bindings, &self.env);
        if unbound.is_empty() {
            return vec![instance_name(name, &args)];
        }
        ASSUMED_ELEMENT_TYPES
            .iter()
            .map(|ty| instance_name(name, &assume(prototype, &args, &bindings, &unbound, ty).0))
            .collect()
    }

    /// Every known set of template arguments for a function: explicit instantiations, launch
    /// sites, then `-D` values and defaults. One empty set for non-templates.
    fn instantiations_of(
        &mut self,
        name: &str,
        params: &[TemplateParam],
        launches: &[usize],
    ) -> Vec<Instance> {
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
        // Arguments for more parameters than it has are a call of an overload (apex's two
        // `blockReduce`s), not an instance of this one.
        if !params.iter().any(|p| p.variadic) {
            arg_lists.retain(|args| args.len() <= params.len());
        }
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
            // `-D N=128` binds an integer parameter, `-D T=half` a type parameter.
            let value = args
                .get(i)
                .cloned()
                .or_else(|| match param.is_type {
                    true => self.env.command_line_text(&param.name).map(str::to_string),
                    false => self
                        .env
                        .command_line_value(&param.name)
                        .and_then(Result::ok)
                        .map(|v| v.to_string()),
                })
                .or_else(|| param.default.clone());
            let Some(value) = value else { continue };
            if param.is_type {
                bindings.types.insert(param.name.clone(), value.clone());
            } else if let Some(expr) = crate::parse::parse_expression_text(&value) {
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
}

/// A set of template arguments as shown, `(parameter, value)`, and the bindings they make.
type Instance = (Vec<(String, String)>, Bindings);

/// An [`Instance`] with the element types it assumes, `(parameter, type)`.
type AssumedInstance = (Vec<(String, String)>, Bindings, Vec<(String, String)>);

/// A type parameter that a shared array's element type names.
struct ElementTypeParam<'p> {
    /// Its position among the template's parameters.
    index: usize,
    name: &'p str,
    /// The first array whose element type names it.
    array: &'p str,
}

fn element_type_params(prototype: &Prototype) -> Vec<ElementTypeParam<'_>> {
    prototype
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_type)
        .filter_map(|(index, p)| {
            // The element type, or a type the array is viewed as (`reinterpret_cast<acc_t *>
            // (smem8)`, how PyTorch's kernels type their dynamic shared memory).
            // The parameter itself, qualified or not (`const T`, `acc_t *`), not a member
            // of it (`typename K::Element` is the traits type's to say).
            let names = |ty: &str| {
                let words: Vec<&str> = identifier_tokens(ty)
                    .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__"))
                    .collect();
                words == [p.name.as_str()] && !ty.contains("::")
            };
            let array = prototype.function.arrays.iter().find(|a| {
                !a.file_scope
                    && (names(&a.elem_type)
                        || a.escapes.iter().any(|e| match &e.kind {
                            EscapeKind::Cast(ty) => names(ty),
                            _ => false,
                        }))
            })?;
            Some(ElementTypeParam {
                index,
                name: &p.name,
                array: &array.name,
            })
        })
        .collect()
}

fn unbound_params<'a, 'p>(
    params: &'a [ElementTypeParam<'p>],
    bindings: &Bindings,
    env: &crate::parse::ConstEnv,
) -> Vec<&'a ElementTypeParam<'p>> {
    // A parameter bound to a plain name of no known type is as unbound: a launch in a
    // dispatcher that passes `scalar_t` or `acc_t` from a `using … = …;` the analysis
    // cannot resolve (PyTorch's AT_DISPATCH_* macros, apex's). A qualified or template
    // name (`cutlass::half_t`) is a type the code names: left as it is.
    let unresolved = |bound: &String| {
        !bound.is_empty()
            && bound.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && env.types.layout(bound).is_none()
    };
    params
        .iter()
        .filter(|p| bindings.types.get(p.name).is_none_or(unresolved))
        .collect()
}

/// The instance `args`/`bindings` with every parameter of `unbound` bound to `ty`, and the
/// assumption made.
fn assume(
    prototype: &Prototype,
    args: &[(String, String)],
    bindings: &Bindings,
    unbound: &[&ElementTypeParam],
    ty: &str,
) -> AssumedInstance {
    let mut args = args.to_vec();
    let mut bindings = bindings.clone();
    let mut assumed = Vec::new();
    for param in unbound {
        bindings
            .types
            .insert(param.name.to_string(), ty.to_string());
        // Bound to its own name: that argument takes the type.
        if let Some(arg) = args.iter_mut().find(|(name, _)| name == param.name) {
            arg.1 = ty.to_string();
            assumed.push((param.name.to_string(), ty.to_string()));
            continue;
        }
        // In parameter order among the arguments shown.
        let at = args
            .iter()
            .take_while(|(name, _)| {
                prototype
                    .params
                    .iter()
                    .position(|p| &p.name == name)
                    .is_some_and(|i| i < param.index)
            })
            .count();
        args.insert(at, (param.name.to_string(), ty.to_string()));
        assumed.push((param.name.to_string(), ty.to_string()));
    }
    (args, bindings, assumed)
}

/// A function analysed once; template functions are instantiated from it per argument set.
pub(super) struct Prototype {
    /// Boxed: the prototypes are collected in a vector that grows by doubling, and a
    /// function is 312 bytes.
    pub(super) function: Box<Function>,
    pub(super) params: Vec<TemplateParam>,
    /// The body's integer constants, unevaluated (they may depend on template arguments).
    /// Packed: every template's are kept until the whole file is scanned.
    pub(super) constants: Packed<Vec<(String, Expr)>>,
    pub(super) launch_bounds: Option<Expr>,
}

/// A call with template arguments, `loadFromGmem<BM, BK>(…)`, in the function that starts
/// at byte `caller`.
#[derive(Debug, Clone)]
pub(super) struct TemplateCall {
    pub(super) caller: usize,
    pub(super) callee: String,
    /// As written (`BM`, `BK / 2`).
    pub(super) args: Vec<String>,
}

/// `prototypes` ordered so that a template comes before those it calls with template
/// arguments (their instances come from its own); otherwise in the file's order. A cycle
/// (recursion) is broken at its first template in the file.
fn callers_first(prototypes: Vec<Prototype>, calls: &[TemplateCall]) -> Vec<Prototype> {
    if calls.is_empty() {
        return prototypes;
    }
    let n = prototypes.len();
    let index_of_start: HashMap<usize, usize> = prototypes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.function.span.start, i))
        .collect();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, p) in prototypes.iter().enumerate() {
        by_name.entry(p.function.name.as_str()).or_default().push(i);
    }
    let mut callees_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut callers_left = vec![0usize; n];
    for call in calls {
        let Some(&from) = index_of_start.get(&call.caller) else {
            continue;
        };
        for &to in by_name.get(call.callee.as_str()).into_iter().flatten() {
            if to != from {
                callees_of[from].push(to);
                callers_left[to] += 1;
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| callers_left[i] == 0).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let Some(next) = ready.pop_first().or_else(|| (0..n).find(|&i| !done[i])) else {
            break;
        };
        if std::mem::replace(&mut done[next], true) {
            continue;
        }
        order.push(next);
        for &to in &callees_of[next] {
            callers_left[to] = callers_left[to].saturating_sub(1);
            if callers_left[to] == 0 && !done[to] {
                ready.insert(to);
            }
        }
    }
    let mut slots: Vec<Option<Prototype>> = prototypes.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// `("T", "**")` for `T**`.
/// `ty` under an instance's type bindings: a parameter's type, or a member of one
/// (`typename K::Element` with `K` bound to `Traits` is `Traits::Element`); `None` when it
/// names no bound parameter.
fn bound_type(ty: &str, bindings: &Bindings) -> Option<String> {
    let ty = ty.trim().trim_start_matches("typename ").trim_start();
    if let Some(bound) = bindings.types.get(ty) {
        return Some(bound.clone());
    }
    let (first, rest) = ty.split_once("::")?;
    let bound = bindings.types.get(first.trim())?;
    Some(format!(
        "{}::{rest}",
        bound.trim_start_matches("typename ").trim()
    ))
}

fn split_pointer(ty: &str) -> (&str, &str) {
    let base = ty.trim_end_matches('*').trim_end();
    (base, &ty[base.len()..])
}

pub(super) struct TemplateParam {
    pub(super) name: String,
    pub(super) is_type: bool,
    pub(super) default: Option<String>,
    /// A pack (`typename... Ts`), which takes any number of arguments.
    pub(super) variadic: bool,
}

pub(super) fn template_parameters(outer: Node, src: &str) -> Vec<TemplateParam> {
    if symbols::kind(outer) != "template_declaration" {
        return Vec::new();
    }
    let Some(list) = child(outer, FIELDS.parameters) else {
        return Vec::new();
    };
    named_children(list)
        .into_iter()
        .filter_map(|param| {
            // `template <typename> class Reduction`: a template's name, bound as a type is.
            let param = match symbols::kind(param) {
                "template_template_parameter_declaration" => named_children(param)
                    .into_iter()
                    .find(|c| symbols::kind(*c).contains("type_parameter"))?,
                _ => param,
            };
            let is_type = symbols::kind(param).contains("type_parameter");
            let variadic = symbols::kind(param).starts_with("variadic");
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
                    variadic,
                    default: child(param, FIELDS.default_value).map(|d| compact_text(d, src)),
                });
            };
            Some(TemplateParam {
                name: src[name.byte_range()].to_string(),
                is_type,
                variadic,
                default: child(param, FIELDS.default_type).map(|d| compact_text(d, src)),
            })
        })
        .collect()
}
