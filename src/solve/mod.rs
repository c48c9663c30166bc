//! Address maps and the solvers that configure them (docs/ARCHITECTURE.md §5–6).
//!
//! - [`maps`]: one type per family behind the [`AddressMap`](maps::AddressMap) trait, each a
//!   proven bijection with its CUDA expression ([`expr`]) and ALU cost; [`algebra`]: the GF(2)
//!   algebra and the bijection check.
//! - [`score`]: a map's excess wavefronts on every site of an array, through the bank model;
//!   [`space`]: one array's search space and the ranking of candidates.
//! - Solvers: [`bitvector`] (Sec. 5.1), [`givargis`] and [`mih`] (Sec. 5.2) over the bits of
//!   [`bitwise`], [`exact`] (optimal XOR-linear map), [`padding`], [`swizzle`] (and RAP).
//! - [`soa`]: the struct-of-arrays layout, a bijection on words that competes with the maps.
//! - [`choose()`]: every family on one [`ArrayProblem`], and the choice; [`raw`]: the solvers
//!   on raw address sets (`bankwise solve`).
pub mod algebra;
pub mod bitvector;
pub mod bitwise;
pub mod choose;
pub mod exact;
pub mod expr;
pub mod family;
pub mod givargis;
pub mod kernel;
pub mod maps;
pub mod mih;
pub mod padding;
#[cfg(test)]
mod properties;
pub mod raw;
pub mod score;
pub mod soa;
pub mod space;
pub mod swizzle;

pub use choose::{choose, Choice, FamilyResult};
pub use family::{Family, MapKind};

use crate::affine::{Atom, FunctionAffine, Site};
use crate::bank::BankConfig;
use crate::cost::{Evaluated, SitePattern, SiteRequests};
use crate::parse::{Access, Function, SharedArray, TypeTable};

/// The site the affine analysis made of access number `access_index` of array number
/// `array_index`, or why there is none.
pub(crate) fn reached_site<'f>(
    affine: &'f FunctionAffine,
    array_index: usize,
    access_index: usize,
    access: &Access,
) -> Result<&'f Site, String> {
    affine
        .sites
        .get(array_index)
        .and_then(|sites| sites.get(access_index))
        .and_then(Option::as_ref)
        .ok_or_else(|| format!("line {}: not reached by the analysis", access.at.line))
}

/// One shared array and everything the solvers need about it.
#[derive(Debug, Clone)]
pub struct ArrayProblem {
    pub name: String,
    /// `sizeof` the element type.
    pub elem_bytes: u32,
    /// Extents, outermost first; their product is the number of elements.
    pub dims: Vec<u64>,
    /// Elements read or written together as one vector (1: none); every map moves such
    /// vectors whole.
    pub vector: u64,
    /// Bytes the array may grow by (padding); 0 keeps the footprint.
    pub max_extra_bytes: u64,
    pub config: BankConfig,
    /// Every access site's warp requests.
    pub sites: Vec<SitePattern>,
    /// The array stored as a struct of arrays, or why that layout does not apply.
    pub struct_of_arrays: Result<soa::PosedLayout, String>,
}

/// Why an array posed without its record layout gets no struct-of-arrays candidate.
const LAYOUT_NOT_POSED: &str = "the record layout was not posed";

impl ArrayProblem {
    /// A problem with vector width 1 that may not grow (the default budget keeps the
    /// footprint).
    pub fn new(
        name: String,
        elem_bytes: u32,
        dims: Vec<u64>,
        config: BankConfig,
        sites: Vec<SitePattern>,
    ) -> Self {
        ArrayProblem {
            name,
            elem_bytes,
            dims,
            vector: 1,
            max_extra_bytes: 0,
            config,
            sites,
            struct_of_arrays: Err(LAYOUT_NOT_POSED.into()),
        }
    }

    /// Array number `array_index` of `function` posed to the solver: [`Self::from_analysis`]
    /// with the struct-of-arrays layout posed too (or why it does not apply). The one way
    /// `fix`, `bench` and `explain` pose an array.
    pub fn pose(
        function: &Function,
        array_index: usize,
        affine: &FunctionAffine,
        types: &TypeTable,
        config: &BankConfig,
    ) -> Result<Self, String> {
        let array = function.arrays.get(array_index).ok_or("no such array")?;
        let mut problem = ArrayProblem::from_analysis(affine, array_index, array, config)?;
        problem.struct_of_arrays = soa::posed(function, array_index, affine, types, config);
        Ok(problem)
    }

