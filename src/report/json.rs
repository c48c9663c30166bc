//! `check --format json`: the analysis of every file as one object (docs/ARCHITECTURE.md §8),
//! every array and access with its address form, class and simulated figures.
use super::finding::{shown_findings, Shown};
use crate::affine::{Class, FunctionAffine, Site, Sym};
use crate::analysis::{not_rewritable_reason, AnalysedFile, Reported};
use crate::block::Resolution;
use crate::compiled::{CompileError, CompiledFile, CompiledKernel};
use crate::cost::SiteCost;
use crate::parse::{Access, SharedArray};
use serde::Serialize;
use serde_json::{Map, Value};

/// The version of the `check --format json` object: raised when a field changes meaning or
/// goes away (new fields keep it).
pub const JSON_VERSION: u32 = 2;

// The object as typed structs, fields in the order it shows them. A key that is always
// there is `null` when it has no value; the keys of what only some accesses have (a member,
// an atomic, loops, digits, unknown values, …) are left out where they do not apply.

#[derive(Serialize)]
pub struct CheckReport<'a> {
    version: u32,
    files: Vec<FileReport<'a>>,
    totals: WavefrontTotals,
}

/// Wavefront sums over simulated accesses.
#[derive(Serialize, Default)]
struct WavefrontTotals {
    wavefronts: u64,
    ideal_wavefronts: u64,
    excess_wavefronts: u64,
}

impl WavefrontTotals {
    fn of<'c>(costs: impl Iterator<Item = &'c SiteCost>) -> Self {
        let mut totals = WavefrontTotals::default();
        for cost in costs {
            totals.wavefronts += cost.wavefronts;
            totals.ideal_wavefronts += cost.ideal_wavefronts;
        }
        totals.excess_wavefronts = totals.wavefronts - totals.ideal_wavefronts;
        totals
    }
}

#[derive(Serialize)]
struct FileReport<'a> {
    path: String,
    /// Why the compiled view has no figures for this file, where nvcc was at hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    compiled_error: Option<String>,
    findings: Vec<FindingReport>,
    diagnostics: Vec<DiagnosticReport<'a>>,
    kernels: Vec<KernelReport<'a>>,
}

#[derive(Serialize)]
struct FindingReport {
    rule: Option<&'static str>,
    rule_name: Option<&'static str>,
    severity: &'static str,
    line: usize,
    col: usize,
    message: String,
}

#[derive(Serialize)]
struct DiagnosticReport<'a> {
    line: usize,
    col: usize,
    severity: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct KernelReport<'a> {
    name: String,
    kind: &'static str,
    line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    template_args: Option<Map<String, Value>>,
    block: Option<[u32; 3]>,
    block_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
    /// The compiled view's figures, where nvcc compiled the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    compiled: Option<CompiledReport<'a>>,
    arrays: Vec<ArrayReport<'a>>,
}

/// A kernel as nvcc compiled it: per block, what Nsight Compute counts.
#[derive(Serialize)]
struct CompiledReport<'a> {
    arch: &'a str,
    nvcc: &'a str,
    excess_wavefronts: u64,
    load_excess_wavefronts: u64,
    store_excess_wavefronts: u64,
    /// Shared atomics and `cp.async` (not in `excess_wavefronts`).
    other_excess_wavefronts: u64,
    instructions: Vec<CompiledInstructionReport<'a>>,
    gaps: Vec<String>,
    executed: ExecutedReport,
}

/// What block 0 executed, in warp-level instructions and shared wavefronts.
#[derive(Serialize)]
struct ExecutedReport {
    instructions: u64,
    shared_instructions: u64,
    global_instructions: u64,
    shared_wavefronts: u64,
}

