//! The struct-of-arrays rewrite: its edits, for the layout that [`crate::solve::soa`] poses.
//!
//! `__shared__ FourVector home[N];` becomes one array per member, `__shared__ float home_v[N],
//! home_x[N], …;` (consecutive members of one type share a declaration), and each access
//! becomes accesses of the member arrays:
//! - `home[i].v` → `home_v[i]`, whatever the access (a load, a store, `+=`, `++`, an
//!   atomic on `&home[i].v`): the subscripts stay where they are;
//! - the statement `home[i] = E;` → `{ const FourVector bankwise_home = E; home_v[i] =
//!   bankwise_home.v; … }`, one block, so also as the body of an unbraced `if`; E is evaluated
//!   before the index, as C++17 sequences an assignment, and an index with side effects is
//!   evaluated once, into a `const int` after E;
//! - a whole record read as a value, `home[i]` → `FourVector{home_v[i], home_x[i], …}`;
//! - a member no access reads gets no array, and the whole-record stores skip it
//!   ([`StructOfArrays::dropped`]).
//!
//! E keeps its place in the text, so the edits of any array inside it (this one's included)
//! stay apart from these; an index that is copied (into every member's store or read) may
//! therefore read no shared memory.
use super::edit::Edit;
use super::forms::{declarator, AccessRewrite, FormKind, Rewrite, Target, SPLIT_MARKER};
use crate::parse::{Access, DeclaratorKey, Expr, ExprKind, SharedArray};
use crate::solve::soa::{RecordUse, StructOfArrays};
use std::collections::HashMap;
use std::ops::Range;

/// The names the rewrite introduces for one array.
pub struct LayoutNames {
    /// One array per member, in the members' order.
    pub arrays: Vec<String>,
    /// The record a whole-record store evaluates first.
    pub record: String,
    /// The indices of a whole-record store whose subscripts have side effects, one per
    /// dimension.
    pub indices: Vec<String>,
}

/// The rewrite of `target`'s array into the member arrays `names.arrays`.
pub fn struct_of_arrays(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
) -> Result<Rewrite, String> {
    let array = target.array;
    let text = target.source.text;
    let mut edits = Vec::new();
    let mut rewritten = Vec::new();
    for (access, use_) in array.accesses.iter().zip(&layout.uses) {
        let name_end = access.span.start + array.name.len();
        if text.get(access.span.start..name_end) != Some(array.name.as_str()) {
            return Err(format!(
                "line {}: `{}` does not start with the array's name",
                access.at.line, access.text
            ));
        }
        let subscripts = &text[name_end..access.span.end];
        let member_array = |m: usize, subscripts: &str| format!("{}{subscripts}", names.arrays[m]);
        match *use_ {
            RecordUse::Member(m) => {
                let member_end = member_end(text, access.span.end, &layout.members[m].name)
                    .ok_or_else(|| {
                        format!(
                            "line {}: `.{}` does not follow `{}`",
                            access.at.line, layout.members[m].name, access.text
                        )
                    })?;
                edits.push(Edit::replace(
                    access.span.start..name_end,
                    names.arrays[m].clone(),
                ));
                edits.push(Edit::replace(access.span.end..member_end, ""));
                rewritten.push(AccessRewrite {
                    text: member_array(m, subscripts),
                    alu: 0,
                });
            }
            RecordUse::Load => {
                let each: Vec<String> = (0..layout.members.len())
                    .map(|m| member_array(m, subscripts))
                    .collect();
                let record = format!("{}{{{}}}", layout.record, each.join(", "));
                edits.push(Edit::replace(
                    access.span.start..access.span.end,
                    record.clone(),
                ));
                rewritten.push(AccessRewrite {
                    text: record,
                    alu: 0,
                });
            }
            RecordUse::Store { assignment, value } => {
                let (prefix, suffix, stores) =
                    store_block(target, layout, names, access, subscripts);
                let semicolon = statement_end(text, value.end).ok_or_else(|| {
                    format!(
                        "line {}: the store of `{}` does not end at a `;`",
                        access.at.line, access.text
                    )
                })?;
                edits.push(Edit::replace(assignment.start..value.start, prefix));
                edits.push(Edit::replace(value.end..semicolon, suffix));
                rewritten.push(AccessRewrite {
                    text: stores.join(", "),
                    alu: 0,
                });
            }
        }
    }
    edits.push(declaration(target, layout, names)?);
    let quoted: Vec<String> = names.arrays.iter().map(|n| format!("`{n}`")).collect();
    let dropped = match layout.dropped.is_empty() {
        true => String::new(),
        false => format!(
            " (never read, so not stored: `.{}`)",
            layout.dropped.join("`, `.")
        ),
    };
    edits.extend(target.marker(&format!("{SPLIT_MARKER}{}{dropped}", quoted.join(", "))));
    Ok(Rewrite {
        form: FormKind::StructOfArrays,
        edits,
        function: None,
        accesses: rewritten,
        extra_bytes: 0,
        split_into: names.arrays.clone(),
        // The member arrays keep the declaration's extents as written.
        proven_dims: Some(Vec::new()),
        assumptions: Vec::new(),
    })
}

