//! `bankwise nvcc`: the pre-build step. Every CUDA input of an nvcc command line is fixed
//! into a temporary directory, with `#line` directives that keep the original's name and line
//! numbers, and nvcc compiles the fixed copies. Whatever goes wrong in bankwise, the original
//! is compiled instead: a pre-build step never breaks a build.
//!
//! - [`args`]: which of nvcc's arguments are inputs, defines, include paths.
//! - [`headers`]: the project headers an input includes that define kernels.
//! - [`lines`]: the `#line` directives.
pub mod args;
mod headers;
pub mod lines;

use crate::analysis::NotRewritable;
use crate::block::NoBlock;
use crate::pipeline::{self, FileFix, FixOptions};
use crate::plan::{Action, Caution, Reason};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What became of one CUDA input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Fixed: nvcc compiles the copy.
    Rewritten {
        arrays: usize,
        excess_before: u64,
        excess_after: u64,
    },
    /// Nothing to fix: nvcc compiles the original.
    Unchanged,
    /// Not analysed whole for want of a value (an extent bankwise could not evaluate): nvcc
    /// compiles the original. Why, for the log.
    Skipped(String),
    /// bankwise could not fix it (why, starting with the file's name): nvcc compiles the
    /// original.
    Failed(String),
}

/// One CUDA input and what became of it.
#[derive(Debug, Clone)]
pub struct InputReport {
    /// As given on the command line.
    pub path: String,
    pub outcome: Outcome,
    /// A kernel bankwise could not analyse for want of a block shape, and how to give one.
    pub unknown_block: Option<String>,
    /// For a project header rather than an input: the input that includes it, as given.
    pub included_by: Option<String>,
}

impl InputReport {
    /// The warning to print, if any: one line per file.
    pub fn warning(&self) -> Option<String> {
        match (&self.outcome, &self.unknown_block) {
            (Outcome::Failed(why), _) => {
                Some(format!("bankwise: warning: {why}; compiling the original"))
            }
            (Outcome::Unchanged, Some(block)) => Some(format!(
                "bankwise: warning: {}: {block}; compiling the original",
                self.path
            )),
            (Outcome::Rewritten { .. }, Some(block)) => Some(format!(
                "bankwise: warning: {}: {block}; its shared arrays are compiled as written",
                self.path
            )),
            _ => None,
        }
    }

    /// One line for the log (`--log`, `BANKWISE_LOG`).
    pub fn log_line(&self) -> String {
        let line = self.outcome_line();
        match &self.included_by {
            Some(input) => format!("{line} (included by {input})"),
            None => line,
        }
    }

    fn outcome_line(&self) -> String {
        match &self.outcome {
            Outcome::Rewritten {
                arrays,
                excess_before,
                excess_after,
            } => format!(
                "{}: rewritten: {arrays} array{}, {excess_before} -> {excess_after} excess \
                 wavefronts",
                self.path,
                if *arrays == 1 { "" } else { "s" }
            ),
            Outcome::Unchanged => format!("{}: unchanged", self.path),
            Outcome::Skipped(why) => format!("{}: skipped: {why}", self.path),
            Outcome::Failed(why) => format!("{why}; compiled the original"),
        }
    }
}

/// An nvcc command line with its CUDA inputs replaced by their fixed copies.
pub struct Prepared {
    /// The arguments to run nvcc with.
    pub args: Vec<String>,
    /// The arguments as given: what runs when nvcc fails on the copies.
    original: Vec<String>,
    /// One per CUDA input, in order; empty for a run that passes through.
    pub reports: Vec<InputReport>,
    /// Why nothing was rewritten (`-M`, `-E`), when the run passes through.
    pub pass_through: Option<String>,
    /// (copy, original argument) for each rewritten input, to put the original back into
    /// the dependency file.
    rewritten: Vec<(PathBuf, String)>,
    dependency_file: Option<PathBuf>,
    /// Holds the copies until nvcc is done; removed on drop.
    _copies: Option<tempfile::TempDir>,
}