    /// The problem of array number `array_index` of a function, every access enumerated
    /// (vector width 1, no extra bytes), or why it cannot be posed: an unknown extent or
    /// element size, or an access that cannot be simulated (a map would change its conflicts
    /// unseen).
    pub fn from_analysis(
        affine: &FunctionAffine,
        array_index: usize,
        array: &SharedArray,
        config: &BankConfig,
    ) -> Result<Self, String> {
        let elem_bytes = array
            .elem_bytes
            .and_then(|b| u32::try_from(b).ok())
            .ok_or_else(|| format!("element type `{}` has no known size", array.elem_type))?;
        if let Some(why) = array.impossible_size() {
            return Err(why);
        }
        let dims = array.extents()?;
        let extent: u64 = dims.iter().product();
        let sites = array
            .accesses
            .iter()
            .enumerate()
            .map(|(i, access)| {
                let site = reached_site(affine, array_index, i, access)?;
                let requests = SiteRequests::new(affine, site, array, access, config)
                    .map_err(|why| format!("line {}: {why}", access.at.line))?;
                // A counter whose bounds are unknown takes values no check has seen.
                let atoms = site.index.atoms();
                let unbounded = requests.per_iteration_of().iter().find(|counter| {
                    atoms
                        .iter()
                        .any(|atom| matches!(atom, Atom::Uniform(name) if name == *counter))
                });
                if let Some(counter) = unbounded {
                    return Err(format!(
                        "line {}: the loop over `{counter}` has bounds or a step the analysis \
                         cannot evaluate, so the subscripts' values are not all known",
                        access.at.line
                    ));
                }
                // A value only sampled (or taken as 0) leaves values no check has seen: the
                // rewrite's subscripts and its validation would rest on them.
                let sampled = requests
                    .unknown_values()
                    .iter()
                    .find(|u| matches!(u.evaluated, Evaluated::Sampled { .. } | Evaluated::Zero));
                if let Some(unknown) = sampled {
                    return Err(format!(
                        "line {}: the index depends on `{}`, whose values are only sampled \
                         ({})",
                        access.at.line, unknown.name, unknown.evaluated
                    ));
                }
                // A value that shifts every lane alike gives the same figures whatever it is,
                // so it was evaluated at one value only; in a subscript it also decides which
                // elements are touched (`t[ty][16 * blockIdx.x + tx]` leaves the row for any
                // block but the first), which no check has then seen. Through a pointer the
                // site has no subscripts, so the index's own atoms are read
                // (`tile[(r0 + i) * W + pitch]` in a helper).
                let unseen = requests.unknown_values().iter().find(|u| {
                    matches!(u.evaluated, Evaluated::AnyValue)
                        && atoms.iter().any(|atom| atom.to_string() == u.name)
                });
                if let Some(unknown) = unseen {
                    return Err(format!(
                        "line {}: the index depends on `{}`, whose values the analysis does not \
                         know, so the elements it reaches are not all known",
                        access.at.line, unknown.name
                    ));
                }
                // Subscripts past their own extents (`t[r][-1]`) are the program's own bug.
                for (d, (subscript, extent)) in site.subscripts.iter().zip(&dims).enumerate() {
                    if d == 0 && dims.len() == 1 {
                        continue;
                    }
                    if let Some(reached) = requests.subscript_outside(subscript, *extent) {
                        let indices = access.indices.unpack();
                        let written = indices.get(d).map_or(String::new(), |e| e.to_string());
                        return Err(format!(
                            "line {}: subscript {} of `{}`, `{written}`, reaches {reached}, \
                             outside [0, {extent})",
                            access.at.line,
                            d + 1,
                            access.text,
                        ));
                    }
                }
                let pattern = SitePattern::collect(&requests, config)
                    .map_err(|why| format!("line {}: {why}", access.at.line))?;
                // A map is proven on the array's elements only: an index outside them is the
                // program's own bug, and no map may move it.
                let last = pattern.units.span.max(1) - 1;
                let outside = pattern
                    .elements()
                    .iter()
                    .find(|&&e| e < 0 || e.saturating_add(last) as u64 >= extent);
                if let (Some(element), 1) = (outside, pattern.units.scale) {
                    return Err(format!(
                        "line {}: `{}` reaches element {element}, outside the {extent} \
                         elements of `{}`",
                        access.at.line, access.text, array.name
                    ));
                }
                Ok(pattern)
            })
            .collect::<Result<Vec<SitePattern>, String>>()?;
        // Every map must keep the widest vector view's elements together.
        let vector = sites
            .iter()
            .map(|site| site.units.span.max(1) as u64)
            .max()
            .unwrap_or(1);
        Ok(ArrayProblem {
            vector,
            ..ArrayProblem::new(array.name.clone(), elem_bytes, dims, *config, sites)
        })
    }

    /// Elements in the array.
    pub fn extent(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Index bits that select the bank within a phase, in element units:
    /// `log2(banks · bank_width / elem_bytes)` (5 for 4-byte elements on 32 banks, 4 for
    /// doubles, 6 for shorts whose low bit picks the half-word); `None` when the element size
    /// is not a power of two or spans a whole row of banks.
    pub fn bank_bits(&self) -> Option<u32> {
        bank_bits(&self.config, self.elem_bytes)
    }

    /// Why no map can be applied, if so: an empty array, or an access outside it.
    pub fn check(&self) -> Result<(), String> {
        let extent = self.extent();
        if extent == 0 {
            return Err(format!("`{}` has no elements", self.name));
        }
        if !self.vector.is_power_of_two() {
            return Err(format!(
                "vector width {} is not a power of two",
                self.vector
            ));
        }
        let outside = self
            .sites
            .iter()
            .flat_map(|site| site.elements())
            .find(|&&e| e < 0 || e as u64 >= extent);
        match outside {
            Some(e) => Err(format!(
                "an access reaches element {e}, outside `{}`'s {extent} elements",
                self.name
            )),
            None => Ok(()),
        }
    }
}

/// See [`ArrayProblem::bank_bits`].
pub fn bank_bits(config: &BankConfig, elem_bytes: u32) -> Option<u32> {
    let row = u64::from(config.banks) * u64::from(config.bank_width);
    let elem = u64::from(elem_bytes);
    (row.is_power_of_two() && elem.is_power_of_two() && elem < row)
        .then(|| (row / elem).trailing_zeros())
}
