//! One file through the pipeline stages that exist so far: read → parse → block shapes.
use crate::affine::{self, FunctionAffine};
use crate::bank::BankConfig;
use crate::block::{self, CommandLineBlocks, ConfigBlocks, Elsewhere, ProjectLaunches, Resolution};
use crate::cost::{self, SiteCost};
use crate::parallel;
use crate::parse::{
    self, Access, AccessDetail, CallSite, ConstEnv, Diagnostic, Escape, EscapeKind, Function,
    FunctionKind, LineIndex, Location, Packed, ParsedFile, Severity, SharedArray, SourceError,
    Span,
};
use crate::settings::{ConfigError, Settings};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the user asked for, shared by every file.
#[derive(Debug, Clone)]
pub struct Options {
    pub defines: Vec<String>,
    pub blocks: CommandLineBlocks,
    pub max_file_bytes: u64,
    pub bank: BankConfig,
    /// The settings given on the command line: a `bankwise.toml` cannot override them, and
    /// overrides the values above ([`crate::settings`]).
    pub command_line: Settings,
    /// Launches in the other files of the same run, for kernels launched from another file.
    pub launches_elsewhere: Arc<ProjectLaunches>,
    /// Where quoted includes are looked for after the including file's directory (`-I`).
    pub include_dirs: Vec<PathBuf>,
    /// Files read before each file (`-include`).
    pub pre_includes: Vec<PathBuf>,
    /// What the file's `bankwise.toml` says of the rules reported for it (`[lint]`).
    pub policy: crate::rules::FilePolicy,
    /// The build's flags per file (`--compile-commands`), applied by `pipeline`.
    pub compile_db: Arc<crate::compile_db::CompileDb>,
    /// The architecture the build compiles for (its `-arch`/`-gencode`, from the
    /// compilation database), which the compiled view compiles for too.
    pub arch: Option<String>,
    /// `--config PATH`: the `bankwise.toml` for every file, instead of the nearest one.
    pub config_file: Option<PathBuf>,
    /// Whose affine analyses the result keeps ([`KeepAffine`]).
    pub keep_affine: KeepAffine,
    /// Kernels whose bodies are not read (translation validation's unchanged kernels).
    pub skipped: Arc<parse::Skipped>,
    /// Drop each kernel's body once its batch is shown to the visitor, unless a function
    /// calls it (`fix`, which plans each batch as it is shown, reads no body after).
    pub drop_kernel_bodies: bool,
}

/// Which functions keep their affine analysis once their accesses are simulated. The
/// analyses are most of the memory a file takes, and only a fix, `explain` and the
/// validation of a rewrite read them again; a function's is dropped as soon as its figures
/// are known, so that a large file never holds them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepAffine {
    Every,
    /// Those a fix may rewrite: with an array whose simulated accesses conflict. (An array
    /// with an access not simulated is never rewritten.)
    ForFixes,
    Never,
}

impl Options {
    /// Where the front end finds a file's headers.
    pub fn header_search(&self) -> parse::HeaderSearch<'_> {
        parse::HeaderSearch {
            include_dirs: &self.include_dirs,
            pre_includes: &self.pre_includes,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            defines: Vec::new(),
            blocks: CommandLineBlocks::default(),
            max_file_bytes: parse::MAX_FILE_BYTES,
            bank: BankConfig::default(),
            command_line: Settings::default(),
            launches_elsewhere: Arc::default(),
            include_dirs: Vec::new(),
            pre_includes: Vec::new(),
            policy: Default::default(),
            compile_db: Arc::default(),
            arch: None,
            config_file: None,
            keep_affine: KeepAffine::Every,
            skipped: Arc::default(),
            drop_kernel_bodies: false,
        }
    }
}

#[derive(Debug)]
pub struct AnalysedFile {
    pub path: PathBuf,
    pub parsed: ParsedFile,
    /// Parser diagnostics plus the block-shape ones, sorted by location.
    pub diagnostics: Vec<Diagnostic>,
    /// What the stages found about each function of `parsed.functions`, same order.
    pub per_function: Vec<FunctionAnalysis>,
    /// The rules its `bankwise.toml` reports ([`Options::policy`]).
    pub policy: crate::rules::FilePolicy,
}

