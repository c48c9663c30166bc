//! Output: compiler-style text diagnostics, the JSON object of DESIGN.md §8, and SARIF
//! ([`sarif`]).
pub mod fix;
pub mod sarif;

use crate::affine::{Class, FunctionAffine, Site, Sym};
use crate::analysis::{not_rewritable_reason, AnalysedFile, Reported};
use crate::block::Resolution;
use crate::cost::SiteCost;
use crate::parse::{Access, Escape, Function, Location, Severity, SharedArray};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The `check --format json` object for all files.
pub fn json(files: &[AnalysedFile]) -> Value {
    let mut totals = Totals::default();
    for file in files {
        for reported in file.reported() {
            for cost in reported.costs.iter().flatten().flatten() {
                totals.add(cost);
            }
        }
    }
    json!({
        "files": files.iter().map(file_json).collect::<Vec<_>>(),
        "totals": totals.json(),
    })
}

/// Wavefront sums over simulated accesses.
#[derive(Default)]
struct Totals {
    wavefronts: u64,
    ideal_wavefronts: u64,
}

impl Totals {
    fn add(&mut self, cost: &SiteCost) {
        self.wavefronts += cost.wavefronts;
        self.ideal_wavefronts += cost.ideal_wavefronts;
    }

    fn json(&self) -> Value {
        json!({
            "wavefronts": self.wavefronts,
            "ideal_wavefronts": self.ideal_wavefronts,
            "excess_wavefronts": self.wavefronts - self.ideal_wavefronts,
        })
    }
}

fn file_json(file: &AnalysedFile) -> Value {
    json!({
        "path": file.path.display().to_string(),
        "diagnostics": file.diagnostics.iter().map(|d| json!({
            "line": d.at.line,
            "col": d.at.col,
            "severity": d.severity.as_str(),
            "message": d.message,
        })).collect::<Vec<_>>(),
        "kernels": file.reported().map(|r| function_json(&r)).collect::<Vec<_>>(),
    })
}

fn function_json(reported: &Reported) -> Value {
    let Reported {
        function,
        block,
        affine,
        costs,
    } = *reported;
    let mut object = Map::new();
    object.insert("name".into(), function.display_name().into());
    object.insert("kind".into(), function.kind.as_str().into());
    object.insert("line".into(), function.at.line.into());
    if !function.template_args.is_empty() {
        let args: Map<String, Value> = function
            .template_args
            .iter()
            .map(|(p, v)| (p.clone(), Value::from(v.as_str())))
            .collect();
        object.insert("template_args".into(), args.into());
    }
    let (shape, source) = match block {
        Ok(b) => (json!(b.shape), Value::from(b.source.to_string())),
        Err(_) => (Value::Null, Value::Null),
    };
    object.insert("block".into(), shape);
    object.insert("block_source".into(), source);
    if let Some(at) = function.syntax_error {
        object.insert(
            "skipped".into(),
            format!("syntax error at line {}", at.line).into(),
        );
    }
    object.insert(
        "arrays".into(),
        function
            .arrays
            .iter()
            .enumerate()
            .map(|(i, a)| array_json(a, block, affine.map(|f| (f, i)), &costs[i]))
            .collect::<Vec<_>>()
            .into(),
    );
    object.into()
}

fn array_json(
    array: &SharedArray,
    block: &Resolution,
    affine: Option<(&FunctionAffine, usize)>,
    costs: &[Result<SiteCost, String>],
) -> Value {
    let reason = not_rewritable_reason(array, block);
    let mut totals = Totals::default();
    for cost in costs.iter().flatten() {
        totals.add(cost);
    }
    json!({
        "name": array.name,
        "elem_type": array.elem_type,
        "elem_bytes": array.elem_bytes,
        "dims": array.dims,
        "bytes": array.bytes(),
        "extern": array.is_extern,
        "line": array.at.line,
        "col": array.at.col,
        "rewritable": reason.is_none(),
        "reason": reason,
        "declared_by_macro": array.declared_by_macro,
        "escapes": array.escapes.iter().map(|e| json!({
            "line": e.at.line,
            "col": e.at.col,
            "kind": e.kind.tag(),
            "text": e.text,
        })).collect::<Vec<_>>(),
        "accesses": array.accesses.iter().enumerate().map(|(i, access)| {
            let site = affine.and_then(|(f, a)| Some((f, f.sites[a][i].as_ref()?)));
            access_json(access, site, &costs[i])
        }).collect::<Vec<_>>(),
        "totals": totals.json(),
    })
}

