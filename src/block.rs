//! Block shapes (docs/ARCHITECTURE.md §2): which `blockDim` each kernel runs with.
//!
//! Sources, strongest first: `--block K=XxY` then `--block XxY` on the command line, the
//! nearest `bankwise.toml` (read by the settings stage), a `// bankwise: block=XxY` comment above the
//! kernel, the launch sites in the same file, `__launch_bounds__(N)` (an upper bound, taken as 1-D).
//! A device function inherits the shape its calling kernels agree on.
use crate::parse::{parse_block_shape, Function, FunctionKind, LaunchSite, Location};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Block shapes given with `--block`.
#[derive(Debug, Default, Clone)]
pub struct CommandLineBlocks {
    pub all: Option<[u32; 3]>,
    pub per_kernel: HashMap<String, [u32; 3]>,
}

impl CommandLineBlocks {
    /// Parses `--block` values: `32x8` (every kernel) or `name=32x8` (one kernel).
    pub fn parse(values: &[String]) -> Result<Self, String> {
        let mut blocks = CommandLineBlocks::default();
        for value in values {
            match value.split_once('=') {
                Some((kernel, shape)) => {
                    let shape =
                        parse_block_shape(shape).map_err(|e| format!("--block {value}: {e}"))?;
                    blocks.per_kernel.insert(kernel.trim().to_string(), shape);
                }
                None => {
                    blocks.all = Some(
                        parse_block_shape(value).map_err(|e| format!("--block {value}: {e}"))?,
                    )
                }
            }
        }
        Ok(blocks)
    }
}

/// Block shapes from a `bankwise.toml`: `[block]` maps kernel names
/// (or `"*"`) to `[x, y, z]` or `"XxYxZ"`.
#[derive(Debug, Default, Clone)]
pub struct ConfigBlocks {
    pub path: Option<PathBuf>,
    pub all: Option<[u32; 3]>,
    pub per_kernel: HashMap<String, [u32; 3]>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSource {
    CommandLine,
    Config(PathBuf),
    Annotation,
    LaunchSite(Location),
    /// A launch in another file of the same run (`bankwise check DIR`).
    LaunchElsewhere(PathBuf, Location),
    LaunchBounds,
    Callers(Vec<String>),
}

impl fmt::Display for BlockSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockSource::CommandLine => write!(f, "--block"),
            BlockSource::Config(path) => write!(f, "{}", path.display()),
            BlockSource::Annotation => write!(f, "bankwise annotation"),
            BlockSource::LaunchSite(at) => write!(f, "launch at line {}", at.line),
            BlockSource::LaunchElsewhere(path, at) => {
                write!(f, "launch at {}:{}", path.display(), at.line)
            }
            BlockSource::LaunchBounds => write!(f, "__launch_bounds__ (upper bound)"),
            BlockSource::Callers(names) => write!(f, "called from {}", names.join(", ")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub shape: [u32; 3],
    pub source: BlockSource,
}

/// The outcome for one function: a shape, or the reason there is none.
pub type Resolution = Result<Block, String>;

/// A launch with a known block shape, in one of the files a command was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchElsewhere {
    pub path: PathBuf,
    pub at: Location,
    pub shape: [u32; 3],
}

/// The launches of non-template kernels in the files of one run, by kernel name: a kernel
/// defined in one file and launched from another gets its block shape from there.
pub type ProjectLaunches = HashMap<String, Vec<LaunchElsewhere>>;

/// The launches of `launches` (those of the file at `path`) that other files can use.
pub fn add_project_launches(launches: &mut ProjectLaunches, path: &Path, sites: &[LaunchSite]) {
    for site in sites.iter().filter(|s| s.instance.is_none()) {
        if let Ok(shape) = site.block {
            launches
                .entry(site.kernel.clone())
                .or_default()
                .push(LaunchElsewhere {
                    path: path.to_path_buf(),
                    at: site.at,
                    shape,
                });
        }
    }
}

/// Resolves the block shape of every function of a file (same order as `functions`).
/// Also returns warnings about launch sites that disagree.
pub fn resolve_all(
    functions: &[Function],
    launches: &[LaunchSite],
    elsewhere: &Elsewhere,
    cli: &CommandLineBlocks,
    config: &ConfigBlocks,
) -> (Vec<Resolution>, Vec<(Location, String)>) {
    let mut warnings = Vec::new();
    // Indexed once: a generated file has thousands of kernels and launches.
    let mut launches_of: HashMap<&str, Vec<&LaunchSite>> = HashMap::new();
    for launch in launches {
        launches_of.entry(&launch.kernel).or_default().push(launch);
    }
    let mut resolved: Vec<Resolution> = functions
        .iter()
        .map(|f| {
            let launches = launches_of
                .get(f.name.as_str())
                .map_or(&[][..], Vec::as_slice);
            resolve_direct(f, launches, elsewhere, cli, config, &mut warnings)
        })
        .collect();
    let mut callers_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, caller) in functions.iter().enumerate() {
        for callee in &caller.callees {
            let callers = callers_of.entry(callee.as_str()).or_default();
            if callers.last() != Some(&i) {
                callers.push(i);
            }
        }
    }
    // Device functions inherit from their callers, through any depth of calls.
    let mut changed = true;
    while changed {
        changed = false;
        for (i, function) in functions.iter().enumerate() {
            if function.kind != FunctionKind::Device || resolved[i].is_ok() {
                continue;
            }
            let callers: Vec<(String, [u32; 3])> = callers_of
                .get(function.name.as_str())
                .into_iter()
                .flatten()
                .filter_map(|&c| {
                    resolved[c]
                        .as_ref()
                        .ok()
                        .map(|b| (functions[c].display_name(), b.shape))
                })
                .collect();
            let Some((_, shape)) = callers.first() else {
                continue;
            };
            let inherited = if callers.iter().all(|(_, s)| s == shape) {
                Ok(Block {
                    shape: *shape,
                    source: BlockSource::Callers(callers.iter().map(|(n, _)| n.clone()).collect()),
                })
            } else {
                Err(format!(
                    "callers of `{}` run with different block shapes; pass --block {}=XxYxZ",
                    function.name, function.name
                ))
            };
            if resolved[i] != inherited {
                resolved[i] = inherited;
                changed = true;
            }
        }
    }
    (resolved, warnings)
}

