//! Exact costs of the patterns in docs/ARCHITECTURE.md §9 and a few hand-computed corner cases, plus a
//! comparison with a brute-force reference on random requests.
use super::dmm::SplitMix64;
use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

const WIDTH_4: BankConfig = BankConfig {
    banks: 32,
    bank_width: 4,
    warp: 32,
};

/// Costs a warp of `config.warp` lanes whose lane `l` accesses `index(l)`.
fn run(config: BankConfig, elem_bytes: u32, index: impl Fn(i64) -> Option<i64>) -> Cost {
    let lanes: Vec<Option<i64>> = (0..i64::from(config.warp)).map(index).collect();
    simulate(
        &config,
        &Request {
            elem_bytes,
            lanes: &lanes,
        },
    )
}

#[track_caller]
fn assert_cost(cost: &Cost, degree: u32, wavefronts: u32, ideal: u32, excess: u32) {
    assert_eq!(
        (
            cost.conflict_degree,
            cost.wavefronts,
            cost.ideal_wavefronts,
            cost.excess()
        ),
        (degree, wavefronts, ideal, excess),
        "(degree, wavefronts, ideal, excess) of {cost:?}"
    );
}

fn collision(lanes: (u32, u32), bank: u32, words: (i64, i64)) -> Option<Collision> {
    Some(Collision { lanes, bank, words })
}

#[test]
fn default_is_32_banks_of_4_bytes_warp_32() {
    assert_eq!(BankConfig::default(), WIDTH_4);
}

/// TC 2016 Sec. 3.2.2: `tile[tx][ty]` with TILE_DIM 16, block 16×16. Lanes 0–15 hit banks 0 and
/// 16 alternately (indices 0, 16, …, 240), lanes 16–31 banks 1 and 17: 8 words in each.
#[test]
fn transpose_tile16_column_read_is_8_way() {
    let cost = run(WIDTH_4, 4, |l| Some((l % 16) * 16 + l / 16));
    assert_cost(&cost, 8, 8, 1, 7);
    // Lane 1 (index 16) is in bank 16; lane 2 (index 32) is the first to share bank 0.
    assert_eq!(cost.collision, collision((0, 2), 0, (0, 32)));
}

/// TILE_DIM 32, block 32×8, `tile[tx][ty]`: warp `ty` reads one column, all in bank `ty`.
#[test]
fn transpose_tile32_column_read_is_32_way_in_every_warp() {
    for ty in 0..8 {
        let cost = run(WIDTH_4, 4, |l| Some(32 * l + ty));
        assert_cost(&cost, 32, 32, 1, 31);
        assert_eq!(cost.collision, collision((0, 1), ty as u32, (ty, 32 + ty)));
    }
}

/// TC 2016 Sec. 3.2.4: FWT with stride 8 touches 0–7, 32–39, 64–71, 96–103.
#[test]
fn fwt_stride_8_is_4_way() {
    let cost = run(WIDTH_4, 4, |l| Some((l / 8) * 32 + l % 8));
    assert_cost(&cost, 4, 4, 1, 3);
    assert_eq!(cost.collision, collision((0, 8), 0, (0, 32)));
}

/// TC 2016 Sec. 3.2.3: `sdata[2*s*tx]` has stride 2s; lane 16/s is the first back in bank 0.
#[test]
fn reduction_stride_2s_degrees() {
    for (s, degree) in [(1, 2), (2, 4), (4, 8), (8, 16), (16, 32)] {
        let cost = run(WIDTH_4, 4, |l| Some(2 * s * l));
        assert_cost(&cost, degree, degree, 1, degree - 1);
        assert_eq!(cost.collision, collision((0, 16 / s as u32), 0, (0, 32)));
    }
}

/// `double[32][32]` column: each lane covers words 64l and 64l + 1 (banks 0 and 1); two
/// half-warp phases of 16 distinct words per bank.
#[test]
fn double_column_is_16_way_in_each_of_2_phases() {
    let cost = run(WIDTH_4, 8, |l| Some(32 * l));
    assert_cost(&cost, 16, 32, 2, 30);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 64)));
}

/// A conflict only in the second phase is reported with warp lane numbers (16, 17).
#[test]
fn collision_reports_warp_lanes_of_the_worst_phase() {
    let cost = run(WIDTH_4, 8, |l| Some(if l < 16 { l } else { 32 * l }));
    assert_cost(&cost, 16, 17, 2, 15);
    assert_eq!(cost.collision, collision((16, 17), 0, (1024, 1088)));
}

