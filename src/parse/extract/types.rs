//! Types: structs, unions, enums, typedefs and aliases, and the sizes and layouts the
//! environment records for them.
use super::walk::named_children;
use super::{leftmost_identifier, Extractor};
use crate::parse::ast;
use crate::parse::consts::{Bindings, TemplateRecord};
use crate::parse::symbols::{self, child, children_in, FIELDS};
use crate::parse::syntax::Node;
use crate::parse::types::{aggregate_offsets, Layout, Member};

/// Struct nesting depth beyond which a layout is given up as unknown.
const MAX_TYPE_DEPTH: usize = 32;

impl<'s> Extractor<'s> {
    pub(super) fn type_definition(&mut self, node: Node) {
        let Some(ty) = child(node, FIELDS.type_) else {
            return;
        };
        let layout = self.type_specifier(ty);
        let aggregate = matches!(
            ty.kind(),
            "struct_specifier" | "union_specifier" | "class_specifier"
        );
        // What the new name names: a tagged struct or another type by name, or the members
        // of an anonymous struct.
        let target = match child(ty, FIELDS.name) {
            Some(name) if aggregate => Some(self.text(name).to_string()),
            _ if aggregate => None,
            _ => Some(self.one_line(ty)),
        };
        let anonymous = match target {
            None => self.aggregate(ty, 0).map(|(_, members)| members),
            Some(_) => None,
        };
        for declarator in children_in(node, FIELDS.declarator) {
            if declarator.kind() != "type_identifier" {
                continue;
            }
            let name = self.text(declarator);
            match (&target, &anonymous, layout) {
                (Some(target), _, _) if self.env.types.define_alias(name, target).is_some() => {}
                (_, Some(members), Some(layout)) => {
                    self.env
                        .types
                        .define_aggregate(name, layout, members.clone());
                    if declares_data_only(ty) {
                        self.env.types.mark_plain_data(name);
                    }
                }
                (_, _, Some(layout)) => self.env.types.define(name, layout),
                _ => {}
            }
        }
    }

    /// The name and target of `using Name = Target;` or `typedef Target Name;`.
    pub(super) fn type_alias(&self, node: Node) -> Option<(String, String)> {
        match symbols::kind(node) {
            "alias_declaration" => {
                let name = child(node, FIELDS.name)?;
                let ty = child(node, FIELDS.type_)?;
                Some((self.text(name).to_string(), self.one_line(ty)))
            }
            "type_definition" => {
                let ty = child(node, FIELDS.type_)?;
                let declarator = child(node, FIELDS.declarator)?;
                (symbols::kind(declarator) == "type_identifier")
                    .then(|| (self.text(declarator).to_string(), self.one_line(ty)))
            }
            _ => None,
        }
    }

    pub(super) fn alias(&mut self, node: Node) {
        let (Some(name), Some(ty)) = (child(node, FIELDS.name), child(node, FIELDS.type_)) else {
            return;
        };
        self.env
            .types
            .define_alias(self.text(name), &self.one_line(ty));
    }

    /// Registers the struct/union/enum a type specifier defines and returns the type's layout.
    pub(super) fn type_specifier(&mut self, node: Node) -> Option<Layout> {
        match symbols::kind(node) {
            "enum_specifier" => {
                if let Some(body) = child(node, FIELDS.body) {
                    self.enumerators(body);
                }
                Some(Layout { size: 4, align: 4 })
            }
            "struct_specifier" | "union_specifier" | "class_specifier" => {
                let aggregate = self.aggregate(node, 0);
                if let (Some(name), Some(body)) =
                    (child(node, FIELDS.name), child(node, FIELDS.body))
                {
                    self.static_members(self.text(name), body);
                }
                if let (Some(name), Some((layout, members))) =
                    (child(node, FIELDS.name), &aggregate)
                {
                    self.env
                        .types
                        .define_aggregate(self.text(name), *layout, members.clone());
                    if declares_data_only(node) {
                        self.env.types.mark_plain_data(self.text(name));
                    }
                }
                if child(node, FIELDS.body).is_none() {
                    return child(node, FIELDS.name)
                        .and_then(|name| self.env.types.layout(self.text(name)));
                }
                aggregate.map(|(layout, _)| layout)
            }
            _ => self.env.types.layout(&self.one_line(node)),
        }
    }

