//! `bankwise solve`: the solvers on raw address sets, for teaching and debugging. Each set is
//! one warp request of 4-byte words (lane `l` reads the set's `l`-th address), split into
//! phases by the bank model like any other request.
use super::ArrayProblem;
use crate::bank::BankConfig;
use crate::cost::{SitePattern, Units};

/// Largest `--address-bits`: indices must fit the 64-bit GF(2) rows with room to shift.
pub const MAX_ADDRESS_BITS: u32 = 40;

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
    if banks == 0 || !banks.is_power_of_two() {
        return Err(format!("{banks} banks: a power of two is needed"));
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
    Ok(ArrayProblem {
        name: "addresses".into(),
        elem_bytes: 4,
        dims: vec![1 << bits],
        vector: 1,
        max_extra_bytes: 0,
        config,
        sites,
    })
}
