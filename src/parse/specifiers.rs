//! Macros that stand for declaration specifiers: RAFT's `DI` (`inline __device__`) and
//! `RAFT_KERNEL`, tiny-cuda-nn's `TCNN_HOST_DEVICE`, ggml's `GGML_CUDA_RESTRICT`
//! (`__restrict__`) and `GGML_API` (empty, or a visibility attribute), ArrayFire's
//! `AF_DEPRECATED("…")`. The grammar sees the text before preprocessing, where a name among a
//! declaration's specifiers reads as a type followed by a second type, and gives up on the
//! function. So the front end parses each use as the preprocessor would leave it, with what
//! does not matter to the analysis left out: the execution space (`__global__`, `__device__`,
//! `__host__`) when it fits in the use's bytes, else spaces (same length, so every offset is
//! the file's own); a use blanked so keeps its execution space for the function it precedes
//! ([`SpecifierUse`]).
//!
//! A name counts only when every definition the run knows (the file's, `-D`, its headers')
//! expands to specifiers alone, through other such macros: a macro that is code in some
//! configuration is left to the grammar.
use super::chunks::{skip_line, skip_quoted};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

/// The execution-space keywords a use of a specifier macro stands for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spaces {
    pub global: bool,
    pub device: bool,
    pub host: bool,
}

impl Spaces {
    /// Both sets of keywords.
    fn union(self, other: Spaces) -> Spaces {
        Spaces {
            global: self.global || other.global,
            device: self.device || other.device,
            host: self.host || other.host,
        }
    }

    fn any(self) -> bool {
        self.global || self.device || self.host
    }

    /// The keywords as the grammar reads them.
    fn text(self) -> String {
        let mut words = Vec::new();
        if self.global {
            words.push("__global__");
        }
        if self.host {
            words.push("__host__");
        }
        if self.device {
            words.push("__device__");
        }
        words.join(" ")
    }
}

/// A use of a specifier macro whose execution space did not fit in its bytes: they were
/// blanked, and the function after them has these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecifierUse {
    pub range: Range<usize>,
    pub spaces: Spaces,
}

/// A macro definition as the run knows it: its parameters (function-like) and body.
#[derive(Clone, Copy)]
pub struct Definition<'d> {
    pub params: Option<&'d [String]>,
    pub body: &'d str,
}

/// Keywords a specifier macro may expand to (besides other specifier macros).
const SPECIFIERS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "inline",
    "static",
    "extern",
    "constexpr",
    "__restrict__",
    "__restrict",
    "restrict",
    "__device_builtin__",
    "__cudart_builtin__",
    "__nv_pure__",
    "_Noreturn",
    "__inline",
    "__forceinline",
];

/// Keywords that take a parenthesised argument, which the analysis does not read.
const WITH_ARGUMENT: &[&str] = &["__attribute__", "__declspec", "alignas", "noexcept"];

/// Macro expansions inside one another beyond which a name is not a specifier macro.
const MAX_NESTING: usize = 16;

/// The text to parse instead of `src`, and the uses whose execution space was blanked.
/// `definitions` gives every definition of a name the run knows.
pub fn mask_specifier_macros<'s, 'd>(
    src: &'s str,
    definitions: &dyn Fn(&str) -> Vec<Definition<'d>>,
) -> (Cow<'s, str>, Vec<SpecifierUse>) {
    let mut known: HashMap<String, Option<Spaces>> = HashMap::new();
    let mut edits: Vec<(Range<usize>, Spaces)> = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        match (c, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => i = skip_line(bytes, i),
            (b'/', Some(b'*')) => {
                i = super::chunks::find(bytes, i + 2, b"*/").map_or(bytes.len(), |end| end + 2)
            }
            (b'"' | b'\'', _) => i = skip_quoted(bytes, i),
            // A directive: a `#define`'s body is the grammar's to read as written.
            (b'#', _) if at_line_start => i = skip_line(bytes, i),
            _ if c.is_ascii_digit() => {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                {
                    i += 1;
                }
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let name = &src[start..i];
                let spaces = specifier_macro(name, definitions, 0, &mut known);
                let Some(spaces) = spaces else {
                    continue;
                };
                let end = if definitions(name).iter().any(|d| d.params.is_some()) {
                    // A function-like macro's name alone is not expanded.
                    let Some(end) = arguments_end(bytes, i) else {
                        continue;
                    };
                    end
                } else {
                    i
                };
                edits.push((start..end, spaces));
                i = end;
            }
            _ => i += 1,
        }
    }
    if edits.is_empty() {
        return (Cow::Borrowed(src), Vec::new());
    }
    let mut text = String::with_capacity(src.len());
    let mut uses = Vec::new();
    let mut copied = 0;
    for (range, spaces) in edits {
        text.push_str(&src[copied..range.start]);
        let written = &src[range.clone()];
        // The whole execution space if it fits, else the part that decides what the
        // analysis does with the function (a kernel; a device function).
        let candidates = match spaces.any() {
            false => vec![String::new()],
            true => [
                Some(spaces.text()),
                spaces.global.then(|| "__global__".to_string()),
                spaces.device.then(|| "__device__".to_string()),
            ]
            .into_iter()
            .flatten()
            .collect(),
        };
        let fitting = candidates
            .into_iter()
            .find(|k| written.len() >= k.len() && written.is_char_boundary(k.len()));
        match fitting {
            Some(keywords) => {
                text.push_str(&keywords);
                blank(&mut text, &written[keywords.len()..]);
            }
            None => {
                blank(&mut text, written);
                uses.push(SpecifierUse {
                    range: range.clone(),
                    spaces,
                });
            }
        }
        copied = range.end;
    }
    text.push_str(&src[copied..]);
    (Cow::Owned(text), uses)
}

