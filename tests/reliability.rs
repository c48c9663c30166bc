//! Issue 18: hostile and careless input, as reproduced by its author. Every case runs the
//! binary as a user would and must end with a clear exit status (0, 1 or 2), no crash, no
//! "internal error" for the user's own mistake, and nothing lost.
#[allow(dead_code)]
mod common;
use common::{bankwise, stderr, stdout};
use std::path::{Path, PathBuf};

/// `bankwise` run in `dir`, so that the paths it shows are relative to it.
fn bankwise_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the bankwise binary runs")
}

/// `kernel`'s text in a fresh file `name` of `dir`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("written");
    path
}

/// `fix` with `flags` on `text` in a fresh file `name`, written to another file: it must
/// finish with status 0. Returns what it said on stderr and the file it wrote.
fn fixed_into_file(name: &str, text: &str, flags: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), name, text);
    let out = dir.path().join("out.cu");
    let (path, out_shown) = (path.to_string_lossy(), out.to_string_lossy());
    let mut args = vec!["fix"];
    args.extend_from_slice(flags);
    args.extend([&*path, "-o", &*out_shown]);
    let fix = bankwise(&args);
    assert_eq!(fix.status.code(), Some(0), "{name}: {}", stderr(&fix));
    let written = std::fs::read_to_string(&out).expect("the fixed file");
    (stderr(&fix), written)
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
    let check = bankwise(&["check", "-v", &shown]);
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
    let check = bankwise(&["check", "-v", &path.to_string_lossy()]);
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
             subscript 1 of `t[threadIdx.x + 8][1]`, `(threadIdx.x + 8)`, reaches 39, outside \
             [0, 32)"
        ),
        "{}",
        stderr(&fix)
    );
}

/// Found by the fuzzer: a subscript past its own extent with the linear index inside the
/// array (`s[r][-4]`): a swizzle of one subscript is not the map of the linear index there.
#[test]
fn a_negative_subscript_inside_the_array_is_the_users_bug() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = "// bankwise: block=32x4\n__global__ void k(float *o)\n{\n    \
                __shared__ char s[32][64];\n    int ty = threadIdx.y;\n    \
                s[ty % 32][(20 - (ty << 3)) % 64] = 1;\n    o[0] = s[threadIdx.x][ty];\n}\n";
    let path = write(dir.path(), "negative.cu", text);
    let fix = bankwise(&["fix", "--check", &path.to_string_lossy()]);
    assert!(
        stderr(&fix).contains("subscript 2 of `s[ty % 32][(20 - (ty << 3)) % 64]`"),
        "{}",
        stderr(&fix)
    );
    assert!(
        stderr(&fix).contains("reaches -4, outside [0, 64)"),
        "{}",
        stderr(&fix)
    );
    survives("negative.cu", text);
}

#[test]
fn ten_thousand_reads_in_one_expression() {
    let body = format!(
        "    int t = threadIdx.x;\n    s[t] = 1;\n    o[t] = {};",
        vec!["s[t]"; 10_000].join(" + ")
    );
    let out = survives("reads.cu", &kernel("", &body));
    assert_eq!(out.matches("load `s[t]`").count(), 10_000);
    // The sum nests 10,000 deep: past the front end's bound, each read says so.
    let deep = "not simulated (it lies in an expression nested more than 200 levels deep, \
                which the analysis does not follow)";
    assert_eq!(out.matches(deep).count(), 9_801, "{out}");
}

const TRANSPOSE: &str = "testdata/transpose.cu";

/// A copy of the transpose example in `dir` as `name`.
fn transpose_copy(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::copy(TRANSPOSE, &path).expect("copied");
    path
}

