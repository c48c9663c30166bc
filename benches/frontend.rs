//! Throughput of parse + extraction on a generated 10 MB CUDA file.
//!
//! `cargo bench --bench frontend` prints MB/s and the process's peak resident memory
//! (VmHWM). Goal (issue 2): ≥ 5 MB/s and ≤ 100 MB. `BENCH_MB` changes the size.
use std::time::Instant;

mod common;
#[path = "common/cpu.rs"]
mod cpu;

fn main() {
    let (source, kernels) = common::generated_source(common::target_bytes());
    let mb = source.len() as f64 / (1024.0 * 1024.0);
    let baseline = common::peak_resident_mb();
    let cpu_before = cpu::cpu_seconds();
    let start = Instant::now();
    let parsed = bankwise::parse::analyse_source(&source, &[]);
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu::cpu_line(mb, cpu_before);
    let accesses: usize = parsed
        .functions
        .iter()
        .flat_map(|f| &f.arrays)
        .map(|a| a.accesses.len())
        .sum();
    assert_eq!(parsed.functions.len(), kernels);
    assert!(parsed.syntax_errors.is_empty());
    println!(
        "frontend: {mb:.1} MB, {kernels} kernels, {accesses} accesses in {seconds:.2} s = {:.1} MB/s",
        mb / seconds
    );
    if let Some(cpu) = cpu {
        println!("frontend: {cpu}");
    }
    if let (Some(before), Some(peak)) = (baseline, common::peak_resident_mb()) {
        println!("frontend: peak resident memory {peak:.0} MB (source text and model included; {before:.0} MB before parsing)");
    }
}
