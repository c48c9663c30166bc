//! The decisions: what happens to each shared array of a file, all or nothing: every access
//! of the array goes through the one map chosen for it, or the array is left as it is with
//! the reason. Arrays without conflicts are left alone silently.
mod budget;
mod price;
mod reason;
mod rewrite_form;

pub use reason::{Caution, Reason};

pub use budget::DefaultBudget;
pub use price::{RewritePrice, MAX_ALU_PER_WAVEFRONT};
use rewrite_form::{form, pointer_made_at, Names};

use crate::analysis::{is_reported, not_rewritable_reason, AnalysedFile, FunctionAnalysis};
use crate::bank::BankConfig;
use crate::parse::{
    identifier_tokens, AccessKind, DeclaratorKey, Function, Location, PackedVec, PackedVecBuilder,
    ParsedFile, SharedArray, Stmt,
};
use crate::rewrite::edit::{Applicability, Edit};
use crate::rewrite::forms::{
    already_rewritten, definition_start, describe, map_function, padded_declaration,
    swizzle_in_place, FormKind, Rewrite, Source, Target,
};
use crate::rewrite::guard::{assumptions, guard_edits, Assumption};
use crate::rewrite::soa;
use crate::rules::{silencing, Rule};
use crate::solve::choose::{Choice, ChoiceCache, Options as ChooseOptions};
use crate::solve::kernel::{allowance, choose_kernel, TIE_BREAK_LAMBDA};
use crate::solve::maps::{AddressMap, Padding, Swizzle};
use crate::solve::{ArrayProblem, Family, MapKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// What `fix` was asked for, beyond the analysis options.
#[derive(Debug, Clone, Default)]
pub struct Strategy {
    /// A family to use for every array (`fix --strategy`); `None` lets the solvers choose.
    pub forced: Option<Family>,
    /// The shared memory each kernel may use, in bytes (`--smem-budget`); `None`: what keeps
    /// each kernel's occupancy (`budget::default_budget`), none where that is not known.
    pub smem_budget: Option<u64>,
    /// The most ALU instructions a map may add per excess wavefront it removes
    /// (`--max-alu-per-wavefront`); `None`: [`price::MAX_ALU_PER_WAVEFRONT`].
    pub max_alu_per_wavefront: Option<u64>,
    /// The build's architecture (`-arch`), which bounds the default budget.
    pub arch: Option<String>,
}

/// What became of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// Its accesses go through the chosen map.
    Rewritten,
    /// A rewrite exists but its applicability kept it out (unsafe without
    /// `--unsafe-fixes`, or display-only).
    NotApplied,
    /// Left as it is, for the reason given.
    LeftAlone,
    /// No bank conflicts: nothing to do.
    Clean,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Rewritten => "rewritten",
            Action::NotApplied => "not-applied",
            Action::LeftAlone => "left-alone",
            Action::Clean => "clean",
        }
    }
}

/// The chosen map, for reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapSummary {
    pub strategy: Family,
    pub family: MapKind,
    /// As JSON text when packed: a `Value` reads back only from a self-describing format.
    #[serde(with = "json_text")]
    pub params: Value,
    /// The map on a linear index `i`.
    pub cuda: String,
    pub cute: Option<String>,
    pub description: String,
}

/// A JSON value written as its text, for the packed report ([`crate::parse::Packed`]).
mod json_text {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(value: &Value, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        let text = String::deserialize(deserializer)?;
        serde_json::from_str(&text).map_err(D::Error::custom)
    }
}

/// One access of an array, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessOutcome {
    pub at: Location,
    pub kind: AccessKind,
    pub text: String,
    pub new_text: Option<String>,
    pub alu: u32,
    pub excess_before: Option<u64>,
    pub excess_after: Option<u64>,
}

/// One array of one reported function, and what `fix` did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrayOutcome {
    pub function: String,
    pub array: String,
    pub at: Location,
    pub action: Action,
    pub reason: Option<Reason>,
    pub applicability: Option<Applicability>,
    pub form: Option<FormKind>,
    pub map: Option<MapSummary>,
    /// The map function's name, for that form.
    pub map_function: Option<String>,
    /// The arrays that take its place, stored as a struct of arrays.
    pub split_into: Vec<String>,
    pub excess_before: Option<u64>,
    /// In the output: the re-analysed figure for a rewritten array (validation made sure it
    /// is the prediction), the figure before for any other.
    pub excess_after: Option<u64>,
    /// What the chosen map gives, applied or not.
    pub excess_with_map: Option<u64>,
    pub extra_bytes: u64,
    /// The budget those bytes come from, when no `--smem-budget` was given.
    pub default_budget: Option<DefaultBudget>,
    /// With nvcc: what the time model predicts of the rewritten kernel.
    pub predicted_time: Option<crate::compiled::PredictedTime>,
    /// The values a rewrite rests on, each with its guard in the source.
    pub assumptions: Vec<Assumption>,
    pub accesses: Vec<AccessOutcome>,
}

