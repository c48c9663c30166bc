//! The Givargis heuristic with the multi-set extension of TC 2016 Sec. 5.2.1.
//!
//! Per reference set R and candidate bit i: the quality `Q_i = min(Z, O) / max(Z, O)` (zeros
//! and ones of the bit over R), and for a pair of bits the correlation
//! `C_ij = min(E, D) / max(E, D)` (references where they are equal and different). Each step
//! picks the bit with the highest quality summed over the sets (weighted by how often each
//! phase occurs; the first of equals wins), then multiplies every set's qualities by that
//! set's correlation with the picked bit. For XOR the candidates are the pairs of Table 3, and
//! a pair dependent on the picked ones is skipped (the map must be a bijection).
use super::bitwise::{columns, found_from_rows, reference_sets, Chosen, Sliced};
use super::space::{Found, Space};

/// `min / max`, 0 when both are 0.
fn balance(a: u64, b: u64) -> f64 {
    let (low, high) = (a.min(b), a.max(b));
    if high == 0 {
        0.0
    } else {
        low as f64 / high as f64
    }
}

/// The bank rows the heuristic picks, in order, and the number of candidate rows it ranked;
/// fewer than the bank bits when the candidates run out.
pub fn givargis_rows(space: &Space, xor: bool) -> (Vec<u64>, u64) {
    let sets = reference_sets(space);
    let sliced: Vec<Sliced> = sets.iter().map(|(set, _)| Sliced::new(set)).collect();
    let cols = columns(space, xor);
    let mut quality: Vec<Vec<f64>> = sliced
        .iter()
        .map(|set| {
            cols.iter()
                .map(|&c| {
                    let ones = set.odd(c);
                    balance(set.size() - ones, ones)
                })
                .collect()
        })
        .collect();
    let correlate = |quality: &mut Vec<Vec<f64>>, picked: u64| {
        for (set, q) in sliced.iter().zip(quality.iter_mut()) {
            for (&c, q) in cols.iter().zip(q.iter_mut()) {
                // parity(a & c) == parity(a & picked) iff parity(a & (c ^ picked)) is even.
                let equal = set.size() - set.odd(c ^ picked);
                *q *= balance(equal, set.size() - equal);
            }
        }
    };
    let mut chosen = Chosen::new(space);
    for &row in &chosen.rows.clone() {
        correlate(&mut quality, row);
    }
    while chosen.rows.len() < space.bank_bits as usize {
        let mut best: Option<(f64, u64)> = None;
        for (i, &c) in cols.iter().enumerate() {
            if !chosen.allows(c) {
                continue;
            }
            let combined: f64 = sets
                .iter()
                .zip(&quality)
                .map(|((_, weight), q)| *weight as f64 * q[i])
                .sum();
            if best.is_none_or(|(b, _)| combined > b) {
                best = Some((combined, c));
            }
        }
        let Some((_, picked)) = best else {
            break;
        };
        chosen.push(picked);
        correlate(&mut quality, picked);
    }
    (chosen.rows, cols.len() as u64)
}

/// The Givargis heuristic's map: a bitwise permutation, or with `xor` a bitwise XOR.
pub fn givargis(space: &Space, xor: bool) -> Result<Found, String> {
    let (rows, ranked) = givargis_rows(space, xor);
    found_from_rows(space, &rows, ranked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::{raw_problem, stride_sets};

    fn picked_bits(sets: &[Vec<i64>], bits: Option<u32>) -> Vec<u32> {
        let problem = raw_problem(sets, 32, bits).expect("valid");
        let space = Space::of(&problem).expect("space");
        let (rows, _) = givargis_rows(&space, false);
        rows.iter().map(|r| r.trailing_zeros()).collect()
    }

    /// TC 2016 Sec. 5.2.1: strides 8 and 45 → A3 A4 A5 A6 A7; strides 8 and 13 → A3 A4 A6 A5
    /// A7 (with the bits the addresses need, and with the 14 of a Fermi scratchpad).
    #[test]
    fn multi_set_examples_of_the_paper() {
        for bits in [None, Some(14)] {
            assert_eq!(
                picked_bits(&stride_sets(&[8, 45]), bits),
                vec![3, 4, 5, 6, 7]
            );
            assert_eq!(
                picked_bits(&stride_sets(&[8, 13]), bits),
                vec![3, 4, 6, 5, 7]
            );
        }
    }

    #[test]
    fn xor_pairs_are_independent_and_the_map_is_scored() {
        let problem = raw_problem(&stride_sets(&[8, 45]), 32, Some(14)).expect("valid");
        let space = Space::of(&problem).expect("space");
        let found = givargis(&space, true).expect("a map");
        assert_eq!(found.candidates, 14 * 15 / 2);
        let rows = found.best.map.linear().expect("linear").bank_rows(5);
        assert_eq!(crate::solve::algebra::rank(&rows), 5);
        assert_eq!(
            found.best.score.total,
            space.scorer.score(found.best.map.as_ref()).total
        );
    }
}
