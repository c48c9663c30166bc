//! Reading a source file: size limit, UTF-8 check, and byte offset → line/column.
use super::model::Location;
use std::io::Read;
use std::path::Path;

/// Files larger than this are refused: bankwise is a pre-build step and must stay fast.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(
        "{path}: holds the private-use character U+{at:04X}, which bankwise keeps for bytes \
         that are not UTF-8 in comments; nothing read"
    )]
    HoldsPrivateUse { path: String, at: u32 },
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: file is {size} bytes or more, over the {limit}-byte limit; split it or pass --max-file-size")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("{path}: {kind}, not a regular file; nothing read")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path}: lines end with a carriage return alone (classic Mac OS); convert them to LF or CRLF")]
    CarriageReturnLines { path: String },
    #[error(
        "{path}:{line}:{col}: file is not valid UTF-8 (byte 0x{byte:02x}) outside a comment; \
         re-encode it as UTF-8"
    )]
    NotUtf8 {
        path: String,
        line: usize,
        col: usize,
        byte: u8,
    },
}

pub fn read_source(path: &Path, limit: u64) -> Result<String, SourceError> {
    let display = path.display().to_string();
    let io = |source| SourceError::Io {
        path: display.clone(),
        source,
    };
    let too_large = |size| SourceError::TooLarge {
        path: display.clone(),
        size,
        limit,
    };
    // Offsets are 32-bit (see `LineIndex`), whatever limit was asked for.
    let limit = limit.min(MAX_ADDRESSABLE_BYTES);
    // Before opening: opening a FIFO waits for a writer, forever.
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(SourceError::NotRegular {
            path: display,
            kind: file_kind(&metadata),
        });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > limit {
        return Err(too_large(size));
    }
    read_source_sized(file, &display, limit, size)
}

/// The source text `reader` gives (stdin: `bankwise check -`), named `display` in errors:
/// at most `limit` bytes, UTF-8, lines ending in LF or CRLF.
pub fn read_source_from(
    reader: impl Read,
    display: &str,
    limit: u64,
) -> Result<String, SourceError> {
    read_source_sized(reader, display, limit, 0)
}

/// [`read_source_from`] with room for `expected_bytes` (a file's size) reserved first: a
/// buffer grown by doubling would hold up to twice the file for as long as the text lives.
fn read_source_sized(
    reader: impl Read,
    display: &str,
    limit: u64,
    expected_bytes: u64,
) -> Result<String, SourceError> {
    let limit = limit.min(MAX_ADDRESSABLE_BYTES);
    let display = display.to_string();
    // Bounded read: a device or a growing file can report a small size and then stream.
    // One byte more than the size, so that reading the end needs no second allocation.
    let mut bytes = Vec::with_capacity(usize::try_from(expected_bytes.min(limit)).unwrap_or(0) + 1);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| SourceError::Io {
            path: display.clone(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(SourceError::TooLarge {
            path: display,
            size: bytes.len() as u64,
            limit,
        });
    }
    let not_utf8 = |bytes: &[u8], valid: usize| {
        let before = &bytes[..valid];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        SourceError::NotUtf8 {
            path: display.clone(),
            line,
            col: valid - line_start + 1,
            byte: bytes[valid],
        }
    };
    if let Some(held) = first_held_character(&bytes) {
        return Err(SourceError::HoldsPrivateUse {
            path: display,
            at: held,
        });
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let bytes = err.into_bytes();
            let text = with_foreign_bytes(&bytes).map_err(|valid| not_utf8(&bytes, valid))?;
            // A stand-in takes 3 bytes for 1: offsets must still fit `LineIndex`'s 32 bits.
            if text.len() as u64 > limit {
                return Err(SourceError::TooLarge {
                    path: display,
                    size: text.len() as u64,
                    limit,
                });
            }
            text
        }
    };
    // The grammar ends lines at LF only: such a file would parse as one line.
    if text.contains('\r') && !text.contains('\n') {
        return Err(SourceError::CarriageReturnLines { path: display });
    }
    Ok(text)
}

/// A byte that is not UTF-8 inside a comment (an old header's Latin-1 `©`) stands, while
/// bankwise holds the text, for the character `FOREIGN_BASE + byte`: U+F780–U+F7FF, in
/// Unicode's private use area, which no file bankwise reads may hold itself. Writing a file
/// turns them back into the bytes ([`restored_bytes`]), so nothing of the comment is lost.
const FOREIGN_BASE: u32 = 0xF700;

