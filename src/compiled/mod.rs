//! The compiled view: what nvcc makes of a file. bankwise reasons about the source, but the
//! GPU runs nvcc's machine code, which merges neighbouring shared accesses into 64- and
//! 128-bit instructions and unrolls loops; a rewrite that stops either can make a kernel
//! slower although it removes every conflict. Given nvcc, the file is compiled before and
//! after a rewrite and each kernel's shared-memory instructions are compared.

mod cache;
mod figures;
mod ptx;
mod sass;
mod time;

pub use figures::{
    CompiledFile, CompiledGap, CompiledInstruction, CompiledKernel, CompiledShare, Executed, Kernel,
};
pub use sass::KernelCode;
pub use time::{Weights, MAX_PREDICTED_PER_MILLE};

use figures::{instance_symbol, nvcc_release};

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The excess wavefronts a rewrite must remove for each shared-memory instruction it adds
/// to the compiled kernel. On the H100 and H200 (docs/gpu.md), `ludDiagonal`, at one
/// instruction added per 6.5 wavefronts removed, was 1.23 times slower on every run; the
/// rewrites at 16 to 28 (`dct8x8Forward`/`Inverse`, `stencilConst`, `mriGatherRecords`,
/// `vecPairs`) ranged from 1.25 times faster to 1.17 times slower on launches of 6 µs or
/// less; `mriScanCounts`, at 155, was 1.8 times faster.
pub const MIN_WAVEFRONTS_PER_ADDED_SHARED_INSTRUCTION: u64 = 8;

/// How long one compile or listing may take before it is stopped (a large CUTLASS unit
/// takes minutes; one that takes more is judged on the source alone).
const COMPILE_TIMEOUT: Duration = Duration::from_secs(600);

/// The architecture the compiled view builds for when the build names none.
pub const DEFAULT_ARCH: &str = "sm_90";

/// What a rewrite did to a kernel's machine code that costs more than its conflicts did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Regression {
    /// More shared-memory instructions (nvcc no longer merges neighbouring accesses into
    /// wider ones, or unrolls differently), for too few excess wavefronts removed.
    MoreSharedInstructions {
        before: u32,
        after: u32,
        removed: u64,
    },
    /// More loops left rolled: a loop nvcc unrolled is a loop again.
    LoopRolled { before: u32, after: u32 },
    /// nvcc's code has no fewer conflicts after the rewrite: the accesses the source model
    /// counts as conflicting are merged or hoisted in the code the GPU runs.
    RemovesNoCompiledConflicts {
        source_removed: u64,
        compiled_before: u64,
        compiled_after: u64,
    },
    /// The time model predicts the rewritten kernel no faster than the margin allows.
    PredictedSlower {
        before: ExecutedFigures,
        after: ExecutedFigures,
        /// Excess wavefronts removed, in nvcc's code where it counted all, else in the source.
        removed: u64,
        weights_fitted_on: String,
        per_mille: u64,
    },
}

/// What block 0 of a kernel (all its instances) executed, and its cost in issue slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutedFigures {
    pub instructions: u64,
    pub shared_wavefronts: u64,
    pub global_instructions: u64,
    pub cost: u64,
}

impl fmt::Display for Regression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regression::MoreSharedInstructions {
                before,
                after,
                removed,
            } => write!(
                f,
                "has {after} shared-memory instructions after the rewrite where it had \
                 {before} (nvcc no longer merges neighbouring accesses into wider ones, or \
                 unrolls a loop differently), for {removed} excess wavefronts removed: fewer \
                 than {MIN_WAVEFRONTS_PER_ADDED_SHARED_INSTRUCTION} per instruction added"
            ),
            Regression::RemovesNoCompiledConflicts {
                source_removed,
                compiled_before,
                compiled_after,
            } => write!(
                f,
                "has {compiled_before} excess wavefronts per block in nvcc's code before the \
                 rewrite and {compiled_after} after: it removes none of the conflicts the GPU \
                 sees, where the source model counts {source_removed} removed (nvcc merges or \
                 hoists those accesses)"
            ),
            Regression::PredictedSlower {
                before,
                after,
                removed,
                weights_fitted_on,
                per_mille,
            } => write!(
                f,
                "is predicted to take {}.{:03} times its time after the rewrite: block 0 \
                 executes {} warp instructions where it executed {} and {} shared-memory \
                 wavefronts where it had {}, removing {removed} excess wavefronts (time model \
                 fitted on {weights_fitted_on}: {} issue slots before, {} after); a rewrite \
                 must be predicted at most {}.{:03} times",
                per_mille / 1000,
                per_mille % 1000,
                after.instructions,
                before.instructions,
                after.shared_wavefronts,
                before.shared_wavefronts,
                before.cost,
                after.cost,
                MAX_PREDICTED_PER_MILLE / 1000,
                MAX_PREDICTED_PER_MILLE % 1000,
            ),
            Regression::LoopRolled { before, after } => {
                let loops = if *after == 1 { "loop" } else { "loops" };
                write!(
                    f,
                    "has {after} {loops} nvcc leaves rolled after the rewrite where it had \
                     {before}: the map stops nvcc unrolling a loop"
                )
            }
        }
    }
}

