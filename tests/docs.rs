//! The README and the user guide (`docs/guide/`) say what the binary does, and these tests
//! hold them to it:
//!
//! - every fenced block has a language; a `console` block is a transcript whose `$ bankwise …`
//!   commands run, and whose output must be what they print (stdout and stderr together);
//! - a `text` block is a synopsis whose every `--flag` the subcommand's `--help` knows, or
//!   names, in a `<!-- checked by: PATH -->` comment above it, the test or script that checks
//!   it;
//! - each rule's page is what `bankwise rule` prints;
//! - the guide's summary links every page and every link resolves, as mdBook needs to
//!   render it; the README stays under 12 KB.
#[allow(dead_code)]
mod common;
use common::files_under;
use std::path::{Path, PathBuf};
use std::process::Command;

const README_LIMIT: usize = 12 * 1024;

/// A fenced block: its language, its lines, the comment line just above it, and where.
struct Block {
    language: String,
    lines: Vec<String>,
    comment_above: Option<String>,
    at: String,
}

fn pages() -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("README.md")];
    found.extend(files_under(Path::new("docs/guide/src"), |p| {
        p.extension().is_some_and(|e| e == "md")
    }));
    found
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).expect("the page");
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(language) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push(lines[i].to_string());
            i += 1;
        }
        let comment_above = start
            .checked_sub(1)
            .map(|above| lines[above].trim())
            .filter(|line| line.starts_with("<!--"))
            .map(str::to_string);
        found.push(Block {
            language: language.trim().to_string(),
            lines: body,
            comment_above,
            at: format!("{}:{}", path.display(), start + 1),
        });
        i += 1;
    }
    found
}

fn bankwise() -> &'static str {
    env!("CARGO_BIN_EXE_bankwise")
}

/// A scratch directory where `testdata` and `examples` are the repository's: a transcript
/// that writes (`-o out.cu`) writes there.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for name in ["testdata", "examples"] {
        let target = std::fs::canonicalize(name).expect("the repository's directory");
        std::os::unix::fs::symlink(target, dir.path().join(name)).expect("a link");
    }
    dir
}

/// The transcripts of `block`: each `$ ` command with the lines it prints.
fn transcripts(block: &Block) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in &block.lines {
        match line.strip_prefix("$ ") {
            Some(command) => found.push((command.to_string(), String::new())),
            None => {
                let (_, output) = found
                    .last_mut()
                    .unwrap_or_else(|| panic!("{}: output before any `$ ` command", block.at));
                output.push_str(line);
                output.push('\n');
            }
        }
    }
    found
}

#[test]
fn every_transcript_prints_what_the_docs_show() {
    let bin = Path::new(bankwise())
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for page in pages() {
        for block in blocks(&page)
            .into_iter()
            .filter(|b| b.language == "console")
        {
            for (command, expected) in transcripts(&block) {
                assert!(
                    command.starts_with("bankwise "),
                    "{}: a transcript runs bankwise only: {command}",
                    block.at
                );
                let dir = scratch();
                let output = Command::new("sh")
                    .arg("-c")
                    .arg(format!("{command} 2>&1"))
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .env("NO_COLOR", "1")
                    // The source model's output, whether or not this machine has nvcc.
                    .env("BANKWISE_NVCC", "")
                    .env_remove("BANKWISE_LOG")
                    .output()
                    .expect("sh runs");
                let printed = String::from_utf8_lossy(&output.stdout);
                assert_eq!(printed, expected, "{}: `{command}`", block.at);
                ran += 1;
            }
        }
    }
    assert!(ran >= 5, "only {ran} transcripts");
}

#[test]
fn every_block_is_a_transcript_a_synopsis_a_command_or_checked_elsewhere() {
    for page in pages() {
        for block in blocks(&page) {
            match block.language.as_str() {
                "console" | "sh" | "cuda" | "toml" | "yaml" | "lua" => {}
                "text" => check_text_block(&block),
                other => panic!(
                    "{}: a block says what it is: console (a transcript the tests run), sh, \
                     text (a synopsis, or checked elsewhere), or a language; not `{other}`",
                    block.at
                ),
            }
        }
    }
}

