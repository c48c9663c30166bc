//! `check --format sarif`: SARIF 2.1.0 (OASIS), the format code review tools read (GitHub
//! code scanning among them). One run; one result per finding with a rule (a conflicting
//! access, an escaping use of an array, a kernel without a block shape, another
//! diagnostic); the fix that `bankwise fix` makes for an array rides on the array's first
//! conflict result in the file.
//!
//! Columns count Unicode code points (`columnKind` says so), 1-based; an end column is the
//! column just after the region.
use super::finding::{attach_fixes, shown_findings, Conflict, Rule, Shown};
use crate::analysis::AnalysedFile;
use crate::parse::{Location, Span};
use crate::pipeline::FileFix;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Where bankwise's sources are published: Cargo.toml's `repository`. The rules' `helpUri`
/// (their guide pages) and the driver's `informationUri` point there once it is set (empty:
/// left out, rather than an address nobody checked).
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The base every artifact URI is relative to: the directory `check` ran in.
const SOURCE_ROOT: &str = "%SRCROOT%";

/// One analysed file with its text (for columns) and, when `fix` could plan it, its fixes;
/// with the compiled view, where nvcc compiled it, which judges its conflicts.
pub struct SarifFile<'a> {
    pub analysed: &'a AnalysedFile,
    pub text: &'a str,
    pub fix: Option<&'a FileFix>,
    pub compiled: Option<&'a crate::compiled::CompiledFile>,
}

// The log as typed structs (SARIF 2.1.0's names, in camelCase): the schema's shape is the
// compiler's to keep, and each optional part is absent rather than null.

#[derive(Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    original_uri_base_ids: BTreeMap<&'static str, ArtifactLocation>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'static str>,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportingDescriptor {
    id: &'static str,
    name: &'static str,
    short_description: Message,
    full_description: Message,
    help: MultiformatMessage,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
struct MultiformatMessage {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: Vec<ResultLocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ConflictProperties>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix>,
    partial_fingerprints: PartialFingerprints,
}

/// What GitHub code scanning matches results by across commits: here, one hash of the rule,
/// the file, the text of the finding's line (spacing collapsed) and how many results before
/// it in the file have the same three. Lines added or removed elsewhere leave it as it was.
#[derive(Serialize)]
struct PartialFingerprints {
    #[serde(rename = "bankwise/v1")]
    bankwise: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultLocation {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
}

/// A conflict's figures, under the names `check --format json` gives them.
#[derive(Serialize)]
struct ConflictProperties {
    conflict_degree: u32,
    excess_wavefronts: u64,
    wavefronts: u64,
    ideal_wavefronts: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix {
    description: Message,
    artifact_changes: Vec<ArtifactChange>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Message,
}

/// The SARIF log of `files`; artifact URIs are relative to `root` (the current directory)
/// where the files lie beneath it.
pub fn sarif(files: &[SarifFile], root: &Path, shown: &Shown) -> Log {
    let mut results = Vec::new();
    for file in files {
        results.extend(file_results(file, root, shown));
    }
    let published = (!REPOSITORY.is_empty()).then_some(REPOSITORY);
    let rules = Rule::ALL
        .iter()
        .map(|rule| ReportingDescriptor {
            id: rule.id(),
            name: rule.name(),
            short_description: Message {
                text: rule.summary().into(),
            },
            full_description: Message {
                text: rule.full_description().into(),
            },
            help: MultiformatMessage {
                text: format!(
                    "{} `bankwise rule {}` prints the rule's page.",
                    rule.full_description(),
                    rule.id()
                ),
                markdown: rule.page(),
            },
            help_uri: published
                .map(|r| format!("{r}/blob/main/docs/guide/src/rules/{}.md", rule.id())),
            default_configuration: Configuration {
                level: rule.default_severity().as_str(),
            },
        })
        .collect();
    Log {
        schema: "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "bankwise",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: published,
                    rules,
                },
            },
            original_uri_base_ids: BTreeMap::from([(
                SOURCE_ROOT,
                ArtifactLocation {
                    uri: directory_uri(root),
                    uri_base_id: None,
                },
            )]),
            column_kind: "unicodeCodePoints",
            results,
        }],
    }
}

