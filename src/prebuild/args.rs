//! nvcc's command line as the pre-build step needs it: which arguments are CUDA inputs, and
//! the defines, include paths, language and dependency-file options around them. Every
//! option that takes a value is known by name (from `nvcc --help`, CUDA 13), so that a value
//! (`-o out.cu`, `-MF deps.d`, `-I include`) is never taken for an input.
use crate::command_line::{self, CompileFlags, Dialect};
use std::path::{Path, PathBuf};

/// nvcc's options that take a value, as `(long name, short name)`: `--long VALUE`,
/// `--long=VALUE`, `-short VALUE` and `-short=VALUE` all work, and either name may be given
/// with one or two dashes. List options (`<def>,...`) take one value that nvcc splits at
/// commas.
const VALUE_OPTIONS: &[(&str, &str)] = &[
    ("tile-preview", "tile-preview"),
    ("tileiras-options", "Xtileiras"),
    ("output-file", "o"),
    ("pre-include", "include"),
    ("library", "l"),
    ("define-macro", "D"),
    ("undefine-macro", "U"),
    ("include-path", "I"),
    ("system-include", "isystem"),
    ("library-path", "L"),
    ("output-directory", "odir"),
    ("dependency-output", "MF"),
    ("dependency-target-name", "MT"),
    ("compiler-bindir", "ccbin"),
    ("archiver-binary", "arbin"),
    ("cudart", "cudart"),
    ("cudadevrt", "cudadevrt"),
    ("libdevice-directory", "ldir"),
    ("target-directory", "target-dir"),
    ("optimization-info", "opt-info"),
    ("optimize", "O"),
    ("Ofast-compile", "Ofc"),
    ("dopt", "dopt"),
    ("ftemplate-backtrace-limit", "ftemplate-backtrace-limit"),
    ("ftemplate-depth", "ftemplate-depth"),
    ("x", "x"),
    ("std", "std"),
    ("stdlib", "stdlib"),
    ("machine", "m"),
    ("apply-controls", "apply-controls"),
    ("compiler-options", "Xcompiler"),
    ("linker-options", "Xlinker"),
    ("archive-options", "Xarchive"),
    ("ptxas-options", "Xptxas"),
    ("nvlink-options", "Xnvlink"),
    ("nvprune-options", "Xnvprune"),
    // Not in `--help`, but in wide use (`-Xcudafe --diag_suppress=...`).
    ("cudafe-options", "Xcudafe"),
    ("cicc-options", "Xcicc"),
    ("static-global-template-stub", "static-global-template-stub"),
    (
        "device-entity-has-hidden-visibility",
        "device-entity-has-hidden-visibility",
    ),
    ("threads", "t"),
    ("fmax-errors", "fmax-errors"),
    ("split-compile", "split-compile"),
    ("split-compile-extended", "split-compile-extended"),
    ("fdevice-time-trace", "fdevice-time-trace"),
    (
        "fdevice-time-trace-granularity",
        "fdevice-time-trace-granularity",
    ),
    ("keep-dir", "keep-dir"),
    ("time", "time"),
    ("run-args", "run-args"),
    ("input-drive-prefix", "idp"),
    ("dependency-drive-prefix", "ddp"),
    ("drive-prefix", "dp"),
    ("gpu-architecture", "arch"),
    ("gpu-code", "code"),
    ("generate-code", "gencode"),
    ("relocatable-device-code", "rdc"),
    ("entries", "e"),
    ("maxrregcount", "maxrregcount"),
    ("ftz", "ftz"),
    ("prec-div", "prec-div"),
    ("prec-sqrt", "prec-sqrt"),
    ("fmad", "fmad"),
    ("default-stream", "default-stream"),
    ("Werror", "Werror"),
    ("diag-error", "diag-error"),
    ("diag-suppress", "diag-suppress"),
    ("diag-warn", "diag-warn"),
    ("host-linker-script", "hls"),
    ("brief-diagnostics", "brief-diag"),
    ("jump-table-density", "jtd"),
    ("device-stack-protector", "device-stack-protector"),
    ("compress-mode", "compress-mode"),
    ("frandom-seed", "frandom-seed"),
    ("fdevice-sanitize", "fdevice-sanitize"),
    ("options-file", "optf"),
];

/// nvcc's options without a value whose names start like a one-letter option with a value
/// (`-lineinfo` is not `-l ineinfo`, `-objtemp` is not `-o bjtemp`).
const FLAGS: &[(&str, &str)] = &[
    ("generate-line-info", "lineinfo"),
    ("lib", "lib"),
    ("link", "link"),
    ("lto", "lto"),
    ("objdir-as-tempdir", "objtemp"),
    ("m64", "m64"),
    ("extra-device-vectorization", "extra-device-vectorization"),
    ("expt-relaxed-constexpr", "expt-relaxed-constexpr"),
    ("expt-extended-lambda", "expt-extended-lambda"),
    ("extended-lambda", "extended-lambda"),
    ("ewp", "ewp"),
    ("err-no", "err-no"),
    ("display-error-number", "err-no"),
];

