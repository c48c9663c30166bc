//! One file through the pipeline stages that exist so far: read → parse → block shapes.
use crate::block::{self, CommandLineBlocks, ConfigBlocks, Resolution};
use crate::parse::{
    self, Diagnostic, Function, FunctionKind, ParsedFile, Severity, SharedArray, SourceError,
};
use std::path::{Path, PathBuf};

/// What the user asked for, shared by every file.
#[derive(Debug, Clone)]
pub struct Options {
    pub defines: Vec<String>,
    pub blocks: CommandLineBlocks,
    pub max_file_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            defines: Vec::new(),
            blocks: CommandLineBlocks::default(),
            max_file_bytes: parse::MAX_FILE_BYTES,
        }
    }
}

#[derive(Debug)]
pub struct AnalysedFile {
    pub path: PathBuf,
    pub parsed: ParsedFile,
    /// Block shape of each function in `parsed.functions`, same order.
    pub blocks: Vec<Resolution>,
    /// Parser diagnostics plus the block-shape ones, sorted by location.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{0}")]
    Config(String),
}

pub fn analyse_file(path: &Path, options: &Options) -> Result<AnalysedFile, AnalysisError> {
    let text = parse::read_source(path, options.max_file_bytes)?;
    let config = ConfigBlocks::load(path.parent().unwrap_or(Path::new(".")))
        .map_err(AnalysisError::Config)?;
    Ok(analyse_text(path, &text, options, &config))
}

pub fn analyse_text(
    path: &Path,
    text: &str,
    options: &Options,
    config: &ConfigBlocks,
) -> AnalysedFile {
    let parsed = parse::analyse_source(text, &options.defines);
    let (blocks, conflicts) =
        block::resolve_all(&parsed.functions, &parsed.launches, &options.blocks, config);
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
                message: why.clone(),
            });
        }
    }
    diagnostics.sort_by_key(|d| d.at);
    AnalysedFile {
        path: path.to_path_buf(),
        parsed,
        blocks,
        diagnostics,
    }
}

/// Kernels are always reported; device functions only when they use shared memory.
pub fn is_reported(function: &Function) -> bool {
    function.kind == FunctionKind::Kernel || !function.arrays.is_empty()
}

impl AnalysedFile {
    /// The reported functions with their block shapes.
    pub fn reported(&self) -> impl Iterator<Item = (&Function, &Resolution)> {
        self.parsed
            .functions
            .iter()
            .zip(&self.blocks)
            .filter(|(f, _)| is_reported(f))
    }

    /// Whether the file yielded nothing: syntax errors and no function analysed.
    pub fn failed(&self) -> bool {
        !self.parsed.syntax_errors.is_empty()
            && self
                .parsed
                .functions
                .iter()
                .all(|f| f.syntax_error.is_some())
    }
}

/// Why an array must be left as it is, if it must: the first escape, an unknown block shape,
/// an unknown element size or extent.
pub fn not_rewritable_reason(array: &SharedArray, block: &Resolution) -> Option<String> {
    if let Some(reason) = array.reason() {
        return Some(reason);
    }
    if let Err(why) = block {
        return Some(why.clone());
    }
    if array.elem_bytes.is_none() {
        return Some(format!(
            "element type `{}` has no known size",
            array.elem_type
        ));
    }
    let unknown_extent = array
        .dims
        .iter()
        .zip(&array.dim_texts)
        .enumerate()
        .find(|(i, (dim, _))| dim.is_none() && !(array.is_extern && *i == 0));
    unknown_extent.map(|(_, (_, text))| format!("extent `{text}` is unknown"))
}