impl ArrayOutcome {
    /// Its reason as the reports word it.
    pub fn reason_text(&self) -> Option<String> {
        self.reason.as_ref().map(ToString::to_string)
    }
}

/// An array with a rewrite ready to apply.
pub struct Planned {
    pub function: usize,
    pub array: usize,
    /// Index into the plan's outcomes.
    pub outcome: usize,
    pub rewrite: Rewrite,
    pub map: Box<dyn AddressMap>,
    /// The map as the report describes it.
    pub description: String,
    /// The predicted excess wavefronts of each access.
    pub predicted: Vec<u64>,
    pub applicability: Applicability,
    /// Why the rewrite is unsafe, when it is.
    pub caution: Option<Caution>,
}

/// The plan for one file.
#[derive(Default)]
pub struct Plan {
    /// Every array's outcome, in the order `check` reports them.
    pub outcomes: PackedVec<ArrayOutcome>,
    pub rewrites: Vec<Planned>,
}

/// A decision for one array before the template instances are reconciled.
enum Decision {
    Clean,
    LeftAlone(Reason),
    Suggest(Candidate, Reason),
    /// With the reason the rewrite is unsafe, if it is.
    Rewrite(Candidate, Box<Rewrite>, Option<Caution>),
}

struct Candidate {
    map: Box<dyn AddressMap>,
    strategy: Family,
    per_site: Vec<u64>,
    /// The default budget its extra bytes come from.
    budget: Option<Box<DefaultBudget>>,
}

impl Candidate {
    fn of(choice: &mut Choice, family: usize) -> Option<Self> {
        let result = choice.families.get_mut(family)?;
        let best = result.best.take()?;
        Some(Candidate {
            map: best.map,
            strategy: result.strategy,
            per_site: best.score.per_site,
            budget: None,
        })
    }

    fn summary(&self) -> MapSummary {
        let map = self.map.as_ref();
        MapSummary {
            strategy: self.strategy,
            family: map.kind(),
            params: map.params(),
            cuda: map.cuda("i"),
            cute: map.cute().map(|c| c.to_string()),
            description: describe(map),
        }
    }
}

/// What the plan reads of an analysed file: its model, and the analysis of each function it
/// decides. `fix` plans each batch of functions as the analysis makes it, so that no affine
/// analysis is kept ([`BatchInput`]); `explain` and `check`'s preview plan a whole
/// [`AnalysedFile`].
pub trait PlanInput: Sync {
    fn parsed(&self) -> &ParsedFile;
    fn analysis(&self, function: usize) -> &FunctionAnalysis;
}

impl PlanInput for AnalysedFile {
    fn parsed(&self) -> &ParsedFile {
        &self.parsed
    }

    fn analysis(&self, function: usize) -> &FunctionAnalysis {
        &self.per_function[function]
    }
}

/// One batch of the analysis, as [`crate::analysis::analyse_text_visiting`] shows it: the
/// file's model and the analyses of the functions from `first` on. Only those functions
/// may be decided from it.
pub struct BatchInput<'a> {
    pub parsed: &'a ParsedFile,
    pub first: usize,
    pub analyses: &'a [FunctionAnalysis],
}

impl PlanInput for BatchInput<'_> {
    fn parsed(&self) -> &ParsedFile {
        self.parsed
    }

    fn analysis(&self, function: usize) -> &FunctionAnalysis {
        &self.analyses[function - self.first]
    }
}

/// Decides every array of every reported function of `file` (whose text is `text`) in the
/// bank model `bank`.
pub fn plan(file: &AnalysedFile, text: &str, strategy: &Strategy, bank: &BankConfig) -> Plan {
    let mut planner = Planner::new(&file.parsed, text, strategy, bank);
    let reported: Vec<usize> = (0..file.parsed.functions.len())
        .filter(|&f| is_reported(&file.parsed.functions[f]))
        .collect();
    planner.decide(file, &reported);
    planner.finish(file)
}

/// The plan of one file, made a batch of functions at a time ([`plan`] in steps).
pub struct Planner<'t> {
    source: Source<'t>,
    names: Names,
    decisions: Vec<(usize, usize, Decision)>,
    shared_names: HashSet<String>,
    cache: ChoiceCache,
    strategy: &'t Strategy,
    bank: &'t BankConfig,
}

impl<'t> Planner<'t> {
    pub fn new(
        parsed: &ParsedFile,
        text: &'t str,
        strategy: &'t Strategy,
        bank: &'t BankConfig,
    ) -> Self {
        Planner {
            source: Source::new(text),
            names: Names::new(text),
            decisions: Vec::new(),
            shared_names: shared_names(parsed),
            cache: ChoiceCache::default(),
            strategy,
            bank,
        }
    }

