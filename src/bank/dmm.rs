//! Nakano's Discrete Memory Machine (DMM) view of the bank model, and the address maps and
//! access patterns of Nakano, Matsumae and Ito, "Random address permute-shift technique for
//! the shared memory on GPUs" (the RAP paper), used to reproduce its Table II.
//!
//! A DMM of width `w` has `w` banks of one word and warps of `w` threads; address `a` is in
//! bank `a mod w`. The **congestion** of a warp's request is the largest number of distinct
//! addresses destined for one bank (requests to the same address are merged), i.e. the
//! conflict degree of [`super::simulate`] with `w` banks, 1-byte words and 1-byte elements.
use super::{evaluate, BankConfig, Request};

/// The congestion of one warp request on a DMM of width `w`: lane `t` requests address
/// `lanes[t]`, inactive lanes are `None`. 0 when no lane is active. `lanes` normally has `w`
/// entries; more are treated as further warps and the worst one counts.
pub fn congestion(w: u32, lanes: &[Option<i64>]) -> u32 {
    let config = BankConfig {
        banks: w,
        bank_width: 1,
        warp: w,
    };
    let request = Request {
        elem_bytes: 1,
        lanes,
    };
    evaluate(&config, &request, false).conflict_degree
}

/// Time units for a run of warp requests with the given congestions on a DMM with memory
/// access latency `latency`.
///
/// The DMM's banks are a pipeline of `latency` stages: a warp request with congestion `c`
/// occupies `c` consecutive stages (its requests to one bank go in turn), warps are dispatched
/// back to back, and the last request completes when it leaves the last stage. So `f` stages in
/// all take `f + latency − 1` time units (the paper's Fig. 3: congestions 2 and 1 with
/// latency 5 take 3 + 5 − 1 = 7; a contiguous access of a w×w matrix takes w + l − 1, a stride
/// access w² + l − 1). A warp with no active lane (congestion 0) is not dispatched, and an
/// empty run takes 0. A latency of 0 is treated as 1.
pub fn dmm_time(congestions: &[u32], latency: u32) -> u64 {
    let stages: u64 = congestions.iter().map(|&c| u64::from(c)).sum();
    if stages == 0 {
        0
    } else {
        stages + u64::from(latency.max(1)) - 1
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator so that the experiments are
/// reproducible without a dependency. Not for anything security-related.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` without modulo bias (Lemire's multiply-and-reject); 0 when `n` is 0.
    pub fn below(&mut self, n: u32) -> u32 {
        let n = u64::from(n);
        let threshold = n.wrapping_neg().checked_rem(n).unwrap_or(0);
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if product as u64 >= threshold {
                return (product >> 64) as u32;
            }
        }
    }

    /// A uniformly random permutation of `items` (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The paper's three ways to store a w×w matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// RAW: `a[i][j]` at address `i·w + j`.
    Raw,
    /// Random address shift: row `i` rotated by an independent uniform `r_i ∈ [0, w)`.
    Ras,
    /// Random address permute-shift: row `i` rotated by `σ(i)` for a uniform permutation σ,
    /// so that a column's elements are in distinct banks.
    Rap,
}

/// One drawn map: `a[i][j]` is stored at address `i·w + (j + shift[i]) mod w`, in bank
/// `(j + shift[i]) mod w`.
#[derive(Debug, Clone)]
pub struct MatrixMap {
    w: u32,
    shift: Vec<u32>,
}

impl MatrixMap {
    /// Draws a map of `kind` for a w×w matrix (`w` = 0 is treated as 1).
    pub fn new(kind: MapKind, w: u32, rng: &mut SplitMix64) -> Self {
        let w = w.max(1);
        let shift = match kind {
            MapKind::Raw => vec![0; w as usize],
            MapKind::Ras => (0..w).map(|_| rng.below(w)).collect(),
            MapKind::Rap => {
                let mut sigma: Vec<u32> = (0..w).collect();
                rng.shuffle(&mut sigma);
                sigma
            }
        };
        MatrixMap { w, shift }
    }

    /// The address of `a[i][j]` for `i, j < w` (row `i` uses row `i mod w`'s shift beyond).
    pub fn address(&self, i: u32, j: u32) -> i64 {
        let shift = self.shift[(i % self.w) as usize];
        let column = (u64::from(j) + u64::from(shift)) % u64::from(self.w);
        i64::from(i) * i64::from(self.w) + column as i64
    }
}