/// The end of `.member` right after `at` (spaces allowed around the dot), if it is there.
fn member_end(text: &str, at: usize, member: &str) -> Option<usize> {
    let rest = text.get(at..)?;
    let after_dot = rest.trim_start().strip_prefix('.')?.trim_start();
    let after = after_dot.strip_prefix(member)?;
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some(text.len() - after.len())
}

/// The end of the `;` that follows `at` after spaces, if one does.
fn statement_end(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at..)?.trim_start();
    rest.starts_with(';').then(|| text.len() - rest.len() + 1)
}

/// The text before and after E that turns `a[i] = E;` into the block of member stores, and
/// the stores.
fn store_block(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
    access: &Access,
    subscripts: &str,
) -> (String, String, Vec<String>) {
    let text = target.source.text;
    let newline = target.source.newline;
    let line_start = text[..access.span.start].rfind('\n').map_or(0, |at| at + 1);
    let indent = &text[line_start..access.span.start];
    // On a line of its own, one statement per line; after other code, all on one line.
    let (open, separator, close) = if indent.trim().is_empty() {
        let unit = if indent.contains('\t') { "\t" } else { "    " };
        (
            format!("{{{newline}{indent}{unit}"),
            format!("{newline}{indent}{unit}"),
            format!("{newline}{indent}}}"),
        )
    } else {
        ("{ ".to_string(), " ".to_string(), " }".to_string())
    };
    let mut statements = Vec::new();
    let indices = access.indices.unpack();
    let subscripts = if indices.iter().all(Expr::is_pure) {
        subscripts.to_string()
    } else {
        let mut temporaries = String::new();
        for (index, name) in indices.iter().zip(&names.indices) {
            let expr = text.get(index.span.start..index.span.end).unwrap_or("");
            // `const int i = a, b;` would declare `b`.
            let comma = matches!(index.kind, ExprKind::Comma { .. });
            let expr = if comma {
                format!("({expr})")
            } else {
                expr.to_string()
            };
            statements.push(format!("const int {name} = {expr};"));
            temporaries.push_str(&format!("[{name}]"));
        }
        temporaries
    };
    let stores: Vec<String> = names
        .arrays
        .iter()
        .map(|array| format!("{array}{subscripts}"))
        .collect();
    for (store, member) in stores.iter().zip(&layout.members) {
        statements.push(format!("{store} = {}.{};", names.record, member.name));
    }
    let prefix = format!("{open}const {} {} = ", layout.record, names.record);
    let suffix = format!(";{separator}{}{close}", statements.join(&separator));
    (prefix, suffix, stores)
}

