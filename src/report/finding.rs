//! The one findings model every output format renders: what `check` says about a file, each
//! finding with its rule, severity, place, message and (once `fix` has planned the file) the
//! fix for its array. The emitters ([`super::text`], [`super::sarif`]) only format it.
use crate::affine::Class;
use crate::analysis::{AnalysedFile, Reported};
use crate::parse::{Access, AccessKind, Escape, Function, Location, Severity, SharedArray, Span};
use crate::pipeline::FileFix;
use crate::plan::Action;
use crate::rewrite::edit::Applicability;
use crate::rewrite::Edit;
use crate::rules::silencing;
pub use crate::rules::{Rule, Selection};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The figures of a conflicting access, as Nsight Compute counts them for one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConflictFigures {
    pub conflict_degree: u32,
    pub excess_wavefronts: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
}

/// An array of an analysed file: its function's index in `parsed.functions` and its index
/// among that function's arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayRef {
    pub function: usize,
    pub array: usize,
}

/// One thing `check` says.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// `None` for the notes on accesses without conflicts: information, not a finding a
    /// reviewer acts on.
    pub rule: Option<Rule>,
    /// As the text output shows it.
    pub severity: Severity,
    pub at: Location,
    pub message: String,
    /// The array it is about, if any: a suppression on its declaration silences it.
    pub array: Option<ArrayRef>,
    /// What a bank conflict has besides (boxed: most findings are notes without it).
    pub conflict: Option<Box<Conflict>>,
}

/// A conflicting access: where it is, its figures, its array and that array's fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The access's bytes.
    pub span: Span,
    pub figures: ConflictFigures,
    /// The array it is on.
    pub array: ArrayRef,
    /// The rewrite of that array, on the array's first finding ([`attach_fixes`]).
    pub fix: Option<Box<FindingFix>>,
}

/// The edits that rewrite a finding's array, as `fix` would apply them, and whether they
/// are safe (an unsafe one is here only when `--unsafe-fixes` asked for it).
#[derive(Debug, Clone, PartialEq)]
pub struct FindingFix {
    pub description: String,
    /// In the original text's order, each once.
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
}

impl Finding {
    fn new(rule: Option<Rule>, severity: Severity, at: Location, message: String) -> Self {
        Finding {
            rule,
            severity,
            at,
            message,
            array: None,
            conflict: None,
        }
    }

    fn on(self, array: ArrayRef) -> Self {
        Finding {
            array: Some(array),
            ..self
        }
    }
}

/// Functions below which a thread is not worth starting.
const FUNCTIONS_PER_THREAD: usize = 64;

/// Every finding of `file`, sorted by place; findings at one place keep the order of the
/// file's diagnostics, then of its functions, arrays and accesses.
pub fn findings(file: &AnalysedFile) -> Vec<Finding> {
    let reported: Vec<Reported> = file.reported().collect();
    // Whatever else the file holds (a syntax error elsewhere), a block-shape finding is
    // BW005, so that `--ignore BW005` silences it.
    let unknown_blocks: Vec<(Location, String)> = reported
        .iter()
        .filter_map(|r| {
            let why = match r.block {
                Err(why) => why.to_string(),
                Ok(block) => block.assumption_warning(r.function)?,
            };
            Some((r.function.at, why))
        })
        .collect();
    let mut findings: Vec<Finding> = file
        .diagnostics
        .iter()
        .map(|d| {
            let rule = if unknown_blocks.contains(&(d.at, d.message.clone())) {
                Rule::UnknownBlock
            } else {
                Rule::AnalysisDiagnostic
            };
            Finding::new(Some(rule), d.severity, d.at, d.message.clone())
        })
        .collect();
    // Functions are rendered on all cores; their findings join in function order, so the
    // stable sort below orders them as before.
    let rendered = crate::parallel::map(reported.len(), FUNCTIONS_PER_THREAD, |i| {
        function_findings(&reported[i])
    });
    findings.extend(rendered.into_iter().flatten());
    findings.sort_by_key(|f| f.at);
    findings
}

