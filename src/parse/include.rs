//! Includes (`#include "tile.cuh"`, `#include <lib/tile.hpp>`): the headers a file includes,
//! found beside the including file, in the include directories (`-I`), or above the file in
//! its project, read and extracted on their own, give the file their macros and types, as
//! the preprocessor would have. Nested includes are followed to a bounded depth and count,
//! each header once.
use super::consts::{ConstEnv, TemplateRecord};
use super::model::{Diagnostic, Location, Severity};
use super::source::read_source;
use super::types::TypeTable;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// Headers included inside headers beyond which bankwise stops following.
const MAX_DEPTH: usize = 16;

/// Directories above a file where its includes are looked for, at most.
const MAX_ANCESTORS: usize = 8;

/// Headers read for one file, at most: a library's umbrella header can pull in hundreds.
const MAX_HEADERS: usize = 256;

/// Headers larger than this are not read (generated tables, amalgamations).
const MAX_HEADER_BYTES: u64 = 4 * 1024 * 1024;

/// What a file's headers define: their macros, in inclusion order, and their types.
#[derive(Debug, Default)]
pub struct Prelude {
    pub macros: Vec<(String, Option<Vec<String>>, String)>,
    pub types: TypeTable,
    /// Integer constants (`constexpr int kTile = 32;`, in a namespace also by qualified name).
    pub values: Vec<(String, i64)>,
    pub records: Vec<(String, TemplateRecord)>,
    /// [`ConstEnv::ambiguous`].
    pub ambiguous: Vec<(String, String)>,
}

impl Prelude {
    fn add(&mut self, env: &ConstEnv) {
        for (name, mac) in env.file_macros() {
            self.macros
                .push((name.to_string(), mac.params.clone(), mac.body.clone()));
        }
        self.types.extend(&env.types);
        self.values
            .extend(env.values().map(|(name, value)| (name.to_string(), value)));
        self.records.extend(
            env.records()
                .map(|(name, record)| (name.to_string(), record.clone())),
        );
        self.ambiguous
            .extend(env.ambiguous.iter().map(|(m, d)| (m.clone(), d.clone())));
    }

    /// Adds `other`'s definitions after these, as [`Prelude::add`] adds a header's.
    fn append(&mut self, other: &Prelude) {
        self.macros.extend(other.macros.iter().cloned());
        self.types.extend(&other.types);
        self.values.extend(other.values.iter().cloned());
        self.records.extend(other.records.iter().cloned());
        self.ambiguous.extend(other.ambiguous.iter().cloned());
    }

    /// Gives `env` these definitions beneath its own (the file's come later and the first
    /// definition of a name wins, as with include guards).
    pub fn seed(&self, env: &mut ConstEnv) {
        for (name, params, body) in &self.macros {
            env.define_macro(name, super::consts::Macro::new(params.clone(), body, 0));
        }
        env.types.extend(&self.types);
        for (name, value) in &self.values {
            env.define_value(name, *value);
        }
        for (name, record) in &self.records {
            env.define_record(name, record.clone());
        }
        for (name, directive) in &self.ambiguous {
            env.ambiguous
                .entry(name.clone())
                .or_insert_with(|| directive.clone());
        }
    }
}

/// An `#include` line: its line number, the name as written, and whether it was quoted
/// (`"x.cuh"`) rather than angled (`<raft/core/x.hpp>`).
struct Include {
    line: usize,
    name: String,
    quoted: bool,
}

/// One header as every file that includes it sees it: its own definitions and its includes.
struct Header {
    prelude: Prelude,
    includes: Vec<Include>,
}

/// Which header, by its text, under which definitions: a header changed on disk (even
/// within one tick of its modification time) is extracted again.
type HeaderKey = (PathBuf, usize, u64, Vec<String>);

/// Each header read in this run, extracted once: 3,500 files that include one 100 KB header
/// would otherwise parse it 3,500 times. Bounded by the headers of the project.
static HEADERS: LazyLock<Mutex<HashMap<HeaderKey, Arc<Header>>>> = LazyLock::new(Default::default);

/// The header at `path` (its links resolved: `canonical`) under `defines`, read (reading is
/// cheap beside the parse) and extracted, or taken from [`HEADERS`] when its text was
/// extracted before; `None` when it cannot be read.
fn header(path: &Path, canonical: &Path, defines: &[String]) -> Option<Arc<Header>> {
    use std::hash::{Hash, Hasher};
    let text = read_source(path, MAX_HEADER_BYTES).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let key: HeaderKey = (
        canonical.to_path_buf(),
        text.len(),
        hasher.finish(),
        defines.to_vec(),
    );
    // A poisoned lock (a panic elsewhere) only costs the cache.
    if let Some(found) = HEADERS.lock().ok().and_then(|h| h.get(&key).cloned()) {
        return Some(found);
    }
    let mut prelude = Prelude::default();
    prelude.add(&super::extract::extract(&text, defines).constants);
    let header = Arc::new(Header {
        prelude,
        includes: includes(&text),
    });
    if let Ok(mut headers) = HEADERS.lock() {
        headers.insert(key, Arc::clone(&header));
    }
    Some(header)
}

