//! `bankwise fix` as a user runs it: the diff of every testdata file (snapshotted), diffs that
//! `git apply` accepts, writing in place and elsewhere, idempotence, and bad input.
mod common;
use common::{
    bankwise, declared_extents, snapshot_name, snapshot_settings, stderr, stdout, testdata_files,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The testdata files `fix` changes, with the arrays it rewrites.
const CHANGED: &[(&str, &[&str])] = &[
    ("testdata/block_shapes.cu", &["t_tile"]),
    ("testdata/config/tiled.cu", &["tile"]),
    ("testdata/const_sizes.cu", &["k_vec"]),
    ("testdata/escapes_asm.cu", &["clean_c"]),
    ("testdata/fwt.cu", &["s"]),
    (
        "testdata/loop_carried.cu",
        &["ring", "buf", "coeffs", "partial"],
    ),
    ("testdata/multi_decl_tiles.cu", &["re", "im"]),
    ("testdata/needle.cu", &["score"]),
    ("testdata/pointers.cu", &["tile", "SharedMemory<float>()"]),
    ("testdata/records.cu", &["s_body", "s_bin"]),
    ("testdata/reduction.cu", &["sdata"]),
    ("testdata/strided.cu", &["d"]),
    ("testdata/structs.cu", &["s_f"]),
    ("testdata/subword.cu", &["s_bytes", "s_tile"]),
    ("testdata/suite/conv.cu", &["rows", "cols"]),
    ("testdata/suite/dct8x8.cu", &["tile", "tile"]),
    ("testdata/suite/dwtHaar1D.cu", &["level"]),
    ("testdata/suite/lavaMD.cu", &["home"]),
    ("testdata/suite/lud.cu", &["d", "below"]),
    ("testdata/suite/matrix_scan.cu", &["m"]),
    ("testdata/suite/mri_gridding.cu", &["s", "records"]),
    ("testdata/suite/nw.cu", &["h", "h"]),
    ("testdata/suite/reduction.cu", &["partial"]),
    ("testdata/suite/transpose.cu", &["tile"]),
    ("testdata/specifier_macros.cu", &["tile", "buf"]),
    ("testdata/template_depth.cu", &["cube"]),
    ("testdata/template_helpers.cu", &["As", "As2"]),
    ("testdata/transpose.cu", &["tile"]),
    ("testdata/transpose3d.cu", &["cube"]),
    ("testdata/vector_views.cu", &["tile", "s"]),
];

/// A copy of `source` (and the `bankwise.toml` beside it) in `dir`.
fn copy_into(dir: &Path, source: &Path) -> PathBuf {
    let copy = dir.join(source.file_name().expect("a file name"));
    std::fs::copy(source, &copy).expect("copied");
    let config = source.with_file_name("bankwise.toml");
    if config.exists() {
        std::fs::copy(&config, dir.join("bankwise.toml")).expect("copied");
    }
    copy
}

fn git_apply(dir: &Path, args: &[&str], diff: &str) -> Output {
    let patch = dir.join("fix.diff");
    std::fs::write(&patch, diff).expect("written");
    Command::new("git")
        .arg("apply")
        .args(args)
        .arg(&patch)
        .current_dir(dir)
        .output()
        .expect("git runs")
}

#[test]
fn every_testdata_file_fixes_as_snapshotted_and_only_the_expected_ones_change() {
    for path in testdata_files() {
        let shown = path.to_string_lossy().into_owned();
        let output = bankwise(&["fix", "--diff", &shown]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{shown}: {}",
            stderr(&output)
        );
        let expected = CHANGED.iter().find(|(p, _)| *p == shown);
        assert_eq!(
            !output.stdout.is_empty(),
            expected.is_some(),
            "{shown} changes"
        );
        snapshot_settings().bind(|| {
            insta::assert_snapshot!(
                format!("fix_diff__{}", snapshot_name(&path)),
                format!("{}\n{}", stderr(&output), stdout(&output))
            );
        });
        let json = bankwise(&["fix", "--format", "json", &shown]);
        let json: serde_json::Value =
            serde_json::from_slice(&json.stdout).expect("fix prints JSON");
        let rewritten: Vec<&str> = json["files"][0]["arrays"]
            .as_array()
            .expect("arrays")
            .iter()
            .filter(|a| a["action"] == "rewritten")
            .filter_map(|a| a["name"].as_str())
            .collect();
        assert_eq!(rewritten, expected.map_or(&[][..], |e| e.1), "{shown}");
    }
}

#[test]
fn the_testdata_directory_in_one_report() {
    let output = bankwise(&["fix", "--format", "json", "testdata"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        json["totals"],
        serde_json::json!({
            "arrays_rewritten": 45,
            "arrays_not_simulated": 5,
            "excess_before": 39566,
            "excess_after": 2061,
        })
    );
    // Text mode needs somewhere to put several files.
    let text = bankwise(&["fix", "testdata"]);
    assert_eq!(text.status.code(), Some(2));
    assert!(stderr(&text).contains("--in-place"));
}

#[test]
fn diffs_apply_with_git_and_give_the_fixed_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, _) in CHANGED {
        let source = Path::new(path);
        let work = dir.path().join(snapshot_name(source));
        let copy = work.join(path);
        std::fs::create_dir_all(copy.parent().expect("a directory")).expect("created");
        std::fs::copy(source, &copy).expect("copied");
        let fixed = work.join("fixed.cu");
        let written = bankwise(&["fix", path, "-o", &fixed.to_string_lossy()]);
        assert_eq!(
            written.status.code(),
            Some(0),
            "{path}: {}",
            stderr(&written)
        );
        let diff = stdout(&bankwise(&["fix", "--diff", path]));
        let check = git_apply(&work, &["--check"], &diff);
        assert!(check.status.success(), "{path}: {}", stderr(&check));
        let applied = git_apply(&work, &[], &diff);
        assert!(applied.status.success(), "{path}: {}", stderr(&applied));
        assert_eq!(
            std::fs::read(&copy).expect("patched"),
            std::fs::read(&fixed).expect("fixed"),
            "{path}"
        );
    }
}

