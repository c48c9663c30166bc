//! The project headers an input includes that define kernels with shared arrays: fixed
//! with the input's launches, and compiled from the private directory, where the input's
//! copy finds them before the originals.
//!
//! A header's copy is compiled only where it is the one file of that name the translation
//! unit reads: included with quotes by the input alone (no other header of the unit
//! includes it, where an include guard or `#pragma once` could let the original in first),
//! found by the analysis where nvcc finds it, and with every quoted include of its own
//! finding, from the copy, the file the original finds.
use super::rewrite_input;
use crate::parse::{self, CompiledInclude};
use crate::pipeline::{self, FileFix, FixOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One header fixed for an input, to be compiled from its copy.
pub(super) struct HeaderFix {
    /// The include's name as the input writes it: where the copy goes, beside the input's.
    pub name: String,
    /// The header as nvcc finds it (a dependency file names this path).
    pub path: PathBuf,
    pub fixed: FileFix,
}

/// What became of one header with shared arrays that an input includes.
pub(super) enum HeaderOutcome {
    Fixed(HeaderFix),
    /// Analysed, and nothing to rewrite.
    Unchanged,
    /// Compiled as written, with why (its path as nvcc finds it).
    NotCopied(PathBuf, NotCopied),
    /// bankwise could not fix it (why, starting with the header's name).
    Failed(PathBuf, String),
}

/// Why a header with a fix is compiled as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NotCopied {
    #[error("the input includes it more than once")]
    IncludedTwice,
    #[error(
        "{0} includes it too: the original could be compiled in place of a copy, so neither is"
    )]
    IncludedElsewhere(String),
    #[error("bankwise's analysis finds another file for it than nvcc does")]
    FoundElsewhere,
    #[error("its include \"{0}\" would find another file from a copy")]
    IncludeMoves(String),
}

/// The headers `input` (its text `text`) includes with quotes, in the project, that declare
/// shared memory, each fixed with the input's launches or left as written with a reason.
pub(super) fn fix_included(input: &Path, text: &str, options: &FixOptions) -> Vec<HeaderOutcome> {
    let search = &options.analysis.include_dirs;
    let direct = parse::compiled_quoted_includes(input, text, search);
    let root = pipeline::project_root(input);
    let canonical = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.into());
    let mut candidates: Vec<(&CompiledInclude, PathBuf, String)> = Vec::new();
    for include in &direct {
        let Some(found) = &include.found else {
            continue;
        };
        let real = canonical(found);
        if !real.starts_with(&root) || candidates.iter().any(|(_, r, _)| *r == real) {
            continue;
        }
        let Ok(header_text) = parse::read_source(found, options.analysis.max_file_bytes) else {
            continue;
        };
        if header_text.contains("__shared__") {
            candidates.push((include, real, header_text));
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    let unit = parse::quoted_headers(input, text, search);
    let input_dir = std::path::absolute(input)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut options = options.clone();
    options.analysis.launches_elsewhere = Arc::new(pipeline::launches_in(
        &[input.to_path_buf()],
        &options.analysis,
    ));
    candidates
        .into_iter()
        .map(|(include, real, header_text)| {
            let found = include.found.clone().unwrap_or_default();
            let copied = || -> Result<(), NotCopied> {
                let times = direct
                    .iter()
                    .filter(|d| d.found.as_deref().map(canonical) == Some(real.clone()))
                    .count();
                if times > 1 {
                    return Err(NotCopied::IncludedTwice);
                }
                if !unit.contains(&real) {
                    return Err(NotCopied::FoundElsewhere);
                }
                for other in unit.iter().filter(|h| **h != real) {
                    let Ok(other_text) = parse::read_source(other, options.analysis.max_file_bytes)
                    else {
                        continue;
                    };
                    let includes_it = parse::compiled_quoted_includes(other, &other_text, search)
                        .iter()
                        .any(|i| i.found.as_deref().map(canonical) == Some(real.clone()));
                    if includes_it {
                        return Err(NotCopied::IncludedElsewhere(other.display().to_string()));
                    }
                }
                // From the copy, a quoted include looks beside the input's copy (nothing of
                // that name), then in the input's directory (`-iquote`), then in `search`.
                let from_copy = input_dir.join(include.name.replace('/', "_"));
                let here = parse::compiled_quoted_includes(&found, &header_text, search);
                let there = parse::compiled_quoted_includes(&from_copy, &header_text, search);
                for (a, b) in here.iter().zip(&there) {
                    if a.found.as_deref().map(canonical) != b.found.as_deref().map(canonical) {
                        return Err(NotCopied::IncludeMoves(a.name.clone()));
                    }
                }
                Ok(())
            };
            match rewrite_input(&found, &options) {
                Err(why) => HeaderOutcome::Failed(found, why),
                Ok(fixed) if !fixed.changed() => HeaderOutcome::Unchanged,
                Ok(fixed) => match copied() {
                    Ok(()) => HeaderOutcome::Fixed(HeaderFix {
                        name: include.name.clone(),
                        path: found,
                        fixed,
                    }),
                    Err(why) => HeaderOutcome::NotCopied(found, why),
                },
            }
        })
        .collect()
}

/// `path` with its `.` and `..` steps taken lexically (the copies' directories hold no
/// links).
pub(super) fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_steps_are_taken_lexically() {
        assert_eq!(
            lexically_normal(Path::new("/t/0/d/d/../include/./tiles.cuh")),
            PathBuf::from("/t/0/d/include/tiles.cuh")
        );
    }
}
