//! Conflict figures of one access: its affine site evaluated for every warp of the block and
//! every loop iteration, each warp request through the bank model. The same enumeration gives
//! the solvers their input, [`SitePattern`].
//!
//! - [`pattern`]: the requests of an access as the solvers score them.
//! - [`lanes`]: a site's address evaluated for 32 lanes at once.
mod lanes;
mod pattern;

use crate::affine::{
    lane_thread, Atom, AtomValues, Class, FunctionAffine, LoopId, LoopPoint, LoopValues, Op, Site,
    Sym,
};
use crate::bank::{lanes_per_phase, simulate, BankConfig, Collision, Request};
use crate::parse::{Access, MemberLayout, SharedArray};
use lanes::{LaneGroup, Lanes, Program, GROUP};
pub use pattern::{SitePattern, MAX_PATTERN_ELEMENTS};
use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// Loop iterations beyond which an access is not simulated (per access, all loops together).
pub const MAX_ITERATIONS: usize = 1 << 14;

/// The figures Nsight Compute reports, summed over all warps of one block and all iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteCost {
    /// The worst request's degree.
    pub conflict_degree: u32,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// The worst request, for diagnostics (boxed, as the next below: every access of a file
    /// keeps its figures, and most have neither).
    pub worst: Option<Box<WorstRequest>>,
    /// The unknown uniform values (blockIdx, parameters, counters of loops with unknown
    /// bounds) and how the figures cover them.
    pub unknown_values: Vec<UnknownValue>,
    /// Loops around the access whose trip counts are unknown: the figures count one of their
    /// iterations (their counters are unknown values).
    pub per_iteration_of: Vec<String>,
    /// A shift in the index by the integer width or more in some lane.
    pub wide_shift: Option<Box<WideShift>>,
    /// The access's class as findings show it: for a form that changes per iteration, the
    /// class of the iteration with the worst request. (Kept here so that a report needs no
    /// affine analysis.)
    pub class: Class,
}

/// A shift whose amount reaches 32 (or is negative) in some lane: C++ leaves it undefined,
/// the GPU clamps it to 32, and the figures are the GPU's. Most often a precedence slip:
/// `x >> A + y` shifts by `A + y`.
#[derive(Debug, Clone, PartialEq)]
pub struct WideShift {
    /// The shift amount, as the analysis reads it.
    pub amount: String,
    /// Whether the amount is a sum or difference (`>>` binds looser than `+`).
    pub additive: bool,
    /// The amount one lane reaches, that lane and its warp.
    pub reached: i64,
    pub lane: usize,
    pub warp: u32,
}

/// An unknown uniform value of an access and how its figures cover it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownValue {
    pub name: String,
    pub evaluated: Evaluated,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Evaluated {
    /// It appears only in lane conditions: a lane it could enable counts as active (the
    /// figures are an upper bound).
    InConditions,
    /// It shifts every lane's index alike, by whole banks: any value gives these figures.
    AnyValue,
    /// Every residue modulo `modulus` was evaluated, each far from 0 so that no two lanes
    /// meet by accident (a meeting only merges words): the figures are the worst, at
    /// residue `worst`. Exhaustive, as the index is a polynomial in the value.
    Residues { modulus: i64, worst: i64 },
    /// The same values, for an index that is not a polynomial in it: a sample, not a proof.
    Sampled { modulus: i64, worst: i64 },
    /// Too many combinations with the other unknown values: taken as 0.
    Zero,
}

impl std::fmt::Display for Evaluated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Evaluated::InConditions => write!(f, "only in conditions: lanes count as active"),
            Evaluated::AnyValue => write!(f, "any value gives these figures"),
            Evaluated::Residues { modulus, worst } => {
                write!(f, "worst of every residue mod {modulus}: {worst}")
            }
            Evaluated::Sampled { modulus, worst } => write!(
                f,
                "worst of one value per residue mod {modulus}: {worst} (a sample, not every value)"
            ),
            Evaluated::Zero => write!(f, "taken as 0 (too many combinations to evaluate)"),
        }
    }
}

/// How far from 0 an unknown value's residues are taken (a multiple of every modulus).
const GENERIC: i64 = 1 << 20;

