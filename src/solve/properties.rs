//! Properties of the solvers on random problems: every map any solver returns is a bijection
//! on the extent it was given (checked by applying it to every index) and keeps the vectors
//! whole; the exact XOR search is never beaten by an XOR-linear heuristic, nor the exact
//! permutation search by a permutation heuristic.
use super::algebra::check_bijection;
use super::bitvector::{exhaustive_xor, permutation};
use super::choose::choose_with;
use super::exact::{exact_permutation, exact_xor};
use super::givargis::givargis;
use super::mih::mih;
use super::padding::padding;
use super::space::{Found, Space};
use super::swizzle::{rap, repitch, rotated_swizzle, skew, swizzle};
use super::ArrayProblem;
use crate::bank::BankConfig;
use crate::cost::{SitePattern, Units};
use proptest::prelude::*;

const BOUND: u64 = 1 << 10;

/// Rows × columns (extents with odd factors included), element size, vector width, and warp
/// requests as strides and offsets that wrap inside the array.
fn problems() -> impl Strategy<Value = ArrayProblem> {
    let shape = prop::sample::select(vec![
        (32u64, 32u64),
        (16, 16),
        (8, 64),
        (33, 32),
        (24, 32),
        (32, 33),
        (12, 48),
        (64, 16),
        (16, 17),
        (5, 13),
        (7, 20),
    ]);
    let elem = prop::sample::select(vec![4u32, 4, 8, 2]);
    let vector = prop::sample::select(vec![1u64, 1, 1, 2, 4]);
    let request = (0i64..200, 0i64..1100, 0usize..4);
    (shape, elem, vector, prop::collection::vec(request, 1..4)).prop_map(
        |((rows, columns), elem_bytes, vector, requests)| {
            let config = BankConfig::default();
            let extent = (rows * columns) as i64;
            let sites = requests
                .iter()
                .map(|&(stride, offset, inactive)| {
                    let lanes: Vec<Option<i64>> = (0..32)
                        .map(|l| {
                            (l % 8 >= inactive as i64).then_some((stride * l + offset) % extent)
                        })
                        .collect();
                    SitePattern::from_requests(
                        Units::whole(elem_bytes),
                        &config,
                        [lanes.as_slice()],
                    )
                    .expect("small")
                })
                .collect();
            ArrayProblem {
                name: "random".into(),
                elem_bytes,
                dims: vec![rows, columns],
                vector,
                max_extra_bytes: 256,
                config,
                sites,
                struct_of_arrays: Err("not a record".into()),
            }
        },
    )
}

fn assert_bijective(found: &Found, problem: &ArrayProblem) {
    let map = found.best.map.as_ref();
    assert_eq!(map.extent(), problem.extent(), "{map:?}");
    assert!(check_bijection(map).is_ok(), "{map:?}");
    assert!(map.keeps_vectors(problem.vector), "{map:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_solver_returns_a_bijection(problem in problems()) {
        if let Ok(space) = Space::of(&problem) {
            let mut xor_linear: Vec<u64> = Vec::new();
            let mut permutations: Vec<u64> = Vec::new();
            for found in [permutation(&space), exhaustive_xor(&space, true)].into_iter().flatten() {
                assert_bijective(&found, &problem);
                xor_linear.push(found.best.score.total);
            }
            for xor in [false, true] {
                for found in [givargis(&space, xor), mih(&space, xor)].into_iter().flatten() {
                    assert_bijective(&found, &problem);
                    xor_linear.push(found.best.score.total);
                    if !xor {
                        permutations.push(found.best.score.total);
                    }
                }
            }
            if let Ok(found) = exact_permutation(&space, BOUND) {
                assert_bijective(&found, &problem);
                if !found.truncated && space.banks_are_bit_fields() {
                    prop_assert!(permutations.iter().all(|&p| found.best.score.total <= p));
                }
            }
            if let Ok(found) = exact_xor(&space, BOUND) {
                assert_bijective(&found, &problem);
                if !found.truncated {
                    prop_assert!(
                        xor_linear.iter().all(|&x| found.best.score.total <= x),
                        "exact {} vs {:?}", found.best.score.total, xor_linear
                    );
                }
            }
        }
        let scorer = super::score::Scorer::new(problem.config, &problem.sites);
        for found in [
            padding(&problem, &scorer),
            swizzle(&problem, &scorer),
            rap(&problem, &scorer),
            skew(&problem, &scorer),
            repitch(&problem, &scorer),
            rotated_swizzle(&problem, &scorer),
        ]
            .into_iter()
            .flatten()
        {
            let map = found.best.map.as_ref();
            prop_assert!(check_bijection(map).is_ok(), "{:?}", map);
            prop_assert!(map.keeps_vectors(problem.vector));
        }
        let options = super::choose::Options {
            exact_bound: BOUND,
            ..Default::default()
        };
        let choice = choose_with(&problem, &options).expect("valid problem");
        let chosen = choice.chosen();
        let best = chosen.best.as_ref().expect("the chosen family has a map");
        prop_assert!(!best.score.worsens);
        prop_assert!(best.score.total <= choice.excess_before);
        prop_assert!(check_bijection(best.map.as_ref()).is_ok());
    }
}
