//! The command line: parses arguments and wires the stages together.
use bankwise::analysis::{analyse_file, AnalysedFile, Options};
use bankwise::bank::BankConfig;
use bankwise::bench::{self, Bench};
use bankwise::block::CommandLineBlocks;
use bankwise::report;
use bankwise::rewrite::{self, FileFix, FixError, FixOptions, Strategy};
use bankwise::solve::raw;
use clap::builder::TypedValueParser;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status for usage and input errors (DESIGN.md §8).
const EXIT_INPUT_ERROR: u8 = 2;
/// Exit status of `check --deny-conflicts` when an access has bank conflicts.
const EXIT_CONFLICTS: u8 = 1;

#[derive(Parser)]
#[command(
    name = "bankwise",
    version,
    about = "Finds shared-memory bank conflicts in CUDA source"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse CUDA files and report every shared array and every access to it.
    Check(CheckArgs),
    /// Configure a bank hash for raw warp address sets (TC 2016 Sec. 5; teaching and
    /// debugging).
    Solve(SolveArgs),
    /// Rewrite CUDA files so that their shared arrays are stored without bank conflicts.
    Fix(FixArgs),
    /// Every hash family on every kernel of the given files or directories: excess wavefronts
    /// before and after, the chosen map, its cost (TC 2016 Table 6; docs/results.md).
    Bench(BenchArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// `.cu`/`.cuh` files, or directories to search for them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Block shape: `32x8` for every kernel, `NAME=32x8` for one (repeatable).
    #[arg(long = "block", value_name = "[KERNEL=]XxYxZ")]
    blocks: Vec<String>,
    /// Define a macro or template parameter, as for nvcc (`-D TILE=32`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Refuse files larger than this many bytes.
    #[arg(long, default_value_t = bankwise::parse::MAX_FILE_BYTES)]
    max_file_size: u64,
    /// Number of shared-memory banks: 32 (every GPU since Fermi) or 16 (Tesla, half-warp
    /// phases).
    #[arg(long, default_value_t = 32, value_parser = clap::builder::PossibleValuesParser::new(["16", "32"]).map(|s| s.parse::<u32>().unwrap_or(32)))]
    banks: u32,
    /// Bank width in bytes: 4, or 8 (Kepler's 8-byte mode).
    #[arg(long, default_value_t = 4, value_parser = clap::builder::PossibleValuesParser::new(["4", "8"]).map(|s| s.parse::<u32>().unwrap_or(4)))]
    bank_width: u32,
    /// Exit with status 1 when any access has excess wavefronts (for CI).
    #[arg(long)]
    deny_conflicts: bool,
}

#[derive(clap::Args)]
struct FixArgs {
    /// `.cu`/`.cuh` files, or directories to search for them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write the fixed file to OUT (one input file).
    #[arg(short = 'o', long = "output", value_name = "OUT", conflicts_with_all = ["in_place", "check"])]
    output: Option<PathBuf>,
    /// Rewrite the files in place (through a temporary file and a rename; permissions kept).
    #[arg(long, conflicts_with = "check")]
    in_place: bool,
    /// Print a unified diff (`git apply` accepts it) instead of the fixed file.
    #[arg(long)]
    diff: bool,
    /// Write nothing; exit with status 1 when a file would change.
    #[arg(long)]
    check: bool,
    /// Use one family for every array instead of the solvers' choice.
    #[arg(long, default_value = "auto", value_parser = clap::builder::PossibleValuesParser::new(
        std::iter::once("auto").chain(rewrite::plan::strategies().iter().copied())))]
    strategy: String,
    /// Shared memory each kernel may use, in bytes (default: what it declares, so padding
    /// must be asked for).
    #[arg(long, value_name = "BYTES")]
    smem_budget: Option<u64>,
    /// Apply unsafe fixes too (padding beyond the budget).
    #[arg(long)]
    unsafe_fixes: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

