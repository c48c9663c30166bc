//! The execution oracle of issue 4 ("Independent check"): every testdata kernel is compiled
//! with g++ against an emulation of the CUDA execution model (`tests/oracle/`), one block runs
//! with one fiber per CUDA thread, and every shared-memory access it makes is recorded.
//! Grouped into warp requests and costed by the bank model, those accesses must give exactly
//! the excess wavefronts `bankwise check` reports: per kernel, and per source line and kind.
//! `tests/oracle/README.md` says how the emulation works and what each kernel runs with.
//!
//! The same emulation checks `bankwise fix` (issue 6): every kernel of every file that `fix`
//! changes runs before and after on the same seeded buffers, which must end identical bit for
//! bit, and each rewritten array's measured excess wavefronts must be `fix`'s prediction.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bankwise::bank::{simulate, BankConfig, Request};
#[allow(dead_code)]
mod common;
use common::declared_extents;
use serde_json::Value;

/// A testdata file, the bankwise flags it needs, and how each of its kernels is launched.
struct Case {
    path: &'static str,
    flags: &'static [&'static str],
    launches: &'static [Launch],
}

/// One kernel run on block 0.
struct Launch {
    /// bankwise's name of the kernel (also its name in the generated launch table).
    kernel: &'static str,
    /// Device functions with shared arrays that the kernel calls: bankwise reports them as
    /// kernels of their own, and their accesses happen in this run.
    callees: &'static [&'static str],
    /// The C++ call every thread makes. Pointer arguments are `bankwise::buffer(i)`, 4 MiB
    /// seeded with `i`; integer arguments are what bankwise assumes (0) unless noted.
    call: &'static str,
}

const fn launch(kernel: &'static str, call: &'static str) -> Launch {
    Launch {
        kernel,
        callees: &[],
        call,
    }
}

