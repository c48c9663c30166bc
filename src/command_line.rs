//! One model of a compiler's command line, for every path that reads one: the pre-build
//! step (nvcc's own arguments), `--compile-commands` (a compilation database's commands).
//! Response files (`@file`, nvcc's `--options-file`/`-optf`) are read, nvcc's environment
//! flags (`NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`) added where nvcc adds them, and what
//! decides the source a compiler sees is kept in order: `-D`/`-U`, `-iquote`, `-I`,
//! `-isystem` and `-include`.
use std::path::{Path, PathBuf};

/// Response files inside response files beyond which reading stops (as a loop would).
const MAX_RESPONSE_DEPTH: usize = 8;

/// Response files larger than this are not read.
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// What decides the source a compiler sees, besides the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileFlags {
    /// Where includes are looked for after the including file's directory, in the
    /// compiler's order: `-iquote` (quoted includes only), then `-I`, then `-isystem`;
    /// relative ones taken from the directory the compiler runs in.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME[=VALUE]` in order, less those a later `-U` removes.
    pub defines: Vec<String>,
    /// `-include FILE` (nvcc's `--pre-include`): read before the file, in order.
    pub pre_includes: Vec<PathBuf>,
    /// The first real architecture the build compiles for (`sm_80` from `-arch=sm_80`,
    /// `-arch compute_80` or `-gencode arch=compute_80,code=sm_80`), nvcc's only.
    pub arch: Option<String>,
}

/// How a command line spells its lists: nvcc splits `-I a,b` and `-D A,B` at commas, gcc
/// and clang do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Nvcc,
    Gcc,
}

impl Dialect {
    /// The dialect of the compiler `program` (`nvcc`, `/usr/local/cuda/bin/nvcc`, `g++`).
    pub fn of(program: &str) -> Dialect {
        let name = Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program);
        if name.starts_with("nvcc") {
            Dialect::Nvcc
        } else {
            Dialect::Gcc
        }
    }
}

/// One argument after response files are read: its text, and its index among the arguments
/// as given when it was given there (not read from a file or the environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub text: String,
    pub given: Option<usize>,
}

/// Why a command line could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum CommandLineError {
    #[error("cannot read the response file {path}: {source}")]
    ResponseFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the response file {path} is larger than 1 MiB")]
    ResponseTooLarge { path: String },
    #[error("response files nest more than {MAX_RESPONSE_DEPTH} deep at {path}")]
    ResponseTooDeep { path: String },
}

/// `args` with nvcc's environment flags around them, as nvcc reads its command line:
/// `NVCC_PREPEND_FLAGS` before, `NVCC_APPEND_FLAGS` after (each split as a shell would).
pub fn with_nvcc_environment(args: &[String]) -> Vec<Argument> {
    let from_env = |name: &str| -> Vec<Argument> {
        std::env::var(name)
            .map(|flags| {
                split_command(&flags)
                    .into_iter()
                    .map(|text| Argument { text, given: None })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut all = from_env("NVCC_PREPEND_FLAGS");
    all.extend(args.iter().enumerate().map(|(i, text)| Argument {
        text: text.clone(),
        given: Some(i),
    }));
    all.extend(from_env("NVCC_APPEND_FLAGS"));
    all
}

/// The arguments as given, each marked with its index.
pub fn given(args: &[String]) -> Vec<Argument> {
    args.iter()
        .enumerate()
        .map(|(i, text)| Argument {
            text: text.clone(),
            given: Some(i),
        })
        .collect()
}

/// `args` with every response file replaced by the arguments it holds: `@FILE`, and for
/// nvcc `--options-file FILE[,FILE]`/`-optf FILE` in every spelling. Relative files are
/// read from `directory`.
pub fn expand_response_files(
    args: Vec<Argument>,
    dialect: Dialect,
    directory: &Path,
) -> Result<Vec<Argument>, CommandLineError> {
    // A stack of pending arguments, the last first, with the depth of files they came from.
    let mut pending: Vec<(Argument, usize)> = args.into_iter().rev().map(|a| (a, 0)).collect();
    let mut expanded = Vec::new();
    while let Some((arg, depth)) = pending.pop() {
        let files: Vec<String> = if let Some(file) = arg.text.strip_prefix('@') {
            vec![file.to_string()]
        } else if dialect == Dialect::Nvcc {
            match options_file_value(&arg.text) {
                Some(Some(value)) => split_list(&value),
                // The files are the next argument.
                Some(None) => match pending.pop() {
                    Some((next, _)) => split_list(&next.text),
                    None => Vec::new(),
                },
                None => {
                    expanded.push(arg);
                    continue;
                }
            }
        } else {
            expanded.push(arg);
            continue;
        };
        for file in files.iter().rev() {
            if depth >= MAX_RESPONSE_DEPTH {
                return Err(CommandLineError::ResponseTooDeep { path: file.clone() });
            }
            let inner = read_response_file(&directory.join(file), file)?;
            pending.extend(
                inner
                    .into_iter()
                    .rev()
                    .map(|text| (Argument { text, given: None }, depth + 1)),
            );
        }
    }
    Ok(expanded)
}

/// For `--options-file`/`-optf` in any spelling: `Some(Some(files))` with the value attached
/// (`--options-file=a.rsp`), `Some(None)` when the value is the next argument.
fn options_file_value(arg: &str) -> Option<Option<String>> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let (name, value) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value.to_string())),
        None => (body, None),
    };
    matches!(name, "options-file" | "optf").then_some(value)
}

