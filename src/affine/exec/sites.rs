//! Sites: what is recorded for each shared access, direct (a subscript of the array's name)
//! or through a pointer.
use super::loops::has_side_effects;
use super::pointers::Place;
use super::{AliasAccess, Executor, Site};
use crate::affine::class::Class;
use crate::affine::digits::NotAffine;
use crate::affine::sym::{Op, Sym, Unknown};
use crate::parse::{AccessKind, EscapeKind, Expr};

impl<'a> Executor<'a> {
    pub(super) fn record(&mut self, entries: &[(usize, usize)]) {
        let Some(&(array_index, access_index)) = entries.first() else {
            return;
        };
        let array = &self.function.arrays[array_index];
        let access = &array.accesses[access_index];
        let dims = array.dims.clone();
        let indices = access.indices.unpack();
        let member_subscripts = access.detail().member_subscripts.clone();
        let mut index = Sym::Const(0);
        let mut known_dims = true;
        let mut subscripts = Vec::with_capacity(indices.len());
        for (i, subscript) in indices.iter().enumerate() {
            let value = self.eval_int(subscript);
            subscripts.push(value.clone());
            let extent = if i == 0 {
                Some(0)
            } else {
                dims.get(i).copied().flatten().map(|d| d as i64)
            };
            match extent {
                Some(extent) if i > 0 => {
                    index = Sym::binary(
                        Op::Add,
                        Sym::binary(Op::Mul, index, Sym::Const(extent)),
                        value,
                    );
                }
                Some(_) => index = value,
                None => known_dims = false,
            }
        }
        if !self.recording {
            return;
        }
        if !known_dims {
            index = Sym::Unknown(Unknown::UnknownName(format!(
                "an extent of `{}`",
                array.name
            )));
        }
        let site = Site {
            member: self.member_values(&member_subscripts),
            subscripts,
            ..self.site(index)
        };
        for &(a, i) in entries {
            self.sites[a][i] = Some(site.clone());
        }
    }

    /// The values of a direct access's member subscripts. The expression around the element
    /// evaluates them again, so only those without side effects are evaluated here, and the
    /// accesses they contain are recorded there, not here.
    fn member_values(&mut self, subscripts: &[Expr]) -> Vec<Sym> {
        let recording = std::mem::replace(&mut self.recording, false);
        let values = subscripts
            .iter()
            .map(|subscript| {
                if has_side_effects(subscript) {
                    Sym::Unknown(Unknown::DataDependent(format!(
                        "`{subscript}`, a member subscript with side effects"
                    )))
                } else {
                    self.eval_int(subscript)
                }
            })
            .collect();
        self.recording = recording;
        values
    }

    pub(super) fn site(&self, index: Sym) -> Site {
        Site {
            index,
            loops: self.enclosing.clone(),
            active: self.active.clone(),
            form: Err(NotAffine::Other(String::new())),
            class: Class::Random(String::new()),
            iterations: Vec::new(),
            member: Vec::new(),
            subscripts: Vec::new(),
        }
    }

    /// An access through a pointer at `expr`.
    pub(super) fn record_alias(
        &mut self,
        place: &Place,
        kind: AccessKind,
        atomic_op: Option<String>,
        expr: &Expr,
    ) {
        if self.macro_site.is_some() {
            let why = "is dereferenced inside a macro expansion".to_string();
            self.escape(&place.pointer, expr.span, EscapeKind::Pointer(why));
            return;
        }
        if !self.recording {
            return;
        }
        let site = Site {
            member: place.member_subscripts.clone(),
            ..self.site(place.pointer.offset.clone())
        };
        self.aliases.push(AliasAccess {
            array: place.pointer.array,
            kind,
            span: expr.span,
            member: place.member.clone(),
            atomic_op,
            calls: self.calls.iter().map(|(span, _)| *span).collect(),
            site,
            base_offset: place.base_offset,
            vector_bytes: place.vector_bytes,
        });
    }
}