fn is_foreign(c: char) -> bool {
    (FOREIGN_BASE + 0x80..=FOREIGN_BASE + 0xFF).contains(&u32::from(c))
}

/// The first character of `bytes` (valid UTF-8 parts) in the range kept for foreign bytes.
fn first_held_character(bytes: &[u8]) -> Option<u32> {
    bytes
        .utf8_chunks()
        .flat_map(|chunk| chunk.valid().chars())
        .find(|&c| is_foreign(c))
        .map(u32::from)
}

/// `bytes` as text, each byte that is not UTF-8 held as its stand-in character; `Err` with
/// the offset of the first such byte outside a comment.
fn with_foreign_bytes(bytes: &[u8]) -> Result<String, usize> {
    let mut text = String::with_capacity(bytes.len() + 16);
    // (offset in `text`, offset in `bytes`) of each stand-in.
    let mut held: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        at += chunk.valid().len();
        for &byte in chunk.invalid() {
            held.push((text.len(), at));
            text.push(char::from_u32(FOREIGN_BASE + u32::from(byte)).unwrap_or('?'));
            at += 1;
        }
    }
    let comments: Vec<(usize, usize)> = super::suppress::comments(&text)
        .into_iter()
        .map(|(body, start)| (start, start + body.len()))
        .collect();
    // The comments come in order and do not overlap: the last one starting at or before a
    // stand-in is the only one that can hold it.
    let in_comment = |offset: usize| {
        let next = comments.partition_point(|(start, _)| *start <= offset);
        next > 0 && offset < comments[next - 1].1
    };
    let outside = held.iter().find(|(offset, _)| !in_comment(*offset));
    match outside {
        Some(&(_, byte)) => Err(byte),
        None => Ok(text),
    }
}

/// The bytes of a text bankwise writes: a stand-in for a foreign byte becomes the byte again.
pub fn restored_bytes(text: &str) -> std::borrow::Cow<'_, [u8]> {
    if !text.chars().any(is_foreign) {
        return std::borrow::Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if is_foreign(c) {
            out.push((u32::from(c) - FOREIGN_BASE) as u8);
        } else {
            let mut buffer = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The largest file whose offsets fit the 32 bits of [`LineIndex`].
const MAX_ADDRESSABLE_BYTES: u64 = u32::MAX as u64 - 1;

/// The extensions a directory walk picks up: CUDA sources and headers.
pub const CUDA_EXTENSIONS: [&str; 2] = ["cu", "cuh"];

/// Header extensions: read for what they declare, and never a failed run without a kernel.
const HEADER_EXTENSIONS: [&str; 9] = ["cuh", "h", "hh", "hpp", "hxx", "inl", "inc", "ipp", "tcc"];

/// C and C++ sources, which nvcc compiles as CUDA with `-x cu`.
const CXX_EXTENSIONS: [&str; 5] = ["c", "cc", "cpp", "cxx", "c++"];

fn extension_in(path: &Path, list: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| list.iter().any(|l| l.eq_ignore_ascii_case(e)))
}

/// Whether `path` names a header.
pub fn is_header(path: &Path) -> bool {
    extension_in(path, &HEADER_EXTENSIONS)
}

/// Whether `path` names a CUDA, C or C++ source or header: what bankwise reads when it is
/// named on the command line (other files only with `-x cu`).
pub fn is_c_family(path: &Path) -> bool {
    extension_in(path, &CUDA_EXTENSIONS) || is_header(path) || extension_in(path, &CXX_EXTENSIONS)
}

/// Whether a directory walk picks `path` up.
pub fn is_cuda(path: &Path) -> bool {
    extension_in(path, &CUDA_EXTENSIONS)
}

/// `a FIFO`, `a directory`, … for messages.
pub fn file_kind(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Maps byte offsets to 1-based line and column.
#[derive(Debug)]
pub struct LineIndex {
    /// 32 bits: a file is at most [`MAX_FILE_BYTES`].
    line_starts: Vec<u32>,
    /// Where the stand-ins for foreign bytes are (see [`FOREIGN_BASE`]); usually none.
    stand_ins: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = Vec::with_capacity(text.bytes().filter(|&b| b == b'\n').count() + 1);
        line_starts.push(0);
        line_starts.extend(text.match_indices('\n').map(|(i, _)| offset_u32(i + 1)));
        // U+F780–U+F7FF are encoded EF 9E xx and EF 9F xx, and nothing else is.
        let stand_ins = text
            .as_bytes()
            .windows(2)
            .enumerate()
            .filter(|(_, pair)| pair[0] == 0xEF && matches!(pair[1], 0x9E | 0x9F))
            .map(|(i, _)| offset_u32(i))
            .collect();
        LineIndex {
            line_starts,
            stand_ins,
        }
    }

    /// The byte offset where 1-based `line` starts; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        let index = line.checked_sub(1)?;
        self.line_starts.get(index).map(|&start| start as usize)
    }

    pub fn location(&self, offset: usize) -> Location {
        let line = self
            .line_starts
            .partition_point(|&start| start as usize <= offset);
        let start = self.line_starts[line - 1] as usize;
        // A stand-in is 3 bytes here for the file's 1: columns count the file's bytes.
        let stand_ins = if self.stand_ins.is_empty() {
            0
        } else {
            let before = |limit: usize| self.stand_ins.partition_point(|&s| (s as usize) < limit);
            before(offset) - before(start)
        };
        Location {
            line,
            col: (offset - start + 1).saturating_sub(2 * stand_ins).max(1),
        }
    }
}

