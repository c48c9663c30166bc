//! Address maps (docs/ARCHITECTURE.md §5): one type per family, each a bijection π on the element
//! indices `[0, N)` of one array (padding: an injection into a larger array), so that the
//! element stored at index `a` moves to `π(a)` and its bank becomes `bank(π(a))`.
//!
//! Every constructor checks its family's algebraic argument and refuses a map that is not a
//! bijection; [`check_bijection`](super::algebra::check_bijection) confirms it by applying the
//! map to every index of extents up to 2^20. Each map also gives the CUDA expression it
//! needs (its operators are the ALU cost), whether it moves V-element vectors whole, and the
//! CuTe `Swizzle<B, M, S>` it is, when it is one.
use super::algebra::{index_bits, low_mask, writable_bits, CuteSwizzle, LinearMap};
use super::expr::Expr;
use super::family::MapKind;
use crate::bank::dmm::SplitMix64;
use serde_json::{json, Value};
use std::fmt;

/// A copy of a map behind a `Box<dyn AddressMap>`, which `Clone` cannot give (a cached
/// choice hands out copies of its maps).
pub trait CloneMap {
    fn clone_map(&self) -> Box<dyn AddressMap>;
}

impl<T: AddressMap + Clone + 'static> CloneMap for T {
    fn clone_map(&self) -> Box<dyn AddressMap> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn AddressMap> {
    fn clone(&self) -> Self {
        self.clone_map()
    }
}

/// A bijective re-layout of one shared array's elements.
pub trait AddressMap: fmt::Debug + Send + Sync + CloneMap {
    /// The map's shape (`bitvector-xor`, `padding`, …), which reports call its family.
    fn kind(&self) -> MapKind;
    /// The family's parameters, for reports.
    fn params(&self) -> Value;
    /// Elements of the array the map was built for.
    fn extent(&self) -> u64;
    /// Elements of the array as stored: more than [`extent`](Self::extent) only for padding.
    fn extent_out(&self) -> u64 {
        self.extent()
    }
    /// Where element `index` (below the extent) is stored.
    fn apply(&self, index: u64) -> u64;
    /// [`apply`](Self::apply) to every index of `indices`, appended to `out`: the scorer's
    /// one call per phase.
    fn apply_each(&self, indices: &[i64], out: &mut Vec<i64>) {
        out.extend(indices.iter().map(|&e| self.apply(e as u64) as i64));
    }
    /// The map on a linear element index: `Expr::Index` is the index variable.
    fn expr(&self) -> Expr;
    /// ALU instructions the rewrite adds per access: those of [`expr`](Self::expr), unless the
    /// family rewrites in place more cheaply (a padded declaration, a 2-D swizzle).
    fn alu_ops(&self) -> u32 {
        self.expr().ops()
    }
    /// The CUDA expression for the index variable `var`.
    fn cuda(&self, var: &str) -> String {
        self.expr().to_cuda(var)
    }
    /// The GF(2) matrix of an XOR-linear map.
    fn linear(&self) -> Option<&LinearMap> {
        None
    }
    /// The equivalent CuTe swizzle, when the map is one.
    fn cute(&self) -> Option<CuteSwizzle> {
        self.linear().and_then(LinearMap::cute)
    }
    /// The family's argument that the map is a bijection on its extent (the GF(2) rank for
    /// XOR-linear maps), or why it is not.
    fn prove_bijective(&self) -> Result<String, String>;
    /// Whether V-element vectors move whole (`vector` a power of two): π keeps the low
    /// log2 V bits and does not depend on them, so a `float4` read of four floats stays one.
    fn keeps_vectors(&self, vector: u64) -> bool;
    /// The struct-of-arrays layout, when the candidate is that re-layout rather than a map
    /// of elements.
    fn struct_of_arrays(&self) -> Option<&super::soa::StructOfArrays> {
        None
    }
}

/// `log2(vector)` for a power of two; `None` otherwise.
fn vector_bits(vector: u64) -> Option<u32> {
    vector.is_power_of_two().then(|| vector.trailing_zeros())
}

/// An XOR-linear map with its extent: what the linear families share.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Linear {
    map: LinearMap,
    extent: u64,
}

impl Linear {
    fn complete(bank_rows: &[u64], extent: u64) -> Result<Self, String> {
        let map = LinearMap::complete(bank_rows, writable_bits(extent))?;
        Linear::checked(map, extent)
    }

    fn checked(map: LinearMap, extent: u64) -> Result<Self, String> {
        map.prove_bijective(extent)?;
        Ok(Linear { map, extent })
    }

    fn expr(&self) -> Expr {
        self.map.expr(index_bits(self.extent))
    }

    fn keeps_vectors(&self, vector: u64) -> bool {
        vector_bits(vector).is_some_and(|v| self.map.keeps_low_bits(v))
    }
}

/// The bits of each row, for reports: `[[2, 8], [3, 9], [4]]`.
pub fn row_bits(rows: &[u64]) -> Vec<Vec<u32>> {
    rows.iter()
        .map(|&row| (0..64).filter(|i| row >> i & 1 != 0).collect())
        .collect()
}

