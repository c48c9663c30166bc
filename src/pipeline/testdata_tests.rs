//! The solver's stages on every testdata kernel, through the pipeline: the choice for each
//! array, and the patterns the solvers score against the figures `check` reports.
use crate::analysis::Options;
use crate::cost::{SitePattern, SiteRequests};
use crate::pipeline::analyse_file;
use crate::solve::choose::choose;
use crate::solve::score::site_excess;
use crate::solve::ArrayProblem;
use serde_json::json;

/// Every testdata array whose accesses can all be simulated: the excess wavefronts before
/// and after the choice. Two need the families made for them: `m_arith` (65 floats: odd,
/// so no XOR-linear map may write a bit, docs/ARCHITECTURE.md §5) is cleared by a rotation by one
/// before a swizzle of its first 64, and `tileSum`'s padded `s_tile[16][17]` by moving the
/// padding column after a 16-wide swizzled tile. Where some remain, no bijection of
/// elements can do better:
/// - `s_f2` (float2 `.y` by 32 lanes) and `s_d2` (double2 `.x` by 16-lane phases): a
///   component of a two-word element lies on every other bank whatever element it is, so
///   the 2-way conflicts are inherent (the exact search proves 4 is the least); CUDA's
///   vector types are not split into arrays per component.
///
/// `nbodyStep`'s `s_f` (16-byte `Vec4`, members `.a` and `.b` read by 32 lanes) is the
/// same kind of pattern: a member sits on every fourth bank whatever element holds it, so
/// no permutation of the elements removes the 4-way conflicts; the struct-of-arrays
/// layout, one array per member, does.
#[test]
fn choices_on_the_testdata_kernels() {
    let expected: &[(&str, &str, u64, u64, &str)] = &[
        ("tile16", "t_tile", 56, 0, "swizzle"),
        // No launch: under the assumed 32x1x1.
        ("mystery", "q_tile", 3, 0, "swizzle"),
        ("stencilConst", "k_vec", 96, 0, "swizzle"),
        ("escapeMix", "clean_b", 1, 0, "bitvector-xor"),
        ("castAsmMacro", "clean_c", 24, 0, "bitvector-xor"),
        ("fwtRadix4", "s", 448, 0, "bitvector-xor"),
        ("macroTiles", "m_arith", 1, 0, "rotate"),
        ("pairSum", "s", 8, 0, "bitvector-xor"),
        ("colDot", "d", 960, 0, "swizzle"),
        ("splitPlanes", "s_bytes", 96, 0, "bitvector-xor"),
        ("transposeShort", "s_tile", 480, 0, "swizzle"),
        ("tileSum", "s_tile", 16, 0, "repitch"),
        ("transposeCoalesced", "tile", 992, 0, "swizzle"),
        ("batchedTranspose8x32", "cube", 224, 0, "swizzle"),
        ("batchedTransposeDepth", "cube", 224, 0, "swizzle"),
        ("complexTranspose", "re", 960, 0, "swizzle"),
        ("complexTranspose", "im", 960, 0, "swizzle"),
        ("needleTile", "score", 224, 0, "skew"),
        ("vectorMix", "s_f2", 4, 4, "identity"),
        ("vectorMix", "s_d2", 4, 4, "identity"),
        ("pointerMix", "tile", 992, 0, "swizzle"),
        ("pointerMix", "sel", 8, 0, "bitvector-xor"),
        ("nbodyStep", "s_f", 24, 0, "struct-of-arrays"),
        ("accumulate", "s_body", 30, 0, "struct-of-arrays"),
        ("accumulate", "s_bin", 8, 0, "struct-of-arrays"),
        (
            "reduceDynamic",
            "SharedMemory<float>()",
            45,
            0,
            "bitvector-xor",
        ),
        ("reduceInterleaved", "sdata", 105, 0, "bitvector-xor"),
        ("vecTileGemm", "As", 8, 0, "bitvector-xor"),
        // The float4 and float2 views are kept whole: the least their reads allow.
        ("vecTileGemm", "Bs", 128, 0, "exact"),
        ("vecTranspose", "tile", 480, 96, "swizzle"),
        ("vecPairs", "s", 48, 16, "exact"),
        // Stored by template helpers called with template arguments.
        ("gemmTiles", "As", 960, 0, "bitvector-xor"),
        ("gemmTilesScoped", "As2", 960, 0, "bitvector-xor"),
        // Declared through specifier macros (RAFT, ggml).
        ("raftTranspose", "tile", 992, 0, "swizzle"),
        ("ggmlColumns", "buf", 992, 0, "swizzle"),
        // Indices the loops carry: a masked ring, a doubling and a halving stride.
        ("ringWrite", "ring", 96, 0, "bitvector-xor"),
        ("ringStride", "buf", 310, 0, "fixed-xor"),
        ("waveletLevels", "coeffs", 16, 0, "bitvector-xor"),
        ("halvingStride", "partial", 44, 0, "bitvector-xor"),
    ];
    let options = Options::default();
    let mut paths: Vec<_> = std::fs::read_dir("testdata")
        .expect("testdata")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    paths.sort();
    let mut seen = Vec::new();
    for path in paths {
        let file = analyse_file(&path, &options).expect("analysable");
        for reported in file.reported() {
            let Some(affine) = reported.affine else {
                continue;
            };
            for (a, array) in reported.function.arrays.iter().enumerate() {
                let types = &file.parsed.constants.types;
                let Ok(problem) =
                    ArrayProblem::pose(reported.function, a, affine, types, &options.bank)
                else {
                    continue;
                };
                let choice = choose(&problem).expect("solvable");
                let chosen = choice.chosen();
                let best = chosen.best.as_ref().expect("chosen has a map");
                assert!(!best.score.worsens);
                let name = (reported.function.name.as_str(), array.name.as_str());
                let (before, after, strategy) = expected
                    .iter()
                    .find(|e| (e.0, e.1) == name)
                    .map_or((0, 0, "identity"), |e| (e.2, e.3, e.4));
                assert_eq!(
                    (
                        choice.excess_before,
                        best.score.total,
                        chosen.strategy.name()
                    ),
                    (before, after, strategy),
                    "{name:?}"
                );
                if name == ("fwtRadix4", "s") {
                    // The paper's Table 5 parameters for FWT.
                    assert_eq!(best.map.params(), json!({"k1": 0, "k2": 2, "mask": 31}));
                }
                seen.push((name.0.to_string(), name.1.to_string()));
            }
        }
    }
    assert!(expected
        .iter()
        .all(|e| seen.contains(&(e.0.to_string(), e.1.to_string()))));
    assert!(seen.len() >= 45, "{} arrays", seen.len());
}

