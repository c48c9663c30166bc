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
    /// `lhs < rhs ? then : otherwise`, for maps that treat two ranges of the index apart.
    Select {
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
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

    /// `self < bound ? then : otherwise`.
    pub fn select_below(self, bound: Expr, then: Expr, otherwise: Expr) -> Expr {
        Expr::Select {
            lhs: Box::new(self),
            rhs: Box::new(bound),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        }
    }

    /// The expression with `Index` replaced by `index`.
    pub fn with_index(&self, index: &Expr) -> Expr {
        match self {
            Expr::Index => index.clone(),
            Expr::Var(_) | Expr::Const(_) => self.clone(),
            Expr::Binary(op, l, r) => Expr::binary(*op, l.with_index(index), r.with_index(index)),
            Expr::Table {
                name,
                values,
                index: i,
            } => Expr::Table {
                name: name.clone(),
                values: values.clone(),
                index: Box::new(i.with_index(index)),
            },
            Expr::Select {
                lhs,
                rhs,
                then,
                otherwise,
            } => lhs.with_index(index).select_below(
                rhs.with_index(index),
                then.with_index(index),
                otherwise.with_index(index),
            ),
        }
    }

    /// ALU instructions: one per operator and per table load, two per select (a compare and
    /// the select itself); a subexpression written twice is computed once, as the compiler
    /// does.
    pub fn ops(&self) -> u32 {
        let mut seen: Vec<&Expr> = Vec::new();
        self.count_ops(&mut seen)
    }

    fn count_ops<'e>(&'e self, seen: &mut Vec<&'e Expr>) -> u32 {
        let own = match self {
            Expr::Index | Expr::Var(_) | Expr::Const(_) => return 0,
            Expr::Binary(..) | Expr::Table { .. } => 1,
            Expr::Select { .. } => 2,
        };
        if seen.contains(&self) {
            return 0;
        }
        seen.push(self);
        own + match self {
            Expr::Binary(_, l, r) => l.count_ops(seen) + r.count_ops(seen),
            Expr::Table { index, .. } => index.count_ops(seen),
            Expr::Select {
                lhs,
                rhs,
                then,
                otherwise,
            } => [lhs, rhs, then, otherwise]
                .iter()
                .map(|e| e.count_ops(seen))
                .sum(),
            _ => 0,
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
            Expr::Select {
                lhs,
                rhs,
                then,
                otherwise,
            } => {
                if lhs.eval_with(index, var)? < rhs.eval_with(index, var)? {
                    then.eval_with(index, var)
                } else {
                    otherwise.eval_with(index, var)
                }
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
            Expr::Select {
                lhs,
                rhs,
                then,
                otherwise,
            } => {
                if nested {
                    out.push('(');
                }
                lhs.write(var, true, out);
                out.push_str(" < ");
                rhs.write(var, true, out);
                out.push_str(" ? ");
                then.write(var, true, out);
                out.push_str(" : ");
                otherwise.write(var, true, out);
                if nested {
                    out.push(')');
                }
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
        let split =
            Expr::Index
                .modulo(5)
                .select_below(Expr::Const(4), Expr::Index, Expr::Const(99));
        assert_eq!(split.to_cuda("i"), "(i % 5) < 4 ? i : 99");
        assert_eq!(split.ops(), 3);
        assert_eq!((split.eval(8), split.eval(9)), (Some(8), Some(99)));
        let rotated = Expr::Index
            .xor(Expr::Const(1))
            .with_index(&Expr::Index.plus(Expr::Const(1)));
        assert_eq!(rotated.to_cuda("i"), "(i + 1) ^ 1");
        let twice = Expr::Index.modulo(17).plus(Expr::Index.modulo(17).times(3));
        assert_eq!(twice.ops(), 3);
    }
}
