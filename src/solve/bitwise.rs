//! What the bitwise heuristics share (TC 2016 Sec. 4.3–4.4): the candidate bank bits (single
//! index bits, or for XOR every pair `a_i ^ a_j`, `i ≤ j`, in the order of the paper's
//! Table 3), the reference sets they are measured on, and the map built from the chosen bits.
use super::algebra::{low_mask, Basis};
use super::maps::{AddressMap, BitwisePermutation, BitwiseXor};
use super::space::Space;

/// Candidate bank rows: single bits that a bijection may move, or (XOR) pairs of bits of which
/// the lower may be written. Bits below the vector width are never candidates.
pub fn columns(space: &Space, xor: bool) -> Vec<u64> {
    let (v, n) = (space.vector_bits, space.bits);
    if xor {
        (v..n.min(space.writable))
            .flat_map(|i| (i..n).map(move |j| 1u64 << i | 1u64 << j))
            .collect()
    } else {
        (v..n.min(space.writable)).map(|i| 1u64 << i).collect()
    }
}

/// The bank rows every map must start with: the bits inside a vector stay where they are.
pub fn fixed_rows(space: &Space) -> Vec<u64> {
    (0..space.vector_bits.min(space.bank_bits))
        .map(|i| 1u64 << i)
        .collect()
}

/// The reference sets: every distinct phase's addresses with its count.
pub fn reference_sets(space: &Space) -> Vec<(Vec<u64>, u64)> {
    space
        .phases()
        .map(|(phase, weight)| (phase.iter().map(|&a| a as u64).collect(), weight))
        .collect()
}

/// Tracks the chosen rows' span on the writable bits, so that no chosen row depends on the
/// others (the bijection needs them independent there).
pub struct Chosen {
    pub rows: Vec<u64>,
    span: Basis,
    writable: u64,
}

impl Chosen {
    pub fn new(space: &Space) -> Self {
        let mut chosen = Chosen {
            rows: Vec::new(),
            span: Basis::new(),
            writable: low_mask(space.writable),
        };
        for row in fixed_rows(space) {
            chosen.push(row);
        }
        chosen
    }

    pub fn allows(&self, row: u64) -> bool {
        !self.rows.contains(&row) && !self.span.contains(row & self.writable)
    }

    pub fn push(&mut self, row: u64) {
        self.span.insert(row & self.writable);
        self.rows.push(row);
    }
}

/// The map whose bank bits are `rows`: a bitwise permutation of single bits, else a bitwise
/// XOR.
pub fn map_from_rows(space: &Space, rows: &[u64]) -> Result<Box<dyn AddressMap>, String> {
    if rows.iter().all(|r| r.count_ones() == 1) {
        let bits = rows.iter().map(|r| r.trailing_zeros()).collect();
        Ok(Box::new(BitwisePermutation::new(bits, space.extent)?))
    } else {
        Ok(Box::new(BitwiseXor::new(rows.to_vec(), space.extent)?))
    }
}