/// Fixes every CUDA input of `args` (nvcc's arguments). nvcc's `-D`, `-U` and `-I` reach
/// the analysis; `options`' own defines come after them, so they win.
pub fn prepare(args: &[String], options: &FixOptions) -> Prepared {
    let command = args::parse(args);
    let mut prepared = Prepared {
        args: args.to_vec(),
        original: args.to_vec(),
        reports: Vec::new(),
        pass_through: command.pass_through.clone(),
        rewritten: Vec::new(),
        dependency_file: command.dependency_file_path(),
        _copies: None,
    };
    if command.pass_through.is_some() || command.inputs.is_empty() {
        return prepared;
    }
    if let Some(why) = &command.unreadable {
        for input in &command.inputs {
            let shown = args[input.index].clone();
            prepared.reports.push(InputReport {
                outcome: Outcome::Failed(format!("{shown}: {why}")),
                path: shown,
                unknown_block: None,
                included_by: None,
            });
        }
        return prepared;
    }
    let mut options = options.clone();
    options.arch = command.flags.arch.clone();
    options.analysis.defines = command
        .flags
        .defines
        .iter()
        .chain(&options.analysis.defines)
        .cloned()
        .collect();
    options
        .analysis
        .include_dirs
        .extend(command.flags.include_dirs.iter().cloned());
    options
        .analysis
        .pre_includes
        .extend(command.flags.pre_includes.iter().cloned());
    // The directory whose quoted includes the copies resolve: one per command line, since
    // nvcc gives every input the same search path.
    let mut quote_dir: Option<PathBuf> = None;
    for (n, input) in command.inputs.iter().enumerate() {
        if !input.path.is_file() {
            // nvcc says what is wrong with it.
            continue;
        }
        let shown = args[input.index].clone();
        let mut header_reports = Vec::new();
        let (outcome, block_note) = match rewrite_input(&input.path, &options) {
            Ok(fixed) => {
                let block_note = unknown_block(&fixed);
                let mut fixed_headers = Vec::new();
                for header in headers::fix_included(&input.path, &fixed.original, &options) {
                    let report = |path: &Path, outcome| InputReport {
                        path: path.display().to_string(),
                        outcome,
                        unknown_block: None,
                        included_by: Some(shown.clone()),
                    };
                    match header {
                        headers::HeaderOutcome::Fixed(fix) => fixed_headers.push(fix),
                        headers::HeaderOutcome::Unchanged => {}
                        headers::HeaderOutcome::NotCopied(path, why) => {
                            header_reports.push(report(&path, Outcome::Skipped(why.to_string())))
                        }
                        headers::HeaderOutcome::Failed(path, why) => {
                            header_reports.push(report(&path, Outcome::Failed(why)))
                        }
                    }
                }
                if !fixed.changed() && fixed_headers.is_empty() {
                    let outcome =
                        unknown_value(&fixed).map_or(Outcome::Unchanged, Outcome::Skipped);
                    (outcome, block_note)
                } else {
                    match place_copy(&mut prepared, n, &input.path, &fixed, &mut quote_dir) {
                        Ok(copy) => {
                            prepared.args[input.index] = copy.to_string_lossy().into_owned();
                            prepared.rewritten.push((copy.clone(), shown.clone()));
                            for header in fixed_headers {
                                let outcome = match place_header_copy(&copy, &header) {
                                    Ok(header_copy) => {
                                        let original = header.path.display().to_string();
                                        prepared.rewritten.push((header_copy, original));
                                        rewritten(&header.fixed)
                                    }
                                    Err(why) => {
                                        Outcome::Failed(format!("{}: {why}", header.path.display()))
                                    }
                                };
                                header_reports.push(InputReport {
                                    path: header.path.display().to_string(),
                                    outcome,
                                    unknown_block: unknown_block(&header.fixed),
                                    included_by: Some(shown.clone()),
                                });
                            }
                            let outcome = if fixed.changed() {
                                rewritten(&fixed)
                            } else {
                                unknown_value(&fixed).map_or(Outcome::Unchanged, Outcome::Skipped)
                            };
                            (outcome, block_note)
                        }
                        Err(why) => (Outcome::Failed(format!("{shown}: {why}")), None),
                    }
                }
            }
            Err(reason) => (Outcome::Failed(reason), None),
        };
        prepared.reports.push(InputReport {
            path: shown,
            outcome,
            unknown_block: block_note,
            included_by: None,
        });
        prepared.reports.append(&mut header_reports);
    }
    // The copies live in a private directory: their quoted includes must find the
    // original's neighbours first, as the original's would, and nothing else may change
    // (an angled include still searches `-I` only). nvcc hands `-Xcompiler` to every
    // preprocessing of the file, the device passes' included.
    if let Some(dir) = quote_dir {
        let mut with_quote = vec![
            "-Xcompiler".to_string(),
            format!("-iquote,{}", dir.to_string_lossy()),
        ];
        with_quote.append(&mut prepared.args);
        prepared.args = with_quote;
    }
    prepared
}

