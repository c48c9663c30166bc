//! The names of the solver's families and of the maps they build. Every name a user sees
//! (`fix --strategy`, `[fix] strategy`, JSON, notes, bench tables) derives from these enums,
//! so adding a family is a new variant that the compiler then asks for everywhere it matters
//! (docs/ARCHITECTURE.md, "Adding a hash family").
use serde::{de::Error as _, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A search the choice runs on every array: one best map each (`fix --strategy NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Identity,
    Swizzle,
    BitvectorPerm,
    BitvectorXor,
    BitwisePermGh,
    BitwisePermMih,
    BitwiseXorGh,
    BitwiseXorMih,
    Exact,
    FixedXor,
    FixedAdd,
    Padding,
    Rap,
    Skew,
    Repitch,
    Rotate,
    StructOfArrays,
}

impl Family {
    /// Every family, in the order ties are broken.
    pub const ALL: [Family; 17] = [
        Family::Identity,
        Family::Swizzle,
        Family::BitvectorPerm,
        Family::BitvectorXor,
        Family::BitwisePermGh,
        Family::BitwisePermMih,
        Family::BitwiseXorGh,
        Family::BitwiseXorMih,
        Family::Exact,
        Family::FixedXor,
        Family::FixedAdd,
        Family::Padding,
        Family::Rap,
        Family::Skew,
        Family::Repitch,
        Family::Rotate,
        Family::StructOfArrays,
    ];

    /// The name `--strategy`, `bankwise.toml` and the reports use.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Identity => "identity",
            Family::Swizzle => "swizzle",
            Family::BitvectorPerm => "bitvector-perm",
            Family::BitvectorXor => "bitvector-xor",
            Family::BitwisePermGh => "bitwise-perm-gh",
            Family::BitwisePermMih => "bitwise-perm-mih",
            Family::BitwiseXorGh => "bitwise-xor-gh",
            Family::BitwiseXorMih => "bitwise-xor-mih",
            Family::Exact => "exact",
            Family::FixedXor => "fixed-xor",
            Family::FixedAdd => "fixed-add",
            Family::Padding => "padding",
            Family::Rap => "rap",
            Family::Skew => "skew",
            Family::Repitch => "repitch",
            Family::Rotate => "rotate",
            Family::StructOfArrays => "struct-of-arrays",
        }
    }

    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether `--strategy` may ask for it: the identity is what every choice falls back to,
    /// never a fix.
    pub fn selectable(self) -> bool {
        self != Family::Identity
    }

    /// Every name `--strategy` takes, `auto` (the choice) first.
    pub fn strategy_names() -> impl Iterator<Item = &'static str> {
        std::iter::once(AUTO).chain(
            Family::ALL
                .into_iter()
                .filter(|f| f.selectable())
                .map(Family::name),
        )
    }

    /// Its column heading in the bench's removal table.
    pub const fn heading(self) -> &'static str {
        match self {
            Family::Identity => "identity",
            Family::Swizzle => "swizzle",
            Family::BitvectorPerm => "bit-vector perm.",
            Family::BitvectorXor => "bit-vector XOR",
            Family::BitwisePermGh => "perm. GH",
            Family::BitwisePermMih => "perm. MIH",
            Family::BitwiseXorGh => "XOR GH",
            Family::BitwiseXorMih => "XOR MIH",
            Family::Exact => "exact",
            Family::FixedXor => "fixed XOR",
            Family::FixedAdd => "fixed add",
            Family::Padding => "padding",
            Family::Rap => "RAP",
            Family::Skew => "skew",
            Family::Repitch => "repitch",
            Family::Rotate => "rotate",
            Family::StructOfArrays => "struct of arrays",
        }
    }

    /// Its row of the bench's table beside TC 2016's Table 6: the hash function and what
    /// configures it.
    pub const fn table6_row(self) -> (&'static str, &'static str) {
        match self {
            Family::FixedXor => ("fixed bit-vector XOR", "none"),
            Family::BitvectorXor => ("bit-vector XOR", "exhaustive search"),
            Family::BitvectorPerm => ("bit-vector permutation", "exhaustive search"),
            Family::BitwisePermGh => ("bitwise permutation", "GH"),
            Family::BitwisePermMih => ("bitwise permutation", "MIH"),
            Family::BitwiseXorGh => ("bitwise XOR", "GH"),
            Family::BitwiseXorMih => ("bitwise XOR", "MIH"),
            Family::Exact => ("XOR-linear (ours)", "exact search"),
            Family::Padding => ("padding (ours)", "search over pitches"),
            Family::Rap => ("RAP (ours)", "fixed seed"),
            Family::Skew => ("row skew (ours)", "search over shifts"),
            Family::Repitch => ("re-pitched swizzle (ours)", "search over swizzles"),
            Family::Rotate => ("rotated swizzle (ours)", "search over swizzles"),
            Family::Identity => ("identity", "none"),
            Family::Swizzle => ("swizzle (ours)", "search over swizzles"),
            Family::FixedAdd => ("fixed add (ours)", "none"),
            Family::StructOfArrays => ("struct of arrays (ours)", "record layout"),
        }
    }
}

/// The `--strategy` value that lets the choice pick.
pub const AUTO: &str = "auto";

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Family {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Read back from its name, as written (reports are packed while `fix` validates).
impl<'de> Deserialize<'de> for Family {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Family::from_name(&name).ok_or_else(|| D::Error::custom(format!("no family `{name}`")))
    }
}

/// The shape of a map, whichever search built it (the GH and MIH searches both build bitwise
/// maps): what the rewriter emits and the reports call the map's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapKind {
    Identity,
    BitvectorXor,
    BitvectorPerm,
    BitwisePerm,
    BitwiseXor,
    FixedXor,
    FixedAdd,
    Padding,
    Swizzle,
    Rap,
    Skew,
    Repitch,
    Rotate,
    StructOfArrays,
}

impl MapKind {
    pub const ALL: [MapKind; 14] = [
        MapKind::Identity,
        MapKind::BitvectorXor,
        MapKind::BitvectorPerm,
        MapKind::BitwisePerm,
        MapKind::BitwiseXor,
        MapKind::FixedXor,
        MapKind::FixedAdd,
        MapKind::Padding,
        MapKind::Swizzle,
        MapKind::Rap,
        MapKind::Skew,
        MapKind::Repitch,
        MapKind::Rotate,
        MapKind::StructOfArrays,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            MapKind::Identity => "identity",
            MapKind::BitvectorXor => "bitvector-xor",
            MapKind::BitvectorPerm => "bitvector-perm",
            MapKind::BitwisePerm => "bitwise-perm",
            MapKind::BitwiseXor => "bitwise-xor",
            MapKind::FixedXor => "fixed-xor",
            MapKind::FixedAdd => "fixed-add",
            MapKind::Padding => "padding",
            MapKind::Swizzle => "swizzle",
            MapKind::Rap => "rap",
            MapKind::Skew => "skew",
            MapKind::Repitch => "repitch",
            MapKind::Rotate => "rotate",
            MapKind::StructOfArrays => "struct-of-arrays",
        }
    }
}

impl fmt::Display for MapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for MapKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for MapKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        MapKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| D::Error::custom(format!("no map kind `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_read_back() {
        for family in Family::ALL {
            assert_eq!(Family::from_name(family.name()), Some(family));
        }
        assert_eq!(Family::from_name(AUTO), None);
        assert_eq!(Family::from_name("fast"), None);
        let mut names: Vec<&str> = Family::strategy_names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Family::ALL.len());
        assert!(!names.contains(&Family::Identity.name()));
    }

    #[test]
    fn every_map_kind_is_listed_and_reads_back_from_its_name() {
        // Exhaustive: a new kind does not compile here until it is handled.
        let listed = |kind: MapKind| match kind {
            MapKind::Identity
            | MapKind::BitvectorXor
            | MapKind::BitvectorPerm
            | MapKind::BitwisePerm
            | MapKind::BitwiseXor
            | MapKind::FixedXor
            | MapKind::FixedAdd
            | MapKind::Padding
            | MapKind::Swizzle
            | MapKind::Rap
            | MapKind::Skew
            | MapKind::Repitch
            | MapKind::Rotate
            | MapKind::StructOfArrays => MapKind::ALL.contains(&kind),
        };
        for kind in MapKind::ALL {
            assert!(listed(kind));
            let bytes = postcard::to_allocvec(&kind).unwrap();
            assert_eq!(postcard::from_bytes::<MapKind>(&bytes).unwrap(), kind);
        }
        for family in Family::ALL {
            let bytes = postcard::to_allocvec(&family).unwrap();
            assert_eq!(postcard::from_bytes::<Family>(&bytes).unwrap(), family);
        }
    }
}
