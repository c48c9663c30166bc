//! Throughput of `fix` on the generated 10 MB CUDA file of `benches/check.rs`: the analysis,
//! the plan of every array, the edits, and the re-analysis that validates the output. Half
//! of its kernels have a conflicting tile, so it rewrites about 5,000 arrays.
//!
//! `cargo bench --bench fix` prints MB/s and the process's peak resident memory (VmHWM).
//! Goal (issue 18): ≥ 2 MB/s and ≤ 150 MB on 2 cores. `BENCH_MB` changes the size.
use bankwise::pipeline::{fix_file, FixOptions};
use std::time::Instant;

mod common;
#[path = "common/cpu.rs"]
mod cpu;

fn main() {
    let (source, kernels) = common::generated_source(common::target_bytes());
    let mb = source.len() as f64 / (1024.0 * 1024.0);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("generated.cu");
    std::fs::write(&path, &source).expect("the generated file is written");
    drop(source);
    let options = FixOptions::default();
    let baseline = common::peak_resident_mb();
    let cpu_before = cpu::cpu_seconds();
    let start = Instant::now();
    // As `bankwise fix FILE` reads and fixes it.
    let fixed = fix_file(&path, &options).expect("the generated file is fixed");
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu::cpu_line(mb, cpu_before);
    let rewritten = fixed
        .arrays
        .iter()
        .filter(|a| a.action == bankwise::plan::Action::Rewritten)
        .count();
    println!(
        "fix: {mb:.1} MB, {kernels} kernels, {rewritten} arrays rewritten in {seconds:.2} s = {:.1} MB/s",
        mb / seconds
    );
    if let Some(cpu) = cpu {
        println!("fix: {cpu}");
    }
    if let (Some(before), Some(peak)) = (baseline, common::peak_resident_mb()) {
        println!("fix: peak resident memory {peak:.0} MB ({before:.0} MB before reading the file)");
    }
}
