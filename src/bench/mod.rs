//! `bankwise bench` (issue 7): every hash family on every kernel of a set of CUDA files,
//! scored by the solver on the bank model (all warps of a block, all loop iterations), and
//! the per-kernel choice under the default shared-memory budget (no extra bytes). The
//! figures are the solver's; nothing here estimates. [`tc2016`] holds what the paper reports
//! for the kernels of `testdata/suite/`, so that the reports can set ours beside it.
pub mod markdown;
pub mod tc2016;
pub mod trace;

use crate::affine::FunctionAffine;
use crate::analysis::{AnalysedFile, Reported};
use crate::bank::BankConfig;
use crate::cost::{SiteCost, SitePattern, SiteRequests, Units};
use crate::parse::{SharedArray, TypeTable};
use crate::solve::kernel::{choose_kernel, KernelChoice, TIE_BREAK_LAMBDA};
use crate::solve::space::Candidate;
use crate::solve::{choose, ArrayProblem, Choice, Family, FamilyResult};
use serde::Serialize;
use std::path::PathBuf;
use trace::Trace;

/// The families compared: TC 2016's (Table 6) and ours.
pub const FAMILIES: [Family; 12] = [
    Family::FixedXor,
    Family::BitvectorXor,
    Family::BitwisePermGh,
    Family::BitwisePermMih,
    Family::BitwiseXorGh,
    Family::BitwiseXorMih,
    Family::Exact,
    Family::Padding,
    Family::Rap,
    Family::Skew,
    Family::Repitch,
    Family::Rotate,
];

/// A column of the bench: one family's maps on every array, or the choice per kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Family(Family),
    Chosen,
}

impl Column {
    /// Its key in the JSON's `after` and `summary`.
    pub fn name(self) -> &'static str {
        match self {
            Column::Family(family) => family.name(),
            Column::Chosen => "chosen",
        }
    }

    /// The columns of the removal table, in order: [`FAMILIES`], then the choice.
    pub fn all() -> impl Iterator<Item = Column> {
        FAMILIES
            .into_iter()
            .map(Column::Family)
            .chain([Column::Chosen])
    }
}

/// One shared array of a kernel.
#[derive(Debug)]
pub struct ArrayBench {
    pub name: String,
    /// Excess wavefronts of its accesses as declared; `None` when one is not simulated.
    pub before: Option<u64>,
    /// The accesses that are not simulated: line and reason.
    pub not_simulated: Vec<(usize, String)>,
    /// Those accesses are scored on the requests of a trace (see [`trace`]).
    pub traced: bool,
    /// Its index in [`KernelBench::choices`], or why it cannot be posed to the solver.
    pub posed: Result<usize, String>,
}

/// One kernel: its arrays, every family's result on each, and the choice of one map per
/// array.
#[derive(Debug)]
pub struct KernelBench {
    pub path: PathBuf,
    pub name: String,
    pub arrays: Vec<ArrayBench>,
    /// The arrays that could be posed, as posed to the solver.
    pub problems: Vec<ArrayProblem>,
    /// The solver's results on them.
    pub choices: Vec<Choice>,
    /// The per-kernel choice: one pick per entry of `choices`.
    pub picks: Result<KernelChoice, String>,
}

impl KernelBench {
    fn new(
        path: PathBuf,
        reported: &Reported,
        trace: Option<&Trace>,
        types: &TypeTable,
        config: &BankConfig,
    ) -> Self {
        let function = reported.function;
        let mut choices = Vec::new();
        let mut problems = Vec::new();
        let mut arrays = Vec::new();
        for (a, array) in function.arrays.iter().enumerate() {
            let costs = &reported.costs[a];
            let not_simulated: Vec<(usize, String)> = array
                .accesses
                .iter()
                .zip(costs)
                .filter_map(|(access, cost)| {
                    cost.as_ref().err().map(|why| (access.at.line, why.clone()))
                })
                .collect();
            let mut before = costs
                .iter()
                .map(|c| c.as_ref().ok().map(|c| c.excess()))
                .sum();
            let problem = match reported.affine {
                None => Err("block shape unknown".to_string()),
                Some(affine) => ArrayProblem::pose(function, a, affine, types, config)
                    .map_err(|why| {
                        let traced = trace.and_then(|t| {
                            let name = function.display_name();
                            traced_problem(affine, a, array, costs, t, &name, config)
                        });
                        (why, traced)
                    })
                    .or_else(|(why, traced)| traced.ok_or(why)),
            };
            let traced = problem.is_ok() && !not_simulated.is_empty();
            let posed = problem.and_then(|problem| {
                let choice = choose(&problem)?;
                if traced {
                    before = Some(choice.excess_before);
                }
                choices.push(choice);
                problems.push(problem);
                Ok(choices.len() - 1)
            });
            arrays.push(ArrayBench {
                name: array.name.clone(),
                before,
                not_simulated,
                traced,
                posed,
            });
        }
        let picks = choose_reproducibly(&mut choices);
        KernelBench {
            path,
            name: function.display_name(),
            arrays,
            problems,
            choices,
            picks,
        }
    }

