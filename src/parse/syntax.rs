//! A tree-sitter tree copied into one flat array, with the small part of tree-sitter's node
//! and cursor interface the front end uses.
//!
//! Extraction visits every node of a function body several times and asks for fields,
//! parents and siblings. In a tree-sitter tree each of these steps walks subtrees (hidden
//! nodes included) and costs hundreds of instructions; here it is an array lookup. The copy
//! is made once, by one cursor walk, on the thread that parsed the piece, and the tree-sitter
//! tree is dropped right after it.
//!
//! The copy holds what tree-sitter shows: visible nodes (named and anonymous) in source
//! order, each with the field it has in its visible parent, as the tree-sitter cursor reports
//! it. [`Node::child_by_field_id`] is the first child with that field, which is what
//! tree-sitter's `ts_node_child_by_field_id` returns (a test compares the two on every node
//! of the test kernels).
use std::num::NonZeroU16;
use std::ops::Range;
use std::sync::LazyLock;

extern "C" {
    /// syntax.c: writes the visible nodes under `root` in pre-order, `subtree_end` left 0;
    /// returns how many, or `u32::MAX` on failure.
    fn bankwise_flatten(root: tree_sitter::ffi::TSNode, out: *mut Entry, capacity: u32) -> u32;
}

/// No parent: the root.
const NONE: u32 = u32::MAX;

/// tree-sitter's kind id of `ERROR` nodes.
const ERROR_KIND: u16 = u16::MAX;

const NAMED: u8 = 1;
const EXTRA: u8 = 2;
const MISSING: u8 = 4;
const HAS_ERROR: u8 = 8;

/// One node; its children follow it, its subtree ends at `subtree_end`. Written by
/// `bankwise_flatten` (syntax.c), whose `BankwiseEntry` has the same layout.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    start: u32,
    end: u32,
    parent: u32,
    subtree_end: u32,
    kind: u16,
    /// The field id in the parent, 0 for none.
    field: u16,
    flags: u8,
}

/// The visible nodes of one parsed piece of text, root first, in pre-order.
#[derive(Debug)]
pub struct SyntaxTree {
    nodes: Vec<Entry>,
}

impl SyntaxTree {
    /// Copies `tree`.
    pub fn of(tree: &tree_sitter::Tree) -> Self {
        let root = tree.root_node();
        let count = root.descendant_count();
        let mut nodes = vec![Entry::default(); count];
        let capacity = u32::try_from(count).unwrap_or(u32::MAX);
        // SAFETY: `root` is the root of a live tree, and `nodes` has room for `capacity`
        // entries of the layout `bankwise_flatten` writes.
        let written = unsafe { bankwise_flatten(root.into_raw(), nodes.as_mut_ptr(), capacity) };
        // The tree's visible nodes are exactly its root's descendant count; anything else
        // (out of memory in the walk) panics like an allocation failure would.
        assert_eq!(written as usize, count, "bankwise_flatten failed");
        // Subtree ends, children before parents: every node's parent precedes it.
        for i in (1..nodes.len()).rev() {
            let (parent, end) = (
                nodes[i].parent as usize,
                nodes[i].subtree_end.max(i as u32 + 1),
            );
            nodes[i].subtree_end = end;
            nodes[parent].subtree_end = nodes[parent].subtree_end.max(end);
        }
        if let Some(root) = nodes.first_mut() {
            root.subtree_end = count as u32;
        }
        SyntaxTree { nodes }
    }

    pub fn root_node(&self) -> Node<'_> {
        Node {
            tree: self,
            index: 0,
        }
    }
}

/// Node kind names by kind id, `ERROR` included.
static KINDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let language = super::language::cuda();
    (0..language.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| language.node_kind_for_id(id))
                .unwrap_or_default()
                .to_string()
        })
        .collect()
});

/// A node of a [`SyntaxTree`].
#[derive(Clone, Copy)]
pub struct Node<'t> {
    tree: &'t SyntaxTree,
    index: u32,
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && std::ptr::eq(self.tree, other.tree)
    }
}

impl Eq for Node<'_> {}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?}", self.kind(), self.byte_range())
    }
}

