//! `bankwise.toml` as a user writes it: every key, the nearest file, and the command line
//! over the file over the defaults.
// Each test binary uses a part of the shared helpers.
#[allow(dead_code)]
mod common;
use common::{bankwise, stderr, stdout};
use std::path::{Path, PathBuf};

/// A repository (it holds `.git`, so the search stops there) with testdata/transpose.cu at
/// `kernels/transpose.cu`, and the `bankwise.toml` given at its top.
fn project(config: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temporary directory");
    std::fs::create_dir(root.path().join(".git")).expect(".git");
    std::fs::create_dir(root.path().join("kernels")).expect("kernels/");
    let kernel = root.path().join("kernels/transpose.cu");
    std::fs::copy("testdata/transpose.cu", &kernel).expect("copy of transpose.cu");
    std::fs::write(root.path().join("bankwise.toml"), config).expect("bankwise.toml");
    (root, kernel)
}

/// `check --format json`: (total excess wavefronts, the tile's extents).
fn checked(kernel: &Path, flags: &[&str]) -> (u64, serde_json::Value) {
    let path = kernel.to_string_lossy();
    let output = bankwise(&[&["check", "--format", "json", &path], flags].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let excess = json["totals"]["excess_wavefronts"]
        .as_u64()
        .expect("a total");
    (
        excess,
        json["files"][0]["kernels"][0]["arrays"][0]["dims"].clone(),
    )
}

fn fixed_declaration(kernel: &Path, flags: &[&str]) -> String {
    let path = kernel.to_string_lossy();
    let output = bankwise(&[&["fix", &path], flags].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .find(|l| l.trim_start().starts_with("__shared__"))
        .expect("the declaration")
        .trim()
        .to_string()
}

#[test]
fn bank_keys_apply_beneath_the_command_line() {
    let (_root, kernel) = project("");
    assert_eq!(checked(&kernel, &[]).0, 992);
    let (_root, kernel) = project("[bank]\nbanks = 16\n");
    assert_eq!(checked(&kernel, &[]).0, 960);
    assert_eq!(checked(&kernel, &["--banks", "32"]).0, 992);
    let (_root, kernel) = project("[bank]\nbank_width = 8\n");
    assert_eq!(checked(&kernel, &[]).0, 480);
    assert_eq!(checked(&kernel, &["--bank-width", "4"]).0, 992);
}

#[test]
fn defines_apply_beneath_dash_d() {
    let (_root, kernel) = project("defines = [\"TILE_DIM=16\"]\n");
    assert_eq!(checked(&kernel, &[]), (56, serde_json::json!([16, 16])));
    assert_eq!(
        checked(&kernel, &["-D", "TILE_DIM=32"]),
        (992, serde_json::json!([32, 32]))
    );
}

#[test]
fn block_shapes_come_from_the_nearest_file() {
    // The launch site says 32x8; the file overrides it, --block overrides the file.
    let (root, kernel) = project("[block]\ntransposeCoalesced = [32, 32]\n");
    let path = kernel.to_string_lossy().into_owned();
    let block = |flags: &[&str]| {
        let output = bankwise(&[&["check", "--format", "json", &path], flags].concat());
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        json["files"][0]["kernels"][0]["block"].clone()
    };
    assert_eq!(block(&[]), serde_json::json!([32, 32, 1]));
    assert_eq!(
        block(&["--block", "transposeCoalesced=16x16"]),
        serde_json::json!([16, 16, 1])
    );
    // A nearer file replaces the one above it whole.
    std::fs::write(
        root.path().join("kernels/bankwise.toml"),
        "[bank]\nbanks = 32\n",
    )
    .expect("nearer bankwise.toml");
    assert_eq!(block(&[]), serde_json::json!([32, 8, 1]));
}

#[test]
fn fix_keys_apply_beneath_the_command_line() {
    let plain = "__shared__ float tile[TILE_DIM][TILE_DIM];";
    let padded = "__shared__ float tile[TILE_DIM][TILE_DIM + 1];";
    let (_root, kernel) = project("[fix]\nstrategy = \"padding\"\n");
    // Within the default budget (the bytes that keep the kernel's occupancy) padding is safe;
    // beyond a budget given, unsafe, so applied only on request.
    assert_eq!(fixed_declaration(&kernel, &[]), padded);
    assert_eq!(
        fixed_declaration(&kernel, &["--smem-budget", "4096"]),
        plain
    );
    assert_eq!(
        fixed_declaration(&kernel, &["--smem-budget", "4096", "--unsafe-fixes"]),
        padded
    );
    assert_eq!(
        fixed_declaration(&kernel, &["--smem-budget", "8192"]),
        padded
    );
    // `--strategy auto` on the command line wins over the file's padding: a swizzle.
    let auto = bankwise(&[
        "fix",
        "--diff",
        "--strategy",
        "auto",
        "--unsafe-fixes",
        &kernel.to_string_lossy(),
    ]);
    assert!(stdout(&auto).contains("[threadIdx.x ^ (threadIdx.y + j)]"));
    let (_root, kernel) =
        project("[fix]\nstrategy = \"padding\"\nsmem_budget = 8192\nunsafe_fixes = false\n");
    assert_eq!(fixed_declaration(&kernel, &[]), padded);
    assert_eq!(
        fixed_declaration(&kernel, &["--smem-budget", "4096"]),
        plain
    );
    let (_root, kernel) = project("[fix]\nstrategy = \"padding\"\nunsafe_fixes = true\n");
    assert_eq!(fixed_declaration(&kernel, &[]), padded);
}

#[test]
fn unknown_keys_and_bad_values_exit_2_naming_the_file_and_key() {
    for (config, expected) in [
        (
            "[bank]\nbank = 16\n",
            "bankwise.toml:2: unknown field `bank`",
        ),
        ("[banks]\n", "bankwise.toml:1: unknown field `banks`"),
        (
            "[fix]\nstrategy = \"fastest\"\n",
            "[fix] strategy = \"fastest\"",
        ),
        (
            "[bank]\nbanks = 64\n",
            "[bank] banks = 64: must be 16 or 32",
        ),
        (
            "[fix]\nsmem_budget = -1\n",
            "bankwise.toml:2: invalid value",
        ),
    ] {
        let (_root, kernel) = project(config);
        for command in ["check", "fix"] {
            let output = bankwise(&[command, &kernel.to_string_lossy()]);
            assert_eq!(output.status.code(), Some(2), "{config}");
            assert!(
                stderr(&output).contains(expected),
                "{config}: {}",
                stderr(&output)
            );
        }
    }
}

/// A broken `bankwise.toml` is one error, however many files it covers (issue 37).
#[test]
fn a_config_error_is_said_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("bankwise.toml"), "[block]\nk = \"bad\"\n").expect("written");
    for name in ["a.cu", "b.cu", "c.cu"] {
        std::fs::copy("testdata/transpose.cu", dir.path().join(name)).expect("copied");
    }
    let root = dir.path().to_str().expect("a UTF-8 path");
    for command in [&["check", root][..], &["fix", "--diff", root]] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(command)
            .output()
            .expect("bankwise runs");
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.matches("bankwise: error: ").count(),
            1,
            "{command:?}: {stderr}"
        );
        assert!(
            stderr.contains("`bad` is not a positive integer"),
            "{stderr}"
        );
    }
}

