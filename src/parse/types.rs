//! Sizes and alignments of the element types a shared array can have.
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub size: u64,
    pub align: u64,
}

impl Layout {
    const fn new(size: u64, align: u64) -> Self {
        Layout { size, align }
    }
}

/// Layout of a built-in scalar or CUDA vector type, by its spelling with whitespace collapsed.
pub fn builtin(name: &str) -> Option<Layout> {
    let scalar = |size| Some(Layout::new(size, size));
    match name {
        "char" | "signed char" | "unsigned char" | "bool" | "int8_t" | "uint8_t" | "char8_t" => {
            scalar(1)
        }
        "short" | "short int" | "signed short" | "unsigned short" | "unsigned short int"
        | "int16_t" | "uint16_t" | "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16"
        | "char16_t" => scalar(2),
        "int" | "signed" | "signed int" | "unsigned" | "unsigned int" | "float" | "int32_t"
        | "uint32_t" | "uint" | "char32_t" | "wchar_t" | "__half2" | "half2" | "__nv_bfloat162"
        | "nv_bfloat162" => scalar(4),
        "long"
        | "long int"
        | "signed long"
        | "unsigned long"
        | "unsigned long int"
        | "long long"
        | "long long int"
        | "signed long long"
        | "unsigned long long"
        | "unsigned long long int"
        | "double"
        | "int64_t"
        | "uint64_t"
        | "size_t"
        | "ptrdiff_t"
        | "intptr_t"
        | "uintptr_t"
        | "ulong"
        | "ulonglong"
        | "longlong" => scalar(8),
        _ => vector(name),
    }
}

/// CUDA's vector types (`float4`, `uchar2`, `double2`, …): size and alignment per vector_types.h.
fn vector(name: &str) -> Option<Layout> {
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (base, lanes) = name.split_at(split);
    let lanes: u64 = lanes.parse().ok()?;
    if !(1..=4).contains(&lanes) {
        return None;
    }
    let scalar = match base {
        "char" | "uchar" => 1,
        "short" | "ushort" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "ulong" | "longlong" | "ulonglong" | "double" => 8,
        _ => return None,
    };
    let size = scalar * lanes;
    // 3-element vectors are aligned like their scalar; 2- and 4-element ones to their size,
    // capped at 16 bytes (double4 / longlong4 are 16-byte aligned in vector_types.h).
    let align = match lanes {
        3 => scalar,
        _ => size.min(16),
    };
    Some(Layout::new(size, align))
}

/// A data member of a struct or union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// Byte offset from the start of the aggregate.
    pub offset: u64,
    /// The whole member (all of it, for an array member).
    pub layout: Layout,
    /// The member's type as written, for looking into a nested struct or vector.
    pub type_name: String,
    /// Extents, outermost first, for an array member (`float m[4][8]`: `[4, 8]`); empty
    /// otherwise.
    pub extents: Vec<u64>,
}

/// Where a member path (`.v[j]`, `.m[j][k]`, `.a[j].x`) puts the bytes it designates in an
/// element: at `offset + Σ subscript_k · stride_k`, one term per subscript of the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberLayout {
    /// Byte offset from the element's start with every subscript 0.
    pub offset: u64,
    /// Bytes the path designates.
    pub size: u64,
    /// Per subscript of the path, in order: (byte stride, extent).
    pub subscripts: Vec<(u64, u64)>,
}

/// One step of a member path: `.field` or a subscript `[text]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathStep<'p> {
    Field(&'p str),
    Subscript(&'p str),
}

/// The steps of a member path, or `None` when it is malformed. A subscript ends at its
/// matching bracket, so subscripts may themselves subscript (`.v[idx[t]]`).
fn path_steps(path: &str) -> Option<Vec<PathStep<'_>>> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let mut depth = 1usize;
            let end = after.char_indices().find_map(|(i, c)| {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            })?;
            steps.push(PathStep::Subscript(&after[..end]));
            rest = &after[end + 1..];
        } else {
            let after = rest.strip_prefix('.')?;
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (field, tail) = after.split_at(end);
            steps.push(PathStep::Field(field));
            rest = tail;
        }
    }
    Some(steps)
}

/// User-defined types of one file: structs, unions and aliases.
#[derive(Debug, Default, Clone)]
pub struct TypeTable {
    layouts: HashMap<String, Layout>,
    members: HashMap<String, Vec<Member>>,
    /// `typedef float2 cplx;`: alias → the type it names.
    aliases: HashMap<String, String>,
    /// Structs whose definition declares data members only: no constructor, member function,
    /// operator, base class or access specifier, so that copies and `T{…}` go member by member.
    plain_data: HashSet<String>,
}

