//! Tool speed (issue 7, item 4): per-stage time on the benchmark suite and on a generated
//! file, and `fix` against `nvcc -cubin` on the same kernels (goal: bankwise ≤ 2% of nvcc).
//!
//! `cargo bench --bench speed`. The stages are timed by difference, each as the best of
//! several runs (the machine is shared, the best run is the least disturbed one):
//! parse = front end (tree-sitter, extraction, statement IR); analyse = `check`'s pipeline
//! minus parse (block shapes, affine analysis, bank simulation); fix = `fix` minus analyse
//! (solvers, ILP, edits, translation validation, which analyses the output again).
//! nvcc is the PyPI one in target/nvcc-venv (`scripts/nvcc-env`); without it the comparison
//! is skipped with a note. `BENCH_MB` sets the generated file's size (default 10).
use bankwise::analysis::{analyse_text, Options};
use bankwise::block::ConfigBlocks;
use bankwise::pipeline::{fix_text, FixOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

const RUNS: usize = 5;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("testdata/suite"))
        .expect("testdata/suite is readable")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
        .collect();
    files.sort();
    let nvcc = nvcc(root);
    if nvcc.is_none() {
        println!(
            "speed: target/nvcc-venv has no nvcc (run scripts/test once); nvcc column skipped"
        );
    }
    println!(
        "| kernel file | bytes | parse ms | analyse ms | fix ms | nvcc -cubin ms | fix / nvcc |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut total = Stages::default();
    let mut nvcc_total = Duration::ZERO;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a suite file is UTF-8");
        let stages = Stages::measure(path, &text, RUNS);
        let compile = nvcc.as_ref().and_then(|nvcc| time_nvcc(nvcc, path));
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into());
        let (nvcc_ms, ratio) = match compile {
            Some(t) => {
                nvcc_total += t;
                (
                    ms(t),
                    format!(
                        "{:.2}%",
                        100.0 * stages.fix_total().as_secs_f64() / t.as_secs_f64()
                    ),
                )
            }
            None => ("–".into(), "–".into()),
        };
        println!(
            "| {name} | {} | {} | {} | {} | {nvcc_ms} | {ratio} |",
            text.len(),
            ms(stages.parse),
            ms(stages.analyse),
            ms(stages.fix),
        );
        total.add(&stages);
    }
    let ratio = if nvcc_total > Duration::ZERO {
        format!(
            "{:.2}%",
            100.0 * total.fix_total().as_secs_f64() / nvcc_total.as_secs_f64()
        )
    } else {
        "–".into()
    };
    println!(
        "| **all {}** | | {} | {} | {} | {} | **{ratio}** |",
        files.len(),
        ms(total.parse),
        ms(total.analyse),
        ms(total.fix),
        ms(nvcc_total)
    );

    let (source, _) = common::generated_source(common::target_bytes());
    let mb = source.len() as f64 / (1024.0 * 1024.0);
    let stages = Stages::measure(Path::new("generated.cu"), &source, 1);
    let rate = |t: Duration| mb / t.as_secs_f64();
    println!(
        "generated {mb:.1} MB: parse {:.2} s ({:.1} MB/s), check {:.2} s ({:.1} MB/s), fix {:.2} s ({:.1} MB/s)",
        stages.parse.as_secs_f64(),
        rate(stages.parse),
        stages.check_total().as_secs_f64(),
        rate(stages.check_total()),
        stages.fix_total().as_secs_f64(),
        rate(stages.fix_total()),
    );
    if let Some(peak) = common::peak_resident_mb() {
        println!("peak resident memory {peak:.0} MB");
    }
}

#[derive(Default)]
struct Stages {
    parse: Duration,
    analyse: Duration,
    fix: Duration,
}

impl Stages {
    /// Best of `runs` for each cumulative step, then the differences.
    fn measure(path: &Path, text: &str, runs: usize) -> Stages {
        let options = FixOptions::default();
        let config = ConfigBlocks::default();
        let parse = best_of(runs, || {
            std::hint::black_box(bankwise::parse::analyse_source(text, &[]));
        });
        let check = best_of(runs, || {
            std::hint::black_box(analyse_text(path, text, &Options::default(), &config));
        });
        let fix = best_of(runs, || {
            let fixed = fix_text(path, text, &options, &config);
            std::hint::black_box(fixed.is_ok());
        });
        Stages {
            parse,
            analyse: check.saturating_sub(parse),
            fix: fix.saturating_sub(check),
        }
    }

    fn check_total(&self) -> Duration {
        self.parse + self.analyse
    }

    fn fix_total(&self) -> Duration {
        self.check_total() + self.fix
    }

    fn add(&mut self, other: &Stages) {
        self.parse += other.parse;
        self.analyse += other.analyse;
        self.fix += other.fix;
    }
}

fn best_of(runs: usize, mut work: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(t: Duration) -> String {
    format!("{:.1}", t.as_secs_f64() * 1000.0)
}

/// The PyPI nvcc, if scripts/nvcc-env has installed it (a benchmark downloads nothing).
fn nvcc(root: &Path) -> Option<PathBuf> {
    if !root
        .join("target/nvcc-venv/.bankwise-nvcc-installed")
        .is_file()
    {
        return None;
    }
    let output = Command::new(root.join("scripts/nvcc-env"))
        .arg("path")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && path.is_file()).then_some(path)
}

/// Best of three `nvcc -arch=sm_90 -cubin` compiles of `file`, with the flags its first line
/// asks for (`// nvcc-flags: …`, as scripts/nvcc-env reads them).
fn time_nvcc(nvcc: &Path, file: &Path) -> Option<Duration> {
    let text = std::fs::read_to_string(file).ok()?;
    let flags: Vec<&str> = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("// nvcc-flags:"))
        .map(|flags| flags.split_whitespace().collect())
        .unwrap_or_default();
    let dir = tempfile::tempdir().ok()?;
    let times: Option<Vec<Duration>> = (0..3)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new(nvcc)
                .args(&flags)
                .args(["-arch=sm_90", "-cubin", "-o"])
                .arg(dir.path().join("out.cubin"))
                .arg(file)
                .status()
                .ok()?;
            status.success().then(|| start.elapsed())
        })
        .collect();
    times?.into_iter().min()
}