/// What the analysis needs, as `check` takes it.
#[derive(clap::Args)]
struct AnalysisArgs {
    /// Block shape: `32x8` for every kernel, `NAME=32x8` for one (repeatable).
    #[arg(long = "block", value_name = "[KERNEL=]XxYxZ")]
    blocks: Vec<String>,
    /// Define a macro or template parameter, as for nvcc (`-D TILE=32`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Refuse files larger than this many bytes.
    #[arg(long, default_value_t = bankwise::parse::MAX_FILE_BYTES)]
    max_file_size: u64,
    /// Number of shared-memory banks: 32 or 16.
    #[arg(long, default_value_t = 32, value_parser = clap::builder::PossibleValuesParser::new(["16", "32"]).map(|s| s.parse::<u32>().unwrap_or(32)))]
    banks: u32,
    /// Bank width in bytes: 4 or 8.
    #[arg(long, default_value_t = 4, value_parser = clap::builder::PossibleValuesParser::new(["4", "8"]).map(|s| s.parse::<u32>().unwrap_or(4)))]
    bank_width: u32,
}

impl AnalysisArgs {
    fn options(&self) -> Result<Options, String> {
        let blocks = CommandLineBlocks::parse(&self.blocks)?;
        if let Some(bad) = self
            .defines
            .iter()
            .find(|d| d.split('=').next().unwrap_or("").trim().is_empty())
        {
            return Err(format!("-D {bad}: the name is empty"));
        }
        Ok(Options {
            defines: self.defines.clone(),
            blocks,
            max_file_bytes: self.max_file_size,
            bank: BankConfig {
                banks: self.banks,
                bank_width: self.bank_width,
                warp: 32,
            },
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
struct SolveArgs {
    /// One warp request's word addresses, comma-separated; repeat for more requests.
    #[arg(long = "addresses", value_name = "A,B,...", required = true)]
    addresses: Vec<String>,
    /// Number of banks (a power of two); 4-byte words.
    #[arg(long, default_value_t = 32)]
    banks: u32,
    /// Address bits (default: what the largest address needs).
    #[arg(long)]
    address_bits: Option<u32>,
    #[arg(long, value_enum)]
    method: SolveMethod,
    /// Combine pairs of address bits with XOR (bit-vector XOR for `exhaustive`, XOR-linear
    /// maps for `exact`).
    #[arg(long)]
    xor: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// `.cu`/`.cuh` files, or directories to search for them (`testdata/suite`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = BenchFormat::Markdown)]
    format: BenchFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchFormat {
    /// `{"benchmarks": [...], "summary": {...}}`.
    Json,
    /// The table of docs/results.md, with TC 2016's figures beside ours.
    Markdown,
    /// The parameters each family finds beside TC 2016's Table 5 (docs/table5.md).
    Table5,
}

#[derive(Clone, Copy, ValueEnum)]
enum SolveMethod {
    /// Every bit-vector permutation, or with --xor the pruned bit-vector XOR search.
    Exhaustive,
    /// The Givargis heuristic.
    Gh,
    /// The Minimum Imbalance Heuristic.
    Mih,
    /// The best bitwise permutation, or with --xor the best XOR-linear map.
    Exact,
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check(args),
        Command::Solve(args) => solve(args),
        Command::Fix(args) => fix(args),
        Command::Bench(args) => bench(args),
    }
}

fn bench(args: BenchArgs) -> ExitCode {
    let options = Options::default();
    let mut failed = false;
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    for path in collect_sources(&args.paths, &mut failed) {
        match analyse_file(&path, &options) {
            Ok(file) => {
                failed |= file.failed();
                analysed.push(file);
            }
            Err(err) => {
                eprintln!("bankwise: error: {err}");
                failed = true;
            }
        }
    }
    if failed {
        return ExitCode::from(EXIT_INPUT_ERROR);
    }
    let bench = match Bench::run(&analysed, &options.bank) {
        Ok(bench) => bench,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let output = match args.format {
        BenchFormat::Json => serde_json::to_string_pretty(&bench.to_json()).map(|j| j + "\n"),
        BenchFormat::Markdown => Ok(bench::markdown::results(&bench)),
        BenchFormat::Table5 => Ok(bench::markdown::table5(&bench)),
    };
    match output {
        Ok(output) if write_stdout(&output) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(EXIT_INPUT_ERROR),
        Err(err) => {
            eprintln!("bankwise: error: cannot write JSON: {err}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

fn fix(args: FixArgs) -> ExitCode {
    let analysis = match args.analysis.options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let options = FixOptions {
        analysis,
        strategy: Strategy {
            forced: (args.strategy != "auto").then(|| args.strategy.clone()),
            smem_budget: args.smem_budget,
        },
        unsafe_fixes: args.unsafe_fixes,
    };
    let mut failed = false;
    let sources = collect_sources(&args.files, &mut failed);
    let to_stdout = args.output.is_none() && !args.in_place && !args.check && !args.diff;
    if (args.output.is_some() || (to_stdout && matches!(args.format, Format::Text)))
        && sources.len() > 1
    {
        eprintln!(
            "bankwise: error: {} files: write them with --in-place, or show them with --diff",
            sources.len()
        );
        return ExitCode::from(EXIT_INPUT_ERROR);
    }
    let mut fixed: Vec<FileFix> = Vec::new();
    for path in &sources {
        match rewrite::fix_file(path, &options) {
            Ok(file) => fixed.push(file),
            Err(err) => {
                eprintln!("bankwise: error: {err}");
                if matches!(err, FixError::Internal { .. }) {
                    eprintln!(
                        "bankwise: this is a bug in bankwise; please report it with the file"
                    );
                }
                failed = true;
            }
        }
    }
    let diffs: Vec<String> = fixed.iter().map(unified_diff).collect();
    let report = rewrite::report::text(&fixed, args.check);
    for file in &fixed {
        let target = match (&args.output, args.in_place) {
            (Some(output), _) => Some(output.as_path()),
            (None, true) if file.changed() => Some(file.path.as_path()),
            _ => None,
        };
        if let Some(target) = target {
            if let Err(message) = write_file(target, &file.output, args.in_place) {
                eprintln!("bankwise: error: {}: {message}", target.display());
                failed = true;
            }
        }
    }
    let output = match args.format {
        Format::Json => {
            let json = rewrite::report::json(&fixed, args.diff.then_some(diffs.as_slice()));
            match serde_json::to_string_pretty(&json) {
                Ok(json) => json + "\n",
                Err(err) => {
                    eprintln!("bankwise: error: cannot write JSON: {err}");
                    return ExitCode::from(EXIT_INPUT_ERROR);
                }
            }
        }
        Format::Text => {
            eprint!("{report}");
            if args.diff {
                diffs.concat()
            } else if to_stdout {
                fixed.iter().map(|f| f.output.as_str()).collect()
            } else {
                String::new()
            }
        }
    };
    failed |= !write_stdout(&output);
    if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else if args.check && fixed.iter().any(FileFix::changed) {
        ExitCode::from(EXIT_CONFLICTS)
    } else {
        ExitCode::SUCCESS
    }
}

/// The change to one file as a unified diff with `a/` and `b/` headers (`git apply` reads
/// it); empty when nothing changes.
fn unified_diff(file: &FileFix) -> String {
    if !file.changed() {
        return String::new();
    }
    let path = file.path.to_string_lossy();
    let path = path.trim_start_matches("./").trim_start_matches('/');
    similar::TextDiff::from_lines(&file.original, &file.output)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// Writes `text` to `target` through a temporary file beside it and a rename, so that an
/// interrupted write never leaves half a file; a read-only target is refused untouched. In
/// place, the file keeps its permissions.
fn write_file(target: &Path, text: &str, keep_permissions: bool) -> Result<(), String> {
    let existing = std::fs::metadata(target).ok();
    if existing
        .as_ref()
        .is_some_and(|m| m.permissions().readonly())
    {
        return Err("the file is read-only; nothing written".into());
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    let temporary = dir.join(format!(".{name}.bankwise-{}.tmp", std::process::id()));
    let written = std::fs::write(&temporary, text)
        .and_then(|()| match (&existing, keep_permissions) {
            (Some(metadata), true) => std::fs::set_permissions(&temporary, metadata.permissions()),
            _ => Ok(()),
        })
        .and_then(|()| std::fs::rename(&temporary, target));
    written.map_err(|err| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write: {err}; nothing written")
    })
}

fn solve(args: SolveArgs) -> ExitCode {
    let sets: Result<Vec<Vec<i64>>, String> = args
        .addresses
        .iter()
        .map(|list| {
            list.split(',')
                .map(|a| {
                    a.trim().parse::<i64>().map_err(|_| {
                        format!("--addresses {list}: `{}` is not an address", a.trim())
                    })
                })
                .collect()
        })
        .collect();
    let method = match args.method {
        SolveMethod::Exhaustive => raw::Method::Exhaustive,
        SolveMethod::Gh => raw::Method::Givargis,
        SolveMethod::Mih => raw::Method::Mih,
        SolveMethod::Exact => raw::Method::Exact,
    };
    let solution = sets.and_then(|sets| {
        raw::solve_addresses(&sets, args.banks, args.address_bits, method, args.xor)
    });
    let solution = match solution {
        Ok(solution) => solution,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let output = match args.format {
        Format::Text => Ok(solution.to_text()),
        Format::Json => serde_json::to_string_pretty(&solution.to_json()).map(|j| j + "\n"),
    };
    match output {
        Ok(output) if write_stdout(&output) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(EXIT_INPUT_ERROR),
        Err(err) => {
            eprintln!("bankwise: error: cannot write JSON: {err}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let blocks = match CommandLineBlocks::parse(&args.blocks) {
        Ok(blocks) => blocks,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let options = Options {
        defines: args.defines,
        blocks,
        max_file_bytes: args.max_file_size,
        bank: BankConfig {
            banks: args.banks,
            bank_width: args.bank_width,
            warp: 32,
        },
    };
    if let Some(bad) = options
        .defines
        .iter()
        .find(|d| d.split('=').next().unwrap_or("").trim().is_empty())
    {
        eprintln!("bankwise: error: -D {bad}: the name is empty");
        return ExitCode::from(EXIT_INPUT_ERROR);
    }
    let mut failed = false;
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    for path in collect_sources(&args.files, &mut failed) {
        match analyse_file(&path, &options) {
            Ok(file) => {
                failed |= file.failed();
                analysed.push(file);
            }
            Err(err) => {
                eprintln!("bankwise: error: {err}");
                failed = true;
            }
        }
    }
    for kernel in options.blocks.per_kernel.keys() {
        let known = analysed
            .iter()
            .flat_map(|f| &f.parsed.functions)
            .any(|f| &f.name == kernel || &f.display_name() == kernel);
        if !known {
            eprintln!(
                "bankwise: warning: --block {kernel}=…: no kernel named `{kernel}` in these files"
            );
        }
    }
    let output = match args.format {
        Format::Text => Ok(report::text(&analysed)),
        Format::Json => serde_json::to_string_pretty(&report::json(&analysed)).map(|j| j + "\n"),
    };
    match output {
        Ok(output) => failed |= !write_stdout(&output),
        Err(err) => {
            eprintln!("bankwise: error: cannot write JSON: {err}");
            failed = true;
        }
    }
    let conflicts = analysed.iter().any(|file| {
        file.reported()
            .any(|r| r.costs.iter().flatten().flatten().any(|c| c.excess() > 0))
    });
    if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else if args.deny_conflicts && conflicts {
        ExitCode::from(EXIT_CONFLICTS)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes to stdout; a closed pipe (`bankwise check … | head`) is not an error.
fn write_stdout(text: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => true,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(err) => {
            eprintln!("bankwise: error: cannot write output: {err}");
            false
        }
    }
}

/// Expands directories into the `.cu`/`.cuh` files under them, sorted; reports paths that
/// do not exist and directories without CUDA files.
fn collect_sources(paths: &[PathBuf], failed: &mut bool) -> Vec<PathBuf> {
    let mut sources = Vec::new();
    for path in paths {
        if path.is_dir() {
            let before = sources.len();
            walk_dir(path, &mut sources);
            if sources.len() == before {
                eprintln!(
                    "bankwise: error: {}: no .cu or .cuh files in this directory",
                    path.display()
                );
                *failed = true;
            }
        } else if path.exists() {
            sources.push(path.clone());
        } else {
            eprintln!("bankwise: error: {}: no such file", path.display());
            *failed = true;
        }
    }
    sources
}

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut pending = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!(
                "bankwise: warning: {}: cannot read directory",
                dir.display()
            );
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // Symlinked directories are not followed: a link loop would never end.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|ext| ext == "cu" || ext == "cuh")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    out.extend(found);
}
