//! Memory and time against the number of shared-memory reads in one expression (issue 18,
//! item 2: "memory linear in the accesses of one expression"): `o[t] = s[t] + s[t] + …`
//! with 2,000 to 32,000 reads, each size checked and fixed in a process of its own, so
//! that each peak (VmHWM) is that size's alone.
//!
//! `cargo bench --bench expression` prints one row per size and the memory each read
//! adds; a linear cost keeps that last column flat as the size doubles. (A sum nests as
//! deep as it has terms: past the front end's bound of 200 levels the reads are reported,
//! each with that reason, but not simulated; the `simulated` column counts the others.)
use bankwise::analysis::{KeepAffine, Options};
use bankwise::pipeline::{check_file, fix_file, FixOptions};
use std::process::Command;
use std::time::Instant;

#[path = "common/memory.rs"]
mod memory;

const SIZES: [usize; 5] = [2_000, 4_000, 8_000, 16_000, 32_000];
/// Set in the child that measures one size.
const CHILD: &str = "BANKWISE_BENCH_READS";

fn main() {
    if let Some(reads) = std::env::var(CHILD).ok().and_then(|v| v.parse().ok()) {
        measure(reads);
        return;
    }
    let me = std::env::current_exe().expect("the bench's own path");
    println!("| reads in one expression | simulated | check s | check peak MB | fix s | fix peak MB | KB per read (fix, above the 2,000-read peak) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut first: Option<(usize, f64)> = None;
    for reads in SIZES {
        let out = Command::new(&me)
            .env(CHILD, reads.to_string())
            .output()
            .expect("the bench runs itself");
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let fields: Vec<f64> = line
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        let [simulated, check_s, check_mb, fix_s, fix_mb] = fields[..] else {
            println!(
                "| {reads} | failed: {line} {} |",
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        };
        let per_read = match first {
            Some((base_reads, base_mb)) => format!(
                "{:.2}",
                (fix_mb - base_mb) * 1024.0 / (reads - base_reads) as f64
            ),
            None => "–".to_string(),
        };
        first.get_or_insert((reads, fix_mb));
        println!(
            "| {reads} | {simulated} | {check_s:.2} | {check_mb:.0} | {fix_s:.2} | {fix_mb:.0} | {per_read} |"
        );
    }
}

/// Checks (as `check` does, text report) then fixes a kernel with `reads` reads in one
/// expression; prints the seconds and peaks.
fn measure(reads: usize) {
    let source = format!(
        "// bankwise: block=32\n__global__ void k(float *o)\n{{\n    __shared__ float s[64];\n    \
         int t = threadIdx.x;\n    s[t] = 1;\n    o[t] = {};\n}}\n",
        vec!["s[t]"; reads].join(" + ")
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("reads.cu");
    std::fs::write(&path, source).expect("written");
    let options = Options {
        keep_affine: KeepAffine::Never,
        ..Options::default()
    };
    let start = Instant::now();
    let checked = check_file(&path, &options, false).expect("checked");
    let simulated: usize = checked.analysed.per_function[0].costs[0]
        .iter()
        .filter(|c| c.is_ok())
        .count();
    let check_s = start.elapsed().as_secs_f64();
    let check_mb = memory::peak_resident_mb().unwrap_or(f64::NAN);
    drop(checked);
    let start = Instant::now();
    fix_file(&path, &FixOptions::default()).expect("fixed");
    let fix_s = start.elapsed().as_secs_f64();
    let fix_mb = memory::peak_resident_mb().unwrap_or(f64::NAN);
    println!("{simulated} {check_s} {check_mb} {fix_s} {fix_mb}");
}