/// What the time model predicts of a kernel whose block 0 executed `before` and then
/// `after`, compiled for `arch`.
pub fn predicted_time(before: &Executed, after: &Executed, arch: &str) -> PredictedTime {
    let weights = time::weights(arch);
    PredictedTime {
        per_mille: time::per_mille(time::cost(before, &weights), time::cost(after, &weights)),
        arch: arch.to_string(),
    }
}

/// The time a rewritten kernel is predicted to take, in thousandths of the original's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictedTime {
    pub per_mille: u64,
    /// The architecture it was compiled for.
    pub arch: String,
}

impl fmt::Display for PredictedTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "predicted {}.{:03} times the kernel's time (compiled for {})",
            self.per_mille / 1000,
            self.per_mille % 1000,
            self.arch
        )
    }
}

/// What the compiled view says of one kernel (all its instances) before and after a
/// rewrite that removes `source_removed` excess wavefronts in the source model.
pub struct KernelChange<'a> {
    pub name: &'a str,
    pub source_removed: u64,
    /// The kernel's excess wavefronts in nvcc's code, where the compiled view counted all.
    pub compiled_excess: Option<(u64, u64)>,
    /// What block 0 executed, where the compiled view ran it to its end.
    pub executed: Option<(Executed, Executed)>,
}

/// How the rewrite changed a kernel's code from `before` to `after`, where that costs more
/// than it saves: a loop nvcc no longer unrolls; no conflict removed in nvcc's code; a time
/// predicted no better than the margin, where block 0 ran before and after; else, more
/// shared instructions than the wavefronts removed pay for.
pub fn regression(
    before: &[KernelCode],
    after: &[KernelCode],
    change: &KernelChange,
    arch: &str,
) -> Option<Regression> {
    let total = |kernels: &[KernelCode], count: fn(&KernelCode) -> u32| -> u32 {
        kernels
            .iter()
            .filter(|k| k.name == change.name)
            .map(count)
            .sum()
    };
    let loops = (total(before, |k| k.loops), total(after, |k| k.loops));
    if loops.1 > loops.0 {
        return Some(Regression::LoopRolled {
            before: loops.0,
            after: loops.1,
        });
    }
    let removed = match change.compiled_excess {
        Some((compiled_before, compiled_after)) if compiled_after >= compiled_before => {
            return Some(Regression::RemovesNoCompiledConflicts {
                source_removed: change.source_removed,
                compiled_before,
                compiled_after,
            });
        }
        Some((compiled_before, compiled_after)) => compiled_before - compiled_after,
        None => change.source_removed,
    };
    if let Some((was, is)) = &change.executed {
        let weights = time::weights(arch);
        let figures = |executed: &Executed| ExecutedFigures {
            instructions: executed.instructions,
            shared_wavefronts: executed.shared_wavefronts,
            global_instructions: executed.global_instructions,
            cost: time::cost(executed, &weights),
        };
        let (before, after) = (figures(was), figures(is));
        let per_mille = time::per_mille(before.cost, after.cost);
        return (per_mille > MAX_PREDICTED_PER_MILLE).then(|| Regression::PredictedSlower {
            before,
            after,
            removed,
            weights_fitted_on: weights.fitted_on.to_string(),
            per_mille,
        });
    }
    let (was, is) = (total(before, |k| k.shared), total(after, |k| k.shared));
    let added = u64::from(is.saturating_sub(was));
    (removed < added * MIN_WAVEFRONTS_PER_ADDED_SHARED_INSTRUCTION).then_some(
        Regression::MoreSharedInstructions {
            before: was,
            after: is,
            removed,
        },
    )
}

/// One compile of a text: its kernels' code, and their conflicts as the compiled view
/// counts them.
pub struct Compiled {
    listings: Listings,
    arch: String,
}

