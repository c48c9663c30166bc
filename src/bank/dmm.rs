//! Nakano's Discrete Memory Machine (DMM) view of the bank model (Nakano, Matsumae and Ito,
//! "Random address permute-shift technique for the shared memory on GPUs", Sec. II).
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