/// Implements the [`AddressMap`] methods every XOR-linear family shares, through `self.linear`.
macro_rules! linear_family {
    () => {
        fn extent(&self) -> u64 {
            self.linear.extent
        }
        fn apply(&self, index: u64) -> u64 {
            self.linear.map.apply(index)
        }
        fn expr(&self) -> Expr {
            self.linear.expr()
        }
        fn linear(&self) -> Option<&LinearMap> {
            Some(&self.linear.map)
        }
        fn prove_bijective(&self) -> Result<String, String> {
            self.linear.map.prove_bijective(self.linear.extent)
        }
        fn keeps_vectors(&self, vector: u64) -> bool {
            self.linear.keeps_vectors(vector)
        }
    };
}

/// The array as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    extent: u64,
}

impl Identity {
    pub fn new(extent: u64) -> Self {
        Identity { extent }
    }
}

impl AddressMap for Identity {
    fn kind(&self) -> MapKind {
        MapKind::Identity
    }
    fn params(&self) -> Value {
        json!({})
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        index
    }
    fn expr(&self) -> Expr {
        Expr::Index
    }
    fn linear(&self) -> Option<&LinearMap> {
        None
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok("the identity".into())
    }
    fn keeps_vectors(&self, _vector: u64) -> bool {
        true
    }
}

/// Bit-vector XOR (TC 2016 Sec. 4.2): bank = `((a >> k1) ^ ((a >> k2) & mask)) mod 2^m`,
/// completed to a bijection (k1 = 0: `a ^ ((a >> k2) & mask)`; k1 > 0 also moves the bit field
/// `[k1, k1 + m)` down to the bank bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitVectorXor {
    pub k1: u32,
    pub k2: u32,
    pub mask: u64,
    pub m: u32,
    linear: Linear,
}

impl BitVectorXor {
    pub fn new(k1: u32, k2: u32, mask: u64, m: u32, extent: u64) -> Result<Self, String> {
        if mask > low_mask(m) {
            return Err(format!("mask {mask} has more than {m} bits"));
        }
        if k1 + m > 63 || k2 + m > 63 {
            return Err("bit field beyond 64 bits".into());
        }
        let rows: Vec<u64> = (0..m)
            .map(|j| 1 << (k1 + j) ^ (mask >> j & 1) << (k2 + j))
            .collect();
        Ok(BitVectorXor {
            k1,
            k2,
            mask,
            m,
            linear: Linear::complete(&rows, extent)?,
        })
    }
}

impl AddressMap for BitVectorXor {
    fn kind(&self) -> MapKind {
        MapKind::BitvectorXor
    }
    fn params(&self) -> Value {
        json!({"k1": self.k1, "k2": self.k2, "mask": self.mask})
    }
    linear_family!();
}

/// Bit-vector permutation (TC 2016 Sec. 4.1): the bank bits are the field `[k, k + m)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitVectorPermutation {
    pub k: u32,
    pub m: u32,
    linear: Linear,
}

impl BitVectorPermutation {
    pub fn new(k: u32, m: u32, extent: u64) -> Result<Self, String> {
        if k + m > 63 {
            return Err("bit field beyond 64 bits".into());
        }
        let rows: Vec<u64> = (0..m).map(|j| 1 << (k + j)).collect();
        Ok(BitVectorPermutation {
            k,
            m,
            linear: Linear::complete(&rows, extent)?,
        })
    }
}

impl AddressMap for BitVectorPermutation {
    fn kind(&self) -> MapKind {
        MapKind::BitvectorPerm
    }
    fn params(&self) -> Value {
        json!({"k": self.k})
    }
    linear_family!();
}

/// Bitwise permutation (TC 2016 Sec. 4.3): bank bit `j` is index bit `bits[j]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitwisePermutation {
    pub bits: Vec<u32>,
    linear: Linear,
}

impl BitwisePermutation {
    pub fn new(bits: Vec<u32>, extent: u64) -> Result<Self, String> {
        if let Some(&bad) = bits.iter().find(|&&b| b >= 64) {
            return Err(format!("bit {bad} is beyond 64 bits"));
        }
        let rows: Vec<u64> = bits.iter().map(|&b| 1 << b).collect();
        Ok(BitwisePermutation {
            bits,
            linear: Linear::complete(&rows, extent)?,
        })
    }
}

impl AddressMap for BitwisePermutation {
    fn kind(&self) -> MapKind {
        MapKind::BitwisePerm
    }
    fn params(&self) -> Value {
        json!({"bits": self.bits})
    }
    linear_family!();
}

/// Bitwise XOR (TC 2016 Sec. 4.4) and, with any rows, every XOR-linear map: bank bit `j` is
/// the XOR of the index bits in `bank_rows[j]`; the rows are completed to an invertible matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitwiseXor {
    pub bank_rows: Vec<u64>,
    linear: Linear,
}