/// float4 row: 8 lanes × 16 B per phase cover words 0–31 once.
#[test]
fn float4_row_is_4_conflict_free_phases() {
    let cost = run(WIDTH_4, 16, Some);
    assert_cost(&cost, 1, 4, 4, 0);
    assert_eq!(cost.collision, None);
}

/// float4 with a 128-byte stride: every lane covers banks 0–3, 8 lanes per phase. Lanes (0, 1)
/// collide in banks 0–3; the lowest bank is reported.
#[test]
fn float4_stride_8_is_8_way_in_each_of_4_phases() {
    let cost = run(WIDTH_4, 16, |l| Some(8 * l));
    assert_cost(&cost, 8, 32, 4, 28);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 32)));
}

/// 12-byte elements: phases as for 16 bytes (8 lanes), each lane covers words 3l..3l+2.
#[test]
fn twelve_byte_row_is_4_conflict_free_phases() {
    let cost = run(WIDTH_4, 12, Some);
    assert_cost(&cost, 1, 4, 4, 0);
}

/// Sub-word elements: four chars share a word, which is merged.
#[test]
fn char_accesses() {
    assert_cost(&run(WIDTH_4, 1, Some), 1, 1, 1, 0);
    // Stride 4: lane l alone in word l, bank l.
    assert_cost(&run(WIDTH_4, 1, |l| Some(4 * l)), 1, 1, 1, 0);
    // Stride 128: word 32l, all in bank 0.
    let cost = run(WIDTH_4, 1, |l| Some(128 * l));
    assert_cost(&cost, 32, 32, 1, 31);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 32)));
    // short, stride 2: lanes l hits word l.
    assert_cost(&run(WIDTH_4, 2, |l| Some(2 * l)), 1, 1, 1, 0);
}

#[test]
fn broadcast_of_one_word_is_one_wavefront() {
    let cost = run(WIDTH_4, 4, |_| Some(5));
    assert_cost(&cost, 1, 1, 1, 0);
    assert_eq!(cost.collision, None);
    // Multicast: two words in two banks, 16 lanes each.
    assert_cost(&run(WIDTH_4, 4, |l| Some(l % 2)), 1, 1, 1, 0);
    // Two words in one bank, 16 lanes each: 2-way however many lanes read them.
    assert_cost(&run(WIDTH_4, 4, |l| Some(32 * (l % 2))), 2, 2, 1, 1);
}

#[test]
fn inactive_lanes_do_not_count() {
    let cost = run(WIDTH_4, 4, |l| (l < 4).then_some(32 * l));
    assert_cost(&cost, 4, 4, 1, 3);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 32)));
    // No active lane: nothing is issued.
    assert_eq!(run(WIDTH_4, 4, |_| None), Cost::default());
    // Only the second half of a double access: one phase issued.
    assert_cost(&run(WIDTH_4, 8, |l| (l >= 16).then_some(l)), 1, 1, 1, 0);
}

#[test]
fn negative_indices_use_euclidean_banks() {
    // Words -1..30: bank 31 for word -1, no conflict.
    assert_cost(&run(WIDTH_4, 4, |l| Some(l - 1)), 1, 1, 1, 0);
    let cost = run(WIDTH_4, 4, |l| Some(-32 * l - 3));
    assert_cost(&cost, 32, 32, 1, 31);
    assert_eq!(cost.collision, collision((0, 1), 29, (-3, -35)));
    // chars at -4..-1 are one word.
    assert_cost(&run(WIDTH_4, 1, |l| Some(-1 - l % 4)), 1, 1, 1, 0);
}

/// `--banks 16`: 16 lanes per phase for 4-byte elements.
#[test]
fn sixteen_banks_use_half_warp_phases() {
    let config = BankConfig {
        banks: 16,
        ..BankConfig::default()
    };
    let cost = run(config, 4, |l| Some(16 * l));
    assert_cost(&cost, 16, 32, 2, 30);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 16)));
    assert_cost(&run(config, 4, Some), 1, 2, 2, 0);
    // Stride 32 is a multiple of 16 banks too: still 16-way.
    assert_cost(&run(config, 4, |l| Some(32 * l)), 16, 32, 2, 30);
}

