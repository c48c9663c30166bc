//! The digit-affine normal form `s = Σ c_k · d_k + o` (docs/ARCHITECTURE.md §3, Lloyd's index digits):
//! each digit is a bit field `(t >> a) & (2^b − 1)` of one thread index, each coefficient and
//! the offset are warp-uniform.
//!
//! Power-of-two `/`, `%`, `>>`, `&`, `|`, `^` are exact on a value whose thread part is a
//! *concatenation* of digits (every coefficient a sum of a few powers of two, no two pieces
//! sharing a bit) when the offset cannot carry into the thread bits. Anything else is not
//! digit-affine, and the reason says why. `/` and `%` need an offset that is provably
//! non-negative, because C truncates towards zero.
use super::sym::{Atom, Axis, Op, Sym};
use std::fmt;

/// The bit field `(t >> shift) & (2^bits − 1)` of a thread index; `bits: None` keeps every bit
/// above `shift` (a whole index is `shift = 0, bits = None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digit {
    pub axis: Axis,
    pub shift: u32,
    pub bits: Option<u32>,
}

impl Digit {
    pub fn whole(axis: Axis) -> Digit {
        Digit {
            axis,
            shift: 0,
            bits: None,
        }
    }

    pub fn value(self, thread: [i64; 3]) -> i64 {
        let shifted = thread[self.axis.index()] >> self.shift.min(63);
        match self.bits {
            Some(bits) => shifted & low_mask(bits),
            None => shifted,
        }
    }

    /// The largest value the digit takes in a block of this shape.
    pub fn max(self, block: [u32; 3]) -> i64 {
        let top = i64::from(block[self.axis.index()].max(1) - 1) >> self.shift.min(63);
        match self.bits {
            Some(bits) => top.min(low_mask(bits)),
            None => top,
        }
    }

    /// Bits the digit can occupy.
    fn width(self, block: [u32; 3]) -> u32 {
        64 - self.max(block).leading_zeros()
    }

    /// `(self >> k) & (2^bits − 1)`, as one digit.
    fn sub(self, k: u32, bits: Option<u32>) -> Digit {
        let remaining = self.bits.map(|b| b.saturating_sub(k));
        let bits = match (remaining, bits) {
            (None, bits) => bits,
            (Some(r), None) => Some(r),
            (Some(r), Some(b)) => Some(r.min(b)),
        };
        Digit {
            axis: self.axis,
            shift: self.shift + k,
            bits,
        }
    }

    /// The same digit with a redundant mask dropped; `None` when it is always 0.
    fn canonical(self, block: [u32; 3]) -> Option<Digit> {
        if self.max(block) == 0 {
            return None;
        }
        let top = i64::from(block[self.axis.index()].max(1) - 1) >> self.shift.min(63);
        match self.bits {
            Some(bits) if top <= low_mask(bits) => Some(Digit { bits: None, ..self }),
            _ => Some(self),
        }
    }
}

impl fmt::Display for Digit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.axis.short_name();
        match (self.shift, self.bits) {
            (0, None) => write!(f, "{t}"),
            (s, None) => write!(f, "({t} >> {s})"),
            (0, Some(b)) => write!(f, "({t} & {})", low_mask(b)),
            (s, Some(b)) => write!(f, "({t} >> {s} & {})", low_mask(b)),
        }
    }
}

fn low_mask(bits: u32) -> i64 {
    if bits >= 63 {
        i64::MAX
    } else {
        (1i64 << bits) - 1
    }
}

/// A subscript in digit-affine form.
#[derive(Debug, Clone, PartialEq)]
pub struct DigitAffine {
    /// Distinct digits with their (uniform) coefficients, sorted by digit.
    pub terms: Vec<(Digit, Sym)>,
    /// Warp-uniform: constants, loop counters, blockIdx, parameters.
    pub offset: Sym,
}

/// What the normalizer knows beyond the expression: the block shape, and how aligned each
/// uniform atom is (a loop counter stepping by 32 from 0 is a multiple of 32).
pub trait Context {
    fn block(&self) -> [u32; 3];
    /// `k` such that the atom's value is always a multiple of `2^k`.
    fn alignment(&self, atom: &Atom) -> u32;
    /// Whether the atom is never negative (blockIdx, a counter from 0 up).
    fn nonnegative(&self, atom: &Atom) -> bool;
}

