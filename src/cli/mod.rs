//! The command line: parses arguments and wires the stages together. One file per command.
mod bench;
mod check;
mod explain;
mod fix;
mod nvcc;
mod output;
mod server;
use output::write_file;
mod solve;
mod sources;
use sources::collect_sources;

use bankwise::analysis::{KeepAffine, Options};
use bankwise::bank::BankConfig;
use bankwise::block::CommandLineBlocks;
use bankwise::pipeline::FixOptions;
use bankwise::settings::{Settings, StrategySetting};
use bankwise::solve::Family;
use clap::builder::TypedValueParser;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::ffi::{OsStr, OsString};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status for usage and input errors (docs/ARCHITECTURE.md §8).
const EXIT_INPUT_ERROR: u8 = 2;
/// Exit status of `check --deny-conflicts` when an access has bank conflicts.
const EXIT_CONFLICTS: u8 = 1;

#[derive(Parser)]
#[command(
    name = "bankwise",
    version,
    about = "Finds shared-memory bank conflicts in CUDA source",
    after_help = "Settings for the files beneath it (block shapes, defines, include directories, \
                  the bank model, what fix may do) live in the nearest bankwise.toml; \
                  `bankwise check --show-settings FILE` prints those in effect for FILE."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse CUDA files and report every shared array and every access to it.
    Check(check::CheckArgs),
    /// Configure a bank hash for raw warp address sets (TC 2016 Sec. 5; teaching and
    /// debugging).
    Solve(solve::SolveArgs),
    /// Rewrite CUDA files so that their shared arrays are stored without bank conflicts.
    Fix(fix::FixArgs),
    /// Every hash family on every kernel of the given files or directories: excess wavefronts
    /// before and after, the chosen map, its cost (TC 2016 Table 6; docs/results.md).
    Bench(bench::BenchArgs),
    /// The pre-build step: fix every CUDA input of an nvcc command line into a temporary copy
    /// (`#line` keeps the original's name and lines) and compile the copies. Also a CMake
    /// compiler launcher: `-DCMAKE_CUDA_COMPILER_LAUNCHER=bankwise`.
    Nvcc(nvcc::NvccArgs),
    /// One access as the banks see it, before and after fix's map: the bank map of one warp
    /// and iteration, the index bits (Lloyd's notation), the DMM congestion; `--svg` draws it.
    Explain(explain::ExplainArgs),
    /// A Language Server on stdin and stdout for editors: diagnostics on open, change and
    /// save, each array's fix as a code action, the banks of an access on hover.
    Server(server::ServerArgs),
    /// Print a rule's page (`bankwise rule BW001`, or by name), as the user guide has it;
    /// with no rule, the list of rules.
    Rule {
        /// An id (`BW001`) or a name (`bank-conflict-load`).
        rule: Option<String>,
        /// Write every rule's page into DIR as `BW001.md`… (the guide's `rules/`).
        #[arg(long, value_name = "DIR", conflicts_with = "rule")]
        out_dir: Option<PathBuf>,
    },
    /// Print the shell completion script for SHELL (`bankwise completions bash >
    /// /etc/bash_completion.d/bankwise`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, generated from this command line (`bankwise man > bankwise.1`,
    /// `bankwise man check > bankwise-check.1`), or write every page into a directory.
    Man {
        /// The subcommand whose page to print (`check`, `fix`, …); none: bankwise(1).
        page: Option<String>,
        /// Write bankwise.1 and every subcommand's page into DIR instead.
        #[arg(long, value_name = "DIR", conflicts_with = "page")]
        out_dir: Option<PathBuf>,
    },
}