    /// Decides the arrays of `functions` (reported ones, in the file's order, after those
    /// decided before) from `input`.
    pub fn decide(&mut self, input: &dyn PlanInput, functions: &[usize]) {
        let (strategy, bank) = (self.strategy, self.bank);
        // The problems are posed on several threads, a batch of functions at a time (they
        // hold every warp request of their arrays); the decisions are made in order, since
        // the map functions' names and the solvers' cache depend on it.
        for batch in functions.chunks(FUNCTIONS_POSED_AT_ONCE) {
            let source = &self.source;
            let shared_names = &self.shared_names;
            let problems = crate::parallel::map(batch.len(), 1, |i| {
                let kernel =
                    KernelPlanner::new(input, batch[i], strategy, bank, shared_names, source);
                (0..input.parsed().functions[batch[i]].arrays.len())
                    .map(|a| kernel.problem(a, source))
                    .collect::<Vec<_>>()
            });
            for (&f, problems) in batch.iter().zip(problems) {
                let mut kernel = KernelPlanner::new(input, f, strategy, bank, shared_names, source);
                for (a, problem) in problems.into_iter().enumerate() {
                    kernel.decide(a, problem, source, &mut self.names, &mut self.cache);
                }
                for (a, decision) in kernel.finish(source, &mut self.names) {
                    self.decisions.push((f, a, decision));
                }
            }
        }
    }

    /// How many arrays are decided so far.
    pub fn decided(&self) -> usize {
        self.decisions.len()
    }

    /// The arrays from the `from`-th decided on with a rewrite: function, array and map.
    pub fn rewrites_from(&self, from: usize) -> Vec<(usize, usize, &dyn AddressMap)> {
        self.decisions[from..]
            .iter()
            .filter_map(|(f, a, decision)| match decision {
                Decision::Rewrite(candidate, ..) => Some((*f, *a, candidate.map.as_ref())),
                _ => None,
            })
            .collect()
    }

    /// The plan: the instances of each template reconciled, and the outcomes of the arrays,
    /// packed as they are made (a large file's are tens of megabytes). `file` needs no
    /// affine analysis.
    pub fn finish(self, file: &dyn PlanInput) -> Plan {
        let mut decisions = self.decisions;
        reconcile_instances(file, &mut decisions);
        // Sized once: a large file has tens of thousands of arrays.
        let rewrites = decisions
            .iter()
            .filter(|(_, _, d)| matches!(d, Decision::Rewrite(..)))
            .count();
        let mut outcomes = PackedVecBuilder::default();
        let mut planned = Vec::with_capacity(rewrites);
        for (f, a, decision) in decisions {
            let outcome = outcome(file, f, a, &decision);
            let description = outcome.map.as_ref().map(|m| m.description.clone());
            let index = outcomes.len();
            outcomes.push(outcome);
            if let Decision::Rewrite(candidate, rewrite, caution) = decision {
                planned.push(Planned {
                    function: f,
                    array: a,
                    outcome: index,
                    rewrite: *rewrite,
                    map: candidate.map,
                    description: description.unwrap_or_default(),
                    predicted: candidate.per_site,
                    applicability: applicability(&caution),
                    caution,
                });
            }
        }
        Plan {
            outcomes: outcomes.finish(),
            rewrites: planned,
        }
    }
}

/// Functions whose arrays' problems are posed before any of them is decided.
const FUNCTIONS_POSED_AT_ONCE: usize = 256;

/// Where the `NOLINT` comment is that keeps `fix` off array `a` of function `f`: one that
/// silences a conflict rule on its declaration, or, when every conflicting access is
/// silenced, the first of those.
fn silenced(file: &dyn PlanInput, f: usize, a: usize) -> Option<Location> {
    let suppressions = &file.parsed().suppressions;
    let array = &file.parsed().functions[f].arrays[a];
    let conflict_rules = [
        Rule::ConflictOnLoad,
        Rule::ConflictOnStore,
        Rule::ConflictOnAtomic,
    ];
    if let Some(s) = conflict_rules
        .iter()
        .find_map(|&rule| silencing(suppressions, array.at.line, rule))
    {
        return Some(s.at);
    }
    let mut first = None;
    for (access, cost) in array.accesses.iter().zip(&file.analysis(f).costs[a]) {
        if !cost.as_ref().is_ok_and(|c| c.excess() > 0) {
            continue;
        }
        let s = silencing(suppressions, access.at.line, Rule::of_access(access.kind))?;
        first = first.or(Some(s.at));
    }
    first
}

/// A name in `array`'s extents that the function's body declares (`TILE * TILE;` reads as
/// a declaration of `TILE` when `TILE` is a template parameter): a rewrite writes the
/// extents as they are spelled, which would then name the local.
fn shadowed_extent_name(declared: &HashSet<String>, array: &SharedArray) -> Option<String> {
    array
        .dim_texts
        .iter()
        .flat_map(|text| identifier_tokens(text))
        .find(|name| declared.contains(*name))
        .map(str::to_string)
}

/// Each name `statements` declare, at any depth (the lowering bounds the nesting), with
/// whether it is a variable's other than a `__shared__` array's (`false` for the names an
/// opaque statement assigns, which may read as declarations).
fn for_each_declared(statements: &[Stmt], visit: &mut impl FnMut(&str, bool)) {
    crate::parse::walk_statements(statements, &mut |statement| {
        if let Stmt::Decl(decl) = statement {
            visit(&decl.name, !decl.is_shared);
        } else if let Stmt::Opaque { assigned, .. } = statement {
            for name in assigned {
                visit(name, false);
            }
        }
    });
}

