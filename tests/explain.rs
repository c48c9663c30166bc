//! `bankwise explain` as a user runs it: the transpose example's 32-way read and its removal,
//! a double-precision column read served in two phases, the SVG (parsed: well-formed, one
//! rect per bank per wavefront), and the input errors.
#[allow(dead_code)]
mod common;
use common::{bankwise, snapshot_name, snapshot_settings, stderr, stdout, testdata_files};
use std::path::Path;

/// `explain__transpose.cu`, with a suffix for a second view of one file.
fn snapshot(file: &str, suffix: &str) -> String {
    format!("explain__{}{suffix}", snapshot_name(Path::new(file)))
}

#[test]
fn the_transpose_read_is_32_way_before_and_conflict_free_after() {
    let output = bankwise(&["explain", "testdata/transpose.cu", "--line", "38"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("degree 32: 32 wavefronts, ideal 1, excess 31"));
    assert!(text.contains("degree 1: 1 wavefront, ideal 1, excess 0"));
    assert!(text.contains("this access: 992 -> 0 excess wavefronts per block"));
    assert!(text.lines().all(|line| line.chars().count() <= 160));
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(snapshot("testdata/transpose.cu", ""), text));
}

#[test]
fn a_double_column_read_is_drawn_in_two_phases() {
    let output = bankwise(&["explain", "testdata/strided.cu", "--line", "39"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("degree 16: 32 wavefronts, ideal 2, excess 30"));
    assert!(text.contains("degree 1: 2 wavefronts, ideal 2, excess 0"));
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(snapshot("testdata/strided.cu", "_doubles"), text));
}