fn file_results(file: &SarifFile, root: &Path, shown: &Shown) -> Vec<SarifResult> {
    let place = Place::new(file.text, &file.analysed.path, root);
    let mut findings = shown_findings(file.analysed, shown);
    if let Some(compiled) = file.compiled {
        super::finding::reconcile_with_compiled(&mut findings, file.analysed, compiled);
    }
    if let Some(fix) = file.fix {
        attach_fixes(&mut findings, file.analysed, fix);
    }
    let fix_place = file
        .fix
        .map(|fix| Place::new(&fix.original, &fix.path, root));
    let lines: Vec<&str> = file.text.lines().collect();
    let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    findings
        .iter()
        .filter_map(|finding| {
            let rule = finding.rule?;
            let line = lines
                .get(finding.at.line.saturating_sub(1))
                .map_or(String::new(), |l| {
                    l.split_whitespace().collect::<Vec<_>>().join(" ")
                });
            let key = fnv1a(&[rule.id(), &place.artifact.uri, &line]);
            let occurrence = seen.entry(key).or_insert(0);
            *occurrence += 1;
            let fingerprint = format!("{key:016x}:{occurrence}");
            let conflict = finding.conflict.as_deref();
            let location = match conflict {
                Some(conflict) => place.span(conflict.span),
                None => place.at(finding.at),
            };
            let properties = conflict.map(|Conflict { figures, .. }| ConflictProperties {
                conflict_degree: figures.conflict_degree,
                excess_wavefronts: figures.excess_wavefronts,
                wavefronts: figures.wavefronts,
                ideal_wavefronts: figures.ideal_wavefronts,
            });
            let fix = conflict.and_then(|c| c.fix.as_deref());
            let fixes = match (fix, &fix_place) {
                (Some(fix), Some(fix_place)) => vec![sarif_fix(fix, fix_place)],
                _ => Vec::new(),
            };
            Some(SarifResult {
                rule_id: rule.id(),
                rule_index: Rule::ALL.iter().position(|r| *r == rule).unwrap_or(0),
                level: finding.severity.as_str(),
                message: Message {
                    text: finding.message.clone(),
                },
                locations: vec![ResultLocation {
                    physical_location: location,
                }],
                properties,
                fixes,
                partial_fingerprints: PartialFingerprints {
                    bankwise: fingerprint,
                },
            })
        })
        .collect()
}

/// The 64-bit FNV-1a hash of `parts`, each ended by a 0 byte: the same on every machine and
/// in every release, as a fingerprint must be.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A fix as SARIF writes it: its edits as replacements in the original text.
fn sarif_fix(fix: &super::finding::FindingFix, place: &Place) -> SarifFix {
    let replacements = fix
        .edits
        .iter()
        .map(|edit| Replacement {
            deleted_region: place.region(edit.range.start, edit.range.end),
            inserted_content: Message {
                text: edit.replacement.clone(),
            },
        })
        .collect();
    SarifFix {
        description: Message {
            text: fix.description.clone(),
        },
        artifact_changes: vec![ArtifactChange {
            artifact_location: place.artifact.clone(),
            replacements,
        }],
    }
}

/// Positions in one file, in SARIF's terms.
struct Place<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    artifact: ArtifactLocation,
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

    fn region(&self, start: usize, end: usize) -> Region {
        let (start_line, start_column) = self.line_column(start);
        let (end_line, end_column) = self.line_column(end);
        Region {
            start_line,
            start_column,
            end_line: Some(end_line),
            end_column: Some(end_column),
        }
    }

    fn physical(&self, region: Region) -> PhysicalLocation {
        PhysicalLocation {
            artifact_location: self.artifact.clone(),
            region,
        }
    }

    fn span(&self, span: Span) -> PhysicalLocation {
        self.physical(self.region(span.start, span.end))
    }

    /// A position the analysis gives as a line and a byte column: the start of a region.
    fn at(&self, at: Location) -> PhysicalLocation {
        let line_start = self
            .line_starts
            .get(at.line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        let (line, column) = self.line_column(line_start + at.col.saturating_sub(1));
        self.physical(Region {
            start_line: line,
            start_column: column,
            end_line: None,
            end_column: None,
        })
    }
}

/// `{"uri": "src/k.cu", "uriBaseId": "%SRCROOT%"}` for a file beneath `root`, an absolute
/// `file:` URI otherwise.
fn artifact_location(path: &Path, root: &Path) -> ArtifactLocation {
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
            ArtifactLocation {
                uri: percent_encode(text, false),
                uri_base_id: Some(SOURCE_ROOT),
            }
        }
        None => ArtifactLocation {
            uri: file_uri(path),
            uri_base_id: None,
        },
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
    use serde_json::{json, to_value};

    #[test]
    fn columns_count_code_points_and_ends_are_exclusive() {
        let text = "a\n// é ü\nx[ü] = 1;\n";
        let place = Place::new(text, Path::new("k.cu"), Path::new("."));
        let start = text.find("x[").unwrap();
        let end = text.find(" =").unwrap();
        assert_eq!(
            to_value(place.region(start, end)).unwrap(),
            json!({"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 5})
        );
        // Byte column 6 of line 2 is `ü`'s first byte: code point column 5.
        assert_eq!(
            to_value(place.at(Location { line: 2, col: 6 }).region).unwrap(),
            json!({"startLine": 2, "startColumn": 5})
        );
        // An insertion at the end of the text.
        assert_eq!(place.region(text.len(), text.len()).start_line, 4);
    }

    #[test]
    fn a_path_that_leaves_the_root_is_absolute() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let inner = dir.path().join("repo");
        std::fs::create_dir(&inner).expect("made");
        std::fs::write(dir.path().join("k.cu"), "").expect("written");
        let location = artifact_location(&inner.join("../k.cu"), &inner);
        assert_eq!(location.uri_base_id, None);
        let uri = location.uri.as_str();
        assert!(
            uri.starts_with("file:///") && uri.ends_with("/k.cu"),
            "{uri}"
        );
        assert!(!uri.contains(".."), "{uri}");
    }

    #[test]
    fn artifact_uris_are_relative_and_escaped() {
        assert_eq!(
            to_value(artifact_location(
                Path::new("./dir/my kernel%:1.cu"),
                Path::new(".")
            ))
            .unwrap(),
            json!({"uri": "dir/my%20kernel%25%3A1.cu", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(file_uri(Path::new("/tmp/a b")), "file:///tmp/a%20b");
    }
}