/// One function through the stages after the front end.
#[derive(Debug)]
pub struct FunctionAnalysis {
    /// Its block shape, or why it is unknown.
    pub block: Resolution,
    /// The affine analysis, when the block shape is known (boxed, so that assembling the
    /// records moves a pointer, not the analysis).
    pub affine: Option<Box<FunctionAffine>>,
    /// Per array and access: the simulated conflict figures, or why there are none.
    pub costs: FunctionCosts,
    /// Why no access was simulated, when the function passed the analysis budget
    /// ([`FUNCTION_REQUEST_BUDGET`]).
    pub over_budget: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

pub fn analyse_text(
    path: &Path,
    text: &str,
    options: &Options,
    config: &ConfigBlocks,
) -> AnalysedFile {
    analyse_text_visiting(path, text, options, config, &mut |_, _, _| {})
}

/// What [`analyse_text_visiting`] shows each batch of functions to.
pub type BatchVisitor<'v> =
    dyn FnMut(&ParsedFile, std::ops::Range<usize>, &[FunctionAnalysis]) + 'v;

/// [`analyse_text`] that shows each batch of functions, once analysed, to `visit`: the
/// file's model, the batch's indices and its analyses, every affine analysis still there.
/// Only then are those `keep_affine` does not ask for dropped, so a caller that needs a
/// function's affine analysis once (translation validation) never holds them all.
pub fn analyse_text_visiting(
    path: &Path,
    text: &str,
    options: &Options,
    config: &ConfigBlocks,
    visit: &mut BatchVisitor,
) -> AnalysedFile {
    let mut parsed = parse::analyse_file_source(
        path,
        text,
        &options.defines,
        options.header_search(),
        &block::template_launches_for(&options.launches_elsewhere, path),
        &options.skipped,
    );
    let (blocks, conflicts) = block::resolve_all(
        &parsed.functions,
        &parsed.launches,
        &Elsewhere {
            launches: &options.launches_elsewhere,
            path,
        },
        &options.blocks,
        config,
    );
    let mut diagnostics = parsed.diagnostics.clone();
    for (at, message) in conflicts {
        diagnostics.push(Diagnostic {
            severity: Severity::Warning,
            at,
            message,
        });
    }
    for (function, block) in parsed.functions.iter().zip(&blocks) {
        if let Some(at) = function.syntax_error {
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                at: function.at,
                message: format!(
                    "`{}` not analysed: syntax error at line {}",
                    function.display_name(),
                    at.line
                ),
            });
        } else if let (Err(why), true) = (block, is_reported(function)) {
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                at: function.at,
                message: why.to_string(),
            });
        }
    }
    for function in parsed.functions.iter().filter(|f| is_reported(f)) {
        for array in &function.arrays {
            if let Some(why) = array.impossible_size() {
                diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    at: array.at,
                    message: format!("{why}: not simulated"),
                });
            }
        }
    }
    // In batches, each through every stage before the next starts, so that the affine
    // analyses a file keeps are those of one batch and the ones `keep_affine` asks for.
    let lines = LineIndex::new(text);
    let mut per_function = Vec::with_capacity(parsed.functions.len());
    // The names any function calls: a kernel no one calls is read by no later analysis.
    let called: Option<HashSet<String>> = options.drop_kernel_bodies.then(|| {
        parsed
            .functions
            .iter()
            .flat_map(|f| f.callees.iter().cloned())
            .collect()
    });
    let mut blocks = blocks.into_iter();
    for start in (0..parsed.functions.len()).step_by(FUNCTIONS_PER_BATCH) {
        let batch = start..parsed.functions.len().min(start + FUNCTIONS_PER_BATCH);
        let batch_blocks: Vec<Resolution> = blocks.by_ref().take(batch.len()).collect();
        let analysed = {
            let callees = affine::Callees::new(&parsed.functions);
            let functions = &parsed.functions[batch.clone()];
            parallel::map(functions.len(), FUNCTIONS_PER_THREAD, |i| {
                affine_of(
                    &functions[i],
                    &batch_blocks[i],
                    &callees,
                    &parsed.constants,
                    &options.bank,
                )
            })
        };
        let functions = &mut parsed.functions[batch.clone()];
        let mut affine = Vec::with_capacity(analysed.len());
        let mut batch_blocks = batch_blocks;
        for (i, (mut function_affine, narrowed)) in analysed.into_iter().enumerate() {
            if let Some(narrowed) = narrowed {
                batch_blocks[i] = Ok(narrowed);
            }
            // A function with a syntax error is not analysed: no findings rest on its shape.
            let analysed = functions[i].syntax_error.is_none();
            if let (Ok(block), true) = (&batch_blocks[i], analysed) {
                if let Some(message) = block.assumption_warning(&functions[i]) {
                    diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        at: functions[i].at,
                        message,
                    });
                }
            }
            if let Some(function_affine) = &mut function_affine {
                adopt_pointer_analysis(
                    &mut functions[i],
                    function_affine,
                    text,
                    &lines,
                    &parsed.constants,
                );
            }
            affine.push(function_affine);
        }
        let costs = parallel::map(functions.len(), FUNCTIONS_PER_THREAD, |i| {
            costs_of(&functions[i], affine[i].as_deref(), &options.bank)
        });
        let mut analyses = Vec::with_capacity(functions.len());
        for (((block, affine), (costs, over_budget)), function) in batch_blocks
            .into_iter()
            .zip(affine)
            .zip(costs)
            .zip(functions.iter())
        {
            if let Some(why) = &over_budget {
                diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    at: function.at,
                    message: format!(
                        "`{}` not simulated: {why}; its arrays are left as they are",
                        function.display_name()
                    ),
                });
            }
            analyses.push(FunctionAnalysis {
                block,
                affine,
                costs,
                over_budget,
            });
        }
        visit(&parsed, batch.clone(), &analyses);
        if let Some(called) = &called {
            for function in &mut parsed.functions[batch] {
                if function.kind == FunctionKind::Kernel && !called.contains(&function.name) {
                    function.body = Default::default();
                }
            }
        }
        for mut analysis in analyses {
            let kept = match options.keep_affine {
                KeepAffine::Every => true,
                KeepAffine::ForFixes => analysis
                    .costs
                    .iter()
                    .any(|array| array_excess(array).is_some_and(|excess| excess > 0)),
                KeepAffine::Never => false,
            };
            if !kept {
                analysis.affine = None;
            }
            per_function.push(analysis);
        }
    }
    diagnostics.sort_by_key(|d| d.at);
    diagnostics.dedup();
    AnalysedFile {
        path: path.to_path_buf(),
        parsed,
        diagnostics,
        per_function,
        policy: options.policy.clone(),
    }
}

