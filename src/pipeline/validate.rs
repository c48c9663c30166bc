//! Translation validation (docs/ARCHITECTURE.md §7): the rewritten source is parsed and analysed again,
//! and for every access of every rewritten array the element index it computes, in every
//! warp request, must be the map applied to the one the original computed; its re-analysed
//! excess wavefronts must be the solver's prediction; every other array must cost what it
//! cost before. Anything else is a bug of the rewriter, and nothing is written.
use crate::affine::FunctionAffine;
use crate::analysis::{
    analyse_text_visiting, is_reported, AnalysedFile, FunctionAnalysis, KeepAffine, Options,
};
use crate::block::ConfigBlocks;
use crate::cost::SiteRequests;
use crate::parse;
use crate::parse::SharedArray;
use crate::plan::Planned;
use crate::solve::maps::AddressMap;
use crate::solve::soa::{RecordUse, StructOfArrays};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::Path;

/// What the original's accesses of each applied rewrite compute, as the rewritten ones
/// must: per access, how many warp requests it makes and one hash of them all, in order,
/// each with its lanes' element indices with the map applied.
/// Taken from the original's affine analyses before the output is analysed, so that they
/// need not be held beside the output's.
pub struct Expected {
    /// Per applied rewrite (same order): per member of a struct of arrays (one for a map),
    /// per access of the original, its requests (`None`: the member is not accessed there);
    /// `None` for a function whose affine analysis is missing.
    rewrites: Vec<Option<RewriteRequests>>,
    /// Per function, per array, per access: its excess wavefronts in the input (`None`: not
    /// simulated), which an array not rewritten must keep in the output.
    excess: Vec<Vec<Vec<Option<u64>>>>,
    /// The kernels whose analysis in the output is the input's: not read again.
    unchanged: parse::Skipped,
}

/// One access's requests as validation compares them.
enum Requests {
    Digest(Digest),
    /// The analysis has no site for the access.
    NotAnalysed,
    /// The requests could not be enumerated: why, with the access's line.
    Failed(String),
}

/// What the accesses of one rewritten array must compute after the rewrite: per member of
/// a struct of arrays (one for a map), per access of the original, its requests (`None`:
/// the member is not accessed there).
pub struct RewriteRequests(Vec<Vec<Option<Requests>>>);

/// [`RewriteRequests`] of `array` (the `a`-th of its function) stored through `map`, from
/// the input's affine analysis of its function (`None` when it has none).
pub fn rewrite_requests(
    affine: Option<&FunctionAffine>,
    a: usize,
    array: &SharedArray,
    map: &dyn AddressMap,
    config: &crate::bank::BankConfig,
) -> Option<RewriteRequests> {
    let affine = affine?;
    let site = |k: usize| affine.sites[a].get(k).and_then(Option::as_ref);
    let requests = |k: usize, enumerate: &dyn Fn(&crate::affine::Site) -> Requests| {
        site(k).map_or(Requests::NotAnalysed, enumerate)
    };
    let line = |k: usize, why: String| {
        Requests::Failed(format!("line {}: {why}", array.accesses[k].at.line))
    };
    Some(RewriteRequests(match map.struct_of_arrays() {
        Some(layout) => (0..layout.members.len())
            .map(|m| {
                let bytes = layout.members[m].bytes;
                (0..array.accesses.len())
                    .map(|k| {
                        let uses = layout.uses[k].members(layout.members.len());
                        uses.contains(&m).then(|| {
                            requests(k, &|site| match SiteRequests::of_records(
                                affine, site, bytes, config,
                            ) {
                                Ok(r) => Requests::Digest(Digest::of(&r, &|e| e)),
                                Err(why) => line(k, why),
                            })
                        })
                    })
                    .collect()
            })
            .collect(),
        None => vec![(0..array.accesses.len())
            .map(|k| {
                let access = &array.accesses[k];
                Some(requests(k, &|site| match SiteRequests::new(
                    affine, site, array, access, config,
                ) {
                    Ok(r) => Requests::Digest(Digest::of(&r, &|e| map.apply(e as u64) as i64)),
                    Err(why) => line(k, why),
                }))
            })
            .collect()],
    }))
}

impl Expected {
    /// The requests the accesses of each of `applied` must make after the rewrite, from
    /// `original`'s affine analyses.
    pub fn of(
        original: &AnalysedFile,
        applied: &[&Planned],
        config: &crate::bank::BankConfig,
    ) -> Self {
        let rewrites = crate::parallel::map(applied.len(), REWRITES_PER_THREAD, |i| {
            let planned = applied[i];
            let (f, a) = (planned.function, planned.array);
            rewrite_requests(
                original.per_function[f].affine.as_deref(),
                a,
                &original.parsed.functions[f].arrays[a],
                planned.map.as_ref(),
                config,
            )
        });
        Self::with_rewrites(original, rewrites)
    }