/// The declaration of the member arrays in place of the array's: consecutive members of one
/// type in one declaration, each declaration on its own line when the original has its own.
fn declaration(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
) -> Result<Edit, String> {
    let array = target.array;
    let text = target.source.text;
    let span = array.decl_span.start..array.decl_span.end;
    let decl = text
        .get(span.clone())
        .ok_or("the declaration is not in the file")?;
    let (name_at, extents) = declarator(target)?;
    let extents_text = match (extents.first(), extents.last()) {
        (Some(first), Some(last)) => &text[first.start - 1..last.end + 1],
        _ => return Err("the declarator has no extents".into()),
    };
    let declarator_range =
        name_at - span.start..extents.last().map_or(0, |r| r.end + 1) - span.start;
    let outside = format!(
        "{}{}",
        &decl[..declarator_range.start],
        &decl[declarator_range.end..]
    );
    if outside.contains([',', '=', '{']) {
        return Err("the declaration declares more than the array".into());
    }
    let type_range =
        type_in(&decl[..declarator_range.start], &array.elem_type).ok_or_else(|| {
            format!(
                "the element type `{}` is not written in the declaration",
                array.elem_type
            )
        })?;
    let line_start = text[..span.start].rfind('\n').map_or(0, |at| at + 1);
    let indent = &text[line_start..span.start];
    let separator = if indent.trim().is_empty() {
        format!("{}{indent}", target.source.newline)
    } else {
        " ".to_string()
    };
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (member, name) in layout.members.iter().zip(&names.arrays) {
        let declarator = format!("{name}{extents_text}");
        match groups.last_mut() {
            Some((ty, declarators)) if *ty == member.type_name => declarators.push(declarator),
            _ => groups.push((&member.type_name, vec![declarator])),
        }
    }
    let declarations: Vec<String> = groups
        .iter()
        .map(|(ty, declarators)| {
            format!(
                "{}{ty}{}{}{}",
                &decl[..type_range.start],
                &decl[type_range.end..declarator_range.start],
                declarators.join(", "),
                &decl[declarator_range.end..]
            )
        })
        .collect();
    Ok(Edit::replace(span, declarations.join(&separator)))
}

/// The range of the type `ty` (its words, `struct` and qualifiers included as written) in
/// `head`, the declaration before its declarator.
fn type_in(head: &str, ty: &str) -> Option<Range<usize>> {
    let name = ty.split_whitespace().last()?;
    let mut search = 0;
    while let Some(found) = head[search..].find(name) {
        let start = search + found;
        let end = start + name.len();
        search = end;
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let bounded = !head[..start].ends_with(is_word) && !head[end..].starts_with(is_word);
        if !bounded {
            continue;
        }
        // `struct T`: the keyword goes with the type.
        let before = head[..start].trim_end();
        let start = ["struct", "union", "class"]
            .iter()
            .find(|k| before.ends_with(*k) && !before[..before.len() - k.len()].ends_with(is_word))
            .map_or(start, |k| before.len() - k.len());
        return Some(start..end);
    }
    None
}

/// Names for the member arrays of every array rewritten as a struct of arrays: none may be a
/// word of the file, nor another's.
pub struct Words {
    taken: std::collections::HashSet<String>,
    by_declaration: HashMap<DeclaratorKey, LayoutNames>,
}

impl Words {
    pub fn new(text: &str) -> Self {
        Words {
            taken: text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect(),
            by_declaration: HashMap::new(),
        }
    }

    /// `base`, or `base_2`, `base_3`, … : the first that is no word of the file.
    fn fresh(&mut self, base: String) -> String {
        let name = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}_{n}")))
            .find(|name| !self.taken.contains(name))
            .unwrap_or(base);
        self.taken.insert(name.clone());
        name
    }

    /// The names for `array` (the instances of a template share theirs).
    pub fn for_array(&mut self, array: &SharedArray, layout: &StructOfArrays) -> &LayoutNames {
        let key = array.declarator_key();
        if !self.by_declaration.contains_key(&key) {
            let arrays = layout
                .members
                .iter()
                .map(|m| self.fresh(format!("{}_{}", array.name, m.name)))
                .collect();
            let record = self.fresh(format!("bankwise_{}", array.name));
            let indices = (0..array.dims.len())
                .map(|d| self.fresh(format!("bankwise_i{d}")))
                .collect();
            self.by_declaration.insert(
                key.clone(),
                LayoutNames {
                    arrays,
                    record,
                    indices,
                },
            );
        }
        &self.by_declaration[&key]
    }
}
