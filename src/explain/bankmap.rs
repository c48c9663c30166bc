//! One warp request laid out as the banks serve it: per phase, one row per wavefront, one
//! cell per bank, each cell the lanes that read the word that bank delivers in that
//! wavefront. The layout follows the bank model of [`crate::bank`]: in a phase, bank `b`
//! serves its distinct words one per wavefront (here in ascending word order), and lanes
//! reading the same word share a cell (broadcast).
use crate::bank::{lanes_per_phase, simulate, BankConfig, Cost, Request};
use std::collections::BTreeMap;

/// The lanes one bank serves in one wavefront, all reading `word`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub word: i64,
    pub lanes: Vec<u32>,
}

/// The wavefronts of one phase (lanes `first_lane .. first_lane + lanes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    pub first_lane: u32,
    pub lanes: u32,
    /// `rows[r][b]`: what bank `b` serves in wavefront `r` of this phase.
    pub rows: Vec<Vec<Option<Cell>>>,
}

/// One warp request through the banks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankMap {
    pub banks: u32,
    /// Phases with at least one active lane.
    pub phases: Vec<Phase>,
    /// The bank model's figures for the request.
    pub cost: Cost,
}

impl BankMap {
    /// The layout of the request whose lane `l` touches the `unit_bytes`-byte unit
    /// `lanes[l]` (`None`: inactive).
    pub fn new(config: &BankConfig, unit_bytes: u32, lanes: &[Option<i64>]) -> Self {
        let per_phase = lanes_per_phase(config, unit_bytes).max(1);
        let banks = config.banks.max(1);
        let width = i64::from(config.bank_width.max(1));
        let bytes = i64::from(unit_bytes.max(1));
        let mut phases = Vec::new();
        for (p, chunk) in lanes.chunks(per_phase).enumerate() {
            let first_lane = (p * per_phase) as u32;
            // Per bank, its distinct words in ascending order, each with its lanes.
            let mut by_bank: Vec<BTreeMap<i64, Vec<u32>>> = vec![BTreeMap::new(); banks as usize];
            for (offset, unit) in chunk.iter().enumerate() {
                let Some(unit) = *unit else { continue };
                let byte = unit.wrapping_mul(bytes);
                let first = byte.div_euclid(width);
                let last = byte.wrapping_add(bytes - 1).div_euclid(width);
                for word in first..=last {
                    let bank = word.rem_euclid(i64::from(banks)) as usize;
                    by_bank[bank]
                        .entry(word)
                        .or_default()
                        .push(first_lane + offset as u32);
                }
            }
            let depth = by_bank.iter().map(BTreeMap::len).max().unwrap_or(0);
            if depth == 0 {
                continue;
            }
            let mut rows = vec![vec![None; banks as usize]; depth];
            for (bank, words) in by_bank.into_iter().enumerate() {
                for (row, (word, lanes)) in words.into_iter().enumerate() {
                    rows[row][bank] = Some(Cell { word, lanes });
                }
            }
            phases.push(Phase {
                first_lane,
                lanes: chunk.len() as u32,
                rows,
            });
        }
        let cost = simulate(
            config,
            &Request {
                elem_bytes: unit_bytes,
                lanes,
            },
        );
        BankMap {
            banks,
            phases,
            cost,
        }
    }

    /// Wavefronts in all phases: the rows drawn.
    pub fn rows(&self) -> usize {
        self.phases.iter().map(|p| p.rows.len()).sum()
    }

    /// Each row with its label: `1`, `2`, … for one phase; `phase.wavefront` for several.
    pub fn labelled_rows(&self) -> Vec<(String, &[Option<Cell>], bool)> {
        let several = self.phases.len() > 1;
        let mut out = Vec::new();
        for (p, phase) in self.phases.iter().enumerate() {
            for (r, row) in phase.rows.iter().enumerate() {
                let label = if several {
                    format!("{}.{}", p + 1, r + 1)
                } else {
                    format!("{}", r + 1)
                };
                // Every wavefront of a phase beyond its first is an excess one.
                out.push((label, row.as_slice(), r > 0));
            }
        }
        out
    }
}

/// Lane numbers as `3,7`, or `0-3` for a run.
pub fn lane_list(lanes: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => lanes[i].to_string(),
            1 => format!("{},{}", lanes[i], lanes[j]),
            _ => format!("{}-{}", lanes[i], lanes[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float_map(lanes: &[i64]) -> BankMap {
        let lanes: Vec<Option<i64>> = lanes.iter().map(|&l| Some(l)).collect();
        BankMap::new(&BankConfig::default(), 4, &lanes)
    }

    #[test]
    fn a_column_read_is_one_row_per_lane_in_one_bank() {
        let map = float_map(&(0..32).map(|l| 32 * l).collect::<Vec<_>>());
        assert_eq!(map.rows(), 32);
        assert_eq!(map.cost.conflict_degree, 32);
        for (r, row) in map.phases[0].rows.iter().enumerate() {
            assert_eq!(
                row[0].as_ref().map(|c| c.lanes.clone()),
                Some(vec![r as u32])
            );
            assert!(row[1..].iter().all(Option::is_none));
        }
    }

    #[test]
    fn a_broadcast_shares_a_cell_and_costs_no_row() {
        let map = float_map(&[5; 32]);
        assert_eq!(map.rows(), 1);
        let cell = map.phases[0].rows[0][5].as_ref().expect("bank 5");
        assert_eq!(cell.lanes.len(), 32);
        assert_eq!(lane_list(&cell.lanes), "0-31");
    }

    #[test]
    fn doubles_fill_two_banks_in_two_phases() {
        let lanes: Vec<Option<i64>> = (0..32).map(|l| Some(32 * l)).collect();
        let map = BankMap::new(&BankConfig::default(), 8, &lanes);
        assert_eq!(map.phases.len(), 2);
        assert_eq!(map.phases[1].first_lane, 16);
        assert_eq!(map.rows(), 32);
        assert_eq!(map.cost.conflict_degree, 16);
        let first = &map.phases[0].rows[0];
        assert_eq!(first[0].as_ref().map(|c| c.lanes.clone()), Some(vec![0]));
        assert_eq!(first[1].as_ref().map(|c| c.lanes.clone()), Some(vec![0]));
    }

    #[test]
    fn the_rows_are_the_bank_models_wavefronts() {
        let patterns: [Vec<i64>; 4] = [
            (0..32).map(|l| 2 * l).collect(),
            (0..32).map(|l| l / 2).collect(),
            (0..32).map(|l| (l * 7) % 64).collect(),
            (0..32).map(|l| 33 * l).collect(),
        ];
        for pattern in &patterns {
            for bytes in [1, 2, 4, 8, 16] {
                let lanes: Vec<Option<i64>> = pattern.iter().map(|&l| Some(l)).collect();
                let map = BankMap::new(&BankConfig::default(), bytes, &lanes);
                assert_eq!(
                    map.rows() as u32,
                    map.cost.wavefronts,
                    "{pattern:?} {bytes}"
                );
            }
        }
    }

    #[test]
    fn lane_lists_fold_runs() {
        assert_eq!(lane_list(&[3, 7]), "3,7");
        assert_eq!(lane_list(&[0, 1, 2, 3, 9]), "0-3,9");
        assert_eq!(lane_list(&[4, 5]), "4,5");
    }
}