/// Excess wavefronts of an array's accesses as `check` measured them; `None` when one could
/// not be simulated.
fn excess_before(file: &dyn PlanInput, f: usize, a: usize) -> Option<u64> {
    crate::analysis::array_excess(&file.analysis(f).costs[a])
}

/// The decisions of one kernel's arrays: per array first, then (with `--smem-budget`) the
/// per-kernel choice among the arrays' candidates.
struct KernelPlanner<'a> {
    file: &'a dyn PlanInput,
    function: usize,
    strategy: &'a Strategy,
    bank: &'a BankConfig,
    /// Bytes the kernel's arrays may grow by, or why the budget cannot be met.
    allowance: Result<u64, String>,
    /// Without `--smem-budget`: what the kernel may grow by at no cost in occupancy.
    default_budget: Option<budget::DefaultBudget>,
    decisions: Vec<Decision>,
    /// Arrays still to choose a map for: (array, its choice).
    pending: Vec<(usize, Choice)>,
    /// The names more than one function of the file goes by ([`shared_names`]).
    shared_names: &'a HashSet<String>,
    /// What the function's body declares, walked once for all its arrays, and only when
    /// an array gets that far (the body is unpacked to walk it).
    declarations: std::sync::OnceLock<Declarations>,
}

/// The names a function's body declares, at any depth, or reads as declaring
/// ([`for_each_declared`]).
#[derive(Default)]
struct Declarations {
    all: HashSet<String>,
    /// Those of variables other than `__shared__` arrays.
    locals: HashSet<String>,
}

impl Declarations {
    fn of(function: &Function) -> Self {
        let mut declarations = Declarations::default();
        for_each_declared(&function.body.statements(), &mut |name, local| {
            if local {
                declarations.locals.insert(name.to_string());
            }
            declarations.all.insert(name.to_string());
        });
        declarations
    }
}

/// The names (as reports show them) that several functions of `file` share: overloads, or
/// a redefinition nvcc rejects. Counted once per file, so that the check stays linear.
pub(crate) fn shared_names(parsed: &ParsedFile) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut shared = HashSet::new();
    for function in &parsed.functions {
        let name = function.display_name();
        if !seen.insert(name.clone()) {
            shared.insert(name);
        }
    }
    shared
}

impl<'a> KernelPlanner<'a> {
    fn new(
        file: &'a dyn PlanInput,
        function: usize,
        strategy: &'a Strategy,
        bank: &'a BankConfig,
        shared_names: &'a HashSet<String>,
        source: &Source,
    ) -> Self {
        let footprint = file.parsed().functions[function]
            .arrays
            .iter()
            .filter_map(|a| a.bytes())
            .sum();
        let default_budget = match strategy.smem_budget {
            Some(_) => None,
            None => kernel_default_budget(file, function, strategy.arch.as_deref(), source),
        };
        KernelPlanner {
            file,
            function,
            strategy,
            bank,
            allowance: match &default_budget {
                Some(budget) => Ok(budget.bytes),
                None => allowance(strategy.smem_budget, footprint),
            },
            default_budget,
            decisions: Vec::new(),
            pending: Vec::new(),
            shared_names,
            declarations: std::sync::OnceLock::new(),
        }
    }

    /// Whether the kernel's arrays share bytes to grow by: one choice for all of them.
    fn budgeted(&self) -> bool {
        self.strategy.smem_budget.is_some()
            || self.default_budget.as_ref().is_some_and(|b| b.bytes > 0)
    }

    /// Decides array `a` from its [`Self::problem`].
    fn decide(
        &mut self,
        a: usize,
        problem: Result<ArrayProblem, Decision>,
        source: &Source,
        names: &mut Names,
        cache: &mut ChoiceCache,
    ) {
        let decision = match problem.and_then(|problem| self.choice(a, problem, cache)) {
            Ok(choice) => {
                if self.strategy.forced.is_none() && self.budgeted() {
                    self.pending.push((a, choice));
                    Decision::Clean
                } else {
                    let family = self.pick(&choice);
                    self.build(a, choice, family, source, names)
                }
            }
            Err(decision) => decision,
        };
        self.decisions.push(decision);
    }