/// Evaluations of one access (residue combinations × loop points × warps) beyond which the
/// unknown values are taken as 0.
const MAX_REQUESTS: usize = 1 << 21;

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

/// Loop values and the unknown uniforms: in an index, the values of one combination (0 for
/// the others); in a lane condition, unknown.
struct Point<'a> {
    loops: &'a LoopPoint,
    uniforms: Option<&'a [(Atom, i64)]>,
}

impl AtomValues for Point<'_> {
    fn value(&self, atom: &Atom) -> Option<i64> {
        match (atom, self.uniforms) {
            (Atom::Uniform(_), None) => None,
            (Atom::Uniform(_), Some(values)) => Some(
                values
                    .iter()
                    .find(|(a, _)| a == atom)
                    .map_or(0, |(_, v)| *v),
            ),
            (other, _) => self.loops.value(other),
        }
    }
}

/// Whether `sym` is a polynomial in `atom` with integer coefficients (so its value modulo
/// m depends only on `atom` modulo m).
fn polynomial_in(sym: &Sym, atom: &Atom) -> bool {
    let free = |s: &Sym| !s.atoms().contains(&atom);
    match sym {
        Sym::Const(_) | Sym::Atom(_) | Sym::Unknown(_) => true,
        Sym::Neg(v) => polynomial_in(v, atom),
        Sym::Binary(Op::Add | Op::Sub | Op::Mul, l, r) => {
            polynomial_in(l, atom) && polynomial_in(r, atom)
        }
        Sym::Binary(Op::Shl, l, r) => polynomial_in(l, atom) && free(r),
        Sym::Select(c, t, e) => free(c) && polynomial_in(t, atom) && polynomial_in(e, atom),
        other => free(other),
    }
}

/// How one access's element indices become the bank model's units: member `.y` of a
/// `float4` element `e` is the 4-byte unit `4·e + 1`; a `float4` view of a `float` array
/// at element `e` is the 16-byte unit `e / 4`; a whole element is itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Units {
    /// Bytes one lane touches.
    pub unit_bytes: u32,
    /// Units per element.
    pub scale: i64,
    /// Which unit of the element the access touches.
    pub component: i64,
    /// Elements per unit: a vector view's width, else 1. The lanes carry the element its
    /// vector starts at, so that a map on elements applies to them as to any access.
    pub span: i64,
}

impl Units {
    /// A whole element of `bytes` bytes per lane.
    pub fn whole(bytes: u32) -> Self {
        Units {
            unit_bytes: bytes,
            scale: 1,
            component: 0,
            span: 1,
        }
    }

    /// The unit index the bank model sees for element `element`.
    pub fn of(&self, element: i64) -> i64 {
        element
            .div_euclid(self.span.max(1))
            .wrapping_mul(self.scale)
            .wrapping_add(self.component)
    }
}

/// What the lanes of one access carry into the bank model.
struct LaneUnits {
    /// Bytes one lane touches.
    unit_bytes: u64,
    /// Units per element and the unit touched, when the lanes carry element indices.
    scale: i64,
    component: i64,
    /// Elements per unit (see [`Units::span`]).
    span: i64,
    index: Sym,
    varying_member: Option<String>,
    /// Through a vector view: the lanes carry the index of the vector they touch.
    vector_bytes: Option<u64>,
}

impl LaneUnits {
    /// Element indices, each touching unit `component` of `scale` units of `unit_bytes`.
    fn elements(unit_bytes: u64, scale: u64, component: u64, site: &Site) -> Self {
        LaneUnits {
            unit_bytes,
            scale: scale as i64,
            component: component as i64,
            span: 1,
            index: site.index.clone(),
            varying_member: None,
            vector_bytes: None,
        }
    }

    /// A vector of `bytes` bytes per lane, read through a cast pointer: the lanes carry the
    /// element the vector starts at, `span` elements to a vector (an aligned vector starts
    /// at a multiple of them, or the hardware faults).
    fn vectors(bytes: u64, elem_bytes: u64, site: &Site) -> Self {
        let span = (bytes / elem_bytes.max(1)).max(1) as i64;
        LaneUnits {
            unit_bytes: bytes,
            scale: 1,
            component: 0,
            span,
            index: site.index.clone(),
            varying_member: None,
            vector_bytes: Some(bytes),
        }
    }

