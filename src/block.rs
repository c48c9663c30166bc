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
    /// `__launch_bounds__(N)` as the thread count of a launch whose dimensions are partly
    /// known or written alike (`dim3(t, t)` with `__launch_bounds__(256)` is 16x16): how.
    LaunchBoundsShaped(String),
    Callers(Vec<String>),
    /// No launch, bound or hint: a shape the code suggests. Findings under it are reported,
    /// and fixes resting on it are unsafe.
    Assumed(Assumed),
}

/// Why a block shape was assumed, and what suggested the one taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumed {
    /// Why no shape is known: `no launch, __launch_bounds__ or hint seen`, or the launch's
    /// value that did not evaluate.
    pub unknown_because: String,
    /// What suggested the shape: `one warp of 32-thread rows`.
    pub basis: String,
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
            BlockSource::LaunchBoundsShaped(how) => {
                write!(f, "__launch_bounds__ (upper bound), {how}")
            }
            BlockSource::Callers(names) => write!(f, "called from {}", names.join(", ")),
            BlockSource::Assumed(assumed) => write!(f, "assumed: {}", assumed.basis),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub shape: [u32; 3],
    pub source: BlockSource,
}

impl Block {
    /// Whether the shape was assumed rather than read from the code or the user.
    pub fn is_assumed(&self) -> bool {
        matches!(self.source, BlockSource::Assumed(_))
    }
}

/// The outcome for one function: a shape, or the reason there is none.
pub type Resolution = Result<Block, NoBlock>;

/// Why a function has no block shape, not even an assumed one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NoBlock {
    /// A device function whose callers run with different shapes.
    CallersDisagree { function: String },
    /// A device function nothing calls with a shape, and no flag gives one.
    UnknownForDeviceFunction { display: String, name: String },
    /// A kernel that other files launch with different shapes.
    LaunchesDisagree {
        name: String,
        first: (PathBuf, usize, [u32; 3]),
        other: (PathBuf, usize, [u32; 3]),
    },
}

impl fmt::Display for NoBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoBlock::CallersDisagree { function } => write!(
                f,
                "callers of `{function}` run with different block shapes; pass --block \
                 {function}=XxYxZ"
            ),
            NoBlock::UnknownForDeviceFunction { display, name } => write!(
                f,
                "block shape unknown for device function `{display}`; pass --block {name}=XxYxZ"
            ),
            NoBlock::LaunchesDisagree { name, first, other } => write!(
                f,
                "`{name}` is launched with block {} at {}:{} and {} at {}:{}; pass --block \
                 {name}=XxYxZ to choose",
                format_shape(first.2),
                first.0.display(),
                first.1,
                format_shape(other.2),
                other.0.display(),
                other.1,
            ),
        }
    }
}

/// A launch with a known block shape, in one of the files a command was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchElsewhere {
    pub path: PathBuf,
    pub at: Location,
    /// The template arguments as launched (`k<128, 8>`), evaluated there; empty for a
    /// kernel that is not a template.
    pub template_args: Vec<String>,
    pub shape: [u32; 3],
    /// The dynamic shared memory it passes, in bytes, when that evaluates.
    pub shared_bytes: Option<u64>,
    /// The headers the launching file includes (links resolved).
    pub includes: std::sync::Arc<[PathBuf]>,
}

impl LaunchElsewhere {
    /// Whether this launch may be of the kernel defined in the file at `kernel_file`: the
    /// launching file includes it, or lies in the same directory (a kernel declared there
    /// and defined beside it). A kernel of the same name in another directory belongs to
    /// another program, whose launch says nothing about this one.
    pub fn reaches(&self, kernel_file: &Path) -> bool {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let kernel = canonical(kernel_file);
        let launcher = canonical(&self.path);
        launcher.parent() == kernel.parent() || self.includes.contains(&kernel)
    }
}

/// The launches of non-template kernels in the files of one run, by kernel name: a kernel
/// defined in one file and launched from another gets its block shape from there.
pub type ProjectLaunches = HashMap<String, Vec<LaunchElsewhere>>;

/// The launches of `launches` (those of the file at `path`) that other files can use.
pub fn add_project_launches(
    launches: &mut ProjectLaunches,
    path: &Path,
    sites: &[LaunchSite],
    headers: &[PathBuf],
) {
    let includes: std::sync::Arc<[PathBuf]> = headers.into();
    // A launch of a template this file does not define has no instance here: it is for the
    // file that defines the template (a header), where it makes one.
    let own = sites.iter().filter(|s| s.elsewhere.is_none());
    for site in own.filter(|s| s.instance.is_none()) {
        if let Ok(shape) = site.block {
            launches
                .entry(site.kernel.clone())
                .or_default()
                .push(LaunchElsewhere {
                    path: path.to_path_buf(),
                    at: site.at,
                    template_args: site.template_args.clone(),
                    shape,
                    shared_bytes: site.shared_bytes,
                    includes: includes.clone(),
                });
        }
    }
}