fn read_response_file(path: &Path, shown: &str) -> Result<Vec<String>, CommandLineError> {
    let error = |source| CommandLineError::ResponseFile {
        path: shown.to_string(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(error)?;
    if metadata.len() > MAX_RESPONSE_BYTES {
        return Err(CommandLineError::ResponseTooLarge {
            path: shown.to_string(),
        });
    }
    let bytes = std::fs::read(path).map_err(error)?;
    Ok(split_command(&String::from_utf8_lossy(&bytes)))
}

/// The flags in `args` that decide the source the compiler sees (see [`CompileFlags`]);
/// relative directories and files are taken from `directory`. Every other argument is
/// skipped, a value it takes included, so that `-o -Ifoo` is not an include path.
pub fn compile_flags(args: &[String], dialect: Dialect, directory: &Path) -> CompileFlags {
    let mut quote_dirs = Vec::new();
    let mut include_dirs = Vec::new();
    let mut system_dirs = Vec::new();
    let mut after_dirs = Vec::new();
    let mut flags = CompileFlags::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some((option, attached)) = recognise(arg) else {
            continue;
        };
        let value = match attached {
            Some(value) => value,
            None => {
                i += 1;
                match args.get(i - 1) {
                    Some(value) => value.clone(),
                    None => break,
                }
            }
        };
        if dialect == Dialect::Nvcc && flags.arch.is_none() {
            flags.arch = match option {
                Flag::Architecture => real_architecture(&value),
                Flag::GenerateCode => value
                    .match_indices("sm_")
                    .find_map(|(at, _)| real_architecture(&value[at..]))
                    .or_else(|| {
                        let arch = value.split(',').find_map(|p| p.strip_prefix("arch="))?;
                        real_architecture(arch)
                    }),
                _ => None,
            };
        }
        let values = match dialect {
            Dialect::Nvcc => split_list(&value),
            Dialect::Gcc => vec![value],
        };
        if option == Flag::HostCompiler {
            // nvcc passes these to every preprocessing of the file, the device passes' too.
            if dialect == Dialect::Nvcc {
                let host = compile_flags(&values, Dialect::Gcc, directory);
                flags.defines.extend(host.defines);
                flags.pre_includes.extend(host.pre_includes);
                include_dirs.extend(host.include_dirs);
            }
            continue;
        }
        match option {
            Flag::Define => flags.defines.extend(values),
            Flag::Undefine => {
                for name in values {
                    flags
                        .defines
                        .retain(|d| d.split(['=', '(']).next() != Some(name.as_str()));
                }
            }
            Flag::Quote => quote_dirs.extend(values.iter().map(|v| directory.join(v))),
            Flag::Include => include_dirs.extend(values.iter().map(|v| directory.join(v))),
            Flag::System => system_dirs.extend(values.iter().map(|v| directory.join(v))),
            Flag::After => after_dirs.extend(values.iter().map(|v| directory.join(v))),
            Flag::PreInclude => flags
                .pre_includes
                .extend(values.iter().map(|v| directory.join(v))),
            Flag::Other | Flag::HostCompiler | Flag::Architecture | Flag::GenerateCode => {}
        }
    }
    flags.include_dirs = quote_dirs;
    flags.include_dirs.append(&mut include_dirs);
    flags.include_dirs.append(&mut system_dirs);
    flags.include_dirs.append(&mut after_dirs);
    flags
}

/// The options [`compile_flags`] reads, and `Other` for those whose value it skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flag {
    Define,
    Undefine,
    Quote,
    Include,
    System,
    PreInclude,
    /// `-idirafter`: searched after the system directories.
    After,
    /// nvcc's `-Xcompiler`: options for the host compiler, which preprocesses every pass.
    HostCompiler,
    /// nvcc's `-arch`.
    Architecture,
    /// nvcc's `-gencode arch=…,code=…`.
    GenerateCode,
    Other,
}