/// The includes of `text`, in order.
fn includes(text: &str) -> Vec<Include> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let (name, quoted) = match rest.chars().next()? {
                '"' => (rest[1..].split('"').next()?, true),
                '<' => (rest[1..].split('>').next()?, false),
                _ => return None,
            };
            (!name.is_empty()).then(|| Include {
                line: i + 1,
                name: name.to_string(),
                quoted,
            })
        })
        .collect()
}

/// Where a file's headers come from besides its own `#include` lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeaderSearch<'a> {
    /// Where includes are looked for after the including file's directory (`-I`).
    pub include_dirs: &'a [PathBuf],
    /// Files read before the file itself (`-include`).
    pub pre_includes: &'a [PathBuf],
}

/// The prelude of the file at `path` whose text is `text`, notes for the quoted headers and
/// pre-included files that could not be read, and the headers read (their links resolved).
pub fn prelude(
    path: &Path,
    text: &str,
    search: HeaderSearch,
    defines: &[String],
) -> (Prelude, Vec<Diagnostic>, Vec<PathBuf>) {
    let include_dirs = search.include_dirs;
    let (found, missing) = resolve(path, &includes(text), include_dirs);
    let mut notes: Vec<Diagnostic> = search
        .pre_includes
        .iter()
        .filter(|file| !file.is_file())
        .map(|file| Diagnostic {
            severity: Severity::Note,
            at: Location { line: 1, col: 1 },
            message: format!(
                "pre-included file {} (-include) not found: its macros and types are unknown",
                file.display()
            ),
        })
        .collect();
    notes.extend(missing.into_iter().map(|(line, name)| Diagnostic {
        severity: Severity::Note,
        at: Location { line, col: 1 },
        message: format!(
            "header \"{name}\" not found beside the file or in the include directories \
             (-I): its macros and types are unknown"
        ),
    }));
    let mut prelude = Prelude::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    // Depth-first in include order, the pre-included files first, with an explicit stack:
    // no recursion.
    let mut pending: Vec<(PathBuf, usize)> = search
        .pre_includes
        .iter()
        .filter(|file| file.is_file())
        .cloned()
        .chain(found)
        .rev()
        .map(|h| (h, 0))
        .collect();
    while let Some((header, depth)) = pending.pop() {
        let canonical = std::fs::canonicalize(&header).unwrap_or_else(|_| header.clone());
        if seen.contains(&canonical) || depth >= MAX_DEPTH || seen.len() >= MAX_HEADERS {
            continue;
        }
        let read = self::header(&header, &canonical, defines);
        seen.push(canonical);
        let Some(read) = read else {
            continue;
        };
        prelude.append(&read.prelude);
        let (nested, _) = resolve(&header, &read.includes, include_dirs);
        pending.extend(nested.into_iter().rev().map(|h| (h, depth + 1)));
    }
    (prelude, notes, seen)
}

/// The headers the file at `path` (its text `text`) includes with quotes, and those they
/// include so, found as [`prelude`] finds them; each once, at most [`MAX_HEADERS`].
pub fn quoted_headers(path: &Path, text: &str, include_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let quoted =
        |text: &str| -> Vec<Include> { includes(text).into_iter().filter(|i| i.quoted).collect() };
    let mut found: Vec<PathBuf> = Vec::new();
    let mut pending: Vec<(PathBuf, usize)> = resolve(path, &quoted(text), include_dirs)
        .0
        .into_iter()
        .map(|h| (h, 0))
        .collect();
    while let Some((header, depth)) = pending.pop() {
        let canonical = std::fs::canonicalize(&header).unwrap_or(header);
        if found.contains(&canonical) || depth >= MAX_DEPTH || found.len() >= MAX_HEADERS {
            continue;
        }
        if let Ok(text) = read_source(&canonical, MAX_HEADER_BYTES) {
            let nested = resolve(&canonical, &quoted(&text), include_dirs).0;
            pending.extend(nested.into_iter().map(|h| (h, depth + 1)));
        }
        found.push(canonical);
    }
    found
}

/// A quoted `#include` line of a file as a compiler resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInclude {
    /// The name as written between the quotes.
    pub name: String,
    /// The file found, as joined: `None` when none is.
    pub found: Option<PathBuf>,
}

