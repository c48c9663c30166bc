//! Kernel launches `k<<<grid, block, bytes>>>(…)`: where they are, their block shapes and
//! dynamic shared memory, and the `// bankwise: block=…` hints above a function.
use super::templates::TemplateParam;
use super::walk::{named_children, walk, Preorder};
use super::Extractor;
use crate::parse::ast::{self, Expr, ExprKind};
use crate::parse::consts::{identifier_tokens, Bindings};
use crate::parse::model::*;
use crate::parse::symbols::{self, child, FIELDS};
use crate::parse::syntax::Node;
use std::collections::HashMap;
use std::ops::Range;

impl<'s> Extractor<'s> {
    /// Records the kernel launches inside `function`: `k<<<grid, block, bytes>>>(…)`, through
    /// a function pointer (`auto f = &k; f<<<…>>>`), and through a launch function or macro
    /// that takes the kernel, the grid and the block in that order (`cudaLaunchKernel`,
    /// `hipLaunchKernelGGL`, a project's `LAUNCH(k, grid, block, …)`).
    pub(super) fn launch_sites(&mut self, function: Node) {
        let text = self.text(function);
        let chevrons = text.contains("<<<");
        let body_node = child(function, FIELDS.body);
        // Names looked up one by one: scanning the body once per kernel of the file grows
        // with the square of a generated file.
        let body_text = body_node.map_or("", |b| self.text(b));
        let helpers = identifier_tokens(body_text).any(|t| self.kernel_names.contains(t));
        if !chevrons && !helpers {
            return;
        }
        let body = body_node.map(Preorder::of);
        let mut found: Vec<Launch> = Vec::new();
        if chevrons {
            for (kernel, config, launch) in launch_calls(function, self.src) {
                let config: Vec<Node> = named_children(config)
                    .into_iter()
                    .filter(|c| symbols::kind(*c) != "comment")
                    .collect();
                found.push(Launch {
                    kernel,
                    block: config.get(1).copied(),
                    bytes: config.get(2).copied(),
                    at: launch,
                    through_helper: false,
                });
            }
        }
        if helpers {
            found.extend(self.helper_launches(function));
        }
        // A host function template: its parameters, bound per instantiation below.
        let host = super::function_name(function, self.src);
        let host_params = function
            .parent()
            .filter(|p| symbols::kind(*p) == "template_declaration")
            .map(|outer| super::templates::template_parameters(outer, self.src))
            .unwrap_or_default();
        let defaults = match &host {
            Some(host) => self.host_template_defaults(host, &host_params),
            None => Bindings::default(),
        };
        let mut sites = Vec::new();
        let per_call: Vec<(Launch, Bindings)> = found
            .into_iter()
            .flat_map(|launch| {
                // In a generic lambda, once per call of it (`launch_kernel(
                // std::integral_constant<int, 3>{})`), else once.
                let calls = body
                    .as_ref()
                    .map(|body| self.generic_lambda_calls(launch.at, body, &defaults))
                    .unwrap_or_default();
                match calls.is_empty() {
                    true => vec![(launch, defaults.clone())],
                    false => calls.into_iter().map(move |b| (launch, b)).collect(),
                }
            })
            .collect();
        for (launch, defaults) in per_call {
            // The constants and dim3 variables in scope at this launch.
            let locals = body
                .as_ref()
                .map(|body| self.local_definitions(body, &[], Some(launch.at.start_byte())));
            let scope = locals.as_ref().map_or_else(
                || defaults.clone(),
                |l| self.bind_constants(&l.constants, &defaults),
            );
            let dim3s = locals.map(|l| l.dim3s).unwrap_or_default();
            let kernel = match body.as_ref() {
                Some(body) => self.pointed_kernel(launch.kernel, body, launch.at.start_byte()),
                None => launch.kernel,
            };
            let (name, template_args) = self.launched_kernel(kernel, &scope);
            // Lowered once: a block that does not evaluate is read again in part.
            let components = launch
                .block
                .map(|block| (block, block_components(ast::lower(block, self.src), &dim3s)));
            let block = match &components {
                Some((block, components)) => self.launch_block(*block, components, &scope),
                None => Err("the launch has no block argument".to_string()),
            };
            let (known_dims, bounded) = match (&block, &components) {
                (Err(_), Some((_, components))) => (
                    self.known_dims(components, &scope),
                    self.block_bound(components, &scope),
                ),
                _ => (None, None),
            };
            let from_callers = match (&block, &components, &host) {
                (Err(_), Some((_, components)), Some(host)) => {
                    self.block_from_callers(function, host, components, &scope)
                }
                _ => None,
            };
            let square = match (&known_dims, &components) {
                (Some([None, None, _]), Some((_, components))) => {
                    components[0].to_string() == components[1].to_string()
                }
                _ => false,
            };
            // A call that only looks like a launch (a helper taking a kernel and two other
            // values) counts when its block shape reads as one.
            if launch.through_helper && block.is_err() {
                continue;
            }
            let shared_bytes = launch.bytes.and_then(|bytes| {
                let value = self.env.eval(&ast::lower(bytes, self.src), &scope).ok()?;
                u64::try_from(value).ok()
            });
            sites.push(LaunchSite {
                kernel: name,
                template_args,
                instance: None,
                at: self.at(launch.at),
                block,
                known_dims,
                square,
                from_callers,
                bounded,
                shared_bytes,
                elsewhere: None,
            });
        }
        // In a host function template, a launch `k<T><<<…>>>` names the host's parameters:
        // it is bound per instantiation of the host once the whole file is read.
        let host_params: Vec<String> = host_params.into_iter().map(|p| p.name).collect();
        for site in sites {
            let names_param = site
                .template_args
                .iter()
                .any(|arg| identifier_tokens(arg).any(|t| host_params.iter().any(|p| p == t)));
            match &host {
                Some(host) if names_param => self.host_template_launches.push(HostTemplateLaunch {
                    host: host.clone(),
                    params: host_params.clone(),
                    site,
                }),
                _ => self.launches.push(site),
            }
        }
    }

