//! The Minimum Imbalance Heuristic of TC 2016 Sec. 5.2.2 (Eq. 13–15).
//!
//! With bank bits `P = (b_{n−1}, …, b_0)` already picked, each candidate bit `A_i` splits every
//! reference set R into `2^{n+1}` bins by `(A_i, b_{n−1}, …, b_0)`; its imbalance is
//! `Σ_j |h_i(j) − |R| / 2^{n+1}| / |R|`. The candidate with the least imbalance summed over the
//! sets (Eq. 15; weighted by how often each phase occurs) is picked; the first of equals wins.
//! The sums are kept as exact integers (scaled by the sets' common multiple), so ties are
//! real ties. For XOR the candidates are the pairs of Table 3, dependent ones skipped.
use super::bitwise::{columns, found_from_rows, reference_sets, Chosen, Sliced};
use super::space::{Found, Space};

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The bank rows the heuristic picks, in order (bank bit 0 first), and the number of
/// candidate rows it ranked.
pub fn mih_rows(space: &Space, xor: bool) -> (Vec<u64>, u64) {
    let sets: Vec<(Vec<u64>, u64)> = reference_sets(space)
        .into_iter()
        .filter(|(set, _)| !set.is_empty())
        .collect();
    let cols = columns(space, xor);
    // Imbalances of sets of different sizes are compared over a common denominator.
    let common = sets.iter().fold(1u128, |l, (set, _)| {
        l / gcd(l, set.len() as u128) * set.len() as u128
    });
    let sliced: Vec<Sliced> = sets.iter().map(|(set, _)| Sliced::new(set)).collect();
    let mut chosen = Chosen::new(space);
    let mut parities: Vec<u64> = Vec::new();
    while chosen.rows.len() < space.bank_bits as usize {
        let picked = chosen.rows.len() as u32;
        let bins = 2u64 << picked;
        // The addresses of each bin of the rows already picked, per set (only bins that hold
        // some): a candidate splits each in two, so a few AND and popcounts rank it.
        let groups: Vec<Vec<(Vec<u64>, u64)>> = sliced
            .iter()
            .map(|set| prefix_groups(set, &chosen.rows))
            .collect();
        let mut best: Option<(u128, u64)> = None;
        for &c in &cols {
            if !chosen.allows(c) {
                continue;
            }
            let mut total = 0u128;
            for (((_, weight), set), groups) in sets.iter().zip(&sliced).zip(&groups) {
                let size = set.size();
                parities.clear();
                parities.extend(set.parities(c));
                // Σ |h·2^{n+1} − |R||, i.e. the imbalance times |R|·2^{n+1}; a bin with no
                // address adds |R|.
                let empty = bins - 2 * groups.len() as u64;
                let spread: u64 = groups
                    .iter()
                    .map(|(masks, count)| {
                        let odd: u64 = masks
                            .iter()
                            .zip(&parities)
                            .map(|(m, p)| u64::from((m & p).count_ones()))
                            .sum();
                        (odd * bins).abs_diff(size) + ((count - odd) * bins).abs_diff(size)
                    })
                    .sum::<u64>()
                    + empty * size;
                total += u128::from(*weight) * u128::from(spread) * (common / u128::from(size));
                // The sums only grow: a candidate that reaches the best so far cannot beat it
                // (the first of equals wins).
                if best.is_some_and(|(b, _)| total >= b) {
                    break;
                }
            }
            if best.is_none_or(|(b, _)| total < b) {
                best = Some((total, c));
            }
        }
        let Some((_, row)) = best else {
            break;
        };
        chosen.push(row);
    }
    (chosen.rows, cols.len() as u64)
}

/// The bins of `rows` that hold addresses of `set`: per chunk of 64 addresses the mask of
/// those in the bin, and how many there are.
fn prefix_groups(set: &Sliced, rows: &[u64]) -> Vec<(Vec<u64>, u64)> {
    let parities: Vec<Vec<u64>> = rows
        .iter()
        .map(|&row| set.parities(row).collect())
        .collect();
    (0..1u64 << rows.len())
        .filter_map(|bin| {
            let masks: Vec<u64> = set
                .lanes()
                .enumerate()
                .map(|(chunk, lanes)| {
                    parities.iter().enumerate().fold(lanes, |mask, (t, p)| {
                        mask & if bin >> t & 1 == 1 {
                            p[chunk]
                        } else {
                            !p[chunk]
                        }
                    })
                })
                .collect();
            let count: u64 = masks.iter().map(|m| u64::from(m.count_ones())).sum();
            (count > 0).then_some((masks, count))
        })
        .collect()
}

/// The heuristic's map: a bitwise permutation, or with `xor` a bitwise XOR.
pub fn mih(space: &Space, xor: bool) -> Result<Found, String> {
    let (rows, ranked) = mih_rows(space, xor);
    found_from_rows(space, &rows, ranked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::raw_problem;

    /// Fig. 6: addresses {27, 12, 6, 19, 11, 4, 28, 3} on 8 banks → bits {0, 3, 4}, picked
    /// in that order; one 2-way conflict remains of the original 4-way one.
    #[test]
    fn figure_6() {
        let problem = raw_problem(&[vec![27, 12, 6, 19, 11, 4, 28, 3]], 8, None).expect("valid");
        let space = Space::of(&problem).expect("space");
        assert_eq!((space.bits, space.bank_bits), (5, 3));
        let (rows, ranked) = mih_rows(&space, false);
        assert_eq!(rows, vec![1, 1 << 3, 1 << 4]);
        assert_eq!(ranked, 5);
        let found = mih(&space, false).expect("a map");
        assert_eq!(space.scorer.total_before(), 3);
        assert_eq!(found.best.score.total, 1);
        assert_eq!(
            found.best.map.params()["bits"],
            serde_json::json!([0, 3, 4])
        );
    }

    #[test]
    fn xor_variant_picks_independent_pairs() {
        let problem = raw_problem(&[vec![27, 12, 6, 19, 11, 4, 28, 3]], 8, None).expect("valid");
        let space = Space::of(&problem).expect("space");
        let (rows, ranked) = mih_rows(&space, true);
        assert_eq!(ranked, 15);
        assert_eq!(crate::solve::algebra::rank(&rows), 3);
        let found = mih(&space, true).expect("a map");
        assert!(found.best.score.total <= 1);
    }
}
