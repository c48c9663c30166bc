//! A site's address evaluated for up to 32 lanes at once: a small program of its
//! expression, run over lane groups.
use super::*;
use crate::c_int::Semantics;

/// Lanes evaluated together: the bits of a `u32` say which hold a value.
pub(super) const GROUP: usize = 32;

/// Up to [`GROUP`] consecutive lanes of one warp and their thread indices.
pub(super) struct LaneGroup {
    pub(super) len: usize,
    /// The lanes that have a thread (the last warp of a block may be partial).
    pub(super) present: u32,
    /// Per axis, each lane's thread index.
    threads: [[i64; GROUP]; 3],
}

thread_local! {
    /// The lane groups of the last block shape asked for on this thread, with its shape and
    /// warp size: every access of a function, and usually of a file, asks for the same ones.
    static BLOCK_GROUPS: RefCell<Option<BlockGroups>> = const { RefCell::new(None) };
}

/// Per warp of a block, its lane groups.
struct BlockGroups {
    block: [u32; 3],
    warp_size: u32,
    warps: u32,
    groups: Rc<Vec<Vec<LaneGroup>>>,
}

impl LaneGroup {
    /// Whether two warps' groups have the same lanes, and the same thread indices on the
    /// axes marked in `axes`.
    pub(super) fn same_lanes(a: &[LaneGroup], b: &[LaneGroup], axes: [bool; 3]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(a, b)| {
                a.len == b.len
                    && a.present == b.present
                    && (0..3).all(|axis| !axes[axis] || a.threads[axis] == b.threads[axis])
            })
    }

    /// [`LaneGroup::of_warp`] for warps `0..warps`, made once per block shape and thread.
    pub(super) fn of_block(block: [u32; 3], warp_size: u32, warps: u32) -> Rc<Vec<Vec<LaneGroup>>> {
        BLOCK_GROUPS.with(|cache| {
            let mut cache = cache.borrow_mut();
            match &*cache {
                Some(known)
                    if known.block == block
                        && known.warp_size == warp_size
                        && known.warps == warps =>
                {
                    Rc::clone(&known.groups)
                }
                _ => {
                    let groups: Rc<Vec<Vec<LaneGroup>>> = Rc::new(
                        (0..warps)
                            .map(|warp| LaneGroup::of_warp(block, warp_size, warp))
                            .collect(),
                    );
                    *cache = Some(BlockGroups {
                        block,
                        warp_size,
                        warps,
                        groups: Rc::clone(&groups),
                    });
                    groups
                }
            }
        })
    }

    fn of_warp(block: [u32; 3], warp_size: u32, warp: u32) -> Vec<LaneGroup> {
        // Lane by lane from the warp's first thread, as `lane_thread` numbers them.
        let mut thread = lane_thread(block, warp_size, warp, 0);
        let [bx, by, _] = block.map(|d| i64::from(d.max(1)));
        let threads =
            u64::from(block[0].max(1)) * u64::from(block[1].max(1)) * u64::from(block[2].max(1));
        let mut linear = u64::from(warp) * u64::from(warp_size);
        let mut groups = Vec::new();
        let mut lane = 0;
        while lane < warp_size as usize {
            let mut group = LaneGroup {
                len: GROUP.min(warp_size as usize - lane),
                present: 0,
                threads: [[0; GROUP]; 3],
            };
            for i in 0..group.len {
                if let Some([x, y, z]) = thread.filter(|_| linear < threads) {
                    group.present |= 1 << i;
                    group.threads[0][i] = x;
                    group.threads[1][i] = y;
                    group.threads[2][i] = z;
                    thread = Some(match (x + 1 < bx, y + 1 < by) {
                        (true, _) => [x + 1, y, z],
                        (false, true) => [0, y + 1, z],
                        (false, false) => [0, 0, z + 1],
                    });
                }
                linear += 1;
            }
            lane += group.len;
            groups.push(group);
        }
        groups
    }
}

/// One value per lane of a group; lanes whose bit in `valid` is clear have none.
#[derive(Clone, Copy)]
pub(super) struct Lanes {
    pub(super) values: [i64; GROUP],
    pub(super) valid: u32,
}

