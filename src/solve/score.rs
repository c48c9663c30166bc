//! Scoring a map: every phase of every site of the array through the bank model, each element
//! index passed through the map first. The figure is the one `check` reports: excess
//! wavefronts summed over all warps of a block and all loop iterations.
use super::maps::AddressMap;
use crate::bank::{simulate, BankConfig, Request};
use crate::cost::SitePattern;

/// A map's excess wavefronts per site and in all, against the array as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    pub per_site: Vec<u64>,
    pub total: u64,
    /// Some site has more excess wavefronts than with the array as declared.
    pub worsens: bool,
}

impl Score {
    /// Orders candidates: never-worse first, then fewer excess wavefronts.
    pub fn key(&self) -> (bool, u64) {
        (self.worsens, self.total)
    }
}

/// Scores maps on the sites of one array.
pub struct Scorer<'a> {
    config: BankConfig,
    sites: &'a [SitePattern],
    before: Vec<u64>,
}

impl<'a> Scorer<'a> {
    pub fn new(config: BankConfig, sites: &'a [SitePattern]) -> Self {
        let before = sites
            .iter()
            .map(|site| site_excess(&config, site, &|phase, out| out.extend_from_slice(phase)))
            .collect();
        Scorer {
            config,
            sites,
            before,
        }
    }

    /// Excess wavefronts per site with the array as declared.
    pub fn before(&self) -> &[u64] {
        &self.before
    }

    pub fn total_before(&self) -> u64 {
        self.before.iter().sum()
    }

    /// The score of `map` (the sites' element indices must lie in its extent).
    pub fn score(&self, map: &dyn AddressMap) -> Score {
        self.score_phases(&|phase, out| map.apply_each(phase, out))
    }

    /// The score of any function on element indices.
    pub fn score_fn(&self, map: &dyn Fn(i64) -> i64) -> Score {
        self.score_phases(&|phase, out| out.extend(phase.iter().map(|&e| map(e))))
    }

    fn score_phases(&self, map: &MapPhase) -> Score {
        let mut buffers = Buffers::default();
        let per_site: Vec<u64> = self
            .sites
            .iter()
            .map(|site| {
                site_excess_within(&self.config, site, map, u64::MAX, &mut buffers)
                    .unwrap_or(u64::MAX)
            })
            .collect();
        let worsens = per_site.iter().zip(&self.before).any(|(a, b)| a > b);
        Score {
            total: per_site.iter().sum(),
            per_site,
            worsens,
        }
    }

    /// The score of `map`, or `None` as soon as it is certain to rank below a never-worse
    /// candidate with `bound` excess wavefronts: it worsens a site or exceeds `bound`. Solvers
    /// that try thousands of maps stop scoring most of them after a few phases. `first` is
    /// the site scored first, and becomes the site that rejected the map: the next map of a
    /// search is likely to fail there too. The outcome does not depend on the order.
    pub fn score_within(
        &self,
        map: &dyn AddressMap,
        bound: Option<u64>,
        first: &mut usize,
    ) -> Option<Score> {
        let sites = self.sites.len();
        let Some(bound) = bound.filter(|_| sites > 0) else {
            return Some(self.score(map));
        };
        let mapped = |phase: &[i64], out: &mut Vec<i64>| map.apply_each(phase, out);
        let mut buffers = Buffers::default();
        let start = (*first).min(sites.saturating_sub(1));
        let mut per_site = vec![0; sites];
        let mut total = 0u64;
        for i in std::iter::once(start).chain((0..sites).filter(|&i| i != start)) {
            let limit = self.before[i].min(bound - total);
            let Some(excess) =
                site_excess_within(&self.config, &self.sites[i], &mapped, limit, &mut buffers)
            else {
                *first = i;
                return None;
            };
            total += excess;
            per_site[i] = excess;
        }
        Some(Score {
            per_site,
            total,
            worsens: false,
        })
    }
}

/// Appends the stored index of every element index of a phase: one call per phase, so that
/// the map's own loop is compiled for its family.
type MapPhase<'m> = dyn Fn(&[i64], &mut Vec<i64>) + 'm;

/// Excess wavefronts of one site with every element index mapped by `map`.
pub(crate) fn site_excess(config: &BankConfig, site: &SitePattern, map: &MapPhase) -> u64 {
    site_excess_within(config, site, map, u64::MAX, &mut Buffers::default()).unwrap_or(u64::MAX)
}

/// The per-phase vectors of one scoring, allocated once for all its sites.
#[derive(Default)]
struct Buffers {
    mapped: Vec<i64>,
    lanes: Vec<Option<i64>>,
    words: Vec<i64>,
}