#[derive(Serialize)]
struct CompiledInstructionReport<'a> {
    line: u32,
    col: u32,
    /// False for a position in a header.
    in_file: bool,
    operation: &'a str,
    array: Option<&'a str>,
    bytes: u32,
    executions: u64,
    wavefronts: u64,
    ideal_wavefronts: u64,
    excess_wavefronts: u64,
    #[serde(skip_serializing_if = "is_zero")]
    data_dependent: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

fn compiled_report<'a>(file: &'a CompiledFile, kernel: &'a CompiledKernel) -> CompiledReport<'a> {
    CompiledReport {
        arch: &file.arch,
        nvcc: &file.nvcc,
        excess_wavefronts: kernel.excess(),
        load_excess_wavefronts: kernel.load_excess,
        store_excess_wavefronts: kernel.store_excess,
        other_excess_wavefronts: kernel.other_excess,
        instructions: kernel
            .instructions
            .iter()
            .map(|i| CompiledInstructionReport {
                line: i.line,
                col: i.col,
                in_file: i.in_file,
                operation: i.operation,
                array: i.array.as_deref(),
                bytes: i.bytes,
                executions: i.executions,
                wavefronts: i.wavefronts,
                ideal_wavefronts: i.ideal_wavefronts,
                excess_wavefronts: i.excess(),
                data_dependent: i.data_dependent,
            })
            .collect(),
        gaps: kernel.gaps.iter().map(ToString::to_string).collect(),
        executed: ExecutedReport {
            instructions: kernel.executed.instructions,
            shared_instructions: kernel.executed.shared_instructions,
            global_instructions: kernel.executed.global_instructions,
            shared_wavefronts: kernel.executed.shared_wavefronts,
        },
    }
}

#[derive(Serialize)]
struct ArrayReport<'a> {
    name: &'a str,
    elem_type: &'a str,
    elem_bytes: Option<u64>,
    dims: &'a [Option<u64>],
    bytes: Option<u64>,
    #[serde(rename = "extern")]
    is_extern: bool,
    line: usize,
    col: usize,
    rewritable: bool,
    reason: Option<String>,
    declared_by_macro: Option<&'a str>,
    escapes: Vec<EscapeReport<'a>>,
    accesses: Vec<AccessReport<'a>>,
    totals: WavefrontTotals,
}

#[derive(Serialize)]
struct EscapeReport<'a> {
    line: usize,
    col: usize,
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct Place {
    line: usize,
    col: usize,
}

#[derive(Serialize)]
struct ViaPointer {
    calls: Vec<Place>,
}

#[derive(Serialize)]
struct DigitReport {
    digit: String,
    coefficient: Value,
}

#[derive(Serialize)]
struct AccessReport<'a> {
    line: usize,
    col: usize,
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    member: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    atomic: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    via_pointer: Option<ViaPointer>,
    form: Option<String>,
    class: Option<&'static str>,
    stride: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    digits: Option<Vec<DigitReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    random_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loops: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    active: Option<String>,
    conflict_degree: Option<u32>,
    wavefronts: Option<u64>,
    ideal_wavefronts: Option<u64>,
    excess_wavefronts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_iteration_of: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_values: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_simulated: Option<String>,
    /// Its share of the kernel's compiled figures, where it is the only access of its
    /// array on its line and nvcc's code has instructions there.
    #[serde(skip_serializing_if = "Option::is_none")]
    compiled: Option<AccessShareReport>,
}

#[derive(Serialize)]
struct AccessShareReport {
    bytes: u32,
    executions: u64,
    wavefronts: u64,
    ideal_wavefronts: u64,
    excess_wavefronts: u64,
}

/// The `check --format json` object for all files; each file's `findings` are those `shown`
/// selects, with their rule ids, as the text and SARIF outputs show them. `compiled` is
/// each file's compiled view, where there is one (same order as `files`, or empty).
pub fn json<'a>(
    files: &'a [AnalysedFile],
    shown: &Shown,
    compiled: &'a [Option<Result<CompiledFile, CompileError>>],
) -> CheckReport<'a> {
    let costs = files.iter().flat_map(|file| {
        file.reported()
            .flat_map(|reported| reported.costs.iter().flatten().flatten())
    });
    CheckReport {
        version: JSON_VERSION,
        files: files
            .iter()
            .enumerate()
            .map(|(i, f)| file_report(f, shown, compiled.get(i).and_then(Option::as_ref)))
            .collect(),
        totals: WavefrontTotals::of(costs),
    }
}