impl Compiled {
    /// Each kernel's code, in the listing's order.
    pub fn code(&self) -> &[KernelCode] {
        &self.listings.code
    }

    /// The compiled view's conflict figures for each of `kernels`: block 0 of the kernel
    /// nvcc made, run with the block shape the analysis resolved.
    pub fn figures(&self, kernels: &[Kernel], bank: &crate::bank::BankConfig) -> CompiledFile {
        let listings = &self.listings;
        let module = ptx::read(&listings.ptx);
        let input = module
            .files
            .iter()
            .find(|(_, name)| *name == "<input>")
            .map(|(number, _)| *number);
        let symbols: Vec<&str> = ptx::kernels(&module).collect();
        let mut figures = Vec::new();
        for kernel in kernels {
            let Some(symbol) = instance_symbol(&symbols, kernel.name) else {
                continue;
            };
            let launch = ptx::Launch {
                block: kernel.block,
                params: kernel.params,
                bank: *bank,
                reuse_loads: true,
            };
            let sass = listings
                .sass
                .iter()
                .find(|(name, _)| name == symbol)
                .map_or(&[][..], |(_, sites)| &sites[..]);
            if let Some(run) = ptx::run(&module, symbol, &launch, sass) {
                figures.push(CompiledKernel::new(kernel.name, symbol, run, input));
            }
        }
        CompiledFile {
            nvcc: nvcc_release(&listings.ptx).unwrap_or_default(),
            arch: self.arch.clone(),
            kernels: figures,
        }
    }
}

/// A file's PTX, and each kernel's shared loads and stores in the machine code made of it.
#[derive(Serialize, Deserialize)]
struct Listings {
    ptx: String,
    sass: Vec<(String, Vec<sass::SharedSite>)>,
    code: Vec<KernelCode>,
}

/// What a file is compiled with, besides its text.
pub struct Flags<'a> {
    pub arch: &'a str,
    pub include_dirs: &'a [PathBuf],
    pub defines: &'a [String],
    pub pre_includes: &'a [PathBuf],
}

/// Whether the compiled view has a compiler.
#[derive(Debug, Clone)]
pub enum Availability {
    Found(Compiler),
    /// `BANKWISE_NVCC` is set and empty.
    TurnedOff,
    NotFound,
}

/// nvcc and the cuobjdump beside it (ptxas and nvdisasm are looked for beside it too).
#[derive(Debug, Clone)]
pub struct Compiler {
    nvcc: PathBuf,
    cuobjdump: PathBuf,
}

/// Why a file could not be compiled or its code read.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("could not run {program}: {source}")]
    Run {
        program: String,
        source: std::io::Error,
    },
    #[error("{program} failed: {message}")]
    Failed { program: String, message: String },
}

impl CompileError {
    /// The error with the temporary copy's path `source` in nvcc's message read as `path`.
    fn naming(self, source: &Path, path: &Path) -> CompileError {
        match self {
            CompileError::Failed { program, message } => CompileError::Failed {
                program,
                message: message
                    .replace(&source.display().to_string(), &path.display().to_string()),
            },
            other => other,
        }
    }
}

impl Compiler {
    /// nvcc from `$BANKWISE_NVCC` (set and empty: none), `$CUDA_HOME/bin`, `$CUDA_PATH/bin`
    /// or PATH, with a cuobjdump beside it; `None` when there is none.
    pub fn find() -> Option<Compiler> {
        match Compiler::look() {
            Availability::Found(compiler) => Some(compiler),
            Availability::TurnedOff | Availability::NotFound => None,
        }
    }

    /// The compiler `nvcc` (a path, or a name looked for on PATH) with the cuobjdump beside
    /// it, when both are there.
    pub fn at(nvcc: &Path) -> Option<Compiler> {
        let candidates = if nvcc.components().count() > 1 {
            vec![nvcc.to_path_buf()]
        } else {
            on_path(&nvcc.to_string_lossy())
        };
        candidates.into_iter().find_map(|nvcc| {
            let cuobjdump = nvcc.with_file_name("cuobjdump");
            (nvcc.is_file() && cuobjdump.is_file()).then_some(Compiler { nvcc, cuobjdump })
        })
    }