/// lavaMD's member read `home[t].x`, 4-way, reads the member array `home_x[t]` after the
/// struct-of-arrays rewrite; its whole-record store shows one member array's store.
#[test]
fn a_member_read_of_records_is_explained_through_its_member_array() {
    let read = bankwise(&[
        "explain",
        "testdata/suite/lavaMD.cu",
        "--line",
        "78",
        "--col",
        "35",
    ]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let text = stdout(&read);
    assert!(text.contains("fix: struct-of-arrays (members = [\"v\",\"x\",\"y\",\"z\"])"));
    assert!(text.contains("degree 4: 8 wavefronts, ideal 2, excess 6"));
    assert!(text.contains("this access: 1800 -> 0 excess wavefronts per block"));
    assert!(text.contains("after: tx0 tx1 tx2 tx3 in the bank bits; tx4 picks the phase"));
    let store = bankwise(&["explain", "testdata/suite/lavaMD.cu", "--line", "60"]);
    assert_eq!(store.status.code(), Some(0), "{}", stderr(&store));
    let text = stdout(&store);
    assert!(text.contains("the record is 4 accesses, one per member"));
    assert!(text.contains("degree 1: 8 wavefronts, ideal 8, excess 0"));
    assert!(text.contains("degree 1: 2 wavefronts, ideal 2, excess 0"));
}

#[test]
fn the_warp_and_iteration_can_be_chosen() {
    let output = bankwise(&[
        "explain",
        "testdata/transpose.cu",
        "--line",
        "38",
        "--warp",
        "3",
        "--iteration",
        "j=16",
        "--banks",
        "16",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    // Warp 3 is ty = 3; at j = 16 every lane reads bank (3 + 16) mod 16 = 3, in two phases.
    assert!(text.contains("before: `tile` as declared; warp 3, j = 16"));
    assert!(text.contains("   1.1  .  .  .  0  ."));
    assert!(text.contains("degree 16: 32 wavefronts, ideal 2, excess 30"));
}

/// The bank maps of an SVG: per `g.bank-map`, its id, banks, rows and rects.
fn svg_maps(svg: &str) -> Vec<(String, usize, usize, usize)> {
    let document = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    root.descendants()
        .filter(|n| n.attribute("class") == Some("bank-map"))
        .map(|map| {
            let number = |name: &str| -> usize {
                map.attribute(name)
                    .and_then(|v| v.parse().ok())
                    .expect("banks and rows are numbers")
            };
            let rects = map
                .descendants()
                .filter(|n| n.tag_name().name() == "rect")
                .count();
            (
                map.attribute("id").unwrap_or_default().to_string(),
                number("data-banks"),
                number("data-rows"),
                rects,
            )
        })
        .collect()
}

#[test]
fn the_svg_has_one_rect_per_bank_per_wavefront() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("transpose.svg");
    let out_text = out.to_string_lossy().into_owned();
    let output = bankwise(&[
        "explain",
        "testdata/transpose.cu",
        "--line",
        "38",
        "--svg",
        &out_text,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let svg = std::fs::read_to_string(&out).expect("the SVG is written");
    let maps = svg_maps(&svg);
    assert_eq!(
        maps,
        vec![
            ("before".to_string(), 32, 32, 32 * 32),
            ("after".to_string(), 32, 1, 32),
        ]
    );
    // Lane numbers are written in the cells and the legend explains the colours.
    assert!(svg.contains(">31</text>"));
    assert!(svg.contains("class=\"legend\""));
    // Nothing but the SVG is left beside it.
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("listable").collect();
    assert_eq!(files.len(), 1);
}

/// `--svg -` writes the SVG to stdout, as `-o -` does for `fix`, and the text to stderr:
/// no file named `-`.
#[test]
fn svg_dash_is_stdout_not_a_file_named_dash() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .current_dir(dir.path())
        .args(["explain", "--line", "38", "--svg", "-"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/transpose.cu"))
        .output()
        .expect("bankwise runs");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let svg = String::from_utf8(output.stdout.clone()).expect("UTF-8");
    assert_eq!(svg_maps(&svg).len(), 2);
    assert!(stderr(&output).contains("32-way"), "{}", stderr(&output));
    assert!(!dir.path().join("-").exists());
}

#[test]
fn an_array_fix_leaves_alone_has_only_a_before_map() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = dir.path().join("pairs.svg");
    let out_text = out.to_string_lossy().into_owned();
    let output = bankwise(&[
        "explain",
        "testdata/vector_types.cu",
        "--line",
        "31",
        "--svg",
        &out_text,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("fix: leaves `s_f2` as it is: no map helps"));
    assert!(text.contains("after: none"));
    let svg = std::fs::read_to_string(&out).expect("the SVG is written");
    let maps = svg_maps(&svg);
    assert_eq!(maps.len(), 1);
    let (id, banks, rows, rects) = &maps[0];
    assert_eq!(id, "before");
    assert_eq!(rects, &(banks * rows));
}

fn fails_with(args: &[&str], message: &str) {
    let output = bankwise(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {}",
        stdout(&output)
    );
    let err = stderr(&output);
    assert!(err.contains(message), "{args:?}: {err}");
    assert!(stdout(&output).is_empty());
}

#[test]
fn input_errors_say_what_to_pass_instead() {
    fails_with(
        &["explain", "testdata/strided.cu", "--line", "20"],
        "no shared-memory access on line 20 (nearest: line 24)",
    );
    fails_with(
        &["explain", "testdata/strided.cu", "--line", "30"],
        "no shared-memory access on line 30 (nearest: lines 27 and 35)",
    );
    fails_with(
        &["explain", "testdata/strided.cu", "--line", "500"],
        "line 500 is out of range: the file has 56 lines",
    );
    fails_with(
        &["explain", "testdata/strided.cu", "--line", "0"],
        "line 0 is out of range",
    );
    fails_with(
        &["explain", "testdata/strided.cu", "--line", "27"],
        "line 27 has 2 accesses: col 43: load `s[2 * threadIdx.x]`, col 64: load `s[2 * threadIdx.x + 1]`; pass --col",
    );
    fails_with(
        &[
            "explain",
            "testdata/strided.cu",
            "--line",
            "27",
            "--col",
            "50",
        ],
        "no access starts at line 27, column 50",
    );
    fails_with(
        &[
            "explain",
            "testdata/transpose.cu",
            "--line",
            "38",
            "--warp",
            "8",
        ],
        "warp 8 does not exist: the block (32x8x1) has 8 warps (0-7)",
    );
    fails_with(
        &[
            "explain",
            "testdata/transpose.cu",
            "--line",
            "38",
            "--iteration",
            "j=9",
        ],
        "`j` takes 0, 8, 16, 24",
    );
    fails_with(
        &[
            "explain",
            "testdata/transpose.cu",
            "--line",
            "38",
            "--iteration",
            "k=0",
        ],
        "no loop `k` around the access; its loops: j",
    );
    fails_with(
        &[
            "explain",
            "testdata/transpose.cu",
            "--line",
            "38",
            "--iteration",
            "j",
        ],
        "write NAME=VALUE",
    );
    // No launch: explained under the assumed shape, which it names.
    let assumed = bankwise(&["explain", "testdata/template_unresolved.cu", "--line", "26"]);
    assert_eq!(assumed.status.code(), Some(0));
    assert!(stdout(&assumed).contains("block 256x1x1 (8 warps)"));
    assert!(stdout(&assumed)
        .contains("block assumed: one dimension, a common size; pass --block blockSum=XxYxZ"));
    fails_with(
        &["explain", "testdata/histogram.cu", "--line", "34"],
        "is not simulated: index is data-dependent",
    );
    fails_with(
        &["explain", "testdata/missing.cu", "--line", "1"],
        "testdata/missing.cu: no such file",
    );
}

#[test]
fn the_first_access_of_every_testdata_kernel_is_explained_or_refused_with_a_reason() {
    for path in testdata_files() {
        let path = path.to_string_lossy().into_owned();
        let check = bankwise(&["check", "--format", "json", &path]);
        let json: serde_json::Value =
            serde_json::from_slice(&check.stdout).expect("check prints JSON");
        let first = json["files"][0]["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|k| k["arrays"].as_array().into_iter().flatten())
            .flat_map(|a| a["accesses"].as_array().into_iter().flatten())
            .next();
        let Some(access) = first else { continue };
        let (line, col) = (access["line"].to_string(), access["col"].to_string());
        let output = bankwise(&["explain", &path, "--line", &line, "--col", &col]);
        match output.status.code() {
            Some(0) => {
                let text = stdout(&output);
                assert!(text.contains("degree "), "{path}:{line}: {text}");
                let widest = text.lines().map(|l| l.chars().count()).max();
                assert!(widest <= Some(160), "{path}:{line}: {widest:?} columns");
            }
            Some(2) => assert!(
                stderr(&output).contains("is not simulated"),
                "{path}:{line}: {}",
                stderr(&output)
            ),
            other => panic!("{path}:{line}: exit {other:?}: {}", stderr(&output)),
        }
    }
}

/// An access that some warps never execute: the default shows a warp that does, a warp asked
/// for that does not is said to be idle, and an access no thread executes says so.
#[test]
fn warps_without_an_active_lane_are_named_not_drawn_empty() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("half.cu");
    let write = |guard: &str| {
        std::fs::write(
            &path,
            format!(
                "__global__ void k(float *o) {{\n    __shared__ float s[64];\n    \
                 int t = threadIdx.x;\n    if ({guard}) s[t - 32] = 1.0f;\n    \
                 __syncthreads();\n    o[t] = s[t % 64];\n}}\n\
                 int main() {{ k<<<1, 64>>>(0); }}\n"
            ),
        )
        .expect("written");
    };
    let shown = |args: &[&str]| -> String {
        let mut all = vec!["explain", "--line", "4"];
        all.extend_from_slice(args);
        let path = path.to_string_lossy().into_owned();
        all.push(&path);
        let output = bankwise(&all);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let text = stdout(&output);
        text.lines()
            .find(|l| l.trim_start().starts_with("shown:"))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    write("t >= 32");
    assert_eq!(
        shown(&[]),
        "shown: warp 1 (the first warp that executes the access; each that does has 0 excess \
         wavefronts)"
    );
    assert_eq!(
        shown(&["--warp", "0"]),
        "shown: warp 0 (as asked; no lane of warp 0 executes this access, as its condition \
         holds for none of them: warp 1 does)"
    );
    write("t >= 640");
    assert_eq!(
        shown(&[]),
        "shown: warp 0 (no lane of any warp executes this access: its condition holds for no \
         thread of the 64x1x1 block, so there is no request to show)"
    );
}
