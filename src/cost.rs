//! Conflict figures of one access: its affine site evaluated for every warp of the block and
//! every loop iteration, each warp request through the bank model. The same enumeration gives
//! the solvers their input, [`SitePattern`].
use crate::affine::{lane_thread, Atom, AtomValues, FunctionAffine, LoopPoint, Site, WithThread};
use crate::bank::{lanes_per_phase, simulate, BankConfig, Collision, Request};
use crate::parse::{Access, SharedArray};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// Loop iterations beyond which an access is not simulated (per access, all loops together).
pub const MAX_ITERATIONS: usize = 1 << 14;

/// The figures Nsight Compute reports, summed over all warps of one block and all iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteCost {
    /// The worst request's degree.
    pub conflict_degree: u32,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// The worst request, for diagnostics.
    pub worst: Option<WorstRequest>,
    /// Unknown uniform values (blockIdx, parameters) the figures were evaluated with.
    pub assumed_zero: Vec<String>,
}

impl SiteCost {
    pub fn excess(&self) -> u64 {
        self.wavefronts - self.ideal_wavefronts
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorstRequest {
    pub warp: u32,
    pub loop_values: Vec<(String, i64)>,
    pub collision: Collision,
}

/// Loop values, with every unknown uniform taken as 0.
struct Point<'a> {
    loops: &'a LoopPoint,
}

impl AtomValues for Point<'_> {
    fn value(&self, atom: &Atom) -> Option<i64> {
        match atom {
            Atom::Uniform(_) => Some(0),
            other => self.loops.value(other),
        }
    }
}

/// How one access's element indices become the bank model's units: member `.y` of a
/// `float4` element `e` is the 4-byte unit `4·e + 1`; a whole element is itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// Bytes one lane touches.
    pub unit_bytes: u32,
    /// Units per element.
    pub scale: i64,
    /// Which unit of the element the access touches.
    pub component: i64,
}

impl Units {
    /// A whole element of `bytes` bytes per lane.
    pub fn whole(bytes: u32) -> Self {
        Units {
            unit_bytes: bytes,
            scale: 1,
            component: 0,
        }
    }

    /// The unit index the bank model sees for element `element`.
    pub fn of(&self, element: i64) -> i64 {
        element
            .wrapping_mul(self.scale)
            .wrapping_add(self.component)
    }
}

/// Every warp request of one access: each loop point (outermost loop slowest) times each warp
/// of the block, with per lane the element index, `None` for an inactive lane or one past the
/// end of the block. The one enumeration behind [`measure`] and the solvers' [`SitePattern`].
pub struct SiteRequests<'a> {
    affine: &'a FunctionAffine,
    site: &'a Site,
    units: Units,
    points: Vec<LoopPoint>,
    warps: u32,
    warp_size: u32,
    assumed_zero: Vec<String>,
}

impl<'a> SiteRequests<'a> {
    /// The requests of `access`, or why it cannot be simulated.
    pub fn new(
        affine: &'a FunctionAffine,
        site: &'a Site,
        array: &SharedArray,
        access: &Access,
        config: &BankConfig,
    ) -> Result<Self, String> {
        if let Some(why) = site.index.unknown() {
            return Err(format!("index is {why}"));
        }
        let elem_bytes = array
            .elem_bytes
            .ok_or_else(|| format!("element type `{}` has no known size", array.elem_type))?;
        let (unit_bytes, scale, component) = match &access.member {
            None => (elem_bytes, 1, 0),
            Some(member) => vector_component(&array.elem_type, elem_bytes, member)
                .ok_or_else(|| format!("member access `{member}` is not simulated"))?,
        };
        let unit_bytes = u32::try_from(unit_bytes).map_err(|_| "element too large".to_string())?;
        let points = affine.loop_points(&site.loops, MAX_ITERATIONS)?;
        let block = affine.block();
        let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
        let warps = threads.div_ceil(u64::from(config.warp)) as u32;
        let mut assumed_zero: Vec<String> = site
            .index
            .atoms()
            .into_iter()
            .chain(site.active.atoms())
            .filter(|a| matches!(a, Atom::Uniform(_)))
            .map(ToString::to_string)
            .collect();
        assumed_zero.sort();
        assumed_zero.dedup();
        Ok(SiteRequests {
            affine,
            site,
            units: Units {
                unit_bytes,
                scale,
                component,
            },
            points,
            warps,
            warp_size: config.warp,
            assumed_zero,
        })
    }