/// What a run shows: the rules selected (`--select`/`--ignore`) and, with `--verbose`, the
/// notes on accesses without conflicts.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    pub selection: Selection,
    pub clean_accesses: bool,
    /// Whether the command line selected rules (`--select`): then a `bankwise.toml`'s
    /// `select` does not stand in for the default.
    pub command_line_selects: bool,
}

/// The findings of `file` that a run shows: [`findings`] less those a `NOLINT` comment
/// silences (on the finding's line, or on its array's declaration) and those `shown` leaves
/// out, with a BW007 finding for each suppression that silenced nothing when BW007 is
/// selected.
pub fn shown_findings(file: &AnalysedFile, shown: &Shown) -> Vec<Finding> {
    let selection = shown
        .selection
        .for_file(&file.policy, shown.command_line_selects);
    let suppressions = &file.parsed.suppressions;
    let mut used = vec![false; suppressions.len()];
    let declared = |array: ArrayRef| {
        file.parsed
            .functions
            .get(array.function)
            .and_then(|f| f.arrays.get(array.array))
            .map(|a| a.at.line)
    };
    let mut kept: Vec<Finding> = findings(file)
        .into_iter()
        .filter(|finding| {
            let lines = std::iter::once(finding.at.line).chain(finding.array.and_then(declared));
            let silenced = match finding.rule {
                Some(rule) => lines
                    .filter_map(|line| silencing(suppressions, line, rule))
                    .next(),
                // A note on a clean access goes with whatever silences its line.
                None => lines
                    .filter_map(|line| suppressions.iter().find(|s| s.covers(line)))
                    .next(),
            };
            if let (Some(suppression), Some(_)) = (silenced, finding.rule) {
                if let Some(i) = suppressions.iter().position(|s| s == suppression) {
                    used[i] = true;
                }
            }
            silenced.is_none()
        })
        .filter(|finding| match finding.rule {
            Some(rule) => selection.enables(rule),
            None => shown.clean_accesses,
        })
        .collect();
    if selection.enables(Rule::UnusedSuppression) {
        for (suppression, _) in suppressions.iter().zip(&used).filter(|(_, used)| !**used) {
            let what = match suppression.first_line == suppression.last_line {
                true => format!("line {}", suppression.first_line),
                false => "its lines".to_string(),
            };
            kept.push(Finding::new(
                Some(Rule::UnusedSuppression),
                Severity::Warning,
                suppression.at,
                format!("this NOLINT silences no bankwise finding on {what}"),
            ));
        }
        kept.sort_by_key(|f| f.at);
    }
    kept
}

/// nvcc's instructions for `array` on the line of its access `access`
/// ([`crate::compiled::CompiledKernel::share`]), and whether that access is the array's only
/// one on the line (then the share is the access's own).
pub(crate) fn compiled_share(
    kernel: &crate::compiled::CompiledKernel,
    array: &SharedArray,
    access: &Access,
) -> Option<(crate::compiled::CompiledShare, bool)> {
    let line = access.at.line;
    let alone = array.accesses.iter().filter(|a| a.at.line == line).count() == 1;
    let share = kernel.share(&array.name, u32::try_from(line).ok()?)?;
    Some((share, alone))
}

/// The compiled view's verdict on each conflict of `findings` (of `file`) it can attribute:
/// nvcc's code has instructions for the access's array on its line, and the view counted
/// all of its kernel's accesses. A conflict nvcc's code does not have there (neighbours
/// merged into one wide access, a view through a macro) becomes a note that says so; one it
/// has in another amount says that too, when it is the only access of its array on the
/// line.
pub fn reconcile_with_compiled(
    findings: &mut [Finding],
    file: &AnalysedFile,
    compiled: &crate::compiled::CompiledFile,
) {
    for finding in findings.iter_mut() {
        let Some(conflict) = &finding.conflict else {
            continue;
        };
        let Some(function) = file.parsed.functions.get(conflict.array.function) else {
            continue;
        };
        let Some(array) = function.arrays.get(conflict.array.array) else {
            continue;
        };
        let name = function.display_name();
        let Some(kernel) = compiled
            .kernels
            .iter()
            .find(|k| k.name == name && k.counts_all())
        else {
            continue;
        };
        let Some(access) = array.accesses.iter().find(|a| a.at.line == finding.at.line) else {
            continue;
        };
        let share = compiled_share(kernel, array, access).filter(|(s, _)| s.executions > 0);
        let Some((share, alone)) = share else {
            continue;
        };
        let source = conflict.figures.excess_wavefronts;
        // None on the line is none for each of the line's accesses of the array; another
        // figure is this access's only when it is the line's only one.
        if share.excess() == 0 {
            finding.message = format!(
                "{}; but nvcc {} makes it a conflict-free {}-byte access for {}: no excess \
                 wavefront in the code the GPU runs",
                finding.message, compiled.nvcc, share.bytes, compiled.arch
            );
            finding.rule = None;
            finding.severity = Severity::Note;
            finding.conflict = None;
        } else if alone && share.excess() != source {
            finding.message = format!(
                "{}; in nvcc {}'s code for {}: {} excess wavefronts per block",
                finding.message,
                compiled.nvcc,
                compiled.arch,
                share.excess()
            );
        }
    }
}

