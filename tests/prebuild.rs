//! `bankwise nvcc` and the launcher form, run with a fake nvcc that records its arguments
//! and keeps a copy of each source it is given, so that they need no CUDA; and one test
//! with the real PyPI nvcc, when scripts/test has installed it in target/nvcc-venv.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[allow(dead_code)]
mod common;
use common::files_under;

const TRANSPOSE: &str = "examples/cmake/transpose.cu";

/// Writes `args.txt` (one argument per line), a copy of each `.cu`/`.cpp` source that exists
/// as `source0`, `source1`…, bankwise's private directory of copies as `copies`, and, given
/// `-MF FILE`, a dependency file on the last source;
/// prints to both streams and exits with $FAKE_NVCC_EXIT. With $FAKE_NVCC_FAIL_ON_COPY set,
/// fails on bankwise's copy as nvcc fails on a `static_assert`.
const FAKE_NVCC: &str = r#"#!/bin/sh
out="$FAKE_NVCC_DIR"
: > "$out/args.txt"
n=0
previous=""
depfile=""
for a in "$@"; do
    printf '%s\n' "$a" >> "$out/args.txt"
    case "$a" in
        *.cu|*.cpp) if [ -f "$a" ]; then cp "$a" "$out/source$n"; n=$((n+1)); source="$a"; fi ;;
    esac
    case "$a" in
        */bankwise-*/*) cp -R "$(echo "$a" | sed 's|\(.*/bankwise-[^/]*\)/.*|\1|')" "$out/copies" ;;
    esac
    if [ "$previous" = "-MF" ]; then depfile="$a"; fi
    previous="$a"
done
if [ -n "$FAKE_NVCC_FAIL_ON_COPY" ]; then
    case "$source" in
        */bankwise-*) echo "$source(3): error: static assertion failed" >&2; exit 2 ;;
    esac
fi
if [ -n "$depfile" ]; then printf 'k.o : %s \\\n    /usr/include/stdio.h\n' "$source" > "$depfile"; fi
echo "fake nvcc: out"
echo "fake nvcc: err" >&2
exit "${FAKE_NVCC_EXIT:-0}"
"#;

/// A scratch directory with the fake compiler, named `nvcc` as CMake would find it.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let nvcc = dir.path().join("nvcc");
        std::fs::write(&nvcc, FAKE_NVCC).expect("the fake nvcc is written");
        std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755))
            .expect("the fake nvcc is executable");
        Fake { dir }
    }

    fn nvcc(&self) -> PathBuf {
        self.dir.path().join("nvcc")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("the source is written");
        path
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
        command
            .env("BANKWISE_NVCC", self.nvcc())
            .env("FAKE_NVCC_DIR", self.dir.path())
            .env_remove("BANKWISE_LOG");
        command
    }

    /// `bankwise nvcc [bankwise args] -- nvcc args`.
    fn run(&self, bankwise: &[&str], nvcc: &[&str]) -> Output {
        self.command()
            .arg("nvcc")
            .args(bankwise)
            .arg("--")
            .args(nvcc)
            .output()
            .expect("bankwise runs")
    }

    /// The arguments the fake nvcc was run with.
    fn args(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("args.txt"))
            .expect("the fake nvcc ran")
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The source the fake nvcc was given as its `n`th input.
    fn source(&self, n: usize) -> String {
        std::fs::read_to_string(self.path(&format!("source{n}"))).expect("a source was given")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn absolute(path: &str) -> String {
    std::path::absolute(path)
        .expect("an absolute path")
        .to_string_lossy()
        .into_owned()
}

fn directory_of(path: &str) -> String {
    Path::new(&absolute(path))
        .parent()
        .expect("a directory")
        .to_string_lossy()
        .into_owned()
}

/// The arguments that make the original's directory the first for quoted includes.
fn quote_original(path: &str) -> [String; 2] {
    [
        "-Xcompiler".to_string(),
        format!("-iquote,{}", directory_of(path)),
    ]
}

#[test]
fn the_transpose_is_compiled_swizzled_with_its_original_name_and_lines() {
    let fake = Fake::new();
    let output = fake.run(&[], &["-arch=sm_90", "-c", TRANSPOSE, "-o", "k.o"]);
    assert_eq!(output.status.code(), Some(0));
    // nvcc's own output comes through untouched; bankwise says nothing.
    assert_eq!(text(&output.stdout), "fake nvcc: out\n");
    assert_eq!(text(&output.stderr), "fake nvcc: err\n");
    let args = fake.args();
    // The original's directory is the first for quoted includes only, so that
    // `#include "transpose.h"` resolves as it does for the original.
    assert_eq!(args[..2], quote_original(TRANSPOSE));
    assert_eq!(args[2..4], ["-arch=sm_90", "-c"]);
    assert_eq!(args[5..], ["-o", "k.o"]);
    let copy = &args[4];
    assert_ne!(copy, TRANSPOSE);
    assert!(copy.ends_with("/transpose.cu"), "{copy}");
    // The copy is gone once nvcc is done.
    assert!(!Path::new(copy).exists());
    let source = fake.source(0);
    let name = format!("\"{}\"", absolute(TRANSPOSE));
    assert!(source.starts_with(&format!("#line 1 {name}\n")));
    assert!(source.contains("tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"));
    // Lines are inserted above `tile` (the block check and the marker) and below it (the
    // guard on `TILE`); the declaration's line (11 in the original) and the next one are
    // named again after them.
    let original = std::fs::read_to_string(TRANSPOSE).expect("the example exists");
    let declaration = original
        .lines()
        .position(|l| l.contains("__shared__ float tile"))
        .expect("the declaration")
        + 1;
    assert_eq!(declaration, 11);
    let lines: Vec<&str> = source.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("__shared__ float tile"))
        .expect("the declaration");
    assert_eq!(lines[at - 1], format!("#line 11 {name}"));
    assert!(lines[at - 2].contains("// bankwise: `tile` is stored swizzled"));
    assert!(lines[at + 1].starts_with("    static_assert(TILE == 32, \"bankwise: "));
    assert_eq!(lines[at + 2], format!("#line 12 {name}"));
    assert_eq!(source.matches("#line ").count(), 3);
}