    /// The problem of array `a`, or the decision that makes solving one unnecessary. Reads
    /// only the analysis: the problems of many arrays are posed on several threads.
    fn problem(&self, a: usize, source: &Source) -> Result<ArrayProblem, Decision> {
        let file = self.file;
        let function = &file.parsed().functions[self.function];
        let array = &function.arrays[a];
        let before = excess_before(file, self.function, a);
        if before == Some(0) {
            return Err(Decision::Clean);
        }
        let left = |why: Reason| Err(Decision::LeftAlone(why));
        if already_rewritten(source, array) {
            return left(Reason::AlreadyRewritten);
        }
        if let Some(at) = silenced(file, self.function, a) {
            return left(Reason::Silenced { line: at.line });
        }
        if let Some(reason) = array.reason() {
            return left(Reason::Escapes(reason));
        }
        // Several extern arrays share the dynamic memory: the front end makes that an escape.
        // A map is proven a bijection on the array's extent, so an extern array's must be
        // the one its launches allocate.
        if array.is_extern && array.dims.first() == Some(&None) {
            return left(Reason::UnsizedExtern);
        }
        if array.file_scope {
            return left(Reason::FileScope);
        }
        if array.record_scalar {
            return left(Reason::Record);
        }
        if let Some(reason) = not_rewritable_reason(array, &file.analysis(self.function).block) {
            return left(Reason::NotRewritable(reason));
        }
        // Another variable with the array's name (or a statement that reads as declaring
        // one: `f buf[i];`): a rewrite that writes a subscript of the array in place of an
        // access through a pointer would read that one where it is in scope.
        let declarations = self.declarations.get_or_init(|| Declarations::of(function));
        if declarations.locals.contains(&array.name) {
            return left(Reason::NameDeclaredAgain {
                function: function.display_name(),
                array: array.name.clone(),
            });
        }
        if let Some(name) = shadowed_extent_name(&declarations.all, array) {
            return left(Reason::ExtentNameDeclaredAgain {
                name,
                function: function.display_name(),
            });
        }
        if let Some(why) = &file.analysis(self.function).over_budget {
            return left(Reason::FunctionNotSimulated {
                function: function.display_name(),
                why: why.to_string(),
            });
        }
        // An assumed shape is pinned by name while the output is checked: a name two
        // functions share (overloads, or a redefinition nvcc rejects) cannot be.
        let assumed = file
            .analysis(self.function)
            .block
            .as_ref()
            .is_ok_and(|b| b.is_assumed());
        if assumed && self.shared_names.contains(&function.display_name()) {
            return left(Reason::AssumedShapeOfSharedName {
                function: function.display_name(),
            });
        }
        let analysis = &file.analysis(self.function);
        let Some(affine) = analysis.affine.as_ref() else {
            // Analysed, but its affine analysis was not kept (`KeepAffine::ForFixes`): no
            // array of the function has a known conflict, so some access of this one was
            // not simulated, and the figures say which.
            let unsimulated = array
                .accesses
                .iter()
                .zip(&analysis.costs[a])
                .find_map(|(access, cost)| Some((access.at.line, cost.as_ref().err()?)));
            return left(match (&analysis.block, unsimulated) {
                (Ok(_), Some((line, why))) => {
                    Reason::SiteNotSimulated(format!("line {line}: {why}"))
                }
                _ => Reason::NotAnalysed,
            });
        };
        let types = &file.parsed().constants.types;
        ArrayProblem::pose(function, a, affine, types, self.bank)
            .map_err(|why| Decision::LeftAlone(Reason::SiteNotSimulated(why.to_string())))
    }

    /// The solvers' choice for array `a` posed as `problem`.
    fn choice(
        &self,
        a: usize,
        mut problem: ArrayProblem,
        cache: &mut ChoiceCache,
    ) -> Result<Choice, Decision> {
        let array = &self.file.parsed().functions[self.function].arrays[a];
        // The launch sets an extern array's size: it is never padded.
        problem.max_extra_bytes = if array.is_extern {
            0
        } else {
            *self.allowance.as_ref().unwrap_or(&0)
        };
        let options = ChooseOptions {
            choice_only: self.strategy.forced.is_none(),
            ..ChooseOptions::default()
        };
        cache
            .choose(&problem, &options)
            .map_err(|why| Decision::LeftAlone(Reason::NoMapApplies(why.to_string())))
    }

    /// The family the array gets: the forced one, or the solver's choice.
    fn pick(&self, choice: &Choice) -> usize {
        match &self.strategy.forced {
            Some(name) => choice
                .families
                .iter()
                .position(|f| f.strategy == *name)
                .unwrap_or(0),
            None => choice.chosen,
        }
    }