#[test]
fn fix_makes_no_edits_on_its_own_output() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for path in testdata_files() {
        let work = dir.path().join(snapshot_name(&path));
        std::fs::create_dir_all(&work).expect("created");
        let copy = copy_into(&work, &path);
        let copy_text = copy.to_string_lossy().into_owned();
        let first = bankwise(&["fix", "--in-place", &copy_text]);
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        let again = bankwise(&["fix", "--check", &copy_text]);
        assert_eq!(
            again.status.code(),
            Some(0),
            "{}: {}{}",
            path.display(),
            stdout(&again),
            stderr(&again)
        );
        assert!(!stderr(&again).contains("would fix"), "{}", path.display());
    }
}

#[test]
fn check_mode_writes_nothing_and_says_whether_anything_would_change() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let copy = copy_into(dir.path(), Path::new("testdata/transpose.cu"));
    let before = std::fs::read(&copy).expect("readable");
    let check = bankwise(&["fix", "--check", &copy.to_string_lossy()]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stderr(&check).contains("would fix: `tile` in `transposeCoalesced`: 992 -> 0"));
    assert_eq!(std::fs::read(&copy).expect("readable"), before);
    let clean = bankwise(&["fix", "--check", "testdata/atomics.cu"]);
    assert_eq!(clean.status.code(), Some(0));
}

#[cfg(unix)]
#[test]
fn in_place_keeps_permissions_and_matches_the_output_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let copy = copy_into(dir.path(), Path::new("testdata/fwt.cu"));
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let out = dir.path().join("out.cu");
    let written = bankwise(&["fix", "testdata/fwt.cu", "-o", &out.to_string_lossy()]);
    assert_eq!(written.status.code(), Some(0));
    let in_place = bankwise(&["fix", "--in-place", &copy.to_string_lossy()]);
    assert_eq!(in_place.status.code(), Some(0), "{}", stderr(&in_place));
    assert_eq!(
        std::fs::read(&copy).expect("fixed"),
        std::fs::read(&out).expect("written")
    );
    let mode = std::fs::metadata(&copy)
        .expect("exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("listable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("bankwise-")), "{names:?}");
}

#[test]
fn output_dash_is_stdout_not_a_file_named_dash() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = std::fs::canonicalize("testdata/transpose.cu").expect("exists");
    let input = input.to_string_lossy();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the bankwise binary runs")
    };
    let dash = run(&["fix", &input, "-o", "-"]);
    assert_eq!(dash.status.code(), Some(0), "{}", stderr(&dash));
    let plain = run(&["fix", &input]);
    assert_eq!(stdout(&dash), stdout(&plain));
    assert!(stdout(&dash).contains("tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"));
    assert!(!dir.path().join("-").exists());
    // The JSON report goes to stdout too: one of them must give way.
    let json = run(&["fix", &input, "-o", "-", "--format", "json"]);
    assert_eq!(json.status.code(), Some(2));
    assert!(stderr(&json).contains("-o - and --format json both write to stdout"));
    assert!(!dir.path().join("-").exists());
}

#[cfg(unix)]
#[test]
fn read_only_targets_are_refused_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let copy = copy_into(dir.path(), Path::new("testdata/transpose.cu"));
    let before = std::fs::read(&copy).expect("readable");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let in_place = bankwise(&["fix", "--in-place", &copy.to_string_lossy()]);
    assert_eq!(in_place.status.code(), Some(2));
    assert!(stderr(&in_place).contains("read-only; nothing written"));
    assert_eq!(std::fs::read(&copy).expect("readable"), before);
    let out = bankwise(&["fix", "testdata/fwt.cu", "-o", &copy.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&copy).expect("readable"), before);
}

