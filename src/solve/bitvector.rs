//! The bit-vector searches of TC 2016 Sec. 5.1: every bit-vector permutation `k`, and the
//! bit-vector XOR `(k1, k2, mask)` either exhaustively or with the paper's pruning.
//!
//! The pruning, for address sets that need not be pure strides: a set's `k` is the number of
//! trailing zeros of the gcd of its addresses' differences from the lowest one (a stride
//! `S = S0·2^k` gives `k`), its MSB the highest bit of its largest difference
//! (`⌊log2((t − 1)·S)⌋` for a stride over `t` lanes). Then `k1` ranges over the sets' `k`
//! values, `k2` over `[min k, max MSB]` without `k1`, and `mask` over the masks whose bits
//! exist up to that MSB: `mask < 2^min(m, MSB − k2 + 1)`.
use super::maps::{BitVectorPermutation, BitVectorXor};
use super::space::{Best, Found, Space};

/// `(k, MSB)` of one sorted set of distinct addresses; `None` for fewer than two.
pub fn stride_bits(phase: &[i64]) -> Option<(u32, u32)> {
    let (&low, &high) = (phase.first()?, phase.last()?);
    if high == low {
        return None;
    }
    let gcd = phase.iter().map(|&a| (a - low) as u64).fold(0, gcd);
    let span = (high - low) as u64;
    Some((gcd.trailing_zeros(), 63 - span.leading_zeros()))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The bit-vector XOR parameters to try, and how many there are without pruning
/// (`(n − m + 1) · n · 2^m`).
pub fn xor_candidates(space: &Space, pruned: bool) -> (Vec<(u32, u32, u64)>, u64) {
    let (n, m) = (space.bits, space.bank_bits);
    let all = (u64::from(n.saturating_sub(m) + 1) * u64::from(n)) << m;
    if !pruned {
        let list = (0..=n.saturating_sub(m))
            .flat_map(|k1| {
                (0..n).flat_map(move |k2| (0..1u64 << m).map(move |mask| (k1, k2, mask)))
            })
            .collect();
        return (list, all);
    }
    let mut ks: Vec<u32> = Vec::new();
    let mut msb = 0;
    for (phase, _) in space.phases() {
        if let Some((k, top)) = stride_bits(phase) {
            if !ks.contains(&k) {
                ks.push(k);
            }
            msb = msb.max(top);
        }
    }
    let Some(&k_min) = ks.iter().min() else {
        return (Vec::new(), all);
    };
    let msb = msb.min(n.saturating_sub(1));
    let mut list = Vec::new();
    for &k1 in &ks {
        for k2 in (k_min..=msb).filter(|&k2| k2 != k1) {
            let mask_bits = m.min(msb - k2 + 1);
            list.extend((0..1u64 << mask_bits).map(|mask| (k1, k2, mask)));
        }
    }
    (list, all)
}

/// The best bit-vector XOR map (TC 2016 Sec. 4.2), over the pruned or the full parameter set.
/// Parameters that give no bijection on the extent, or break the vector constraint, are
/// skipped and not counted.
pub fn exhaustive_xor(space: &Space, pruned: bool) -> Option<Found> {
    let (list, _) = xor_candidates(space, pruned);
    let map_of = |&(k1, k2, mask): &(u32, u32, u64)| {
        BitVectorXor::new(k1, k2, mask, space.bank_bits, space.extent)
            .ok()
            .filter(|map| space.keeps_vectors(map))
    };
    // The widest mask of each (k1, k2) is the usual winner (a full mask is the classic
    // swizzle): the best of those bounds the search before it starts. The search still
    // goes in list order, so the first of equals wins as before.
    let mut widest: Vec<(u32, u32, u64)> = Vec::new();
    for &(k1, k2, mask) in &list {
        match widest.iter_mut().find(|w| (w.0, w.1) == (k1, k2)) {
            Some(w) => w.2 = w.2.max(mask),
            None => widest.push((k1, k2, mask)),
        }
    }
    let mut warm = Best::default();
    for map in widest.iter().filter_map(map_of) {
        warm.try_map(&space.scorer, Box::new(map));
    }
    let mut best = Best::default();
    if let Some(found) = warm.found(false).filter(|f| !f.best.score.worsens) {
        best.lower_ceiling(found.best.score.total);
    }
    for map in list.iter().filter_map(map_of) {
        best.try_map(&space.scorer, Box::new(map));
    }
    best.found(false)
}

/// The best bit-vector permutation (TC 2016 Sec. 4.1): all `n − m + 1` fields.
pub fn permutation(space: &Space) -> Option<Found> {
    let mut best = Best::default();
    for k in 0..=space.bits.saturating_sub(space.bank_bits) {
        let Ok(map) = BitVectorPermutation::new(k, space.bank_bits, space.extent) else {
            continue;
        };
        if space.keeps_vectors(&map) {
            best.try_map(&space.scorer, Box::new(map));
        }
    }
    best.found(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::{raw_problem, stride_sets};

    #[test]
    fn stride_bits_of_strides_and_blocks() {
        let s: Vec<i64> = (0..32).map(|l| 6 * l).collect();
        assert_eq!(stride_bits(&s), Some((1, 7)));
        let s: Vec<i64> = (0..32).map(|l| 4 * l).collect();
        assert_eq!(stride_bits(&s), Some((2, 6)));
        let fwt: Vec<i64> = (0..32).map(|l| 32 * (l / 8) + l % 8).collect();
        assert_eq!(stride_bits(&fwt), Some((0, 6)));
        assert_eq!(stride_bits(&[5]), None);
    }

    /// TC 2016 Sec. 5.1: strides 4 and 6 on 14 address bits: k1 ∈ {2, 1}, MSB 7, 188 of
    /// 4,480 candidates; the best leaves 1 excess wavefront of the original 4.
    #[test]
    fn pruned_search_of_the_paper() {
        let problem = raw_problem(&stride_sets(&[4, 6]), 32, Some(14)).expect("valid");
        let space = Space::of(&problem).expect("space");
        let (list, all) = xor_candidates(&space, true);
        assert_eq!((list.len(), all), (188, 4480));
        let k1s: Vec<u32> = list.iter().map(|c| c.0).fold(Vec::new(), |mut ks, k| {
            if !ks.contains(&k) {
                ks.push(k);
            }
            ks
        });
        assert_eq!(k1s, vec![2, 1]);
        assert_eq!(list.iter().map(|c| c.1).max(), Some(7));
        assert_eq!(space.scorer.total_before(), 4);
        let found = exhaustive_xor(&space, true).expect("a candidate");
        assert_eq!(found.candidates, 188);
        assert_eq!(found.best.score.total, 1);
        // No bit-vector XOR clears both strides, even without pruning.
        let full = exhaustive_xor(&space, false).expect("a candidate");
        assert_eq!(full.candidates, 4480 - 10 * 31);
        assert_eq!(full.best.score.total, 1);
    }

    #[test]
    fn permutation_finds_the_stride_field() {
        let problem = raw_problem(&stride_sets(&[8]), 32, Some(14)).expect("valid");
        let space = Space::of(&problem).expect("space");
        let found = permutation(&space).expect("a candidate");
        assert_eq!(found.candidates, 10);
        assert_eq!(found.best.score.total, 0);
        assert_eq!(found.best.map.params()["k"], 3);
    }
}
