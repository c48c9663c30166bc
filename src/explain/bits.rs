//! Lloyd's index-digit view of one warp request: every bit of the index the banks see,
//! written as the lane bits (thread-index bits) it holds. A bit that is the same for every
//! lane is `0` or `1`; one that follows lane bits is their XOR (`tx0^ty1`, `~tx0` when
//! inverted); one that no XOR of lane bits gives (an addition's carries mix them, as with
//! padding) is `+`.
//!
//! The bits below the bank bits pick a byte within a bank word, the bank bits pick the bank
//! within a phase, the bits above pick the row. Lanes whose bank bits differ never conflict;
//! lane bits that reach only the row bits put lanes in the same bank.
use crate::affine::{lane_thread, Axis};
use crate::bank::BankConfig;
use crate::solve::bank_bits;

/// What one index bit holds across the lanes of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitForm {
    /// The same for every active lane.
    Constant(bool),
    /// The XOR of the lane bits in `mask`, inverted when `inverted`.
    Lanes { mask: u32, inverted: bool },
    /// Not an XOR of lane bits.
    Mixed,
}

/// Where the bank model looks in an index of `unit_bytes`-byte units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// Bits `[0, word)` pick a byte within a bank word (sub-word units).
    pub word: u32,
    /// Bits `[word, bank)` pick the bank within a phase; the bits above, the row.
    pub bank: u32,
    /// Bits drawn.
    pub width: u32,
}

impl Fields {
    /// `None` when the bank is not a bit field of the index (a unit size that is not a power
    /// of two, or a unit as wide as a row of banks).
    pub fn new(config: &BankConfig, unit_bytes: u32, largest_index: i64) -> Option<Fields> {
        let bank = bank_bits(config, unit_bytes)?;
        let word = (config.bank_width / unit_bytes.max(1))
            .max(1)
            .trailing_zeros();
        let used = 64 - largest_index.max(1).leading_zeros();
        Some(Fields {
            word,
            bank,
            width: used.clamp(bank, MAX_BITS),
        })
    }
}

/// Index bits drawn at most.
const MAX_BITS: u32 = 32;

/// The names of the lane bits of `warp`: thread-index bits (`tx0`) when every lane bit that
/// varies is one, else `l0`, `l1`, …; the flag says which.
pub fn lane_bit_names(block: [u32; 3], warp_size: u32, warp: u32) -> (Vec<String>, bool) {
    let lane_bits = warp_size.max(1).trailing_zeros();
    let threads: Vec<(u32, [i64; 3])> = (0..warp_size)
        .map_while(|lane| lane_thread(block, warp_size, warp, lane).map(|t| (lane, t)))
        .collect();
    let varies = |bit: u32| {
        let first = threads.first().map(|(l, _)| l >> bit & 1);
        threads.iter().any(|(l, _)| Some(l >> bit & 1) != first)
    };
    let thread_bit = |bit: u32| {
        Axis::ALL.iter().find_map(|&axis| {
            (0..31).find_map(|b| {
                threads
                    .iter()
                    .all(|(l, t)| (t[axis.index()] >> b & 1) as u32 == l >> bit & 1)
                    .then(|| format!("{}{b}", axis.short_name()))
            })
        })
    };
    let names: Vec<Option<String>> = (0..lane_bits)
        .map(|bit| if varies(bit) { thread_bit(bit) } else { None })
        .collect();
    if (0..lane_bits).all(|bit| !varies(bit) || names[bit as usize].is_some()) {
        let names = names
            .into_iter()
            .enumerate()
            .map(|(bit, name)| name.unwrap_or_else(|| format!("l{bit}")))
            .collect();
        (names, true)
    } else {
        ((0..lane_bits).map(|bit| format!("l{bit}")).collect(), false)
    }
}

/// What bit `bit` of each active lane's index holds (lane `l` is `lanes[l]`).
pub fn bit_form(lanes: &[Option<i64>], bit: u32) -> BitForm {
    let values: Vec<(u32, bool)> = lanes
        .iter()
        .enumerate()
        .filter_map(|(lane, index)| index.map(|i| (lane as u32, i >> bit.min(63) & 1 == 1)))
        .collect();
    let Some(&(base_lane, base_value)) = values.first() else {
        return BitForm::Constant(false);
    };
    // Solve value(l) ^ value(base) = Σ a_i (l ^ base)_i over GF(2): a basis of lane
    // differences, each with the value difference it must give.
    let mut basis: Vec<(u32, bool)> = Vec::new();
    for &(lane, value) in &values[1..] {
        let (mut difference, mut flip) = (lane ^ base_lane, value ^ base_value);
        for &(row, row_flip) in &basis {
            if difference & (1 << (31 - row.leading_zeros())) != 0 {
                difference ^= row;
                flip ^= row_flip;
            }
        }
        match (difference, flip) {
            (0, false) => {}
            (0, true) => return BitForm::Mixed,
            _ => {
                basis.push((difference, flip));
                basis.sort_by_key(|row| std::cmp::Reverse(row.0));
            }
        }
    }
    // Back-substitute from the lowest pivot up; bits no difference reaches are taken as 0.
    let mut mask = 0u32;
    for &(row, flip) in basis.iter().rev() {
        let pivot = 31 - row.leading_zeros();
        let rest = (row & !(1 << pivot) & mask).count_ones() % 2 == 1;
        if flip ^ rest {
            mask |= 1 << pivot;
        }
    }
    let inverted = base_value ^ ((base_lane & mask).count_ones() % 2 == 1);
    if mask == 0 {
        BitForm::Constant(inverted)
    } else {
        BitForm::Lanes { mask, inverted }
    }
}

