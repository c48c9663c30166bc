//! Independent work shared out between threads, results in order, on a rayon pool whose
//! workers have deep stacks.
use rayon::prelude::*;
use std::sync::LazyLock;

/// Each worker's stack. The front end and the analysis recurse on the nesting of the source
/// (bounded: see `affine::sym::MAX_DEPTH`), and a generous stack costs only address space,
/// where the default 2 MiB of a spawned thread would make that bound depend on the build.
pub const WORKER_STACK_BYTES: usize = 64 << 20;

/// The pool every analysis shares (one per process; rayon steals work between nested
/// uses). `None` when no thread can be started: the work then runs on the caller's.
static POOL: LazyLock<Option<rayon::ThreadPool>> = LazyLock::new(|| {
    rayon::ThreadPoolBuilder::new()
        .stack_size(WORKER_STACK_BYTES)
        .thread_name(|i| format!("bankwise-{i}"))
        .build()
        .ok()
});

/// `work(0..count)` in order. The items are independent, so they are shared out between
/// the pool's threads, at least `per_thread` at a time, since below that moving them to
/// another thread costs more than it saves.
pub fn map<T: Send>(count: usize, per_thread: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let run = || {
        (0..count)
            .into_par_iter()
            .with_min_len(per_thread.max(1))
            .map(&work)
            .collect()
    };
    match &*POOL {
        Some(pool) => pool.install(run),
        None => (0..count).map(&work).collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_order() {
        let squares = super::map(100, 1, |i| i * i);
        assert_eq!(squares, (0..100).map(|i| i * i).collect::<Vec<_>>());
        assert!(super::map(0, 4, |i| i).is_empty());
    }
}
