//! Field ids of the grammar, looked up once, for the lowering of expressions and statements
//! (a lookup by name compares the name with every field name of the grammar).
use super::syntax::{Cursor, Node};
use std::num::NonZeroU16;
use std::sync::LazyLock;

pub(super) struct Fields {
    pub alternative: u16,
    pub argument: u16,
    pub arguments: u16,
    pub body: u16,
    pub captures: u16,
    pub condition: u16,
    pub consequence: u16,
    pub declarator: u16,
    pub default_type: u16,
    pub default_value: u16,
    pub field: u16,
    pub function: u16,
    pub index: u16,
    pub indices: u16,
    pub initializer: u16,
    pub left: u16,
    pub name: u16,
    pub operator: u16,
    pub parameters: u16,
    pub right: u16,
    pub scope: u16,
    pub size: u16,
    pub type_: u16,
    pub update: u16,
    pub value: u16,
}

/// Id 0 (a name the grammar lacks) finds no child.
pub(super) static FIELDS: LazyLock<Fields> = LazyLock::new(|| {
    let language = super::language::cuda();
    let id = |name: &str| language.field_id_for_name(name).map_or(0, NonZeroU16::get);
    Fields {
        alternative: id("alternative"),
        argument: id("argument"),
        arguments: id("arguments"),
        body: id("body"),
        captures: id("captures"),
        condition: id("condition"),
        consequence: id("consequence"),
        declarator: id("declarator"),
        default_type: id("default_type"),
        default_value: id("default_value"),
        field: id("field"),
        function: id("function"),
        index: id("index"),
        indices: id("indices"),
        initializer: id("initializer"),
        left: id("left"),
        name: id("name"),
        operator: id("operator"),
        parameters: id("parameters"),
        right: id("right"),
        scope: id("scope"),
        size: id("size"),
        type_: id("type"),
        update: id("update"),
        value: id("value"),
    }
});

/// The child of `node` in the field with id `field`.
pub(super) fn child(node: Node, field: u16) -> Option<Node> {
    node.child_by_field_id(field)
}

/// The children of `node` in the field with id `field`.
pub(super) fn children_in(node: Node, field: u16) -> Vec<Node> {
    let mut found = Vec::new();
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            if field_of(&cursor) == Some(field) {
                found.push(cursor.node());
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    found
}

/// The id of the field the cursor's node is in (never 0).
pub(super) fn field_of(cursor: &Cursor) -> Option<u16> {
    cursor.field_id().map(NonZeroU16::get)
}

/// `node.kind()` (kept as a function for the call sites written against tree-sitter, where
/// it read a table).
pub(super) fn kind<'t>(node: Node<'t>) -> &'static str {
    node.kind()
}