fn access_json(
    access: &Access,
    site: Option<(&FunctionAffine, &Site)>,
    cost: &Result<SiteCost, String>,
) -> Value {
    let mut object = Map::new();
    object.insert("line".into(), access.at.line.into());
    object.insert("col".into(), access.at.col.into());
    object.insert("kind".into(), access.kind.as_str().into());
    object.insert("text".into(), access.text.clone().into());
    if let Some(member) = &access.detail().member {
        object.insert("member".into(), member.clone().into());
    }
    if let Some(op) = &access.detail().atomic_op {
        object.insert("atomic".into(), op.clone().into());
    }
    if let Some(calls) = &access.detail().via_pointer {
        let calls: Vec<Value> = calls
            .iter()
            .map(|at| json!({"line": at.line, "col": at.col}))
            .collect();
        object.insert("via_pointer".into(), json!({ "calls": calls }));
    }
    let (form, class, stride) = match site {
        Some((_, site)) => (
            site.form.as_ref().ok().map(|f| f.to_string()),
            Some(site.class.name()),
            match &site.class {
                Class::Linear => Some(Value::from(1)),
                Class::Stride(s) => Some(sym_json(s)),
                _ => None,
            },
        ),
        None => (None, None, None),
    };
    object.insert("form".into(), form.into());
    object.insert("class".into(), class.into());
    object.insert("stride".into(), stride.into());
    if let Some((function, site)) = site {
        match &site.class {
            Class::Block(digits) => {
                let digits: Vec<Value> = digits
                    .iter()
                    .map(|(d, c)| json!({"digit": d.to_string(), "coefficient": sym_json(c)}))
                    .collect();
                object.insert("digits".into(), digits.into());
            }
            Class::Random(why) => {
                object.insert("random_reason".into(), why.clone().into());
            }
            _ => {}
        }
        if !site.loops.is_empty() {
            let loops: Vec<Value> = site
                .loops
                .iter()
                .map(|&id| function.loops[id].name.clone().into())
                .collect();
            object.insert("loops".into(), loops.into());
        }
        if site.active != Sym::Const(1) {
            object.insert("active".into(), site.active.to_string().into());
        }
    }
    match cost {
        Ok(cost) => {
            object.insert("conflict_degree".into(), cost.conflict_degree.into());
            object.insert("wavefronts".into(), cost.wavefronts.into());
            object.insert("ideal_wavefronts".into(), cost.ideal_wavefronts.into());
            object.insert("excess_wavefronts".into(), cost.excess().into());
            if !cost.per_iteration_of.is_empty() {
                object.insert(
                    "per_iteration_of".into(),
                    cost.per_iteration_of.clone().into(),
                );
            }
            if !cost.unknown_values.is_empty() {
                let unknowns: Map<String, Value> = cost
                    .unknown_values
                    .iter()
                    .map(|u| (u.name.clone(), u.evaluated.to_string().into()))
                    .collect();
                object.insert("unknown_values".into(), unknowns.into());
            }
        }
        Err(why) => {
            for key in [
                "conflict_degree",
                "wavefronts",
                "ideal_wavefronts",
                "excess_wavefronts",
            ] {
                object.insert(key.into(), Value::Null);
            }
            object.insert("not_simulated".into(), why.clone().into());
        }
    }
    object.into()
}

/// A coefficient: a number when it is a constant, its expression otherwise.
fn sym_json(sym: &Sym) -> Value {
    match sym.constant() {
        Some(v) => v.into(),
        None => sym.to_string().into(),
    }
}

/// `file:line:col: severity: message` lines, sorted by location within each file.
pub fn text(files: &[AnalysedFile]) -> String {
    let mut out = String::new();
    for file in files {
        let path = file.path.display();
        let mut lines: Vec<Line> = file
            .diagnostics
            .iter()
            .map(|d| (d.at, d.severity, d.message.clone()))
            .collect();
        // Functions are rendered on all cores; their lines join in function order, so the
        // stable sort below orders them as before.
        let reported: Vec<Reported> = file.reported().collect();
        let rendered = crate::parallel::map(reported.len(), FUNCTIONS_PER_THREAD, |i| {
            function_lines(&reported[i])
        });
        lines.extend(rendered.into_iter().flatten());
        lines.sort_by_key(|(at, _, _)| *at);
        // The path rendered once, and each line written straight into `out`.
        let path = path.to_string();
        for (at, severity, message) in lines {
            let _ = writeln!(out, "{path}:{at}: {}: {message}", severity.as_str());
        }
    }
    out
}

/// One text diagnostic before it is sorted and written.
type Line = (Location, Severity, String);

/// Functions below which a thread is not worth starting for the text report.
const FUNCTIONS_PER_THREAD: usize = 64;