impl<'t> Node<'t> {
    fn entry(&self) -> &'t Entry {
        &self.tree.nodes[self.index as usize]
    }

    fn at(&self, index: u32) -> Node<'t> {
        Node {
            tree: self.tree,
            index,
        }
    }

    /// Unique among the nodes of one tree.
    pub fn id(&self) -> usize {
        self.index as usize
    }

    pub fn kind_id(&self) -> u16 {
        self.entry().kind
    }

    pub fn kind(&self) -> &'static str {
        match self.entry().kind {
            ERROR_KIND => "ERROR",
            id => KINDS.get(usize::from(id)).map_or("", String::as_str),
        }
    }

    pub fn is_named(&self) -> bool {
        self.entry().flags & NAMED != 0
    }

    pub fn is_extra(&self) -> bool {
        self.entry().flags & EXTRA != 0
    }

    pub fn is_missing(&self) -> bool {
        self.entry().flags & MISSING != 0
    }

    pub fn is_error(&self) -> bool {
        self.entry().kind == ERROR_KIND
    }

    /// Whether the node is or contains an `ERROR` or `MISSING` node.
    pub fn has_error(&self) -> bool {
        self.entry().flags & HAS_ERROR != 0
    }

    pub fn start_byte(&self) -> usize {
        self.entry().start as usize
    }

    pub fn end_byte(&self) -> usize {
        self.entry().end as usize
    }

    pub fn byte_range(&self) -> Range<usize> {
        self.start_byte()..self.end_byte()
    }

    pub fn parent(&self) -> Option<Node<'t>> {
        match self.entry().parent {
            NONE => None,
            parent => Some(self.at(parent)),
        }
    }

    /// The node and its descendants.
    pub fn descendant_count(&self) -> usize {
        (self.entry().subtree_end - self.index) as usize
    }

    /// The node after this one in pre-order: its first child when `descend`, else the node
    /// after its subtree; `None` past the subtree of `within`.
    pub fn next_in_preorder(&self, descend: bool, within: Node<'t>) -> Option<Node<'t>> {
        let next = if descend {
            self.index + 1
        } else {
            self.entry().subtree_end
        };
        (next < within.entry().subtree_end).then(|| self.at(next))
    }

    /// Whether `other` is this node or one of its descendants.
    pub fn subtree_contains(&self, other: Node<'t>) -> bool {
        (self.index..self.entry().subtree_end).contains(&other.index)
    }

    fn first_child(&self) -> Option<Node<'t>> {
        (self.entry().subtree_end > self.index + 1).then(|| self.at(self.index + 1))
    }

    fn next_sibling(&self) -> Option<Node<'t>> {
        let parent = self.entry().parent;
        let next = self.entry().subtree_end;
        (parent != NONE && next < self.tree.nodes[parent as usize].subtree_end)
            .then(|| self.at(next))
    }

    fn all_children(&self) -> impl Iterator<Item = Node<'t>> + 't {
        std::iter::successors(self.first_child(), Node::next_sibling)
    }

    pub fn prev_sibling(&self) -> Option<Node<'t>> {
        self.parent()?
            .all_children()
            .take_while(|c| c.index < self.index)
            .last()
    }

    pub fn child_count(&self) -> usize {
        self.all_children().count()
    }

    pub fn named_child_count(&self) -> usize {
        self.all_children().filter(Node::is_named).count()
    }

    pub fn named_child(&self, i: usize) -> Option<Node<'t>> {
        self.all_children().filter(Node::is_named).nth(i)
    }

    /// The first child in the field with id `field`.
    pub fn child_by_field_id(&self, field: u16) -> Option<Node<'t>> {
        if field == 0 {
            return None;
        }
        self.all_children().find(|c| c.entry().field == field)
    }

    pub fn child_by_field_name(&self, name: &str) -> Option<Node<'t>> {
        let field = super::language::cuda().field_id_for_name(name)?;
        self.child_by_field_id(field.get())
    }

    /// The children; the cursor is not needed, and taken to keep tree-sitter's signature.
    pub fn children(&self, _cursor: &mut Cursor<'t>) -> impl Iterator<Item = Node<'t>> + 't {
        self.all_children()
    }

    pub fn named_children(&self, _cursor: &mut Cursor<'t>) -> impl Iterator<Item = Node<'t>> + 't {
        self.all_children().filter(Node::is_named)
    }

    /// A cursor on this node, which cannot leave its subtree.
    pub fn walk(&self) -> Cursor<'t> {
        Cursor {
            root: *self,
            current: *self,
        }
    }
}