fn file_report<'a>(
    file: &'a AnalysedFile,
    shown: &Shown,
    compiled: Option<&'a Result<CompiledFile, CompileError>>,
) -> FileReport<'a> {
    let compiled_error = match compiled {
        Some(Err(error)) => Some(error.to_string()),
        _ => None,
    };
    let compiled = compiled.and_then(|c| c.as_ref().ok());
    let mut findings = shown_findings(file, shown);
    if let Some(compiled) = compiled {
        super::finding::reconcile_with_compiled(&mut findings, file, compiled);
    }
    FileReport {
        path: file.path.display().to_string(),
        compiled_error,
        findings: findings
            .into_iter()
            .map(|f| FindingReport {
                rule: f.rule.map(|r| r.id()),
                rule_name: f.rule.map(|r| r.name()),
                severity: f.severity.as_str(),
                line: f.at.line,
                col: f.at.col,
                message: f.message,
            })
            .collect(),
        diagnostics: file
            .diagnostics
            .iter()
            .map(|d| DiagnosticReport {
                line: d.at.line,
                col: d.at.col,
                severity: d.severity.as_str(),
                message: &d.message,
            })
            .collect(),
        kernels: file
            .reported()
            .map(|r| kernel_report(&r, compiled))
            .collect(),
    }
}

fn kernel_report<'a>(
    reported: &Reported<'a>,
    compiled: Option<&'a CompiledFile>,
) -> KernelReport<'a> {
    let Reported {
        function,
        block,
        affine,
        costs,
        ..
    } = *reported;
    let template_args = (!function.template_args.is_empty()).then(|| {
        function
            .template_args
            .iter()
            .map(|(p, v)| (p.clone(), Value::from(v.as_str())))
            .collect()
    });
    let (shape, source) = match block {
        Ok(b) => (Some(b.shape), Some(b.source.to_string())),
        Err(_) => (None, None),
    };
    let name = function.display_name();
    let compiled_kernel = compiled.and_then(|file| file.kernels.iter().find(|k| k.name == name));
    let compiled = compiled
        .zip(compiled_kernel)
        .map(|(f, k)| compiled_report(f, k));
    KernelReport {
        compiled,
        name,
        kind: function.kind.as_str(),
        line: function.at.line,
        template_args,
        block: shape,
        block_source: source,
        skipped: function
            .syntax_error
            .map(|at| format!("syntax error at line {}", at.line)),
        arrays: function
            .arrays
            .iter()
            .enumerate()
            .map(|(i, a)| {
                array_report(a, block, affine.map(|f| (f, i)), &costs[i], compiled_kernel)
            })
            .collect(),
    }
}

