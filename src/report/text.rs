//! The text output of `check`: one `file:line:col: severity: message [BW001]` line per
//! finding, sorted by place within each file, as compilers print them (the rule id last, as
//! clang-tidy puts its check name); on a terminal, [`snippets`] shows each with its source
//! line and a caret under the access, rendered by annotate-snippets (rustc's renderer).
use super::finding::{shown_findings, Finding, Shown};
use crate::analysis::AnalysedFile;
use crate::parse::{LineIndex, Severity};
use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes the text line of every finding of `files` to `out`, as they are made: a `-v`
/// report of a large file is tens of megabytes that need not be held at once.
pub fn write_text(out: &mut impl Write, files: &[AnalysedFile], shown: &Shown) -> io::Result<()> {
    for file in files {
        // The path rendered once per file.
        let path = file.path.display().to_string();
        for finding in shown_findings(file, shown) {
            write!(
                out,
                "{path}:{}: {}: {}",
                finding.at,
                finding.severity.as_str(),
                finding.message
            )?;
            match finding.rule {
                Some(rule) => writeln!(out, " [{}]", rule.id())?,
                None => writeln!(out)?,
            }
        }
    }
    Ok(())
}

/// The findings of `files` (each with its text) with their source lines: the form a terminal
/// shows. `color` adds ANSI styles.
pub fn snippets(files: &[(&AnalysedFile, &str)], shown: &Shown, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for (file, text) in files {
        let path = file.path.display().to_string();
        let lines = LineIndex::new(text);
        for finding in shown_findings(file, shown) {
            let rendered = render(&renderer, &path, text, &lines, &finding);
            let _ = writeln!(out, "{rendered}\n");
        }
    }
    out
}

/// One finding: its title, and the line it is on with the access (or the token at its
/// column) marked.
fn render(
    renderer: &Renderer,
    path: &str,
    text: &str,
    lines: &LineIndex,
    finding: &Finding,
) -> String {
    let level = match finding.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let mut title = level.primary_title(finding.message.as_str());
    if let Some(rule) = finding.rule {
        title = title.id(rule.id());
    }
    let line_start = lines
        .line_start(finding.at.line)
        .unwrap_or(text.len())
        .min(text.len());
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |n| line_start + n);
    let line = &text[line_start..line_end];
    let start = (finding.at.col.saturating_sub(1)).min(line.len());
    let start = (0..=start)
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    // The access on its line; elsewhere the identifier (or the character) at the column.
    let end = match &finding.conflict {
        Some(conflict) if conflict.span.end > line_start + start => {
            (conflict.span.end - line_start).min(line.len())
        }
        _ => {
            let word = line[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(line.len() - start);
            start + word.max(line[start..].chars().next().map_or(0, char::len_utf8))
        }
    };
    let snippet = Snippet::source(line)
        .line_start(finding.at.line)
        .path(path)
        .annotation(AnnotationKind::Primary.span(start..end));
    renderer.render(&[title.element(snippet)]).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Location;

    #[test]
    fn a_finding_is_drawn_under_its_line() {
        let text = "int a;\n  out = tile[x][y];\n";
        let finding = Finding {
            rule: Some(crate::rules::Rule::ConflictOnLoad),
            severity: Severity::Warning,
            at: Location { line: 2, col: 9 },
            message: "32-way bank conflict".into(),
            array: None,
            conflict: None,
        };
        let drawn = render(
            &Renderer::plain(),
            "k.cu",
            text,
            &LineIndex::new(text),
            &finding,
        );
        assert_eq!(
            drawn,
            "warning[BW001]: 32-way bank conflict\n --> k.cu:2:9\n  |\n2 |   out = tile[x][y];\n  |         ^^^^"
        );
    }
}
