//! Conflict figures of one access: its affine site evaluated for every warp of the block and
//! every loop iteration, each warp request through the bank model.
use crate::affine::{lane_thread, Atom, AtomValues, FunctionAffine, LoopPoint, Site, WithThread};
use crate::bank::{simulate, BankConfig, Collision, Request};
use crate::parse::{Access, SharedArray};

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

/// What one access costs, or why it cannot be simulated.
pub fn measure(
    affine: &FunctionAffine,
    site: &Site,
    array: &SharedArray,
    access: &Access,
    config: &BankConfig,
) -> Result<SiteCost, String> {
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
    let mut cost = SiteCost {
        conflict_degree: 0,
        wavefronts: 0,
        ideal_wavefronts: 0,
        worst: None,
        assumed_zero,
    };
    let mut lanes: Vec<Option<i64>> = Vec::with_capacity(config.warp as usize);
    for point in &points {
        let values = Point { loops: point };
        for warp in 0..warps {
            lanes.clear();
            for lane in 0..config.warp {
                let Some(thread) = lane_thread(block, config.warp, warp, lane) else {
                    lanes.push(None);
                    continue;
                };
                let at = WithThread {
                    thread,
                    rest: &values,
                };
                // An unknown condition counts the lane: the figures are an upper bound then.
                let active = site.active.eval(&at) != Some(0);
                let index = if active { site.index.eval(&at) } else { None };
                lanes.push(index.map(|i| i.wrapping_mul(scale).wrapping_add(component)));
            }
            let request = Request {
                elem_bytes: unit_bytes,
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
        }
    }
    Ok(cost)
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