    /// [`Expected::of`] from requests taken as the input was analysed (by function and
    /// array), when its affine analyses were not kept.
    pub fn with(
        original: &AnalysedFile,
        applied: &[&Planned],
        mut requests: HashMap<(usize, usize), Option<RewriteRequests>>,
    ) -> Self {
        let rewrites = applied
            .iter()
            .map(|p| requests.remove(&(p.function, p.array)).flatten())
            .collect();
        Self::with_rewrites(original, rewrites)
    }

    fn with_rewrites(original: &AnalysedFile, rewrites: Vec<Option<RewriteRequests>>) -> Self {
        let excess = original
            .per_function
            .iter()
            .map(|analysis| {
                analysis
                    .costs
                    .iter()
                    .map(|costs| excess_of(costs))
                    .collect()
            })
            .collect();
        Expected {
            rewrites,
            excess,
            unchanged: parse::Skipped::default(),
        }
    }

    /// The same, with kernels the rewrite left as they were, which validation need not
    /// read again (the caller knows the edits: `fix::unchanged_kernels`).
    pub fn skipping(self, unchanged: parse::Skipped) -> Self {
        Expected { unchanged, ..self }
    }
}

/// The re-analysed excess wavefronts of each access of each applied rewrite (same order as
/// `applied`), or what went wrong. `expected` is [`Expected::of`] the same rewrites; the
/// original's affine analyses are not read.
pub fn validate(
    path: &Path,
    original: &AnalysedFile,
    expected: &Expected,
    view: &str,
    applied: &[&Planned],
    options: &Options,
    config: &ConfigBlocks,
) -> Result<Vec<Vec<u64>>, String> {
    // A shape the original was analysed under by assumption is the output's too: the
    // assumption reads the arrays' extents, which a rewrite may change.
    // A name several functions share (overloads) cannot be pinned: `plan` leaves their
    // arrays alone, so their text, and the shape assumed from it, stays.
    let mut pinned = options.clone();
    // The rewritten functions are compared with the original batch by batch, as the output
    // is analysed: no affine analysis needs to be kept.
    pinned.keep_affine = KeepAffine::Never;
    // Kernels the rewrite left as they were are not read again: their analysis is the
    // input's (`fix::unchanged_kernels` says when).
    let unchanged = &expected.unchanged;
    pinned.skipped = std::sync::Arc::new(unchanged.clone());
    let skipped = |function: &parse::Function| unchanged.skips(function);
    let functions = &original.parsed.functions;
    let shared = crate::plan::shared_names(&original.parsed);
    for (function, analysis) in functions.iter().zip(&original.per_function) {
        if shared.contains(&function.display_name()) {
            continue;
        }
        if let Some(block) = analysis.block.as_ref().ok().filter(|b| b.is_assumed()) {
            pinned
                .blocks
                .per_kernel
                .insert(function.display_name(), block.shape);
        }
    }
    let copies: HashMap<String, String> = applied
        .iter()
        .filter_map(|p| p.rewrite.function.as_ref())
        .flat_map(|f| f.copies.iter().cloned())
        .collect();
    let splits: Vec<(usize, usize, &[String])> = applied
        .iter()
        .filter(|p| !p.rewrite.split_into.is_empty())
        .map(|p| (p.function, p.array, p.rewrite.split_into.as_slice()))
        .collect();
    let old = &original.parsed.functions;
    let old_index = FunctionIndex::new(old);
    // Made once the output's model is known, at its first batch.
    let mut pairing: Option<Result<Pairing, String>> = None;
    let mut results: Vec<Option<Result<Vec<u64>, String>>> = applied.iter().map(|_| None).collect();
    let rewritten = analyse_text_visiting(
        path,
        view,
        &pinned,
        config,
        &mut |parsed, batch, analyses| {
            let paired = pairing.get_or_insert_with(|| {
                let functions =
                    Functions::pair(old, &parsed.functions, &copies, &splits, &skipped)?;
                let mut of_new = vec![Vec::new(); parsed.functions.len()];
                for (i, planned) in applied.iter().enumerate() {
                    of_new[functions.new_of_old[planned.function]].push(i);
                }
                Ok(Pairing {
                    functions,
                    new_index: FunctionIndex::new(&parsed.functions),
                    of_new,
                })
            });
            let Ok(Pairing {
                functions,
                new_index,
                of_new,
            }) = paired
            else {
                return;
            };
            let context = Paired {
                original,
                new_functions: &parsed.functions,
                functions,
                old_index: &old_index,
                new_index,
            };
            let work: Vec<(usize, usize)> = batch
                .clone()
                .flat_map(|n| of_new[n].iter().map(move |&i| (i, n)))
                .collect();
            // Each rewrite is checked on its own, shared out between threads.
            let checked = crate::parallel::map(work.len(), REWRITES_PER_THREAD, |w| {
                let (i, n) = work[w];
                let planned = applied[i];
                let new_analysis = &analyses[n - batch.start];
                let function = &old[planned.function];
                let array = &function.arrays[planned.array];
                match (&expected.rewrites[i], planned.map.struct_of_arrays()) {
                    (None, _) => Err("the function is no longer analysed".to_string()),
                    (Some(requests), Some(layout)) => same_members(
                        &context,
                        planned,
                        layout,
                        &requests.0,
                        new_analysis,
                        &options.bank,
                    ),
                    (Some(requests), None) => same_elements(
                        &context,
                        planned,
                        &requests.0[0],
                        new_analysis,
                        &options.bank,
                    ),
                }
                .map_err(|why| format!("`{}` in `{}`: {why}", array.name, function.display_name()))
            });
            for ((i, _), result) in work.into_iter().zip(checked) {
                results[i] = Some(result);
            }
        },
    );
    parses_as_before(original, &old_index, &rewritten, applied)?;
    let functions = match pairing {
        Some(paired) => paired?.functions,
        None => Functions::pair(old, &rewritten.parsed.functions, &copies, &splits, &skipped)?,
    };
    let applied_arrays: HashSet<(usize, usize)> =
        applied.iter().map(|p| (p.function, p.array)).collect();
    for (f, before) in old.iter().enumerate() {
        if skipped(before) {
            continue;
        }
        let n = functions.new_of_old[f];
        let shape = |file: &AnalysedFile, f: usize| {
            file.per_function[f].block.as_ref().ok().map(|b| b.shape)
        };
        // A function without shared arrays that only the copies call now has no block shape
        // of its own, and needs none.
        if is_reported(before) && shape(original, f) != shape(&rewritten, n) {
            return Err(format!(
                "the block shape of `{}` changed",
                before.display_name()
            ));
        }
        for (a, array) in before.arrays.iter().enumerate() {
            let is_applied = applied_arrays.contains(&(f, a));
            let new_array = functions.arrays[f][a][0];
            if !is_applied
                && expected.excess[f][a] != excess_of(&rewritten.per_function[n].costs[new_array])
            {
                return Err(format!(
                    "`{}` in `{}` was not rewritten but its conflicts changed",
                    array.name,
                    before.display_name()
                ));
            }
        }
    }
    results
        .into_iter()
        .map(|result| result.unwrap_or_else(|| Err("the function is no longer analysed".into())))
        .collect()
}

