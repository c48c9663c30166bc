//! `bankwise explain`: one access as the banks see it, for one warp and one loop iteration,
//! before and after the map `bankwise fix` chooses (issue 8, item 3): the bank map (one row
//! per wavefront, the lanes in the cells), the address bits in Lloyd's index-digit notation
//! (which lane bits land in the bank bits), and Nakano's DMM congestion and time.
//!
//! [`explain_file`] gathers an [`Explanation`]; [`Explanation::text`] and
//! [`Explanation::svg`] draw it.
mod bankmap;
mod bits;
mod pick;
mod svg;
mod text;

pub use bankmap::{lane_list, BankMap, Cell, Phase};
pub use bits::{BitForm, Fields};

use pick::Picked;

use crate::affine::Site;
use crate::analysis::{analyse_text, AnalysedFile, AnalysisError};
use crate::bank::{dmm, lanes_per_phase, simulate, BankConfig, Request};
use crate::block::ConfigBlocks;
use crate::cost::{SiteCost, SiteRequests, Units};
use crate::parse::{self, AccessKind, Location};
use crate::pipeline::{self, FixOptions};
use crate::plan::{plan, Action, ArrayOutcome, Plan};
use crate::report::shape_text;
use crate::solve::maps::AddressMap;
use std::path::Path;

/// What the user asked to see.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// 1-based source line of the access.
    pub line: usize,
    /// 1-based column, when the line has several accesses.
    pub col: Option<usize>,
    /// The warp to show; `None`: the one with the most excess wavefronts.
    pub warp: Option<u32>,
    /// Loop values of the iteration to show (`j = 8`); empty: the first with the worst excess.
    pub iteration: Vec<(String, i64)>,
}

/// `"j=8"` or `"i=0,j=8"` as loop values.
pub fn parse_iteration(text: &str) -> Result<Vec<(String, i64)>, String> {
    text.split(',')
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("--iteration `{pair}`: write NAME=VALUE, as in j=8"))?;
            let value = value.trim().parse::<i64>().map_err(|_| {
                format!("--iteration `{pair}`: `{}` is not an integer", value.trim())
            })?;
            Ok((name.trim().to_string(), value))
        })
        .collect()
}

/// One request drawn: its bank map, its index bits, and the figures around it.
#[derive(Debug, Clone)]
pub struct View {
    pub map: BankMap,
    /// The index bits, highest first (empty when the bank is not a bit field of the index).
    pub bits: Vec<BitForm>,
    /// Excess wavefronts of the shown warp over all iterations.
    pub warp_excess: u64,
    /// Excess wavefronts of the whole block over all iterations.
    pub block_excess: u64,
    /// DMM congestion of every warp of the block at the shown iteration.
    pub congestions: Vec<u32>,
}

/// What `bankwise fix` does to the array.
#[derive(Debug, Clone)]
pub enum After {
    /// It stores the array through `map`.
    Mapped {
        /// The map: family and parameters, then on a line of its own `i -> expression`.
        description: String,
        /// Why fix applies it only with `--unsafe-fixes`, when it does.
        caution: Option<String>,
        view: View,
    },
    /// It leaves the array as it is, for this reason.
    LeftAlone(String),
}

/// Everything `explain` shows about one access.
#[derive(Debug, Clone)]
pub struct Explanation {
    pub path: String,
    pub at: Location,
    pub kind: AccessKind,
    pub access: String,
    pub function: String,
    pub block: [u32; 3],
    /// Why the block shape was assumed, when no launch, bound or flag gave it.
    pub block_assumed: Option<String>,
    pub array: String,
    /// `float[32][32]`.
    pub shape: String,
    /// The digit-affine form of the element index (of the shown iteration when it changes
    /// per iteration), or why there is none.
    pub form: String,
    pub class: String,
    pub config: BankConfig,
    /// Bytes each lane touches.
    pub unit_bytes: u32,
    /// Lanes the banks serve together (fewer than a warp: the warp is split into phases).
    pub lanes_per_phase: u32,
    /// What `check` reports for the access.
    pub check: SiteCost,
    pub warps: u32,
    pub warp: u32,
    /// Why this warp.
    pub warp_choice: String,
    /// The requests of one warp: loop iterations counted.
    pub iterations: usize,
    pub iteration: Vec<(String, i64)>,
    /// Why this iteration.
    pub iteration_choice: String,
    /// Names of the lane bits, lowest first (`tx0`…, or `l0`…).
    pub lane_names: Vec<String>,
    /// Whether the lane bits are named after thread-index bits.
    pub thread_names: bool,
    pub fields: Option<Fields>,
    pub before: View,
    pub after: After,
    /// Caveats: other template instances, unknown values, loops counted per iteration.
    pub notes: Vec<String>,
}