#[test]
fn bad_input_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("out.cu");
    let out_text = out.to_string_lossy().into_owned();
    let latin1 = dir.path().join("latin1.cu");
    std::fs::write(&latin1, b"int caf\xe9;\n__global__ void k() {}\n").expect("written");
    let broken = dir.path().join("broken.cu");
    std::fs::write(&broken, "__global__ void k( {{{ ]]] \n").expect("written");
    for input in [&latin1, &broken, &dir.path().join("missing.cu")] {
        let output = bankwise(&["fix", &input.to_string_lossy(), "-o", &out_text]);
        assert_eq!(output.status.code(), Some(2), "{}", input.display());
        assert!(stderr(&output).contains("error"), "{}", stderr(&output));
        assert!(!out.exists(), "{}", input.display());
    }
    assert!(stderr(&bankwise(&["fix", &latin1.to_string_lossy()])).contains("UTF-8"));
    let two = bankwise(&[
        "fix",
        "testdata/fwt.cu",
        "testdata/transpose.cu",
        "-o",
        &out_text,
    ]);
    assert_eq!(two.status.code(), Some(2));
    assert!(!out.exists());
    let unknown = bankwise(&["fix", "--strategy", "magic", "testdata/fwt.cu"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn crlf_files_stay_crlf_and_their_diffs_apply() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = std::fs::read_to_string("testdata/transpose.cu").expect("readable");
    let crlf = dir.path().join("crlf.cu");
    std::fs::write(&crlf, text.replace('\n', "\r\n")).expect("written");
    let crlf_text = crlf.to_string_lossy().into_owned();
    let diff = bankwise(&["fix", "--diff", &crlf_text]);
    assert_eq!(diff.status.code(), Some(0));
    let fixed = bankwise(&["fix", &crlf_text]);
    let fixed_text = stdout(&fixed);
    assert_eq!(
        fixed_text.matches('\n').count(),
        fixed_text.matches("\r\n").count()
    );
    let unix = stdout(&bankwise(&["fix", "testdata/transpose.cu"]));
    assert_eq!(fixed_text, unix.replace('\n', "\r\n"));
    // `git apply` with the path relative to the directory (headers drop the leading `/`).
    let absolute = dir.path().display().to_string();
    let relative = stdout(&diff).replace(&format!("{}/", absolute.trim_start_matches('/')), "");
    let applied = git_apply(dir.path(), &[], &relative);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(std::fs::read_to_string(&crlf).expect("patched"), fixed_text);
}

/// Padding beyond the kernel's budget grows shared memory past what the user allowed: an
/// unsafe fix, applied on request. `--smem-budget 4096` (the tile's own bytes) leaves no
/// room; without it the default budget does (see `padding_within_the_default_budget_…`).
#[test]
fn forced_padding_is_unsafe_and_applied_on_request() {
    let safe = bankwise(&[
        "fix",
        "--strategy",
        "padding",
        "--smem-budget",
        "4096",
        "testdata/transpose.cu",
    ]);
    assert_eq!(safe.status.code(), Some(0));
    assert_eq!(
        stdout(&safe),
        std::fs::read_to_string("testdata/transpose.cu").expect("readable")
    );
    assert!(stderr(&safe).contains("unsafe: grows shared memory by 128 bytes"));
    let json = bankwise(&[
        "fix",
        "--strategy",
        "padding",
        "--smem-budget",
        "4096",
        "--unsafe-fixes",
        "--format",
        "json",
        "--diff",
        "testdata/transpose.cu",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let tile = &json["files"][0]["arrays"][0];
    assert_eq!(tile["action"], "rewritten");
    assert_eq!(tile["applicability"], "unsafe");
    assert_eq!(tile["form"], "padded-declaration");
    assert_eq!(tile["extra_bytes"], 128);
    assert_eq!(tile["alu_per_access"], 0.0);
    assert!(json["files"][0]["diff"]
        .as_str()
        .is_some_and(|d| d.contains("+    __shared__ float tile[TILE_DIM][TILE_DIM + 1];")));
    assert_eq!(json["totals"]["excess_before"], 992);
    assert_eq!(json["totals"]["excess_after"], 0);
}

/// Without `--smem-budget`, a kernel may grow by what keeps its occupancy: `convColumns`'
/// 16x80 tile (5,120 bytes, blocks of 128 threads) has 1,024 bytes of room on every
/// architecture (sm_70 holds 16 such blocks in 96 KiB: 6,144 bytes each), so its rows are
/// padded to 82 (+128 bytes, no ALU instruction) where the best map that keeps its size
/// costs 3 per access. A swizzle of one XOR keeps the size (`convRows`' map costs 3 too, but
/// its kernel has no room: 4x160 tiles of 64 threads). Given a budget, the budget decides.
#[test]
fn padding_within_the_default_budget_is_chosen_where_it_is_cheaper() {
    let output = bankwise(&["fix", "--diff", "testdata/suite/conv.cu"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "testdata/suite/conv.cu:66:22: would fix: `cols` in `convColumns`: 4088 -> 0 excess \
             wavefronts; padded declaration by padding (pitch = 80, pad = 2, declared_row = \
             true); 0 ALU instructions per access, 128 more bytes, within the default budget of \
             1024 bytes, which keeps 16 blocks per SM on sm_70 (the tightest of sm_70, sm_75, \
             sm_80, sm_86, sm_89, sm_90: the build's architecture is not known); assumes blocks \
             of 16x8x1 (its launch in this file) [BANKWISE_CHECKS]\n"
        ),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output)
        .contains("+    __shared__ float cols[COL_TX][(STEPS + 2 * HALO) * COL_TY + 2];"));
    let json = bankwise(&[
        "fix",
        "--format",
        "json",
        "--diff",
        "testdata/suite/conv.cu",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let cols = &json["files"][0]["arrays"][1];
    assert_eq!(cols["name"], "cols");
    assert_eq!(cols["applicability"], "safe");
    assert_eq!(
        cols["default_budget"],
        serde_json::json!({"bytes": 1024, "binding": "sm_70", "blocks_per_sm": 16, "arch": null})
    );
    // The build's architecture bounds the budget alone: sm_90 holds 16 blocks of 128
    // threads in 228 KiB, 13,568 bytes each.
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("compile_commands.json"),
        serde_json::json!([{
            "directory": std::env::current_dir().expect("cwd"),
            "file": "testdata/suite/conv.cu",
            "arguments": ["nvcc", "-arch=sm_90", "-c", "testdata/suite/conv.cu"],
        }])
        .to_string(),
    )
    .expect("written");
    let db = dir.path().join("compile_commands.json");
    let sm_90 = bankwise(&[
        "fix",
        "--diff",
        "--compile-commands",
        db.to_str().expect("utf-8"),
        "testdata/suite/conv.cu",
    ]);
    assert!(
        stderr(&sm_90).contains(
            "128 more bytes, within the default budget of 8448 bytes, which keeps 16 blocks per \
             SM on sm_90;"
        ),
        "{}",
        stderr(&sm_90)
    );
    // A budget given leaves no room: the swizzle that keeps the size.
    let budget = bankwise(&[
        "fix",
        "--diff",
        "--smem-budget",
        "5120",
        "testdata/suite/conv.cu",
    ]);
    assert!(
        stderr(&budget)
            .contains("`cols` in `convColumns`: 4088 -> 0 excess wavefronts; swizzled in place"),
        "{}",
        stderr(&budget)
    );
}

/// `FETCH_FLOAT4(Bs[r][c])` reads 16 bytes at `&Bs[r][c]`: a map applied to that subscript
/// would move the group's first element but not the three after it, and misalign the
/// float4. The element escapes through the macro, so the array is left alone (before, it
/// was read as a 4-byte load, reported 4-way, and rewritten). A macro that only reads its
/// argument (`MAX2`) is a load of it.
#[test]
fn an_element_passed_to_a_macro_that_takes_its_address_is_never_rewritten() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernel = dir.path().join("sgemm.cu");
    std::fs::write(
        &kernel,
        "#define FETCH_FLOAT4(p) (reinterpret_cast<float4 *>(&(p))[0])\n\
         #define MAX2(a, b) ((a) > (b) ? (a) : (b))\n\
         __global__ void sgemmTile(float *A, float *C)\n{\n    \
         __shared__ float Bs[8][128];\n    __shared__ float Cs[32][32];\n    \
         int t = threadIdx.x;\n    int r = t / 32, c = (t % 32) * 4;\n    \
         FETCH_FLOAT4(Bs[r][c]) = FETCH_FLOAT4(A[r * 128 + c]);\n    \
         Cs[t % 32][t / 32] = A[t];\n    __syncthreads();\n    \
         float4 v = FETCH_FLOAT4(Bs[r][c]);\n    \
         C[t] = v.x + v.w + MAX2(Cs[t / 32][t % 32], Cs[0][t % 32]);\n}\n\
         int main() { sgemmTile<<<1, 256>>>(nullptr, nullptr); }\n",
    )
    .expect("written");
    let path = kernel.to_string_lossy().into_owned();
    let check = bankwise(&["check", "--format", "json", &path]);
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON");
    let arrays = &report["files"][0]["kernels"][0]["arrays"];
    assert_eq!(arrays[0]["name"], "Bs");
    assert_eq!(arrays[0]["accesses"].as_array().map(Vec::len), Some(0));
    assert_eq!(arrays[0]["escapes"][0]["kind"], "macro-argument");
    // `Cs`, stored by columns, read through `MAX2`: its loads are loads.
    assert_eq!(arrays[1]["name"], "Cs");
    assert_eq!(arrays[1]["accesses"].as_array().map(Vec::len), Some(3));
    let fixed = bankwise(&["fix", "--diff", &path]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    let diff = stdout(&fixed);
    assert!(diff.contains("-    Cs[t % 32][t / 32] = A[t];"), "{diff}");
    assert!(
        !diff.contains("-    __shared__ float Bs[8][128];"),
        "{diff}"
    );
    assert!(!diff.contains("FETCH_FLOAT4(Bs[bankwise"), "{diff}");
}

/// Two loads at a word stride of 2: 4 excess wavefronts per block, which a 3-instruction XOR
/// map removes at 24 ALU instructions, 6 per wavefront: not worth it by default, applied under
/// a limit of 6, from the command line or from `bankwise.toml`.
#[test]
fn a_rewrite_that_costs_more_than_it_removes_is_left_alone_with_its_price() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernel = dir.path().join("pairs.cu");
    std::fs::write(
        &kernel,
        "// bankwise: block=64\n__global__ void pairs(const float *in, float *out)\n{\n    \
         __shared__ float s[128];\n    s[threadIdx.x] = in[threadIdx.x];\n    \
         s[threadIdx.x + 64] = in[threadIdx.x + 64];\n    __syncthreads();\n    \
         out[threadIdx.x] = s[2 * threadIdx.x] + s[2 * threadIdx.x + 1];\n}\n",
    )
    .expect("writable");
    let shown = kernel.to_string_lossy().into_owned();
    let refused = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(refused.status.code(), Some(0));
    assert_eq!(stdout(&refused), "");
    assert!(
        stderr(&refused).contains(
            "pairs.cu:4:22: note: `s` in `pairs` left alone with 4 excess wavefronts: the map \
             adds 24 ALU instructions per block (3.0 on each of 8 shared-memory instructions) \
             to remove 4 excess wavefronts: 6.0 per wavefront, over the limit of 3 \
             (--max-alu-per-wavefront)"
        ),
        "{}",
        stderr(&refused)
    );
    let json = bankwise(&["fix", "--diff", "--format", "json", &shown]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(json["files"][0]["arrays"][0]["action"], "left-alone");
    assert_eq!(json["totals"]["excess_after"], 4);
    let allowed = bankwise(&["fix", "--diff", "--max-alu-per-wavefront", "6", &shown]);
    assert!(stdout(&allowed).contains("s[bankwise_s(2 * threadIdx.x)]"));
    std::fs::write(
        dir.path().join("bankwise.toml"),
        "[fix]\nmax_alu_per_wavefront = 6\n",
    )
    .expect("writable");
    let configured = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(stdout(&configured), stdout(&allowed));
    let settings = bankwise(&["fix", "--show-settings", &shown]);
    assert!(stdout(&settings).contains("max_alu_per_wavefront = 6\n"));
}

/// Without nvcc, `fix` says once that its rewrites were judged on the source alone;
/// `BANKWISE_NVCC=` (set, empty) turns the compiled view and the note off.
#[test]
fn without_nvcc_fix_says_so_once() {
    let run = |nvcc: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
        command
            .args([
                "fix",
                "--diff",
                "testdata/transpose.cu",
                "testdata/config/tiled.cu",
            ])
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .env("PATH", "/nonexistent");
        match nvcc {
            Some(value) => command.env("BANKWISE_NVCC", value),
            None => command.env_remove("BANKWISE_NVCC"),
        };
        stderr(&command.output().expect("bankwise runs"))
    };
    let note = "bankwise: note: nvcc not found ($BANKWISE_NVCC, $CUDA_HOME/bin, \
                $CUDA_PATH/bin, PATH): the rewrites were judged on the source alone, not on \
                the compiled kernel (BANKWISE_NVCC= turns this note off)\n";
    assert_eq!(run(None).matches(note).count(), 1, "{}", run(None));
    assert!(!run(Some("")).contains("nvcc not found"));
}

/// `fix` over several files gives a kernel the block shape of its launch in another of them,
/// as `check DIR` does.
#[test]
fn a_kernel_launched_from_another_file_is_fixed_with_that_launch() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernels = "#define TILE 32\n__global__ void transposeTile(float *o)\n{\n    \
        __shared__ float tile[TILE][TILE];\n    tile[threadIdx.y][threadIdx.x] = o[0];\n    \
        __syncthreads();\n    o[1] = tile[threadIdx.x][threadIdx.y];\n}\n";
    let host = "__global__ void transposeTile(float *o);\nint main()\n{\n    \
        transposeTile<<<1, dim3(32, 8)>>>(0);\n}\n";
    std::fs::write(dir.path().join("kernels.cu"), kernels).expect("written");
    std::fs::write(dir.path().join("main.cu"), host).expect("written");
    let shown = dir.path().to_string_lossy().into_owned();
    let output = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("`tile` in `transposeTile`: 248 -> 0 excess wavefronts"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("+    tile[threadIdx.y][threadIdx.x ^ threadIdx.y]"));
    // Alone, the kernel's file has no launch and stays as it is.
    let alone = dir.path().join("kernels.cu").to_string_lossy().into_owned();
    let output = bankwise(&["fix", "--diff", &alone]);
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
}

/// The dynamic shared memory a static member of a struct template returns
/// (`SharedMemory<T>::GetPointer()`, issue 36 item 6) is an array as `SharedMemory<T>()`'s
/// is: checked, and fixed with a trap on the size the launch gives.
#[test]
fn a_static_member_that_returns_the_dynamic_shared_memory_is_followed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("provider.cu");
    std::fs::write(
        &path,
        "template <typename T> struct SharedMemory {\n    \
         __device__ static T *GetPointer() { extern __shared__ T s_mem[]; return s_mem; }\n};\n\
         __global__ void scaled(float *out)\n{\n    \
         float *s = SharedMemory<float>::GetPointer();\n    \
         s[threadIdx.x * 4] = out[threadIdx.x];\n    __syncthreads();\n    \
         out[threadIdx.x] = s[threadIdx.x];\n}\n\
         void run(float *o) { scaled<<<1, 128, 4096 * sizeof(float)>>>(o); }\n",
    )
    .expect("written");
    let shown = path.to_string_lossy().into_owned();
    let check = bankwise(&["check", &shown]);
    assert!(
        stdout(&check).contains(
            "provider.cu:7:5: warning: 4-way bank conflict writing \
             `SharedMemory<float>::GetPointer()` through a pointer (stride 4): lanes 0 and 8 both \
             hit bank 0 (words 0 and 32); 12 excess wavefronts per block [BW002]"
        ),
        "{}",
        stdout(&check)
    );
    let fixed = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(
        stdout(&fixed).contains("+    s[bankwise_SharedMemory_float_GetPointer(threadIdx.x * 4)]"),
        "{}",
        stdout(&fixed)
    );
}