/// Per array, per access: the conflict figures, or why there are none.
pub type FunctionCosts = Vec<Vec<Result<SiteCost, String>>>;

/// The excess wavefronts of one array's accesses together, when every one is simulated.
pub fn array_excess(costs: &[Result<SiteCost, String>]) -> Option<u64> {
    costs
        .iter()
        .map(|c| c.as_ref().ok().map(|c| c.excess()))
        .sum()
}

/// Functions below which a thread is not worth starting.
const FUNCTIONS_PER_THREAD: usize = 16;

/// Functions analysed together before the next ones start: enough to keep both threads busy,
/// few enough that their affine analyses are a small part of a large file's memory.
const FUNCTIONS_PER_BATCH: usize = 512;

/// The function's affine analysis, and for an assumed one-dimensional block that took an
/// access outside its array, the narrower block it was analysed with instead.
fn affine_of(
    function: &Function,
    block: &Resolution,
    callees: &affine::Callees,
    constants: &ConstEnv,
    bank: &BankConfig,
) -> (Option<Box<FunctionAffine>>, Option<block::Block>) {
    let block = match (block, function.syntax_error) {
        (Ok(block), None) if is_reported(function) => block,
        _ => return (None, None),
    };
    let analyse = |shape| {
        Box::new(affine::analyse_function(
            function, callees, shape, constants,
        ))
    };
    let mut affine = analyse(block.shape);
    let block::BlockSource::Assumed(assumed) = &block.source else {
        return (Some(affine), None);
    };
    // "The shapes the code allows": halve an assumed 1-D block while an access leaves its
    // array (`s[32 * threadIdx.x]` on 1024 elements allows 32 threads, not 256).
    let mut shape = block.shape;
    while shape[0] > 32 && shape[1] == 1 && shape[2] == 1 && !stays_inside(function, &affine, bank)
    {
        shape[0] /= 2;
        affine = analyse(shape);
    }
    if shape == block.shape {
        return (Some(affine), None);
    }
    let narrowed = block::Block {
        shape,
        source: block::BlockSource::Assumed(block::Assumed {
            unknown_because: assumed.unknown_because.clone(),
            basis: format!(
                "{}, narrowed from {} so that every access stays inside its array",
                assumed.basis,
                block::format_shape(block.shape)
            ),
        }),
    };
    (Some(affine), Some(narrowed))
}