    /// A struct template (`template <int M, typename T> struct Traits { static constexpr
    /// int kBlockM = M; using Element = T; };`), kept for the instances kernels name
    /// (`Traits<64, half>::kBlockM`), as flash-attention's kernel traits carry tile sizes.
    pub(super) fn template_record(&mut self, template: Node, record: Node) {
        let (Some(name), Some(body)) = (child(record, FIELDS.name), child(record, FIELDS.body))
        else {
            return;
        };
        let params = super::templates::template_parameters(template, self.src)
            .into_iter()
            .map(|p| (p.name, p.is_type, p.default))
            .collect();
        let mut found = TemplateRecord {
            params,
            ..TemplateRecord::default()
        };
        for field in named_children(body) {
            if let Some(alias) = self.type_alias(field) {
                found.types.push(alias);
                continue;
            }
            if let Some((member, value)) = self.static_member(field) {
                found.values.push((member, ast::lower(value, self.src)));
            }
        }
        if found.values.is_empty() && found.types.is_empty() {
            return;
        }
        let name = self.text(name).to_string();
        if !self.namespace.is_empty() {
            let qualified = format!("{}::{name}", self.namespace.join("::"));
            self.env.define_record(&qualified, found.clone());
        }
        self.env.define_record(&name, found);
    }