impl TypeTable {
    /// Adds the types of `other` that this table does not define.
    pub fn extend(&mut self, other: &TypeTable) {
        for (name, layout) in &other.layouts {
            self.layouts.entry(name.clone()).or_insert(*layout);
        }
        for (name, members) in &other.members {
            self.members
                .entry(name.clone())
                .or_insert_with(|| members.clone());
        }
        for (alias, target) in &other.aliases {
            self.aliases
                .entry(alias.clone())
                .or_insert_with(|| target.clone());
        }
        self.plain_data.extend(other.plain_data.iter().cloned());
    }

    pub fn define(&mut self, name: &str, layout: Layout) {
        self.layouts.insert(name.to_string(), layout);
    }

    /// A struct or union with its members.
    pub fn define_aggregate(&mut self, name: &str, layout: Layout, members: Vec<Member>) {
        self.define(name, layout);
        self.members.insert(name.to_string(), members);
    }

    /// Marks the struct `name` as declaring data members only (see [`Self::is_plain_data`]).
    pub fn mark_plain_data(&mut self, name: &str) {
        self.plain_data.insert(name.to_string());
    }

    /// Whether `ty` (through aliases) is a struct of data members only: its copies are
    /// member-wise copies and `ty{…}` initializes its members in order.
    pub fn is_plain_data(&self, ty: &str) -> bool {
        self.plain_data.contains(self.resolve_alias(ty))
    }

    /// `name` as another spelling of `target`.
    pub fn define_alias(&mut self, name: &str, target: &str) -> Option<Layout> {
        let layout = self.layout(target)?;
        self.define(name, layout);
        self.aliases
            .insert(name.to_string(), strip_type_keywords(target).to_string());
        Some(layout)
    }

    /// The byte range (offset, size) that the member path `path` (`.x`, `.p.z`, `.v[2]`)
    /// designates in an element of type `ty`, when every step is known and every subscript
    /// is a literal within its extent.
    pub fn member_range(&self, ty: &str, path: &str) -> Option<(u64, u64)> {
        let layout = self.member_layout(ty, path)?;
        let subscripts = path_steps(path)?.into_iter().filter_map(|step| match step {
            PathStep::Subscript(text) => Some(text),
            PathStep::Field(_) => None,
        });
        let mut offset = layout.offset;
        for (text, (stride, extent)) in subscripts.zip(&layout.subscripts) {
            let index: u64 = text.trim().parse().ok()?;
            if index >= *extent {
                return None;
            }
            offset += index * stride;
        }
        Some((offset, layout.size))
    }

    /// Where the member path `path` puts the bytes it designates in an element of type
    /// `ty`, its subscripts left symbolic; `None` when a step is unknown or the path ends
    /// on an array (`.v` of `float v[4]`, `.m[j]` of `float m[4][8]`).
    pub fn member_layout(&self, ty: &str, path: &str) -> Option<MemberLayout> {
        let mut ty = self.resolve_alias(ty).to_string();
        let mut layout = MemberLayout {
            offset: 0,
            size: self.layout(&ty)?.size,
            subscripts: Vec::new(),
        };
        // The extents of the member array being subscripted that still await a subscript.
        let mut pending: Vec<u64> = Vec::new();
        for step in path_steps(path)? {
            match step {
                PathStep::Subscript(_) => {
                    let extent = *pending.first()?;
                    let stride = layout.size.checked_div(extent)?;
                    layout.subscripts.push((stride, extent));
                    layout.size = stride;
                    pending.remove(0);
                }
                PathStep::Field(field) if pending.is_empty() => {
                    let (offset, size, member_type, extents) = self.member(&ty, field)?;
                    layout.offset += offset;
                    layout.size = size;
                    pending = extents;
                    ty = member_type;
                }
                PathStep::Field(_) => return None,
            }
        }
        pending.is_empty().then_some(layout)
    }

    /// (offset, size, type, array extents) of `field` in `ty`: a struct member, or a vector
    /// component (`.x` of `float4`).
    fn member(&self, ty: &str, field: &str) -> Option<(u64, u64, String, Vec<u64>)> {
        let ty = self.resolve_alias(ty);
        if let Some(members) = self.members.get(ty) {
            let member = members.iter().find(|m| m.name == field)?;
            let ty = self.resolve_alias(&member.type_name).to_string();
            return Some((
                member.offset,
                member.layout.size,
                ty,
                member.extents.clone(),
            ));
        }
        let layout = vector(ty)?;
        let lanes: u64 = ty[ty.find(|c: char| c.is_ascii_digit())?..].parse().ok()?;
        let scalar = if lanes == 3 {
            layout.size / 3
        } else {
            layout.size / lanes
        };
        let which = ["x", "y", "z", "w"].iter().position(|c| *c == field)? as u64;
        (which < lanes).then(|| (which * scalar, scalar, String::new(), Vec::new()))
    }

