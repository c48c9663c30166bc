//! The compiled view's results, kept by content: a rebuild through `bankwise nvcc` or a
//! second `fix` pays for no compile it paid for before. The key holds everything the
//! compile reads that bankwise knows of (the text, the flags, the compiler and its size and
//! time, bankwise's version), not the headers it includes: a stale entry can only change
//! which rewrites are judged worth it, never what a program computes.

use super::CompileError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// Where entries are kept: `$BANKWISE_CACHE_DIR` (set and empty: nowhere), else
/// `$XDG_CACHE_HOME/bankwise/compiled`, else `~/.cache/bankwise/compiled`.
pub(crate) fn dir() -> Option<PathBuf> {
    match std::env::var_os("BANKWISE_CACHE_DIR") {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|base| base.join("bankwise").join("compiled")),
    }
}

/// A key of 128 bits over `parts`, each length-prefixed so that no two lists collide by
/// concatenation.
pub(crate) fn key(parts: &[&[u8]]) -> String {
    let half = |seed: u8| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        seed.hash(&mut hasher);
        for part in parts {
            part.len().hash(&mut hasher);
            part.hash(&mut hasher);
        }
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(0), half(1))
}

/// What one compile gave: the kernels' code, or the PTX listing.
#[derive(Serialize, Deserialize)]
enum Entry<T> {
    Kept(T),
    /// nvcc rejected the text (its first lines).
    Rejected {
        program: String,
        message: String,
    },
}

/// The entry under `key` in `dir`, if there is a readable one.
pub(crate) fn get<T: DeserializeOwned>(dir: &Path, key: &str) -> Option<Result<T, CompileError>> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    match serde_json::from_str(&text).ok()? {
        Entry::Kept(kept) => Some(Ok(kept)),
        Entry::Rejected { program, message } => {
            Some(Err(CompileError::Failed { program, message }))
        }
    }
}

/// Keeps `result` under `key` in `dir`, written whole or not at all; an error that is not
/// nvcc's verdict on the text (nvcc could not run) is not kept. A cache that cannot be
/// written is no error: the next run compiles again.
pub(crate) fn put<T: Serialize>(dir: &Path, key: &str, result: &Result<T, CompileError>) {
    let entry = match result {
        Ok(kept) => Entry::Kept(kept),
        Err(CompileError::Failed { program, message }) => Entry::Rejected {
            program: program.clone(),
            message: message.clone(),
        },
        Err(CompileError::Run { .. }) => return,
    };
    let Ok(text) = serde_json::to_string(&entry) else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(mut file) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    if std::io::Write::write_all(&mut file, text.as_bytes()).is_ok() {
        let _ = file.persist(dir.join(format!("{key}.json")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_any_part_and_not_by_run() {
        let a = key(&[b"text", b"sm_90"]);
        assert_eq!(a, key(&[b"text", b"sm_90"]));
        assert_ne!(a, key(&[b"text", b"sm_80"]));
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(a.len(), 32);
    }

    use super::super::KernelCode;

    #[test]
    fn an_entry_reads_back_and_a_verdict_of_nvcc_is_kept() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kernels = vec![KernelCode {
            name: "k".to_string(),
            instructions: 9,
            shared: 2,
            loops: 1,
        }];
        put(dir.path(), "a", &Ok(kernels.clone()));
        assert_eq!(
            get::<Vec<KernelCode>>(dir.path(), "a").and_then(Result::ok),
            Some(kernels)
        );
        let rejected = Err(CompileError::Failed {
            program: "nvcc".to_string(),
            message: "static assertion failed".to_string(),
        });
        put::<Vec<KernelCode>>(dir.path(), "b", &rejected);
        assert!(matches!(
            get::<Vec<KernelCode>>(dir.path(), "b"),
            Some(Err(CompileError::Failed { .. }))
        ));
        let not_run = Err(CompileError::Run {
            program: "nvcc".to_string(),
            source: std::io::Error::other("gone"),
        });
        put::<Vec<KernelCode>>(dir.path(), "c", &not_run);
        assert!(get::<Vec<KernelCode>>(dir.path(), "c").is_none());
    }
}