    /// When `launch` lies in a generic lambda bound to a name (`auto launch_kernel = [&](auto
    /// NC) { constexpr int kNC = decltype(NC)::value; k<kNC><<<…>>>(…); };`), `defaults`
    /// extended once per call of that name in `body` whose arguments for the lambda's `auto`
    /// parameters are `std::integral_constant<T, V>{}`: `NC` and `decltype(NC)::value` are
    /// `V`, as ggml dispatches kernel sizes. Empty when the launch is in no such lambda.
    fn generic_lambda_calls(
        &self,
        launch: Node,
        body: &Preorder,
        defaults: &Bindings,
    ) -> Vec<Bindings> {
        let mut lambda = launch.parent();
        while let Some(node) = lambda {
            if symbols::kind(node) == "lambda_expression" {
                break;
            }
            lambda = node.parent();
        }
        let Some(lambda) = lambda else {
            return Vec::new();
        };
        let bound_to = lambda
            .parent()
            .filter(|p| symbols::kind(*p) == "init_declarator")
            .and_then(|p| child(p, FIELDS.declarator))
            .map(|d| self.text(d));
        let Some(bound_to) = bound_to else {
            return Vec::new();
        };
        // The positions and names of the `auto` parameters.
        let mut auto_params: Vec<(usize, &str)> = Vec::new();
        if let Some(list) =
            child(lambda, FIELDS.declarator).and_then(|d| child(d, FIELDS.parameters))
        {
            for (i, param) in named_children(list).into_iter().enumerate() {
                let is_auto = child(param, FIELDS.type_).is_some_and(|t| self.text(t) == "auto");
                if let (true, Some(name)) = (is_auto, child(param, FIELDS.declarator)) {
                    auto_params.push((i, self.text(name)));
                }
            }
        }
        if auto_params.is_empty() {
            return Vec::new();
        }
        let mut calls = Vec::new();
        body.walk(|node| {
            if symbols::kind(node) != "call_expression" {
                return true;
            }
            let callee = child(node, FIELDS.function).map(|f| self.text(f));
            if callee != Some(bound_to) {
                return true;
            }
            let args = child(node, FIELDS.arguments)
                .map(named_children)
                .unwrap_or_default();
            let mut bindings = defaults.clone();
            for (i, name) in &auto_params {
                let value = args
                    .get(*i)
                    .and_then(|arg| {
                        let written: String = self.text(*arg).split_whitespace().collect();
                        integral_constant_value(&written)
                    })
                    .and_then(|v| crate::parse::parse_expression_text(&v))
                    .and_then(|e| self.env.eval(&e, defaults).ok());
                if let Some(value) = value {
                    bindings.ints.insert(name.to_string(), value);
                    bindings
                        .ints
                        .insert(format!("decltype({name})::value"), value);
                }
            }
            calls.push(bindings);
            false
        });
        calls
    }