/// A synopsis names only flags its subcommand has; any other text block names what checks
/// it.
fn check_text_block(block: &Block) {
    let first = block.lines.first().map(String::as_str).unwrap_or_default();
    if let Some(rest) = first.strip_prefix("bankwise ") {
        let sub = rest.split_whitespace().next().unwrap_or_default();
        let help = Command::new(bankwise())
            .args([sub, "--help"])
            .output()
            .expect("bankwise runs");
        let help = String::from_utf8_lossy(&help.stdout).into_owned();
        for line in &block.lines {
            for flag in line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("--") && w.len() > 2)
            {
                assert!(
                    help.contains(flag),
                    "{}: `bankwise {sub}` has no {flag}",
                    block.at
                );
            }
        }
        return;
    }
    let checker = block
        .comment_above
        .as_deref()
        .and_then(|c| c.strip_prefix("<!-- checked by: "))
        .and_then(|c| c.split_whitespace().next())
        .unwrap_or_else(|| {
            panic!(
                "{}: a text block that is no synopsis names what checks it \
                 (<!-- checked by: PATH -->)",
                block.at
            )
        });
    assert!(
        Path::new(checker).exists(),
        "{}: {checker} does not exist",
        block.at
    );
}

#[test]
fn each_rules_page_is_what_bankwise_rule_prints() {
    for id in [
        "BW001", "BW002", "BW003", "BW004", "BW005", "BW006", "BW007",
    ] {
        let printed = Command::new(bankwise())
            .args(["rule", id])
            .output()
            .expect("bankwise runs");
        assert!(printed.status.success());
        let page = std::fs::read_to_string(format!("docs/guide/src/rules/{id}.md"))
            .unwrap_or_else(|_| panic!("docs/guide/src/rules/{id}.md"));
        assert_eq!(
            String::from_utf8_lossy(&printed.stdout),
            page,
            "{id}: regenerate with `bankwise rule --out-dir docs/guide/src/rules`"
        );
    }
    let unknown = Command::new(bankwise())
        .args(["rule", "BW999"])
        .output()
        .expect("bankwise runs");
    assert_eq!(unknown.status.code(), Some(2));
}

/// What mdBook needs to render the guide: the summary links every page once, and every
/// relative link of every page (the README's included) names a file that exists.
#[test]
fn the_guide_links_every_page_and_every_link_resolves() {
    let summary = std::fs::read_to_string("docs/guide/src/SUMMARY.md").expect("the summary");
    let src = Path::new("docs/guide/src");
    let mut linked = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("the page");
        let dir = page.parent().expect("a directory");
        for target in links(&text) {
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || file.contains("://") {
                continue;
            }
            let resolved = dir.join(file);
            assert!(
                resolved.exists(),
                "{}: the link {target} leads nowhere",
                page.display()
            );
            if page.ends_with("SUMMARY.md") {
                linked.push(std::fs::canonicalize(resolved).expect("exists"));
            }
        }
    }
    for page in pages()
        .into_iter()
        .filter(|p| p.starts_with(src) && !p.ends_with("SUMMARY.md"))
    {
        let canonical = std::fs::canonicalize(&page).expect("exists");
        assert!(
            linked.contains(&canonical),
            "{} is not in SUMMARY.md",
            page.display()
        );
    }
    assert!(summary.starts_with("# Summary"));
    let readme = std::fs::read_to_string("README.md").expect("the README");
    assert!(
        readme.len() < README_LIMIT,
        "the README is {} bytes; the guide holds the details",
        readme.len()
    );
}

/// The targets of the Markdown links `[label](target)` of `text`, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find("](") {
            let after = &rest[open + 2..];
            let Some(close) = after.find(')') else {
                break;
            };
            let target = &after[..close];
            if !target.contains(' ') && !target.contains('`') {
                found.push(target.to_string());
            }
            rest = &after[close..];
        }
    }
    found
}