/// The excess wavefronts of each access of one array (`None`: not simulated).
fn excess_of(costs: &[Result<crate::cost::SiteCost, String>]) -> Vec<Option<u64>> {
    costs
        .iter()
        .map(|c| c.as_ref().ok().map(|c| c.excess()))
        .collect()
}

/// Rewrites checked on one thread at a time, at least: a small one takes microseconds.
pub(super) const REWRITES_PER_THREAD: usize = 16;

/// The output's functions paired with the input's, indexed by place, and per function the
/// applied rewrites of its arrays.
struct Pairing {
    functions: Functions,
    new_index: FunctionIndex,
    of_new: Vec<Vec<usize>>,
}

/// The input and the output's functions, paired and indexed by place.
struct Paired<'a> {
    original: &'a AnalysedFile,
    new_functions: &'a [parse::Function],
    functions: &'a Functions,
    old_index: &'a FunctionIndex,
    new_index: &'a FunctionIndex,
}

/// Whether the output parses as well as the input did. `view` is the output with each map
/// function's definition line read as its macro, so its syntax errors are the output's but
/// for those lines: each is checked on its own, as the one function definition it must be,
/// and its place, between the input's functions, where a definition may stand. (A second
/// parse of the whole output would cost as much as the analysis of the view.)
fn parses_as_before(
    original: &AnalysedFile,
    functions: &FunctionIndex,
    view: &AnalysedFile,
    applied: &[&Planned],
) -> Result<(), String> {
    let (before, after) = (
        original.parsed.syntax_errors.len(),
        &view.parsed.syntax_errors,
    );
    if after.len() > before {
        return Err(format!(
            "the output has {} syntax errors where the input had {before} (the first at line \
             {})",
            after.len(),
            after.first().map_or(0, |at| at.line)
        ));
    }
    let mut checked = HashSet::new();
    for inserted in applied.iter().filter_map(|p| p.rewrite.function.as_ref()) {
        if let Some(f) = functions.containing(inserted.at) {
            return Err(format!(
                "map function `{}` is inserted inside `{}`",
                inserted.name,
                original.parsed.functions[f].display_name()
            ));
        }
        if checked.insert(inserted.definition.as_str())
            && !parse::is_one_function_definition(&inserted.definition)
        {
            return Err(format!(
                "map function `{}` does not parse as one function definition: {}",
                inserted.name, inserted.definition
            ));
        }
    }
    Ok(())
}

/// The function of a file that contains a byte offset, found by binary search: the
/// functions are sorted by where they start.
pub(super) struct FunctionIndex {
    starts: Vec<usize>,
    /// Per function, the largest end of it and the functions before it.
    furthest_end: Vec<usize>,
}

impl FunctionIndex {
    pub(super) fn new(functions: &[parse::Function]) -> Self {
        let furthest_end = functions
            .iter()
            .scan(0, |furthest, f| {
                *furthest = f.span.end.max(*furthest);
                Some(*furthest)
            })
            .collect();
        FunctionIndex {
            starts: functions.iter().map(|f| f.span.start).collect(),
            furthest_end,
        }
    }

