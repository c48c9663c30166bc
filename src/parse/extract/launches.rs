//! Kernel launches `k<<<grid, block, bytes>>>(…)`: where they are, their block shapes and
//! dynamic shared memory, and the `// bankwise: block=…` hints above a function.
use super::walk::{named_children, walk, Preorder};
use super::Extractor;
use crate::parse::ast::{self, Expr, ExprKind};
use crate::parse::consts::Bindings;
use crate::parse::model::*;
use crate::parse::source::LineIndex;
use crate::parse::symbols::{self, child, FIELDS};
use crate::parse::syntax::Node;
use std::collections::HashMap;

impl<'s> Extractor<'s> {
    /// Records the kernel launches inside `function`.
    pub(super) fn launch_sites(&mut self, function: Node) {
        // Only a function that mentions `<<<` can launch a kernel.
        if !self.text(function).contains("<<<") {
            return;
        }
        let body = child(function, FIELDS.body).map(Preorder::of);
        let found = launch_calls(function, self.src);
        let sites: Vec<LaunchSite> = found
            .into_iter()
            .map(|(kernel, config, launch)| {
                // The constants and dim3 variables in scope at this launch.
                let locals = body
                    .as_ref()
                    .map(|body| self.local_definitions(body, &[], Some(launch.start_byte())));
                let scope = locals.as_ref().map_or_else(Bindings::default, |l| {
                    self.bind_constants(&l.constants, &Bindings::default())
                });
                let dim3s = locals.map(|l| l.dim3s).unwrap_or_default();
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
        crate::parse::check_block_shape(shape, &self.one_line(block))
    }

    /// A `// bankwise: block=XxY` comment in the run of comments directly above `node`.
    pub(super) fn block_annotation(&mut self, node: Node) -> Option<[u32; 3]> {
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
                match shape.map(crate::parse::parse_block_shape) {
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
}

/// The first extent of a kernel's one `extern __shared__` array, from the dynamic shared
/// memory its launches in this file pass (all the same): `k<<<g, 256, 256 * sizeof(float)>>>`
/// makes `extern __shared__ float s[]` 256 elements. `launches` are those of kernels named
/// like `function`.
pub(super) fn dynamic_extent_from_launches(function: &mut Function, launches: &[&LaunchSite]) {
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

/// The comment directly above `node` (on the line before it, or the same line).
fn comment_above<'t>(node: Node<'t>, lines: &LineIndex) -> Option<Node<'t>> {
    node.prev_sibling()
        .filter(|s| symbols::kind(*s) == "comment")
        .filter(|c| lines.location(c.end_byte()).line + 1 >= lines.location(node.start_byte()).line)
}