    /// A member path with subscripts (`.v[t % 4]`, `.m[j][k]`): the unit it touches is
    /// `element · scale + (offset + Σ subscript · stride) / size`. Constant subscripts fold
    /// into the component; otherwise the lanes carry that unit index.
    fn of_member(
        member: &str,
        layout: &MemberLayout,
        elem_bytes: u64,
        site: &Site,
    ) -> Result<Self, String> {
        let size = layout.size;
        let tiles = size > 0
            && elem_bytes.is_multiple_of(size)
            && layout.offset.is_multiple_of(size)
            && layout
                .subscripts
                .iter()
                .all(|(stride, _)| stride.is_multiple_of(size));
        if !tiles {
            return Err(format!("member access `{member}` is not simulated"));
        }
        let component = layout.subscripts.iter().zip(&site.member).fold(
            Sym::Const((layout.offset / size) as i64),
            |sum, ((stride, _), value)| {
                let term = Sym::binary(Op::Mul, value.clone(), Sym::Const((stride / size) as i64));
                Sym::binary(Op::Add, sum, term)
            },
        );
        if let Some(why) = component.unknown() {
            return Err(format!("member subscript is {why}"));
        }
        let scale = elem_bytes / size;
        if let Some(constant) = component.constant() {
            return Ok(LaneUnits {
                component: constant,
                ..LaneUnits::elements(size, scale, 0, site)
            });
        }
        let element_units = Sym::binary(Op::Mul, site.index.clone(), Sym::Const(scale as i64));
        Ok(LaneUnits {
            unit_bytes: size,
            scale: 1,
            span: 1,
            component: 0,
            index: Sym::binary(Op::Add, element_units, component),
            varying_member: Some(member.to_string()),
            vector_bytes: None,
        })
    }
}