    /// Whether nvcc is at hand for the compiled view, and if not, why.
    pub fn look() -> Availability {
        let named = std::env::var_os("BANKWISE_NVCC");
        let candidates: Vec<PathBuf> = match named {
            Some(path) if path.is_empty() => return Availability::TurnedOff,
            Some(path) => vec![PathBuf::from(path)],
            None => ["CUDA_HOME", "CUDA_PATH"]
                .iter()
                .filter_map(std::env::var_os)
                .map(|home| PathBuf::from(home).join("bin").join("nvcc"))
                .chain(on_path("nvcc"))
                .collect(),
        };
        candidates
            .iter()
            .find_map(|nvcc| Compiler::at(nvcc))
            .map_or(Availability::NotFound, Availability::Found)
    }

    /// Each kernel's code in `text`, compiled as the file `path` (its directory searched
    /// first for quoted includes) with `-O3` for `flags.arch`, and the include directories,
    /// definitions and pre-included files the analysis uses; from the cache
    /// ([`cache::dir`]) when this compile was made before.
    pub fn kernels(
        &self,
        path: &Path,
        text: &str,
        flags: &Flags,
    ) -> Result<Vec<KernelCode>, CompileError> {
        self.listings(path, text, flags)
            .map(|listings| listings.code)
    }

    /// The PTX nvcc makes of `text` (with `-lineinfo`), its input file named `<input>` in
    /// its `.file` table, and what the machine code ptxas makes of that PTX has: each
    /// kernel's shared loads and stores (from nvdisasm, where it is beside nvcc) and its
    /// code's counts (from nvdisasm, else cuobjdump).
    fn listings(&self, path: &Path, text: &str, flags: &Flags) -> Result<Listings, CompileError> {
        self.cached("listings-2", path, text, flags, || {
            let work = tempfile::tempdir().map_err(|source| CompileError::Run {
                program: "a temporary directory".to_string(),
                source,
            })?;
            let source = work.path().join("unit.cu");
            let output = work.path().join("unit.ptx");
            let mut nvcc = self.nvcc_command(path, text, flags, &source)?;
            nvcc.args(["-ptx", "-lineinfo"])
                .arg("-o")
                .arg(&output)
                .arg(&source);
            run(&mut nvcc).map_err(|e| e.naming(&source, path))?;
            let unreadable = |source| CompileError::Run {
                program: "nvcc's PTX".to_string(),
                source,
            };
            let listing = std::fs::read_to_string(&output).map_err(unreadable)?;
            let ptx = listing.replace(&format!("\"{}\"", source.display()), "\"<input>\"");
            std::fs::write(&output, &ptx).map_err(unreadable)?;
            let cubin = work.path().join("unit.cubin");
            run(Command::new(self.nvcc.with_file_name("ptxas"))
                .args(["-O3", "-lineinfo"])
                .arg(format!("-arch={}", flags.arch))
                .arg(&output)
                .arg("-o")
                .arg(&cubin))?;
            let nvdisasm = self.nvcc.with_file_name("nvdisasm");
            let (sass, code) = if nvdisasm.is_file() {
                let listing = run(Command::new(&nvdisasm).args(["-g", "-c"]).arg(&cubin))?;
                (
                    sass::shared_sites(&listing),
                    sass::nvdisasm_kernels(&listing),
                )
            } else {
                let listing = run(Command::new(&self.cuobjdump).arg("-sass").arg(&cubin))?;
                (Vec::new(), sass::kernels(&listing))
            };
            Ok(Listings { ptx, sass, code })
        })
    }

    /// `text` compiled as [`Self::listings`] does, with what the compiled view reads of it.
    pub fn compile(
        &self,
        path: &Path,
        text: &str,
        flags: &Flags,
    ) -> Result<Compiled, CompileError> {
        Ok(Compiled {
            listings: self.listings(path, text, flags)?,
            arch: flags.arch.to_string(),
        })
    }