    /// The data members of the struct or union `ty` (through aliases), in declaration
    /// order; `None` for any other type.
    pub fn members(&self, ty: &str) -> Option<&[Member]> {
        self.members.get(self.resolve_alias(ty)).map(Vec::as_slice)
    }

    /// Whether `ty` (through aliases) is a built-in scalar: not a vector, a pointer, a
    /// struct or an enum.
    pub fn is_scalar(&self, ty: &str) -> bool {
        let ty = self.resolve_alias(ty);
        !ty.ends_with('*') && builtin(ty).is_some() && vector(ty).is_none()
    }

    fn resolve_alias<'a>(&'a self, mut ty: &'a str) -> &'a str {
        ty = strip_type_keywords(ty);
        for _ in 0..16 {
            match self.aliases.get(ty) {
                Some(target) => ty = target,
                None => break,
            }
        }
        ty
    }

    /// The layout of `name`, looking through user definitions, then built-ins. `struct X`,
    /// `const T` and `volatile T` resolve as `X` and `T`.
    pub fn layout(&self, name: &str) -> Option<Layout> {
        let name = strip_type_keywords(name);
        if name.ends_with('*') {
            return Some(Layout::new(8, 8));
        }
        self.layouts.get(name).copied().or_else(|| builtin(name))
    }
}

fn strip_type_keywords(mut name: &str) -> &str {
    loop {
        let before = name;
        for keyword in ["const ", "volatile ", "struct ", "union ", "class ", "::"] {
            name = name.strip_prefix(keyword).unwrap_or(name);
        }
        for keyword in [" const", " volatile", " __restrict__"] {
            name = name.strip_suffix(keyword).unwrap_or(name);
        }
        name = name.trim();
        if name == before {
            return name;
        }
    }
}

