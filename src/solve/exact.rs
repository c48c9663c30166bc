//! Exact searches: the XOR-linear map, and the bitwise permutation, with the least total
//! excess wavefronts over all sites of an array (beyond TC 2016, which uses heuristics).
//!
//! When elements are whole bank words of a power-of-two size, two distinct elements of a phase
//! conflict iff their bank bits agree, so a map's cost depends only on its `m` bank rows `H`,
//! and for an XOR-linear `H` only on its kernel: two elements of a phase share a bank iff
//! their XOR lies in `ker H`. Only differences within a phase matter, so the search runs in
//! the span `V` of those differences (dimension `d`, usually far below the index bits): each
//! phase becomes the set of coordinates of `a ⊕ a₀` in a basis of `V`, translated phases
//! merge, and a candidate is a subspace `K ⊆ V` of dimension `max(0, d − m)`; a phase costs
//! its largest coset of `K` minus one. Subspaces are enumerated once each, as bases in
//! reduced echelon form with increasing pivots, by a depth-first branch and bound: adding a
//! basis vector only merges cosets, so a partial basis's cost is a lower bound (raised to the
//! pigeonhole bound `⌈|phase| / 2^m⌉ − 1`), children are tried cheapest first, and the search
//! stops at a cost of 0. The winning kernel is lifted to bank rows over the whole index that
//! are independent on the writable bits (then completed to a bijection), preferring rows
//! with few bits so that the CUDA expression stays short. The search stops after a time
//! bound ([`SEARCH_BOUND`] nodes, deterministic) and says so; what it returns is then the best found, not proven optimal.
//!
//! With a vector constraint (`V` elements move whole) the low `log2 V` bank rows are the unit
//! rows: elements are searched as `a >> log2 V` with their low bits as a tag that always
//! separates bins.
use super::algebra::{annihilator, low_mask, parity, Basis};
use super::bitwise::{columns, map_from_rows};
use super::space::{Found, Space};
use std::collections::HashMap;
/// The default bound of one array's exact search, in search nodes (kernel vectors tried, or
/// bank-bit choices for permutations). A count, not a time, so that the result is the same
/// on every machine and `fix` is reproducible; on the suite's largest patterns it is well
/// under a second in a release build (about 40 µs per node on a 4,096-element histogram).
pub const SEARCH_BOUND: u64 = 1 << 12;

/// Phases as sets of small integers (bins are computed from them), identical ones merged.
struct Phases {
    values: Vec<u64>,
    starts: Vec<usize>,
    weights: Vec<u64>,
}

impl Phases {
    fn new(sets: impl IntoIterator<Item = (Vec<u64>, u64)>) -> Self {
        let mut merged: HashMap<Vec<u64>, u64> = HashMap::new();
        let mut order = Vec::new();
        for (mut set, weight) in sets {
            set.sort_unstable();
            match merged.get_mut(&set) {
                Some(w) => *w += weight,
                None => {
                    merged.insert(set.clone(), weight);
                    order.push(set);
                }
            }
        }
        let mut phases = Phases {
            values: Vec::new(),
            starts: vec![0],
            weights: Vec::new(),
        };
        for set in order {
            phases.weights.push(merged[&set]);
            phases.values.extend_from_slice(&set);
            phases.starts.push(phases.values.len());
        }
        phases
    }

    fn ranges(&self) -> impl Iterator<Item = (std::ops::Range<usize>, u64)> + '_ {
        self.starts
            .windows(2)
            .zip(&self.weights)
            .map(|(w, &weight)| (w[0]..w[1], weight))
    }

    /// Σ weight × (largest bin − 1) with `bin(value)` for every value; phases get at least
    /// their `floors`.
    fn cost(&self, values: &[u64], floors: &[u32], runs: &mut RunCounter) -> u64 {
        self.ranges()
            .zip(floors)
            .map(|((range, weight), &floor)| {
                weight * u64::from(runs.largest_run(&values[range]).max(floor) - 1)
            })
            .sum()
    }
}

/// Counts how often the most frequent value of a phase occurs. Up to a warp's worth of values
/// are counted in a small open-addressing table whose slots belong to the current count only
/// when stamped with its generation, so that no count clears it (the search counts per node
/// and phase, and a sort, or zeroing the table, cost more than the rest of the search);
/// longer phases are sorted.
struct RunCounter {
    keys: [u64; RUN_SLOTS],
    counts: [u32; RUN_SLOTS],
    stamps: [u32; RUN_SLOTS],
    generation: u32,
    sorted: Vec<u64>,
}

