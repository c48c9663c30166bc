//! Index-digit swizzle search (Lloyd): for a 2-D view of the array with rows of `columns`
//! elements (each of its row pitches), every `t[r][c ^ (((r >> row_shift) & (2^bits − 1)) <<
//! base)]` that writes only column bits below the row's power-of-two part, and every RAP
//! rotation (one per pitch, fixed seed).
use super::algebra::{index_bits, writable_bits};
use super::maps::{AddressMap, Rap, Repitch, RotatedSwizzle, Skew, Swizzle, RAP_SEED};
use super::padding::declared_pitches;
use super::score::Scorer;
use super::space::{Best, Found};
use super::ArrayProblem;

/// The best index-digit swizzle; `None` for a 1-D array or rows without a power-of-two part.
pub fn swizzle(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let extent = problem.extent();
    let mut best = Best::default();
    for columns in declared_pitches(&problem.dims) {
        let row_bits = index_bits(extent / columns);
        for_each_row_xor(writable_bits(columns), row_bits, |bits, base, row_shift| {
            if let Ok(map) = Swizzle::new(columns, bits, base, row_shift, extent) {
                // A field below the vector's bits would split vectors.
                if map.keeps_vectors(problem.vector) {
                    best.try_map(scorer, Box::new(map));
                }
            }
        });
    }
    best.found(false)
}

/// The best RAP rotation over the array's row pitches.
pub fn rap(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let mut best = Best::default();
    for columns in declared_pitches(&problem.dims) {
        let Ok(map) = Rap::new(columns, problem.extent(), RAP_SEED) else {
            continue;
        };
        if map.keeps_vectors(problem.vector) {
            best.try_map(scorer, Box::new(map));
        }
    }
    best.found(false)
}

/// Rows longer than this are not skewed: a shift per column to score, for layouts whose rows
/// span many bank rows anyway.
const MAX_SKEW_PITCH: u64 = 1024;
/// Shifts tried per pitch: where the pitch is a multiple of the bank row, shift k and k + 32
/// place every element in the same bank, so larger shifts add nothing there and little
/// elsewhere, and they cost a scoring each.
const MAX_SKEW_SHIFT: u64 = 64;

/// The best skewed layout: every shift below [`MAX_SKEW_SHIFT`] of every row pitch up to
/// [`MAX_SKEW_PITCH`].
pub fn skew(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let mut best = Best::default();
    for columns in declared_pitches(&problem.dims)
        .into_iter()
        .filter(|&c| c <= MAX_SKEW_PITCH)
    {
        for shift in (1..columns.min(MAX_SKEW_SHIFT)).filter(|s| s.is_multiple_of(problem.vector)) {
            match Skew::new(columns, shift, problem.extent()) {
                Ok(map) if map.keeps_vectors(problem.vector) => {
                    best.try_map(scorer, Box::new(map));
                }
                _ => {}
            }
        }
    }
    best.found(false)
}

/// The best re-pitched swizzle over the declared row pitches that are not powers of two.
pub fn repitch(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let extent = problem.extent();
    let mut best = Best::default();
    for columns in declared_pitches(&problem.dims)
        .into_iter()
        .filter(|&c| c <= MAX_SKEW_PITCH && !c.is_power_of_two())
    {
        let column_bits = 63 - columns.leading_zeros();
        let row_bits = index_bits(extent / columns);
        for_each_row_xor(column_bits, row_bits, |bits, base, row_shift| {
            if let Ok(map) = Repitch::new(columns, bits, base, row_shift, extent) {
                if map.keeps_vectors(problem.vector) {
                    best.try_map(scorer, Box::new(map));
                }
            }
        });
    }
    best.found(false)
}

/// The best rotated swizzle, for extents that are not a whole number of bank rows: rows of
/// every power of two up to the bank row, each rotated so that the partial row holds the
/// first or the last elements.
pub fn rotated_swizzle(problem: &ArrayProblem, scorer: &Scorer) -> Option<Found> {
    let extent = problem.extent();
    let bank_row = 1u64 << problem.bank_bits()?;
    if extent.is_multiple_of(bank_row) {
        return None;
    }
    let mut best = Best::default();
    for column_bits in (1..=bank_row.trailing_zeros()).filter(|&b| 1 << b < extent) {
        let columns = 1u64 << column_bits;
        let tail = extent % columns;
        let row_bits = index_bits(extent.div_ceil(columns));
        for shift in [tail, extent - tail] {
            for_each_row_xor(column_bits, row_bits, |bits, base, row_shift| {
                if let Ok(map) = RotatedSwizzle::new(shift, columns, bits, base, row_shift, extent)
                {
                    if map.keeps_vectors(problem.vector) {
                        best.try_map(scorer, Box::new(map));
                    }
                }
            });
        }
    }
    best.found(false)
}

