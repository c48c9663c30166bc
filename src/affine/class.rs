//! The access classes of TC 2016 Sec. 3.1, read off the digit-affine form for one warp.
use super::digits::{Digit, DigitAffine};
use super::sym::Sym;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Class {
    /// Consecutive lanes touch consecutive elements.
    Linear,
    /// Consecutive lanes are `stride` elements apart (0: every lane reads one element).
    Stride(Sym),
    /// The lanes differ in more than one digit: each varying digit with its coefficient, the
    /// paper's 2×2 `M` when there are two.
    Block(Vec<(Digit, Sym)>),
    /// Not digit-affine, with the reason.
    Random(String),
}

impl Class {
    pub fn name(&self) -> &'static str {
        match self {
            Class::Linear => "linear",
            Class::Stride(_) => "stride",
            Class::Block(_) => "block",
            Class::Random(_) => "random",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Class::Linear => write!(f, "linear"),
            Class::Stride(s) => write!(f, "stride {s}"),
            Class::Block(terms) => {
                let parts: Vec<String> = terms.iter().map(|(d, c)| format!("{c}*{d}")).collect();
                write!(f, "block [{}]", parts.join(", "))
            }
            Class::Random(why) => write!(f, "random: {why}"),
        }
    }
}

/// The thread indices of lane `lane` of warp `warp` (docs/ARCHITECTURE.md §3: `l = tx + Bx·(ty + By·tz)`);
/// `None` past the end of the block.
pub fn lane_thread(block: [u32; 3], warp_size: u32, warp: u32, lane: u32) -> Option<[i64; 3]> {
    let [bx, by, bz] = block.map(|d| u64::from(d.max(1)));
    let linear = u64::from(warp) * u64::from(warp_size) + u64::from(lane);
    if linear >= bx * by * bz {
        return None;
    }
    Some([
        (linear % bx) as i64,
        (linear / bx % by) as i64,
        (linear / (bx * by)) as i64,
    ])
}

/// Classifies the pattern of `form` across the lanes of `warp`.
pub fn classify(form: &DigitAffine, block: [u32; 3], warp_size: u32, warp: u32) -> Class {
    let threads: Vec<[i64; 3]> = (0..warp_size)
        .map_while(|lane| lane_thread(block, warp_size, warp, lane))
        .collect();
    let varying: Vec<&(Digit, Sym)> = form
        .terms
        .iter()
        .filter(|(digit, _)| {
            let first = threads.first().map(|t| digit.value(*t));
            threads.iter().any(|t| Some(digit.value(*t)) != first)
        })
        .collect();
    match varying.as_slice() {
        [] => Class::Stride(Sym::Const(0)),
        [(digit, coeff)] if steps_by_one(*digit, &threads) => match coeff.constant() {
            Some(1) => Class::Linear,
            _ => Class::Stride(coeff.clone()),
        },
        _ => {
            // Constant coefficients: lanes may still be evenly spaced (tx + 32*ty on a 32-wide
            // block never varies ty inside a warp, but 16-wide with stride 16 does: 16*ty + tx
            // is linear across the warp).
            let offsets: Option<Vec<i64>> = threads
                .iter()
                .map(|t| {
                    varying.iter().try_fold(0i64, |sum, (digit, coeff)| {
                        Some(sum + coeff.constant()? * digit.value(*t))
                    })
                })
                .collect();
            if let Some(offsets) = offsets {
                let steps: Vec<i64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
                if let Some(&step) = steps.first() {
                    if steps.iter().all(|&s| s == step) {
                        return if step == 1 {
                            Class::Linear
                        } else {
                            Class::Stride(Sym::Const(step))
                        };
                    }
                }
            }
            Class::Block(varying.into_iter().cloned().collect())
        }
    }
}