const RUN_SLOTS: usize = 128;

impl RunCounter {
    fn new() -> Self {
        RunCounter {
            keys: [0; RUN_SLOTS],
            counts: [0; RUN_SLOTS],
            stamps: [0; RUN_SLOTS],
            generation: 0,
            sorted: Vec::new(),
        }
    }

    /// How often the most frequent value of `values` occurs (0 for none).
    fn largest_run(&mut self, values: &[u64]) -> u32 {
        if values.len() > RUN_SLOTS / 2 {
            self.sorted.clear();
            self.sorted.extend_from_slice(values);
            self.sorted.sort_unstable();
            return self
                .sorted
                .chunk_by(|a, b| a == b)
                .map(|run| run.len() as u32)
                .max()
                .unwrap_or(0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // The stamps have wrapped: old ones could pass for current ones.
            self.stamps = [0; RUN_SLOTS];
            self.generation = 1;
        }
        let mut largest = 0;
        for &value in values {
            let mut slot = (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize;
            while self.stamps[slot] == self.generation && self.keys[slot] != value {
                slot = (slot + 1) % RUN_SLOTS;
            }
            if self.stamps[slot] != self.generation {
                self.stamps[slot] = self.generation;
                self.keys[slot] = value;
                self.counts[slot] = 0;
            }
            self.counts[slot] += 1;
            largest = largest.max(self.counts[slot]);
        }
        largest
    }
}

/// The bank bits of `a` under `rows`.
fn bank(a: u64, rows: &[u64]) -> u64 {
    rows.iter()
        .enumerate()
        .fold(0, |bin, (j, &row)| bin | parity(a & row) << j)
}

/// Total excess of bank rows on the phases of `space`, when banks are bit fields.
fn rows_cost(phases: &Phases, rows: &[u64]) -> u64 {
    let binned: Vec<u64> = phases.values.iter().map(|&a| bank(a, rows)).collect();
    let floors = vec![1; phases.weights.len()];
    phases.cost(&binned, &floors, &mut RunCounter::new())
}

fn element_phases(space: &Space) -> Phases {
    Phases::new(
        space
            .phases()
            .map(|(phase, weight)| (phase.iter().map(|&a| a as u64).collect(), weight)),
    )
}

/// The phases in coordinates of the difference space, with what lifting needs.
struct Coordinates {
    phases: Phases,
    /// Basis of the span of differences of `a >> v` within phases.
    basis: Basis,
    dim: u32,
}

fn coordinates(space: &Space) -> Coordinates {
    let v = space.vector_bits;
    let mut basis = Basis::new();
    for (phase, _) in space.phases() {
        let origin = phase[0] as u64 >> v;
        for &a in phase {
            basis.insert((a as u64 >> v) ^ origin);
        }
    }
    let dim = basis.rank() as u32;
    let phases = Phases::new(space.phases().map(|(phase, weight)| {
        let origin = phase[0] as u64 >> v;
        let coords = phase
            .iter()
            .map(|&a| {
                let a = a as u64;
                basis.coordinates((a >> v) ^ origin) | (a & low_mask(v)) << dim
            })
            .collect();
        (coords, weight)
    }));
    Coordinates { phases, basis, dim }
}

/// Branch and bound over kernels.
struct Search<'a> {
    coords: &'a Coordinates,
    space: &'a Space<'a>,
    /// Kernel dimension.
    k: u32,
    floors: Vec<u32>,
    best_cost: u64,
    best_rows: Option<Vec<u64>>,
    nodes: u64,
    budget: u64,
    truncated: bool,
    runs: RunCounter,
}

impl Search<'_> {
    /// Extends the kernel basis `kernel` (pivots increasing) whose reduced coordinates are
    /// `state`.
    fn descend(&mut self, kernel: &mut Vec<u64>, state: &[u64]) {
        let depth = kernel.len() as u32;
        let pivots: u64 = kernel
            .iter()
            .fold(0, |acc, &v| acc | 1 << (63 - v.leading_zeros()));
        let after = kernel.last().map_or(0, |&v| 64 - v.leading_zeros());
        let last_pivot = self.coords.dim - self.k + depth;
        let mut children: Vec<(u64, u64)> = Vec::new();
        let mut next = vec![0u64; state.len()];
        for pivot in after..=last_pivot {
            let free: Vec<u32> = (0..pivot).filter(|&b| pivots >> b & 1 == 0).collect();
            for pattern in 0u64..1 << free.len() {
                if self.nodes >= self.budget {
                    self.truncated = true;
                    return;
                }
                self.nodes += 1;
                let vector = free
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| pattern >> i & 1 != 0)
                    .fold(1u64 << pivot, |v, (_, &b)| v | 1 << b);
                reduce(state, vector, &mut next);
                let bound = self.coords.phases.cost(&next, &self.floors, &mut self.runs);
                if bound < self.best_cost {
                    children.push((bound, vector));
                }
            }
        }
        children.sort_by_key(|&(bound, _)| bound);
        for (bound, vector) in children {
            if bound >= self.best_cost || self.truncated {
                break;
            }
            reduce(state, vector, &mut next);
            kernel.push(vector);
            if depth + 1 == self.k {
                if let Some(rows) = lift(self.coords, kernel, self.space) {
                    self.best_cost = bound;
                    self.best_rows = Some(rows);
                }
            } else {
                self.descend(kernel, &next);
            }
            kernel.pop();
            if self.best_cost == 0 {
                return;
            }
        }
    }
}