/// The paper's access patterns: warp `i` (threads `i·w + j`, `j < w`) of `w²` threads, one
/// element each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Row-major: thread `j` of warp `i` accesses `a[i][j]`.
    Contiguous,
    /// Column-major: thread `j` of warp `i` accesses `a[j][i]`.
    Stride,
    /// Thread `j` of warp `i` accesses `a[j][(i + j) mod w]`: conflict-free under RAW.
    Diagonal,
    /// Each thread accesses an element drawn uniformly from all `w²`, independently (so two
    /// threads may hit the same element, which is merged). This reading reproduces Table II;
    /// drawing `w` distinct elements instead gives about 2.97 for w = 16 (paper 2.92) and
    /// 3.46 for w = 32 (paper 3.44).
    Random,
}

impl Pattern {
    /// Fills `lanes` (one entry per thread, `w` of them) with the addresses warp `warp`
    /// requests under `map`.
    pub fn request(
        self,
        map: &MatrixMap,
        warp: u32,
        rng: &mut SplitMix64,
        lanes: &mut [Option<i64>],
    ) {
        let w = map.w;
        for (j, lane) in (0..w).zip(lanes.iter_mut()) {
            let (row, column) = match self {
                Pattern::Contiguous => (warp, j),
                Pattern::Stride => (j, warp),
                Pattern::Diagonal => (j, (warp + j) % w),
                Pattern::Random => (rng.below(w), rng.below(w)),
            };
            *lane = Some(map.address(row, column));
        }
    }
}

