//! The one findings model every output format renders: what `check` says about a file, each
//! finding with its rule, severity, place, message and (once `fix` has planned the file) the
//! fix for its array. The emitters ([`super::text`], [`super::sarif`]) only format it.
use crate::affine::{Class, Site};
use crate::analysis::{AnalysedFile, Reported};
use crate::parse::{Access, AccessKind, Escape, Function, Location, Severity, SharedArray, Span};
use crate::pipeline::FileFix;
use crate::plan::Action;
use crate::rewrite::Edit;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// A kind of finding, with an id that never changes (code scanning tracks alerts by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    ConflictOnLoad,
    ConflictOnStore,
    ConflictOnAtomic,
    Escape,
    UnknownBlock,
    /// A diagnostic of the front end or the analysis: a syntax error, launches that disagree,
    /// an unknown constant.
    AnalysisDiagnostic,
}

impl Rule {
    /// Every rule, in id order.
    pub const ALL: [Rule; 6] = [
        Rule::ConflictOnLoad,
        Rule::ConflictOnStore,
        Rule::ConflictOnAtomic,
        Rule::Escape,
        Rule::UnknownBlock,
        Rule::AnalysisDiagnostic,
    ];

    pub const fn id(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "BW001",
            Rule::ConflictOnStore => "BW002",
            Rule::ConflictOnAtomic => "BW003",
            Rule::Escape => "BW004",
            Rule::UnknownBlock => "BW005",
            Rule::AnalysisDiagnostic => "BW006",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "bank-conflict-load",
            Rule::ConflictOnStore => "bank-conflict-store",
            Rule::ConflictOnAtomic => "bank-conflict-atomic",
            Rule::Escape => "array-escapes-analysis",
            Rule::UnknownBlock => "block-shape-unknown",
            Rule::AnalysisDiagnostic => "analysis-diagnostic",
        }
    }

    pub const fn summary(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "Shared-memory load with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::ConflictOnStore => "Shared-memory store with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::ConflictOnAtomic => "Shared-memory atomic with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::Escape => "A shared array escapes analysis (its address goes out of sight): it is left unanalysed there and never rewritten.",
            Rule::UnknownBlock => "The block shape of a kernel is unknown: its accesses are analysed under an assumed shape, which the finding names, and fixes that rest on it are unsafe; pass --block or set it in bankwise.toml.",
            Rule::AnalysisDiagnostic => "Something the analysis could not follow: a syntax error, launches that disagree, an unknown constant.",
        }
    }

    /// The README section that explains it (the project has no public URL to link to).
    pub const fn section(self) -> &'static str {
        match self {
            Rule::UnknownBlock => "Configuration: `bankwise.toml`",
            _ => "`bankwise check`",
        }
    }

    /// Its level where the finding does not set one ([`Finding::level`]).
    pub const fn default_severity(self) -> Severity {
        match self {
            Rule::Escape | Rule::UnknownBlock => Severity::Note,
            _ => Severity::Warning,
        }
    }

    fn of_access(kind: AccessKind) -> Rule {
        match kind {
            AccessKind::Load => Rule::ConflictOnLoad,
            AccessKind::Store => Rule::ConflictOnStore,
            AccessKind::Atomic => Rule::ConflictOnAtomic,
        }
    }
}

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

/// The edits that rewrite a finding's array, as `fix` would apply them.
#[derive(Debug, Clone, PartialEq)]
pub struct FindingFix {
    pub description: String,
    /// In the original text's order, each once.
    pub edits: Vec<Edit>,
}

impl Finding {
    fn new(rule: Option<Rule>, severity: Severity, at: Location, message: String) -> Self {
        Finding {
            rule,
            severity,
            at,
            message,
            conflict: None,
        }
    }

    /// The level a code-review tool shows: the rule's, but a diagnostic keeps its own.
    pub fn level(&self) -> Severity {
        match self.rule {
            Some(Rule::AnalysisDiagnostic) | None => self.severity,
            Some(rule) => rule.default_severity(),
        }
    }
}

/// Functions below which a thread is not worth starting.
const FUNCTIONS_PER_THREAD: usize = 64;

/// Every finding of `file`, sorted by place; findings at one place keep the order of the
/// file's diagnostics, then of its functions, arrays and accesses.
pub fn findings(file: &AnalysedFile) -> Vec<Finding> {
    let reported: Vec<Reported> = file.reported().collect();
    let unknown_blocks: Vec<(Location, String)> = reported
        .iter()
        .filter(|r| r.function.syntax_error.is_none())
        .filter_map(|r| {
            let why = match r.block {
                Err(why) => why.clone(),
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
        affine,
        costs,
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
    for (a, array) in function.arrays.iter().enumerate() {
        let shape = super::shape_text(array);
        for escape in &array.escapes {
            findings.push(Finding::new(
                Some(Rule::Escape),
                Severity::Warning,
                escape.at,
                escape_message(array, function, escape),
            ));
        }
        for (i, access) in array.accesses.iter().enumerate() {
            let site = affine.and_then(|f| f.sites[a][i].as_ref());
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
                    findings.push(Finding::new(
                        Some(Rule::AnalysisDiagnostic),
                        Severity::Warning,
                        access.at,
                        message,
                    ));
                }
            }
            if let (Ok(cost), Some(site)) = (&costs[a][i], site) {
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
                            array: ArrayRef {
                                function: index,
                                array: a,
                            },
                            fix: None,
                        })),
                        ..Finding::new(
                            Some(Rule::of_access(access.kind)),
                            Severity::Warning,
                            access.at,
                            conflict_message(array, access, site, cost),
                        )
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
            let _ = match (&costs[a][i], site) {
                (Ok(_), Some(site)) => write!(message, ": {}, no bank conflict", site.class),
                (Err(why), _) => write!(message, ": not simulated ({why})"),
                _ => Ok(()),
            };
            findings.push(Finding::new(None, Severity::Note, access.at, message));
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
fn conflict_message(
    array: &SharedArray,
    access: &Access,
    site: &Site,
    cost: &crate::cost::SiteCost,
) -> String {
    let verb = match access.kind {
        AccessKind::Load => "reading",
        AccessKind::Store => "writing",
        AccessKind::Atomic => "updating (atomic)",
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
        assert_eq!(ids, ["BW001", "BW002", "BW003", "BW004", "BW005", "BW006"]);
    }
}
