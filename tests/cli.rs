//! Runs the `bankwise` binary as a user would: every testdata kernel (snapshotted), and
//! every kind of bad input.
#[allow(dead_code)]
mod common;
use common::{bankwise, snapshot_name, snapshot_settings, stderr, stdout, testdata_files};

#[test]
fn every_testdata_kernel_checks_cleanly_and_matches_its_snapshot() {
    let files = testdata_files();
    assert!(files.len() >= 15, "testdata holds {} kernels", files.len());
    for path in files {
        let path_text = path.to_string_lossy().into_owned();
        let output = bankwise(&["check", "--format", "json", &path_text]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{path_text}: {}",
            stderr(&output)
        );
        let json: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("check prints JSON");
        let errors: Vec<&serde_json::Value> = json["files"][0]["diagnostics"]
            .as_array()
            .expect("diagnostics list")
            .iter()
            .filter(|d| d["severity"] == "error")
            .collect();
        assert!(
            errors.is_empty(),
            "{path_text} has syntax errors: {errors:?}"
        );
        snapshot_settings().bind(|| {
            insta::assert_snapshot!(
                format!("check_json__{}", snapshot_name(&path)),
                stdout(&output)
            );
        });
    }
}

#[test]
fn text_report_of_the_readme_example() {
    let output = bankwise(&["check", "testdata/transpose.cu"]);
    assert_eq!(output.status.code(), Some(0));
    snapshot_settings()
        .bind(|| insta::assert_snapshot!("check_text__transpose.cu", stdout(&output)));
}