/// One-letter options that nvcc also takes with the value attached (`-Idir`, `-DX=1`,
/// `-O3`, `-lcublas`).
const ATTACHED: &[&str] = &["I", "D", "U", "L", "l", "O", "o", "x", "m", "t", "e"];

/// Runs that only preprocess or list dependencies: the pre-build step passes them through.
const PASS_THROUGH_FLAGS: &[(&str, &str)] = &[
    ("preprocess", "E"),
    ("generate-dependencies", "M"),
    ("generate-nonsystem-dependencies", "MM"),
];

/// Compiles that also write a dependency file (`-MD`, `-MMD`).
const DEPENDENCY_FLAGS: &[(&str, &str)] = &[
    ("generate-dependencies-with-compile", "MD"),
    ("generate-nonsystem-dependencies-with-compile", "MMD"),
];

/// A CUDA input file among nvcc's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Its position in the argument list.
    pub index: usize,
    pub path: PathBuf,
}

/// What the pre-build step reads from an nvcc command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvccCommand {
    /// The arguments as given.
    pub args: Vec<String>,
    /// The inputs nvcc compiles as CUDA: `.cu` files, or every input under `-x cu`.
    pub inputs: Vec<Input>,
    /// What decides the source nvcc sees: `-D`/`-U`, include directories, `-include`
    /// ([`command_line::compile_flags`]), from the arguments, the response files they name
    /// and nvcc's environment flags.
    pub flags: CompileFlags,
    /// Why the command line could not be read whole (a response file that cannot be read):
    /// then what nvcc compiles is not known, and nothing is rewritten.
    pub unreadable: Option<String>,
    /// The `-std` dialect, if given.
    pub std: Option<String>,
    /// Why nothing is rewritten, when the run only preprocesses or lists dependencies.
    pub pass_through: Option<String>,
    /// `-MD`/`-MMD`: nvcc writes a dependency file beside the compile.
    pub writes_dependencies: bool,
    /// `-MF FILE`.
    pub dependency_file: Option<String>,
    /// `-o FILE`.
    pub output: Option<String>,
}

impl NvccCommand {
    /// The dependency file that `-MD`/`-MMD` writes: `-MF`, else the output (or the first
    /// input's file name, in the working directory) with the suffix `.d`, as nvcc names it.
    pub fn dependency_file_path(&self) -> Option<PathBuf> {
        if !self.writes_dependencies {
            return None;
        }
        if let Some(file) = &self.dependency_file {
            return Some(PathBuf::from(file));
        }
        match &self.output {
            Some(output) => Some(Path::new(output).with_extension("d")),
            None => {
                let input = self.inputs.first()?;
                Some(PathBuf::from(input.path.file_name()?).with_extension("d"))
            }
        }
    }
}

/// Whether `name` (without dashes) is the option `(long, short)`.
fn named(name: &str, option: &(&str, &str)) -> bool {
    name == option.0 || name == option.1
}

/// Reads nvcc's arguments as nvcc does: with `NVCC_PREPEND_FLAGS` and `NVCC_APPEND_FLAGS`
/// around them and every response file read (relative to the working directory). Only an
/// input given among `args` can be replaced by a copy.
pub fn parse(args: &[String]) -> NvccCommand {
    let mut command = NvccCommand {
        args: args.to_vec(),
        ..NvccCommand::default()
    };
    let arguments = match command_line::expand_response_files(
        command_line::with_nvcc_environment(args),
        Dialect::Nvcc,
        Path::new(""),
    ) {
        Ok(arguments) => arguments,
        Err(err) => {
            command.unreadable = Some(err.to_string());
            command_line::given(args)
        }
    };
    let texts: Vec<String> = arguments.iter().map(|a| a.text.clone()).collect();
    command.flags = command_line::compile_flags(&texts, Dialect::Nvcc, Path::new(""));
    let mut language: Option<String> = None;
    let mut files: Vec<Input> = Vec::new();
    let mut i = 0;
    while i < arguments.len() {
        let argument = &arguments[i];
        let arg = &argument.text;
        i += 1;
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|b| !b.is_empty())
        else {
            // An input named in a response file is compiled as it is.
            if let Some(index) = argument.given {
                files.push(Input {
                    index,
                    path: PathBuf::from(arg),
                });
            }
            continue;
        };
        let (name, attached) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (body, None),
        };
        let (name, value) = if VALUE_OPTIONS.iter().any(|o| named(name, o)) {
            let value = match attached {
                Some(value) => Some(value.to_string()),
                None => {
                    i += 1;
                    arguments.get(i - 1).map(|a| a.text.clone())
                }
            };
            (name, value)
        } else if FLAGS.iter().any(|o| named(body, o)) {
            (body, None)
        } else if let Some(short) = ATTACHED.iter().find(|s| body.starts_with(**s)) {
            (*short, Some(body[short.len()..].to_string()))
        } else {
            (name, attached.map(str::to_string))
        };
        let Some(option) = long_name(name) else {
            // An unknown option, such as a host compiler's flag CMake forwards.
            continue;
        };
        let value = value.unwrap_or_default();
        match option {
            "x" => language = Some(value),
            "std" => command.std = Some(value),
            "dependency-output" => command.dependency_file = Some(value),
            "output-file" => command.output = Some(value),
            _ => {}
        }
        if let Some(flag) = PASS_THROUGH_FLAGS.iter().find(|o| named(option, o)) {
            command.pass_through = Some(format!("-{}", flag.1));
        }
        if DEPENDENCY_FLAGS.iter().any(|o| named(option, o)) {
            command.writes_dependencies = true;
        }
    }
    command.inputs = files
        .into_iter()
        .filter(|input| match language.as_deref() {
            Some("cu") => true,
            Some(other) if other != "none" => false,
            _ => input.path.extension().is_some_and(|e| e == "cu"),
        })
        .collect();
    command
}

