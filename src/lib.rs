//! bankwise: finds shared-memory bank conflicts in CUDA source and rewrites kernels to remove
//! them. Stages, each importing only those before it: `c_int` (C integer arithmetic, the one
//! evaluator every stage uses) → [`parse`] → [`block`] (launch shapes) →
//! [`affine`] → [`bank`] → [`cost`] → [`solve`] → [`settings`], [`command_line`] and [`compile_db`] →
//! [`analysis`] →
//! [`rewrite`] → [`plan`] → [`pipeline`] → [`report`]; on top, [`explain`] draws one access
//! for teaching, [`bench`] scores the families and [`prebuild`] runs the pipeline in front of
//! nvcc. docs/ARCHITECTURE.md says what flows between them.
pub mod affine;
pub mod analysis;
pub mod bank;
pub mod bench;
pub mod block;
mod c_int;
pub mod command_line;
pub mod compile_db;
pub mod compiled;
pub mod cost;
pub mod explain;
pub mod parallel;
pub mod parse;
pub mod pipeline;
pub mod plan;
pub mod prebuild;
pub mod report;
pub mod rewrite;
pub mod rules;
pub mod settings;
pub mod solve;

/// `eprintln!` that never panics: when stderr cannot be written (`2>/dev/full`, a closed
/// pipe) the message is lost, and the run still ends with its own exit status.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The allocator of every binary built on this crate (the CLI, the benches and the tests):
/// the model is hundreds of thousands of small boxes, which glibc's malloc serves with a
/// 16-byte header each and slower paths (see the commit that chose it for the figures).
/// Its v2 line, with arenas committed on demand (`.cargo/config.toml`), keeps less memory
/// resident than v3 at the same speed (frontend bench: peak 130-138 MB -> 110-112 MB).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gives the pages the allocator holds free back to the system. mimalloc returns freed pages
/// after a delay, so right after a large model is dropped its memory is still resident, and
/// what is made next comes on top of it: `fix` calls this between its stages (fix bench,
/// 10 MB: 130 MB resident after validation -> 54 MB).
pub fn release_freed_memory() {
    // SAFETY: `mi_collect` only walks the allocator's own heaps; any thread may call it at
    // any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