/// The launches of other files than `path` with template arguments, as launch sites of the
/// file at `path`: a template it defines gets an instance for each (the analysis of a
/// header's `template <int BM> __global__ void k` with `k<128><<<…>>>` in the runner).
pub fn template_launches_for(launches: &ProjectLaunches, path: &Path) -> Vec<LaunchSite> {
    let mut sites: Vec<LaunchSite> = launches
        .iter()
        .flat_map(|(kernel, elsewhere)| {
            elsewhere
                .iter()
                // A template's launch makes an instance; another's is wanted for the dynamic
                // shared memory it passes (the extent of the kernel's `extern` array).
                .filter(|l| {
                    l.path != path
                        && (!l.template_args.is_empty() || l.shared_bytes.is_some_and(|b| b > 0))
                        && l.reaches(path)
                })
                .map(|l| LaunchSite {
                    kernel: kernel.clone(),
                    template_args: l.template_args.clone(),
                    instance: None,
                    at: l.at,
                    block: Ok(l.shape),
                    known_dims: None,
                    square: false,
                    from_callers: None,
                    bounded: None,
                    shared_bytes: l.shared_bytes.filter(|_| l.template_args.is_empty()),
                    elsewhere: Some(l.path.clone()),
                })
        })
        .collect();
    // The map's order is not the run's: sorted, the analysis does not depend on it.
    sites.sort_by(|a, b| (&a.kernel, &a.elsewhere, a.at).cmp(&(&b.kernel, &b.elsewhere, b.at)));
    sites
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
            let names: Vec<String> = callers.iter().map(|(n, _)| n.clone()).collect();
            let assumed = callers_of
                .get(function.name.as_str())
                .into_iter()
                .flatten()
                .any(|&c| resolved[c].as_ref().is_ok_and(Block::is_assumed));
            let inherited = if callers.iter().all(|(_, s)| s == shape) {
                Ok(Block {
                    shape: *shape,
                    source: if assumed {
                        BlockSource::Assumed(Assumed {
                            unknown_because: "its callers' shape is assumed".to_string(),
                            basis: format!("that of its callers {}", names.join(", ")),
                        })
                    } else {
                        BlockSource::Callers(names)
                    },
                })
            } else {
                Err(NoBlock::CallersDisagree {
                    function: function.name.clone(),
                })
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
            source: match &first.elsewhere {
                Some(path) => BlockSource::LaunchElsewhere(path.clone(), first.at),
                None => BlockSource::LaunchSite(first.at),
            },
        });
    }
    if let Some(found) = elsewhere.block_of(function) {
        return found;
    }
    // The dimensions the launches give where they agree, and whether they write x and y
    // alike: with a bound's threads, or else an assumed count, they shape the block.
    let partial: Vec<[Option<u32>; 3]> = sites.iter().filter_map(|l| l.known_dims).collect();
    let square =
        sites.iter().any(|l| l.square) && sites.iter().all(|l| l.square || l.known_dims.is_none());
    if let Some(threads) = function.launch_bounds {
        // The launch's shape with the bound's threads: `dim3(t, t)` is square, not 1-D.
        let shaped = match partial.first() {
            Some(dims) if partial.iter().all(|d| d == dims) => {
                with_known_dims(*dims, square, threads)
            }
            _ => None,
        };
        if let Some((shape, _)) = shaped {
            let how = if square && partial[0][0].is_none() {
                "square as the launch writes it".to_string()
            } else {
                "the launch's dimensions as far as they are known".to_string()
            };
            return Ok(Block {
                shape,
                source: BlockSource::LaunchBoundsShaped(how),
            });
        }
        if let Ok(shape) = parse_block_shape(&threads.to_string()) {
            return Ok(Block {
                shape,
                source: BlockSource::LaunchBounds,
            });
        }
    }
    if function.kind == FunctionKind::Device {
        return Err(NoBlock::UnknownForDeviceFunction {
            display: display.to_string(),
            name: name.to_string(),
        });
    }
    let unknown_because = sites
        .iter()
        .find_map(|l| l.block.as_ref().err())
        .cloned()
        .unwrap_or_else(|| "no launch, __launch_bounds__ or hint seen".to_string());
    // Silence helps no one: analyse under the shape the code suggests, and say so (the
    // analysis may narrow it: see `analysis`).
    let bounded: Vec<&([u32; 3], String)> =
        sites.iter().filter_map(|l| l.bounded.as_ref()).collect();
    let from_callers: Vec<&([u32; 3], String)> = sites
        .iter()
        .filter_map(|l| l.from_callers.as_ref())
        .collect();
    let (shape, basis) = match (bounded.first(), partial.first()) {
        _ if !from_callers.is_empty()
            && from_callers.len() == sites.len()
            && from_callers.iter().all(|(s, _)| *s == from_callers[0].0) =>
        {
            let (shape, values) = from_callers[0];
            Some((
                *shape,
                format!("what every call of its launching function in this file passes: {values}"),
            ))
        }
        // The worst case the code allows: the most the host function can return.
        (Some((shape, by)), _) if bounded.iter().all(|(s, _)| s == shape) => Some((
            *shape,
            format!("the most `{by}` returns, whatever its run-time arguments"),
        )),
        (_, Some(dims)) if partial.iter().all(|d| d == dims) => {
            with_known_dims(*dims, square, ASSUMED_THREADS)
        }
        _ => None,
    }
    .unwrap_or_else(|| assumed_shape(function));
    Ok(Block {
        shape,
        source: BlockSource::Assumed(Assumed {
            unknown_because,
            basis,
        }),
    })
}