    /// Runs `compile`, or takes its result from the cache ([`cache::dir`]) when the same
    /// compile (`what`, the compiler, the flags and the text) was made before.
    fn cached<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        what: &str,
        path: &Path,
        text: &str,
        flags: &Flags,
        compile: impl FnOnce() -> Result<T, CompileError>,
    ) -> Result<T, CompileError> {
        let Some(dir) = cache::dir() else {
            return compile();
        };
        let key = self.key(what, path, text, flags);
        if let Some(kept) = cache::get(&dir, &key) {
            return kept;
        }
        let result = compile();
        cache::put(&dir, &key, &result);
        result
    }

    /// What a compile's result is kept under.
    fn key(&self, what: &str, path: &Path, text: &str, flags: &Flags) -> String {
        let identity = |tool: &Path| {
            let metadata = std::fs::metadata(tool).ok();
            let modified = metadata
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!(
                "{}:{}:{modified}",
                tool.display(),
                metadata.map_or(0, |m| m.len())
            )
        };
        let list = |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join("\n");
        let parts = [
            env!("CARGO_PKG_VERSION").to_string(),
            what.to_string(),
            identity(&self.nvcc),
            identity(&self.cuobjdump),
            flags.arch.to_string(),
            path.parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            list(&mut flags.include_dirs.iter().map(|d| d.display().to_string())),
            list(&mut flags.defines.iter().cloned()),
            list(&mut flags.pre_includes.iter().map(|f| f.display().to_string())),
        ];
        let mut bytes: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
        bytes.push(text.as_bytes());
        cache::key(&bytes)
    }

    /// nvcc with `-O3`, the architecture, and the include directories, definitions and
    /// pre-included files the analysis uses, `text` written to `source` (the file `path`,
    /// whose directory is searched first for quoted includes).
    fn nvcc_command(
        &self,
        path: &Path,
        text: &str,
        flags: &Flags,
        source: &Path,
    ) -> Result<Command, CompileError> {
        std::fs::write(source, text).map_err(|source| CompileError::Run {
            program: "a temporary file".to_string(),
            source,
        })?;
        let mut nvcc = Command::new(&self.nvcc);
        nvcc.args(["-O3", "-w", "-std=c++17"])
            .arg(format!("-arch={}", flags.arch));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            nvcc.arg("-I").arg(dir);
        }
        for dir in flags.include_dirs {
            nvcc.arg("-I").arg(dir);
        }
        for define in flags.defines {
            nvcc.arg(format!("-D{define}"));
        }
        for file in flags.pre_includes {
            nvcc.arg("-include").arg(file);
        }
        Ok(nvcc)
    }
}

/// `name` in each directory of PATH.
fn on_path(name: &str) -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .collect()
        })
        .unwrap_or_default()
}

fn run(command: &mut Command) -> Result<String, CompileError> {
    run_within(command, COMPILE_TIMEOUT)
}

