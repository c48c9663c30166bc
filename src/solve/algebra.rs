//! GF(2) algebra for XOR-linear index maps, and the bijection check every map goes through.
//!
//! An index `a` is a vector of bits; an XOR-linear map is a matrix over GF(2) whose row `j`
//! is the set of input bits XORed into output bit `j` ([`LinearMap`]). Such a map is a
//! bijection on `[0, N)` when it writes only the bits below `2^w`, the largest power of two
//! dividing `N`, and its rows restricted to those bits are linearly independent (docs/ARCHITECTURE.md §5):
//! it then keeps the high part `a >> w` and, for each high part, permutes the `2^w` low values
//! (an invertible `w × w` block plus a translation by a function of the high bits). That is
//! the rank argument [`check_bijection`] relies on beyond [`EXHAUSTIVE_LIMIT`] elements.
use super::expr::Expr;
use super::maps::AddressMap;

/// Extents up to this many elements are checked by applying the map to every index.
pub const EXHAUSTIVE_LIMIT: u64 = 1 << 20;

/// Parity of the set bits of `x`, as 0 or 1.
pub fn parity(x: u64) -> u64 {
    u64::from(x.count_ones() & 1)
}

/// The mask of the `bits` lowest bits (all 64 for 64 or more).
pub fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Bits needed to write every index below `extent`: 0 for extents 0 and 1.
pub fn index_bits(extent: u64) -> u32 {
    64 - extent.saturating_sub(1).leading_zeros()
}

/// Bits a bijection on `[0, extent)` may write: those below the largest power of two dividing
/// the extent.
pub fn writable_bits(extent: u64) -> u32 {
    if extent == 0 {
        0
    } else {
        extent.trailing_zeros()
    }
}

/// A basis of a subspace of GF(2)^64 in reduced echelon form: every vector's highest set bit
/// (its pivot) is clear in all the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basis {
    vectors: Vec<u64>,
}

impl Basis {
    pub fn new() -> Self {
        Basis::default()
    }

    pub fn vectors(&self) -> &[u64] {
        &self.vectors
    }

    pub fn rank(&self) -> usize {
        self.vectors.len()
    }

    /// `x` with every pivot bit cleared by XORing in basis vectors: 0 iff `x` is in the span.
    pub fn reduce(&self, mut x: u64) -> u64 {
        for &v in &self.vectors {
            if x & pivot(v) != 0 {
                x ^= v;
            }
        }
        x
    }

    pub fn contains(&self, x: u64) -> bool {
        self.reduce(x) == 0
    }

    /// Adds `x`; false (and no change) when it is already in the span.
    pub fn insert(&mut self, x: u64) -> bool {
        let x = self.reduce(x);
        if x == 0 {
            return false;
        }
        let p = pivot(x);
        for v in &mut self.vectors {
            if *v & p != 0 {
                *v ^= x;
            }
        }
        self.vectors.push(x);
        true
    }

    /// The coordinates of `x` (which must be in the span) in this basis: bit `i` says whether
    /// `vectors()[i]` is part of `x`.
    pub fn coordinates(&self, x: u64) -> u64 {
        self.vectors
            .iter()
            .enumerate()
            .filter(|(_, &v)| x & pivot(v) != 0)
            .fold(0, |c, (i, _)| c | 1 << i)
    }

    /// The vector with coordinates `c`.
    pub fn combine(&self, c: u64) -> u64 {
        self.vectors
            .iter()
            .enumerate()
            .filter(|(i, _)| c >> i & 1 != 0)
            .fold(0, |x, (_, &v)| x ^ v)
    }
}

/// The highest set bit of `v` (non-zero).
fn pivot(v: u64) -> u64 {
    1 << (63 - v.leading_zeros())
}

/// The rank of a set of vectors.
pub fn rank(vectors: &[u64]) -> usize {
    let mut basis = Basis::new();
    vectors.iter().filter(|&&v| basis.insert(v)).count()
}