impl Block {
    /// The warning for a kernel analysed under an assumed shape; `None` for a known one.
    pub fn assumption_warning(&self, function: &Function) -> Option<String> {
        let BlockSource::Assumed(assumed) = &self.source else {
            return None;
        };
        Some(format!(
            "block shape unknown for kernel `{}` ({}); analysed as {} ({}); findings assume it \
             and fixes resting on it are unsafe: pass --block {}=XxYxZ",
            function.display_name(),
            assumed.unknown_because,
            format_shape(self.shape),
            assumed.basis,
            function.name
        ))
    }
}

/// A block shape for a kernel whose launches say nothing, from what its code suggests, and
/// why that one:
/// - one dimension (`threadIdx.x` only): as many threads as a one-dimensional shared array
///   indexed by `threadIdx.x` has elements (`s[threadIdx.x]` on `float s[128]`), else 256;
/// - more: one warp whose rows are as wide as the narrowest shared tile's rows (rounded down
///   to a power of two: `[16 + 2][16 + 2]` gives 16x2, `[32][33]` 32x1). One warp keeps a
///   loop over `threadIdx.y + j` inside the tile whatever its real height.
pub fn assumed_shape(function: &Function) -> ([u32; 3], String) {
    if let Some(shape) = function.assumed_before {
        return (
            shape,
            "as the fix that rewrote it assumed, by its BANKWISE_CHECKS guard".to_string(),
        );
    }
    let [_, uses_y, uses_z] = function.thread_axes;
    if !uses_y && !uses_z {
        for array in &function.arrays {
            let [Some(elements)] = array.dims[..] else {
                continue;
            };
            let by_thread = array.accesses.iter().any(|access| {
                matches!(access.indices.unpack().as_slice(), [index] if is_thread_x(index))
            });
            if by_thread && (32..=1024).contains(&elements) && !array.is_extern {
                return (
                    [elements as u32, 1, 1],
                    format!("`{}[threadIdx.x]` on its {elements} elements", array.name),
                );
            }
        }
        return (
            [ASSUMED_THREADS, 1, 1],
            "one dimension, a common size".to_string(),
        );
    }
    let narrowest = function
        .arrays
        .iter()
        .filter(|a| a.dims.len() >= 2)
        .filter_map(|a| Some((a.dims.last().copied().flatten()?, a)))
        .filter(|(row, _)| *row >= 2)
        .min_by_key(|(row, _)| *row);
    match narrowest {
        Some((row, array)) if row < 32 => {
            let width = 1u32 << (63 - row.leading_zeros());
            (
                [width, 32 / width, 1],
                format!(
                    "one warp of rows as wide as `{}`'s {row} columns allow",
                    array.name
                ),
            )
        }
        _ => ([32, 1, 1], "one warp of 32-thread rows".to_string()),
    }
}

/// Threads in a block whose size is known only at run time: a common size.
const ASSUMED_THREADS: u32 = 256;

