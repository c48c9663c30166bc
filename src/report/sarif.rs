//! `check --format sarif`: SARIF 2.1.0 (OASIS), the format code review tools read (GitHub
//! code scanning among them). One run; one result per conflicting access, per escaping use
//! of an array, per kernel without a block shape and per other diagnostic; the fix that
//! `bankwise fix` makes for an array rides on the array's first conflict result in the file.
//!
//! Columns count Unicode code points (`columnKind` says so), 1-based; an end column is the
//! column just after the region.
use super::{conflict_message, escape_message};
use crate::analysis::AnalysedFile;
use crate::parse::{AccessKind, Location, Severity, Span};
use crate::pipeline::FileFix;
use crate::plan::Action;
use crate::rewrite::Edit;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

/// The base every artifact URI is relative to: the directory `check` ran in.
const SOURCE_ROOT: &str = "%SRCROOT%";

/// One kind of diagnostic. The ids are stable: code scanning tracks alerts by them.
struct Rule {
    id: &'static str,
    name: &'static str,
    short: &'static str,
    /// The README section that explains it.
    /// The README section that explains it (the project has no public URL to link to).
    section: &'static str,
    level: &'static str,
}

const CONFLICT_ON_LOAD: usize = 0;
const CONFLICT_ON_STORE: usize = 1;
const CONFLICT_ON_ATOMIC: usize = 2;
const ESCAPE: usize = 3;
const UNKNOWN_BLOCK: usize = 4;
const OTHER: usize = 5;

const RULES: [Rule; 6] = [
    Rule {
        id: "BW001",
        name: "bank-conflict-load",
        short: "Shared-memory load with bank conflicts: the warp's request takes more wavefronts than it must.",
        section: "`bankwise check`",
        level: "warning",
    },
    Rule {
        id: "BW002",
        name: "bank-conflict-store",
        short: "Shared-memory store with bank conflicts: the warp's request takes more wavefronts than it must.",
        section: "`bankwise check`",
        level: "warning",
    },
    Rule {
        id: "BW003",
        name: "bank-conflict-atomic",
        short: "Shared-memory atomic with bank conflicts: the warp's request takes more wavefronts than it must.",
        section: "`bankwise check`",
        level: "warning",
    },
    Rule {
        id: "BW004",
        name: "array-escapes-analysis",
        short: "A shared array escapes analysis (its address goes out of sight): it is left unanalysed there and never rewritten.",
        section: "`bankwise check`",
        level: "note",
    },
    Rule {
        id: "BW005",
        name: "block-shape-unknown",
        short: "The block shape of a kernel is unknown: its accesses are not simulated; pass --block or set it in bankwise.toml.",
        section: "Configuration: `bankwise.toml`",
        level: "note",
    },
    Rule {
        id: "BW006",
        name: "analysis-diagnostic",
        short: "Something the analysis could not follow: a syntax error, launches that disagree, an unknown constant.",
        section: "`bankwise check`",
        level: "warning",
    },
];

/// One analysed file with its text (for columns) and, when `fix` could plan it, its fixes.
pub struct SarifFile<'a> {
    pub analysed: &'a AnalysedFile,
    pub text: &'a str,
    pub fix: Option<&'a FileFix>,
}