impl Explanation {
    /// The teaching view as text for a terminal.
    pub fn text(&self) -> String {
        text::render(self)
    }

    /// The bank maps as an SVG heat map.
    pub fn svg(&self) -> String {
        svg::render(self)
    }

    /// `j = 0`, or `no loop` when the access is in none.
    pub fn iteration_text(&self) -> String {
        loop_values_text(&self.iteration)
    }

    /// The "after" view, when fix maps the array.
    pub fn mapped(&self) -> Option<&View> {
        match &self.after {
            After::Mapped { view, .. } => Some(view),
            After::LeftAlone(_) => None,
        }
    }
}

/// `text` in lines of at most `width` characters, broken between words (a longer word
/// stands alone).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// How the rows of a map split into phases, when they do.
fn phases_text(map: &BankMap) -> Option<String> {
    if map.phases.len() < 2 {
        return None;
    }
    let phases: Vec<String> = map
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "{} = lanes {}-{}",
                i + 1,
                p.first_lane,
                p.first_lane + p.lanes - 1
            )
        })
        .collect();
    Some(format!(
        "rows are phase.wavefront; phases are served one after the other: {}",
        phases.join(", ")
    ))
}

/// `s` unless there is one.
fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn loop_values_text(values: &[(String, i64)]) -> String {
    if values.is_empty() {
        return "no loop".to_string();
    }
    let parts: Vec<String> = values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    parts.join(", ")
}

/// Why an access cannot be explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The file or its `bankwise.toml` cannot be read.
    #[error(transparent)]
    Input(#[from] AnalysisError),
    /// The line asked for holds no access that can be explained, and why.
    #[error("{0}")]
    Query(String),
}

/// Reads `path` (and its `bankwise.toml`, as `fix` does) and explains the access `query`
/// names.
pub fn explain_file(
    path: &Path,
    options: &FixOptions,
    query: &Query,
) -> Result<Explanation, ExplainError> {
    let text =
        parse::read_source(path, options.analysis.max_file_bytes).map_err(AnalysisError::from)?;
    let (options, config) = pipeline::for_fix(path, options).map_err(AnalysisError::from)?;
    explain_text(path, &text, &options, &config, query).map_err(ExplainError::Query)
}