/// A launch gives a kernel its shape only in its own program: the files of its directory and
/// the headers it includes. Two programs in two directories, each with a `transposeTile`
/// and its own launch (32x8 and 32x16), are each fixed for their own (issue 35, item 5);
/// before, one took the other's shape.
#[test]
fn a_launch_in_another_program_gives_no_shape() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernels = "#define TILE 32\n__global__ void transposeTile(float *o)\n{\n    \
        __shared__ float tile[TILE][TILE];\n    tile[threadIdx.y][threadIdx.x] = o[0];\n    \
        __syncthreads();\n    o[1] = tile[threadIdx.x][threadIdx.y];\n}\n";
    for (program, rows) in [("a", 8), ("b", 16)] {
        let sub = dir.path().join(program);
        std::fs::create_dir_all(&sub).expect("a directory");
        std::fs::write(sub.join("kernels.cu"), kernels).expect("written");
        let host = format!(
            "__global__ void transposeTile(float *o);\nint main()\n{{\n    \
             transposeTile<<<1, dim3(32, {rows})>>>(0);\n}}\n"
        );
        std::fs::write(sub.join("main.cu"), host).expect("written");
    }
    let shown = dir.path().to_string_lossy().into_owned();
    let output = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let notes = stderr(&output);
    for (program, figures, shape) in [("a", "248 -> 0", "32x8x1"), ("b", "496 -> 0", "32x16x1")] {
        let note = notes
            .lines()
            .find(|l| l.contains(&format!("{program}/kernels.cu")))
            .unwrap_or_else(|| panic!("{notes}"));
        assert!(note.contains(figures), "{note}");
        assert!(
            note.contains(&format!("blocks of {shape} (its launch in main.cu)")),
            "{note}"
        );
    }
}