/// The block shape of `function` from the command line, the configuration, an annotation,
/// its own `launches` (those that name it) or `__launch_bounds__`.
fn resolve_direct(
    function: &Function,
    launches: &[&LaunchSite],
    elsewhere: &Elsewhere,
    cli: &CommandLineBlocks,
    config: &ConfigBlocks,
    warnings: &mut Vec<(Location, String)>,
) -> Resolution {
    let name = &function.name;
    let display = function.display_name();
    let explicit = [
        (cli.per_kernel.get(&display), BlockSource::CommandLine),
        (cli.per_kernel.get(name), BlockSource::CommandLine),
        (cli.all.as_ref(), BlockSource::CommandLine),
    ];
    let configured = config.path.clone().map(BlockSource::Config);
    let from_config = [
        config.per_kernel.get(&display),
        config.per_kernel.get(name),
        config.all.as_ref(),
    ];
    for (shape, source) in explicit {
        if let Some(shape) = shape {
            return Ok(Block {
                shape: *shape,
                source,
            });
        }
    }
    if let (Some(shape), Some(source)) = (from_config.into_iter().flatten().next(), configured) {
        return Ok(Block {
            shape: *shape,
            source,
        });
    }
    if let Some(shape) = function.annotated_block {
        return Ok(Block {
            shape,
            source: BlockSource::Annotation,
        });
    }
    let sites: Vec<&LaunchSite> = launches
        .iter()
        .copied()
        .filter(|l| l.instance.as_ref().is_none_or(|i| *i == display))
        .collect();
    let known: Vec<(&LaunchSite, [u32; 3])> = sites
        .iter()
        .filter_map(|l| l.block.as_ref().ok().map(|b| (*l, *b)))
        .collect();
    if let Some((first, shape)) = known.first() {
        if let Some((other, other_shape)) = known.iter().find(|(_, s)| s != shape) {
            warnings.push((
                other.at,
                format!(
                    "`{display}` is launched with block {} here and {} at line {}; analysing {}; pass --block {name}=XxYxZ to choose",
                    format_shape(*other_shape),
                    format_shape(*shape),
                    first.at.line,
                    format_shape(*shape),
                ),
            ));
        }
        return Ok(Block {
            shape: *shape,
            source: BlockSource::LaunchSite(first.at),
        });
    }
    if let Some(found) = elsewhere.block_of(function) {
        return found;
    }
    if let Some(threads) = function.launch_bounds {
        if let Ok(shape) = parse_block_shape(&threads.to_string()) {
            return Ok(Block {
                shape,
                source: BlockSource::LaunchBounds,
            });
        }
    }
    if function.kind == FunctionKind::Device {
        return Err(format!(
            "block shape unknown for device function `{display}`; pass --block {name}=XxYxZ"
        ));
    }
    let why = sites
        .iter()
        .find_map(|l| l.block.as_ref().err())
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    Err(format!(
        "block shape unknown for kernel `{display}`{why}; pass --block {name}=XxYxZ"
    ))
}

/// The launches of other files that a file may use: all of a run's but its own.
pub struct Elsewhere<'a> {
    pub launches: &'a ProjectLaunches,
    /// The file being analysed, whose own launches are read from its text.
    pub path: &'a Path,
}

impl Elsewhere<'_> {
    /// The block shape of `function` from the launches in other files, when there are any
    /// (templates are not followed there): an error when they disagree.
    pub fn block_of(&self, function: &Function) -> Option<Resolution> {
        if !function.template_args.is_empty() {
            return None;
        }
        let name = &function.name;
        let others: Vec<&LaunchElsewhere> = self
            .launches
            .get(name)?
            .iter()
            .filter(|l| l.path != self.path)
            .collect();
        let first = others.first()?;
        if let Some(other) = others.iter().find(|l| l.shape != first.shape) {
            return Some(Err(format!(
                "`{name}` is launched with block {} at {}:{} and {} at {}:{}; pass --block \
                 {name}=XxYxZ to choose",
                format_shape(first.shape),
                first.path.display(),
                first.at.line,
                format_shape(other.shape),
                other.path.display(),
                other.at.line,
            )));
        }
        Some(Ok(Block {
            shape: first.shape,
            source: BlockSource::LaunchElsewhere(first.path.clone(), first.at),
        }))
    }
}

pub fn format_shape(shape: [u32; 3]) -> String {
    format!("{}x{}x{}", shape[0], shape[1], shape[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values() {
        let blocks = CommandLineBlocks::parse(&["32x8".into(), "transpose=16x16".into()]).unwrap();
        assert_eq!(blocks.all, Some([32, 8, 1]));
        assert_eq!(blocks.per_kernel["transpose"], [16, 16, 1]);
        assert!(CommandLineBlocks::parse(&["k=2000".into()]).is_err());
    }
}