    /// A function that `offset` lies strictly inside of: one that starts there does not
    /// count, and the first that holds it starts first.
    pub(super) fn containing(&self, offset: usize) -> Option<usize> {
        self.holding(offset).filter(|&f| self.starts[f] < offset)
    }

    /// The first function whose span holds `offset` (`start <= offset < end`). The first
    /// whose furthest end passes `offset` ends past it itself; if it starts after `offset`,
    /// so does every later one.
    fn holding(&self, offset: usize) -> Option<usize> {
        let f = self.furthest_end.partition_point(|&end| end <= offset);
        (f < self.starts.len() && self.starts[f] <= offset).then_some(f)
    }
}

/// The functions of the output beside those of the input: the same ones in the same order,
/// plus the copies of `__device__` functions the rewrites made; and their arrays: the same
/// ones in the same order, but for an array stored as a struct of arrays, whose member arrays
/// take its place.
struct Functions {
    /// Per function of the input, its index in the output.
    new_of_old: Vec<usize>,
    /// Per function of the output, the input's function it is or copies.
    old_of_new: Vec<Option<usize>>,
    /// Per function and array of the input, the indices of the arrays that hold it in the
    /// output function (one, or one per member).
    arrays: Vec<Vec<Vec<usize>>>,
}

impl Functions {
    fn pair(
        old: &[parse::Function],
        new: &[parse::Function],
        copies: &HashMap<String, String>,
        splits: &[(usize, usize, &[String])],
        skipped: &dyn Fn(&parse::Function) -> bool,
    ) -> Result<Self, String> {
        let by_name = |name: &str| old.iter().position(|f| f.name == name);
        let copied = |name: &str| copies.get(name);
        let new_of_old: Vec<usize> = (0..new.len())
            .filter(|&n| copied(&new[n].name).is_none())
            .collect();
        if new_of_old.len() != old.len() {
            return Err(format!(
                "{} functions after the rewrite, {} before",
                new_of_old.len(),
                old.len()
            ));
        }
        let mut old_of_new = vec![None; new.len()];
        for (f, &n) in new_of_old.iter().enumerate() {
            old_of_new[n] = Some(f);
        }
        for (n, function) in new.iter().enumerate() {
            if let Some(original) = copied(&function.name) {
                old_of_new[n] = by_name(original);
            }
        }
        let mut arrays = Vec::with_capacity(old.len());
        for (f, &n) in new_of_old.iter().enumerate() {
            let (before, after) = (&old[f], &new[n]);
            // Read as a name and a place only: no array to pair.
            if skipped(before) {
                if before.display_name() != after.display_name() || !after.arrays.is_empty() {
                    return Err(format!(
                        "function {f} is `{}` after the rewrite, `{}` expected",
                        after.display_name(),
                        before.display_name(),
                    ));
                }
                arrays.push(vec![Vec::new(); before.arrays.len()]);
                continue;
            }
            let names: Vec<Vec<&str>> = (0..before.arrays.len())
                .map(|a| match splits.iter().find(|s| (s.0, s.1) == (f, a)) {
                    Some((_, _, parts)) => parts.iter().map(String::as_str).collect(),
                    None => vec![before.arrays[a].name.as_str()],
                })
                .collect();
            let expected: Vec<&str> = names.iter().flatten().copied().collect();
            let found: Vec<&str> = after.arrays.iter().map(|a| a.name.as_str()).collect();
            // A template helper whose only caller now calls its copy loses that instance:
            // without shared arrays of its own, it needs none.
            let same = before.display_name() == after.display_name()
                || (before.name == after.name
                    && before.arrays.is_empty()
                    && after.arrays.is_empty());
            if !same || expected != found {
                return Err(format!(
                    "function {f} is `{}` with arrays {found:?} after the rewrite, `{}` with \
                     {expected:?} expected",
                    after.display_name(),
                    before.display_name(),
                ));
            }
            let mut next = 0;
            arrays.push(
                names
                    .iter()
                    .map(|parts| {
                        next += parts.len();
                        (next - parts.len()..next).collect()
                    })
                    .collect(),
            );
        }
        Ok(Functions {
            new_of_old,
            old_of_new,
            arrays,
        })
    }
}

