//! The text output of `check`: one `file:line:col: severity: message [BW001]` line per
//! finding, sorted by place within each file, as compilers print them (the rule id last, as
//! clang-tidy puts its check name); on a terminal, [`snippets`] shows each with its source
//! line and a caret under the access, rendered by annotate-snippets (rustc's renderer).
use super::finding::{shown_findings, Finding, Shown};
use crate::analysis::AnalysedFile;
use crate::compiled::CompiledFile;
use crate::parse::{LineIndex, Severity};
use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes the text line of every finding of `files` to `out`, as they are made: a `-v`
/// report of a large file is tens of megabytes that need not be held at once.
pub fn write_text(out: &mut impl Write, files: &[AnalysedFile], shown: &Shown) -> io::Result<()> {
    for file in files {
        write_findings(out, file, shown_findings(file, shown))?;
    }
    Ok(())
}

/// Writes the text line of each of `findings` (of `file`).
pub fn write_findings(
    out: &mut impl Write,
    file: &AnalysedFile,
    findings: Vec<Finding>,
) -> io::Result<()> {
    // The path rendered once per file.
    let path = file.path.display().to_string();
    for finding in findings {
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
    Ok(())
}

/// The compiled view's notes for one file: per kernel with conflicts in either view, the
/// excess wavefronts of nvcc's code beside the source model's; then each conflict in nvcc's
/// code at a line where the source analysis simulated no access, and what limits the
/// compiled figures.
pub fn compiled_notes(file: &AnalysedFile, compiled: &CompiledFile) -> String {
    let path = file.path.display().to_string();
    let mut out = String::new();
    for reported in file.reported() {
        let name = reported.function.display_name();
        let Some(kernel) = compiled.kernels.iter().find(|k| k.name == name) else {
            continue;
        };
        let source: u64 = reported
            .costs
            .iter()
            .flatten()
            .flatten()
            .map(|c| c.wavefronts - c.ideal_wavefronts)
            .sum();
        if kernel.excess() == 0 && source == 0 && kernel.other_excess == 0 {
            continue;
        }
        let at = reported.function.at.line;
        let _ = writeln!(
            out,
            "{path}:{at}:1: note: kernel `{name}` as nvcc {} compiles it for {}: {} excess \
             wavefronts per block (loads {}, stores {}); the source model counts {source}",
            compiled.nvcc,
            compiled.arch,
            kernel.excess(),
            kernel.load_excess,
            kernel.store_excess,
        );
        // nvcc's line information moves hoisted code: a conflict is the source analysis's
        // miss only on an array it simulated nowhere, or at an access it did not simulate.
        let mut simulated_arrays = Vec::new();
        let mut unsimulated_lines = Vec::new();
        for (array, costs) in reported.function.arrays.iter().zip(reported.costs) {
            for (access, cost) in array.accesses.iter().zip(costs) {
                match cost {
                    Ok(_) => simulated_arrays.push(array.name.as_str()),
                    Err(_) => unsimulated_lines.push(access.at.line),
                }
            }
        }
        for instruction in &kernel.instructions {
            let line = instruction.line as usize;
            let missed = unsimulated_lines.contains(&line)
                || instruction
                    .array
                    .as_deref()
                    .is_some_and(|a| !simulated_arrays.contains(&a));
            if !instruction.in_file || line == 0 || instruction.excess() == 0 || !missed {
                continue;
            }
            let _ = writeln!(
                out,
                "{path}:{line}:{}: note: nvcc's code has {} excess wavefronts per block here \
                 ({}-byte {} of `{}`, {} warp requests), at an access the source analysis \
                 did not simulate",
                instruction.col.max(1),
                instruction.excess(),
                instruction.bytes,
                instruction.operation,
                instruction.array.as_deref().unwrap_or("shared memory"),
                instruction.executions,
            );
        }
        // Each access alone on its line for its array, where nvcc's code there differs.
        for (array, costs) in reported.function.arrays.iter().zip(reported.costs) {
            for (access, cost) in array.accesses.iter().zip(costs) {
                let Ok(cost) = cost else { continue };
                let Some((share, true)) = super::finding::compiled_share(kernel, array, access)
                else {
                    continue;
                };
                let source = cost.wavefronts - cost.ideal_wavefronts;
                // A conflict of the source model has its finding, which says this itself.
                if share.excess() == source || source > 0 {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "{path}:{}: note: nvcc's code has {} excess wavefronts per block at this \
                     access ({}-byte, {} warp requests); the source model counts {source}",
                    access.at,
                    share.excess(),
                    share.bytes,
                    share.executions,
                );
            }
        }
        for gap in &kernel.gaps {
            let _ = writeln!(
                out,
                "{path}:{at}:1: note: compiled figures of `{name}`: {gap}"
            );
        }
    }
    out
}

/// The findings of `files` (each with its text) with their source lines: the form a terminal
/// shows. `color` adds ANSI styles.
pub fn snippets(files: &[(&AnalysedFile, &str)], shown: &Shown, color: bool) -> String {
    files
        .iter()
        .map(|(file, text)| snippets_of(file, text, shown_findings(file, shown), color))
        .collect()
}

/// [`snippets`] of `findings` (of `file`, whose text is `text`).
pub fn snippets_of(file: &AnalysedFile, text: &str, findings: Vec<Finding>, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    let path = file.path.display().to_string();
    let lines = LineIndex::new(text);
    for finding in findings {
        let rendered = render(&renderer, &path, text, &lines, &finding);
        let _ = writeln!(out, "{rendered}\n");
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