/// Gives each array that `file` (the fix of `analysed`) rewrites its fix, on the array's
/// first finding. Fixes that `fix` would not apply (unsafe without `--unsafe-fixes`,
/// display-only) are left out.
pub fn attach_fixes(findings: &mut [Finding], analysed: &AnalysedFile, file: &FileFix) {
    // An outcome names its array as the report does: function, array, declaration.
    let mut first_finding: HashMap<(String, String, Location), usize> = HashMap::new();
    let mut named: HashSet<ArrayRef> = HashSet::new();
    for (i, finding) in findings.iter().enumerate() {
        let Some(conflict) = &finding.conflict else {
            continue;
        };
        if !named.insert(conflict.array) {
            continue;
        }
        let function = &analysed.parsed.functions[conflict.array.function];
        let declared = &function.arrays[conflict.array.array];
        first_finding
            .entry((function.display_name(), declared.name.clone(), declared.at))
            .or_insert(i);
    }
    for (fix, &outcome) in file.fixes.iter().zip(&file.fixed_arrays) {
        let outcome = &file.arrays[outcome];
        if outcome.action != Action::Rewritten {
            continue;
        }
        let key = (outcome.function.clone(), outcome.array.clone(), outcome.at);
        let Some(first) = first_finding
            .get(&key)
            .and_then(|&i| findings[i].conflict.as_deref_mut())
        else {
            continue;
        };
        let mut edits: Vec<Edit> = Vec::new();
        for edit in &fix.edits {
            // A compound assignment makes one edit twice (its load and its store).
            if !edits.contains(edit) {
                edits.push(edit.clone());
            }
        }
        // In the original text's order; insertions at one place keep theirs.
        edits.sort_by_key(|e| (e.range.start, !e.range.is_empty(), e.range.end));
        first.fix = Some(Box::new(FindingFix {
            description: fix.message.clone(),
            edits,
            applicability: fix.applicability,
        }));
    }
}

/// The findings of one function: its escapes and its accesses.
/// A shift in an index that reaches the integer width: undefined in C++, clamped by the GPU.
fn wide_shift_message(access: &Access, function: &str, shift: &crate::cost::WideShift) -> String {
    let mut message = format!(
        "`{}` in `{function}` shifts by `{}`, which reaches {} in lane {} of warp {}: C++ leaves \
         a shift by 32 or more (or a negative one) undefined, and the GPU clamps it to 32, so \
         the figures give such lanes 0",
        access.text, shift.amount, shift.reached, shift.lane, shift.warp
    );
    if shift.additive {
        message.push_str(
            "; `+` and `-` bind tighter than `<<` and `>>`: `x >> A + y` is `x >> (A + y)`, \
             not `(x >> A) + y`",
        );
    }
    message
}

