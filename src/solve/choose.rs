//! The choice for one array (docs/ARCHITECTURE.md §6): every family's best candidate scored on every
//! site; the chosen one makes no site worse than the array as declared, fits the array's
//! extra-byte allowance, and has the fewest excess wavefronts, then is a map of elements
//! rather than the struct-of-arrays layout (which adds instructions), then has the fewest ALU
//! operations, then the fewest extra bytes (then the earlier family in [`Family::ALL`]).
use super::bitvector::{exhaustive_xor, permutation};
use super::exact::{exact_xor, SEARCH_BOUND};
use super::family::Family;
use super::givargis::givargis;
use super::maps::{AddressMap, FixedAdd, FixedXor, Identity};
use super::mih::mih;
use super::padding::padding;
use super::score::Scorer;
use super::soa::{is_relayout, struct_of_arrays};
use super::space::{Candidate, Found, Space};
use super::swizzle::{rap, repitch, rotated_swizzle, skew, swizzle};
use super::ArrayProblem;
use crate::bank::BankConfig;
use crate::cost::SitePattern;
use std::collections::HashMap;

/// Knobs of the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// Time bound of the exact search.
    pub exact_bound: u64,
    /// Skip the families that cannot be chosen under the array's byte allowance (padding
    /// with no bytes to spend), for callers that need only the choice.
    pub choice_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            exact_bound: SEARCH_BOUND,
            choice_only: false,
        }
    }
}

/// One strategy's outcome for an array.
#[derive(Debug, Clone)]
pub struct FamilyResult {
    pub strategy: Family,
    /// Its best map, scored; `None` when the family does not apply (see `skipped`).
    pub best: Option<Candidate>,
    pub skipped: Option<String>,
    pub candidates: u64,
    /// The search's node bound cut it short.
    pub truncated: bool,
}

impl FamilyResult {
    fn from_found(strategy: Family, found: Result<Option<Found>, String>) -> Self {
        match found {
            Ok(Some(found)) => FamilyResult {
                strategy,
                best: Some(found.best),
                skipped: None,
                candidates: found.candidates,
                truncated: found.truncated,
            },
            Ok(None) => FamilyResult::skipped(strategy, "no candidate applies".into()),
            Err(why) => FamilyResult::skipped(strategy, why),
        }
    }

    fn skipped(strategy: Family, why: String) -> Self {
        FamilyResult {
            strategy,
            best: None,
            skipped: Some(why),
            candidates: 0,
            truncated: false,
        }
    }

    pub fn excess_after(&self) -> Option<u64> {
        self.best.as_ref().map(|c| c.score.total)
    }

    pub fn alu_ops(&self) -> Option<u32> {
        self.best.as_ref().map(|c| c.map.alu_ops())
    }

    pub fn extra_elements(&self) -> Option<u64> {
        self.best
            .as_ref()
            .map(|c| c.map.extent_out() - c.map.extent())
    }

    /// Bytes the array grows by with this family's map.
    pub fn extra_bytes(&self, elem_bytes: u32) -> Option<u64> {
        self.extra_elements()
            .map(|e| e.saturating_mul(u64::from(elem_bytes)))
    }
}

/// Every strategy's result for an array, and which one is chosen.
#[derive(Debug, Clone)]
pub struct Choice {
    /// `sizeof` the array's element.
    pub elem_bytes: u32,
    pub excess_before: u64,
    pub site_excess_before: Vec<u64>,
    pub families: Vec<FamilyResult>,
    /// Index into `families`: the identity when nothing allowed is better.
    pub chosen: usize,
}

impl Choice {
    pub fn chosen(&self) -> &FamilyResult {
        &self.families[self.chosen]
    }

    /// The chosen map (the identity when nothing allowed is better).
    pub fn map(&self) -> Option<&dyn AddressMap> {
        self.chosen().best.as_ref().map(|c| c.map.as_ref())
    }
}

/// Scores every family on `problem` and chooses (see the module documentation).
pub fn choose(problem: &ArrayProblem) -> Result<Choice, String> {
    choose_with(problem, &Options::default())
}

/// Choices already made in one run, by everything they depend on: a file often poses the
/// same problem many times (a template's instances, a tile every kernel declares alike), and
/// [`choose_with`] is a pure function of the problem (its name aside) and the options.
#[derive(Debug, Default)]
pub struct ChoiceCache {
    choices: HashMap<ChoiceKey, Choice>,
}

/// What [`choose_with`] reads: the problem without its name, and the options.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ChoiceKey {
    elem_bytes: u32,
    dims: Vec<u64>,
    vector: u64,
    max_extra_bytes: u64,
    config: BankConfig,
    sites: Vec<SitePattern>,
    /// The record layout (its members' names and offsets and their patterns), as text.
    struct_of_arrays: String,
    options: Options,
}