/// Lays out a struct (or union) with C rules: each member at its alignment, the whole rounded up
/// to the largest alignment, or to `forced_align` from `__align__(N)` when that is larger.
/// Also gives the offset of each member.
pub fn aggregate_offsets(
    members: &[Layout],
    union: bool,
    forced_align: Option<u64>,
) -> (Layout, Vec<u64>) {
    let mut size = 0u64;
    let mut align = forced_align.unwrap_or(1);
    let mut offsets = Vec::with_capacity(members.len());
    for member in members {
        align = align.max(member.align);
        if union {
            offsets.push(0);
            size = size.max(member.size);
        } else {
            let offset = size.next_multiple_of(member.align.max(1));
            offsets.push(offset);
            size = offset + member.size;
        }
    }
    (Layout::new(size.next_multiple_of(align), align), offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_vector_types_match_vector_types_h() {
        assert_eq!(builtin("float4"), Some(Layout::new(16, 16)));
        assert_eq!(builtin("float3"), Some(Layout::new(12, 4)));
        assert_eq!(builtin("float2"), Some(Layout::new(8, 8)));
        assert_eq!(builtin("double2"), Some(Layout::new(16, 16)));
        assert_eq!(builtin("int4"), Some(Layout::new(16, 16)));
        assert_eq!(builtin("uchar4"), Some(Layout::new(4, 4)));
        assert_eq!(builtin("char3"), Some(Layout::new(3, 1)));
        assert_eq!(builtin("double4"), Some(Layout::new(32, 16)));
        assert_eq!(builtin("float5"), None);
        assert_eq!(builtin("unsigned long long"), Some(Layout::new(8, 8)));
        assert_eq!(builtin("__half"), Some(Layout::new(2, 2)));
    }

    #[test]
    fn structs_are_padded_and_aligned() {
        let float = builtin("float").unwrap();
        let double = builtin("double").unwrap();
        let chr = builtin("char").unwrap();
        assert_eq!(
            aggregate_offsets(&[float; 4], false, None).0,
            Layout::new(16, 4)
        );
        assert_eq!(
            aggregate_offsets(&[chr, double], false, None).0,
            Layout::new(16, 8)
        );
        assert_eq!(
            aggregate_offsets(&[float, float, float], false, Some(16)).0,
            Layout::new(16, 16)
        );
        assert_eq!(
            aggregate_offsets(&[builtin("int4").unwrap(), float], true, None).0,
            Layout::new(16, 16)
        );
    }

    fn member(name: &str, offset: u64, layout: Layout, type_name: &str, extents: &[u64]) -> Member {
        Member {
            name: name.into(),
            offset,
            layout,
            type_name: type_name.into(),
            extents: extents.to_vec(),
        }
    }

    #[test]
    fn member_paths_resolve_to_byte_ranges() {
        let float = builtin("float").unwrap();
        let mut table = TypeTable::default();
        // struct Body { float3 p; float m; double2 f; float v[4]; };
        table.define_aggregate(
            "Body",
            Layout::new(48, 16),
            vec![
                member("p", 0, builtin("float3").unwrap(), "float3", &[]),
                member("m", 12, float, "float", &[]),
                member("f", 16, builtin("double2").unwrap(), "double2", &[]),
                member("v", 32, Layout::new(16, 4), "float", &[4]),
            ],
        );
        table.define_alias("cplx", "float2");
        assert_eq!(table.member_range("Body", ".m"), Some((12, 4)));
        assert_eq!(table.member_range("struct Body", ".p.z"), Some((8, 4)));
        assert_eq!(table.member_range("Body", ".f.y"), Some((24, 8)));
        assert_eq!(table.member_range("Body", ".v[3]"), Some((44, 4)));
        assert_eq!(table.member_range("Body", ".v"), None);
        assert_eq!(table.member_range("Body", ".v[k]"), None);
        assert_eq!(table.member_range("Body", ".q"), None);
        assert_eq!(table.member_range("cplx", ".y"), Some((4, 4)));
        assert_eq!(table.member_range("float4", ".w"), Some((12, 4)));
        assert_eq!(table.member_range("float3", ".w"), None);
        assert_eq!(
            aggregate_offsets(
                &[builtin("char").unwrap(), builtin("double").unwrap()],
                false,
                None
            )
            .1,
            vec![0, 8]
        );
    }

    #[test]
    fn member_layouts_keep_subscripts_symbolic() {
        let mut table = TypeTable::default();
        // struct Cell { float2 p; double w[2]; };
        table.define_aggregate(
            "Cell",
            Layout::new(24, 8),
            vec![
                member("p", 0, builtin("float2").unwrap(), "float2", &[]),
                member("w", 8, Layout::new(16, 8), "double", &[2]),
            ],
        );
        // struct Grid { int n; float m[4][8]; Cell c[3]; };
        table.define_aggregate(
            "Grid",
            Layout::new(208, 8),
            vec![
                member("n", 0, builtin("int").unwrap(), "int", &[]),
                member("m", 4, Layout::new(128, 4), "float", &[4, 8]),
                member("c", 136, Layout::new(72, 8), "Cell", &[3]),
            ],
        );
        let layout = |offset, size, subscripts: &[(u64, u64)]| {
            Some(MemberLayout {
                offset,
                size,
                subscripts: subscripts.to_vec(),
            })
        };
        assert_eq!(
            table.member_layout("Grid", ".m[j][k]"),
            layout(4, 4, &[(32, 4), (4, 8)])
        );
        assert_eq!(
            table.member_layout("Grid", ".c[i].w[j]"),
            layout(144, 8, &[(24, 3), (8, 2)])
        );
        assert_eq!(
            table.member_layout("Grid", ".c[i].p.y"),
            layout(140, 4, &[(24, 3)])
        );
        assert_eq!(
            table.member_layout("Grid", ".m[idx[t]][t % 8]"),
            layout(4, 4, &[(32, 4), (4, 8)])
        );
        assert_eq!(table.member_layout("Grid", ".n"), layout(0, 4, &[]));
        assert_eq!(table.member_layout("Grid", ".m[j]"), None);
        assert_eq!(table.member_layout("Grid", ".n[j]"), None);
        assert_eq!(table.member_layout("Grid", ".c.p"), None);
        assert_eq!(table.member_layout("Grid", ".m[j"), None);
        assert_eq!(table.member_range("Grid", ".m[1][2]"), Some((44, 4)));
        assert_eq!(table.member_range("Grid", ".c[2].w[1]"), Some((200, 8)));
        assert_eq!(table.member_range("Grid", ".m[4][0]"), None);
    }

    #[test]
    fn members_and_scalars_are_looked_up_through_aliases() {
        let float = builtin("float").unwrap();
        let mut table = TypeTable::default();
        table.define_aggregate(
            "Pair",
            Layout::new(8, 4),
            vec![
                member("a", 0, float, "float", &[]),
                member("b", 4, float, "real", &[]),
            ],
        );
        table.define_alias("Twin", "Pair");
        table.define_alias("real", "float");
        let names: Vec<&str> = table
            .members("struct Twin")
            .expect("a struct")
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(table.members("float2").is_none());
        assert!(table.is_scalar("real"));
        assert!(table.is_scalar("unsigned int"));
        assert!(!table.is_scalar("float2"));
        assert!(!table.is_scalar("float *"));
        assert!(!table.is_scalar("Pair"));
    }

    #[test]
    fn user_types_and_qualifiers_resolve() {
        let mut table = TypeTable::default();
        table.define("cplx", builtin("float2").unwrap());
        assert_eq!(table.layout("const cplx"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("struct cplx"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("float *"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("Unknown"), None);
    }
}