#[test]
fn nvccs_exit_status_passes_through() {
    let fake = Fake::new();
    let output = fake
        .command()
        .env("FAKE_NVCC_EXIT", "3")
        .args(["nvcc", "--", "-c", TRANSPOSE])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(3));
    let missing = fake
        .command()
        .env("BANKWISE_NVCC", fake.path("no-such-nvcc"))
        .args(["nvcc", "--", "-c", TRANSPOSE])
        .output()
        .expect("bankwise runs");
    assert_eq!(missing.status.code(), Some(127));
    assert!(text(&missing.stderr).contains("bankwise: error: cannot run"));
}

#[test]
fn a_file_bankwise_cannot_fix_is_compiled_as_it_is_with_one_warning() {
    let fake = Fake::new();
    let broken = fake.write("broken.cu", "}}}} @@@ ((((\n");
    let broken = broken.to_str().expect("a UTF-8 path");
    let output = fake.run(&[], &["-c", broken, "-o", "b.o"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        text(&output.stderr),
        format!(
            "bankwise: warning: {broken}: no kernel could be analysed (syntax error at line 1); \
             compiling the original\nfake nvcc: err\n"
        )
    );
    assert_eq!(fake.args(), ["-c", broken, "-o", "b.o"]);
    let latin1 = fake.path("latin1.cu");
    std::fs::write(&latin1, b"int caf\xe9;\n__global__ void k() {}\n").expect("written");
    let latin1 = latin1.to_str().expect("a UTF-8 path");
    let output = fake.run(&[], &["-c", latin1]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.matches("bankwise: warning: ").count(), 1, "{stderr}");
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
    assert_eq!(fake.args(), ["-c", latin1]);
}

#[test]
fn a_kernel_without_a_block_shape_is_compiled_as_written_with_a_warning() {
    let fake = Fake::new();
    let kernel = fake.write(
        "noblock.cu",
        "__global__ void k(float *o)\n{\n    __shared__ float s[1024];\n    \
         s[32 * threadIdx.x] = 1;\n    o[0] = s[0];\n}\n",
    );
    let kernel = kernel.to_str().expect("a UTF-8 path");
    let output = fake.run(&[], &["-c", kernel]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "bankwise: warning: {kernel}: block shape unknown for kernel `k`"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("; compiling the original\n"), "{stderr}");
    assert_eq!(fake.args(), ["-c", kernel]);
    // Given a shape, the same file is rewritten.
    let output = fake.run(&["--block", "k=32"], &["-c", kernel]);
    assert_eq!(text(&output.stderr), "fake nvcc: err\n");
    assert!(fake.source(0).contains("bankwise"));
}

#[test]
fn files_without_conflicts_and_other_languages_pass_through() {
    let fake = Fake::new();
    let clean = fake.write(
        "clean.cu",
        "// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
         __shared__ float s[32];\n    s[threadIdx.x] = 1;\n    o[0] = s[threadIdx.x];\n}\n",
    );
    let clean = clean.to_str().expect("a UTF-8 path");
    let args = ["-c", clean, "main.cpp", "-o", "k.o"];
    let output = fake.run(&[], &args);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(fake.args(), args);
    // Preprocessing and dependency runs are compiled as given, conflicts and all.
    for mode in ["-M", "-MM", "-E", "--preprocess"] {
        let args = [mode, TRANSPOSE];
        fake.run(&[], &args);
        assert_eq!(fake.args(), args, "{mode}");
    }
    // As C++ (`-x c++`), a .cu file is no CUDA input.
    let args = ["-x", "c++", "-c", TRANSPOSE];
    fake.run(&[], &args);
    assert_eq!(fake.args(), args);
}

#[test]
fn dash_x_cu_makes_a_cpp_file_cuda() {
    let fake = Fake::new();
    let original = std::fs::read_to_string(TRANSPOSE).expect("the example exists");
    let cpp = fake.write("transpose.cpp", &original);
    let cpp = cpp.to_str().expect("a UTF-8 path");
    fake.run(&[], &["-c", cpp]);
    assert_eq!(fake.args(), ["-c", cpp]);
    fake.run(&[], &["-x", "cu", "-c", cpp]);
    let args = fake.args();
    assert_ne!(args[5], cpp);
    assert!(args[5].ends_with("/transpose.cpp"));
    assert!(fake.source(0).contains("^ threadIdx.x]"));
}