/// Distinct problems kept at most: the keys hold the problems' patterns, and a file of
/// thousands of different arrays would otherwise hold them all.
const CACHED_CHOICES: usize = 256;

impl ChoiceCache {
    /// [`choose_with`], or a copy of its answer to the same problem earlier in the run.
    pub fn choose(&mut self, problem: &ArrayProblem, options: &Options) -> Result<Choice, String> {
        // Its errors name the array: never answered from the cache.
        problem.check()?;
        // Every field by name: one added to the problem must be added to the key.
        let ArrayProblem {
            name: _,
            elem_bytes,
            dims,
            vector,
            max_extra_bytes,
            config,
            sites,
            struct_of_arrays,
        } = problem;
        let key = ChoiceKey {
            elem_bytes: *elem_bytes,
            dims: dims.clone(),
            vector: *vector,
            max_extra_bytes: *max_extra_bytes,
            config: *config,
            sites: sites.clone(),
            struct_of_arrays: format!("{struct_of_arrays:?}"),
            options: *options,
        };
        if let Some(choice) = self.choices.get(&key) {
            return Ok(choice.clone());
        }
        let choice = choose_with(problem, options)?;
        if self.choices.len() < CACHED_CHOICES {
            self.choices.insert(key, choice.clone());
        }
        Ok(choice)
    }
}