/// Runs `command` and returns its stdout; past `limit` it is killed: a compile that does not
/// end is no verdict on the text, and `fix` must not hang on it.
fn run_within(command: &mut Command, limit: Duration) -> Result<String, CompileError> {
    let program: OsString = command.get_program().to_os_string();
    let program = program.to_string_lossy().into_owned();
    let failed_to_run = |source| CompileError::Run {
        program: program.clone(),
        source,
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(failed_to_run)?;
    // Read as the program writes: a listing larger than a pipe's buffer would block it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(failed_to_run)? {
            Some(status) => break status,
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CompileError::Run {
                    program: program.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("still running after {} s", limit.as_secs()),
                    ),
                });
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        let message = String::from_utf8_lossy(&stderr);
        // The first error, with the line that names it; else the first lines.
        let lines: Vec<&str> = message.lines().collect();
        let message = match lines.iter().position(|l| l.contains("error")) {
            Some(at) => lines[at..].iter().take(3).copied().collect::<Vec<_>>(),
            None => lines.into_iter().take(3).collect(),
        };
        return Err(CompileError::Failed {
            program,
            message: message.join("; "),
        });
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(name: &str, shared: u32, loops: u32) -> KernelCode {
        KernelCode {
            name: name.to_string(),
            instructions: 100,
            shared,
            loops,
        }
    }

    fn change(name: &str, source_removed: u64, compiled: Option<(u64, u64)>) -> KernelChange<'_> {
        KernelChange {
            name,
            source_removed,
            compiled_excess: compiled,
            executed: None,
        }
    }

    #[test]
    fn a_rewrite_regresses_when_a_loop_rolls_or_its_shared_instructions_do_not_pay() {
        let before = [code("k", 114, 0), code("other", 5, 1)];
        let regression = |before: &[KernelCode], after: &[KernelCode], change: KernelChange| {
            regression(before, after, &change, "sm_90")
        };
        // 46 instructions more for 301 wavefronts: 6.5 each, under 8.
        assert_eq!(
            regression(&before, &[code("k", 160, 0)], change("k", 301, None)),
            Some(Regression::MoreSharedInstructions {
                before: 114,
                after: 160,
                removed: 301
            })
        );
        // The same for 368 wavefronts pays (8 each); fewer instructions always do.
        assert_eq!(
            regression(&before, &[code("k", 160, 0)], change("k", 368, None)),
            None
        );
        assert_eq!(
            regression(&before, &[code("k", 100, 0)], change("k", 0, None)),
            None
        );
        // A loop rolled again regresses whatever the wavefronts.
        assert_eq!(
            regression(&before, &[code("k", 114, 2)], change("k", 100_000, None)),
            Some(Regression::LoopRolled {
                before: 0,
                after: 2
            })
        );
        // Instances of one template are summed; other kernels do not count.
        let instances = [code("t", 10, 0), code("t", 10, 0)];
        assert_eq!(
            regression(
                &instances,
                &[code("t", 11, 0), code("t", 10, 0)],
                change("t", 8, None)
            ),
            None
        );
        assert_eq!(
            regression(&before, &before, change("missing", 0, None)),
            None
        );
        // Counted in nvcc's code, the rewrite removes what the GPU sees: none here, 301 of
        // the source model's are merged accesses; 400 removed there pays for 46 more.
        assert_eq!(
            regression(&before, &before, change("k", 301, Some((0, 0)))),
            Some(Regression::RemovesNoCompiledConflicts {
                source_removed: 301,
                compiled_before: 0,
                compiled_after: 0
            })
        );
        assert_eq!(
            regression(
                &before,
                &[code("k", 160, 0)],
                change("k", 301, Some((400, 0)))
            ),
            None
        );
        assert_eq!(
            regression(
                &before,
                &[code("k", 160, 0)],
                change("k", 3000, Some((100, 0)))
            ),
            Some(Regression::MoreSharedInstructions {
                before: 114,
                after: 160,
                removed: 100
            })
        );
    }

    #[test]
    fn where_block_0_ran_before_and_after_the_time_model_decides() {
        let before = [code("k", 190, 0)];
        // nwUpperLeft as the compiled view ran it: 547 → 3,423 warp instructions to turn
        // 610 shared wavefronts into 190 (420 excess removed).
        let skew = KernelChange {
            executed: Some((
                Executed::weighed(547, 610, 35),
                Executed::weighed(3423, 190, 35),
            )),
            ..change("k", 420, Some((420, 0)))
        };
        let refused = regression(&before, &before, &skew, "sm_90");
        assert_eq!(
            refused,
            Some(Regression::PredictedSlower {
                before: ExecutedFigures {
                    instructions: 547,
                    shared_wavefronts: 610,
                    global_instructions: 35,
                    cost: 4107
                },
                after: ExecutedFigures {
                    instructions: 3423,
                    shared_wavefronts: 190,
                    global_instructions: 35,
                    cost: 5303
                },
                removed: 420,
                weights_fitted_on: "sm_90".to_string(),
                per_mille: 1291,
            })
        );
        assert_eq!(
            refused.map(|r| r.to_string()).as_deref(),
            Some(
                "is predicted to take 1.291 times its time after the rewrite: block 0 \
                 executes 3423 warp instructions where it executed 547 and 190 shared-memory \
                 wavefronts where it had 610, removing 420 excess wavefronts (time model \
                 fitted on sm_90: 4107 issue slots before, 5303 after); a rewrite must be \
                 predicted at most 0.970 times"
            )
        );
        // A transpose's rewrite pays, although it adds instructions and shared instructions
        // (the shared-instruction rule alone would refuse it); another architecture uses
        // sm_90's weights.
        let transpose = KernelChange {
            executed: Some((
                Executed::weighed(472, 1056, 64),
                Executed::weighed(592, 64, 64),
            )),
            ..change("k", 992, Some((992, 0)))
        };
        assert_eq!(
            regression(&before, &[code("k", 400, 0)], &transpose, "sm_80"),
            None
        );
        // A rolled loop is refused before the time model is asked.
        assert!(matches!(
            regression(&before, &[code("k", 190, 1)], &transpose, "sm_90"),
            Some(Regression::LoopRolled { .. })
        ));
    }

    #[test]
    fn a_compile_that_does_not_end_is_stopped() {
        let started = Instant::now();
        let result = run_within(
            Command::new("sh").args(["-c", "sleep 30"]),
            Duration::from_millis(200),
        );
        assert!(
            matches!(&result, Err(CompileError::Run { source, .. }) if source.kind() == std::io::ErrorKind::TimedOut),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_large_listing_is_read_whole() {
        let listing = run_within(
            Command::new("sh").args(["-c", "head -c 1000000 /dev/zero | tr '\\0' x"]),
            Duration::from_secs(30),
        )
        .expect("runs");
        assert_eq!(listing.len(), 1_000_000);
    }
}