#[test]
fn nvccs_defines_reach_the_analysis() {
    let fake = Fake::new();
    // TILE has no value in the file: only nvcc's -D gives the tile its extent.
    let kernel = fake.write(
        "tiled.cu",
        "// bankwise: block=32x8\n__global__ void k(float *o)\n{\n    \
         __shared__ float t[TILE][TILE];\n    for (int j = 0; j < TILE; j += 8)\n        \
         t[threadIdx.y + j][threadIdx.x] = o[j];\n    for (int j = 0; j < TILE; j += 8)\n        \
         o[j] = t[threadIdx.x][threadIdx.y + j];\n}\n",
    );
    let kernel = kernel.to_str().expect("a UTF-8 path");
    fake.run(&[], &["-c", kernel]);
    assert_eq!(fake.args(), ["-c", kernel]);
    for define in [
        &["-DTILE=32"][..],
        &["-D", "TILE=32"],
        &["--define-macro=TILE=32"],
    ] {
        let args: Vec<&str> = define.iter().copied().chain(["-c", kernel]).collect();
        fake.run(&[], &args);
        assert!(
            fake.source(0)
                .contains("t[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"),
            "{define:?}"
        );
    }
    // -U takes it back; bankwise's own -D comes after nvcc's.
    fake.run(&[], &["-DTILE=32", "-UTILE", "-c", kernel]);
    assert_eq!(fake.args(), ["-DTILE=32", "-UTILE", "-c", kernel]);
    fake.run(&["-D", "TILE=32"], &["-c", kernel]);
    assert!(fake.source(0).contains("^ threadIdx.x]"));
}

#[test]
fn the_dependency_file_names_the_original() {
    let fake = Fake::new();
    let depfile = fake.path("k.o.d");
    let depfile = depfile.to_str().expect("a UTF-8 path");
    let output = fake.run(
        &[],
        &[
            "-MD", "-MT", "k.o", "-MF", depfile, "-c", TRANSPOSE, "-o", "k.o",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(depfile).expect("the dependency file"),
        format!("k.o : {TRANSPOSE} \\\n    /usr/include/stdio.h\n")
    );
}

#[test]
fn the_launcher_form_is_what_cmake_runs() {
    let fake = Fake::new();
    let log = fake.path("bankwise.log");
    let absolute_transpose = absolute(TRANSPOSE);
    let depfile = fake.path("transpose.cu.o.d");
    let depfile = depfile.to_str().expect("a UTF-8 path");
    let cmake_args = [
        "-forward-unknown-to-host-compiler",
        "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
        "-MD",
        "-MT",
        "CMakeFiles/t.dir/transpose.cu.o",
        "-MF",
        depfile,
        "-x",
        "cu",
        "-c",
        &absolute_transpose,
        "-o",
        "CMakeFiles/t.dir/transpose.cu.o",
    ];
    let output = fake
        .command()
        .env("BANKWISE_LOG", &log)
        .env("BANKWISE_NVCC", "/nonexistent/not-this-one")
        .arg(fake.nvcc())
        .args(cmake_args)
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "fake nvcc: out\n");
    let args = fake.args();
    assert_eq!(args[..2], quote_original(TRANSPOSE));
    let mut expected: Vec<String> = cmake_args.iter().map(|a| a.to_string()).collect();
    expected[10] = args[12].clone();
    assert_eq!(args[2..], expected[..]);
    assert!(fake.source(0).contains("^ threadIdx.x]"));
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!("{absolute_transpose}: rewritten: 1 array, 992 -> 0 excess wavefronts\n")
    );
    assert!(std::fs::read_to_string(depfile)
        .expect("the dependency file")
        .starts_with(&format!("k.o : {absolute_transpose} ")));
    // `bankwise nvcc -- COMPILER ARGS` is the same, with bankwise's options before `--`.
    let output = fake
        .command()
        .env("BANKWISE_NVCC", "/nonexistent/not-this-one")
        .args(["nvcc", "--log"])
        .arg(&log)
        .arg("--")
        .arg(fake.nvcc())
        .args(["-c", TRANSPOSE])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(fake.source(0).contains("^ threadIdx.x]"));
    // Subcommands are never taken for compilers.
    let output = fake
        .command()
        .args(["check", TRANSPOSE])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stdout).contains("32-way bank conflict"));
}