/// Whether consecutive lanes see the digit go up by exactly one.
fn steps_by_one(digit: Digit, threads: &[[i64; 3]]) -> bool {
    threads
        .windows(2)
        .all(|pair| digit.value(pair[1]) - digit.value(pair[0]) == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affine::digits::normalize;
    use crate::affine::digits::tests::{c, op, tx, ty, Block, NoAtoms};
    use crate::affine::sym::Op;

    fn warp_addresses(sym: &Sym, block: [u32; 3], warp: u32) -> Vec<i64> {
        let form = normalize(sym, &Block(block)).unwrap();
        (0..32)
            .map_while(|lane| lane_thread(block, 32, warp, lane))
            .map(|t| form.eval(t, &NoAtoms).unwrap())
            .collect()
    }

    fn class_of(sym: &Sym, block: [u32; 3]) -> Class {
        classify(&normalize(sym, &Block(block)).unwrap(), block, 32, 0)
    }

    #[test]
    fn transpose_store_tile_dim_16_matches_tc2016_sec_3_2_2() {
        // tile[tx][ty] on float tile[16][16], block 16×16: index 16*tx + ty.
        let index = op(Op::Add, op(Op::Mul, tx(), c(16)), ty());
        let expected: Vec<i64> = (0..16)
            .map(|i| 16 * i)
            .chain((0..16).map(|i| 16 * i + 1))
            .collect();
        assert_eq!(warp_addresses(&index, [16, 16, 1], 0), expected);
        match class_of(&index, [16, 16, 1]) {
            Class::Block(terms) => {
                let shown: Vec<String> = terms.iter().map(|(d, c)| format!("{c}*{d}")).collect();
                assert_eq!(shown, ["16*tx", "1*ty"]);
            }
            other => panic!("expected block, got {other}"),
        }
        // The load tile[ty][tx] is linear on the same block.
        let load = op(Op::Add, op(Op::Mul, ty(), c(16)), tx());
        assert_eq!(class_of(&load, [16, 16, 1]), Class::Linear);
    }

    #[test]
    fn transpose_tile_dim_32_on_32x8_is_stride_32() {
        let index = op(Op::Add, op(Op::Mul, tx(), c(32)), ty());
        assert_eq!(class_of(&index, [32, 8, 1]), Class::Stride(c(32)));
        let warp3: Vec<i64> = (0..32).map(|l| 32 * l + 3).collect();
        assert_eq!(warp_addresses(&index, [32, 8, 1], 3), warp3);
    }

    #[test]
    fn reduction_stride_is_two_s() {
        for s in [1, 2, 4, 8, 16] {
            let index = op(Op::Mul, op(Op::Mul, c(2 * s), tx()), c(1));
            assert_eq!(class_of(&index, [256, 1, 1]), Class::Stride(c(2 * s)));
        }
    }

    #[test]
    fn fwt_stride_8_touches_four_runs_of_eight() {
        let lo = op(Op::And, tx(), c(7));
        let i0 = op(
            Op::Add,
            op(Op::Shl, op(Op::Sub, tx(), lo.clone()), c(2)),
            lo,
        );
        let expected: Vec<i64> = [0, 32, 64, 96]
            .iter()
            .flat_map(|base| (0..8).map(move |i| base + i))
            .collect();
        assert_eq!(warp_addresses(&i0, [256, 1, 1], 0), expected);
        assert!(matches!(class_of(&i0, [256, 1, 1]), Class::Block(_)));
    }

    #[test]
    fn lloyd_strided_examples() {
        // Stride 1, 2, 4, 8, 16 on a 1-D block of 32, and repeated thread bits:
        // (tx & 7) * 4 + (tx >> 3) puts bits 0..3 of tx at 2..5 and bits 3..5 at 0..2.
        for s in [1, 2, 4, 8, 16] {
            let index = op(Op::Mul, tx(), c(s));
            let expected: Vec<i64> = (0..32).map(|l| s * l).collect();
            assert_eq!(warp_addresses(&index, [32, 1, 1], 0), expected);
            let class = class_of(&index, [32, 1, 1]);
            assert_eq!(
                class,
                if s == 1 {
                    Class::Linear
                } else {
                    Class::Stride(c(s))
                }
            );
        }
        let swapped = op(
            Op::Add,
            op(Op::Mul, op(Op::And, tx(), c(7)), c(4)),
            op(Op::Shr, tx(), c(3)),
        );
        let addresses = warp_addresses(&swapped, [32, 1, 1], 0);
        let expected: Vec<i64> = (0..32).map(|l| (l & 7) * 4 + (l >> 3)).collect();
        assert_eq!(addresses, expected);
        assert!(matches!(class_of(&swapped, [32, 1, 1]), Class::Block(t) if t.len() == 2));
        // tx/2 repeats every thread bit but the lowest: two lanes per element, stride 0.5 is
        // not a stride, so it is a block of one digit stepping every other lane.
        let halves = op(Op::Div, tx(), c(2));
        assert_eq!(
            warp_addresses(&halves, [32, 1, 1], 0),
            (0..32).map(|l| l / 2).collect::<Vec<_>>()
        );
    }

    #[test]
    fn uniform_index_is_stride_0() {
        assert_eq!(class_of(&c(5), [32, 1, 1]), Class::Stride(c(0)));
    }
}