    /// The rewrite of array `a` with the map of `choice.families[family]`.
    fn build(
        &self,
        a: usize,
        mut choice: Choice,
        family: usize,
        source: &Source,
        names: &mut Names,
    ) -> Decision {
        let file = self.file;
        let function = &file.parsed().functions[self.function];
        let array = &function.arrays[a];
        let before = choice.excess_before;
        let skipped = choice.families.get(family).and_then(|f| f.skipped.clone());
        let worsens = choice
            .families
            .get(family)
            .and_then(|f| f.best.as_ref())
            .is_some_and(|b| b.score.worsens);
        let Some(candidate) = Candidate::of(&mut choice, family) else {
            return Decision::LeftAlone(Reason::StrategyDoesNotApply {
                strategy: Family::ALL
                    .get(family)
                    .map_or("chosen", |f| f.name())
                    .to_string(),
                why: skipped.unwrap_or_default(),
            });
        };
        if worsens {
            return Decision::LeftAlone(Reason::MapWorsens {
                strategy: candidate.strategy.to_string(),
            });
        }
        if !helps(&candidate, Some(before)) {
            let after: u64 = candidate.per_site.iter().sum();
            return Decision::LeftAlone(match &self.strategy.forced {
                Some(name) => Reason::ForcedMapLeaves {
                    strategy: name.to_string(),
                    after,
                    before,
                },
                None => Reason::NoMapHelps { before },
            });
        }
        let grows = candidate.map.extent_out() - candidate.map.extent();
        if array.is_extern && (grows > 0 || candidate.map.kind() == MapKind::Padding) {
            return Decision::LeftAlone(Reason::ExternWouldGrow {
                strategy: candidate.strategy.to_string(),
                elements: grows,
            });
        }
        let target = Target {
            source,
            array,
            function: &function.name,
            function_at: definition_start(source.text, function.span.start),
            function_text: source
                .text
                .get(function.span.start..function.span.end)
                .unwrap_or(""),
            pointer_made_at: pointer_made_at(file, self.function, array, source.text),
            functions: &file.parsed().functions,
            kernel_arrays: &function.arrays,
            clean_arrays: (0..function.arrays.len())
                .map(|a| excess_before(file, self.function, a) == Some(0))
                .collect(),
            constants: &file.parsed().constants,
        };
        let mut rewrite = match form(&target, candidate.map.as_ref(), names) {
            Ok(rewrite) => rewrite,
            // What the map would give, for the reader to apply by hand.
            Err(why)
                if array
                    .accesses
                    .iter()
                    .any(|a| a.detail().via_pointer.is_some()) =>
            {
                return Decision::Suggest(candidate, Reason::NoForm(why))
            }
            Err(why) => return Decision::LeftAlone(Reason::NoForm(why)),
        };
        let price = RewritePrice::of(
            &rewrite,
            array,
            &file.analysis(self.function).costs[a],
            before.saturating_sub(candidate.per_site.iter().sum()),
        );
        let limit = self
            .strategy
            .max_alu_per_wavefront
            .unwrap_or(price::MAX_ALU_PER_WAVEFRONT);
        if price.too_dear(limit) {
            return Decision::LeftAlone(Reason::CostsMoreThanItRemoves { price, limit });
        }
        // The values the map was derived from, each checked where the program is built or run.
        let block = file.analysis(self.function).block.as_ref().ok();
        let assumptions = assumptions(array, rewrite.proven_dims.as_deref(), block);
        match guard_edits(source, function, array, &assumptions) {
            Ok(guards) => rewrite.edits.extend(guards),
            Err(why) => return Decision::LeftAlone(Reason::NoGuard(why)),
        }
        rewrite.assumptions = assumptions;
        let allowed = *self.allowance.as_ref().unwrap_or(&0);
        let caution = if rewrite.extra_bytes > allowed {
            Some(Caution::OverBudget {
                bytes: rewrite.extra_bytes,
            })
        } else if let Some(block) = block.filter(|b| b.is_assumed()) {
            Some(Caution::AssumedBlock {
                shape: crate::block::format_shape(block.shape),
            })
        } else if let Some((param, ty)) = function.assumed_types.first() {
            Some(Caution::AssumedType {
                param: param.clone(),
                ty: ty.clone(),
            })
        } else {
            template_dependence(function, array, rewrite.proven_dims.as_deref())
        };
        let mut candidate = candidate;
        if rewrite.extra_bytes > 0 && rewrite.extra_bytes <= allowed {
            candidate.budget = self.default_budget.clone().map(Box::new);
        }
        Decision::Rewrite(candidate, Box::new(rewrite), caution)
    }

    /// With `--smem-budget`: one candidate per array for the whole kernel, under its budget.
    fn finish(mut self, source: &Source, names: &mut Names) -> Vec<(usize, Decision)> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            let extra = match &self.allowance {
                Ok(extra) => *extra,
                Err(why) => {
                    for (a, _) in &pending {
                        self.decisions[*a] = Decision::LeftAlone(Reason::NoBudget(why.clone()));
                    }
                    return self.decisions.into_iter().enumerate().collect();
                }
            };
            let (arrays, mut choices): (Vec<usize>, Vec<Choice>) = pending.into_iter().unzip();
            if self.default_budget.is_some() {
                choices
                    .iter_mut()
                    .for_each(keep_size_unless_growth_is_cheaper);
            }
            match choose_kernel(&choices, extra, TIE_BREAK_LAMBDA) {
                Ok(picked) => {
                    for ((a, choice), family) in arrays.into_iter().zip(choices).zip(picked.picks) {
                        let family = earliest_equal(&choice, family);
                        // A grown array that cannot be written (a pointer made with the old
                        // row pitch) takes the best map that keeps its size instead.
                        let in_place = (self.default_budget.is_some() && grows(&choice, family))
                            .then(|| best_in_place(&choice))
                            .flatten();
                        let fallback = in_place.map(|f| (f, choice.clone()));
                        let decision = self.build(a, choice, family, source, names);
                        self.decisions[a] = match fallback {
                            Some((family, choice))
                                if !matches!(decision, Decision::Rewrite(..)) =>
                            {
                                self.build(a, choice, family, source, names)
                            }
                            _ => decision,
                        };
                    }
                }
                Err(why) => {
                    for a in arrays {
                        self.decisions[a] = Decision::LeftAlone(Reason::NoBudget(why.clone()));
                    }
                }
            }
        }
        self.decisions.into_iter().enumerate().collect()
    }
}

