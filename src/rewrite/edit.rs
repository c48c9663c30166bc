//! Source edits (docs/ARCHITECTURE.md §7): byte ranges of the original text and their replacements,
//! grouped into fixes that say how safe they are to apply, as ruff's fixes do.
use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

/// The bytes `range` of the original text become `replacement`; an empty range inserts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Edit {
    pub range: Range<usize>,
    pub replacement: String,
}

impl Edit {
    pub fn replace(range: Range<usize>, replacement: impl Into<String>) -> Self {
        Edit {
            range,
            replacement: replacement.into(),
        }
    }

    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Edit::replace(at..at, text)
    }

    fn is_insertion(&self) -> bool {
        self.range.is_empty()
    }
}

/// How safe a fix is to apply.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Applicability {
    /// Keeps every result and the shared-memory footprint the user allowed: applied by
    /// default.
    Safe,
    /// Keeps every result that was checked, but something unchecked may break: shared memory
    /// grows beyond the budget (occupancy may drop, a kernel near the limit may no longer
    /// launch), or the map is proven for the template arguments analysed only. Applied with
    /// `--unsafe-fixes`.
    Unsafe,
    /// Shown, never applied: the edits would not cover every access of the array.
    DisplayOnly,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
            Applicability::DisplayOnly => "display-only",
        }
    }
}

impl fmt::Display for Applicability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The edits that rewrite one array, with what they do and how safe they are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fix {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

/// Why edits cannot be applied: always a bug in whoever made them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("edits overlap: bytes {first:?} and {second:?}")]
    Overlap {
        first: Range<usize>,
        second: Range<usize>,
    },
    #[error("edit {range:?} lies outside the {len} bytes of the text")]
    OutOfBounds { range: Range<usize>, len: usize },
    #[error("edit {range:?} splits a UTF-8 character")]
    NotCharBoundary { range: Range<usize> },
}

/// Applies `edits` (offsets into `text`) back to front, so that no edit moves another's
/// offsets. Identical edits count once (a compound assignment is a load and a store of one
/// subscript; the instances of a template make the same edits); different insertions at one
/// offset land in the order given, before a replacement that starts there. Any other two
/// edits that share a byte, or an insertion strictly inside a replaced range, overlap. Every
/// byte outside the edits is copied.
pub fn apply<E: Borrow<Edit>>(text: &str, edits: &[E]) -> Result<String, EditError> {
    Ok(splice(text, &in_order(text, edits)?))
}

/// `text` with `sorted` (checked, in order) applied.
fn splice(text: &str, sorted: &[&Edit]) -> String {
    let mut pieces: Vec<&str> = Vec::with_capacity(2 * sorted.len() + 1);
    let mut end = text.len();
    for edit in sorted.iter().rev() {
        pieces.push(&text[edit.range.end..end]);
        pieces.push(&edit.replacement);
        end = edit.range.start;
    }
    pieces.push(&text[..end]);
    // Sized once: the output of a large file is most of its size again.
    let mut output = String::with_capacity(pieces.iter().map(|piece| piece.len()).sum());
    for piece in pieces.iter().rev() {
        output.push_str(piece);
    }
    output
}

/// [`apply`], and the edits that turn its output back into `text`: a caller that must give
/// back both texts need not hold both while it works on the output.
pub fn apply_undoably<E: Borrow<Edit>>(
    text: &str,
    edits: &[E],
) -> Result<(String, Vec<Edit>), EditError> {
    let sorted = in_order(text, edits)?;
    let output = splice(text, &sorted);
    let mut undo = Vec::with_capacity(sorted.len());
    // Where each edit's replacement lands in the output: its start, moved by what the edits
    // before it added or removed.
    let mut moved_by: isize = 0;
    for edit in sorted {
        let start = edit.range.start.saturating_add_signed(moved_by);
        undo.push(Edit::replace(
            start..start + edit.replacement.len(),
            &text[edit.range.clone()],
        ));
        moved_by += edit.replacement.len() as isize - edit.range.len() as isize;
    }
    Ok((output, undo))
}