/// Whether `sym` is provably never negative.
fn nonnegative(sym: &Sym, context: &impl Context) -> bool {
    match sym {
        Sym::Const(c) => *c >= 0,
        Sym::Atom(Atom::Thread(_)) => true,
        Sym::Atom(atom) => context.nonnegative(atom),
        Sym::Binary(Op::Add | Op::Mul | Op::Div | Op::Rem | Op::Or | Op::Xor, l, r) => {
            nonnegative(l, context) && nonnegative(r, context)
        }
        Sym::Binary(Op::Shl | Op::Shr, l, _) => nonnegative(l, context),
        Sym::Binary(Op::And, l, r) => nonnegative(l, context) || nonnegative(r, context),
        Sym::Binary(Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge, ..) => true,
        Sym::Binary(Op::LogAnd | Op::LogOr, ..) | Sym::Not(_) => true,
        _ => false,
    }
}

/// Why a value is not digit-affine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAffine {
    /// A shift, mask or divisor depends on a loop counter: the form exists per iteration.
    VariesByIteration(String),
    Other(String),
}

impl fmt::Display for NotAffine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotAffine::VariesByIteration(what) | NotAffine::Other(what) => write!(f, "{what}"),
        }
    }
}

fn other<T>(why: impl Into<String>) -> Result<T, NotAffine> {
    Err(NotAffine::Other(why.into()))
}

/// A bit range `[pos, pos + width)` of the value filled by one digit.
#[derive(Debug, Clone, Copy)]
struct Piece {
    pos: u32,
    digit: Digit,
    width: u32,
}

impl DigitAffine {
    pub fn constant(value: Sym) -> DigitAffine {
        DigitAffine {
            terms: Vec::new(),
            offset: value,
        }
    }