    /// The launches inside host function templates, one per instantiation of the host in the
    /// file (`template void reduce<int>(…);` makes `reduce1<T><<<…>>>` launch `reduce1<int>`);
    /// as written when the file instantiates the host nowhere.
    pub(super) fn bind_host_template_launches(&mut self) {
        for pending in std::mem::take(&mut self.host_template_launches) {
            let bindings = self
                .instantiations
                .get(&pending.host)
                .cloned()
                .unwrap_or_default();
            if bindings.is_empty() {
                self.launches.push(pending.site);
                continue;
            }
            for args in bindings {
                let mut site = pending.site.clone();
                for arg in &mut site.template_args {
                    *arg = substitute(arg, &pending.params, &args);
                }
                self.launches.push(site);
            }
        }
    }

    /// The defaults of a host function template's integer parameters `params`, when the
    /// file never names `host` with template arguments (`template <typename T, int TPB = 256>
    /// T f(…)`, called as `f(…)`): its launches' `<<<g, TPB>>>` are 256 threads.
    /// The block `components` with the values the calls of host function `host` (defined
    /// by `function`) in this file pass for its parameters, when they all pass the same
    /// constants (a call that leaves one out passes its default): the shape and the values,
    /// as `threads = 16`.
    fn block_from_callers(
        &self,
        function: Node,
        host: &str,
        components: &[Expr],
        scope: &Bindings,
    ) -> Option<([u32; 3], String)> {
        let mut declarator = child(function, FIELDS.declarator)?;
        while symbols::kind(declarator) != "function_declarator" {
            declarator = child(declarator, FIELDS.declarator)?;
        }
        let parameters: Vec<(String, Option<Node>)> =
            named_children(child(declarator, FIELDS.parameters)?)
                .into_iter()
                .filter(|p| symbols::kind(*p).ends_with("parameter_declaration"))
                .map(|p| {
                    let name = child(p, FIELDS.declarator)
                        .map(|d| super::leftmost_identifier(d, self.src).to_string())
                        .unwrap_or_default();
                    (name, child(p, FIELDS.default_value))
                })
                .collect();
        let read: Vec<usize> = (0..parameters.len())
            .filter(|&i| {
                components
                    .iter()
                    .any(|c| c.names().contains(&parameters[i].0.as_str()))
            })
            .collect();
        if read.is_empty() {
            return None;
        }
        let mut root = function;
        while let Some(parent) = root.parent() {
            root = parent;
        }
        let mut calls = Vec::new();
        walk(root, |node| {
            if symbols::kind(node) == "call_expression"
                && child(node, FIELDS.function)
                    .is_some_and(|f| self.one_line(f).rsplit("::").next() == Some(host))
            {
                calls.push(node);
            }
            true
        });
        if calls.is_empty() {
            return None;
        }
        let mut bound = scope.clone();
        let mut values = Vec::new();
        for &i in &read {
            let (name, default) = &parameters[i];
            let mut value: Option<i64> = None;
            for call in &calls {
                let args = named_children(child(*call, FIELDS.arguments)?);
                let given = args.get(i).copied().or(*default)?;
                let v = self.env.eval(&ast::lower(given, self.src), scope).ok()?;
                if value.is_some_and(|seen| seen != v) {
                    return None;
                }
                value = Some(v);
            }
            let value = value?;
            bound.ints.insert(name.clone(), value);
            values.push(format!("`{name}` = {value}"));
        }
        let mut shape = [1u32; 3];
        for (dim, component) in shape.iter_mut().zip(components) {
            let v = self.env.eval(component, &bound).ok()?;
            *dim = u32::try_from(v).ok().filter(|&v| v > 0)?;
        }
        crate::parse::check_block_shape(shape, "").ok()?;
        Some((shape, values.join(", ")))
    }

    fn host_template_defaults(&self, host: &str, params: &[TemplateParam]) -> Bindings {
        let mut defaults = Bindings::default();
        if params.is_empty() || self.named_with_template_arguments(host) {
            return defaults;
        }
        for param in params {
            let Some(default) = param.default.as_deref().filter(|_| !param.is_type) else {
                continue;
            };
            if let Some(value) = crate::parse::parse_expression_text(default)
                .and_then(|e| self.env.eval(&e, &defaults).ok())
            {
                defaults.ints.insert(param.name.clone(), value);
            }
        }
        defaults
    }