/// What the analysis needs; `check`, `fix` and the other commands that analyse share it.
#[derive(clap::Args)]
pub struct AnalysisArgs {
    /// Block shape: `32x8` for every kernel, `NAME=32x8` for one (repeatable).
    #[arg(long = "block", value_name = "[KERNEL=]XxYxZ")]
    pub blocks: Vec<String>,
    /// Define a macro or template parameter, as for nvcc (`-D TILE=32`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// A directory where `#include "…"` headers are looked for after the including file's
    /// own, as nvcc's -I.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// A file read before each source, as nvcc's -include: its macros and types apply.
    #[arg(long = "include", value_name = "FILE")]
    pub pre_includes: Vec<PathBuf>,
    /// A `compile_commands.json` (or its directory): each file is read with the `-I` and
    /// `-D` its build uses; with no FILES, every CUDA file it lists.
    #[arg(long, value_name = "PATH")]
    pub compile_commands: Option<PathBuf>,
    /// Use this `bankwise.toml` for every file, instead of the nearest one above each.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Refuse files larger than this many bytes.
    #[arg(long, default_value_t = bankwise::parse::MAX_FILE_BYTES)]
    pub max_file_size: u64,
    /// Number of shared-memory banks: 32 (every GPU since Fermi; the default) or 16 (Tesla,
    /// half-warp phases).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["16", "32"]).map(|s| s.parse::<u32>().unwrap_or(32)))]
    pub banks: Option<u32>,
    /// Bank width in bytes: 4 (the default), or 8 (Kepler's 8-byte mode).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["4", "8"]).map(|s| s.parse::<u32>().unwrap_or(4)))]
    pub bank_width: Option<u32>,
}

impl AnalysisArgs {
    /// The analysis options; `settings` carries what `fix` adds, so that a `bankwise.toml`
    /// cannot override anything given here.
    pub fn options(&self, settings: Settings) -> Result<Options, String> {
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
            bank: BankConfig::default(),
            command_line: Settings {
                banks: self.banks,
                bank_width: self.bank_width,
                ..settings
            },
            launches_elsewhere: Default::default(),
            keep_affine: KeepAffine::Every,
            skipped: Default::default(),
            drop_kernel_bodies: false,
            include_dirs: self.include_dirs.clone(),
            pre_includes: self.pre_includes.clone(),
            policy: Default::default(),
            compile_db: match &self.compile_commands {
                Some(path) => std::sync::Arc::new(
                    bankwise::compile_db::CompileDb::read(path).map_err(|e| e.to_string())?,
                ),
                None => Default::default(),
            },
            arch: None,
            config_file: match &self.config {
                Some(path) if !path.is_file() => {
                    return Err(format!("--config {}: no such file", path.display()))
                }
                other => other.clone(),
            },
        })
    }
}

/// How a command runs over many files; `check`, `fix` and `bench` share it.
#[derive(clap::Args)]
pub struct RunArgs {
    /// No progress line, and no notes on stderr (errors and warnings still show).
    #[arg(short, long)]
    pub quiet: bool,
    /// Files analysed at once (default: the available cores, at most 8). The output is the
    /// same for any value.
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Skip what matches this glob (`.gitignore` syntax: `third_party/`, `*_test.cu`) when
    /// walking directories; repeatable. Files named on the command line are always read.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Walk directories without honouring `.gitignore`/`.ignore` files, hidden entries and
    /// the default excludes (build folders); `--exclude` still applies.
    #[arg(long)]
    pub no_ignore: bool,
    /// The name of the source read from stdin (FILE `-`): where its `bankwise.toml` and
    /// headers are looked for, and what messages call it (default `<stdin>`).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Read every named file as CUDA whatever its extension, as nvcc's `-x cu` does (without
    /// it, a named file that is not a C, C++ or CUDA source is skipped with a warning).
    #[arg(short = 'x', value_name = "LANGUAGE", value_parser = ["cu"])]
    pub language: Option<String>,
}

/// Fewer files than this are analysed one after the other, without a progress line.
const PARALLEL_FROM_FILES: usize = 4;
/// More threads than this gain little: each file's analysis is itself parallel.
const MAX_JOBS: usize = 8;