/// The real nvcc from PyPI, when scripts/test has installed it.
fn real_nvcc() -> Option<PathBuf> {
    if !Path::new("target/nvcc-venv/.bankwise-nvcc-installed").exists() {
        return None;
    }
    let output = Command::new("scripts/nvcc-env").arg("path").output().ok()?;
    let path = text(&output.stdout).trim().to_string();
    (output.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

#[test]
fn real_nvcc_errors_and_lineinfo_name_the_original_lines_and_quoted_includes_resolve() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let fake = Fake::new();
    // nvcc needs the header beside the kernel, through a quoted include.
    fake.write("scale.h", "#define SCALE 2.0f\n");
    let source = "#include \"scale.h\"\n#define TILE 32\n// bankwise: block=32x8\n\
        __global__ void k(float *o)\n{\n    __shared__ float t[TILE][TILE];\n    \
        for (int j = 0; j < TILE; j += 8)\n        t[threadIdx.y + j][threadIdx.x] = o[j];\n    \
        __syncthreads();\n    for (int j = 0; j < TILE; j += 8)\n        \
        o[j] = SCALE * t[threadIdx.x][threadIdx.y + j];\n}\n";
    let good = fake.write("good.cu", source);
    let broken = fake.write(
        "broken.cu",
        &source.replace("__syncthreads();", "__syncthreads(); o[0] = not_declared;"),
    );
    let log = fake.path("log");
    for (file, succeeds) in [(&good, true), (&broken, false)] {
        let object = file.with_extension("o");
        let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .env("BANKWISE_LOG", &log)
            .arg(&nvcc)
            .args(["-arch=sm_90", "-c"])
            .arg(file)
            .arg("-o")
            .arg(&object)
            .output()
            .expect("bankwise runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.success(), succeeds, "{stderr}");
        assert_eq!(object.exists(), succeeds);
        if !succeeds {
            // Line 9 of the original; the copy has it at line 11, after `#line` and the
            // inserted comment, and nvcc names the original.
            let at = format!("{}(9): error", file.display());
            assert!(stderr.contains(&at), "{stderr}");
            assert!(stderr.contains("not_declared"), "{stderr}");
            // nvcc failed on the copy, so the original was compiled: what the user reads
            // is bankwise's one line, then nvcc's errors on their own file.
            let first = stderr.lines().next().unwrap_or("");
            assert!(
                first.starts_with("bankwise: warning: nvcc failed on the rewritten copy (")
                    && first.ends_with("); compiling the original"),
                "{stderr}"
            );
            assert!(!stderr.contains("bankwise-"), "{stderr}");
            assert!(stderr.contains(&format!(
                "1 error detected in the compilation of \"{}\"",
                file.display()
            )));
        }
    }
    // -lineinfo: the shared loads and stores are attributed to the original's lines
    // (8 and 11; 9 and 12 in the copy).
    let cubin = fake.path("good.cubin");
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .env_remove("BANKWISE_LOG")
        .arg(&nvcc)
        .args(["-arch=sm_90", "-lineinfo", "-cubin"])
        .arg(&good)
        .arg("-o")
        .arg(&cubin)
        .output()
        .expect("bankwise runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let nvdisasm = nvcc.with_file_name("nvdisasm");
    let disassembly = Command::new(nvdisasm)
        .arg("-g")
        .arg(&cubin)
        .output()
        .expect("nvdisasm runs");
    let mut line = String::new();
    let mut shared = Vec::new();
    for row in text(&disassembly.stdout).lines() {
        if let Some(at) = row.trim().strip_prefix("//## File ") {
            line = at.to_string();
        } else if row.contains(" LDS ") || row.contains(" STS ") {
            shared.push((row.contains(" LDS "), line.clone()));
        }
    }
    assert!(!shared.is_empty());
    for (load, at) in shared {
        let expected = format!("\"{}\", line {}", good.display(), if load { 11 } else { 8 });
        assert_eq!(at, expected);
    }
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert_eq!(
        logged,
        format!(
            "{}: rewritten: 1 array, 992 -> 0 excess wavefronts\n\
             {broken}: nvcc failed on the rewritten copy ({broken}(9): error: identifier \
             \"not_declared\" is undefined); compiled the original\n",
            good.display(),
            broken = broken.display()
        )
    );
}

/// A `NOLINT(bankwise)` on the declaration keeps the pre-build step off the array: nvcc
/// compiles the source as written (behind its `#line`).
#[test]
fn a_silenced_array_is_compiled_as_written() {
    let fake = Fake::new();
    let original = std::fs::read_to_string(TRANSPOSE).expect("the example exists");
    let silenced = original.replacen(
        "__shared__ float tile[TILE][TILE];",
        "__shared__ float tile[TILE][TILE]; // NOLINT(bankwise)",
        1,
    );
    assert_ne!(
        silenced, original,
        "the declaration is where the test expects it"
    );
    let path = fake.write("silenced.cu", &silenced);
    let path = path.to_string_lossy().into_owned();
    let output = fake.run(&[], &["-c", &path]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let source = fake.source(0);
    assert!(!source.contains("bankwise:"), "{source}");
    assert!(source.ends_with(&silenced), "{source}");
}

/// The pre-build step's promise: it never makes nvcc fail or warn where the original did
/// not. Every testdata kernel goes through `bankwise nvcc` with `-Werror all-warnings`; one
/// that fails is compiled plainly too, and only a failure bankwise caused counts.
#[test]
fn werror_builds_of_every_testdata_kernel_pass_through_the_pre_build_step() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let mut kernels = Vec::new();
    for dir in ["testdata", "testdata/config", "testdata/suite"] {
        for entry in std::fs::read_dir(dir).expect("testdata").flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "cu") {
                kernels.push(path);
            }
        }
    }
    kernels.sort();
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let compile = |kernel: &Path, through_bankwise: bool| -> Output {
        let first = std::fs::read_to_string(kernel).expect("readable");
        let flags: Vec<&str> = first
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// nvcc-flags: "))
            .map_or(Vec::new(), |f| f.split_whitespace().collect());
        let cubin = scratch
            .path()
            .join(kernel.file_name().expect("a name"))
            .with_extension(if through_bankwise {
                "bw.cubin"
            } else {
                "cubin"
            });
        let mut command = if through_bankwise {
            let mut c = Command::new(env!("CARGO_BIN_EXE_bankwise"));
            c.env("BANKWISE_NVCC", &nvcc).args(["nvcc", "--"]);
            c
        } else {
            Command::new(&nvcc)
        };
        command
            .args(["-arch=sm_90", "-cubin", "-Werror", "all-warnings"])
            .args(&flags)
            .arg("-o")
            .arg(&cubin)
            .arg(kernel)
            .output()
            .expect("the compiler runs")
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(kernel) = kernels.get(i) else { break };
                let through = compile(kernel, true);
                if !through.status.success() && compile(kernel, false).status.success() {
                    failures.lock().expect("not poisoned").push(format!(
                        "{}: {}",
                        kernel.display(),
                        text(&through.stderr)
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().expect("not poisoned");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(kernels.len() >= 50, "{} kernels", kernels.len());
}

/// A transpose whose tile extent `TILE` the file does not define.
const TILED_BY_FLAGS: &str = "#include <tilecfg.h>\n// bankwise: block=32x8\n\
    __global__ void k(float *o)\n{\n    __shared__ float t[TILE][TILE];\n    \
    for (int j = 0; j < TILE; j += 8)\n        t[threadIdx.y + j][threadIdx.x] = o[j];\n    \
    for (int j = 0; j < TILE; j += 8)\n        o[j] = t[threadIdx.x][threadIdx.y + j];\n}\n";

#[test]
fn every_flag_that_reaches_nvcc_reaches_the_analysis() {
    let fake = Fake::new();
    let kernel = fake.write("tiled.cu", TILED_BY_FLAGS);
    let kernel = kernel.to_str().expect("a UTF-8 path");
    let dir = fake.path("");
    let dir = dir.to_str().expect("a UTF-8 path");
    for sub in ["sys", "inc"] {
        std::fs::create_dir_all(fake.path(sub)).expect("a directory");
        fake.write(&format!("{sub}/tilecfg.h"), "#define TILE 32\n");
    }
    fake.write("pre.h", "#define TILE 32\n");
    fake.write("inc.rsp", &format!("-I\"{dir}/inc\""));
    fake.write("outer.rsp", &format!("@{dir}/inc.rsp -DUNUSED"));
    let rewritten = |fake: &Fake| fake.source(0).contains("^ threadIdx.x]");
    // Without them, the extent is unknown and the file compiled as written.
    fake.run(&[], &["-c", kernel]);
    assert!(!rewritten(&fake));
    let isystem = format!("{dir}/sys");
    let optf = format!("{dir}/inc.rsp");
    let at_file = format!("@{dir}/outer.rsp");
    let pre = format!("{dir}/pre.h");
    let cases: [&[&str]; 7] = [
        &["-isystem", &isystem],
        &["--system-include", &isystem],
        &["--options-file", &optf],
        &["-optf", &optf],
        &[&at_file],
        &["-include", &pre],
        &["-Xcompiler", "-DTILE=32"],
    ];
    for flags in cases {
        let args: Vec<&str> = flags.iter().copied().chain(["-c", kernel]).collect();
        fake.run(&[], &args);
        assert!(rewritten(&fake), "{flags:?}");
    }
    for variable in ["NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"] {
        let output = fake
            .command()
            .env(variable, "-DTILE=32 -DOTHER")
            .args(["nvcc", "--", "-c", kernel])
            .output()
            .expect("bankwise runs");
        assert_eq!(output.status.code(), Some(0));
        assert!(rewritten(&fake), "{variable}");
    }
    // A response file that cannot be read: what nvcc compiles is unknown.
    let output = fake.run(&[], &["-DTILE=32", "@missing.rsp", "-c", kernel]);
    assert!(text(&output.stderr).contains(&format!(
        "bankwise: warning: {kernel}: cannot read the response file missing.rsp"
    )));
    assert_eq!(fake.args(), ["-DTILE=32", "@missing.rsp", "-c", kernel]);
}

#[test]
fn a_branch_a_system_header_selects_is_never_half_rewritten() {
    let fake = Fake::new();
    std::fs::create_dir_all(fake.path("sys")).expect("a directory");
    fake.write("sys/scale.h", "#define SCALE_INPUT\n");
    let kernel = fake.write(
        "scaled.cu",
        "#include <scale.h>\n// bankwise: block=32x8\n__global__ void k(float *o, float s)\n{\n    \
         __shared__ float t[32][32];\n    for (int j = 0; j < 32; j += 8)\n        \
         t[threadIdx.y + j][threadIdx.x] = o[j];\n    for (int j = 0; j < 32; j += 8) {\n\
         #ifdef SCALE_INPUT\n        o[j] = s * t[threadIdx.x][threadIdx.y + j];\n#else\n        \
         o[j] = t[threadIdx.x][threadIdx.y + j];\n#endif\n    }\n}\n",
    );
    let kernel = kernel.to_str().expect("a UTF-8 path");
    let isystem = fake.path("sys");
    let isystem = isystem.to_str().expect("a UTF-8 path");
    let log = fake.path("log");
    for args in [&["-c", kernel][..], &["-isystem", isystem, "-c", kernel]] {
        let output = fake
            .command()
            .env("BANKWISE_LOG", &log)
            .args(["nvcc", "--"])
            .args(args)
            .output()
            .expect("bankwise runs");
        assert_eq!(output.status.code(), Some(0));
        // Both branches name `t`: it is left as written in every configuration.
        assert_eq!(fake.args(), args);
    }
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!("{kernel}: unchanged\n{kernel}: unchanged\n")
    );
    // `check` says which branch stopped it, in either configuration.
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(["check", kernel])
        .output()
        .expect("bankwise runs");
    assert!(text(&output.stdout).contains("named at line 10 under `#ifdef SCALE_INPUT`"));
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(["check", "-I", isystem, kernel])
        .output()
        .expect("bankwise runs");
    assert!(
        text(&output.stdout).contains("named at line 12 under `#else after #ifdef SCALE_INPUT`")
    );
}

#[test]
fn a_copy_nvcc_rejects_is_replaced_by_the_original() {
    let fake = Fake::new();
    let log = fake.path("log");
    let output = fake
        .command()
        .env("FAKE_NVCC_FAIL_ON_COPY", "1")
        .env("BANKWISE_LOG", &log)
        .args(["nvcc", "--", "-c", TRANSPOSE, "-o", "k.o"])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    // The second run is the original command line, its output shown as nvcc's.
    assert_eq!(fake.args(), ["-c", TRANSPOSE, "-o", "k.o"]);
    assert_eq!(text(&output.stdout), "fake nvcc: out\n");
    let stderr = text(&output.stderr);
    let absolute_transpose = absolute(TRANSPOSE);
    assert!(
        stderr.starts_with("bankwise: warning: nvcc failed on the rewritten copy ("),
        "{stderr}"
    );
    assert!(stderr.contains("error: static assertion failed); compiling the original\n"));
    assert!(stderr.ends_with("fake nvcc: err\n"), "{stderr}");
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(logged.starts_with(&format!("{TRANSPOSE}: nvcc failed on the rewritten copy (")));
    assert!(logged.ends_with("); compiled the original\n"), "{logged}");
    assert!(!logged.contains(&absolute_transpose) || logged.contains("/bankwise-"));
}

#[test]
fn a_name_that_is_not_utf8_is_compiled_as_given() {
    use std::os::unix::ffi::OsStrExt;
    let fake = Fake::new();
    let name = std::ffi::OsStr::from_bytes(b"k\xff.cu");
    let path = fake.dir.path().join(name);
    std::fs::copy(TRANSPOSE, &path).expect("copied");
    for launcher in [false, true] {
        let mut command = fake.command();
        if launcher {
            command.arg(fake.nvcc());
        } else {
            command.args(["nvcc", "--"]);
        }
        let output = command
            .arg("-c")
            .arg(&path)
            .output()
            .expect("bankwise runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        assert!(text(&output.stderr)
            .starts_with("bankwise: warning: an argument is not UTF-8; compiling the originals"));
    }
}

#[test]
fn a_temporary_directory_with_odd_characters_is_not_used() {
    let fake = Fake::new();
    let odd = fake.path("tmp #1");
    std::fs::create_dir_all(&odd).expect("a directory");
    let depfile = fake.path("k.o.d");
    let depfile = depfile.to_str().expect("a UTF-8 path");
    let output = fake
        .command()
        .env("TMPDIR", &odd)
        .args([
            "nvcc", "--", "-MD", "-MF", depfile, "-c", TRANSPOSE, "-o", "k.o",
        ])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let copy = fake.args()[6].clone();
    assert!(copy.starts_with("/tmp/bankwise-"), "{copy}");
    assert!(std::fs::read_to_string(depfile)
        .expect("the dependency file")
        .starts_with(&format!("k.o : {TRANSPOSE} ")));
}

#[test]
fn the_files_own_line_directives_survive_the_copy() {
    let fake = Fake::new();
    let original = std::fs::read_to_string(TRANSPOSE).expect("the example exists");
    let with_line = original.replacen('\n', "\n#line 100 \"generated.cu\"\n", 1);
    let kernel = fake.write("generated.cu", &with_line);
    let kernel = kernel.to_str().expect("a UTF-8 path");
    fake.run(&[], &["-c", kernel]);
    let source = fake.source(0);
    assert!(source.contains("^ threadIdx.x]"));
    // Every directive bankwise adds after the file's own names the file's presumed name.
    let after: Vec<&str> = source
        .lines()
        .skip_while(|l| !l.starts_with("#line 100"))
        .filter(|l| l.starts_with("#line"))
        .collect();
    assert!(after.len() > 1, "{source}");
    assert!(
        after.iter().all(|l| l.ends_with(" \"generated.cu\"")),
        "{after:?}"
    );
}

#[test]
fn relative_includes_resolve_as_for_the_original_and_never_in_tmpdir() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let fake = Fake::new();
    // Another user's file where the old copy's `../../config.h` led.
    let tmpdir = fake.path("tmp");
    std::fs::create_dir_all(&tmpdir).expect("a directory");
    std::fs::write(tmpdir.join("config.h"), "#error \"hijacked\"\n").expect("written");
    // The project: the real config two levels up, a decoy `tilecfg.h` beside the kernel
    // that an angled include must not find, the real one in -I.
    let project = fake.path("project");
    let src = project.join("a/src");
    std::fs::create_dir_all(&src).expect("a directory");
    std::fs::create_dir_all(project.join("inc")).expect("a directory");
    std::fs::write(project.join("config.h"), "#define SCALE 2.0f\n").expect("written");
    std::fs::write(project.join("inc/tilecfg.h"), "#define TILE 32\n").expect("written");
    std::fs::write(src.join("tilecfg.h"), "#error \"decoy\"\n").expect("written");
    let kernel = src.join("k.cu");
    std::fs::write(
        &kernel,
        TILED_BY_FLAGS.replace(
            "#include <tilecfg.h>\n",
            "#include <tilecfg.h>\n#include \"../../config.h\"\n",
        ),
    )
    .expect("written");
    let log = fake.path("log");
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .env("TMPDIR", &tmpdir)
        .env("BANKWISE_LOG", &log)
        .arg(&nvcc)
        .arg("-arch=sm_90")
        .arg("-I")
        .arg(project.join("inc"))
        .arg("-c")
        .arg(&kernel)
        .arg("-o")
        .arg(fake.path("k.o"))
        .output()
        .expect("bankwise runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stderr), "");
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!(
            "{}: rewritten: 1 array, 992 -> 0 excess wavefronts\n",
            kernel.display()
        )
    );
}

#[test]
fn an_extent_that_differs_between_architectures_is_compiled_as_written() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let fake = Fake::new();
    let kernel = fake.write(
        "arch.cu",
        "#if __CUDA_ARCH__ >= 800\n#define TILE 64\n#else\n#define TILE 32\n#endif\n\
         // bankwise: block=32x8\n__global__ void k(float *o)\n{\n    \
         __shared__ float t[TILE][TILE];\n    for (int j = 0; j < TILE; j += 8)\n        \
         t[threadIdx.y + j][threadIdx.x] = o[j];\n    __syncthreads();\n    \
         for (int j = 0; j < TILE; j += 8)\n        o[j] = t[threadIdx.x][threadIdx.y + j];\n}\n",
    );
    let log = fake.path("log");
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .env("BANKWISE_LOG", &log)
        .arg(&nvcc)
        .args(["-arch=sm_90", "-c"])
        .arg(&kernel)
        .arg("-o")
        .arg(fake.path("arch.o"))
        .output()
        .expect("bankwise runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    // No rewrite to fall back from: the host pass sees 32, the sm_90 pass 64.
    assert_eq!(text(&output.stderr), "");
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!("{}: unchanged\n", kernel.display())
    );
}

#[test]
fn a_guard_on_a_value_bankwise_could_not_see_falls_back_to_the_original() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let fake = Fake::new();
    // TILE comes from a header named by a macro: bankwise reads the file's fallback, 32;
    // the build sees 64, and the rewrite's `static_assert(TILE == 32)` stops nvcc.
    fake.write("tile64.h", "#define TILE 64\n");
    let kernel = fake.write(
        "unseen.cu",
        &TILED_BY_FLAGS.replace(
            "#include <tilecfg.h>\n",
            "#include TILE_HEADER\n#ifndef TILE\n#define TILE 32\n#endif\n",
        ),
    );
    let log = fake.path("log");
    let object = fake.path("unseen.o");
    let output = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .env("BANKWISE_LOG", &log)
        .arg(&nvcc)
        .args(["-arch=sm_90", "-DTILE_HEADER=\"tile64.h\"", "-I"])
        .arg(fake.path(""))
        .arg("-c")
        .arg(&kernel)
        .arg("-o")
        .arg(&object)
        .output()
        .expect("bankwise runs");
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(object.exists());
    // The compiled view compiles the rewrite with the build's flags first: its guard stops
    // it there, and the build gets the original without a failed compile.
    assert_eq!(stderr, "");
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(
        logged.starts_with(&format!(
            "{}: skipped: `t` in `k`: the rewritten file does not compile with nvcc where the \
             original does: ",
            kernel.display()
        )) && logged.contains("static assertion failed"),
        "{logged}"
    );
}

#[test]
fn an_extent_bankwise_cannot_evaluate_is_logged_as_skipped_with_how_to_give_it() {
    let fake = Fake::new();
    let kernel = fake.write("tiled.cu", TILED_BY_FLAGS);
    let kernel = kernel.to_str().expect("a UTF-8 path");
    let log = fake.path("log");
    let output = fake
        .command()
        .env("BANKWISE_LOG", &log)
        .args(["nvcc", "--", "-c", kernel])
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(fake.args(), ["-c", kernel]);
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!(
            "{kernel}: skipped: `t` in `k`: extent `TILE` is unknown (pass -D, or add \
             include_dirs to bankwise.toml)\n"
        )
    );
}

