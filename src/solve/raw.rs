//! `bankwise solve`: the solvers on raw address sets, for teaching and debugging. Each set is
//! one warp request of 4-byte words (lane `l` reads the set's `l`-th address), split into
//! phases by the bank model like any other request.
use super::algebra::check_bijection;
use super::bitvector::{exhaustive_xor, permutation};
use super::exact::{exact_permutation, exact_xor, SEARCH_BOUND};
use super::family::MapKind;
use super::givargis::givargis;
use super::maps::row_bits;
use super::mih::mih;
use super::space::{Found, Space};
use super::ArrayProblem;
use crate::bank::BankConfig;
use crate::cost::{SitePattern, Units};
use serde::Serialize;

/// Most banks `bankwise solve` takes (the DMM experiments go up to 256).
pub const MAX_BANKS: u32 = 256;

/// Largest `--address-bits`: indices must fit the 64-bit GF(2) rows with room to shift.
pub const MAX_ADDRESS_BITS: u32 = 40;

/// One warp request per stride `s`: lane `l` reads word `s·l` (the papers' stride examples).
#[cfg(test)]
pub fn stride_sets(strides: &[i64]) -> Vec<Vec<i64>> {
    strides
        .iter()
        .map(|&s| (0..32).map(|l| s * l).collect())
        .collect()
}

/// Row reads `tile[j][l]` and column reads `tile[l][j]` of a 32 × 32 float tile, the
/// example the solver tests share.
#[cfg(test)]
pub fn transpose_problem() -> ArrayProblem {
    let mut sets: Vec<Vec<i64>> = Vec::new();
    for j in 0..32 {
        sets.push((0..32).map(|l| 32 * l + j).collect());
        sets.push((0..32).map(|l| 32 * j + l).collect());
    }
    let mut problem = raw_problem(&sets, 32, Some(10)).expect("valid");
    problem.dims = vec![32, 32];
    problem
}

/// The problem of address sets on `banks` banks of 4-byte words, over `2^address_bits` words
/// (default: as many bits as the largest address needs).
pub fn raw_problem(
    sets: &[Vec<i64>],
    banks: u32,
    address_bits: Option<u32>,
) -> Result<ArrayProblem, String> {
    if sets.iter().all(Vec::is_empty) {
        return Err("no addresses".into());
    }
    if let Some(&bad) = sets.iter().flatten().find(|&&a| a < 0) {
        return Err(format!("address {bad} is negative"));
    }
    if !banks.is_power_of_two() || banks > MAX_BANKS {
        return Err(format!(
            "{banks} banks: a power of two up to {MAX_BANKS} is needed"
        ));
    }
    let largest = sets.iter().flatten().copied().max().unwrap_or(0) as u64;
    let needed = super::algebra::index_bits(largest + 1);
    let bits = address_bits.unwrap_or(needed);
    if bits < needed {
        return Err(format!(
            "address {largest} needs {needed} bits, more than --address-bits {bits}"
        ));
    }
    if bits > MAX_ADDRESS_BITS {
        return Err(format!("at most {MAX_ADDRESS_BITS} address bits"));
    }
    let config = BankConfig {
        banks,
        bank_width: 4,
        warp: 32,
    };
    let sites = sets
        .iter()
        .map(|set| {
            let lanes: Vec<Option<i64>> = set.iter().copied().map(Some).collect();
            SitePattern::from_requests(Units::whole(4), &config, [lanes.as_slice()])
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ArrayProblem::new(
        "addresses".into(),
        4,
        vec![1 << bits],
        config,
        sites,
    ))
}

/// The search `bankwise solve --method` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Bit-vector permutation, or with `--xor` the bit-vector XOR search with the pruning of
    /// Sec. 5.1.
    Exhaustive,
    /// The Givargis heuristic.
    Givargis,
    /// The Minimum Imbalance Heuristic.
    Mih,
    /// The best bitwise permutation, or with `--xor` the best XOR-linear map.
    Exact,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Exhaustive => "exhaustive",
            Method::Givargis => "gh",
            Method::Mih => "mih",
            Method::Exact => "exact",
        }
    }
}

/// What `bankwise solve` found.
#[derive(Debug)]
pub struct RawSolution {
    pub method: Method,
    pub xor: bool,
    pub banks: u32,
    pub address_bits: u32,
    pub bank_bits: u32,
    pub excess_before: u64,
    pub found: Found,
}

/// Runs `method` on the address sets (see [`raw_problem`]).
pub fn solve_addresses(
    sets: &[Vec<i64>],
    banks: u32,
    address_bits: Option<u32>,
    method: Method,
    xor: bool,
) -> Result<RawSolution, String> {
    let problem = raw_problem(sets, banks, address_bits)?;
    let space = Space::of(&problem)?;
    let found = match (method, xor) {
        (Method::Exhaustive, false) => permutation(&space).ok_or("no bit field fits")?,
        (Method::Exhaustive, true) => {
            exhaustive_xor(&space, true).ok_or("no stride to derive candidates from")?
        }
        (Method::Givargis, xor) => givargis(&space, xor)?,
        (Method::Mih, xor) => mih(&space, xor)?,
        (Method::Exact, false) => exact_permutation(&space, SEARCH_BOUND)?,
        (Method::Exact, true) => exact_xor(&space, SEARCH_BOUND)?,
    };
    if let Err(err) = check_bijection(found.best.map.as_ref()) {
        return Err(format!(
            "internal error: the map found is not a bijection: {err}"
        ));
    }
    Ok(RawSolution {
        method,
        xor,
        banks,
        address_bits: space.bits,
        bank_bits: space.bank_bits,
        excess_before: space.scorer.total_before(),
        found,
    })
}