/// The text lines of one function: its escapes and its accesses.
fn function_lines(reported: &Reported) -> Vec<Line> {
    let Reported {
        function,
        block,
        affine,
        costs,
    } = *reported;
    let mut lines = Vec::new();
    let name = function.display_name();
    let block = match block {
        Ok(b) => format!("block {}", crate::block::format_shape(b.shape)),
        Err(_) => "block unknown".into(),
    };
    for (a, array) in function.arrays.iter().enumerate() {
        let shape = shape_text(array);
        for escape in &array.escapes {
            lines.push((
                escape.at,
                Severity::Warning,
                escape_message(array, function, escape),
            ));
        }
        for (i, access) in array.accesses.iter().enumerate() {
            let site = affine.and_then(|f| f.sites[a][i].as_ref());
            if let (Ok(cost), Some(site)) = (&costs[a][i], site) {
                if cost.excess() > 0 {
                    lines.push((
                        access.at,
                        Severity::Warning,
                        conflict_message(array, access, site, cost),
                    ));
                    continue;
                }
            }
            let mut message = String::new();
            let _ = match &access.detail().atomic_op {
                Some(op) => write!(message, "atomic ({op})"),
                None => write!(message, "{}", access.kind.as_str()),
            };
            let _ = write!(
                message,
                " `{}{}`{} on `{}` {shape} in `{name}` ({block})",
                access.text,
                access.detail().member.as_deref().unwrap_or(""),
                via_pointer_text(access),
                array.name,
            );
            let _ = match (&costs[a][i], site) {
                (Ok(_), Some(site)) => write!(message, ": {}, no bank conflict", site.class),
                (Err(why), _) => write!(message, ": not simulated ({why})"),
                _ => Ok(()),
            };
            lines.push((access.at, Severity::Note, message));
        }
    }
    lines
}

/// `` `tile` in `k` escapes analysis (address taken): it will not be rewritten ``.
fn escape_message(array: &SharedArray, function: &Function, escape: &Escape) -> String {
    format!(
        "`{}` in `{}` escapes analysis ({escape}): it will not be rewritten",
        array.name,
        function.display_name(),
    )
}

/// `32-way bank conflict reading `tile` (stride 32): lanes 0 and 1 both hit bank 0 (words 0
/// and 32); 248 excess wavefronts per block`.
fn conflict_message(array: &SharedArray, access: &Access, site: &Site, cost: &SiteCost) -> String {
    let verb = match access.kind {
        crate::parse::AccessKind::Load => "reading",
        crate::parse::AccessKind::Store => "writing",
        crate::parse::AccessKind::Atomic => "updating (atomic)",
    };
    // A form that changes per iteration: the class of the iteration with the worst request.
    let worst_iteration = cost.worst.as_ref().and_then(|worst| {
        site.iterations.iter().find(|it| {
            it.loop_values
                .iter()
                .all(|value| worst.loop_values.contains(value))
        })
    });
    let class = match worst_iteration.map_or(&site.class, |it| &it.class) {
        Class::Random(_) => "random".to_string(),
        other => other.to_string(),
    };
    let mut message = format!(
        "{}-way bank conflict {verb} `{}`{} ({class})",
        cost.conflict_degree,
        array.name,
        via_pointer_text(access)
    );
    if let Some(worst) = &cost.worst {
        let c = &worst.collision;
        message.push_str(&format!(
            ": lanes {} and {} both hit bank {} (words {} and {})",
            c.lanes.0, c.lanes.1, c.bank, c.words.0, c.words.1
        ));
        if worst.warp > 0 || !worst.loop_values.is_empty() {
            let mut context = vec![format!("warp {}", worst.warp)];
            context.extend(worst.loop_values.iter().map(|(n, v)| format!("{n} = {v}")));
            message.push_str(&format!(" in {}", context.join(", ")));
        }
    }
    message.push_str(&format!("; {} excess wavefronts per block", cost.excess()));
    if !cost.per_iteration_of.is_empty() {
        let loops: Vec<String> = cost
            .per_iteration_of
            .iter()
            .map(|l| format!("`{l}`"))
            .collect();
        message.push_str(&format!(" and iteration of {}", loops.join(" and ")));
    }
    message
}

/// ` through a pointer`, and the calls it is reached through, for an access through a pointer.
fn via_pointer_text(access: &Access) -> String {
    match access.detail().via_pointer.as_deref() {
        None => String::new(),
        Some([]) => " through a pointer".to_string(),
        Some(calls) => {
            let lines: Vec<String> = calls.iter().map(|at| at.line.to_string()).collect();
            format!(
                " through a pointer (called at line {})",
                lines.join(" → line ")
            )
        }
    }
}

/// `float[32][33]`, with `?` for unknown extents and `[]` for extern arrays.
pub fn shape_text(array: &SharedArray) -> String {
    let mut text = array.elem_type.clone();
    for (i, dim) in array.dims.iter().enumerate() {
        match dim {
            Some(d) => text.push_str(&format!("[{d}]")),
            None if array.is_extern && i == 0 => text.push_str("[]"),
            None => text.push_str("[?]"),
        }
    }
    text
}