/// Whether every subscript of every access with known extents stays inside them.
fn stays_inside(function: &Function, affine: &FunctionAffine, bank: &BankConfig) -> bool {
    function.arrays.iter().enumerate().all(|(a, array)| {
        let Ok(dims) = array.extents() else {
            return true;
        };
        array.accesses.iter().enumerate().all(|(i, access)| {
            let Some(site) = affine.sites[a].get(i).and_then(Option::as_ref) else {
                return true;
            };
            let Ok(requests) = cost::SiteRequests::new(affine, site, array, access, bank) else {
                return true;
            };
            site.subscripts
                .iter()
                .zip(&dims)
                .all(|(subscript, extent)| requests.subscript_outside(subscript, *extent).is_none())
        })
    })
}

/// Warp requests one function's accesses may send in all. The heaviest function of our
/// testdata sends 7,212 and the heaviest of the real-code corpus 2,128; a kernel of 1,024
/// threads with 300 accesses in a 16,384-trip loop sends 157 million, about a minute of
/// simulation. Past the budget the function is not simulated, so that one kernel cannot
/// hold up a build.
pub const FUNCTION_REQUEST_BUDGET: u64 = 1 << 22;

/// The figures of every access of `function`, and why none were simulated when its
/// accesses together pass [`FUNCTION_REQUEST_BUDGET`].
fn costs_of(
    function: &Function,
    affine: Option<&FunctionAffine>,
    bank: &BankConfig,
) -> (FunctionCosts, Option<String>) {
    let why_not = |why: &str| -> FunctionCosts {
        let each = format!("`{}` is not simulated: {why}", function.display_name());
        function
            .arrays
            .iter()
            .map(|array| vec![Err(each.clone()); array.accesses.len()])
            .collect()
    };
    if affine.is_some_and(|affine| affine.exhausted) {
        let why = format!(
            "following it took more than {} statements (calls inlined in calls), the \
             analysis budget",
            affine::MAX_STATEMENTS
        );
        return (why_not(&why), Some(why));
    }
    // The site and its requests of every access that can be simulated, or why not.
    let requests_of = |a: usize, i: usize| -> Result<cost::SiteRequests, String> {
        let array = &function.arrays[a];
        if let Some(why) = array.impossible_size() {
            return Err(why);
        }
        let affine = affine.ok_or("block shape unknown")?;
        let site = affine.sites[a][i]
            .as_ref()
            .ok_or_else(|| affine.why_unreached(function.arrays[a].accesses[i].span))?;
        cost::SiteRequests::new(affine, site, array, &array.accesses[i], bank)
    };
    // Counted first, so that a function past the budget costs no simulation at all; the
    // requests are built again below rather than kept, as their loop points can be many.
    let requested = function
        .arrays
        .iter()
        .enumerate()
        .flat_map(|(a, array)| (0..array.accesses.len()).map(move |i| (a, i)))
        .filter_map(|(a, i)| requests_of(a, i).ok())
        .fold(0u64, |sum, requests| sum.saturating_add(requests.count()));
    if requested <= FUNCTION_REQUEST_BUDGET {
        let costs = function
            .arrays
            .iter()
            .enumerate()
            .map(|(a, array)| {
                (0..array.accesses.len())
                    .map(|i| cost::measure(&requests_of(a, i)?, bank))
                    .collect()
            })
            .collect();
        return (costs, None);
    }
    let why = format!(
        "its accesses send {requested} warp requests, more than the {FUNCTION_REQUEST_BUDGET} \
         one function may (the analysis budget)"
    );
    (why_not(&why), Some(why))
}