/// `state` reduced by a new kernel vector: values with its pivot bit set are XORed with it.
fn reduce(state: &[u64], vector: u64, out: &mut [u64]) {
    let pivot = 1 << (63 - vector.leading_zeros());
    for (o, &c) in out.iter_mut().zip(state) {
        *o = if c & pivot != 0 { c ^ vector } else { c };
    }
}

/// Bank rows over the whole index with kernel `kernel` (coordinates) on the difference
/// space, independent on the writable bits; `None` when there are none.
fn lift(coords: &Coordinates, kernel: &[u64], space: &Space) -> Option<Vec<u64>> {
    let v = space.vector_bits;
    let free_rows = space.bank_bits.saturating_sub(v) as usize;
    let bits = space.bits - v.min(space.bits);
    let writable = low_mask(space.writable.saturating_sub(v));
    let kernel_x: Vec<u64> = kernel.iter().map(|&c| coords.basis.combine(c)).collect();
    let forms = annihilator(&kernel_x, bits);
    // Cheap rows first: every form of the annihilator when it is small, else its basis.
    let mut pool: Vec<u64> = if forms.len() <= 12 {
        (1u64..1 << forms.len())
            .map(|c| {
                forms
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| c >> i & 1 != 0)
                    .fold(0, |r, (_, &f)| r ^ f)
            })
            .collect()
    } else {
        forms
    };
    pool.sort_by_key(|&r| (r.count_ones(), r));
    let on_v = |r: u64| -> u64 {
        coords
            .basis
            .vectors()
            .iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | parity(r & b) << i)
    };
    let target = coords.dim as usize - kernel.len();
    let (mut separating, mut independent) = (Basis::new(), Basis::new());
    let mut rows: Vec<u64> = Vec::new();
    for &r in &pool {
        if separating.rank() < target
            && !separating.contains(on_v(r))
            && !independent.contains(r & writable)
        {
            separating.insert(on_v(r));
            independent.insert(r & writable);
            rows.push(r);
        }
    }
    for &r in &pool {
        if rows.len() >= free_rows {
            break;
        }
        if separating.rank() == target && independent.insert(r & writable) {
            rows.push(r);
        }
    }
    if separating.rank() < target || rows.len() < free_rows {
        return None;
    }
    rows.truncate(free_rows);
    let rows = cheap_basis(&rows);
    Some(
        (0..v.min(space.bank_bits))
            .map(|j| 1u64 << j)
            .chain(rows.iter().map(|&r| r << v))
            .collect(),
    )
}

