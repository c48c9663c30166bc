//! What `fix` reports: a line per array it rewrote or left alone, and the JSON object of
//! `fix --format json` (docs/ARCHITECTURE.md §8: per array the chosen map, the totals before and after,
//! and the ALU instructions added per access).
use crate::pipeline::FileFix;
use crate::plan::{Action, ArrayOutcome};
use crate::rewrite::guard::{assumes_clause, Assumption};
use crate::solve::{Family, MapKind};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// `file:line:col: …` lines for every array that was rewritten or could have been;
/// `dry_run` (`fix --check`) says "would fix" for what was not written.
pub fn text(files: &[FileFix], dry_run: bool) -> String {
    let mut out = String::new();
    for file in files {
        let path = file.path.display();
        for array in file.arrays.iter().filter(|a| a.action != Action::Clean) {
            let _ = writeln!(out, "{path}:{}: {}", array.at, describe(array, dry_run));
        }
    }
    out
}

fn figure(excess: Option<u64>) -> String {
    excess.map_or("?".into(), |e| e.to_string())
}

fn describe(array: &ArrayOutcome, dry_run: bool) -> String {
    let name = format!("`{}` in `{}`", array.array, array.function);
    let map = array.map.as_ref().map(|m| m.description.as_str());
    match array.action {
        Action::Rewritten => format!(
            "{}: {name}: {} -> {} excess wavefronts; {} by {}; {}{}{}{}",
            if dry_run { "would fix" } else { "fixed" },
            figure(array.excess_before),
            figure(array.excess_after),
            array.form.map_or("?", |f| f.describe()),
            map.unwrap_or("?"),
            alu_text(array),
            match (array.extra_bytes, &array.default_budget) {
                (0, _) => String::new(),
                (bytes, Some(budget)) => format!(", {bytes} more bytes, within {budget}"),
                (bytes, None) => format!(", {bytes} more bytes"),
            },
            array
                .predicted_time
                .as_ref()
                .map_or(String::new(), |p| format!("; {p}")),
            assumes_clause(&array.assumptions),
        ),
        Action::NotApplied => format!(
            "note: {name} not rewritten: {}; {} would take it from {} to {} excess wavefronts",
            array.reason_text().unwrap_or_else(|| "?".into()),
            map.unwrap_or("?"),
            figure(array.excess_before),
            figure(array.excess_with_map),
        ),
        Action::LeftAlone => format!(
            "note: {name} left alone{}: {}",
            array
                .excess_before
                .map_or(String::new(), |e| format!(" with {e} excess wavefronts")),
            array.reason_text().unwrap_or_else(|| "?".into())
        ),
        Action::Clean => format!("{name} has no bank conflicts"),
    }
}

/// `1 ALU instruction per access`, `2 to 3 ALU instructions per access`.
fn alu_text(array: &ArrayOutcome) -> String {
    let low = array.accesses.iter().map(|a| a.alu).min().unwrap_or(0);
    let high = array.accesses.iter().map(|a| a.alu).max().unwrap_or(0);
    let plural = if high == 1 { "" } else { "s" };
    if low == high {
        format!("{low} ALU instruction{plural} per access")
    } else {
        format!("{low} to {high} ALU instructions per access")
    }
}

/// The mean ALU instructions added per access.
fn mean_alu(array: &ArrayOutcome) -> f64 {
    if array.accesses.is_empty() {
        0.0
    } else {
        let total: u32 = array.accesses.iter().map(|a| a.alu).sum();
        f64::from(total) / array.accesses.len() as f64
    }
}

// `fix --format json` as typed structs, fields in the order the object shows them; an
// absent value is `null`, as tools reading it have always seen.

#[derive(Serialize)]
pub struct FixReport<'a> {
    /// As `check --format json`'s ([`super::json::JSON_VERSION`]).
    version: u32,
    files: Vec<FileEntry<'a>>,
    totals: Totals,
}

#[derive(Serialize)]
struct FileEntry<'a> {
    path: String,
    changed: bool,
    arrays: Vec<ArrayEntry<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
}

#[derive(Serialize)]
struct Totals {
    arrays_rewritten: usize,
    arrays_not_simulated: usize,
    excess_before: u64,
    excess_after: u64,
}

#[derive(Serialize)]
struct ArrayEntry<'a> {
    kernel: &'a str,
    name: &'a str,
    line: usize,
    col: usize,
    action: &'static str,
    reason: Option<String>,
    applicability: Option<&'static str>,
    form: Option<&'static str>,
    map: Option<MapEntry<'a>>,
    map_function: Option<&'a str>,
    split_into: Option<&'a [String]>,
    excess_before: Option<u64>,
    excess_after: Option<u64>,
    excess_with_map: Option<u64>,
    extra_bytes: u64,
    /// Where no `--smem-budget` was given: the bytes the kernel may grow by at no cost in
    /// occupancy, which `extra_bytes` come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    default_budget: Option<BudgetEntry<'a>>,
    /// With nvcc: the rewritten kernel's predicted time over the original's.
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted_time: Option<f64>,
    assumptions: Vec<AssumptionEntry<'a>>,
    alu_per_access: Option<f64>,
    accesses: Vec<AccessEntry<'a>>,
}