/// `bankwise solve --format json`: one solution, field for field.
#[derive(Debug, Serialize)]
pub struct SolveReport {
    pub method: &'static str,
    pub xor: bool,
    pub banks: u32,
    pub address_bits: u32,
    /// The XOR matrix's rows, as the address bits each bank bit reads (`--xor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Vec<Vec<u32>>>,
    /// The address bit each bank bit is (a permutation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits: Option<Vec<u32>>,
    pub candidates_evaluated: u64,
    pub truncated: bool,
    pub excess_before: u64,
    pub excess_after: u64,
    pub map: SolvedMap,
}

/// The map a solution found.
#[derive(Debug, Serialize)]
pub struct SolvedMap {
    pub family: MapKind,
    /// The family's own parameters.
    pub params: serde_json::Value,
    /// The map as a CUDA expression of the address `a`.
    pub cuda: String,
    pub alu: u32,
    pub cute: Option<String>,
}

impl RawSolution {
    fn bank_rows(&self) -> Vec<u64> {
        let map = self.found.best.map.as_ref();
        map.linear()
            .map(|l| l.bank_rows(self.bank_bits))
            .unwrap_or_default()
    }

    /// `{"method", "bits" or "matrix", "candidates_evaluated", "excess_before",
    /// "excess_after", "map"}` (issue 5), with `xor`, `banks`, `address_bits` and `truncated`.
    pub fn report(&self) -> SolveReport {
        let map = self.found.best.map.as_ref();
        let rows = self.bank_rows();
        let (matrix, bits) = if self.xor {
            (Some(row_bits(&rows)), None)
        } else {
            (
                None,
                Some(rows.iter().map(|r| r.trailing_zeros()).collect()),
            )
        };
        SolveReport {
            method: self.method.name(),
            xor: self.xor,
            banks: self.banks,
            address_bits: self.address_bits,
            matrix,
            bits,
            candidates_evaluated: self.found.candidates,
            truncated: self.found.truncated,
            excess_before: self.excess_before,
            excess_after: self.found.best.score.total,
            map: SolvedMap {
                family: map.kind(),
                params: map.params(),
                cuda: map.cuda("a"),
                alu: map.alu_ops(),
                cute: map.cute().map(|c| c.to_string()),
            },
        }
    }

    pub fn to_text(&self) -> String {
        let map = self.found.best.map.as_ref();
        let rows = self.bank_rows();
        let names: Vec<String> = row_bits(&rows)
            .iter()
            .enumerate()
            .map(|(j, bits)| {
                let xored: Vec<String> = bits.iter().map(|b| format!("A{b}")).collect();
                format!("b{j} = {}", xored.join(" ^ "))
            })
            .collect();
        let mut text = format!(
            "{} search{} on {} banks, {} address bits\n",
            self.method.name(),
            if self.xor { " (XOR)" } else { "" },
            self.banks,
            self.address_bits
        );
        text += &format!("bank bits: {}\n", names.join(", "));
        text += &format!(
            "candidates evaluated: {}{}\n",
            self.found.candidates,
            if self.found.truncated {
                " (stopped by the search bound: best found, not proven optimal)"
            } else {
                ""
            }
        );
        text += &format!(
            "excess wavefronts: {} -> {}\n",
            self.excess_before, self.found.best.score.total
        );
        text += &format!(
            "map: {} {}: a -> {} ({} ALU ops{})\n",
            map.kind(),
            map.params(),
            map.cuda("a"),
            map.alu_ops(),
            map.cute()
                .map(|c| format!(", CuTe {c}"))
                .unwrap_or_default()
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_6_by_every_method() {
        let sets = [vec![27, 12, 6, 19, 11, 4, 28, 3]];
        let mih = solve_addresses(&sets, 8, None, Method::Mih, false).expect("solves");
        let report = mih.report();
        assert_eq!(report.bits, Some(vec![0, 3, 4]));
        assert_eq!(report.matrix, None);
        assert_eq!(
            (
                report.excess_before,
                report.excess_after,
                report.candidates_evaluated
            ),
            (3, 1, 5)
        );
        let exact = solve_addresses(&sets, 8, None, Method::Exact, true).expect("solves");
        assert_eq!(exact.report().excess_after, 0);
        assert!(exact.to_text().contains("excess wavefronts: 3 -> 0"));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(raw_problem(&[vec![]], 32, None).is_err());
        assert!(raw_problem(&[vec![-1]], 32, None).is_err());
        assert!(raw_problem(&[vec![1]], 12, None).is_err());
        assert!(raw_problem(&[vec![1 << 20]], 32, Some(10)).is_err());
        assert!(raw_problem(&[vec![1]], 32, Some(60)).is_err());
        assert!(raw_problem(&[vec![1]], 1 << 20, None).is_err());
        assert!(raw_problem(&[vec![1]], 0, None).is_err());
    }
}
