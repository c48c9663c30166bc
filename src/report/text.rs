//! The text output of `check`: one `file:line:col: severity: message` line per finding,
//! sorted by place within each file, as compilers print them.
use super::finding::findings;
use crate::analysis::AnalysedFile;
use std::fmt::Write as _;

/// The text lines of every finding of `files`.
pub fn text(files: &[AnalysedFile]) -> String {
    let mut out = String::new();
    for file in files {
        // The path rendered once, and each line written straight into `out`.
        let path = file.path.display().to_string();
        for finding in findings(file) {
            let _ = writeln!(
                out,
                "{path}:{}: {}: {}",
                finding.at,
                finding.severity.as_str(),
                finding.message
            );
        }
    }
    out
}