impl RunArgs {
    /// Runs `work` on every source and returns the results in the order of `sources`, as a
    /// serial run would. With more than a few files they are shared among `--jobs` threads,
    /// and a progress bar (indicatif) is drawn on stderr when it is a terminal.
    ///
    /// The threads are plain ones, each taking the next file when done with its own, not a
    /// rayon pool: a file's analysis is itself shared out on the analysis pool
    /// (`bankwise::parallel`), and a rayon worker that waits for another pool takes up other
    /// jobs of its own meanwhile, here the next file, on the same stack, which 50,000 files
    /// overflowed. A plain thread waits for that pool without taking anything up.
    pub fn each<T: Send>(
        &self,
        verb: &str,
        sources: &[PathBuf],
        work: impl Fn(&Path) -> T + Sync,
    ) -> Vec<T> {
        let many = sources.len() >= PARALLEL_FROM_FILES;
        let jobs = self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS)),
            usize::from,
        );
        let threads = if many { jobs.min(sources.len()) } else { 1 };
        let progress = if many && !self.quiet && std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(sources.len() as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template("[{pos}/{len}] {msg}") {
                bar.set_style(style);
            }
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        let one = |path: &PathBuf| {
            let result = work(path);
            progress.set_message(format!("{verb} {}", path.display()));
            progress.inc(1);
            result
        };
        let results = if threads > 1 {
            in_threads(threads, sources, one)
        } else {
            sources.iter().map(one).collect()
        };
        // Erased, so that it never mixes with the report.
        progress.finish_and_clear();
        results
    }
}

/// `work` on every item on `threads` threads (with the analysis's deep stacks), each taking
/// the next item when done with its own; the results in the order of `items`. Where no
/// thread can be started, the rest runs on the caller's.
fn in_threads<I: Sync, T: Send>(
    threads: usize,
    items: &[I],
    work: impl Fn(&I) -> T + Sync,
) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, work(item)));
        }
    };
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        let started: Vec<_> = (0..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(bankwise::parallel::WORKER_STACK_BYTES)
                    .spawn_scoped(scope, take)
                    .ok()
            })
            .collect();
        let mut finished = Vec::new();
        for thread in started {
            match thread.join() {
                Ok(done) => finished.push(done),
                // A bug in the analysis: the run fails as a serial one would.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        // What is left when no thread could be started, on the caller's thread (after the
        // others, so that no more than `threads` files are under way at once).
        finished.push(take());
        for (i, result) in finished.into_iter().flatten() {
            slots[i] = Some(result);
        }
    });
    // Every index below `items.len()` was taken once, by one thread.
    slots.into_iter().flatten().collect()
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // The compiler-launcher form: CMake runs `bankwise /path/to/nvcc ARGS...`.
    if let Some(compiler) = args.get(1).filter(|first| is_launched_compiler(first)) {
        return nvcc::run_launcher(compiler, &args[2..]);
    }
    let cli = Cli::parse_from(args);
    output::remove_temporaries_on_signals();
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Fix(args) => fix::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Nvcc(args) => nvcc::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Server(args) => server::run(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "bankwise", &mut script);
            print_output(Ok(String::from_utf8_lossy(&script).into_owned()))
        }
        Command::Man { page, out_dir } => man(page.as_deref(), out_dir.as_deref()),
        Command::Rule { rule, out_dir } => rule_page(rule.as_deref(), out_dir.as_deref()),
    }
}