/// Runs bankwise with `args`, killed after 10 s: a run that blocks fails instead of hanging
/// the suite.
fn bounded(args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("bankwise starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().expect("waitable").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("bankwise {args:?} blocked");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

#[test]
fn the_largest_file_size_limit_does_not_wrap_to_an_empty_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = transpose_copy(dir.path(), "a.cu");
    let shown = path.to_string_lossy().into_owned();
    let fix = bankwise(&[
        "fix",
        "--max-file-size",
        "18446744073709551615",
        &shown,
        "-o",
        &shown,
    ]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    let fixed = std::fs::read_to_string(&path).expect("readable");
    assert!(fixed.len() > std::fs::metadata(TRANSPOSE).expect("exists").len() as usize);
    assert!(fixed.contains("tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"));
}

#[test]
fn a_write_through_a_symlink_fixes_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let target = transpose_copy(dir.path(), "target.cu");
    let link = dir.path().join("link.cu");
    std::os::unix::fs::symlink("target.cu", &link).expect("linked");
    let fix = bankwise(&["fix", "--in-place", &link.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert!(std::fs::symlink_metadata(&link)
        .expect("exists")
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&target)
        .expect("readable")
        .contains("// bankwise: `tile` is stored swizzled"));
    // `-o` through a link writes its target too; a dangling link is refused.
    let other = dir.path().join("other.cu");
    std::fs::write(&other, "old").expect("written");
    let to_other = dir.path().join("to_other.cu");
    std::os::unix::fs::symlink(&other, &to_other).expect("linked");
    let fix = bankwise(&["fix", TRANSPOSE, "-o", &to_other.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert!(std::fs::read_to_string(&other)
        .expect("readable")
        .contains("bankwise"));
    let dangling = dir.path().join("dangling.cu");
    std::os::unix::fs::symlink("nowhere.cu", &dangling).expect("linked");
    let fix = bankwise(&["fix", TRANSPOSE, "-o", &dangling.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(2));
    assert!(stderr(&fix).contains("a symlink whose target cannot be reached"));
    assert!(!dir.path().join("nowhere.cu").exists());
}

#[test]
fn an_in_place_fix_of_a_tree_never_writes_through_a_link_that_leads_out_of_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (tree, outside) = (dir.path().join("tree"), dir.path().join("outside"));
    std::fs::create_dir(&tree).expect("made");
    std::fs::create_dir(&outside).expect("made");
    let own = transpose_copy(&tree, "a.cu");
    let vendor = transpose_copy(&outside, "vendor.cu");
    std::os::unix::fs::symlink("../outside/vendor.cu", tree.join("vendor.cu")).expect("linked");
    // A link to a file of the tree itself: that file is written once, and not refused as
    // changed by the first write.
    std::os::unix::fs::symlink("a.cu", tree.join("same.cu")).expect("linked");
    let fix = bankwise_in(dir.path(), &["fix", "--in-place", "tree"]);
    assert_eq!(fix.status.code(), Some(2), "{}", stderr(&fix));
    assert!(
        stderr(&fix).contains(
            "bankwise: error: tree/vendor.cu: a symlink to ../outside/vendor.cu, outside the \
             paths given; nothing written"
        ),
        "{}",
        stderr(&fix)
    );
    assert!(!stderr(&fix).contains("changed while"), "{}", stderr(&fix));
    let original = std::fs::read(TRANSPOSE).expect("readable");
    assert_eq!(std::fs::read(&vendor).expect("readable"), original);
    assert!(std::fs::read_to_string(&own)
        .expect("readable")
        .contains("// bankwise: `tile` is stored swizzled"));
    // Named on the command line, the link is the user's choice: its target is fixed.
    let fix = bankwise_in(dir.path(), &["fix", "--in-place", "tree/vendor.cu"]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert!(std::fs::read_to_string(&vendor)
        .expect("readable")
        .contains("// bankwise: `tile` is stored swizzled"));
    assert!(std::fs::symlink_metadata(tree.join("vendor.cu"))
        .expect("exists")
        .file_type()
        .is_symlink());
}

/// The value of the extended attribute `name` of `path`, `Err` with the OS error.
fn get_xattr(path: &Path, name: &str) -> std::io::Result<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL");
    let name = std::ffi::CString::new(name).expect("no NUL");
    let mut value = vec![0u8; 4096];
    // SAFETY: NUL-terminated strings and a live buffer of the length given.
    let got = unsafe {
        libc::getxattr(
            path.as_ptr(),
            name.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    if got < 0 {
        return Err(std::io::Error::last_os_error());
    }
    value.truncate(got as usize);
    Ok(value)
}

/// Sets the extended attribute `name` of `path` to `value`.
fn set_xattr(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL");
    let name = std::ffi::CString::new(name).expect("no NUL");
    // SAFETY: NUL-terminated strings and a live buffer of the length given.
    let set = unsafe {
        libc::setxattr(
            path.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if set != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A POSIX ACL as the kernel stores it in `system.posix_acl_access`: mode 0644 with `r` for
/// user 4242 besides.
fn acl_with_a_named_user() -> Vec<u8> {
    const UNDEFINED: u32 = u32::MAX;
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (0x01u16, 6u16, UNDEFINED), // the owner
        (0x02, 4, 4242),            // a named user
        (0x04, 4, UNDEFINED),       // the group
        (0x10, 4, UNDEFINED),       // the mask
        (0x20, 4, UNDEFINED),       // others
    ] {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    acl
}

#[test]
fn an_in_place_fix_keeps_extended_attributes_and_the_acl() {
    // The temporary directory's filesystem, else the target directory's, must have user
    // attributes; where neither has, there is nothing to keep.
    let dirs = [
        tempfile::tempdir(),
        tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")),
    ];
    let found = dirs.into_iter().flatten().find_map(|dir| {
        let path = transpose_copy(dir.path(), "a.cu");
        set_xattr(&path, "user.bankwise.test", b"kept")
            .ok()
            .map(|()| (dir, path))
    });
    let Some((_dir, path)) = found else {
        eprintln!("note: no filesystem here keeps user.* attributes; test skipped");
        return;
    };
    let acl = set_xattr(&path, "system.posix_acl_access", &acl_with_a_named_user())
        .and_then(|()| get_xattr(&path, "system.posix_acl_access"));
    if let Err(err) = &acl {
        eprintln!("note: no POSIX ACL here ({err}); only the user attribute is checked");
    }
    let fix = bankwise(&["fix", "--in-place", &path.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert!(std::fs::read_to_string(&path)
        .expect("readable")
        .contains("// bankwise: `tile` is stored swizzled"));
    assert_eq!(
        get_xattr(&path, "user.bankwise.test").expect("the attribute is kept"),
        b"kept"
    );
    if let Ok(acl) = acl {
        assert_eq!(
            get_xattr(&path, "system.posix_acl_access").expect("the ACL is kept"),
            acl
        );
    }
}

/// Issue 33 item 13: `check` over many small files ran each next file on the stack of one
/// waiting for its own analysis, and 50,000 overflowed it. That nesting is tested where it
/// happens (`cli::tests::a_file_never_starts_on_the_stack_of_a_file_under_way`), and `cargo
/// bench --bench many_files` runs the 50,000; here, a few thousand files, as many as a debug
/// build checks in seconds, come out complete and in order.
#[test]
fn thousands_of_small_files_are_checked_in_order_without_overflowing_a_stack() {
    const FILES: usize = 3000;
    let dir = tempfile::tempdir().expect("a temporary directory");
    for i in 0..FILES {
        let sub = dir.path().join(format!("d{}", i / 500));
        std::fs::create_dir_all(&sub).expect("made");
        write(
            &sub,
            &format!("k{i:04}.cu"),
            &kernel("", "    s[threadIdx.x * 2] = 1.0f;"),
        );
    }
    let check = bankwise(&["check", "--jobs", "4", &dir.path().to_string_lossy()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let out = stdout(&check);
    let conflicts: Vec<&str> = out.lines().filter(|l| l.contains("2-way")).collect();
    assert_eq!(conflicts.len(), FILES, "{out}");
    // In the order of the files, whichever thread finished first.
    let mut sorted = conflicts.clone();
    sorted.sort();
    assert_eq!(conflicts, sorted);
}

#[test]
fn fifos_and_devices_are_refused_as_inputs_and_outputs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fifo = dir.path().join("f.cu");
    mkfifo(&fifo);
    let check = bounded(&["check", &fifo.to_string_lossy()]);
    assert_eq!(check.status.code(), Some(2));
    assert!(stderr(&check).contains("a FIFO, not a regular file; nothing read"));
    // In a directory it is skipped, and the other files are checked.
    transpose_copy(dir.path(), "t.cu");
    let check = bounded(&["check", &dir.path().to_string_lossy()]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(stderr(&check).contains("f.cu: a FIFO, not a regular file; skipped"));
    assert!(stdout(&check).contains("t.cu:38:39: warning: 32-way bank conflict"));
    for output in [fifo.to_string_lossy().into_owned(), "/dev/null".to_string()] {
        let fix = bounded(&["fix", TRANSPOSE, "-o", &output]);
        assert_eq!(fix.status.code(), Some(2), "{output}");
        assert!(
            stderr(&fix).contains("not a regular file"),
            "{}",
            stderr(&fix)
        );
    }
}

#[test]
fn hard_links_are_refused_and_mode_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = transpose_copy(dir.path(), "a.cu");
    let second = dir.path().join("b.cu");
    std::fs::hard_link(&path, &second).expect("linked");
    let fix = bankwise(&["fix", "--in-place", &path.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(2));
    assert!(stderr(&fix).contains("the file has 2 hard links"));
    assert!(
        stderr(&fix).contains("would fix: `tile`"),
        "{}",
        stderr(&fix)
    );
    assert_eq!(
        std::fs::read(&path).expect("readable"),
        std::fs::read(TRANSPOSE).expect("readable")
    );
    std::fs::remove_file(&second).expect("removed");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("set");
    let fix = bankwise(&["fix", "--in-place", &path.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    let mode = std::fs::metadata(&path)
        .expect("exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn carriage_return_line_endings_are_an_error_not_one_comment() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = std::fs::read_to_string(TRANSPOSE)
        .expect("readable")
        .replace('\n', "\r");
    let path = write(dir.path(), "mac.cu", &text);
    let check = bankwise(&["check", "-v", &path.to_string_lossy()]);
    assert_eq!(check.status.code(), Some(2));
    assert!(stderr(&check).contains("lines end with a carriage return alone"));
}

#[test]
fn an_unwritable_stderr_does_not_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("out.cu");
    for (args, status) in [
        (vec!["fix", TRANSPOSE, "-o", &*out.to_string_lossy()], 0),
        (vec!["check", "no-such-file.cu"], 2),
    ] {
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(&args)
            .stderr(full.try_clone().expect("cloned"))
            .output()
            .expect("bankwise runs");
        assert_eq!(run.status.code(), Some(status), "{args:?}");
    }
}

/// Killed at random points of `fix --in-place`, bankwise leaves the file either as it was or
/// fixed, and no temporary file behind.
#[test]
fn sigterm_during_a_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A large file, so that the write and the fsync take a while.
    let original = std::fs::read_to_string(TRANSPOSE).expect("readable");
    let padding = "// padding line of a large file\n".repeat(200_000);
    let text = format!("{padding}{original}");
    let path = write(dir.path(), "big.cu", &text);
    let fixed = {
        let out = dir.path().join("fixed.cu").to_string_lossy().into_owned();
        let fix = bankwise(&["fix", &path.to_string_lossy(), "-o", &out]);
        assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
        std::fs::read_to_string(&out).expect("readable")
    };
    for delay_ms in (0..60).step_by(3) {
        std::fs::write(&path, &text).expect("reset");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(["fix", "--in-place", &path.to_string_lossy()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("bankwise starts");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
        let now = std::fs::read_to_string(&path).expect("readable");
        assert!(
            now == text || now == fixed,
            "after {delay_ms} ms: a partial file"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("listable")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".bankwise-"))
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "after {delay_ms} ms: {left:?}");
    }
}

/// Found by the fuzzer: a loop whose bound the analysis cannot evaluate gives its counter
/// values no check has seen; the array is left alone with the reason.
#[test]
fn a_subscript_under_an_unknown_loop_bound_is_not_rewritten() {
    let text = "// bankwise: block=128\n__global__ void k(const float *in, float *out)\n{\n    \
                __shared__ float v[128][4];\n    for (int c = 0; c < UNKNOWN_VEC; ++c)\n        \
                v[threadIdx.x][c] = in[c];\n    __syncthreads();\n    float acc = 0.0f;\n    \
                for (int c = 0; c < UNKNOWN_VEC; ++c)\n        acc *= v[threadIdx.x][c];\n    \
                out[0] = acc;\n}\n";
    survives("unknown_bound.cu", text);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "unknown_bound.cu", text);
    let fix = bankwise(&["fix", "--check", &path.to_string_lossy()]);
    assert!(
        stderr(&fix)
            .contains("the loop over `c` has bounds or a step the analysis cannot evaluate"),
        "{}",
        stderr(&fix)
    );
}

/// Found by the fuzzer: a shared array of a called function that hides the parameter the
/// caller's array is passed as is the callee's own, not the caller's.
#[test]
fn a_callees_shared_array_hides_the_parameter_of_its_name() {
    let text = "__device__ void sweep(float *h, float *o)\n{\n    h[threadIdx.x * 2] = 1;\n    \
                {\n        __shared__ float h[64];\n        h[threadIdx.x] = 2;\n        \
                o[0] = h[threadIdx.x];\n    }\n}\n\n// bankwise: block=32\n\
                __global__ void k(float *o)\n{\n    __shared__ float s[64];\n    \
                sweep(s, o);\n    o[1] = s[threadIdx.x * 2];\n}\n";
    let out = survives("shadow.cu", text);
    assert!(out.contains("2-way bank conflict"), "{out}");
}

/// Found by the fuzzer: code on the line of the body's `{` stays code after the guards that
/// `fix` inserts there (their `#endif` and trailing comments would swallow it).
#[test]
fn code_on_the_line_of_the_opening_brace_survives_the_guards() {
    let text = "// bankwise: block=32x8\n__global__ void t(float *o)\n{int k = 1;\n    \
                __shared__ float tile[32][32];\n    \
                tile[threadIdx.y][threadIdx.x] = k;\n    __syncthreads();\n    \
                o[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\n";
    survives("brace.cu", text);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "brace.cu", text);
    let fix = bankwise(&["fix", &path.to_string_lossy()]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    let out = stdout(&fix);
    assert!(out.contains("#endif\n    int k = 1;\n"), "{out}");
}

/// Found by the fuzzer: a fix under an assumed block shape changes the extents the shape was
/// assumed from (a skew turns `[64][33][4]` into wider rows), and the output's own assumption
/// differed, so validation called it a bug. The output is checked under the original's
/// shape.
#[test]
fn an_unsafe_fix_under_an_assumed_block_shape_validates() {
    let (said, fixed) = fixed_into_file("assumed.cu", ASSUMED_SHAPE_KERNEL, &["--unsafe-fixes"]);
    assert!(!said.contains("internal error"), "{said}");
    assert_ne!(fixed, ASSUMED_SHAPE_KERNEL);
}

/// Found by the fuzzer (seed 13): a subscript that leaves its row for any block but the
/// first (`t[ty][16 * blockIdx.x + tx]`). `blockIdx.x` shifts every lane alike, so the figures
/// were taken at one value of it, and the swizzle then failed validation as an internal
/// error. The array is left alone, and the reason names the value.
#[test]
fn a_subscript_that_depends_on_an_unknown_value_is_not_rewritten() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(
        dir.path(),
        "rows.cu",
        "// bankwise: block=16x16\n__global__ void t(float *m)\n{\n    \
         __shared__ float tile[16][16];\n    \
         tile[threadIdx.y][16 * blockIdx.x + threadIdx.x] = m[0];\n    __syncthreads();\n    \
         m[1] = tile[threadIdx.x][threadIdx.y];\n}\n",
    );
    let shown = path.to_string_lossy().into_owned();
    let fix = bankwise(&["fix", "--unsafe-fixes", "--diff", &shown]);
    assert_eq!(fix.status.code(), Some(0), "{}", stderr(&fix));
    assert!(
        stderr(&fix)
            .contains("the index depends on `blockIdx.x`, whose values the analysis does not know"),
        "{}",
        stderr(&fix)
    );
}

/// Found in review: the text scan for `__global__` names cut 512 bytes after it, which split
/// a character of a comment there and panicked.
#[test]
fn a_multibyte_character_after_global_is_not_cut() {
    let text = format!(
        "__global__ /* {}\u{e9} */ void k(float *o) {{ __shared__ float s[32]; o[0] = s[threadIdx.x]; }}\n",
        "x".repeat(507)
    );
    survives("utf.cu", &text);
}

/// The fuzzer's input (seed 11, input 7211): an annotation of 2048 threads, which is no
/// shape, so `k`'s is assumed (4x8x1, from `s0`'s rows of 4).
const ASSUMED_SHAPE_KERNEL: &str = r#"struct Rec { float v; int k; };
#define TILE 33
#define ROWS 1
#define IDX(a, b) ((a) * TILE + (b))
// bankwise: block=256x8
__global__ void k(float *out, const float *in, int n)
{
    __shared__ char s0[64][TILE][4];
    __shared__ short s1[TILE];
    __shared__ float4 s2[32][8];
    int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0;
    acc += (float)s0[(tx) % (64)][((tx + (ty >> 0))) % (TILE)][(((tx >> 5) % 4)) % (4)];
    { int v = tx;
        while (v > 3) v >>= 1;
        s1[(((v ^ ty) / 22)) % (TILE)] = 1; }
    for (int j = 0; j < 8; j += 8)
        s1[(((j << 4) & (ty ^ (int)in[tx]))) % (TILE)] = 1;
    for (int j = 0; j < 8; j += 8)
        s1[(((j / 24) - (j & j))) % (TILE)] = 1;
    __syncthreads();
    { int v = tx;
        while (v > 3) v >>= 1;
        s2[(((v >> 2) % 8)) % (32)][(((tx + tx) + (v % 24))) % (8)] = make_float4(1.0f, 2.0f, 3.0f, 4.0f); }
    for (int j = 0; j < 8; j += 1)
        s1[((ty | (int)in[tx])) % (TILE)] = 1;
    out[blockIdx.x * blockDim.x + tx] = acc;
}
"#;

/// Found by the fuzzer (seed 2026, inputs 537177 and 712579): two functions named alike,
/// one with shared memory, neither launched. Their assumed shapes cannot be pinned by name
/// while the output is checked, so the array is left alone with that reason (it was an
/// internal error).
#[test]
fn namesakes_with_an_assumed_shape_are_left_alone_with_the_reason() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(
        dir.path(),
        "twice.cu",
        "__global__ void mystery(float *m)\n{\n}\n\n\
         __global__ void mystery(float *m)\n{\n    __shared__ float q_tile[4][32];\n    \
         int i = (blockIdx.x * 4 + threadIdx.y) * 32 + threadIdx.x;\n    \
         q_tile[threadIdx.y][threadIdx.x] = m[i];\n    __syncthreads();\n    \
         m[i] += q_tile[threadIdx.x % 4][threadIdx.y * 8 + threadIdx.x / 4];\n}\n",
    );
    let output = bankwise(&["fix", "--unsafe-fixes", "--diff", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("several functions here are named `mystery`"),
        "{}",
        stderr(&output)
    );
}

/// Found by the fuzzer (seed 2026, input 400656): the shape assumed from `s1`'s last extent
/// (2) changed once the rewrite flattened `s1`, so a second fix assumed another shape and
/// rewrote `s0` too. The guard the first fix wrote records its assumption, and the second
/// assumes the same: fix twice = fix once.
#[test]
fn a_second_fix_assumes_the_shape_the_first_assumed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(
        dir.path(),
        "narrow.cu",
        "#define TILE 64\n__global__ void k(float *out)\n{\n    \
         __shared__ double s0[TILE + 1];\n    __shared__ double s1[TILE][64][2];\n    \
         int tx = threadIdx.x, ty = threadIdx.y;\n    \
         s1[tx % TILE][(ty >> 3) % 64][1] = 1.0;\n    \
         s0[((tx << 2) | (tx / 12)) % (TILE + 1)] = 1.0;\n    out[tx] = 0;\n}\n",
    );
    let shown = path.to_string_lossy().into_owned();
    let once = bankwise(&["fix", "--unsafe-fixes", "--in-place", &shown]);
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    assert!(stderr(&once).contains("fixed: `s1`"), "{}", stderr(&once));
    let again = bankwise(&["fix", "--unsafe-fixes", "--diff", &shown]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).is_empty(), "{}", stdout(&again));
    let check = stdout(&bankwise(&["check", "-v", &shown]));
    assert!(check.contains("(block 2x16x1, assumed)"), "{check}");
}

/// Found by the fuzzer (seed 2026, input 302736): `template <int N> h[y][x] = …` inside a
/// function body parses without an error node, and the analysis followed it as code; the
/// rewrite then failed its own check. C++ declares no template at block scope: it is a
/// syntax error, and the function is not analysed.
#[test]
fn a_template_inside_a_function_body_is_a_syntax_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(
        dir.path(),
        "local_template.cu",
        "// bankwise: block=32\n__global__ void k(float *o)\n{\n    \
         __shared__ float h[32][32];\n    int t = threadIdx.x;\n    \
         template <int N> h[t][0] = 1.0f;\n    o[t] = h[t][0];\n}\n",
    );
    let shown = path.to_string_lossy().into_owned();
    let check = bankwise(&["check", &shown]);
    assert!(
        stdout(&check).contains(
            "6:5: error: syntax error: a template cannot be declared inside a function body"
        ),
        "{}",
        stdout(&check)
    );
    let fixed = bankwise(&["fix", "--unsafe-fixes", "--diff", &shown]);
    assert!(
        !stderr(&fixed).contains("internal error"),
        "{}",
        stderr(&fixed)
    );
}

/// Found by the fuzzer (seed 2026, inputs 229402, 326862, 462046; seed 5, 586055, 805191):
/// a mutant of suite/nw.cu turned `h[y][x] = …` in a device function into the typeless
/// `extern h[y][x] = …`. tree-sitter reads it as a structured binding `[y]` of type `h`, the
/// analysis took it for a new `h`, and the second analysis of fix's output failed its own
/// check. A structured binding without `auto`, or with an extent, is a syntax error.
#[test]
fn a_typeless_declaration_in_a_body_is_a_syntax_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, specifier) in [
        ("typeless_extern.cu", "extern"),
        ("typeless_shared.cu", "__shared__"),
    ] {
        let path = write(
            dir.path(),
            name,
            &format!(
                "__device__ void sweep(int h[17][17])\n{{\n    int x = threadIdx.x + 1, y = 16 - threadIdx.x;\n    \
                 {specifier} h[y][x] = h[y - 1][x - 1];\n}}\n\
                 __global__ void k()\n{{\n    __shared__ int h[17][17];\n    sweep(h);\n}}\n\
                 int main() {{ k<<<1, 16>>>(); }}\n"
            ),
        );
        let shown = path.to_string_lossy().into_owned();
        let check = bankwise(&["check", &shown]);
        // The kernel is still analysed, so the run does not fail.
        assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
        let message =
            "error: syntax error: a structured binding is declared with `auto` and no extent";
        assert!(
            stdout(&check)
                .lines()
                .any(|line| line.contains(":4:") && line.contains(message)),
            "{}",
            stdout(&check)
        );
        let fixed = bankwise(&["fix", "--unsafe-fixes", "--diff", &shown]);
        assert!(
            !stderr(&fixed).contains("internal error"),
            "{}",
            stderr(&fixed)
        );
    }
    // The binding C++ allows is still code.
    let path = write(
        dir.path(),
        "binding.cu",
        "struct P { int a, b; };\n__global__ void k(P *p)\n{\n    __shared__ int s[32];\n    \
         auto [a, b] = p[threadIdx.x];\n    s[threadIdx.x] = a + b;\n}\n\
         int main() { k<<<1, 32>>>(nullptr); }\n",
    );
    let check = bankwise(&["check", &path.to_string_lossy()]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

/// Found by the fuzzer (seed 2026, input 842850): template_sizes.cu with the `;` before
/// `scan<64><<<…>>>` removed. In fix's output, tree-sitter recovered from that error in
/// `main` differently, the `// bankwise: block=16x16` comment above `template <int TILE>`
/// was no longer the template's sibling, and the second analysis lost the block shape.
/// Annotations are read from the text, so both analyses see the same comment.
#[test]
fn a_block_annotation_survives_an_error_elsewhere_in_the_file() {
    let original = std::fs::read_to_string("testdata/template_sizes.cu").expect("testdata");
    let broken = original.replacen(
        "sizeof(float));\n    scan<64>",
        "sizeof(float))    scan<64>",
        1,
    );
    assert_ne!(broken, original, "the mutation applies");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "template_sizes.cu", &broken);
    let shown = path.to_string_lossy().into_owned();
    // Any price: the test is about the annotation, on a kernel whose map does not pay.
    let fixed = bankwise(&[
        "fix",
        "--unsafe-fixes",
        "--max-alu-per-wavefront=1000",
        "--diff",
        &shown,
    ]);
    assert!(
        !stderr(&fixed).contains("internal error"),
        "{}",
        stderr(&fixed)
    );
    assert!(
        stdout(&fixed).contains("blocks of 16x16x1 (bankwise annotation)"),
        "{}",
        stdout(&fixed)
    );
}

/// Calls inlined inside calls multiply: ten calls to a helper that makes ten calls, eight
/// deep, are 10^8 statements. That took minutes and 14 GB; past the statement budget the
/// function is not simulated, its arrays are left alone, and each lost pointer is reported
/// once per place.
#[test]
fn calls_inlined_in_calls_stop_at_the_statement_budget() {
    let mut text = String::from("__device__ void f0(float *s) { s[threadIdx.x * 2] += 1.0f; }\n");
    for depth in 1..=8 {
        let calls = format!("f{}(s); ", depth - 1).repeat(10);
        text.push_str(&format!(
            "__device__ void f{depth}(float *s) {{ {calls}}}\n"
        ));
    }
    text.push_str(
        "__global__ void k(float *o)\n{\n    __shared__ float s[2048];\n    f8(s);\n    \
         o[threadIdx.x] = s[threadIdx.x];\n}\nint main() { k<<<1, 1024>>>(nullptr); }\n",
    );
    let out = survives("fanout.cu", &text);
    assert!(
        out.contains(
            "10:1: warning: `k` not simulated: following it took more than 262144 statements \
             (calls inlined in calls), the analysis budget; its arrays are left as they are"
        ),
        "{out}"
    );
    assert!(out.lines().count() < 50, "{} lines", out.lines().count());
}

/// 1,024 threads, ten accesses in a loop of 16,384 trips: 5,242,880 warp requests, past the
/// per-function budget of 4,194,304 (the heaviest function of testdata sends 7,212). With 300
/// accesses it was a minute of simulation.
#[test]
fn a_function_past_the_request_budget_is_not_simulated() {
    let reads: String = (0..10)
        .map(|k| {
            format!(
                "        acc += s[(i * {} + threadIdx.x * {}) % 32768];\n",
                2 * k + 1,
                k + 1
            )
        })
        .collect();
    let text = format!(
        "__global__ void k(float *o)\n{{\n    __shared__ float s[32768];\n    float acc = 0;\n    \
         for (int i = 0; i < 16384; ++i) {{\n{reads}    }}\n    o[threadIdx.x] = acc;\n}}\n\
         int main() {{ k<<<1, 1024>>>(nullptr); }}\n"
    );
    let out = survives("heavy.cu", &text);
    assert!(
        out.contains(
            "1:1: warning: `k` not simulated: its accesses send 5242880 warp requests, more than \
             the 4194304 one function may (the analysis budget); its arrays are left as they are"
        ),
        "{out}"
    );
}

/// Found by the fuzzer (seed 2027, input 450099, of 1,000,000): a mutant of suite/fft.cu
/// with `fl POINTS;` in a kernel, where `POINTS` is `#define POINTS 512`. The front end took
/// it for a local variable; fix's output wrote the extent `2 * POINTS` into a subscript, and
/// its second analysis read that as the variable (data-dependent): an internal error. C reads
/// `fl 512;`: a syntax error, and the kernel is not analysed.
#[test]
fn a_declaration_of_an_object_like_macro_is_a_syntax_error() {
    let text = "#define POINTS 512\n#define ALIAS other\n// bankwise: block=256\n\
                __global__ void k(float *data)\n{\n    __shared__ float buf[2 * POINTS];\n    \
                float POINTS;\n    buf[threadIdx.x * 2] = data[0];\n    data[1] = buf[threadIdx.x];\n}\n\
                // bankwise: block=256\n__global__ void ok(float *data)\n{\n    \
                __shared__ float s[POINTS];\n    int ALIAS = 2;\n    \
                s[threadIdx.x * ALIAS] = data[0];\n    data[1] = s[threadIdx.x];\n}\n";
    let out = survives("macro_declared.cu", text);
    assert!(
        out.contains(
            "7:11: error: syntax error: the declared name is an object-like macro, which expands \
             to something that is not a name"
        ),
        "{out}"
    );
    // A macro that expands to a name declares that name, as C does: still analysed.
    assert!(out.contains("2-way bank conflict writing `s`"), "{out}");
}

/// Found by the fuzzer (seed 9001, input 444, of 40,000): a mutant of suite/fft.cu whose
/// extent reads `2 * (uint4 *)POINTS`. The extent was evaluated through the cast as 1024, so
/// the array was rewritten, the extent's text went into a subscript, and the second analysis
/// read the cast as data: an internal error. A cast to a pointer is no integer constant.
#[test]
fn an_extent_through_a_pointer_cast_is_unknown() {
    let text = "#define POINTS 512\n// bankwise: block=256\n\
                __global__ void k(float *data)\n{\n    \
                __shared__ float buf[2][2 * (uint4 *)POINTS];\n    \
                buf[0][threadIdx.x * 2] = data[0];\n    data[1] = buf[1][threadIdx.x];\n}\n";
    let out = survives("pointer_extent.cu", text);
    assert!(
        out.contains(
            "5:22: warning: extent `2 * (uint4 *)POINTS` of `buf` in `k` is unknown: a cast to \
             `uint4 *` is not an integer constant"
        ),
        "{out}"
    );
}

/// A struct template whose members name other instances' members twice each (and itself):
/// each instance member is worked out once, so this ends at once instead of after 2^40
/// evaluations, and the extent that rests on it is reported unknown.
#[test]
fn struct_template_members_that_name_each_other_are_worked_out_once() {
    let text = "template <int N> struct T {\n\
                \x20   static constexpr int a = T<N>::a + T<N>::a;\n\
                \x20   static constexpr int b = T<N - 1>::b + T<N - 1>::b;\n\
                };\n\
                // bankwise: block=32\n\
                __global__ void k(float *out) {\n\
                \x20   __shared__ float s[T<40>::b + T<3>::a];\n\
                \x20   s[threadIdx.x] = out[0];\n\
                \x20   out[1] = s[threadIdx.x];\n\
                }\n";
    let out = survives("recursive_traits.cu", text);
    assert!(
        out.contains("extent `T<40>::b + T<3>::a` of `s` in `k` is unknown"),
        "{out}"
    );
}

/// Index helpers whose returns call the next helper twenty times, eight deep: each return
/// is counted against the statement budget and bounded like a variable's value, so the
/// kernel stops at the budget (0.75 s, 32 MB) instead of building values of 20^8 nodes
/// (1.25 GB before the bound).
#[test]
fn helpers_that_return_sums_of_helpers_stop_at_the_budget() {
    let mut text = String::new();
    for i in 0..8 {
        let next = if i < 7 {
            format!("h{}(x)", i + 1)
        } else {
            "x".to_string()
        };
        let sum = vec![next; 20].join(" + ");
        text.push_str(&format!("__device__ int h{i}(int x) {{ return {sum}; }}\n"));
    }
    text.push_str(
        "// bankwise: block=32\n__global__ void k(float *out) {\n    \
         __shared__ float s[1024];\n    s[h0(threadIdx.x) % 1024] = 1;\n    \
         out[0] = s[threadIdx.x];\n}\n",
    );
    let out = survives("helper_sums.cu", &text);
    assert!(
        out.contains("`k` not simulated: following it took more than 262144 statements"),
        "{out}"
    );
}

/// Found by the fuzzer (seed 9100, input 222488, of 300,000): a mutant of suite/nw.cu whose
/// two kernels pass their `h` to one helper, one declared `h[TILE + 1][…]`, the other
/// `h[TILE + + 1][…]`. Both got one map function name, whose second text (spelling the
/// other extent) was refused; the next run found the name taken, chose another and fixed
/// the second kernel: fix twice ≠ fix once. Arrays whose extents are written differently
/// now get names of their own, and one run fixes both.
#[test]
fn arrays_with_extents_spelled_differently_get_map_functions_of_their_own() {
    let kernel = |name: &str, extent: &str| {
        format!(
            "// bankwise: block=16\n__global__ void {name}(int *score)\n{{\n    \
             __shared__ int h[TILE + 1][{extent}];\n    sweep(h, score);\n}}\n"
        )
    };
    // The anti-diagonal sweep of nw.cu: 8-way on `h[TILE + 1][TILE + 1]`, a skew map.
    let text = format!(
        "#define TILE 16\n__device__ void sweep(int h[TILE + 1][TILE + 1], int *score)\n{{\n    \
         const int t = threadIdx.x;\n    for (int m = 0; m < TILE; ++m) {{\n        \
         if (t <= m) {{\n            const int x = t + 1, y = m - t + 1;\n            \
         h[y][x] = h[y - 1][x - 1] + 1;\n        }}\n        __syncthreads();\n    }}\n    \
         score[t] = h[t + 1][t + 1];\n}}\n{}{}",
        kernel("k1", "TILE + 1"),
        kernel("k2", "TILE + + 1")
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "two_spellings.cu", &text);
    let once = dir.path().join("once.cu").to_string_lossy().into_owned();
    let twice = dir.path().join("twice.cu").to_string_lossy().into_owned();
    let fixed = bankwise(&["fix", &path.to_string_lossy(), "-o", &once]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert_eq!(
        stderr(&fixed).matches("fixed: `h`").count(),
        2,
        "{}",
        stderr(&fixed)
    );
    let again = bankwise(&["fix", &once, "-o", &twice]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        std::fs::read_to_string(&once).expect("written"),
        std::fs::read_to_string(&twice).expect("written")
    );
}

/// Found by the fuzzer (seed 9300, input 497800, of 1,000,000): a mutant of structs.cu with
/// `struct __align__(2147483647) Vec4` and an extent that is not a number (`120x80000000`).
/// The size check needed every extent, so the 2 GB element went to the simulator, which
/// walked it word by word: no end in 120 s. An unknown extent now counts as one element, so
/// the element alone is past any block's shared memory and the array is not simulated.
#[test]
fn an_element_past_any_shared_memory_is_not_simulated_whatever_its_extent() {
    let text = "struct __align__(2147483647) Vec4 { float a, b, c, d; };\n\
                // bankwise: block=128\n\
                __global__ void k(const Vec4 *f, float *o) {\n\
                \x20   __shared__ Vec4 s_f[120x80000000];\n\
                \x20   s_f[threadIdx.x] = f[threadIdx.x];\n\
                \x20   o[threadIdx.x] = s_f[threadIdx.x].a;\n\
                }\n";
    let out = survives("huge_element.cu", text);
    assert!(
        out.contains(
            "`s_f` takes at least 2147483647 bytes (? elements of 2147483647 bytes), more than \
             the 227 KiB of shared memory a block can have on any GPU: not simulated"
        ),
        "{out}"
    );
}

/// Fuzz seed 9700, input 319308: `TILE * TILE;` in a template over `TILE` reads as a
/// declaration of a local `TILE`, so a rewrite that writes the extent `TILE + 1` into the
/// index would name the local; validation caught it as an internal error. The array is now
/// left alone, saying why.
#[test]
fn an_extent_name_a_body_declares_is_not_written_into_a_rewrite() {
    let text = "// bankwise: block=16x16\ntemplate <int TILE>\n__global__ void tileSum(float *data)\n{\n    \
        __shared__ float s_tile[TILE][TILE + 1];\n    TILE * TILE;\n    \
        s_tile[threadIdx.y][threadIdx.x] = data[threadIdx.y * TILE + threadIdx.x];\n    \
        __syncthreads();\n    \
        data[threadIdx.y * TILE + threadIdx.x] = s_tile[threadIdx.x][threadIdx.y];\n}\n\
        template __global__ void tileSum<16>(float *);\n";
    survives("shadowed.cu", text);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "shadowed.cu", text);
    let shown = path.to_string_lossy().into_owned();
    let fix = bankwise(&["fix", "--unsafe-fixes", "--diff", &shown]);
    assert!(
        stderr(&fix).contains("its extent names `TILE`, which a declaration in `tileSum<16>`"),
        "{}",
        stderr(&fix)
    );
    assert!(!stderr(&fix).contains("internal error"), "{}", stderr(&fix));
}

/// Fuzz seed 9700, input 747451: a record element's member used as a callee
/// (`home[t].v(…)`, a mutation nvcc rejects) became `home_v[t](…)` after the
/// struct-of-arrays rewrite, a callee the analysis did not evaluate, so validation found
/// the access unanalysed. A callee expression is evaluated now, as its arguments are.
#[test]
fn an_access_used_as_a_callee_is_analysed() {
    let text = "struct FourVector { double v, x, y, z; };\n\
        __global__ void k(const FourVector *in, double *out)\n{\n    \
        __shared__ FourVector home[128];\n    int t = threadIdx.x;\n    home[t] = in[t];\n    \
        __syncthreads();\n    out[t] = home[t].v(home[t].x);\n}\n\
        void run(const FourVector *in, double *out) { k<<<1, 128>>>(in, out); }\n";
    survives("callee.cu", text);
}

/// Fuzz seed 9800, input 458777: a row of a two-dimensional array used as a callee
/// (`score[t + 1] (t == 0)`, a mutation) is a pointer, not an access: the previous commit
/// evaluated any callee, counted an access the rewritten file did not have, and
/// validation failed. Only a callee that is a whole element access is recorded.
#[test]
fn a_row_used_as_a_callee_is_not_an_access() {
    let text =
        "#define N 16\n__global__ void k(int *m)\n{\n    __shared__ int score[N + 1][N + 1];\n    \
        int t = threadIdx.x;\n    score[0][t + 1] = m[t];\n    score[t + 1] (t == 0);\n    \
        __syncthreads();\n    m[t] = score[t + 1][0] + score[t][t];\n}\n\
        void run(int *m) { k<<<1, N>>>(m); }\n";
    survives("row.cu", text);
}

/// Fuzz seed 9800, input 6244: an extent continued onto the next line
/// (`buf[2][2 * \` then `POINTS]`) was copied into the flattened index of the map function's
/// accesses with its backslash, `0 * (2 * \ POINTS)`, which does not parse. Extent texts are
/// now spliced as the preprocessor splices them.
#[test]
fn an_extent_continued_over_two_lines_is_written_on_one() {
    let fft = std::fs::read_to_string("testdata/suite/fft.cu").expect("testdata/suite/fft.cu");
    let declaration = "__shared__ float buf[2][2 * POINTS];";
    assert!(fft.contains(declaration));
    let text = fft.replace(declaration, "__shared__ float buf[2][2 * \\\nPOINTS];");
    survives("continued.cu", &text);
    let (_, out) = fixed_into_file("continued.cu", &text, &["--max-alu-per-wavefront=1000"]);
    assert!(out.contains("bankwise_buf(0 * (2 * POINTS) + "), "{out}");
}

/// Fuzz seed 9800, input 136276: a store through a helper's pointer parameter whose index
/// adds a value the analysis does not know (`tile[(r0 + i) * TILE_W + pitch]`, a mutation)
/// was rewritten; the check that refuses such an index read only a direct access's
/// subscripts, and validation then found the rewritten store touching other elements. It now
/// reads the index, and the array is left alone with the reason.
#[test]
fn an_unknown_value_in_an_index_through_a_pointer_leaves_the_array_alone() {
    let dct =
        std::fs::read_to_string("testdata/suite/dct8x8.cu").expect("testdata/suite/dct8x8.cu");
    let store = "dst[offset + i * pitch] = tile[(r0 + i) * TILE_W + c];";
    assert!(dct.contains(store));
    let text = dct.replace(
        store,
        "dst[offset + i * pitch] = tile[(r0 + i) * TILE_W + pitch] = tile[(r0 + i) * TILE_W + c];",
    );
    survives("pitch.cu", &text);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = write(dir.path(), "pitch.cu", &text);
    let fixed = bankwise(&["fix", "--check", &path.to_string_lossy()]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(
        stderr(&fixed).contains(
            "line 64: the index depends on `pitch`, whose values the analysis does not know"
        ),
        "{}",
        stderr(&fixed)
    );
}

/// Fuzz seeds 9800 (input 624388) and 9900 (input 16334): a declaration C++ forbids in a
/// function body that tree-sitter reads as one, `const float are<float4 *> = x[2 * j], …` or
/// `const float are = x[2 * j],:: aim = …`, was analysed; the rewritten initializer
/// (`&x[2 * j] - &buf[0][0]`) then read as `x` escaping, and validation failed. Such a
/// declaration is now the syntax error it is, and the function is reported, not analysed.
#[test]
fn a_qualified_or_templated_name_declared_in_a_body_is_a_syntax_error() {
    let fft = std::fs::read_to_string("testdata/suite/fft.cu").expect("testdata/suite/fft.cu");
    let line = "const float are = x[2 * j], aim = x[2 * j + 1];";
    assert!(fft.contains(line));
    for (name, broken) in [
        (
            "templated.cu",
            "const float are<float4 *> = x[2 * j], aim = x[2 * j + 1];",
        ),
        (
            "qualified.cu",
            "const float are = x[2 * j],:: aim = x[2 * j + 1];",
        ),
    ] {
        let text = fft.replace(line, broken);
        survives(name, &text);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = write(dir.path(), name, &text);
        let check = bankwise(&["check", &path.to_string_lossy()]);
        let said = stdout(&check) + &stderr(&check);
        assert!(
            said.contains(
                "syntax error: a variable declared inside a function body takes a plain name, \
                 without `::` or template arguments"
            ) && said.contains("`fftStockham512` not analysed: syntax error at line 52"),
            "{name}: {said}"
        );
    }
}

/// Fuzz seed 10400, inputs 70373 and 311318: a statement that reads as a declaration of a
/// local with a shared array's name (`f buf[(stage + 1) & 1];`, `r &tile[ty + j][0];`,
/// mutations) in a kernel whose accesses through a pointer the map-function rewrite turns
/// into subscripts of the array: written after that declaration, they would read the local,
/// and validation found fewer accesses of the array. The array is now left alone, saying
/// why; the file's other arrays are still fixed.
#[test]
fn an_array_name_a_body_declares_again_is_not_written_into_a_rewrite() {
    for (file, after, shadowing, array) in [
        (
            "testdata/suite/fft.cu",
            "const float *x = buf[stage & 1];",
            "f buf[(stage + 1) & 1];",
            "`buf` in `fftStockham512`",
        ),
        (
            "testdata/pointers.cu",
            "float *row = &tile[ty + j][0];",
            "r &tile[ty + j][0];",
            "`tile` in `pointerMix`",
        ),
    ] {
        let original = std::fs::read_to_string(file).expect("the testdata file");
        assert!(original.contains(after), "{file}");
        let text = original.replacen(after, &format!("{after}\n        {shadowing}"), 1);
        survives("shadowing.cu", &text);
        let (said, out) = fixed_into_file("shadowing.cu", &text, &["--max-alu-per-wavefront=1000"]);
        let reason = format!("{array} left alone");
        assert!(
            said.contains(&reason)
                && said.contains("(or reads as one): a rewrite that writes a subscript"),
            "{file}: {said}"
        );
        assert_ne!(out, text, "{file}: the other arrays are still fixed");
    }
}

/// Fuzz seed 10500, input 986494: a template head continued onto a blank line
/// (`template <int TILE>\`, a mutation) hid the head from the search for where the map
/// function goes, so it went between the head and the kernel; validation refused the
/// output as an internal error. A line continuation now reads as the blank it is.
#[test]
fn a_template_head_with_a_line_continuation_keeps_the_map_function_above_it() {
    let text = "// bankwise: block=16x16\ntemplate <int TILE>\\\n\n__global__ void tileSum(float *data)\n{\n    \
        __shared__ float s_tile[TILE][TILE + 3];\n    \
        float *blk = data + blockIdx.x * TILE * TILE;\n    \
        s_tile[threadIdx.y][threadIdx.x] = blk[threadIdx.y * TILE + threadIdx.x];\n    \
        __syncthreads();\n    \
        blk[threadIdx.y * TILE + threadIdx.x] = s_tile[threadIdx.x][threadIdx.y];\n}\n\
        template __global__ void tileSum<16>(float *);\n";
    survives("continued_head.cu", text);
    let (_, out) = fixed_into_file(
        "continued_head.cu",
        text,
        &["--unsafe-fixes", "--max-alu-per-wavefront=1000"],
    );
    let map = out
        .find("int bankwise_s_tile(int i)")
        .expect("a map function");
    assert!(
        map < out.find("template <int TILE>").expect("the head"),
        "{out}"
    );
}

/// Fuzz input 13805 of seed 3: `fix` split `s0` into a struct of arrays, dropping a member,
/// which freed shared memory, and `fix` on that output then had room to pad `s2`: not a fixed
/// point. A kernel that holds an array bankwise rewrote gets no default budget: fixing the
/// output changes nothing.
#[test]
fn the_default_budget_does_not_grow_on_fixs_own_output() {
    let text = r#"struct Rec { float v; int k; };
struct FuzzRef { float &v; __device__ FuzzRef(float &x) : v(x) {} };
#define TILE 17
#define ROWS 8
#define IDX(a, b) ((a) * TILE + (b))
#define DEVQ inline __device__
#define RQ __restrict__
#define APIQ
APIQ void host_note(const char *text);
template <typename E, int W>
DEVQ void put(E *p, int i, E v) { p[(i * W) % 16] = v; }
namespace nsf {
template <typename E, int W>
DEVQ void put2(E *p, int i, E v) { p[(i * W) % 16] = v; }
}
// bankwise: block=256x2
__global__ void k(float *out, const float * RQ in, int n)
{
    __shared__ Rec s0[TILE][TILE + 1][TILE];
    __shared__ double s1[ROWS][8][TILE + 1];
    __shared__ Rec s2[64];
    int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0;
    { int v = tx;
        while (v > 3) v >>= 1;
        s1[(tx) % (ROWS)][(tx) % (8)][(((v | v) * (v & 48))) % (TILE + 1)] = 1.0; }
    put<Rec, 32>(&s2[0], tx, Rec{1.0f, 2});
    for (int j = 0; j < 8; j += 1)
        s1[((int)in[tx]) % (ROWS)][(4) % (8)][(((j >> 1) + j)) % (TILE + 1)] = 1.0;
    acc += (float)s2[(IDX(ty, tx)) % (64)].v;
    acc += (float)s2[(((ty + IDX(ty, tx)) + tx)) % (64)].v;
    acc += (float)s0[((43 + (tx >> 2))) % (TILE)][((tx & (tx | 23))) % (TILE + 1)][(tx) % (TILE)].v;
    out[blockIdx.x * blockDim.x + tx] = acc;
}
"#;
    let (said, once) = fixed_into_file("budget.cu", text, &[]);
    assert!(said.contains("fixed: `s0` in `k`: 40 -> 20"), "{said}");
    let (again, twice) = fixed_into_file("budget.cu", &once, &[]);
    assert_eq!(once, twice, "{again}");
}