/// The default budget of kernel `function`: none unless its block shape was resolved (not
/// assumed) and every shared array of the file has a known size (an `extern` one is sized
/// by the launch). The arrays of every other non-kernel function and of the file's scope
/// count toward its footprint, as a kernel may call them. None either for a kernel that
/// holds an array bankwise rewrote: its footprint is no longer the one its budget was
/// computed from (a struct of arrays may have dropped members), and `fix` on its own
/// output must change nothing.
fn kernel_default_budget(
    file: &dyn PlanInput,
    function: usize,
    arch: Option<&str>,
    source: &Source,
) -> Option<budget::DefaultBudget> {
    let block = file.analysis(function).block.as_ref().ok()?;
    if block.is_assumed() {
        return None;
    }
    let arrays = &file.parsed().functions[function].arrays;
    if arrays.iter().any(|array| already_rewritten(source, array)) {
        return None;
    }
    let functions = &file.parsed().functions;
    let mut footprint: u64 = 0;
    for (f, other) in functions.iter().enumerate() {
        if f != function && other.kind == crate::parse::FunctionKind::Kernel {
            continue;
        }
        for array in &other.arrays {
            if array.is_extern {
                return None;
            }
            footprint = array
                .bytes()
                .and_then(|bytes| footprint.checked_add(bytes))?;
        }
    }
    let threads = block.shape.iter().map(|&d| u64::from(d.max(1))).product();
    budget::default_budget(threads, footprint, arch)
}

fn applicability(caution: &Option<Caution>) -> Applicability {
    match caution {
        Some(_) => Applicability::Unsafe,
        None => Applicability::Safe,
    }
}

/// Why a map proven for one instance of a template may not hold for others: an extent the
/// rewrite is proven for (`proven_dims`, every one when `None`) depends on the template's
/// parameters, so another instantiation has another extent on which the map need not be a
/// bijection. Extents the rewrite does not depend on may differ freely.
fn template_dependence(
    function: &Function,
    array: &SharedArray,
    proven_dims: Option<&[usize]>,
) -> Option<Caution> {
    let proven = |d: &usize| proven_dims.is_none_or(|dims| dims.contains(d));
    let parameter = function.template_args.iter().find(|(name, _)| {
        array
            .dim_texts
            .iter()
            .enumerate()
            .any(|(d, text)| proven(&d) && identifier_tokens(text).any(|word| word == name))
    })?;
    Some(Caution::TemplateDependent {
        param: parameter.0.clone(),
        instance: function.display_name(),
    })
}

/// Under the default budget, an array grows only where that is cheaper than any map that
/// keeps its size: fewer excess wavefronts, or fewer ALU instructions than such a map's
/// where it needs more than one. A swizzle of one XOR costs what a padded row's address
/// does, and leaves the bytes to the kernel; the growing candidates are dropped.
fn keep_size_unless_growth_is_cheaper(choice: &mut Choice) {
    let Some(in_place) = best_in_place(choice) else {
        return;
    };
    let figures = |choice: &Choice, i: usize| {
        let best = choice.families[i].best.as_ref()?;
        (!best.score.worsens).then(|| (best.score.total, best.map.alu_ops()))
    };
    let Some((excess, alu)) = figures(choice, in_place) else {
        return;
    };
    for i in 0..choice.families.len() {
        if !grows(choice, i) {
            continue;
        }
        let cheaper = figures(choice, i).is_some_and(|(grown_excess, grown_alu)| {
            grown_excess < excess || (grown_excess == excess && alu > 1 && grown_alu < alu)
        });
        if !cheaper {
            choice.families[i].best = None;
        }
    }
}

/// Whether family `family` of `choice` grows the array.
fn grows(choice: &Choice, family: usize) -> bool {
    choice.families[family]
        .extra_bytes(choice.elem_bytes)
        .is_some_and(|bytes| bytes > 0)
}

/// The best family of `choice` that keeps the array's size: fewest excess wavefronts, then
/// fewest ALU operations, then the earliest.
fn best_in_place(choice: &Choice) -> Option<usize> {
    (0..choice.families.len())
        .filter(|&i| !grows(choice, i))
        .filter_map(|i| {
            let f = &choice.families[i];
            let best = f.best.as_ref().filter(|b| !b.score.worsens)?;
            f.extra_bytes(choice.elem_bytes)?;
            Some((best.score.total, best.map.alu_ops(), i))
        })
        .min()
        .map(|(_, _, i)| i)
}

