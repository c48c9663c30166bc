//! Throughput of the whole `check` pipeline on a generated 10 MB CUDA file: read, parse,
//! extraction, statement IR, affine analysis, bank simulation and the text report.
//!
//! `cargo bench --bench check` prints MB/s and the process's peak resident memory (VmHWM).
//! Goal (issue 4): ≥ 5 MB/s. `BENCH_MB` changes the size.
use bankwise::analysis::{KeepAffine, Options};
use bankwise::pipeline::check_file;
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
    // As `check` (text) analyses it: no fix planned, so no affine analysis kept.
    let options = Options {
        keep_affine: KeepAffine::Never,
        ..Options::default()
    };
    let baseline = common::peak_resident_mb();
    let cpu_before = cpu::cpu_seconds();
    let start = Instant::now();
    let analysed = check_file(&path, &options, false)
        .expect("the generated file is analysed")
        .analysed;
    // `check -v`'s report, a line for every access: the most text the check makes.
    let every_access = bankwise::report::finding::Shown {
        clean_accesses: true,
        ..Default::default()
    };
    // Written as `check` writes it to stdout, here to a counter of lines.
    let mut report = std::io::BufWriter::new(LineCount(0));
    bankwise::report::write_text(&mut report, std::slice::from_ref(&analysed), &every_access)
        .expect("the report is written");
    let report = report.into_inner().expect("the report is flushed");
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu::cpu_line(mb, cpu_before);
    let notes = report.0;
    let simulated = analysed
        .per_function
        .iter()
        .flat_map(|f| f.costs.iter().flatten())
        .filter(|cost| cost.is_ok())
        .count();
    assert_eq!(analysed.parsed.functions.len(), kernels);
    assert!(analysed.parsed.syntax_errors.is_empty());
    println!(
        "check: {mb:.1} MB, {kernels} kernels, {simulated} accesses simulated, {notes} report lines in {seconds:.2} s = {:.1} MB/s",
        mb / seconds
    );
    if let Some(cpu) = cpu {
        println!("check: {cpu}");
    }
    if let (Some(before), Some(peak)) = (baseline, common::peak_resident_mb()) {
        println!("check: peak resident memory {peak:.0} MB (report included; {before:.0} MB before reading the file)");
    }
}

/// A `Write` that keeps only the number of lines written.
#[derive(Debug)]
struct LineCount(usize);

impl std::io::Write for LineCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.iter().filter(|b| **b == b'\n').count();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
