//! `bankwise check`: the report of every shared array and access.
use super::{
    collect_sources, write_stdout, AnalysisArgs, RunArgs, EXIT_CONFLICTS, EXIT_INPUT_ERROR,
};
use bankwise::analysis::{AnalysedFile, AnalysisError};
use bankwise::parse;
use bankwise::pipeline::analyse_file;
use bankwise::pipeline::{self, FileFix, FixError, FixOptions};
use bankwise::report::{self, sarif};
use bankwise::settings::Settings;
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// `.cu`/`.cuh` files, or directories to search for them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
    /// Exit with status 1 when any access has excess wavefronts (for CI).
    #[arg(long)]
    deny_conflicts: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// `file:line:col: severity: message` lines.
    Text,
    /// One object with every kernel, array and access (DESIGN.md §8).
    Json,
    /// SARIF 2.1.0 for code review, with the fixes `bankwise fix` would make.
    Sarif,
}

/// One file as `check` saw it; the text and the fixes only for SARIF.
struct Checked {
    analysed: Result<AnalysedFile, AnalysisError>,
    text: Option<String>,
    fix: Option<Result<FileFix, FixError>>,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let options = match args.analysis.options(Settings::default()) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let fix_options = FixOptions {
        analysis: options.clone(),
        ..FixOptions::default()
    };
    let sarif = args.format == CheckFormat::Sarif;
    let mut failed = false;
    let sources = collect_sources(&args.files, &mut failed);
    let checked = args.run.each("checking", &sources, |path| {
        let analysed = analyse_file(path, &options);
        if !sarif || analysed.is_err() {
            return Checked {
                analysed,
                text: None,
                fix: None,
            };
        }
        // Read again for the columns: SARIF counts code points, the analysis bytes.
        let text = match parse::read_source(path, options.max_file_bytes) {
            Ok(text) => text,
            Err(err) => {
                return Checked {
                    analysed: Err(err.into()),
                    text: None,
                    fix: None,
                }
            }
        };
        let fix = analysed
            .as_ref()
            .is_ok_and(has_conflicts)
            .then(|| pipeline::fix_file(path, &fix_options));
        Checked {
            analysed,
            text: Some(text),
            fix,
        }
    });
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let mut fixes: Vec<Option<FileFix>> = Vec::new();
    for file in checked {
        match file.analysed {
            Ok(file) => {
                failed |= file.failed();
                analysed.push(file);
            }
            Err(err) => {
                eprintln!("bankwise: error: {err}");
                failed = true;
                continue;
            }
        }
        texts.push(file.text.unwrap_or_default());
        fixes.push(match file.fix {
            Some(Ok(fix)) => Some(fix),
            Some(Err(err)) => {
                eprintln!(
                    "bankwise: warning: {err}; the SARIF results of this file carry no fixes"
                );
                None
            }
            None => None,
        });
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
        CheckFormat::Text => Ok(report::text(&analysed)),
        CheckFormat::Json => {
            serde_json::to_string_pretty(&report::json(&analysed)).map(|j| j + "\n")
        }
        CheckFormat::Sarif => {
            let files: Vec<sarif::SarifFile> = analysed
                .iter()
                .zip(&texts)
                .zip(&fixes)
                .map(|((analysed, text), fix)| sarif::SarifFile {
                    analysed,
                    text,
                    fix: fix.as_ref(),
                })
                .collect();
            serde_json::to_string_pretty(&sarif::sarif(&files, Path::new("."))).map(|j| j + "\n")
        }
    };
    match output {
        Ok(output) => failed |= !write_stdout(&output),
        Err(err) => {
            eprintln!("bankwise: error: cannot write JSON: {err}");
            failed = true;
        }
    }
    let conflicts = analysed.iter().any(has_conflicts);
    if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else if args.deny_conflicts && conflicts {
        ExitCode::from(EXIT_CONFLICTS)
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether any access of the file has excess wavefronts.
fn has_conflicts(file: &AnalysedFile) -> bool {
    file.reported()
        .any(|r| r.costs.iter().flatten().flatten().any(|c| c.excess() > 0))
}