/// Checks one rewritten array access by access against the requests `expected` of the
/// original's (per access); returns the re-analysed excess of each.
fn same_elements(
    paired: &Paired,
    planned: &Planned,
    expected: &[Option<Requests>],
    new_analysis: &FunctionAnalysis,
    config: &crate::bank::BankConfig,
) -> Result<Vec<u64>, String> {
    let Paired {
        original,
        new_functions,
        functions,
        ..
    } = paired;
    let (f, a) = (planned.function, planned.array);
    let n = functions.new_of_old[f];
    // Another array of the function split into a struct of arrays moves the ones after it.
    let new_a = functions.arrays[f][a][0];
    let old_array = &original.parsed.functions[f].arrays[a];
    let new_array = &new_functions[n].arrays[new_a];
    if old_array.accesses.len() != new_array.accesses.len() {
        return Err(format!(
            "{} accesses after the rewrite, {} before",
            new_array.accesses.len(),
            old_array.accesses.len()
        ));
    }
    let Some(new_affine) = &new_analysis.affine else {
        return Err("the function is no longer analysed".into());
    };
    let mut measured = vec![0; old_array.accesses.len()];
    let old_order = in_source_order(paired.old_index, old_array, Some);
    let new_order = in_source_order(paired.new_index, new_array, |n| functions.old_of_new[n]);
    for (k, m) in old_order.into_iter().zip(new_order) {
        let (old_access, new_access) = (&old_array.accesses[k], &new_array.accesses[m]);
        let line = new_access.at.line;
        if old_access.kind != new_access.kind
            || old_access.detail().member != new_access.detail().member
        {
            return Err(format!(
                "line {line}: `{}` is not the access `{}` rewritten",
                new_access.text, old_access.text
            ));
        }
        let (before, after) = comparable(
            expected.get(k).and_then(Option::as_ref),
            (new_affine, new_a, m),
            new_array,
            config,
        )?;
        same_requests(before, &after).map_err(|mismatch| {
            mismatch.describe(
                line,
                &new_access.text,
                "the map applied to",
                &old_access.text,
            )
        })?;
        let excess = new_analysis.costs[new_a][m]
            .as_ref()
            .map(|c| c.excess())
            .map_err(|why| format!("line {line}: {why}"))?;
        let predicted = planned.predicted.get(k).copied().unwrap_or(0);
        if excess != predicted {
            return Err(format!(
                "line {line}: {excess} excess wavefronts after the rewrite, {predicted} predicted"
            ));
        }
        measured[k] = excess;
    }
    Ok(measured)
}

/// Checks an array stored as a struct of arrays access by access: each member access pairs
/// with one access of its member's array, a whole-record access with one of every member's
/// array, each with the record indices of the original in every warp request (member `m` of
/// record `e` is element `e` of array `m`); returns the re-analysed excess of each original
/// access, the sum over its member accesses, which must be the prediction.
/// `requests` holds the original's requests per member and access.
fn same_members(
    paired: &Paired,
    planned: &Planned,
    layout: &StructOfArrays,
    requests: &[Vec<Option<Requests>>],
    new_analysis: &FunctionAnalysis,
    config: &crate::bank::BankConfig,
) -> Result<Vec<u64>, String> {
    let Paired {
        original,
        new_functions,
        functions,
        ..
    } = paired;
    let (f, a) = (planned.function, planned.array);
    let n = functions.new_of_old[f];
    let old_array = &original.parsed.functions[f].arrays[a];
    let Some(new_affine) = &new_analysis.affine else {
        return Err("the function is no longer analysed".into());
    };
    let mut measured = vec![0u64; old_array.accesses.len()];
    let old_order = in_source_order(paired.old_index, old_array, Some);
    for (m, &new_a) in functions.arrays[f][a].iter().enumerate() {
        let member = &layout.members[m];
        let new_array = &new_functions[n].arrays[new_a];
        if new_array.elem_bytes != Some(member.bytes) || new_array.dims != old_array.dims {
            return Err(format!(
                "`{}` is not shaped as `{}` with elements of {} bytes",
                new_array.name, old_array.name, member.bytes
            ));
        }
        // A whole-record store now comes after its value, which may read the array.
        let position = |k: usize| match layout.uses[k] {
            RecordUse::Store { assignment, .. } => assignment.end,
            _ => old_array.accesses[k].span.start,
        };
        let mut expected: Vec<usize> = old_order
            .iter()
            .copied()
            .filter(|&k| layout.uses[k].members(layout.members.len()).contains(&m))
            .collect();
        expected.sort_by_key(|&k| position(k));
        let found = in_source_order(paired.new_index, new_array, |n| functions.old_of_new[n]);
        if expected.len() != found.len() {
            return Err(format!(
                "`{}` has {} accesses after the rewrite, {} expected",
                new_array.name,
                found.len(),
                expected.len()
            ));
        }
        for (k, j) in expected.into_iter().zip(found) {
            let (old_access, new_access) = (&old_array.accesses[k], &new_array.accesses[j]);
            let line = new_access.at.line;
            if old_access.kind != new_access.kind
                || new_access.detail().member.is_some()
                || new_access.detail().via_pointer.is_some()
            {
                return Err(format!(
                    "line {line}: `{}` is not member `{}` of the access `{}` rewritten",
                    new_access.text, member.name, old_access.text
                ));
            }
            let (before, after) = comparable(
                requests[m].get(k).and_then(Option::as_ref),
                (new_affine, new_a, j),
                new_array,
                config,
            )?;
            same_requests(before, &after).map_err(|mismatch| {
                mismatch.describe(
                    line,
                    &new_access.text,
                    "the record indices of",
                    &old_access.text,
                )
            })?;
            let excess = new_analysis.costs[new_a][j]
                .as_ref()
                .map(|c| c.excess())
                .map_err(|why| format!("line {line}: {why}"))?;
            measured[k] += excess;
        }
    }
    for (k, (&excess, access)) in measured.iter().zip(&old_array.accesses).enumerate() {
        let predicted = planned.predicted.get(k).copied().unwrap_or(0);
        if excess != predicted {
            return Err(format!(
                "line {}: `{}`: {excess} excess wavefronts after the rewrite, {predicted} \
                 predicted",
                access.at.line, access.text
            ));
        }
    }
    Ok(measured)
}

