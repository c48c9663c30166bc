//! What `fix` reports: a line per array it rewrote or left alone, and the JSON object of
//! `fix --format json` (docs/ARCHITECTURE.md §8: per array the chosen map, the totals before and after,
//! and the ALU instructions added per access).
use crate::pipeline::FileFix;
use crate::plan::{Action, ArrayOutcome};
use crate::rewrite::guard::{assumes_clause, Assumption};
use serde_json::{json, Value};
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
            "{}: {name}: {} -> {} excess wavefronts; {} by {}; {}{}{}",
            if dry_run { "would fix" } else { "fixed" },
            figure(array.excess_before),
            figure(array.excess_after),
            array.form.map_or("?", |f| f.describe()),
            map.unwrap_or("?"),
            alu_text(array),
            if array.extra_bytes > 0 {
                format!(", {} more bytes", array.extra_bytes)
            } else {
                String::new()
            },
            assumes_clause(&array.assumptions),
        ),
        Action::NotApplied => format!(
            "note: {name} not rewritten: {}; {} would take it from {} to {} excess wavefronts",
            array.reason.as_deref().unwrap_or("?"),
            map.unwrap_or("?"),
            figure(array.excess_before),
            figure(array.excess_with_map),
        ),
        Action::LeftAlone => format!(
            "note: {name} left alone{}: {}",
            array
                .excess_before
                .map_or(String::new(), |e| format!(" with {e} excess wavefronts")),
            array.reason.as_deref().unwrap_or("?")
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

fn array_json(array: &ArrayOutcome) -> Value {
    let map = array.map.as_ref().map(|m| {
        json!({
            "strategy": m.strategy,
            "family": m.family,
            "params": m.params,
            "cuda": m.cuda,
            "cute": m.cute,
        })
    });
    json!({
        "kernel": array.function,
        "name": array.array,
        "line": array.at.line,
        "col": array.at.col,
        "action": array.action.as_str(),
        "reason": array.reason,
        "applicability": array.applicability.map(|a| a.as_str()),
        "form": array.form.map(|f| f.as_str()),
        "map": map,
        "map_function": array.map_function,
        "split_into": (!array.split_into.is_empty()).then_some(&array.split_into),
        "excess_before": array.excess_before,
        "excess_after": array.excess_after,
        "excess_with_map": array.excess_with_map,
        "extra_bytes": array.extra_bytes,
        "assumptions": array.assumptions.iter().map(assumption_json).collect::<Vec<_>>(),
        "alu_per_access": (array.action == Action::Rewritten).then(|| mean_alu(array)),
        "accesses": array.accesses.iter().map(|access| json!({
            "line": access.at.line,
            "col": access.at.col,
            "kind": access.kind.as_str(),
            "text": access.text,
            "new_text": access.new_text,
            "alu": access.alu,
            "excess_before": access.excess_before,
            "excess_after": access.excess_after,
        })).collect::<Vec<_>>(),
    })
}

/// One value a rewrite rests on, with the guard that checks it.
fn assumption_json(assumption: &Assumption) -> Value {
    let mut value = json!({
        "kind": assumption.kind(),
        "guard": assumption.guard().as_str(),
        "text": assumption.to_string(),
    });
    match assumption {
        Assumption::Extent {
            dimension,
            written,
            value: extent,
        } => {
            value["dimension"] = json!(dimension);
            value["written"] = json!(written);
            value["value"] = json!(extent);
        }
        Assumption::DynamicExtent {
            elements,
            elem_bytes,
        } => {
            value["elements"] = json!(elements);
            value["bytes"] = json!(elements * elem_bytes);
        }
        Assumption::Block { shape, source } => {
            value["shape"] = json!(shape);
            value["source"] = json!(source);
        }
    }
    value
}

/// The JSON object of `fix --format json`; `diffs` (one per file, same order) when the diff
/// was asked for.
pub fn json(files: &[FileFix], diffs: Option<&[String]>) -> Value {
    let arrays = || files.iter().flat_map(|file| &file.arrays);
    // Totals over the arrays whose every access is simulated.
    let known = || arrays().filter_map(|a| Some((a.excess_before?, a.excess_after?)));
    let rewritten = arrays().filter(|a| a.action == Action::Rewritten).count();
    let entries: Vec<Value> = files
        .iter()
        .enumerate()
        .map(|(i, file)| {
            let mut entry = json!({
                "path": file.path.display().to_string(),
                "changed": file.changed(),
                "arrays": file.arrays.iter().map(array_json).collect::<Vec<_>>(),
            });
            if let Some(diff) = diffs.and_then(|d| d.get(i)) {
                entry["diff"] = json!(diff);
            }
            entry
        })
        .collect();
    json!({
        "files": entries,
        "totals": {
            "arrays_rewritten": rewritten,
            "arrays_not_simulated": arrays().count() - known().count(),
            "excess_before": known().map(|k| k.0).sum::<u64>(),
            "excess_after": known().map(|k| k.1).sum::<u64>(),
        },
    })
}
