//! The CUDA expression an address map emits, as a tree: printed for the rewrite, evaluated to
//! check it against the map it came from, and counted for the map's ALU cost (one instruction
//! per operator, one per table load).
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// The element index being mapped (or, in a 2-D form, the row or column named by `Var`).
    Index,
    /// Another variable of a 2-D form (the row index), printed as named.
    Var(String),
    Const(u64),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `name[index]` of a `__constant__` table (RAP's permutation).
    Table {
        name: String,
        values: Vec<u64>,
        index: Box<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl BinOp {
    fn token(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }

    fn apply(self, l: u64, r: u64) -> Option<u64> {
        match self {
            BinOp::Add => l.checked_add(r),
            BinOp::Sub => l.checked_sub(r),
            BinOp::Mul => l.checked_mul(r),
            BinOp::Div => l.checked_div(r),
            BinOp::Rem => l.checked_rem(r),
            BinOp::And => Some(l & r),
            BinOp::Or => Some(l | r),
            BinOp::Xor => Some(l ^ r),
            BinOp::Shl => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
            BinOp::Shr => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
        }
    }
}

impl Expr {
    pub fn binary(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary(op, Box::new(l), Box::new(r))
    }

    /// `self >> k`; nothing for 0.
    pub fn shift_right(self, k: u32) -> Expr {
        if k == 0 {
            self
        } else {
            Expr::binary(BinOp::Shr, self, Expr::Const(u64::from(k)))
        }
    }

    /// `self << k`; nothing for 0.
    pub fn shift_left(self, k: u32) -> Expr {
        if k == 0 {
            self
        } else {
            Expr::binary(BinOp::Shl, self, Expr::Const(u64::from(k)))
        }
    }

    pub fn and(self, mask: u64) -> Expr {
        Expr::binary(BinOp::And, self, Expr::Const(mask))
    }

    pub fn xor(self, other: Expr) -> Expr {
        Expr::binary(BinOp::Xor, self, other)
    }

    pub fn or(self, other: Expr) -> Expr {
        Expr::binary(BinOp::Or, self, other)
    }

    pub fn plus(self, other: Expr) -> Expr {
        Expr::binary(BinOp::Add, self, other)
    }

    pub fn minus(self, other: Expr) -> Expr {
        Expr::binary(BinOp::Sub, self, other)
    }

    /// `self * k`: a shift for powers of two, nothing for 1.
    pub fn times(self, k: u64) -> Expr {
        match k {
            1 => self,
            k if k.is_power_of_two() => self.shift_left(k.trailing_zeros()),
            k => Expr::binary(BinOp::Mul, self, Expr::Const(k)),
        }
    }

    /// `self / k`: a shift for powers of two.
    pub fn over(self, k: u64) -> Expr {
        if k.is_power_of_two() {
            self.shift_right(k.trailing_zeros())
        } else {
            Expr::binary(BinOp::Div, self, Expr::Const(k))
        }
    }

    /// `self % k`: a mask for powers of two.
    pub fn modulo(self, k: u64) -> Expr {
        if k.is_power_of_two() {
            self.and(k - 1)
        } else {
            Expr::binary(BinOp::Rem, self, Expr::Const(k))
        }
    }

    /// ALU instructions: one per operator and per table load.
    pub fn ops(&self) -> u32 {
        match self {
            Expr::Index | Expr::Var(_) | Expr::Const(_) => 0,
            Expr::Binary(_, l, r) => 1 + l.ops() + r.ops(),
            Expr::Table { index, .. } => 1 + index.ops(),
        }
    }

    /// The value for index `index` (`Var`s evaluate as the index too), `None` on overflow,
    /// underflow or division by zero.
    pub fn eval(&self, index: u64) -> Option<u64> {
        self.eval_with(index, &|_| None)
    }

    /// The value with `Index` = `index` and each `Var` given by `var`.
    pub fn eval_with(&self, index: u64, var: &dyn Fn(&str) -> Option<u64>) -> Option<u64> {
        match self {
            Expr::Index => Some(index),
            Expr::Var(name) => var(name).or(Some(index)),
            Expr::Const(c) => Some(*c),
            Expr::Binary(op, l, r) => op.apply(l.eval_with(index, var)?, r.eval_with(index, var)?),
            Expr::Table {
                values, index: i, ..
            } => {
                let i = i.eval_with(index, var)?;
                values.get(usize::try_from(i).ok()?).copied()
            }
        }
    }

    /// CUDA text with `Index` written as `var`; every operator below the top is parenthesised.
    pub fn to_cuda(&self, var: &str) -> String {
        let mut out = String::new();
        self.write(var, false, &mut out);
        out
    }

    fn write(&self, var: &str, nested: bool, out: &mut String) {
        match self {
            Expr::Index => out.push_str(var),
            Expr::Var(name) => out.push_str(name),
            Expr::Const(c) if *c >= 1 << 10 && (c + 1).is_power_of_two() => {
                let _ = write!(out, "{c:#x}");
            }
            Expr::Const(c) if *c > i32::MAX as u64 => {
                let _ = write!(out, "{c}u");
            }
            Expr::Const(c) => {
                let _ = write!(out, "{c}");
            }
            Expr::Binary(op, l, r) => {
                if nested {
                    out.push('(');
                }
                l.write(var, true, out);
                let _ = write!(out, " {} ", op.token());
                r.write(var, true, out);
                if nested {
                    out.push(')');
                }
            }
            Expr::Table { name, index, .. } => {
                out.push_str(name);
                out.push('[');
                index.write(var, false, out);
                out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_evaluates_and_counts() {
        let e = Expr::Index.xor(Expr::Index.shift_right(6).and(3));
        assert_eq!(e.to_cuda("a"), "a ^ ((a >> 6) & 3)");
        assert_eq!(e.ops(), 3);
        assert_eq!(e.eval(0b1100_0001), Some(0b1100_0001 ^ 3));
        let padded = Expr::Index.plus(Expr::Index.over(32).times(1));
        assert_eq!(padded.to_cuda("i"), "i + (i >> 5)");
        assert_eq!(padded.ops(), 2);
        assert_eq!(padded.eval(64), Some(66));
        let table = Expr::Table {
            name: "sigma".into(),
            values: vec![2, 0, 1],
            index: Box::new(Expr::Index.modulo(3)),
        };
        assert_eq!(table.to_cuda("r"), "sigma[r % 3]");
        assert_eq!(table.ops(), 2);
        assert_eq!(table.eval(4), Some(0));
        assert_eq!(Expr::Const(0x3fff).to_cuda("i"), "0x3fff");
        assert_eq!(Expr::Index.minus(Expr::Const(1)).eval(0), None);
        let rows = Expr::Var("r".into()).times(33).plus(Expr::Index);
        assert_eq!(rows.to_cuda("c"), "(r * 33) + c");
        assert_eq!(rows.eval_with(2, &|_| Some(3)), Some(101));
    }
}