/// The SARIF log of `files`; artifact URIs are relative to `root` (the current directory)
/// where the files lie beneath it.
pub fn sarif(files: &[SarifFile], root: &Path) -> Value {
    let mut results = Vec::new();
    for file in files {
        results.extend(file_results(file, root));
    }
    let rules: Vec<Value> = RULES
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id,
                "name": rule.name,
                "shortDescription": { "text": rule.short },
                "help": { "text": format!("See the bankwise README, section {}.", rule.section) },
                "defaultConfiguration": { "level": rule.level },
            })
        })
        .collect();
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "bankwise",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": { SOURCE_ROOT: { "uri": directory_uri(root) } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn file_results(file: &SarifFile, root: &Path) -> Vec<Value> {
    let analysed = file.analysed;
    let place = Place::new(file.text, &analysed.path, root);
    let mut fixes = file
        .fix
        .map(|fix| array_fixes(fix, root))
        .unwrap_or_default();
    // Each result with its place and, for a conflict, its array.
    let mut results: Vec<(Location, Value, Option<ArrayKey>)> = Vec::new();
    let mut block_messages = Vec::new();
    for reported in analysed.reported() {
        let function = reported.function;
        if let (Err(why), None) = (reported.block, function.syntax_error) {
            block_messages.push((function.at, why.clone()));
            results.push((
                function.at,
                result(UNKNOWN_BLOCK, why, place.at(function.at)),
                None,
            ));
        }
        for (a, array) in function.arrays.iter().enumerate() {
            for escape in &array.escapes {
                let message = escape_message(array, function, escape);
                let value = result(ESCAPE, &message, place.at(escape.at));
                results.push((escape.at, value, None));
            }
            let key = (function.display_name(), array.name.clone(), array.at);
            for (i, access) in array.accesses.iter().enumerate() {
                let site = reported.affine.and_then(|f| f.sites[a][i].as_ref());
                let (Ok(cost), Some(site)) = (&reported.costs[a][i], site) else {
                    continue;
                };
                if cost.excess() == 0 {
                    continue;
                }
                let rule = match access.kind {
                    AccessKind::Load => CONFLICT_ON_LOAD,
                    AccessKind::Store => CONFLICT_ON_STORE,
                    AccessKind::Atomic => CONFLICT_ON_ATOMIC,
                };
                let message = conflict_message(array, access, site, cost);
                let mut value = result(rule, &message, place.span(access.span));
                value["properties"] = json!({
                    "conflict_degree": cost.conflict_degree,
                    "excess_wavefronts": cost.excess(),
                    "wavefronts": cost.wavefronts,
                    "ideal_wavefronts": cost.ideal_wavefronts,
                });
                results.push((access.at, value, Some(key.clone())));
            }
        }
    }
    for diagnostic in &analysed.diagnostics {
        if block_messages.contains(&(diagnostic.at, diagnostic.message.clone())) {
            continue;
        }
        let mut value = result(OTHER, &diagnostic.message, place.at(diagnostic.at));
        value["level"] = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
        .into();
        results.push((diagnostic.at, value, None));
    }
    // Stable: the results at one place keep the order above.
    results.sort_by_key(|(at, _, _)| *at);
    results
        .into_iter()
        .map(|(_, mut value, array)| {
            // The array's first conflict in the file takes its fix.
            if let Some(fix) = array.and_then(|key| fixes.remove(&key)) {
                value["fixes"] = json!([fix]);
            }
            value
        })
        .collect()
}

fn result(rule: usize, message: &str, location: Value) -> Value {
    json!({
        "ruleId": RULES[rule].id,
        "ruleIndex": rule,
        "level": RULES[rule].level,
        "message": { "text": message },
        "locations": [{ "physicalLocation": location }],
    })
}

/// An array in a file: its function's display name, its name, its declaration.
type ArrayKey = (String, String, Location);

/// The SARIF fix of each array that `fix` rewrites, by (function, array, declaration).
/// Fixes it would not apply (unsafe without `--unsafe-fixes`, display-only) are left out.
fn array_fixes(file: &FileFix, root: &Path) -> HashMap<ArrayKey, Value> {
    let place = Place::new(&file.original, &file.path, root);
    let mut fixes = HashMap::new();
    for (fix, &outcome) in file.fixes.iter().zip(&file.fixed_arrays) {
        let outcome = &file.arrays[outcome];
        if outcome.action != Action::Rewritten {
            continue;
        }
        let mut edits: Vec<&Edit> = Vec::new();
        for edit in &fix.edits {
            // A compound assignment makes one edit twice (its load and its store).
            if !edits.contains(&edit) {
                edits.push(edit);
            }
        }
        // In the original text's order; insertions at one place keep theirs.
        edits.sort_by_key(|e| (e.range.start, !e.range.is_empty(), e.range.end));
        let replacements: Vec<Value> = edits
            .iter()
            .map(|edit| {
                json!({
                    "deletedRegion": place.region(edit.range.start, edit.range.end),
                    "insertedContent": { "text": edit.replacement },
                })
            })
            .collect();
        fixes.insert(
            (outcome.function.clone(), outcome.array.clone(), outcome.at),
            json!({
                "description": { "text": fix.message },
                "artifactChanges": [{
                    "artifactLocation": place.artifact.clone(),
                    "replacements": replacements,
                }],
            }),
        );
    }
    fixes
}