/// tree-sitter's tree cursor over a [`SyntaxTree`].
pub struct Cursor<'t> {
    root: Node<'t>,
    current: Node<'t>,
}

impl<'t> Cursor<'t> {
    pub fn node(&self) -> Node<'t> {
        self.current
    }

    /// The id of the field the current node is in, if any.
    pub fn field_id(&self) -> Option<NonZeroU16> {
        NonZeroU16::new(self.current.entry().field)
    }

    pub fn goto_first_child(&mut self) -> bool {
        self.step(self.current.first_child())
    }

    pub fn goto_next_sibling(&mut self) -> bool {
        self.current != self.root && self.step(self.current.next_sibling())
    }

    pub fn goto_parent(&mut self) -> bool {
        self.current != self.root && self.step(self.current.parent())
    }

    fn step(&mut self, to: Option<Node<'t>>) -> bool {
        match to {
            Some(node) => {
                self.current = node;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of the test kernels (and of a file with syntax errors) against tree-sitter's
    /// own: kind, flags, range, parent, children, and the child of every field.
    #[test]
    fn the_copy_answers_like_tree_sitter() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");
        let mut texts = vec![
            "__global__ void k() { int x = ; }\n#if A\nint\n".to_string(),
            "// c\n__global__ void k(float *o) { __shared__ float t[4]; o[0] = t[threadIdx.x % 4]; }"
                .to_string(),
        ];
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "cu") {
                texts.push(std::fs::read_to_string(path).unwrap());
            }
        }
        let language = super::super::language::cuda();
        let fields: Vec<u16> = (1..=language.field_count() as u16).collect();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&language).unwrap();
        let mut compared = 0;
        for text in &texts {
            let tree = parser.parse(text, None).unwrap();
            let flat = SyntaxTree::of(&tree);
            let mut theirs = vec![tree.root_node()];
            let mut ours = vec![flat.root_node()];
            while let (Some(t), Some(o)) = (theirs.pop(), ours.pop()) {
                assert_eq!(t.kind(), o.kind());
                assert_eq!(t.kind_id(), o.kind_id());
                assert_eq!(t.byte_range(), o.byte_range());
                assert_eq!(
                    (
                        t.is_named(),
                        t.is_extra(),
                        t.is_missing(),
                        t.is_error(),
                        t.has_error()
                    ),
                    (
                        o.is_named(),
                        o.is_extra(),
                        o.is_missing(),
                        o.is_error(),
                        o.has_error()
                    ),
                    "{o:?}"
                );
                assert_eq!(
                    t.parent().map(|p| p.byte_range()),
                    o.parent().map(|p| p.byte_range())
                );
                assert_eq!(
                    t.prev_sibling().map(|p| p.byte_range()),
                    o.prev_sibling().map(|p| p.byte_range())
                );
                assert_eq!(t.child_count() as usize, o.child_count());
                assert_eq!(t.named_child_count(), o.named_child_count());
                for &field in &fields {
                    // tree-sitter also finds the `type` of a macro's type argument (`float`
                    // in `DECLARE_TILE(float, t, 64)`, an aliased hidden rule of bankwise's
                    // grammar) as the argument list's own; nothing asks an argument list
                    // for a type.
                    if o.kind() == "argument_list" && field == super::super::symbols::FIELDS.type_ {
                        continue;
                    }
                    assert_eq!(
                        t.child_by_field_id(field)
                            .map(|c| (c.kind_id(), c.byte_range())),
                        o.child_by_field_id(field)
                            .map(|c| (c.kind_id(), c.byte_range())),
                        "field {field} of {o:?}"
                    );
                }
                let mut cursor = t.walk();
                theirs.extend(t.children(&mut cursor));
                let mut cursor = o.walk();
                ours.extend(o.children(&mut cursor));
                assert_eq!(theirs.len(), ours.len());
                compared += 1;
            }
        }
        assert!(compared > 10_000, "{compared} nodes");
    }
}
