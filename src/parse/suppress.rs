//! Suppression comments, as clang-tidy writes them: `// NOLINT`, `// NOLINT(bankwise)`,
//! `// NOLINTNEXTLINE(bankwise-BW001)`, and `NOLINTBEGIN`/`NOLINTEND` around a range of
//! lines. The front end only records them; which findings they silence is decided where the
//! findings are made (`crate::rules`).
use super::chunks::{find, skip_line, skip_quoted};
use super::model::Location;
use super::source::LineIndex;

/// A suppression comment that concerns bankwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// Where the comment's `NOLINT` word is.
    pub at: Location,
    /// The lines it silences, inclusive.
    pub first_line: usize,
    pub last_line: usize,
    /// The rules it names, as written after `bankwise-` (`BW001`, `bank-conflict-load`);
    /// empty for all of bankwise's.
    pub rules: Vec<String>,
}

impl Suppression {
    pub fn covers(&self, line: usize) -> bool {
        (self.first_line..=self.last_line).contains(&line)
    }
}

/// The tool name a check list must mention for a suppression to be bankwise's.
const TOOL: &str = "bankwise";

/// Every suppression comment of `text` that concerns bankwise, in source order. Comments are
/// found by a lexer that skips string and character literals; a `NOLINTBEGIN` without its
/// `NOLINTEND` runs to the end of the file, as a reviewer reading it would expect.
pub fn suppressions(text: &str) -> Vec<Suppression> {
    let mut found = Vec::new();
    let mut open: Vec<Suppression> = Vec::new();
    let comments = comments(text);
    if comments.iter().all(|(body, _)| !body.contains("NOLINT")) {
        return found;
    }
    let lines = LineIndex::new(text);
    for (comment, start) in comments {
        let mut rest = comment;
        let mut offset = start;
        while let Some(at) = rest.find("NOLINT") {
            let word_start = offset + at;
            let after = &rest[at + "NOLINT".len()..];
            let (kind, after) = if let Some(a) = after.strip_prefix("NEXTLINE") {
                (Kind::NextLine, a)
            } else if let Some(a) = after.strip_prefix("BEGIN") {
                (Kind::Begin, a)
            } else if let Some(a) = after.strip_prefix("END") {
                (Kind::End, a)
            } else {
                (Kind::Line, after)
            };
            let consumed = rest.len() - after.len();
            rest = &rest[consumed..];
            offset += consumed;
            let Some(rules) = bankwise_rules(after) else {
                continue;
            };
            let at = lines.location(word_start);
            let line = at.line;
            let suppression = |first_line, last_line| Suppression {
                at,
                first_line,
                last_line,
                rules: rules.clone(),
            };
            match kind {
                Kind::Line => found.push(suppression(line, line)),
                Kind::NextLine => found.push(suppression(line + 1, line + 1)),
                Kind::Begin => open.push(suppression(line, usize::MAX)),
                Kind::End => {
                    if let Some(position) = open.iter().rposition(|s| s.rules == rules) {
                        let mut begun = open.remove(position);
                        begun.last_line = line;
                        found.push(begun);
                    }
                }
            }
        }
    }
    found.extend(open);
    found.sort_by_key(|s| s.at);
    found
}

enum Kind {
    Line,
    NextLine,
    Begin,
    End,
}

/// The bankwise rules a `NOLINT` names, from the text right after the word: `None` when its
/// check list names only other tools; an empty list for all of bankwise's (no list, `*`,
/// `bankwise`, `bankwise-*`).
fn bankwise_rules(after: &str) -> Option<Vec<String>> {
    let Some(list) = after.strip_prefix('(') else {
        return Some(Vec::new());
    };
    let list = &list[..list.find(')')?];
    let mut rules = Vec::new();
    let mut ours = false;
    for check in list.split(',').map(str::trim) {
        if check == "*" || check == TOOL || check == "bankwise-*" {
            return Some(Vec::new());
        }
        if let Some(rule) = check.strip_prefix("bankwise-") {
            ours = true;
            rules.push(rule.to_string());
        } else if check.len() == 5 && check.starts_with("BW") {
            ours = true;
            rules.push(check.to_string());
        }
    }
    ours.then_some(rules)
}

/// The text of every comment with its byte offset, in order. Literals are skipped so that a
/// `"// NOLINT"` string is not a comment.
pub(super) fn comments(text: &str) -> Vec<(&str, usize)> {
    comment_spans(text)
        .into_iter()
        .map(|span| {
            let comment = &text[span.clone()];
            let closed = comment.starts_with("/*") && comment.len() >= 4 && comment.ends_with("*/");
            let body_end = if closed { span.end - 2 } else { span.end };
            (&text[span.start + 2..body_end], span.start + 2)
        })
        .collect()
}

/// The byte range of every comment, delimiters included, in order: `//` to the line end
/// (`\` continuations included, as the front end splits), `/*` to `*/` (or the text end).
pub(super) fn comment_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                let end = skip_line(bytes, i);
                out.push(i..end);
                i = end;
            }
            (b'/', Some(b'*')) => {
                let end = find(bytes, i + 2, b"*/").map_or(text.len(), |close| close + 2);
                out.push(i..end.min(text.len()));
                i = end.min(text.len());
            }
            (b'"' | b'\'', _) => i = skip_quoted(bytes, i),
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(usize, usize, Vec<String>)> {
        suppressions(text)
            .into_iter()
            .map(|s| (s.first_line, s.last_line, s.rules))
            .collect()
    }

    #[test]
    fn the_forms_clang_tidy_users_write() {
        let text = "a; // NOLINT\n\
                    b; // NOLINT(bankwise)\n\
                    // NOLINTNEXTLINE(bankwise-BW001, bugprone-foo)\n\
                    c;\n\
                    d; /* NOLINT(bankwise-bank-conflict-store) */\n\
                    e; // NOLINT(bugprone-foo)\n\
                    f; // NOLINT(BW004)\n";
        assert_eq!(
            lines(text),
            vec![
                (1, 1, vec![]),
                (2, 2, vec![]),
                (4, 4, vec!["BW001".to_string()]),
                (5, 5, vec!["bank-conflict-store".to_string()]),
                (7, 7, vec!["BW004".to_string()]),
            ]
        );
    }

    #[test]
    fn a_range_and_literals() {
        let text = "// NOLINTBEGIN(bankwise)\n\
                    a;\n\
                    // NOLINTEND(bankwise)\n\
                    s = \"// NOLINT\";\n\
                    c = '\"'; // NOLINTBEGIN\n\
                    x;\n";
        assert_eq!(lines(text), vec![(1, 3, vec![]), (5, usize::MAX, vec![])]);
    }
}