    /// The kernel's name and template arguments as launched: `ns::k<T, block_dim_x>` with
    /// `constexpr int block_dim_x = 64;` in scope is `k` with `[T, 64]`.
    fn launched_kernel(&self, kernel: Node, scope: &Bindings) -> (String, Vec<String>) {
        let mut kernel = kernel;
        while symbols::kind(kernel) == "qualified_identifier" {
            match child(kernel, FIELDS.name) {
                Some(name) => kernel = name,
                None => break,
            }
        }
        let (name, mut template_args) = match symbols::kind(kernel) {
            "template_function" => self.template_id(kernel),
            _ => (self.one_line(kernel), Vec::new()),
        };
        let arguments = child(kernel, FIELDS.arguments).map(named_children);
        for (arg, node) in template_args.iter_mut().zip(arguments.unwrap_or_default()) {
            // A lone name reads as a type (`type_descriptor`): C++ decides by lookup.
            let expr = match symbols::kind(node) {
                "type_descriptor" if is_identifier(arg) => Expr {
                    kind: ExprKind::Name(arg.clone()),
                    span: ast::Span::of(node),
                },
                "type_descriptor" => continue,
                _ => ast::lower(node, self.src),
            };
            if let Ok(value) = self.env.eval(&expr, scope) {
                *arg = value.to_string();
            }
        }
        let name = name.rsplit("::").next().unwrap_or(&name).to_string();
        (name, template_args)
    }

    /// `f` in `f<<<…>>>` when the body declares `auto f = &k;` (or `= k`, `= &k<T>`) before
    /// the launch: `k`. Otherwise `launched` itself.
    fn pointed_kernel<'t>(&self, launched: Node<'t>, body: &Preorder<'t>, at: usize) -> Node<'t> {
        if symbols::kind(launched) != "identifier" {
            return launched;
        }
        let name = self.text(launched);
        let mut target = None;
        body.walk(|node| {
            if node.start_byte() >= at {
                return false;
            }
            if symbols::kind(node) == "init_declarator"
                && child(node, FIELDS.declarator).is_some_and(|d| self.text(d) == name)
            {
                target = child(node, FIELDS.value).map(unwrap_reference);
            }
            true
        });
        target
            .filter(|t| self.names_a_kernel(*t))
            .unwrap_or(launched)
    }

    /// Whether `node` names a kernel this file declares (`k`, `k<T>`, `ns::k`).
    fn names_a_kernel(&self, node: Node) -> bool {
        matches!(
            symbols::kind(node),
            "identifier" | "template_function" | "qualified_identifier"
        ) && self
            .kernel_names
            .contains(kernel_base_name(self.text(node)))
    }