    /// Excess wavefronts as declared; `None` when an access is neither simulated nor traced.
    pub fn before(&self) -> Option<u64> {
        self.arrays.iter().map(|a| a.before).sum()
    }

    /// Whether some of its figures come from a trace.
    pub fn traced(&self) -> bool {
        self.arrays.iter().any(|a| a.traced)
    }

    /// The result of `family` on the array, when it is posed.
    pub fn family(&self, array: &ArrayBench, family: Family) -> Option<&FamilyResult> {
        let choice = &self.choices[*array.posed.as_ref().ok()?];
        choice.families.iter().find(|f| f.strategy == family)
    }

    /// Excess wavefronts with `family`'s map on every array it applies to (the others as
    /// declared); `None` when an access is not simulated.
    pub fn after(&self, family: Family) -> Option<u64> {
        self.before()?;
        self.arrays
            .iter()
            .map(|a| {
                self.family(a, family)
                    .and_then(FamilyResult::excess_after)
                    .or(a.before)
            })
            .sum()
    }

    /// The family picked for each posed array.
    fn picked(&self) -> Option<Vec<&FamilyResult>> {
        let picks = self.picks.as_ref().ok()?;
        Some(
            self.choices
                .iter()
                .zip(&picks.picks)
                .map(|(choice, &i)| &choice.families[i])
                .collect(),
        )
    }

    /// Excess wavefronts with the chosen map on every posed array.
    pub fn after_chosen(&self) -> Option<u64> {
        self.before()?;
        let picked = self.picked()?;
        self.arrays
            .iter()
            .map(|a| match &a.posed {
                Ok(i) => picked[*i].excess_after(),
                Err(_) => a.before,
            })
            .sum()
    }

    /// Excess wavefronts in `column`; see [`after`](Self::after).
    pub fn after_column(&self, column: Column) -> Option<u64> {
        match column {
            Column::Family(family) => self.after(family),
            Column::Chosen => self.after_chosen(),
        }
    }

    /// The chosen map of each array that changes (`tile: swizzle`), or `identity`.
    pub fn chosen_label(&self) -> String {
        let Some(picked) = self.picked() else {
            return Family::Identity.name().into();
        };
        let changed: Vec<String> = self
            .arrays
            .iter()
            .filter_map(|a| {
                let pick = picked[*a.posed.as_ref().ok()?];
                (pick.strategy != Family::Identity)
                    .then(|| format!("{}: {}", a.name, pick.strategy))
            })
            .collect();
        if changed.is_empty() {
            Family::Identity.name().into()
        } else {
            changed.join(", ")
        }
    }

    /// ALU operations the chosen maps add, per access of each array, summed over arrays.
    pub fn alu_added(&self) -> u32 {
        self.picks.as_ref().map_or(0, |p| p.alu_ops)
    }

    pub fn extra_bytes(&self) -> u64 {
        self.picks.as_ref().map_or(0, |p| p.extra_bytes)
    }
}

/// The bench over a set of analysed files: one entry per reported kernel with shared arrays.
#[derive(Debug)]
pub struct Bench {
    pub kernels: Vec<KernelBench>,
}

impl Bench {
    /// Benches every kernel with shared arrays; a trace beside a file serves the accesses
    /// that cannot be simulated, and an unreadable one is an error.
    pub fn run(files: &[AnalysedFile], config: &BankConfig) -> Result<Self, String> {
        let mut kernels = Vec::new();
        for file in files {
            let trace = Trace::beside(&file.path)?;
            kernels.extend(
                file.reported()
                    .filter(|r| !r.function.arrays.is_empty())
                    .map(|r| {
                        let types = &file.parsed.constants.types;
                        KernelBench::new(file.path.clone(), &r, trace.as_ref(), types, config)
                    }),
            );
        }
        Ok(Bench { kernels })
    }

    /// Percentage of the excess wavefronts `column` removes, averaged over the kernels that
    /// have some and are simulated throughout (TC 2016 Table 6 averages Fig. 8's per-benchmark
    /// percentages the same way); one decimal. `None` when no kernel qualifies.
    pub fn removed_pct(&self, column: Column) -> Option<f64> {
        mean_removed(self.averaged(false), column)
    }

    /// [`removed_pct`](Self::removed_pct) over the kernels whose arrays with conflicts are all
    /// posed to the solver: the families' quality apart from what the analysis cannot pose.
    pub fn removed_pct_posed(&self, column: Column) -> Option<f64> {
        mean_removed(self.averaged(true), column)
    }