/// An `extern __shared__` array takes its extent from the dynamic shared memory its
/// launches in other files of the run pass, when they all agree (issue 17, item 7): `check`
/// names the launches used, `fix` rewrites the array with a trap on `%dynamic_smem_size`.
#[test]
fn an_extern_array_is_sized_by_the_launches_of_another_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernels = "__global__ void reduceInterleaved(float *out, const float *in)\n{\n    \
        extern __shared__ float sdata[];\n    unsigned int tid = threadIdx.x;\n    \
        sdata[tid] = in[blockIdx.x * blockDim.x + tid];\n    __syncthreads();\n    \
        for (unsigned int s = 1; s < blockDim.x; s *= 2) {\n        \
        int index = 2 * s * tid;\n        if (index < blockDim.x)\n            \
        sdata[index] += sdata[index + s];\n        __syncthreads();\n    }\n    \
        if (tid == 0)\n        out[blockIdx.x] = sdata[0];\n}\n";
    let host = |bytes: &str| {
        format!(
            "__global__ void reduceInterleaved(float *out, const float *in);\nint main()\n{{\n    \
             reduceInterleaved<<<64, 256, 256 * sizeof(float)>>>(nullptr, nullptr);\n    \
             reduceInterleaved<<<64, 256, {bytes}>>>(nullptr, nullptr);\n}}\n"
        )
    };
    std::fs::write(dir.path().join("kernels.cu"), kernels).expect("written");
    std::fs::write(dir.path().join("main.cu"), host("1024")).expect("written");
    let shown = dir.path().to_string_lossy().into_owned();
    let check = bankwise(&["check", &shown]);
    assert!(
        stdout(&check).contains(
            "kernels.cu:3:29: note: `sdata` in `reduceInterleaved` has 256 elements: the 1024 \
             bytes of dynamic shared memory that every launch of `reduceInterleaved` passes ("
        ),
        "{}",
        stdout(&check)
    );
    assert!(stdout(&check).contains("main.cu:4, "), "{}", stdout(&check));
    assert!(stdout(&check).contains("8-way bank conflict reading `sdata`"));
    let fixed = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(
        stderr(&fixed).contains("`sdata` in `reduceInterleaved`: 105 -> 0 excess wavefronts"),
        "{}",
        stderr(&fixed)
    );
    assert!(
        stdout(&fixed).contains("%%dynamic_smem_size"),
        "{}",
        stdout(&fixed)
    );
    // Launches that disagree leave the extent unknown, and the array alone.
    std::fs::write(dir.path().join("main.cu"), host("2048")).expect("written");
    let fixed = bankwise(&["fix", "--diff", &shown]);
    assert!(stdout(&fixed).is_empty(), "{}", stdout(&fixed));
    assert!(
        stderr(&fixed)
            .contains("whose extent no launch bankwise sees gives (or its launches disagree)"),
        "{}",
        stderr(&fixed)
    );
}

