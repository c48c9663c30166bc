//! Independent work shared out between threads, results in order.
use std::sync::atomic::{AtomicUsize, Ordering};

/// Each worker's stack. The front end and the analysis recurse on the nesting of the source
/// (bounded: see `affine::sym::MAX_DEPTH`), and a generous stack costs only address space,
/// where the default 2 MiB of a spawned thread would make that bound depend on the build.
const WORKER_STACK_BYTES: usize = 64 << 20;

/// `work(0..count)` in order. The items are independent, so they are shared out between
/// threads, one at a time; a thread is started for every `per_thread` items at most, since
/// below that starting it costs more than it saves.
pub fn map<T: Send>(count: usize, per_thread: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(count.div_ceil(per_thread.max(1)))
        .max(1);
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return done;
            }
            done.push((i, work(i)));
        }
    };
    let finished: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        // A worker that cannot be started leaves its share to the others (and to this
        // thread, when none starts).
        let workers: Vec<_> = (0..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK_BYTES)
                    .spawn_scoped(scope, worker)
                    .ok()
            })
            .collect();
        let mut finished: Vec<Vec<(usize, T)>> = workers
            .into_iter()
            .map(|w| match w.join() {
                Ok(done) => done,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect();
        finished.push(worker());
        finished
    });
    let mut results: Vec<(usize, T)> = finished.into_iter().flatten().collect();
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, result)| result).collect()
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
