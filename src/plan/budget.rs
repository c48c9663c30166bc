//! The shared memory a kernel may grow by when no `--smem-budget` is given: as many bytes
//! as keep the most blocks an SM can hold resident (its occupancy) where the build's
//! architecture is known, else on every architecture from sm_70 to sm_90. Registers may
//! hold the occupancy lower still; the thread limit is the one bankwise can see, and
//! a budget under it is never the one that binds.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What limits the blocks an SM holds, per architecture (the CUDA occupancy calculator's
/// figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Limits {
    arch: &'static str,
    threads_per_sm: u64,
    blocks_per_sm: u64,
    /// The most shared memory an SM gives its blocks, with the largest carveout.
    shared_per_sm: u64,
    /// Shared memory the driver keeps per block.
    reserved_per_block: u64,
    /// The granularity of a block's allocation.
    unit: u64,
}

const ARCHITECTURES: &[Limits] = &[
    Limits {
        arch: "sm_70",
        threads_per_sm: 2048,
        blocks_per_sm: 32,
        shared_per_sm: 96 * 1024,
        reserved_per_block: 0,
        unit: 256,
    },
    Limits {
        arch: "sm_75",
        threads_per_sm: 1024,
        blocks_per_sm: 16,
        shared_per_sm: 64 * 1024,
        reserved_per_block: 0,
        unit: 256,
    },
    Limits {
        arch: "sm_80",
        threads_per_sm: 2048,
        blocks_per_sm: 32,
        shared_per_sm: 164 * 1024,
        reserved_per_block: 1024,
        unit: 128,
    },
    Limits {
        arch: "sm_86",
        threads_per_sm: 1536,
        blocks_per_sm: 16,
        shared_per_sm: 100 * 1024,
        reserved_per_block: 1024,
        unit: 128,
    },
    Limits {
        arch: "sm_89",
        threads_per_sm: 1536,
        blocks_per_sm: 24,
        shared_per_sm: 100 * 1024,
        reserved_per_block: 1024,
        unit: 128,
    },
    Limits {
        arch: "sm_90",
        threads_per_sm: 2048,
        blocks_per_sm: 32,
        shared_per_sm: 228 * 1024,
        reserved_per_block: 1024,
        unit: 128,
    },
];

/// Static `__shared__` memory a block may declare, on every architecture.
const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// A kernel's default budget: the bytes its arrays may grow by, and on what it rests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultBudget {
    pub bytes: u64,
    /// The architecture whose occupancy binds the budget.
    pub binding: String,
    /// Blocks per SM there, which the budget keeps.
    pub blocks_per_sm: u64,
    /// The build's architecture, where the table has it (else every one of the table).
    pub arch: Option<String>,
}

impl fmt::Display for DefaultBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.blocks_per_sm == 1 { "" } else { "s" };
        let scope = match &self.arch {
            Some(_) => String::new(),
            None => format!(
                " (the tightest of {}: the build's architecture is not known)",
                ARCHITECTURES
                    .iter()
                    .map(|l| l.arch)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        write!(
            f,
            "the default budget of {} bytes, which keeps {} block{plural} per SM on {}{scope}",
            self.bytes, self.blocks_per_sm, self.binding
        )
    }
}

/// The default budget of a kernel of `threads` threads per block that declares `footprint`
/// bytes of static shared memory, for the build's `arch` (`sm_90a` reads as `sm_90`); for
/// one the table does not have, or none, the tightest of every architecture of the table.
/// `None` when the block cannot be resident.
pub(crate) fn default_budget(
    threads: u64,
    footprint: u64,
    arch: Option<&str>,
) -> Option<DefaultBudget> {
    let known = arch.and_then(|arch| {
        ARCHITECTURES.iter().find(|l| {
            arch.strip_prefix(l.arch)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
        })
    });
    let architectures: Vec<&Limits> = match known {
        Some(limits) => vec![limits],
        None => ARCHITECTURES.iter().collect(),
    };
    let mut tightest: Option<DefaultBudget> = None;
    for limits in architectures {
        let (bytes, blocks) = growth(limits, threads, footprint)?;
        if tightest.as_ref().is_none_or(|t| bytes < t.bytes) {
            tightest = Some(DefaultBudget {
                bytes,
                binding: limits.arch.to_string(),
                blocks_per_sm: blocks,
                arch: known.map(|l| l.arch.to_string()),
            });
        }
    }
    tightest
}

