//! The files a command runs on. Named files are read as given (when they are C, C++ or CUDA,
//! or with `-x cu`); directories are walked as git sees them, with the `ignore` crate
//! (ripgrep's walker): `.gitignore`, `.ignore` and git's excludes are honoured, hidden
//! entries and build folders skipped, and `--exclude` globs added, as ruff and ripgrep do.
use super::RunArgs;
use ignore::overrides::{Override, OverrideBuilder};
use ignore::WalkBuilder;
use std::path::{Path, PathBuf};

/// Directories a walk skips unless `--no-ignore`: the build trees of CMake, Meson and
/// Bazel-like layouts and package folders, whose generated or vendored code is not the
/// project's (ruff skips `build` and `node_modules` alike).
const DEFAULT_EXCLUDES: [&str; 6] = [
    "build/",
    "_build/",
    "cmake-build-*/",
    "CMakeFiles/",
    "_deps/",
    "node_modules/",
];

/// Expands directories into the `.cu`/`.cuh` files under them, sorted per directory, and
/// keeps the named files that bankwise reads; reports paths that do not exist and
/// directories without CUDA files (`failed`).
pub(super) fn collect_sources(paths: &[PathBuf], run: &RunArgs, failed: &mut bool) -> Vec<PathBuf> {
    let mut sources = Vec::new();
    for path in paths {
        if path.is_dir() {
            match walk(path, run) {
                Ok(found) if found.is_empty() => {
                    bankwise::say!(
                        "bankwise: error: {}: no .cu or .cuh files in this directory (after \
                         .gitignore and excludes)",
                        path.display()
                    );
                    *failed = true;
                }
                Ok(found) => sources.extend(found),
                Err(message) => {
                    bankwise::say!("bankwise: error: {message}");
                    *failed = true;
                }
            }
        } else if !path.exists() {
            bankwise::say!("bankwise: error: {}: no such file", path.display());
            *failed = true;
        } else if run.language.is_some() || bankwise::parse::is_c_family(path) {
            sources.push(path.clone());
        } else {
            bankwise::say!(
                "bankwise: warning: {}: not a C, C++ or CUDA source; skipped (-x cu reads it \
                 as CUDA)",
                path.display()
            );
        }
    }
    sources
}

/// A source read from stdin: the name it goes by, and its text.
pub(super) type StdinSource = (PathBuf, String);

/// The sources a run reads: the source on stdin when the input is `-` (then its name is the
/// only source), else the files [`collect_sources`] finds; `Err` for stdin that cannot be
/// read or `-` among other inputs.
pub(super) fn gather(
    files: &[PathBuf],
    run: &RunArgs,
    limit: u64,
    failed: &mut bool,
) -> Result<(Vec<PathBuf>, Option<StdinSource>), String> {
    match stdin_source(files, run, limit) {
        Some(Ok((name, text))) => Ok((vec![name.clone()], Some((name, text)))),
        Some(Err(message)) => Err(message),
        None => Ok((collect_sources(files, run, failed), None)),
    }
}

/// The source on stdin when the only input is `-` (an editor's buffer): its name
/// (`--stdin-filename`, else `<stdin>`) and its text; `None` when the inputs are files.
fn stdin_source(
    files: &[PathBuf],
    run: &RunArgs,
    limit: u64,
) -> Option<Result<StdinSource, String>> {
    let dash = |p: &PathBuf| p.as_os_str() == "-";
    if !files.iter().any(dash) {
        return None;
    }
    if files.len() > 1 {
        return Some(Err("`-` (stdin) must be the only input".into()));
    }
    let name = run
        .stdin_filename
        .clone()
        .unwrap_or_else(|| PathBuf::from("<stdin>"));
    let shown = name.display().to_string();
    Some(
        bankwise::parse::read_source_from(std::io::stdin().lock(), &shown, limit)
            .map(|text| (name, text))
            .map_err(|err| err.to_string()),
    )
}

/// The CUDA files under `dir`, sorted.
fn walk(dir: &Path, run: &RunArgs) -> Result<Vec<PathBuf>, String> {
    let overrides = excludes(dir, run)?;
    let mut found = Vec::new();
    let walker = WalkBuilder::new(dir)
        .standard_filters(!run.no_ignore)
        // A tarball or a copy outside git keeps its .gitignore meaning.
        .require_git(false)
        // A symlinked directory could loop; a symlinked file is read through its link.
        .follow_links(false)
        .overrides(overrides)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                bankwise::say!("bankwise: warning: {err}; skipped");
                continue;
            }
        };
        let path = entry.path();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir || !bankwise::parse::is_cuda(path) {
            continue;
        }
        // A FIFO or a device would block the read or stream forever.
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => found.push(path.to_path_buf()),
            Ok(metadata) => bankwise::say!(
                "bankwise: warning: {}: {}, not a regular file; skipped",
                path.display(),
                bankwise::parse::file_kind(&metadata)
            ),
            Err(err) => bankwise::say!("bankwise: warning: {}: {err}; skipped", path.display()),
        }
    }
    found.sort();
    Ok(found)
}

/// The default excludes (unless `--no-ignore`) and `--exclude`'s globs, as ignore globs
/// rooted at `dir`.
fn excludes(dir: &Path, run: &RunArgs) -> Result<Override, String> {
    let mut builder = OverrideBuilder::new(dir);
    let defaults = if run.no_ignore {
        &[][..]
    } else {
        &DEFAULT_EXCLUDES[..]
    };
    for glob in defaults
        .iter()
        .copied()
        .chain(run.exclude.iter().map(String::as_str))
    {
        builder
            .add(&format!("!{glob}"))
            .map_err(|err| format!("--exclude {glob}: {err}"))?;
    }
    builder.build().map_err(|err| err.to_string())
}

/// The paths a command was given, as the roots its writes must stay under: a walked file
/// that is a symlink to somewhere else (`tree/vendor.cu -> ../outside/vendor.cu`) is not
/// written, as black and ruff leave links that lead out of the tree alone. A path named
/// itself, a link or not, is the user's choice and always written.
pub(super) struct Roots {
    named: Vec<PathBuf>,
    /// The named paths with every link resolved: a directory's, and a file's own.
    canonical: Vec<PathBuf>,
}

impl Roots {
    pub(super) fn new(named: &[PathBuf]) -> Roots {
        Roots {
            named: named.to_vec(),
            canonical: named
                .iter()
                .filter_map(|path| std::fs::canonicalize(path).ok())
                .collect(),
        }
    }

    /// Why `path` must not be written: it was found in a directory, it is a symlink, and what
    /// it leads to lies under none of the roots. `None` when it may be written.
    pub(super) fn escape(&self, path: &Path) -> Option<String> {
        if self.named.iter().any(|named| named == path) {
            return None;
        }
        let link = std::fs::symlink_metadata(path).ok()?;
        if !link.file_type().is_symlink() {
            return None;
        }
        let text = std::fs::read_link(path)
            .map_or_else(|_| "?".to_string(), |to| to.display().to_string());
        match std::fs::canonicalize(path) {
            Ok(to) if self.canonical.iter().any(|root| to.starts_with(root)) => None,
            // A dangling link is refused where the write is.
            Err(_) => None,
            Ok(_) => Some(format!("a symlink to {text}, outside the paths given")),
        }
    }
}