/// Folds what the affine stage learnt by following pointers into the function's arrays: the
/// escapes it followed are lifted, the pointers it lost become escapes, and the accesses
/// through pointers join the array's accesses (their sites appended in the same order).
fn adopt_pointer_analysis(
    function: &mut Function,
    affine: &mut FunctionAffine,
    text: &str,
    lines: &LineIndex,
    constants: &ConstEnv,
) {
    let source = |span: Span| {
        text.get(span.start..span.end)
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    for array in &mut function.arrays {
        array.escapes.retain(|e| {
            !e.name_use
                .is_some_and(|span| affine.followed.contains(&span))
        });
    }
    // Calls inlined in calls can lose the same pointer many times over, through different
    // call chains: one escape per place and reason, with the first chain.
    let mut known: Vec<std::collections::HashSet<(EscapeKind, Location)>> = function
        .arrays
        .iter()
        .map(|array| {
            array
                .escapes
                .iter()
                .map(|e| (e.kind.clone(), e.at))
                .collect()
        })
        .collect();
    for lost in &affine.pointer_escapes {
        let escape = Escape {
            kind: lost.kind.clone(),
            at: lines.location(lost.span.start),
            text: source(lost.span),
            name_use: None,
            calls: lost
                .calls
                .iter()
                .map(|call| lines.location(call.start))
                .collect(),
        };
        if known[lost.array].insert((escape.kind.clone(), escape.at)) {
            function.arrays[lost.array].escapes.push(escape);
        }
    }
    for alias in std::mem::take(&mut affine.aliases) {
        let elem_type = &function.arrays[alias.array].elem_type;
        let member_bytes = alias
            .member
            .as_deref()
            .and_then(|m| constants.types.member_range(elem_type, m));
        let detail = AccessDetail {
            member_bytes,
            member_subscripts: Vec::new(),
            member_layout: alias
                .member
                .as_deref()
                .and_then(|m| constants.types.member_layout(elem_type, m)),
            member: alias.member,
            atomic_op: alias.atomic_op,
            vector_bytes: alias.vector_bytes,
            via_pointer: Some(
                alias
                    .calls
                    .iter()
                    .map(|call| CallSite {
                        offset: call.start,
                        at: lines.location(call.start),
                    })
                    .collect(),
            ),
            pointer_offset: alias.base_offset,
        };
        let access = Access::new(
            alias.kind,
            lines.location(alias.span.start),
            alias.span,
            source(alias.span),
            Packed::new(&Vec::new()),
            detail,
        );
        function.arrays[alias.array].accesses.push(access);
        affine.sites[alias.array].push(Some(alias.site));
    }
    for array in &mut function.arrays {
        array.escapes.sort_by_key(|e| e.at);
    }
}

/// One function with everything the stages found about it.
pub struct Reported<'a> {
    /// The function's index in `parsed.functions` (and `per_function`).
    pub index: usize,
    pub function: &'a Function,
    pub block: &'a Resolution,
    pub affine: Option<&'a FunctionAffine>,
    /// Per array, per access.
    pub costs: &'a [Vec<Result<SiteCost, String>>],
}

