//! `bankwise fix`: rewrites, diffs and atomic writes.
use super::sources::{gather, Roots};
use super::{
    fix_options, inputs, strategy_parser, write_file, write_stdout, AnalysisArgs, Format, RunArgs,
    EXIT_CONFLICTS, EXIT_INPUT_ERROR,
};
use bankwise::compiled::{Availability, Compiler};
use bankwise::pipeline::{self, FileFix, FixError};
use bankwise::settings::{Settings, StrategySetting};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct FixArgs {
    /// `.cu`/`.cuh` files, or directories to search for them (with `--compile-commands`
    /// and none given: the CUDA files it lists).
    #[arg(required_unless_present = "compile_commands")]
    files: Vec<PathBuf>,
    /// Write the fixed file to OUT (one input file); `-o -` is stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT", conflicts_with_all = ["in_place", "check"])]
    output: Option<PathBuf>,
    /// Rewrite the files in place (through a temporary file and a rename; permissions kept).
    #[arg(long, conflicts_with = "check")]
    in_place: bool,
    /// Print a unified diff (`git apply` accepts it) instead of the fixed file, and write
    /// nothing (a dry run, even with --in-place or -o).
    #[arg(long)]
    diff: bool,
    /// Write nothing; exit with status 1 when a file would change.
    #[arg(long)]
    check: bool,
    /// Use one family for every array instead of the solvers' choice (default: auto).
    #[arg(long, value_parser = strategy_parser())]
    strategy: Option<StrategySetting>,
    /// Shared memory each kernel may use, in bytes (default: what it declares, plus what it
    /// may grow by without losing occupancy on the build's architecture).
    #[arg(long, value_name = "BYTES")]
    smem_budget: Option<u64>,
    /// Leave an array alone when its map adds more than N ALU instructions per excess
    /// wavefront it removes (default 3, what rewrites measured on GPUs show pays).
    #[arg(long, value_name = "N")]
    max_alu_per_wavefront: Option<u64>,
    /// Apply unsafe fixes too (padding beyond the budget).
    #[arg(long)]
    unsafe_fixes: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print the settings in effect for each file (configuration file, bank model, strategy,
    /// budget, block shapes, definitions) instead of fixing it.
    #[arg(long)]
    show_settings: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    run: RunArgs,
}

pub fn run(mut args: FixArgs) -> ExitCode {
    // `-o -` is stdout, as for ruff and clang-format, never a file named `-`.
    if args.output.as_deref() == Some(std::path::Path::new("-")) {
        if matches!(args.format, Format::Json) {
            bankwise::say!(
                "bankwise: error: -o - and --format json both write to stdout; leave out one"
            );
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
        args.output = None;
    }
    let settings = Settings {
        strategy: args.strategy,
        smem_budget: args.smem_budget,
        max_alu_per_wavefront: args.max_alu_per_wavefront,
        unsafe_fixes: args.unsafe_fixes.then_some(true),
        ..Settings::default()
    };
    let options = match fix_options(&args.analysis, settings) {
        Ok(options) => options,
        Err(code) => return code,
    };
    let mut failed = false;
    let files = inputs(&args.files, &options.analysis);
    let limit = options.analysis.max_file_bytes;
    let (sources, stdin) = match gather(&files, &args.run, limit, &mut failed) {
        Ok((_, Some(_))) if args.in_place => {
            bankwise::say!("bankwise: error: --in-place needs a file; stdin is printed or -o");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
        Ok(gathered) => gathered,
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    if args.show_settings {
        return super::show_settings(&sources, &options, "", failed);
    }
    let to_stdout = args.output.is_none() && !args.in_place && !args.check && !args.diff;
    if (args.output.is_some() || (to_stdout && matches!(args.format, Format::Text)))
        && sources.len() > 1
    {
        bankwise::say!(
            "bankwise: error: {} files: write them with --in-place, or show them with --diff",
            sources.len()
        );
        return ExitCode::from(EXIT_INPUT_ERROR);
    }
    let mut options = options;
    let mut launch_sources = super::header_includers(&args.files, &sources, &options.analysis);
    if sources.len() > 1 || !launch_sources.is_empty() {
        // A kernel launched from another of the files takes that launch's block shape.
        launch_sources.extend(sources.iter().cloned());
        options.analysis.launches_elsewhere =
            std::sync::Arc::new(pipeline::launches_in(&launch_sources, &options.analysis));
    }
    let mut fixed: Vec<FileFix> = Vec::new();
    let results = match &stdin {
        Some((name, text)) => vec![pipeline::fix_source(name, text.clone(), &options)],
        None => args.run.each("fixing", &sources, |path| {
            pipeline::fix_file(path, &options)
        }),
    };
    let mut errors = super::ErrorsOnce::default();
    for result in results {
        match result {
            Ok(file) => fixed.push(file),
            Err(err) => {
                errors.say(&err);
                if matches!(err, FixError::Internal { .. }) {
                    bankwise::say!(
                        "bankwise: this is a bug in bankwise; please report it with the file"
                    );
                }
                failed = true;
            }
        }
    }
    // Only `--diff` shows them, and a diff of a large file with many edits is not free.
    let diffs: Vec<String> = if args.diff {
        fixed.iter().map(unified_diff).collect()
    } else {
        Vec::new()
    };
    let mut report = String::new();
    let roots = Roots::new(&files);
    // Where in-place writes went, links resolved: a file reached twice in a tree (itself and
    // through a link beside it) is written once, since the second write would find it changed.
    let mut written_to: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for file in &fixed {
        // `--diff` is a dry run, as with ruff: even with `--in-place` or `-o`, only shown.
        let target = match (&args.output, args.in_place) {
            _ if args.diff => None,
            (Some(output), _) => Some(output.as_path()),
            (None, true) if file.changed() => Some(file.path.as_path()),
            _ => None,
        };
        // `--diff` writes nothing: what it shows is what would be fixed, as `--check` says.
        let mut written = !args.diff;
        let target = match target {
            Some(target) if args.in_place => match roots.escape(target) {
                Some(why) => {
                    bankwise::say!(
                        "bankwise: error: {}: {why}; nothing written",
                        target.display()
                    );
                    failed = true;
                    written = false;
                    None
                }
                None => {
                    let resolved =
                        std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
                    written_to.insert(resolved).then_some(target)
                }
            },
            other => other,
        };
        if let Some(target) = target {
            // In place, the file must still hold what was read and fixed.
            let original = args
                .in_place
                .then(|| bankwise::parse::restored_bytes(&file.original));
            if let Err(message) = write_file(
                target,
                &bankwise::parse::restored_bytes(file.output()),
                original.as_deref(),
            ) {
                bankwise::say!("bankwise: error: {}: {message}", target.display());
                failed = true;
                written = false;
            }
        }
        // What was not written is what would be fixed.
        report.push_str(&bankwise::report::fix::text(
            std::slice::from_ref(file),
            args.check || !written,
        ));
    }
    let output = match args.format {
        Format::Json => {
            let json = bankwise::report::fix::json(&fixed, args.diff.then_some(diffs.as_slice()));
            match serde_json::to_string_pretty(&json) {
                Ok(json) => json + "\n",
                Err(err) => {
                    bankwise::say!("bankwise: error: cannot write JSON: {err}");
                    return ExitCode::from(EXIT_INPUT_ERROR);
                }
            }
        }
        Format::Text => {
            if !args.run.quiet {
                let _ = std::io::Write::write_all(&mut std::io::stderr(), report.as_bytes());
                let changed = fixed.iter().any(FileFix::changed);
                if changed && matches!(Compiler::look(), Availability::NotFound) {
                    bankwise::say!(
                        "bankwise: note: nvcc not found ($BANKWISE_NVCC, $CUDA_HOME/bin, \
                         $CUDA_PATH/bin, PATH): the rewrites were judged on the source alone, \
                         not on the compiled kernel (BANKWISE_NVCC= turns this note off)"
                    );
                }
            }
            if args.diff {
                // With a comment's Latin-1 byte as the file has it, so that `git apply` fits.
                let diff = diffs.concat();
                failed |= !super::write_stdout_bytes(&bankwise::parse::restored_bytes(&diff));
                String::new()
            } else if to_stdout {
                // The fixed file's own bytes (a comment's Latin-1 byte kept) go out as they are.
                let bytes: Vec<u8> = fixed
                    .iter()
                    .flat_map(|f| bankwise::parse::restored_bytes(f.output()).into_owned())
                    .collect();
                failed |= !super::write_stdout_bytes(&bytes);
                String::new()
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
    similar::TextDiff::from_lines(file.original.as_str(), file.output())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
