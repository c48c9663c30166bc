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

/// User-defined types of one file: structs, unions and aliases.
#[derive(Debug, Default, Clone)]
pub struct TypeTable {
    layouts: HashMap<String, Layout>,
}

impl TypeTable {
    pub fn define(&mut self, name: &str, layout: Layout) {
        self.layouts.insert(name.to_string(), layout);
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
pub fn aggregate_layout(members: &[Layout], union: bool, forced_align: Option<u64>) -> Layout {
    let mut size = 0u64;
    let mut align = forced_align.unwrap_or(1);
    for member in members {
        align = align.max(member.align);
        if union {
            size = size.max(member.size);
        } else {
            size = size.next_multiple_of(member.align.max(1)) + member.size;
        }
    }
    Layout::new(size.next_multiple_of(align), align)
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
            aggregate_layout(&[float; 4], false, None),
            Layout::new(16, 4)
        );
        assert_eq!(
            aggregate_layout(&[chr, double], false, None),
            Layout::new(16, 8)
        );
        assert_eq!(
            aggregate_layout(&[float, float, float], false, Some(16)),
            Layout::new(16, 16)
        );
        assert_eq!(
            aggregate_layout(&[builtin("int4").unwrap(), float], true, None),
            Layout::new(16, 16)
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
