//! Quoted includes (`#include "tile.cuh"`): the headers a file includes, found beside the
//! including file and then in the include directories (`-I`), read and extracted on their
//! own, give the file their macros and types, as the preprocessor would have. Nested includes
//! are followed to a bounded depth, each header once.
use super::consts::ConstEnv;
use super::model::{Diagnostic, Location, Severity};
use super::source::read_source;
use super::types::TypeTable;
use std::path::{Path, PathBuf};

/// Headers included inside headers beyond which bankwise stops following.
const MAX_DEPTH: usize = 16;

/// Headers larger than this are not read (generated tables, amalgamations).
const MAX_HEADER_BYTES: u64 = 4 * 1024 * 1024;

/// What a file's headers define: their macros, in inclusion order, and their types.
#[derive(Debug, Default)]
pub struct Prelude {
    pub macros: Vec<(String, Option<Vec<String>>, String)>,
    pub types: TypeTable,
}

impl Prelude {
    fn add(&mut self, env: &ConstEnv) {
        for (name, mac) in env.file_macros() {
            self.macros
                .push((name.to_string(), mac.params.clone(), mac.body.clone()));
        }
        self.types.extend(&env.types);
    }

    /// Gives `env` these definitions beneath its own (the file's come later and the first
    /// definition of a name wins, as with include guards).
    pub fn seed(&self, env: &mut ConstEnv) {
        for (name, params, body) in &self.macros {
            env.define_macro(name, super::consts::Macro::new(params.clone(), body, 0));
        }
        env.types.extend(&self.types);
    }
}

/// The quoted includes of `text`, in order, as written between the quotes.
pub fn quoted_includes(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let name = rest.strip_prefix('"')?.split('"').next()?;
            (!name.is_empty()).then(|| (i + 1, name.to_string()))
        })
        .collect()
}

/// The prelude of the file at `path` whose text is `text`, and notes for the quoted headers
/// that could not be read.
pub fn prelude(
    path: &Path,
    text: &str,
    include_dirs: &[PathBuf],
    defines: &[String],
) -> (Prelude, Vec<Diagnostic>) {
    let (found, missing) = resolve(path, text, include_dirs);
    let notes = missing
        .into_iter()
        .map(|(line, name)| Diagnostic {
            severity: Severity::Note,
            at: Location { line, col: 1 },
            message: format!(
                "header \"{name}\" not found beside the file or in the include directories \
                 (-I): its macros and types are unknown"
            ),
        })
        .collect();
    let mut prelude = Prelude::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    // Depth-first in include order, with an explicit stack: no recursion.
    let mut pending: Vec<(PathBuf, usize)> = found.into_iter().rev().map(|h| (h, 0)).collect();
    while let Some((header, depth)) = pending.pop() {
        let canonical = std::fs::canonicalize(&header).unwrap_or_else(|_| header.clone());
        if seen.contains(&canonical) || depth >= MAX_DEPTH {
            continue;
        }
        seen.push(canonical);
        let Ok(header_text) = read_source(&header, MAX_HEADER_BYTES) else {
            continue;
        };
        let env = super::extract::extract(&header_text, defines).constants;
        prelude.add(&env);
        let (nested, _) = resolve(&header, &header_text, include_dirs);
        pending.extend(nested.into_iter().rev().map(|h| (h, depth + 1)));
    }
    (prelude, notes)
}

/// The headers that `text` (of the file at `from`) includes with quotes and that exist,
/// beside it or in `include_dirs`, and the line and name of those that do not.
fn resolve(
    from: &Path,
    text: &str,
    include_dirs: &[PathBuf],
) -> (Vec<PathBuf>, Vec<(usize, String)>) {
    let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (line, name) in quoted_includes(text) {
        let header = std::iter::once(dir.join(&name))
            .chain(include_dirs.iter().map(|d| d.join(&name)))
            .find(|candidate| candidate.is_file());
        match header {
            Some(header) => found.push(header),
            None => missing.push((line, name)),
        }
    }
    (found, missing)
}
