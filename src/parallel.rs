//! Independent work shared out between threads, results in order.
use std::sync::atomic::{AtomicUsize, Ordering};

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
    let finished: Vec<Vec<(usize, T)>> = if threads == 1 {
        vec![worker()]
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
            workers
                .into_iter()
                .map(|w| match w.join() {
                    Ok(done) => done,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    };
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
