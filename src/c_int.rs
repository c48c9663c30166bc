//! C integer arithmetic as bankwise evaluates it, in one place: the constants of the front
//! end (macros, `constexpr`, `#if`), the host bounds of launches, and the values the affine
//! executor and the bank model compute for every lane. It imports nothing: every stage
//! above uses it.

/// How an expression's integers behave where C leaves a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantics {
    /// A constant expression (a macro, an extent, `#if`): 64-bit, as the preprocessor's
    /// `intmax_t`; an overflow or a shift by 64 or more has no known value.
    Constant,
    /// A value the GPU computes: two's complement that wraps, and a shift by
    /// [`SHIFT_WIDTH`] or more (or by a negative amount) clamped as PTX's `shl`/`shr` clamp
    /// it, where C++ leaves it undefined.
    Device,
}

impl Semantics {
    /// The shift amount `r` when it is in range.
    fn shift_amount(self, r: i64) -> Option<u32> {
        let width = match self {
            Semantics::Constant => 64,
            Semantics::Device => SHIFT_WIDTH,
        };
        u32::try_from(r).ok().filter(|s| *s < width)
    }
}

/// The width of the integers indices are computed in on the GPU: a shift by this much or
/// more is clamped, as the GPU does.
pub const SHIFT_WIDTH: u32 = 32;

/// A binary operator of C, as every evaluator applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogAnd,
    LogOr,
}

impl Op {
    pub fn token(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Shl => "<<",
            Op::Shr => ">>",
            Op::And => "&",
            Op::Or => "|",
            Op::Xor => "^",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::LogAnd => "&&",
            Op::LogOr => "||",
        }
    }

    /// `l op r` under `semantics`; `None` where the value is not known: C leaves it
    /// undefined (division by zero), or the semantics say overflow is unknown.
    pub fn apply(self, l: i64, r: i64, semantics: Semantics) -> Option<i64> {
        let device = semantics == Semantics::Device;
        Some(match self {
            Op::Add if device => l.wrapping_add(r),
            Op::Sub if device => l.wrapping_sub(r),
            Op::Mul if device => l.wrapping_mul(r),
            Op::Add => l.checked_add(r)?,
            Op::Sub => l.checked_sub(r)?,
            Op::Mul => l.checked_mul(r)?,
            Op::Div => l.checked_div(r)?,
            Op::Rem => l.checked_rem(r)?,
            Op::Shl => match semantics.shift_amount(r) {
                Some(s) if device => l.checked_shl(s)?,
                // A constant that loses bits has no value C defines.
                Some(s) => l.checked_shl(s).filter(|v| v >> s == l)?,
                None if device => 0,
                None => return None,
            },
            Op::Shr => match semantics.shift_amount(r) {
                Some(s) => l >> s,
                None if device && l < 0 => -1,
                None if device => 0,
                None => return None,
            },
            Op::And => l & r,
            Op::Or => l | r,
            Op::Xor => l ^ r,
            Op::Eq => i64::from(l == r),
            Op::Ne => i64::from(l != r),
            Op::Lt => i64::from(l < r),
            Op::Le => i64::from(l <= r),
            Op::Gt => i64::from(l > r),
            Op::Ge => i64::from(l >= r),
            Op::LogAnd => i64::from(l != 0 && r != 0),
            Op::LogOr => i64::from(l != 0 || r != 0),
        })
    }

    pub(crate) fn precedence(self) -> u8 {
        match self {
            Op::Mul | Op::Div | Op::Rem => 10,
            Op::Add | Op::Sub => 9,
            Op::Shl | Op::Shr => 8,
            Op::Lt | Op::Le | Op::Gt | Op::Ge => 7,
            Op::Eq | Op::Ne => 6,
            Op::And => 5,
            Op::Xor => 4,
            Op::Or => 3,
            Op::LogAnd => 2,
            Op::LogOr => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_have_no_value_where_c_gives_none_and_the_gpu_wraps_and_clamps() {
        use Semantics::{Constant, Device};
        assert_eq!(Op::Add.apply(i64::MAX, 1, Constant), None);
        assert_eq!(Op::Add.apply(i64::MAX, 1, Device), Some(i64::MIN));
        assert_eq!(Op::Shl.apply(1, 40, Constant), Some(1 << 40));
        assert_eq!(Op::Shl.apply(1, 40, Device), Some(0));
        assert_eq!(Op::Shl.apply(1, 63, Constant), None);
        assert_eq!(Op::Shl.apply(1, 64, Constant), None);
        assert_eq!(Op::Shr.apply(-8, 40, Device), Some(-1));
        assert_eq!(Op::Shr.apply(8, -1, Device), Some(0));
        assert_eq!(Op::Div.apply(1, 0, Device), None);
        assert_eq!(Op::Rem.apply(7, 4, Constant), Some(3));
        assert_eq!(Op::LogOr.apply(0, 5, Constant), Some(1));
    }
}