impl Lanes {
    pub(super) fn splat(value: Option<i64>) -> Lanes {
        Lanes {
            values: [value.unwrap_or(0); GROUP],
            valid: if value.is_some() { u32::MAX } else { 0 },
        }
    }

    /// The lanes whose value is not zero.
    pub(super) fn nonzero(&self) -> u32 {
        let mut mask = 0;
        for (i, v) in self.values.iter().enumerate() {
            mask |= u32::from(*v != 0) << i;
        }
        mask
    }

    pub(super) fn map(&mut self, f: impl Fn(i64) -> i64) {
        for v in &mut self.values {
            *v = f(*v);
        }
    }

    pub(super) fn zip(&mut self, other: &Lanes, f: impl Fn(i64, i64) -> i64) {
        for (v, w) in self.values.iter_mut().zip(&other.values) {
            *v = f(*v, *w);
        }
        self.valid &= other.valid;
    }
}

/// A [`Sym`] flattened into postfix code and evaluated for a group of lanes at once. A lane
/// gets exactly what [`Sym::eval`] gives for its thread: both operands of `&&`, `||` and `?:`
/// are evaluated for every lane, and a lane's value counts as unknown only where `Sym::eval`
/// would have used the unknown operand.
#[derive(Debug)]
pub(super) struct Program {
    code: Vec<Instr>,
    /// The atom of each slot, each atom once.
    pub(super) atoms: Vec<Atom>,
}

#[derive(Debug, Clone, Copy)]
enum Instr {
    Const(i64),
    Slot(usize),
    Neg,
    BitNot,
    Not,
    Binary(Op),
    Select,
    /// A value that is not known.
    Unknown,
}

impl Program {
    pub(super) fn new(sym: &Sym) -> Self {
        let mut program = Program {
            code: Vec::new(),
            atoms: Vec::new(),
        };
        program.emit(sym);
        program
    }

    /// Appends the code of `sym`; recursion is as deep as [`Sym::eval`]'s.
    fn emit(&mut self, sym: &Sym) {
        let instr = match sym {
            Sym::Const(v) => Instr::Const(*v),
            Sym::Atom(atom) => match self.atoms.iter().position(|a| a == atom) {
                Some(slot) => Instr::Slot(slot),
                None => {
                    self.atoms.push(atom.clone());
                    Instr::Slot(self.atoms.len() - 1)
                }
            },
            Sym::Neg(v) | Sym::BitNot(v) | Sym::Not(v) => {
                self.emit(v);
                match sym {
                    Sym::Neg(_) => Instr::Neg,
                    Sym::BitNot(_) => Instr::BitNot,
                    _ => Instr::Not,
                }
            }
            Sym::Binary(op, l, r) => {
                self.emit(l);
                self.emit(r);
                Instr::Binary(*op)
            }
            Sym::Select(c, t, e) => {
                self.emit(c);
                self.emit(t);
                self.emit(e);
                Instr::Select
            }
            Sym::Unknown(_) => Instr::Unknown,
        };
        self.code.push(instr);
    }

    /// The value of each slot whose atom is not a thread index.
    pub(super) fn uniforms(&self, values: &impl AtomValues) -> Vec<Option<i64>> {
        self.atoms
            .iter()
            .map(|atom| match atom {
                Atom::Thread(_) => None,
                other => values.value(other),
            })
            .collect()
    }

