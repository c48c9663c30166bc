//! `bankwise check`: the report of every shared array and access.
use super::sources::gather;
use super::{
    inputs, json_to_stdout, write_stdout_with, AnalysisArgs, RunArgs, EXIT_CONFLICTS,
    EXIT_INPUT_ERROR,
};
use bankwise::analysis::{AnalysedFile, KeepAffine, Options};
use bankwise::compiled::{CompileError, CompiledFile, Compiler, DEFAULT_ARCH};
use bankwise::parse::LaunchSite;
use bankwise::pipeline::{self, FileFix, FixError, FixOptions};
use bankwise::report::finding::{reconcile_with_compiled, shown_findings, Selection, Shown};
use bankwise::report::{self, sarif};
use bankwise::settings::Settings;
use clap::ValueEnum;
use std::io::{IsTerminal, Write};
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
    /// Exit with status 1 when any access shown has excess wavefronts, or a syntax error kept
    /// a kernel from being checked (for CI).
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
    /// After the summary line on stderr, how many findings each rule has; the summary counts
    /// the conflicts `fix` would remove (planning the fixes takes longer).
    #[arg(long)]
    statistics: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
    #[command(flatten)]
    run: RunArgs,
}

/// The compiled view that judges a file's conflicts: one that compiled.
fn judged(compiled: Option<&Result<CompiledFile, CompileError>>) -> Option<&CompiledFile> {
    compiled.and_then(|c| c.as_ref().ok())
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
            command_line_selects: !args.select.is_empty(),
        },
        Err(message) => {
            bankwise::say!("bankwise: error: --select/--ignore: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let sarif = args.format == CheckFormat::Sarif;
    // SARIF carries the fixes, and `--statistics` counts the findings they fix.
    let plan_fixes = sarif || args.statistics;
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
    // The report covers every file, in order, once all are analysed (a kernel may take its
    // block shape from another file's launch). Until then each file keeps only what the
    // report needs: its text report when no launch elsewhere can change it, else the
    // analysis without what no report reads.
    let rendered_early = args.format == CheckFormat::Text;
    let kernels_asked = !options.blocks.per_kernel.is_empty();
    let render = |analysed: &AnalysedFile, text: &str, compiled: Option<&CompiledFile>| {
        let mut findings = shown_findings(analysed, &shown);
        if let Some(compiled) = compiled {
            reconcile_with_compiled(&mut findings, analysed, compiled);
        }
        if snippets {
            report::text::snippets_of(analysed, text, findings, color)
        } else {
            let mut out = Vec::new();
            // Into memory: it cannot fail.
            let _ = report::text::write_findings(&mut out, analysed, findings);
            String::from_utf8_lossy(&out).into_owned()
        }
    };
    // The compiled view runs where nvcc is at hand.
    let compiler = Compiler::find();
    let compiled_view = |analysed: &AnalysedFile, text: &str| {
        let compiler = compiler.as_ref()?;
        Some(pipeline::compiled_view(
            analysed,
            text,
            &options,
            compiler,
            DEFAULT_ARCH,
        ))
    };
    // A file's text report as the compiled view (when there is one) judges its conflicts,
    // with the view's notes.
    let text_of = |analysed: &AnalysedFile,
                   text: &str,
                   compiled: Option<&Result<CompiledFile, CompileError>>| {
        let mut rendered = render(analysed, text, judged(compiled));
        match compiled {
            Some(Ok(compiled)) => rendered.push_str(&report::compiled_notes(analysed, compiled)),
            // Said only where there is shared memory to count.
            Some(Err(error)) if analysed.reported().any(|r| !r.function.arrays.is_empty()) => {
                rendered.push_str(&format!(
                    "{}:1:1: note: no compiled view: {error}\n",
                    analysed.path.display()
                ));
            }
            _ => {}
        }
        rendered
    };
    let held = |mut checked: pipeline::CheckedFile| {
        if !sarif && !snippets && compiler.is_none() {
            // Only SARIF (it counts columns in code points) and snippets need the text again.
            checked.text = String::new();
        }
        // The macros, constants and types of the file and its headers (a large header's
        // are most of a small file's result) served the analysis; no report reads them.
        checked.analysed.parsed.constants = Default::default();
        let analysed = checked.analysed;
        let path = analysed.path.clone();
        let launches = analysed.parsed.launches.clone();
        let headers = analysed.parsed.headers.clone();
        let failed = analysed.failed();
        let report = if rendered_early && !pipeline::may_be_launched_elsewhere(&analysed) {
            let compiled = compiled_view(&analysed, &checked.text);
            Report::Rendered {
                text: text_of(&analysed, &checked.text, compiled.as_ref()),
                tally: Tally::of(
                    &analysed,
                    &shown,
                    checked.fix.as_ref(),
                    judged(compiled.as_ref()),
                ),
                kernels: if kernels_asked {
                    kernel_names(&analysed)
                } else {
                    Vec::new()
                },
            }
        } else {
            Report::Whole {
                analysed: Box::new(analysed),
                text: checked.text,
                fix: checked.fix,
            }
        };
        Held {
            path,
            launches,
            headers,
            failed,
            report,
        }
    };
    let checked = match stdin {
        Some((name, text)) => {
            vec![pipeline::check_text(&name, text, &options, plan_fixes).map(held)]
        }
        None => args.run.each("checking", &sources, |path| {
            pipeline::check_file(path, &options, plan_fixes).map(held)
        }),
    };
    let mut files: Vec<Report> = Vec::new();
    let mut errors = super::ErrorsOnce::default();
    let includers = super::header_includers(&args.files, &sources, &options);
    let mut launches = pipeline::launches_in(&includers, &options);
    for file in checked {
        let file = match file {
            Ok(file) => file,
            Err(err) => {
                errors.say(&err);
                failed = true;
                continue;
            }
        };
        failed |= file.failed;
        bankwise::block::add_project_launches(
            &mut launches,
            &file.path,
            &file.launches,
            &file.headers,
        );
        files.push(match file.report {
            // In order, as before: a fix that failed is a warning for its file.
            Report::Whole {
                analysed,
                text,
                fix,
            } => Report::Whole {
                analysed,
                text,
                fix: usable_fix(fix).map(Ok),
            },
            rendered => rendered,
        });
    }
    // A kernel launched from another of the files: analysed again with that launch's shape.
    if files.len() > 1 || !includers.is_empty() {
        let with_launches = Options {
            launches_elsewhere: Arc::new(launches),
            ..options.clone()
        };
        for file in &mut files {
            let Report::Whole {
                analysed,
                text,
                fix,
            } = file
            else {
                continue;
            };
            if !pipeline::launched_elsewhere(analysed, &with_launches.launches_elsewhere) {
                continue;
            }
            match pipeline::check_file(&analysed.path.clone(), &with_launches, plan_fixes) {
                Ok(again) => {
                    let mut again = again;
                    again.analysed.parsed.constants = Default::default();
                    **analysed = again.analysed;
                    *text = if sarif || snippets {
                        again.text
                    } else {
                        String::new()
                    };
                    *fix = usable_fix(again.fix).map(Ok);
                }
                Err(err) => {
                    errors.say(&err);
                    failed = true;
                }
            }
        }
    }
    for kernel in options.blocks.per_kernel.keys() {
        let known = files.iter().any(|file| match file {
            Report::Rendered { kernels, .. } => kernels.contains(kernel),
            Report::Whole { analysed, .. } => kernel_names(analysed).contains(kernel),
        });
        if !known {
            bankwise::say!(
                "bankwise: warning: --block {kernel}=…: no kernel named `{kernel}` in these files"
            );
        }
    }
    // The compiled view of each file analysed whole (once all launches are known).
    let compiled: Vec<Option<Result<CompiledFile, CompileError>>> = files
        .iter()
        .map(|file| match file {
            Report::Whole { analysed, text, .. } => compiled_view(analysed, text),
            Report::Rendered { .. } => None,
        })
        .collect();
    let tally = files
        .iter()
        .zip(&compiled)
        .map(|(file, compiled)| match file {
            Report::Rendered { tally, .. } => tally.clone(),
            Report::Whole { analysed, fix, .. } => {
                Tally::of(analysed, &shown, fix.as_ref(), judged(compiled.as_ref()))
            }
        })
        .fold(Tally::default(), Tally::add);
    let files_count = files.len();
    // A conflict silenced or left out is not one CI should fail on, nor is a syntax error
    // whose rule is ignored.
    let conflicts = tally.conflicts > 0 || tally.errors > 0;
    let written = match args.format {
        CheckFormat::Text => write_stdout_with(|out| {
            for (file, compiled) in files.iter().zip(&compiled) {
                match file {
                    Report::Rendered { text, .. } => out.write_all(text.as_bytes())?,
                    Report::Whole { analysed, text, .. } => {
                        out.write_all(text_of(analysed, text, compiled.as_ref()).as_bytes())?
                    }
                }
            }
            Ok(())
        }),
        // Every file is whole for JSON and SARIF.
        CheckFormat::Json => {
            let analysed: Vec<AnalysedFile> = files
                .into_iter()
                .filter_map(|file| match file {
                    Report::Whole { analysed, .. } => Some(*analysed),
                    Report::Rendered { .. } => None,
                })
                .collect();
            json_to_stdout(&report::json(&analysed, &shown, &compiled))
        }
        CheckFormat::Sarif => {
            let files: Vec<sarif::SarifFile> = files
                .iter()
                .zip(&compiled)
                .filter_map(|(file, compiled)| match file {
                    Report::Whole {
                        analysed,
                        text,
                        fix,
                    } => Some(sarif::SarifFile {
                        analysed,
                        text,
                        fix: fix.as_ref().and_then(|fix| fix.as_ref().ok()),
                        compiled: judged(compiled.as_ref()),
                    }),
                    Report::Rendered { .. } => None,
                })
                .collect();
            json_to_stdout(&sarif::sarif(&files, Path::new("."), &shown))
        }
    };
    failed |= !written;
    // As ruff and clang-tidy end a run; on stderr, so that the findings stay one per line.
    if args.format == CheckFormat::Text && !args.run.quiet {
        bankwise::say!("{}", tally.summary(files_count));
        if args.statistics {
            for rule in bankwise::rules::Rule::ALL {
                if let Some(count) = tally.per_rule.get(rule.id()) {
                    bankwise::say!("{count:>6}  {}  {}", rule.id(), rule.name());
                }
            }
        }
    }
    if failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else if args.deny_conflicts && conflicts {
        ExitCode::from(EXIT_CONFLICTS)
    } else {
        ExitCode::SUCCESS
    }
}

/// One file's result until the report.
struct Held {
    path: PathBuf,
    /// Its launches, which may give another file's kernel its block shape.
    launches: Vec<LaunchSite>,
    /// The headers it includes: the files besides its directory's its launches reach.
    headers: Vec<PathBuf>,
    /// Whether it yielded nothing ([`AnalysedFile::failed`]).
    failed: bool,
    report: Report,
}

/// What the report needs of one file.
enum Report {
    /// Its text report, made as soon as it was analysed, since no launch in another file can
    /// change it, with what the run's end asks of it; the analysis is freed.
    Rendered {
        text: String,
        /// Its findings shown, for the summary and `--deny-conflicts`.
        tally: Tally,
        /// The names of its functions, when `--block NAME=…` asks.
        kernels: Vec<String>,
    },
    /// The whole result: JSON and SARIF report it, or a launch elsewhere may change it.
    Whole {
        /// Boxed: most files of a large run are rendered, and each holds a `Report`.
        analysed: Box<AnalysedFile>,
        text: String,
        /// `Ok` once [`usable_fix`] has said why a fix failed.
        fix: Option<Result<FileFix, FixError>>,
    },
}

/// The findings a run shows, counted: the summary line, `--statistics` and
/// `--deny-conflicts` read them.
#[derive(Debug, Clone, Default)]
struct Tally {
    findings: usize,
    /// Findings with a conflict (excess wavefronts).
    conflicts: usize,
    /// Conflicts on arrays that `fix` rewrites, when the fixes were planned.
    fixable: Option<usize>,
    /// Findings at error level: code bankwise could not read, so a kernel it could not check.
    errors: usize,
    /// Files with a finding.
    files: usize,
    per_rule: std::collections::BTreeMap<&'static str, usize>,
}

impl Tally {
    /// The findings of `file` that `shown` shows (notes on clean accesses are no finding).
    /// With `fix`, the fix planned for the file (an error: none is fixable).
    /// With `compiled`, the conflicts as the compiled view judges them.
    fn of(
        file: &AnalysedFile,
        shown: &Shown,
        fix: Option<&Result<FileFix, FixError>>,
        compiled: Option<&CompiledFile>,
    ) -> Tally {
        let mut tally = Tally::default();
        let mut findings = shown_findings(file, shown);
        if let Some(compiled) = compiled {
            reconcile_with_compiled(&mut findings, file, compiled);
        }
        let rewritten: Option<Vec<(String, &str, bankwise::parse::Location)>> =
            fix.map(|fix| match fix {
                Ok(fix) => fix
                    .arrays
                    .iter()
                    .filter(|a| a.action == bankwise::plan::Action::Rewritten)
                    .map(|a| (a.function.clone(), a.array.as_str(), a.at))
                    .collect(),
                Err(_) => Vec::new(),
            });
        for finding in findings {
            let Some(rule) = finding.rule else {
                continue;
            };
            tally.findings += 1;
            tally.errors += usize::from(finding.severity == bankwise::parse::Severity::Error);
            if let Some(conflict) = &finding.conflict {
                tally.conflicts += 1;
                if let Some(rewritten) = &rewritten {
                    let function = &file.parsed.functions[conflict.array.function];
                    let array = &function.arrays[conflict.array.array];
                    let key = (function.display_name(), array.name.as_str(), array.at);
                    *tally.fixable.get_or_insert(0) += usize::from(rewritten.contains(&key));
                }
            }
            *tally.per_rule.entry(rule.id()).or_default() += 1;
        }
        if rewritten.is_some() {
            tally.fixable.get_or_insert(0);
        }
        tally.files = usize::from(tally.findings > 0);
        tally
    }

    fn add(mut self, other: Tally) -> Tally {
        self.findings += other.findings;
        self.conflicts += other.conflicts;
        self.errors += other.errors;
        self.fixable = match (self.fixable, other.fixable) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        self.files += other.files;
        for (rule, count) in other.per_rule {
            *self.per_rule.entry(rule).or_default() += count;
        }
        self
    }

    /// `12 findings (9 bank conflicts) in 3 of 5 files`; `(9 bank conflicts, 7 fixable)` when
    /// the fixes were planned.
    fn summary(&self, checked: usize) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        if self.findings == 0 {
            return format!("bankwise: no findings in {}", plural(checked, "file"));
        }
        let mut fixable = self
            .fixable
            .map(|n| format!(", {n} fixable"))
            .unwrap_or_default();
        if self.errors > 0 {
            fixable.push_str(&format!(", {}", plural(self.errors, "error")));
        }
        format!(
            "bankwise: {} ({}{fixable}) in {} of {}",
            plural(self.findings, "finding"),
            plural(self.conflicts, "bank conflict"),
            self.files,
            plural(checked, "file")
        )
    }
}

/// The names `--block NAME=…` may give the functions of `file`.
fn kernel_names(file: &AnalysedFile) -> Vec<String> {
    file.parsed
        .functions
        .iter()
        .flat_map(|f| [f.name.clone(), f.display_name()])
        .collect()
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