    /// Calls in `function` whose first argument names a kernel of this file and whose next
    /// two are the grid and the block.
    fn helper_launches<'t>(&self, function: Node<'t>) -> Vec<Launch<'t>> {
        let mut found = Vec::new();
        walk(function, |node| {
            if symbols::kind(node) != "call_expression" {
                return true;
            }
            let Some(arguments) = child(node, FIELDS.arguments) else {
                return true;
            };
            let args = named_children(arguments);
            let callee = child(node, FIELDS.function).map_or("", |f| self.text(f));
            if matches!(callee, "cudaLaunchKernelEx" | "cudaLaunchKernelExC") && args.len() >= 2 {
                let kernel = unwrap_reference(args[1]);
                if self.names_a_kernel(kernel) {
                    let config = self.text(unwrap_reference(args[0]));
                    found.push(Launch {
                        kernel,
                        block: self.config_field(function, config, "blockDim", node),
                        bytes: self.config_field(function, config, "dynamicSmemBytes", node),
                        at: node,
                        through_helper: true,
                    });
                }
                return true;
            }
            if args.len() < 3 {
                return true;
            }
            let kernel = unwrap_reference(args[0]);
            if self.names_a_kernel(kernel) {
                found.push(Launch {
                    kernel,
                    block: Some(args[2]),
                    bytes: None,
                    at: node,
                    through_helper: true,
                });
            }
            true
        });
        found
    }

    /// The value last assigned to `config.field` before `launch` in `function`
    /// (`config.blockDim = dim3(32, 8);` for `cudaLaunchKernelEx(&config, k, …)`).
    fn config_field<'t>(
        &self,
        function: Node<'t>,
        config: &str,
        field: &str,
        launch: Node,
    ) -> Option<Node<'t>> {
        let mut value = None;
        walk(function, |node| {
            if node.start_byte() >= launch.start_byte() {
                return false;
            }
            if symbols::kind(node) == "assignment_expression" {
                let target = child(node, FIELDS.left);
                let assigned = target.filter(|t| symbols::kind(*t) == "field_expression");
                let names = assigned.is_some_and(|t| {
                    child(t, FIELDS.argument).is_some_and(|a| self.text(a) == config)
                        && child(t, FIELDS.field).is_some_and(|f| self.text(f) == field)
                });
                if names && child(node, FIELDS.operator).is_some_and(|o| self.text(o) == "=") {
                    value = child(node, FIELDS.right);
                }
            }
            true
        });
        value
    }

    /// Evaluates a launch's block argument `block` from its `components` (see
    /// [`block_components`]): a constant, `dim3(…)`, or a local `dim3` variable.
    fn launch_block(
        &self,
        block: Node,
        components: &[Expr],
        scope: &Bindings,
    ) -> Result<[u32; 3], String> {
        if components.is_empty() || components.len() > 3 {
            return Err(format!(
                "cannot read block shape `{}`",
                self.one_line(block)
            ));
        }
        let mut shape = [1u32; 3];
        for (slot, component) in shape.iter_mut().zip(components) {
            let value = self
                .env
                .eval(component, scope)
                .map_err(|why| format!("block shape `{}`: {why}", self.one_line(block)))?;
            *slot = u32::try_from(value)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("block shape `{}` is not positive", self.one_line(block)))?;
        }
        crate::parse::check_block_shape(shape, &self.one_line(block))
    }

    /// The dimensions of a block of two or three components that evaluate, when some do
    /// not (see [`LaunchSite::known_dims`]).
    fn known_dims(&self, components: &[Expr], scope: &Bindings) -> Option<[Option<u32>; 3]> {
        if !(2..=3).contains(&components.len()) {
            return None;
        }
        let mut dims = [Some(1); 3];
        for (dim, component) in dims.iter_mut().zip(components) {
            *dim = self
                .env
                .eval(component, scope)
                .ok()
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v > 0);
        }
        Some(dims)
    }

    /// A `// bankwise: block=XxY` comment in the run of comments directly above `node`.
    pub(super) fn block_annotation(&mut self, node: Node) -> Option<[u32; 3]> {
        // Read from the text, not the tree: where tree-sitter recovers from an error
        // elsewhere in the file, a comment need not stay the node's sibling.
        let spans = self
            .comment_spans
            .get_or_init(|| crate::parse::suppress::comment_spans(self.src));
        let run = comments_directly_above(spans, self.src, node.start_byte());
        for comment in run {
            let text = &self.src[comment.clone()];
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
                match shape.map(crate::parse::parse_block_shape) {
                    Some(Ok(shape)) => return Some(shape),
                    Some(Err(why)) => {
                        let at = self.lines.location(comment.start);
                        self.diagnose(Severity::Warning, at, format!("bankwise annotation: {why}"));
                    }
                    // bankwise's own comments (`// bankwise: a copy of …` above a function
                    // fix copied) are not annotations; a shape without `block` is a slip.
                    None if !directive
                        .trim_start()
                        .starts_with(|c: char| c.is_ascii_digit())
                        && !directive.contains('=') => {}
                    None => {
                        let at = self.lines.location(comment.start);
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
        }
        None
    }
}

/// The components of a launch's block argument: `dim3(…)`'s, a local `dim3` variable's, or
/// the one value.
fn block_components(expr: Expr, dim3s: &HashMap<String, Vec<Expr>>) -> Vec<Expr> {
    match &expr.kind {
        ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n == "dim3") => {
            args.to_vec()
        }
        ExprKind::Name(name) if dim3s.contains_key(name) => dim3s[name].clone(),
        _ => vec![expr],
    }
}