/// [`explain_file`] on text already read.
pub fn explain_text(
    path: &Path,
    text: &str,
    fix_options: &FixOptions,
    config: &ConfigBlocks,
    query: &Query,
) -> Result<Explanation, String> {
    let options = &fix_options.analysis;
    let shown = path.display().to_string();
    let lines = text.lines().count();
    if query.line == 0 || query.line > lines {
        return Err(format!(
            "{shown}: line {} is out of range: the file has {lines} lines",
            query.line
        ));
    }
    let file = analyse_text(path, text, options, config);
    if file.failed() {
        let line = file.parsed.syntax_errors.first().map_or(0, |at| at.line);
        return Err(format!(
            "{shown}: no kernel could be analysed (syntax error at line {line})"
        ));
    }
    let (picked, others) = pick::pick(&file, query.line, query.col)
        .map_err(|message| format!("{shown}: {message}"))?;
    let function = &file.parsed.functions[picked.function];
    let array = &function.arrays[picked.array];
    let access = &array.accesses[picked.access];
    let not_simulated = |why: &str| {
        format!(
            "{shown}:{}: `{}` is not simulated: {why}",
            access.at, access.text
        )
    };
    let affine = file.per_function[picked.function]
        .affine
        .as_ref()
        .ok_or_else(|| {
            let why = match &file.per_function[picked.function].block {
                Err(why) => why.to_string(),
                Ok(_) => "the function is not analysed".to_string(),
            };
            not_simulated(&why)
        })?;
    let check = file.per_function[picked.function].costs[picked.array][picked.access]
        .clone()
        .map_err(|why| not_simulated(&why))?;
    let site = affine.sites[picked.array][picked.access]
        .as_ref()
        .ok_or_else(|| not_simulated("the access is not reached by the analysis"))?;
    let requests = SiteRequests::new(affine, site, array, access, &options.bank)
        .map_err(|why| not_simulated(&why))?;
    let bank = options.bank;
    let block = affine.block();
    let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
    let warps = threads.div_ceil(u64::from(bank.warp.max(1))) as u32;

    let planned = plan(&file, text, &fix_options.strategy, &bank);
    let chosen = fix_choice(&planned, &file, picked);
    let map = chosen.as_ref().ok().map(|(map, _, _)| *map);

    let layouts = Layouts::new(bank, requests.units(), map, picked.access);
    let units = layouts.before;
    let unit_of = |element: &Option<i64>, mapped: bool| layouts.unit_of(element, mapped);
    let cost_of = |elements: &[Option<i64>], mapped: bool| layouts.cost(elements, mapped);
    let combination = worst_combination(&requests, &layouts)
        .ok_or_else(|| not_simulated("no request to simulate"))?;
    let mut warp_excess = vec![Excess::default(); warps as usize];
    // Whether any lane of a warp executes the access at all (its condition may hold for
    // none of the warp's threads).
    let mut active = vec![false; warps as usize];
    requests.for_each_in(combination, |warp, _, elements| {
        if let Some(seen) = active.get_mut(warp as usize) {
            *seen |= elements.iter().any(Option::is_some);
        }
        if let Some(excess) = warp_excess.get_mut(warp as usize) {
            excess.before += u64::from(cost_of(elements, false).excess());
            if map.is_some() {
                excess.after += u64::from(cost_of(elements, true).excess());
            }
        }
    });
    let block_excess = Excess {
        before: warp_excess.iter().map(|e| e.before).sum(),
        after: warp_excess.iter().map(|e| e.after).sum(),
    };

    let (warp, warp_choice) = pick_warp(query.warp, &warp_excess, &active, block)?;

    // The shown warp's requests, one per iteration.
    let mut iterations: Vec<WarpRequest> = Vec::new();
    requests.for_each_in(combination, |w, point, elements| {
        if w == warp {
            let values = point.0.iter().map(|(a, v)| (a.to_string(), *v)).collect();
            iterations.push((values, elements.to_vec()));
        }
    });
    let chosen_iteration = pick_iteration(&iterations, &query.iteration, |e| {
        u64::from(cost_of(e, false).excess())
    })?;
    let (iteration, elements) = &iterations[chosen_iteration.0];

    // Every warp at that iteration, for the DMM time.
    let mut at_iteration: Vec<Vec<Option<i64>>> = Vec::new();
    requests.for_each_in(combination, |_, point, elements| {
        let same = point.0.len() == iteration.len()
            && point
                .0
                .iter()
                .zip(iteration)
                .all(|((a, v), (n, w))| v == w && a.to_string() == *n);
        if same {
            at_iteration.push(elements.to_vec());
        }
    });

    let lanes_before: Vec<Option<i64>> = elements.iter().map(|e| unit_of(e, false)).collect();
    let lanes_after: Vec<Option<i64>> = elements.iter().map(|e| unit_of(e, true)).collect();
    let extent_units = array
        .dims
        .iter()
        .try_fold(1u64, |n, d| n.checked_mul((*d)?))
        .map(|n| map.map_or(n, |m| m.extent_out().max(n)))
        .and_then(|n| i64::try_from(n).ok())
        .map_or(0, |n| units.of(n - 1));
    let largest = lanes_before
        .iter()
        .chain(&lanes_after)
        .flatten()
        .copied()
        .fold(extent_units, i64::max);
    let fields = Fields::new(&bank, units.unit_bytes, largest);
    let shown_warp = warp_excess.get(warp as usize).copied().unwrap_or_default();
    let view = |lanes: &[Option<i64>], mapped: bool| View {
        map: BankMap::new(&bank, layouts.units(mapped).unit_bytes, lanes),
        // The bit table is in the declared units; a record split into member arrays has none.
        bits: match fields {
            Some(f) if layouts.units(mapped).unit_bytes == units.unit_bytes => {
                bits::bit_forms(lanes, &f)
            }
            _ => Vec::new(),
        },
        warp_excess: shown_warp.of(mapped),
        block_excess: block_excess.of(mapped),
        congestions: at_iteration
            .iter()
            .map(|elements| {
                let lanes: Vec<Option<i64>> = elements.iter().map(|e| unit_of(e, mapped)).collect();
                congestion(&bank, layouts.units(mapped), &lanes)
            })
            .collect(),
    };
    let before = view(&lanes_before, false);
    let after = match chosen {
        Ok((_, description, caution)) => After::Mapped {
            description,
            caution,
            view: view(&lanes_after, true),
        },
        Err(why) => After::LeftAlone(why),
    };

    let (form, class) = form_and_class(site, iteration);
    let (lane_names, thread_names) = bits::lane_bit_names(block, bank.warp, warp);
    let notes = notes(&file, picked, &others, layouts.split_record(), &check);
    Ok(Explanation {
        path: shown,
        at: access.at,
        kind: access.kind,
        access: access.text.clone(),
        function: function.display_name(),
        block,
        block_assumed: match &file.per_function[picked.function].block {
            Ok(crate::block::Block {
                source: crate::block::BlockSource::Assumed(assumed),
                ..
            }) => Some(format!(
                "{}; pass --block {}=XxYxZ",
                assumed.basis, function.name
            )),
            _ => None,
        },
        array: array.name.clone(),
        shape: shape_text(array),
        form,
        class,
        config: bank,
        unit_bytes: units.unit_bytes,
        lanes_per_phase: lanes_per_phase(&bank, units.unit_bytes) as u32,
        check,
        warps,
        warp,
        warp_choice,
        iterations: iterations.len(),
        iteration: iteration.clone(),
        iteration_choice: chosen_iteration.1,
        lane_names,
        thread_names,
        fields,
        before,
        after,
        notes,
    })
}