/// `--bank-width 8`: words are 8 bytes, a phase is 256 bytes (32 lanes up to 8-byte elements).
#[test]
fn eight_byte_bank_width() {
    let config = BankConfig {
        bank_width: 8,
        ..BankConfig::default()
    };
    // 4-byte stride 2: byte 8l is word l, bank l.
    assert_cost(&run(config, 4, |l| Some(2 * l)), 1, 1, 1, 0);
    // 4-byte stride 1: lanes 2k and 2k + 1 share word k (merged), 16 banks used.
    assert_cost(&run(config, 4, Some), 1, 1, 1, 0);
    // 4-byte stride 32: byte 128l is word 16l, banks 0 and 16, 16 words each.
    let cost = run(config, 4, |l| Some(32 * l));
    assert_cost(&cost, 16, 16, 1, 15);
    assert_eq!(cost.collision, collision((0, 2), 0, (0, 32)));
    // 4-byte stride 64: word 32l, all bank 0.
    assert_cost(&run(config, 4, |l| Some(64 * l)), 32, 32, 1, 31);
    // double column of double[32][32]: one phase of 32 lanes, word 32l, all in bank 0.
    assert_cost(&run(config, 8, |l| Some(32 * l)), 32, 32, 1, 31);
    // double row: conflict-free in one wavefront.
    assert_cost(&run(config, 8, Some), 1, 1, 1, 0);
}

/// An element wider than a phase: one lane per phase, and one lane's words can share a bank.
#[test]
fn element_wider_than_all_banks_collides_with_itself() {
    let config = BankConfig {
        banks: 4,
        bank_width: 4,
        warp: 4,
    };
    // 32 bytes cover 8 words, 2 per bank; 4 phases of one lane.
    let cost = run(config, 32, Some);
    assert_cost(&cost, 2, 8, 4, 4);
    assert_eq!(cost.collision, collision((0, 0), 0, (0, 4)));
}

/// Words more than 64 rows of banks apart are counted by sorting instead of bit sets.
#[test]
fn far_apart_words() {
    let cost = run(WIDTH_4, 4, |l| Some(l << 20));
    assert_cost(&cost, 32, 32, 1, 31);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 1 << 20)));
    assert_cost(&run(WIDTH_4, 4, |l| Some(l + ((l / 16) << 40))), 1, 1, 1, 0);
    let cost = run(WIDTH_4, 4, |l| Some(if l == 1 { 1 << 40 } else { l }));
    assert_cost(&cost, 2, 2, 1, 1);
    assert_eq!(cost.collision, collision((0, 1), 0, (0, 1 << 40)));
}

#[test]
fn more_than_64_banks_take_the_sorting_path() {
    let config = BankConfig {
        banks: 128,
        bank_width: 4,
        warp: 128,
    };
    assert_cost(&run(config, 4, |l| Some(128 * l + 1)), 128, 128, 1, 127);
    assert_cost(&run(config, 4, Some), 1, 1, 1, 0);
}

#[test]
fn degenerate_sizes_do_not_panic() {
    let zero = BankConfig {
        banks: 0,
        bank_width: 0,
        warp: 0,
    };
    // Treated as 1 bank of 1 byte, one lane per phase, 1-byte elements.
    assert_cost(&run(WIDTH_4, 0, Some), 1, 1, 1, 0);
    let lanes = [Some(i64::MAX), Some(i64::MIN), None, Some(-1)];
    let cost = simulate(
        &zero,
        &Request {
            elem_bytes: 0,
            lanes: &lanes,
        },
    );
    assert_cost(&cost, 1, 3, 3, 0);
    let odd = BankConfig {
        banks: 7,
        bank_width: 3,
        warp: 32,
    };
    // 21-byte phases hold 2 lanes of 5 (as 8) bytes: phases {0, 1} and {2, 3}.
    let cost = simulate(
        &odd,
        &Request {
            elem_bytes: 5,
            lanes: &lanes,
        },
    );
    assert_eq!(cost.ideal_wavefronts, 2);
}