/// The form of every drawn bit, highest first.
pub fn bit_forms(lanes: &[Option<i64>], fields: &Fields) -> Vec<BitForm> {
    (0..fields.width)
        .rev()
        .map(|bit| bit_form(lanes, bit))
        .collect()
}

/// `tx0^tx5`, `~tx0`, `0`, `+`.
pub fn label(form: BitForm, names: &[String]) -> String {
    match form {
        BitForm::Constant(value) => u8::from(value).to_string(),
        BitForm::Mixed => "+".to_string(),
        BitForm::Lanes { mask, inverted } => {
            let lanes: Vec<&str> = (0..32)
                .filter(|bit| mask & (1 << bit) != 0)
                .map(|bit| names.get(bit).map_or("?", String::as_str))
                .collect();
            format!("{}{}", if inverted { "~" } else { "" }, lanes.join("^"))
        }
    }
}

/// The lane bits that reach any of `forms` (a mask).
pub fn lane_bits_in(forms: &[BitForm]) -> u32 {
    forms
        .iter()
        .map(|form| match form {
            BitForm::Lanes { mask, .. } => *mask,
            _ => 0,
        })
        .fold(0, |a, b| a | b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(i64) -> i64) -> Vec<Option<i64>> {
        (0..32).map(|l| Some(f(l))).collect()
    }

    #[test]
    fn a_stride_of_32_puts_the_lane_bits_above_the_bank_bits() {
        let lanes = lanes(|l| 32 * l + 3);
        assert_eq!(bit_form(&lanes, 0), BitForm::Constant(true));
        assert_eq!(bit_form(&lanes, 2), BitForm::Constant(false));
        for bit in 5..10 {
            assert_eq!(
                bit_form(&lanes, bit),
                BitForm::Lanes {
                    mask: 1 << (bit - 5),
                    inverted: false
                }
            );
        }
    }

    #[test]
    fn a_swizzle_is_an_xor_of_lane_bits() {
        // (l >> 1) ^ l on the low bits, with an odd constant.
        let lanes = lanes(|l| (l ^ (l >> 1)) ^ 1);
        assert_eq!(
            bit_form(&lanes, 0),
            BitForm::Lanes {
                mask: 0b11,
                inverted: true
            }
        );
        let names: Vec<String> = (0..5).map(|b| format!("tx{b}")).collect();
        assert_eq!(label(bit_form(&lanes, 0), &names), "~tx0^tx1");
    }

    #[test]
    fn padding_mixes_bits_by_carries() {
        let lanes = lanes(|l| 3 * l);
        assert_eq!(
            bit_form(&lanes, 0),
            BitForm::Lanes {
                mask: 1,
                inverted: false
            }
        );
        assert_eq!(
            bit_form(&lanes, 1),
            BitForm::Lanes {
                mask: 0b11,
                inverted: false
            }
        );
        assert_eq!(bit_form(&lanes, 2), BitForm::Mixed);
    }

    #[test]
    fn inactive_lanes_do_not_count() {
        let lanes: Vec<Option<i64>> = (0..32).map(|l| (l < 16).then_some(2 * l)).collect();
        assert_eq!(
            bit_form(&lanes, 4),
            BitForm::Lanes {
                mask: 0b1000,
                inverted: false
            }
        );
        assert_eq!(bit_form(&lanes, 5), BitForm::Constant(false));
    }

    #[test]
    fn lane_bits_are_named_after_thread_bits() {
        let (names, threads) = lane_bit_names([32, 8, 1], 32, 3);
        assert!(threads);
        assert_eq!(names, ["tx0", "tx1", "tx2", "tx3", "tx4"]);
        let (names, _) = lane_bit_names([16, 16, 1], 32, 1);
        assert_eq!(names, ["tx0", "tx1", "tx2", "tx3", "ty0"]);
        let (names, threads) = lane_bit_names([24, 4, 1], 32, 0);
        assert!(!threads);
        assert_eq!(names[0], "l0");
    }

    #[test]
    fn fields_of_floats_shorts_and_doubles() {
        let config = BankConfig::default();
        let floats = Fields::new(&config, 4, 1023).expect("power of two");
        assert_eq!((floats.word, floats.bank, floats.width), (0, 5, 10));
        let shorts = Fields::new(&config, 2, 63).expect("power of two");
        assert_eq!((shorts.word, shorts.bank, shorts.width), (1, 6, 6));
        let doubles = Fields::new(&config, 8, 1023).expect("power of two");
        assert_eq!((doubles.word, doubles.bank), (0, 4));
        assert_eq!(Fields::new(&config, 12, 100), None);
    }
}