/// The quoted includes of `text` (the file at `from`) as the compiler resolves them: beside
/// the file, then in `search` in order, and nowhere else (none of [`resolve`]'s guesses).
pub fn compiled_quoted_includes(
    from: &Path,
    text: &str,
    search: &[PathBuf],
) -> Vec<CompiledInclude> {
    let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
    includes(text)
        .into_iter()
        .filter(|i| i.quoted)
        .map(|include| CompiledInclude {
            found: std::iter::once(&dir)
                .chain(search)
                .map(|d| d.join(&include.name))
                .find(|candidate| candidate.is_file()),
            name: include.name,
        })
        .collect()
}

/// The headers that `includes` (of the file at `from`) name and that exist, and the line
/// and name of the quoted ones that do not (an angled one not found is a system or
/// toolkit header: nothing to say). A quoted header is looked for beside the file, then in
/// `include_dirs` (`-I`, or the compile database's), then in the directories above the file
/// up to its repository's root and their `include/` and `includes/`; an angled one in the
/// last two. The last is what a project's `-I include/` usually gives (`<raft/core/x.hpp>`
/// from `cpp/include/raft/linalg/y.cuh`, DeepSpeed's `"custom_cuda_layers.h"` in
/// `csrc/includes/` from `csrc/transformer/`), so headers resolve with no flags.
fn resolve(
    from: &Path,
    includes: &[Include],
    include_dirs: &[PathBuf],
) -> (Vec<PathBuf>, Vec<(usize, String)>) {
    let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
    // Absolute, so that the directories above are the same however the path was written
    // (`src/main.cu` has no parent above `src` as written; `./src/main.cu` has `.`).
    let above = project_ancestors(&std::path::absolute(&dir).unwrap_or_else(|_| dir.clone()));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for include in includes {
        let beside = include.quoted.then(|| dir.join(&include.name));
        let header = beside
            .into_iter()
            .chain(include_dirs.iter().map(|d| d.join(&include.name)))
            .chain(above.iter().flat_map(|d| {
                ["", "include", "includes"].map(|sub| d.join(sub).join(&include.name))
            }))
            .find(|candidate| candidate.is_file());
        match header {
            Some(header) => found.push(header),
            None if include.quoted => missing.push((include.line, include.name.clone())),
            None => {}
        }
    }
    (found, missing)
}

/// The directories [`resolve`] looks in for a header of the file `from` after its `-I`s,
/// nearest first, those that exist: each directory above it up to its repository's root,
/// and their `include/` and `includes/`. The compiled view gives them to nvcc, so that the
/// file compiles as the analysis read it.
pub fn project_include_dirs(from: &Path) -> Vec<PathBuf> {
    let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
    let above = project_ancestors(&std::path::absolute(&dir).unwrap_or_else(|_| dir.clone()));
    above
        .iter()
        .flat_map(|d| ["", "include", "includes"].map(|sub| d.join(sub)))
        .filter(|d| d.is_dir())
        .collect()
}

/// Directories above `dir`, nearest first, up to the first that holds `.git` (the
/// repository's root) and at most [`MAX_ANCESTORS`] of them.
fn project_ancestors(dir: &Path) -> Vec<PathBuf> {
    let mut above = Vec::new();
    if dir.join(".git").exists() {
        return above;
    }
    for ancestor in dir.ancestors().skip(1).take(MAX_ANCESTORS) {
        if ancestor.as_os_str().is_empty() {
            break;
        }
        above.push(ancestor.to_path_buf());
        if ancestor.join(".git").exists() {
            break;
        }
    }
    above
}

#[cfg(test)]
mod tests {
    /// The body of macro `name` in the prelude of `file`.
    fn macro_body(file: &std::path::Path, name: &str) -> Option<String> {
        let text = std::fs::read_to_string(file).expect("readable");
        let (prelude, _, _) = super::prelude(file, &text, super::HeaderSearch::default(), &[]);
        prelude
            .macros
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, body)| body.clone())
    }

    #[test]
    fn a_header_is_extracted_once_and_again_when_its_text_changes() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let header = dir.path().join("tile.cuh");
        std::fs::write(&header, "#define TILE 4\n").expect("written");
        let (a, b) = (dir.path().join("a.cu"), dir.path().join("b.cu"));
        for file in [&a, &b] {
            std::fs::write(file, "#include \"tile.cuh\"\n").expect("written");
        }
        assert_eq!(macro_body(&a, "TILE").as_deref(), Some("4"));
        assert_eq!(macro_body(&b, "TILE").as_deref(), Some("4"));
        // The same size, maybe within the same tick of the clock: still read again.
        std::fs::write(&header, "#define TILE 8\n").expect("written");
        assert_eq!(macro_body(&a, "TILE").as_deref(), Some("8"));
    }
}