/// Appends `written` with every character but a line break made spaces, byte for byte.
fn blank(text: &mut String, written: &str) {
    for c in written.chars() {
        if c == '\n' || c == '\r' {
            text.push(c);
        } else {
            text.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
}

/// The end of the parenthesised arguments after a function-like macro's name ending at `i`
/// (spaces and line breaks between), or `None` when no `(` follows.
fn arguments_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'{' | b'}' | b';' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The execution space `name` stands for when every definition of it expands to
/// specifiers alone; `None` when it is not such a macro (or not a macro at all). `known`
/// holds each name's answer once found (a name being worked out is `None` there, so a cycle
/// ends): macros that each name many others are looked at once each.
fn specifier_macro<'d>(
    name: &str,
    definitions: &dyn Fn(&str) -> Vec<Definition<'d>>,
    depth: usize,
    known: &mut HashMap<String, Option<Spaces>>,
) -> Option<Spaces> {
    if let Some(found) = known.get(name) {
        return *found;
    }
    if depth > MAX_NESTING || SPECIFIERS.contains(&name) || WITH_ARGUMENT.contains(&name) {
        return None;
    }
    known.insert(name.to_string(), None);
    let mut spaces = Some(Spaces::default());
    let defined = definitions(name);
    if defined.is_empty() {
        spaces = None;
    }
    for definition in &defined {
        let Some(found) = body_specifiers(definition, definitions, depth, known) else {
            spaces = None;
            break;
        };
        spaces = spaces.map(|spaces| spaces.union(found));
    }
    known.insert(name.to_string(), spaces);
    spaces
}

/// The execution space of one definition's body, when it is specifiers alone.
fn body_specifiers<'d>(
    definition: &Definition,
    definitions: &dyn Fn(&str) -> Vec<Definition<'d>>,
    depth: usize,
    known: &mut HashMap<String, Option<Spaces>>,
) -> Option<Spaces> {
    let bytes = definition.body.as_bytes();
    let mut spaces = Spaces::default();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() || (c == b'\\' && bytes.get(i + 1) == Some(&b'\n')) {
            i += 1;
            continue;
        }
        if c == b'[' && bytes.get(i + 1) == Some(&b'[') {
            // A C++ attribute `[[…]]`.
            i = super::chunks::find(bytes, i + 2, b"]]")? + 2;
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            return None;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let word = &definition.body[start..i];
        match word {
            "__global__" => spaces.global = true,
            "__device__" => spaces.device = true,
            "__host__" => spaces.host = true,
            _ if SPECIFIERS.contains(&word) => {}
            _ if WITH_ARGUMENT.contains(&word) => i = arguments_end(bytes, i)?,
            _ if definition
                .params
                .is_some_and(|p| p.iter().any(|p| p == word)) =>
            {
                return None
            }
            _ => {
                let inner = specifier_macro(word, definitions, depth + 1, known)?;
                if definitions(word).iter().any(|d| d.params.is_some()) {
                    i = arguments_end(bytes, i)?;
                }
                spaces = spaces.union(inner);
            }
        }
    }
    Some(spaces)
}

/// One `#define` of the file: its parameters (function-like) and body.
pub struct FileDefinition<'s> {
    pub params: Option<Vec<String>>,
    pub body: &'s str,
}

impl FileDefinition<'_> {
    pub fn definition(&self) -> Definition<'_> {
        Definition {
            params: self.params.as_deref(),
            body: self.body,
        }
    }
}