/// A byte offset of a text no longer than [`MAX_FILE_BYTES`] (the longest text bankwise reads;
/// its own texts are shorter still).
fn offset_u32(offset: usize) -> u32 {
    u32::try_from(offset).expect("texts are at most MAX_FILE_BYTES long")
}

#[cfg(test)]
mod tests {

    #[test]
    fn columns_count_a_stand_in_as_the_one_byte_it_stands_for() {
        let text = "int a;\n/* \u{F7A9}\u{F7A9} */ x = 1;\n";
        let lines = super::LineIndex::new(text);
        let x = text.find('x').expect("x");
        assert_eq!((lines.location(x).line, lines.location(x).col), (2, 10));
        assert_eq!(lines.location(text.find('1').expect("1")).col, 14);
        assert_eq!(lines.location(4).col, 5);
    }

    #[test]
    fn foreign_bytes_in_comments_are_held_and_given_back() {
        let bytes = b"// Caf\xe9 \xa9\nint x; /* \xff */\n";
        let text = with_foreign_bytes(bytes).expect("only in comments");
        assert_eq!(text.lines().count(), 2);
        assert_eq!(&*restored_bytes(&text), &bytes[..]);
        // In code, the offset of the first such byte.
        assert_eq!(with_foreign_bytes(b"int caf\xe9;\n"), Err(7));
        assert_eq!(
            with_foreign_bytes(b"char *s = \"\xe9\"; // \xe9\n"),
            Err(11)
        );
        // A file that holds a stand-in itself is refused: its bytes could not be told apart.
        assert_eq!(first_held_character("// \u{f7a9}".as_bytes()), Some(0xF7A9));
        assert_eq!(first_held_character(b"// \xa9 plain"), None);
    }
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_columns() {
        let index = LineIndex::new("ab\ncd\r\n\nx");
        assert_eq!(index.location(0), Location { line: 1, col: 1 });
        assert_eq!(index.location(4), Location { line: 2, col: 2 });
        assert_eq!(index.location(7), Location { line: 3, col: 1 });
        assert_eq!(index.location(8), Location { line: 4, col: 1 });
    }

    #[test]
    fn non_utf8_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.cu");
        std::fs::write(&path, b"int a;\nint \xffb;\n").unwrap();
        let err = read_source(&path, MAX_FILE_BYTES).unwrap_err();
        assert!(matches!(
            err,
            SourceError::NotUtf8 {
                line: 2,
                col: 5,
                byte: 0xff,
                ..
            }
        ));
        assert!(err
            .to_string()
            .contains("bad.cu:2:5: file is not valid UTF-8"));
    }

    #[test]
    fn oversized_files_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.cu");
        std::fs::write(&path, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_source(&path, 1024),
            Err(SourceError::TooLarge { size: 2048, .. })
        ));
    }
}