/// Every warp request of one access: each loop point (outermost loop slowest) times each warp
/// of the block, with per lane the element index, `None` for an inactive lane or one past the
/// end of the block. The one enumeration behind [`measure`] and the solvers' [`SitePattern`].
///
/// An access whose member subscripts are not constant (`q[i].v[t % 4]`) touches a unit of
/// the element that varies with them: its lanes carry the unit's index instead, with
/// [`Units::whole`] units (see [`SiteRequests::varying_member`]).
pub struct SiteRequests<'a> {
    affine: &'a FunctionAffine,
    site: &'a Site,
    /// Each lane's value: the element index, or the unit index under a varying member.
    index: Sym,
    /// The member path, when its subscripts vary and the lanes carry unit indices.
    varying_member: Option<String>,
    /// The vector's bytes, when the lanes read through a vector view and carry its index.
    vector_bytes: Option<u64>,
    units: Units,
    points: Vec<LoopPoint>,
    warps: u32,
    warp_size: u32,
    unknowns: Vec<UnknownValue>,
    per_iteration_of: Vec<String>,
    /// The unknown uniforms of the index evaluated, one combination of values per entry.
    combinations: Vec<Vec<(Atom, i64)>>,
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
        let lanes = match (
            &access.detail().member,
            access.detail().member_bytes,
            &access.detail().member_layout,
        ) {
            (Some(member), _, _) if access.detail().vector_bytes.is_some() => {
                return Err(format!("member `{member}` of a vector is not simulated"))
            }
            (None, _, _) => match access.detail().vector_bytes {
                Some(bytes) => LaneUnits::vectors(bytes, elem_bytes, site),
                None => LaneUnits::elements(elem_bytes, 1, 0, site),
            },
            // A member that tiles the element: the lanes touch units of the member's size.
            (Some(_), Some((offset, size)), _)
                if size > 0 && elem_bytes % size == 0 && offset % size == 0 =>
            {
                LaneUnits::elements(size, elem_bytes / size, offset / size, site)
            }
            (Some(member), None, Some(layout)) if layout.subscripts.len() == site.member.len() => {
                LaneUnits::of_member(member, layout, elem_bytes, site)?
            }
            (Some(member), _, _) => {
                return Err(format!("member access `{member}` is not simulated"))
            }
        };
        Self::of_lanes(affine, site, lanes, config)
    }

    /// The requests of an access to an array of records stored as a struct of arrays (one
    /// array per member): each lane carries its record's index, and touches `unit_bytes`,
    /// the member's size, whatever part of the record the access names.
    pub fn of_records(
        affine: &'a FunctionAffine,
        site: &'a Site,
        unit_bytes: u64,
        config: &BankConfig,
    ) -> Result<Self, String> {
        if let Some(why) = site.index.unknown() {
            return Err(format!("index is {why}"));
        }
        Self::of_lanes(
            affine,
            site,
            LaneUnits::elements(unit_bytes, 1, 0, site),
            config,
        )
    }

    fn of_lanes(
        affine: &'a FunctionAffine,
        site: &'a Site,
        lanes: LaneUnits,
        config: &BankConfig,
    ) -> Result<Self, String> {
        let LaneUnits {
            unit_bytes,
            scale,
            component,
            span,
            index,
            varying_member,
            vector_bytes,
        } = lanes;
        let unit_bytes = u32::try_from(unit_bytes).map_err(|_| "element too large".to_string())?;
        // A loop with unknown bounds is not enumerated: its counter is an unknown value and
        // the figures are per iteration of it.
        let (uncounted, counted): (Vec<LoopId>, Vec<LoopId>) = site
            .loops
            .iter()
            .partition(|&&id| matches!(affine.loops[id].values, LoopValues::Unknown(_)));
        let per_iteration_of = uncounted
            .iter()
            .map(|&id| affine.loops[id].name.clone())
            .collect();
        let points = affine.loop_points(&counted, MAX_ITERATIONS)?;
        let block = affine.block();
        let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
        let warps = threads.div_ceil(u64::from(config.warp)) as u32;
        // The lanes carry element indices: a vector's unit is `span` of them.
        let index_bytes = unit_bytes / u32::try_from(span.max(1)).unwrap_or(1);
        let (unknowns, combinations) = unknown_values(
            site,
            &index,
            index_bytes,
            config,
            points.len() * warps as usize,
        );
        Ok(SiteRequests {
            affine,
            site,
            index,
            varying_member,
            vector_bytes,
            units: Units {
                unit_bytes,
                scale,
                component,
                span,
            },
            points,
            warps,
            warp_size: config.warp,
            unknowns,
            per_iteration_of,
            combinations,
        })
    }

    /// How many warp requests the access sends: combinations × loop points × warps.
    pub fn count(&self) -> u64 {
        self.combinations.len() as u64 * self.points.len() as u64 * u64::from(self.warps)
    }

    pub fn units(&self) -> Units {
        self.units
    }

    /// The bytes a lane touches at once through a pointer cast to a wider type: the lanes
    /// then carry the index of that wider unit, not their element's.
    pub fn vector_bytes(&self) -> Option<u64> {
        self.vector_bytes
    }

    /// The member path when its subscripts are not constant: the lanes then carry the index
    /// of the unit they touch, not their element's, and no map on elements can be scored
    /// on them.
    pub fn varying_member(&self) -> Option<&str> {
        self.varying_member.as_deref()
    }

    /// The loops around the access whose bounds the analysis cannot evaluate: their
    /// counters are unknown values, and the figures are per iteration of them.
    pub fn per_iteration_of(&self) -> &[String] {
        &self.per_iteration_of
    }

    /// The unknown uniform values and how they are evaluated.
    pub fn unknown_values(&self) -> &[UnknownValue] {
        &self.unknowns
    }

    /// Calls `f(warp, loop point, element index per lane)` for every request, under every
    /// combination of the unknown values (unit indices under a varying member).
    pub fn for_each(&self, mut f: impl FnMut(u32, &LoopPoint, &[Option<i64>])) {
        for combination in 0..self.combinations.len() {
            self.for_each_in(combination, &mut f);
        }
    }

    /// How many combinations of the unknown values are evaluated (at least 1).
    pub fn combinations(&self) -> usize {
        self.combinations.len()
    }

    /// [`SiteRequests::for_each`] under one combination of the unknown values
    /// (`combination < self.combinations()`).
    pub fn for_each_in(&self, combination: usize, f: impl FnMut(u32, &LoopPoint, &[Option<i64>])) {
        self.for_each_value_in(combination, &self.index, f);
    }

    /// A value that `subscript`, one subscript of the access, reaches outside `[0, extent)`
    /// on some lane: the lowest when any is negative, else the highest; `None` when every
    /// lane's stays inside. The linear index can be within the array when a subscript is
    /// not (`t[1][-1]`), and a rewrite of one subscript (a swizzle in place) is the map of
    /// the linear index only within the extents.
    pub fn subscript_outside(&self, subscript: &Sym, extent: u64) -> Option<i64> {
        let mut outside: Option<(i64, i64)> = None;
        for combination in 0..self.combinations.len() {
            self.for_each_value_in(combination, subscript, |_, _, lanes| {
                for &value in lanes.iter().flatten() {
                    if value < 0 || value as u64 >= extent {
                        let (low, high) = outside.unwrap_or((value, value));
                        outside = Some((low.min(value), high.max(value)));
                    }
                }
            });
        }
        outside.map(|(low, high)| if low < 0 { low } else { high })
    }

    /// The first shift in the access's subscripts whose amount some lane takes to the
    /// integer width or past it (or below 0).
    fn wide_shift(&self) -> Option<WideShift> {
        let mut amounts: Vec<(&Sym, bool)> = Vec::new();
        let mut stack: Vec<&Sym> = self.site.subscripts.iter().collect();
        while let Some(sym) = stack.pop() {
            match sym {
                Sym::Binary(op, l, r) => {
                    if matches!(op, Op::Shl | Op::Shr) {
                        let additive = matches!(&**r, Sym::Binary(Op::Add | Op::Sub, _, _));
                        amounts.push((r, additive));
                    }
                    stack.push(l);
                    stack.push(r);
                }
                Sym::Neg(x) | Sym::BitNot(x) | Sym::Not(x) => stack.push(x),
                Sym::Select(c, a, b) => stack.extend([&**c, &**a, &**b]),
                Sym::Const(_) | Sym::Atom(_) | Sym::Unknown(_) => {}
            }
        }
        let width = i64::from(crate::affine::SHIFT_WIDTH);
        for (amount, additive) in amounts {
            // A constant amount inside the width (`tx >> 5`, the common case) is so in every
            // lane: no need to run the lanes.
            if amount.constant().is_some_and(|k| (0..width).contains(&k)) {
                continue;
            }
            for combination in 0..self.combinations.len() {
                let mut found = None;
                self.for_each_value_in(combination, amount, |warp, _, lanes| {
                    if found.is_some() {
                        return;
                    }
                    found = lanes.iter().enumerate().find_map(|(lane, v)| {
                        v.filter(|v| !(0..width).contains(v))
                            .map(|reached| WideShift {
                                amount: amount.to_string(),
                                additive,
                                reached,
                                lane,
                                warp,
                            })
                    });
                });
                if found.is_some() {
                    return found;
                }
            }
        }
        None
    }

    /// [`SiteRequests::for_each_in`] for any value of the access's lanes, `value`.
    fn for_each_value_in(
        &self,
        combination: usize,
        value: &Sym,
        mut f: impl FnMut(u32, &LoopPoint, &[Option<i64>]),
    ) {
        let uniforms = self.combinations[combination].as_slice();
        // Every lane of every warp and iteration evaluates the same two values: flattened
        // once, then evaluated for a group of lanes at a time, the atoms that do not vary by
        // lane looked up once per iteration.
        let block = self.affine.block();
        let active = Program::new(&self.site.active);
        let index = Program::new(value);
        let groups = LaneGroup::of_block(block, self.warp_size, self.warps);
        // A warp whose lanes have the thread indices of the warp before on every axis the
        // two programs read gets the same lanes (`t[0][tx]` in a block of 32 × 8): not
        // evaluated again.
        let mut axes = [false; 3];
        for atom in active.atoms.iter().chain(&index.atoms) {
            if let Atom::Thread(axis) = atom {
                axes[axis.index()] = true;
            }
        }
        let repeats: Vec<bool> = (0..groups.len())
            .map(|w| w > 0 && LaneGroup::same_lanes(&groups[w - 1], &groups[w], axes))
            .collect();
        let mut stack = Vec::new();
        let mut lanes: Vec<Option<i64>> = Vec::with_capacity(self.warp_size as usize);
        for point in &self.points {
            let active_uniforms = active.uniforms(&Point {
                loops: point,
                uniforms: None,
            });
            let index_uniforms = index.uniforms(&Point {
                loops: point,
                uniforms: Some(uniforms),
            });
            for (warp, warp_groups) in (0..self.warps).zip(groups.iter()) {
                if repeats[warp as usize] {
                    f(warp, point, &lanes);
                    continue;
                }
                lanes.clear();
                for group in warp_groups {
                    let is_active = active.eval(&active_uniforms, group, &mut stack);
                    // An unknown condition counts the lane: the figures are an upper bound.
                    let inactive = is_active.valid & !is_active.nonzero();
                    let running = group.present & !inactive;
                    let index = match running {
                        0 => Lanes::splat(None),
                        _ => index.eval(&index_uniforms, group, &mut stack),
                    };
                    let known = running & index.valid;
                    let values = &index.values[..group.len];
                    if known == u32::MAX >> (GROUP - group.len) {
                        // Every lane has its index, the usual case: no per-lane test.
                        lanes.extend(values.iter().map(|&v| Some(v)));
                    } else {
                        lanes.extend(
                            values
                                .iter()
                                .enumerate()
                                .map(|(i, v)| (known & (1 << i) != 0).then_some(*v)),
                        );
                    }
                }
                f(warp, point, &lanes);
            }
        }
    }
}