/// The ILP may pick any of several equal candidates: take the earliest family with the same
/// figures, as the per-array choice does.
fn earliest_equal(choice: &Choice, family: usize) -> usize {
    let key = |i: usize| {
        let f = &choice.families[i];
        f.best.as_ref().map(|b| {
            (
                b.score.worsens,
                b.score.total,
                b.map.alu_ops(),
                f.extra_bytes(choice.elem_bytes),
            )
        })
    };
    let wanted = key(family);
    (0..choice.families.len())
        .find(|&i| key(i) == wanted)
        .unwrap_or(family)
}

fn helps(candidate: &Candidate, before: Option<u64>) -> bool {
    let after: u64 = candidate.per_site.iter().sum();
    candidate.map.kind() != MapKind::Identity && before.is_none_or(|before| after < before)
}

/// The instances of a template share their source: an array is rewritten only when every
/// instance wants the same edits.
fn reconcile_instances(file: &dyn PlanInput, decisions: &mut [(usize, usize, Decision)]) {
    let mut groups: HashMap<DeclaratorKey, Vec<usize>> = HashMap::new();
    for (i, (f, a, _)) in decisions.iter().enumerate() {
        let array = &file.parsed().functions[*f].arrays[*a];
        groups.entry(array.declarator_key()).or_default().push(i);
    }
    for members in groups.values().filter(|m| m.len() > 1) {
        let edits = |i: usize| match &decisions[i].2 {
            Decision::Rewrite(_, rewrite, _) => Some((
                rewrite.edits.clone(),
                rewrite.function.as_ref().map(|f| f.text.clone()),
            )),
            Decision::Clean => None,
            _ => Some((Vec::<Edit>::new(), Some(String::new()))),
        };
        let wanted = members
            .iter()
            .any(|&i| matches!(decisions[i].2, Decision::Rewrite(..)));
        let first = edits(members[0]);
        let agree = members.iter().all(|&i| edits(i) == first);
        if wanted && !agree {
            let name = file.parsed().functions[decisions[members[0]].0]
                .name
                .clone();
            for &i in members {
                decisions[i].2 = Decision::LeftAlone(Reason::InstancesDiffer {
                    template: name.clone(),
                });
            }
        }
    }
}

fn outcome(file: &dyn PlanInput, f: usize, a: usize, decision: &Decision) -> ArrayOutcome {
    let function = &file.parsed().functions[f];
    let array = &function.arrays[a];
    let costs = &file.analysis(f).costs[a];
    let mut outcome = ArrayOutcome {
        function: function.display_name(),
        array: array.name.clone(),
        at: array.at,
        action: Action::Clean,
        reason: None,
        applicability: None,
        form: None,
        map: None,
        map_function: None,
        split_into: Vec::new(),
        excess_before: excess_before(file, f, a),
        excess_after: None,
        excess_with_map: None,
        extra_bytes: 0,
        default_budget: None,
        predicted_time: None,
        assumptions: Vec::new(),
        accesses: array
            .accesses
            .iter()
            .zip(costs)
            .map(|(access, cost)| AccessOutcome {
                at: access.at,
                kind: access.kind,
                text: access.text.clone(),
                new_text: None,
                alu: 0,
                excess_before: cost.as_ref().ok().map(|c| c.excess()),
                excess_after: None,
            })
            .collect(),
    };
    outcome.excess_after = outcome.excess_before;
    for access in &mut outcome.accesses {
        access.excess_after = access.excess_before;
    }
    match decision {
        Decision::Clean => {}
        Decision::LeftAlone(why) => {
            outcome.action = Action::LeftAlone;
            outcome.reason = Some(why.clone());
        }
        Decision::Suggest(candidate, why) => {
            outcome.action = Action::NotApplied;
            outcome.reason = Some(why.clone());
            outcome.applicability = Some(Applicability::DisplayOnly);
            outcome.map = Some(candidate.summary());
            outcome.excess_with_map = Some(candidate.per_site.iter().sum());
        }
        Decision::Rewrite(candidate, rewrite, caution) => {
            outcome.action = Action::Rewritten;
            outcome.applicability = Some(applicability(caution));
            outcome.form = Some(rewrite.form);
            outcome.map = Some(candidate.summary());
            outcome.map_function = rewrite.function.as_ref().map(|f| f.name.clone());
            outcome.split_into = rewrite.split_into.clone();
            outcome.excess_after = Some(candidate.per_site.iter().sum());
            outcome.excess_with_map = outcome.excess_after;
            outcome.extra_bytes = rewrite.extra_bytes;
            outcome.default_budget = candidate.budget.as_deref().cloned();
            outcome.assumptions = rewrite.assumptions.clone();
            for ((access, new), after) in outcome
                .accesses
                .iter_mut()
                .zip(&rewrite.accesses)
                .zip(&candidate.per_site)
            {
                access.new_text = Some(new.text.clone());
                access.alu = new.alu;
                access.excess_after = Some(*after);
            }
        }
    }
    outcome
}