/// A basis of the forms over the `bits` low bits that vanish on every vector of `vectors`:
/// `{ r : parity(r & u) = 0 for all u }`.
pub fn annihilator(vectors: &[u64], bits: u32) -> Vec<u64> {
    let mut basis = Basis::new();
    for &u in vectors {
        basis.insert(u & low_mask(bits));
    }
    // In reduced echelon form the free (non-pivot) bits parametrise the annihilator: for a
    // free bit f, r = e_f plus the pivots p whose basis vector has bit f.
    let pivots: u64 = basis.vectors().iter().fold(0, |acc, &v| acc | pivot(v));
    (0..bits)
        .filter(|&f| pivots >> f & 1 == 0)
        .map(|f| {
            basis
                .vectors()
                .iter()
                .filter(|&&v| v >> f & 1 != 0)
                .fold(1u64 << f, |r, &v| r | pivot(v))
        })
        .collect()
}

/// An XOR-linear index map. Output bit `j < rows.len()` is the parity of `index & rows[j]`;
/// every higher bit passes through unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinearMap {
    rows: Vec<u64>,
    /// The transpose of `rows`: bit `j` of `columns[i]` is bit `i` of `rows[j]`. Applying the
    /// map XORs the columns of the index's set bits (the solvers apply maps millions of times).
    columns: Vec<u64>,
}

impl LinearMap {
    fn new(rows: Vec<u64>) -> Self {
        let width = rows
            .iter()
            .map(|row| 64 - row.leading_zeros())
            .max()
            .unwrap_or(0);
        let columns = (0..width)
            .map(|i| {
                rows.iter()
                    .enumerate()
                    .fold(0, |column, (j, &row)| column | (row >> i & 1) << j)
            })
            .collect();
        LinearMap { rows, columns }
    }

    pub fn identity() -> Self {
        LinearMap::new(Vec::new())
    }

    /// The map with these rows; trailing identity rows are dropped (they change nothing).
    pub fn from_rows(mut rows: Vec<u64>) -> Self {
        while let Some(&last) = rows.last() {
            if last != 1 << (rows.len() - 1) {
                break;
            }
            rows.pop();
        }
        LinearMap::new(rows)
    }

    /// The matrix of an XOR-linear function on `bits`-bit indices, read off the images of the
    /// unit vectors (`f` is assumed linear; [`check_bijection`] tests the result by applying
    /// it). Output bits from `bits` up are taken from `f` too, so they do not pass through.
    pub fn of_fn(bits: u32, f: impl Fn(u64) -> u64) -> Self {
        let images: Vec<u64> = (0..bits).map(|i| f(1 << i)).collect();
        let rows = (0..bits)
            .map(|j| {
                images
                    .iter()
                    .enumerate()
                    .filter(|(_, &image)| image >> j & 1 != 0)
                    .fold(0, |row, (i, _)| row | 1 << i)
            })
            .collect();
        LinearMap::new(rows)
    }