/// Why a copy could not be placed where it resolves its includes as the original does.
#[derive(Debug, thiserror::Error)]
enum CopyError {
    #[error("cannot write the fixed copy: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "its directory's name holds a comma, which nvcc's -Xcompiler would split; compiled \
         as written"
    )]
    CommaInDirectory,
    #[error(
        "another input of this nvcc run, in {0}, was rewritten: nvcc gives every input the \
         same include path, so only that directory's inputs are rewritten"
    )]
    OtherDirectory(String),
    #[error("no temporary directory without characters nvcc or make would misread")]
    NoPlainTemporaryDirectory,
}

/// Writes the fixed copy of input `n` and returns its path; `quote_dir` is the directory
/// whose quoted includes the copies resolve, set by the first.
fn place_copy(
    prepared: &mut Prepared,
    n: usize,
    path: &Path,
    fixed: &FileFix,
    quote_dir: &mut Option<PathBuf>,
) -> Result<PathBuf, CopyError> {
    let absolute = std::path::absolute(path)?;
    let dir = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.to_string_lossy().contains(',') {
        return Err(CopyError::CommaInDirectory);
    }
    match quote_dir {
        Some(first) if *first != dir => {
            return Err(CopyError::OtherDirectory(first.display().to_string()))
        }
        _ => {}
    }
    let copy = write_copy(prepared, n, &absolute, fixed)?;
    *quote_dir = Some(dir);
    Ok(copy)
}
/// Fixes one input; a failure is described in one line that starts with the file's name.
/// A panic (a bug in bankwise) is one such failure: the build goes on with the original.
fn rewrite_input(path: &Path, options: &FixOptions) -> Result<FileFix, String> {
    let fixed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipeline::fix_file(path, options)
    }))
    .map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        format!(
            "{}: bankwise failed ({message}); this is a bug in bankwise, please report it with \
             the file",
            path.display()
        )
    })?;
    fixed.map_err(|err| {
        let message = err.to_string();
        let shown = path.display().to_string();
        if message.starts_with(&shown) {
            message
        } else {
            format!("{shown}: {message}")
        }
    })
}

/// The first kernel whose arrays were left as written for want of a block shape: left
/// alone, as its note says, or with a fix that rests on an assumed shape (never applied
/// here: the pre-build step applies safe fixes only).
fn unknown_block(fixed: &FileFix) -> Option<String> {
    fixed.arrays.iter().find_map(|a| {
        let reason = a.reason.as_ref()?;
        match (&a.action, reason) {
            (Action::LeftAlone, Reason::NotRewritable(NotRewritable::NoBlock(why)))
                if matches!(**why, NoBlock::UnknownForDeviceFunction { .. }) =>
            {
                Some(why.to_string())
            }
            (Action::NotApplied, Reason::Unsafe(Some(Caution::AssumedBlock { .. }))) => {
                Some(format!(
                    "block shape unknown for kernel `{}`: no launch in this file; pass --block \
                     {}=XxYxZ",
                    a.function, a.function
                ))
            }
            _ => None,
        }
    })
}

/// The first array left as written because a value its extent needs is unknown (and how
/// to give it), or because its rewrite compiled worse or not at all: the log says so
/// instead of `unchanged`.
fn unknown_value(fixed: &FileFix) -> Option<String> {
    fixed
        .arrays
        .iter()
        .find_map(|a| match (&a.action, a.reason.as_ref()?) {
            (
                Action::LeftAlone,
                why @ Reason::NotRewritable(NotRewritable::UnknownExtent { .. }),
            ) => Some(format!(
                "`{}` in `{}`: {why} (pass -D, or add include_dirs to bankwise.toml)",
                a.array, a.function
            )),
            (_, why @ (Reason::DoesNotCompile(_) | Reason::Compiled { .. })) => {
                Some(format!("`{}` in `{}`: {why}", a.array, a.function))
            }
            _ => None,
        })
}

fn rewritten(fixed: &FileFix) -> Outcome {
    let arrays: Vec<_> = fixed
        .arrays
        .iter()
        .filter(|a| a.action == Action::Rewritten)
        .collect();
    Outcome::Rewritten {
        arrays: arrays.len(),
        excess_before: arrays.iter().filter_map(|a| a.excess_before).sum(),
        excess_after: arrays.iter().filter_map(|a| a.excess_after).sum(),
    }
}