/// `edits` checked against `text`, without duplicates, in the order [`apply`] makes them.
fn in_order<'e, E: Borrow<Edit>>(text: &str, edits: &'e [E]) -> Result<Vec<&'e Edit>, EditError> {
    for edit in edits.iter().map(Borrow::borrow) {
        let range = &edit.range;
        if range.start > range.end || range.end > text.len() {
            return Err(EditError::OutOfBounds {
                range: range.clone(),
                len: text.len(),
            });
        }
        if !text.is_char_boundary(range.start) || !text.is_char_boundary(range.end) {
            return Err(EditError::NotCharBoundary {
                range: range.clone(),
            });
        }
    }
    let mut seen = HashSet::new();
    let mut sorted: Vec<&Edit> = edits
        .iter()
        .map(Borrow::borrow)
        .filter(|e| seen.insert(*e))
        .collect();
    // Stable: insertions at one offset keep their order.
    sorted.sort_by_key(|e| (e.range.start, !e.is_insertion(), e.range.end));
    for pair in sorted.windows(2) {
        let (first, second) = (&pair[0].range, &pair[1].range);
        if second.start < first.end || (first == second && !first.is_empty()) {
            return Err(EditError::Overlap {
                first: first.clone(),
                second: second.clone(),
            });
        }
    }
    Ok(sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_back_to_front_and_leave_every_other_byte() {
        let text = "a[i] = b; /* keep */\r\n  x = a[j];\r\n";
        let i = text.find('i').expect("i");
        let j = text.find('j').expect("j");
        let edits = [
            Edit::replace(j..j + 1, "f(j)"),
            Edit::replace(i..i + 1, "f(i)"),
            Edit::insert(0, "// map\r\n"),
        ];
        assert_eq!(
            apply(text, &edits),
            Ok("// map\r\na[f(i)] = b; /* keep */\r\n  x = a[f(j)];\r\n".to_string())
        );
    }

    #[test]
    fn crlf_and_text_around_the_edits_survive_byte_for_byte() {
        let text = "#define T 32\r\n\t__shared__ float t[T][T]; // tile\r\n\r\nt[y][x] = 0;";
        let last = text.rfind("T]").expect("last extent");
        let out = apply(text, &[Edit::replace(last..last + 1, "T + 1")]).expect("applies");
        assert_eq!(
            out,
            "#define T 32\r\n\t__shared__ float t[T][T + 1]; // tile\r\n\r\nt[y][x] = 0;"
        );
        assert_eq!(out.matches("\r\n").count(), text.matches("\r\n").count());
        assert_eq!(apply::<Edit>(text, &[]), Ok(text.to_string()));
    }

    #[test]
    fn insertions_at_one_offset_keep_their_order_and_precede_a_replacement_there() {
        let text = "abc";
        let edits = [
            Edit::replace(1..2, "B"),
            Edit::insert(1, "1"),
            Edit::insert(1, "2"),
            Edit::insert(3, "!"),
        ];
        assert_eq!(apply(text, &edits), Ok("a12Bc!".to_string()));
    }

    #[test]
    fn the_undo_edits_give_the_text_back() {
        let text = "ab\r\ncd ef é gh";
        let edits = [
            Edit::insert(0, "<"),
            Edit::insert(0, "<<"),
            Edit::replace(1..2, "BBB"),
            Edit::replace(5..7, ""),
            Edit::replace(5..7, ""),
            Edit::replace(8..13, "x"),
            Edit::insert(text.len(), ">"),
        ];
        let (output, undo) = apply_undoably(text, &edits).unwrap();
        assert_eq!(output, apply(text, &edits).unwrap());
        assert_eq!(output, "<<<aBBB\r\ncexgh>");
        assert_eq!(apply(&output, &undo).unwrap(), text);
    }

    #[test]
    fn identical_edits_count_once() {
        let text = "s[i] += 1;";
        let edit = Edit::replace(2..3, "f(i)");
        let map = Edit::insert(0, "map\n");
        let other = Edit::insert(0, "other\n");
        assert_eq!(
            apply(text, &[map.clone(), edit.clone(), other, edit, map]),
            Ok("map\nother\ns[f(i)] += 1;".to_string())
        );
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let text = "abcdef";
        let overlap = apply(text, &[Edit::replace(1..4, "x"), Edit::replace(3..5, "y")]);
        assert_eq!(
            overlap,
            Err(EditError::Overlap {
                first: 1..4,
                second: 3..5
            })
        );
        let same_range = apply(text, &[Edit::replace(1..2, "x"), Edit::replace(1..2, "y")]);
        assert!(matches!(same_range, Err(EditError::Overlap { .. })));
        let inside = apply(text, &[Edit::replace(1..4, "x"), Edit::insert(2, "y")]);
        assert!(matches!(inside, Err(EditError::Overlap { .. })));
        // Touching ranges do not overlap.
        assert_eq!(
            apply(text, &[Edit::replace(1..3, "x"), Edit::replace(3..4, "y")]),
            Ok("axyef".to_string())
        );
    }

    #[test]
    fn edits_outside_the_text_or_inside_a_character_are_refused() {
        assert!(matches!(
            apply("ab", &[Edit::replace(1..3, "x")]),
            Err(EditError::OutOfBounds { .. })
        ));
        assert!(matches!(
            apply("aé", &[Edit::insert(2, "x")]),
            Err(EditError::NotCharBoundary { .. })
        ));
    }
}