/// The bytes a block may grow by on `limits` with as many blocks resident, and that number.
fn growth(limits: &Limits, threads: u64, footprint: u64) -> Option<(u64, u64)> {
    let warps_threads = threads.div_ceil(32) * 32;
    if warps_threads == 0 || warps_threads > limits.threads_per_sm {
        return None;
    }
    let per_block = |bytes: u64| {
        bytes
            .div_ceil(limits.unit)
            .saturating_mul(limits.unit)
            .saturating_add(limits.reserved_per_block)
    };
    let by_threads = limits
        .blocks_per_sm
        .min(limits.threads_per_sm / warps_threads);
    let by_shared = limits.shared_per_sm / per_block(footprint).max(1);
    let blocks = by_threads.min(by_shared);
    if blocks == 0 {
        return None;
    }
    let allocation = (limits.shared_per_sm / blocks).saturating_sub(limits.reserved_per_block)
        / limits.unit
        * limits.unit;
    let bytes = allocation
        .min(STATIC_SHARED_LIMIT)
        .saturating_sub(footprint);
    Some((bytes, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transpose_tile_has_room_on_every_architecture() {
        // 32x8 threads and a 32x32 float tile: sm_70 holds 8 blocks (2,048 threads) of
        // 96 KiB / 8 = 12,288 bytes each, the least of the table.
        let budget = default_budget(256, 4096, None).expect("a budget");
        assert_eq!(
            budget,
            DefaultBudget {
                bytes: 8192,
                binding: "sm_70".to_string(),
                blocks_per_sm: 8,
                arch: None,
            }
        );
        assert_eq!(
            budget.to_string(),
            "the default budget of 8192 bytes, which keeps 8 blocks per SM on sm_70 (the \
             tightest of sm_70, sm_75, sm_80, sm_86, sm_89, sm_90: the build's architecture \
             is not known)"
        );
        // sm_86 holds 6 blocks of 256 threads: 100 KiB / 6 less the driver's 1 KiB is
        // 16,042 bytes, 16,000 in 128-byte units. sm_90a is sm_90: 8 blocks of 228 KiB / 8,
        // 28,160 bytes.
        let sm_86 = default_budget(256, 4096, Some("sm_86")).expect("a budget");
        assert_eq!((sm_86.bytes, sm_86.blocks_per_sm), (11904, 6));
        assert_eq!(
            sm_86.to_string(),
            "the default budget of 11904 bytes, which keeps 6 blocks per SM on sm_86"
        );
        let sm_90 = default_budget(256, 4096, Some("sm_90a")).expect("a budget");
        assert_eq!((sm_90.bytes, sm_90.binding.as_str()), (24064, "sm_90"));
    }

    #[test]
    fn a_kernel_limited_by_its_shared_memory_keeps_its_allocation_unit() {
        // 64 threads and 40,000 bytes: sm_80 holds four blocks of 40,064 + 1,024 bytes, and
        // 167,936 / 4 less 1,024 is 40,960: 960 bytes more than declared. The others allow
        // more (the 48 KiB static limit binds on sm_70, sm_75, sm_86 and sm_89).
        let budget = default_budget(64, 40_000, None).expect("a budget");
        assert_eq!((budget.bytes, budget.binding.as_str()), (960, "sm_80"));
        // A footprint no SM holds (sizes near 2^64 from a hostile extent): no budget, no
        // overflow.
        assert_eq!(default_budget(256, u64::MAX, None), None);
        // A block of more threads than an SM holds is never resident: no budget.
        assert_eq!(default_budget(2048, 0, Some("sm_75")), None);
        // An architecture the table does not have takes the tightest of all.
        assert_eq!(
            default_budget(256, 4096, Some("sm_100a")).map(|b| (b.binding, b.arch)),
            Some(("sm_70".to_string(), None))
        );
    }
}
