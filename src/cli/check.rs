//! `bankwise check`: the report of every shared array and access.
use super::{
    collect_sources, write_stdout, AnalysisArgs, Format, RunArgs, EXIT_CONFLICTS, EXIT_INPUT_ERROR,
};
use bankwise::analysis::{analyse_file, AnalysedFile};
use bankwise::config::Settings;
use bankwise::report;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// `.cu`/`.cuh` files, or directories to search for them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Exit with status 1 when any access has excess wavefronts (for CI).
    #[arg(long)]
    deny_conflicts: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    run: RunArgs,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let options = match args.analysis.options(Settings::default()) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let mut failed = false;
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    let sources = collect_sources(&args.files, &mut failed);
    for result in args
        .run
        .each("checking", &sources, |path| analyse_file(path, &options))
    {
        match result {
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
