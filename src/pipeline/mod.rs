//! The driver: one file through the stages, with the settings merged (command line over
//! `bankwise.toml` over the defaults). [`analyse_file`] for `check`, [`fix_file`] for `fix`
//! (plan, rewrite, then [`validate`] the real output before anything is written).
pub mod fix;
pub mod validate;

pub use fix::{fix_analysed, fix_file, fix_source, fix_text, FileFix, FixError, FixOptions};

use crate::analysis::{analyse_text, AnalysedFile, AnalysisError, KeepAffine, Options};
use crate::block::{self, ConfigBlocks, ProjectLaunches};
use crate::parse;
use crate::settings::{Config, ConfigError};
use std::path::{Path, PathBuf};

/// Reads `path` (and the nearest `bankwise.toml`) and analyses it.
pub fn analyse_file(path: &Path, options: &Options) -> Result<AnalysedFile, AnalysisError> {
    let text = parse::read_source(path, options.max_file_bytes)?;
    let (options, config) = for_analysis(path, options)?;
    Ok(analyse_text(path, &text, &options, &config))
}

/// One file as `check` sees it: read once, analysed once, and (when asked) fixed from that
/// analysis.
#[derive(Debug)]
pub struct CheckedFile {
    pub analysed: AnalysedFile,
    pub text: String,
    /// What `fix` would do, when asked for and the file has conflicts; an error is `fix`'s
    /// own, which leaves the analysis standing.
    pub fix: Option<Result<FileFix, FixError>>,
}

/// Reads `path` and the nearest `bankwise.toml`, analyses the file and, with `plan_fixes`
/// and conflicts found, plans and validates the fixes `fix` would make.
pub fn check_file(
    path: &Path,
    options: &Options,
    plan_fixes: bool,
) -> Result<CheckedFile, AnalysisError> {
    let text = parse::read_source(path, options.max_file_bytes)?;
    check_text(path, text, options, plan_fixes)
}

/// [`check_file`] on text already read (stdin, named `path`).
pub fn check_text(
    path: &Path,
    text: String,
    options: &Options,
    plan_fixes: bool,
) -> Result<CheckedFile, AnalysisError> {
    let config = Config::for_input(path, options.config_file.as_deref())?;
    let mut analysis = analysis_options(&config, options, path);
    // The fix needs the affine analyses of the functions it may rewrite.
    if plan_fixes && analysis.keep_affine == KeepAffine::Never {
        analysis.keep_affine = KeepAffine::ForFixes;
    }
    let analysed = analyse_text(path, &text, &analysis, &config.blocks);
    let fix = (plan_fixes && analysed.has_conflicts()).then(|| {
        let asked = FixOptions {
            analysis: options.clone(),
            ..FixOptions::default()
        };
        fix_analysed(
            &analysed,
            text.clone(),
            &fix_options(&config, &asked, path),
            &config.blocks,
        )
    });
    Ok(CheckedFile {
        analysed,
        text,
        fix,
    })
}

/// The launches with known block shapes of `files`, for the kernels of one file that another
/// launches (`bankwise check DIR`).
pub fn project_launches(files: &[AnalysedFile]) -> ProjectLaunches {
    let mut launches = ProjectLaunches::new();
    for file in files {
        block::add_project_launches(
            &mut launches,
            &file.path,
            &file.parsed.launches,
            &file.parsed.headers,
        );
    }
    launches
}

/// The launches with known block shapes in the files at `paths`, read and parsed for that
/// alone (`fix` over several files, which analyses each once); unreadable files are left
/// to the pass that reports them.
pub fn launches_in(paths: &[PathBuf], options: &Options) -> ProjectLaunches {
    let found = crate::parallel::map(paths.len(), 1, |i| {
        let path = &paths[i];
        let text = parse::read_source(path, options.max_file_bytes).ok()?;
        let config = Config::for_input(path, options.config_file.as_deref()).ok()?;
        let options = analysis_options(&config, options, path);
        let parsed = parse::analyse_file_source(
            path,
            &text,
            &options.defines,
            options.header_search(),
            &[],
            &parse::Skipped::default(),
        );
        Some((parsed.launches, parsed.headers))
    });
    let mut launches = ProjectLaunches::new();
    for (path, sites) in paths.iter().zip(found) {
        if let Some((sites, headers)) = sites {
            block::add_project_launches(&mut launches, path, &sites, &headers);
        }
    }
    launches
}

