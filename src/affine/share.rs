//! Hash-consing: the values of one function's analysis made into a graph in which equal
//! subtrees are one node. The executor builds each site's index, condition and forms afresh,
//! so `threadIdx.x`, a loop counter or `ty * 33` appear once per use; shared, a function's
//! sites take about half the memory (the 10 MB check bench holds 60,000 of them), and nothing
//! that reads them can tell.
use super::class::Class;
use super::digits::DigitAffine;
use super::exec::{FunctionAffine, LoopValues, Site};
use super::sym::{Atom, Op, Sym, Unknown};
use std::collections::HashMap;
use std::sync::Arc;

/// A node by its operator and its children's shared nodes (whose addresses are stable: the
/// table holds them).
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Const(i64),
    Atom(Atom),
    Unknown(Unknown),
    Neg(usize),
    BitNot(usize),
    Not(usize),
    Binary(Op, usize, usize),
    Select(usize, usize, usize),
}

#[derive(Default)]
struct Sharing {
    /// Every shared node, by structure.
    nodes: HashMap<Key, Arc<Sym>>,
    /// Nodes already seen, by address, with their shared node: a value built by assignments
    /// in sequence is a graph whose tree is exponential, so each node is visited once. The
    /// original is kept so that its address cannot be reused while the table lives.
    seen: HashMap<usize, (Arc<Sym>, Arc<Sym>)>,
}

impl Sharing {
    /// `sym` with its children replaced by shared nodes.
    fn sym(&mut self, sym: &mut Sym) {
        match sym {
            Sym::Const(_) | Sym::Atom(_) | Sym::Unknown(_) => {}
            Sym::Neg(v) | Sym::BitNot(v) | Sym::Not(v) => *v = self.node(v),
            Sym::Binary(_, l, r) => {
                *l = self.node(l);
                *r = self.node(r);
            }
            Sym::Select(c, t, e) => {
                *c = self.node(c);
                *t = self.node(t);
                *e = self.node(e);
            }
        }
    }

    fn node(&mut self, node: &Arc<Sym>) -> Arc<Sym> {
        let address = Arc::as_ptr(node) as usize;
        if let Some((_, shared)) = self.seen.get(&address) {
            return Arc::clone(shared);
        }
        let mut inner = (**node).clone();
        self.sym(&mut inner);
        let at = |child: &Arc<Sym>| Arc::as_ptr(child) as usize;
        let key = match &inner {
            Sym::Const(c) => Key::Const(*c),
            Sym::Atom(atom) => Key::Atom(atom.clone()),
            Sym::Unknown(why) => Key::Unknown(why.clone()),
            Sym::Neg(v) => Key::Neg(at(v)),
            Sym::BitNot(v) => Key::BitNot(at(v)),
            Sym::Not(v) => Key::Not(at(v)),
            Sym::Binary(op, l, r) => Key::Binary(*op, at(l), at(r)),
            Sym::Select(c, t, e) => Key::Select(at(c), at(t), at(e)),
        };
        let shared = Arc::clone(self.nodes.entry(key).or_insert_with(|| Arc::new(inner)));
        self.seen
            .insert(address, (Arc::clone(node), Arc::clone(&shared)));
        shared
    }

    fn form(&mut self, form: &mut DigitAffine) {
        for (_, coefficient) in &mut form.terms {
            self.sym(coefficient);
        }
        self.sym(&mut form.offset);
    }

    fn class(&mut self, class: &mut Class) {
        match class {
            Class::Stride(stride) => self.sym(stride),
            Class::Block(terms) => terms.iter_mut().for_each(|(_, c)| self.sym(c)),
            Class::Linear | Class::Random(_) => {}
        }
    }

    fn site(&mut self, site: &mut Site) {
        self.sym(&mut site.index);
        self.sym(&mut site.active);
        if let Ok(form) = &mut site.form {
            self.form(form);
        }
        self.class(&mut site.class);
        for iteration in &mut site.iterations {
            self.form(&mut iteration.form);
            self.class(&mut iteration.class);
        }
        site.member.iter_mut().for_each(|v| self.sym(v));
        site.subscripts.iter_mut().for_each(|v| self.sym(v));
    }
}

impl FunctionAffine {
    /// Makes equal subtrees of all the function's values one node (see the module's note).
    pub(super) fn share_subtrees(&mut self) {
        let mut sharing = Sharing::default();
        for lp in &mut self.loops {
            match &mut lp.values {
                LoopValues::Counter { init, cond, .. } => {
                    sharing.sym(init);
                    if let Some(cond) = cond {
                        sharing.sym(cond);
                    }
                }
                LoopValues::Trips { cond } => sharing.sym(cond),
                LoopValues::Unknown(_) => {}
            }
        }
        let alias_sites = self.aliases.iter_mut().map(|alias| &mut alias.site);
        for site in self.sites.iter_mut().flatten().flatten().chain(alias_sites) {
            sharing.site(site);
        }
    }
}
