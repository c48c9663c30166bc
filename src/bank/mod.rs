//! The exact bank model (docs/ARCHITECTURE.md §4): what one warp's shared-memory access costs.
//!
//! Independent of parsing: the input is a [`Request`] (element size, and per lane an element
//! index or `None` for an inactive lane), the output a [`Cost`] in wavefronts. The rules:
//!
//! - An active lane with element index `idx` touches the bank-width words covering bytes
//!   `[idx·E, idx·E + E)`. Negative indices (intermediate analysis results) are allowed: words
//!   are floored and banks taken with Euclidean remainder, so word −1 is in the last bank.
//! - The warp is split into **phases** of `min(warp, banks·bank_width / E')` consecutive lanes
//!   (at least 1), where `E'` is `E` rounded up to a power of two. With 32 banks of 4 bytes:
//!   `E ≤ 4` → 1 phase of 32 lanes, `E = 8` → 2 of 16, `E = 16` → 4 of 8, and `E = 12` is
//!   treated like 16 (4 phases of 8) because the hardware splits by the power-of-two access
//!   width. `banks: 16` gives half-warp phases for `E ≤ 4`.
//! - In a phase, bank(word) = word mod banks; identical words are merged (broadcast), and the
//!   phase costs the largest number of distinct words in one bank. A phase without an active
//!   lane costs nothing and is not counted as ideal.
//! - conflict degree = max over phases, wavefronts = sum, ideal = phases with an active lane.
//!
//! [`simulate`] runs for every warp of every access of every loop iteration, so the usual
//! case allocates nothing and is linear in the lanes: with at most 64 banks and a phase whose
//! words lie within 64 rows of banks, each bank's distinct words are bits of one `u64`. Other
//! phases sort their words (on the stack up to 128 words).
pub mod dmm;

/// Shared-memory geometry. The defaults are every NVIDIA GPU since Maxwell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BankConfig {
    /// Number of banks: 32, or 16 for Tesla-class parts (half-warp phases). Any positive
    /// count works (the DMM experiments use up to 256); above 64 the simulator sorts.
    pub banks: u32,
    /// Bytes per bank word: 4, or 8 for Kepler's 8-byte mode.
    pub bank_width: u32,
    /// Lanes per warp.
    pub warp: u32,
}

impl Default for BankConfig {
    fn default() -> Self {
        BankConfig {
            banks: 32,
            bank_width: 4,
            warp: 32,
        }
    }
}

/// One warp executing one access instruction: for each lane, its element index, or None when
/// the lane is inactive.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Element size in bytes (`sizeof` of the array's element type); 0 is treated as 1.
    pub elem_bytes: u32,
    /// Lane `l` is `lanes[l]`; normally `warp` entries (more are further phases).
    pub lanes: &'a [Option<i64>],
}

/// What a request costs, in wavefronts (shared-memory passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cost {
    /// The worst phase's wavefronts: 1 is conflict-free, 32 is a 32-way conflict; 0 when no
    /// lane is active.
    pub conflict_degree: u32,
    /// Wavefronts over all phases.
    pub wavefronts: u32,
    /// Wavefronts without conflicts: the number of phases with an active lane.
    pub ideal_wavefronts: u32,
    /// A witness of the worst phase's conflict, `None` when the request is conflict-free.
    pub collision: Option<Collision>,
}

impl Cost {
    /// Wavefronts lost to bank conflicts: what Nsight Compute counts as bank conflicts.
    pub fn excess(&self) -> u32 {
        self.wavefronts.saturating_sub(self.ideal_wavefronts)
    }
}

/// Two lanes that hit the same bank with different words in the worst phase (for diagnostics).
///
/// The worst phase is the first one with the highest cost; the pair is the lexicographically
/// lowest `(a, b)`, `a ≤ b`, over all its banks (ties: the lowest bank). `a == b` only when one
/// lane's element spans two words of one bank (elements wider than `banks·bank_width`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collision {
    pub lanes: (u32, u32),
    pub bank: u32,
    /// The bank-width word indices (byte address / bank_width) of lanes `a` and `b`.
    pub words: (i64, i64),
}

/// Costs one warp request under the rules in the module documentation.
///
/// Allocates only for a phase that touches more than 128 words and either has more than 64
/// banks or spans 64 rows of banks or more (8 KiB with 32 × 4 B); then in proportion to the
/// words touched.
pub fn simulate(config: &BankConfig, request: &Request) -> Cost {
    evaluate(config, request, true)
}

