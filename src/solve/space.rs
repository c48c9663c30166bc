//! What every solver shares: the index space of one array (its bits, which of them a
//! bijection may write, which select the bank), its sites with a scorer, and the ranking of
//! candidate maps.
use super::algebra::{index_bits, writable_bits};
use super::maps::AddressMap;
use super::score::{Score, Scorer};
use super::ArrayProblem;
use crate::bank::BankConfig;
use crate::cost::SitePattern;

/// One array's search space.
pub struct Space<'a> {
    pub extent: u64,
    /// Index bits: every index is below `2^bits`.
    pub bits: u32,
    /// Bits a bijection may write (docs/ARCHITECTURE.md §5: below the largest power of two dividing the
    /// extent).
    pub writable: u32,
    /// Index bits that select the bank (in element units).
    pub bank_bits: u32,
    /// Low index bits that must stay in place (log2 of the vector width).
    pub vector_bits: u32,
    pub config: BankConfig,
    /// `sizeof` the element: decides whether the bank of an element is a bit field.
    pub elem_bytes: u32,
    pub sites: &'a [SitePattern],
    pub scorer: Scorer<'a>,
}

impl<'a> Space<'a> {
    /// The space of an array problem, or why the XOR and bit families cannot apply.
    pub fn of(problem: &'a ArrayProblem) -> Result<Self, String> {
        problem.check()?;
        let extent = problem.extent();
        let bank_bits = problem.bank_bits().ok_or_else(|| {
            format!(
                "{}-byte elements: the bank is not a bit field of the index",
                problem.elem_bytes
            )
        })?;
        Ok(Space {
            extent,
            bits: index_bits(extent),
            writable: writable_bits(extent),
            bank_bits,
            vector_bits: problem.vector.trailing_zeros(),
            config: problem.config,
            elem_bytes: problem.elem_bytes,
            sites: &problem.sites,
            scorer: Scorer::new(problem.config, &problem.sites),
        })
    }

    /// Whether the cost of an element set depends only on the element's bank bits, i.e.
    /// elements are whole bank words of a power-of-two size: then two elements conflict iff
    /// they differ and agree in their bank bits, and the exact search is exact.
    pub fn banks_are_bit_fields(&self) -> bool {
        self.elem_bytes.is_power_of_two() && self.elem_bytes >= self.config.bank_width
    }

    /// Every distinct phase of every site, as sorted element indices, with its count.
    pub fn phases(&self) -> impl Iterator<Item = (&[i64], u64)> + '_ {
        self.sites.iter().flat_map(SitePattern::phases)
    }

    /// Whether `map` moves the space's vectors whole.
    pub fn keeps_vectors(&self, map: &dyn AddressMap) -> bool {
        map.keeps_vectors(1 << self.vector_bits)
    }

    /// Scores `map` and returns it as a ranked candidate.
    pub fn candidate(&self, map: Box<dyn AddressMap>) -> Candidate {
        let score = self.scorer.score(map.as_ref());
        Candidate { map, score }
    }
}

/// A scored map.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub map: Box<dyn AddressMap>,
    pub score: Score,
}

impl Candidate {
    /// The ranking: never worse on any site, then fewer excess wavefronts, fewer ALU
    /// operations, fewer extra bytes.
    pub fn key(&self) -> (bool, u64, u32, u64) {
        (
            self.score.worsens,
            self.score.total,
            self.map.alu_ops(),
            self.map.extent_out() - self.map.extent(),
        )
    }
}

/// A solver's answer: its best map, how many candidates it scored, and whether its search bound
/// cut the search short.
#[derive(Debug)]
pub struct Found {
    pub best: Candidate,
    pub candidates: u64,
    pub truncated: bool,
}

/// Keeps the best-ranked candidate; the first of equals wins.
#[derive(Debug, Default)]
pub struct Best {
    best: Option<Candidate>,
    /// The best's key, computed once: an ALU count builds the map's expression.
    best_key: (bool, u64, u32, u64),
    /// The site that rejected the last map scored within a bound, scored first next time.
    rejecting_site: usize,
    pub candidates: u64,
    /// The excess of some never-worse map of the same search, known before it is reached:
    /// no map above it can win.
    ceiling: Option<u64>,
}

impl Best {
    /// Scores `map` only as far as it can still win, and keeps it if it does. Against a
    /// never-worse best, a map must not exceed its excess, and must stay below it unless it
    /// is cheaper (the first of equals wins).
    pub fn try_map(&mut self, scorer: &Scorer, map: Box<dyn AddressMap>) {
        let bound = match self.best.as_ref().filter(|best| !best.score.worsens) {
            None => self.ceiling,
            Some(best) => {
                let cheaper = (map.alu_ops(), map.extent_out() - map.extent())
                    < (self.best_key.2, self.best_key.3);
                match (cheaper, best.score.total.checked_sub(1)) {
                    (true, _) => Some(best.score.total),
                    (false, Some(below)) => Some(below),
                    (false, None) => {
                        self.candidates += 1;
                        return;
                    }
                }
            }
        };
        let bound = match (bound, self.ceiling) {
            (Some(b), Some(c)) => Some(b.min(c)),
            (b, c) => b.or(c),
        };
        match scorer.score_within(map.as_ref(), bound, &mut self.rejecting_site) {
            Some(score) => self.offer(Candidate { map, score }),
            None => self.candidates += 1,
        }
    }

    /// A search that will reach a never-worse map with `excess` excess wavefronts: maps with
    /// more are scored only until they pass it.
    pub fn lower_ceiling(&mut self, excess: u64) {
        self.ceiling = Some(self.ceiling.map_or(excess, |c| c.min(excess)));
    }

    pub fn offer(&mut self, candidate: Candidate) {
        self.candidates += 1;
        let key = candidate.key();
        if self.best.is_none() || key < self.best_key {
            self.best = Some(candidate);
            self.best_key = key;
        }
    }

    pub fn found(self, truncated: bool) -> Option<Found> {
        let candidates = self.candidates;
        self.best.map(|best| Found {
            best,
            candidates,
            truncated,
        })
    }
}