    pub fn units(&self) -> Units {
        self.units
    }

    /// Unknown uniform values (blockIdx, parameters), evaluated as 0.
    pub fn assumed_zero(&self) -> &[String] {
        &self.assumed_zero
    }

    /// Calls `f(warp, loop point, element index per lane)` for every request.
    pub fn for_each(&self, mut f: impl FnMut(u32, &LoopPoint, &[Option<i64>])) {
        let block = self.affine.block();
        let mut lanes: Vec<Option<i64>> = Vec::with_capacity(self.warp_size as usize);
        for point in &self.points {
            let values = Point { loops: point };
            for warp in 0..self.warps {
                lanes.clear();
                for lane in 0..self.warp_size {
                    let Some(thread) = lane_thread(block, self.warp_size, warp, lane) else {
                        lanes.push(None);
                        continue;
                    };
                    let at = WithThread {
                        thread,
                        rest: &values,
                    };
                    // An unknown condition counts the lane: the figures are an upper bound then.
                    let active = self.site.active.eval(&at) != Some(0);
                    lanes.push(if active {
                        self.site.index.eval(&at)
                    } else {
                        None
                    });
                }
                f(warp, point, &lanes);
            }
        }
    }
}

/// What one access costs, or why it cannot be simulated.
pub fn measure(
    affine: &FunctionAffine,
    site: &Site,
    array: &SharedArray,
    access: &Access,
    config: &BankConfig,
) -> Result<SiteCost, String> {
    let requests = SiteRequests::new(affine, site, array, access, config)?;
    let units = requests.units();
    let mut cost = SiteCost {
        conflict_degree: 0,
        wavefronts: 0,
        ideal_wavefronts: 0,
        worst: None,
        assumed_zero: requests.assumed_zero().to_vec(),
    };
    let mut lanes: Vec<Option<i64>> = Vec::with_capacity(config.warp as usize);
    requests.for_each(|warp, point, elements| {
        lanes.clear();
        lanes.extend(elements.iter().map(|e| e.map(|e| units.of(e))));
        let request = Request {
            elem_bytes: units.unit_bytes,
            lanes: &lanes,
        };
        let result = simulate(config, &request);
        cost.wavefronts += u64::from(result.wavefronts);
        cost.ideal_wavefronts += u64::from(result.ideal_wavefronts);
        if result.conflict_degree > cost.conflict_degree {
            cost.conflict_degree = result.conflict_degree;
            cost.worst = result.collision.map(|collision| WorstRequest {
                warp,
                loop_values: point.0.iter().map(|(a, v)| (a.to_string(), *v)).collect(),
                collision,
            });
        }
    });
    Ok(cost)
}

/// Element indices a [`SitePattern`] may hold (all phases together): 32 MiB, plus about
/// 40 bytes of bookkeeping per distinct phase.
pub const MAX_PATTERN_ELEMENTS: usize = 1 << 22;

/// The warp requests of one access as the solvers score them: split into the bank model's
/// phases, each phase reduced to the sorted set of element indices its active lanes touch
/// (lane order and repeated indices do not change a phase's cost), identical phases stored
/// once with the number of times they occur. So memory grows with the distinct phases, not
/// with loop points × warps; a pattern with more than [`MAX_PATTERN_ELEMENTS`] indices in
/// distinct phases is refused rather than held.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        let mut builder = PatternBuilder::new(requests.units(), config);
        let mut result = Ok(());
        requests.for_each(|_, _, lanes| {
            if result.is_ok() {
                result = builder.add(lanes);
            }
        });
        result.map(|()| builder.finish())
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

