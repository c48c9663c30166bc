//! `check --format json`: the analysis of every file as one object (docs/ARCHITECTURE.md §8),
//! every array and access with its address form, class and simulated figures.
use super::finding::{shown_findings, Shown};
use crate::affine::{Class, FunctionAffine, Site, Sym};
use crate::analysis::{not_rewritable_reason, AnalysedFile, Reported};
use crate::block::Resolution;
use crate::cost::SiteCost;
use crate::parse::{Access, SharedArray};
use serde_json::{json, Map, Value};

/// The version of the `check --format json` object: raised when a field changes meaning or
/// goes away (new fields keep it).
pub const JSON_VERSION: u32 = 2;

/// The `check --format json` object for all files; each file's `findings` are those `shown`
/// selects, with their rule ids, as the text and SARIF outputs show them.
pub fn json(files: &[AnalysedFile], shown: &Shown) -> Value {
    let mut totals = Totals::default();
    for file in files {
        for reported in file.reported() {
            for cost in reported.costs.iter().flatten().flatten() {
                totals.add(cost);
            }
        }
    }
    json!({
        "version": JSON_VERSION,
        "files": files.iter().map(|f| file_json(f, shown)).collect::<Vec<_>>(),
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

fn file_json(file: &AnalysedFile, shown: &Shown) -> Value {
    let findings: Vec<Value> = shown_findings(file, shown)
        .iter()
        .map(|f| {
            json!({
                "rule": f.rule.map(|r| r.id()),
                "rule_name": f.rule.map(|r| r.name()),
                "severity": f.severity.as_str(),
                "line": f.at.line,
                "col": f.at.col,
                "message": f.message,
            })
        })
        .collect();
    json!({
        "path": file.path.display().to_string(),
        "findings": findings,
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
        ..
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
            .map(|call| json!({"line": call.at.line, "col": call.at.col}))
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
