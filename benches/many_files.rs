//! `bankwise check` over a tree of many small files, run as a user runs it (the release
//! binary), with its wall time and peak resident memory (what `/usr/bin/time -v` calls the
//! maximum resident set size).
//!
//! `cargo bench --bench many_files` runs two trees (issue 33):
//! - 50,000 files of one small kernel each: the run used to overflow a thread's stack
//!   (item 13); it must finish with every file reported.
//! - 3,500 files that all include one 100 KB header: memory grew by 0.67 MB a file, to
//!   2.36 GB (item 14); the goal is at most 500 MB.
//!
//! `BENCH_FILES` and `BENCH_HEADER_KB` run one tree of that many files (a header of that
//! size, 0 for none) instead; `BENCH_JOBS` is passed as `--jobs`.
use std::io::Write;
use std::path::Path;
use std::time::Instant;

fn main() {
    let jobs = std::env::var("BENCH_JOBS").ok();
    let custom = std::env::var("BENCH_FILES")
        .ok()
        .and_then(|n| n.parse::<usize>().ok());
    let runs = match custom {
        Some(files) => {
            let header_kb = std::env::var("BENCH_HEADER_KB")
                .ok()
                .and_then(|kb| kb.parse().ok())
                .unwrap_or(0);
            vec![(files, header_kb)]
        }
        None => vec![(50_000, 0), (3_500, 100)],
    };
    for (files, header_kb) in runs {
        run(files, header_kb, jobs.as_deref());
    }
}

/// Generates the tree and checks it.
fn run(files: usize, header_kb: usize, jobs: Option<&str>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    generate(dir.path(), files, header_kb);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"));
    command.args(["check", "--quiet"]);
    if let Some(jobs) = jobs {
        command.args(["--jobs", jobs]);
    }
    command.arg(dir.path());
    // The report to a file, so that the child can be waited for with its own figures.
    let report = dir.path().join("report.txt");
    command.stdout(std::fs::File::create(&report).expect("made"));
    let start = Instant::now();
    let child = command.spawn().expect("bankwise runs");
    let (status, peak) = wait_with_peak(child);
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(status, 0, "bankwise check failed");
    let stdout = std::fs::read(&report).expect("the report");
    let reported = stdout
        .split(|&b| b == b'\n')
        .filter(|line| line.windows(5).any(|w| w == b"2-way"))
        .count();
    assert_eq!(reported, files, "one conflict reported per file");
    let peak = peak.map_or("?".into(), |mb| format!("{mb:.0}"));
    println!(
        "many_files: {files} files{}: {seconds:.1} s, {:.2} ms a file, peak resident memory \
         {peak} MB",
        if header_kb > 0 {
            format!(" including one {header_kb} KB header")
        } else {
            String::new()
        },
        seconds * 1000.0 / files as f64,
    );
}

/// `files` files of one kernel each, 1,000 to a directory, all including `common.cuh` of
/// about `header_kb` KB when that is not 0.
fn generate(root: &Path, files: usize, header_kb: usize) {
    let include = if header_kb > 0 {
        std::fs::write(root.join("common.cuh"), header(header_kb * 1000)).expect("written");
        "#include \"../common.cuh\"\n"
    } else {
        ""
    };
    for i in 0..files {
        let dir = root.join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir(&dir).expect("made");
        }
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("k{i}.cu"))).expect("made"),
        );
        write!(
            file,
            "{include}// bankwise: block=32\n__global__ void kernel{i}(float *out)\n{{\n    \
             __shared__ float s[64];\n    s[threadIdx.x * 2] = 1.0f;\n    __syncthreads();\n    \
             out[threadIdx.x] = s[threadIdx.x];\n}}\n"
        )
        .expect("written");
    }
}

/// A header of about `bytes` bytes of what headers hold: macros, constants, structs and
/// inline device functions.
fn header(bytes: usize) -> String {
    let mut text = String::from("#pragma once\n");
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!(
            "#define TILE_{i} ({} + 1)\nconstexpr int kValue{i} = {i} * 2;\nstruct Pair{i} {{ \
             float a; int b[{}]; }};\n__device__ inline int helper{i}(int x) {{ return x * {i} \
             + TILE_{i}; }}\n",
            i % 64,
            i % 8 + 1
        ));
        i += 1;
    }
    text
}

/// Waits for `child`: its exit status (-1 for a signal), and its own peak resident memory in
/// MB (`ru_maxrss` from wait4, the figure `/usr/bin/time -v` prints).
fn wait_with_peak(child: std::process::Child) -> (i32, Option<f64>) {
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: the child is ours and not yet waited for; `status` and `usage` are live.
    let waited = unsafe {
        libc::wait4(
            child.id() as libc::pid_t,
            &mut status,
            0,
            usage.as_mut_ptr(),
        )
    };
    assert!(waited > 0, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // SAFETY: filled by the successful wait4.
    let peak = unsafe { usage.assume_init() }.ru_maxrss as f64 / 1024.0;
    (code, Some(peak))
}