fn function_findings(reported: &Reported) -> Vec<Finding> {
    let Reported {
        index,
        function,
        block,
        costs,
        ..
    } = *reported;
    let mut findings = Vec::new();
    let name = function.display_name();
    let block = match block {
        Ok(b) if b.is_assumed() => {
            format!("block {}, assumed", crate::block::format_shape(b.shape))
        }
        Ok(b) => format!("block {}", crate::block::format_shape(b.shape)),
        Err(_) => "block unknown".into(),
    };
    // Which instance of a template a conflict is in (each has its own figures), and for a
    // generic kernel analysed for assumed element types, the one assumed.
    let mut instance = String::new();
    if !function.template_args.is_empty() {
        instance = format!(" in `{name}`");
    }
    for (param, ty) in &function.assumed_types {
        let _ = write!(instance, ", assuming `{param}` = `{ty}`");
    }
    for (a, array) in function.arrays.iter().enumerate() {
        let shape = super::shape_text(array);
        let this_array = ArrayRef {
            function: index,
            array: a,
        };
        for escape in &array.escapes {
            findings.push(
                Finding::new(
                    Some(Rule::Escape),
                    Severity::Warning,
                    escape.at,
                    escape_message(array, function, escape),
                )
                .on(this_array),
            );
        }
        for (i, access) in array.accesses.iter().enumerate() {
            if let Ok(crate::cost::SiteCost {
                wide_shift: Some(shift),
                ..
            }) = &costs[a][i]
            {
                let message = wide_shift_message(access, &name, shift);
                // `s[b] += …` loads and stores through one subscript: one warning.
                if !findings
                    .iter()
                    .any(|f| f.at == access.at && f.message == message)
                {
                    findings.push(
                        Finding::new(
                            Some(Rule::AnalysisDiagnostic),
                            Severity::Warning,
                            access.at,
                            message,
                        )
                        .on(this_array),
                    );
                }
            }
            if let Ok(cost) = &costs[a][i] {
                if cost.excess() > 0 {
                    findings.push(Finding {
                        conflict: Some(Box::new(Conflict {
                            span: access.span,
                            figures: ConflictFigures {
                                conflict_degree: cost.conflict_degree,
                                excess_wavefronts: cost.excess(),
                                wavefronts: cost.wavefronts,
                                ideal_wavefronts: cost.ideal_wavefronts,
                            },
                            array: this_array,
                            fix: None,
                        })),
                        ..Finding::new(
                            Some(Rule::of_access(access.kind)),
                            Severity::Warning,
                            access.at,
                            conflict_message(array, access, cost) + &instance,
                        )
                        .on(this_array)
                    });
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
            let _ = match &costs[a][i] {
                Ok(cost) => write!(message, ": {}, no bank conflict", cost.class),
                Err(why) => write!(message, ": not simulated ({why})"),
            };
            findings.push(Finding::new(None, Severity::Note, access.at, message).on(this_array));
        }
    }
    findings
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
fn conflict_message(array: &SharedArray, access: &Access, cost: &crate::cost::SiteCost) -> String {
    let verb = match access.kind {
        AccessKind::Load => "reading",
        AccessKind::Store => "writing",
        AccessKind::Atomic => "updating (atomic)",
    };
    let class = match &cost.class {
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
        let _ = write!(
            message,
            ": lanes {} and {} both hit bank {} (words {} and {})",
            c.lanes.0, c.lanes.1, c.bank, c.words.0, c.words.1
        );
        if worst.warp > 0 || !worst.loop_values.is_empty() {
            let mut context = vec![format!("warp {}", worst.warp)];
            context.extend(worst.loop_values.iter().map(|(n, v)| format!("{n} = {v}")));
            let _ = write!(message, " in {}", context.join(", "));
        }
    }
    let _ = write!(message, "; {} excess wavefronts per block", cost.excess());
    if !cost.per_iteration_of.is_empty() {
        let loops: Vec<String> = cost
            .per_iteration_of
            .iter()
            .map(|l| format!("`{l}`"))
            .collect();
        let _ = write!(message, " and iteration of {}", loops.join(" and "));
    }
    message
}

/// ` through a pointer`, and the calls it is reached through, for an access through a pointer.
fn via_pointer_text(access: &Access) -> String {
    match access.detail().via_pointer.as_deref() {
        None => String::new(),
        Some([]) => " through a pointer".to_string(),
        Some(calls) => {
            let lines: Vec<String> = calls.iter().map(|call| call.at.line.to_string()).collect();
            format!(
                " through a pointer (called at line {})",
                lines.join(" → line ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_distinct_and_in_order() {
        let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        assert_eq!(
            ids,
            ["BW001", "BW002", "BW003", "BW004", "BW005", "BW006", "BW007"]
        );
    }
}
