//! `compile_commands.json`, the compilation database CMake (`CMAKE_EXPORT_COMPILE_COMMANDS`),
//! Bear and Ninja write and clang tools read: for each file, the `-I`, `-isystem` and `-D`
//! it is compiled with, so that `bankwise check --compile-commands build/` reads a file's
//! headers and macros as its build does.
use crate::command_line::{
    self, expand_response_files, split_command, CommandLineError, CompileFlags, Dialect,
};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The database: flags by the canonical path of each file it lists.
#[derive(Debug, Clone, Default)]
pub struct CompileDb {
    entries: HashMap<PathBuf, CompileFlags>,
    /// The files in the order the database lists them.
    files: Vec<PathBuf>,
}

/// One entry as the JSON writes it: `arguments` (a list) or `command` (one shell string).
#[derive(Deserialize)]
struct Entry {
    directory: PathBuf,
    file: PathBuf,
    #[serde(default)]
    arguments: Option<Vec<String>>,
    #[serde(default)]
    command: Option<String>,
}

/// Why a compilation database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CompileDbError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a compilation database: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: entry {index} has neither `arguments` nor `command`")]
    NoCommand { path: String, index: usize },
    #[error("{path}: entry {index}: {source}")]
    CommandLine {
        path: String,
        index: usize,
        source: CommandLineError,
    },
}

impl CompileDb {
    /// Reads `path`: a `compile_commands.json`, or a directory holding one.
    pub fn read(path: &Path) -> Result<Self, CompileDbError> {
        let file = if path.is_dir() {
            path.join("compile_commands.json")
        } else {
            path.to_path_buf()
        };
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|source| CompileDbError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, &shown)
    }

    /// The database in `text` (`shown` names it in errors).
    pub fn parse(text: &str, shown: &str) -> Result<Self, CompileDbError> {
        let entries: Vec<Entry> =
            serde_json::from_str(text).map_err(|source| CompileDbError::Parse {
                path: shown.to_string(),
                source,
            })?;
        let mut db = CompileDb::default();
        for (index, entry) in entries.into_iter().enumerate() {
            let arguments = match (entry.arguments, entry.command) {
                (Some(arguments), _) => arguments,
                (None, Some(command)) => split_command(&command),
                (None, None) => {
                    return Err(CompileDbError::NoCommand {
                        path: shown.to_string(),
                        index,
                    })
                }
            };
            let file = canonical(&entry.directory.join(&entry.file));
            let flags = flags_of(&arguments, &entry.directory).map_err(|source| {
                CompileDbError::CommandLine {
                    path: shown.to_string(),
                    index,
                    source,
                }
            })?;
            if !db.entries.contains_key(&file) {
                db.files.push(file.clone());
            }
            // A file compiled twice (two configurations): the first entry, as clangd does.
            db.entries.entry(file).or_insert(flags);
        }
        Ok(db)
    }

    /// The flags `path` is compiled with, if the database lists it.
    pub fn flags_for(&self, path: &Path) -> Option<&CompileFlags> {
        self.entries.get(&canonical(path))
    }

    /// The CUDA files the database lists (`.cu`, `.cuh`), in its order.
    pub fn cuda_files(&self) -> impl Iterator<Item = &PathBuf> {
        self.files
            .iter()
            .filter(|f| matches!(f.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")))
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What `arguments` (the compiler first, run in `directory`) give the source: response
/// files read, relative paths taken from `directory`.
fn flags_of(arguments: &[String], directory: &Path) -> Result<CompileFlags, CommandLineError> {
    let dialect = Dialect::of(arguments.first().map_or("", String::as_str));
    let rest = arguments.get(1..).unwrap_or_default();
    let expanded = expand_response_files(command_line::given(rest), dialect, directory)?;
    let texts: Vec<String> = expanded.into_iter().map(|a| a.text).collect();
    Ok(command_line::compile_flags(&texts, dialect, directory))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_arguments_give_includes_and_defines() {
        let db = CompileDb::parse(
            r#"[
  {"directory": "/build", "file": "/src/a.cu",
   "command": "/usr/bin/nvcc -I../include -isystem /opt/cub -DTILE=32 -D \"NAME=a b\" -c /src/a.cu"},
  {"directory": "/build", "file": "b.cu",
   "arguments": ["nvcc", "-I", "inc", "--define-macro=ROWS=8", "-x", "cu", "b.cu"]},
  {"directory": "/build", "file": "/src/a.cu", "command": "nvcc -DOTHER -c /src/a.cu"}
]"#,
            "compile_commands.json",
        )
        .expect("a database");
        let a = db.flags_for(Path::new("/src/a.cu")).expect("listed");
        assert_eq!(
            a.include_dirs,
            [
                PathBuf::from("/build/../include"),
                PathBuf::from("/opt/cub")
            ]
        );
        assert_eq!(a.defines, ["TILE=32", "NAME=a b"]);
        let b = db.flags_for(Path::new("/build/b.cu")).expect("listed");
        assert_eq!(b.include_dirs, [PathBuf::from("/build/inc")]);
        assert_eq!(b.defines, ["ROWS=8"]);
        assert_eq!(db.cuda_files().count(), 2);
    }

    #[test]
    fn what_is_not_a_database_is_said() {
        let error = CompileDb::parse("{}", "x.json").expect_err("not a list");
        assert!(error
            .to_string()
            .starts_with("x.json: not a compilation database"));
        let error = CompileDb::parse(r#"[{"directory": "/", "file": "a.cu"}]"#, "x.json")
            .expect_err("no command");
        assert_eq!(
            error.to_string(),
            "x.json: entry 0 has neither `arguments` nor `command`"
        );
    }
}
