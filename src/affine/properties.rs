//! Property: whenever an expression has a digit-affine form, the form gives the same value as
//! the expression for every thread of the block.
use super::digits::{normalize, Context};
use super::sym::{Atom, AtomValues, Axis, Op, Sym};
use proptest::prelude::*;

struct Shape([u32; 3]);

impl Context for Shape {
    fn block(&self) -> [u32; 3] {
        self.0
    }
    fn alignment(&self, _: &Atom) -> u32 {
        0
    }
    fn nonnegative(&self, _: &Atom) -> bool {
        true
    }
}

struct Point {
    thread: [i64; 3],
    uniform: i64,
}

impl AtomValues for Point {
    fn value(&self, atom: &Atom) -> Option<i64> {
        match atom {
            Atom::Thread(axis) => Some(self.thread[axis.index()]),
            Atom::Uniform(_) => Some(self.uniform),
            Atom::Loop { .. } => None,
        }
    }
}

fn leaf() -> impl Strategy<Value = Sym> {
    prop_oneof![
        prop::sample::select(Axis::ALL.to_vec()).prop_map(Sym::thread),
        (-8i64..70).prop_map(Sym::Const),
        Just(Sym::binary(
            Op::Mul,
            Sym::Atom(Atom::Uniform("b".into())),
            Sym::Const(64)
        )),
    ]
}

fn expression() -> impl Strategy<Value = Sym> {
    leaf().prop_recursive(5, 48, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Sym::binary(Op::Add, l, r)),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Sym::binary(Op::Sub, l, r)),
            (inner.clone(), 1i64..40).prop_map(|(l, k)| Sym::binary(Op::Mul, l, Sym::Const(k))),
            (inner.clone(), 0i64..6).prop_map(|(l, k)| Sym::binary(Op::Shl, l, Sym::Const(k))),
            (inner.clone(), 0i64..7).prop_map(|(l, k)| Sym::binary(Op::Shr, l, Sym::Const(k))),
            (inner.clone(), 0u32..7).prop_map(|(l, k)| Sym::binary(Op::Div, l, Sym::Const(1 << k))),
            (inner.clone(), 0u32..7).prop_map(|(l, k)| Sym::binary(Op::Rem, l, Sym::Const(1 << k))),
            (inner.clone(), 0i64..256).prop_map(|(l, m)| Sym::binary(Op::And, l, Sym::Const(m))),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Sym::binary(Op::Or, l, r)),
            (inner.clone(), inner).prop_map(|(l, r)| Sym::binary(Op::Xor, l, r)),
        ]
    })
}

fn block() -> impl Strategy<Value = [u32; 3]> {
    let extent = prop_oneof![
        prop::sample::select(vec![1u32, 2, 4, 8, 16, 32, 64]),
        1u32..48,
    ];
    (extent.clone(), extent.clone(), extent)
        .prop_filter("at most 1024 threads", |(x, y, z)| x * y * z <= 1024)
        .prop_map(|(x, y, z)| [x, y, z])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn normal_form_evaluates_like_the_expression(sym in expression(), block in block(), uniform in 0i64..4) {
        if let Ok(form) = normalize(&sym, &Shape(block)) {
            for z in 0..i64::from(block[2]) {
                for y in 0..i64::from(block[1]) {
                    for x in 0..i64::from(block[0]) {
                        let point = Point { thread: [x, y, z], uniform };
                        prop_assert_eq!(
                            form.eval([x, y, z], &point),
                            sym.eval(&point),
                            "{} = {} at {:?}", sym, form, (x, y, z)
                        );
                    }
                }
            }
        }
    }
}

/// The property above is only worth something if most generated expressions normalize.
#[test]
fn most_generated_expressions_are_digit_affine() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (expression(), block());
    let mut affine = 0;
    for _ in 0..1000 {
        let (sym, block) = strategy.new_tree(&mut runner).expect("a value").current();
        if normalize(&sym, &Shape(block)).is_ok() {
            affine += 1;
        }
    }
    assert!(affine > 400, "only {affine} of 1000 normalized");
}