#[derive(Serialize)]
struct BudgetEntry<'a> {
    bytes: u64,
    /// The architecture whose occupancy binds it.
    binding: &'a str,
    blocks_per_sm: u64,
    /// The build's architecture, where known (else every one bankwise has limits for).
    arch: Option<&'a str>,
}

#[derive(Serialize)]
struct MapEntry<'a> {
    strategy: Family,
    family: MapKind,
    /// Each family's own parameters.
    params: &'a Value,
    cuda: &'a str,
    cute: Option<&'a str>,
}

#[derive(Serialize)]
struct AccessEntry<'a> {
    line: usize,
    col: usize,
    kind: &'static str,
    text: &'a str,
    new_text: Option<&'a str>,
    alu: u32,
    excess_before: Option<u64>,
    excess_after: Option<u64>,
}

/// One value a rewrite rests on, with the guard that checks it, and what it is about.
#[derive(Serialize)]
struct AssumptionEntry<'a> {
    kind: &'static str,
    guard: &'static str,
    text: String,
    #[serde(flatten)]
    about: AssumedValue<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AssumedValue<'a> {
    Extent {
        dimension: usize,
        written: &'a str,
        value: u64,
    },
    DynamicExtent {
        elements: u64,
        bytes: u64,
    },
    Block {
        shape: [u32; 3],
        source: &'a str,
    },
}

fn array_entry(array: &ArrayOutcome) -> ArrayEntry<'_> {
    ArrayEntry {
        kernel: &array.function,
        name: &array.array,
        line: array.at.line,
        col: array.at.col,
        action: array.action.as_str(),
        reason: array.reason_text(),
        applicability: array.applicability.map(|a| a.as_str()),
        form: array.form.map(|f| f.as_str()),
        map: array.map.as_ref().map(|m| MapEntry {
            strategy: m.strategy,
            family: m.family,
            params: &m.params,
            cuda: &m.cuda,
            cute: m.cute.as_deref(),
        }),
        map_function: array.map_function.as_deref(),
        split_into: (!array.split_into.is_empty()).then_some(array.split_into.as_slice()),
        excess_before: array.excess_before,
        excess_after: array.excess_after,
        excess_with_map: array.excess_with_map,
        extra_bytes: array.extra_bytes,
        default_budget: array.default_budget.as_ref().map(|b| BudgetEntry {
            bytes: b.bytes,
            binding: &b.binding,
            blocks_per_sm: b.blocks_per_sm,
            arch: b.arch.as_deref(),
        }),
        predicted_time: array
            .predicted_time
            .as_ref()
            .map(|p| p.per_mille as f64 / 1000.0),
        assumptions: array.assumptions.iter().map(assumption_entry).collect(),
        alu_per_access: (array.action == Action::Rewritten).then(|| mean_alu(array)),
        accesses: array
            .accesses
            .iter()
            .map(|access| AccessEntry {
                line: access.at.line,
                col: access.at.col,
                kind: access.kind.as_str(),
                text: &access.text,
                new_text: access.new_text.as_deref(),
                alu: access.alu,
                excess_before: access.excess_before,
                excess_after: access.excess_after,
            })
            .collect(),
    }
}

fn assumption_entry(assumption: &Assumption) -> AssumptionEntry<'_> {
    let about = match assumption {
        Assumption::Extent {
            dimension,
            written,
            value,
        } => AssumedValue::Extent {
            dimension: *dimension,
            written,
            value: *value,
        },
        Assumption::DynamicExtent {
            elements,
            elem_bytes,
        } => AssumedValue::DynamicExtent {
            elements: *elements,
            bytes: elements * elem_bytes,
        },
        Assumption::Block { shape, source } => AssumedValue::Block {
            shape: *shape,
            source,
        },
    };
    AssumptionEntry {
        kind: assumption.kind(),
        guard: assumption.guard().as_str(),
        text: assumption.to_string(),
        about,
    }
}

/// The object of `fix --format json`; `diffs` (one per file, same order) when the diff was
/// asked for.
pub fn json<'a>(files: &'a [FileFix], diffs: Option<&'a [String]>) -> FixReport<'a> {
    let arrays = || files.iter().flat_map(|file| &file.arrays);
    // Totals over the arrays whose every access is simulated.
    let known = || arrays().filter_map(|a| Some((a.excess_before?, a.excess_after?)));
    FixReport {
        version: super::json::JSON_VERSION,
        files: files
            .iter()
            .enumerate()
            .map(|(i, file)| FileEntry {
                path: file.path.display().to_string(),
                changed: file.changed(),
                arrays: file.arrays.iter().map(array_entry).collect(),
                diff: diffs.and_then(|d| d.get(i)).map(String::as_str),
            })
            .collect(),
        totals: Totals {
            arrays_rewritten: arrays().filter(|a| a.action == Action::Rewritten).count(),
            arrays_not_simulated: arrays().count() - known().count(),
            excess_before: known().map(|k| k.0).sum(),
            excess_after: known().map(|k| k.1).sum(),
        },
    }
}