    /// Completes `bank_rows` (output bits `0..m`) to a map that is a bijection on any extent
    /// whose largest power-of-two divisor is `2^writable`, or says why it cannot.
    ///
    /// Each further output bit keeps its own input bit when that stays independent of the rows
    /// so far, so that the map moves as few bits as possible; the bits left over take the
    /// lowest unit vectors not yet in the span (a basis of the low bits always completes).
    pub fn complete(bank_rows: &[u64], writable: u32) -> Result<Self, String> {
        let m = bank_rows.len() as u32;
        if m > writable {
            return Err(format!(
                "{m} bank bits but only {writable} index bits may be written"
            ));
        }
        let low = low_mask(writable);
        let mut span = Basis::new();
        for (j, &row) in bank_rows.iter().enumerate() {
            if !span.insert(row & low) {
                return Err(format!(
                    "bank bit {j} depends on the others within the writable bits"
                ));
            }
        }
        let mut rows: Vec<Option<u64>> = bank_rows.iter().map(|&r| Some(r)).collect();
        for j in m..writable {
            let unit = 1u64 << j;
            rows.push(span.insert(unit).then_some(unit));
        }
        let mut spare = (0..writable).map(|i| 1u64 << i);
        let rows = rows
            .into_iter()
            .map(|row| {
                row.or_else(|| spare.by_ref().find(|&unit| span.insert(unit)))
                    .ok_or_else(|| "no unit vector completes the basis".to_string())
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(LinearMap::from_rows(rows))
    }

    pub fn rows(&self) -> &[u64] {
        &self.rows
    }

    /// Output bits `0..m`: the bank rows (identity rows past the stored ones).
    pub fn bank_rows(&self, m: u32) -> Vec<u64> {
        (0..m as usize)
            .map(|j| self.rows.get(j).copied().unwrap_or(1 << j))
            .collect()
    }

    pub fn apply(&self, index: u64) -> u64 {
        let kept = index & !low_mask(self.rows.len() as u32);
        let mut bits = index & low_mask(self.columns.len() as u32);
        let mut written = 0;
        while bits != 0 {
            written ^= self.columns[bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        kept | written
    }

    /// The rank argument: a bijection on `[0, extent)` iff it writes only bits below the
    /// extent's largest power-of-two divisor and its rows restricted to them are independent.
    pub fn prove_bijective(&self, extent: u64) -> Result<String, String> {
        let w = self.rows.len() as u32;
        let writable = writable_bits(extent);
        if w > writable {
            return Err(format!(
                "writes bit {} but only bits below {writable} may change for extent {extent}",
                w - 1
            ));
        }
        let restricted: Vec<u64> = self.rows.iter().map(|&r| r & low_mask(w)).collect();
        let r = rank(&restricted);
        if r < restricted.len() {
            return Err(format!(
                "GF(2) rank {r} of {} on the written bits: two indices share an image",
                restricted.len()
            ));
        }
        Ok(format!(
            "GF(2) rank {w} of {w} on the low {w} bits, high bits kept (extent divisible by 2^{w})"
        ))
    }

    /// Whether V-element vectors (`vector = 2^v`) move whole: the low `v` rows are the unit
    /// rows and no other row reads those bits.
    pub fn keeps_low_bits(&self, v: u32) -> bool {
        let low = low_mask(v);
        self.rows.iter().enumerate().all(|(j, &row)| {
            if (j as u32) < v {
                row == 1 << j
            } else {
                row & low == 0
            }
        })
    }

    /// The CUDA expression on an index of `bits` bits: the kept bits, then one shifted and
    /// masked copy of the index per distance between an input bit and the output bit it
    /// feeds, all XORed. A bit-vector XOR `i ^ ((i >> k) & mask)` costs 3 operations.
    pub fn expr(&self, bits: u32) -> Expr {
        let w = self.rows.len() as u32;
        let mut by_shift: Vec<(i64, u64)> = Vec::new();
        for (j, &row) in self.rows.iter().enumerate() {
            for i in (0..64).filter(|i| row >> i & 1 != 0) {
                let shift = i64::from(i) - j as i64;
                match by_shift.iter_mut().find(|(s, _)| *s == shift) {
                    Some((_, mask)) => *mask |= 1 << j,
                    None => by_shift.push((shift, 1 << j)),
                }
            }
        }
        by_shift.sort_by_key(|&(shift, _)| (shift != 0, shift.unsigned_abs(), shift < 0));
        let all = low_mask(bits.max(w));
        let kept = all & !low_mask(w);
        let mut terms: Vec<Expr> = Vec::new();
        let unshifted = by_shift
            .iter()
            .find(|(s, _)| *s == 0)
            .map_or(0, |&(_, m)| m);
        if kept | unshifted == all {
            terms.push(Expr::Index);
        } else if kept | unshifted != 0 {
            terms.push(Expr::Index.and(kept | unshifted));
        }
        for &(shift, mask) in by_shift.iter().filter(|(s, _)| *s != 0) {
            let moved = if shift > 0 {
                Expr::Index.shift_right(shift as u32)
            } else {
                Expr::Index.shift_left(shift.unsigned_abs() as u32)
            };
            terms.push(moved.and(mask));
        }
        terms
            .into_iter()
            .reduce(Expr::xor)
            .unwrap_or(Expr::Const(0))
    }

    /// The CuTe `Swizzle<B, M, S>` this map is, if any: `a ^ ((a >> S) & ((2^B − 1) << M))`
    /// with `S ≥ B` (CuTe's requirement that the read and written bit ranges do not overlap).
    pub fn cute(&self) -> Option<CuteSwizzle> {
        let extras: Vec<(usize, u64)> = self
            .rows
            .iter()
            .enumerate()
            .map(|(j, &row)| (j, row ^ 1 << j))
            .filter(|&(_, extra)| extra != 0)
            .collect();
        let (&(base, first), &(last, _)) = (extras.first()?, extras.last()?);
        if first.count_ones() != 1 {
            return None;
        }
        let shift = first.trailing_zeros().checked_sub(base as u32)?;
        let bits = (last - base + 1) as u32;
        let contiguous = extras.len() == bits as usize
            && extras
                .iter()
                .all(|&(j, extra)| extra == 1 << (j as u32 + shift));
        (contiguous && shift >= bits).then_some(CuteSwizzle {
            bits,
            base: base as u32,
            shift,
        })
    }
}

/// CuTe's `Swizzle<BBits, MBase, SShift>`: XOR bits `[M + S, M + S + B)` into `[M, M + B)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CuteSwizzle {
    pub bits: u32,
    pub base: u32,
    pub shift: u32,
}

impl std::fmt::Display for CuteSwizzle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Swizzle<{}, {}, {}>", self.bits, self.base, self.shift)
    }
}

/// How a map was shown to be a bijection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// Every index of the extent was mapped: all images distinct and in range.
    Exhaustive { extent: u64 },
    /// The family's algebraic argument (the GF(2) rank for XOR-linear maps).
    Algebraic(String),
}