/// The units a lane touches and how its element is stored, as declared and through fix's
/// map: what every figure of an explanation is simulated on.
struct Layouts<'m> {
    bank: BankConfig,
    map: Option<&'m dyn AddressMap>,
    before: Units,
    after: Units,
}

impl<'m> Layouts<'m> {
    /// For access number `access` of an array whose requests come in `units`.
    fn new(bank: BankConfig, units: Units, map: Option<&'m dyn AddressMap>, access: usize) -> Self {
        // Stored as a struct of arrays, member `m` of record `e` is element `e` of array `m`:
        // a lane touches its record's index in units of the member (for a whole record, each
        // member's array alike: the first one's is shown).
        let after = map
            .and_then(|map| map.struct_of_arrays())
            .map_or(units, |layout| {
                let uses = layout.uses.get(access);
                let first = uses.map_or(0, |u| u.members(layout.members.len()).start);
                layout
                    .members
                    .get(first)
                    .and_then(|m| u32::try_from(m.bytes).ok())
                    .map_or(units, Units::whole)
            });
        Layouts {
            bank,
            map,
            before: units,
            after,
        }
    }

    fn units(&self, mapped: bool) -> Units {
        if mapped {
            self.after
        } else {
            self.before
        }
    }

    /// The members of a record the map splits into arrays, when it does.
    fn split_record(&self) -> Option<usize> {
        self.map
            .and_then(|map| map.struct_of_arrays())
            .filter(|_| self.after != self.before)
            .map(|layout| layout.members.len())
    }

