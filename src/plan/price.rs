//! Whether a rewrite pays for its instructions: the ALU instructions its map adds to a block,
//! over the shared-memory instructions the source model executes, against the excess
//! wavefronts it removes.

use crate::cost::SiteCost;
use crate::parse::SharedArray;
use crate::rewrite::forms::Rewrite;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most ALU instructions a map may add per excess wavefront it removes. Measured on an
/// H100 and an H200 (docs/gpu.md): no rewrite that added more made a launch faster, and
/// those that did not pay included every one more than 1.5 times slower but two.
pub const MAX_ALU_PER_WAVEFRONT: u64 = 3;

/// What a rewrite costs and what it removes, per block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewritePrice {
    /// Warp-level shared-memory instructions of the array's accesses.
    pub instructions: u64,
    /// ALU instructions the map adds to them.
    pub alu_added: u64,
    /// Excess wavefronts the map removes.
    pub removed: u64,
}

impl RewritePrice {
    /// The price of `rewrite` of `array`, whose accesses cost `costs` before it, removing
    /// `removed` excess wavefronts. An access whose cost is unknown counts no instruction
    /// (such an array is not rewritten).
    pub(crate) fn of(
        rewrite: &Rewrite,
        array: &SharedArray,
        costs: &[Result<SiteCost, String>],
        removed: u64,
    ) -> Self {
        let mut price = RewritePrice {
            instructions: 0,
            alu_added: 0,
            removed,
        };
        for ((access, cost), rewritten) in array.accesses.iter().zip(costs).zip(&rewrite.accesses) {
            let Ok(cost) = cost else { continue };
            let detail = access.detail();
            let bytes = detail
                .vector_bytes
                .or(detail.member_bytes.map(|(_, size)| size))
                .or(array.elem_bytes)
                .unwrap_or(4);
            // A warp's wide access takes one wavefront per 128 bytes, one instruction.
            let instructions = cost.ideal_wavefronts / (bytes / 4).max(1);
            price.instructions += instructions;
            price.alu_added += instructions * u64::from(rewritten.alu);
        }
        price
    }

    /// More ALU instructions than `limit` per wavefront removed.
    pub(crate) fn too_dear(&self, limit: u64) -> bool {
        self.alu_added > limit.saturating_mul(self.removed)
    }

    /// Why a price over `limit` leaves the array alone.
    pub(crate) fn explain(&self, f: &mut fmt::Formatter<'_>, limit: u64) -> fmt::Result {
        let per_access = self.alu_added as f64 / self.instructions.max(1) as f64;
        let per_wavefront = self.alu_added as f64 / self.removed.max(1) as f64;
        let plural = if self.removed == 1 { "" } else { "s" };
        write!(
            f,
            "the map adds {} ALU instructions per block ({per_access:.1} on each of {} \
             shared-memory instructions) to remove {} excess wavefront{plural}: \
             {per_wavefront:.1} per wavefront, over the limit of {limit} \
             (--max-alu-per-wavefront)",
            self.alu_added, self.instructions, self.removed
        )
    }
}