/// `bankwise nvcc -- -I include -c runner`, logging to `log`.
fn compile_with_include(fake: &Fake, include: &Path, runner: &Path, log: &Path) -> Output {
    fake.command()
        .env("BANKWISE_LOG", log)
        .arg("nvcc")
        .arg("--")
        .arg("-I")
        .arg(include)
        .arg("-c")
        .arg(runner)
        .output()
        .expect("bankwise runs")
}

/// A project whose kernel lives in `include/tiles.cuh` and is launched from `src/run.cu`,
/// which finds the header through `-I include`: the runner with `runner_includes` before its
/// launch.
fn header_project(fake: &Fake, runner_includes: &str) -> PathBuf {
    let project = fake.path("project");
    std::fs::create_dir_all(project.join("include")).expect("a directory");
    std::fs::create_dir_all(project.join("src")).expect("a directory");
    std::fs::write(project.join("bankwise.toml"), "").expect("written");
    std::fs::write(
        project.join("include/tile_config.h"),
        "#pragma once\n#define TILE 32\n",
    )
    .expect("written");
    std::fs::write(
        project.join("include/tiles.cuh"),
        "#pragma once\n#include \"tile_config.h\"\ntemplate <typename T>\n__global__ \
         void colRead(T *o)\n{\n    __shared__ T tile[TILE][TILE];\n    \
         tile[threadIdx.y][threadIdx.x] = o[0];\n    __syncthreads();\n    \
         o[1] = tile[threadIdx.x][threadIdx.y];\n}\n",
    )
    .expect("written");
    let runner = project.join("src/run.cu");
    std::fs::write(
        &runner,
        format!(
            "{runner_includes}void run(float *o)\n{{\n    colRead<float><<<1, dim3(32, 32)>>>(o);\n}}\n"
        ),
    )
    .expect("written");
    runner
}