/// Whether another file's launch could change `file`'s analysis: a reported function has no
/// block shape, or an `extern __shared__` array without an extent. Where not,
/// [`launched_elsewhere`] is false whatever the launches, and `check` can make the file's
/// report, and free the rest, before the other files are read.
pub fn may_be_launched_elsewhere(file: &AnalysedFile) -> bool {
    file.reported().any(|r| {
        r.block.as_ref().map_or(true, block::Block::is_assumed)
            || r.function
                .arrays
                .iter()
                .any(|a| a.is_extern && a.dims.first() == Some(&None))
    })
}

/// Whether a kernel of `file` has no block shape and another file launches it: analysed
/// again with `launches`, it has one (a template, an instance for each launch). Also when
/// its `extern __shared__` array has no extent and another file's launch passes dynamic
/// shared memory: analysed again, the array has one.
pub fn launched_elsewhere(file: &AnalysedFile, launches: &ProjectLaunches) -> bool {
    let elsewhere = block::Elsewhere {
        launches,
        path: &file.path,
    };
    file.reported().any(|r| {
        let unknown = r.block.as_ref().map_or(true, block::Block::is_assumed);
        // A template launched with arguments from another file gets an instance from it.
        let template_launched = launches.get(&r.function.name).is_some_and(|sites| {
            sites.iter().any(|l| {
                l.path != file.path && !l.template_args.is_empty() && l.reaches(&file.path)
            })
        });
        let unsized_extern = r
            .function
            .arrays
            .iter()
            .any(|a| a.is_extern && a.dims.first() == Some(&None));
        let sized_elsewhere = unsized_extern
            && launches.get(&r.function.name).is_some_and(|sites| {
                sites.iter().any(|l| {
                    l.path != file.path
                        && l.template_args.is_empty()
                        && l.shared_bytes.is_some_and(|b| b > 0)
                        && l.reaches(&file.path)
                })
            });
        sized_elsewhere
            || unknown && (elsewhere.block_of(r.function).is_some() || template_launched)
    })
}

/// The CUDA files a compilation database lists, then the headers they include with quotes
/// that lie in the project (its repository, else the directory all listed files share): a
/// database lists
/// no headers, and a kernel defined in one is compiled, and launched, through its includers.
/// Each header once, after the listed files, in the order they are first included.
pub fn with_project_headers<'p>(
    listed: impl Iterator<Item = &'p PathBuf>,
    options: &Options,
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = listed.cloned().collect();
    let Some(common) = common_directory(&files) else {
        return files;
    };
    // The repository around them (`include/` beside `src/`), else what they share.
    let root = common
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map_or(common.clone(), Path::to_path_buf);
    let mut headers: Vec<PathBuf> = Vec::new();
    for file in &files {
        let Ok(text) = parse::read_source(file, options.max_file_bytes) else {
            continue;
        };
        let mut search = options.include_dirs.clone();
        if let Some(flags) = options.compile_db.flags_for(file) {
            search.extend(flags.include_dirs.iter().cloned());
        }
        for header in parse::quoted_headers(file, &text, &search) {
            if header.starts_with(&root) && !headers.contains(&header) && !files.contains(&header) {
                headers.push(header);
            }
        }
    }
    files.extend(headers);
    files
}

/// The most source files [`includers`] reads to find a header's includers: a bound on the
/// walk of a very large tree (a header whose includer lies beyond keeps its kernels
/// unlaunched, reported with an unknown block shape as before).
const MAX_INCLUDER_CANDIDATES: usize = 20_000;