/// Monte Carlo estimate of the expected congestion of one warp request: each of `samples`
/// requests draws a fresh map of `kind`, a uniformly random warp and (for
/// [`Pattern::Random`]) fresh addresses. This is the quantity Table II reports: the expectation
/// over the random map and the request, which is the same for every warp by symmetry.
pub fn average_congestion(kind: MapKind, pattern: Pattern, w: u32, samples: u32, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut lanes = vec![None; w as usize];
    let mut total = 0u64;
    for _ in 0..samples {
        let map = MatrixMap::new(kind, w, &mut rng);
        let warp = rng.below(w);
        pattern.request(&map, warp, &mut rng, &mut lanes);
        total += u64::from(congestion(w, &lanes));
    }
    total as f64 / f64::from(samples.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn active(addresses: &[i64]) -> Vec<Option<i64>> {
        addresses.iter().copied().map(Some).collect()
    }

    /// The paper's Fig. 2 (w = 4): distinct banks, one bank, one address.
    #[test]
    fn dmm_congestion_examples() {
        assert_eq!(congestion(4, &active(&[7, 4, 1, 14])), 1);
        assert_eq!(congestion(4, &active(&[1, 5, 9, 13])), 4);
        assert_eq!(congestion(4, &active(&[6, 6, 6, 6])), 1);
        assert_eq!(congestion(4, &[Some(0), None, Some(8), None]), 2);
        assert_eq!(congestion(4, &[None; 4]), 0);
        // Same as the conflict degree of 4-byte elements on 32 banks.
        let column: Vec<Option<i64>> = (0..32).map(|l| Some(32 * l)).collect();
        assert_eq!(congestion(32, &column), 32);
    }

    /// Fig. 3: congestions 2 and 1 with latency 5 take 3 + 5 − 1 = 7; Sec. III: a contiguous
    /// access of a w×w matrix takes w + l − 1, a stride access w² + l − 1.
    #[test]
    fn dmm_time_is_stages_plus_latency_minus_one() {
        assert_eq!(dmm_time(&[2, 1], 5), 7);
        assert_eq!(dmm_time(&[1; 32], 100), 32 + 99);
        assert_eq!(dmm_time(&[32; 32], 100), 1024 + 99);
        assert_eq!(dmm_time(&[0, 3, 0], 1), 3);
        assert_eq!(dmm_time(&[], 5), 0);
        assert_eq!(dmm_time(&[0, 0], 5), 0);
        assert_eq!(dmm_time(&[4], 0), 4);
    }

    #[test]
    fn dmm_maps_are_row_rotations() {
        let mut rng = SplitMix64::new(7);
        for kind in [MapKind::Raw, MapKind::Ras, MapKind::Rap] {
            let map = MatrixMap::new(kind, 8, &mut rng);
            for i in 0..8 {
                let mut row: Vec<i64> = (0..8).map(|j| map.address(i, j)).collect();
                row.sort_unstable();
                assert_eq!(
                    row,
                    (0..8).map(|j| i64::from(8 * i + j)).collect::<Vec<_>>()
                );
            }
        }
        assert_eq!(MatrixMap::new(MapKind::Raw, 4, &mut rng).address(2, 3), 11);
        // RAP: a column is in w distinct banks, so stride access is conflict-free.
        let rap = MatrixMap::new(MapKind::Rap, 32, &mut rng);
        let mut banks: Vec<i64> = (0..32).map(|i| rap.address(i, 5) % 32).collect();
        banks.sort_unstable();
        assert_eq!(banks, (0..32).collect::<Vec<_>>());
    }

    #[test]
    fn dmm_rng_is_seeded_and_bounded() {
        let draw = |seed| {
            let mut rng = SplitMix64::new(seed);
            (0..4).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        // Reference output of SplitMix64 seeded with 0.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut rng = SplitMix64::new(3);
        let mut counts = [0u32; 5];
        for _ in 0..5000 {
            counts[rng.below(5) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (900..1100).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
        let mut items: Vec<u32> = (0..10).collect();
        rng.shuffle(&mut items);
        assert_ne!(items, (0..10).collect::<Vec<_>>());
        items.sort_unstable();
        assert_eq!(items, (0..10).collect::<Vec<_>>());
    }

    /// All of Table II with 200 000 samples per entry (standard error about 0.0015). Slow in
    /// debug: `cargo test --release --lib dmm_table_ii_full -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn dmm_table_ii_full() {
        use MapKind::{Rap, Ras, Raw};
        use Pattern::{Contiguous, Diagonal, Random, Stride};
        #[rustfmt::skip]
        let paper: [(MapKind, Pattern, [f64; 5]); 12] = [
            (Raw, Contiguous, [1.0, 1.0, 1.0, 1.0, 1.0]),
            (Raw, Stride, [16.0, 32.0, 64.0, 128.0, 256.0]),
            (Raw, Diagonal, [1.0, 1.0, 1.0, 1.0, 1.0]),
            (Raw, Random, [2.92, 3.44, 3.90, 4.34, 4.75]),
            (Ras, Contiguous, [1.0, 1.0, 1.0, 1.0, 1.0]),
            (Ras, Stride, [3.08, 3.53, 3.96, 4.38, 4.77]),
            (Ras, Diagonal, [3.08, 3.53, 3.96, 4.38, 4.77]),
            (Ras, Random, [2.92, 3.44, 3.90, 4.34, 4.75]),
            (Rap, Contiguous, [1.0, 1.0, 1.0, 1.0, 1.0]),
            (Rap, Stride, [1.0, 1.0, 1.0, 1.0, 1.0]),
            (Rap, Diagonal, [3.20, 3.61, 4.00, 4.41, 4.78]),
            (Rap, Random, [2.92, 3.44, 3.90, 4.34, 4.75]),
        ];
        let mut off = Vec::new();
        for (kind, pattern, expected) in paper {
            for (w, expected) in [16, 32, 64, 128, 256].into_iter().zip(expected) {
                let value = average_congestion(kind, pattern, w, 200_000, 0x7ab1e + u64::from(w));
                eprintln!("{kind:?} {pattern:?} w={w}: {value:.4} (paper {expected})");
                if (value - expected).abs() > 0.03 {
                    off.push(format!(
                        "{kind:?} {pattern:?} w={w}: {value:.4}, paper {expected}"
                    ));
                }
            }
        }
        assert!(off.is_empty(), "not reproduced: {off:#?}");
    }

    /// Table II of the paper (the entries the task names): expected congestion of one warp
    /// request, estimated from seeded samples. Deterministic entries are exact; a random one
    /// has a standard deviation of about 0.74 per request, so 8000 samples give a standard
    /// error of 0.0083 against the ±0.03 tolerance. The paper's figures are rounded to 0.01.
    #[test]
    fn dmm_table_ii_by_monte_carlo() {
        let start = Instant::now();
        let mut measured = Vec::new();
        let mut check = |kind, pattern, w, samples, expected: f64| {
            let value = average_congestion(kind, pattern, w, samples, 0x5eed + u64::from(w));
            measured.push(format!(
                "{kind:?} {pattern:?} w={w}: {value:.3} (paper {expected})"
            ));
            assert!(
                (value - expected).abs() <= 0.03,
                "{kind:?} {pattern:?} w={w}: {value:.3}, paper {expected}"
            );
        };
        use MapKind::{Rap, Ras, Raw};
        use Pattern::{Contiguous, Diagonal, Random, Stride};
        for kind in [Raw, Ras, Rap] {
            check(kind, Contiguous, 32, 200, 1.0);
        }
        check(Raw, Stride, 32, 200, 32.0);
        check(Ras, Stride, 32, 8000, 3.53);
        check(Rap, Stride, 32, 200, 1.0);
        check(Raw, Diagonal, 32, 200, 1.0);
        check(Ras, Diagonal, 32, 8000, 3.53);
        check(Rap, Diagonal, 32, 8000, 3.61);
        for (w, expected) in [(16, 2.92), (32, 3.44), (64, 3.90), (128, 4.34), (256, 4.75)] {
            check(Raw, Random, w, 8000, expected);
        }
        eprintln!("{}\n{:?}", measured.join("\n"), start.elapsed());
    }
}
