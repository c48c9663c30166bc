//! Symbolic values: what a variable holds, as an expression over the thread indices, loop
//! counters and warp-uniform unknowns, with every local variable already substituted.
//!
//! A `Sym` can always be evaluated exactly for one thread and one loop iteration (the bank
//! model does that); the digit-affine normal form (see `digits`) is the structured view of the
//! ones that fit the papers' model.
use crate::c_int::Semantics;
pub use crate::c_int::{Op, SHIFT_WIDTH};
use std::fmt;
use std::sync::Arc;

/// A thread index dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn short_name(self) -> &'static str {
        match self {
            Axis::X => "tx",
            Axis::Y => "ty",
            Axis::Z => "tz",
        }
    }
}

/// Index of a loop counter in the analysis of one function.
pub type LoopId = usize;

/// A leaf that is not a constant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    Thread(Axis),
    /// A loop counter with a known sequence of values, uniform across the warp.
    Loop {
        id: LoopId,
        name: String,
    },
    /// A warp-uniform value the analysis cannot know: `blockIdx.x`, a kernel parameter, a
    /// counter of a loop with unknown bounds.
    Uniform(String),
}

/// Why a value is not known as a function of the thread indices and loop counters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unknown {
    /// Read from memory, a call result, a float: differs per thread in a way we cannot see.
    DataDependent(String),
    /// A name bound to no definition the analysis can see.
    UnknownName(String),
    /// A variable given different values on different paths or iterations.
    Reassigned(String),
    /// Past a limit that keeps the analysis's time and stack bounded on any input.
    TooComplex(String),
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unknown::DataDependent(what) => write!(f, "data-dependent ({what})"),
            Unknown::UnknownName(name) => write!(f, "unknown value `{name}`"),
            Unknown::TooComplex(what) => write!(f, "{what}, more than the analysis follows"),
            Unknown::Reassigned(name) => {
                write!(
                    f,
                    "`{name}` is reassigned in a way the analysis cannot follow"
                )
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Sym {
    Const(i64),
    Atom(Atom),
    Neg(Arc<Sym>),
    BitNot(Arc<Sym>),
    Not(Arc<Sym>),
    Binary(Op, Arc<Sym>, Arc<Sym>),
    Select(Arc<Sym>, Arc<Sym>, Arc<Sym>),
    Unknown(Unknown),
}

/// The deepest value a variable holds (see [`Sym::bounded`]).
pub const MAX_DEPTH: u32 = 256;
/// The most nodes of a value's tree a variable holds (see [`Sym::bounded`]).
pub const MAX_NODES: u32 = 1 << 14;

/// The power of two that `>> k` or `/ k` divides by, when it is one.
fn divisor(op: Op, k: i64) -> Option<i64> {
    match op {
        Op::Shr if (0..62).contains(&k) => Some(1 << k),
        Op::Div if k > 0 && k.count_ones() == 1 => Some(k),
        _ => None,
    }
}

/// Values for the atoms of one evaluation: one thread, one loop iteration, one choice of the
/// unknown uniforms.
pub trait AtomValues {
    fn value(&self, atom: &Atom) -> Option<i64>;
}

impl Sym {
    pub fn thread(axis: Axis) -> Sym {
        Sym::Atom(Atom::Thread(axis))
    }

    pub fn constant(&self) -> Option<i64> {
        match self {
            Sym::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// Builds `l op r`, folding constants and the neutral elements so that values stay small.
    pub fn binary(op: Op, l: Sym, r: Sym) -> Sym {
        if let (Sym::Const(a), Sym::Const(b)) = (&l, &r) {
            if let Some(v) = op.apply(*a, *b, Semantics::Device) {
                return Sym::Const(v);
            }
        }
        match (op, l.constant(), r.constant()) {
            (Op::Add | Op::Sub | Op::Or | Op::Xor | Op::Shl | Op::Shr, _, Some(0)) => l,
            (Op::Add | Op::Or | Op::Xor, Some(0), _) => r,
            (Op::Mul | Op::Div, _, Some(1)) => l,
            (Op::Mul, Some(1), _) => r,
            (Op::Mul | Op::And | Op::LogAnd, _, Some(0))
            | (Op::Mul | Op::And | Op::LogAnd, Some(0), _) => Sym::Const(0),
            (Op::LogOr, _, Some(c)) | (Op::LogOr, Some(c), _) if c != 0 => Sym::Const(1),
            // `1 && c` is `c` when `c` is already 0 or 1.
            (Op::LogAnd, Some(_), None) if r.is_boolean() => r,
            (Op::LogAnd, None, Some(_)) if l.is_boolean() => l,
            (Op::LogOr, Some(0), None) if r.is_boolean() => r,
            (Op::LogOr, None, Some(0)) if l.is_boolean() => l,
            // Constant terms gather: `(v + 1) + 1` is `v + 2`, so that a run of increments
            // stays one node deep.
            (Op::Add | Op::Sub, None, Some(b)) => match &l {
                Sym::Binary(Op::Add, x, a) => match a.constant().and_then(|a| {
                    if op == Op::Add {
                        a.checked_add(b)
                    } else {
                        a.checked_sub(b)
                    }
                }) {
                    Some(sum) => Sym::binary(Op::Add, (**x).clone(), Sym::Const(sum)),
                    None => Sym::Binary(op, Arc::new(l), Arc::new(r)),
                },
                _ => Sym::Binary(op, Arc::new(l), Arc::new(r)),
            },
            // Constant factors gather on the left: `8*k * 33` is `264*k`.
            (Op::Mul, None, Some(c)) => match &l {
                Sym::Binary(Op::Mul, a, x) if a.constant().is_some() => Sym::binary(
                    Op::Mul,
                    Sym::Const(a.constant().unwrap_or(1).wrapping_mul(c)),
                    (**x).clone(),
                ),
                _ => Sym::Binary(op, Arc::new(r), Arc::new(l)),
            },
            (Op::Mul, Some(c), None) => match &r {
                Sym::Binary(Op::Mul, a, x) if a.constant().is_some() => Sym::binary(
                    Op::Mul,
                    Sym::Const(a.constant().unwrap_or(1).wrapping_mul(c)),
                    (**x).clone(),
                ),
                _ => Sym::Binary(op, Arc::new(l), Arc::new(r)),
            },
            // An exact multiple divided by a power of two: `64*b >> 5` is `2*b`.
            (Op::Shr | Op::Div, _, Some(k)) => match (&l, divisor(op, k)) {
                (Sym::Binary(Op::Mul, m, x), Some(d))
                    if m.constant().is_some_and(|m| m % d == 0) =>
                {
                    let m = m.constant().unwrap_or(0) / d;
                    Sym::binary(Op::Mul, Sym::Const(m), (**x).clone())
                }
                _ => Sym::Binary(op, Arc::new(l), Arc::new(r)),
            },
            _ => Sym::Binary(op, Arc::new(l), Arc::new(r)),
        }
    }

    /// The value itself, or [`Unknown::TooComplex`] when it is nested deeper than
    /// [`MAX_DEPTH`] or its tree has more than [`MAX_NODES`] nodes. Every walk of a value
    /// recurses, and a value built by assignments in sequence (`v = (v * 3) ^ (v >> 1)`) is a
    /// graph whose tree doubles with each: bounding what a variable holds bounds them all.
    pub fn bounded(self) -> Sym {
        let mut budget = MAX_NODES;
        if self.fits(MAX_DEPTH, &mut budget) {
            self
        } else {
            Sym::Unknown(Unknown::TooComplex(format!(
                "a value of more than {MAX_NODES} operations or nested more than {MAX_DEPTH} deep"
            )))
        }
    }

    fn fits(&self, depth: u32, budget: &mut u32) -> bool {
        if depth == 0 || *budget == 0 {
            return false;
        }
        *budget -= 1;
        match self {
            Sym::Const(_) | Sym::Atom(_) | Sym::Unknown(_) => true,
            Sym::Neg(v) | Sym::BitNot(v) | Sym::Not(v) => v.fits(depth - 1, budget),
            Sym::Binary(_, l, r) => l.fits(depth - 1, budget) && r.fits(depth - 1, budget),
            Sym::Select(c, t, e) => {
                c.fits(depth - 1, budget) && t.fits(depth - 1, budget) && e.fits(depth - 1, budget)
            }
        }
    }

    pub fn select(cond: Sym, then: Sym, otherwise: Sym) -> Sym {
        match cond.constant() {
            Some(0) => otherwise,
            Some(_) => then,
            None if then == otherwise => then,
            None => Sym::Select(Arc::new(cond), Arc::new(then), Arc::new(otherwise)),
        }
    }

    pub fn negate(value: Sym) -> Sym {
        match value {
            Sym::Const(v) => Sym::Const(v.wrapping_neg()),
            other => Sym::Neg(Arc::new(other)),
        }
    }

    pub fn bit_not(value: Sym) -> Sym {
        match value {
            Sym::Const(v) => Sym::Const(!v),
            other => Sym::BitNot(Arc::new(other)),
        }
    }

    pub fn logical_not(value: Sym) -> Sym {
        match value {
            Sym::Const(v) => Sym::Const(i64::from(v == 0)),
            other => Sym::Not(Arc::new(other)),
        }
    }

    /// Whether the value is always 0 or 1 (a comparison, a logical operation).
    pub fn is_boolean(&self) -> bool {
        match self {
            Sym::Const(c) => *c == 0 || *c == 1,
            Sym::Not(_) => true,
            Sym::Binary(op, ..) => matches!(
                op,
                Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::LogAnd | Op::LogOr
            ),
            _ => false,
        }
    }

    /// Evaluates with C semantics; `None` when an atom has no value, a value is unknown, or
    /// the arithmetic is undefined.
    pub fn eval(&self, atoms: &impl AtomValues) -> Option<i64> {
        match self {
            Sym::Const(v) => Some(*v),
            Sym::Atom(atom) => atoms.value(atom),
            Sym::Neg(v) => Some(v.eval(atoms)?.wrapping_neg()),
            Sym::BitNot(v) => Some(!v.eval(atoms)?),
            Sym::Not(v) => Some(i64::from(v.eval(atoms)? == 0)),
            // Three-valued, like C's short-circuit but in both directions: one false side
            // makes `&&` false (one true side makes `||` true) whatever the other is, unknown
            // or undefined (`i < n && a / i`).
            Sym::Binary(op @ (Op::LogAnd | Op::LogOr), l, r) => {
                let decides = i64::from(*op == Op::LogOr);
                let truth = |v: Option<i64>| v.map(|v| i64::from(v != 0));
                match (truth(l.eval(atoms)), truth(r.eval(atoms))) {
                    (Some(v), _) | (_, Some(v)) if v == decides => Some(decides),
                    (Some(a), Some(b)) => op.apply(a, b, Semantics::Device),
                    _ => None,
                }
            }
            Sym::Binary(op, l, r) => op.apply(l.eval(atoms)?, r.eval(atoms)?, Semantics::Device),
            Sym::Select(c, t, e) => match c.eval(atoms) {
                Some(0) => e.eval(atoms),
                Some(_) => t.eval(atoms),
                // Both arms agree: the condition does not matter.
                None => t.eval(atoms).filter(|v| e.eval(atoms) == Some(*v)),
            },
            Sym::Unknown(_) => None,
        }
    }

    /// Whether a condition holds: `Some(false)` when it is false whatever the unknown values
    /// are (`tx < 8 && tx < n` for tx = 9), `None` when it depends on them.
    pub fn holds(&self, atoms: &impl AtomValues) -> Option<bool> {
        self.eval(atoms).map(|v| v != 0)
    }

    /// The value with some atoms replaced (a loop counter by one of its values), folded.
    pub fn substitute(&self, replace: &impl Fn(&Atom) -> Option<Sym>) -> Sym {
        match self {
            Sym::Const(_) | Sym::Unknown(_) => self.clone(),
            Sym::Atom(atom) => replace(atom).unwrap_or_else(|| self.clone()),
            Sym::Neg(v) => Sym::negate(v.substitute(replace)),
            Sym::BitNot(v) => Sym::bit_not(v.substitute(replace)),
            Sym::Not(v) => Sym::logical_not(v.substitute(replace)),
            Sym::Binary(op, l, r) => Sym::binary(*op, l.substitute(replace), r.substitute(replace)),
            Sym::Select(c, t, e) => Sym::select(
                c.substitute(replace),
                t.substitute(replace),
                e.substitute(replace),
            ),
        }
    }

    /// Every atom the value mentions, each once.
    pub fn atoms(&self) -> Vec<&Atom> {
        let mut found: Vec<&Atom> = Vec::new();
        let mut pending = vec![self];
        while let Some(sym) = pending.pop() {
            match sym {
                Sym::Const(_) | Sym::Unknown(_) => {}
                Sym::Atom(atom) => {
                    if !found.contains(&atom) {
                        found.push(atom);
                    }
                }
                Sym::Neg(v) | Sym::BitNot(v) | Sym::Not(v) => pending.push(v),
                Sym::Binary(_, l, r) => pending.extend([&**l, &**r]),
                Sym::Select(c, t, e) => pending.extend([&**c, &**t, &**e]),
            }
        }
        found
    }

    /// The first reason the value is unknown, if any part of it is.
    pub fn unknown(&self) -> Option<&Unknown> {
        let mut pending = vec![self];
        while let Some(sym) = pending.pop() {
            match sym {
                Sym::Unknown(why) => return Some(why),
                Sym::Const(_) | Sym::Atom(_) => {}
                Sym::Neg(v) | Sym::BitNot(v) | Sym::Not(v) => pending.push(v),
                Sym::Binary(_, l, r) => pending.extend([&**r, &**l]),
                Sym::Select(c, t, e) => pending.extend([&**e, &**t, &**c]),
            }
        }
        None
    }

    /// Same value in every lane of a warp: no thread index and nothing unknown.
    pub fn is_uniform(&self) -> bool {
        self.unknown().is_none()
            && self
                .atoms()
                .iter()
                .all(|atom| !matches!(atom, Atom::Thread(_)))
    }

    pub fn mentions_thread(&self) -> bool {
        self.atoms()
            .iter()
            .any(|atom| matches!(atom, Atom::Thread(_)))
    }

    fn precedence(&self) -> u8 {
        match self {
            Sym::Binary(op, ..) => op.precedence(),
            Sym::Select(..) => 0,
            Sym::Const(v) if *v < 0 => 11,
            _ => 12,
        }
    }

    fn fmt_operand(&self, f: &mut fmt::Formatter<'_>, context: u8) -> fmt::Result {
        if self.precedence() <= context {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Thread(axis) => write!(f, "{}", axis.short_name()),
            Atom::Loop { name, .. } | Atom::Uniform(name) => write!(f, "{name}"),
        }
    }
}

/// C syntax with the fewest parentheses that keep the meaning.
impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Bit masks read better in hex (`0x5555555555555555`).
            Sym::Const(v) if *v > 0xffff && v.count_ones() > 8 => write!(f, "{v:#x}"),
            Sym::Const(v) => write!(f, "{v}"),
            Sym::Atom(atom) => write!(f, "{atom}"),
            Sym::Neg(v) => {
                write!(f, "-")?;
                v.fmt_operand(f, 10)
            }
            Sym::BitNot(v) => {
                write!(f, "~")?;
                v.fmt_operand(f, 10)
            }
            Sym::Not(v) => {
                write!(f, "!")?;
                v.fmt_operand(f, 10)
            }
            // `32*j`: a constant factor reads best glued to its operand.
            Sym::Binary(Op::Mul, l, r)
                if matches!(**l, Sym::Const(c) if c >= 0) && matches!(**r, Sym::Atom(_)) =>
            {
                write!(f, "{l}*{r}")
            }
            Sym::Binary(Op::Mul, l, r)
                if matches!(**r, Sym::Const(c) if c >= 0) && matches!(**l, Sym::Atom(_)) =>
            {
                write!(f, "{r}*{l}")
            }
            Sym::Binary(op, l, r) => {
                let p = op.precedence();
                l.fmt_operand(f, p - 1)?;
                write!(f, " {} ", op.token())?;
                r.fmt_operand(f, p)
            }
            Sym::Select(c, t, e) => {
                c.fmt_operand(f, 0)?;
                write!(f, " ? ")?;
                t.fmt_operand(f, 0)?;
                write!(f, " : ")?;
                e.fmt_operand(f, 0)
            }
            Sym::Unknown(why) => write!(f, "<{why}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thread([i64; 3]);
    impl AtomValues for Thread {
        fn value(&self, atom: &Atom) -> Option<i64> {
            match atom {
                Atom::Thread(axis) => Some(self.0[axis.index()]),
                _ => None,
            }
        }
    }

    fn tx() -> Sym {
        Sym::thread(Axis::X)
    }

    #[test]
    fn constants_fold_and_neutral_elements_vanish() {
        let sum = Sym::binary(Op::Add, Sym::Const(2), Sym::Const(3));
        assert_eq!(sum, Sym::Const(5));
        assert_eq!(Sym::binary(Op::Mul, tx(), Sym::Const(1)), tx());
        assert_eq!(Sym::binary(Op::Add, Sym::Const(0), tx()), tx());
        assert_eq!(Sym::binary(Op::Mul, tx(), Sym::Const(0)), Sym::Const(0));
        // Division by zero is not folded: it stays for the evaluator to refuse.
        let div = Sym::binary(Op::Div, Sym::Const(1), Sym::Const(0));
        assert!(matches!(div, Sym::Binary(Op::Div, ..)));
        assert_eq!(div.eval(&Thread([0; 3])), None);
    }

    #[test]
    fn conditions_are_false_only_when_no_unknown_value_can_make_them_true() {
        let n = Sym::Atom(Atom::Uniform("n".into()));
        let below = |k| Sym::binary(Op::Lt, tx(), k);
        let both = Sym::binary(Op::LogAnd, below(Sym::Const(8)), below(n.clone()));
        assert_eq!(both.holds(&Thread([9, 0, 0])), Some(false));
        assert_eq!(both.holds(&Thread([3, 0, 0])), None);
        let either = Sym::binary(Op::LogOr, below(n.clone()), below(Sym::Const(8)));
        assert_eq!(either.holds(&Thread([3, 0, 0])), Some(true));
        assert_eq!(
            Sym::logical_not(either).holds(&Thread([3, 0, 0])),
            Some(false)
        );
        let same = Sym::select(below(n), below(Sym::Const(40)), below(Sym::Const(50)));
        assert_eq!(same.holds(&Thread([3, 0, 0])), Some(true));
        assert_eq!(same.holds(&Thread([45, 0, 0])), None);
    }

    #[test]
    fn evaluation_follows_c() {
        let e = Sym::binary(
            Op::Add,
            Sym::binary(Op::Mul, tx(), Sym::Const(33)),
            Sym::binary(Op::Div, Sym::negate(tx()), Sym::Const(2)),
        );
        // -3 / 2 truncates towards zero in C.
        assert_eq!(e.eval(&Thread([3, 0, 0])), Some(99 - 1));
        let select = Sym::select(
            Sym::binary(Op::Lt, tx(), Sym::Const(4)),
            tx(),
            Sym::Const(-1),
        );
        assert_eq!(select.eval(&Thread([2, 0, 0])), Some(2));
        assert_eq!(select.eval(&Thread([5, 0, 0])), Some(-1));
    }

    #[test]
    fn display_uses_minimal_parentheses() {
        let e = Sym::binary(
            Op::Mul,
            Sym::binary(Op::Add, tx(), Sym::Const(1)),
            Sym::Const(32),
        );
        assert_eq!(e.to_string(), "32 * (tx + 1)");
        let e = Sym::binary(
            Op::Sub,
            Sym::Const(8),
            Sym::binary(Op::Sub, tx(), Sym::Const(1)),
        );
        assert_eq!(e.to_string(), "8 - (tx - 1)");
        let e = Sym::binary(
            Op::And,
            Sym::binary(Op::Shr, tx(), Sym::Const(3)),
            Sym::Const(3),
        );
        assert_eq!(e.to_string(), "tx >> 3 & 3");
    }

    #[test]
    fn uniformity() {
        let block = Sym::Atom(Atom::Uniform("blockIdx.x".into()));
        assert!(block.is_uniform());
        assert!(!Sym::binary(Op::Add, block.clone(), tx()).is_uniform());
        let data = Sym::Unknown(Unknown::DataDependent("load of `in`".into()));
        assert!(!data.is_uniform());
        assert_eq!(
            Sym::binary(Op::Add, block, data)
                .unknown()
                .map(ToString::to_string),
            Some("data-dependent (load of `in`)".to_string())
        );
    }
}
