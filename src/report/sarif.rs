//! `check --format sarif`: SARIF 2.1.0 (OASIS), the format code review tools read (GitHub
//! code scanning among them). One run; one result per finding with a rule (a conflicting
//! access, an escaping use of an array, a kernel without a block shape, another
//! diagnostic); the fix that `bankwise fix` makes for an array rides on the array's first
//! conflict result in the file.
//!
//! Columns count Unicode code points (`columnKind` says so), 1-based; an end column is the
//! column just after the region.
use super::finding::{attach_fixes, shown_findings, Conflict, Finding, Rule, Shown};
use crate::analysis::AnalysedFile;
use crate::parse::{Location, Span};
use crate::pipeline::FileFix;
use serde_json::{json, Value};
use std::path::Path;

/// Where bankwise's README is published: Cargo.toml's `repository`. The rules' `helpUri`
/// and the driver's `informationUri` point there once it is set (empty: left out, rather
/// than an address nobody checked).
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The base every artifact URI is relative to: the directory `check` ran in.
const SOURCE_ROOT: &str = "%SRCROOT%";

/// One analysed file with its text (for columns) and, when `fix` could plan it, its fixes.
pub struct SarifFile<'a> {
    pub analysed: &'a AnalysedFile,
    pub text: &'a str,
    pub fix: Option<&'a FileFix>,
}

/// The SARIF log of `files`; artifact URIs are relative to `root` (the current directory)
/// where the files lie beneath it.
pub fn sarif(files: &[SarifFile], root: &Path, shown: &Shown) -> Value {
    let mut results = Vec::new();
    for file in files {
        results.extend(file_results(file, root, shown));
    }
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|rule| {
            let mut value = json!({
                "id": rule.id(),
                "name": rule.name(),
                "shortDescription": { "text": rule.summary() },
                "fullDescription": { "text": rule.full_description() },
                "help": {
                    "text": format!(
                        "{} See the bankwise README, section \"{}\".",
                        rule.full_description(),
                        rule.section()
                    ),
                    "markdown": rule.help_markdown(),
                },
                "defaultConfiguration": { "level": rule.default_severity().as_str() },
            });
            if !REPOSITORY.is_empty() {
                value["helpUri"] = format!("{REPOSITORY}#rules-and-suppression").into();
            }
            value
        })
        .collect();
    let mut driver = json!({
        "name": "bankwise",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    if !REPOSITORY.is_empty() {
        driver["informationUri"] = REPOSITORY.into();
    }
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "originalUriBaseIds": { SOURCE_ROOT: { "uri": directory_uri(root) } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn file_results(file: &SarifFile, root: &Path, shown: &Shown) -> Vec<Value> {
    let place = Place::new(file.text, &file.analysed.path, root);
    let mut findings = shown_findings(file.analysed, shown);
    if let Some(fix) = file.fix {
        attach_fixes(&mut findings, file.analysed, fix);
    }
    let fix_place = file
        .fix
        .map(|fix| Place::new(&fix.original, &fix.path, root));
    findings
        .iter()
        .filter_map(|finding| {
            let rule = finding.rule?;
            let conflict = finding.conflict.as_deref();
            let location = match conflict {
                Some(conflict) => place.span(conflict.span),
                None => place.at(finding.at),
            };
            let mut value = result(rule, finding, location);
            if let Some(Conflict { figures, .. }) = conflict {
                value["properties"] = json!({
                    "conflict_degree": figures.conflict_degree,
                    "excess_wavefronts": figures.excess_wavefronts,
                    "wavefronts": figures.wavefronts,
                    "ideal_wavefronts": figures.ideal_wavefronts,
                });
            }
            let fix = conflict.and_then(|c| c.fix.as_ref());
            if let (Some(fix), Some(fix_place)) = (fix, &fix_place) {
                value["fixes"] = json!([fix_json(fix, fix_place)]);
            }
            Some(value)
        })
        .collect()
}

fn result(rule: Rule, finding: &Finding, location: Value) -> Value {
    json!({
        "ruleId": rule.id(),
        "ruleIndex": Rule::ALL.iter().position(|r| *r == rule),
        "level": finding.severity.as_str(),
        "message": { "text": finding.message },
        "locations": [{ "physicalLocation": location }],
    })
}

/// A fix as SARIF writes it: its edits as replacements in the original text.
fn fix_json(fix: &super::finding::FindingFix, place: &Place) -> Value {
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|edit| {
            json!({
                "deletedRegion": place.region(edit.range.start, edit.range.end),
                "insertedContent": { "text": edit.replacement },
            })
        })
        .collect();
    json!({
        "description": { "text": fix.description },
        "artifactChanges": [{
            "artifactLocation": place.artifact.clone(),
            "replacements": replacements,
        }],
    })
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
    // A relative path that leaves the root (`../lib/k.cu`) is not beneath it: resolved, it
    // is made relative again when it lies below the root, absolute otherwise.
    let escapes = path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir));
    let resolved;
    let path = if escapes {
        resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        resolved.as_path()
    } else {
        path
    };
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
    fn a_path_that_leaves_the_root_is_absolute() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let inner = dir.path().join("repo");
        std::fs::create_dir(&inner).expect("made");
        std::fs::write(dir.path().join("k.cu"), "").expect("written");
        let location = artifact_location(&inner.join("../k.cu"), &inner);
        assert!(location.get("uriBaseId").is_none(), "{location}");
        let uri = location["uri"].as_str().expect("a URI");
        assert!(
            uri.starts_with("file:///") && uri.ends_with("/k.cu"),
            "{uri}"
        );
        assert!(!uri.contains(".."), "{uri}");
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
