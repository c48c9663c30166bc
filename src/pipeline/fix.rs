//! `fix` on one file: analyse, plan, apply the fixes the options allow, and validate the
//! output (translation validation) before anything may be written.
use super::validate;
use crate::analysis::{
    analyse_text_visiting, is_reported, AnalysedFile, AnalysisError, KeepAffine, Options,
};
use crate::block::ConfigBlocks;
use crate::compiled::Compiler;
use crate::parse::{self, PackedVec};
use crate::plan::{
    self, Action, ArrayOutcome, BatchInput, Plan, PlanInput, Planned, Planner, Reason, Strategy,
};
use crate::rewrite::guard::assumes_clause;
use crate::rewrite::{apply, apply_undoably, Applicability, Edit, Fix};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What `fix` was asked for.
#[derive(Debug, Clone, Default)]
pub struct FixOptions {
    pub analysis: Options,
    pub strategy: Strategy,
    /// Apply unsafe fixes too (`--unsafe-fixes`).
    pub unsafe_fixes: bool,
    /// Arrays the compiled view refused, by function and array name, with the reason.
    pub refused: Vec<(String, String, Reason)>,
    /// The build's nvcc, for the compiled view (`None`: looked for, see
    /// [`Compiler::find`]).
    pub nvcc: Option<PathBuf>,
    /// The build's architecture (`None`: [`crate::compiled::DEFAULT_ARCH`]).
    pub arch: Option<String>,
}

/// One file after `fix`: its text before and after, and what became of each array.
#[derive(Debug)]
pub struct FileFix {
    pub path: PathBuf,
    pub original: String,
    /// The output, when it differs from the original (most files need no fix: their text is
    /// not held twice).
    edited: Option<String>,
    /// Every array of every reported function, in the order `check` reports them.
    pub arrays: Vec<ArrayOutcome>,
    /// One fix per array with a rewrite, applied or not.
    pub fixes: Vec<Fix>,
    /// For each fix, the index of its array in `arrays`.
    pub fixed_arrays: Vec<usize>,
}

impl FileFix {
    pub fn changed(&self) -> bool {
        self.edited.is_some()
    }

    /// The text after the fix.
    pub fn output(&self) -> &str {
        self.edited.as_deref().unwrap_or(&self.original)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error(transparent)]
    Input(#[from] AnalysisError),
    #[error("{path}: no kernel could be analysed (syntax error at line {line})")]
    Unparsable { path: String, line: usize },
    /// The output failed its checks, in a file with syntax errors: their recovery can read
    /// the rewritten text otherwise, so nothing is written, and the user's error comes first.
    #[error(
        "{path}: nothing written: the rewrite could not be checked, since the file does not \
         parse (syntax error at line {line}; fix it first): {message}"
    )]
    NotValidated {
        path: String,
        line: usize,
        message: String,
    },
    /// The rewriter's own output failed its checks: a bug; nothing was written.
    #[error("{path}: internal error, nothing written: {message}")]
    Internal { path: String, message: String },
}

/// Reads `path` (and the nearest `bankwise.toml`) and fixes it.
pub fn fix_file(path: &Path, options: &FixOptions) -> Result<FileFix, FixError> {
    let text =
        parse::read_source(path, options.analysis.max_file_bytes).map_err(AnalysisError::from)?;
    fix_source(path, text, options)
}

/// [`fix_file`] on text already read (stdin, named `path`).
pub fn fix_source(path: &Path, text: String, options: &FixOptions) -> Result<FileFix, FixError> {
    let (options, config) = super::for_fix(path, options).map_err(AnalysisError::from)?;
    let compiler = match &options.nvcc {
        Some(nvcc) => Compiler::at(nvcc),
        None => Compiler::find(),
    };
    match compiler {
        Some(compiler) => fix_compiled(path, text, options, &config, &compiler),
        None => fix_owned(path, text, &options, &config),
    }
}

/// [`fix_owned`], then, where it changed the file, the original and the output compiled
/// with `compiler`: the arrays of a kernel whose compiled code got worse than its conflicts
/// were worth ([`crate::compiled::regression`]) are left alone, and the file is fixed again
/// without them, until the output's code holds.
/// One kernel of the compiled view, its instances together.
#[derive(Clone)]
struct CompiledSummary {
    name: String,
    excess: Option<u64>,
    executed: Option<crate::compiled::Executed>,
}

fn fix_compiled(
    path: &Path,
    text: String,
    mut options: FixOptions,
    config: &ConfigBlocks,
    compiler: &Compiler,
) -> Result<FileFix, FixError> {
    let mut fixed = fix_owned(path, text.clone(), &options, config)?;
    if !fixed.changed() {
        return Ok(fixed);
    }
    let arch = options
        .arch
        .clone()
        .or_else(|| options.analysis.arch.clone())
        .unwrap_or_else(|| crate::compiled::DEFAULT_ARCH.to_string());
    let include_dirs = super::compile_include_dirs(path, &options.analysis);
    let flags = crate::compiled::Flags {
        arch: &arch,
        include_dirs: &include_dirs,
        defines: &options.analysis.defines,
        pre_includes: &options.analysis.pre_includes,
    };
    let analysis = Options {
        keep_affine: KeepAffine::Never,
        ..options.analysis.clone()
    };
    // The original and the first output compile at once, beside the original's analysis
    // (its block shapes are the compiled view's).
    let (before, first, analysed) = std::thread::scope(|scope| {
        let before = scope.spawn(|| compiler.compile(path, &text, &flags));
        let analysed =
            scope.spawn(|| crate::analysis::analyse_text(path, &text, &analysis, config));
        let first = compiler.compile(path, fixed.output(), &flags);
        (before.join(), first, analysed.join())
    });
    // What does not compile as it is cannot be compared: the source model decides alone.
    let (Ok(Ok(before)), Ok(analysed)) = (before, analysed) else {
        return Ok(fixed);
    };
    // Per kernel (its instances together): the conflicts of nvcc's code, where the
    // compiled view counts all of them (what a rewrite removes on the GPU), and what block 0
    // executed, where it ran to its end (what the time model weighs).
    let compiled_kernels = |compiled: &crate::compiled::Compiled| -> Vec<CompiledSummary> {
        let file = super::compiled_figures(&analysed, compiled, &options.analysis);
        let mut kernels: Vec<CompiledSummary> = Vec::new();
        for kernel in &file.kernels {
            let excess = kernel.counts_all().then(|| kernel.excess());
            let executed = kernel.ran_to_end().then_some(kernel.executed);
            let name = base_name(&kernel.name).to_string();
            match kernels.iter_mut().find(|k| k.name == name) {
                Some(kept) => {
                    kept.excess = kept.excess.zip(excess).map(|(a, b)| a + b);
                    kept.executed = kept.executed.zip(executed).map(|(a, b)| a.plus(&b));
                }
                None => kernels.push(CompiledSummary {
                    name,
                    excess,
                    executed,
                }),
            }
        }
        kernels
    };
    let compiled_before = compiled_kernels(&before);
    let summary = |kernels: &'_ [CompiledSummary], name: &str| {
        kernels.iter().find(|k| k.name == name).cloned()
    };
    let mut after = Some(first);
    // What block 0 of each kernel executed in the last compile of the output.
    let mut compiled_last: Vec<CompiledSummary> = Vec::new();
    // Each round refuses at least one array not refused before: the rounds end.
    while fixed.changed() {
        let output = match after.take() {
            Some(first) => first,
            None => compiler.compile(path, fixed.output(), &flags),
        };
        let rewritten: Vec<(String, String)> = fixed
            .arrays
            .iter()
            .filter(|a| a.action == Action::Rewritten)
            .map(|a| (base_name(&a.function).to_string(), a.array.clone()))
            .collect();
        let removed_in = |kernel: &str| -> u64 {
            fixed
                .arrays
                .iter()
                .filter(|a| a.action == Action::Rewritten && base_name(&a.function) == kernel)
                .map(|a| {
                    a.excess_before
                        .unwrap_or(0)
                        .saturating_sub(a.excess_after.unwrap_or(0))
                })
                .sum()
        };
        let refusals: Vec<(String, String, Reason)> = match output {
            Err(why) => rewritten
                .into_iter()
                .map(|(function, array)| (function, array, Reason::DoesNotCompile(why.to_string())))
                .collect(),
            Ok(output) => {
                let compiled_after = compiled_kernels(&output);
                compiled_last.clone_from(&compiled_after);
                rewritten
                    .into_iter()
                    .filter_map(|(function, array)| {
                        let both = summary(&compiled_before, &function)
                            .zip(summary(&compiled_after, &function));
                        let change = crate::compiled::KernelChange {
                            name: &function,
                            source_removed: removed_in(&function),
                            compiled_excess: both
                                .as_ref()
                                .and_then(|(was, is)| was.excess.zip(is.excess)),
                            executed: both
                                .as_ref()
                                .and_then(|(was, is)| was.executed.zip(is.executed)),
                        };
                        let regression = crate::compiled::regression(
                            before.code(),
                            output.code(),
                            &change,
                            &arch,
                        )?;
                        let reason = Reason::Compiled {
                            kernel: function.clone(),
                            arch: arch.clone(),
                            regression: Box::new(regression),
                        };
                        Some((function, array, reason))
                    })
                    .collect()
            }
        };
        let new: Vec<_> = refusals
            .into_iter()
            .filter(|(f, a, _)| !options.refused.iter().any(|(g, b, _)| f == g && a == b))
            .collect();
        if new.is_empty() {
            // Nothing left to refuse (or a refusal that did not take: never loop on it).
            break;
        }
        options.refused.extend(new);
        fixed = fix_owned(path, text.clone(), &options, config)?;
        compiled_last.clear();
    }
    // Each rewrite kept says what the time model predicts of its kernel.
    for array in fixed
        .arrays
        .iter_mut()
        .filter(|a| a.action == Action::Rewritten)
    {
        let kernel = base_name(&array.function);
        let both = summary(&compiled_before, kernel).zip(summary(&compiled_last, kernel));
        if let Some((was, is)) = both.and_then(|(was, is)| was.executed.zip(is.executed)) {
            array.predicted_time = Some(crate::compiled::predicted_time(&was, &is, &arch));
        }
    }
    Ok(fixed)
}