impl BitwiseXor {
    pub fn new(bank_rows: Vec<u64>, extent: u64) -> Result<Self, String> {
        Ok(BitwiseXor {
            linear: Linear::complete(&bank_rows, extent)?,
            bank_rows,
        })
    }

    /// A complete matrix (all rows given), checked by the rank argument.
    pub fn from_map(map: LinearMap, m: u32, extent: u64) -> Result<Self, String> {
        Ok(BitwiseXor {
            bank_rows: map.bank_rows(m),
            linear: Linear::checked(map, extent)?,
        })
    }
}

impl AddressMap for BitwiseXor {
    fn kind(&self) -> MapKind {
        MapKind::BitwiseXor
    }
    fn params(&self) -> Value {
        json!({"rows": row_bits(&self.bank_rows)})
    }
    linear_family!();
}

/// The thesis's fixed XOR hash (ch. 5): bank = `a[0..m) ^ a[m..2m)`, i.e.
/// `a ^ ((a >> m) & (2^m − 1))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedXor {
    pub m: u32,
    linear: Linear,
}

impl FixedXor {
    pub fn new(m: u32, extent: u64) -> Result<Self, String> {
        if 2 * m > 63 {
            return Err("bit fields beyond 64 bits".into());
        }
        let rows: Vec<u64> = (0..m).map(|j| 1 << j | 1 << (j + m)).collect();
        Ok(FixedXor {
            m,
            linear: Linear::complete(&rows, extent)?,
        })
    }
}

impl AddressMap for FixedXor {
    fn kind(&self) -> MapKind {
        MapKind::FixedXor
    }
    fn params(&self) -> Value {
        json!({"bits": self.m})
    }
    linear_family!();
}

/// The thesis's ADD hash (ch. 5): bank = `(a[0..m) + a[m..2m)) mod 2^m`, higher bits kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedAdd {
    pub m: u32,
    extent: u64,
}

impl FixedAdd {
    pub fn new(m: u32, extent: u64) -> Result<Self, String> {
        if m > 62 {
            return Err("bit field beyond 64 bits".into());
        }
        let map = FixedAdd { m, extent };
        map.prove_bijective()?;
        Ok(map)
    }
}