    /// The unit a lane touches for `element`, as declared or stored through the map.
    fn unit_of(&self, element: &Option<i64>, mapped: bool) -> Option<i64> {
        element.map(|e| {
            let e = match (self.map, mapped) {
                (Some(map), true) => u64::try_from(e).map_or(e, |e| map.apply(e) as i64),
                _ => e,
            };
            self.units(mapped).of(e)
        })
    }

    /// One warp's request for `elements` through the bank model.
    fn cost(&self, elements: &[Option<i64>], mapped: bool) -> crate::bank::Cost {
        let lanes: Vec<Option<i64>> = elements.iter().map(|e| self.unit_of(e, mapped)).collect();
        simulate(
            &self.bank,
            &Request {
                elem_bytes: self.units(mapped).unit_bytes,
                lanes: &lanes,
            },
        )
    }
}

/// The combination of unknown values that `check` reports: the one with the most excess
/// wavefronts (then the most wavefronts); `None` when there is no request.
fn worst_combination(requests: &SiteRequests, layouts: &Layouts) -> Option<usize> {
    let mut worst: Option<(usize, u64, u64)> = None;
    for combination in 0..requests.combinations() {
        let (mut excess, mut wavefronts) = (0u64, 0u64);
        requests.for_each_in(combination, |_, _, elements| {
            let cost = layouts.cost(elements, false);
            excess += u64::from(cost.excess());
            wavefronts += u64::from(cost.wavefronts);
        });
        if worst.is_none_or(|(_, e, w)| (excess, wavefronts) > (e, w)) {
            worst = Some((combination, excess, wavefronts));
        }
    }
    worst.map(|(combination, _, _)| combination)
}

/// The access's address form and class at `iteration` (its own when it changes per
/// iteration).
fn form_and_class(site: &Site, iteration: &[(String, i64)]) -> (String, String) {
    let per_iteration_form = site
        .iterations
        .iter()
        .find(|it| it.loop_values.iter().all(|value| iteration.contains(value)));
    match per_iteration_form {
        Some(it) => (it.form.to_string(), it.class.to_string()),
        None => (
            match &site.form {
                Ok(form) => form.to_string(),
                Err(why) => format!("not digit-affine: {why}"),
            },
            site.class.to_string(),
        ),
    }
}

/// What the reader should know beside the figures: a split record, the same expression as
/// another access or in other template instances, unknown values, per-iteration figures.
fn notes(
    file: &AnalysedFile,
    picked: Picked,
    others: &[Picked],
    split_record: Option<usize>,
    check: &SiteCost,
) -> Vec<String> {
    let function = &file.parsed.functions[picked.function];
    let mut notes = Vec::new();
    if let Some(members) = split_record {
        notes.push(format!(
            "stored as a struct of arrays, the record is {members} accesses, one per member \
             array: the first member's is shown after"
        ));
    }
    let (same_function, instances): (Vec<&Picked>, Vec<&Picked>) =
        others.iter().partition(|p| p.function == picked.function);
    for other in same_function {
        let kind = function.arrays[other.array].accesses[other.access].kind;
        notes.push(format!(
            "the expression is also a {} here (a compound assignment): the same words, shown once",
            kind.as_str()
        ));
    }
    let mut names: Vec<String> = instances
        .iter()
        .map(|p| file.parsed.functions[p.function].display_name())
        .collect();
    names.dedup();
    if !names.is_empty() {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        notes.push(format!(
            "the same source is also analysed as {}; shown for `{}`",
            names.join(", "),
            function.display_name()
        ));
    }
    for unknown in &check.unknown_values {
        notes.push(format!("`{}`: {}", unknown.name, unknown.evaluated));
    }
    for name in &check.per_iteration_of {
        notes.push(format!(
            "loop `{name}` has unknown bounds: the figures are per iteration of it"
        ));
    }
    notes
}

/// Excess wavefronts with the array as declared and through fix's map.
#[derive(Debug, Clone, Copy, Default)]
struct Excess {
    before: u64,
    after: u64,
}

