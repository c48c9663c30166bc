//! Pointers into the function's shared arrays: what a pointer expression designates, and
//! where a pointer goes out of sight.
use super::{Executor, PointerEscape, Value};
use crate::affine::sym::{Op, Sym};
use crate::parse::{AccessKind, EscapeKind, Expr, ExprKind, Span, UnaryOp};

/// A pointer into one of the analysed function's shared arrays.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pointer {
    pub(super) array: usize,
    /// Offset from the array's start, in elements.
    pub(super) offset: Sym,
    /// The extents below the one the pointer steps over: empty for a pointer to elements,
    /// `[33]` for `float tile[32][33]` decayed to a pointer to its rows.
    pub(super) inner: Vec<i64>,
    /// The uses of the array's name it was made from.
    pub(super) origins: Vec<Span>,
    /// A pointer cast to a wider type: each pointee is this many consecutive elements.
    pub(super) view: Option<View>,
}

/// The wider type a pointer into an array reads it as (`float4` over `float`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct View {
    /// The type as the cast writes it, without the `*`.
    pub(super) ty: String,
    pub(super) bytes: u64,
    /// Elements of the array per pointee.
    pub(super) elements: i64,
}

impl Pointer {
    /// `self + by`, in steps of what it points to.
    pub(super) fn advanced(&self, by: Sym) -> Pointer {
        let step: i64 = match &self.view {
            Some(view) => view.elements,
            None => self.inner.iter().product(),
        };
        Pointer {
            offset: Sym::binary(
                Op::Add,
                self.offset.clone(),
                Sym::binary(Op::Mul, by, Sym::Const(step)),
            ),
            ..self.clone()
        }
    }

    /// The same address as a pointer to single elements (`tile[i]` decays to `&tile[i][0]`).
    pub(super) fn to_elements(&self) -> Pointer {
        Pointer {
            inner: Vec::new(),
            view: None,
            ..self.clone()
        }
    }

    pub(super) fn same_target(&self, other: &Pointer) -> bool {
        self.array == other.array && self.inner == other.inner && self.view == other.view
    }

    pub(super) fn merged_origins(&self, other: &Pointer) -> Vec<Span> {
        let mut origins = self.origins.clone();
        origins.extend(other.origins.iter().copied());
        origins.sort_by_key(|s| (s.start, s.end));
        origins.dedup();
        origins
    }
}

/// `.x`, `.y`, `.z`, `.w` of CUDA's vector types (`float4`, `uint2`): (offset, size) in bytes.
fn vector_member(view: &View, field: &str) -> Option<(u64, u64)> {
    let count = view
        .ty
        .chars()
        .last()?
        .to_digit(10)
        .filter(|n| (2..=4).contains(n))?;
    let component = ["x", "y", "z", "w"].iter().position(|c| *c == field)? as u64;
    let size = view.bytes / u64::from(count);
    (component < u64::from(count)).then_some((component * size, size))
}

/// Where a pointer was made (for diagnostics).
pub(super) fn origin(pointer: &Pointer) -> Span {
    pointer
        .origins
        .first()
        .copied()
        .unwrap_or(Span { start: 0, end: 0 })
}

/// An element of a shared array reached through a pointer, and the member path touched.
pub(super) struct Place {
    pub(super) pointer: Pointer,
    pub(super) member: Option<String>,
    /// The values of the subscripts in `member`, in order.
    pub(super) member_subscripts: Vec<Sym>,
    /// The constant offset of the pointer it was reached from (see `AliasAccess`).
    pub(super) base_offset: Option<i64>,
    /// Bytes of the wider type the element is read as, through a cast pointer.
    pub(super) vector_bytes: Option<u64>,
}

/// What an expression designates: a shared element reached through a pointer, or a value.
pub(super) enum Lvalue {
    Place(Place),
    Value(Value),
}

impl<'a> Executor<'a> {
    /// Drops `value`; a pointer dropped this way is out of sight (`why`).
    pub(super) fn lose(&mut self, value: Value, at: &Expr, kind: EscapeKind) {
        if let Value::Pointer(p) = value {
            self.escape(&p, at.span, kind);
        }
    }