/// [`site_excess`], or `None` once it exceeds `limit`.
fn site_excess_within(
    config: &BankConfig,
    site: &SitePattern,
    map: &MapPhase,
    limit: u64,
    buffers: &mut Buffers,
) -> Option<u64> {
    let units = site.units;
    let fast = FastPhases::new(config, units.unit_bytes);
    let Buffers {
        mapped,
        lanes,
        words,
    } = buffers;
    let mut rows = [0u64; 64];
    let mut excess = 0u64;
    for (phase, weight) in site.phases() {
        mapped.clear();
        map(phase, mapped);
        let phase_excess = match &fast {
            Some(fast) => {
                words.clear();
                words.extend(mapped.iter().map(|&e| fast.word(units.of(e))));
                fast.excess(words, &mut rows)
            }
            None => None,
        };
        let phase_excess = phase_excess.unwrap_or_else(|| {
            lanes.clear();
            lanes.extend(mapped.iter().map(|&e| Some(units.of(e))));
            let request = Request {
                elem_bytes: units.unit_bytes,
                lanes,
            };
            simulate(config, &request).excess()
        });
        excess = excess.saturating_add(weight * u64::from(phase_excess));
        if excess > limit {
            return None;
        }
    }
    Some(excess)
}

/// The bank model for the phases solvers score by the thousand, where every lane of a phase
/// is active and touches whole words of power-of-two banks (at most 64 of them): the excess
/// of a phase is the most distinct words in one bank, less one. Anything else goes through
/// [`simulate`], as does a phase whose words span more than 64 rows of banks.
struct FastPhases {
    unit_bytes: i64,
    width_log2: u32,
    banks_log2: u32,
    words_per_lane: i64,
}

impl FastPhases {
    fn new(config: &BankConfig, unit_bytes: u32) -> Option<Self> {
        let (banks, width) = (config.banks, config.bank_width);
        let whole_words = unit_bytes > 0
            && (unit_bytes.is_multiple_of(width) || width.is_multiple_of(unit_bytes));
        (banks.is_power_of_two() && banks <= 64 && width.is_power_of_two() && whole_words).then(
            || FastPhases {
                unit_bytes: i64::from(unit_bytes),
                width_log2: width.trailing_zeros(),
                banks_log2: banks.trailing_zeros(),
                words_per_lane: i64::from((unit_bytes / width).max(1)),
            },
        )
    }

    /// The first word of unit `unit`.
    fn word(&self, unit: i64) -> i64 {
        unit.wrapping_mul(self.unit_bytes) >> self.width_log2
    }

    /// The excess wavefronts of a phase whose lanes start at `words`, `None` when they span
    /// too many rows of banks (or none: then the phase is empty). `rows` holds each bank's
    /// rows of words: all zero before and after.
    fn excess(&self, words: &[i64], rows: &mut [u64; 64]) -> Option<u32> {
        let low = *words.iter().min()?;
        let high = words.iter().max()? + self.words_per_lane - 1;
        if high.checked_sub(low)? >> self.banks_log2 >= 64 {
            return None;
        }
        let bank_mask = (1i64 << self.banks_log2) - 1;
        let mut touched = 0u64;
        for &first in words {
            for word in first..first + self.words_per_lane {
                let bank = (word & bank_mask) as usize;
                rows[bank] |= 1 << ((word - low) >> self.banks_log2);
                touched |= 1 << bank;
            }
        }
        let mut degree = 0;
        while touched != 0 {
            let bank = &mut rows[touched.trailing_zeros() as usize];
            degree = degree.max(bank.count_ones());
            *bank = 0;
            touched &= touched - 1;
        }
        Some(degree - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Units;
    use crate::solve::maps::{BitVectorXor, Identity};

    #[test]
    fn a_swizzle_clears_the_transpose_column_read() {
        let config = BankConfig::default();
        // tile[tx][j] for j < 32 and tile[j][tx]: column and row reads of a 32 × 32 tile.
        let column: Vec<Vec<Option<i64>>> = (0..32)
            .map(|j| (0..32).map(|l| Some(32 * l + j)).collect())
            .collect();
        let row: Vec<Vec<Option<i64>>> = (0..32)
            .map(|j| (0..32).map(|l| Some(32 * j + l)).collect())
            .collect();
        let sites = [
            SitePattern::from_requests(Units::whole(4), &config, column.iter().map(|r| &r[..]))
                .expect("small"),
            SitePattern::from_requests(Units::whole(4), &config, row.iter().map(|r| &r[..]))
                .expect("small"),
        ];
        let scorer = Scorer::new(config, &sites);
        assert_eq!(scorer.before(), &[32 * 31, 0]);
        let swizzle = BitVectorXor::new(0, 5, 31, 5, 1024).expect("valid");
        let score = scorer.score(&swizzle);
        assert_eq!(score.per_site, vec![0, 0]);
        assert!(!score.worsens);
        assert_eq!(scorer.score(&Identity::new(1024)).total, 992);
        // Sending everything to one bank makes the row read worse.
        let worse = scorer.score_fn(&|e| (e % 32) * 32 + e / 32);
        assert!(worse.worsens);
        assert_eq!(worse.per_site, vec![0, 992]);
    }
}