/// The long name of a known option given by either name.
fn long_name(name: &str) -> Option<&'static str> {
    VALUE_OPTIONS
        .iter()
        .chain(FLAGS)
        .chain(PASS_THROUGH_FLAGS)
        .chain(DEPENDENCY_FLAGS)
        .find(|o| named(name, o))
        .map(|o| o.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> NvccCommand {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        parse(&args)
    }

    fn inputs(command: &NvccCommand) -> Vec<(usize, &str)> {
        command
            .inputs
            .iter()
            .map(|i| (i.index, i.path.to_str().unwrap_or("")))
            .collect()
    }

    #[test]
    fn what_cmake_sends() {
        let command = parsed(
            "-forward-unknown-to-host-compiler -DTILE=32 -I/src/include \
             --generate-code=arch=compute_90,code=[compute_90,sm_90] -O3 -DNDEBUG -std=c++17 \
             -MD -MT CMakeFiles/t.dir/k.cu.o -MF CMakeFiles/t.dir/k.cu.o.d \
             -x cu -c /src/k.cu -o CMakeFiles/t.dir/k.cu.o",
        );
        assert_eq!(inputs(&command), vec![(15, "/src/k.cu")]);
        assert_eq!(command.flags.defines, vec!["TILE=32", "NDEBUG"]);
        assert_eq!(
            command.flags.include_dirs,
            vec![PathBuf::from("/src/include")]
        );
        assert_eq!(command.std.as_deref(), Some("c++17"));
        assert_eq!(command.flags.arch.as_deref(), Some("sm_90"));
        assert_eq!(command.pass_through, None);
        assert!(command.writes_dependencies);
        assert_eq!(
            command.dependency_file_path(),
            Some(PathBuf::from("CMakeFiles/t.dir/k.cu.o.d"))
        );
        assert_eq!(command.output.as_deref(), Some("CMakeFiles/t.dir/k.cu.o"));
    }

    #[test]
    fn values_are_never_inputs() {
        // Every option here takes the next argument as its value, even one ending in `.cu`.
        let command = parsed(
            "-o out.cu -I inc.cu -D X.cu -MF deps.cu -MT t.cu -ccbin g++.cu -arch sm_90 \
             -gencode arch=compute_80,code=sm_80 --compiler-options -fPIC,-Wall \
             -Xcompiler x.cu -Xptxas -v --include-path other.cu -isystem sys.cu \
             --pre-include pre.cu -include pre2.cu -odir dir.cu -optf opts.cu -U Y.cu k.cu",
        );
        assert_eq!(inputs(&command), vec![(36, "k.cu")]);
        assert_eq!(
            command.flags.include_dirs,
            vec![
                PathBuf::from("inc.cu"),
                PathBuf::from("other.cu"),
                PathBuf::from("sys.cu")
            ]
        );
        assert_eq!(command.flags.defines, vec!["X.cu"]);
        assert_eq!(
            command.flags.pre_includes,
            vec![PathBuf::from("pre.cu"), PathBuf::from("pre2.cu")]
        );
        // `opts.cu` does not exist.
        assert!(command.unreadable.is_some());
    }

    #[test]
    fn every_spelling_of_an_include_path_and_a_define() {
        let command = parsed(
            "-Ia -I b -I=c --include-path d --include-path=e -include-path f \
             -DA -D B=2 --define-macro C=3 --define-macro=D,E=5 -D=F k.cu",
        );
        let dirs: Vec<PathBuf> = ["a", "b", "c", "d", "e", "f"].map(PathBuf::from).into();
        assert_eq!(command.flags.include_dirs, dirs);
        assert_eq!(
            command.flags.defines,
            vec!["A", "B=2", "C=3", "D", "E=5", "F"]
        );
        assert_eq!(inputs(&command), vec![(16, "k.cu")]);
    }

    #[test]
    fn undefining_removes_earlier_definitions() {
        let command = parsed("-DA=1 -DB -UA --undefine-macro=B -DA=2 k.cu");
        assert_eq!(command.flags.defines, vec!["A=2"]);
    }

    #[test]
    fn flags_that_look_like_attached_values() {
        let command = parsed("-lineinfo -objtemp -lib -m64 -expt-relaxed-constexpr -O3 k.cu");
        assert_eq!(inputs(&command), vec![(6, "k.cu")]);
        assert_eq!(command.output, None);
        let command = parsed("-ofile.o -lcublas -Lpath k.cu");
        assert_eq!(command.output.as_deref(), Some("file.o"));
        assert_eq!(inputs(&command), vec![(3, "k.cu")]);
    }

    #[test]
    fn the_language_decides_what_is_cuda() {
        // `-x cu` makes every input CUDA, wherever it stands.
        let command = parsed("-c a.cpp b.cu -x cu");
        assert_eq!(inputs(&command), vec![(1, "a.cpp"), (2, "b.cu")]);
        let command = parsed("--x=c++ -c b.cu");
        assert!(command.inputs.is_empty());
        let command = parsed("-c main.cpp lib.o b.cu kernel.cuh");
        assert_eq!(inputs(&command), vec![(3, "b.cu")]);
    }

    #[test]
    fn preprocessing_and_dependency_runs_pass_through() {
        for (line, why) in [
            ("-M k.cu", "-M"),
            ("-MM k.cu -o k.d", "-MM"),
            ("-E k.cu", "-E"),
            ("--preprocess k.cu", "-E"),
            ("--generate-dependencies k.cu", "-M"),
            ("--generate-nonsystem-dependencies k.cu", "-MM"),
        ] {
            assert_eq!(parsed(line).pass_through.as_deref(), Some(why), "{line}");
        }
        // -MD compiles and writes dependencies on the side: not a pass-through.
        let command = parsed("-MD -c k.cu -o obj/k.o");
        assert_eq!(command.pass_through, None);
        assert_eq!(
            command.dependency_file_path(),
            Some(PathBuf::from("obj/k.d"))
        );
        let command = parsed("-MMD -c dir/k.cu");
        assert_eq!(command.dependency_file_path(), Some(PathBuf::from("k.d")));
        assert_eq!(parsed("-c k.cu").dependency_file_path(), None);
    }

    #[test]
    fn response_files_are_read_and_their_inputs_left_as_they_are() {
        let dir = tempfile::tempdir().expect("a directory");
        let rsp = dir.path().join("includes_CUDA.rsp");
        std::fs::write(&rsp, "-I/src/include -DTILE=32 other.cu").expect("written");
        let line = format!("@{} -c k.cu -o k.o", rsp.display());
        let command = parsed(&line);
        assert_eq!(command.flags.defines, vec!["TILE=32"]);
        assert_eq!(
            command.flags.include_dirs,
            vec![PathBuf::from("/src/include")]
        );
        // `other.cu` is compiled as the response file names it.
        assert_eq!(inputs(&command), vec![(2, "k.cu")]);
        assert_eq!(command.unreadable, None);
        let line = format!("--options-file={} k.cu", rsp.display());
        assert_eq!(parsed(&line).flags.defines, vec!["TILE=32"]);
        let command = parsed("-optf missing.rsp k.cu");
        assert_eq!(
            command.unreadable.as_deref().map(|m| m.split(':').next()),
            Some(Some("cannot read the response file missing.rsp"))
        );
        assert_eq!(inputs(&command), vec![(2, "k.cu")]);
    }

    #[test]
    fn link_and_tool_runs_have_no_inputs() {
        assert!(parsed("a.o b.o -o app -lcudart_static -lpthread")
            .inputs
            .is_empty());
        assert!(parsed("--version").inputs.is_empty());
        assert!(parsed("-dlink a.o -o dlink.o").inputs.is_empty());
    }

    #[test]
    fn a_value_missing_at_the_end_is_not_a_crash() {
        let command = parsed("k.cu -o");
        assert_eq!(inputs(&command), vec![(0, "k.cu")]);
        assert_eq!(command.output.as_deref(), Some(""));
    }
}
