//! What the integration tests share: running the binary, and the testdata files with their
//! snapshot names.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary run with `args`, without nvcc's compiled view (`BANKWISE_NVCC` empty): what
/// it prints must not depend on whether the machine has nvcc.
pub fn bankwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(args)
        .env("BANKWISE_NVCC", "")
        .output()
        .expect("the bankwise binary runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every `.cu` file under testdata/, sorted.
pub fn testdata_files() -> Vec<PathBuf> {
    files_under(Path::new("testdata"), |p| {
        p.extension().is_some_and(|e| e == "cu")
    })
}

/// Every file under `dir` that `keep` keeps, sorted.
pub fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("the directory exists") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if keep(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `testdata/a/b.cu` → `a__b.cu`.
pub fn snapshot_name(path: &Path) -> String {
    path.strip_prefix("testdata")
        .expect("under testdata")
        .to_string_lossy()
        .replace(['/', '\\'], "__")
}

/// Snapshots live in snapshots/ under their own names.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// The extents of `name` as its declaration on `line` of `text` writes them (`[]` as "").
pub fn declared_extents(text: &str, line: usize, name: &str) -> Vec<String> {
    let declaration = text.lines().nth(line - 1).expect("the declaration's line");
    let mut from = 0;
    while let Some(found) = declaration[from..].find(name) {
        let start = from + found;
        from = start + name.len();
        let before = declaration[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut rest = declaration[from..].trim_start();
        let mut extents = Vec::new();
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']').expect("a `]`");
            extents.push(inner[..close].trim().to_string());
            rest = inner[close + 1..].trim_start();
        }
        if !extents.is_empty() {
            return extents;
        }
    }
    Vec::new()
}