/// A function's name without its template arguments, as the compiled code names it.
fn base_name(function: &str) -> &str {
    let name = function.split('<').next().unwrap_or(function);
    name.rsplit("::").next().unwrap_or(name)
}

/// Fixes `text`: plans every array, applies the fixes the options allow, and validates the
/// output (an error if it fails: then nothing may be written).
pub fn fix_text(
    path: &Path,
    text: &str,
    options: &FixOptions,
    config: &ConfigBlocks,
) -> Result<FileFix, FixError> {
    fix_owned(path, text.to_string(), options, config)
}

/// [`fix_text`] on text the result may keep as its original, with no copy.
fn fix_owned(
    path: &Path,
    text: String,
    options: &FixOptions,
    config: &ConfigBlocks,
) -> Result<FileFix, FixError> {
    // The plan is made, and what validation needs of each rewrite taken, batch by batch as
    // the analysis goes: no affine analysis is kept (on a large file they are tens of
    // megabytes beside the model).
    let analysis = Options {
        keep_affine: KeepAffine::Never,
        drop_kernel_bodies: true,
        ..options.analysis.clone()
    };
    let (strategy, bank) = (&options.strategy, &options.analysis.bank);
    let mut planner: Option<Planner> = None;
    let mut requests = HashMap::new();
    let analysed = analyse_text_visiting(
        path,
        &text,
        &analysis,
        config,
        &mut |parsed, batch, analyses| {
            let planner =
                planner.get_or_insert_with(|| Planner::new(parsed, &text, strategy, bank));
            let input = BatchInput {
                parsed,
                first: batch.start,
                analyses,
            };
            let reported: Vec<usize> = batch
                .filter(|&f| is_reported(&parsed.functions[f]))
                .collect();
            let from = planner.decided();
            planner.decide(&input, &reported);
            let rewrites = planner.rewrites_from(from);
            let taken = crate::parallel::map(rewrites.len(), validate::REWRITES_PER_THREAD, |i| {
                let (f, a, map) = rewrites[i];
                validate::rewrite_requests(
                    input.analysis(f).affine.as_deref(),
                    a,
                    &parsed.functions[f].arrays[a],
                    map,
                    bank,
                )
            });
            requests.extend(rewrites.iter().map(|&(f, a, _)| (f, a)).zip(taken));
        },
    );
    let planned = planner.map(|planner| Prepared {
        plan: planner.finish(&analysed),
        requests,
    });
    fix_from(
        Analysed::Owned(Box::new(analysed)),
        text,
        options,
        config,
        Some(planned.unwrap_or_default()),
    )
}

/// A plan made as the input was analysed, with what validation compares for each rewrite.
#[derive(Default)]
struct Prepared {
    plan: Plan,
    requests: HashMap<(usize, usize), Option<validate::RewriteRequests>>,
}

/// The analysis a fix starts from: the caller's, or its own, of which it keeps only what
/// validation reads once the plan and the validation's expectations are made (the affine
/// analyses and bodies are most of a large file's memory, beside the output's model).
enum Analysed<'a> {
    Borrowed(&'a AnalysedFile),
    Owned(Box<AnalysedFile>),
}

impl Analysed<'_> {
    fn file(&self) -> &AnalysedFile {
        match self {
            Analysed::Borrowed(file) => file,
            Analysed::Owned(file) => file,
        }
    }

    /// Keeps what validation reads beside [`validate::Expected`]: the functions' names,
    /// places, arrays and block shapes, and the accesses of the arrays `applied` rewrites;
    /// of the `unchanged` kernels, which it pairs by name only, no array.
    fn drop_what_validation_does_not_read(
        &mut self,
        applied: &[&Planned],
        unchanged: &parse::Skipped,
    ) {
        let Analysed::Owned(file) = self else {
            return;
        };
        for analysis in &mut file.per_function {
            analysis.affine = None;
            // `Expected` holds the figures validation compares.
            analysis.costs = Vec::new();
        }
        let rewritten: std::collections::HashSet<(usize, usize)> =
            applied.iter().map(|p| (p.function, p.array)).collect();
        for (f, function) in file.parsed.functions.iter_mut().enumerate() {
            function.body = Default::default();
            function.params = Vec::new();
            function.bindings = Default::default();
            function.callees = Vec::new();
            function.assumed_types = Vec::new();
            if unchanged.skips(function) {
                function.arrays = Vec::new();
            }
            for (a, array) in function.arrays.iter_mut().enumerate() {
                array.dim_exprs = crate::parse::Packed::new(&Vec::new());
                array.dim_texts = Vec::new();
                array.escapes = Vec::new();
                if !rewritten.contains(&(f, a)) {
                    array.accesses = Vec::new();
                }
            }
        }
        let parsed = &mut file.parsed;
        parsed.launches = Vec::new();
        parsed.diagnostics = Vec::new();
        parsed.constants = Default::default();
        parsed.suppressions = Vec::new();
        file.diagnostics = Vec::new();
    }
}