#[test]
fn directories_are_searched_for_cuda_files() {
    let output = bankwise(&["check", "-v", "--format", "json", "testdata/config"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let kernel = &json["files"][0]["kernels"][0];
    assert_eq!(kernel["name"], "tiledCopy");
    assert_eq!(kernel["block"], serde_json::json!([32, 8, 1]));
    assert!(kernel["block_source"]
        .as_str()
        .unwrap()
        .ends_with("bankwise.toml"));
}

/// CUTLASS's layout kernels are templates over the element type that only tests
/// instantiate: with nothing in view binding `T`, the kernel is analysed for 2-, 4- and
/// 8-byte elements, one instance each (the padding of 33 is right for `float`, 2-way for
/// `__half`), the warning says so and each conflict names its assumption; `-D T=half` binds
/// the type as `-D N=128` binds an integer parameter.
#[test]
fn a_type_template_parameter_is_bound_by_a_define() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("layout.cuh");
    std::fs::write(
        &path,
        "// bankwise: block=32x8\n\
         template <typename T>\n\
         __global__ void toNchw(const T *in, T *out) {\n\
         \x20   __shared__ T buf[32 * 33];\n\
         \x20   int x = threadIdx.x, y = threadIdx.y;\n\
         \x20   for (int i = y; i < 32; i += 8) buf[x * 33 + i] = in[i * 32 + x];\n\
         \x20   __syncthreads();\n\
         \x20   for (int i = y; i < 32; i += 8) out[i * 32 + x] = buf[i * 33 + x];\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let unbound = bankwise(&["check", &path]);
    let text = stdout(&unbound);
    assert!(
        text.contains(
            "element type `T` of `buf` in `toNchw` is not known: no instantiation or launch in \
             view binds it to a type bankwise can size; analysed as `float`, `__half`, `double`, \
             one instance each"
        ),
        "{text}"
    );
    let conflicts: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("bank conflict"))
        .collect();
    assert_eq!(conflicts.len(), 1, "{text}");
    assert!(
        conflicts[0].contains(
            "2-way bank conflict writing `buf` (stride 33): lanes 0 and 31 both hit bank 0 \
             (words 0 and 512) in warp 1, k_i = 0; 16 excess wavefronts per block in `toNchw<__half>`, \
             assuming `T` = \
             `__half`"
        ),
        "{text}"
    );
    // A fix resting on an assumed type is unsafe: a transposed tile, conflicting for every
    // assumed size, is swizzled only with --unsafe-fixes.
    let transposed = dir.path().join("transpose.cuh");
    std::fs::write(
        &transposed,
        "template <typename T>\n\
         __global__ void tr(T *out, const T *in) {\n\
         \x20   __shared__ T tile[32][32];\n\
         \x20   tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];\n\
         \x20   __syncthreads();\n\
         \x20   out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n\
         }\n\
         template <typename T>\n\
         void launch(T *out, const T *in) { tr<<<1, dim3(32, 32)>>>(out, in); }\n",
    )
    .expect("written");
    let transposed = transposed.to_string_lossy().into_owned();
    let fixed = bankwise(&["fix", "--diff", &transposed]);
    assert!(stdout(&fixed).is_empty(), "{}", stdout(&fixed));
    assert!(
        stderr(&fixed).contains(
            "`tile` in `tr<__half>` not rewritten: unsafe: rests on an assumed element type \
             `T` = `__half`"
        ),
        "{}",
        stderr(&fixed)
    );
    let unsafe_fixed = bankwise(&["fix", "--diff", "--unsafe-fixes", &transposed]);
    assert!(
        stdout(&unsafe_fixed).contains("tile[threadIdx.x][threadIdx.y ^ threadIdx.x]"),
        "{}",
        stdout(&unsafe_fixed)
    );
    let half = bankwise(&["check", "-v", "-D", "T=half", &path]);
    assert_eq!(half.status.code(), Some(0), "{}", stderr(&half));
    let text = stdout(&half);
    assert!(
        text.contains("2-way bank conflict writing `buf` (stride 33)"),
        "{text}"
    );
    assert!(text.contains("in `toNchw<half>`"), "{text}");
}

#[test]
fn command_line_block_and_defines_resolve_what_the_file_cannot() {
    let output = bankwise(&[
        "check",
        "--format",
        "json",
        "-D",
        "BS=128",
        "--block",
        "blockSum=128",
        "testdata/template_unresolved.cu",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let kernel = &json["files"][0]["kernels"][0];
    assert_eq!(kernel["name"], "blockSum<128>");
    assert_eq!(kernel["block"], serde_json::json!([128, 1, 1]));
    assert_eq!(kernel["block_source"], "--block");
    assert_eq!(kernel["arrays"][0]["dims"], serde_json::json!([128]));
    assert_eq!(kernel["arrays"][0]["rewritable"], true);
}

#[test]
fn an_unknown_block_shape_is_assumed_said_and_its_fixes_unsafe() {
    let output = bankwise(&["check", "-v", "--format", "json", "testdata/block_hints.cu"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let kernels = json["files"][0]["kernels"].as_array().unwrap();
    let mystery = kernels.iter().find(|k| k["name"] == "mystery").unwrap();
    // No launch, bound or hint: one warp of the rows `q_tile` has.
    assert_eq!(mystery["block"], serde_json::json!([32, 1, 1]));
    assert_eq!(
        mystery["block_source"],
        "assumed: one warp of 32-thread rows"
    );
    let text = bankwise(&["check", "-v", "testdata/block_hints.cu"]);
    assert!(stdout(&text).contains(
        "block shape unknown for kernel `mystery` (no launch, __launch_bounds__ or hint seen); \
         analysed as 32x1x1"
    ));
    assert!(stdout(&text).contains("pass --block mystery=XxYxZ"));
    assert!(stdout(&text).contains("in `mystery` (block 32x1x1, assumed)"));
    // The 4-way read is reported, its fix is not applied without --unsafe-fixes.
    let fixed = bankwise(&["fix", "--diff", "testdata/block_hints.cu"]);
    assert!(stderr(&fixed)
        .contains("unsafe: rests on an assumed block shape 32x1x1 (pass --block or add a launch)"));
}

/// An assumed 1-D block is narrowed until every access stays inside its array: the guess
/// must not make the user's code look out of bounds.
#[test]
fn an_assumed_block_is_one_the_code_allows() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("noblock.cu");
    std::fs::write(
        &path,
        "__global__ void k(float *o)\n{\n    __shared__ float s[1024];\n    \
         s[32 * threadIdx.x] = 1;\n    o[0] = s[0];\n}\n",
    )
    .expect("written");
    let shown = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", "-v", &shown]));
    assert!(
        text.contains(
            "analysed as 32x1x1 (one dimension, a common size, narrowed from 256x1x1 \
             so that every access stays inside its array)"
        ),
        "{text}"
    );
    assert!(text.contains("32-way bank conflict writing `s`"), "{text}");
    let fixed = bankwise(&["fix", "--diff", &shown]);
    assert!(stderr(&fixed).contains("unsafe: rests on an assumed block shape 32x1x1"));
    assert!(!stderr(&fixed).contains("outside"), "{}", stderr(&fixed));
}

/// A launch whose block is known only in part (apex's transducer: `dim3 threads(
/// C10_WARP_SIZE, numWarp, 1)`, the warp size from PyTorch's headers and `numWarp` computed
/// at run time) keeps its two dimensions: 32 x 8, 256 threads in all, not a 1-D block that
/// would make `threadIdx.y` 0 and hide the transpose store's conflict (degree numWarp).
/// A `dim3` a host function returns is not read as a `dim3` of that function's arguments.
#[test]
fn a_launch_known_in_part_keeps_its_dimensions() {
    let kernel = "template <typename scalar_t>\n\
        __device__ void single(scalar_t *smem, const scalar_t *in)\n{\n    \
        const int numWarp = blockDim.y;\n    \
        smem[threadIdx.x * numWarp + threadIdx.y] = in[threadIdx.x];\n}\n\
        template <typename scalar_t>\n__global__ void backward(const scalar_t *in)\n{\n    \
        extern __shared__ char smem8[];\n    \
        single(reinterpret_cast<scalar_t *>(smem8), in);\n}\n";
    let variants = [
        (
            "partial.cu",
            "void run(const float *in, int maxLen)\n{\n    int numWarp = maxLen / 32;\n    \
             const dim3 threads(C10_WARP_SIZE, numWarp, 1);\n    \
             backward<float><<<64, threads, 32 * numWarp * sizeof(float)>>>(in);\n}\n",
            "analysed as 32x8x1 (the launch's dimensions as far as they are known, the others \
             making 256 threads in all, a common size)",
        ),
        (
            "helper.cu",
            "inline dim3 blockFor(int warps, int rows) { return dim3(32 * warps, rows); }\n\
             void run(const float *in, int n)\n{\n    dim3 block = blockFor(2, n);\n    \
             backward<float><<<64, block, 1024>>>(in);\n}\n",
            "(block shape `block`: call of `blockFor` is not an integer constant); analysed as \
             256x1x1 (one dimension, a common size)",
        ),
        (
            // One dimension unknown and the others 1: the one-dimensional hints decide.
            "one.cu",
            "void run(const float *in, int threads)\n{\n    dim3 block(threads, 1, 1);\n    \
             backward<float><<<64, block, 1024>>>(in);\n}\n",
            "(block shape `block`: `threads` has no known value); analysed as 256x1x1 (one \
             dimension, a common size)",
        ),
    ];
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, host, assumed) in variants {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{kernel}{host}")).expect("written");
        let shown = path.to_string_lossy().into_owned();
        let out = stdout(&bankwise(&["check", &shown]));
        assert!(out.contains(assumed), "{name}: {out}");
        if name == "partial.cu" {
            assert!(
                out.contains("8-way bank conflict writing `smem8` through a pointer")
                    && out.contains("56 excess wavefronts per block in `backward<float>`"),
                "{out}"
            );
        }
    }
}

/// CUTLASS's and CUB's style: one `__shared__` record whose members are the tiles. Its
/// member arrays' accesses are simulated as those of element 0 (`smem.A[tx][ty]` reads a
/// column of a 32 x 32 tile: 32-way), the record is never rewritten, and a use of the
/// whole record (its address passed on) is an escape like any array's.
#[test]
fn a_shared_record_with_array_members_is_analysed() {
    let text = |extra: &str| {
        format!(
            "struct SharedStorage {{\n  float A[32][32];\n  float B[32][33];\n}};\n\
             __device__ void consume(SharedStorage *s);\n\
             __global__ void gemm(const float *in, float *out)\n{{\n  \
             __shared__ SharedStorage smem;\n  int tx = threadIdx.x, ty = threadIdx.y;\n  \
             smem.A[ty][tx] = in[ty * 32 + tx];\n  smem.B[ty][tx] = in[ty * 32 + tx];\n  \
             __syncthreads();\n  out[ty * 32 + tx] = smem.A[tx][ty] + smem.B[tx][ty];\n{extra}}}\n\
             void run(const float *in, float *out) {{ gemm<<<1, dim3(32, 8)>>>(in, out); }}\n"
        )
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("storage.cu");
    std::fs::write(&path, text("")).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let out = stdout(&bankwise(&["check", "-v", &shown]));
    assert!(
        out.contains("storage.cu:13:23: warning: 32-way bank conflict reading `smem`")
            && out.contains("248 excess wavefronts per block"),
        "{out}"
    );
    for clean in ["smem.A[ty][tx]", "smem.B[ty][tx]", "smem.B[tx][ty]"] {
        assert!(
            out.contains(&format!("`{clean}` on `smem` SharedStorage in `gemm`")),
            "{clean}: {out}"
        );
    }
    assert_eq!(out.matches("bank conflict reading").count(), 1, "{out}");
    let fixed = bankwise(&["fix", "--diff", &shown]);
    assert!(
        stderr(&fixed).contains(
            "`smem` in `gemm` left alone with 248 excess wavefronts: a record in shared memory"
        ),
        "{}",
        stderr(&fixed)
    );
    std::fs::write(&path, text("  consume(&smem);\n")).expect("written");
    let out = stdout(&bankwise(&["check", &shown]));
    assert!(
        out.contains("`smem` in `gemm` escapes analysis (address taken at line 14 (`&smem`))"),
        "{out}"
    );
}

/// PyTorch's and apex's style: the block size is computed at run time by a host function
/// (`SoftMax_getBlockSize`), which doubles it up to half of `min(n / ILP, 1024)`. bankwise
/// analyses the kernel at the most that function returns, 512 threads, and says so: warp 0's
/// first 16 lanes read their warps' partials 32 words apart, 16-way.
#[test]
fn a_block_size_from_a_host_function_is_analysed_at_its_bound() {
    let text = "const int max_threads = 1024;\n\
        inline dim3 SoftMax_getBlockSize(int ILP, uint64_t dim_size)\n{\n  \
        uint64_t block_size = 1;\n  \
        uint64_t max_block_size = std::min(dim_size / ILP, static_cast<uint64_t>(max_threads));\n  \
        while (block_size < (max_block_size / 2)) block_size *= 2;\n  \
        block_size = std::max(block_size, static_cast<uint64_t>(32));\n  \
        return dim3(block_size);\n}\n\
        __global__ void reduce(const float *in, float *out)\n{\n  \
        extern __shared__ float smem[];\n  smem[threadIdx.x] = in[threadIdx.x];\n  \
        __syncthreads();\n  float acc = 0;\n  \
        if (threadIdx.x < blockDim.x / 32)\n    \
        for (int i = 0; i < 32; ++i) acc += smem[threadIdx.x * 32 + i];\n  \
        out[threadIdx.x] = acc;\n}\n\
        void run(const float *in, float *out, uint64_t n)\n{\n  \
        dim3 block = SoftMax_getBlockSize(4, n);\n  \
        reduce<<<1, block, block.x * sizeof(float)>>>(in, out);\n}\n";
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("softmax.cu");
    std::fs::write(&path, text).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let out = stdout(&bankwise(&["check", &shown]));
    assert!(
        out.contains(
            "analysed as 512x1x1 (the most `SoftMax_getBlockSize` returns, whatever its \
             run-time arguments)"
        ),
        "{out}"
    );
    assert!(
        out.contains("softmax.cu:17:41: warning: 16-way bank conflict reading `smem`")
            && out.contains("480 excess wavefronts per block"),
        "{out}"
    );
}

/// A CMake-style layout: headers under `include/`, sources under `src/`, the build's
/// `compile_commands.json` under `build/`. With `--compile-commands`, each file is read with
/// its build's `-I` and `-D`, and with no files named, every CUDA file the database lists.
#[test]
fn a_compilation_database_gives_each_file_its_build_flags() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for sub in ["include/tiles", "src", "build"] {
        std::fs::create_dir_all(root.join(sub)).expect("a directory");
    }
    std::fs::write(root.join("include/tiles/tile.cuh"), "#define TILE 32\n").expect("written");
    std::fs::write(
        root.join("src/transpose.cu"),
        "#include <tiles/tile.cuh>\n__global__ void t(float *o)\n{\n    \
         __shared__ float tile[TILE][TILE];\n    \
         for (int j = 0; j < TILE; j += ROWS)\n        \
         tile[threadIdx.y + j][threadIdx.x] = o[j];\n    __syncthreads();\n    \
         o[0] = tile[threadIdx.x][threadIdx.y];\n}\n\
         void run(float *o) { t<<<1, dim3(TILE, ROWS)>>>(o); }\n",
    )
    .expect("written");
    let database = format!(
        "[{{\"directory\": \"{build}\", \"file\": \"../src/transpose.cu\", \
         \"command\": \"nvcc -I../include -DROWS=8 -c ../src/transpose.cu\"}}]",
        build = root.join("build").display()
    );
    std::fs::write(root.join("build/compile_commands.json"), database).expect("written");
    let build = root.join("build").to_string_lossy().into_owned();
    let output = bankwise(&["check", "-v", "--compile-commands", &build]);
    let text = stdout(&output);
    assert!(text.contains("in `t` (block 32x8x1)"), "{text}");
    assert!(
        text.contains("32-way bank conflict reading `tile`"),
        "{text}"
    );
    // Without the database, `<tiles/tile.cuh>` is still found (in the project's include/),
    // but the build's `-DROWS=8` is not known.
    let source = root.join("src/transpose.cu").to_string_lossy().into_owned();
    let alone = stdout(&bankwise(&["check", "-v", &source]));
    assert!(alone.contains("`ROWS` has no known value"), "{alone}");
    assert!(alone.contains("float[32][32]"), "{alone}");
    // A database that is not one is an input error.
    std::fs::write(root.join("build/compile_commands.json"), "{}").expect("written");
    let output = bankwise(&["check", "-v", "--compile-commands", &build]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a compilation database"));
}

/// A template kernel in a header, launched with template arguments from the source file that
/// includes it (the layout of SGEMM tutorials: `kernels/*.cuh`, `runner.cu`): checked
/// together, the header's kernel gets the instance and the block shape of that launch.
#[test]
fn a_template_in_a_header_is_analysed_with_the_launches_of_another_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("tile.cuh"),
        "template <int TILE, int ROWS>\n__global__ void transposeT(float *o)\n{\n    \
         __shared__ float tile[TILE][TILE];\n    \
         for (int j = 0; j < TILE; j += ROWS)\n        \
         tile[threadIdx.y + j][threadIdx.x] = o[j];\n    __syncthreads();\n    \
         o[0] = tile[threadIdx.x][threadIdx.y];\n}\n",
    )
    .expect("written");
    std::fs::write(
        dir.path().join("runner.cu"),
        "#include \"tile.cuh\"\nvoid run(float *o)\n{\n    const int TILE = 32;\n    \
         const int ROWS = 8;\n    dim3 block(TILE, ROWS);\n    \
         transposeT<TILE, ROWS><<<1, block>>>(o);\n}\n",
    )
    .expect("written");
    let shown = dir.path().to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", "-v", &shown]));
    assert!(
        text.contains("32-way bank conflict reading `tile`"),
        "{text}"
    );
    assert!(
        text.contains("in `transposeT<32, 8>` (block 32x8x1)"),
        "{text}"
    );
    // Named alone (pre-commit passes a staged header), it takes the launch of the file
    // beside it that includes it.
    let alone = dir.path().join("tile.cuh").to_string_lossy().into_owned();
    let alone = stdout(&bankwise(&["check", "-v", &alone]));
    assert!(
        alone.contains("in `transposeT<32, 8>` (block 32x8x1)"),
        "{alone}"
    );
    // Without that file, it has no launch: an assumed shape, and the extents unknown.
    std::fs::remove_file(dir.path().join("runner.cu")).expect("removed");
    let alone = dir.path().join("tile.cuh").to_string_lossy().into_owned();
    let alone = stdout(&bankwise(&["check", "-v", &alone]));
    assert!(alone.contains("`TILE` has no known value"), "{alone}");
}

/// A shared tile passed to a template `__device__` helper called with explicit template
/// arguments, through a namespace (warp-tiled SGEMM style, issue 17 item 6): the helper's
/// instance is the one the caller's bindings name (`loadFromGmem<128, 16>` from
/// `sgemmWarptiled<128, 16>`), and its accesses are the tile's. `fix` copies the helper as a
/// template, in its namespace when the call names one.
/// apex's cross-entropy: `blockReduce` is two overloads, templates over template template
/// parameters (`template <typename> class Reduction`), called with explicit arguments.
/// Each call enters the overload of its arity, and the typed view of the `extern` bytes is
/// followed into both: warp 0's lanes read their warp's 32 partials at a stride of 32 words.
#[test]
fn overloads_over_template_template_parameters_are_followed() {
    let text = "template <typename T>\nstruct Add {\n  __device__ T operator()(T a, T b) const { return a + b; }\n};\n\
        template <template <typename> class Reduction, typename AccumT>\n\
        __device__ AccumT blockReduce(AccumT *smem, AccumT val, const Reduction<AccumT> &r, AccumT init)\n{\n  \
        smem[threadIdx.x] = val;\n  __syncthreads();\n  AccumT acc = init;\n  \
        if (threadIdx.x < blockDim.x / 32) {\n    \
        for (int i = 0; i < 32; ++i) acc = r(acc, smem[threadIdx.x * 32 + i]);\n  }\n  return acc;\n}\n\
        template <template <typename> class R1, template <typename> class R2, typename AccumT>\n\
        __device__ void blockReduce(AccumT *smem, AccumT *out1, AccumT v1, const R1<AccumT> &r1,\n    \
        AccumT *out2, AccumT v2, const R2<AccumT> &r2)\n{\n  \
        smem[threadIdx.x] = v1;\n  smem[blockDim.x + threadIdx.x] = v2;\n}\n\
        template <typename acc_t>\n__global__ void xent(acc_t *out)\n{\n  \
        extern __shared__ unsigned char smem[];\n  auto sdata = reinterpret_cast<acc_t *>(smem);\n  \
        acc_t a, b;\n  blockReduce<Add, Add, acc_t>(sdata, &a, out[0], Add<acc_t>(), &b, out[1], Add<acc_t>());\n  \
        out[blockIdx.x] = blockReduce<Add, acc_t>(sdata, out[2], Add<acc_t>(), acc_t(0));\n}\n\
        void run(float *out) { xent<float><<<8, 512, 2 * 512 * sizeof(float)>>>(out); }\n";
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("xentropy.cu");
    std::fs::write(&path, text).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let out = stdout(&bankwise(&["check", &shown]));
    assert!(!out.contains("escapes analysis"), "{out}");
    assert!(
        out.contains("xentropy.cu:12:47: warning")
            && out.contains(
                "16-way bank conflict reading `smem` through a pointer (called at line 30)"
            )
            && out.contains("480 excess wavefronts per block in `xent<float>`"),
        "{out}"
    );
    assert_eq!(out.matches("bank conflict").count(), 1, "{out}");
    // The other overload's arguments make no instance of this one (`blockReduce<Add, Add>`).
    let verbose = stdout(&bankwise(&["check", "-v", &shown]));
    assert!(!verbose.contains("blockReduce<Add, Add>`"), "{verbose}");
}

#[test]
fn a_template_helper_called_with_template_arguments_is_followed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let helper = "template <int BM, int BK>\n__device__ void loadFromGmem(const float *A, float *As, int lda)\n{\n    \
        const int r = threadIdx.x / BK, c = threadIdx.x % BK;\n    As[c * BM + r] = A[r * lda + c];\n}\n";
    let kernel = |call: &str| {
        format!(
            "template <int BM, int BK>\n__global__ void sgemmWarptiled(const float *A, float *C, int lda)\n{{\n    \
             __shared__ float As[BM * BK];\n    {call}(A, As, lda);\n    __syncthreads();\n    \
             C[threadIdx.x] = As[threadIdx.x];\n}}\n\
             int main() {{ sgemmWarptiled<128, 16><<<1, 128>>>(nullptr, nullptr, 16); }}\n"
        )
    };
    let variants = [
        (
            "plain.cu",
            format!("{helper}{}", kernel("loadFromGmem<BM, BK>")),
        ),
        (
            "namespaced.cu",
            format!(
                "namespace wt {{\n{helper}}}\n{}",
                kernel("wt::loadFromGmem<BM, BK>")
            ),
        ),
        (
            "literal.cu",
            format!("{helper}{}", kernel("loadFromGmem<128, BK>")),
        ),
    ];
    for (name, text) in variants {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("written");
        let shown = path.to_string_lossy().into_owned();
        let out = stdout(&bankwise(&["check", &shown]));
        assert!(
            out.contains("16-way bank conflict writing `As` through a pointer (called at line ")
                && out.contains("60 excess wavefronts per block"),
            "{name}: {out}"
        );
        assert!(!out.contains("escapes analysis"), "{name}: {out}");
    }
    let namespaced = dir
        .path()
        .join("namespaced.cu")
        .to_string_lossy()
        .into_owned();
    // Called through its namespace, the helper's copy is written in that namespace, reopened.
    let fixed = stdout(&bankwise(&["fix", "--unsafe-fixes", &namespaced]));
    assert!(
        fixed.contains(
            "namespace wt {\ntemplate <int BM, int BK>\n__device__ void loadFromGmem_bankwise_As("
        ) && fixed.contains("} // namespace wt\n")
            && fixed.contains("    wt::loadFromGmem_bankwise_As<BM, BK>(A, As, lda);"),
        "{fixed}"
    );
    // From a kernel inside a namespace, `wt::` could name another namespace: left alone.
    let nested = dir.path().join("nested.cu");
    let namespaced_kernel = kernel("wt::loadFromGmem<BM, BK>").replace(
        "int main() { sgemmWarptiled",
        "}\nint main() { app::sgemmWarptiled",
    );
    std::fs::write(
        &nested,
        format!("namespace wt {{\n{helper}}}\nnamespace app {{\n{namespaced_kernel}"),
    )
    .expect("written");
    let fixed = bankwise(&["fix", "--unsafe-fixes", "--diff", &nested.to_string_lossy()]);
    assert!(
        stderr(&fixed).contains("is called through its namespace from inside braces"),
        "{}",
        stderr(&fixed)
    );
    // The tile's extents depend on the kernel's parameters: an unsafe fix, through a copy of
    // the helper that stays a template.
    let plain = dir.path().join("plain.cu").to_string_lossy().into_owned();
    let fixed = bankwise(&["fix", "--unsafe-fixes", "--diff", &plain]);
    let diff = stdout(&fixed);
    assert!(
        diff.contains("+template <int BM, int BK>\n+__device__ void loadFromGmem_bankwise_As(")
            && diff.contains("+    loadFromGmem_bankwise_As<BM, BK>(A, As, lda);"),
        "{diff}"
    );
}

/// `--diff` is a dry run, as ruff's: with `--in-place` the file is shown changed, not written.
#[test]
fn diff_with_in_place_writes_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("transpose.cu");
    let original = std::fs::read_to_string("testdata/transpose.cu").expect("testdata");
    std::fs::write(&path, &original).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let output = bankwise(&["fix", "--in-place", "--diff", &shown]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("+++ b/"), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("would fix: `tile`"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), original);
}

