//! The warp requests of one access as the solvers score them.
use super::*;

pub const MAX_PATTERN_ELEMENTS: usize = 1 << 22;

/// The warp requests of one access as the solvers score them: split into the bank model's
/// phases, each phase reduced to the sorted set of element indices its active lanes touch
/// (lane order and repeated indices do not change a phase's cost), identical phases stored
/// once with the number of times they occur. So memory grows with the distinct phases, not
/// with loop points × warps; a pattern with more than [`MAX_PATTERN_ELEMENTS`] indices in
/// distinct phases is refused rather than held.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SitePattern {
    pub units: Units,
    elements: Vec<i64>,
    /// Phase `i` is `elements[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    weights: Vec<u64>,
}

impl SitePattern {
    /// The pattern of an access's requests (see [`SiteRequests`]).
    pub fn collect(requests: &SiteRequests, config: &BankConfig) -> Result<Self, String> {
        if let Some(member) = requests.varying_member() {
            return Err(format!(
                "member subscripts `{member}` vary: a map moves whole elements and is not \
                 scored on the word of the element each lane touches"
            ));
        }
        let mut builder = PatternBuilder::new(requests.units(), config);
        let mut result = Ok(());
        requests.for_each(|_, _, lanes| {
            if result.is_ok() {
                result = builder.add(lanes);
            }
        });
        let pattern = result.map(|()| builder.finish())?;
        // A map moves aligned vectors whole; a vector elsewhere would be split by it (and
        // faults on the GPU).
        let span = pattern.units.span;
        if let Some(e) = pattern.elements.iter().find(|e| e.rem_euclid(span) != 0) {
            return Err(format!(
                "a {}-byte vector starts at element {e}, not a multiple of {span}",
                pattern.units.unit_bytes
            ));
        }
        Ok(pattern)
    }

    /// The pattern of explicit requests (each a warp's element index per lane).
    pub fn from_requests<'r>(
        units: Units,
        config: &BankConfig,
        requests: impl IntoIterator<Item = &'r [Option<i64>]>,
    ) -> Result<Self, String> {
        let mut builder = PatternBuilder::new(units, config);
        for lanes in requests {
            builder.add(lanes)?;
        }
        Ok(builder.finish())
    }

    /// Every distinct phase with the number of times it occurs, in order of first occurrence.
    pub fn phases(&self) -> impl Iterator<Item = (&[i64], u64)> + '_ {
        self.starts
            .windows(2)
            .zip(&self.weights)
            .map(|(w, &weight)| (&self.elements[w[0]..w[1]], weight))
    }

    /// Distinct phases.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Every element index of every phase.
    pub fn elements(&self) -> &[i64] {
        &self.elements
    }
}

/// Deduplicates phases as requests stream in. The index holds hashes, not copies of the
/// phases: each distinct phase is stored once, in the pattern.
struct PatternBuilder {
    lanes_per_phase: usize,
    /// Hash of a phase → the last stored phase with that hash.
    index: HashMap<u64, usize>,
    /// Per stored phase, the previous one with the same hash.
    same_hash: Vec<Option<usize>>,
    pattern: SitePattern,
    phase: Vec<i64>,
}

impl PatternBuilder {
    fn new(units: Units, config: &BankConfig) -> Self {
        PatternBuilder {
            lanes_per_phase: lanes_per_phase(config, units.unit_bytes),
            index: HashMap::new(),
            same_hash: Vec::new(),
            pattern: SitePattern {
                units,
                elements: Vec::new(),
                starts: vec![0],
                weights: Vec::new(),
            },
            phase: Vec::new(),
        }
    }

    fn stored(&self, i: usize) -> &[i64] {
        &self.pattern.elements[self.pattern.starts[i]..self.pattern.starts[i + 1]]
    }

    fn add(&mut self, lanes: &[Option<i64>]) -> Result<(), String> {
        for chunk in lanes.chunks(self.lanes_per_phase) {
            self.phase.clear();
            self.phase.extend(chunk.iter().flatten());
            if self.phase.is_empty() {
                continue;
            }
            self.phase.sort_unstable();
            self.phase.dedup();
            let mut hasher = DefaultHasher::new();
            self.phase.hash(&mut hasher);
            let hash = hasher.finish();
            let mut candidate = self.index.get(&hash).copied();
            while let Some(i) = candidate {
                if self.stored(i) == self.phase.as_slice() {
                    break;
                }
                candidate = self.same_hash[i];
            }
            if let Some(i) = candidate {
                self.pattern.weights[i] += 1;
                continue;
            }
            if self.pattern.elements.len() + self.phase.len() > MAX_PATTERN_ELEMENTS {
                return Err(format!(
                    "more than {MAX_PATTERN_ELEMENTS} element indices in distinct phases"
                ));
            }
            let i = self.pattern.weights.len();
            self.same_hash.push(self.index.insert(hash, i));
            self.pattern.elements.extend_from_slice(&self.phase);
            self.pattern.starts.push(self.pattern.elements.len());
            self.pattern.weights.push(1);
        }
        Ok(())
    }

    fn finish(self) -> SitePattern {
        self.pattern
    }
}
