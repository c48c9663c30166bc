//! `bankwise check`: the report of every shared array and access.
use super::sources::gather;
use super::{
    inputs, json_to_stdout, write_stdout, write_stdout_with, AnalysisArgs, RunArgs, EXIT_CONFLICTS,
    EXIT_INPUT_ERROR,
};
use bankwise::analysis::{AnalysedFile, KeepAffine, Options};
use bankwise::pipeline::{self, FileFix, FixError, FixOptions};
use bankwise::report::finding::{shown_findings, Selection, Shown};
use bankwise::report::{self, sarif};
use bankwise::settings::Settings;
use clap::ValueEnum;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// `.cu`/`.cuh` files, or directories to search for them (with `--compile-commands`
    /// and none given: the CUDA files it lists).
    #[arg(required_unless_present = "compile_commands")]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
    /// Exit with status 1 when any access shown has excess wavefronts (for CI).
    #[arg(long)]
    deny_conflicts: bool,
    /// Report only these rules: ids (`BW001`), id prefixes (`BW00`), names
    /// (`bank-conflict-load`) or `ALL`; comma-separated or repeated. BW007 (unused NOLINT
    /// comments) is reported only when selected.
    #[arg(long, value_name = "RULES")]
    select: Vec<String>,
    /// Leave these rules out (as --select names them).
    #[arg(long, value_name = "RULES")]
    ignore: Vec<String>,
    /// Also show a note for every access without conflicts (text and SARIF).
    #[arg(short, long)]
    verbose: bool,
    /// Colour, and each finding drawn under its source line: `auto` on a terminal (without
    /// colour when NO_COLOR is set), `always` even when piped, `never` (one line per
    /// finding, as when piped).
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto)]
    color: ColorWhen,
    /// Print the settings in effect for each file (configuration file, bank model, block
    /// shapes, definitions, selected rules) instead of checking it.
    #[arg(long)]
    show_settings: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// `file:line:col: severity: message` lines.
    Text,
    /// One object with every kernel, array and access (docs/ARCHITECTURE.md §8).
    Json,
    /// SARIF 2.1.0 for code review, with the fixes `bankwise fix` would make.
    Sarif,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let options = match args.analysis.options(Settings::default()) {
        // Only the JSON report shows each access's affine form.
        Ok(options) => Options {
            keep_affine: match args.format {
                CheckFormat::Json => KeepAffine::Every,
                CheckFormat::Text | CheckFormat::Sarif => KeepAffine::Never,
            },
            ..options
        },
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let shown = match Selection::new(&args.select, &args.ignore) {
        Ok(selection) => Shown {
            selection,
            clean_accesses: args.verbose,
        },
        Err(message) => {
            bankwise::say!("bankwise: error: --select/--ignore: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let sarif = args.format == CheckFormat::Sarif;
    // anstream decides colour as terminals expect: NO_COLOR, CLICOLOR_FORCE, TERM=dumb.
    let terminal = std::io::stdout().is_terminal();
    let color = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    };
    let snippets = args.format == CheckFormat::Text
        && match args.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => terminal,
        };
    let mut failed = false;
    let files = inputs(&args.files, &options);
    let (sources, stdin) = match gather(&files, &args.run, options.max_file_bytes, &mut failed) {
        Ok(gathered) => gathered,
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    if args.show_settings {
        let fix = FixOptions {
            analysis: options,
            ..FixOptions::default()
        };
        let rules: Vec<&str> = bankwise::rules::Rule::ALL
            .into_iter()
            .filter(|r| shown.selection.enables(*r))
            .map(|r| r.id())
            .collect();
        let extra = format!(
            "\n# rules reported (--select/--ignore): {}\n",
            rules.join(", ")
        );
        return super::show_settings(&sources, &fix, &extra, failed);
    }
    // Every file's result is held until the report, which covers them all (a kernel may
    // take its block shape from another file's launch): each keeps only what the report
    // needs.
    let without_text = |mut checked: pipeline::CheckedFile| {
        if !sarif && !snippets {
            // Only SARIF (it counts columns in code points) and snippets need the text again.
            checked.text = String::new();
        }
        // The macros, constants and types of the file and its headers (a large header's
        // are most of a small file's result) served the analysis; no report reads them.
        checked.analysed.parsed.constants = Default::default();
        checked
    };
    let checked = match stdin {
        Some((name, text)) => {
            vec![pipeline::check_text(&name, text, &options, sarif).map(without_text)]
        }
        None => args.run.each("checking", &sources, |path| {
            pipeline::check_file(path, &options, sarif).map(without_text)
        }),
    };
    let mut analysed: Vec<AnalysedFile> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let mut fixes: Vec<Option<FileFix>> = Vec::new();
    for file in checked {
        let file = match file {
            Ok(file) => file,
            Err(err) => {
                bankwise::say!("bankwise: error: {err}");
                failed = true;
                continue;
            }
        };
        failed |= file.analysed.failed();
        analysed.push(file.analysed);
        texts.push(file.text);
        fixes.push(usable_fix(file.fix));
    }
    // A kernel launched from another of the files: analysed again with that launch's shape.
    if analysed.len() > 1 {
        let launches = Arc::new(pipeline::project_launches(&analysed));
        let with_launches = Options {
            launches_elsewhere: Arc::clone(&launches),
            ..options.clone()
        };
        for i in 0..analysed.len() {
            if !pipeline::launched_elsewhere(&analysed[i], &launches) {
                continue;
            }
            match pipeline::check_file(&analysed[i].path.clone(), &with_launches, sarif) {
                Ok(file) => {
                    let file = without_text(file);
                    analysed[i] = file.analysed;
                    texts[i] = file.text;
                    fixes[i] = usable_fix(file.fix);
                }
                Err(err) => {
                    bankwise::say!("bankwise: error: {err}");
                    failed = true;
                }
            }
        }
    }
    for kernel in options.blocks.per_kernel.keys() {
        let known = analysed
            .iter()
            .flat_map(|f| &f.parsed.functions)
            .any(|f| &f.name == kernel || &f.display_name() == kernel);
        if !known {
            bankwise::say!(
                "bankwise: warning: --block {kernel}=…: no kernel named `{kernel}` in these files"
            );
        }
    }
    let written = match args.format {
        CheckFormat::Text if snippets => {
            let files: Vec<(&AnalysedFile, &str)> = analysed
                .iter()
                .zip(&texts)
                .map(|(file, text)| (file, text.as_str()))
                .collect();
            write_stdout(&report::snippets(&files, &shown, color))
        }
        CheckFormat::Text => write_stdout_with(|out| report::write_text(out, &analysed, &shown)),
        CheckFormat::Json => json_to_stdout(&report::json(&analysed, &shown)),
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
            json_to_stdout(&sarif::sarif(&files, Path::new("."), &shown))
        }
    };
    failed |= !written;
    // A conflict silenced or left out is not one CI should fail on.
    let conflicts = args.deny_conflicts
        && analysed.iter().any(|file| {
            shown_findings(file, &shown)
                .iter()
                .any(|f| f.conflict.is_some())
        });
    if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else if args.deny_conflicts && conflicts {
        ExitCode::from(EXIT_CONFLICTS)
    } else {
        ExitCode::SUCCESS
    }
}

/// The fixes SARIF carries for a file; `fix`'s own error is a warning, and the results of
/// the file carry none.
fn usable_fix(fix: Option<Result<FileFix, FixError>>) -> Option<FileFix> {
    match fix {
        Some(Ok(fix)) => Some(fix),
        Some(Err(err)) => {
            bankwise::say!(
                "bankwise: warning: {err}; the SARIF results of this file carry no fixes"
            );
            None
        }
        None => None,
    }
}