/// Lanes per phase for elements of `elem_bytes` bytes (see the module documentation).
pub fn lanes_per_phase(config: &BankConfig, elem_bytes: u32) -> usize {
    Geometry::new(config, elem_bytes).lanes_per_phase
}

/// [`simulate`], with the collision search left out when `witness` is false (the DMM view
/// needs only the degree).
fn evaluate(config: &BankConfig, request: &Request, witness: bool) -> Cost {
    let geometry = Geometry::new(config, request.elem_bytes);
    let mut cost = Cost::default();
    for (phase, lanes) in request.lanes.chunks(geometry.lanes_per_phase).enumerate() {
        let first_lane = (phase * geometry.lanes_per_phase) as u32;
        let degree = geometry.phase_degree(lanes);
        if degree == 0 {
            continue;
        }
        cost.wavefronts = cost.wavefronts.saturating_add(degree);
        cost.ideal_wavefronts = cost.ideal_wavefronts.saturating_add(1);
        if degree > cost.conflict_degree {
            cost.conflict_degree = degree;
            if witness && degree > 1 {
                cost.collision = geometry.lowest_collision(lanes, first_lane);
            }
        }
    }
    cost
}

/// Up to this many banks, a phase's distinct words are bit sets on the stack.
const MASK_BANKS: usize = 64;
/// A phase touching at most this many words is sorted on the stack when bit sets do not apply.
const STACK_ENTRIES: usize = 128;

/// The sizes one request is simulated with, normalized so that nothing divides by zero.
struct Geometry {
    banks: u32,
    bank_width: u32,
    elem_bytes: u32,
    lanes_per_phase: usize,
    /// The words every element covers, or an upper bound on them when `may_straddle`.
    max_words_per_lane: u32,
    /// Whether elements can start inside a word (sizes like 3 or 12 with 8-byte words).
    may_straddle: bool,
    /// Shifts instead of divisions for power-of-two sizes: a division per word would cost more
    /// than everything else.
    banks_log2: Option<u32>,
    width_log2: Option<u32>,
}

impl Geometry {
    fn new(config: &BankConfig, elem_bytes: u32) -> Self {
        let banks = config.banks.max(1);
        let bank_width = config.bank_width.max(1);
        let elem_bytes = elem_bytes.max(1);
        let phase_bytes = u64::from(banks) * u64::from(bank_width);
        let lanes_per_phase = (phase_bytes / u64::from(elem_bytes).next_power_of_two())
            .clamp(1, u64::from(config.warp.max(1)));
        let max_words_per_lane = if elem_bytes.is_multiple_of(bank_width) {
            // Every element starts on a word boundary.
            elem_bytes / bank_width
        } else if bank_width.is_multiple_of(elem_bytes) {
            // No element straddles a word boundary.
            1
        } else {
            elem_bytes / bank_width + 2
        };
        Geometry {
            banks,
            bank_width,
            elem_bytes,
            lanes_per_phase: usize::try_from(lanes_per_phase).unwrap_or(usize::MAX),
            max_words_per_lane,
            may_straddle: !elem_bytes.is_multiple_of(bank_width)
                && !bank_width.is_multiple_of(elem_bytes),
            banks_log2: banks.is_power_of_two().then(|| banks.trailing_zeros()),
            width_log2: bank_width
                .is_power_of_two()
                .then(|| bank_width.trailing_zeros()),
        }
    }

    /// The first word an element covers and how many. Byte addresses wrap at 2^64, which
    /// keeps power-of-two bank numbers exact; no shared array comes near that.
    fn words(&self, index: i64) -> (i64, u32) {
        let byte = index.wrapping_mul(i64::from(self.elem_bytes));
        let width = i64::from(self.bank_width);
        let (first, offset) = match self.width_log2 {
            Some(log2) => (byte >> log2, byte & (width - 1)),
            None => (byte.div_euclid(width), byte.rem_euclid(width)),
        };
        if !self.may_straddle {
            return (first, self.max_words_per_lane);
        }
        let last = (offset as u64 + u64::from(self.elem_bytes) - 1) / u64::from(self.bank_width);
        (first, (last as u32 + 1).min(self.max_words_per_lane))
    }