/// The patterns give every testdata access the figures `check` reports: the refactored
/// enumeration behind both is the same.
#[test]
fn patterns_reproduce_the_measured_figures_of_every_testdata_access() {
    let options = Options::default();
    let mut compared = 0;
    for entry in std::fs::read_dir("testdata").expect("testdata exists") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "cu") {
            continue;
        }
        let file = analyse_file(&path, &options).expect("analysable");
        for reported in file.reported() {
            let Some(affine) = reported.affine else {
                continue;
            };
            for (a, array) in reported.function.arrays.iter().enumerate() {
                for (i, access) in array.accesses.iter().enumerate() {
                    let (Ok(cost), Some(site)) = (&reported.costs[a][i], &affine.sites[a][i])
                    else {
                        continue;
                    };
                    let requests = SiteRequests::new(affine, site, array, access, &options.bank)
                        .expect("measured, so enumerable");
                    // Under a varying member subscript the lanes carry units, not the
                    // elements a pattern holds: such arrays are never solved.
                    if requests.varying_member().is_some() {
                        continue;
                    }
                    let pattern = SitePattern::collect(&requests, &options.bank).expect("bounded");
                    let excess = site_excess(&options.bank, &pattern, &|phase, out| {
                        out.extend_from_slice(phase)
                    });
                    assert_eq!(excess, cost.excess(), "{}: {}", path.display(), access.text);
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 149, "{compared} accesses compared");
}