/// `bankwise man`: bankwise(1), a subcommand's page (`bankwise-check(1)`, which bankwise(1)
/// refers to), or every page written into `out_dir`.
/// `bankwise rule`: one rule's page, the list of rules, or every page into a directory.
fn rule_page(rule: Option<&str>, out_dir: Option<&Path>) -> ExitCode {
    use bankwise::rules::Rule;
    if let Some(dir) = out_dir {
        for rule in Rule::ALL {
            let path = dir.join(format!("{}.md", rule.id()));
            if let Err(err) = std::fs::write(&path, rule.page()) {
                bankwise::say!(
                    "bankwise: error: {}: cannot write the rule's page: {err}",
                    path.display()
                );
                return ExitCode::from(EXIT_INPUT_ERROR);
            }
        }
        return ExitCode::SUCCESS;
    }
    let Some(wanted) = rule else {
        let list: String = Rule::ALL
            .iter()
            .map(|r| format!("{}  {:<24}{}\n", r.id(), r.name(), r.summary()))
            .collect();
        return print_output(Ok(list));
    };
    let found = Rule::ALL
        .into_iter()
        .find(|r| r.id().eq_ignore_ascii_case(wanted) || r.name() == wanted);
    match found {
        Some(rule) => print_output(Ok(rule.page())),
        None => {
            let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
            bankwise::say!(
                "bankwise: error: no rule `{wanted}`; the rules are {}",
                ids.join(", ")
            );
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

fn man(page: Option<&str>, out_dir: Option<&Path>) -> ExitCode {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    if let Some(dir) = out_dir {
        return match clap_mangen::generate_to(command, dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                bankwise::say!(
                    "bankwise: error: {}: cannot write the man pages: {err}",
                    dir.display()
                );
                ExitCode::from(EXIT_INPUT_ERROR)
            }
        };
    }
    let command = match page {
        None => command,
        Some(name) => match command.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                let names: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
                bankwise::say!(
                    "bankwise: error: no man page `{name}`; the pages are bankwise and {}",
                    names.join(", ")
                );
                return ExitCode::from(EXIT_INPUT_ERROR);
            }
        },
    };
    let mut text = Vec::new();
    match clap_mangen::Man::new(command).render(&mut text) {
        Ok(()) => print_output(Ok(String::from_utf8_lossy(&text).into_owned())),
        Err(err) => {
            bankwise::say!("bankwise: error: cannot render the man page: {err}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

/// Whether bankwise's first argument is a compiler to launch rather than a command of ours.
fn is_launched_compiler(first: &OsStr) -> bool {
    let ours = Cli::command()
        .get_subcommands()
        .any(|command| OsStr::new(command.get_name()) == first)
        || first == "help";
    !ours && bankwise::prebuild::is_compiler(first)
}

/// Prints a command's whole output: exit 0, or 2 when it could not be made or written.
fn print_output(output: Result<String, serde_json::Error>) -> ExitCode {
    match output {
        Ok(output) if write_stdout(&output) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(EXIT_INPUT_ERROR),
        Err(err) => {
            bankwise::say!("bankwise: error: cannot write JSON: {err}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

/// The options of `fix` and `nvcc`: the analysis flags with `settings` above any
/// `bankwise.toml` (they reach `fix_file` through `analysis.command_line`).
fn fix_options(analysis: &AnalysisArgs, settings: Settings) -> Result<FixOptions, ExitCode> {
    match analysis.options(settings) {
        Ok(analysis) => Ok(FixOptions {
            analysis,
            ..FixOptions::default()
        }),
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            Err(ExitCode::from(EXIT_INPUT_ERROR))
        }
    }
}

/// Writes to stdout; a closed pipe (`bankwise check … | head`) is not an error.
fn write_stdout(text: &str) -> bool {
    write_stdout_bytes(text.as_bytes())
}

/// [`write_stdout`] for bytes that need not be UTF-8 (a fixed file's).
fn write_stdout_bytes(bytes: &[u8]) -> bool {
    write_stdout_with(|out| out.write_all(bytes))
}

/// Writes to stdout through a buffer as `write` makes the output, so that a large report is
/// never held whole; a closed pipe is not an error.
fn write_stdout_with(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock>) -> std::io::Result<()>,
) -> bool {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(err) => {
            bankwise::say!("bankwise: error: cannot write output: {err}");
            false
        }
    }
}

/// `value` as pretty JSON and a newline on stdout, written as it is serialised.
fn json_to_stdout(value: &impl serde::Serialize) -> bool {
    write_stdout_with(|out| {
        serde_json::to_writer_pretty(&mut *out, value)?;
        writeln!(out)
    })
}

/// `--show-settings`: the settings in effect for each source, then exit 0 (2 when a
/// configuration cannot be read).
/// `extra` ends each file's settings (what only the command knows: `check`'s rules).
fn show_settings(sources: &[PathBuf], options: &FixOptions, extra: &str, failed: bool) -> ExitCode {
    let mut out = String::new();
    let mut failed = failed;
    for path in sources {
        match bankwise::pipeline::settings_text(path, options) {
            Ok(text) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&text);
                out.push_str(extra);
            }
            Err(err) => {
                bankwise::say!("bankwise: error: {err}");
                failed = true;
            }
        }
    }
    if !write_stdout(&out) || failed {
        ExitCode::from(EXIT_INPUT_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--strategy`: `auto` or a family's name, all of them listed in `--help`.
pub fn strategy_parser() -> impl clap::builder::TypedValueParser<Value = StrategySetting> {
    clap::builder::PossibleValuesParser::new(Family::strategy_names())
        .try_map(|name| StrategySetting::parse(&name).ok_or("not a strategy"))
}

/// The files a command was given, or with none and `--compile-commands`, the CUDA files the
/// database lists.
/// The sources, not among `sources`, that include one of the headers among `sources`
/// (pre-commit passes staged files): their kernels take their launches from there. A
/// project inside a directory the command line names is not walked again: that walk gave
/// its sources already.
fn header_includers(named: &[PathBuf], sources: &[PathBuf], options: &Options) -> Vec<PathBuf> {
    let walked: Vec<PathBuf> = named
        .iter()
        .filter(|p| p.is_dir())
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let mut found = bankwise::pipeline::includers(sources, &walked, options);
    found.retain(|p| !sources.contains(p));
    found
}

pub fn inputs(files: &[PathBuf], options: &Options) -> Vec<PathBuf> {
    if files.is_empty() {
        bankwise::pipeline::with_project_headers(options.compile_db.cuda_files(), options)
    } else {
        files.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::RunArgs;
    use std::cell::Cell;
    use std::path::PathBuf;

    thread_local! {
        /// How many files' work is under way on this thread's stack.
        static DEPTH: Cell<usize> = const { Cell::new(0) };
    }

    /// Issue 33 item 13: a thread waiting for the analysis of its file, itself parallel,
    /// must not take up the next file on the same stack, or 50,000 files overflow it.
    #[test]
    fn a_file_never_starts_on_the_stack_of_a_file_under_way() {
        let run = RunArgs {
            quiet: true,
            jobs: Some(4),
            exclude: Vec::new(),
            no_ignore: false,
            stdin_filename: None,
            language: None,
        };
        let sources: Vec<PathBuf> = (0..2000)
            .map(|i| PathBuf::from(format!("{i}.cu")))
            .collect();
        let deepest = std::sync::atomic::AtomicUsize::new(0);
        let results = run.each("checking", &sources, |path| {
            let depth = DEPTH.with(|d| {
                d.set(d.get() + 1);
                d.get()
            });
            deepest.fetch_max(depth, std::sync::atomic::Ordering::Relaxed);
            // As a file's analysis does: its functions shared out on the analysis pool.
            let sum: usize = bankwise::parallel::map(64, 1, |i| i).into_iter().sum();
            DEPTH.with(|d| d.set(d.get() - 1));
            (path.to_path_buf(), sum)
        });
        assert_eq!(
            deepest.into_inner(),
            1,
            "a file's work ran inside another's"
        );
        let paths: Vec<PathBuf> = results.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(paths, sources, "the results come back in order");
        assert!(results.iter().all(|(_, sum)| *sum == 64 * 63 / 2));
    }
}

/// Errors of a run over many files, each said once: a broken `bankwise.toml` is the same
/// error for every file under it.
#[derive(Default)]
pub(crate) struct ErrorsOnce {
    said: std::collections::HashSet<String>,
}

impl ErrorsOnce {
    pub(crate) fn say(&mut self, error: &dyn std::fmt::Display) {
        let message = error.to_string();
        if !self.said.contains(&message) {
            bankwise::say!("bankwise: error: {message}");
            self.said.insert(message);
        }
    }
}