    fn bank(&self, word: i64) -> u32 {
        match self.banks_log2 {
            Some(_) => (word & i64::from(self.banks - 1)) as u32,
            None => word.rem_euclid(i64::from(self.banks)) as u32,
        }
    }

    /// Which row of banks `word` is in, counted from `low` (≤ word).
    fn row(&self, word: i64, low: i64) -> u64 {
        let offset = word.wrapping_sub(low) as u64;
        match self.banks_log2 {
            Some(log2) => offset >> log2,
            None => offset / u64::from(self.banks),
        }
    }

    /// Calls `f(lane, word)` for every word of every active lane, lanes in order, each lane's
    /// words ascending.
    fn for_each_word(&self, lanes: &[Option<i64>], first_lane: u32, mut f: impl FnMut(u32, i64)) {
        for (offset, index) in lanes.iter().enumerate() {
            if let Some(index) = *index {
                let (first, count) = self.words(index);
                for k in 0..count {
                    f(first_lane + offset as u32, first.wrapping_add(i64::from(k)));
                }
            }
        }
    }

    /// The cost of one phase: the most distinct words in one bank, 0 when no lane is active.
    fn phase_degree(&self, lanes: &[Option<i64>]) -> u32 {
        if let Some(degree) = self.conflict_free_degree(lanes) {
            return degree;
        }
        // Words grow with the index, so the extreme indices bound the words, unless a byte
        // address overflows (then the sort below handles it).
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for &index in lanes.iter().flatten() {
            first = first.min(index);
            last = last.max(index);
        }
        if first > last {
            return 0; // no active lane
        }
        let elem_bytes = i64::from(self.elem_bytes);
        let in_range =
            first.checked_mul(elem_bytes).is_some() && last.checked_mul(elem_bytes).is_some();
        let (low, _) = self.words(first);
        let (high, count) = self.words(last);
        let span = i128::from(high) + i128::from(count) - 1 - i128::from(low);
        if in_range && self.banks as usize <= MASK_BANKS && span < 64 * i128::from(self.banks) {
            let mut masks = [0u64; MASK_BANKS];
            self.mask_degree(lanes, low, &mut masks[..self.banks as usize])
        } else {
            self.sorted_degree(lanes)
        }
    }

    /// The usual request, in one pass: with one word per lane, a phase in which no bank
    /// holds two different words costs 1 (0 without an active lane). `None` when a bank does,
    /// or for other geometries: then the passes below count.
    fn conflict_free_degree(&self, lanes: &[Option<i64>]) -> Option<u32> {
        let (Some(_), Some(width_log2), 1, false) = (
            self.banks_log2,
            self.width_log2,
            self.max_words_per_lane,
            self.may_straddle,
        ) else {
            return None;
        };
        if self.banks as usize > MASK_BANKS {
            return None;
        }
        let elem_bytes = i64::from(self.elem_bytes);
        let bank_mask = i64::from(self.banks - 1);
        let mut seen = 0u64;
        let mut words = [0i64; MASK_BANKS];
        for index in lanes.iter().flatten() {
            // The word as `mask_degree` computes it.
            let word = index.wrapping_mul(elem_bytes) >> width_log2;
            let bank = (word & bank_mask) as usize;
            if seen & (1 << bank) == 0 {
                seen |= 1 << bank;
                words[bank] = word;
            } else if words[bank] != word {
                return None;
            }
        }
        Some(u32::from(seen != 0))
    }

    /// The common case: the phase's words lie within 64 rows of banks above `low`, so the
    /// distinct words of bank b are the set bits of `masks[b]`, bit `(word − low) / banks`.
    /// Broadcast is free: a repeated word sets the same bit. `masks` come zeroed.
    fn mask_degree(&self, lanes: &[Option<i64>], low: i64, masks: &mut [u64]) -> u32 {
        // Banks holding two or more words; usually none, and then nothing is counted.
        let mut shared = 0u64;
        let mut mark = |bank: u32, row: u64| {
            let mask = &mut masks[bank as usize];
            *mask |= 1 << row;
            shared |= u64::from(*mask & mask.wrapping_sub(1) != 0) << bank;
        };
        match (self.banks_log2, self.width_log2, self.max_words_per_lane) {
            // The usual geometry (power-of-two banks and width, one word per element), which
            // runs for every request: the same words as `for_each_word`, without its general
            // cases in the loop.
            (Some(banks_log2), Some(width_log2), 1) if !self.may_straddle => {
                let elem_bytes = i64::from(self.elem_bytes);
                let bank_mask = i64::from(self.banks - 1);
                for index in lanes.iter().flatten() {
                    let word = index.wrapping_mul(elem_bytes) >> width_log2;
                    let row = (word.wrapping_sub(low) as u64) >> banks_log2;
                    mark((word & bank_mask) as u32, row);
                }
            }
            _ => self.for_each_word(lanes, 0, |_, word| {
                mark(self.bank(word), self.row(word, low))
            }),
        }
        let mut degree = 1;
        while shared != 0 {
            degree = degree.max(masks[shared.trailing_zeros() as usize].count_ones());
            shared &= shared - 1;
        }
        degree
    }