/// The rules of docs/ARCHITECTURE.md §4 written as plainly as possible: sets of words per bank.
fn reference(config: &BankConfig, request: &Request) -> Cost {
    let banks = i64::from(config.banks.max(1));
    let width = i64::from(config.bank_width.max(1));
    let elem = i64::from(request.elem_bytes.max(1));
    let phase_bytes = banks * width;
    let per_phase = (phase_bytes / (elem as u64).next_power_of_two() as i64)
        .clamp(1, i64::from(config.warp.max(1))) as usize;
    let mut cost = Cost::default();
    for (phase, lanes) in request.lanes.chunks(per_phase).enumerate() {
        // (lane, word) for every word every active lane touches.
        let mut touched = Vec::new();
        for (offset, index) in lanes.iter().enumerate() {
            let Some(index) = index else { continue };
            let lane = (phase * per_phase + offset) as u32;
            let bytes = index * elem..index * elem + elem;
            let words: BTreeSet<i64> = bytes.map(|b| b.div_euclid(width)).collect();
            touched.extend(words.into_iter().map(|w| (lane, w)));
        }
        if touched.is_empty() {
            continue;
        }
        let mut per_bank: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for &(_, word) in &touched {
            per_bank
                .entry(word.rem_euclid(banks))
                .or_default()
                .insert(word);
        }
        let degree = per_bank.values().map(|w| w.len() as u32).max().unwrap_or(0);
        cost.wavefronts += degree;
        cost.ideal_wavefronts += 1;
        if degree > cost.conflict_degree {
            cost.conflict_degree = degree;
            // Lowest (a, b, bank) with a ≤ b touching different words of one bank; the words
            // are a's lowest there and b's lowest other than a's.
            let mut best: Option<(u32, u32, i64)> = None;
            for &(a, x) in &touched {
                for &(b, y) in &touched {
                    let key = (a, b, x.rem_euclid(banks));
                    if a <= b && x != y && x.rem_euclid(banks) == y.rem_euclid(banks) {
                        best = Some(best.map_or(key, |k| k.min(key)));
                    }
                }
            }
            cost.collision = best.map(|(a, b, bank)| {
                let in_bank = |lane: u32| {
                    touched
                        .iter()
                        .filter(move |&&(l, w)| l == lane && w.rem_euclid(banks) == bank)
                        .map(|&(_, w)| w)
                };
                let word_a = in_bank(a).min().unwrap_or(0);
                let word_b = in_bank(b).filter(|&w| w != word_a).min().unwrap_or(0);
                Collision {
                    lanes: (a, b),
                    bank: bank as u32,
                    words: (word_a, word_b),
                }
            });
        }
    }
    cost
}

/// Random requests on ordinary and odd geometries, both scratch paths, agree with
/// [`reference`].
#[test]
fn matches_reference_on_random_requests() {
    let mut rng = SplitMix64::new(0x6261_6e6b);
    let geometries = [(32, 4), (16, 4), (32, 8), (7, 3), (64, 4), (128, 4), (4, 1)];
    let warps = [32, 16, 128];
    let elems = [1, 2, 3, 4, 8, 12, 16, 24, 64];
    for case in 0..3000 {
        let (banks, bank_width) = geometries[rng.below(geometries.len() as u32) as usize];
        let config = BankConfig {
            banks,
            bank_width,
            warp: warps[rng.below(warps.len() as u32) as usize],
        };
        let elem_bytes = elems[rng.below(elems.len() as u32) as usize];
        // Scaled strides spread a phase over more than 64 rows of banks (the sorting path).
        let scale = [1, 1, 1, 37, 4096][rng.below(5) as usize];
        let stride = (i64::from(rng.below(70)) - 3) * scale;
        let spread = rng.below(8) + 1;
        let lanes: Vec<Option<i64>> = (0..config.warp + rng.below(3))
            .map(|l| {
                (rng.below(4) != 0)
                    .then(|| stride * i64::from(l) + i64::from(rng.below(spread)) - 40)
            })
            .collect();
        let request = Request {
            elem_bytes,
            lanes: &lanes,
        };
        assert_eq!(
            simulate(&config, &request),
            reference(&config, &request),
            "case {case}: {config:?}, {elem_bytes} B, {lanes:?}"
        );
    }
}

/// Time per request in release builds, for the record:
/// `cargo test --release --lib simulate_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn simulate_throughput() {
    let config = BankConfig::default();
    let mut rng = SplitMix64::new(1);
    // Strides 0–39 with a jitter of 0–3: mostly conflicts, unpredictable branches.
    let mixed: Vec<Vec<Option<i64>>> = (0..1024)
        .map(|_| {
            let stride = i64::from(rng.below(40));
            (0..32)
                .map(|l| Some(stride * l + i64::from(rng.below(4))))
                .collect()
        })
        .collect();
    let fixed = |stride: i64| vec![(0..32).map(|l| Some(stride * l)).collect::<Vec<_>>(); 1024];
    for (name, requests) in [
        ("mixed", mixed),
        ("stride1", fixed(1)),
        ("stride32", fixed(32)),
        ("stride33", fixed(33)),
    ] {
        for elem_bytes in [4, 8, 16] {
            let start = Instant::now();
            let mut total = 0u64;
            for _ in 0..1000 {
                for lanes in &requests {
                    let cost = simulate(
                        &config,
                        &Request {
                            elem_bytes,
                            lanes: std::hint::black_box(lanes),
                        },
                    );
                    total += u64::from(cost.wavefronts);
                }
            }
            let per = start.elapsed().as_nanos() as f64 / 1_024_000.0;
            eprintln!("{name} E={elem_bytes}: {per:.1} ns per request ({total})");
        }
    }
}