/// Every name the file itself `#define`s, with each of its definitions.
pub fn file_definitions(src: &str) -> HashMap<&str, Vec<FileDefinition<'_>>> {
    let mut out: HashMap<&str, Vec<FileDefinition>> = HashMap::new();
    if !src.contains("define") {
        return out;
    }
    for line in src.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(name_end);
        if name.is_empty() {
            continue;
        }
        let (params, body) = match after.strip_prefix('(') {
            Some(list) => match list.split_once(')') {
                Some((params, body)) => (
                    Some(params.split(',').map(|p| p.trim().to_string()).collect()),
                    body,
                ),
                None => continue,
            },
            None => (None, after),
        };
        let body = body.split("//").next().unwrap_or(body);
        // A body continued on the next lines is read as code (a backslash is no specifier).
        let body = if body.trim_end().ends_with('\\') {
            "\\"
        } else {
            body
        };
        out.entry(name)
            .or_default()
            .push(FileDefinition { params, body });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'d>(
        defined: &'d HashMap<&str, Vec<FileDefinition<'d>>>,
        name: &str,
    ) -> Vec<Definition<'d>> {
        defined
            .get(name)
            .map(|all| all.iter().map(FileDefinition::definition).collect())
            .unwrap_or_default()
    }

    fn masked(src: &str) -> (String, Vec<SpecifierUse>) {
        let defined = file_definitions(src);
        let definitions = |name: &str| lookup(&defined, name);
        let (text, uses) = mask_specifier_macros(src, &definitions);
        assert_eq!(text.len(), src.len());
        (text.into_owned(), uses)
    }

    #[test]
    fn specifier_macros_are_parsed_as_their_execution_space_or_spaces() {
        let src = "#define DI inline __device__\n\
                   #define RAFT_KERNEL __global__ static\n\
                   #define R __restrict__\n\
                   #define API\n\
                   DI float f(const float * R p) { return p[0]; }\n\
                   RAFT_KERNEL k(float *o) {}\n\
                   API void g();\n";
        let (text, uses) = masked(src);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#define DI inline __device__");
        assert_eq!(lines[4], "   float f(const float *   p) { return p[0]; }");
        assert_eq!(lines[5], "__global__  k(float *o) {}");
        assert_eq!(lines[6], "    void g();");
        let start = src.find("DI float").unwrap();
        assert_eq!(
            uses,
            vec![SpecifierUse {
                range: start..start + 2,
                spaces: Spaces {
                    device: true,
                    ..Spaces::default()
                },
            }]
        );
    }

    #[test]
    fn a_macro_that_is_code_somewhere_is_left_alone() {
        let src = "#ifdef X\n#define Q\n#else\n#define Q 4\n#endif\n\
                   #define HD __host__ __device__\n#define HDI HD inline\n\
                   #define DEP(msg) __attribute__((deprecated(msg)))\n\
                   #define F(x) x\n\
                   int a[Q]; HDI int h(); DEP(\"old, \\\"really\\\"\") int old(); F(int) b;\n\
                   // DI in a comment, \"HD\" in a string\n";
        let (text, uses) = masked(src);
        let last = text.lines().nth(9).unwrap();
        assert_eq!(
            last,
            "int a[Q];     int h();                        int old(); F(int) b;"
        );
        assert_eq!(uses.len(), 1);
        assert!(uses[0].spaces.host && uses[0].spaces.device);
        assert!(text.ends_with("// DI in a comment, \"HD\" in a string\n"));
    }

    /// Each macro naming the next four times, 40 deep: looked at once each (4^16 looks, as
    /// before memoisation, would not end in any test's time).
    #[test]
    fn macros_that_name_others_many_times_are_looked_at_once() {
        let mut src = String::new();
        for i in 0..40 {
            src.push_str(&format!("#define M{i} M{0} M{0} M{0} M{0}\n", i + 1));
        }
        src.push_str("#define M40 __device__\nM0 float f();\n");
        let (text, uses) = masked(&src);
        // Deeper than the nesting bound: left to the grammar.
        assert!(text.ends_with("M0 float f();\n") && uses.is_empty());
    }

    #[test]
    fn keywords_and_cycles_are_not_macros() {
        let src = "#define __device__\n#define A B\n#define B A\n__device__ void f(); A x;\n";
        let defined = file_definitions(src);
        let definitions = |name: &str| lookup(&defined, name);
        for name in ["__device__", "A", "B"] {
            assert_eq!(
                specifier_macro(name, &definitions, 0, &mut HashMap::new()),
                None,
                "{name}"
            );
        }
        let (text, _) = masked(src);
        assert_eq!(text, src);
    }
}