fn array_report<'a>(
    array: &'a SharedArray,
    block: &Resolution,
    affine: Option<(&FunctionAffine, usize)>,
    costs: &[Result<SiteCost, String>],
    compiled: Option<&CompiledKernel>,
) -> ArrayReport<'a> {
    let reason = not_rewritable_reason(array, block);
    ArrayReport {
        name: &array.name,
        elem_type: &array.elem_type,
        elem_bytes: array.elem_bytes,
        dims: &array.dims,
        bytes: array.bytes(),
        is_extern: array.is_extern,
        line: array.at.line,
        col: array.at.col,
        rewritable: reason.is_none(),
        reason: reason.map(|r| r.to_string()),
        declared_by_macro: array.declared_by_macro.as_deref(),
        escapes: array
            .escapes
            .iter()
            .map(|e| EscapeReport {
                line: e.at.line,
                col: e.at.col,
                kind: e.kind.tag(),
                text: &e.text,
            })
            .collect(),
        accesses: array
            .accesses
            .iter()
            .enumerate()
            .map(|(i, access)| {
                let site = affine.and_then(|(f, a)| Some((f, f.sites[a][i].as_ref()?)));
                let mut report = access_report(access, site, &costs[i]);
                report.compiled = compiled
                    .and_then(|k| super::finding::compiled_share(k, array, access))
                    .filter(|(_, alone)| *alone)
                    .map(|(share, _)| AccessShareReport {
                        bytes: share.bytes,
                        executions: share.executions,
                        wavefronts: share.wavefronts,
                        ideal_wavefronts: share.ideal_wavefronts,
                        excess_wavefronts: share.excess(),
                    });
                report
            })
            .collect(),
        totals: WavefrontTotals::of(costs.iter().flatten()),
    }
}

fn access_report<'a>(
    access: &'a Access,
    site: Option<(&FunctionAffine, &Site)>,
    cost: &Result<SiteCost, String>,
) -> AccessReport<'a> {
    let detail = access.detail();
    let mut report = AccessReport {
        line: access.at.line,
        col: access.at.col,
        kind: access.kind.as_str(),
        text: &access.text,
        member: detail.member.as_deref(),
        atomic: detail.atomic_op.as_deref(),
        via_pointer: detail.via_pointer.as_ref().map(|calls| ViaPointer {
            calls: calls
                .iter()
                .map(|call| Place {
                    line: call.at.line,
                    col: call.at.col,
                })
                .collect(),
        }),
        form: None,
        class: None,
        stride: None,
        digits: None,
        random_reason: None,
        loops: None,
        active: None,
        conflict_degree: None,
        wavefronts: None,
        ideal_wavefronts: None,
        excess_wavefronts: None,
        per_iteration_of: None,
        unknown_values: None,
        not_simulated: None,
        compiled: None,
    };
    if let Some((function, site)) = site {
        report.form = site.form.as_ref().ok().map(|f| f.to_string());
        report.class = Some(site.class.name());
        report.stride = match &site.class {
            Class::Linear => Some(Value::from(1)),
            Class::Stride(s) => Some(sym_json(s)),
            _ => None,
        };
        match &site.class {
            Class::Block(digits) => {
                report.digits = Some(
                    digits
                        .iter()
                        .map(|(d, c)| DigitReport {
                            digit: d.to_string(),
                            coefficient: sym_json(c),
                        })
                        .collect(),
                );
            }
            Class::Random(why) => report.random_reason = Some(why.clone()),
            _ => {}
        }
        if !site.loops.is_empty() {
            report.loops = Some(
                site.loops
                    .iter()
                    .map(|&id| function.loops[id].name.clone())
                    .collect(),
            );
        }
        if site.active != Sym::Const(1) {
            report.active = Some(site.active.to_string());
        }
    }
    match cost {
        Ok(cost) => {
            report.conflict_degree = Some(cost.conflict_degree);
            report.wavefronts = Some(cost.wavefronts);
            report.ideal_wavefronts = Some(cost.ideal_wavefronts);
            report.excess_wavefronts = Some(cost.excess());
            if !cost.per_iteration_of.is_empty() {
                report.per_iteration_of = Some(cost.per_iteration_of.clone());
            }
            if !cost.unknown_values.is_empty() {
                report.unknown_values = Some(
                    cost.unknown_values
                        .iter()
                        .map(|u| (u.name.clone(), u.evaluated.to_string().into()))
                        .collect(),
                );
            }
        }
        Err(why) => report.not_simulated = Some(why.clone()),
    }
    report
}

/// A coefficient: a number when it is a constant, its expression otherwise.
fn sym_json(sym: &Sym) -> Value {
    match sym.constant() {
        Some(v) => v.into(),
        None => sym.to_string().into(),
    }
}