/// The digest expected of an original access beside the requests of the output's access
/// `at` (affine analysis, array, access) that should make them, or why they cannot be
/// compared.
fn comparable<'e, 'a>(
    expected: Option<&'e Requests>,
    at: (&'a crate::affine::FunctionAffine, usize, usize),
    new_array: &parse::SharedArray,
    config: &crate::bank::BankConfig,
) -> Result<(&'e Digest, SiteRequests<'a>), String> {
    let (affine, a, m) = at;
    let access = &new_array.accesses[m];
    let line = access.at.line;
    let site = affine.sites[a].get(m).and_then(Option::as_ref);
    let (before, site) = match (expected, site) {
        (Some(Requests::Failed(why)), Some(_)) => return Err(why.clone()),
        (Some(Requests::Digest(digest)), Some(site)) => (digest, site),
        _ => return Err(format!("line {line}: `{}` is not analysed", access.text)),
    };
    let after = SiteRequests::new(affine, site, new_array, access, config)
        .map_err(|why| format!("line {line}: `{}` cannot be simulated: {why}", access.text))?;
    Ok((before, after))
}

/// How the requests of a rewritten access differ from those expected.
enum Mismatch {
    /// As many requests, but some with other element indices.
    Elements { requests: u64 },
    /// As many requests as that.
    Requests { after: u64, before: u64 },
}

impl Mismatch {
    /// The error for the access `new` at `line`, expected to compute `what` `old`.
    fn describe(&self, line: usize, new: &str, what: &str, old: &str) -> String {
        match self {
            Mismatch::Elements { requests } => format!(
                "line {line}: `{new}` computes other elements than {what} `{old}` (in its \
                 {requests} warp requests)"
            ),
            Mismatch::Requests { after, before } => {
                format!("line {line}: {after} warp requests after the rewrite, {before} before")
            }
        }
    }
}

/// An access's warp requests as validation compares them: how many, and one hash of them
/// all in order (the warp and every lane's element index of each). One per access, not one
/// per request: a large file's rewritten accesses make millions of requests, and this is
/// held until the output is analysed.
struct Digest {
    requests: u64,
    hash: u64,
}

impl Digest {
    /// The digest of `requests`, every element index mapped by `map`.
    fn of(requests: &SiteRequests, map: &dyn Fn(i64) -> i64) -> Self {
        let mut hasher = DefaultHasher::new();
        let mut count = 0u64;
        requests.for_each(|warp, _, lanes| {
            warp.hash(&mut hasher);
            lanes.len().hash(&mut hasher);
            for lane in lanes {
                lane.map(map).hash(&mut hasher);
            }
            count += 1;
        });
        Digest {
            requests: count,
            hash: hasher.finish(),
        }
    }
}

/// Whether `new` makes the requests `expected` digests: the same warps, in the same order,
/// with the same lanes.
fn same_requests(expected: &Digest, new: &SiteRequests) -> Result<(), Mismatch> {
    let after = Digest::of(new, &|e| e);
    if after.requests != expected.requests {
        Err(Mismatch::Requests {
            after: after.requests,
            before: expected.requests,
        })
    } else if after.hash != expected.hash {
        Err(Mismatch::Elements {
            requests: after.requests,
        })
    } else {
        Ok(())
    }
}

/// The indices of an array's accesses in the order they start in the source, grouped by
/// the input's function they are in (`original_of` gives it for a function of `file`; a copy
/// counts as its original): loads before stores at one place, then in the analysis' order.
/// A rewrite keeps that order even where it turns an access through a pointer into a
/// subscript of the array, which moves it from the end of the array's accesses to its place
/// among the subscripts, or moves it into a copy of its function.
fn in_source_order(
    functions: &FunctionIndex,
    array: &parse::SharedArray,
    original_of: impl Fn(usize) -> Option<usize>,
) -> Vec<usize> {
    let function_of = |offset: usize| functions.holding(offset).and_then(&original_of);
    let mut order: Vec<usize> = (0..array.accesses.len()).collect();
    order.sort_by_key(|&k| {
        let access = &array.accesses[k];
        (
            function_of(access.span.start),
            access.span.start,
            access.kind.as_str() != "load",
            k,
        )
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strategy under which any rewrite pays: these kernels are small.
    fn unpriced() -> Strategy {
        Strategy {
            max_alu_per_wavefront: Some(u64::MAX),
            ..Strategy::default()
        }
    }
    use crate::analysis::analyse_text;
    use crate::plan::{plan, Strategy};
    use crate::rewrite::edit::{apply, Edit};
    use crate::solve::maps::Identity;

    const TRANSPOSE: &str = "// bankwise: block=32x8\n__global__ void t(float *o)\n{\n    \
        __shared__ float tile[32][32];\n    for (int j = 0; j < 32; j += 8)\n        \
        tile[threadIdx.y + j][threadIdx.x] = o[j];\n    for (int j = 0; j < 32; j += 8)\n        \
        o[j] = tile[threadIdx.x][threadIdx.y + j];\n}\n";

    /// Validates `output` as the rewrite of TRANSPOSE's tile with `planned` changed by `tamper`.
    fn check(
        output: impl Fn(&str) -> String,
        tamper: impl Fn(&mut Planned),
    ) -> Result<Vec<Vec<u64>>, String> {
        validate_first_rewrite(TRANSPOSE, output, tamper)
    }

    /// Validates `output` as the first planned rewrite of `text` with that plan changed by
    /// `tamper`.
    fn validate_first_rewrite(
        text: &str,
        output: impl Fn(&str) -> String,
        tamper: impl Fn(&mut Planned),
    ) -> Result<Vec<Vec<u64>>, String> {
        let options = Options::default();
        let config = ConfigBlocks::default();
        let path = Path::new("t.cu");
        let original = analyse_text(path, text, &options, &config);
        let mut plan = plan(&original, text, &unpriced(), &options.bank);
        let planned = &mut plan.rewrites[0];
        let rewritten = output(&apply(text, &planned.rewrite.edits).expect("applies"));
        tamper(planned);
        let applied = [&*planned];
        let expected = Expected::of(&original, &applied, &options.bank);
        validate(
            path, &original, &expected, &rewritten, &applied, &options, &config,
        )
    }

    #[test]
    fn accesses_through_pointers_and_in_copies_are_checked_like_subscripts() {
        let text = "__device__ void put(float *d, int i)\n{\n    d[2 * i] = 1;\n}\n\
            // bankwise: block=32\n__global__ void k(float *o)\n{\n    __shared__ float s[64];\n    \
            float *p = s + 1;\n    p[2 * threadIdx.x] = 1;\n    put(s, threadIdx.x);\n    \
            o[0] = s[threadIdx.x];\n}\n";
        let (options, config, path) = (
            Options::default(),
            ConfigBlocks::default(),
            Path::new("t.cu"),
        );
        let original = analyse_text(path, text, &options, &config);
        let plan = plan(&original, text, &unpriced(), &options.bank);
        let planned = &plan.rewrites[0];
        let function = planned.rewrite.function.as_ref().expect("a map function");
        let mut edits = planned.rewrite.edits.clone();
        edits.push(Edit::insert(function.at, function.text.clone()));
        let output = apply(text, &edits).expect("applies");
        let checked = |output: &str| {
            let view = output.replacen(&function.definition, &function.macro_definition, 1);
            let expected = Expected::of(&original, &[planned], &options.bank);
            validate(
                path,
                &original,
                &expected,
                &view,
                &[planned],
                &options,
                &config,
            )
        };
        assert_eq!(checked(&output), Ok(vec![vec![0, 0, 0]]));
        let subscript = output.replace(
            "s[bankwise_s(&p[2 * threadIdx.x] - s)]",
            "p[2 * threadIdx.x]",
        );
        assert_ne!(subscript, output);
        let why = checked(&subscript).expect_err("the pointer's access is not mapped");
        assert!(
            why.contains("line 23: `p[2 * threadIdx.x]` computes other elements"),
            "{why}"
        );
        let copy = output.replace("d[bankwise_s(2 * i)]", "d[2 * i]");
        assert_ne!(copy, output);
        let why = checked(&copy).expect_err("the copy's access is not mapped");
        assert!(why.contains("`d[2 * i]` computes other elements"), "{why}");
    }

    #[test]
    fn a_map_function_must_parse_alone_and_stand_between_functions() {
        let text = "// bankwise: block=32x8\n__global__ void t(float *o)\n{\n    \
            __shared__ float tile[32][32];\n    float *p = &tile[0][0];\n    \
            for (int j = 0; j < 32; j += 8)\n        p[(threadIdx.y + j) * 32 + threadIdx.x] = o[j];\n    \
            for (int j = 0; j < 32; j += 8)\n        o[j] = p[threadIdx.x * 32 + threadIdx.y + j];\n}\n";
        let (options, config, path) = (
            Options::default(),
            ConfigBlocks::default(),
            Path::new("t.cu"),
        );
        let original = analyse_text(path, text, &options, &config);
        let checked = |tamper: &dyn Fn(&mut Planned)| {
            let mut plan = plan(&original, text, &unpriced(), &options.bank);
            let planned = &mut plan.rewrites[0];
            tamper(planned);
            let function = planned.rewrite.function.as_ref().expect("a map function");
            let mut edits = planned.rewrite.edits.clone();
            edits.push(Edit::insert(function.at, function.text.clone()));
            let output = apply(text, &edits).expect("applies");
            let view = output.replacen(&function.definition, &function.macro_definition, 1);
            let applied = [&*planned];
            let expected = Expected::of(&original, &applied, &options.bank);
            validate(
                path, &original, &expected, &view, &applied, &options, &config,
            )
        };
        assert!(checked(&|_| {}).is_ok());
        // The view reads the definition as its macro: only the check of the line alone
        // sees that the function does not parse.
        let broken = checked(&|p| {
            let f = p.rewrite.function.as_mut().expect("a map function");
            let definition = f.definition.replace("return", "return (");
            f.text = f.text.replace(&f.definition, &definition);
            f.definition = definition;
        });
        assert!(
            broken
                .as_ref()
                .is_err_and(|why| why.contains("does not parse as one function")),
            "{broken:?}"
        );
        // Inside the kernel, where the macro would be read but the function not compile.
        let inside = text.find("    __shared__").expect("the declaration");
        let misplaced = checked(&|p| {
            p.rewrite.function.as_mut().expect("a map function").at = inside;
        });
        assert!(
            misplaced
                .as_ref()
                .is_err_and(|why| why.contains("is inserted inside `t`")),
            "{misplaced:?}"
        );
        assert!(parse::is_one_function_definition(
            "int f(int i) { return i; }"
        ));
        for not_one in [
            "int f(int i) { return i; } int g;",
            "int f(int i) { return i; } // a comment",
            "int f(int i) { return i; } \\",
            "int f(int i) {\n return i; }",
            "#define f(i) (i)",
        ] {
            assert!(!parse::is_one_function_definition(not_one), "{not_one}");
        }
    }

    #[test]
    fn the_planned_rewrite_passes() {
        assert_eq!(check(str::to_string, |_| {}), Ok(vec![vec![0, 0]]));
    }

    #[test]
    fn other_elements_than_the_map_gives_fail() {
        let wrong_map = check(str::to_string, |p| p.map = Box::new(Identity::new(1024)));
        let why = wrong_map.expect_err("the map differs");
        assert!(why.contains("line 10: `tile[threadIdx.y + j][threadIdx.x ^ (threadIdx.y + j)]` computes other elements"), "{why}");
        // A subscript the rewriter forgot.
        let forgotten = check(
            |out| out.replace("[(threadIdx.y + j) ^ threadIdx.x]", "[threadIdx.y + j]"),
            |_| {},
        );
        assert!(forgotten.is_err_and(|why| why.contains("line 12")));
    }

    #[test]
    fn excess_other_than_predicted_fails() {
        let wrong = check(str::to_string, |p| p.predicted = vec![0, 1]);
        assert!(wrong
            .is_err_and(|why| why.contains("0 excess wavefronts after the rewrite, 1 predicted")));
    }

    #[test]
    fn new_syntax_errors_fail() {
        let broken = check(|out| out.replace("^ threadIdx.x]", "^ threadIdx.x"), |_| {});
        assert!(broken.is_err_and(|why| why.contains("syntax errors")));
    }

    const RECORDS: &str = "struct R { float v, x; };\n// bankwise: block=64\n\
        __global__ void k(const R *in, float *o)\n{\n    __shared__ R a[64];\n    \
        a[threadIdx.x] = in[threadIdx.x];\n    o[threadIdx.x] = a[threadIdx.x].x;\n    \
        R r = a[63 - threadIdx.x];\n    o[64 + threadIdx.x] = r.v;\n}\n";

    /// Validates `output` as the struct-of-arrays rewrite of RECORDS's `a` with `planned`
    /// changed by `tamper`.
    fn check_records(
        output: impl Fn(&str) -> String,
        tamper: impl Fn(&mut Planned),
    ) -> Result<Vec<Vec<u64>>, String> {
        validate_first_rewrite(RECORDS, output, tamper)
    }

    #[test]
    fn a_struct_of_arrays_pairs_each_access_with_its_members() {
        // 2 warps: the store and the record read conflict-free, `.x` 2-way (1 per warp).
        assert_eq!(
            check_records(str::to_string, |_| {}),
            Ok(vec![vec![0, 0, 0]])
        );
        let wrong_index = check_records(
            |out| out.replacen("a_x[63 - threadIdx.x]", "a_x[threadIdx.x]", 1),
            |_| {},
        );
        assert!(
            wrong_index.as_ref().is_err_and(|why| why.contains(
                "`a_x[threadIdx.x]` computes other elements than the record indices of \
                 `a[63 - threadIdx.x]`"
            )),
            "{wrong_index:?}"
        );
        let wrong_member = check_records(
            |out| out.replace("o[threadIdx.x] = a_x[", "o[threadIdx.x] = a_v["),
            |_| {},
        );
        assert!(
            wrong_member
                .as_ref()
                .is_err_and(|why| why.contains("`a_v` has 3 accesses after the rewrite, 2")),
            "{wrong_member:?}"
        );
        let wrong_prediction = check_records(str::to_string, |p| p.predicted = vec![0, 2, 0]);
        assert!(
            wrong_prediction.as_ref().is_err_and(|why| why
                .contains("`a[threadIdx.x]`: 0 excess wavefronts after the rewrite, 2 predicted")),
            "{wrong_prediction:?}"
        );
    }
}
