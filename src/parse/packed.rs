//! Values kept as compact bytes between stages and rebuilt on demand.
//!
//! A function body lowered to [`Stmt`]s takes ~8 KB per kilobyte of source in boxes and
//! vectors; packed it takes ~1.1 KB (an access's index expressions: ~300 B and ~40 B). Every
//! function of a file is kept until the end of a run, while the analyses that walk a body
//! need it only while they do: they unpack it, so a 10 MB file's model stays small.
use super::statements::Stmt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A `T` serialized with postcard.
pub struct Packed<T> {
    bytes: Box<[u8]>,
    value: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> Packed<T> {
    pub fn new(value: &T) -> Self {
        let bytes = postcard::to_allocvec(value)
            .expect("serializing into memory cannot fail for the model's types");
        Packed {
            bytes: bytes.into(),
            value: PhantomData,
        }
    }

    /// The value, rebuilt.
    pub fn unpack(&self) -> T {
        // The bytes were written by `new` from a `T`, never read from outside.
        postcard::from_bytes(&self.bytes).expect("packed bytes read back as the type they were")
    }
}

impl<T> Clone for Packed<T> {
    fn clone(&self) -> Self {
        Packed {
            bytes: self.bytes.clone(),
            value: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Packed({} bytes)", self.bytes.len())
    }
}

/// A vector at rest, packed a chunk at a time: packing holds one chunk's items twice, not
/// every item (a large file's `fix` report is tens of megabytes).
pub struct PackedVec<T> {
    chunks: Vec<Packed<Vec<T>>>,
    len: usize,
}

impl<T> Default for PackedVec<T> {
    fn default() -> Self {
        PackedVec {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

/// Items per chunk of a [`PackedVec`].
const ITEMS_PER_CHUNK: usize = 4096;

impl<T: Serialize + DeserializeOwned> PackedVec<T> {
    pub fn new(items: Vec<T>) -> Self {
        let mut packed = PackedVecBuilder::default();
        for item in items {
            packed.push(item);
        }
        packed.finish()
    }

    /// The items, rebuilt in order.
    pub fn unpack(&self) -> Vec<T> {
        let mut items = Vec::with_capacity(self.len);
        for chunk in &self.chunks {
            items.extend(chunk.unpack());
        }
        items
    }

    /// [`Self::unpack`], each chunk's bytes freed once it is rebuilt.
    pub fn into_vec(self) -> Vec<T> {
        let mut items = Vec::with_capacity(self.len);
        for chunk in self.chunks {
            items.extend(chunk.unpack());
        }
        items
    }
}

/// A [`PackedVec`] made an item at a time: at most one chunk's items are held unpacked.
pub struct PackedVecBuilder<T> {
    chunks: Vec<Packed<Vec<T>>>,
    open: Vec<T>,
    len: usize,
}

impl<T> Default for PackedVecBuilder<T> {
    fn default() -> Self {
        PackedVecBuilder {
            chunks: Vec::new(),
            open: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Serialize + DeserializeOwned> PackedVecBuilder<T> {
    pub fn push(&mut self, item: T) {
        self.open.push(item);
        self.len += 1;
        if self.open.len() == ITEMS_PER_CHUNK {
            self.chunks.push(Packed::new(&self.open));
            self.open.clear();
        }
    }

    /// How many items were pushed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn finish(mut self) -> PackedVec<T> {
        if !self.open.is_empty() {
            self.chunks.push(Packed::new(&self.open));
        }
        PackedVec {
            chunks: self.chunks,
            len: self.len,
        }
    }
}

/// A function body at rest: its statements, packed. The instances of a template share
/// their prototype's bytes.
#[derive(Debug, Clone, Default)]
pub struct Body {
    statements: Option<Arc<Packed<Vec<Stmt>>>>,
}

impl Body {
    pub fn new(statements: &Vec<Stmt>) -> Self {
        Body {
            statements: (!statements.is_empty()).then(|| Arc::new(Packed::new(statements))),
        }
    }

    /// No statements (or a syntax error kept the body from being lowered).
    pub fn is_empty(&self) -> bool {
        self.statements.is_none()
    }

    /// The statements, rebuilt.
    pub fn statements(&self) -> Vec<Stmt> {
        self.statements
            .as_ref()
            .map_or_else(Vec::new, |packed| packed.unpack())
    }

    /// Whether two bodies are the same bytes (a template and its instances).
    pub fn shares(&self, other: &Body) -> bool {
        match (&self.statements, &other.statements) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_body(src: &str) -> Body {
        let file = super::super::analyse_source(src, &[]);
        file.functions[0].body.clone()
    }

    #[test]
    fn a_body_unpacks_to_the_statements_it_was_packed_from() {
        let src = "__global__ void k(float *o) {\n  __shared__ float s[32][33];\n  \
                   for (int i = 0; i < 4; ++i) s[threadIdx.y + i][threadIdx.x] = o[i];\n  \
                   if (threadIdx.x < 16) { o[0] = s[0][threadIdx.x] * 2.5f; } else return;\n}";
        let body = kernel_body(src);
        let statements = body.statements();
        assert_eq!(statements.len(), 3);
        assert_eq!(Body::new(&statements).statements(), statements);
        assert!(!body.is_empty());
        assert!(body.shares(&body.clone()));
        assert!(!body.shares(&Body::new(&statements)));
    }

    #[test]
    fn a_packed_vector_unpacks_to_its_items_in_order() {
        for len in [
            0,
            1,
            ITEMS_PER_CHUNK,
            ITEMS_PER_CHUNK + 1,
            3 * ITEMS_PER_CHUNK - 1,
        ] {
            let items: Vec<String> = (0..len).map(|i| format!("item {i}")).collect();
            assert_eq!(PackedVec::new(items.clone()).unpack(), items);
            assert_eq!(PackedVec::new(items.clone()).into_vec(), items);
        }
    }

    #[test]
    fn an_empty_body_packs_to_nothing() {
        let body = kernel_body("__global__ void k() {}");
        assert!(body.is_empty());
        assert!(body.statements().is_empty());
        assert!(!body.shares(&Body::default()));
    }

    #[test]
    fn expressions_nested_to_the_lowering_limit_round_trip() {
        let depth = super::super::ast::MAX_DEPTH + 50;
        let src = format!(
            "__global__ void k(int *o) {{ o[0] = {}1{}; }}",
            "(".repeat(depth),
            " + 1)".repeat(depth)
        );
        let statements = kernel_body(&src).statements();
        let packed = Packed::new(&statements);
        // On a thread with the default 2 MB stack, like the analysis workers.
        let unpacked = std::thread::spawn(move || packed.unpack()).join().unwrap();
        assert_eq!(unpacked, statements);
    }
}