/// `output` as validation reads it: each inserted map function's definition (a line of its
/// own) becomes the macro it stands for, which the analysis expands; and the edits that turn
/// the view back into `output`. One pass over the lines: a file with thousands of rewrites
/// would otherwise be copied once per map.
fn macro_view(output: &str, applied: &[&Planned]) -> (String, Vec<Edit>) {
    let mut macros: HashMap<&str, &str> = applied
        .iter()
        .filter_map(|planned| planned.rewrite.function.as_ref())
        .map(|f| (f.definition.as_str(), f.macro_definition.as_str()))
        .collect();
    let mut view = String::with_capacity(output.len());
    let mut undo = Vec::with_capacity(macros.len());
    for line in output.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        match macros.remove(text) {
            Some(replacement) => {
                undo.push(Edit::replace(
                    view.len()..view.len() + replacement.len(),
                    text,
                ));
                view.push_str(replacement);
                view.push_str(&line[text.len()..]);
            }
            None => view.push_str(line),
        }
    }
    (view, undo)
}

/// [`fix_text`] on a file already analysed with `options.analysis`; the result keeps
/// `text` as its original.
pub fn fix_analysed(
    analysed: &AnalysedFile,
    text: String,
    options: &FixOptions,
    config: &ConfigBlocks,
) -> Result<FileFix, FixError> {
    fix_from(Analysed::Borrowed(analysed), text, options, config, None)
}

/// [`fix_analysed`] on the caller's analysis or on one it may cut down.
/// `prepared`: the plan and expectations, when they were made as the input was analysed
/// (else the analysis has the affine analyses to make them from).
fn fix_from(
    mut original: Analysed,
    text: String,
    options: &FixOptions,
    config: &ConfigBlocks,
    prepared: Option<Prepared>,
) -> Result<FileFix, FixError> {
    let analysed = original.file();
    // Owned: `original` drops parts of its analysis further down.
    let path_buf = analysed.path.clone();
    let path = path_buf.as_path();
    let shown = path.display().to_string();
    if analysed.failed() {
        let line = analysed
            .parsed
            .syntax_errors
            .first()
            .map_or(0, |at| at.line);
        return Err(FixError::Unparsable { path: shown, line });
    }
    let (mut plan, requests) = match prepared {
        Some(prepared) => (prepared.plan, Some(prepared.requests)),
        None => (
            plan::plan(analysed, &text, &options.strategy, &options.analysis.bank),
            None,
        ),
    };
    let mut fixes = Vec::new();
    // Per planned rewrite, whether it goes into the output; and, by outcome, why those that
    // do not are left out. The outcomes stay packed (`plan::Planner::finish`) until
    // validation is done: on a large file they are tens of megabytes, beside the models of
    // the input and then of the output.
    let mut applies = Vec::with_capacity(plan.rewrites.len());
    let mut left_out: Vec<(usize, Reason)> = Vec::new();
    for planned in &mut plan.rewrites {
        fixes.push(fix_of(planned, analysed));
        let allowed = match planned.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => options.unsafe_fixes,
            Applicability::DisplayOnly => false,
        };
        let function = &analysed.parsed.functions[planned.function];
        let array = &function.arrays[planned.array].name;
        let refused = options
            .refused
            .iter()
            .find(|(f, a, _)| *f == base_name(&function.name) && a == array);
        if let Some((_, _, reason)) = refused {
            left_out.push((planned.outcome, reason.clone()));
            applies.push(false);
            continue;
        }
        if !allowed {
            left_out.push((planned.outcome, Reason::Unsafe(planned.caution.clone())));
        }
        applies.push(allowed);
    }
    share_map_functions(
        analysed,
        &plan.rewrites,
        &mut applies,
        &mut fixes,
        &mut left_out,
    );
    // What only the report and the fixes read, which have their copies.
    for planned in &mut plan.rewrites {
        planned.rewrite.accesses = Vec::new();
        planned.rewrite.assumptions = Vec::new();
        if let Some(function) = &mut planned.rewrite.function {
            function.text = String::new();
        }
    }
    let applied: Vec<&Planned> = plan
        .rewrites
        .iter()
        .zip(&applies)
        .filter_map(|(planned, &applies)| applies.then_some(planned))
        .collect();
    let edits: Vec<&Edit> = fixes
        .iter()
        .zip(&applies)
        .filter(|(_, &applies)| applies)
        .flat_map(|(fix, _)| fix.edits.iter())
        .collect();
    let internal = |message: String| FixError::Internal {
        path: shown.clone(),
        message,
    };
    // What validation compares is taken from the input's analysis before the output exists,
    // and the analysis is cut down to what validation reads: the input's model and the
    // output's text are never held together (each is tens of megabytes on a large file).
    let expected = if applied.is_empty() {
        None
    } else {
        let unchanged = unchanged_kernels(analysed, &text, &edits, &applied);
        let expected = match requests {
            Some(requests) => validate::Expected::with(analysed, &applied, requests),
            None => validate::Expected::of(analysed, &applied, &options.analysis.bank),
        };
        original.drop_what_validation_does_not_read(&applied, &unchanged);
        crate::release_freed_memory();
        Some(expected.skipping(unchanged))
    };
    // No edit, no copy of the text: most files need no fix.
    let (mut current, undo) = if edits.is_empty() {
        (text, None)
    } else {
        let (output, undo) = apply_undoably(&text, &edits).map_err(|e| internal(e.to_string()))?;
        if output == text {
            (text, None)
        } else {
            // Given back by `undo` once validation is done.
            drop(text);
            (output, Some(undo))
        }
    };
    drop(edits);
    let packed_fixes = PackedVec::new(fixes);
    let mut measured = Vec::new();
    if let Some(expected) = expected {
        let analysed = original.file();
        // One text while the output is analysed, the view: the output and the input come
        // back from it by their undo edits (a large file's texts are tens of megabytes).
        let (view, view_undo) = macro_view(&current, &applied);
        drop(current);
        measured = validate::validate(
            path,
            analysed,
            &expected,
            &view,
            &applied,
            &options.analysis,
            config,
        )
        .map_err(|message| match analysed.parsed.syntax_errors.first() {
            Some(at) => FixError::NotValidated {
                path: shown.clone(),
                line: at.line,
                message,
            },
            None => internal(message),
        })?;
        drop(expected);
        current = apply(&view, &view_undo).map_err(|e| internal(e.to_string()))?;
        drop(view);
    }
    // The input's analysis and the plan's rewrites go before the report is unpacked.
    let fixed_arrays: Vec<usize> = plan.rewrites.iter().map(|p| p.outcome).collect();
    let rewritten: Vec<usize> = applied.iter().map(|p| p.outcome).collect();
    drop(applied);
    drop(plan.rewrites);
    drop(original);
    crate::release_freed_memory();
    let mut arrays = plan.outcomes.into_vec();
    for (outcome, reason) in left_out {
        not_applied(&mut arrays[outcome], reason);
    }
    for (&rewritten, excess) in rewritten.iter().zip(measured) {
        let outcome = &mut arrays[rewritten];
        outcome.excess_after = Some(excess.iter().sum());
        for (access, after) in outcome.accesses.iter_mut().zip(excess) {
            access.excess_after = Some(after);
        }
    }
    let (original_text, edited) = match undo {
        Some(undo) => (
            apply(&current, &undo).map_err(|e| internal(e.to_string()))?,
            Some(current),
        ),
        None => (current, None),
    };
    Ok(FileFix {
        path: path.to_path_buf(),
        original: original_text,
        edited,
        arrays,
        fixes: packed_fixes.into_vec(),
        fixed_arrays,
    })
}