    /// `static constexpr int kRows = 8;`: the member's name and its value's node.
    fn static_member<'t>(&self, field: Node<'t>) -> Option<(String, Node<'t>)> {
        if symbols::kind(field) != "field_declaration" {
            return None;
        }
        let is_static = named_children(field)
            .iter()
            .any(|c| symbols::kind(*c) == "storage_class_specifier" && self.text(*c) == "static");
        let declarator = child(field, FIELDS.declarator)?;
        let value = child(field, FIELDS.default_value)?;
        (is_static && symbols::kind(declarator) == "field_identifier")
            .then(|| (self.text(declarator).to_string(), value))
    }

    /// `static constexpr int kRows = 8;` in `struct Policy`: the constant `Policy::kRows`
    /// (policy and traits structs carry a kernel's tile sizes); `using Element = half;`: the
    /// type `Policy::Element`.
    fn static_members(&mut self, record: &str, body: Node) {
        for field in named_children(body) {
            if let Some((name, target)) = self.type_alias(field) {
                let member = format!("{record}::{name}");
                self.env.types.define_alias(&member, &target);
                if !self.namespace.is_empty() {
                    let qualified = format!("{}::{member}", self.namespace.join("::"));
                    self.env.types.define_alias(&qualified, &target);
                }
                continue;
            }
            if symbols::kind(field) != "field_declaration" {
                continue;
            }
            let Some((member, value)) = self.static_member(field) else {
                continue;
            };
            let value = self
                .env
                .eval(&ast::lower(value, self.src), &Bindings::default());
            if let Ok(value) = value {
                self.define_scoped_value(&format!("{record}::{member}"), value);
            }
        }
    }

    fn enumerators(&mut self, body: Node) {
        let mut next = 0i64;
        for enumerator in named_children(body) {
            if symbols::kind(enumerator) != "enumerator" {
                continue;
            }
            let Some(name) = child(enumerator, FIELDS.name) else {
                continue;
            };
            let value = match child(enumerator, FIELDS.value) {
                Some(value) => self
                    .env
                    .eval(&ast::lower(value, self.src), &Bindings::default())
                    .ok(),
                None => Some(next),
            };
            if let Some(value) = value {
                self.env.define_value(self.text(name), value);
                next = value.wrapping_add(1);
            }
        }
    }

    /// A struct or union's layout and members.
    fn aggregate(&self, node: Node, depth: usize) -> Option<(Layout, Vec<Member>)> {
        let body = child(node, FIELDS.body)?;
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        let forced_align = named_children(node)
            .into_iter()
            .find(|child| symbols::kind(*child).contains("align"))
            .and_then(|align| {
                let expr = named_children(align).into_iter().last()?;
                self.env
                    .eval(&ast::lower(expr, self.src), &Bindings::default())
                    .ok()
            })
            .map(|v| v as u64);
        let mut members = Vec::new();
        for field in named_children(body) {
            if symbols::kind(field) != "field_declaration" {
                continue;
            }
            let ty = child(field, FIELDS.type_)?;
            let base = match ty.kind() {
                "struct_specifier" | "union_specifier" | "class_specifier" => self
                    .aggregate(ty, depth + 1)
                    .map(|(layout, _)| layout)
                    .or_else(|| {
                        child(ty, FIELDS.name).and_then(|n| self.env.types.layout(self.text(n)))
                    })?,
                "enum_specifier" => Layout { size: 4, align: 4 },
                _ => self.env.types.layout(&self.one_line(ty))?,
            };
            // A nested struct is looked into by its name (anonymous ones are not).
            let type_name = match child(ty, FIELDS.name) {
                Some(name) if ty.kind() != "primitive_type" => self.text(name).to_string(),
                _ => self.one_line(ty),
            };
            for declarator in children_in(field, FIELDS.declarator) {
                let (layout, extents) = self.member_layout(declarator, base)?;
                let name = leftmost_identifier(declarator, self.src).to_string();
                let type_name = if declarator.kind() == "pointer_declarator" {
                    format!("{type_name}*")
                } else {
                    type_name.clone()
                };
                members.push((name, layout, type_name, extents));
            }
            if named_children(field)
                .iter()
                .any(|c| symbols::kind(*c) == "bitfield_clause")
            {
                return None;
            }
        }
        let layouts: Vec<Layout> = members.iter().map(|m| m.1).collect();
        let (layout, offsets) =
            aggregate_offsets(&layouts, node.kind() == "union_specifier", forced_align);
        let members = members
            .into_iter()
            .zip(offsets)
            .map(|((name, layout, type_name, extents), offset)| Member {
                name,
                offset,
                layout,
                type_name,
                extents,
            })
            .collect();
        Some((layout, members))
    }

    /// A member's layout, and its extents (outermost first) when it is an array.
    fn member_layout(&self, declarator: Node, base: Layout) -> Option<(Layout, Vec<u64>)> {
        match declarator.kind() {
            "field_identifier" => Some((base, Vec::new())),
            "pointer_declarator" => Some((Layout { size: 8, align: 8 }, Vec::new())),
            "array_declarator" => {
                let (inner, mut extents) =
                    self.member_layout(child(declarator, FIELDS.declarator)?, base)?;
                let count = self
                    .env
                    .eval(
                        &ast::lower(child(declarator, FIELDS.size)?, self.src),
                        &Bindings::default(),
                    )
                    .ok()?;
                let count = u64::try_from(count).ok()?;
                let layout = Layout {
                    size: inner.size.checked_mul(count)?,
                    align: inner.align,
                };
                extents.push(count);
                Some((layout, extents))
            }
            _ => None,
        }
    }
}

/// Whether a struct, union or class specifier declares data members only: no base class, and
/// nothing in its body but field declarations (a method declared there has no layout, so
/// the struct has none) and comments.
fn declares_data_only(specifier: Node) -> bool {
    let Some(body) = child(specifier, FIELDS.body) else {
        return false;
    };
    !named_children(specifier)
        .iter()
        .any(|c| symbols::kind(*c) == "base_class_clause")
        && named_children(body)
            .iter()
            .all(|c| matches!(symbols::kind(*c), "field_declaration" | "comment"))
}