/// The `.cu` files of the project that include one of `headers` with quotes (directly or
/// through other project headers), found as the analysis finds headers: the sources whose
/// launches give a header's kernels their block shapes and template arguments when the header
/// is named on its own (pre-commit passes a staged header). The project is the nearest
/// directory above a header that holds `bankwise.toml` or `.git`, else the header's own;
/// `.gitignore` is honoured. Headers without includers, and files that are not headers, add
/// nothing; a project inside one of `walked` (directories whose sources the caller has) is
/// not walked again.
pub fn includers(headers: &[PathBuf], walked: &[PathBuf], options: &Options) -> Vec<PathBuf> {
    let wanted: Vec<(PathBuf, PathBuf)> = headers
        .iter()
        .filter(|h| parse::is_header(h))
        .filter_map(|h| Some((std::fs::canonicalize(h).ok()?, h.clone())))
        .collect();
    let mut roots: Vec<PathBuf> = Vec::new();
    for (canonical, _) in &wanted {
        let root = project_root(canonical);
        if walked.iter().any(|d| root.starts_with(d)) {
            continue;
        }
        if !roots.iter().any(|r| root.starts_with(r)) {
            roots.retain(|r| !r.starts_with(&root));
            roots.push(root);
        }
    }
    let mut found: Vec<PathBuf> = Vec::new();
    for root in roots {
        let candidates = ignore::WalkBuilder::new(&root)
            .require_git(false)
            .follow_links(false)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(ignore::DirEntry::into_path)
            .filter(|p| parse::is_cuda(p) && !parse::is_header(p))
            .take(MAX_INCLUDER_CANDIDATES);
        for candidate in candidates {
            let Ok(text) = parse::read_source(&candidate, options.max_file_bytes) else {
                continue;
            };
            // Most files name none of the headers: no include is resolved for them.
            let names_one = wanted.iter().any(|(_, h)| {
                h.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| text.contains(n))
            });
            if !names_one {
                continue;
            }
            let Ok(config) = Config::for_input(&candidate, options.config_file.as_deref()) else {
                continue;
            };
            let search = analysis_options(&config, options, &candidate).include_dirs;
            let included = parse::quoted_headers(&candidate, &text, &search);
            if wanted.iter().any(|(c, _)| included.contains(c)) && !found.contains(&candidate) {
                found.push(candidate);
            }
        }
    }
    found.sort();
    found
}

