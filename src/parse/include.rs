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
    let mut prelude = Prelude::default();
    let mut notes = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    // Depth-first, each header's own includes before it: an explicit stack, no recursion.
    let mut pending: Vec<(PathBuf, String, usize, bool)> = Vec::new();
    let push_includes =
        |pending: &mut Vec<(PathBuf, String, usize, bool)>, from: &Path, text: &str, depth| {
            let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
            for (line, name) in quoted_includes(text).into_iter().rev() {
                let found = std::iter::once(dir.join(&name))
                    .chain(include_dirs.iter().map(|d| d.join(&name)))
                    .find(|candidate| candidate.is_file());
                match found {
                    Some(header) => pending.push((header, name, depth, false)),
                    None if depth == 0 => pending.push((PathBuf::new(), name, line, true)),
                    None => {}
                }
            }
        };
    push_includes(&mut pending, path, text, 0);
    while let Some((header, name, depth_or_line, missing)) = pending.pop() {
        if missing {
            notes.push(Diagnostic {
                severity: Severity::Note,
                at: Location {
                    line: depth_or_line,
                    col: 1,
                },
                message: format!(
                    "header \"{name}\" not found beside the file or in the include directories \
                     (-I): its macros and types are unknown"
                ),
            });
            continue;
        }
        let canonical = std::fs::canonicalize(&header).unwrap_or_else(|_| header.clone());
        if seen.contains(&canonical) || depth_or_line >= MAX_DEPTH {
            continue;
        }
        seen.push(canonical);
        let Ok(header_text) = read_source(&header, MAX_HEADER_BYTES) else {
            continue;
        };
        let env = super::extract::extract(&header_text, defines).constants;
        prelude.add(&env);
        push_includes(&mut pending, &header, &header_text, depth_or_line + 1);
    }
    (prelude, notes)
}