    /// `pointer` goes out of sight at `span`; a `Pointer(why)` reason reads as a sentence
    /// about it.
    pub(super) fn escape(&mut self, pointer: &Pointer, span: Span, kind: EscapeKind) {
        let array = &self.function.arrays[pointer.array].name;
        let kind = match kind {
            EscapeKind::Pointer(why) => {
                EscapeKind::Pointer(format!("a pointer into `{array}` {why}"))
            }
            other => other,
        };
        self.escape_array(pointer.array, span, kind);
    }

    /// A pointer bound to `name` at `span` (a declaration, an assignment, a parameter of
    /// the function whose body runs) escapes when a dead preprocessor branch names `name`:
    /// another configuration uses it there.
    pub(super) fn check_inactive(&mut self, name: &str, value: &Value, span: Span) {
        let Value::Pointer(pointer) = value else {
            return;
        };
        if let Some(named) = self.unseen_uses.iter().find(|n| n.name == name) {
            let kind = EscapeKind::ReachesUnseenUse(named.clone());
            self.escape_array(pointer.array, span, kind);
        }
    }

    pub(super) fn escape_array(&mut self, array: usize, span: Span, kind: EscapeKind) {
        self.pointer_escapes.push(PointerEscape {
            array,
            span: self.macro_site.unwrap_or(span),
            kind,
            calls: self.calls.iter().map(|(span, _)| *span).collect(),
        });
    }

    /// The array whose name `expr` uses to make a pointer (an escape of the front end).
    pub(super) fn name_use(&self, expr: &Expr) -> Option<usize> {
        if self.macro_site.is_some() || !self.calls.is_empty() {
            return None;
        }
        self.name_uses.get(&expr.span).copied()
    }

    /// The array's name as a value: a pointer to its first element (row, for 2-D and up).
    pub(super) fn array_pointer(&mut self, array: usize, expr: &Expr) -> Value {
        self.followed.insert(expr.span);
        let dims = &self.function.arrays[array].dims;
        let inner: Option<Vec<i64>> = dims
            .iter()
            .skip(1)
            .map(|d| d.and_then(|d| i64::try_from(d).ok()))
            .collect();
        let pointer = Pointer {
            array,
            offset: Sym::Const(0),
            inner: inner.clone().unwrap_or_default(),
            origins: vec![expr.span],
            view: None,
        };
        if inner.is_none() {
            self.escape(
                &pointer,
                expr.span,
                EscapeKind::Pointer("has an unknown extent".into()),
            );
            return Value::Data(format!("`{expr}`"));
        }
        Value::Pointer(pointer)
    }

    /// The view a cast to `ty` makes of a pointer into `array`: a type of 2, 4, 8 or 16 bytes
    /// that holds a whole number of its elements (`(float4 *)&s[i]` over `float`, `(uint4 *)`
    /// or `(float *)` over `unsigned char`, `(float *)` over `int`), which the hardware reads
    /// in one request.
    pub(super) fn vector_view(&self, array: usize, ty: &str) -> Option<View> {
        let pointee = ty.trim_end().strip_suffix('*')?.trim();
        if pointee.contains('*') {
            return None;
        }
        let bytes = self.constants.types.layout(pointee)?.size;
        let elem_bytes = self.function.arrays[array].elem_bytes?;
        let vector =
            matches!(bytes, 2 | 4 | 8 | 16) && elem_bytes <= bytes && bytes % elem_bytes == 0;
        vector.then(|| View {
            ty: pointee.to_string(),
            bytes,
            elements: (bytes / elem_bytes) as i64,
        })
    }

    /// Whether a cast to `ty` leaves a pointer into `array` a pointer to its elements
    /// (`(float *)tile`, `(volatile float *)s`).
    pub(super) fn keeps_elements(&self, array: usize, ty: &str) -> bool {
        let words = |t: &str| -> Vec<String> {
            t.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict__"))
                .map(str::to_string)
                .collect()
        };
        let Some(pointee) = ty.trim_end().strip_suffix('*') else {
            return false;
        };
        !pointee.contains('*') && words(pointee) == words(&self.function.arrays[array].elem_type)
    }