/// Kernels are always reported; device functions only when they use shared memory.
pub fn is_reported(function: &Function) -> bool {
    function.kind == FunctionKind::Kernel || !function.arrays.is_empty()
}

impl AnalysedFile {
    /// The reported functions with their block shapes, affine analyses and costs.
    pub fn reported(&self) -> impl Iterator<Item = Reported<'_>> {
        self.parsed
            .functions
            .iter()
            .zip(&self.per_function)
            .enumerate()
            .filter(|(_, (f, _))| is_reported(f))
            .map(|(index, (function, analysis))| Reported {
                index,
                function,
                block: &analysis.block,
                affine: analysis.affine.as_deref(),
                costs: &analysis.costs,
            })
    }

    /// Whether any access of the file has excess wavefronts.
    pub fn has_conflicts(&self) -> bool {
        self.reported()
            .any(|r| r.costs.iter().flatten().flatten().any(|c| c.excess() > 0))
    }

    /// Whether the file yielded nothing: syntax errors and no function analysed. A header
    /// without a kernel never fails a run: it is read for what it declares, and the parts
    /// that are not CUDA (a library's templates, another language's code) are not the
    /// user's error.
    pub fn failed(&self) -> bool {
        let functions = &self.parsed.functions;
        let kernel_free_header = crate::parse::is_header(&self.path)
            && functions.iter().all(|f| f.kind != FunctionKind::Kernel);
        !kernel_free_header
            && !self.parsed.syntax_errors.is_empty()
            && functions.iter().all(|f| f.syntax_error.is_some())
    }
}

/// Why an array cannot be rewritten whatever the map: something the analysis of its function
/// could not settle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NotRewritable {
    /// Its first escape, as `check` words it.
    Escapes(String),
    NoBlock(Box<block::NoBlock>),
    UnsizedElement {
        ty: String,
    },
    /// An extent, as written, that has no value.
    UnknownExtent {
        written: String,
    },
    /// A vector view that cuts its elements.
    CutsElements {
        line: usize,
        text: String,
        bytes: u64,
        elem_bytes: u64,
    },
}

impl std::fmt::Display for NotRewritable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRewritable::Escapes(why) => f.write_str(why),
            NotRewritable::NoBlock(why) => write!(f, "{why}"),
            NotRewritable::UnsizedElement { ty } => {
                write!(f, "element type `{ty}` has no known size")
            }
            NotRewritable::UnknownExtent { written } => write!(f, "extent `{written}` is unknown"),
            NotRewritable::CutsElements {
                line,
                text,
                bytes,
                elem_bytes,
            } => write!(
                f,
                "line {line}: `{text}` reads or writes it {bytes} bytes at a time, which cuts its \
                 {elem_bytes}-byte elements"
            ),
        }
    }
}

/// Why an array must be left as it is, if it must: the first escape, an unknown block shape,
/// an unknown element size or extent, an access through a wider type.
pub fn not_rewritable_reason(array: &SharedArray, block: &Resolution) -> Option<NotRewritable> {
    if let Some(reason) = array.reason() {
        return Some(NotRewritable::Escapes(reason));
    }
    if let Err(why) = block {
        return Some(NotRewritable::NoBlock(Box::new(why.clone())));
    }
    if array.elem_bytes.is_none() {
        return Some(NotRewritable::UnsizedElement {
            ty: array.elem_type.clone(),
        });
    }
    if let Some(written) = array.unknown_static_extent() {
        return Some(NotRewritable::UnknownExtent { written });
    }
    // A map moves whole elements, a vector view whole vectors of them; a view that cuts an
    // element has no place in either.
    let elem_bytes = array.elem_bytes.unwrap_or(1).max(1);
    array.accesses.iter().find_map(|access| {
        access
            .detail()
            .vector_bytes
            .filter(|&bytes| bytes < elem_bytes || bytes % elem_bytes != 0)
            .map(|bytes| NotRewritable::CutsElements {
                line: access.at.line,
                text: access.text.clone(),
                bytes,
                elem_bytes,
            })
    })
}

#[cfg(test)]
mod cost_tests;
