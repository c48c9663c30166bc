//! `bankwise nvcc [OPTIONS] -- ARGS`, and the same step as a compiler launcher
//! (`bankwise /path/to/nvcc ARGS`, as CMake runs `CMAKE_CUDA_COMPILER_LAUNCHER`).
use super::{fix_options, strategy_parser, AnalysisArgs};
use bankwise::pipeline::FixOptions;
use bankwise::prebuild;
use bankwise::settings::{Settings, StrategySetting};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status when the compiler cannot be started, as a shell reports a missing command.
const EXIT_NO_COMPILER: u8 = 127;

#[derive(clap::Args)]
pub struct NvccArgs {
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
    /// Append a line per CUDA input to FILE: rewritten (and the excess wavefronts before and
    /// after), unchanged, or failed (default: the file $BANKWISE_LOG names, if set).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    #[command(flatten)]
    analysis: AnalysisArgs,
    /// nvcc's arguments, after `--`. The first may be the compiler itself (a path, or a name
    /// starting with `nvcc`); else $BANKWISE_NVCC, else `nvcc` on PATH.
    #[arg(last = true, value_name = "NVCC_ARGS")]
    nvcc_args: Vec<OsString>,
}

pub fn run(args: NvccArgs) -> ExitCode {
    let settings = Settings {
        strategy: args.strategy,
        smem_budget: args.smem_budget,
        max_alu_per_wavefront: args.max_alu_per_wavefront,
        ..Settings::default()
    };
    let options = match fix_options(&args.analysis, settings) {
        Ok(options) => options,
        Err(code) => return code,
    };
    let (compiler, nvcc_args) = match args.nvcc_args.split_first() {
        Some((first, rest)) if prebuild::is_compiler(first) => (first.clone(), rest),
        _ => (
            std::env::var_os("BANKWISE_NVCC").unwrap_or_else(|| OsString::from("nvcc")),
            args.nvcc_args.as_slice(),
        ),
    };
    let log = args.log.or_else(log_from_env);
    match utf8(nvcc_args) {
        Some(utf8) => pre_build(&compiler, &utf8, &options, log.as_deref()),
        None => compile_as_given(&compiler, nvcc_args),
    }
}

/// `bankwise COMPILER ARGS...`: the launcher form, with the default options.
pub fn run_launcher(compiler: &OsStr, args: &[OsString]) -> ExitCode {
    let Some(utf8) = utf8(args) else {
        return compile_as_given(compiler, args);
    };
    pre_build(
        compiler,
        &utf8,
        &FixOptions::default(),
        log_from_env().as_deref(),
    )
}

/// The arguments as text, if they all are.
fn utf8(args: &[OsString]) -> Option<Vec<String>> {
    args.iter().map(|a| a.clone().into_string().ok()).collect()
}

/// An argument that is not text (a file name in another encoding) cannot be read: the
/// originals are compiled exactly as given.
fn compile_as_given(compiler: &OsStr, args: &[OsString]) -> ExitCode {
    bankwise::say!("bankwise: warning: an argument is not UTF-8; compiling the originals");
    exit_with(prebuild::run_compiler(compiler, args), compiler)
}

fn log_from_env() -> Option<PathBuf> {
    std::env::var_os("BANKWISE_LOG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn pre_build(
    compiler: &OsStr,
    args: &[String],
    options: &FixOptions,
    log: Option<&Path>,
) -> ExitCode {
    // A panic while preparing is reported in the one line of its input's warning.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut options = options.clone();
    // The compiled view compiles with the build's own nvcc.
    options.nvcc = Some(PathBuf::from(compiler));
    let mut prepared = prebuild::prepare(args, &options);
    std::panic::set_hook(hook);
    for report in &prepared.reports {
        if let Some(warning) = report.warning() {
            bankwise::say!("{warning}");
        }
    }
    let code = prepared.run(compiler);
    // After the run: a copy nvcc could not compile is logged as the original compiled.
    if let Some(log) = log {
        let lines: String = prepared
            .reports
            .iter()
            .map(|r| r.log_line() + "\n")
            .collect();
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut file| file.write_all(lines.as_bytes()));
        if let Err(err) = written {
            bankwise::say!(
                "bankwise: warning: {}: cannot write the log: {err}",
                log.display()
            );
        }
    }
    exit_with(code, compiler)
}

/// nvcc's exit status as ours; a compiler that cannot start is reported.
fn exit_with(result: std::io::Result<i32>, compiler: &OsStr) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            bankwise::say!(
                "bankwise: error: cannot run {}: {err}",
                Path::new(compiler).display()
            );
            ExitCode::from(EXIT_NO_COMPILER)
        }
    }
}
