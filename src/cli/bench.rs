//! `bankwise bench`: every family on every kernel (docs/results.md, docs/table5.md).
use super::{collect_sources, print_output, RunArgs, EXIT_INPUT_ERROR};
use bankwise::analysis::{AnalysedFile, Options};
use bankwise::bench::{self, Bench};
use bankwise::pipeline::analyse_file;
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// `.cu`/`.cuh` files, or directories to search for them (`testdata/suite`).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = BenchFormat::Markdown)]
    format: BenchFormat,
    #[command(flatten)]
    run: RunArgs,
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

pub fn run(args: BenchArgs) -> ExitCode {
    let options = Options::default();
    let mut failed = false;
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    let sources = collect_sources(&args.paths, &args.run, &mut failed);
    for result in args
        .run
        .each("analysing", &sources, |path| analyse_file(path, &options))
    {
        match result {
            Ok(file) => {
                failed |= file.failed();
                analysed.push(file);
            }
            Err(err) => {
                bankwise::say!("bankwise: error: {err}");
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
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let output = match args.format {
        BenchFormat::Json => serde_json::to_string_pretty(&bench.report()).map(|j| j + "\n"),
        BenchFormat::Markdown => Ok(bench::markdown::results(&bench)),
        BenchFormat::Table5 => Ok(bench::markdown::table5(&bench)),
    };
    print_output(output)
}