/// Another basis of the rows' span, row `j` having bit `j` where it can and as few bits as
/// possible, so that the map keeps most bits and its expression is short.
fn cheap_basis(rows: &[u64]) -> Vec<u64> {
    let mut span: Vec<u64> = (1u64..1 << rows.len())
        .map(|c| {
            rows.iter()
                .enumerate()
                .filter(|(i, _)| c >> i & 1 != 0)
                .fold(0, |r, (_, &x)| r ^ x)
        })
        .collect();
    span.sort_by_key(|&r| (r.count_ones(), r));
    let mut picked = Basis::new();
    let mut out = Vec::new();
    for j in 0..rows.len() {
        let choice = span
            .iter()
            .copied()
            .filter(|&r| !picked.contains(r))
            .min_by_key(|&r| (r >> j & 1 == 0, r.count_ones(), r));
        if let Some(r) = choice {
            picked.insert(r);
            out.push(r);
        }
    }
    out
}

/// The XOR-linear map with the least total excess wavefronts (see the module documentation),
/// searched over at most `bound` nodes.
pub fn exact_xor(space: &Space, bound: u64) -> Result<Found, String> {
    if !space.banks_are_bit_fields() {
        return Err(format!(
            "{}-byte elements share bank words: the cost is not a function of the bank bits",
            space.elem_bytes
        ));
    }
    if space.writable < space.bank_bits {
        return Err(format!(
            "{} bank bits but only {} index bits may be written",
            space.bank_bits, space.writable
        ));
    }
    let v = space.vector_bits.min(space.bank_bits);
    let identity: Vec<u64> = (0..space.bank_bits).map(|j| 1u64 << j).collect();
    let incumbent = rows_cost(&element_phases(space), &identity);
    let coords = coordinates(space);
    let free_rows = space.bank_bits - v;
    let k = coords.dim.saturating_sub(free_rows);
    let bins_log2 = coords.dim.min(free_rows) + v;
    let floors: Vec<u32> = coords
        .phases
        .ranges()
        .map(|(range, _)| (range.len() as u64).div_ceil(1 << bins_log2).max(1) as u32)
        .collect();
    let mut search = Search {
        coords: &coords,
        space,
        k,
        floors,
        best_cost: incumbent,
        best_rows: None,
        nodes: 0,
        budget: bound,
        truncated: false,
        runs: RunCounter::new(),
    };
    if k == 0 {
        // Every phase fits the banks: the kernel is {0}.
        search.best_rows = lift(&coords, &[], space);
        search.nodes = 1;
        if search.best_rows.is_some() {
            search.best_cost = 0;
        }
    } else if incumbent > 0 {
        let state = coords.phases.values.clone();
        search.descend(&mut Vec::new(), &state);
    }
    let rows = search.best_rows.clone().unwrap_or(identity);
    let map = map_from_rows(space, &rows)?;
    let best = space.candidate(map);
    debug_assert!(
        search.best_rows.is_none() || best.score.total == search.best_cost,
        "the kernel model's cost {} is the bank model's {}",
        search.best_cost,
        best.score.total
    );
    Ok(Found {
        best,
        candidates: search.nodes,
        truncated: search.truncated,
    })
}

/// The bitwise permutation with the least total excess: every choice of bank bits.
pub fn exact_permutation(space: &Space, bound: u64) -> Result<Found, String> {
    let fixed: Vec<u64> = (0..space.vector_bits.min(space.bank_bits))
        .map(|j| 1u64 << j)
        .collect();
    let cols = columns(space, false);
    let free = space.bank_bits as usize - fixed.len();
    let phases = element_phases(space);
    let fields = space.banks_are_bit_fields();
    let mut best: Option<(u64, Vec<u64>)> = None;
    let mut evaluated = 0u64;
    let mut truncated = false;
    let mut choice: Vec<usize> = (0..free).collect();
    if free <= cols.len() {
        loop {
            if evaluated >= bound {
                truncated = true;
                break;
            }
            let rows: Vec<u64> = fixed
                .iter()
                .copied()
                .chain(choice.iter().map(|&i| cols[i]))
                .collect();
            evaluated += 1;
            let cost = if fields {
                Some(rows_cost(&phases, &rows))
            } else {
                map_from_rows(space, &rows)
                    .ok()
                    .map(|map| space.scorer.score(map.as_ref()).total)
            };
            if let Some(cost) = cost.filter(|&c| best.as_ref().is_none_or(|(b, _)| c < *b)) {
                best = Some((cost, rows));
            }
            if !next_combination(&mut choice, cols.len()) {
                break;
            }
        }
    }
    let (_, rows) = best.ok_or("no bank bits to choose from")?;
    let map = map_from_rows(space, &rows)?;
    Ok(Found {
        best: space.candidate(map),
        candidates: evaluated,
        truncated,
    })
}