impl AddressMap for FixedAdd {
    fn kind(&self) -> MapKind {
        MapKind::FixedAdd
    }
    fn params(&self) -> Value {
        json!({"bits": self.m})
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        let low = low_mask(self.m);
        (index & !low) | (index.wrapping_add(index >> self.m) & low)
    }
    fn expr(&self) -> Expr {
        let low = low_mask(self.m);
        let high = low_mask(index_bits(self.extent)) & !low;
        Expr::Index
            .and(high)
            .or(Expr::Index.plus(Expr::Index.shift_right(self.m)).and(low))
    }
    fn prove_bijective(&self) -> Result<String, String> {
        let writable = writable_bits(self.extent);
        if self.m > writable {
            return Err(format!(
                "writes {} low bits but only {writable} may change",
                self.m
            ));
        }
        Ok(format!(
            "the low {} bits are translated by a function of the kept high bits",
            self.m
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        vector == 1
    }
}

/// Padding (docs/ARCHITECTURE.md §5): rows of `pitch` elements stored `pitch + pad` apart. `declared`:
/// the pitch is the array's row length (it divides the extent), so the rewrite changes the
/// declaration only; otherwise the flat index is padded (`i + (i / pitch) * pad`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Padding {
    pub pitch: u64,
    pub pad: u64,
    pub declared: bool,
    extent: u64,
}

impl Padding {
    pub fn new(pitch: u64, pad: u64, declared: bool, extent: u64) -> Result<Self, String> {
        if pitch == 0 || pad == 0 || (declared && !extent.is_multiple_of(pitch)) {
            return Err(format!(
                "pitch {pitch} with pad {pad} does not tile {extent} elements"
            ));
        }
        Ok(Padding {
            pitch,
            pad,
            declared,
            extent,
        })
    }
}

impl AddressMap for Padding {
    fn kind(&self) -> MapKind {
        MapKind::Padding
    }
    fn params(&self) -> Value {
        json!({"pitch": self.pitch, "pad": self.pad, "declared_row": self.declared})
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    /// A padded declaration `[R][C + p]` holds whole rows; a flat array needs room up to the
    /// last index's image.
    fn extent_out(&self) -> u64 {
        if self.declared {
            self.extent / self.pitch * (self.pitch + self.pad)
        } else {
            self.extent + self.extent.saturating_sub(1) / self.pitch * self.pad
        }
    }
    fn apply(&self, index: u64) -> u64 {
        index + index / self.pitch * self.pad
    }
    fn expr(&self) -> Expr {
        Expr::Index.plus(Expr::Index.over(self.pitch).times(self.pad))
    }
    fn alu_ops(&self) -> u32 {
        if self.declared {
            0
        } else {
            self.expr().ops()
        }
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok(format!(
            "row a / {p} and column a % {p} < {p} + {q} determine the stored index",
            p = self.pitch,
            q = self.pad
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        self.pitch.is_multiple_of(vector) && self.pad.is_multiple_of(vector)
    }
}

/// Lloyd's index-digit swizzle of a 2-D view (rows of `columns` elements):
/// `t[r][c]` → `t[r][c ^ f(r)]` with `f(r) = ((r >> row_shift) & (2^bits − 1)) << base`.
/// It writes only column bits below the largest power of two dividing `columns`; with a
/// power-of-two row it is CuTe's `Swizzle<bits, base, log2(columns) + row_shift − base>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swizzle {
    pub columns: u64,
    pub bits: u32,
    pub base: u32,
    pub row_shift: u32,
    extent: u64,
    linear: Option<LinearMap>,
}

impl Swizzle {
    pub fn new(
        columns: u64,
        bits: u32,
        base: u32,
        row_shift: u32,
        extent: u64,
    ) -> Result<Self, String> {
        if columns == 0 || !extent.is_multiple_of(columns) {
            return Err(format!("rows of {columns} do not tile {extent} elements"));
        }
        let read = columns.trailing_zeros() + row_shift;
        if bits == 0 || base + bits > writable_bits(columns) || read + bits > 63 {
            return Err(format!(
                "bits [{base}, {}) are not below the row's power-of-two part",
                base + bits
            ));
        }
        let linear = columns.is_power_of_two().then(|| {
            LinearMap::from_rows(
                (0..base + bits)
                    .map(|j| {
                        let extra = if j >= base { 1 << (read + j - base) } else { 0 };
                        1 << j | extra
                    })
                    .collect(),
            )
        });
        Ok(Swizzle {
            columns,
            bits,
            base,
            row_shift,
            extent,
            linear,
        })
    }

    fn row_xor(&self) -> RowXor {
        RowXor {
            bits: self.bits,
            base: self.base,
            row_shift: self.row_shift,
        }
    }

    fn row_term(&self, row: Expr) -> Expr {
        self.row_xor().expr(row, self.extent / self.columns)
    }

    /// The in-place form: the new column for row `row` and column `col`.
    pub fn column_expr(&self, row: &str) -> Expr {
        Expr::Index.xor(self.row_term(Expr::Var(row.to_string())))
    }
}

impl AddressMap for Swizzle {
    fn kind(&self) -> MapKind {
        MapKind::Swizzle
    }
    fn params(&self) -> Value {
        json!({
            "columns": self.columns,
            "bits": self.bits,
            "base": self.base,
            "row_shift": self.row_shift,
        })
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        index ^ self.row_xor().value(index / self.columns)
    }
    fn expr(&self) -> Expr {
        match &self.linear {
            Some(map) => map.expr(index_bits(self.extent)),
            None => Expr::Index.xor(self.row_term(Expr::Index.over(self.columns))),
        }
    }
    fn alu_ops(&self) -> u32 {
        self.column_expr("r").ops()
    }
    fn linear(&self) -> Option<&LinearMap> {
        self.linear.as_ref()
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok(format!(
            "each row's columns are XORed with one value below 2^{}, a permutation of the row",
            self.base + self.bits
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        vector_bits(vector).is_some_and(|v| self.base >= v && self.columns.is_multiple_of(vector))
    }
}

/// The seed of RAP's permutation: fixed, so that a rewrite is reproducible.
pub const RAP_SEED: u64 = 0x5241_5020_2014;

/// Nakano's random address permute-shift: row `r` of `columns` elements is rotated by
/// `σ(r mod columns)`, σ a permutation of the columns drawn with a fixed seed; stored as a
/// `__constant__` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rap {
    pub columns: u64,
    pub sigma: Vec<u64>,
    extent: u64,
}

impl Rap {
    pub fn new(columns: u64, extent: u64, seed: u64) -> Result<Self, String> {
        if columns == 0 || !extent.is_multiple_of(columns) || columns > 1 << 16 {
            return Err(format!("rows of {columns} do not tile {extent} elements"));
        }
        let mut sigma: Vec<u64> = (0..columns).collect();
        SplitMix64::new(seed).shuffle(&mut sigma);
        Ok(Rap {
            columns,
            sigma,
            extent,
        })
    }

    fn table(&self, row: Expr) -> Expr {
        let rows = self.extent / self.columns;
        let index = if rows <= self.columns {
            row
        } else {
            row.modulo(self.columns)
        };
        Expr::Table {
            name: "bankwise_sigma".into(),
            values: self.sigma.clone(),
            index: Box::new(index),
        }
    }

    /// The in-place form: the new column for row `row` and column `Expr::Index`.
    pub fn column_expr(&self, row: &str) -> Expr {
        Expr::Index
            .plus(self.table(Expr::Var(row.to_string())))
            .modulo(self.columns)
    }
}

impl AddressMap for Rap {
    fn kind(&self) -> MapKind {
        MapKind::Rap
    }
    fn params(&self) -> Value {
        json!({"columns": self.columns, "seed": RAP_SEED, "sigma": self.sigma})
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        let (row, column) = (index / self.columns, index % self.columns);
        let shift = self.sigma[(row % self.columns) as usize];
        row * self.columns + (column + shift) % self.columns
    }
    fn expr(&self) -> Expr {
        let column = Expr::Index.modulo(self.columns);
        let row = Expr::Index.over(self.columns);
        Expr::Index
            .minus(column.clone())
            .plus(column.plus(self.table(row)).modulo(self.columns))
    }
    fn alu_ops(&self) -> u32 {
        self.column_expr("r").ops()
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok("each row is rotated, a permutation of the row".into())
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        vector == 1
    }
}

/// A skewed layout: row `r` of `columns` elements is rotated by `shift · r`, element `[r][c]`
/// stored at `[r][(c + shift · r) mod columns]`. A bijection on any extent the rows tile, so
/// it applies where XOR maps cannot (odd pitches such as a halo tile `h[17][17]`) and costs
/// no memory; the shift is searched, not drawn at random as RAP's is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skew {
    pub columns: u64,
    pub shift: u64,
    extent: u64,
}

impl Skew {
    pub fn new(columns: u64, shift: u64, extent: u64) -> Result<Self, String> {
        if columns < 2 || !extent.is_multiple_of(columns) || columns > 1 << 32 {
            return Err(format!("rows of {columns} do not tile {extent} elements"));
        }
        if shift == 0 || shift >= columns {
            return Err(format!(
                "a shift of {shift} in rows of {columns} moves nothing"
            ));
        }
        Ok(Skew {
            columns,
            shift,
            extent,
        })
    }

    fn column(&self, column: Expr, row: Expr) -> Expr {
        column.plus(row.times(self.shift)).modulo(self.columns)
    }

    /// The in-place form: the new column for row `row` and column `Expr::Index`.
    pub fn column_expr(&self, row: &str) -> Expr {
        self.column(Expr::Index, Expr::Var(row.to_string()))
    }
}

impl AddressMap for Skew {
    fn kind(&self) -> MapKind {
        MapKind::Skew
    }
    fn params(&self) -> Value {
        json!({"columns": self.columns, "shift": self.shift})
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        let (row, column) = (index / self.columns, index % self.columns);
        row * self.columns + (column + self.shift * (row % self.columns)) % self.columns
    }
    fn expr(&self) -> Expr {
        let column = Expr::Index.modulo(self.columns);
        let row = Expr::Index.over(self.columns);
        Expr::Index
            .minus(column.clone())
            .plus(self.column(column, row))
    }
    fn alu_ops(&self) -> u32 {
        self.column_expr("r").ops()
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok(format!(
            "each row of {} is rotated, a permutation of the row, and the rows tile the extent",
            self.columns
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        // A vector's elements stay together when rows and shifts are whole vectors.
        vector != 0 && self.columns.is_multiple_of(vector) && self.shift.is_multiple_of(vector)
    }
}

/// What a row's columns are XORed with in the swizzled layouts: `((r >> row_shift) &
/// (2^bits − 1)) << base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RowXor {
    bits: u32,
    base: u32,
    row_shift: u32,
}

impl RowXor {
    fn value(self, row: u64) -> u64 {
        (row >> self.row_shift & low_mask(self.bits)) << self.base
    }

    /// The term for `row` of `rows` rows.
    fn expr(self, row: Expr, rows: u64) -> Expr {
        let shifted = row.shift_right(self.row_shift);
        // The mask is needed only when the row index has bits above the field.
        let masked = if (rows.saturating_sub(1) >> self.row_shift) <= low_mask(self.bits) {
            shifted
        } else {
            shifted.and(low_mask(self.bits))
        };
        masked.shift_left(self.base)
    }

    /// `fields` with the field's parameters after them, for a family's report.
    fn with_params(self, mut fields: Value) -> Value {
        if let Value::Object(map) = &mut fields {
            map.insert("bits".into(), self.bits.into());
            map.insert("base".into(), self.base.into());
            map.insert("row_shift".into(), self.row_shift.into());
        }
        fields
    }

    /// Whether it writes only bits below `columns`, a power of two, and keeps `vector`s whole.
    fn fits(self, columns: u64, vector: u64) -> bool {
        columns.is_power_of_two()
            && self.bits > 0
            && self.base + self.bits <= columns.trailing_zeros()
            && vector_bits(vector).is_some_and(|v| self.base >= v)
    }
}

/// A padded row re-pitched: the rows of a `[R][P + p]` array (P a power of two) keep their
/// first P columns at pitch P, XOR-swizzled as `[r][c ^ f(r)]`, and the p padding columns
/// of every row move after them, to `R·P + r·p + (c − P)`. Where the padding does not clear a
/// pattern (16-wide tiles read two rows per warp), the swizzle does, in the same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repitch {
    pub columns: u64,
    pub pitch: u64,
    xor: RowXor,
    extent: u64,
}

impl Repitch {
    pub fn new(
        columns: u64,
        bits: u32,
        base: u32,
        row_shift: u32,
        extent: u64,
    ) -> Result<Self, String> {
        if columns < 3 || columns.is_power_of_two() || !extent.is_multiple_of(columns) {
            return Err(format!(
                "rows of {columns} are a power of two or do not tile {extent} elements"
            ));
        }
        let pitch = 1 << (63 - columns.leading_zeros());
        let xor = RowXor {
            bits,
            base,
            row_shift,
        };
        if !xor.fits(pitch, 1) || row_shift + bits > 63 {
            return Err(format!(
                "bits [{base}, {}) are not below the pitch {pitch}",
                base + bits
            ));
        }
        Ok(Repitch {
            columns,
            pitch,
            xor,
            extent,
        })
    }

    fn rows(&self) -> u64 {
        self.extent / self.columns
    }
}

impl AddressMap for Repitch {
    fn kind(&self) -> MapKind {
        MapKind::Repitch
    }
    fn params(&self) -> Value {
        self.xor
            .with_params(json!({"columns": self.columns, "pitch": self.pitch}))
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        let (row, column) = (index / self.columns, index % self.columns);
        if column < self.pitch {
            row * self.pitch + (column ^ self.xor.value(row))
        } else {
            self.rows() * self.pitch + row * (self.columns - self.pitch) + column - self.pitch
        }
    }
    fn expr(&self) -> Expr {
        let (row, column) = (
            Expr::Index.over(self.columns),
            Expr::Index.modulo(self.columns),
        );
        let data = row
            .clone()
            .times(self.pitch)
            .plus(column.clone().xor(self.xor.expr(row.clone(), self.rows())));
        let parked = Expr::Const(self.rows() * self.pitch - self.pitch)
            .plus(row.times(self.columns - self.pitch))
            .plus(column.clone());
        column.select_below(Expr::Const(self.pitch), data, parked)
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok(format!(
            "columns below {p} of row r fill [{p}r, {p}r + {p}) (XOR with a value below {p} \
             permutes them) and the {q} others fill [{p}R + {q}r, {p}R + {q}r + {q}), R = {r}",
            p = self.pitch,
            q = self.columns - self.pitch,
            r = self.rows()
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        self.xor.fits(self.pitch, vector) && self.columns.is_multiple_of(vector)
    }
}

/// A rotated swizzle for extents that rows of a power of two do not tile: index `a` is first
/// rotated to `(a + shift) mod N`, then swizzled as `[r][c ^ f(r)]` in rows of `columns`; the
/// last, partial row must have `f(r) = 0` and stays in place. The rotation decides which
/// elements fall in that row: `m[2x]` and `m[x + 1]` of a `float m[65]` clash in every XOR map
/// of the first 64 elements, and are both cleared once the array is rotated by one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotatedSwizzle {
    pub shift: u64,
    pub columns: u64,
    xor: RowXor,
    extent: u64,
}

impl RotatedSwizzle {
    pub fn new(
        shift: u64,
        columns: u64,
        bits: u32,
        base: u32,
        row_shift: u32,
        extent: u64,
    ) -> Result<Self, String> {
        let xor = RowXor {
            bits,
            base,
            row_shift,
        };
        if shift >= extent || !xor.fits(columns, 1) || row_shift + bits > 63 {
            return Err(format!(
                "rows of {columns} with bits [{base}, {}) and a shift of {shift} do not fit \
                 {extent} elements",
                base + bits
            ));
        }
        let whole_rows = extent / columns;
        if !extent.is_multiple_of(columns) && xor.value(whole_rows) != 0 {
            return Err(format!(
                "the partial row {whole_rows} of {extent} elements would be swizzled"
            ));
        }
        Ok(RotatedSwizzle {
            shift,
            columns,
            xor,
            extent,
        })
    }
}

impl AddressMap for RotatedSwizzle {
    fn kind(&self) -> MapKind {
        MapKind::Rotate
    }
    fn params(&self) -> Value {
        self.xor
            .with_params(json!({"shift": self.shift, "columns": self.columns}))
    }
    fn extent(&self) -> u64 {
        self.extent
    }
    fn apply(&self, index: u64) -> u64 {
        let rotated = (index + self.shift) % self.extent;
        rotated ^ self.xor.value(rotated / self.columns)
    }
    fn expr(&self) -> Expr {
        let rotated = Expr::Index
            .plus(Expr::Const(self.shift))
            .modulo(self.extent);
        let rows = self.extent.div_ceil(self.columns);
        rotated
            .clone()
            .xor(self.xor.expr(rotated.over(self.columns), rows))
    }
    fn prove_bijective(&self) -> Result<String, String> {
        Ok(format!(
            "a rotation permutes [0, {n}); each whole row of {c} is XORed with a value below \
             {c}, and the partial row with 0",
            n = self.extent,
            c = self.columns
        ))
    }
    fn keeps_vectors(&self, vector: u64) -> bool {
        self.xor.fits(self.columns, vector)
            && self.shift.is_multiple_of(vector)
            && self.extent.is_multiple_of(vector)
    }
}

#[cfg(test)]
mod tests {
    use super::super::algebra::{check_bijection, NotBijective, Proof};
    use super::*;

    /// Every map's expression computes the map, and the bijection check passes.
    fn assert_sound(map: &dyn AddressMap) {
        assert!(
            matches!(check_bijection(map), Ok(Proof::Exhaustive { .. })),
            "{map:?}"
        );
        let expr = map.expr();
        for a in 0..map.extent() {
            assert_eq!(expr.eval(a), Some(map.apply(a)), "{map:?} at {a}");
        }
        assert!(map.prove_bijective().is_ok());
    }

    fn all_families() -> Vec<Box<dyn AddressMap>> {
        vec![
            Box::new(Identity::new(1024)),
            Box::new(BitVectorXor::new(0, 5, 31, 5, 1024).expect("valid")),
            Box::new(BitVectorXor::new(2, 8, 7, 5, 1 << 14).expect("valid")),
            Box::new(BitVectorXor::new(1, 6, 3, 5, 4096).expect("valid")),
            Box::new(BitVectorPermutation::new(7, 5, 1 << 14).expect("valid")),
            Box::new(BitVectorPermutation::new(2, 5, 1 << 14).expect("valid")),
            Box::new(BitwisePermutation::new(vec![0, 3, 4], 32).expect("valid")),
            Box::new(BitwiseXor::new(vec![1 | 1 << 5, 2 | 1 << 9, 1 << 7], 1024).expect("valid")),
            Box::new(FixedXor::new(5, 1024).expect("valid")),
            Box::new(FixedAdd::new(5, 1024).expect("valid")),
            Box::new(Padding::new(32, 1, true, 1024).expect("valid")),
            Box::new(Padding::new(16, 3, false, 256).expect("valid")),
            Box::new(Swizzle::new(32, 5, 0, 0, 1024).expect("valid")),
            Box::new(Swizzle::new(48, 3, 1, 1, 48 * 20).expect("valid")),
            Box::new(Rap::new(32, 1024, RAP_SEED).expect("valid")),
            Box::new(Repitch::new(17, 3, 1, 1, 16 * 17).expect("valid")),
            Box::new(Repitch::new(40, 5, 0, 0, 8 * 40).expect("valid")),
            Box::new(RotatedSwizzle::new(1, 32, 1, 0, 0, 65).expect("valid")),
            Box::new(RotatedSwizzle::new(5, 16, 3, 1, 0, 136).expect("valid")),
            Box::new(Rap::new(12, 12 * 30, RAP_SEED).expect("valid")),
            Box::new(Skew::new(17, 1, 17 * 17).expect("valid")),
            Box::new(Skew::new(32, 5, 1024).expect("valid")),
            Box::new(Skew::new(12, 4, 12 * 30).expect("valid")),
        ]
    }

    #[test]
    fn every_family_is_a_bijection_with_a_matching_expression() {
        for map in all_families() {
            assert_sound(map.as_ref());
        }
        // Non-power-of-two extents: bits below the largest power-of-two divisor only.
        assert_sound(&BitVectorXor::new(0, 5, 31, 5, 32 * 33).expect("valid"));
        assert!(BitVectorXor::new(0, 5, 31, 5, 48).is_err());
        assert!(FixedAdd::new(5, 48).is_err());
    }

    #[test]
    fn the_lavamd_software_hash_is_rejected() {
        // TC 2016 Sec. 7.2: `(a >> 1) ^ ((a >> 6) & 3)` used as the index of lavaMD's arrays.
        #[derive(Debug, Clone)]
        struct PaperHash(LinearMap);
        impl AddressMap for PaperHash {
            fn kind(&self) -> MapKind {
                MapKind::BitwiseXor
            }
            fn params(&self) -> Value {
                json!({})
            }
            fn extent(&self) -> u64 {
                1 << 12
            }
            fn apply(&self, index: u64) -> u64 {
                (index >> 1) ^ ((index >> 6) & 3)
            }
            fn expr(&self) -> Expr {
                Expr::Index
                    .shift_right(1)
                    .xor(Expr::Index.shift_right(6).and(3))
            }
            fn prove_bijective(&self) -> Result<String, String> {
                self.0.prove_bijective(self.extent())
            }
            fn keeps_vectors(&self, _vector: u64) -> bool {
                false
            }
        }
        let matrix = LinearMap::of_fn(12, |a| (a >> 1) ^ ((a >> 6) & 3));
        let hash = PaperHash(matrix.clone());
        assert_eq!(
            check_bijection(&hash),
            Err(NotBijective::Collision(0, 1, 0))
        );
        assert!(hash.prove_bijective().is_err());
        // As a bitwise XOR matrix it is refused at construction, by the rank argument.
        let refused = BitwiseXor::from_map(matrix, 5, 1 << 12);
        assert!(refused.is_err_and(|why| why.contains("rank 11 of 12")));
    }

    #[test]
    fn large_extents_are_proven_by_the_rank_argument() {
        let big = 1 << 22;
        let xor = BitVectorXor::new(0, 5, 31, 5, big).expect("valid");
        assert!(matches!(check_bijection(&xor), Ok(Proof::Algebraic(_))));
        let padded = Padding::new(32, 1, true, big).expect("valid");
        assert!(matches!(check_bijection(&padded), Ok(Proof::Algebraic(_))));
        // Rows that are independent only beyond the written bits are refused.
        let dependent = LinearMap::from_rows(vec![1 | 1 << 8, 1 | 1 << 9]);
        assert!(BitwiseXor::from_map(dependent, 2, big).is_err());
    }

    #[test]
    fn vector_constraint() {
        assert!(BitVectorXor::new(0, 5, 28, 5, 1024)
            .expect("valid")
            .keeps_vectors(4));
        assert!(!BitVectorXor::new(0, 5, 31, 5, 1024)
            .expect("valid")
            .keeps_vectors(4));
        assert!(Padding::new(32, 4, true, 1024)
            .expect("valid")
            .keeps_vectors(4));
        assert!(!Padding::new(32, 1, true, 1024)
            .expect("valid")
            .keeps_vectors(4));
        assert!(Swizzle::new(32, 3, 2, 0, 1024)
            .expect("valid")
            .keeps_vectors(4));
        assert!(!Rap::new(32, 1024, 1).expect("valid").keeps_vectors(2));
        assert!(Identity::new(8).keeps_vectors(4));
        // Checked against the definition on every index.
        for map in all_families() {
            for vector in [2u64, 4] {
                let holds = (0..map.extent()).all(|a| {
                    let base = a - a % vector;
                    map.apply(a) == map.apply(base) + a % vector
                });
                if map.keeps_vectors(vector) {
                    assert!(holds, "{map:?} V={vector}");
                }
            }
        }
    }

    #[test]
    fn costs_expressions_and_cute_names() {
        let xor = BitVectorXor::new(0, 5, 31, 5, 1024).expect("valid");
        assert_eq!(xor.cuda("i"), "i ^ ((i >> 5) & 31)");
        assert_eq!(xor.alu_ops(), 3);
        assert_eq!(
            xor.cute().map(|c| c.to_string()).as_deref(),
            Some("Swizzle<5, 0, 5>")
        );
        let swizzle = Swizzle::new(32, 5, 0, 0, 1024).expect("valid");
        assert_eq!(swizzle.column_expr("r").to_cuda("c"), "c ^ r");
        assert_eq!(swizzle.alu_ops(), 1);
        assert_eq!(swizzle.cute(), xor.cute());
        let narrow = Swizzle::new(16, 2, 1, 2, 1024).expect("valid");
        assert_eq!(
            narrow.column_expr("r").to_cuda("c"),
            "c ^ (((r >> 2) & 3) << 1)"
        );
        assert_eq!(
            narrow.cute().map(|c| c.to_string()).as_deref(),
            Some("Swizzle<2, 1, 5>")
        );
        let padding = Padding::new(32, 1, true, 1024).expect("valid");
        assert_eq!(padding.alu_ops(), 0);
        assert_eq!(padding.extent_out(), 1056);
        let chunked = Padding::new(32, 1, false, 256).expect("valid");
        assert_eq!(chunked.cuda("i"), "i + (i >> 5)");
        assert_eq!(chunked.alu_ops(), 2);
        let rap = Rap::new(32, 1024, RAP_SEED).expect("valid");
        assert_eq!(
            rap.column_expr("r").to_cuda("c"),
            "(c + bankwise_sigma[r]) & 31"
        );
        assert_eq!(rap.alu_ops(), 3);
        let add = FixedAdd::new(5, 1024).expect("valid");
        assert_eq!(add.cuda("i"), "(i & 992) | ((i + (i >> 5)) & 31)");
        assert_eq!(add.alu_ops(), 5);
        assert_eq!(Identity::new(4).alu_ops(), 0);
    }

    #[test]
    fn bit_vector_fields_land_on_the_bank_bits() {
        // Fig. 5: k1 = 2, k2 = 8, mask = 7: b0 = a2 ^ a8, b1 = a3 ^ a9, b2 = a4 ^ a10, b3 = a5,
        // b4 = a6.
        let map = BitVectorXor::new(2, 8, 7, 5, 1 << 14).expect("valid");
        for a in (0..1 << 14).step_by(7) {
            let bank = ((a >> 2) ^ ((a >> 8) & 7)) & 31;
            assert_eq!(map.apply(a) & 31, bank, "{a}");
        }
        let perm = BitVectorPermutation::new(3, 5, 1 << 14).expect("valid");
        assert_eq!(perm.apply(0b1010_1000) & 31, 0b10101);
        // k1 = k2 with a mask cancels bits: not a bijection.
        assert!(BitVectorXor::new(2, 2, 1, 5, 1 << 14).is_err());
    }
}