impl Excess {
    fn of(self, mapped: bool) -> u64 {
        if mapped {
            self.after
        } else {
            self.before
        }
    }
}

/// The map fix stores the array through (with its description and why it is unsafe, if it
/// is), or why fix leaves the array alone.
fn fix_choice<'p>(
    planned: &'p Plan,
    file: &AnalysedFile,
    picked: Picked,
) -> Result<(&'p dyn AddressMap, String, Option<String>), String> {
    let function = &file.parsed.functions[picked.function];
    let array = &function.arrays[picked.array];
    let outcomes = planned.outcomes.unpack();
    let outcome = outcomes.iter().find(|o| {
        o.function == function.display_name() && o.array == array.name && o.at == array.at
    });
    let rewrite = planned
        .rewrites
        .iter()
        .find(|p| p.function == picked.function && p.array == picked.array);
    match (outcome, rewrite) {
        (Some(outcome), Some(rewrite)) => {
            let description = outcome
                .map
                .as_ref()
                .map_or_else(|| rewrite.map.kind().to_string(), |m| m.description.clone());
            let description = format!("{description}\ni -> {}", rewrite.map.cuda("i"));
            Ok((
                rewrite.map.as_ref(),
                description,
                rewrite.caution.as_ref().map(ToString::to_string),
            ))
        }
        (Some(outcome), None) => Err(left_alone_reason(outcome, &array.name)),
        (None, _) => Err(format!("fix does not plan `{}`", array.name)),
    }
}