/// A shape for launches of two or three dimensions of which some are known only at run time
/// (`dim3(32, rows)`): those that evaluate are kept, and the others make
/// [`ASSUMED_THREADS`] threads in all, an unknown x a warp's 32 when y is unknown too (an
/// unknown z is 1), or x = y when the launch writes them alike (`square`: `dim3(t, t)` is
/// 16x16). `None` when that is no valid shape.
fn with_known_dims(
    dims: [Option<u32>; 3],
    square: bool,
    threads: u32,
) -> Option<([u32; 3], String)> {
    // `dim3(threads, 1, 1)` says no more than `threads`: the one-dimensional hints decide.
    if dims == [None, Some(1), Some(1)] {
        return None;
    }
    let z = dims[2].unwrap_or(1);
    let rest = |known: u32| (threads / known.saturating_mul(z).max(1)).max(1);
    let (x, y) = match (dims[0], dims[1]) {
        (Some(x), Some(y)) => (x, y),
        (Some(x), None) => (x, rest(x)),
        (None, Some(y)) => (rest(y), y),
        // The widest power-of-two side within the threads: 16 for 256 or 512, 32 for 1024.
        (None, None) if square => {
            let side = (0..16)
                .map(|k| 1u32 << k)
                .take_while(|&s| u64::from(s) * u64::from(s) * u64::from(z) <= u64::from(threads))
                .last()
                .unwrap_or(1);
            (side, side)
        }
        (None, None) => (32, rest(32)),
    };
    let shape = [x, y, z];
    crate::parse::check_block_shape(shape, "").ok()?;
    let basis = if square && dims[0].is_none() {
        format!(
            "its x and y are one value as the launch writes them, square, making \
             {ASSUMED_THREADS} threads in all, a common size"
        )
    } else {
        format!(
            "the launch's dimensions as far as they are known, the others making \
             {ASSUMED_THREADS} threads in all, a common size"
        )
    };
    Some((shape, basis))
}

/// `threadIdx.x` as written.
fn is_thread_x(index: &crate::parse::Expr) -> bool {
    matches!(&index.kind, crate::parse::ExprKind::Member { base, field, .. }
        if field == "x" && matches!(&base.kind, crate::parse::ExprKind::Name(n) if n == "threadIdx"))
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
            .filter(|l| l.path != self.path && l.template_args.is_empty() && l.reaches(self.path))
            .collect();
        let first = others.first()?;
        if let Some(other) = others.iter().find(|l| l.shape != first.shape) {
            return Some(Err(NoBlock::LaunchesDisagree {
                name: name.to_string(),
                first: (first.path.clone(), first.at.line, first.shape),
                other: (other.path.clone(), other.at.line, other.shape),
            }));
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
    fn shapes_assumed_from_the_code() {
        let file = crate::parse::analyse_source(
            "__global__ void sized(float *o) { __shared__ float s[128]; s[threadIdx.x] = 0; o[0] = s[1]; }
__global__ void plain(float *o) { __shared__ float s[1024]; s[2 * threadIdx.x] = 0; }
__global__ void tile(float *o) { __shared__ float t[16 + 2][16 + 2]; t[threadIdx.y][threadIdx.x] = 0; }
__global__ void padded(float *o) { __shared__ float t[32][33]; t[threadIdx.y][threadIdx.x] = 0; }",
            &[],
        );
        let shapes: Vec<[u32; 3]> = file.functions.iter().map(|f| assumed_shape(f).0).collect();
        assert_eq!(shapes, [[128, 1, 1], [256, 1, 1], [16, 2, 1], [32, 1, 1]]);
    }

    /// `dim3(t, t)` with `t` unknown is square: 16x16 for 256 threads, not 32x8; `dim3(t, u)`
    /// keeps a warp's 32 in x (issue 36, item 3).
    #[test]
    fn a_block_written_square_is_assumed_square() {
        let file = crate::parse::analyse_source(
            "__global__ void sq(float *o) { __shared__ float t[16][16]; t[threadIdx.x][threadIdx.y] = 0; }
__global__ void rect(float *o) { __shared__ float t[16][16]; t[threadIdx.x][threadIdx.y] = 0; }
void run(float *o, int t, int u) {
  dim3 block(t, t);
  sq<<<1, block>>>(o);
  rect<<<1, dim3(t, u)>>>(o);
}",
            &[],
        );
        let shapes: Vec<[u32; 3]> = file
            .functions
            .iter()
            .map(|f| {
                let sites: Vec<&LaunchSite> = file
                    .launches
                    .iter()
                    .filter(|l| l.kernel == f.name)
                    .collect();
                let partial = sites[0].known_dims.expect("partly known");
                with_known_dims(partial, sites[0].square, ASSUMED_THREADS)
                    .expect("a shape")
                    .0
            })
            .collect();
        assert_eq!(shapes, [[16, 16, 1], [32, 8, 1]]);
        // A bound of 2^32 - 1 threads and a depth of 64 square no launchable block, and the
        // search for the side does not overflow.
        assert_eq!(
            with_known_dims([None, None, Some(64)], true, u32::MAX),
            None
        );
    }

    #[test]
    fn command_line_values() {
        let blocks = CommandLineBlocks::parse(&["32x8".into(), "transpose=16x16".into()]).unwrap();
        assert_eq!(blocks.all, Some([32, 8, 1]));
        assert_eq!(blocks.per_kernel["transpose"], [16, 16, 1]);
        assert!(CommandLineBlocks::parse(&["k=2000".into()]).is_err());
    }
}