/// `.x`/`.y`/`.z`/`.w` of a vector element: (component bytes, components per element, which).
fn vector_component(elem_type: &str, elem_bytes: u64, member: &str) -> Option<(u64, i64, i64)> {
    let count = elem_type
        .trim_end()
        .chars()
        .last()
        .and_then(|c| c.to_digit(10))
        .filter(|n| (2..=4).contains(n))?;
    let which = match member {
        ".x" => 0,
        ".y" => 1,
        ".z" => 2,
        ".w" => 3,
        _ => return None,
    };
    if which >= count {
        return None;
    }
    // float3 is 12 bytes of three 4-byte components; float4 16 of four.
    let component = elem_bytes / u64::from(count);
    let per_element = (elem_bytes / component) as i64;
    Some((component, per_element, i64::from(which)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_split_phases_and_count_repeats() {
        let config = BankConfig::default();
        // Doubles: two phases of 16 lanes; the second half of each request is inactive.
        let column: Vec<Option<i64>> = (0..32).map(|l| (l < 16).then_some(32 * l)).collect();
        let shifted: Vec<Option<i64>> = (0..32).map(|l| (l < 16).then_some(32 * l + 1)).collect();
        let requests = [column.as_slice(), &shifted, &column];
        let pattern =
            SitePattern::from_requests(Units::whole(8), &config, requests).expect("small pattern");
        assert_eq!(pattern.len(), 2);
        let phases: Vec<(Vec<i64>, u64)> = pattern.phases().map(|(p, w)| (p.to_vec(), w)).collect();
        assert_eq!(phases[0].0, (0..16).map(|l| 32 * l).collect::<Vec<_>>());
        assert_eq!(phases[0].1, 2);
        assert_eq!(phases[1].1, 1);
        assert_eq!(pattern.elements().len(), 32);
    }

    #[test]
    fn lane_order_and_broadcast_do_not_make_a_phase_distinct() {
        let config = BankConfig::default();
        let forward: Vec<Option<i64>> = (0..32).map(Some).collect();
        let backward: Vec<Option<i64>> = (0..32).rev().map(Some).collect();
        let doubled: Vec<Option<i64>> = (0..32).map(|l| Some(l / 2)).collect();
        let pattern = SitePattern::from_requests(
            Units::whole(4),
            &config,
            [forward.as_slice(), &backward, &doubled],
        )
        .expect("small pattern");
        assert_eq!(pattern.len(), 2);
        assert_eq!(pattern.phases().map(|(_, w)| w).sum::<u64>(), 3);
        let units = Units {
            unit_bytes: 4,
            scale: 4,
            component: 1,
        };
        assert_eq!(units.of(3), 13);
    }

    #[test]
    fn patterns_beyond_the_bound_are_refused() {
        let config = BankConfig::default();
        let phases = MAX_PATTERN_ELEMENTS / 32;
        let requests: Vec<Vec<Option<i64>>> = (0..=phases as i64)
            .map(|r| (0..32).map(|l| Some(32 * r + l)).collect())
            .collect();
        let fits = SitePattern::from_requests(
            Units::whole(4),
            &config,
            requests[..phases].iter().map(Vec::as_slice),
        )
        .expect("exactly at the bound");
        assert_eq!(fits.elements().len(), MAX_PATTERN_ELEMENTS);
        let refused = SitePattern::from_requests(
            Units::whole(4),
            &config,
            requests.iter().map(Vec::as_slice),
        );
        assert!(refused.is_err());
        // Repeats of stored phases cost no memory.
        let repeated = std::iter::repeat_n(requests[0].as_slice(), phases + 1);
        let pattern =
            SitePattern::from_requests(Units::whole(4), &config, repeated).expect("one phase");
        assert_eq!(pattern.len(), 1);
    }
}