/// Writes the fixed text of the input at `absolute` into the private temporary directory,
/// under the original's file name (nvcc names its default outputs after it), with `#line`
/// directives naming the original. The copy sits deep enough that no `..` of its includes
/// climbs out of the private directory: a quoted include that is not beside it (nothing
/// is) is looked for in the original's directory next, as the original's would be, and
/// never in a directory another user could write.
fn write_copy(
    prepared: &mut Prepared,
    n: usize,
    absolute: &Path,
    fixed: &FileFix,
) -> Result<PathBuf, CopyError> {
    if prepared._copies.is_none() {
        prepared._copies = Some(private_directory()?);
    }
    let root = prepared
        ._copies
        .as_ref()
        .map(|dir| dir.path().to_path_buf())
        .unwrap_or_default();
    let depth = absolute
        .parent()
        .map_or(0, |dir| dir.components().count())
        .max(parent_steps(&fixed.original));
    // One directory per input: two inputs may share a file name.
    let mut dir = root.join(n.to_string());
    for _ in 0..depth {
        dir.push("d");
    }
    std::fs::create_dir_all(&dir)?;
    let name = absolute.file_name().unwrap_or(OsStr::new("input.cu"));
    let copy = dir.join(name);
    write_fixed(&copy, fixed, absolute)?;
    Ok(copy)
}

/// Writes `fixed`'s text at `copy`, with `#line` directives naming `original`.
fn write_fixed(copy: &Path, fixed: &FileFix, original: &Path) -> std::io::Result<()> {
    let text =
        lines::with_line_directives(&fixed.original, fixed.output(), &original.to_string_lossy());
    std::fs::write(copy, crate::parse::restored_bytes(&text))
}

/// Writes the fixed copy of `header` where the quoted include of the input's copy (at
/// `input_copy`) finds it first: its name as the input writes it, from the copy's directory.
/// The copy's directory is deep enough that no `..` of the input's includes climbs out of
/// the private directory.
fn place_header_copy(input_copy: &Path, header: &headers::HeaderFix) -> std::io::Result<PathBuf> {
    let dir = input_copy.parent().unwrap_or(Path::new("."));
    let copy = headers::lexically_normal(&dir.join(&header.name));
    if let Some(parent) = copy.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let original = std::path::absolute(&header.path)?;
    write_fixed(&copy, &header.fixed, &original)?;
    Ok(copy)
}

/// The most `..` steps any `#include` line of `text` takes.
fn parent_steps(text: &str) -> usize {
    text.lines()
        .filter(|line| {
            line.trim_start()
                .strip_prefix('#')
                .is_some_and(|rest| rest.trim_start().starts_with("include"))
        })
        .map(|line| line.matches("..").count())
        .max()
        .unwrap_or(0)
}

/// A new directory only this user can read, under `$TMPDIR` or else `/tmp`, whose path
/// holds nothing nvcc's shell commands or a dependency file would misread (`$`, `#`,
/// spaces, quotes).
fn private_directory() -> Result<tempfile::TempDir, CopyError> {
    let plain = |dir: &Path| {
        dir.to_str().is_some_and(|d| {
            d.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+'))
        })
    };
    let candidates = [std::env::temp_dir(), PathBuf::from("/tmp")];
    let base = candidates
        .iter()
        .find(|dir| plain(dir) && dir.is_dir())
        .ok_or(CopyError::NoPlainTemporaryDirectory)?;
    Ok(tempfile::Builder::new()
        .prefix("bankwise-")
        .tempdir_in(base)?)
}

