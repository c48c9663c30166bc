//! Sizes and alignments of the element types a shared array can have.
use std::collections::HashMap;

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
    /// Elements, for an array member (`float v[4]`).
    pub count: Option<u64>,
}

/// User-defined types of one file: structs, unions and aliases.
#[derive(Debug, Default, Clone)]
pub struct TypeTable {
    layouts: HashMap<String, Layout>,
    members: HashMap<String, Vec<Member>>,
    /// `typedef float2 cplx;`: alias → the type it names.
    aliases: HashMap<String, String>,
}

impl TypeTable {
    pub fn define(&mut self, name: &str, layout: Layout) {
        self.layouts.insert(name.to_string(), layout);
    }

    /// A struct or union with its members.
    pub fn define_aggregate(&mut self, name: &str, layout: Layout, members: Vec<Member>) {
        self.define(name, layout);
        self.members.insert(name.to_string(), members);
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
    /// designates in an element of type `ty`, when every step is known.
    pub fn member_range(&self, ty: &str, path: &str) -> Option<(u64, u64)> {
        let mut ty = self.resolve_alias(ty).to_string();
        let mut offset = 0u64;
        let mut size = self.layout(&ty)?.size;
        let mut rest = path;
        let mut element: Option<(u64, u64)> = None;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let (index, tail) = after.split_once(']')?;
                let index: u64 = index.trim().parse().ok()?;
                let (count, elem_size) = element.take()?;
                if index >= count {
                    return None;
                }
                offset += index * elem_size;
                size = elem_size;
                rest = tail;
                continue;
            }
            let after = rest.strip_prefix('.')?;
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (field, tail) = after.split_at(end);
            let (member_offset, member_size, member_type, count) = self.member(&ty, field)?;
            offset += member_offset;
            size = member_size;
            element = count.map(|n| (n, member_size / n.max(1)));
            ty = member_type;
            rest = tail;
        }
        element.is_none().then_some((offset, size))
    }

    /// (offset, size, type, array length) of `field` in `ty`: a struct member, or a vector
    /// component (`.x` of `float4`).
    fn member(&self, ty: &str, field: &str) -> Option<(u64, u64, String, Option<u64>)> {
        let ty = self.resolve_alias(ty);
        if let Some(members) = self.members.get(ty) {
            let member = members.iter().find(|m| m.name == field)?;
            let ty = self.resolve_alias(&member.type_name).to_string();
            return Some((member.offset, member.layout.size, ty, member.count));
        }
        let layout = vector(ty)?;
        let lanes: u64 = ty[ty.find(|c: char| c.is_ascii_digit())?..].parse().ok()?;
        let scalar = if lanes == 3 {
            layout.size / 3
        } else {
            layout.size / lanes
        };
        let which = ["x", "y", "z", "w"].iter().position(|c| *c == field)? as u64;
        (which < lanes).then(|| (which * scalar, scalar, String::new(), None))
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

    #[test]
    fn member_paths_resolve_to_byte_ranges() {
        let float = builtin("float").unwrap();
        let member = |name: &str, offset, layout, type_name: &str, count| Member {
            name: name.into(),
            offset,
            layout,
            type_name: type_name.into(),
            count,
        };
        let mut table = TypeTable::default();
        // struct Body { float3 p; float m; double2 f; float v[4]; };
        table.define_aggregate(
            "Body",
            Layout::new(48, 16),
            vec![
                member("p", 0, builtin("float3").unwrap(), "float3", None),
                member("m", 12, float, "float", None),
                member("f", 16, builtin("double2").unwrap(), "double2", None),
                member("v", 32, Layout::new(16, 4), "float", Some(4)),
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
    fn user_types_and_qualifiers_resolve() {
        let mut table = TypeTable::default();
        table.define("cplx", builtin("float2").unwrap());
        assert_eq!(table.layout("const cplx"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("struct cplx"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("float *"), Some(Layout::new(8, 8)));
        assert_eq!(table.layout("Unknown"), None);
    }
}