    /// The value for each lane of `group`, with `uniforms` from [`Program::uniforms`];
    /// `stack` is scratch space.
    pub(super) fn eval(
        &self,
        uniforms: &[Option<i64>],
        group: &LaneGroup,
        stack: &mut Vec<Lanes>,
    ) -> Lanes {
        stack.clear();
        for instr in &self.code {
            let value = match *instr {
                Instr::Const(v) => Lanes::splat(Some(v)),
                Instr::Unknown => Lanes::splat(None),
                Instr::Slot(slot) => match &self.atoms[slot] {
                    Atom::Thread(axis) => Lanes {
                        values: group.threads[axis.index()],
                        valid: u32::MAX,
                    },
                    _ => Lanes::splat(uniforms[slot]),
                },
                Instr::Neg | Instr::BitNot | Instr::Not => {
                    let Some(top) = stack.last_mut() else {
                        break;
                    };
                    match instr {
                        Instr::Neg => top.map(i64::wrapping_neg),
                        Instr::BitNot => top.map(|v| !v),
                        _ => top.map(|v| i64::from(v == 0)),
                    }
                    continue;
                }
                // The operands are used where they lie on the stack: a `Lanes` is 264 bytes,
                // and popping copied it out.
                Instr::Binary(op) => {
                    let n = stack.len();
                    if n < 2 {
                        stack.clear();
                        break;
                    }
                    let (rest, top) = stack.split_at_mut(n - 1);
                    binary(op, &mut rest[n - 2], &top[0]);
                    stack.truncate(n - 1);
                    continue;
                }
                Instr::Select => {
                    let n = stack.len();
                    if n < 3 {
                        stack.clear();
                        break;
                    }
                    let (rest, arms) = stack.split_at_mut(n - 2);
                    let (c, t, e) = (&mut rest[n - 3], &arms[0], &arms[1]);
                    let taken = c.nonzero();
                    for (i, v) in c.values.iter_mut().enumerate() {
                        *v = if taken & (1 << i) != 0 {
                            t.values[i]
                        } else {
                            e.values[i]
                        };
                    }
                    // An unknown condition does not matter where both arms agree.
                    let mut agree = 0u32;
                    for (i, (a, b)) in t.values.iter().zip(&e.values).enumerate() {
                        if a == b {
                            agree |= 1 << i;
                        }
                    }
                    c.valid = (c.valid & ((taken & t.valid) | (!taken & e.valid)))
                        | (!c.valid & t.valid & e.valid & agree);
                    stack.truncate(n - 2);
                    continue;
                }
            };
            stack.push(value);
        }
        stack.pop().unwrap_or(Lanes::splat(None))
    }
}

/// `l op r` in every lane, into `l`, as [`Op::apply`] and the short-circuits of [`Sym::eval`].
fn binary(op: Op, l: &mut Lanes, r: &Lanes) {
    match op {
        Op::Add => l.zip(r, i64::wrapping_add),
        Op::Sub => l.zip(r, i64::wrapping_sub),
        Op::Mul => l.zip(r, i64::wrapping_mul),
        Op::And => l.zip(r, |a, b| a & b),
        Op::Or => l.zip(r, |a, b| a | b),
        Op::Xor => l.zip(r, |a, b| a ^ b),
        Op::Eq => l.zip(r, |a, b| i64::from(a == b)),
        Op::Ne => l.zip(r, |a, b| i64::from(a != b)),
        Op::Lt => l.zip(r, |a, b| i64::from(a < b)),
        Op::Le => l.zip(r, |a, b| i64::from(a <= b)),
        Op::Gt => l.zip(r, |a, b| i64::from(a > b)),
        Op::Ge => l.zip(r, |a, b| i64::from(a >= b)),
        // Three-valued, as Sym::eval: a false (true) operand on either side decides alone.
        Op::LogAnd | Op::LogOr => {
            let (left, right) = (l.nonzero(), r.nonzero());
            let (decided_left, decided_right) = if op == Op::LogAnd {
                (l.valid & !left, r.valid & !right)
            } else {
                (l.valid & left, r.valid & right)
            };
            let valid = (l.valid & r.valid) | decided_left | decided_right;
            let result = if op == Op::LogAnd {
                left & right & !(decided_left | decided_right)
            } else {
                (left & l.valid) | (right & r.valid)
            };
            for (i, v) in l.values.iter_mut().enumerate() {
                *v = i64::from(result & (1 << i) != 0);
            }
            l.valid = valid;
        }
        // Division and shifts are undefined for some operands: lane by lane.
        Op::Div | Op::Rem | Op::Shl | Op::Shr => {
            for (i, (v, w)) in l.values.iter_mut().zip(&r.values).enumerate() {
                match op.apply(*v, *w, Semantics::Device) {
                    Some(result) => *v = result,
                    None => l.valid &= !(1 << i),
                }
            }
            l.valid &= r.valid;
        }
    }
}

