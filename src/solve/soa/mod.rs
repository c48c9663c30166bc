//! The struct-of-arrays layout: an array of records whose lanes read one member of
//! consecutive records (`home[t].x` of 16-byte records lies on every fourth bank, whatever
//! permutation of the records) is stored as one array per member (`home_x[t]`). Member `m`
//! of record `e` moves from word `e · (record words) + m` to element `e` of array `m`: a
//! bijection on words, not on elements, so it is not one of the element maps the other
//! families search. Its record index is the identity map; what changes is the layout, scored
//! here on the member arrays' own requests: a member access is an access of its member's
//! array at the record's index, a whole-record store or read one access per member.
mod layout;

pub use layout::{layout, posed};

use super::choose::FamilyResult;
use super::expr::Expr;
use super::family::MapKind;
use super::maps::AddressMap;
use super::score::{Score, Scorer};
use super::space::{Candidate, Found};
use super::ArrayProblem;
use crate::affine::FunctionAffine;
use crate::bank::BankConfig;
use crate::cost::{SitePattern, SiteRequests};
use crate::parse::{SharedArray, Span};
use serde_json::{json, Value};

/// One member of the record, as its own array stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMember {
    pub name: String,
    /// The member's type as the struct declares it.
    pub type_name: String,
    /// Byte offset in the record.
    pub offset: u64,
    pub bytes: u64,
}

/// What one access does with its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordUse {
    /// `a[i].m`, any kind of access: member `m` (an index into the members).
    Member(usize),
    /// `a[i] = E;`, an entire expression statement: the assignment's span and E's.
    Store { assignment: Span, value: Span },
    /// A whole record read as a value (`T p = a[i];`, `x = a[i]`).
    Load,
}

impl RecordUse {
    /// The members the access touches.
    pub fn members(self, count: usize) -> std::ops::Range<usize> {
        match self {
            RecordUse::Member(m) => m..m + 1,
            RecordUse::Store { .. } | RecordUse::Load => 0..count,
        }
    }
}

/// The struct-of-arrays layout of one array: its record's members, and what each of its
/// accesses does with the record. As an [`AddressMap`] it is the identity on record indices
/// (record `e` is element `e` of every member array) with no ALU cost: the layout, not an
/// index expression, is what changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructOfArrays {
    extent: u64,
    /// The record type, spelled so that `T{…}` builds one (`FourVector`).
    pub record: String,
    /// The members some access reads, each stored as its own array.
    pub members: Vec<RecordMember>,
    /// Per access of the array, in order.
    pub uses: Vec<RecordUse>,
    /// The members no access reads: only whole-record stores write them, and they get no
    /// array (their stores are dead).
    pub dropped: Vec<String>,
}

impl StructOfArrays {
    pub fn new(
        extent: u64,
        record: String,
        members: Vec<RecordMember>,
        uses: Vec<RecordUse>,
    ) -> Self {
        StructOfArrays {
            extent,
            record,
            members,
            uses,
            dropped: Vec::new(),
        }
    }

    /// The layout without arrays for the members named, which no access reads.
    pub fn dropping(self, dropped: Vec<String>) -> Self {
        StructOfArrays { dropped, ..self }
    }
}

impl AddressMap for StructOfArrays {
    fn kind(&self) -> MapKind {
        MapKind::StructOfArrays
    }
    fn params(&self) -> Value {
        let members: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
        match self.dropped.is_empty() {
            true => json!({ "members": members }),
            false => json!({ "members": members, "dropped": self.dropped }),
        }
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        index
    }
    fn expr(&self) -> Expr {
        Expr::Index
    }
    fn prove_bijective(&self) -> Result<String, String> {
        let dropped = match self.dropped.is_empty() {
            true => String::new(),
            false => format!(
                "; members never read ({}) are only stored, and their dead stores are dropped",
                self.dropped.join(", ")
            ),
        };
        Ok(format!(
            "member m of record e moves to element e of member array m: every word of the {} \
             records read has one place, and the {} member arrays hold as many words{dropped}",
            self.extent,
            self.members.len()
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        // A vector of several records would be split across the member arrays.
        vector == 1
    }
    fn struct_of_arrays(&self) -> Option<&StructOfArrays> {
        Some(self)
    }
}

/// The layout posed to the solver: per access of the array, the requests of each member
/// array it touches.
#[derive(Debug, Clone)]
pub struct PosedLayout {
    pub layout: StructOfArrays,
    /// Per site of the array: (member, that member array's requests at the site).
    pub sites: Vec<Vec<(usize, SitePattern)>>,
}

impl PosedLayout {
    /// Every access of array number `array_index` as the member arrays of `layout` receive
    /// it: each lane's record index, in units of the member's size.
    pub fn pose(
        layout: StructOfArrays,
        affine: &FunctionAffine,
        array_index: usize,
        array: &SharedArray,
        config: &BankConfig,
    ) -> Result<Self, String> {
        let sites = array
            .accesses
            .iter()
            .zip(&layout.uses)
            .enumerate()
            .map(|(i, (access, use_))| {
                let site = super::reached_site(affine, array_index, i, access)?;
                // Members of one size receive the same requests: enumerated once per size.
                let mut by_size: Vec<(u64, SitePattern)> = Vec::new();
                use_.members(layout.members.len())
                    .map(|m| {
                        let bytes = layout.members[m].bytes;
                        if let Some((_, pattern)) = by_size.iter().find(|(b, _)| *b == bytes) {
                            return Ok((m, pattern.clone()));
                        }
                        let pattern = SiteRequests::of_records(affine, site, bytes, config)
                            .and_then(|requests| SitePattern::collect(&requests, config))
                            .map_err(|why| format!("line {}: {why}", access.at.line))?;
                        by_size.push((bytes, pattern.clone()));
                        Ok((m, pattern))
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(PosedLayout { layout, sites })
    }
}

/// The struct-of-arrays candidate of `problem`, scored against the array as declared
/// (`before`, per site), or why the layout does not apply.
pub fn struct_of_arrays(problem: &ArrayProblem, before: &[u64]) -> Result<Option<Found>, String> {
    let posed = problem.struct_of_arrays.as_ref().map_err(Clone::clone)?;
    let patterns: Vec<SitePattern> = posed
        .sites
        .iter()
        .flat_map(|site| site.iter().map(|(_, pattern)| pattern.clone()))
        .collect();
    // The member arrays are stored as declared: their excess is the scorer's "before".
    let scorer = Scorer::new(problem.config, &patterns);
    let mut excess = scorer.before().iter();
    let per_site: Vec<u64> = posed
        .sites
        .iter()
        .map(|site| excess.by_ref().take(site.len()).sum())
        .collect();
    let worsens = per_site
        .iter()
        .zip(before)
        .any(|(after, before)| after > before);
    let score = Score {
        total: per_site.iter().sum(),
        per_site,
        worsens,
    };
    Ok(Some(Found {
        best: Candidate {
            map: Box::new(posed.layout.clone()),
            score,
        },
        candidates: 1,
        truncated: false,
    }))
}

/// Whether a family's result is a re-layout rather than a map of elements: it adds
/// instructions (a whole-record access becomes one per member), so it loses every tie.
pub fn is_relayout(result: &FamilyResult) -> bool {
    result
        .best
        .as_ref()
        .is_some_and(|best| best.map.struct_of_arrays().is_some())
}