    pub fn is_uniform(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value for one thread, given values for the offset's atoms.
    pub fn eval(&self, thread: [i64; 3], atoms: &impl super::sym::AtomValues) -> Option<i64> {
        let mut sum = self.offset.eval(atoms)?;
        for (digit, coeff) in &self.terms {
            let c = coeff.eval(atoms)?;
            sum = sum.wrapping_add(c.wrapping_mul(digit.value(thread)));
        }
        Some(sum)
    }

    fn add(mut self, other: DigitAffine, sign: i64) -> DigitAffine {
        for (digit, coeff) in other.terms {
            let coeff = if sign < 0 { Sym::negate(coeff) } else { coeff };
            self.add_term(digit, coeff);
        }
        let op = if sign < 0 { Op::Sub } else { Op::Add };
        self.offset = Sym::binary(op, self.offset, other.offset);
        self
    }

    fn add_term(&mut self, digit: Digit, coeff: Sym) {
        match self.terms.binary_search_by(|(d, _)| d.cmp(&digit)) {
            Ok(i) => {
                let sum = Sym::binary(Op::Add, self.terms[i].1.clone(), coeff);
                if sum == Sym::Const(0) {
                    self.terms.remove(i);
                } else {
                    self.terms[i].1 = sum;
                }
            }
            Err(i) if coeff != Sym::Const(0) => self.terms.insert(i, (digit, coeff)),
            Err(_) => {}
        }
    }

    fn scale(self, factor: &Sym) -> DigitAffine {
        let mut scaled = DigitAffine::constant(Sym::binary(Op::Mul, self.offset, factor.clone()));
        for (digit, coeff) in self.terms {
            scaled.add_term(digit, Sym::binary(Op::Mul, coeff, factor.clone()));
        }
        scaled
    }

    /// Splits the digits of each thread index at every boundary any of them has, so that
    /// digits never partly overlap and equal values have equal forms
    /// (`4*tx − 3*(tx & 7)` becomes `(tx & 7) + 32*(tx >> 3)`).
    fn refine(self, block: [u32; 3]) -> DigitAffine {
        let mut result = DigitAffine::constant(self.offset.clone());
        for axis in Axis::ALL {
            let mut cuts: Vec<u32> = self
                .terms
                .iter()
                .filter(|(d, _)| d.axis == axis)
                .flat_map(|(d, _)| [Some(d.shift), d.bits.map(|b| d.shift + b)])
                .flatten()
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            for (digit, coeff) in self.terms.iter().filter(|(d, _)| d.axis == axis) {
                let end = digit.bits.map(|b| digit.shift + b);
                let mut start = digit.shift;
                loop {
                    let next = cuts
                        .iter()
                        .copied()
                        .find(|&c| c > start && end.is_none_or(|e| c < e));
                    let stop = next.or(end);
                    let sub = Digit {
                        axis,
                        shift: start,
                        bits: stop.map(|s| s - start),
                    };
                    if let Some(sub) = sub.canonical(block) {
                        let scale = Sym::Const(1i64 << (start - digit.shift).min(62));
                        result.add_term(sub, Sym::binary(Op::Mul, coeff.clone(), scale));
                    }
                    match next {
                        Some(n) => start = n,
                        None => break,
                    }
                }
            }
        }
        result.coarsen()
    }

    /// Joins neighbouring digits of one thread index whose coefficients continue each other
    /// (`16*(ty & 1) + 32*(ty >> 1)` is `16*ty`): the form with the fewest digits.
    fn coarsen(mut self) -> DigitAffine {
        loop {
            let mut merged = None;
            for (i, (low, low_coeff)) in self.terms.iter().enumerate() {
                let (Some(bits), Some(c)) = (low.bits, low_coeff.constant()) else {
                    continue;
                };
                let next = self.terms.iter().position(|(high, high_coeff)| {
                    high.axis == low.axis
                        && high.shift == low.shift + bits
                        && high_coeff.constant() == c.checked_mul(1i64 << bits.min(62))
                });
                if let Some(j) = next {
                    merged = Some((i, j));
                    break;
                }
            }
            let Some((i, j)) = merged else {
                return self;
            };
            let high = self.terms[j].0;
            let low = self.terms[i].0;
            let joined = Digit {
                axis: low.axis,
                shift: low.shift,
                bits: high.bits.zip(low.bits).map(|(h, l)| h + l),
            };
            let coeff = self.terms[i].1.clone();
            self.terms.remove(i.max(j));
            self.terms.remove(i.min(j));
            self.add_term(joined, coeff);
        }
    }

    fn pieces(&self, block: [u32; 3]) -> Result<Vec<Piece>, NotAffine> {
        let mut pieces = Vec::new();
        for (digit, coeff) in &self.terms {
            let Some(c) = coeff.constant() else {
                return Err(NotAffine::VariesByIteration(format!(
                    "bit operation on a thread term with coefficient `{coeff}`"
                )));
            };
            if c <= 0 || c.count_ones() > 8 {
                return other(format!(
                    "bit operation on `{c}*{digit}`, which is not a concatenation of bit fields"
                ));
            }
            let width = digit.width(block);
            for pos in 0..63 {
                if c & (1 << pos) != 0 {
                    pieces.push(Piece {
                        pos,
                        digit: *digit,
                        width,
                    });
                }
            }
        }
        pieces.sort_by_key(|p| p.pos);
        for pair in pieces.windows(2) {
            if pair[0].pos + pair[0].width > pair[1].pos {
                return other(format!(
                    "bit operation on thread terms that overlap (`{}` and `{}` share bits, so carries mix them)",
                    pair[0].digit, pair[1].digit
                ));
            }
        }
        Ok(pieces)
    }

    fn from_pieces(pieces: Vec<Piece>, offset: Sym, block: [u32; 3]) -> DigitAffine {
        let mut form = DigitAffine::constant(offset);
        for piece in pieces {
            if let Some(digit) = piece.digit.canonical(block) {
                form.add_term(digit, Sym::Const(1i64 << piece.pos));
            }
        }
        form
    }
}

/// Bits a piece list can set.
fn occupied(pieces: &[Piece]) -> u64 {
    pieces.iter().fold(0u64, |acc, p| {
        let bits = if p.width >= 64 {
            u64::MAX
        } else {
            (1u64 << p.width) - 1
        };
        acc | bits.checked_shl(p.pos).unwrap_or(0)
    })
}

/// `k` such that `sym` is always a multiple of `2^k` (0 when nothing is known).
fn alignment(sym: &Sym, context: &impl Context) -> u32 {
    match sym {
        Sym::Const(0) => 63,
        Sym::Const(c) => c.trailing_zeros(),
        Sym::Atom(atom) => context.alignment(atom),
        Sym::Neg(v) => alignment(v, context),
        Sym::Binary(Op::Mul, l, r) => (alignment(l, context) + alignment(r, context)).min(63),
        Sym::Binary(Op::Shl, l, r) => match r.constant() {
            Some(k) if (0..63).contains(&k) => (alignment(l, context) + k as u32).min(63),
            _ => alignment(l, context),
        },
        Sym::Binary(Op::Add | Op::Sub | Op::Or | Op::Xor, l, r) => {
            alignment(l, context).min(alignment(r, context))
        }
        Sym::Binary(Op::And, l, r) => alignment(l, context).max(alignment(r, context)),
        _ => 0,
    }
}

/// Whether adding `offset` to a value occupying `bits` never carries into or out of them, so
/// that `thread + offset == thread | offset`.
fn offset_is_disjoint(offset: &Sym, bits: u64, context: &impl Context) -> bool {
    match offset.constant() {
        Some(c) => c >= 0 && (c as u64) & bits == 0,
        None => alignment(offset, context) >= 64 - bits.leading_zeros(),
    }
}

/// Brings a symbolic value into digit-affine form.
pub fn normalize(sym: &Sym, context: &impl Context) -> Result<DigitAffine, NotAffine> {
    Ok(normalize_step(sym, context)?.refine(context.block()))
}

fn normalize_step(sym: &Sym, context: &impl Context) -> Result<DigitAffine, NotAffine> {
    if let Some(why) = sym.unknown() {
        return other(why.to_string());
    }
    if !sym.mentions_thread() {
        return Ok(DigitAffine::constant(sym.clone()));
    }
    let block = context.block();
    match sym {
        Sym::Atom(Atom::Thread(axis)) => Ok(DigitAffine::from_pieces(
            vec![Piece {
                pos: 0,
                digit: Digit::whole(*axis),
                width: 0,
            }],
            Sym::Const(0),
            block,
        )),
        Sym::Neg(v) => Ok(normalize(v, context)?.scale(&Sym::Const(-1))),
        Sym::Binary(op, l, r) => binary(*op, l, r, context),
        Sym::Select(..) => other("the index is chosen by a condition"),
        Sym::BitNot(_) => other("bitwise NOT of a thread index"),
        Sym::Not(_) => other("logical NOT of a thread index"),
        Sym::Const(_) | Sym::Atom(_) | Sym::Unknown(_) => Ok(DigitAffine::constant(sym.clone())),
    }
}

fn binary(op: Op, l: &Sym, r: &Sym, context: &impl Context) -> Result<DigitAffine, NotAffine> {
    let block = context.block();
    let lhs = normalize(l, context)?;
    let rhs = normalize(r, context)?;
    match op {
        Op::Add => return Ok(lhs.add(rhs, 1)),
        Op::Sub => return Ok(lhs.add(rhs, -1)),
        Op::Mul => {
            return match (lhs.is_uniform(), rhs.is_uniform()) {
                (_, true) => Ok(lhs.scale(&rhs.offset)),
                (true, false) => Ok(rhs.scale(&lhs.offset)),
                (false, false) => other("product of two thread-dependent values"),
            }
        }
        Op::Shl => {
            if !rhs.is_uniform() {
                return other("shift by a thread-dependent amount");
            }
            let factor = Sym::binary(Op::Shl, Sym::Const(1), rhs.offset);
            return Ok(lhs.scale(&factor));
        }
        Op::Or | Op::Xor if !lhs.is_uniform() && !rhs.is_uniform() => {
            let mut pieces = lhs.pieces(block)?;
            let right = rhs.pieces(block)?;
            let bits = occupied(&pieces);
            if bits & occupied(&right) != 0 {
                return other(format!(
                    "`{}` of thread terms that share bits (a swizzle, not digit-affine)",
                    op.token()
                ));
            }
            let all = bits | occupied(&right);
            if !offset_is_disjoint(&lhs.offset, all, context)
                || !offset_is_disjoint(&rhs.offset, all, context)
            {
                return other(format!(
                    "`{}` of thread terms with offsets that may carry into them",
                    op.token()
                ));
            }
            pieces.extend(right);
            let offset = Sym::binary(op, lhs.offset, rhs.offset);
            return Ok(DigitAffine::from_pieces(pieces, offset, block));
        }
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::LogAnd | Op::LogOr => {
            return other(format!("comparison `{}` used as an index", op.token()));
        }
        _ => {}
    }
    // `/ % >> & | ^` with a thread-dependent side: the other side must be a constant.
    let (form, operand) = match (lhs.is_uniform(), rhs.is_uniform()) {
        (false, true) => (lhs, rhs.offset),
        (true, false) if matches!(op, Op::And | Op::Or | Op::Xor) => (rhs, lhs.offset),
        _ => {
            return other(format!(
                "`{}` with a thread-dependent right operand",
                op.token()
            ))
        }
    };
    let Some(k) = operand.constant() else {
        return Err(NotAffine::VariesByIteration(format!(
            "`{}` by the non-constant `{operand}`",
            op.token()
        )));
    };
    bit_operation(op, form, k, context)
}

fn bit_operation(
    op: Op,
    form: DigitAffine,
    k: i64,
    context: &impl Context,
) -> Result<DigitAffine, NotAffine> {
    let block = context.block();
    let power = |k: i64| (k > 0 && k.count_ones() == 1).then(|| k.trailing_zeros());
    let pieces = form.pieces(block)?;
    let bits = occupied(&pieces);
    let disjoint = offset_is_disjoint(&form.offset, bits, context);
    let offset_alignment = alignment(&form.offset, context);
    match op {
        Op::Shr | Op::Div => {
            let shift = match op {
                Op::Shr if (0..63).contains(&k) => k as u32,
                Op::Div => match power(k) {
                    Some(s) => s,
                    None => {
                        return other(format!(
                            "division of a thread index by {k}, not a power of two"
                        ))
                    }
                },
                _ => return other(format!("shift by {k}")),
            };
            // C division truncates towards zero: only a non-negative offset keeps it a shift.
            if op == Op::Div && !nonnegative(&form.offset, context) {
                return other(format!(
                    "division of a thread-dependent value whose offset `{}` may be negative",
                    form.offset
                ));
            }
            if !disjoint && offset_alignment < shift {
                return other(format!(
                    "`{} {k}` of a thread-dependent value whose offset `{}` can carry into it",
                    op.token(),
                    form.offset
                ));
            }
            let shifted = pieces
                .into_iter()
                .filter(|p| p.pos + p.width > shift)
                .map(|p| {
                    if p.pos >= shift {
                        Piece {
                            pos: p.pos - shift,
                            ..p
                        }
                    } else {
                        let cut = shift - p.pos;
                        Piece {
                            pos: 0,
                            digit: p.digit.sub(cut, None),
                            width: p.width - cut,
                        }
                    }
                })
                .collect();
            let offset = Sym::binary(op, form.offset, Sym::Const(k));
            Ok(DigitAffine::from_pieces(shifted, offset, block))
        }
        Op::Rem | Op::And => {
            let mask = match op {
                Op::Rem => match power(k) {
                    Some(b) => low_mask(b),
                    None => {
                        return other(format!(
                            "remainder of a thread index by {k}, not a power of two"
                        ))
                    }
                },
                _ => k,
            };
            if op == Op::Rem && !nonnegative(&form.offset, context) {
                return other(format!(
                    "remainder of a thread-dependent value whose offset `{}` may be negative",
                    form.offset
                ));
            }
            let mask_bits = if mask >= 0 {
                64 - mask.leading_zeros()
            } else {
                64
            };
            let offset = if disjoint {
                Sym::binary(Op::And, form.offset, Sym::Const(mask))
            } else if mask >= 0 && offset_alignment >= mask_bits {
                Sym::Const(0)
            } else {
                return other(format!(
                    "`{} {k}` of a thread-dependent value whose offset `{}` can carry into it",
                    op.token(),
                    form.offset
                ));
            };
            Ok(DigitAffine::from_pieces(
                mask_pieces(&pieces, mask),
                offset,
                block,
            ))
        }
        Op::Or | Op::Xor => {
            if k < 0 || (k as u64) & bits != 0 {
                return other(format!(
                    "`{} {k}` flips thread bits (a swizzle, not digit-affine)",
                    op.token()
                ));
            }
            if !disjoint {
                return other(format!(
                    "`{} {k}` of a thread-dependent value whose offset `{}` can carry into it",
                    op.token(),
                    form.offset
                ));
            }
            let offset = Sym::binary(op, form.offset, Sym::Const(k));
            Ok(DigitAffine::from_pieces(pieces, offset, block))
        }
        _ => other(format!("`{}` of a thread index", op.token())),
    }
}

/// The pieces' bits that survive `& mask`, each contiguous run of the mask a digit of its own.
fn mask_pieces(pieces: &[Piece], mask: i64) -> Vec<Piece> {
    let mask = mask as u64;
    let mut kept = Vec::new();
    for piece in pieces {
        let mut bit = piece.pos;
        let end = (piece.pos + piece.width).min(64);
        while bit < end {
            if mask >> bit & 1 == 0 {
                bit += 1;
                continue;
            }
            let start = bit;
            while bit < end && mask >> bit & 1 == 1 {
                bit += 1;
            }
            kept.push(Piece {
                pos: start,
                digit: piece.digit.sub(start - piece.pos, Some(bit - start)),
                width: bit - start,
            });
        }
    }
    kept
}

impl fmt::Display for DigitAffine {
    /// `32*tx + ty + j`: terms by thread index, then the offset.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (digit, coeff) in &self.terms {
            let (negative, magnitude) = match coeff.constant() {
                Some(c) if c < 0 => (true, Sym::Const(c.wrapping_neg())),
                _ => (false, coeff.clone()),
            };
            match (first, negative) {
                (true, true) => write!(f, "-")?,
                (true, false) => {}
                (false, true) => write!(f, " - ")?,
                (false, false) => write!(f, " + ")?,
            }
            match &magnitude {
                Sym::Const(1) => {}
                Sym::Const(_) | Sym::Atom(_) => write!(f, "{magnitude}*")?,
                _ => write!(f, "({magnitude})*")?,
            }
            write!(f, "{digit}")?;
            first = false;
        }
        match (&self.offset, first) {
            (offset, true) => write!(f, "{offset}"),
            (Sym::Const(0), false) => Ok(()),
            (Sym::Const(c), false) if *c < 0 => write!(f, " - {}", c.wrapping_neg()),
            (Sym::Binary(op, ..), false) if op.precedence() >= Op::Add.precedence() => {
                write!(f, " + {}", self.offset)
            }
            (Sym::Atom(_) | Sym::Const(_), false) => write!(f, " + {}", self.offset),
            (offset, false) => write!(f, " + ({offset})"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::affine::sym::AtomValues;

    pub(crate) struct Block(pub [u32; 3]);
    impl Context for Block {
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

    pub(crate) struct NoAtoms;
    impl AtomValues for NoAtoms {
        fn value(&self, _: &Atom) -> Option<i64> {
            None
        }
    }

    pub(crate) fn tx() -> Sym {
        Sym::thread(Axis::X)
    }
    pub(crate) fn ty() -> Sym {
        Sym::thread(Axis::Y)
    }
    pub(crate) fn c(v: i64) -> Sym {
        Sym::Const(v)
    }
    pub(crate) fn op(o: Op, l: Sym, r: Sym) -> Sym {
        Sym::binary(o, l, r)
    }

    fn form(sym: &Sym, block: [u32; 3]) -> String {
        match normalize(sym, &Block(block)) {
            Ok(form) => form.to_string(),
            Err(why) => format!("not affine: {why}"),
        }
    }

    #[test]
    fn linear_thread_id_splits_into_lane_and_warp_digits() {
        // tid = ty * 32 + tx on a 32×8 block; lane = tid & 31, warp = tid >> 5.
        let tid = op(Op::Add, op(Op::Mul, ty(), c(32)), tx());
        assert_eq!(form(&tid, [32, 8, 1]), "tx + 32*ty");
        assert_eq!(form(&op(Op::And, tid.clone(), c(31)), [32, 8, 1]), "tx");
        assert_eq!(form(&op(Op::Shr, tid.clone(), c(5)), [32, 8, 1]), "ty");
        // On a 16×16 block the lane takes the low bit of ty.
        let tid16 = op(Op::Add, op(Op::Mul, ty(), c(16)), tx());
        assert_eq!(
            form(&op(Op::And, tid16.clone(), c(31)), [16, 16, 1]),
            "tx + 16*(ty & 1)"
        );
        assert_eq!(form(&op(Op::Div, tid16, c(32)), [16, 16, 1]), "(ty >> 1)");
    }

    #[test]
    fn fwt_butterfly_index_is_digit_affine() {
        // lo = pos & (S − 1); i0 = ((pos − lo) << 2) + lo with S = 8 → 32*(pos >> 3) + (pos & 7).
        let pos = tx();
        let lo = op(Op::And, pos.clone(), c(7));
        let i0 = op(Op::Add, op(Op::Shl, op(Op::Sub, pos, lo.clone()), c(2)), lo);
        assert_eq!(form(&i0, [256, 1, 1]), "(tx & 7) + 32*(tx >> 3)");
        let block = Block([256, 1, 1]);
        let normal = normalize(&i0, &block).unwrap();
        for t in 0..256 {
            let thread = [t, 0, 0];
            let expected = i0.eval(&ThreadOnly(thread));
            assert_eq!(normal.eval(thread, &NoAtoms), expected, "thread {t}");
        }
    }

    struct ThreadOnly([i64; 3]);
    impl AtomValues for ThreadOnly {
        fn value(&self, atom: &Atom) -> Option<i64> {
            match atom {
                Atom::Thread(axis) => Some(self.0[axis.index()]),
                _ => None,
            }
        }
    }

    #[test]
    fn padding_coefficients_are_concatenations() {
        // 33*tx keeps tx in bits 0..5 and 5..10: `& 31` keeps the first copy.
        let padded = op(Op::Mul, tx(), c(33));
        assert_eq!(form(&padded, [32, 1, 1]), "33*tx");
        assert_eq!(form(&op(Op::And, padded, c(31)), [32, 1, 1]), "tx");
        // 3*tx overlaps itself.
        let triple = op(Op::Shr, op(Op::Mul, tx(), c(3)), c(1));
        assert!(form(&triple, [32, 1, 1]).contains("overlap"));
    }

    #[test]
    fn offsets_must_not_carry_into_thread_bits() {
        let block = Atom::Uniform("blockIdx.x".into());
        let base = op(Op::Mul, Sym::Atom(block.clone()), c(64));
        // (tx + 64*b) >> 5 = (tx >> 5) + 2*b: the offset is a multiple of 64.
        let ok = op(Op::Shr, op(Op::Add, tx(), base), c(5));
        assert_eq!(form(&ok, [64, 1, 1]), "(tx >> 5) + 2*blockIdx.x");
        let unaligned = op(Op::Shr, op(Op::Add, tx(), Sym::Atom(block)), c(5));
        assert!(form(&unaligned, [64, 1, 1]).contains("can carry"));
        // A constant with disjoint bits is an OR: (tx + 32) & 63 on 32 threads.
        let disjoint = op(Op::And, op(Op::Add, tx(), c(32)), c(63));
        assert_eq!(form(&disjoint, [32, 1, 1]), "tx + 32");
    }

    #[test]
    fn not_digit_affine_cases_say_why() {
        assert_eq!(
            form(&op(Op::Div, tx(), c(3)), [32, 1, 1]),
            "not affine: division of a thread index by 3, not a power of two"
        );
        assert!(form(&op(Op::Xor, tx(), ty()), [32, 32, 1]).contains("swizzle"));
        assert!(form(&op(Op::Mul, tx(), ty()), [32, 32, 1]).contains("product"));
        let s = Sym::Atom(Atom::Loop {
            id: 0,
            name: "s".into(),
        });
        assert!(matches!(
            normalize(&op(Op::And, tx(), s.clone()), &Block([32, 1, 1])),
            Err(NotAffine::VariesByIteration(_))
        ));
        // A uniform coefficient is fine: the reduction's sdata[2*s*tx].
        let reduction = op(Op::Mul, op(Op::Mul, c(2), s), tx());
        assert_eq!(form(&reduction, [256, 1, 1]), "(2*s)*tx");
    }

    #[test]
    fn axes_of_extent_one_vanish() {
        let e = op(Op::Add, op(Op::Mul, ty(), c(32)), tx());
        assert_eq!(form(&e, [32, 1, 1]), "tx");
    }
}