#[test]
fn missing_files_and_empty_directories_are_input_errors() {
    let output = bankwise(&["check", "-v", "does/not/exist.cu"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("does/not/exist.cu: no such file"));

    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_string_lossy().into_owned();
    let output = bankwise(&["check", "-v", &dir]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no .cu or .cuh files"));
}

#[test]
fn a_bad_file_does_not_hide_the_good_ones() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cu");
    std::fs::write(&bad, b"__global__ void k() {}\nint caf\xe9;\n").unwrap();
    let output = bankwise(&[
        "check",
        "--format",
        "json",
        &bad.to_string_lossy(),
        "testdata/transpose.cu",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output)
        .contains("bad.cu:2:8: file is not valid UTF-8 (byte 0xe9) outside a comment"));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["files"][0]["path"], "testdata/transpose.cu");
}

#[test]
fn huge_files_are_refused_without_being_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.cu");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(50 * 1024 * 1024).unwrap();
    let output = bankwise(&["check", "-v", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("52428800 bytes or more, over the 16777216-byte limit"));
}

#[test]
fn a_device_is_refused_before_it_can_stream() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("zero.cu");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let output = bankwise(&[
        "check",
        "--max-file-size",
        "1000000",
        &link.to_string_lossy(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("zero.cu: a device, not a regular file; nothing read"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn syntax_errors_are_located_and_other_kernels_still_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("partly.cu");
    std::fs::write(
        &path,
        "__global__ void broken(float *o) {\n  __shared__ float s[32];\n  s[0] = o[0] +;\n}\n\
         __global__ void fine(float *o) {\n  __shared__ float t[32];\n  t[threadIdx.x] = o[0];\n}\n",
    )
    .unwrap();
    let output = bankwise(&["check", "-v", "--block", "32", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("partly.cu:3:"), "{text}");
    assert!(text.contains("error: syntax error"), "{text}");
    assert!(
        text.contains("`broken` not analysed: syntax error at line 3"),
        "{text}"
    );
    assert!(
        text.contains(
            "partly.cu:7:3: note: store `t[threadIdx.x]` on `t` float[32] in `fine` (block 32x1x1)"
        ),
        "{text}"
    );

    std::fs::write(&path, "}}} this is not CUDA {{{\n").unwrap();
    let output = bankwise(&["check", "-v", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn deeply_nested_expressions_do_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.cu");
    let depth = 10_000;
    std::fs::write(
        &path,
        format!(
            "__global__ void k(float *o) {{\n  __shared__ float s[32];\n  o[0] = {}s[threadIdx.x]{} + s[{}threadIdx.x{}];\n}}\n",
            "(".repeat(depth),
            ")".repeat(depth),
            "(".repeat(depth),
            ")".repeat(depth)
        ),
    )
    .unwrap();
    let output = bankwise(&["check", "-v", "--block", "32", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("note: load `s[threadIdx.x]`"));
}

#[test]
fn deeply_nested_blocks_do_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep_blocks.cu");
    let depth = 10_000;
    std::fs::write(
        &path,
        format!(
            "__global__ void k(float *o) {{\n  __shared__ float s[32];\n  {} o[0] = s[threadIdx.x]; {}\n}}\n",
            "{".repeat(depth),
            "}".repeat(depth)
        ),
    )
    .unwrap();
    let output = bankwise(&["check", "-v", "--block", "32", &path.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("note: load `s[threadIdx.x]`"));
}

#[test]
fn bad_flags_and_bad_config_are_usage_errors() {
    let output = bankwise(&["check", "-v", "--block", "64x32", "testdata/transpose.cu"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("2048 threads; CUDA allows at most 1024"));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bankwise.toml"), "[block]\nk = [32, 0]\n").unwrap();
    std::fs::copy("testdata/transpose.cu", dir.path().join("k.cu")).unwrap();
    let output = bankwise(&["check", "-v", &dir.path().join("k.cu").to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("bankwise.toml: [block] k:"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn flags_that_match_nothing_are_reported() {
    let output = bankwise(&[
        "check",
        "-v",
        "--block",
        "nosuch=32",
        "testdata/transpose.cu",
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr(&output).contains("--block nosuch=…: no kernel named `nosuch`"));

    let output = bankwise(&["check", "-v", "-D", "=5", "testdata/transpose.cu"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("-D =5: the name is empty"));
}

#[test]
fn symlinked_directories_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("testdata/transpose.cu", dir.path().join("k.cu")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loop")).unwrap();
    let output = bankwise(&[
        "check",
        "-v",
        "--format",
        "json",
        &dir.path().to_string_lossy(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["files"].as_array().unwrap().len(), 1);
}

#[test]
fn every_testdata_access_with_a_known_block_has_a_class_and_every_random_a_reason() {
    for path in testdata_files() {
        let path_text = path.to_string_lossy().into_owned();
        let output = bankwise(&["check", "-v", "--format", "json", &path_text]);
        let report: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("check prints JSON");
        for kernel in report["files"][0]["kernels"].as_array().expect("kernels") {
            if kernel["block"].is_null() || kernel.get("skipped").is_some() {
                continue;
            }
            for array in kernel["arrays"].as_array().expect("arrays") {
                for access in array["accesses"].as_array().expect("accesses") {
                    let class = access["class"].as_str();
                    let place = format!("{path_text}:{}", access["line"]);
                    assert!(class.is_some(), "{place}: no class");
                    if class == Some("random") {
                        assert!(
                            access["random_reason"]
                                .as_str()
                                .is_some_and(|r| !r.is_empty()),
                            "{place}: random without a reason"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn deny_conflicts_exits_1_and_bank_options_change_the_model() {
    let output = bankwise(&["check", "-v", "--deny-conflicts", "testdata/transpose.cu"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let clean = bankwise(&["check", "-v", "--deny-conflicts", "testdata/conv1d.cu"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    // The transpose load, stride 32: with 16 banks each half-warp phase is 16-way.
    let output = bankwise(&[
        "check",
        "--format",
        "json",
        "--banks",
        "16",
        "testdata/transpose.cu",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let load = &report["files"][0]["kernels"][0]["arrays"][0]["accesses"][1];
    assert_eq!(load["conflict_degree"], 16);
    // 8 warps × 4 iterations × 2 phases × 15 excess.
    assert_eq!(load["excess_wavefronts"], 8 * 4 * 2 * 15);
    let bad = bankwise(&["check", "-v", "--banks", "8", "testdata/transpose.cu"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `bankwise solve --format json` on raw address sets.
fn solve_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["solve", "--format", "json"];
    all.extend_from_slice(args);
    let output = bankwise(&all);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("solve prints JSON")
}

/// The addresses of one warp with stride `s`.
fn stride(s: i64) -> String {
    (0..32)
        .map(|l| (s * l).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn solve_reproduces_the_minimum_imbalance_example() {
    // TC 2016 Fig. 6.
    let fig6 = "27,12,6,19,11,4,28,3";
    let json = solve_json(&["--addresses", fig6, "--banks", "8", "--method", "mih"]);
    assert_eq!(json["method"], "mih");
    assert_eq!(json["bits"], serde_json::json!([0, 3, 4]));
    assert_eq!(json["candidates_evaluated"], 5);
    assert_eq!(json["excess_before"], 3);
    assert_eq!(json["excess_after"], 1);
    assert_eq!(json["map"]["family"], "bitwise-perm");
    // An XOR-linear map does better than any choice of bits.
    let exact = solve_json(&[
        "--addresses",
        fig6,
        "--banks",
        "8",
        "--method",
        "exact",
        "--xor",
    ]);
    assert_eq!(exact["excess_after"], 0);
    assert_eq!(exact["truncated"], false);
    assert_eq!(exact["matrix"].as_array().map(Vec::len), Some(3));
}

#[test]
fn solve_reproduces_the_pruned_bit_vector_search() {
    // TC 2016 Sec. 5.1: strides 4 and 6 on 14 address bits.
    let (s4, s6) = (stride(4), stride(6));
    let json = solve_json(&[
        "--addresses",
        &s4,
        "--addresses",
        &s6,
        "--address-bits",
        "14",
        "--method",
        "exhaustive",
        "--xor",
    ]);
    assert_eq!(json["candidates_evaluated"], 188);
    assert_eq!(json["excess_before"], 4);
    assert_eq!(json["excess_after"], 1);
    assert_eq!(json["map"]["family"], "bitvector-xor");
    assert!(json["matrix"].is_array());
}

#[test]
fn solve_reproduces_the_givargis_examples() {
    // TC 2016 Sec. 5.2.1.
    for (second, bits) in [(45, [3, 4, 5, 6, 7]), (13, [3, 4, 6, 5, 7])] {
        let (s8, other) = (stride(8), stride(second));
        let json = solve_json(&["--addresses", &s8, "--addresses", &other, "--method", "gh"]);
        assert_eq!(json["bits"], serde_json::json!(bits), "8 + {second}");
    }
}

#[test]
fn solve_text_report_and_bad_input() {
    let output = bankwise(&[
        "solve",
        "--addresses",
        "0,32,64,96",
        "--method",
        "exact",
        "--xor",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("excess wavefronts: 3 -> 0"), "{text}");
    for bad in [
        vec!["solve", "--addresses", "1,x", "--method", "gh"],
        vec![
            "solve",
            "--addresses",
            "1,2",
            "--banks",
            "12",
            "--method",
            "gh",
        ],
        vec!["solve", "--addresses", "-4", "--method", "mih"],
        vec![
            "solve",
            "--addresses",
            "4096",
            "--address-bits",
            "8",
            "--method",
            "mih",
        ],
        vec!["solve", "--method", "mih"],
    ] {
        let output = bankwise(&bad);
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn many_files_in_parallel_report_as_a_serial_run_does() {
    for command in [
        &["check", "--format", "json", "testdata"][..],
        &["check", "testdata"][..],
        &["fix", "--diff", "testdata"][..],
    ] {
        let serial = bankwise(&[command, &["--jobs", "1"]].concat());
        let parallel = bankwise(&[command, &["--jobs", "4"]].concat());
        assert_eq!(serial.status.code(), Some(0), "{}", stderr(&serial));
        assert_eq!(parallel.status.code(), serial.status.code());
        assert!(stdout(&serial).len() > 1000, "{command:?} prints a report");
        assert_eq!(stdout(&parallel), stdout(&serial), "{command:?}");
        // Not a terminal: no progress line, only what a serial run says.
        assert_eq!(stderr(&parallel), stderr(&serial), "{command:?}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&bankwise(&["check", "-v", "--format", "json", "testdata"]).stdout)
            .expect("check prints JSON");
    let paths: Vec<&str> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    assert_eq!(paths.len(), testdata_files().len());
}

#[test]
fn quiet_fix_says_nothing_on_stderr_but_errors() {
    let loud = bankwise(&["fix", "--diff", "testdata/transpose.cu"]);
    assert!(stderr(&loud).contains("transpose.cu:"), "{}", stderr(&loud));
    let quiet = bankwise(&["fix", "--diff", "--quiet", "testdata/transpose.cu"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(stderr(&quiet), "");
    assert_eq!(stdout(&quiet), stdout(&loud));
    let missing = bankwise(&["fix", "--diff", "-q", "testdata/missing.cu"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("missing.cu: no such file"));
}

/// A kernel defined in one file and launched from another gets the launch's block shape when
/// both are checked together; disagreeing launches leave it unknown, with both named.
#[test]
fn launches_in_another_file_of_the_run_give_block_shapes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kernels = "#define TILE 32\n__global__ void transposeTile(float *o)\n{\n    \
        __shared__ float tile[TILE][TILE];\n    tile[threadIdx.y][threadIdx.x] = o[0];\n    \
        __syncthreads();\n    o[1] = tile[threadIdx.x][threadIdx.y];\n}\n";
    let host = "__global__ void transposeTile(float *o);\nint main()\n{\n    \
        dim3 threads(32, 8);\n    transposeTile<<<1, threads>>>(0);\n}\n";
    std::fs::write(dir.path().join("kernels.cu"), kernels).expect("written");
    std::fs::write(dir.path().join("main.cu"), host).expect("written");
    let shown = dir.path().to_string_lossy().into_owned();
    let output = bankwise(&["check", "-v", "--format", "json", &shown]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let kernel = &json["files"][0]["kernels"][0];
    assert_eq!(kernel["block"], serde_json::json!([32, 8, 1]));
    let source = kernel["block_source"].as_str().expect("a source");
    assert!(
        source.starts_with("launch at ") && source.ends_with("main.cu:5"),
        "{source}"
    );
    assert_eq!(json["totals"]["excess_wavefronts"], 248);
    // Alone, the kernel's file has no launch.
    let alone = dir.path().join("kernels.cu").to_string_lossy().into_owned();
    let output = bankwise(&["check", "-v", &alone]);
    assert!(stdout(&output).contains("block shape unknown for kernel `transposeTile`"));
    // A second host file launching it otherwise: unknown, both launches named.
    let other = host.replace("dim3 threads(32, 8);", "dim3 threads(16, 16);");
    std::fs::write(dir.path().join("other.cu"), other).expect("written");
    let output = bankwise(&["check", "-v", &shown]);
    let text = stdout(&output);
    assert!(
        text.contains("`transposeTile` is launched with block 32x8x1 at ")
            && text.contains("and 16x16x1 at "),
        "{text}"
    );
}

/// clang-tidy's suppression comments, with or without a rule, on an access or on the
/// array's declaration; `--select`/`--ignore`; BW007 for a comment that silences nothing.
#[test]
fn nolint_comments_silence_findings_in_check_sarif_fix_and_explain() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("k.cu");
    std::fs::write(
        &path,
        "__global__ void k(float *out) {\n\
         \x20   __shared__ float tile[32][32];  // NOLINT(bankwise-BW001)\n\
         \x20   __shared__ float b[32][32];\n\
         \x20   __shared__ float c[32][32];\n\
         \x20   int x = threadIdx.x;\n\
         \x20   for (int i = 0; i < 32; ++i) tile[i][x] = out[i];\n\
         \x20   __syncthreads();\n\
         \x20   out[x] = tile[x][0];\n\
         \x20   b[x][0] = 1.0f; // NOLINT(bankwise)\n\
         \x20   // NOLINTNEXTLINE(bankwise-bank-conflict-load)\n\
         \x20   out[x] += b[x][1];\n\
         \x20   out[x] += b[0][x]; // NOLINT(bankwise-BW002)\n\
         \x20   c[x][0] = 2.0f;\n\
         \x20   out[x] += c[x][1]; // NOLINT(bugprone-foo)\n\
         }\n\
         int main() { k<<<1, 32>>>(0); }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let lines = |args: &[&str]| -> Vec<String> {
        let output = bankwise(args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .map(|l| {
                l.split(": ").nth(1).unwrap_or("").to_string()
                    + " "
                    + l.rsplit(' ').next().unwrap_or("")
            })
            .collect()
    };
    // Only `c`'s two conflicts remain: another tool's NOLINT is not bankwise's.
    let shown = lines(&["check", &path]);
    assert_eq!(shown, ["warning [BW002]", "warning [BW001]"], "{shown:?}");
    assert!(lines(&["check", "--ignore", "BW001", &path]) == ["warning [BW002]"]);
    assert!(lines(&["check", "--select", "bank-conflict-load", &path]) == ["warning [BW001]"]);
    let unused = stdout(&bankwise(&["check", "--select", "BW007", &path]));
    assert_eq!(
        unused,
        format!(
            "{path}:12:27: warning: this NOLINT silences no bankwise finding on line 12 [BW007]\n"
        )
    );
    let bad = bankwise(&["check", "--select", "E501", &path]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("`E501` names no rule"),
        "{}",
        stderr(&bad)
    );
    // --deny-conflicts counts only what is shown.
    let denied = bankwise(&[
        "check",
        "--deny-conflicts",
        "--ignore",
        "BW001,BW002",
        &path,
    ]);
    assert_eq!(denied.status.code(), Some(0));
    let sarif: serde_json::Value =
        serde_json::from_slice(&bankwise(&["check", "--format", "sarif", &path]).stdout)
            .expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    // fix leaves the silenced arrays and fixes `c`.
    let fixed = bankwise(&["fix", "--diff", &path]);
    let notes = stderr(&fixed);
    assert!(
        notes.contains("`tile` in `k` left alone with 31 excess wavefronts: its conflicts are silenced by the NOLINT comment at line 2"),
        "{notes}"
    );
    assert!(
        notes.contains("silenced by the NOLINT comment at line 9"),
        "{notes}"
    );
    assert!(notes.contains("would fix: `c` in `k`"), "{notes}");
    let explained = stdout(&bankwise(&["explain", "--line", "8", &path]));
    assert!(
        explained.contains("fix: leaves `tile` as it is: its conflicts are silenced by the NOLINT comment at line 2"),
        "{explained}"
    );
}

/// `check .` from the root of a git repository: what git ignores, hidden folders and build
/// trees are not walked, `--exclude` skips more, a named file that is not C, C++ or CUDA is
/// skipped with a warning, and a header that is not CUDA at all never fails the run.
#[test]
fn a_repository_is_walked_as_git_sees_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .expect("git runs");
    assert!(git.success());
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("made");
        std::fs::write(path, text).expect("written");
    };
    let kernel = std::fs::read_to_string("testdata/transpose.cu").expect("testdata");
    write(".gitignore", "out/\n");
    write("src/transpose.cu", &kernel);
    write("src/vendor/skip.cu", &kernel);
    write("out/generated.cu", "this is not CUDA {{{");
    write("build/CMakeFiles/probe.cu", "nor this {{{");
    write(".cache/hidden.cu", "nor this {{{");
    write(
        "include/not_cuda.cuh",
        "template <class T> concept C = requires { {{{ };",
    );
    write("README.md", "Some *markdown* text.\nMore text, here.\n");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(args)
            .current_dir(root)
            .output()
            .expect("bankwise runs")
    };
    let json = |output: &std::process::Output| -> Vec<String> {
        let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        value["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["path"].as_str().expect("a path").to_string())
            .collect()
    };
    let all = run(&["check", "--format", "json", "."]);
    assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    assert_eq!(
        json(&all),
        [
            "./include/not_cuda.cuh",
            "./src/transpose.cu",
            "./src/vendor/skip.cu"
        ]
    );
    let excluded = run(&["check", "--format", "json", "--exclude", "vendor/", "."]);
    assert_eq!(
        json(&excluded),
        ["./include/not_cuda.cuh", "./src/transpose.cu"]
    );
    let everything = run(&["check", "--format", "json", "--no-ignore", "."]);
    assert_eq!(json(&everything).len(), 6, "{}", stderr(&everything));
    assert_eq!(everything.status.code(), Some(2));
    let readme = run(&["check", "README.md"]);
    assert_eq!(readme.status.code(), Some(0));
    assert!(stdout(&readme).is_empty());
    assert!(
        stderr(&readme).contains("README.md: not a C, C++ or CUDA source; skipped (-x cu"),
        "{}",
        stderr(&readme)
    );
    let forced = run(&["check", "-x", "cu", "README.md"]);
    assert!(
        stdout(&forced).contains("syntax error"),
        "{}",
        stdout(&forced)
    );
}

/// A file that is not C at all gives one line per syntax error up to 20, then one note.
#[test]
fn syntax_errors_are_capped_per_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("noise.cu");
    let noise: String = (0..200).map(|i| format!("int a{i} = );\n")).collect();
    std::fs::write(&path, format!("__global__ void k() {{}}\n{noise}")).expect("written");
    let output = bankwise(&["check", &path.to_string_lossy()]);
    let text = stdout(&output);
    assert_eq!(text.matches("error: syntax error").count(), 20, "{text}");
    assert_eq!(
        text.matches("more syntax errors from here on are not shown")
            .count(),
        1
    );
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line() {
    let bash = bankwise(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    let script = stdout(&bash);
    assert!(script.contains("_bankwise()"), "{script}");
    assert!(script.contains("--deny-conflicts"), "{script}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let output = bankwise(&["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        assert!(stdout(&output).contains("bankwise"), "{shell}");
    }
    assert_eq!(bankwise(&["completions", "tcsh"]).status.code(), Some(2));
    let man = stdout(&bankwise(&["man"]));
    assert!(man.contains(".TH bankwise 1"), "{man}");
    assert!(man.contains("completions"), "{man}");
    // Every page bankwise(1) refers to exists (issue 37).
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().to_str().expect("a UTF-8 path");
    assert_eq!(bankwise(&["man", "--out-dir", out]).status.code(), Some(0));
    for line in man.lines().filter(|l| l.ends_with("(1)")) {
        let page = line.trim_end_matches("(1)").replace("\\-", "-");
        assert!(dir.path().join(format!("{page}.1")).is_file(), "{page}");
        let name = page.trim_start_matches("bankwise-");
        let printed = stdout(&bankwise(&["man", name]));
        assert!(printed.contains(&format!(".TH {page} 1")), "{page}");
    }
    assert_eq!(bankwise(&["man", "nope"]).status.code(), Some(2));
}

/// `.pre-commit-hooks.yaml`'s entries run as pre-commit runs them: the entry, then the
/// staged files.
#[test]
fn the_pre_commit_hooks_run() {
    let hooks = std::fs::read_to_string(".pre-commit-hooks.yaml").expect("the hooks file");
    let entries: Vec<Vec<&str>> = hooks
        .lines()
        .filter_map(|l| l.trim().strip_prefix("entry: "))
        .map(|e| e.split_whitespace().collect())
        .collect();
    assert_eq!(entries.len(), 2);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let staged = dir.path().join("transpose.cu");
    std::fs::copy("testdata/transpose.cu", &staged).expect("copied");
    let staged = staged.to_string_lossy().into_owned();
    let run = |entry: &[&str]| {
        assert_eq!(entry[0], "bankwise");
        let mut args: Vec<&str> = entry[1..].to_vec();
        args.push(&staged);
        bankwise(&args)
    };
    // The check hook fails the commit on the conflict, and the fix hook removes it.
    assert_eq!(run(&entries[0]).status.code(), Some(1));
    let fixed = run(&entries[1]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert_eq!(run(&entries[0]).status.code(), Some(0));
}

/// A header staged alone (pre-commit passes only the staged files) takes its kernel's launch
/// from the project's file that includes it, found through `bankwise.toml`'s include_dirs:
/// the check hook fails on its conflict, the fix hook removes it.
#[test]
fn the_pre_commit_hooks_check_a_staged_header_with_its_includers_launch() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let project = dir.path();
    for sub in ["include", "src", "other"] {
        std::fs::create_dir_all(project.join(sub)).expect("a directory");
    }
    std::fs::write(
        project.join("bankwise.toml"),
        "include_dirs = [\"include\"]\n",
    )
    .expect("written");
    std::fs::write(
        project.join("include/tiles.cuh"),
        "#pragma once\n#define TILE 32\ntemplate <typename T>\n__global__ void colRead(T *o)\n{\n    \
         __shared__ T tile[TILE][TILE];\n    tile[threadIdx.y][threadIdx.x] = o[0];\n    \
         __syncthreads();\n    o[1] = tile[threadIdx.x][threadIdx.y];\n}\n",
    )
    .expect("written");
    std::fs::write(
        project.join("src/run.cu"),
        "#include \"tiles.cuh\"\nvoid run(float *o)\n{\n    colRead<float><<<1, dim3(32, 8)>>>(o);\n}\n",
    )
    .expect("written");
    // A file that names the header without including it launches nothing here.
    std::fs::write(
        project.join("other/note.cu"),
        "// tiles.cuh\n__global__ void colRead(float *o);\nvoid f(float *o) { colRead<<<1, 64>>>(o); }\n",
    )
    .expect("written");
    let header = project.join("include/tiles.cuh");
    let header = header.to_string_lossy().into_owned();
    let check = bankwise(&["check", "--deny-conflicts", &header]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert!(
        stdout(&check).contains(
            "tiles.cuh:9:12: warning: 32-way bank conflict reading `tile` (stride 32): lanes 0 \
             and 1 both hit bank 0 (words 0 and 32); 248 excess wavefronts per block in \
             `colRead<float>` [BW001]"
        ),
        "{}",
        stdout(&check)
    );
    let fixed = bankwise(&["fix", "--in-place", "--quiet", &header]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    let text = std::fs::read_to_string(&header).expect("the header");
    assert!(
        text.contains("blocks of 32x8x1 (its launch in run.cu)"),
        "{text}"
    );
    assert_eq!(
        bankwise(&["check", "--deny-conflicts", &header])
            .status
            .code(),
        Some(0)
    );
}

/// `--config PATH` replaces the nearest `bankwise.toml`, and `--show-settings` prints what is
/// in effect for a file and where each part comes from, as ruff's does.
#[test]
fn an_explicit_config_and_the_settings_in_effect() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = dir.path().join("ci.toml");
    std::fs::write(
        &config,
        "defines = [\"TILE=32\"]\n[bank]\nbanks = 16\n[block]\ntiledCopy = [32, 8]\n",
    )
    .expect("written");
    let config = config.to_string_lossy().into_owned();
    let shown = bankwise(&[
        "check",
        "--show-settings",
        "--config",
        &config,
        "-D",
        "EXTRA=1",
        "--ignore",
        "BW005",
        "testdata/config/tiled.cu",
    ]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let text = stdout(&shown);
    for expected in [
        "# bankwise settings for testdata/config/tiled.cu\n",
        &format!("# configuration: {config}\n"),
        "banks = 16\n",
        "defines = [\"TILE=32\", \"EXTRA=1\"]",
        &format!("\"tiledCopy\" = [32, 8, 1]  # {config}\n"),
        "# rules reported (--select/--ignore): BW001, BW002, BW003, BW004, BW006\n",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }
    // Without --config, the file's own bankwise.toml.
    let nearest = stdout(&bankwise(&[
        "fix",
        "--show-settings",
        "testdata/config/tiled.cu",
    ]));
    assert!(
        nearest.contains("# configuration: testdata/config/bankwise.toml\n"),
        "{nearest}"
    );
    assert!(nearest.contains("strategy = \"auto\"\n"), "{nearest}");
    // The explicit file is used for the analysis too.
    let json: serde_json::Value = serde_json::from_slice(
        &bankwise(&[
            "check",
            "--format",
            "json",
            "--config",
            &config,
            "testdata/config/tiled.cu",
        ])
        .stdout,
    )
    .expect("JSON");
    assert_eq!(
        json["files"][0]["kernels"][0]["block_source"],
        config.as_str()
    );
    let missing = bankwise(&["check", "--config", "no/such.toml", "testdata/transpose.cu"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("--config no/such.toml: no such file"));
}

/// An editor's buffer on stdin: `-` with `--stdin-filename` for its name, its headers and its
/// `bankwise.toml`; `fix -` prints the fixed text.
#[test]
fn a_source_on_stdin() {
    let text = std::fs::read_to_string("testdata/transpose.cu").expect("testdata");
    let run = |args: &[&str]| {
        use std::io::Write as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("bankwise runs");
        // A run refused before it reads stdin (`fix --in-place -`) may close the pipe first.
        let written = child
            .stdin
            .take()
            .expect("a pipe")
            .write_all(text.as_bytes());
        if let Err(err) = written {
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        }
        child.wait_with_output().expect("bankwise ends")
    };
    let named = run(&["check", "-", "--stdin-filename", "kernels/t.cu"]);
    assert_eq!(named.status.code(), Some(0), "{}", stderr(&named));
    assert!(
        stdout(&named).starts_with("kernels/t.cu:38:39: warning: 32-way bank conflict"),
        "{}",
        stdout(&named)
    );
    let unnamed = run(&["check", "--format", "json", "-"]);
    let json: serde_json::Value = serde_json::from_slice(&unnamed.stdout).expect("JSON");
    assert_eq!(json["files"][0]["path"], "<stdin>");
    let fixed = run(&["fix", "-q", "-"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(stdout(&fixed).contains("tile[threadIdx.x][(threadIdx.y + j) ^ threadIdx.x]"));
    assert_eq!(run(&["fix", "--in-place", "-"]).status.code(), Some(2));
    let mixed = run(&["check", "-", "testdata/transpose.cu"]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(stderr(&mixed).contains("`-` (stdin) must be the only input"));
}

/// On a terminal each finding is drawn under its source line, in colour unless NO_COLOR;
/// piped, one plain line each. `--color always|never` decides for scripts.
#[test]
fn colour_and_snippets_follow_the_terminal_and_the_flag() {
    let piped = stdout(&bankwise(&["check", "testdata/transpose.cu"]));
    assert!(
        !piped.contains('\x1b') && !piped.contains(" --> "),
        "{piped}"
    );
    let always = stdout(&bankwise(&[
        "check",
        "--color",
        "always",
        "testdata/transpose.cu",
    ]));
    assert!(always.contains("\x1b["), "{always}");
    let plain: String = {
        // The same drawing without its styles.
        let mut out = String::new();
        let mut chars = always.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    assert!(
        plain.starts_with("warning[BW001]: 32-way bank conflict reading `tile` (stride 32)"),
        "{plain}"
    );
    for line in [
        "  --> testdata/transpose.cu:38:39\n".to_string(),
        "38 |         odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
            .to_string(),
        format!("   |{}{}\n", " ".repeat(39), "^".repeat(34)),
    ] {
        assert!(plain.contains(&line), "{line:?} in\n{plain}");
    }
    let never = stdout(&bankwise(&[
        "check",
        "--color",
        "never",
        "testdata/transpose.cu",
    ]));
    assert_eq!(never, piped);
}

/// ggml dispatches kernel sizes through a generic lambda called with
/// `std::integral_constant<int, N>{}`: each call is a launch of the instance it names, so
/// the kernel is analysed for every size the file dispatches (issue 17, item 2).
#[test]
fn a_launch_in_a_generic_lambda_is_one_per_call() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("conv.cu");
    std::fs::write(
        &path,
        "template <int threads, int d_conv>\n\
         static __global__ void conv(const float *x, float *y) {\n\
         \x20   extern __shared__ float smem[];\n\
         \x20   const int tid = threadIdx.x, n_cols = d_conv - 1 + 32;\n\
         \x20   for (int i = tid; i < threads * n_cols; i += threads) smem[i] = x[i];\n\
         \x20   __syncthreads();\n\
         \x20   float sum = 0.0f;\n\
         \x20   for (int j = 0; j < d_conv; j++) sum += smem[tid * n_cols + j];\n\
         \x20   y[tid] = sum;\n\
         }\n\
         static void conv_cuda(const float *x, float *y, int nc) {\n\
         \x20   const int threads = 128;\n\
         \x20   auto launch_kernel = [&](auto NC) {\n\
         \x20       constexpr int kNC = decltype(NC)::value;\n\
         \x20       const size_t smem_size = threads * (kNC - 1 + 32) * sizeof(float);\n\
         \x20       conv<threads, kNC><<<1, threads, smem_size>>>(x, y);\n\
         \x20   };\n\
         \x20   switch (nc) {\n\
         \x20       case 3: launch_kernel(std::integral_constant<int, 3>{}); break;\n\
         \x20       case 4: launch_kernel(std::integral_constant<int, 4 >{}); break;\n\
         \x20       case 9: launch_kernel(std::integral_constant<int, 9>{}); break;\n\
         \x20   }\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let output = bankwise(&["check", "-v", &path]);
    let text = stdout(&output);
    // Stride 34 is 2-way, 35 conflict-free, 40 8-way.
    for expected in [
        "8:45: warning: 2-way bank conflict reading `smem` (stride 34)",
        "8:45: note: load `smem[tid * n_cols + j]` on `smem` float[4480] in `conv<128, 4>` \
         (block 128x1x1): stride 35, no bank conflict",
        "8:45: warning: 8-way bank conflict reading `smem` (stride 40)",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains("not simulated"), "{text}");
}

/// PyTorch-style kernels type their dynamic shared memory with a cast to a template type
/// parameter that the dispatcher binds through an alias bankwise cannot resolve
/// (`using acc_t = at::acc_type<scalar_t, true>`): the view is followed in each assumed
/// instance instead of escaping (issue 17, items 3 and 4).
#[test]
fn a_cast_view_of_dynamic_shared_memory_to_a_type_parameter_is_followed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("norm.cu");
    std::fs::write(
        &path,
        "template <typename scalar_t, typename acc_t>\n\
         __global__ void rowSums(const scalar_t *in, acc_t *out) {\n\
         \x20   extern __shared__ char smem8[];\n\
         \x20   auto smem = reinterpret_cast<acc_t *>(smem8);\n\
         \x20   const int lid = threadIdx.x, wid = threadIdx.y;\n\
         \x20   smem[lid * 8 + wid] = static_cast<acc_t>(in[wid * 32 + lid]);\n\
         \x20   __syncthreads();\n\
         \x20   out[wid * 32 + lid] = smem[wid * 32 + lid];\n\
         }\n\
         template <typename scalar_t>\n\
         void launch(const scalar_t *in, float *out) {\n\
         \x20   using acc_t = at::acc_type<scalar_t, true>;\n\
         \x20   rowSums<scalar_t, acc_t><<<1, dim3(32, 8), 256 * sizeof(acc_t)>>>(in, out);\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", &path]));
    assert!(!text.contains("escapes analysis"), "{text}");
    // 8 elements between lanes (32 bytes of the char array): 8-way for 4-byte elements.
    assert!(
        text.contains(
            "6:5: warning: 8-way bank conflict writing `smem8` through a pointer (stride 32): \
             lanes 0 and 4 both hit bank 0 (words 0 and 32); 56 excess wavefronts per block in \
             `rowSums<scalar_t, float>`, assuming `acc_t` = `float`"
        ),
        "{text}"
    );
}

/// Tile sizes as modern CUDA keeps them (CUTLASS policies, flash-attention's kernel traits):
/// `constexpr` in a namespace, `static constexpr` members of a policy struct, read through
/// the kernel's type parameter (`P::kRows`) and named in a `dim3` by qualified names.
#[test]
fn constants_in_namespaces_and_policy_structs_are_known() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("policy.cu");
    std::fs::write(
        &path,
        "namespace cfg {\n\
         constexpr int kTile = 32;\n\
         struct Policy { static constexpr int kRows = 8; static constexpr int kPad = 0; };\n\
         }\n\
         template <typename P>\n\
         __global__ void policyTranspose(float *out, const float *in) {\n\
         \x20   __shared__ float tile[cfg::kTile][cfg::kTile + P::kPad];\n\
         \x20   for (int j = 0; j < cfg::kTile; j += P::kRows)\n\
         \x20       tile[threadIdx.y + j][threadIdx.x] = in[(threadIdx.y + j) * 32 + threadIdx.x];\n\
         \x20   __syncthreads();\n\
         \x20   for (int j = 0; j < cfg::kTile; j += P::kRows)\n\
         \x20       out[(threadIdx.y + j) * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];\n\
         }\n\
         void launch(float *out, const float *in) {\n\
         \x20   dim3 block(cfg::kTile, cfg::Policy::kRows);\n\
         \x20   policyTranspose<cfg::Policy><<<1, block>>>(out, in);\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let output = bankwise(&["check", &path]);
    let text = stdout(&output);
    assert_eq!(
        text.lines().count(),
        1,
        "only the conflict, no unknown extent or block shape: {text}"
    );
    assert!(
        text.contains(
            "12:53: warning: 32-way bank conflict reading `tile` (stride 32): lanes 0 and 1 both \
             hit bank 0 (words 0 and 32) in warp 0, j = 0; 992 excess wavefronts per block in \
             `policyTranspose<cfg::Policy>`"
        ),
        "{text}"
    );
}

/// flash-attention keeps a kernel's tile sizes and element type in a traits struct template
/// in a header (`Kernel_traits<kBlockM, kHeadDim, Element>`), read in the kernel through
/// `constexpr` locals and a `using` alias; a `constexpr` in a header's namespace is a
/// constant too.
#[test]
fn a_traits_struct_template_in_a_header_gives_extents_and_element_type() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("kernel_traits.h"),
        "#pragma once\n\
         #include <cuda_fp16.h>\n\
         namespace flash { constexpr int kWarp = 32; }\n\
         template <int kBlockM_, int kHeadDim_, typename elem_type = half>\n\
         struct Kernel_traits {\n\
         \x20   static constexpr int kBlockM = kBlockM_;\n\
         \x20   static constexpr int kHeadDim = kHeadDim_;\n\
         \x20   static constexpr int kTile = kBlockM * kHeadDim;\n\
         \x20   using Element = elem_type;\n\
         };\n",
    )
    .expect("written");
    let path = dir.path().join("attn.cu");
    std::fs::write(
        &path,
        "#include \"kernel_traits.h\"\n\
         template <typename K>\n\
         __global__ void loadQ(const half *q, half *o) {\n\
         \x20   constexpr int kBlockM = K::kBlockM;\n\
         \x20   constexpr int kHeadDim = K::kHeadDim;\n\
         \x20   using Element = typename K::Element;\n\
         \x20   __shared__ Element sQ[kBlockM][kHeadDim];\n\
         \x20   for (int i = threadIdx.x; i < K::kTile; i += blockDim.x)\n\
         \x20       sQ[i / kHeadDim][i % kHeadDim] = q[i];\n\
         \x20   __syncthreads();\n\
         \x20   o[threadIdx.x] = sQ[threadIdx.x % kBlockM][threadIdx.x / flash::kWarp];\n\
         }\n\
         void run(const half *q, half *o) { loadQ<Kernel_traits<64, 128>><<<1, 128>>>(q, o); }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", "-v", &path]));
    assert!(
        text.contains(
            "9:9: note: store `sQ[i / kHeadDim][i % kHeadDim]` on `sQ` half[64][128] in \
             `loadQ<Kernel_traits<64, 128>>` (block 128x1x1): linear, no bank conflict"
        ),
        "{text}"
    );
    assert!(
        text.contains("11:22: warning: 32-way bank conflict reading `sQ` (stride 128)"),
        "{text}"
    );
    assert!(
        !text.contains("unknown") && !text.contains("no known"),
        "{text}"
    );
}

/// PyTorch extensions launch through `AT_DISPATCH_*` macros, which bind `scalar_t` to each
/// floating type: without ATen's headers `scalar_t` is a name bankwise cannot size, so the
/// kernel is analysed for the assumed element types.
#[test]
fn a_launch_through_an_unresolved_dispatch_alias_gets_the_assumed_types() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("ext.cu");
    std::fs::write(
        &path,
        "template <typename T>\n\
         __global__ void tr(T *x) {\n\
         \x20   __shared__ T s[32][33];\n\
         \x20   s[threadIdx.x][threadIdx.y] = x[threadIdx.y * 32 + threadIdx.x];\n\
         \x20   __syncthreads();\n\
         \x20   x[threadIdx.y * 32 + threadIdx.x] = s[threadIdx.y][threadIdx.x];\n\
         }\n\
         void launch(at::Tensor t) {\n\
         \x20   AT_DISPATCH_FLOATING_TYPES_AND_HALF(t.scalar_type(), \"tr\", ([&] {\n\
         \x20       tr<scalar_t><<<1, dim3(32, 8)>>>(t.data_ptr<scalar_t>());\n\
         \x20   }));\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", &path]));
    assert!(!text.contains("no known size"), "{text}");
    assert!(
        text.contains(
            "4:5: warning: 2-way bank conflict writing `s` (stride 33): lanes 0 and 31 both hit \
             bank 0 (words 0 and 512) in warp 1; 4 excess wavefronts per block in `tr<__half>`, \
             assuming `T` = `__half`"
        ),
        "{text}"
    );
}

/// Index helpers (`LaneId()`, `WarpId()` as CUB and CUTLASS write them, a padded index
/// function) return values the analysis evaluates: subscripts built from them are simulated.
#[test]
fn the_values_index_helpers_return_are_followed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("hist.cu");
    std::fs::write(
        &path,
        "__device__ __forceinline__ unsigned LaneId() { return threadIdx.x & 31; }\n\
         __device__ __forceinline__ int WarpId() { return threadIdx.x >> 5; }\n\
         __device__ int padded(int row, int col) { const int pitch = 33; return row * pitch + col; }\n\
         __global__ void hist(unsigned *out) {\n\
         \x20   __shared__ unsigned counts[8][256];\n\
         \x20   __shared__ float tile[32 * 33];\n\
         \x20   counts[WarpId()][LaneId() * 8] += 1;\n\
         \x20   tile[padded(LaneId(), WarpId())] = 1.0f;\n\
         \x20   __syncthreads();\n\
         \x20   out[threadIdx.x] = counts[0][threadIdx.x] + (unsigned)tile[threadIdx.x];\n\
         }\n\
         void run(unsigned *out) { hist<<<1, 256>>>(out); }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", "-v", &path]));
    assert!(!text.contains("not simulated"), "{text}");
    assert!(
        text.contains("7:5: warning: 8-way bank conflict writing `counts` (stride 8)"),
        "{text}"
    );
    assert!(
        text.contains("8:5: note: store `tile[padded(LaneId(), WarpId())]` on `tile` float[1056] in `hist` (block 256x1x1): stride 33, no bank conflict"),
        "{text}"
    );
}

/// Block shapes written as recent CUDA code writes them: `dim3 b{32, 8}`, `auto b =
/// dim3(32, 16)`, and the extensible launch `cudaLaunchKernelEx(&config, k, …)` with
/// `config.blockDim` and `config.dynamicSmemBytes` set before it (CUDA 12).
#[test]
fn block_shapes_from_auto_dim3_and_the_extensible_launch() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("launches.cu");
    std::fs::write(
        &path,
        "__global__ void a(float *o) { __shared__ float t[32][32]; o[1] = t[threadIdx.y][threadIdx.x]; }\n\
         __global__ void d(float *o) { __shared__ float t[32][32]; o[1] = t[threadIdx.y][threadIdx.x]; }\n\
         __global__ void c(float *o) {\n\
         \x20   extern __shared__ float dyn[];\n\
         \x20   dyn[threadIdx.x * 32 + threadIdx.y] = o[0];\n\
         }\n\
         void run(float *o, cudaStream_t s) {\n\
         \x20   dim3 blockA{32, 8};\n\
         \x20   a<<<1, blockA, 0, s>>>(o);\n\
         \x20   auto blockD = dim3(32, 16);\n\
         \x20   d<<<1, blockD>>>(o);\n\
         \x20   cudaLaunchConfig_t config = {};\n\
         \x20   config.gridDim = dim3(1);\n\
         \x20   config.blockDim = dim3(32, 2);\n\
         \x20   config.dynamicSmemBytes = 32 * 32 * sizeof(float);\n\
         \x20   cudaLaunchKernelEx(&config, c, o);\n\
         }\n",
    )
    .expect("written");
    let path = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", "-v", &path]));
    // Two warps of 31 excess each: the 32x2 block of the extensible launch, and `dyn` sized
    // by its dynamicSmemBytes (no unknown extent).
    for expected in [
        "in `a` (block 32x8x1)",
        "in `d` (block 32x16x1)",
        "5:5: warning: 32-way bank conflict writing `dyn` (stride 32): lanes 0 and 1 both hit \
         bank 0 (words 0 and 32); 62 excess wavefronts per block",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(
        !text.contains("assumed") && !text.contains("unknown"),
        "{text}"
    );
}

/// A header found above the file is found however the file's path is written (issue 37):
/// `src/main.cu` from the project's root has no parent above `src` as written.
#[test]
fn headers_above_the_file_are_found_however_its_path_is_written() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let project = dir.path();
    std::fs::create_dir_all(project.join(".git")).expect("a directory");
    std::fs::create_dir_all(project.join("include")).expect("a directory");
    std::fs::create_dir_all(project.join("src")).expect("a directory");
    std::fs::write(project.join("include/tiles.cuh"), "#define TILE 32\n").expect("written");
    std::fs::write(
        project.join("src/main.cu"),
        "#include \"tiles.cuh\"\n__global__ void k(float *o)\n{\n    \
         __shared__ float t[TILE][TILE];\n    t[threadIdx.x][0] = o[threadIdx.x];\n    \
         o[threadIdx.x] = t[0][threadIdx.x];\n}\nvoid run(float *o) { k<<<1, 32>>>(o); }\n",
    )
    .expect("written");
    let check = |path: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .current_dir(project)
            .args(["check", path])
            .output()
            .expect("bankwise runs");
        String::from_utf8_lossy(&output.stdout).replace("./src/", "src/")
    };
    let plain = check("src/main.cu");
    assert!(!plain.contains("not found"), "{plain}");
    assert!(
        plain.contains("32-way bank conflict writing `t`"),
        "{plain}"
    );
    assert_eq!(plain, check("./src/main.cu"));
}

/// A kernel with a syntax error is not analysed, so no block-shape warning rests on it, and
/// the block-shape warnings of a file with a syntax error are BW005 as anywhere (issue 37).
#[test]
fn block_shape_warnings_are_bw005_beside_a_syntax_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("k.cu");
    std::fs::write(
        &path,
        "__global__ void k(float *o)\n{\n    __shared__ float s[1024];\n    \
         s[32 * threadIdx.x] = 1;\n    o[0] = s[0];\n}\n__global__ void broken() { int x = ; }\n",
    )
    .expect("written");
    let path = path.to_str().expect("a UTF-8 path");
    let output = bankwise(&["check", path]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        text.contains("block shape unknown for kernel `k`") && text.contains("[BW005]"),
        "{text}"
    );
    assert!(!text.contains("kernel `broken` (no launch"), "{text}");
    let output = bankwise(&["check", path, "--ignore", "BW005"]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(!text.contains("block shape unknown"), "{text}");
    assert!(text.contains("`broken` not analysed: syntax error at line 7 [BW006]"));
}

/// A text run ends with a summary line on stderr, and `--statistics` counts each rule's
/// findings (issue 37); `--quiet` and the JSON and SARIF formats leave them out.
#[test]
fn a_check_ends_with_a_summary_and_statistics() {
    let output = bankwise(&[
        "check",
        "testdata/transpose.cu",
        "testdata/no_shared.cu",
        "testdata/escapes.cu",
        "--statistics",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let notes = stderr(&output);
    let lines: Vec<&str> = notes.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.starts_with("bankwise: ") && l.contains(" of 3 files"))
        .unwrap_or_else(|| panic!("{notes}"));
    let findings = stdout(&output).lines().count();
    assert!(
        lines[summary].starts_with(&format!("bankwise: {findings} findings (")),
        "{notes}"
    );
    assert!(lines[summary].ends_with(") in 2 of 3 files"), "{notes}");
    let counted: usize = lines[summary + 1..]
        .iter()
        .map(|l| {
            l.split_whitespace()
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .expect("a count")
        })
        .sum();
    assert_eq!(counted, findings);
    assert!(notes.contains("  BW001  bank-conflict-load"), "{notes}");
    let quiet = bankwise(&["check", "-q", "testdata/transpose.cu"]);
    assert_eq!(stderr(&quiet), "");
    let clean = bankwise(&["check", "testdata/no_shared.cu"]);
    assert_eq!(stderr(&clean), "bankwise: no findings in 1 file\n");
    let json = bankwise(&["check", "--format", "json", "testdata/transpose.cu"]);
    assert_eq!(stderr(&json), "");
}

/// A block built from the parameters of the host function around the launch takes, as its
/// assumed shape, what every call of that function in the file passes (a default where a
/// call leaves one out); calls that disagree leave the usual assumption (issue 36, item 3).
#[test]
fn a_launch_wrapper_takes_the_values_its_callers_pass() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("wrapper.cu");
    let source = |second: &str| {
        format!(
            "__global__ void sq(float *out)\n{{\n    __shared__ float t[16][16];\n    \
             t[threadIdx.y][threadIdx.x] = out[0];\n    __syncthreads();\n    \
             out[1] = t[threadIdx.x][threadIdx.y];\n}}\n\
             void launch(float *o, int threads, int rows = 4)\n{{\n    \
             dim3 block(threads, rows);\n    sq<<<1, block>>>(o);\n}}\n\
             void host(float *o) {{ launch(o, 16); launch(o + 1, 16{second}); }}\n"
        )
    };
    std::fs::write(&path, source(", 4")).expect("written");
    let shown = path.to_string_lossy().into_owned();
    let text = stdout(&bankwise(&["check", &shown]));
    assert!(
        text.contains(
            "analysed as 16x4x1 (what every call of its launching function in this file passes: \
             `threads` = 16, `rows` = 4)"
        ),
        "{text}"
    );
    assert!(text.contains("8-way bank conflict reading `t`"), "{text}");
    assert!(text.contains("; 14 excess wavefronts per block"), "{text}");
    std::fs::write(&path, source(", 8")).expect("written");
    let text = stdout(&bankwise(&["check", &shown]));
    assert!(
        text.contains("analysed as 32x8x1 (the launch's dimensions"),
        "{text}"
    );
}

/// `--statistics` plans the fixes and counts the conflicts they remove: a kernel without a
/// launch has only an unsafe fix (its block shape is assumed), which `fix` does not apply.
#[test]
fn the_summary_counts_the_conflicts_fix_would_remove() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let unlaunched = dir.path().join("unlaunched.cu");
    std::fs::write(
        &unlaunched,
        "__global__ void k(float *o)\n{\n    __shared__ float t[32][32];\n    \
         t[threadIdx.x][0] = o[0];\n    __syncthreads();\n    o[1] = t[0][threadIdx.x];\n}\n",
    )
    .expect("written");
    let unlaunched = unlaunched.to_string_lossy().into_owned();
    let output = bankwise(&[
        "check",
        "--statistics",
        "testdata/transpose.cu",
        &unlaunched,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output).lines().next(),
        Some("bankwise: 3 findings (2 bank conflicts, 1 fixable) in 2 of 2 files"),
        "{}",
        stderr(&output)
    );
}

/// A syntax error that keeps part of a kernel from being checked fails `--deny-conflicts`
/// (exit 1), as a conflict does, unless its rule is ignored; without the flag the run
/// passes, and a file no kernel of which parses is an input error (exit 2).
#[test]
fn a_syntax_error_fails_the_conflict_gate() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let partly = dir.path().join("partly.cu");
    std::fs::write(
        &partly,
        "__global__ void k(float *o)\n{\n    __shared__ float s[32];\n    s[threadIdx.x] = o[0];\n}\n\
         __global__ void j(float *o)\n{\n    __shared__ float s[32][32];\n    \
         s[threadIdx.x][0] = o[0] +;\n}\n",
    )
    .expect("written");
    let partly = partly.to_string_lossy().into_owned();
    let gate = bankwise(&["check", "--deny-conflicts", &partly]);
    assert_eq!(gate.status.code(), Some(1), "{}", stdout(&gate));
    assert!(stdout(&gate).contains("error: syntax error: code here could not be parsed [BW006]"));
    assert!(
        stderr(&gate).contains(", 1 error) in 1 of 1 file"),
        "{}",
        stderr(&gate)
    );
    let ignored = bankwise(&["check", "--deny-conflicts", "--ignore", "BW006", &partly]);
    assert_eq!(ignored.status.code(), Some(0), "{}", stdout(&ignored));
    assert_eq!(bankwise(&["check", &partly]).status.code(), Some(0));
    let wholly = dir.path().join("wholly.cu");
    std::fs::write(
        &wholly,
        "__global__ void j(float *o)\n{\n    __shared__ float s[32];\n    s[threadIdx.x] = o[0] +;\n}\n",
    )
    .expect("written");
    let wholly = wholly.to_string_lossy().into_owned();
    assert_eq!(bankwise(&["check", &wholly]).status.code(), Some(2));
}

/// A compilation database lists no headers: with `--compile-commands`, a kernel defined in
/// a header a listed file includes is checked with the launch in its includer, and fixed,
/// the include directory read from CMake's `--options-file` (issue 37).
#[test]
fn compile_commands_reach_kernels_defined_in_headers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for sub in [".git", "src", "include/tiles", "build"] {
        std::fs::create_dir_all(root.join(sub)).expect("a directory");
    }
    std::fs::write(
        root.join("include/tiles/tiles.cuh"),
        "#pragma once\ntemplate <int TILE>\n__global__ void colSum(const float *in, float *out)\n{\n    \
         __shared__ float tile[TILE][TILE];\n    for (int r = 0; r < TILE; ++r)\n        \
         tile[r][threadIdx.x] = in[r * TILE + threadIdx.x];\n    __syncthreads();\n    \
         float sum = 0;\n    for (int c = 0; c < TILE; ++c)\n        sum += tile[threadIdx.x][c];\n    \
         out[threadIdx.x] = sum;\n}\n",
    )
    .expect("written");
    std::fs::write(
        root.join("src/main.cu"),
        "#include \"tiles.cuh\"\nvoid run(const float *in, float *out)\n{\n    \
         colSum<32><<<1, 32>>>(in, out);\n}\n",
    )
    .expect("written");
    std::fs::write(
        root.join("build/includes_CUDA.rsp"),
        format!("-I{}", root.join("include/tiles").display()),
    )
    .expect("written");
    let database = serde_json::json!([{
        "directory": root.join("build"),
        "file": root.join("src/main.cu"),
        "command": format!(
            "/usr/bin/nvcc --options-file includes_CUDA.rsp -x cu -c {} -o main.o",
            root.join("src/main.cu").display()
        ),
    }]);
    std::fs::write(
        root.join("build/compile_commands.json"),
        database.to_string(),
    )
    .expect("written");
    let build = root.join("build");
    let build = build.to_str().expect("a UTF-8 path");
    let output = bankwise(&["check", "--compile-commands", build]);
    let text = stdout(&output);
    assert!(
        text.contains("tiles.cuh:11:16: warning: 32-way bank conflict reading `tile`"),
        "{text}{}",
        stderr(&output)
    );
    let fixed = bankwise(&[
        "fix",
        "--diff",
        "--unsafe-fixes",
        "--compile-commands",
        build,
    ]);
    assert!(
        stderr(&fixed).contains("would fix: `tile` in `colSum<32>`: 992 -> 0"),
        "{}",
        stderr(&fixed)
    );
}

/// Two programs with a kernel of the same name, in two directories: the one without a
/// launch does not borrow the other's 32x8 (it is not launched, and says so), and the
/// launched one keeps its own.
#[test]
fn a_launch_in_another_program_gives_no_block_shape() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).expect("a directory");
    std::fs::create_dir_all(&b).expect("a directory");
    std::fs::write(
        a.join("transpose.cu"),
        "__global__ void transposeCoalesced(float *out, const float *in)\n{\n    \
         __shared__ float tile[32][32];\n    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];\n    \
         __syncthreads();\n    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\n",
    )
    .expect("writes");
    std::fs::write(
        b.join("main.cu"),
        "__global__ void transposeCoalesced(float *out, const float *in, int n)\n{\n    \
         __shared__ float tile[32][33];\n    tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];\n    \
         __syncthreads();\n    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\n\n\
         int main()\n{\n    transposeCoalesced<<<1, dim3(32, 8)>>>(nullptr, nullptr, 32);\n}\n",
    )
    .expect("writes");
    let (a_text, b_text) = (a.to_string_lossy(), b.to_string_lossy());
    let output = bankwise(&["check", "--format", "json", &a_text, &b_text]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let shapes: Vec<(String, String, String)> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            let kernel = &f["kernels"][0];
            (
                f["path"]
                    .as_str()
                    .unwrap_or_default()
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                kernel["block"].to_string(),
                kernel["block_source"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            (
                "transpose.cu".to_string(),
                "[32,1,1]".to_string(),
                "assumed: one warp of 32-thread rows".to_string()
            ),
            (
                "main.cu".to_string(),
                "[32,8,1]".to_string(),
                "launch at line 11".to_string()
            ),
        ]
    );
    let text = bankwise(&["check", &a_text, &b_text]);
    assert!(
        stdout(&text).contains(
            "block shape unknown for kernel `transposeCoalesced` (no launch, __launch_bounds__ \
             or hint seen)"
        ),
        "{}",
        stdout(&text)
    );
}

/// `__launch_bounds__(N)` gives the thread count, the launch the shape: `dim3(t, t)` is
/// square, so 256 threads are 16x16 (not 256x1, which `dim3(t, t)` cannot be), 1024 are
/// 32x32, and 512 the widest power-of-two square within them, 16x16. A launch written
/// `<<<g, t>>>` keeps the bound as one dimension.
#[test]
fn launch_bounds_take_the_shape_the_launch_writes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("bounded.cu");
    let kernel = |name: &str, bound: u32| {
        format!(
            "__global__ void __launch_bounds__({bound}) {name}(float *o)\n{{\n    \
             __shared__ float tile[32][32];\n    \
             tile[threadIdx.y][threadIdx.x] = o[threadIdx.x];\n    __syncthreads();\n    \
             o[threadIdx.y] = tile[threadIdx.x][threadIdx.y];\n}}\n"
        )
    };
    std::fs::write(
        &file,
        format!(
            "{}{}{}{}void run(float *o, int t)\n{{\n    dim3 block(t, t);\n    \
             sq256<<<1, block>>>(o);\n    sq1024<<<1, block>>>(o);\n    \
             sq512<<<1, block>>>(o);\n    flat<<<1, t>>>(o);\n}}\n",
            kernel("sq256", 256),
            kernel("sq1024", 1024),
            kernel("sq512", 512),
            kernel("flat", 256)
        ),
    )
    .expect("written");
    let output = bankwise(&["check", "--format", "json", &file.to_string_lossy()]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let shapes: Vec<(String, serde_json::Value, String)> = report["files"][0]["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap_or("").to_string(),
                k["block"].clone(),
                k["block_source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let square = "__launch_bounds__ (upper bound), square as the launch writes it";
    assert_eq!(
        shapes,
        [
            (
                "sq256".to_string(),
                serde_json::json!([16, 16, 1]),
                square.to_string()
            ),
            (
                "sq1024".to_string(),
                serde_json::json!([32, 32, 1]),
                square.to_string()
            ),
            (
                "sq512".to_string(),
                serde_json::json!([16, 16, 1]),
                square.to_string()
            ),
            (
                "flat".to_string(),
                serde_json::json!([256, 1, 1]),
                "__launch_bounds__ (upper bound)".to_string()
            ),
        ]
    );
}