/// The dimensions a swizzle in place reads, from its marker (`element [i][j] at [i][j ^ i]`):
/// those whose placeholder the changed subscript names; `None` when the marker says the
/// array also goes through a map function (proven on every extent).
fn swizzled_dims(output: &str, name: &str) -> Option<Vec<usize>> {
    let marker = format!("// bankwise: `{name}` is stored swizzled: element ");
    let line = output
        .lines()
        .find_map(|l| l.trim().strip_prefix(&marker))?;
    if line.contains("through pointers") {
        return None;
    }
    let stored = line.split_once(" at ").expect("the stored subscripts").1;
    let changed = stored
        .split('[')
        .skip(1)
        .map(|s| s.trim_end_matches(']'))
        .find(|s| s.len() > 1)
        .expect("a changed subscript");
    Some(
        changed
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() == 1 && w.as_bytes()[0].is_ascii_lowercase())
            .map(|w| usize::from(w.as_bytes()[0] - b'i'))
            .collect(),
    )
}

/// The extents `check` gives array `name` declared on `line` of `path`.
fn dims_of(path: &str, name: &str, line: usize) -> Vec<u64> {
    let check = bankwise(&["check", "--format", "json", path]);
    let json: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON");
    let kernels = json["files"][0]["kernels"].as_array().expect("kernels");
    let array = kernels
        .iter()
        .flat_map(|k| k["arrays"].as_array().expect("arrays"))
        .find(|a| a["name"] == name && a["line"] == line as u64)
        .expect("the array");
    let dims = array["dims"].as_array().expect("dims");
    dims.iter().map(|d| d.as_u64().unwrap_or(0)).collect()
}

