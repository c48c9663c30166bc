//! Padding search: rows of `pitch` elements stored `pitch + pad` apart. Pitches are the
//! array's own row lengths (the rewrite changes the declaration only: no ALU cost) and the
//! power-of-two chunks of a flat index (`i + (i >> log2 pitch) * pad`, the classic
//! conflict-free-scan padding); pads are 1 to [`MAX_PAD`] vectors.
use super::maps::{AddressMap, Padding};
use super::score::Scorer;
use super::space::{Best, Found};
use super::ArrayProblem;

/// Largest pad tried, in vectors (elements for scalar accesses).
pub const MAX_PAD: u64 = 8;

/// The array's row pitches, innermost first: `C`, `B·C`, … for `T a[A][B][C]`.
pub fn declared_pitches(dims: &[u64]) -> Vec<u64> {
    let mut pitches = Vec::new();
    let mut pitch = 1u64;
    for &d in dims.iter().skip(1).rev() {
        pitch = pitch.saturating_mul(d);
        pitches.push(pitch);
    }
    pitches
}

/// The best padding of the array, or `None` for an array of one element.
pub fn padding(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let extent = problem.extent();
    let declared = declared_pitches(&problem.dims);
    let chunks = (1..64)
        .map(|j| 1u64 << j)
        .take_while(|&c| c < extent)
        .filter(|&c| !declared.contains(&c));
    let pitches: Vec<(u64, bool)> = declared
        .iter()
        .map(|&p| (p, true))
        .chain(chunks.map(|c| (c, false)))
        .collect();
    let mut best = Best::default();
    for (pitch, is_declared) in pitches {
        for pad in (1..=MAX_PAD).map(|t| t * problem.vector) {
            let Ok(map) = Padding::new(pitch, pad, is_declared, extent) else {
                continue;
            };
            if map.keeps_vectors(problem.vector) {
                best.try_map(scorer, Box::new(map));
            }
        }
    }
    best.found(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::raw_problem;

    #[test]
    fn pitches_of_a_declaration() {
        assert_eq!(declared_pitches(&[4, 8, 32]), vec![32, 256]);
        assert_eq!(declared_pitches(&[256]), Vec::<u64>::new());
    }

    /// Thesis ch. 5: a pad of one turns a stride-32 column walk conflict-free.
    #[test]
    fn a_pad_of_one_clears_a_column_walk() {
        let sets: Vec<Vec<i64>> = (0..32)
            .map(|j| (0..32).map(|l| 32 * l + j).collect())
            .collect();
        let mut problem = raw_problem(&sets, 32, Some(10)).expect("valid");
        problem.dims = vec![32, 32];
        let scorer = Scorer::new(problem.config, &problem.sites);
        let found = padding(&problem, &scorer).expect("a padding");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(
            found.best.map.params(),
            serde_json::json!({"pitch": 32, "pad": 1, "declared_row": true})
        );
        assert_eq!(found.best.map.alu_ops(), 0);
        assert_eq!(found.candidates, 8 * 9);
    }
}