/// Every field `bits` wide at `base` within `column_bits`, read at every row shift.
fn for_each_row_xor(column_bits: u32, row_bits: u32, mut visit: impl FnMut(u32, u32, u32)) {
    for bits in 1..=column_bits {
        for base in 0..=column_bits - bits {
            for row_shift in 0..row_bits.max(1) {
                visit(bits, base, row_shift);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::raw::{raw_problem, transpose_problem};

    #[test]
    fn the_transpose_swizzle_is_c_xor_r() {
        let problem = transpose_problem();
        let scorer = Scorer::new(problem.config, &problem.sites);
        assert_eq!(scorer.total_before(), 32 * 31);
        let found = swizzle(&problem, &scorer).expect("a swizzle");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(found.best.map.alu_ops(), 1);
        assert_eq!(
            found.best.map.cute().map(|c| c.to_string()).as_deref(),
            Some("Swizzle<5, 0, 5>")
        );
        assert_eq!(found.candidates, 15 * 5);
        let rotated = rap(&problem, &scorer).expect("a rotation");
        assert_eq!(rotated.best.score.total, 0);
    }

    /// NW's sweep of an odd halo tile `h[17][17]`: 16 lanes on an anti-diagonal step 16
    /// words, 8-way. No XOR map applies to 289 elements; rotating row r by r clears it.
    #[test]
    fn a_skew_clears_the_anti_diagonals_of_an_odd_tile() {
        let sets: Vec<Vec<i64>> = (0..16)
            .map(|m: i64| (0..=m).map(|t| 17 * (m - t + 1) + t + 1).collect())
            .collect();
        let mut problem = raw_problem(&sets, 32, Some(9)).expect("valid");
        problem.dims = vec![17, 17];
        let scorer = Scorer::new(problem.config, &problem.sites);
        assert!(scorer.total_before() > 0);
        let found = skew(&problem, &scorer).expect("a skew");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(found.best.map.params()["shift"], 1);
        assert_eq!(found.candidates, 16);
    }

    /// testdata/template_sizes.cu, tileSum<16>: `s_tile[16][17]` with a 16×16 block, two rows
    /// per warp. The padding column leaves the row store 2-way (words 0 and 32 of a warp's two
    /// rows) and the column load 2-way; no skew of the 17-wide rows clears both. Re-pitching
    /// the data to 16 columns and XORing the column with the row (`[r][c ^ r]`) does.
    #[test]
    fn a_repitch_clears_a_sixteen_wide_padded_tile() {
        let mut sets: Vec<Vec<i64>> = Vec::new();
        for warp in 0..8i64 {
            let lanes: Vec<(i64, i64)> = [2 * warp, 2 * warp + 1]
                .iter()
                .flat_map(|&y| (0..16).map(move |x| (x, y)))
                .collect();
            sets.push(lanes.iter().map(|&(x, y)| 17 * y + x).collect());
            sets.push(lanes.iter().map(|&(x, y)| 17 * x + y).collect());
        }
        let mut problem = raw_problem(&sets, 32, Some(9)).expect("valid");
        problem.dims = vec![16, 17];
        let scorer = Scorer::new(problem.config, &problem.sites);
        assert_eq!(scorer.total_before(), 16);
        let skewed = skew(&problem, &scorer).expect("a skew");
        assert_eq!(skewed.best.score.total, 15);
        let found = repitch(&problem, &scorer).expect("a re-pitch");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(
            found.best.map.params(),
            serde_json::json!({"columns": 17, "pitch": 16, "bits": 4, "base": 0, "row_shift": 0})
        );
        assert_eq!(found.candidates, 10 * 4);
    }

    /// testdata/macro_sizes.cu: `m_arith[65]` is stored at `2x` and read at `x + 1`. In every
    /// XOR map of the first 64 elements (65 is odd, so the last one stays) the two clash once;
    /// rotating by one first clears both.
    #[test]
    fn a_rotation_clears_an_odd_extent() {
        let mut sets: Vec<Vec<i64>> = vec![(0..32).map(|x| 2 * x).collect()];
        sets.extend((0..8).map(|_| (0..32).map(|x| x + 1).collect::<Vec<i64>>()));
        let mut problem = raw_problem(&sets, 32, Some(7)).expect("valid");
        problem.dims = vec![65];
        let scorer = Scorer::new(problem.config, &problem.sites);
        assert_eq!(scorer.total_before(), 1);
        let found = rotated_swizzle(&problem, &scorer).expect("a rotation");
        assert_eq!(found.best.score.total, 0);
        assert_eq!(found.best.map.params()["shift"], 1);
        assert_eq!(
            found.best.map.cuda("i"),
            "((i + 1) % 65) ^ ((((i + 1) % 65) >> 5) & 1)"
        );
        assert_eq!(found.best.map.alu_ops(), 5);
    }
}