/// `include_dirs` are searched after `-I`, relative to the `bankwise.toml` (issue 37).
#[test]
fn include_dirs_find_headers_relative_to_the_file() {
    let (root, _) = project("include_dirs = [\"vendor/headers\"]\n");
    std::fs::create_dir_all(root.path().join("vendor/headers")).expect("a directory");
    std::fs::write(
        root.path().join("vendor/headers/tiledim.h"),
        "#define TILE_DIM 32\n#define BLOCK_ROWS 8\n",
    )
    .expect("written");
    let kernel = root.path().join("kernels/tiled.cu");
    let original = std::fs::read_to_string("testdata/transpose.cu").expect("the example");
    let without_defines: String = original
        .lines()
        .filter(|l| !l.starts_with("#define TILE_DIM") && !l.starts_with("#define BLOCK_ROWS"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(
        &kernel,
        format!("#include \"tiledim.h\"\n{without_defines}"),
    )
    .expect("written");
    let (excess, dims) = checked(&kernel, &[]);
    assert_eq!((excess, dims), (992, serde_json::json!([32, 32])));
    let output = bankwise(&["check", "--show-settings", &kernel.to_string_lossy()]);
    assert!(
        stdout(&output).contains("vendor/headers"),
        "{}",
        stdout(&output)
    );
}

/// `bankwise --help` says where settings live (issue 37).
#[test]
fn the_top_level_help_names_bankwise_toml() {
    let output = bankwise(&["--help"]);
    assert!(stdout(&output).contains("live in the nearest bankwise.toml"));
}

/// `[lint]`: `select` and `ignore` for the files beneath, `per-file-ignores` by glob; the
/// command line's `--select` wins over the file's `select` and `ignore`, not over
/// `per-file-ignores` (issue 37).
#[test]
fn lint_tables_select_and_ignore_rules_per_file() {
    let (root, kernel) = project(
        "[lint]\nignore = [\"BW001\"]\n\n[lint.per-file-ignores]\n\"legacy/**\" = [\"ALL\"]\n",
    );
    std::fs::create_dir_all(root.path().join("legacy/old")).expect("a directory");
    let legacy = root.path().join("legacy/old/transpose.cu");
    std::fs::copy("testdata/transpose.cu", &legacy).expect("copied");
    let rules = |path: &Path, flags: &[&str]| -> Vec<String> {
        let path = path.to_string_lossy();
        let output = bankwise(&[&["check", "-q", &path], flags].concat());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .filter_map(|l| {
                l.rsplit_once(" [")
                    .map(|(_, r)| r.trim_end_matches(']').to_string())
            })
            .collect()
    };
    // transpose.cu's one finding is a BW001 load conflict.
    assert_eq!(rules(Path::new("testdata/transpose.cu"), &[]), ["BW001"]);
    assert!(rules(&kernel, &[]).is_empty());
    assert_eq!(rules(&kernel, &["--select", "BW001"]), ["BW001"]);
    assert!(rules(&legacy, &["--select", "BW001"]).is_empty());
    // A rule the file names that no rule matches is an error naming it.
    let (_bad, kernel) = project("[lint]\nselect = [\"BW9\"]\n");
    let output = bankwise(&["check", &kernel.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("[lint] select"),
        "{}",
        stderr(&output)
    );
}
