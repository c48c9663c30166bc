//! Iterative walks over syntax trees ([`walk`], [`Preorder`]), a
//! use's ancestor chain ([`Lineage`]) and the child lists the other walks are built from.
use crate::parse::syntax::Node;

/// Calls `visit` on `root` and its descendants in source order; `visit` returns whether to
/// descend into the node's children.
pub(crate) fn walk<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = root.walk();
    let mut descend = visit(root);
    loop {
        if descend && cursor.goto_first_child() {
            descend = visit(cursor.node());
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                descend = visit(cursor.node());
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

pub(super) fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

pub(super) fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// A use of a name and its ancestors up to the walk's root, nearest first. The flat tree
/// climbs in O(1) per step, so only the node is kept: a copy of every use's ancestors would
/// be quadratic in the depth of an expression with many uses (`s[t] + s[t] + …`).
pub(super) struct Lineage<'t> {
    use_node: Node<'t>,
    /// How many ancestors the walk passed (the root's included).
    ancestors: usize,
}

impl<'t> Lineage<'t> {
    pub(super) fn new(use_node: Node<'t>, ancestors: usize) -> Self {
        Lineage {
            use_node,
            ancestors,
        }
    }

    /// The node `level` steps above the use (0 is the use itself).
    pub(super) fn node(&self, level: usize) -> Node<'t> {
        self.up(level).unwrap_or(self.use_node)
    }

    pub(super) fn parent(&self, level: usize) -> Option<Node<'t>> {
        self.up(level + 1)
    }

    fn up(&self, level: usize) -> Option<Node<'t>> {
        if level > self.ancestors {
            return None;
        }
        let mut node = self.use_node;
        for _ in 0..level {
            node = node.parent()?;
        }
        Some(node)
    }
}

/// The nodes of a subtree in source order (pre-order), for the walks a function body gets
/// several times: the flat tree stores them in that order, so a walk is a pass over an
/// array range.
pub(super) struct Preorder<'t> {
    root: Node<'t>,
}

impl<'t> Preorder<'t> {
    pub(super) fn of(root: Node<'t>) -> Self {
        Preorder { root }
    }

    /// [`walk`] over the subtree.
    pub(super) fn walk(&self, mut visit: impl FnMut(Node<'t>) -> bool) {
        let mut next = Some(self.root);
        while let Some(node) = next {
            let descend = visit(node);
            next = node.next_in_preorder(descend, self.root);
        }
    }

    /// Like [`walk`] over the subtree, also passing each node's ancestors (root first, the
    /// root included).
    pub(super) fn walk_with_ancestors(&self, mut visit: impl FnMut(Node<'t>, &[Node<'t>]) -> bool) {
        let mut ancestors: Vec<Node<'t>> = Vec::new();
        let mut next = Some(self.root);
        while let Some(node) = next {
            while ancestors.last().is_some_and(|a| !a.subtree_contains(node)) {
                ancestors.pop();
            }
            let descend = visit(node, &ancestors);
            if descend {
                ancestors.push(node);
            }
            next = node.next_in_preorder(descend, self.root);
        }
    }
}