/// What one access costs, or why it cannot be simulated.
pub fn measure(requests: &SiteRequests, config: &BankConfig) -> Result<SiteCost, String> {
    let units = requests.units();
    let mut worst: Option<(usize, SiteCost)> = None;
    let mut scaled: Vec<Option<i64>> = Vec::with_capacity(config.warp as usize);
    // The last request simulated and its cost.
    let mut previous_lanes: Vec<Option<i64>> = Vec::with_capacity(config.warp as usize);
    let mut previous: Option<crate::bank::Cost> = None;
    // Whole elements are the units already: the lanes go to the bank model as they are.
    let whole_elements = units == Units::whole(units.unit_bytes);
    for combination in 0..requests.combinations.len() {
        let mut cost = SiteCost {
            conflict_degree: 0,
            wavefronts: 0,
            ideal_wavefronts: 0,
            worst: None,
            unknown_values: Vec::new(),
            per_iteration_of: requests.per_iteration_of.clone(),
            wide_shift: None,
            class: Class::Linear,
        };
        requests.for_each_in(combination, |warp, point, elements| {
            let lanes = if whole_elements {
                elements
            } else {
                scaled.clear();
                scaled.extend(elements.iter().map(|e| e.map(|e| units.of(e))));
                &scaled
            };
            // Accesses whose index does not vary between warps (`t[0][tx]` in a block of
            // 32 × 8) send the same request warp after warp: the same lanes cost the same.
            let result = match previous {
                Some(result) if previous_lanes == lanes => result,
                _ => {
                    let request = Request {
                        elem_bytes: units.unit_bytes,
                        lanes,
                    };
                    let result = simulate(config, &request);
                    previous_lanes.clear();
                    previous_lanes.extend_from_slice(lanes);
                    previous = Some(result);
                    result
                }
            };
            cost.wavefronts += u64::from(result.wavefronts);
            cost.ideal_wavefronts += u64::from(result.ideal_wavefronts);
            if result.conflict_degree > cost.conflict_degree {
                cost.conflict_degree = result.conflict_degree;
                cost.worst = result.collision.map(|collision| {
                    Box::new(WorstRequest {
                        warp,
                        loop_values: point.0.iter().map(|(a, v)| (a.to_string(), *v)).collect(),
                        collision,
                    })
                });
            }
        });
        let worse = worst
            .as_ref()
            .is_none_or(|(_, w)| (cost.excess(), cost.wavefronts) > (w.excess(), w.wavefronts));
        if worse {
            worst = Some((combination, cost));
        }
    }
    let (combination, mut cost) = worst.ok_or("no combination of unknown values")?;
    let site = requests.site;
    let worst_iteration = cost.worst.as_ref().and_then(|worst| {
        site.iterations.iter().find(|it| {
            it.loop_values
                .iter()
                .all(|value| worst.loop_values.contains(value))
        })
    });
    cost.class = worst_iteration.map_or(&site.class, |it| &it.class).clone();
    cost.wide_shift = requests.wide_shift().map(Box::new);
    cost.unknown_values = requests.unknowns.clone();
    for unknown in &mut cost.unknown_values {
        let value = requests.combinations[combination]
            .iter()
            .find(|(atom, _)| atom.to_string() == unknown.name)
            .map(|(_, v)| *v);
        if let (
            Evaluated::Residues { modulus, worst } | Evaluated::Sampled { modulus, worst },
            Some(v),
        ) = (&mut unknown.evaluated, value)
        {
            *worst = v.rem_euclid(*modulus);
        }
    }
    Ok(cost)
}