/// A kernel defined in a project header is fixed with its includer's launch and compiled
/// from a copy beside the includer's, which nvcc's quoted include finds first; the log
/// names it, and the header in the project stays as it is.
#[test]
fn a_header_that_defines_a_kernel_is_compiled_from_a_fixed_copy() {
    let fake = Fake::new();
    let runner = header_project(&fake, "#include \"tiles.cuh\"\n");
    let include = fake.path("project/include");
    let log = fake.path("log");
    let output = compile_with_include(&fake, &include, &runner, &log);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let header = include.join("tiles.cuh");
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!(
            "{}: unchanged\n{}: rewritten: 1 array, 992 -> 0 excess wavefronts (included by {})\n",
            runner.display(),
            header.display(),
            runner.display()
        )
    );
    // The runner's copy and the header's copy beside it, named as the include names it.
    let copied: Vec<PathBuf> = files_under(&fake.path("copies"), |_| true);
    let input = copied
        .iter()
        .find(|p| p.ends_with("run.cu"))
        .expect("the runner's copy");
    let header_copy = input.with_file_name("tiles.cuh");
    let fixed = std::fs::read_to_string(&header_copy).expect("the header's copy");
    assert!(
        fixed.contains("tile[threadIdx.x][threadIdx.y ^ threadIdx.x]"),
        "{fixed}"
    );
    assert!(
        fixed.contains(&format!("#line 1 \"{}\"", header.display())),
        "{fixed}"
    );
    assert!(!std::fs::read_to_string(&header)
        .expect("the header")
        .contains('^'));
}