/// Whether the map function of `name` is written in the declaration's names: it names an
/// extent as written, and no named extent's value (nor a product of the innermost ones)
/// appears in it as a number.
fn written_in_names(output: &str, name: &str, extents: &[String], dims: &[u64]) -> bool {
    let comment = format!("// bankwise map for `{name}` in ");
    let mut lines = output.lines();
    let Some(definition) = lines
        .by_ref()
        .find(|l| l.starts_with(&comment))
        .and_then(|_| lines.next())
    else {
        return false;
    };
    let named: Vec<usize> = (0..extents.len())
        .filter(|&d| extents[d].contains(|c: char| c.is_alphabetic() || c == '_'))
        .collect();
    let numbers: Vec<u64> = definition
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let values: Vec<u64> = named
        .iter()
        .flat_map(|&d| [dims[d], dims[d..].iter().product()])
        .collect();
    named
        .iter()
        .any(|&d| definition.contains(extents[d].as_str()))
        && !numbers.iter().any(|n| values.contains(n))
}

/// Issue 20: every extent a rewrite's map was derived from is either kept as written (padding,
/// a struct of arrays, a map function in the declaration's names) or checked by a guard in the
/// output: a `static_assert` naming the extent as written, or, for an `extern` array, the
/// trap on the dynamic shared memory.
#[test]
fn every_value_a_rewrite_rests_on_is_kept_symbolic_or_guarded() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (mut guarded, mut symbolic) = (0, 0);
    for path in testdata_files() {
        let shown = path.to_string_lossy().into_owned();
        let out = dir.path().join(format!("{}.cu", snapshot_name(&path)));
        let out_text = out.to_string_lossy().into_owned();
        let json = bankwise(&[
            "fix",
            "--unsafe-fixes",
            "--format",
            "json",
            &shown,
            "-o",
            &out_text,
        ]);
        assert_eq!(json.status.code(), Some(0), "{shown}: {}", stderr(&json));
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
        let original = std::fs::read_to_string(&path).expect("readable");
        let Ok(output) = std::fs::read_to_string(&out) else {
            continue;
        };
        for array in json["files"][0]["arrays"].as_array().expect("arrays") {
            if array["action"] != "rewritten" {
                continue;
            }
            let name = array["name"].as_str().expect("a name");
            let form = array["form"].as_str().expect("a form");
            let line = array["line"].as_u64().expect("a line") as usize;
            let extents = declared_extents(&original, line, name);
            let proven: Option<Vec<usize>> = match form {
                "padded-declaration" | "struct-of-arrays" => {
                    for extent in &extents {
                        assert!(
                            output.contains(extent.as_str()),
                            "{shown} `{name}`: {extent}"
                        );
                    }
                    Some(Vec::new())
                }
                "swizzle-in-place" => swizzled_dims(&output, name),
                _ if written_in_names(&output, name, &extents, &dims_of(&shown, name, line)) => {
                    symbolic += 1;
                    Some(Vec::new())
                }
                _ => None,
            };
            for (d, extent) in extents.iter().enumerate() {
                if proven.as_ref().is_some_and(|dims| !dims.contains(&d)) {
                    continue;
                }
                let guard = if extent.is_empty() {
                    "%%dynamic_smem_size".to_string()
                } else if extent.contains(|c: char| c.is_alphabetic() || c == '_') {
                    let operand = if extent.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        extent.clone()
                    } else {
                        format!("({extent})")
                    };
                    format!("{operand} == ")
                } else {
                    continue;
                };
                let found = output
                    .lines()
                    .any(|l| l.contains(&guard) && l.contains("bankwise: the map of"));
                assert!(
                    found || (extent.is_empty() && output.contains(&guard)),
                    "{shown}: `{name}` rests on extent {d} (`{extent}`) without a guard"
                );
                guarded += 1;
            }
        }
    }
    assert_eq!(
        (guarded, symbolic),
        (31, 2),
        "the extents guarded, the maps in names"
    );
}