impl Prepared {
    /// Runs `compiler` with the prepared arguments, then names the originals in the
    /// dependency file it wrote. When nvcc fails on a rewritten copy, the original command
    /// runs instead (stdin, stdout and stderr its own), and the reports say so: a pre-build
    /// step never breaks a build. Returns nvcc's exit status (128 + the signal that ended
    /// it), or the error that kept it from starting.
    pub fn run(&mut self, compiler: &OsStr) -> Result<i32, std::io::Error> {
        if self.rewritten.is_empty() {
            return run_compiler(compiler, &self.args);
        }
        // Held back until it is known whether the copies compiled.
        let output = Command::new(compiler).args(&self.args).output()?;
        let code = exit_code(&output.status);
        if code == 0 {
            use std::io::Write;
            let _ = std::io::stdout().write_all(&output.stdout);
            let _ = std::io::stderr().write_all(&output.stderr);
            if let Some(file) = &self.dependency_file {
                if let Err(err) = restore_dependencies(file, &self.rewritten) {
                    crate::say!(
                        "bankwise: warning: {}: cannot name the original sources in it: {err}",
                        file.display()
                    );
                }
            }
            return Ok(code);
        }
        let why = first_error(&output.stderr, code);
        for report in &mut self.reports {
            if matches!(report.outcome, Outcome::Rewritten { .. }) {
                report.outcome = Outcome::Failed(format!(
                    "{}: nvcc failed on the rewritten copy ({why})",
                    report.path
                ));
            }
        }
        crate::say!(
            "bankwise: warning: nvcc failed on the rewritten copy ({why}); compiling the \
             original"
        );
        run_compiler(compiler, &self.original)
    }
}

/// The first line of nvcc's error output that says what failed, else its exit status.
fn first_error(stderr: &[u8], code: i32) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .find(|line| line.contains("error"))
        .or_else(|| text.lines().find(|line| !line.trim().is_empty()))
        .map(|line| line.trim().chars().take(200).collect())
        .unwrap_or_else(|| format!("exit status {code}"))
}

/// Runs `compiler` with `args` (stdin, stdout and stderr its own) and returns its exit
/// status, 128 + the signal that ended it.
pub fn run_compiler<S: AsRef<OsStr>>(compiler: &OsStr, args: &[S]) -> std::io::Result<i32> {
    let status = Command::new(compiler).args(args).status()?;
    Ok(exit_code(&status))
}

fn exit_code(status: &std::process::ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| 128 + signal_of(status))
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.signal().unwrap_or(0)
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> i32 {
    0
}

/// Replaces each copy's path in the make-style dependency file `file` by the original's,
/// so that make and ninja watch the user's file, not a deleted copy.
fn restore_dependencies(file: &Path, rewritten: &[(PathBuf, String)]) -> std::io::Result<()> {
    if rewritten.is_empty() || !file.exists() {
        return Ok(());
    }
    let mut text = std::fs::read_to_string(file)?;
    for (copy, original) in rewritten {
        // The copy's directory is plain (`private_directory`), its file name the
        // original's: make escapes `#` and spaces, nvcc spaces only.
        let copy = copy.to_string_lossy();
        let nvcc_escaped = copy.replace(' ', "\\ ");
        for written in [make_escaped(&copy), nvcc_escaped, copy.to_string()] {
            text = text.replace(&written, &make_escaped(original));
        }
    }
    std::fs::write(file, text)
}

/// A path as make reads it in a rule: spaces and `#` escaped, `$` doubled.
fn make_escaped(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' | '#' => {
                escaped.push('\\');
                escaped.push(c);
            }
            '$' => escaped.push_str("$$"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// Whether `arg` names a compiler rather than an input or a bankwise command: `nvcc` (found
/// on PATH; `nvcc-12.4`, `nvcc.exe`) or an existing executable file, as CMake passes it to
/// a compiler launcher.
pub fn is_compiler(arg: &OsStr) -> bool {
    let path = Path::new(arg);
    let Some(name) = path.file_name().and_then(OsStr::to_str) else {
        return false;
    };
    if name.starts_with('-') || name.starts_with('@') {
        return false;
    }
    let nvcc_name = name.starts_with("nvcc")
        && path
            .extension()
            .is_none_or(|e| e == "exe" || e.to_str().is_some_and(|e| e.parse::<u32>().is_ok()));
    nvcc_name || is_executable_file(path)
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    path.is_file() && path.extension().is_some_and(|e| e == "exe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compilers_and_not_compilers() {
        for name in ["nvcc", "/usr/local/cuda/bin/nvcc", "nvcc.exe", "nvcc-12"] {
            assert!(is_compiler(OsStr::new(name)), "{name}");
        }
        for name in ["nvcc_test.cu", "-c", "@rsp", "k.cu", "check", "nvcc.o"] {
            assert!(!is_compiler(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn paths_in_dependency_files_are_escaped_as_make_reads_them() {
        assert_eq!(make_escaped("/a b/#c$.cu"), "/a\\ b/\\#c$$.cu");
    }
}