pub fn choose_with(problem: &ArrayProblem, options: &Options) -> Result<Choice, String> {
    problem.check()?;
    let extent = problem.extent();
    let scorer = Scorer::new(problem.config, &problem.sites);
    let candidate = |map: Box<dyn AddressMap>| {
        let score = scorer.score(map.as_ref());
        Some(Found {
            best: Candidate { map, score },
            candidates: 1,
            truncated: false,
        })
    };
    let space = Space::of(problem);
    let on_space = |run: &dyn Fn(&Space) -> Result<Option<Found>, String>| match &space {
        Ok(space) => run(space),
        Err(why) => Err(why.clone()),
    };
    let m = problem.bank_bits();
    let needs_bank_bits = || m.ok_or_else(|| "the bank is not a bit field".to_string());
    // The families are independent searches over the same scorer: one thread each.
    let solve = |strategy: Family| {
        let found: Result<Option<Found>, String> = match strategy {
            Family::Identity => Ok(candidate(Box::new(Identity::new(extent)))),
            Family::Swizzle => Ok(swizzle(problem, &scorer)),
            Family::BitvectorPerm => on_space(&|s| Ok(permutation(s))),
            Family::BitvectorXor => on_space(&|s| Ok(exhaustive_xor(s, true))),
            Family::BitwisePermGh => on_space(&|s| givargis(s, false).map(Some)),
            Family::BitwisePermMih => on_space(&|s| mih(s, false).map(Some)),
            Family::BitwiseXorGh => on_space(&|s| givargis(s, true).map(Some)),
            Family::BitwiseXorMih => on_space(&|s| mih(s, true).map(Some)),
            Family::Exact => on_space(&|s| exact_xor(s, options.exact_bound).map(Some)),
            Family::FixedXor => needs_bank_bits().and_then(|m| {
                let map = FixedXor::new(m, extent)?;
                Ok(candidate(Box::new(map)).filter(|_| problem.vector == 1))
            }),
            Family::FixedAdd => needs_bank_bits().and_then(|m| {
                let map = FixedAdd::new(m, extent)?;
                Ok(candidate(Box::new(map)).filter(|_| problem.vector == 1))
            }),
            // Padding always adds bytes.
            Family::Padding if options.choice_only && problem.max_extra_bytes == 0 => {
                Err("no bytes to spend".into())
            }
            Family::Padding => Ok(padding(problem, &scorer)),
            Family::Rap => Ok(rap(problem, &scorer)),
            Family::Skew => Ok(skew(problem, &scorer)),
            Family::Repitch => Ok(repitch(problem, &scorer)),
            Family::Rotate => Ok(rotated_swizzle(problem, &scorer)),
            Family::StructOfArrays => struct_of_arrays(problem, scorer.before()),
        };
        let mut result = FamilyResult::from_found(strategy, found);
        if let Some(best) = &result.best {
            if !best.map.keeps_vectors(problem.vector) {
                result = FamilyResult::skipped(strategy, "breaks the vector width".into());
            }
        }
        result
    };
    let families: Vec<FamilyResult> =
        crate::parallel::map(Family::ALL.len(), 1, |i| solve(Family::ALL[i]));
    let allowed = |f: &FamilyResult| {
        f.best.as_ref().is_some_and(|best| !best.score.worsens)
            && f.extra_bytes(problem.elem_bytes) <= Some(problem.max_extra_bytes)
    };
    let chosen = families
        .iter()
        .enumerate()
        .filter(|(_, f)| allowed(f))
        .min_by_key(|(i, f)| {
            let best = f.best.as_ref().map(Candidate::key);
            (best.map(|k| (k.1, is_relayout(f), k.2, k.3)), *i)
        })
        .map_or(0, |(i, _)| i);
    Ok(Choice {
        elem_bytes: problem.elem_bytes,
        excess_before: scorer.total_before(),
        site_excess_before: scorer.before().to_vec(),
        families,
        chosen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::{raw_problem, transpose_problem};

    #[test]
    fn the_cache_answers_the_same_problem_under_another_name_as_the_solvers_do() {
        let mut cache = ChoiceCache::default();
        let options = Options::default();
        let first = cache
            .choose(&transpose_problem(), &options)
            .expect("solvable");
        let renamed = ArrayProblem {
            name: "other".into(),
            ..transpose_problem()
        };
        let again = cache.choose(&renamed, &options).expect("solvable");
        assert_eq!(cache.choices.len(), 1);
        let fresh = choose_with(&renamed, &options).expect("solvable");
        for choice in [&first, &again] {
            assert_eq!(choice.chosen, fresh.chosen);
            assert_eq!(choice.excess_before, fresh.excess_before);
            assert_eq!(
                choice.map().map(|m| m.cuda("i")),
                fresh.map().map(|m| m.cuda("i"))
            );
        }
        // Another budget is another problem.
        let padded = ArrayProblem {
            max_extra_bytes: 128,
            ..transpose_problem()
        };
        cache.choose(&padded, &options).expect("solvable");
        assert_eq!(cache.choices.len(), 2);
        // A problem that fails its check is never answered from the cache: its error names it.
        let empty = ArrayProblem {
            name: "empty".into(),
            dims: vec![0],
            ..transpose_problem()
        };
        let why = cache.choose(&empty, &options).expect_err("no elements");
        assert!(why.contains("`empty`"), "{why}");
        assert_eq!(cache.choices.len(), 2);
    }

    #[test]
    fn the_transpose_tile_gets_the_one_operation_swizzle() {
        let choice = choose(&transpose_problem()).expect("solvable");
        assert_eq!(choice.excess_before, 992);
        assert_eq!(choice.chosen().strategy, Family::Swizzle);
        assert_eq!(choice.chosen().excess_after(), Some(0));
        assert_eq!(choice.chosen().alu_ops(), Some(1));
        let by_name = |family: Family| {
            choice
                .families
                .iter()
                .find(|f| f.strategy == family)
                .expect("listed")
        };
        assert_eq!(by_name(Family::Exact).excess_after(), Some(0));
        assert_eq!(by_name(Family::FixedXor).excess_after(), Some(0));
        // Padding clears it too but needs 128 bytes the array may not grow by.
        assert_eq!(by_name(Family::Padding).excess_after(), Some(0));
        assert_eq!(by_name(Family::Padding).extra_elements(), Some(32));
        assert_eq!(by_name(Family::Identity).excess_after(), Some(992));
        assert_eq!(choice.families.len(), Family::ALL.len());
        let swizzle = by_name(Family::Swizzle);
        let map = swizzle.best.as_ref().expect("a map").map.as_ref();
        assert_eq!(
            map.cute().map(|c| c.to_string()).as_deref(),
            Some("Swizzle<5, 0, 5>")
        );
        assert_eq!(map.cuda("i"), "i ^ ((i >> 5) & 31)");
        assert_eq!(swizzle.extra_bytes(4), Some(0));
        assert_eq!(by_name(Family::Padding).extra_bytes(4), Some(128));
    }

    #[test]
    fn padding_is_chosen_when_its_bytes_are_allowed_and_it_costs_nothing() {
        let mut problem = transpose_problem();
        problem.max_extra_bytes = 128;
        // The swizzle costs one operation, the padded declaration none.
        let choice = choose(&problem).expect("solvable");
        assert_eq!(choice.chosen().strategy, Family::Padding);
    }

    /// Thesis ch. 5: a stride-5 (padded) pattern is conflict-free as declared, and the fixed
    /// XOR map would make it conflict: it is scored worse and never chosen.
    #[test]
    fn a_map_that_makes_a_site_worse_is_never_chosen() {
        let sets: Vec<Vec<i64>> = (0..4)
            .map(|j| (0..32).map(|l| 33 * l + j).collect())
            .collect();
        let mut problem = raw_problem(&sets, 32, Some(11)).expect("valid");
        problem.dims = vec![64, 32];
        let choice = choose(&problem).expect("solvable");
        assert_eq!(choice.excess_before, 0);
        assert_eq!(choice.chosen().strategy, Family::Identity);
        let fixed = choice
            .families
            .iter()
            .find(|f| f.strategy == Family::FixedXor)
            .expect("listed");
        assert!(fixed.best.as_ref().is_some_and(|b| b.score.worsens));
    }
}