/// Old headers carry a Latin-1 `©` in a comment: the file is read, fixed, and written with
/// that byte as it was; a byte that is not UTF-8 in code is still an error.
#[test]
fn a_latin1_byte_in_a_comment_is_read_and_kept() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("old.cu");
    let mut original = b"// (c) 1998 Caf\xe9 Labs \xa9\n".to_vec();
    original.extend_from_slice(&std::fs::read("testdata/transpose.cu").expect("testdata"));
    std::fs::write(&path, &original).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let check = bankwise(&["check", &shown]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(
        stdout(&check).contains(":39:39: warning: 32-way bank conflict"),
        "{}",
        stdout(&check)
    );
    let diff = bankwise(&["fix", "--diff", &shown]);
    assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
    let fixed = bankwise(&["fix", "--in-place", &shown]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    let after = std::fs::read(&path).expect("readable");
    assert!(after.starts_with(b"// (c) 1998 Caf\xe9 Labs \xa9\n"));
    assert!(String::from_utf8_lossy(&after).contains("(threadIdx.y + j) ^ threadIdx.x"));
    // Fixed once, nothing more to do.
    assert!(bankwise(&["fix", "--diff", &shown]).stdout.is_empty());
    // Columns count the file's bytes: a foreign byte before an access on its line is one.
    let inline = dir.path().join("inline.cu");
    std::fs::write(
        &inline,
        b"// bankwise: block=32x32\n__global__ void k(float *o)\n{\n    \
          __shared__ float t[32][32];\n    t[threadIdx.y][threadIdx.x] = 1.0f;\n    \
          /* \xa9\xa9 */ o[0] = t[threadIdx.x][threadIdx.y];\n}\n",
    )
    .expect("written");
    let check = bankwise(&["check", &inline.to_string_lossy()]);
    assert!(
        stdout(&check).contains(":6:21: warning: 32-way bank conflict reading `t`"),
        "{}",
        stdout(&check)
    );
}

/// Never wrong in another configuration (issue 33): each of these kernels would be fixed but
/// for one use the rewrite could not follow, so `fix` leaves the tile as written and says
/// why.
#[test]
fn uses_another_configuration_or_a_constructor_sees_leave_the_array_alone() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernel = |use_it: &str| {
        format!(
            "struct Ref {{ float &v; __device__ Ref(float &x) : v(x) {{}} }};\n\
             __global__ void k(float *o, float s)\n{{\n    __shared__ float tile[32][32];\n    \
             for (int j = 0; j < 32; j += 8)\n        tile[threadIdx.y + j][threadIdx.x] = o[j];\n    \
             __syncthreads();\n    for (int j = 0; j < 32; j += 8) {{\n{use_it}\n    }}\n}}\n\
             void launch(float *o) {{ k<<<1, dim3(32, 8)>>>(o, 2.0f); }}\n"
        )
    };
    let cases = [
        (
            "#ifdef SCALE_INPUT\n        o[j] = s * tile[threadIdx.x][threadIdx.y + j];\n#else\n        \
             o[j] = tile[threadIdx.x][threadIdx.y + j];\n#endif",
            "named at line 10 under `#ifdef SCALE_INPUT`, a branch this configuration leaves out",
        ),
        (
            "        Ref r(tile[threadIdx.x][threadIdx.y + j]);\n        \
             o[j] = r.v + tile[threadIdx.x][threadIdx.y + j];",
            "an element passed to the constructor of `r` at line 9",
        ),
        (
            "        o[j] = tile[threadIdx.x][threadIdx.y + j] * sizeof(tile[0]);",
            "its size or type is read at line 9 (`sizeof(tile[0])`)",
        ),
    ];
    for (n, (use_it, why)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("k{n}.cu"));
        let text = kernel(use_it);
        std::fs::write(&path, &text).expect("written");
        let path = path.to_str().expect("a UTF-8 path");
        let output = bankwise(&["fix", path]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output), text);
        let note = stderr(&output);
        assert!(
            note.contains("`tile` in `k` left alone with 992 excess wavefronts: it escapes: ")
                && note.contains(why),
            "{note}"
        );
    }
}

/// A new file written by `-o` or `explain --svg` gets what the umask leaves of 0666, as a
/// shell's `>` gives it; `-o` over a file keeps its mode (issue 37).
#[test]
fn new_output_files_respect_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let bin = env!("CARGO_BIN_EXE_bankwise");
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("written")
            .permissions()
            .mode()
            & 0o777
    };
    let run = |umask: &str, args: &str| {
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" {args}"))
            .arg(bin)
            .current_dir(dir.path())
            .output()
            .expect("sh runs")
            .status;
        assert!(status.success(), "{args}");
    };
    let transpose = std::path::absolute("testdata/transpose.cu").expect("absolute");
    let transpose = transpose.display();
    run("022", &format!("fix {transpose} -o new.cu"));
    assert_eq!(mode(&dir.path().join("new.cu")), 0o644);
    run(
        "027",
        &format!("explain {transpose} --line 38 --svg map.svg"),
    );
    assert_eq!(mode(&dir.path().join("map.svg")), 0o640);
    let existing = dir.path().join("existing.cu");
    std::fs::write(&existing, "old").expect("written");
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o664)).expect("chmod");
    run("077", &format!("fix {transpose} -o existing.cu"));
    assert_eq!(mode(&existing), 0o664);
}
