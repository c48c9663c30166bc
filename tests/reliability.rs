//! Issue 18: hostile and careless input, as reproduced by its author. Every case runs the
//! binary as a user would and must end with a clear exit status (0, 1 or 2), no crash, no
//! "internal error" for the user's own mistake, and nothing lost.
#[allow(dead_code)]
mod common;
use common::{bankwise, stderr, stdout};
use std::path::{Path, PathBuf};

/// `kernel`'s text in a fresh file `name` of `dir`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("written");
    path
}

/// A kernel of 32 threads around `body`, with `before` above it.
fn kernel(before: &str, body: &str) -> String {
    format!(
        "{before}\n// bankwise: block=32\n__global__ void k(float *o)\n{{\n    \
         __shared__ float s[64];\n{body}\n    o[0] = s[0];\n}}\n"
    )
}

/// `check` and `fix` on `text`: both must finish with status 0, print no panic and no
/// internal error. Returns `check`'s stdout.
fn survives(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), name, text);
    let shown = path.to_string_lossy().into_owned();
    let check = bankwise(&["check", &shown]);
    assert!(
        matches!(check.status.code(), Some(0 | 1)),
        "{name}: check {:?}: {}",
        check.status,
        stderr(&check)
    );
    let out = dir.path().join("out.cu").to_string_lossy().into_owned();
    let fix = bankwise(&["fix", &shown, "-o", &out]);
    assert_eq!(fix.status.code(), Some(0), "{name}: fix: {}", stderr(&fix));
    for output in [&check, &fix] {
        let said = stderr(output);
        assert!(!said.contains("internal error"), "{name}: {said}");
        assert!(!said.contains("panicked"), "{name}: {said}");
    }
    stdout(&check)
}

#[test]
fn a_self_referential_macro_expands_once_as_in_c() {
    let out = survives(
        "self.cu",
        &kernel("#define A A", "    int a = A;\n    s[threadIdx.x] = a;"),
    );
    assert!(out.contains("store `s[threadIdx.x]`"), "{out}");
    let out = survives(
        "mutual.cu",
        &kernel(
            "#define B C\n#define C B",
            "    int a = B;\n    s[threadIdx.x + a] = 1;",
        ),
    );
    assert!(out.contains("(index is unknown value `B`)"), "{out}");
    let out = survives(
        "function_like.cu",
        &kernel("#define F(x) F(x)", "    s[F(threadIdx.x)] = 1;"),
    );
    assert!(out.contains("not simulated"), "{out}");
}

#[test]
fn a_macro_chain_thousands_deep_is_a_reason_not_a_crash() {
    let mut defines = String::from("#define M3000 0\n");
    for i in (0..3000).rev() {
        defines.push_str(&format!("#define M{i} (M{} + 0)\n", i + 1));
    }
    let out = survives(
        "chain.cu",
        &kernel(&defines, "    s[threadIdx.x + M0] = 1;"),
    );
    assert!(
        out.contains("expands macros nested more than 200 deep, more than the analysis follows"),
        "{out}"
    );
}

#[test]
fn ten_thousand_increments_stay_one_value() {
    let body = format!(
        "    int v = threadIdx.x;\n{}    s[v % 64] = 1;",
        "    v = v + 1;\n".repeat(10_000)
    );
    let out = survives("increments.cu", &kernel("", &body));
    assert!(out.contains("store `s[v % 64]`"), "{out}");
    assert!(!out.contains("not simulated"), "{out}");
}

#[test]
fn a_value_that_doubles_with_each_assignment_is_bounded() {
    for steps in [25, 30, 200] {
        let body = format!(
            "    int v = threadIdx.x;\n{}    s[v & 63] = 1;",
            "    v = (v * 3) ^ (v >> 1);\n".repeat(steps)
        );
        let out = survives("doubling.cu", &kernel("", &body));
        assert!(
            out.contains("not simulated (index is a value of more than 16384 operations"),
            "{out}"
        );
    }
}

#[test]
fn an_alignment_of_two_gibibytes_is_a_warning_not_an_allocation() {
    let text = "struct __align__(0x80000000) V { float d; };\n// bankwise: block=32\n\
                __global__ void k(float *o)\n{\n    __shared__ V s[128];\n    \
                V v = s[threadIdx.x];\n    s[threadIdx.x] = v;\n    o[0] = v.d;\n}\n";
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "align.cu", text);
    let check = bankwise(&["check", &path.to_string_lossy()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(stdout(&check).contains(
        "warning: `s` takes 274877906944 bytes (128 elements of 2147483648 bytes), more than \
         the 227 KiB of shared memory a block can have on any GPU: not simulated"
    ));
    survives("align.cu", text);
}

#[test]
fn extents_whose_product_passes_two_to_the_64_are_a_warning() {
    let text = "// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
                __shared__ float t[0x100000000][0x100000000][4];\n    \
                t[0][0][threadIdx.x] = 1;\n    o[0] = t[0][0][0];\n}\n";
    let out = survives("overflow.cu", text);
    assert!(
        out.contains("warning: `t` takes more than 2^64 bytes (4294967296 x 4294967296 x 4"),
        "{out}"
    );
}

#[test]
fn an_index_out_of_bounds_is_the_users_bug_not_an_internal_error() {
    for (name, declaration, access) in [
        (
            "huge.cu",
            "float t[0x7fffffffffffffff][2]",
            "t[0x7fffffffffffffff][2]",
        ),
        ("past.cu", "float t[32][2]", "t[threadIdx.x + 8][1]"),
    ] {
        let text = format!(
            "// bankwise: block=32\n__global__ void k(float *o)\n{{\n    __shared__ \
             {declaration};\n    t[threadIdx.x][0] = 1;\n    o[0] = {access};\n    \
             o[1] = t[threadIdx.x][1];\n}}\n"
        );
        survives(name, &text);
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = "// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
                __shared__ float t[32][2];\n    t[threadIdx.x][0] = 1;\n    \
                o[0] = t[threadIdx.x + 8][1];\n    o[1] = t[threadIdx.x][1];\n}\n";
    let path = write(dir.path(), "past.cu", text);
    let fix = bankwise(&["fix", "--check", &path.to_string_lossy()]);
    assert!(
        stderr(&fix).contains(
            "left alone with 3 excess wavefronts: a site is not simulated: line 6: \
             `t[threadIdx.x + 8][1]` reaches element 65, outside the 64 elements of `t`"
        ),
        "{}",
        stderr(&fix)
    );
}

#[test]
fn ten_thousand_reads_in_one_expression() {
    let body = format!(
        "    int t = threadIdx.x;\n    s[t] = 1;\n    o[t] = {};",
        vec!["s[t]"; 10_000].join(" + ")
    );
    let out = survives("reads.cu", &kernel("", &body));
    assert_eq!(out.matches("load `s[t]`").count(), 10_000);
}