/// Positions in one file, in SARIF's terms.
struct Place<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    artifact: Value,
}

impl<'a> Place<'a> {
    fn new(text: &'a str, path: &Path, root: &Path) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Place {
            text,
            line_starts,
            artifact: artifact_location(path, root),
        }
    }

    /// Line and code-point column (both 1-based) of a byte offset.
    fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, column + 1)
    }

    fn region(&self, start: usize, end: usize) -> Value {
        let (start_line, start_column) = self.line_column(start);
        let (end_line, end_column) = self.line_column(end);
        json!({
            "startLine": start_line,
            "startColumn": start_column,
            "endLine": end_line,
            "endColumn": end_column,
        })
    }

    fn physical(&self, region: Value) -> Value {
        json!({ "artifactLocation": self.artifact, "region": region })
    }

    fn span(&self, span: Span) -> Value {
        self.physical(self.region(span.start, span.end))
    }

    /// A position the analysis gives as a line and a byte column: the start of a region.
    fn at(&self, at: Location) -> Value {
        let line_start = self
            .line_starts
            .get(at.line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        let (line, column) = self.line_column(line_start + at.col.saturating_sub(1));
        self.physical(json!({ "startLine": line, "startColumn": column }))
    }
}

/// `{"uri": "src/k.cu", "uriBaseId": "%SRCROOT%"}` for a file beneath `root`, an absolute
/// `file:` URI otherwise.
fn artifact_location(path: &Path, root: &Path) -> Value {
    let relative = if path.is_relative() {
        Some(path.to_path_buf())
    } else {
        std::fs::canonicalize(root)
            .ok()
            .and_then(|root| path.strip_prefix(root).ok().map(Path::to_path_buf))
    };
    match relative {
        Some(relative) => {
            let text = relative.to_string_lossy().replace('\\', "/");
            let text = text.trim_start_matches("./");
            json!({ "uri": percent_encode(text, false), "uriBaseId": SOURCE_ROOT })
        }
        None => json!({ "uri": file_uri(path) }),
    }
}

/// `file:///abs/dir/`: a base URI must end in a slash.
fn directory_uri(dir: &Path) -> String {
    let absolute = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut uri = file_uri(&absolute);
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        // A Windows drive path (`C:/x`) takes a slash before it.
        format!("/{text}")
    };
    format!("file://{}", percent_encode(&text, true))
}

/// Escapes every byte outside RFC 3986's unreserved characters and `/`. A `:` is kept only
/// where asked (after a drive letter in a `file:` URI): in a relative reference it would
/// read as a scheme.
fn percent_encode(text: &str, keep_colon: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) || (keep_colon && byte == b':')
        {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_code_points_and_ends_are_exclusive() {
        let text = "a\n// é ü\nx[ü] = 1;\n";
        let place = Place::new(text, Path::new("k.cu"), Path::new("."));
        let start = text.find("x[").unwrap();
        let end = text.find(" =").unwrap();
        assert_eq!(
            place.region(start, end),
            json!({"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 5})
        );
        // Byte column 6 of line 2 is `ü`'s first byte: code point column 5.
        assert_eq!(
            place.at(Location { line: 2, col: 6 })["region"],
            json!({"startLine": 2, "startColumn": 5})
        );
        // An insertion at the end of the text.
        assert_eq!(place.region(text.len(), text.len())["startLine"], json!(4));
    }

    #[test]
    fn artifact_uris_are_relative_and_escaped() {
        assert_eq!(
            artifact_location(Path::new("./dir/my kernel%:1.cu"), Path::new(".")),
            json!({"uri": "dir/my%20kernel%25%3A1.cu", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(file_uri(Path::new("/tmp/a b")), "file:///tmp/a%20b");
    }
}