/// The next `k`-subset of `0..n` in lexicographic order; false after the last.
fn next_combination(choice: &mut [usize], n: usize) -> bool {
    let k = choice.len();
    for i in (0..k).rev() {
        if choice[i] < n - k + i {
            choice[i] += 1;
            for j in i + 1..k {
                choice[j] = choice[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::{raw_problem, stride_sets};

    /// The counting table and the sort agree, on short and long phases.
    #[test]
    fn largest_run_counts_the_most_frequent_value() {
        let sorted = |values: &[u64]| {
            let mut v = values.to_vec();
            v.sort_unstable();
            v.chunk_by(|a, b| a == b)
                .map(|r| r.len() as u32)
                .max()
                .unwrap_or(0)
        };
        let cases: Vec<Vec<u64>> = vec![
            vec![],
            vec![7],
            (0..32).map(|l| l % 4).collect(),
            (0..32).map(|l| (l * 0x1_0000_0001) % 5).collect(),
            (0..64).map(|l| l / 3).collect(),
            (0..200).map(|l| (l * 37) % 11).collect(),
        ];
        let mut runs = RunCounter::new();
        for values in cases.iter().chain(&cases) {
            assert_eq!(runs.largest_run(values), sorted(values), "{values:?}");
        }
        runs.generation = u32::MAX;
        assert_eq!(runs.largest_run(&cases[2]), 8);
        assert_eq!(runs.largest_run(&cases[3]), sorted(&cases[3]));
    }

    #[test]
    fn combinations_are_enumerated_once() {
        let mut choice = vec![0, 1];
        let mut count = 1;
        while next_combination(&mut choice, 5) {
            count += 1;
        }
        assert_eq!(count, 10);
        assert_eq!(choice, vec![3, 4]);
    }

    /// Strides 4 and 6 defeat every bit-vector XOR (1 excess left), and the exact search
    /// proves that no XOR-linear map does better: the differences span bits 1..7, and every
    /// 2-dimensional kernel there meets one of the two strides.
    #[test]
    fn exact_xor_proves_strides_4_and_6_leave_one_conflict() {
        let problem = raw_problem(&stride_sets(&[4, 6]), 32, Some(14)).expect("valid");
        let space = Space::of(&problem).expect("space");
        let found = exact_xor(&space, SEARCH_BOUND).expect("searchable");
        assert_eq!(found.best.score.total, 1);
        assert!(!found.truncated);
        assert_eq!(found.candidates, 223);
        assert!(crate::solve::algebra::check_bijection(found.best.map.as_ref()).is_ok());
    }

    /// Fig. 6's set on 8 banks: eight addresses, but bits 0, 3 and 4 leave a 2-way conflict;
    /// some XOR-linear map has none.
    #[test]
    fn exact_beats_the_heuristics_on_figure_6() {
        let problem = raw_problem(&[vec![27, 12, 6, 19, 11, 4, 28, 3]], 8, None).expect("valid");
        let space = Space::of(&problem).expect("space");
        let xor = exact_xor(&space, SEARCH_BOUND).expect("searchable");
        let perm = exact_permutation(&space, SEARCH_BOUND).expect("searchable");
        assert_eq!(perm.candidates, 10);
        assert_eq!(perm.best.score.total, 1);
        assert_eq!(xor.best.score.total, 0);
    }

    #[test]
    fn exact_search_cost_matches_the_bank_model() {
        // Transpose-like: row reads 32·j + l and column reads 32·l + j of a 32 × 32 tile.
        let mut sets: Vec<Vec<i64>> = Vec::new();
        for j in 0..32 {
            sets.push((0..32).map(|l| 32 * j + l).collect());
            sets.push((0..32).map(|l| 32 * l + j).collect());
        }
        let problem = raw_problem(&sets, 32, Some(10)).expect("valid");
        let space = Space::of(&problem).expect("space");
        assert_eq!(space.scorer.total_before(), 32 * 31);
        let found = exact_xor(&space, SEARCH_BOUND).expect("searchable");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(found.best.map.alu_ops(), 3);
    }
}