/// A header that another header of the unit includes too is compiled as written: behind
/// an include guard the original could come first and the copy never be compiled.
#[test]
fn a_header_another_header_includes_too_is_compiled_as_written() {
    let fake = Fake::new();
    let runner = header_project(&fake, "#include \"both.cuh\"\n#include \"tiles.cuh\"\n");
    let include = fake.path("project/include");
    std::fs::write(include.join("both.cuh"), "#include \"tiles.cuh\"\n").expect("written");
    let log = fake.path("log");
    let output = compile_with_include(&fake, &include, &runner, &log);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        fake.args(),
        [
            "-I",
            include.to_str().expect("UTF-8"),
            "-c",
            runner.to_str().expect("UTF-8")
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&log).expect("the log"),
        format!(
            "{}: unchanged\n{}: skipped: {} includes it too: the original could be compiled in \
             place of a copy, so neither is (included by {})\n",
            runner.display(),
            include.join("tiles.cuh").display(),
            std::fs::canonicalize(include.join("both.cuh"))
                .expect("exists")
                .display(),
            runner.display()
        )
    );
}

/// `bankwise fix --diff FILE` with `nvcc` as the compiled view's compiler, its compiles kept
/// in `cache` when one is given (else where bankwise keeps them by default).
fn fix_diff_with_nvcc(nvcc: &Path, file: &str, cache: Option<&Path>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
    command
        .env("BANKWISE_NVCC", nvcc)
        .args(["fix", "--diff", file]);
    if let Some(cache) = cache {
        command.env("BANKWISE_CACHE_DIR", cache);
    }
    command.output().expect("bankwise runs")
}