#[cfg(test)]
mod lane_tests {
    use super::*;
    use crate::affine::{Axis, Unknown, WithThread};
    use proptest::prelude::*;
    use std::sync::Arc;

    /// Values for the atoms that are not thread indices: `u` is known, `v` and loops are not.
    struct Uniforms(i64);

    impl AtomValues for Uniforms {
        fn value(&self, atom: &Atom) -> Option<i64> {
            match atom {
                Atom::Uniform(name) if name == "u" => Some(self.0),
                _ => None,
            }
        }
    }

    fn leaf() -> impl Strategy<Value = Sym> {
        prop_oneof![
            prop::sample::select(Axis::ALL.to_vec()).prop_map(Sym::thread),
            prop::sample::select(vec![-3i64, -1, 0, 1, 2, 5, 31, 32, 63, 64]).prop_map(Sym::Const),
            Just(Sym::Atom(Atom::Uniform("u".into()))),
            Just(Sym::Atom(Atom::Uniform("v".into()))),
            Just(Sym::Unknown(Unknown::DataDependent("a load".into()))),
        ]
    }

    /// Unfolded trees over every operator, so that undefined and unknown operands meet
    /// short-circuits and selects.
    fn expression() -> impl Strategy<Value = Sym> {
        let ops = vec![
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Div,
            Op::Rem,
            Op::Shl,
            Op::Shr,
            Op::And,
            Op::Or,
            Op::Xor,
            Op::Eq,
            Op::Ne,
            Op::Lt,
            Op::Le,
            Op::Gt,
            Op::Ge,
            Op::LogAnd,
            Op::LogOr,
        ];
        leaf().prop_recursive(5, 40, 3, move |inner| {
            prop_oneof![
                (
                    prop::sample::select(ops.clone()),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, l, r)| Sym::Binary(
                        op,
                        Arc::new(l),
                        Arc::new(r)
                    )),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, e)| Sym::Select(
                    Arc::new(c),
                    Arc::new(t),
                    Arc::new(e)
                )),
                inner.clone().prop_map(|v| Sym::Neg(Arc::new(v))),
                inner.clone().prop_map(|v| Sym::BitNot(Arc::new(v))),
                inner.prop_map(|v| Sym::Not(Arc::new(v))),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn lanes_evaluate_like_the_expression(sym in expression(), u in -2i64..40, warp in 0u32..3) {
            let block = [8, 3, 2];
            let program = Program::new(&sym);
            let uniforms = program.uniforms(&Uniforms(u));
            let mut stack = Vec::new();
            for group in LaneGroup::of_warp(block, 32, warp) {
                let lanes = program.eval(&uniforms, &group, &mut stack);
                for lane in 0..group.len {
                    let thread = std::array::from_fn(|axis| group.threads[axis][lane]);
                    let expected = sym.eval(&WithThread { thread, rest: &Uniforms(u) });
                    let got = (lanes.valid & (1 << lane) != 0).then_some(lanes.values[lane]);
                    prop_assert_eq!(got, expected, "{} at {:?}", sym, thread);
                }
            }
        }
    }

    #[test]
    fn lane_groups_number_threads_like_lane_thread() {
        for (block, warp_size) in [([48, 3, 2], 32), ([5, 7, 1], 32), ([16, 16, 1], 16)] {
            let threads = block.iter().product::<u32>();
            for warp in 0..threads.div_ceil(warp_size) + 1 {
                let groups = LaneGroup::of_warp(block, warp_size, warp);
                let lanes: Vec<Option<[i64; 3]>> = groups
                    .iter()
                    .flat_map(|g| {
                        (0..g.len).map(move |i| {
                            (g.present & (1 << i) != 0)
                                .then(|| std::array::from_fn(|axis| g.threads[axis][i]))
                        })
                    })
                    .collect();
                let expected: Vec<Option<[i64; 3]>> = (0..warp_size)
                    .map(|lane| lane_thread(block, warp_size, warp, lane))
                    .collect();
                assert_eq!(lanes, expected, "block {block:?}, warp {warp}");
            }
        }
    }
}