    /// What `expr` designates when it may be a shared element reached through a pointer
    /// (`p[i]`, `*p`, `p->x`, `p[i].x`); any other expression is evaluated.
    pub(super) fn lvalue(&mut self, expr: &Expr) -> Lvalue {
        if self.direct(expr).is_some() {
            return Lvalue::Value(self.eval(expr));
        }
        match &expr.kind {
            ExprKind::Index { base, index } => {
                let base_value = self.lvalue(base);
                let i = self.eval_int(index);
                match base_value {
                    Lvalue::Place(mut place) if place.member.is_some() => {
                        if let Some(member) = place.member.as_mut() {
                            member.push_str(&format!("[{index}]"));
                        }
                        place.member_subscripts.push(i);
                        Lvalue::Place(place)
                    }
                    Lvalue::Place(place) => {
                        self.record_alias(&place, AccessKind::Load, None, base);
                        Lvalue::Value(Value::Data(format!("`{expr}`")))
                    }
                    Lvalue::Value(Value::Pointer(p)) => {
                        let base_offset = p.offset.constant();
                        match self.step_into(p.advanced(i)) {
                            Lvalue::Place(place) => Lvalue::Place(Place {
                                base_offset,
                                ..place
                            }),
                            value => value,
                        }
                    }
                    Lvalue::Value(_) => Lvalue::Value(Value::Data(format!("`{expr}`"))),
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Deref,
                operand,
            } => match self.eval(operand) {
                Value::Pointer(p) => self.step_into(p),
                _ => Lvalue::Value(Value::Data(format!("`{expr}`"))),
            },
            ExprKind::Member { base, field, arrow } => {
                if !*arrow {
                    if let Some(v) = self.builtin(base, field) {
                        return Lvalue::Value(v);
                    }
                }
                let base_value = if *arrow {
                    match self.eval(base) {
                        Value::Pointer(p) => self.step_into(p),
                        v => Lvalue::Value(v),
                    }
                } else {
                    self.lvalue(base)
                };
                match base_value {
                    Lvalue::Place(place)
                        if place.pointer.view.is_some() && place.member.is_none() =>
                    {
                        self.vector_component(place, field)
                    }
                    Lvalue::Place(mut place) => {
                        place
                            .member
                            .get_or_insert_with(String::new)
                            .push_str(&format!(".{field}"));
                        Lvalue::Place(place)
                    }
                    Lvalue::Value(v) => {
                        self.lose(v, base, EscapeKind::UsedAsPointer);
                        Lvalue::Value(Value::Data(format!("`{field}`")))
                    }
                }
            }
            _ => Lvalue::Value(self.eval(expr)),
        }
    }

    /// `p4[i].x` through a vector view: one element of the vector when the member is one,
    /// else the member of the vector (which the cost stage does not simulate).
    fn vector_component(&self, mut place: Place, field: &str) -> Lvalue {
        let view = place.pointer.view.clone();
        let elem_bytes = self.function.arrays[place.pointer.array].elem_bytes;
        let element = view
            .as_ref()
            .zip(elem_bytes)
            .and_then(|(view, elem_bytes)| {
                let (offset, size) = self
                    .constants
                    .types
                    .member_range(&view.ty, field)
                    .or_else(|| vector_member(view, field))?;
                (size == elem_bytes && offset % elem_bytes == 0)
                    .then_some((offset / elem_bytes) as i64)
            });
        match element {
            Some(k) => {
                place.pointer = place.pointer.to_elements().advanced(Sym::Const(k));
                place.vector_bytes = None;
            }
            None => place.member = Some(format!(".{field}")),
        }
        Lvalue::Place(place)
    }

    /// What `*p` designates: an element, or (for a pointer to rows) the row, which decays to
    /// a pointer to its first element.
    pub(super) fn step_into(&self, pointer: Pointer) -> Lvalue {
        if pointer.inner.is_empty() {
            Lvalue::Place(Place {
                base_offset: pointer.offset.constant(),
                vector_bytes: pointer.view.as_ref().map(|v| v.bytes),
                pointer,
                member: None,
                member_subscripts: Vec::new(),
            })
        } else {
            let inner = pointer.inner[1..].to_vec();
            Lvalue::Value(Value::Pointer(Pointer { inner, ..pointer }))
        }
    }
}