/// `fix` with nvcc compiles the file before and after and runs block 0 of each: `ludDiagonal`'s
/// swizzle removes the 193 excess wavefronts nvcc's code has (the source model counts 301)
/// but stops nvcc merging the row reads of its unrolled loops and adds the map's arithmetic
/// (2,168 → 3,670 warp instructions), so the time model predicts 1.22 times the time (the
/// H100 measured 1.24) and the array is left alone with those figures, while
/// `ludPerimeter`'s is applied.
#[test]
fn fix_with_nvcc_leaves_alone_a_rewrite_predicted_slower() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let output = fix_diff_with_nvcc(&nvcc, "testdata/suite/lud.cu", None);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let notes = text(&output.stderr);
    assert!(
        notes.contains(
            "testdata/suite/lud.cu:33:22: note: `d` in `ludDiagonal` not rewritten: compiled \
             with nvcc for sm_90, `ludDiagonal` is predicted to take 1.220 times its time \
             after the rewrite: block 0 executes 3670 warp instructions where it executed 2168 \
             and 556 shared-memory wavefronts where it had 621, removing 193 excess wavefronts \
             (time model fitted on sm_90: 5644 issue slots before, 6886 after); a rewrite must \
             be predicted at most 0.970 times"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("would fix: `below` in `ludPerimeter`: 2744 -> 0"),
        "{notes}"
    );
    // A rewrite kept says what the time model predicts of its kernel (measured on an H100:
    // 0.62).
    assert!(
        notes.contains(
            "1 ALU instruction per access; predicted 0.550 times the kernel's time (compiled \
             for sm_90);"
        ),
        "{notes}"
    );
    let diff = text(&output.stdout);
    assert!(diff.contains("+            below[r][c ^ r] = "), "{diff}");
    assert!(!diff.contains("d[t][i ^ t]"), "{diff}");
}

/// The skew map of `nwUpperLeft`'s tile (`% 17` on every access) passes the ALU price, but
/// compiled, the two sweeps nvcc unrolled become loops again: left alone, with the counts.
#[test]
fn fix_with_nvcc_leaves_alone_a_rewrite_that_stops_unrolling() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let output = fix_diff_with_nvcc(&nvcc, "testdata/suite/nw.cu", None);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let notes = text(&output.stderr);
    for (line, kernel) in [(74, "nwUpperLeft"), (83, "nwLowerRight")] {
        assert!(
            notes.contains(&format!(
                "testdata/suite/nw.cu:{line}:20: note: `h` in `{kernel}` not rewritten: \
                 compiled with nvcc for sm_90, `{kernel}` has 2 loops nvcc leaves rolled \
                 after the rewrite where it had 0: the map stops nvcc unrolling a loop"
            )),
            "{notes}"
        );
    }
    assert_eq!(text(&output.stdout), "");
}

/// The compiled view keeps what each compile gave, by content: the second `fix` of a file
/// reads its three compiles (PTX and machine code of the original, of the rewrite of both
/// arrays, and of the rewrite without `ludDiagonal`'s) back and decides the same.
#[test]
fn the_compiled_view_keeps_its_compiles_by_content() {
    let Some(nvcc) = real_nvcc() else {
        println!("skipped: no nvcc in target/nvcc-venv (scripts/test installs it)");
        return;
    };
    let cache = tempfile::tempdir().expect("a temporary directory");
    let run = || fix_diff_with_nvcc(&nvcc, "testdata/suite/lud.cu", Some(cache.path()));
    let first = run();
    let entries = || std::fs::read_dir(cache.path()).map_or(0, Iterator::count);
    assert_eq!(entries(), 3, "{}", text(&first.stderr));
    let second = run();
    assert_eq!(entries(), 3);
    assert_eq!(text(&first.stdout), text(&second.stdout));
    assert_eq!(text(&first.stderr), text(&second.stderr));
    assert!(text(&second.stderr).contains("`ludDiagonal` is predicted to take 1.220 times"));
}