    /// The kernels the averages run over: conflicts known and present, and with `posed`, every
    /// array with conflicts posed.
    pub fn averaged(&self, posed: bool) -> impl Iterator<Item = &KernelBench> + '_ {
        self.kernels.iter().filter(move |k| {
            k.before().is_some_and(|b| b > 0)
                && (!posed
                    || k.arrays
                        .iter()
                        .all(|a| a.posed.is_ok() || a.before == Some(0)))
        })
    }

    /// `{"benchmarks": [{name, before, after: {family: n}, chosen, alu_added, extra_bytes}],
    /// "summary": {family: {"removed_pct": x}}}`; figures that are not known statically are
    /// null.
    pub fn report(&self) -> BenchReport {
        let benchmarks = self
            .kernels
            .iter()
            .map(|k| KernelReport {
                name: k.name.clone(),
                before: k.before(),
                after: PerColumn(
                    Column::all()
                        .map(|column| (column.name(), k.after_column(column)))
                        .collect(),
                ),
                chosen: k.chosen_label(),
                alu_added: k.alu_added(),
                extra_bytes: k.extra_bytes(),
            })
            .collect();
        let summary = PerColumn(
            Column::all()
                .map(|column| {
                    let removed_pct = self.removed_pct(column);
                    (column.name(), RemovedShare { removed_pct })
                })
                .collect(),
        );
        BenchReport {
            benchmarks,
            summary,
        }
    }
}

/// `bankwise bench --format json`.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    pub benchmarks: Vec<KernelReport>,
    /// Per column, the mean share of the excess removed.
    pub summary: PerColumn<RemovedShare>,
}

/// One benchmark kernel's row.
#[derive(Debug, Serialize)]
pub struct KernelReport {
    pub name: String,
    pub before: Option<u64>,
    /// Per column (a family, `chosen`), the excess after.
    pub after: PerColumn<Option<u64>>,
    pub chosen: String,
    pub alu_added: u32,
    pub extra_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct RemovedShare {
    pub removed_pct: Option<f64>,
}

/// Values by column name, serialized as an object in the columns' order.
#[derive(Debug)]
pub struct PerColumn<T>(pub Vec<(&'static str, T)>);

impl<T: Serialize> Serialize for PerColumn<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// The mean share of the excess wavefronts removed in `column` over `kernels`, in percent
/// with one decimal.
fn mean_removed<'a>(kernels: impl Iterator<Item = &'a KernelBench>, column: Column) -> Option<f64> {
    let shares: Vec<f64> = kernels
        .filter_map(|k| {
            let before = k.before()?;
            let after = k.after_column(column)?;
            Some((before as f64 - after as f64) / before as f64)
        })
        .collect();
    if shares.is_empty() {
        return None;
    }
    let mean = 100.0 * shares.iter().sum::<f64>() / shares.len() as f64;
    Some((mean * 10.0).round() / 10.0)
}

/// The per-kernel choice (no extra bytes) among the maps every machine finds: a search cut
/// short by its search bound returns the best it reached, not a proven optimum, so it is held out of the
/// choice and put back after.
fn choose_reproducibly(choices: &mut [Choice]) -> Result<KernelChoice, String> {
    let held: Vec<Vec<(usize, Candidate)>> = choices
        .iter_mut()
        .map(|choice| {
            choice
                .families
                .iter_mut()
                .enumerate()
                .filter(|(_, f)| f.truncated)
                .filter_map(|(i, f)| f.best.take().map(|best| (i, best)))
                .collect()
        })
        .collect();
    let picks = choose_kernel(choices, 0, TIE_BREAK_LAMBDA);
    for (choice, held) in choices.iter_mut().zip(held) {
        for (i, best) in held {
            choice.families[i].best = Some(best);
        }
    }
    picks
}

/// Array `a` posed with the trace's requests standing in for the accesses that cannot be
/// simulated; `None` when the trace lacks one of them or two share a place (line, kind).
fn traced_problem(
    affine: &FunctionAffine,
    a: usize,
    array: &SharedArray,
    costs: &[Result<SiteCost, String>],
    trace: &Trace,
    kernel: &str,
    config: &BankConfig,
) -> Option<ArrayProblem> {
    let elem_bytes = u32::try_from(array.elem_bytes?).ok()?;
    let dims = array.dims.iter().copied().collect::<Option<Vec<u64>>>()?;
    let mut sites = Vec::new();
    for (i, (access, cost)) in array.accesses.iter().zip(costs).enumerate() {
        let site = match cost {
            Ok(_) => {
                let site = affine.sites.get(a)?.get(i)?.as_ref()?;
                let requests = SiteRequests::new(affine, site, array, access, config).ok()?;
                SitePattern::collect(&requests, config).ok()?
            }
            Err(_) => {
                let sharing = array
                    .accesses
                    .iter()
                    .filter(|other| other.at.line == access.at.line && other.kind == access.kind)
                    .count();
                if sharing > 1 {
                    return None;
                }
                let requests =
                    trace.requests(kernel, access.at.line, access.kind.as_str(), &array.name)?;
                SitePattern::from_requests(
                    Units::whole(elem_bytes),
                    config,
                    requests.iter().map(Vec::as_slice),
                )
                .ok()?
            }
        };
        sites.push(site);
    }
    Some(ArrayProblem::new(
        array.name.clone(),
        elem_bytes,
        dims,
        *config,
        sites,
    ))
}