/// The warp asked for, or among the warps that execute the access the one with the most
/// excess wavefronts; with why (and, where no lane of the warp executes the access, that).
fn pick_warp(
    asked: Option<u32>,
    warp_excess: &[Excess],
    active: &[bool],
    block: [u32; 3],
) -> Result<(u32, String), String> {
    let warps = warp_excess.len() as u32;
    let executing: Vec<u32> = (0..warps).filter(|&w| active[w as usize]).collect();
    let executing_text = || match executing.as_slice() {
        [] => "no warp does".to_string(),
        [one] => format!("warp {one} does"),
        many => format!(
            "warps {} do",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if let Some(w) = asked {
        if w < warps {
            if !active[w as usize] {
                return Ok((
                    w,
                    format!(
                        "as asked; no lane of warp {w} executes this access, as its condition \
                         holds for none of them: {}",
                        executing_text()
                    ),
                ));
            }
            return Ok((w, "as asked".to_string()));
        }
        let [x, y, z] = block;
        return Err(format!(
            "warp {w} does not exist: the block ({x}x{y}x{z}) has {warps} warp{} (0-{})",
            plural(u64::from(warps)),
            warps.saturating_sub(1)
        ));
    }
    if executing.is_empty() {
        let [x, y, z] = block;
        return Ok((
            0,
            format!(
                "no lane of any warp executes this access: its condition holds for no thread \
                 of the {x}x{y}x{z} block, so there is no request to show"
            ),
        ));
    }
    let most = executing
        .iter()
        .map(|&w| warp_excess[w as usize].before)
        .max()
        .unwrap_or(0);
    let w = executing
        .iter()
        .copied()
        .find(|&w| warp_excess[w as usize].before == most)
        .unwrap_or(0);
    let idle = executing.len() < warps as usize;
    let why = if warps == 1 {
        "the block's only warp".to_string()
    } else if executing
        .iter()
        .all(|&e| warp_excess[e as usize].before == most)
    {
        match idle {
            false => format!(
                "every warp has {most} excess wavefront{}; the first",
                plural(most)
            ),
            true => format!(
                "the first warp that executes the access; each that does has {most} excess \
                 wavefront{}",
                plural(most)
            ),
        }
    } else {
        let total: u64 = warp_excess.iter().map(|e| e.before).sum();
        format!("the most excess wavefronts: {most} of the block's {total}")
    };
    Ok((w, why))
}

/// One request of the shown warp: its loop values and each lane's element index.
type WarpRequest = (Vec<(String, i64)>, Vec<Option<i64>>);

/// Why fix leaves the array as it is (its report's reason).
fn left_alone_reason(outcome: &ArrayOutcome, array: &str) -> String {
    match (outcome.action, &outcome.reason) {
        (Action::Clean, _) => format!("`{array}` has no bank conflicts: nothing to do"),
        (Action::NotApplied, Some(why)) => match &outcome.map {
            Some(map) => format!("fix only suggests {}: {why}", map.description),
            None => why.to_string(),
        },
        (_, Some(why)) => why.to_string(),
        (_, None) => format!("fix leaves `{array}` as it is"),
    }
}

/// The iteration asked for, or the first with the most excess wavefronts; with why.
fn pick_iteration(
    iterations: &[WarpRequest],
    asked: &[(String, i64)],
    excess: impl Fn(&[Option<i64>]) -> u64,
) -> Result<(usize, String), String> {
    if iterations.is_empty() {
        return Err("the warp makes no request".to_string());
    }
    if asked.is_empty() {
        let excesses: Vec<u64> = iterations.iter().map(|(_, e)| excess(e)).collect();
        let most = excesses.iter().copied().max().unwrap_or(0);
        let first = excesses.iter().position(|&e| e == most).unwrap_or(0);
        let why = if iterations[0].0.is_empty() {
            "the access is in no counted loop".to_string()
        } else if iterations.len() == 1 {
            "the only iteration".to_string()
        } else {
            format!(
                "the first of the warp's {} iterations with the most excess wavefronts: {most}",
                iterations.len()
            )
        };
        return Ok((first, why));
    }
    let names: Vec<&str> = iterations[0].0.iter().map(|(n, _)| n.as_str()).collect();
    if let Some((name, _)) = asked.iter().find(|(n, _)| !names.contains(&n.as_str())) {
        return Err(if names.is_empty() {
            format!("--iteration {name}: the access is in no counted loop")
        } else {
            format!(
                "--iteration: no loop `{name}` around the access; its loops: {}",
                names.join(", ")
            )
        });
    }
    let found = iterations
        .iter()
        .position(|(values, _)| asked.iter().all(|pair| values.contains(pair)));
    match found {
        Some(i) => Ok((i, "as asked".to_string())),
        None => {
            let (name, value) = &asked[0];
            let mut taken: Vec<i64> = iterations
                .iter()
                .filter_map(|(values, _)| values.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
                .collect();
            taken.sort_unstable();
            taken.dedup();
            let shown: Vec<String> = taken.iter().take(16).map(i64::to_string).collect();
            let more = if taken.len() > 16 { ", …" } else { "" };
            Err(format!(
                "--iteration: no iteration with {}; `{name}` takes {}{more} (asked {name} = {value})",
                loop_values_text(asked),
                shown.join(", ")
            ))
        }
    }
}

/// Nakano's congestion of one warp request: on a DMM as wide as a phase when every lane
/// reads one word; a lane that reads several words is no DMM request, and its congestion is
/// the conflict degree (docs/ARCHITECTURE.md §4).
fn congestion(config: &BankConfig, units: Units, lanes: &[Option<i64>]) -> u32 {
    let width = i64::from(config.bank_width.max(1));
    let bytes = i64::from(units.unit_bytes.max(1));
    let one_word = bytes <= width && width % bytes == 0;
    if one_word && lanes_per_phase(config, units.unit_bytes) == config.banks as usize {
        let words: Vec<Option<i64>> = lanes
            .iter()
            .map(|u| u.map(|u| u.wrapping_mul(bytes).div_euclid(width)))
            .collect();
        dmm::congestion(config.banks, &words)
    } else {
        simulate(
            config,
            &Request {
                elem_bytes: units.unit_bytes,
                lanes,
            },
        )
        .conflict_degree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_parse_as_loop_values() {
        assert_eq!(parse_iteration("j=8"), Ok(vec![("j".to_string(), 8)]));
        assert_eq!(
            parse_iteration("i = 0, j=-8"),
            Ok(vec![("i".to_string(), 0), ("j".to_string(), -8)])
        );
        assert!(parse_iteration("j").is_err());
        assert!(parse_iteration("j=x").is_err());
    }
}