    /// Any span: sort the phase's words by bank and word, count the distinct runs.
    fn sorted_degree(&self, lanes: &[Option<i64>]) -> u32 {
        self.with_entries(lanes, 0, |entries| {
            entries.sort_unstable_by_key(|e| (e.bank, e.word));
            entries
                .chunk_by(|p, e| p.bank == e.bank)
                .map(|bank| 1 + bank.windows(2).filter(|w| w[0].word != w[1].word).count())
                .max()
                .unwrap_or(0) as u32
        })
    }

    /// The lowest lane pair of the phase (see [`Collision`]): in each bank the lowest lane
    /// and the lowest lane touching a different word, then the lowest such pair over banks.
    fn lowest_collision(&self, lanes: &[Option<i64>], first_lane: u32) -> Option<Collision> {
        let mut best: Option<Collision> = None;
        let mut consider = |bank: u32, a: Entry, b: Entry| {
            if best.is_none_or(|c| (a.lane, b.lane) < c.lanes) {
                best = Some(Collision {
                    lanes: (a.lane, b.lane),
                    bank,
                    words: (a.word, b.word),
                });
            }
        };
        if self.banks as usize <= MASK_BANKS {
            // First and second distinct word per bank in one pass, in lane order.
            let (mut seen, mut paired) = (0u64, 0u64);
            let mut first = [Entry::EMPTY; MASK_BANKS];
            let mut second = [Entry::EMPTY; MASK_BANKS];
            self.for_each_word(lanes, first_lane, |lane, word| {
                let bank = self.bank(word);
                let bit = 1u64 << bank;
                let entry = Entry { bank, lane, word };
                if seen & bit == 0 {
                    seen |= bit;
                    first[bank as usize] = entry;
                } else if paired & bit == 0 && first[bank as usize].word != word {
                    paired |= bit;
                    second[bank as usize] = entry;
                }
            });
            for bank in 0..self.banks {
                if paired & (1 << bank) != 0 {
                    consider(bank, first[bank as usize], second[bank as usize]);
                }
            }
        } else {
            self.with_entries(lanes, first_lane, |entries| {
                entries.sort_unstable_by_key(|e| (e.bank, e.lane, e.word));
                for run in entries.chunk_by(|p, e| p.bank == e.bank) {
                    if let Some(&b) = run.iter().find(|e| e.word != run[0].word) {
                        consider(run[0].bank, run[0], b);
                    }
                }
            });
        }
        best
    }

    /// Runs `f` on every (bank, lane, word) the phase touches, in a stack buffer when they fit.
    fn with_entries<R>(
        &self,
        lanes: &[Option<i64>],
        first_lane: u32,
        f: impl FnOnce(&mut [Entry]) -> R,
    ) -> R {
        let bound = lanes.len().saturating_mul(self.max_words_per_lane as usize);
        let mut stack = [Entry::EMPTY; STACK_ENTRIES];
        let mut heap = Vec::new();
        let buffer = if bound <= STACK_ENTRIES {
            &mut stack[..bound]
        } else {
            heap.resize(bound, Entry::EMPTY);
            &mut heap[..]
        };
        let mut used = 0;
        self.for_each_word(lanes, first_lane, |lane, word| {
            buffer[used] = Entry {
                bank: self.bank(word),
                lane,
                word,
            };
            used += 1;
        });
        f(&mut buffer[..used])
    }
}

/// One word a lane touches, with its bank.
#[derive(Clone, Copy)]
struct Entry {
    bank: u32,
    lane: u32,
    word: i64,
}

impl Entry {
    const EMPTY: Entry = Entry {
        bank: 0,
        lane: 0,
        word: 0,
    };
}

#[cfg(test)]
mod tests;