/// The kernels whose analysis in the output is the input's, which validation does not read
/// again ([`parse::Skipped`]): every function of the name is a kernel with no edit inside,
/// that calls no function of the file, launches none and is called by none; and every edit
/// outside the functions inserts a map function (a new name), none defines a macro, and no
/// array at file scope is rewritten. Otherwise none.
fn unchanged_kernels(
    analysed: &AnalysedFile,
    text: &str,
    edits: &[&Edit],
    applied: &[&Planned],
) -> parse::Skipped {
    let functions = &analysed.parsed.functions;
    let file_scope = applied
        .iter()
        .any(|p| functions[p.function].arrays[p.array].file_scope);
    let defines_macro = |text: &str| {
        text.split('#').skip(1).any(|after| {
            let directive = after.trim_start();
            directive.starts_with("define") || directive.starts_with("undef")
        })
    };
    if file_scope
        || edits.iter().any(|e| {
            defines_macro(&e.replacement) || text.get(e.range.clone()).is_none_or(defines_macro)
        })
    {
        return parse::Skipped::default();
    }
    let index = validate::FunctionIndex::new(functions);
    let inserted: std::collections::HashSet<usize> = applied
        .iter()
        .filter_map(|p| p.rewrite.function.as_ref().map(|f| f.at))
        .collect();
    let mut touched = std::collections::HashSet::new();
    for edit in edits {
        // The instances of a template share their span: it is what an edit touches.
        let holder = index
            .containing(edit.range.start)
            .map(|f| functions[f].span)
            .filter(|span| edit.range.end < span.end);
        match holder {
            Some(span) => {
                touched.insert((span.start, span.end));
            }
            None if edit.range.is_empty() && inserted.contains(&edit.range.start) => {}
            None => return parse::Skipped::default(),
        }
    }
    let defined: std::collections::HashSet<&str> =
        functions.iter().map(|f| f.name.as_str()).collect();
    // A kernel some function calls (not CUDA, but analysed as a call) is read by its caller.
    let called: std::collections::HashSet<&str> = functions
        .iter()
        .flat_map(|f| f.callees.iter().map(String::as_str))
        .collect();
    let unchanged = |f: &parse::Function| {
        f.kind == parse::FunctionKind::Kernel
            && f.syntax_error.is_none()
            // Its instances' element types are assumed from its arrays.
            && f.assumed_types.is_empty()
            && !touched.contains(&(f.span.start, f.span.end))
            && !called.contains(f.name.as_str())
            && !f.callees.iter().any(|c| defined.contains(c.as_str()))
            && !text.get(f.span.start..f.span.end).is_none_or(|t| t.contains("<<<"))
    };
    let mut kernels: HashMap<&str, bool> = HashMap::new();
    for function in functions {
        *kernels.entry(&function.name).or_insert(true) &= unchanged(function);
    }
    parse::Skipped {
        kernels: kernels
            .into_iter()
            .filter(|&(_, unchanged)| unchanged)
            .map(|(name, _)| name.to_string())
            .collect(),
    }
}

/// Kernels whose arrays got one map function name (the same array and map, passed to the
/// same functions) insert it, with its copies of those functions, once: above the first
/// kernel, its comment naming them all. A kernel whose copies came out different is left out.
fn share_map_functions(
    analysed: &AnalysedFile,
    rewrites: &[Planned],
    applies: &mut [bool],
    fixes: &mut [Fix],
    left_out: &mut Vec<(usize, Reason)>,
) {
    // Per map function inserted, by name: the fix that inserts it and the last kernel named.
    let mut first: HashMap<&str, (usize, String)> = HashMap::new();
    for (i, planned) in rewrites.iter().enumerate() {
        let Some(function) = &planned.rewrite.function else {
            continue;
        };
        if !applies[i] {
            continue;
        }
        let kernel = analysed.parsed.functions[planned.function].name.clone();
        let Some((j, last)) = first.get_mut(function.name.as_str()) else {
            first.insert(&function.name, (i, kernel));
            continue;
        };
        let Some(shared) = &rewrites[*j].rewrite.function else {
            continue;
        };
        // The instances of a template insert the same text at the same place: one edit.
        if shared.at == function.at {
            continue;
        }
        let body = |text: &str| text.split_once('\n').map(|(_, rest)| rest.to_string());
        if body(&shared.text) != body(&function.text) {
            left_out.push((
                planned.outcome,
                Reason::CopiesWouldDiffer {
                    other: last.to_string(),
                },
            ));
            applies[i] = false;
            continue;
        }
        let own = Edit::insert(function.at, function.text.clone());
        fixes[i].edits.retain(|e| *e != own);
        let inserted = Edit::insert(shared.at, shared.text.clone());
        let named = format!("`{last}`: ");
        for edit in fixes[*j].edits.iter_mut() {
            if edit.range == inserted.range && edit.replacement.starts_with("// bankwise map") {
                edit.replacement =
                    edit.replacement
                        .replacen(&named, &format!("`{last}`, `{kernel}`: "), 1);
            }
        }
        *last = kernel;
    }
}

/// The fix of one planned rewrite: its edits (moved out of it) with the map function's
/// insertion.
fn fix_of(planned: &mut Planned, analysed: &AnalysedFile) -> Fix {
    let mut edits = std::mem::take(&mut planned.rewrite.edits);
    if let Some(function) = &planned.rewrite.function {
        edits.push(Edit::insert(function.at, function.text.clone()));
    }
    let function = &analysed.parsed.functions[planned.function];
    let assumes = assumes_clause(&planned.rewrite.assumptions);
    Fix {
        message: format!(
            "store `{}` in `{}` through {} ({}){assumes}",
            function.arrays[planned.array].name,
            function.display_name(),
            planned.description,
            planned.rewrite.form.as_str()
        ),
        applicability: planned.applicability,
        edits,
    }
}