/// The unknown uniform values of an access, how each is evaluated, and the combinations of
/// values to run (`requests` per combination).
fn unknown_values(
    site: &Site,
    index: &Sym,
    index_bytes: u32,
    config: &BankConfig,
    requests: usize,
) -> (Vec<UnknownValue>, Vec<Vec<(Atom, i64)>>) {
    let uniform = |a: &&Atom| matches!(a, Atom::Uniform(_));
    let in_index: Vec<Atom> = index.atoms().into_iter().filter(uniform).cloned().collect();
    let mut unknowns: Vec<UnknownValue> = site
        .active
        .atoms()
        .into_iter()
        .filter(uniform)
        .filter(|a| !in_index.contains(a))
        .map(|a| UnknownValue {
            name: a.to_string(),
            evaluated: Evaluated::InConditions,
        })
        .collect();
    let unit = i64::from(index_bytes.max(1));
    let bank_width = i64::from(config.bank_width);
    // Elements per row of banks: an index modulo this fixes its bank and word offset.
    let row = (i64::from(config.banks) * bank_width / unit).max(1);
    let mut varying: Vec<(Atom, i64)> = Vec::new();
    for atom in &in_index {
        // The form is the element index's: a value in a member subscript may multiply a
        // thread index there.
        let coefficient_free = site
            .form
            .as_ref()
            .is_ok_and(|form| form.terms.iter().all(|(_, c)| !c.atoms().contains(&atom)))
            && site.member.iter().all(|m| !m.atoms().contains(&atom));
        let polynomial = polynomial_in(index, atom);
        let evaluated = if coefficient_free && unit >= bank_width {
            Evaluated::AnyValue
        } else {
            // A uniform shift moves whole banks except within one bank's width.
            let modulus = if coefficient_free {
                (bank_width / unit).max(1)
            } else {
                row
            };
            varying.push((atom.clone(), modulus));
            if polynomial {
                Evaluated::Residues { modulus, worst: 0 }
            } else {
                Evaluated::Sampled { modulus, worst: 0 }
            }
        };
        unknowns.push(UnknownValue {
            name: atom.to_string(),
            evaluated,
        });
    }
    let count = varying
        .iter()
        .try_fold(1usize, |n, (_, m)| n.checked_mul(*m as usize))
        .filter(|&n| n.saturating_mul(requests.max(1)) <= MAX_REQUESTS);
    let Some(count) = count else {
        for unknown in &mut unknowns {
            if matches!(
                unknown.evaluated,
                Evaluated::Residues { .. } | Evaluated::Sampled { .. }
            ) {
                unknown.evaluated = Evaluated::Zero;
            }
        }
        return (unknowns, vec![Vec::new()]);
    };
    let combinations = (0..count)
        .map(|mut n| {
            varying
                .iter()
                .map(|(atom, modulus)| {
                    let residue = (n % *modulus as usize) as i64;
                    n /= *modulus as usize;
                    (atom.clone(), GENERIC * modulus + residue)
                })
                .collect()
        })
        .collect();
    unknowns.sort_by(|a, b| a.name.cmp(&b.name));
    (unknowns, combinations)
}

/// Element indices a [`SitePattern`] may hold (all phases together): 32 MiB, plus about
/// 40 bytes of bookkeeping per distinct phase.
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
            span: 1,
        };
        assert_eq!(units.of(3), 13);
        let float4_view = Units {
            span: 4,
            ..Units::whole(16)
        };
        assert_eq!(float4_view.of(12), 3);
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