/// Options with a value, as (spellings, what they are). A spelling that starts with `--`
/// is nvcc's long name and takes its value after `=` or as the next argument; the others
/// take it attached, after `=` (nvcc's `-I=dir`), or as the next argument.
const OPTIONS: &[(&[&str], Flag)] = &[
    (&["--define-macro", "-D"], Flag::Define),
    (&["--undefine-macro", "-U"], Flag::Undefine),
    (&["-iquote"], Flag::Quote),
    (&["--include-path", "-I"], Flag::Include),
    (&["--system-include", "-isystem"], Flag::System),
    // `-imacros` keeps a file's macros only, which is all the analysis takes of a header.
    (&["--pre-include", "-include", "-imacros"], Flag::PreInclude),
    (&["-idirafter"], Flag::After),
    (&["--compiler-options", "-Xcompiler"], Flag::HostCompiler),
    (&["--gpu-architecture", "-arch"], Flag::Architecture),
    (&["--generate-code", "-gencode"], Flag::GenerateCode),
    (&["--gpu-code", "-code"], Flag::Other),
    // Values that could be read as one of the above: `-o -Ifoo`, `-MF -Dx`, `-x cu`.
    (
        &[
            "-o",
            "-MF",
            "-MT",
            "-MQ",
            "-x",
            "-Xlinker",
            "--linker-options",
            "-Xptxas",
            "--ptxas-options",
            "-Xcudafe",
            "-Xclang",
            "-ccbin",
            "--compiler-bindir",
            "--output-file",
            "-iprefix",
            "-isysroot",
            "--sysroot",
            "-target",
        ],
        Flag::Other,
    ),
];

/// The option `arg` is, and its value when attached; `None` for anything else.
fn recognise(arg: &str) -> Option<(Flag, Option<String>)> {
    // nvcc also takes its long names with one dash and short ones with two.
    let undashed = arg.trim_start_matches('-');
    if undashed.len() == arg.len() {
        return None;
    }
    for (spellings, flag) in OPTIONS {
        for spelling in *spellings {
            let name = spelling.trim_start_matches('-');
            let Some(rest) = undashed.strip_prefix(name) else {
                continue;
            };
            if rest.is_empty() {
                return Some((*flag, None));
            }
            if let Some(value) = rest.strip_prefix('=') {
                return Some((*flag, Some(value.to_string())));
            }
            // Attached values: one-letter options (`-Idir`, `-DX`), and gcc's
            // `-isystemdir`, `-iquotedir`. A longer name is another option
            // (`-include-path` is not `-include` of `-path`).
            let attaches =
                name.len() == 1 || matches!(*flag, Flag::Quote | Flag::System | Flag::After);
            let longer_option = OPTIONS.iter().flat_map(|(s, _)| s.iter()).any(|other| {
                other.len() > spelling.len() && undashed.starts_with(other.trim_start_matches('-'))
            });
            if attaches && !longer_option && arg.len() - undashed.len() == 1 {
                return Some((*flag, Some(rest.to_string())));
            }
        }
    }
    None
}

/// `sm_80` for `sm_80` or `compute_80`; `None` for `native`, `all` and the like.
fn real_architecture(value: &str) -> Option<String> {
    let number = value
        .split(',')
        .next()?
        .strip_prefix("sm_")
        .or_else(|| value.strip_prefix("compute_"))?;
    let number: String = number
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    (!number.is_empty() && number.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| format!("sm_{number}"))
}