/// Marks a planned rewrite as left out of the output.
fn not_applied(outcome: &mut ArrayOutcome, reason: Reason) {
    outcome.action = Action::NotApplied;
    outcome.reason = Some(reason);
    outcome.excess_after = outcome.excess_before;
    for access in &mut outcome.accesses {
        access.excess_after = access.excess_before;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyse_text;
    use crate::rewrite::forms::FormKind;
    use crate::solve::Family;

    /// Options under which any rewrite pays: the tests of a mechanism on a small kernel,
    /// whose few conflicts would not pay for its map.
    fn unpriced() -> FixOptions {
        FixOptions {
            strategy: Strategy {
                max_alu_per_wavefront: Some(u64::MAX),
                ..Strategy::default()
            },
            ..FixOptions::default()
        }
    }

    /// Options that keep each kernel's `footprint` bytes: maps, never padding.
    fn keeping(footprint: u64, options: FixOptions) -> FixOptions {
        FixOptions {
            strategy: Strategy {
                smem_budget: Some(footprint),
                ..options.strategy
            },
            ..options
        }
    }

    fn fixed(text: &str, options: &FixOptions) -> FileFix {
        fix_text(Path::new("t.cu"), text, options, &ConfigBlocks::default()).expect("fixes")
    }

    fn outcome<'a>(file: &'a FileFix, array: &str) -> &'a ArrayOutcome {
        file.arrays
            .iter()
            .find(|a| a.array == array)
            .expect("the array is reported")
    }

    const TRANSPOSE: &str = "#define TILE 32\n// bankwise: block=32x8\n\
        __global__ void t(float *o)\n{\n    __shared__ float tile[TILE][TILE];\n    \
        for (int j = 0; j < TILE; j += 8)\n        tile[threadIdx.y + j][threadIdx.x] = o[j];\n    \
        for (int j = 0; j < TILE; j += 8)\n        o[j] = tile[threadIdx.x][threadIdx.y + j];\n}\n";

    #[test]
    fn validation_reads_each_map_function_as_its_macro_with_the_line_ending_kept_and_back() {
        // Through a pointer: the accesses go through a map function.
        let crlf = "// bankwise: block=32x8\n__global__ void t(float *o)\n{\n    \
            __shared__ float tile[32][32];\n    float *p = &tile[0][0];\n    \
            for (int j = 0; j < 32; j += 8)\n        p[(threadIdx.y + j) * 32 + threadIdx.x] = o[j];\n    \
            __syncthreads();\n    for (int j = 0; j < 32; j += 8)\n        \
            o[j] = p[threadIdx.x * 32 + threadIdx.y + j];\n}\n"
            .replace('\n', "\r\n");
        let file = fixed(&crlf, &FixOptions::default());
        assert_eq!(outcome(&file, "tile").action, Action::Rewritten);
        let analysed = analyse_text(
            Path::new("t.cu"),
            &crlf,
            &crate::analysis::Options::default(),
            &ConfigBlocks::default(),
        );
        let plan = plan::plan(&analysed, &crlf, &Strategy::default(), &Default::default());
        let applied: Vec<&Planned> = plan.rewrites.iter().collect();
        let function = applied[0]
            .rewrite
            .function
            .as_ref()
            .expect("a map function");
        let output = format!("int a;\r\n{}\r\nint b;\r\n", function.definition);
        let (view, undo) = macro_view(&output, &applied);
        assert_eq!(
            view,
            format!("int a;\r\n{}\r\nint b;\r\n", function.macro_definition)
        );
        assert_eq!(apply(&view, &undo).unwrap(), output);
    }

    /// The kernels `unchanged_kernels` gives for `text`, every rewrite applied, and `extra`.
    fn unchanged_in(text: &str, extra: &[Edit]) -> Vec<String> {
        let analysed = analyse_text(
            Path::new("t.cu"),
            text,
            &crate::analysis::Options::default(),
            &ConfigBlocks::default(),
        );
        let mut plan = plan::plan(&analysed, text, &Strategy::default(), &Default::default());
        let fixes: Vec<Fix> = plan
            .rewrites
            .iter_mut()
            .map(|planned| fix_of(planned, &analysed))
            .collect();
        let edits: Vec<&Edit> = fixes.iter().flat_map(|f| &f.edits).chain(extra).collect();
        let applied: Vec<&Planned> = plan.rewrites.iter().collect();
        assert!(!applied.is_empty());
        let mut kernels: Vec<String> = unchanged_kernels(&analysed, text, &edits, &applied)
            .kernels
            .into_iter()
            .collect();
        kernels.sort();
        kernels
    }

    #[test]
    fn validation_skips_only_the_kernels_the_rewrite_left_as_they_were() {
        let others = "__device__ float get(float *s, int i)\n{\n    return s[i];\n}\n\
            // bankwise: block=32\n__global__ void clean(float *o)\n{\n    \
            __shared__ float s[32];\n    s[threadIdx.x] = 1;\n    o[0] = s[threadIdx.x];\n}\n\
            // bankwise: block=32\n__global__ void calls(float *o)\n{\n    \
            __shared__ float s[32];\n    s[threadIdx.x] = 1;\n    o[0] = get(s, threadIdx.x);\n}\n\
            __global__ void child(float *o) { o[0] = 1; }\n\
            // bankwise: block=32\n__global__ void parent(float *o)\n{\n    \
            child<<<1, 1>>>(o);\n}\n\
            __global__ void callee(float *o) { o[0] = 1; }\n\
            // bankwise: block=32\n__global__ void direct(float *o) { callee(o); }\n";
        let text = format!("{others}{TRANSPOSE}");
        // `t` is rewritten, `calls` and `direct` call a function of the file, `parent`
        // launches one, and `child` and `callee` are called (a launch reads as a call).
        assert_eq!(unchanged_in(&text, &[]), ["clean"]);
        // An edit outside the functions that is not a map function, or one that defines a
        // macro, may reach any kernel.
        let macro_line = text.find("32\n").expect("the macro's value");
        let top_level = Edit::replace(macro_line..macro_line + 2, "32");
        assert!(unchanged_in(&text, &[top_level]).is_empty());
        let body = text.rfind("    for").expect("a loop of `t`");
        let defines = Edit::insert(body, "#define LOCAL 1\n");
        assert!(unchanged_in(&text, &[defines]).is_empty());
        // The output is still validated and fixed as before.
        let file = fixed(&format!("{others}{TRANSPOSE}"), &FixOptions::default());
        assert_eq!(outcome(&file, "tile").excess_after, Some(0));
        assert_eq!(outcome(&file, "tile").action, Action::Rewritten);
    }

    #[test]
    fn the_transpose_tile_is_swizzled_and_validated() {
        let file = fixed(TRANSPOSE, &FixOptions::default());
        let tile = outcome(&file, "tile");
        assert_eq!(tile.action, Action::Rewritten);
        assert_eq!(tile.form, Some(FormKind::SwizzleInPlace));
        assert_eq!(
            (tile.excess_before, tile.excess_after),
            (Some(992), Some(0))
        );
        assert_eq!(tile.applicability, Some(Applicability::Safe));
        assert_eq!(file.fixes.len(), 1);
        assert!(file
            .output()
            .contains("tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"));
        // Idempotent: the output is recognised and left as it is.
        let again = fixed(file.output(), &FixOptions::default());
        assert!(!again.changed());
    }

    #[test]
    fn padding_grows_memory_so_it_needs_consent() {
        // The tile's own 4,096 bytes: no room to grow (the default budget would have some).
        let forced = FixOptions {
            strategy: Strategy {
                forced: Some(Family::Padding),
                smem_budget: Some(4096),
                max_alu_per_wavefront: None,
                arch: None,
            },
            ..FixOptions::default()
        };
        let file = fixed(TRANSPOSE, &forced);
        assert!(!file.changed());
        let tile = outcome(&file, "tile");
        assert_eq!(tile.action, Action::NotApplied);
        assert_eq!(tile.applicability, Some(Applicability::Unsafe));
        assert!(tile
            .reason_text()
            .as_deref()
            .is_some_and(|r| r.contains("128 bytes")));
        assert_eq!(file.fixes[0].applicability, Applicability::Unsafe);
        let unsafe_fixes = FixOptions {
            unsafe_fixes: true,
            ..forced
        };
        let file = fixed(TRANSPOSE, &unsafe_fixes);
        assert!(file
            .output()
            .contains("__shared__ float tile[TILE][TILE + 1];"));
        assert_eq!(outcome(&file, "tile").excess_after, Some(0));
        // A budget that pays for the padded row: the kernel's choice takes it, for no ALU
        // instruction, and it is safe.
        let budget = FixOptions {
            strategy: Strategy {
                forced: None,
                smem_budget: Some(4096 + 128),
                max_alu_per_wavefront: None,
                arch: None,
            },
            ..FixOptions::default()
        };
        let file = fixed(TRANSPOSE, &budget);
        let tile = outcome(&file, "tile");
        assert_eq!(tile.form, Some(FormKind::PaddedDeclaration));
        assert_eq!(tile.applicability, Some(Applicability::Safe));
        assert_eq!(tile.extra_bytes, 128);
    }

    #[test]
    fn arrays_are_left_alone_with_the_reason() {
        let text = "__device__ void put(float *d);\n// bankwise: block=32\n\
            __global__ void k(float *o)\n{\n    \
            __shared__ float fine[32];\n    __shared__ float viaCall[64];\n    \
            __shared__ float lost[64];\n    fine[threadIdx.x] = 1;\n    \
            put(viaCall);\n    \
            lost[2 * threadIdx.x] = 1;\n    o[0] = fine[threadIdx.x] + *(float *)(size_t)lost;\n}\n\
            __device__ void put(float *d)\n{\n    d[2 * threadIdx.x] = 1;\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert!(!file.changed());
        assert_eq!(outcome(&file, "fine").action, Action::Clean);
        let call = outcome(&file, "viaCall");
        assert_eq!(call.action, Action::NotApplied);
        assert_eq!(call.applicability, Some(Applicability::DisplayOnly));
        assert_eq!(
            call.reason_text().as_deref(),
            Some(
                "line 15: `d[2 * threadIdx.x]` is reached through the call at line 9: `put` \
                 is not defined before `k`"
            )
        );
        assert_eq!(call.excess_with_map, Some(0));
        let lost = outcome(&file, "lost");
        assert_eq!(lost.action, Action::LeftAlone);
        assert!(lost
            .reason_text()
            .as_deref()
            .is_some_and(|r| r.starts_with("it escapes")));
    }

    const POINTERS: &str = "// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
        __shared__ float s[64];\n    __shared__ float t[32][32];\n    \
        float *p = s;\n    p[2 * threadIdx.x] = 1;\n    \
        const float *q = s + 1;\n    o[0] = q[2 * threadIdx.x] + s[threadIdx.x];\n    \
        float *row = t[threadIdx.x];\n    row[0] = 1;\n    o[1] = *(row + 1);\n}\n";

    #[test]
    fn accesses_through_pointers_go_through_the_map_and_are_validated() {
        let file = fixed(POINTERS, &unpriced());
        let s = outcome(&file, "s");
        assert_eq!(s.action, Action::Rewritten);
        assert_eq!((s.excess_before, s.excess_after), (Some(2), Some(0)));
        // A pointer to the first element keeps its subscript; any other subscripts the array
        // with the map of the element's offset.
        let texts: Vec<Option<&str>> = s.accesses.iter().map(|a| a.new_text.as_deref()).collect();
        assert_eq!(
            texts,
            vec![
                Some("s[bankwise_s(threadIdx.x)]"),
                Some("p[bankwise_s(2 * threadIdx.x)]"),
                Some("s[bankwise_s(&q[2 * threadIdx.x] - s)]"),
            ]
        );
        assert!(file
            .output()
            .contains("    p[bankwise_s(2 * threadIdx.x)] = 1;\n"));
        assert!(file.output().contains(
            "o[0] = s[bankwise_s(&q[2 * threadIdx.x] - s)] + s[bankwise_s(threadIdx.x)];"
        ));
        let t = outcome(&file, "t");
        assert_eq!(t.action, Action::Rewritten);
        assert_eq!((t.excess_before, t.excess_after), (Some(62), Some(0)));
        assert_eq!(t.form, Some(FormKind::MapFunction));
        assert!(file
            .output()
            .contains("(&t[0][0])[bankwise_t(&row[0] - &t[0][0])] = 1;"));
        assert!(file
            .output()
            .contains("o[1] = (&t[0][0])[bankwise_t((row + 1) - &t[0][0])];"));
        assert!(file
            .output()
            .contains("// bankwise: `t` is stored through bankwise_t() of its row-major index"));
        assert!(!fixed(file.output(), &FixOptions::default()).changed());
    }

    const HELPER: &str = "__device__ void put(float *d, int i)\n{\n    d[2 * i] = 1;\n}\n\n\
        // bankwise: block=32\n__global__ void k(float *o)\n{\n    __shared__ float s[64];\n    \
        put(s, threadIdx.x);\n    put(o, threadIdx.x);\n    put(s + 1, threadIdx.x);\n    \
        o[1] = s[threadIdx.x];\n}\n";

    #[test]
    fn a_device_function_a_pointer_is_passed_to_is_copied_for_the_map() {
        let file = fixed(HELPER, &keeping(256, unpriced()));
        let s = outcome(&file, "s");
        assert_eq!(s.action, Action::Rewritten);
        assert_eq!((s.excess_before, s.excess_after), (Some(2), Some(0)));
        // The original stays for the call with global memory; the copy takes the first
        // element, since `d` is `s + 1` in one of the calls.
        let expected = HELPER
            .replace(
                "// bankwise: block=32\n",
                "// bankwise map for `s` in `k`: bitvector-xor (k1 = 0, k2 = 1, mask = 31)\n\
                 __host__ __device__ __forceinline__ int bankwise_s(int i) { return i ^ ((i >> 1) & 31); }\n\n\
                 // bankwise: a copy of `put` whose accesses to `s` go through bankwise_s()\n\
                 __device__ void put_bankwise_s(float *d, int i, float *bankwise_base)\n{\n    \
                 bankwise_base[bankwise_s(&d[2 * i] - bankwise_base)] = 1;\n}\n\n\
                 // bankwise: block=32\n",
            )
            .replace(
                "{\n    __shared__",
                "{\n#ifdef BANKWISE_CHECKS\n    if (blockDim.x != 32 || blockDim.y != 1 || \
                 blockDim.z != 1) __trap(); // bankwise: the maps below were chosen for blocks \
                 of 32x1x1 (bankwise annotation)\n#endif\n    \
                 // bankwise: `s` is stored through bankwise_s()\n    __shared__",
            )
            .replace("put(s, threadIdx.x);", "put_bankwise_s(s, threadIdx.x, s);")
            .replace("put(s + 1, threadIdx.x);", "put_bankwise_s(s + 1, threadIdx.x, s);")
            .replace("o[1] = s[threadIdx.x];", "o[1] = s[bankwise_s(threadIdx.x)];");
        assert_eq!(file.output(), expected);
        assert!(!fixed(file.output(), &FixOptions::default()).changed());
        // With the first element in every call, the copy keeps its subscripts.
        let first = HELPER.replace("    put(s + 1, threadIdx.x);\n", "");
        let file = fixed(&first, &keeping(256, unpriced()));
        assert!(file.output().contains(
            "__device__ void put_bankwise_s(float *d, int i)\n{\n    d[bankwise_s(2 * i)] = 1;"
        ));
        assert!(file.output().contains("put_bankwise_s(s, threadIdx.x);"));
    }

    #[test]
    fn kernels_that_pass_one_map_to_one_function_share_the_copy() {
        let kernel = |name: &str, offset: bool| {
            format!(
                "// bankwise: block=32\n__global__ void {name}(float *o)\n{{\n    \
                 __shared__ float s[64];\n    put(s, threadIdx.x);\n{}    \
                 o[1] = s[threadIdx.x];\n}}\n",
                if offset {
                    "    put(s + 1, threadIdx.x);\n"
                } else {
                    ""
                }
            )
        };
        let helper = "__device__ void put(float *d, int i)\n{\n    d[2 * i] = 1;\n}\n";
        let text = format!("{helper}{}{}", kernel("k1", false), kernel("k2", false));
        let file = fixed(&text, &keeping(256, unpriced()));
        let actions: Vec<Action> = file.arrays.iter().map(|a| a.action).collect();
        assert_eq!(actions, vec![Action::Rewritten; 2]);
        assert_eq!(file.output().matches("int bankwise_s(int i)").count(), 1);
        assert_eq!(file.output().matches("void put_bankwise_s(").count(), 1);
        assert!(file
            .output()
            .contains("// bankwise map for `s` in `k1`, `k2`: bitvector-xor"));
        assert_eq!(
            file.output()
                .matches("put_bankwise_s(s, threadIdx.x);")
                .count(),
            2
        );
        // `s + 1` in the second kernel needs the first element in the copy: another copy
        // under the same name, so that kernel is left out.
        let text = format!("{helper}{}{}", kernel("k1", false), kernel("k2", true));
        let file = fixed(&text, &unpriced());
        let actions: Vec<Action> = file.arrays.iter().map(|a| a.action).collect();
        assert_eq!(actions, vec![Action::Rewritten, Action::NotApplied]);
        assert_eq!(
            file.arrays[1].reason_text().as_deref(),
            Some(
                "its copies of the functions it is passed to would differ from those of `k1`, \
                 whose names they share"
            )
        );
        assert!(file.output().contains("put(s + 1, threadIdx.x);"));
    }

    #[test]
    fn one_copy_cannot_serve_two_arrays_passed_through_one_call() {
        let text = "__device__ void pair(float *a, float *b)\n{\n    a[2 * threadIdx.x] = 1;\n    \
            b[2 * threadIdx.x] = 1;\n}\n\n// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
            __shared__ float s[64];\n    __shared__ float t[64];\n    pair(s, t);\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert!(!file.changed());
        let s = outcome(&file, "s");
        assert_eq!(s.action, Action::NotApplied);
        assert_eq!(
            s.reason_text().as_deref(),
            Some(
                "`t` is passed through the same call at line 12: one copy of the function \
                 cannot serve two arrays"
            )
        );
    }

    #[test]
    fn a_volatile_pointer_keeps_its_subscript_or_the_array_is_left_alone() {
        let first = POINTERS.replace("float *p = s;", "volatile float *p = s;");
        let file = fixed(&first, &unpriced());
        assert_eq!(outcome(&file, "s").action, Action::Rewritten);
        assert!(file
            .output()
            .contains("    p[bankwise_s(2 * threadIdx.x)] = 1;\n"));
        let offset = POINTERS.replace("const float *q", "volatile const float *q");
        let file = fixed(&offset, &unpriced());
        let s = outcome(&file, "s");
        assert_eq!(s.action, Action::NotApplied);
        assert_eq!(
            s.reason_text().as_deref(),
            Some(
                "line 9: `q[2 * threadIdx.x]` may go through a `volatile` pointer, whose \
                 qualifier a subscript of the array would drop"
            )
        );
    }

    #[test]
    fn dynamic_shared_memory_is_left_alone() {
        let text = "// bankwise: block=64\n__global__ void k(float *o)\n{\n    \
            extern __shared__ float a[];\n    extern __shared__ float b[];\n    \
            a[2 * threadIdx.x] = 1;\n    b[2 * threadIdx.x] = 1;\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert!(outcome(&file, "a")
            .reason_text()
            .as_deref()
            .is_some_and(|r| r.contains("shares the dynamic shared memory with `b`")));
        let one = text
            .replace("    extern __shared__ float b[];\n", "")
            .replace("    b[2 * threadIdx.x] = 1;\n", "");
        let file = fixed(&one, &FixOptions::default());
        assert_eq!(
            outcome(&file, "a").reason_text().as_deref(),
            Some(
                "an `extern __shared__` array whose extent no launch bankwise sees gives (or its \
                 launches disagree): a map is only proven on a known extent"
            )
        );
        // Launches that disagree leave the extent unknown.
        let disagree =
            format!("{one}void h() {{ k<<<1, 64, 512>>>(0); k<<<1, 64, 1024>>>(0); }}\n");
        let file = fixed(&disagree, &FixOptions::default());
        assert_eq!(outcome(&file, "a").action, Action::LeftAlone);
    }

    #[test]
    fn an_extern_array_with_the_extent_of_its_launches_is_rewritten_but_never_padded() {
        let text = "__global__ void k(float *o)\n{\n    extern __shared__ float a[];\n    \
            a[2 * threadIdx.x] = o[0];\n    o[1] = a[threadIdx.x];\n}\n\
            void h() { k<<<1, 64, 128 * sizeof(float)>>>(0); }\n";
        let file = fixed(text, &unpriced());
        let a = outcome(&file, "a");
        assert_eq!(a.action, Action::Rewritten);
        assert_eq!((a.excess_before, a.excess_after), (Some(2), Some(0)));
        assert!(file
            .output()
            .contains("a[bankwise_a(2 * threadIdx.x)] = o[0];"));
        assert!(file.output().contains("    extern __shared__ float a[];\n"));
        assert!(!fixed(file.output(), &FixOptions::default()).changed());
        let padding = FixOptions {
            strategy: Strategy {
                forced: Some(Family::Padding),
                smem_budget: None,
                max_alu_per_wavefront: None,
                arch: None,
            },
            unsafe_fixes: true,
            ..FixOptions::default()
        };
        let file = fixed(text, &padding);
        assert!(!file.changed());
        let a = outcome(&file, "a");
        assert_eq!(a.action, Action::LeftAlone);
        assert!(
            a.reason_text()
                .as_deref()
                .is_some_and(|r| r.contains("padding")),
            "{a:?}"
        );
    }

    #[test]
    fn instances_of_a_template_that_need_different_maps_are_left_alone() {
        let text = "// bankwise: block=32\ntemplate <int S>\n__global__ void k(float *o)\n{\n    \
            __shared__ float s[256];\n    s[S * threadIdx.x] = o[0];\n}\n\
            template __global__ void k<1>(float *);\ntemplate __global__ void k<2>(float *);\n";
        let file = fixed(text, &FixOptions::default());
        assert!(!file.changed());
        let reasons: Vec<Option<String>> = file.arrays.iter().map(|a| a.reason_text()).collect();
        assert_eq!(
            reasons,
            vec![Some("the instances of template `k` need different rewrites".to_string()); 2]
        );
        // One instance alone is rewritten.
        let one = text.replace("template __global__ void k<1>(float *);\n", "");
        let file = fixed(&one, &FixOptions::default());
        assert_eq!(file.arrays[0].action, Action::Rewritten);
        // Instances that agree share one set of edits: one map function, one marker.
        let agree = text.replace("s[S * threadIdx.x]", "s[2 * threadIdx.x + S - S]");
        let file = fixed(&agree, &FixOptions::default());
        let actions: Vec<Action> = file.arrays.iter().map(|a| a.action).collect();
        assert_eq!(actions, vec![Action::Rewritten; 2]);
        assert_eq!(file.output().matches("int bankwise_s(int i)").count(), 1);
        assert_eq!(file.output().matches("// bankwise: `s`").count(), 1);
    }

    #[test]
    fn a_map_for_extents_from_template_parameters_is_unsafe() {
        let text = "// bankwise: block=32\ntemplate <int N>\n__global__ void k(float *o)\n{\n    \
            __shared__ float s[N];\n    s[2 * threadIdx.x] = o[0];\n}\n\
            template __global__ void k<64>(float *);\n";
        let file = fixed(text, &FixOptions::default());
        assert!(!file.changed());
        assert_eq!(
            file.arrays[0].reason_text().as_deref(),
            Some(
                "unsafe: its extents depend on the template parameter `N`: the map is proven \
                 for `k<64>` only; pass --unsafe-fixes to apply it"
            )
        );
        let forced = FixOptions {
            unsafe_fixes: true,
            ..FixOptions::default()
        };
        assert!(fixed(text, &forced)
            .output()
            .contains("s[bankwise_s(2 * threadIdx.x)]"));
    }

    #[test]
    fn a_swizzle_that_reads_only_extents_free_of_template_parameters_is_safe() {
        // The swizzle edits the last subscript from the second: `DEPTH` may be anything.
        let depth = "template <int DEPTH>\n__global__ void k(float *o)\n{\n    \
            __shared__ float t[DEPTH][32][32];\n    \
            t[threadIdx.z][threadIdx.y][threadIdx.x] = o[0];\n    \
            o[1] = t[threadIdx.z][threadIdx.x][threadIdx.y];\n}\n\
            int main() { k<2><<<1, dim3(32, 8, 2)>>>(0); }\n";
        let file = fixed(depth, &FixOptions::default());
        let t = outcome(&file, "t");
        assert_eq!(t.action, Action::Rewritten, "{t:?}");
        assert_eq!(t.applicability, Some(Applicability::Safe));
        // Rows that are the template's own: the XOR reads `ROWS`'s subscript, unsafe.
        let rows = "template <int ROWS>\n__global__ void k(float *o)\n{\n    \
            __shared__ float t[ROWS][32];\n    t[threadIdx.y][threadIdx.x] = o[0];\n    \
            o[1] = t[threadIdx.x][threadIdx.y];\n}\n\
            int main() { k<32><<<1, dim3(32, 32)>>>(0); }\n";
        let file = fixed(rows, &FixOptions::default());
        let t = outcome(&file, "t");
        assert_eq!(t.action, Action::NotApplied, "{t:?}");
        assert!(t
            .reason_text()
            .as_deref()
            .is_some_and(|r| r.contains("template parameter `ROWS`")));
    }

    #[test]
    fn the_arrays_of_one_declaration_get_maps_of_their_own() {
        // `a` is read by columns, `b` by rows of two: each its own map, the declaration kept.
        let text = "// bankwise: block=32x32\n__global__ void k(float *o)\n{\n    \
            __shared__ float a[32][32], b[2048];\n    \
            a[threadIdx.y][threadIdx.x] = o[0];\n    \
            b[64 * threadIdx.y + 2 * threadIdx.x] = o[1];\n    \
            o[2] = a[threadIdx.x][threadIdx.y] + b[64 * threadIdx.y + 2 * threadIdx.x];\n}\n";
        let file = fixed(text, &keeping(4096 + 8192, FixOptions::default()));
        let actions: Vec<(&str, Action)> = file
            .arrays
            .iter()
            .map(|a| (a.array.as_str(), a.action))
            .collect();
        assert_eq!(
            actions,
            [("a", Action::Rewritten), ("b", Action::Rewritten)]
        );
        assert_eq!(outcome(&file, "a").excess_after, Some(0));
        assert_eq!(outcome(&file, "b").excess_after, Some(0));
        assert!(file
            .output()
            .contains("__shared__ float a[32][32], b[2048];"));
    }

    #[test]
    fn map_function_names_do_not_collide() {
        let text = "int bankwise_s;\n// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
            __shared__ float s[64];\n    s[2 * threadIdx.x] = o[0];\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert_eq!(
            outcome(&file, "s").map_function.as_deref(),
            Some("bankwise_k_s")
        );
        assert!(file.output().contains("s[bankwise_k_s(2 * threadIdx.x)]"));
    }

    #[test]
    fn a_strategy_that_cannot_be_validated_is_refused() {
        let rap = FixOptions {
            strategy: Strategy {
                forced: Some(Family::Rap),
                smem_budget: None,
                max_alu_per_wavefront: None,
                arch: None,
            },
            ..FixOptions::default()
        };
        let file = fixed(TRANSPOSE, &rap);
        assert!(!file.changed());
        assert!(outcome(&file, "tile")
            .reason_text()
            .as_deref()
            .is_some_and(|r| r.contains("`__constant__` table")));
    }

    /// Found by the fuzzer (examples/fuzz.rs): the arrays a struct-of-arrays rewrite makes
    /// are not rewritten by a second fix.
    #[test]
    fn the_member_arrays_of_a_struct_of_arrays_are_not_rewritten_again() {
        let text = "struct Rec { float v; int k; };\n// bankwise: block=64x8\n\
            __global__ void k(float *o)\n{\n    __shared__ Rec s[2][33];\n    \
            o[0] = s[threadIdx.y % 2][(threadIdx.x * 2) % 33].v;\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert_eq!(outcome(&file, "s").form, Some(FormKind::StructOfArrays));
        let again = fixed(file.output(), &FixOptions::default());
        assert!(!again.changed(), "{}", again.output());
        assert_eq!(
            outcome(&again, "s_v").reason_text().as_deref(),
            Some("already rewritten by bankwise")
        );
    }

    /// Found by the fuzzer: an array after one split into a struct of arrays is validated
    /// as itself, not as the member array that took its index.
    #[test]
    fn an_array_after_a_split_one_is_validated_as_itself() {
        let text = "struct Rec { float v; int k; };\n#define TILE 64\n// bankwise: block=128x8\n\
            __global__ void k(float *o)\n{\n    __shared__ Rec s0[2][TILE + 1];\n    \
            __shared__ float2 s2[TILE];\n    int tx = threadIdx.x, ty = threadIdx.y;\n    \
            float acc = s0[1][(ty * TILE + tx) % (TILE + 1)].v;\n    \
            { float2 *p = &s2[(tx * tx * 2) % TILE]; p[0] = make_float2(1.0f, 2.0f); }\n    \
            o[tx] = acc;\n}\n";
        let file = fixed(text, &FixOptions::default());
        assert_eq!(outcome(&file, "s0").action, Action::Rewritten);
        assert_eq!(outcome(&file, "s2").action, Action::Rewritten);
    }

    /// Found by the fuzzer: a rewrite that cannot be validated because the file has a
    /// syntax error elsewhere is the user's error to fix first, not an internal error.
    #[test]
    fn a_syntax_error_elsewhere_is_not_an_internal_error() {
        let text = format!(
            "{TRANSPOSE}\n__global__ void broken(float *o)\n{{\n    o[0] = 1;\n    \
            for (int i = 0; i < 4; i++) {{\n        i<= 1) {{\n    }}\n}}\n"
        );
        match fix_text(
            Path::new("t.cu"),
            &text,
            &FixOptions::default(),
            &ConfigBlocks::default(),
        ) {
            Ok(_) | Err(FixError::NotValidated { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
}
