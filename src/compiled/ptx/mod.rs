//! The compiler as a second front end: nvcc's PTX for a file, each kernel run for one block
//! with every thread interpreted, and every shared-memory instruction costed at the width
//! and on the path nvcc gave it. Loads nvcc hoisted out of a loop run once, neighbours it
//! merged into `ld.shared.v4` are one 16-byte access, and accesses the source analysis
//! gives up on (a type it cannot size, a pointer carved from `extern __shared__`, template
//! machinery) are here as nvcc understood them. PTX is what ptxas assembles one
//! instruction for one: each `ld.shared`/`st.shared` is one `LDS`/`STS`.

mod exec;
mod merge;
mod parse;

pub(crate) use exec::{Access, Gap, Launch, Run};
pub(crate) use parse::Module;

/// Reads a PTX listing.
pub(crate) fn read(text: &str) -> Module {
    parse::module(text)
}

/// The kernels of `module` (mangled names).
pub(crate) fn kernels(module: &Module) -> impl Iterator<Item = &str> {
    module
        .functions
        .iter()
        .filter(|f| f.is_kernel)
        .map(|f| f.name.as_str())
}

/// Runs block 0 of kernel `name`, its accesses merged as `sass` (the kernel's shared loads
/// and stores in the machine code, where known) shows; `None` when the module has no such
/// kernel.
pub(crate) fn run(
    module: &Module,
    name: &str,
    launch: &Launch,
    sass: &[crate::compiled::sass::SharedSite],
) -> Option<Run> {
    let function = module
        .functions
        .iter()
        .find(|f| f.is_kernel && f.name == name)?;
    let merges = merge::plan(function, &module.files, sass);
    Some(exec::run(module, function, launch, &merges))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bank::BankConfig;
    use crate::compiled::sass::SharedSite;

    /// A kernel `_Z1kPfi(float *out, int n)` with `body` after the declarations.
    fn kernel(body: &str) -> String {
        format!(
            ".visible .entry _Z1kPfi(\n.param .u64 _Z1kPfi_param_0,\n.param .u32 _Z1kPfi_param_1\n)\n\
             {{\n.reg .pred %p<9>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<9>;\n.reg .f32 %f<9>;\n\
             .shared .align 4 .b8 s[4096];\n{body}\n}}\n.file 1 \"<input>\"\n"
        )
    }

    fn run_block(listing: &str, block: [u32; 3], params: &[Option<u64>]) -> Run {
        run_merged(listing, block, params, &[])
    }

    fn run_merged(
        listing: &str,
        block: [u32; 3],
        params: &[Option<u64>],
        sass: &[SharedSite],
    ) -> Run {
        let launch = Launch {
            block,
            params,
            bank: BankConfig::default(),
            reuse_loads: true,
        };
        run(&read(listing), "_Z1kPfi", &launch, sass).expect("the kernel")
    }

    /// (executions, wavefronts, ideal, data-dependent, shifted) of each instruction.
    fn figures(run: &Run) -> Vec<(u64, u64, u64, u64, u64)> {
        run.instructions
            .iter()
            .map(|i| {
                (
                    i.executions,
                    i.wavefronts,
                    i.ideal_wavefronts,
                    i.data_dependent,
                    i.shifted,
                )
            })
            .collect()
    }

    #[test]
    fn a_column_access_is_costed_lane_by_lane() {
        // s[tid][0] as a 32x32 float tile: every lane in bank 0.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nmov.u32 %r3, s;\n\
             add.s32 %r4, %r3, %r2;\n.loc 1 7 5\nld.shared.f32 %f1, [%r4];\nret;",
        );
        let run = run_block(&listing, [64, 1, 1], &[]);
        assert_eq!(figures(&run), [(2, 64, 2, 0, 0)]);
        assert_eq!(run.instructions[0].loc.line, 7);
        assert!(run.gaps.is_empty());
    }

    #[test]
    fn a_parameter_not_given_shifts_every_lane_alike_and_data_is_not_simulated() {
        // s[tid + n]: simulated with n as 0; s[in[tid]]: data.
        let listing = kernel(
            "ld.param.u32 %r9, [_Z1kPfi_param_1];\nld.param.u64 %rd1, [_Z1kPfi_param_0];\n\
             mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, %r9;\nshl.b32 %r3, %r2, 2;\n\
             mov.u32 %r4, s;\nadd.s32 %r5, %r4, %r3;\nst.shared.f32 [%r5], %f1;\n\
             mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nld.global.u32 %r6, [%rd3];\n\
             shl.b32 %r7, %r6, 2;\nadd.s32 %r8, %r4, %r7;\nld.shared.f32 %f2, [%r8];\nret;",
        );
        let run = run_block(&listing, [32, 1, 1], &[]);
        assert_eq!(figures(&run), [(1, 1, 1, 0, 1), (0, 0, 0, 1, 0)]);
        // Given, n is exact: s[tid + 1].
        let given = run_block(&listing, [32, 1, 1], &[None, Some(1)]);
        assert_eq!(figures(&given)[0], (1, 1, 1, 0, 0));
    }

    #[test]
    fn a_loop_of_unknown_trip_count_runs_once_and_a_known_one_runs_out() {
        // for (i = 0; i < bound; ++i) s[tid] = …, bound = n, or 3.
        let body = |bound: &str| {
            kernel(&format!(
                "ld.param.u32 %r9, [_Z1kPfi_param_1];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n\
                 mov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\nmov.u32 %r5, 0;\n$L__loop:\n\
                 st.shared.f32 [%r4], %f1;\nadd.s32 %r5, %r5, 1;\nsetp.lt.s32 %p1, %r5, {bound};\n\
                 @%p1 bra $L__loop;\nret;"
            ))
        };
        let unknown = run_block(&body("%r9"), [32, 1, 1], &[]);
        assert_eq!(figures(&unknown), [(1, 1, 1, 0, 0)]);
        assert_eq!(unknown.gaps, [Gap::AssumedBranches(32)]);
        let known = run_block(&body("3"), [32, 1, 1], &[]);
        assert_eq!(figures(&known), [(3, 3, 3, 0, 0)]);
        assert!(known.gaps.is_empty());
    }

    #[test]
    fn values_stored_to_shared_memory_are_read_back_across_a_barrier() {
        // idx[tid] = 31 - tid; sync; s[idx[tid] * 32]: a 32-way column again.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\n\
             sub.s32 %r5, 31, %r1;\nst.shared.u32 [%r4+2048], %r5;\nbar.sync 0;\n\
             ld.shared.u32 %r6, [%r4+2048];\nshl.b32 %r7, %r6, 7;\nadd.s32 %r8, %r3, %r7;\n\
             ld.shared.f32 %f1, [%r8];\nret;",
        );
        let run = run_block(&listing, [32, 1, 1], &[]);
        assert_eq!(
            figures(&run),
            [(1, 1, 1, 0, 0), (1, 1, 1, 0, 0), (1, 32, 1, 0, 0)]
        );
    }

    #[test]
    fn accesses_ptxas_merged_are_one_wider_access() {
        // s[2t] and s[2t + 1]: 2-way each as scalars, one conflict-free LDS.64 merged.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 3;\nmov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\n\
             .loc 1 9 5\nld.shared.f32 %f1, [%r4];\nld.shared.f32 %f2, [%r4+4];\nret;",
        );
        let scalar = run_block(&listing, [32, 1, 1], &[]);
        assert_eq!(figures(&scalar), [(1, 2, 1, 0, 0), (1, 2, 1, 0, 0)]);
        let site = |offset, bytes| SharedSite {
            file: "<input>".to_string(),
            line: 9,
            store: false,
            bytes,
            base: "R4".to_string(),
            offset,
            block: 0,
        };
        let merged = run_merged(&listing, [32, 1, 1], &[], &[site(0, 8)]);
        assert_eq!(figures(&merged), [(1, 2, 2, 0, 0)]);
        assert_eq!(merged.instructions[0].bytes, 8);
        // SASS of other bytes, or from other lines, merges nothing.
        let other = run_merged(&listing, [32, 1, 1], &[], &[site(0, 4), site(4, 4)]);
        assert_eq!(figures(&other), figures(&scalar));
        let elsewhere = SharedSite {
            line: 10,
            ..site(0, 8)
        };
        let unrelated = run_merged(&listing, [32, 1, 1], &[], &[elsewhere]);
        assert_eq!(figures(&unrelated), figures(&scalar));
    }

    #[test]
    fn a_thread_reuses_a_value_it_loaded_until_a_shared_store_or_a_barrier() {
        // s[tid * 32] loaded in two iterations of a loop NVVM left rolled, then again after
        // a store, then volatile, then after a barrier: the second load is the first's.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nmov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\n\
             mov.u32 %r5, 0;\n$L__loop:\nld.shared.f32 %f1, [%r4];\nadd.s32 %r5, %r5, 1;\n\
             setp.lt.s32 %p1, %r5, 2;\n@%p1 bra $L__loop;\nst.shared.f32 [%r4+4], %f1;\n\
             ld.shared.f32 %f2, [%r4];\nld.volatile.shared.f32 %f3, [%r4];\nbar.sync 0;\n\
             ld.shared.f32 %f4, [%r4];\nret;",
        );
        let run = run_block(&listing, [32, 1, 1], &[]);
        let executions: Vec<u64> = run.instructions.iter().map(|i| i.executions).collect();
        assert_eq!(executions, [1, 1, 1, 1, 1]);
        assert_eq!(run.instructions[0].wavefronts, 32);
    }

    #[test]
    fn mangled_listings_are_read_and_run_without_a_panic() {
        // nvcc writes the PTX, but a truncated file or another compiler's dialect must not
        // stop `check`: cut, repeat and swap lines and characters of a listing and run it.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nmov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\n\
             $L__loop:\nld.shared.v4.f32 {%f1, %f2, %f5, %f6}, [%r4+-4];\nst.shared.v2.u32 [%r4+-4], {%r1, %r2};\nbfi.b32 %r6, %r1, %r2, 3, 40;\n\
             prmt.b32 %r7, %r6, %r1, 0x7654;\nshr.s32 %r8, %r7, 99;\ndiv.s32 %r9, %r8, %r5;\n\
             setp.lt.and.s32 %p1|%p2, %r5, %r9, !%p3;\nst.shared.u8 [%r9], %r1;\n\
             atom.shared.add.u32 %r10, [%r4], 1;\n@%p1 bra $L__loop;\nbar.sync 0;\nret;",
        );
        let lines: Vec<&str> = listing.lines().collect();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..300 {
            let mut mangled: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..rng.usize(1..4) {
                let at = rng.usize(..mangled.len());
                match rng.u8(..4) {
                    0 => {
                        mangled.remove(at);
                    }
                    1 => mangled.insert(at, mangled[at].clone()),
                    2 => {
                        let other = rng.usize(..mangled.len());
                        mangled.swap(at, other);
                    }
                    _ => {
                        let line = &mut mangled[at];
                        let cut: String = line.chars().take(rng.usize(..=line.len())).collect();
                        *line = cut;
                    }
                }
                if mangled.is_empty() {
                    break;
                }
            }
            let text = mangled.join("\n");
            let module = read(&text);
            for name in kernels(&module).map(str::to_string).collect::<Vec<_>>() {
                let launch = Launch {
                    block: [64, 1, 1],
                    params: &[],
                    bank: BankConfig::default(),
                    reuse_loads: true,
                };
                let _ = run(&module, &name, &launch, &[]);
            }
        }
    }

    #[test]
    fn a_block_larger_than_cuda_allows_is_not_run() {
        let listing = kernel("mov.u32 %r1, %tid.x;\nret;");
        let run = run_block(&listing, [1024, 1024, 1], &[]);
        assert!(run.instructions.is_empty());
        assert_eq!(run.gaps, [Gap::TooManyThreads(1 << 20)]);
    }

    #[test]
    fn a_call_that_was_not_inlined_is_named() {
        let listing = kernel("call.uni (retval0), _Z6helperv, ();\nret;");
        let run = run_block(&listing, [32, 1, 1], &[]);
        assert!(run.instructions.is_empty());
        assert_eq!(run.gaps, [Gap::Calls("_Z6helperv".to_string())]);
    }

    #[test]
    fn bit_field_byte_permute_and_logical_not_compute_as_ptx_defines_them() {
        // bfi: tid's low 2 bits at bit 4 of 0xff00; prmt 0x3240: byte 0 of the first, byte 0
        // of the second (tid) as byte 1, zeros; cnot: 1 for lane 0.
        let listing = kernel(
            "mov.u32 %r1, %tid.x;\nbfi.b32 %r2, %r1, 65280, 4, 2;\nprmt.b32 %r3, %r2, %r1, 12864;\n\
             cnot.b32 %r4, %r1;\nadd.s32 %r5, %r3, %r4;\nmov.u32 %r6, s;\nshl.b32 %r7, %r5, 2;\n\
             add.s32 %r8, %r6, %r7;\nst.shared.u32 [%r8], %r1;\nret;",
        );
        // Lane t stores word 256t + 16(t mod 4) + (t == 0): banks 1, 16, 0, 16, 0, 16, 0, 16,
        // four distinct words in bank 16.
        let run = run_block(&listing, [8, 1, 1], &[]);
        assert_eq!(figures(&run), [(1, 4, 1, 0, 0)]);
    }
}