const CASES: &[Case] = &[
    Case {
        path: "testdata/atomics.cu",
        flags: &[],
        // bankwise cannot follow the grid-stride loop and counts its body once, every lane
        // active: n = 256 runs it once per thread.
        launches: &[launch(
            "warpStats",
            "warpStats(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 256)",
        )],
    },
    Case {
        path: "testdata/block_hints.cu",
        flags: &["--block", "mystery=32x4"],
        launches: &[
            launch("lbReverse", "lbReverse(bankwise::buffer(0))"),
            launch("hintedTile", "hintedTile(bankwise::buffer(0))"),
            launch("mystery", "mystery(bankwise::buffer(0))"),
        ],
    },
    Case {
        path: "testdata/block_shapes.cu",
        flags: &[],
        launches: &[
            launch("rowScale", "rowScale(bankwise::buffer(0), 0)"),
            launch("vecNorm", "vecNorm(bankwise::buffer(0))"),
            launch("tile16", "tile16(bankwise::buffer(0), 0)"),
        ],
    },
    Case {
        path: "testdata/const_sizes.cu",
        flags: &[],
        launches: &[launch(
            "stencilConst",
            "stencilConst(bankwise::buffer(0), bankwise::buffer(1), 0)",
        )],
    },
    Case {
        path: "testdata/conv1d.cu",
        flags: &[],
        launches: &[launch(
            "conv1d",
            "conv1d(bankwise::buffer(0), bankwise::buffer(1), 0)",
        )],
    },
    Case {
        path: "testdata/device_helper.cu",
        flags: &[],
        launches: &[Launch {
            kernel: "normalize",
            callees: &["blockSumHelper"],
            call: "normalize(bankwise::buffer(0), 0)",
        }],
    },
    Case {
        path: "testdata/escapes.cu",
        flags: &[],
        launches: &[launch(
            "escapeMix",
            "escapeMix(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/pointers.cu",
        flags: &[],
        launches: &[
            launch(
                "pointerMix",
                "pointerMix(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "reduceDynamic",
                "reduceDynamic(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/escapes_asm.cu",
        flags: &[],
        launches: &[launch(
            "castAsmMacro",
            "castAsmMacro(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/extern_dynamic.cu",
        flags: &[],
        launches: &[
            launch(
                "dotPartial",
                "dotPartial(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 0)",
            ),
            launch(
                "scaleRows",
                "scaleRows(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/fwt.cu",
        flags: &[],
        launches: &[launch("fwtRadix4", "fwtRadix4(bankwise::buffer(0))")],
    },
    Case {
        path: "testdata/grammar_edge.cu",
        flags: &[],
        launches: &[launch(
            "edgeKernel",
            "edgeKernel(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/grammar_lambda.cu",
        flags: &[],
        launches: &[
            launch(
                "lambdaInKernel",
                "lambdaInKernel(bankwise::buffer(0), 0.5f)",
            ),
            launch(
                "applyKernel",
                "applyKernel(bankwise::buffer(0), [](int i) { return i + 3.0f; })",
            ),
        ],
    },
    Case {
        path: "testdata/histogram.cu",
        flags: &[],
        // n > 0 so that the data-dependent atomics run (16 and 4 grid-stride iterations).
        launches: &[
            launch(
                "histBlock",
                "histBlock(bankwise::buffer(0), 4096, bankwise::buffer(1))",
            ),
            launch(
                "histPerWarp",
                "histPerWarp(bankwise::buffer(0), 768, bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/loop_carried.cu",
        flags: &[],
        launches: &[
            launch(
                "ringWrite",
                "ringWrite(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "ringStride",
                "ringStride(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "waveletLevels",
                "waveletLevels(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "halvingStride",
                "halvingStride(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/macro_sizes.cu",
        flags: &[],
        launches: &[launch(
            "macroTiles",
            "macroTiles(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/multi_decl.cu",
        flags: &[],
        launches: &[launch(
            "multiDecl",
            "multiDecl(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), \
             bankwise::buffer(3))",
        )],
    },
    Case {
        path: "testdata/multi_decl_tiles.cu",
        flags: &[],
        launches: &[launch(
            "complexTranspose",
            "complexTranspose(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), \
             bankwise::buffer(3))",
        )],
    },
    Case {
        path: "testdata/needle.cu",
        flags: &["-D", "BLOCK_SIZE=16"],
        launches: &[launch(
            "needleTile",
            "needleTile(bankwise::buffer(0), bankwise::buffer(1), 97, 10)",
        )],
    },
    Case {
        path: "testdata/no_shared.cu",
        flags: &[],
        launches: &[
            launch(
                "saxpy",
                "saxpy(0, 2.0f, bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "smooth4",
                "smooth4(bankwise::buffer(0), bankwise::buffer(1), 0)",
            ),
        ],
    },
    Case {
        path: "testdata/records.cu",
        flags: &[],
        launches: &[launch(
            "accumulate",
            "accumulate(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/reduction.cu",
        flags: &[],
        launches: &[
            launch(
                "reduceInterleaved",
                "reduceInterleaved(bankwise::buffer(0), bankwise::buffer(1), 0u)",
            ),
            launch(
                "reduceSequential",
                "reduceSequential(bankwise::buffer(0), bankwise::buffer(1), 0u)",
            ),
        ],
    },
    Case {
        path: "testdata/strided.cu",
        flags: &[],
        launches: &[
            launch(
                "pairSum",
                "pairSum(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "colDot",
                "colDot(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2))",
            ),
        ],
    },
    Case {
        path: "testdata/structs.cu",
        flags: &[],
        launches: &[launch(
            "nbodyStep",
            "nbodyStep(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 0.01f)",
        )],
    },
    Case {
        path: "testdata/subword.cu",
        flags: &[],
        launches: &[
            launch(
                "splitPlanes",
                "splitPlanes(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "transposeShort",
                "transposeShort(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/template_depth.cu",
        flags: &[],
        launches: &[launch(
            "batchedTransposeDepth<4>",
            "batchedTransposeDepth<4>(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/specifier_macros.cu",
        flags: &[],
        launches: &[
            launch(
                "raftTranspose",
                "raftTranspose(bankwise::buffer(0), bankwise::buffer(1), 64)",
            ),
            launch(
                "ggmlColumns",
                "ggmlColumns(bankwise::buffer(0), bankwise::buffer(1), 64)",
            ),
            launch("tcnnScale", "tcnnScale(bankwise::buffer(0), Scale{2.0f})"),
        ],
    },
    Case {
        path: "testdata/template_helpers.cu",
        flags: &[],
        launches: &[
            launch(
                "gemmTiles",
                "gemmTiles(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 128)",
            ),
            launch(
                "gemmTilesScoped",
                "gemmTilesScoped(bankwise::buffer(0), bankwise::buffer(1), 128)",
            ),
        ],
    },
    Case {
        path: "testdata/template_sizes.cu",
        flags: &[],
        launches: &[
            launch("tileSum<16>", "tileSum<16>(bankwise::buffer(0))"),
            launch(
                "scan<64>",
                "scan<64>(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/template_unresolved.cu",
        flags: &["-D", "BS=128"],
        launches: &[
            launch(
                "blockSum<128>",
                "blockSum<128>(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "fixedSum",
                "fixedSum(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/transpose.cu",
        flags: &[],
        launches: &[launch(
            "transposeCoalesced",
            "transposeCoalesced(bankwise::buffer(0), bankwise::buffer(1), 0, 0)",
        )],
    },
    Case {
        path: "testdata/transpose3d.cu",
        flags: &[],
        launches: &[launch(
            "batchedTranspose8x32",
            "batchedTranspose8x32(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/vector_types.cu",
        flags: &[],
        launches: &[launch(
            "vectorMix",
            "vectorMix(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), \
             bankwise::buffer(3))",
        )],
    },
    Case {
        path: "testdata/vector_views.cu",
        flags: &[],
        launches: &[
            launch(
                "vecTileGemm",
                "vecTileGemm(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2))",
            ),
            launch(
                "vecTranspose",
                "vecTranspose(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "vecPairs",
                "vecPairs(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/suite/backprop.cu",
        flags: &[],
        launches: &[launch(
            "layerForward",
            "layerForward(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 0)",
        )],
    },
    Case {
        path: "testdata/suite/conv.cu",
        flags: &[],
        launches: &[
            launch(
                "convRows",
                "convRows(bankwise::buffer(0), bankwise::buffer(1), 0, 0)",
            ),
            launch(
                "convColumns",
                "convColumns(bankwise::buffer(0), bankwise::buffer(1), 0, 0)",
            ),
        ],
    },
    Case {
        path: "testdata/suite/dct8x8.cu",
        flags: &[],
        launches: &[
            launch(
                "dct8x8Forward",
                "dct8x8Forward(bankwise::buffer(0), bankwise::buffer(1), 0)",
            ),
            launch(
                "dct8x8Inverse",
                "dct8x8Inverse(bankwise::buffer(0), bankwise::buffer(1), 0)",
            ),
        ],
    },
    Case {
        path: "testdata/suite/dwtHaar1D.cu",
        flags: &[],
        launches: &[launch(
            "haarDecompose",
            "haarDecompose(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2))",
        )],
    },
    Case {
        path: "testdata/suite/fft.cu",
        flags: &[],
        launches: &[
            launch("fftStockham512", "fftStockham512(bankwise::buffer(0))"),
            launch("fftTwiddle", "fftTwiddle(bankwise::buffer(0), 1)"),
        ],
    },
    Case {
        path: "testdata/suite/fwt.cu",
        flags: &[],
        launches: &[launch(
            "fwtVector2048",
            "fwtVector2048(bankwise::buffer(0))",
        )],
    },
    Case {
        path: "testdata/suite/histogram256.cu",
        flags: &[],
        // n = 4096 seeded bytes: 16 grid-stride iterations per thread.
        launches: &[launch(
            "histogram256",
            "histogram256(bankwise::buffer(0), 4096, bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/suite/histogram64.cu",
        flags: &[],
        launches: &[launch(
            "histogram64",
            "histogram64(bankwise::buffer(0), 4096, bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/suite/hotspot.cu",
        flags: &[],
        launches: &[launch(
            "hotspotSteps",
            "hotspotSteps(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 0, \
             0.5f, 0.1f, 0.1f, 0.01f, 80.0f)",
        )],
    },
    Case {
        path: "testdata/suite/lavaMD.cu",
        flags: &[],
        // dim = 1 keeps the reads inside the buffers; no neighbours: the home box only.
        launches: &[launch(
            "lavaMDForces",
            "lavaMDForces(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 1, 0)",
        )],
    },
    Case {
        path: "testdata/suite/lud.cu",
        flags: &[],
        launches: &[
            launch("ludDiagonal", "ludDiagonal(bankwise::buffer(0), 0, 0)"),
            launch("ludPerimeter", "ludPerimeter(bankwise::buffer(0), 0, 0)"),
        ],
    },
    Case {
        path: "testdata/suite/matrix_multiply.cu",
        flags: &[],
        // k = 8: one step of the k loop.
        launches: &[launch(
            "sgemmRegisterTiled",
            "sgemmRegisterTiled(bankwise::buffer(0), 0, bankwise::buffer(1), 0, \
             bankwise::buffer(2), 0, 8)",
        )],
    },
    Case {
        path: "testdata/suite/matrix_scan.cu",
        flags: &[],
        launches: &[launch(
            "matrixScan",
            "matrixScan(bankwise::buffer(0), bankwise::buffer(1))",
        )],
    },
    Case {
        path: "testdata/suite/mri_gridding.cu",
        flags: &[],
        launches: &[
            launch(
                "mriScanCounts",
                "mriScanCounts(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "mriBinSamples",
                "mriBinSamples(bankwise::buffer(0), bankwise::buffer(1))",
            ),
            launch(
                "mriWeightSamples",
                "mriWeightSamples(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), \
                 bankwise::buffer(3))",
            ),
            launch(
                "mriGatherRecords",
                "mriGatherRecords(bankwise::buffer(0), bankwise::buffer(1))",
            ),
        ],
    },
    Case {
        path: "testdata/suite/nw.cu",
        flags: &[],
        launches: &[
            launch(
                "nwUpperLeft",
                "nwUpperLeft(bankwise::buffer(0), bankwise::buffer(1), 0, 10, 1)",
            ),
            launch(
                "nwLowerRight",
                "nwLowerRight(bankwise::buffer(0), bankwise::buffer(1), 0, 10, 1, 1)",
            ),
        ],
    },
    Case {
        path: "testdata/suite/reduction.cu",
        flags: &[],
        launches: &[launch(
            "reducePairsInterleaved",
            "reducePairsInterleaved(bankwise::buffer(0), bankwise::buffer(1), 0u)",
        )],
    },
    Case {
        path: "testdata/suite/scalar_product.cu",
        flags: &[],
        launches: &[launch(
            "scalarProduct",
            "scalarProduct(bankwise::buffer(0), bankwise::buffer(1), bankwise::buffer(2), 0)",
        )],
    },
    Case {
        path: "testdata/suite/srad.cu",
        flags: &[],
        launches: &[launch(
            "sradCoefficients",
            "sradCoefficients(bankwise::buffer(0), bankwise::buffer(1), 0, 0, 0.05f)",
        )],
    },
    Case {
        path: "testdata/suite/transpose.cu",
        flags: &[],
        launches: &[launch(
            "transposeTile16",
            "transposeTile16(bankwise::buffer(0), bankwise::buffer(1), 0, 0)",
        )],
    },
    Case {
        path: "testdata/config/tiled.cu",
        flags: &[],
        launches: &[launch(
            "tiledCopy",
            "tiledCopy(bankwise::buffer(0), bankwise::buffer(1), 0)",
        )],
    },
];

/// A kernel left out of the exact comparison, in every bank model or in one.
struct Exclusion {
    kernel: &'static str,
    /// The model's `check` flags (`"--banks 16"`), or None for every model.
    model: Option<&'static str>,
    reason: &'static str,
}

/// Kernels left out of the exact comparison, each with the reason and what the oracle
/// measures (with 32 banks of 4 bytes). The test checks that they still differ, so that a fix
/// elsewhere also removes the entry here.
const EXCLUDED: &[Exclusion] = &[
    Exclusion {
        kernel: "histBlock",
        model: None,
        reason: "data-dependent: `atomicAdd(&hist[bin], 1)` with bins read from memory (issue 4 \
                 compares non-atomic kernels only); the oracle, n = 4096 seeded bytes: line 32, \
                 412 wavefronts, 284 excess",
    },
    Exclusion {
        kernel: "histPerWarp",
        model: None,
        reason: "data-dependent: atomics through the pointer `s_WarpHist = s_Hist + warp *                  BINS` with bins read from memory; the oracle, n = 768 seeded words: line 52,                  300 wavefronts, 204 excess",
    },
    Exclusion {
        kernel: "histogram64",
        model: None,
        reason: "data-dependent: `atomicAdd(&votes[copy * BINS + bin], 1u)` with bins read from \
                 memory; the oracle, n = 4096 seeded bytes: line 39, 456 wavefronts, 328 excess",
    },
    Exclusion {
        kernel: "histogram256",
        model: None,
        reason: "data-dependent: `atomicAdd(&votes[copy * BINS + bin], 1u)` with bins read from \
                 memory; the oracle, n = 4096 seeded bytes: line 39, 460 wavefronts, 332 excess",
    },
    Exclusion {
        kernel: "warpStats",
        model: Some("--banks 16"),
        reason: "cost.rs counts a lane whose condition is data-dependent as active, an upper \
                 bound by design: under `if (lane == s_owner[warp])` (line 52) bankwise has all \
                 lanes and two half-warp phases, 16 wavefronts for `s_sum[warp]` and for \
                 `s_max[warp]`, where the one owner lane per warp needs 8; the excess agrees (0)",
    },
];

/// Kernels whose accesses bankwise cannot simulate (data-dependent bins) and whose warp
/// requests the oracle records for `bankwise bench` to score the hash families on (TC 2016's
/// "Trace" method): the file beside the kernel's source must hold what this run records;
/// `BANKWISE_WRITE_TRACES=1` rewrites it.
const TRACES: &[(&str, &str)] = &[
    ("histogram64", "testdata/suite/histogram64.trace"),
    ("histogram256", "testdata/suite/histogram256.trace"),
];

/// The trace of `kernel`: every warp request (32 bank model, per barrier interval) at a place
/// bankwise reports as not simulated, one per line as `KERNEL LINE KIND ARRAY` and each lane's
/// element index (`-`: inactive), ordered by place, warp, interval and execution.
fn trace_text(
    kernel: &str,
    records: &[Record],
    arrays: &[ProgramArray],
    lines: &BTreeMap<u64, u64>,
    reported: &ByPlace,
) -> String {
    let mut executions: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    let mut requests: BTreeMap<(Place, u64, u64, u64), Vec<Option<u64>>> = BTreeMap::new();
    for record in records {
        let count = executions
            .entry((record.site, record.thread, record.epoch))
            .or_insert(0);
        let k = *count;
        *count += 1;
        let line = lines.get(&record.site).copied().unwrap_or(0);
        let place = (line, record.kind, arrays[record.array].name.clone());
        if reported.get(&place) != Some(&None) {
            continue;
        }
        let lanes = requests
            .entry((place, record.thread / 32, record.epoch, k))
            .or_insert_with(|| vec![None; 32]);
        lanes[(record.thread % 32) as usize] = Some(record.offset / u64::from(record.bytes));
    }
    let mut text = format!(
        "# Warp requests of `{kernel}` that bankwise cannot simulate, recorded by the execution\n\
         # oracle (tests/oracle.rs) on its seeded buffers; `bankwise bench` scores the hash\n\
         # families on them. Per line: kernel, source line, kind, array, then each lane's\n\
         # element index (`-`: inactive).\n"
    );
    for ((place, _, _, _), lanes) in &requests {
        let (line, kind, array) = place;
        let _ = write!(text, "{kernel} {line} {kind} {array}");
        for lane in lanes {
            match lane {
                Some(index) => {
                    let _ = write!(text, " {index}");
                }
                None => text.push_str(" -"),
            }
        }
        text.push('\n');
    }
    text
}

/// Compares `kernel`'s trace file with this run's, or writes it when asked to.
fn check_trace(path: &str, text: &str) -> Result<(), String> {
    if std::env::var_os("BANKWISE_WRITE_TRACES").is_some() {
        return std::fs::write(path, text).map_err(|e| format!("{path}: {e}"));
    }
    let on_disk = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    if on_disk != text {
        return Err(format!(
            "{path} is not what the oracle records; rewrite it with \
             BANKWISE_WRITE_TRACES=1 cargo test --test oracle"
        ));
    }
    Ok(())
}

/// The driver's letter for an access kind, spelled as in bankwise's JSON.
fn kind_name(kind: &str) -> &'static str {
    match kind {
        "L" => "load",
        "S" => "store",
        _ => "atomic",
    }
}

/// Wavefront figures, summed over warp requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Figures {
    wavefronts: u64,
    ideal: u64,
    excess: u64,
}

impl Figures {
    fn add(&mut self, other: Figures) {
        self.wavefronts += other.wavefronts;
        self.ideal += other.ideal;
        self.excess += other.excess;
    }
}

/// Where accesses are compared: source line, kind (`load`, `store`, `atomic`) and array.
type Place = (u64, &'static str, String);

/// Figures per place, summed over its accesses; None where bankwise could not simulate one.
type ByPlace = BTreeMap<Place, Option<Figures>>;

fn add_to(places: &mut ByPlace, place: Place, figures: Option<Figures>) {
    let sum = places.entry(place).or_insert(Some(Figures::default()));
    *sum = match (*sum, figures) {
        (Some(mut sum), Some(more)) => {
            sum.add(more);
            Some(sum)
        }
        _ => None,
    };
}

/// bankwise's view of one kernel.
#[derive(Clone)]
struct Reported {
    block: [u64; 3],
    places: ByPlace,
    /// The names of its `extern __shared__` arrays: the oracle sees them as one buffer.
    extern_arrays: Vec<String>,
    /// The bytes of dynamic shared memory its launches give it (what a guard of `fix` reads).
    dynamic_bytes: u64,
}

fn run(command: &mut Command) -> Result<String, String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command.output().map_err(|error| {
        format!(
            "cannot run `{program}` ({error}): the execution oracle needs g++ and binutils \
                 (nm, c++filt, addr2line) on PATH"
        )
    })?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("{program} printed non-UTF-8: {e}"))
}

/// A bank model: its `check` flags and its configuration.
struct Model {
    flags: &'static [&'static str],
    config: BankConfig,
}

/// The models compared: today's GPUs, Tesla's 16 banks (half-warp phases), Kepler's 8-byte
/// bank words.
const MODELS: &[Model] = &[
    Model {
        flags: &[],
        config: BankConfig {
            banks: 32,
            bank_width: 4,
            warp: 32,
        },
    },
    Model {
        flags: &["--banks", "16"],
        config: BankConfig {
            banks: 16,
            bank_width: 4,
            warp: 32,
        },
    },
    Model {
        flags: &["--bank-width", "8"],
        config: BankConfig {
            banks: 32,
            bank_width: 8,
            warp: 32,
        },
    },
];

fn bankwise_report(case: &Case, model: &Model) -> Result<BTreeMap<String, Reported>, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
    command
        .args(["check", "--format", "json"])
        .args(case.flags)
        .args(model.flags)
        .arg(case.path);
    let json: Value = serde_json::from_str(&run(&mut command)?)
        .map_err(|e| format!("{}: check printed no JSON: {e}", case.path))?;
    let mut kernels = BTreeMap::new();
    for kernel in json["files"][0]["kernels"].as_array().into_iter().flatten() {
        let name = kernel["name"].as_str().unwrap_or_default().to_string();
        let mut block = [0; 3];
        for (axis, value) in block
            .iter_mut()
            .zip(kernel["block"].as_array().into_iter().flatten())
        {
            *axis = value.as_u64().unwrap_or(0);
        }
        let mut reported = Reported {
            block,
            places: ByPlace::new(),
            extern_arrays: Vec::new(),
            dynamic_bytes: 0,
        };
        for array in kernel["arrays"].as_array().into_iter().flatten() {
            let array_name = array["name"].as_str().unwrap_or_default().to_string();
            if array["extern"] == true {
                reported.extern_arrays.push(array_name.clone());
                let bytes = array["bytes"].as_u64().unwrap_or(0);
                reported.dynamic_bytes = reported.dynamic_bytes.max(bytes);
            }
            for access in array["accesses"].as_array().into_iter().flatten() {
                let kind = match access["kind"].as_str() {
                    Some("load") => "load",
                    Some("store") => "store",
                    _ => "atomic",
                };
                let figures = (|| {
                    Some(Figures {
                        wavefronts: access["wavefronts"].as_u64()?,
                        ideal: access["ideal_wavefronts"].as_u64()?,
                        excess: access["excess_wavefronts"].as_u64()?,
                    })
                })();
                let line = access["line"].as_u64().unwrap_or(0);
                add_to(
                    &mut reported.places,
                    (line, kind, array_name.clone()),
                    figures,
                );
            }
        }
        kernels.insert(name, reported);
    }
    Ok(kernels)
}

/// The testdata file as g++ sees it: host code from `int main(` on is cut (launches are not
/// C++), inline PTX is blanked, and `extern __shared__` becomes a plain `extern` (the link
/// points those names at the driver's dynamic buffer). Lines keep their numbers.
fn emulated_source(text: &str) -> (String, Vec<String>) {
    let mut source = match text.find("\nint main(") {
        Some(at) => text[..at + 1].to_string(),
        None => text.to_string(),
    };
    // The guard `fix` writes for an `extern` array reads the launch's dynamic shared memory.
    source = source.replace(
        "asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(bankwise_bytes))",
        "bankwise_bytes = bankwise_dynamic_shared_bytes()",
    );
    while let Some(start) = inline_asm(&source) {
        let end = statement_end(&source, start);
        let blank: String = source[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        source.replace_range(start..end, &blank);
    }
    let mut externs = Vec::new();
    while let Some(start) = source.find("extern __shared__") {
        source.replace_range(start..start + "extern __shared__".len(), "extern");
        let declaration = &source[start..statement_end(&source, start)];
        if let Some(bracket) = declaration.rfind('[') {
            let name: String = declaration[..bracket]
                .trim_end()
                .chars()
                .rev()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            externs.push(name.chars().rev().collect());
        }
    }
    (source, externs)
}

/// Where the first statement that starts with `asm` is (comments may mention one too).
fn inline_asm(source: &str) -> Option<usize> {
    let mut start = 0;
    for line in source.split_inclusive('\n') {
        let code = line.trim_start();
        if code.starts_with("asm ") || code.starts_with("asm(") {
            return Some(start + line.len() - code.len());
        }
        start += line.len();
    }
    None
}

/// The byte after the `;` that ends the statement starting at `start`, outside parentheses.
fn statement_end(source: &str, start: usize) -> usize {
    let mut depth = 0i32;
    for (offset, byte) in source[start..].bytes().enumerate() {
        match byte {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b';' if depth == 0 => return start + offset + 1,
            _ => {}
        }
    }
    source.len()
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle")
}

/// The driver object, built once per test run.
fn build_driver(dir: &Path) -> Result<PathBuf, String> {
    let object = dir.join("driver.o");
    run(Command::new("g++")
        .args(["-std=c++17", "-O1", "-c", "-I"])
        .arg(oracle_dir())
        .arg(oracle_dir().join("driver.cpp"))
        .arg("-o")
        .arg(&object))?;
    Ok(object)
}

/// A shared array in the built program: the function-local statics `__shared__` became, and
/// the dynamic buffer that the `extern __shared__` names point at.
struct ProgramArray {
    name: String,
    base: u64,
    size: u64,
}

const DYNAMIC: &str = "bankwise_dynamic_shared";

fn program_arrays(program: &Path) -> Result<Vec<ProgramArray>, String> {
    let symbols = run(Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(program))?;
    let mut arrays = Vec::new();
    let mut mangled = Vec::new();
    for line in symbols.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [base, size, _, name] = fields[..] else {
            continue;
        };
        if !name.starts_with("_ZZ") && name != DYNAMIC {
            continue;
        }
        let hex = |text: &str| u64::from_str_radix(text, 16).map_err(|e| format!("nm: {e}"));
        arrays.push(ProgramArray {
            name: name.to_string(),
            base: hex(base)?,
            size: hex(size)?,
        });
        if name != DYNAMIC {
            mangled.push(name.to_string());
        }
    }
    if !mangled.is_empty() {
        let demangled = run(Command::new("c++filt").args(&mangled))?;
        let mut names = demangled.lines();
        for array in arrays.iter_mut().filter(|a| a.name != DYNAMIC) {
            let full = names.next().unwrap_or_default();
            array.name = full.rsplit("::").next().unwrap_or(full).to_string();
        }
    }
    Ok(arrays)
}

/// Source lines of instruction addresses (return addresses of the hooks' calls), which must
/// all lie in the kernel's file: an access made inside the emulation would be a bug there.
fn source_lines(
    program: &Path,
    sites: &BTreeSet<u64>,
    source: &str,
) -> Result<BTreeMap<u64, u64>, String> {
    let mut lines = BTreeMap::new();
    if sites.is_empty() {
        return Ok(lines);
    }
    let text = run(Command::new("addr2line")
        .arg("-e")
        .arg(program)
        .args(sites.iter().map(|site| format!("{:x}", site - 1))))?;
    for (site, location) in sites.iter().zip(text.lines()) {
        let place = location.split(' ').next().unwrap_or_default();
        let line = place
            .rsplit_once(':')
            .filter(|(file, _)| file.ends_with(source))
            .and_then(|(_, line)| line.parse().ok())
            .ok_or_else(|| format!("a shared access outside {source}: {location}"))?;
        lines.insert(*site, line);
    }
    Ok(lines)
}

/// One recorded access: `site thread array offset bytes kind interval`, where `interval`
/// counts the block barriers passed before it.
struct Record {
    site: u64,
    thread: u64,
    array: usize,
    offset: u64,
    bytes: u32,
    kind: &'static str,
    /// Block barriers passed before the access.
    epoch: u64,
}

fn parse_records(text: &str) -> Result<Vec<Record>, String> {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            let bad = || format!("driver printed `{line}`");
            let [site, thread, array, offset, bytes, kind, epoch] = f[..] else {
                return Err(bad());
            };
            Ok(Record {
                site: u64::from_str_radix(site, 16).map_err(|_| bad())?,
                thread: thread.parse().map_err(|_| bad())?,
                array: array.parse().map_err(|_| bad())?,
                offset: offset.parse().map_err(|_| bad())?,
                bytes: bytes.parse().map_err(|_| bad())?,
                kind: kind_name(kind),
                epoch: epoch.parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// The first shared byte that one warp writes and another warp touches between the same two
/// barriers: a race, whose result the GPU's scheduling decides while this emulation runs the
/// threads in one fixed order, so that a comparison of results before and after `fix` would
/// mean nothing. Atomics are left out (they are ordered by the hardware).
fn first_race(records: &[Record], lines: &BTreeMap<u64, u64>) -> Option<String> {
    #[derive(Clone, Copy)]
    struct Seen {
        written: bool,
        warp: u64,
        site: u64,
        other: Option<u64>,
    }
    let mut bytes: HashMap<(usize, u64, u64), Seen> = HashMap::new();
    for record in records.iter().filter(|r| r.kind != "atomic") {
        let warp = record.thread / 32;
        for byte in record.offset..record.offset + u64::from(record.bytes) {
            let seen = bytes
                .entry((record.array, record.epoch, byte))
                .or_insert(Seen {
                    written: false,
                    warp,
                    site: record.site,
                    other: None,
                });
            seen.written |= record.kind == "store";
            if seen.warp != warp && seen.other.is_none() {
                seen.other = Some(record.site);
            }
            if let (true, Some(other)) = (seen.written, seen.other) {
                let line = |site: &u64| lines.get(site).copied().unwrap_or(0);
                return Some(format!(
                    "two warps touch byte {byte} of shared array {} between the same barriers, \
                     one of them writing it (lines {} and {}): a race",
                    record.array,
                    line(&seen.site),
                    line(&other)
                ));
            }
        }
    }
    None
}

/// Groups the accesses into warp requests (per site, warp and barrier interval, the k-th
/// execution of each lane in it: lanes that skip an iteration, as under `if (tid < offset)`,
/// do not shift the others' iterations when each iteration ends at a barrier)
/// and costs each with the bank model. `dynamic_name` names the dynamic shared buffer.
fn oracle_figures(
    records: &[Record],
    arrays: &[ProgramArray],
    lines: &BTreeMap<u64, u64>,
    dynamic_name: &str,
    config: &BankConfig,
) -> Result<(ByPlace, Figures), String> {
    let warp = u64::from(config.warp);
    let mut executions: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    let mut requests: BTreeMap<(u64, u64, u64, u64), Pending> = BTreeMap::new();
    for record in records {
        let count = executions
            .entry((record.site, record.thread, record.epoch))
            .or_insert(0);
        let k = *count;
        *count += 1;
        let bytes = u64::from(record.bytes);
        if record.offset % bytes != 0 {
            return Err(format!(
                "an access of {bytes} bytes at byte {} of `{}` is not aligned",
                record.offset, arrays[record.array].name
            ));
        }
        let request = requests
            .entry((record.site, record.thread / warp, record.epoch, k))
            .or_insert_with(|| Pending {
                kind: record.kind,
                array: record.array,
                bytes: record.bytes,
                lanes: vec![None; warp as usize],
            });
        if request.array != record.array || request.bytes != record.bytes {
            return Err(format!(
                "one instruction at line {:?} touches different arrays or sizes",
                lines.get(&record.site)
            ));
        }
        request.lanes[(record.thread % warp) as usize] = i64::try_from(record.offset / bytes).ok();
    }
    let mut places = ByPlace::new();
    let mut total = Figures::default();
    for ((site, _, _, _), request) in &requests {
        let cost = simulate(
            config,
            &Request {
                elem_bytes: request.bytes,
                lanes: &request.lanes,
            },
        );
        let figures = Figures {
            wavefronts: u64::from(cost.wavefronts),
            ideal: u64::from(cost.ideal_wavefronts),
            excess: u64::from(cost.excess()),
        };
        total.add(figures);
        let name = &arrays[request.array].name;
        let name = if name == DYNAMIC { dynamic_name } else { name };
        let line = lines.get(site).copied().unwrap_or(0);
        add_to(
            &mut places,
            (line, request.kind, name.to_string()),
            Some(figures),
        );
    }
    Ok((places, total))
}

/// A warp request being assembled: lane `l` holds its element index once it has run.
struct Pending {
    kind: &'static str,
    array: usize,
    bytes: u32,
    lanes: Vec<Option<i64>>,
}

/// The comparison of one kernel, as text, and whether the two sides agree.
struct Verdict {
    kernel: String,
    /// The bank model's `check` flags, empty for the default.
    model: String,
    agrees: bool,
    text: String,
}

fn compare(kernel: &str, reported: &ByPlace, oracle: &ByPlace, oracle_total: Figures) -> Verdict {
    let bankwise_total: Option<u64> = reported.values().map(|f| f.map(|f| f.excess)).sum();
    let mut agrees = bankwise_total == Some(oracle_total.excess);
    let mut text = String::new();
    let show = |f: Option<Figures>| match f {
        Some(f) => format!(
            "{:>4} excess ({:>4} of {:>4} ideal)",
            f.excess, f.wavefronts, f.ideal
        ),
        None => format!("{:<29}", "-"),
    };
    let places: BTreeSet<&Place> = reported.keys().chain(oracle.keys()).collect();
    for place in places {
        let by_bankwise = reported.get(place);
        let by_oracle = oracle.get(place).copied().flatten().unwrap_or_default();
        // Where bankwise reports an access every figure must match; accesses it does not
        // report (shared scalars, aliases it does not follow) must at least cost no excess.
        let (same, note) = match by_bankwise {
            Some(Some(figures)) => (*figures == by_oracle, ""),
            Some(None) => (false, " (not simulated by bankwise)"),
            None => (by_oracle.excess == 0, " (not reported by bankwise)"),
        };
        agrees &= same;
        let (line, kind, array) = place;
        let _ = writeln!(
            text,
            "  {} line {line:>3} {kind:<6} {array:<10} bankwise {}  oracle {}{note}",
            if same { " " } else { "≠" },
            show(by_bankwise.copied().flatten()),
            show(Some(by_oracle)),
        );
    }
    let header = format!(
        "{kernel}: bankwise {} excess wavefronts, oracle {}{}\n",
        bankwise_total.map_or("(not all simulated)".to_string(), |t| t.to_string()),
        oracle_total.excess,
        if agrees { "" } else { "  DISAGREE" },
    );
    Verdict {
        kernel: kernel.to_string(),
        model: String::new(),
        agrees,
        text: header + &text,
    }
}

/// A testdata file compiled against the emulation, and its shared arrays.
struct Program {
    path: PathBuf,
    arrays: Vec<ProgramArray>,
}

/// Compiles `text` (shown as `label` in line information) with one launch per entry of
/// `launches`, as `work/stem`.
fn build_program(
    label: &str,
    text: &str,
    launches: &[Launch],
    work: &Path,
    stem: &str,
    driver: &Path,
    defines: &[&str],
) -> Result<Program, String> {
    let (source, externs) = emulated_source(text);
    let mut unit = format!(
        "#include \"bankwise_cuda.h\"\n#line 1 \"{label}\"\n{source}\n#line 1 \"oracle-launches\"\n\
         extern \"C\" const bankwise::Kernel bankwise_kernels[] = {{\n"
    );
    for launch in launches {
        let _ = writeln!(
            unit,
            "    {{\"{}\", [] {{ {}; }}}},",
            launch.kernel, launch.call
        );
    }
    unit.push_str("    {nullptr, nullptr}};\n");
    let unit_path = work.join(format!("{stem}.cpp"));
    let object = work.join(format!("{stem}.o"));
    let program = work.join(stem);
    std::fs::write(&unit_path, unit).map_err(|e| e.to_string())?;
    run(Command::new("g++")
        .args([
            "-std=c++17",
            "-O0",
            "-g",
            "-w",
            "-fsanitize=thread",
            "-c",
            "-I",
        ])
        .arg(oracle_dir())
        .arg("-I")
        .arg(oracle_dir().join("include"))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(&unit_path)
        .arg("-o")
        .arg(&object))?;
    let mut link = Command::new("g++");
    link.arg("-no-pie")
        .arg(&object)
        .arg(driver)
        .arg("-o")
        .arg(&program);
    for name in &externs {
        link.arg(format!("-Wl,--defsym={name}={DYNAMIC}"));
    }
    run(&mut link)?;
    let arrays = program_arrays(&program)?;
    Ok(Program {
        path: program,
        arrays,
    })
}

/// Runs one kernel on block 0 and returns its shared accesses; with `dump`, the driver also
/// writes every global buffer there.
fn run_launch(
    program: &Program,
    kernel: &str,
    block: [u64; 3],
    dynamic_bytes: u64,
    dump: Option<&Path>,
) -> Result<Vec<Record>, String> {
    let mut command = Command::new(&program.path);
    command.arg(kernel);
    command.args(block.iter().map(u64::to_string));
    command.env("BANKWISE_DYNAMIC_BYTES", dynamic_bytes.to_string());
    command.args(
        program
            .arrays
            .iter()
            .map(|a| format!("{:x}:{:x}", a.base, a.size)),
    );
    if let Some(dump) = dump {
        command.env("BANKWISE_DUMP", dump);
    }
    parse_records(&run(&mut command)?)
}

fn check_case(case: &Case, work: &Path, driver: &Path) -> Result<Vec<Verdict>, String> {
    let text = std::fs::read_to_string(case.path).map_err(|e| format!("{}: {e}", case.path))?;
    let stem = case.path.replace(['/', '.'], "_");
    let program = build_program(case.path, &text, case.launches, work, &stem, driver, &[])?;
    let arrays = &program.arrays;
    let reports = MODELS
        .iter()
        .map(|model| bankwise_report(case, model))
        .collect::<Result<Vec<_>, String>>()?;
    let launched: BTreeSet<&str> = case
        .launches
        .iter()
        .flat_map(|l| std::iter::once(l.kernel).chain(l.callees.iter().copied()))
        .collect();
    if let Some(missed) = reports[0].keys().find(|k| !launched.contains(k.as_str())) {
        return Err(format!("kernel {missed} has no launch in CASES"));
    }
    let mut verdicts = Vec::new();
    for launch in case.launches {
        let bankwise_entry = |report: &BTreeMap<String, Reported>, name: &str| {
            report
                .get(name)
                .cloned()
                .ok_or_else(|| format!("{}: bankwise reports no kernel {name}", case.path))
        };
        let kernel = bankwise_entry(&reports[0], launch.kernel)?;
        let records = run_launch(
            &program,
            launch.kernel,
            kernel.block,
            kernel.dynamic_bytes,
            None,
        )?;
        let sites: BTreeSet<u64> = records.iter().map(|r| r.site).collect();
        let lines = source_lines(&program.path, &sites, case.path)?;
        if let Some(race) = first_race(&records, &lines) {
            return Err(format!("kernel {}: {race}", launch.kernel));
        }
        for (model, report) in MODELS.iter().zip(&reports) {
            let mut reported = bankwise_entry(report, launch.kernel)?;
            for callee in launch.callees {
                let callee = bankwise_entry(report, callee)?;
                reported.places.extend(callee.places);
                reported.extern_arrays.extend(callee.extern_arrays);
                reported.dynamic_bytes = reported.dynamic_bytes.max(callee.dynamic_bytes);
            }
            let dynamic_name = reported.extern_arrays.join("/");
            if model.flags.is_empty() {
                if let Some((_, path)) = TRACES.iter().find(|(k, _)| *k == launch.kernel) {
                    let text =
                        trace_text(launch.kernel, &records, arrays, &lines, &reported.places);
                    check_trace(path, &text)?;
                }
            }
            let (places, total) =
                oracle_figures(&records, arrays, &lines, &dynamic_name, &model.config)?;
            let mut verdict = compare(launch.kernel, &reported.places, &places, total);
            verdict.model = model.flags.join(" ");
            verdict.text = format!("{} [{}] {}", case.path, verdict.model, verdict.text);
            verdicts.push(verdict);
        }
    }
    Ok(verdicts)
}

/// Every testdata file, recursively.
fn testdata_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("testdata is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(testdata_files(&path));
        } else if path.extension().is_some_and(|e| e == "cu") {
            files.push(path.to_string_lossy().into_owned());
        }
    }
    files
}

#[test]
fn every_testdata_file_is_run_by_the_oracle() {
    let mut files = testdata_files(Path::new("testdata"));
    files.sort();
    let mut cases: Vec<String> = CASES.iter().map(|c| c.path.to_string()).collect();
    cases.sort();
    assert_eq!(files, cases);
}

/// `run` on every case, by two workers (the machines that run the suite have two cores), in
/// path order.
fn on_every_case<T: Send>(run: impl Fn(&Case) -> T + Sync) -> Vec<(&'static str, T)> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(case) = CASES.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = run(case);
                    results
                        .lock()
                        .expect("no worker panics")
                        .push((case.path, result));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("no worker panics");
    results.sort_by_key(|(path, _)| *path);
    results
}

#[test]
fn the_execution_oracle_agrees_with_check_on_every_testdata_kernel() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let driver = build_driver(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let results = on_every_case(|case| check_case(case, work.path(), &driver));
    let mut failures = Vec::new();
    let mut report = String::new();
    for (path, result) in results {
        match result {
            Err(error) => failures.push(format!("{path}: {error}")),
            Ok(verdicts) => {
                for verdict in verdicts {
                    report.push_str(&verdict.text);
                    let excluded = EXCLUDED.iter().find(|e| {
                        e.kernel == verdict.kernel
                            && e.model.is_none_or(|model| model == verdict.model)
                    });
                    if let Some(exclusion) = excluded {
                        let _ = writeln!(report, "  excluded: {}", exclusion.reason);
                    }
                    match (verdict.agrees, excluded) {
                        (true, Some(_)) => failures.push(format!(
                            "{} [{}] now agrees with the oracle: remove it from EXCLUDED",
                            verdict.kernel, verdict.model
                        )),
                        (false, None) => failures.push(format!(
                            "{path} {} [{}]: the oracle disagrees with bankwise",
                            verdict.kernel, verdict.model
                        )),
                        _ => {}
                    }
                }
            }
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}\n\n{report}", failures.join("\n"));
}

/// One rewritten array as `fix --format json` reports it.
struct Rewritten {
    kernel: String,
    array: String,
    /// The arrays that hold it after the rewrite: its own name, or one array per member of
    /// its record.
    stored_as: Vec<String>,
    /// `fix`'s figures before and after the rewrite.
    before: u64,
    predicted: u64,
    /// The ALU instructions `fix` counts for each rewritten access.
    alu: Vec<u64>,
}

/// Whether `fix` leaves alone the rewrites that do not pay for their instructions.
#[derive(Clone, Copy)]
enum Price {
    /// As `fix` does by default: what a GPU run measures.
    Counted,
    /// Every rewrite, whatever it costs in ALU or (with nvcc) shared instructions: what a
    /// rewrite computes does not depend on its price, and every map is checked here.
    Ignored,
}

impl Price {
    fn apply(self, command: &mut Command) -> &mut Command {
        match self {
            Price::Counted => command,
            Price::Ignored => command
                .arg("--max-alu-per-wavefront=1000000")
                .env("BANKWISE_NVCC", ""),
        }
    }
}

/// Runs `fix --unsafe-fixes` on a testdata file into `work/stem.fixed.cu`: the fixed file
/// and its rewritten arrays, `None` for a file `fix` leaves as it is.
fn run_fix(
    case: &Case,
    work: &Path,
    stem: &str,
    price: Price,
) -> Result<Option<(PathBuf, Vec<Rewritten>)>, String> {
    let fixed_path = work.join(format!("{stem}.fixed.cu"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
    // Unsafe fixes too: a template's map is proven for the instances in the file, which are
    // the ones the oracle runs.
    command.args(["fix", "--unsafe-fixes", "--format", "json"]);
    price
        .apply(&mut command)
        .args(case.flags)
        .arg(case.path)
        .arg("-o")
        .arg(&fixed_path);
    let json: Value = serde_json::from_str(&run(&mut command)?)
        .map_err(|e| format!("{}: fix printed no JSON: {e}", case.path))?;
    let file = &json["files"][0];
    if file["changed"] != true {
        return Ok(None);
    }
    let rewritten: Vec<Rewritten> = file["arrays"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["action"] == "rewritten")
        .map(|a| {
            let array = a["name"].as_str().unwrap_or_default().to_string();
            let stored_as = match a["split_into"].as_array() {
                Some(parts) => parts
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect(),
                None => vec![array.clone()],
            };
            Rewritten {
                kernel: a["kernel"].as_str().unwrap_or_default().to_string(),
                array,
                stored_as,
                before: a["excess_before"].as_u64().unwrap_or(u64::MAX),
                predicted: a["excess_after"].as_u64().unwrap_or(u64::MAX),
                alu: a["accesses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|access| access["alu"].as_u64())
                    .collect(),
            }
        })
        .collect();
    Ok(Some((fixed_path, rewritten)))
}

/// Runs `fix` on a testdata file and, when it changes, runs every kernel before and after on
/// the same seeded buffers: every buffer must be identical bit for bit, and each rewritten
/// array's excess wavefronts as the oracle measures them must be `fix`'s prediction. Returns
/// the comparison as text, `None` for a file `fix` leaves as it is.
fn fix_case(case: &Case, work: &Path, driver: &Path) -> Result<Option<String>, String> {
    let stem = case.path.replace(['/', '.'], "_");
    let Some((fixed_path, rewritten)) = run_fix(case, work, &stem, Price::Ignored)? else {
        return Ok(None);
    };
    let original = std::fs::read_to_string(case.path).map_err(|e| format!("{}: {e}", case.path))?;
    let fixed = std::fs::read_to_string(&fixed_path).map_err(|e| e.to_string())?;
    let fixed_label = fixed_path.to_string_lossy().into_owned();
    let before = build_program(
        case.path,
        &original,
        case.launches,
        work,
        &format!("{stem}_before"),
        driver,
        &[],
    )?;
    let after = build_program(
        &fixed_label,
        &fixed,
        case.launches,
        work,
        &format!("{stem}_after"),
        driver,
        // The block checks of the guards run too: a trap fails the run.
        &["BANKWISE_CHECKS"],
    )?;
    let report = bankwise_report(case, &MODELS[0])?;
    let mut text = String::new();
    for launch in case.launches {
        let reported = report.get(launch.kernel).ok_or_else(|| {
            format!(
                "{}: bankwise reports no kernel {}",
                case.path, launch.kernel
            )
        })?;
        let dump = |when: &str| {
            let kernel: String = launch
                .kernel
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect();
            work.join(format!("{stem}.{kernel}.{when}"))
        };
        run_launch(
            &before,
            launch.kernel,
            reported.block,
            reported.dynamic_bytes,
            Some(&dump("before")),
        )?;
        let records = run_launch(
            &after,
            launch.kernel,
            reported.block,
            reported.dynamic_bytes,
            Some(&dump("after")),
        )?;
        let read =
            |path: PathBuf| std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()));
        if read(dump("before"))? != read(dump("after"))? {
            return Err(format!(
                "{} {}: the buffers differ after fix",
                case.path, launch.kernel
            ));
        }
        let sites: BTreeSet<u64> = records.iter().map(|r| r.site).collect();
        let lines = source_lines(&after.path, &sites, &fixed_label)?;
        let dynamic_name = reported.extern_arrays.join("/");
        let (places, _) = oracle_figures(
            &records,
            &after.arrays,
            &lines,
            &dynamic_name,
            &MODELS[0].config,
        )?;
        let _ = writeln!(
            text,
            "{} {}: every buffer identical after fix",
            case.path, launch.kernel
        );
        let kernels: Vec<&str> = std::iter::once(launch.kernel)
            .chain(launch.callees.iter().copied())
            .collect();
        for array in rewritten
            .iter()
            .filter(|r| kernels.contains(&r.kernel.as_str()))
        {
            let stored: Vec<_> = places
                .iter()
                .filter(|((_, _, name), _)| array.stored_as.contains(name))
                .collect();
            // A name the run never touched would measure 0 for nothing.
            if stored.is_empty() {
                return Err(format!(
                    "{} {} in {}: the run after fix touches none of {:?}",
                    case.path, array.array, array.kernel, array.stored_as
                ));
            }
            let measured: u64 = stored
                .iter()
                .filter_map(|(_, figures)| figures.map(|f| f.excess))
                .sum();
            let _ = writeln!(
                text,
                "  {} in {} (after fix: {}): oracle {measured} excess wavefronts after fix, \
                 predicted {}",
                array.array,
                array.kernel,
                array.stored_as.join(", "),
                array.predicted
            );
            if measured != array.predicted {
                return Err(format!(
                    "{} {} in {}: the oracle measures {measured} excess wavefronts after fix, \
                     fix predicted {}\n{text}",
                    case.path, array.array, array.kernel, array.predicted
                ));
            }
        }
    }
    Ok(Some(text))
}

#[test]
fn fix_keeps_every_result_and_its_predicted_conflicts() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let driver = build_driver(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let results = on_every_case(|case| fix_case(case, work.path(), &driver));
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut fixed = 0;
    for (path, result) in results {
        match result {
            Ok(Some(text)) => {
                fixed += 1;
                report.push_str(&text);
            }
            Ok(None) => {}
            Err(error) => failures.push(format!("{path}: {error}")),
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // With the oracle's flags, `--block mystery=32x4` makes block_hints.cu's `q_tile`
    // analysable and `--unsafe-fixes` rewrites template_sizes.cu's `s_tile`: 24 testdata
    // files and 38 arrays (two more of each than `fix` without flags), and 12 files and 20
    // arrays of the suite.
    assert_eq!(fixed, 36);
    assert_eq!(report.matches("predicted").count(), 58, "{report}");
}

/// One value a rewrite rests on, changed after `fix` as a later build might: a `-D` value
/// (a macro under `#ifndef`), a `#define`, a constant or a template argument.
struct Perturbation {
    /// What changed, for messages: `BLOCK_SIZE = 32`.
    what: String,
    /// `g++ -D` definitions.
    defines: Vec<String>,
    /// Text replacements, in the file and in the launch calls.
    replacements: Vec<(String, String)>,
}

impl Perturbation {
    fn apply(&self, text: &str) -> String {
        self.replacements
            .iter()
            .fold(text.to_string(), |text, (from, to)| text.replace(from, to))
    }
}

/// How to build `text` with `name` (a word of an extent bankwise assumed) doubled, if it is a
/// macro, a constant or a template parameter of `kernel` (`tileSum<16>`).
fn perturbation(text: &str, flags: &[&str], kernel: &str, name: &str) -> Option<Perturbation> {
    let doubled = |value: &str| {
        value
            .trim()
            .parse::<u64>()
            .ok()
            .map(|v| (v * 2).to_string())
    };
    let command_line = flags
        .iter()
        .find_map(|f| f.strip_prefix(&format!("{name}=")));
    if let Some(value) = command_line.filter(|_| text.contains(&format!("#ifndef {name}"))) {
        let other = doubled(value)?;
        return Some(Perturbation {
            what: format!("-D {name}={other}"),
            defines: vec![format!("{name}={other}")],
            replacements: Vec::new(),
        });
    }
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let value = match words[..] {
            ["#define", n, value] if n == name => value,
            [.., n, "=", value] if n == name && value.ends_with(';') => &value[..value.len() - 1],
            _ => continue,
        };
        let other = doubled(value)?;
        return Some(Perturbation {
            what: format!("{name} = {other}"),
            defines: Vec::new(),
            replacements: vec![(line.to_string(), line.replacen(value, &other, 1))],
        });
    }
    // A template parameter: the instance `k<16>` becomes `k<32>`.
    let (function, args) = kernel.split_once('<')?;
    let value = args.strip_suffix('>')?;
    let other = doubled(value)?;
    Some(Perturbation {
        what: format!("{kernel} as {function}<{other}>"),
        defines: Vec::new(),
        replacements: vec![(kernel.to_string(), format!("{function}<{other}>"))],
    })
}

/// Builds and runs the fixed file of `case` with each value a rewrite rests on changed: the
/// build must stop at the guard `fix` wrote, or the results must equal the original's built
/// the same way. Returns what happened, as text.
fn perturbed_case(case: &Case, work: &Path, driver: &Path) -> Result<String, String> {
    let stem = case.path.replace(['/', '.'], "_");
    let fixed_path = work.join(format!("{stem}.perturbed.fixed.cu"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_bankwise"));
    command.args(["fix", "--unsafe-fixes", "--format", "json"]);
    let json: Value = serde_json::from_str(&run(Price::Ignored
        .apply(&mut command)
        .args(case.flags)
        .arg(case.path)
        .arg("-o")
        .arg(&fixed_path))?)
    .map_err(|e| format!("{}: fix printed no JSON: {e}", case.path))?;
    let original = std::fs::read_to_string(case.path).map_err(|e| format!("{}: {e}", case.path))?;
    let Ok(fixed) = std::fs::read_to_string(&fixed_path) else {
        return Ok(String::new());
    };
    let defines: Vec<&str> = case
        .flags
        .windows(2)
        .filter(|pair| pair[0] == "-D")
        .map(|pair| pair[1])
        .collect();
    let mut seen = BTreeSet::new();
    let mut text = String::new();
    let rewritten = json["files"][0]["arrays"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["action"] == "rewritten");
    for array in rewritten {
        let kernel = array["kernel"].as_str().unwrap_or_default();
        // The names of the extents as declared, whether the rewrite assumed their values or
        // wrote the map in them.
        let line = array["line"].as_u64().unwrap_or(0) as usize;
        let name = array["name"].as_str().unwrap_or_default();
        let declared: Vec<String> = if line == 0 {
            Vec::new()
        } else {
            declared_extents(&original, line, name)
        };
        let declared_extent = declared
            .iter()
            .map(|written| serde_json::json!({"kind": "extent", "written": written}));
        let assumed = array["assumptions"]
            .as_array()
            .into_iter()
            .flatten()
            .cloned();
        for assumption in declared_extent.chain(assumed) {
            if assumption["kind"] == "dynamic-extent" {
                let bytes = assumption["bytes"].as_u64().unwrap_or(0);
                let _ = writeln!(
                    text,
                    "{}",
                    trapped_launch(case, &fixed_path, &fixed, work, driver, kernel, 2 * bytes)?
                );
                continue;
            }
            let written = assumption["written"].as_str().unwrap_or_default();
            let names = written
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'));
            for name in names {
                let Some(change) = perturbation(&original, &defines, kernel, name) else {
                    continue;
                };
                if !seen.insert(change.what.clone()) {
                    continue;
                }
                let launches: Vec<Launch> = case
                    .launches
                    .iter()
                    .map(|l| Launch {
                        kernel: l.kernel,
                        callees: l.callees,
                        call: Box::leak(change.apply(l.call).into_boxed_str()),
                    })
                    .collect();
                let defines: Vec<&str> = change.defines.iter().map(String::as_str).collect();
                let n = seen.len();
                let after = build_program(
                    &fixed_path.to_string_lossy(),
                    &change.apply(&fixed),
                    &launches,
                    work,
                    &format!("{stem}_perturbed{n}_after"),
                    driver,
                    &defines,
                );
                match after {
                    Err(why) if why.contains("bankwise: the map of") => {
                        let _ = writeln!(
                            text,
                            "{} with {}: the build stops at the guard",
                            case.path, change.what
                        );
                    }
                    Err(why) => return Err(format!("{} with {}: {why}", case.path, change.what)),
                    Ok(after) => {
                        let before = build_program(
                            case.path,
                            &change.apply(&original),
                            &launches,
                            work,
                            &format!("{stem}_perturbed{n}_before"),
                            driver,
                            &defines,
                        )?;
                        let report = bankwise_report(case, &MODELS[0])?;
                        for launch in &launches {
                            let reported = report.get(launch.kernel).ok_or_else(|| {
                                format!("{}: no kernel {}", case.path, launch.kernel)
                            })?;
                            let dumps: Vec<Vec<u8>> = [("before", &before), ("after", &after)]
                                .iter()
                                .map(|(when, program)| {
                                    let dump = work.join(format!("{stem}.perturbed{n}.{when}"));
                                    run_launch(
                                        program,
                                        launch.kernel,
                                        reported.block,
                                        reported.dynamic_bytes,
                                        Some(&dump),
                                    )?;
                                    std::fs::read(&dump).map_err(|e| e.to_string())
                                })
                                .collect::<Result<_, String>>()?;
                            if dumps[0] != dumps[1] {
                                return Err(format!(
                                    "{} {} with {}: the fixed file builds and computes other                                      results",
                                    case.path, launch.kernel, change.what
                                ));
                            }
                        }
                        let _ = writeln!(
                            text,
                            "{} with {}: builds, every buffer identical",
                            case.path, change.what
                        );
                    }
                }
            }
        }
    }
    Ok(text)
}

/// Runs `kernel` of the fixed file with `bytes` of dynamic shared memory, other than its
/// launches give it: the guard must stop the launch.
fn trapped_launch(
    case: &Case,
    fixed_path: &Path,
    fixed: &str,
    work: &Path,
    driver: &Path,
    kernel: &str,
    bytes: u64,
) -> Result<String, String> {
    let stem = case.path.replace(['/', '.'], "_");
    let program = build_program(
        &fixed_path.to_string_lossy(),
        fixed,
        case.launches,
        work,
        &format!("{stem}_trapped"),
        driver,
        &[],
    )?;
    let report = bankwise_report(case, &MODELS[0])?;
    let reported = report
        .get(kernel)
        .ok_or_else(|| format!("{}: no kernel {kernel}", case.path))?;
    match run_launch(&program, kernel, reported.block, bytes, None) {
        Err(why) if why.contains("__trap()") => Ok(format!(
            "{} {kernel} launched with {bytes} bytes of dynamic shared memory: the launch stops \
             at the guard",
            case.path
        )),
        Err(why) => Err(why),
        Ok(_) => Err(format!(
            "{} {kernel}: a launch with {bytes} bytes of dynamic shared memory runs past the \
             guard",
            case.path
        )),
    }
}

/// Issue 20: a rewrite never computes something else when a value it rests on changes.
#[test]
fn a_fixed_file_built_with_other_values_stops_at_its_guard_or_keeps_its_results() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let driver = build_driver(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let results = on_every_case(|case| perturbed_case(case, work.path(), &driver));
    let mut report = String::new();
    let mut failures = Vec::new();
    for (path, result) in results {
        match result {
            Ok(text) => report.push_str(&text),
            Err(error) => failures.push(format!("{path}: {error}")),
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The needle-style kernel of issue 20, fixed with -D BLOCK_SIZE=16.
    assert!(
        report.contains("testdata/needle.cu with -D BLOCK_SIZE=32: builds, every buffer identical"),
        "{report}"
    );
    assert!(
        report.contains(
            "testdata/template_sizes.cu with tileSum<16> as tileSum<32>: the build \
                         stops at the guard"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "testdata/reduction.cu reduceInterleaved launched with 2048 bytes of dynamic shared \
             memory: the launch stops at the guard"
        ),
        "{report}"
    );
}

/// The comparison can fail: a rewrite that swizzles the transpose tile's store but not its
/// load changes the output buffer.
#[test]
fn a_rewrite_that_misses_an_access_changes_the_results() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let driver = build_driver(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let case = CASES
        .iter()
        .find(|c| c.path == "testdata/transpose.cu")
        .expect("a case");
    let original = std::fs::read_to_string(case.path).expect("readable");
    let half = original.replace(
        "tile[threadIdx.y + j][threadIdx.x] =",
        "tile[threadIdx.y + j][threadIdx.x ^ (threadIdx.y + j)] =",
    );
    assert_ne!(half, original);
    let dumps: Vec<Vec<u8>> = [("whole", &original), ("half", &half)]
        .iter()
        .map(|(stem, text)| {
            let program = build_program(
                case.path,
                text,
                case.launches,
                work.path(),
                stem,
                &driver,
                &[],
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let dump = work.path().join(format!("{stem}.dump"));
            run_launch(&program, "transposeCoalesced", [32, 8, 1], 0, Some(&dump))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::read(&dump).expect("dumped")
        })
        .collect();
    assert_ne!(dumps[0], dumps[1]);
}

/// Excess wavefronts per kind of access (`load`, `store`, `atomic`), as the oracle measures them.
type ByKind = BTreeMap<&'static str, u64>;

/// Runs `launch` of `program` on block 0 and sums the oracle's excess wavefronts by kind.
fn oracle_excess_by_kind(
    program: &Program,
    launch: &Launch,
    reported: &Reported,
) -> Result<ByKind, String> {
    let records = run_launch(
        program,
        launch.kernel,
        reported.block,
        reported.dynamic_bytes,
        None,
    )?;
    let (places, _) = oracle_figures(
        &records,
        &program.arrays,
        &BTreeMap::new(),
        DYNAMIC,
        &MODELS[0].config,
    )?;
    let mut by_kind = ByKind::new();
    for ((_, kind, _), figures) in places {
        *by_kind.entry(kind).or_insert(0) += figures.map_or(0, |f| f.excess);
    }
    Ok(by_kind)
}

/// The CUDA host code appended to a testdata file (original or fixed) so that nvcc builds it
/// into a program that runs each launch of `launches` on a real GPU:
/// `PROGRAM check DIR` runs each kernel once on one block over the oracle's seeded buffers and
/// writes every buffer to `DIR/INDEX.bin`; `PROGRAM time GRID` prints, per launch, the
/// fastest, median and slowest of five trials of one launch of `GRID` blocks, in µs.
fn gpu_host_code(launches: &[(Launch, &Reported)]) -> String {
    let buffers = launches
        .iter()
        .flat_map(|(launch, _)| {
            launch
                .call
                .match_indices("bankwise::buffer(")
                .filter_map(|(at, found)| {
                    let rest = &launch.call[at + found.len()..];
                    rest[..rest.find(')')?].parse::<usize>().ok()
                })
        })
        .max()
        .map_or(0, |last| last + 1);
    let mut code = format!(
        "\n#undef main\n#include <cstdio>\n#include <cstdlib>\n#include <cstdint>\n\
         #include <cstring>\n#include <algorithm>\n#include <vector>\n\
         namespace bankwise {{\nstatic void *gpu_buffers[{}];\n\
         struct Buffer {{\n    unsigned which;\n    template <class T> operator T *() const \
         {{ return static_cast<T *>(gpu_buffers[which]); }}\n}};\n\
         inline Buffer buffer(unsigned which) {{ return Buffer{{which}}; }}\n}}\n\
         static const unsigned kBuffers = {buffers};\n\
         static void bankwise_launch(int which, unsigned grid) {{\n    switch (which) {{\n",
        buffers.max(1)
    );
    for (index, (launch, reported)) in launches.iter().enumerate() {
        let open = launch.call.find('(').unwrap_or(launch.call.len());
        let [x, y, z] = reported.block;
        let bytes = reported.dynamic_bytes;
        let name = &launch.call[..open];
        let arguments = &launch.call[open..];
        let attribute = if bytes > 48 * 1024 {
            format!(
                "cudaFuncSetAttribute({name}, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                 {bytes}); "
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            code,
            "    case {index}: {attribute}{name}<<<grid, dim3({x}, {y}, {z}), {bytes}>>>{arguments}; \
             return;"
        );
    }
    let names: Vec<String> = launches
        .iter()
        .map(|(launch, _)| format!("\"{}\"", launch.kernel))
        .collect();
    let _ = write!(
        code,
        "    }}\n}}\nstatic const char *const kKernels[] = {{{}}};\n",
        names.join(", ")
    );
    code.push_str(
        r#"static const int kLaunches = sizeof kKernels / sizeof kKernels[0];

static void bankwise_check(cudaError_t status, const char *what)
{
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

// The oracle's buffers (tests/oracle/driver.cpp): xorshift64 seeded with the buffer's number.
static void bankwise_seed(std::vector<uint64_t> &host, unsigned which)
{
    uint64_t state = 0x9e3779b97f4a7c15ull * (which + 1);
    for (auto &word : host) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        word = state;
    }
}

static void bankwise_allocate(size_t bytes)
{
    std::vector<uint64_t> host(bytes / sizeof(uint64_t));
    for (unsigned i = 0; i < kBuffers; ++i) {
        if (bankwise::gpu_buffers[i] == nullptr)
            bankwise_check(cudaMalloc(&bankwise::gpu_buffers[i], bytes), "cudaMalloc");
        bankwise_seed(host, i);
        bankwise_check(cudaMemcpy(bankwise::gpu_buffers[i], host.data(), bytes,
                                  cudaMemcpyHostToDevice), "cudaMemcpy");
    }
}

int main(int argc, char **argv)
{
    const size_t checked_bytes = size_t(4) << 20;
    if (argc == 3 && std::strcmp(argv[1], "check") == 0) {
        std::vector<uint64_t> host(checked_bytes / sizeof(uint64_t));
        for (int k = 0; k < kLaunches; ++k) {
            bankwise_allocate(checked_bytes);
            bankwise_launch(k, 1);
            bankwise_check(cudaGetLastError(), kKernels[k]);
            bankwise_check(cudaDeviceSynchronize(), kKernels[k]);
            char path[4096];
            std::snprintf(path, sizeof path, "%s/%d.bin", argv[2], k);
            FILE *out = std::fopen(path, "wb");
            if (out == nullptr) {
                std::perror(path);
                return 1;
            }
            for (unsigned i = 0; i < kBuffers; ++i) {
                bankwise_check(cudaMemcpy(host.data(), bankwise::gpu_buffers[i], checked_bytes,
                                          cudaMemcpyDeviceToHost), "cudaMemcpy");
                std::fwrite(host.data(), 1, checked_bytes, out);
            }
            std::fclose(out);
        }
        return 0;
    }
    if (argc == 3 && std::strcmp(argv[1], "time") == 0) {
        // Many blocks, for a time the launch does not dominate: they all work on the same
        // buffers (races do not matter here), larger ones since more blocks reach further.
        const unsigned grid = unsigned(std::atoi(argv[2]));
        bankwise_allocate(size_t(64) << 20);
        cudaEvent_t start, stop;
        bankwise_check(cudaEventCreate(&start), "cudaEventCreate");
        bankwise_check(cudaEventCreate(&stop), "cudaEventCreate");
        for (int k = 0; k < kLaunches; ++k) {
            for (int i = 0; i < 3; ++i)
                bankwise_launch(k, grid);
            bankwise_check(cudaDeviceSynchronize(), kKernels[k]);
            std::vector<float> trials;
            for (int trial = 0; trial < 5; ++trial) {
                const int launches = 20;
                bankwise_check(cudaEventRecord(start), "cudaEventRecord");
                for (int i = 0; i < launches; ++i)
                    bankwise_launch(k, grid);
                bankwise_check(cudaEventRecord(stop), "cudaEventRecord");
                bankwise_check(cudaEventSynchronize(stop), kKernels[k]);
                float ms = 0;
                bankwise_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
                trials.push_back(ms * 1000.0f / launches);
            }
            std::sort(trials.begin(), trials.end());
            // One line per launch as it ends: a fault in a later one keeps these.
            std::printf("%d\t%.3f\t%.3f\t%.3f\n", k, trials.front(), trials[trials.size() / 2],
                        trials.back());
            std::fflush(stdout);
        }
        return 0;
    }
    std::fprintf(stderr, "usage: %s check DIR | %s time GRID\n", argv[0], argv[0]);
    return 2;
}
"#,
    );
    code
}

/// Writes, into `BANKWISE_GPU_DIR`, every testdata file that `fix` changes as two CUDA
/// programs (before and after the fix, each with the host code of `gpu_host_code`) and
/// `cases.tsv`: per launch, the block shape, the oracle's excess wavefronts by kind before
/// and after, and `fix`'s figures for the arrays it rewrote there. `scripts/gpu-check` builds
/// and runs them on a GPU; no test needs one, so this is ignored unless asked for.
#[test]
#[ignore = "writes the GPU check's programs; run by scripts/gpu-check"]
fn write_gpu_programs() {
    let Some(out) = std::env::var_os("BANKWISE_GPU_DIR").map(PathBuf::from) else {
        panic!("set BANKWISE_GPU_DIR to the directory the programs go to");
    };
    std::fs::create_dir_all(&out).expect("BANKWISE_GPU_DIR can be created");
    let work = tempfile::tempdir().expect("a temporary directory");
    let driver = build_driver(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let results = on_every_case(|case| gpu_case(case, work.path(), &driver, &out));
    let mut table = String::from(
        "program\tindex\tkernel\tblock\toracle_ld_before\toracle_st_before\toracle_atom_before\t\
         oracle_ld_after\toracle_st_after\toracle_atom_after\tfix_before\tfix_after\tfix_alu\n",
    );
    let mut failures = Vec::new();
    for (path, result) in results {
        match result {
            Ok(rows) => table.push_str(&rows),
            Err(error) => failures.push(format!("{path}: {error}")),
        }
    }
    std::fs::write(out.join("cases.tsv"), &table).expect("cases.tsv can be written");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Launches that run on the GPU with other arguments than in the oracle: with a width of 0
/// every row of these transposes writes the same addresses, a race the oracle's fixed thread
/// order hides and the GPU's scheduling decides, so before and after could differ for no fault
/// of the fix. A one-tile matrix makes every write distinct.
const GPU_CALLS: &[(&str, &str)] = &[
    ("tile16", "tile16(bankwise::buffer(0), 16)"),
    (
        "tiledCopy",
        "tiledCopy(bankwise::buffer(0), bankwise::buffer(1), 32)",
    ),
    (
        "transposeCoalesced",
        "transposeCoalesced(bankwise::buffer(0), bankwise::buffer(1), 32, 32)",
    ),
    (
        "transposeTile16",
        "transposeTile16(bankwise::buffer(0), bankwise::buffer(1), 16, 16)",
    ),
];

/// One case of `write_gpu_programs`: its rows of `cases.tsv`, empty when `fix` leaves the
/// file as it is or a launch cannot be written as CUDA host code (a host lambda argument).
fn gpu_case(case: &Case, work: &Path, driver: &Path, out: &Path) -> Result<String, String> {
    let stem = case.path.replace(['/', '.'], "_");
    let Some((fixed_path, rewritten)) = run_fix(case, work, &stem, Price::Counted)? else {
        return Ok(String::new());
    };
    if case.launches.iter().any(|l| l.call.contains("[]")) {
        return Ok(String::new());
    }
    let original = std::fs::read_to_string(case.path).map_err(|e| format!("{}: {e}", case.path))?;
    let fixed = std::fs::read_to_string(&fixed_path).map_err(|e| e.to_string())?;
    let report = bankwise_report(case, &MODELS[0])?;
    // Each launch with the call the GPU makes (see `GPU_CALLS`); the oracle's programs are
    // built with `case.launches` as they are.
    let mut launches = Vec::new();
    for launch in case.launches {
        let reported = report
            .get(launch.kernel)
            .ok_or_else(|| format!("bankwise reports no kernel {}", launch.kernel))?;
        let call = GPU_CALLS
            .iter()
            .find(|(kernel, _)| *kernel == launch.kernel)
            .map_or(launch.call, |(_, call)| call);
        launches.push((Launch { call, ..*launch }, reported));
    }
    let host = gpu_host_code(&launches);
    let fixed_label = fixed_path.to_string_lossy().into_owned();
    let mut figures: Vec<[ByKind; 2]> = vec![Default::default(); launches.len()];
    for (when, label, text) in [(0, case.path, &original), (1, fixed_label.as_str(), &fixed)] {
        let name = ["before", "after"][when];
        let program = build_program(
            label,
            text,
            case.launches,
            work,
            &format!("{stem}_gpu_{name}"),
            driver,
            &["BANKWISE_CHECKS"],
        )?;
        for (index, (launch, reported)) in launches.iter().enumerate() {
            figures[index][when] = oracle_excess_by_kind(&program, launch, reported)?;
        }
        // The file's own `main` stays, renamed: its launches are valid CUDA.
        let program_text =
            format!("#include <cstdio>\n#define main bankwise_original_main\n{text}\n{host}");
        std::fs::write(out.join(format!("{stem}.{name}.cu")), program_text)
            .map_err(|e| e.to_string())?;
    }
    let mut rows = String::new();
    for (index, ((launch, reported), [before, after])) in launches.iter().zip(&figures).enumerate()
    {
        let kernels: Vec<&str> = std::iter::once(launch.kernel)
            .chain(launch.callees.iter().copied())
            .collect();
        let arrays: Vec<&Rewritten> = rewritten
            .iter()
            .filter(|r| kernels.contains(&r.kernel.as_str()))
            .collect();
        let (fix_before, fix_after) = arrays
            .iter()
            .fold((0, 0), |(b, a), r| (b + r.before, a + r.predicted));
        // The mean ALU instructions per rewritten access: what the rewrite adds per access.
        let alu: Vec<u64> = arrays.iter().flat_map(|r| r.alu.iter().copied()).collect();
        let fix_alu = if alu.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2}", alu.iter().sum::<u64>() as f64 / alu.len() as f64)
        };
        let kind = |figures: &ByKind, kind: &str| figures.get(kind).copied().unwrap_or(0);
        let [x, y, z] = reported.block;
        let _ = writeln!(
            rows,
            "{stem}\t{index}\t{}\t{x}x{y}x{z}\t{}\t{}\t{}\t{}\t{}\t{}\t{fix_before}\t{fix_after}\t{fix_alu}",
            launch.kernel,
            kind(before, "load"),
            kind(before, "store"),
            kind(before, "atomic"),
            kind(after, "load"),
            kind(after, "store"),
            kind(after, "atomic"),
        );
    }
    Ok(rows)
}
