//! What the bitwise heuristics share (TC 2016 Sec. 4.3–4.4): the candidate bank bits (single
//! index bits, or for XOR every pair `a_i ^ a_j`, `i ≤ j`, in the order of the paper's
//! Table 3), the reference sets they are measured on, and the map built from the chosen bits.
use super::algebra::{low_mask, Basis};
use super::maps::{AddressMap, BitwisePermutation, BitwiseXor};
use super::space::{Found, Space};

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

/// A reference set bit-sliced: for each address bit, which addresses have it set, 64
/// addresses to a word. The heuristics ask, for thousands of candidate rows, which
/// addresses have odd parity under a row; this answers it with a few XORs per word instead
/// of a parity per address.
pub struct Sliced {
    chunks: Vec<[u64; 64]>,
    len: usize,
}

impl Sliced {
    pub fn new(set: &[u64]) -> Self {
        let chunks = set
            .chunks(64)
            .map(|chunk| {
                let mut planes = [0u64; 64];
                let bits = 64 - chunk.iter().fold(0, |all, &a| all | a).leading_zeros();
                for (lane, &a) in chunk.iter().enumerate() {
                    for (bit, plane) in planes.iter_mut().enumerate().take(bits as usize) {
                        *plane |= (a >> bit & 1) << lane;
                    }
                }
                planes
            })
            .collect();
        Sliced {
            chunks,
            len: set.len(),
        }
    }

    /// How many addresses the set has.
    pub fn size(&self) -> u64 {
        self.len as u64
    }

    /// Per chunk of 64 addresses: bit `l` is `parity(address_l & row)`.
    pub fn parities(&self, row: u64) -> impl Iterator<Item = u64> + '_ {
        self.chunks.iter().map(move |planes| {
            let mut bits = row;
            let mut parity = 0;
            while bits != 0 {
                parity ^= planes[bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
            parity
        })
    }

    /// Per chunk of 64 addresses: the bits of the addresses it holds.
    pub fn lanes(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.chunks.len()).map(|i| match self.len - 64 * i {
            n if n >= 64 => u64::MAX,
            n => (1 << n) - 1,
        })
    }

    /// How many addresses have odd parity under `row`.
    pub fn odd(&self, row: u64) -> u64 {
        self.parities(row).map(|p| u64::from(p.count_ones())).sum()
    }
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

/// A heuristic's answer: the map of the bank `rows` it picked, scored, after ranking
/// `ranked` candidate rows.
pub fn found_from_rows(space: &Space, rows: &[u64], ranked: u64) -> Result<Found, String> {
    Ok(Found {
        best: space.candidate(map_from_rows(space, rows)?),
        candidates: ranked,
        truncated: false,
    })
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