/// A list option's value split at commas, as nvcc splits it.
fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// A command string split into arguments as a POSIX shell would: whitespace separates,
/// quotes group, a backslash escapes the next character.
pub fn split_command(command: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
                in_word = true;
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    arguments.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        arguments.push(current);
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_first_real_architecture_is_the_builds() {
        let arch = |line: &str| {
            let args: Vec<String> = line.split(' ').map(str::to_string).collect();
            compile_flags(&args, Dialect::Nvcc, Path::new("/b")).arch
        };
        assert_eq!(arch("-arch=sm_80 -c k.cu").as_deref(), Some("sm_80"));
        assert_eq!(arch("-arch compute_86 k.cu").as_deref(), Some("sm_86"));
        assert_eq!(
            arch("--gpu-architecture=sm_90a k.cu").as_deref(),
            Some("sm_90a")
        );
        assert_eq!(
            arch("--generate-code=arch=compute_90,code=[compute_90,sm_90] k.cu").as_deref(),
            Some("sm_90")
        );
        assert_eq!(
            arch("-gencode arch=compute_75,code=compute_75 -gencode arch=compute_80,code=sm_80")
                .as_deref(),
            Some("sm_75")
        );
        assert_eq!(arch("-arch=native k.cu"), None);
        assert_eq!(arch("-O3 k.cu"), None);
    }

    #[test]
    fn every_spelling_of_every_flag_in_the_compilers_order() {
        let flags = compile_flags(
            &words(
                "-isystem /sys -Ia -I b -I=c --include-path d --include-path=e -include-path f \
                 -iquote q -isystem=/s2 --system-include /s3 -iquoteq2 \
                 -DA -D B=2 --define-macro C=3 --define-macro=D,E=5 -D=F -UC \
                 -include pre.h --pre-include=p2.h,p3.h -o -Ix -MF -Dy k.cu",
            ),
            Dialect::Nvcc,
            Path::new("/b"),
        );
        let dirs: Vec<String> = flags
            .include_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        assert_eq!(
            dirs,
            [
                "/b/q", "/b/q2", "/b/a", "/b/b", "/b/c", "/b/d", "/b/e", "/b/f", "/sys", "/s2",
                "/s3"
            ]
        );
        assert_eq!(flags.defines, ["A", "B=2", "D", "E=5", "F"]);
        assert_eq!(
            flags.pre_includes,
            [
                PathBuf::from("/b/pre.h"),
                PathBuf::from("/b/p2.h"),
                PathBuf::from("/b/p3.h")
            ]
        );
    }

    #[test]
    fn the_host_compilers_options_preprocess_every_pass() {
        let flags = compile_flags(
            &words("-Xcompiler -DHOST,-Ih -Xcompiler=-include,p.h --compiler-options -isystem,s"),
            Dialect::Nvcc,
            Path::new("/b"),
        );
        assert_eq!(flags.defines, ["HOST"]);
        assert_eq!(
            flags.include_dirs,
            [PathBuf::from("/b/h"), PathBuf::from("/b/s")]
        );
        assert_eq!(flags.pre_includes, [PathBuf::from("/b/p.h")]);
    }

    #[test]
    fn gcc_keeps_commas() {
        let flags = compile_flags(&words("-DPAIR=1,2 -Ia,b"), Dialect::Gcc, Path::new("/"));
        assert_eq!(flags.defines, ["PAIR=1,2"]);
        assert_eq!(flags.include_dirs, [PathBuf::from("/a,b")]);
    }

    #[test]
    fn response_files_are_read_where_they_stand() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(
            dir.path().join("inc.rsp"),
            "-I\"/with space\" -DX=1 @more.rsp\n",
        )
        .expect("written");
        std::fs::write(dir.path().join("more.rsp"), "-isystem /sys").expect("written");
        std::fs::write(dir.path().join("other.rsp"), "-DY").expect("written");
        let args = words("-DA @inc.rsp --options-file other.rsp -optf=other.rsp -c k.cu");
        let expanded =
            expand_response_files(given(&args), Dialect::Nvcc, dir.path()).expect("readable");
        let texts: Vec<&str> = expanded.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "-DA",
                "-I/with space",
                "-DX=1",
                "-isystem",
                "/sys",
                "-DY",
                "-DY",
                "-c",
                "k.cu"
            ]
        );
        // What was read from a file has no index among the arguments given.
        assert_eq!(expanded[0].given, Some(0));
        assert_eq!(expanded[1].given, None);
        assert_eq!(expanded[8].given, Some(6));
        let missing = expand_response_files(given(&words("@nope.rsp")), Dialect::Nvcc, dir.path())
            .expect_err("missing");
        assert!(missing
            .to_string()
            .starts_with("cannot read the response file nope.rsp"));
        std::fs::write(dir.path().join("loop.rsp"), "@loop.rsp").expect("written");
        let looped = expand_response_files(given(&words("@loop.rsp")), Dialect::Gcc, dir.path())
            .expect_err("a loop");
        assert!(looped.to_string().contains("nest more than 8 deep"));
    }

    #[test]
    fn commands_split_as_a_shell_would() {
        assert_eq!(
            split_command(r#"nvcc -D "NAME=a b" -I'x y' a\ b.cu"#),
            ["nvcc", "-D", "NAME=a b", "-Ix y", "a b.cu"]
        );
    }

    #[test]
    fn dialects() {
        assert_eq!(Dialect::of("/usr/local/cuda/bin/nvcc"), Dialect::Nvcc);
        assert_eq!(Dialect::of("nvcc-12"), Dialect::Nvcc);
        assert_eq!(Dialect::of("/usr/bin/g++"), Dialect::Gcc);
    }
}