/// The first extent of a kernel's one `extern __shared__` array, from the dynamic shared
/// memory its launches pass (all the same): `k<<<g, 256, 256 * sizeof(float)>>>` makes
/// `extern __shared__ float s[]` 256 elements. `launches` are those of kernels named like
/// `function`, this file's and other files' of the run. When one of the launches that set
/// the extent is in another file, a note says which.
pub(super) fn dynamic_extent_from_launches(
    function: &mut Function,
    launches: &[&LaunchSite],
) -> Option<Diagnostic> {
    if function.kind != FunctionKind::Kernel {
        return None;
    }
    let display = function.display_name();
    let used: Vec<&&LaunchSite> = launches
        .iter()
        .filter(|l| l.kernel == function.name && l.instance.as_ref().is_none_or(|i| *i == display))
        .collect();
    let bytes = used.first()?.shared_bytes?;
    if bytes == 0 || used.iter().any(|l| l.shared_bytes != Some(bytes)) {
        return None;
    }
    let mut dynamic = function.arrays.iter_mut().filter(|a| a.is_extern);
    let (Some(array), None) = (dynamic.next(), dynamic.next()) else {
        return None;
    };
    if array.file_scope || array.dims.first() != Some(&None) {
        return None;
    }
    // Bytes per first-dimension index: the element times the other extents.
    let row = array.dims[1..]
        .iter()
        .try_fold(array.elem_bytes.unwrap_or(0), |acc, d| {
            acc.checked_mul((*d)?)
        })
        .filter(|&r| r > 0 && bytes % r == 0)?;
    array.dims[0] = Some(bytes / row);
    if used.iter().all(|l| l.elsewhere.is_none()) {
        return None;
    }
    let sites: Vec<String> = used
        .iter()
        .map(|l| match &l.elsewhere {
            Some(path) => format!("{}:{}", path.display(), l.at.line),
            None => format!("line {}", l.at.line),
        })
        .collect();
    Some(Diagnostic {
        severity: Severity::Note,
        at: array.at,
        message: format!(
            "`{}` in `{display}` has {} elements: the {bytes} bytes of dynamic shared memory \
             that every launch of `{}` passes ({})",
            array.name,
            bytes / row,
            function.name,
            sites.join(", ")
        ),
    })
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

/// The run of comments directly above byte `start`, nearest first: each ends on the line
/// above the next (or on its line), with only white space between.
fn comments_directly_above(spans: &[Range<usize>], src: &str, start: usize) -> Vec<Range<usize>> {
    let mut run = Vec::new();
    let mut below = start;
    let mut before = spans.partition_point(|span| span.end <= below);
    while let Some(span) = before.checked_sub(1).map(|i| &spans[i]) {
        let between = &src[span.end..below];
        if !between.chars().all(char::is_whitespace) || between.matches('\n').count() > 1 {
            break;
        }
        run.push(span.clone());
        below = span.start;
        before -= 1;
    }
    run
}

/// A launch in a host function template whose kernel's template arguments name the host's
/// parameters: see [`Extractor::bind_host_template_launches`].
pub(super) struct HostTemplateLaunch {
    host: String,
    params: Vec<String>,
    site: LaunchSite,
}

/// `text` with each identifier that is one of `params` replaced by the matching `args`.
fn substitute(text: &str, params: &[String], args: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match params
            .iter()
            .position(|p| p == word.as_str())
            .and_then(|i| args.get(i))
        {
            Some(arg) => out.push_str(arg),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A launch found in a function, before evaluation.
#[derive(Clone, Copy)]
struct Launch<'t> {
    /// What names the kernel (`k`, `k<T>`, `ns::k`, a function-pointer variable).
    kernel: Node<'t>,
    block: Option<Node<'t>>,
    bytes: Option<Node<'t>>,
    /// The whole launch.
    at: Node<'t>,
    /// A call to a launch function or macro rather than `<<<…>>>`.
    through_helper: bool,
}

/// `V` in `std::integral_constant<int, V>{}` (or `()`), as written without spaces.
fn integral_constant_value(arg: &str) -> Option<String> {
    let inner = arg
        .strip_prefix("std::")
        .unwrap_or(arg)
        .strip_prefix("integral_constant<")?;
    let inner = inner
        .strip_suffix(">{}")
        .or_else(|| inner.strip_suffix(">()"))?;
    let (_, value) = inner.rsplit_once(',')?;
    Some(value.to_string())
}

/// `x` in `&x`, `(x)`, `(void *)x`, `(void *)&x`.
fn unwrap_reference(mut node: Node) -> Node {
    loop {
        let inner = match symbols::kind(node) {
            "parenthesized_expression" => named_children(node).first().copied(),
            "pointer_expression" => child(node, FIELDS.argument),
            "cast_expression" => child(node, FIELDS.value),
            _ => None,
        };
        match inner {
            Some(inner) => node = inner,
            None => return node,
        }
    }
}

/// `k` in `ns::k<T, 4>`.
fn kernel_base_name(written: &str) -> &str {
    let name = written.split('<').next().unwrap_or(written).trim();
    name.rsplit("::").next().unwrap_or(name).trim()
}

fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