/// The project a file belongs to: the nearest directory above it (its links resolved) that
/// holds `bankwise.toml` or `.git`, else its own directory.
pub fn project_root(file: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let dir = canonical.parent().unwrap_or(Path::new("/"));
    dir.ancestors()
        .find(|d| d.join("bankwise.toml").is_file() || d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// The deepest directory every one of `files` lies under, their links resolved.
fn common_directory(files: &[PathBuf]) -> Option<PathBuf> {
    let mut dirs = files.iter().filter_map(|f| {
        std::fs::canonicalize(f)
            .ok()?
            .parent()
            .map(Path::to_path_buf)
    });
    let mut common = dirs.next()?;
    for dir in dirs {
        while !dir.starts_with(&common) {
            common = common.parent()?.to_path_buf();
        }
    }
    Some(common)
}

/// `options` for the file `input` under `config`: what `options.command_line` sets
/// explicitly wins, then the file, then the compilation database's flags for `input`, then
/// the values already in `options`.
pub fn analysis_options(config: &Config, options: &Options, input: &Path) -> Options {
    let settings = options.command_line.over(&config.settings);
    let mut effective = options.clone();
    effective.bank.banks = settings.banks.unwrap_or(options.bank.banks);
    effective.bank.bank_width = settings.bank_width.unwrap_or(options.bank.bank_width);
    // The command line's definitions come last, so they win.
    effective.defines = config
        .defines
        .iter()
        .chain(&options.defines)
        .cloned()
        .collect();
    // The command line's directories are searched first.
    effective
        .include_dirs
        .extend(config.include_dirs.iter().cloned());
    effective.policy = config.lint.policy_for(input);
    with_build_flags(input, &mut effective);
    effective
}

/// [`analysis_options`] for `fix`, with the strategy, budget and unsafe fixes.
pub fn fix_options(config: &Config, options: &FixOptions, input: &Path) -> FixOptions {
    let settings = options.analysis.command_line.over(&config.settings);
    let mut effective = options.clone();
    effective.analysis = analysis_options(config, &options.analysis, input);
    if let Some(strategy) = settings.strategy {
        effective.strategy.forced = strategy.forced();
    }
    effective.strategy.smem_budget = settings.smem_budget.or(options.strategy.smem_budget);
    effective.strategy.max_alu_per_wavefront = settings
        .max_alu_per_wavefront
        .or(options.strategy.max_alu_per_wavefront);
    effective.unsafe_fixes = settings.unsafe_fixes.unwrap_or(options.unsafe_fixes);
    effective.strategy.arch = effective
        .arch
        .clone()
        .or_else(|| effective.analysis.arch.clone());
    effective
}

/// The configuration of `input` and the analysis options under it.
pub fn for_analysis(
    input: &Path,
    options: &Options,
) -> Result<(Options, ConfigBlocks), ConfigError> {
    let config = Config::for_input(input, options.config_file.as_deref())?;
    Ok((analysis_options(&config, options, input), config.blocks))
}

/// The flags the compilation database gives `input`: its `-D`s before everyone else's (the
/// configuration's and the command line's win), its include directories after the
/// command line's.
fn with_build_flags(input: &Path, options: &mut Options) {
    let Some(flags) = options.compile_db.flags_for(input) else {
        return;
    };
    let mut defines = flags.defines.clone();
    defines.append(&mut options.defines);
    options.defines = defines;
    options
        .include_dirs
        .extend(flags.include_dirs.iter().cloned());
    options
        .pre_includes
        .extend(flags.pre_includes.iter().cloned());
    if options.arch.is_none() {
        options.arch = flags.arch.clone();
    }
}

/// The configuration of `input` and the fix options under it: the one way `fix` reads
/// `bankwise.toml`.
pub fn for_fix(
    input: &Path,
    options: &FixOptions,
) -> Result<(FixOptions, ConfigBlocks), ConfigError> {
    let config = Config::for_input(input, options.analysis.config_file.as_deref())?;
    Ok((fix_options(&config, options, input), config.blocks))
}

/// The settings in effect for `input` (`--show-settings`), in `bankwise.toml`'s syntax with
/// where each comes from: which configuration file, then what it and the command line give.
pub fn settings_text(input: &Path, options: &FixOptions) -> Result<String, ConfigError> {
    let config = Config::for_input(input, options.analysis.config_file.as_deref())?;
    let effective = fix_options(&config, options, input);
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    let list = |items: Vec<String>| {
        let quoted: Vec<String> = items.iter().map(|i| quoted(i)).collect();
        format!("[{}]", quoted.join(", "))
    };
    let mut out = format!(
        "# bankwise settings for {}
",
        input.display()
    );
    out.push_str(&match &config.path {
        Some(path) => format!(
            "# configuration: {}
",
            path.display()
        ),
        None => "# configuration: none (no bankwise.toml up to the repository root)
"
        .into(),
    });
    let analysis = &effective.analysis;
    out.push_str(
        "
[bank]
",
    );
    out.push_str(&format!(
        "banks = {}
",
        analysis.bank.banks
    ));
    out.push_str(&format!(
        "bank_width = {}
",
        analysis.bank.bank_width
    ));
    out.push_str(
        "
[fix]
",
    );
    let strategy = effective.strategy.forced.map_or("auto", |f| f.name());
    out.push_str(&format!(
        "strategy = {}
",
        quoted(strategy)
    ));
    match effective.strategy.smem_budget {
        Some(budget) => out.push_str(&format!(
            "smem_budget = {budget}
"
        )),
        None => out.push_str(
            "# smem_budget: default (each kernel may grow by what keeps its occupancy)
",
        ),
    }
    out.push_str(&format!(
        "max_alu_per_wavefront = {}
",
        effective
            .strategy
            .max_alu_per_wavefront
            .unwrap_or(crate::plan::MAX_ALU_PER_WAVEFRONT)
    ));
    out.push_str(&format!(
        "unsafe_fixes = {}
",
        effective.unsafe_fixes
    ));
    out.push_str(&format!(
        "
defines = {}  # the configuration's, the build's, then -D (the last wins)
",
        list(analysis.defines.clone())
    ));
    let dirs = analysis
        .include_dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    out.push_str(&format!(
        "# include directories (-I and the build's): {}
",
        list(dirs)
    ));
    out.push_str(
        "
[block]
",
    );
    let shape = |s: &[u32; 3]| format!("[{}, {}, {}]", s[0], s[1], s[2]);
    let mut lines = Vec::new();
    let from_file = config
        .path
        .as_ref()
        .map_or(String::new(), |p| p.display().to_string());
    if let Some(all) = analysis.blocks.all {
        lines.push(format!("\"*\" = {}  # --block", shape(&all)));
    } else if let Some(all) = config.blocks.all {
        lines.push(format!("\"*\" = {}  # {from_file}", shape(&all)));
    }
    let mut kernels: Vec<(&String, &[u32; 3], &str)> = analysis
        .blocks
        .per_kernel
        .iter()
        .map(|(k, s)| (k, s, "--block"))
        .collect();
    for (kernel, shape) in &config.blocks.per_kernel {
        if !analysis.blocks.per_kernel.contains_key(kernel) {
            kernels.push((kernel, shape, from_file.as_str()));
        }
    }
    kernels.sort();
    for (kernel, s, source) in kernels {
        lines.push(format!("{} = {}  # {source}", quoted(kernel), shape(s)));
    }
    if lines.is_empty() {
        lines.push("# none: from launches, __launch_bounds__ and comments in the source".into());
    }
    out.push_str(&lines.join("\n"));
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod rewrite_tests;
#[cfg(test)]
mod testdata_tests;

/// The compiled view of an analysed file: each kernel whose block shape is known, run as
/// nvcc compiled `text` for the build's architecture, else `arch` (the analysis's include
/// directories, then the project directories it looks in with no flags, definitions and
/// pre-included files), in the analysis's bank model.
pub fn compiled_view(
    analysed: &AnalysedFile,
    text: &str,
    options: &Options,
    compiler: &crate::compiled::Compiler,
    arch: &str,
) -> Result<crate::compiled::CompiledFile, crate::compiled::CompileError> {
    // The file's own settings (its `bankwise.toml`, the build's flags for it), as its
    // analysis had them; a configuration that cannot be read was reported by the analysis.
    let file_options = for_analysis(&analysed.path, options).map(|(o, _)| o);
    let options = file_options.as_ref().unwrap_or(options);
    let include_dirs = compile_include_dirs(&analysed.path, options);
    let flags = crate::compiled::Flags {
        arch: options.arch.as_deref().unwrap_or(arch),
        include_dirs: &include_dirs,
        defines: &options.defines,
        pre_includes: &options.pre_includes,
    };
    let compiled = compiler.compile(&analysed.path, text, &flags)?;
    Ok(compiled_figures(analysed, &compiled, options))
}

/// The directories nvcc searches for the file at `path`: the analysis's `-I`s, then those it
/// looks in with no flags (the project directories above the file).
pub(crate) fn compile_include_dirs(path: &Path, options: &Options) -> Vec<PathBuf> {
    options
        .include_dirs
        .iter()
        .cloned()
        .chain(parse::project_include_dirs(path))
        .collect()
}

/// The figures of `compiled` for the kernels of `analysed` whose block shape is known.
pub(crate) fn compiled_figures(
    analysed: &AnalysedFile,
    compiled: &crate::compiled::Compiled,
    options: &Options,
) -> crate::compiled::CompiledFile {
    let names: Vec<(String, [u32; 3])> = analysed
        .reported()
        .filter(|r| r.function.kind == parse::FunctionKind::Kernel)
        .filter_map(|r| Some((r.function.display_name(), r.block.as_ref().ok()?.shape)))
        .collect();
    let kernels: Vec<crate::compiled::Kernel> = names
        .iter()
        .map(|(name, block)| crate::compiled::Kernel {
            name,
            block: *block,
            params: &[],
        })
        .collect();
    compiled.figures(&kernels, &options.bank)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Settings, StrategySetting};
    use crate::solve::Family;

    fn parse(text: &str) -> Config {
        Config::parse(text, Path::new("dir/bankwise.toml")).expect("a valid file")
    }

    #[test]
    fn command_line_over_file_over_defaults() {
        let config = parse(
            "defines = [\"TILE=16\", \"ROWS=4\"]\n[bank]\nbanks = 16\nbank_width = 8\n\
             [fix]\nstrategy = \"padding\"\nsmem_budget = 100\nunsafe_fixes = true\n",
        );
        let defaults = FixOptions::default();
        let from_file = fix_options(&config, &defaults, Path::new("k.cu"));
        assert_eq!(from_file.analysis.bank.banks, 16);
        assert_eq!(from_file.analysis.bank.bank_width, 8);
        assert_eq!(from_file.strategy.forced, Some(Family::Padding));
        assert_eq!(from_file.strategy.smem_budget, Some(100));
        assert!(from_file.unsafe_fixes);
        assert_eq!(from_file.analysis.defines, ["TILE=16", "ROWS=4"]);

        let mut command_line = FixOptions::default();
        command_line.analysis.command_line = Settings {
            banks: Some(32),
            bank_width: Some(4),
            strategy: Some(StrategySetting::Auto),
            smem_budget: Some(200),
            max_alu_per_wavefront: Some(5),
            unsafe_fixes: Some(false),
        };
        command_line.analysis.defines = vec!["TILE=32".into()];
        let given = fix_options(&config, &command_line, Path::new("k.cu"));
        assert_eq!(given.analysis.bank.banks, 32);
        assert_eq!(given.analysis.bank.bank_width, 4);
        assert_eq!(given.strategy.forced, None);
        assert_eq!(given.strategy.smem_budget, Some(200));
        assert_eq!(given.strategy.max_alu_per_wavefront, Some(5));
        assert!(!given.unsafe_fixes);
        // The parser lets the last definition of a name win.
        assert_eq!(given.analysis.defines, ["TILE=16", "ROWS=4", "TILE=32"]);

        let none = fix_options(&Config::default(), &defaults, Path::new("k.cu"));
        assert_eq!(none.analysis.bank, defaults.analysis.bank);
        assert_eq!(none.strategy.forced, None);
        assert_eq!(none.strategy.smem_budget, None);
        assert!(!none.unsafe_fixes);
    }

    /// `check` makes the report of a file that no launch elsewhere can change before the
    /// other files are read: [`super::launched_elsewhere`] must then be false.
    #[test]
    fn only_a_file_that_may_be_launched_elsewhere_is_analysed_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("written");
            path
        };
        let body =
            "{\n    __shared__ float s[64];\n    s[threadIdx.x * 2] = 1.0f;\n    o[0] = s[0];\n}\n";
        let shaped = write(
            "shaped.cu",
            &format!("// bankwise: block=32\n__global__ void shaped(float *o)\n{body}"),
        );
        let unshaped = write(
            "unshaped.cu",
            &format!("__global__ void unshaped(float *o)\n{body}"),
        );
        let extern_unsized = write(
            "unsized.cu",
            "// bankwise: block=32\n__global__ void unsized(float *o)\n{\n    extern __shared__ \
             float s[];\n    s[threadIdx.x] = 1.0f;\n    o[0] = s[0];\n}\n",
        );
        let host = write(
            "host.cu",
            "__global__ void shaped(float *o);\n__global__ void unshaped(float *o);\n\
             __global__ void unsized(float *o);\nvoid run(float *o)\n{\n    \
             shaped<<<1, 64>>>(o);\n    unshaped<<<1, 64>>>(o);\n    unsized<<<1, 32, \
             256>>>(o);\n}\n",
        );
        let options = Options::default();
        let files: Vec<_> = [&shaped, &unshaped, &extern_unsized, &host]
            .into_iter()
            .map(|path| super::analyse_file(path, &options).expect("analysed"))
            .collect();
        let launches = super::project_launches(&files);
        let may: Vec<bool> = files.iter().map(super::may_be_launched_elsewhere).collect();
        let again: Vec<bool> = files
            .iter()
            .map(|file| super::launched_elsewhere(file, &launches))
            .collect();
        assert_eq!(may[..3], [false, true, true]);
        assert_eq!(again[..3], [false, true, true]);
        assert!(again.iter().zip(&may).all(|(again, may)| !again || *may));
    }
}
