//! The text output of `check`: one `file:line:col: severity: message [BW001]` line per
//! finding, sorted by place within each file, as compilers print them (the rule id last, as
//! clang-tidy puts its check name).
use super::finding::{shown_findings, Shown};
use crate::analysis::AnalysedFile;
use std::fmt::Write as _;

/// The text lines of every finding of `files`.
pub fn text(files: &[AnalysedFile], shown: &Shown) -> String {
    let mut out = String::new();
    for file in files {
        // The path rendered once, and each line written straight into `out`.
        let path = file.path.display().to_string();
        for finding in shown_findings(file, shown) {
            let _ = write!(
                out,
                "{path}:{}: {}: {}",
                finding.at,
                finding.severity.as_str(),
                finding.message
            );
            let _ = match finding.rule {
                Some(rule) => writeln!(out, " [{}]", rule.id()),
                None => writeln!(out),
            };
        }
    }
    out
}