/// Why a map is not a bijection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotBijective {
    #[error("indices {0} and {1} both map to {2}")]
    Collision(u64, u64, u64),
    #[error("index {0} maps to {1}, outside the stored array of {2} elements")]
    OutOfRange(u64, u64, u64),
    #[error("{0}")]
    Algebra(String),
}

/// Checks that `map` sends `[0, extent)` one-to-one into its stored array (onto it, when that
/// has the same size): by applying it to every index up to [`EXHAUSTIVE_LIMIT`] elements, by
/// the family's algebraic argument beyond.
pub fn check_bijection(map: &dyn AddressMap) -> Result<Proof, NotBijective> {
    let extent = map.extent();
    if extent > EXHAUSTIVE_LIMIT {
        return map
            .prove_bijective()
            .map(Proof::Algebraic)
            .map_err(NotBijective::Algebra);
    }
    let stored = map.extent_out();
    let mut seen = vec![0u64; stored.div_ceil(64) as usize];
    for a in 0..extent {
        let image = map.apply(a);
        if image >= stored {
            return Err(NotBijective::OutOfRange(a, image, stored));
        }
        let (word, bit) = ((image / 64) as usize, image % 64);
        if seen[word] >> bit & 1 != 0 {
            // Rare: find the earlier index for the message.
            let earlier = (0..a).find(|&b| map.apply(b) == image).unwrap_or(a);
            return Err(NotBijective::Collision(earlier, a, image));
        }
        seen[word] |= 1 << bit;
    }
    Ok(Proof::Exhaustive { extent })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basis_reduces_inserts_and_gives_coordinates() {
        let mut basis = Basis::new();
        assert!(basis.insert(0b0110));
        assert!(basis.insert(0b0011));
        assert!(!basis.insert(0b0101));
        assert_eq!(basis.rank(), 2);
        assert!(basis.contains(0b0101));
        assert!(!basis.contains(0b1000));
        for x in [0b0110u64, 0b0011, 0b0101, 0] {
            assert_eq!(basis.combine(basis.coordinates(x)), x);
        }
        assert_eq!(rank(&[1, 2, 3, 4]), 3);
    }

    #[test]
    fn annihilator_is_orthogonal_and_of_full_dimension() {
        let vectors = [0b1010_0001u64, 0b0110_0000, 0b0000_0110];
        let forms = annihilator(&vectors, 8);
        assert_eq!(forms.len(), 8 - 3);
        assert_eq!(rank(&forms), 5);
        for &r in &forms {
            for &u in &vectors {
                assert_eq!(parity(r & u), 0, "{r:b} {u:b}");
            }
        }
    }

    #[test]
    fn completion_moves_as_few_bits_as_possible() {
        // Bank bits A0 A3 A4 (the MIH example): A1 and A2 fill the vacated positions 3 and 4.
        let map = LinearMap::complete(&[1, 1 << 3, 1 << 4], 14).expect("completes");
        assert_eq!(map.rows(), &[1, 1 << 3, 1 << 4, 1 << 1, 1 << 2]);
        // A bit-field swap: bank bits A7..A11 trade places with A0..A4.
        let bank: Vec<u64> = (7..12).map(|i| 1 << i).collect();
        let swap = LinearMap::complete(&bank, 14).expect("completes");
        assert_eq!(swap.apply(0b1_1111), 0b1111_1000_0000);
        assert_eq!(swap.apply(0b110_0000), 0b110_0000);
        // Dependent rows and too few writable bits are rejected.
        assert!(LinearMap::complete(&[3, 5, 6], 14).is_err());
        assert!(LinearMap::complete(&[1, 2, 4], 2).is_err());
    }

    #[test]
    fn rank_argument_needs_the_written_bits_to_divide_the_extent() {
        let swizzle = LinearMap::from_rows((0..5).map(|j| 1 << j | 1 << (j + 5)).collect());
        assert!(swizzle.prove_bijective(1024).is_ok());
        assert!(swizzle.prove_bijective(32 * 33).is_ok());
        assert!(swizzle.prove_bijective(48).is_err());
        let singular = LinearMap::from_rows(vec![0b11, 0b11]);
        assert!(singular.prove_bijective(16).is_err());
        assert_eq!(LinearMap::from_rows(vec![1, 2, 4]), LinearMap::identity());
    }

    #[test]
    fn expression_matches_the_map_and_counts_operations() {
        let swizzle = LinearMap::from_rows((0..5).map(|j| 1 << j | 1 << (j + 5)).collect());
        let expr = swizzle.expr(10);
        assert_eq!(expr.to_cuda("i"), "i ^ ((i >> 5) & 31)");
        assert_eq!(expr.ops(), 3);
        let perm = LinearMap::complete(&[1, 1 << 3, 1 << 4], 14).expect("completes");
        let expr = perm.expr(14);
        for a in 0..1 << 14 {
            assert_eq!(expr.eval(a), Some(perm.apply(a)), "{a}");
        }
        assert_eq!(LinearMap::identity().expr(10).to_cuda("i"), "i");
    }

    #[test]
    fn cute_swizzle_is_recognised() {
        let swizzle = LinearMap::from_rows((0..5).map(|j| 1 << j | 1 << (j + 5)).collect());
        assert_eq!(
            swizzle.cute().map(|s| s.to_string()).as_deref(),
            Some("Swizzle<5, 0, 5>")
        );
        // Bits 4..7 XORed into 1..4: Swizzle<3, 1, 3>.
        let shifted = LinearMap::from_rows(
            (0..4)
                .map(|j| if j == 0 { 1 } else { 1 << j | 1 << (j + 3) })
                .collect(),
        );
        assert_eq!(
            shifted.cute(),
            Some(CuteSwizzle {
                bits: 3,
                base: 1,
                shift: 3
            })
        );
        // Overlapping ranges (S < B) are no CuTe swizzle; neither is a permutation.
        let overlapping = LinearMap::from_rows(vec![0b11, 0b110, 0b100]);
        assert_eq!(overlapping.cute(), None);
        assert_eq!(LinearMap::from_rows(vec![2, 1]).cute(), None);
        assert_eq!(LinearMap::identity().cute(), None);
    }

    #[test]
    fn matrix_of_a_linear_function() {
        let map = LinearMap::of_fn(10, |a| a ^ ((a >> 5) & 31));
        for a in 0..1024 {
            assert_eq!(map.apply(a), a ^ ((a >> 5) & 31));
        }
        assert!(map.keeps_low_bits(0));
        assert!(!map.keeps_low_bits(2));
        let vector_safe = LinearMap::of_fn(10, |a| a ^ ((a >> 5) & 28));
        assert!(vector_safe.keeps_low_bits(2));
    }
}
