//! What the front end hands to the later stages: plain data, no tree-sitter types.
use super::ast::{Expr, Span};
use super::consts::Bindings;
use super::packed::{Body, Packed};
use super::statements::Param;
use super::types::MemberLayout;
use std::fmt;

/// A 1-based line and column (columns count bytes, as clang and nvcc do).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Location {
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub at: Location,
    pub message: String,
}

#[derive(Debug)]
pub struct ParsedFile {
    pub functions: Vec<Function>,
    pub launches: Vec<LaunchSite>,
    pub diagnostics: Vec<Diagnostic>,
    /// Lines of the ERROR / MISSING nodes tree-sitter reported.
    pub syntax_errors: Vec<Location>,
    /// The file's macros, enumerators, integer constants and types, for later stages that
    /// evaluate expressions.
    pub constants: super::consts::ConstEnv,
    /// The `NOLINT` comments that concern bankwise.
    pub suppressions: Vec<super::Suppression>,
    /// The headers it includes, as read (links resolved): which other files its launches
    /// may give a block shape.
    pub headers: Vec<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    Kernel,
    Device,
}

impl FunctionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FunctionKind::Kernel => "global",
            FunctionKind::Device => "device",
        }
    }
}

/// A `__global__` or `__device__` function, once per known template instantiation.
#[derive(Debug)]
pub struct Function {
    /// The function's name, without template arguments.
    pub name: String,
    pub kind: FunctionKind,
    /// Template arguments in declaration order, `(parameter, value)`; empty for non-templates.
    pub template_args: Vec<(String, String)>,
    pub bindings: Bindings,
    pub at: Location,
    pub span: Span,
    /// `__launch_bounds__(N)`: an upper bound on the block size.
    pub launch_bounds: Option<u32>,
    /// `// bankwise: block=32x8` just above the function.
    pub annotated_block: Option<[u32; 3]>,
    /// The shape an earlier `bankwise fix` assumed for this function, as its
    /// `BANKWISE_CHECKS` guard records it: a later run assumes the same, since the rewrite
    /// changed the extents the assumption was read from.
    pub assumed_before: Option<[u32; 3]>,
    /// Template type parameters that no instantiation or launch binds but a shared array's
    /// element type names, with the type this instance assumes for them
    /// ([`ASSUMED_ELEMENT_TYPES`]): its findings rest on the assumption.
    pub assumed_types: Vec<(String, String)>,
    /// Which of `threadIdx.x`, `.y`, `.z` the body names: the block's dimensions the code
    /// uses, when a shape has to be assumed.
    pub thread_axes: [bool; 3],
    /// Names of the functions this one calls, for device functions that inherit a block shape.
    pub callees: Vec<String>,
    /// A syntax error inside the function: it is reported but not analysed.
    pub syntax_error: Option<Location>,
    pub arrays: Vec<SharedArray>,
    /// The named parameters, from the function's declarator.
    pub params: Vec<Param>,
    /// The body's statements (empty when the function has a syntax error); the instances of
    /// a template share their prototype's.
    pub body: Body,
    /// Uses of parameters and local variables that the analysis does not follow: in a
    /// preprocessor branch this configuration leaves out, or given to a constructor. A
    /// pointer into a shared array that reaches one is used there too.
    pub unseen_uses: Vec<UnseenUse>,
}

/// A use of a name that the analysis does not follow.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnseenUse {
    pub name: String,
    pub at: Location,
    pub how: Unseen,
}

/// How a use escapes the analysis.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unseen {
    /// In a preprocessor branch that this configuration leaves out, opened by the
    /// directive (`#ifdef SCALE`, `#else after #ifdef SCALE`).
    InactiveBranch(String),
    /// Given to the constructor of the variable (`Ref r(p[i])`), which may keep its address.
    Constructor(String),
    /// Declared in a branch of a conditional the analysis cannot decide (its first line),
    /// whose declarations the code after it sees.
    DeclaredInBranch(String),
}

impl fmt::Display for Unseen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unseen::InactiveBranch(directive) => write!(
                f,
                "names under `{directive}`, a branch this configuration leaves out"
            ),
            Unseen::Constructor(var) => write!(f, "gives to the constructor of `{var}`"),
            Unseen::DeclaredInBranch(directive) => write!(
                f,
                "declares under `{directive}`, whose branches the analysis follows apart"
            ),
        }
    }
}

impl Function {
    /// `k<16, float>` for an instantiation, `k` otherwise.
    pub fn display_name(&self) -> String {
        instance_name(&self.name, &self.template_args)
    }
}

/// The element types an unbound template type parameter is analysed with, one instance
/// each: the sizes shared memory holds most (2, 4 and 8 bytes). A padding sized for one of
/// them is often wrong for another (33 floats per row is conflict-free, 33 halves 2-way).
pub const ASSUMED_ELEMENT_TYPES: [&str; 3] = ["float", "__half", "double"];

/// `k<16, float>` for template arguments `(parameter, value)`, `k` when there are none.
pub fn instance_name(name: &str, template_args: &[(String, String)]) -> String {
    if template_args.is_empty() {
        name.to_string()
    } else {
        let args: Vec<&str> = template_args.iter().map(|(_, v)| v.as_str()).collect();
        format!("{name}<{}>", args.join(", "))
    }
}

#[derive(Debug, Clone)]
pub struct SharedArray {
    pub name: String,
    pub elem_type: String,
    /// Unknown when the element type is not resolvable (an unbound template type parameter).
    pub elem_bytes: Option<u64>,
    /// Extents, outermost first; `None` for `extern` `[]` or an unresolved size.
    pub dims: Vec<Option<u64>>,
    /// Each extent as an expression (`TILE + 1`), `None` for `[]`; packed, as only the front
    /// end reads it again (to instantiate a template).
    pub dim_exprs: Packed<Vec<Option<Expr>>>,
    /// The source text of each extent, as written (kept symbolic for rewriting).
    pub dim_texts: Vec<String>,
    pub is_extern: bool,
    /// Declared at namespace scope rather than inside this function.
    pub file_scope: bool,
    /// The macro whose expansion declares the array, when it is not declared directly.
    pub declared_by_macro: Option<String>,
    /// A record with array members declared with no extent (`__shared__ SharedStorage s;`,
    /// CUTLASS's and CUB's style): analysed as one element, `s.m[i]` as `s[0].m[i]`, and
    /// never rewritten.
    pub record_scalar: bool,
    pub at: Location,
    pub decl_span: Span,
    pub accesses: Vec<Access>,
    pub escapes: Vec<Escape>,
}

/// The most shared memory a block can have on any GPU (Hopper's 227 KiB, dynamic memory
/// included): ptxas refuses a kernel that declares more.
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;

impl SharedArray {
    /// Why no GPU can hold the array, when its known size is absurd: its extents multiply
    /// past 2^64 bytes, or past [`MAX_SHARED_BYTES`] (an alignment of 2 GiB does that too).
    /// Such an array is reported, not simulated: its figures would mean nothing.
    pub fn impossible_size(&self) -> Option<String> {
        let elem_bytes = self.elem_bytes?;
        // An unknown extent is at least one element: an element alone past any block's
        // shared memory (`__align__(2147483647)`) is impossible whatever the extents, and
        // simulating it walks its gigabytes word by word.
        let mut bytes = u128::from(elem_bytes);
        for dim in &self.dims {
            bytes = bytes.saturating_mul(u128::from(dim.unwrap_or(1)));
        }
        let at_least = if self.dims.iter().any(Option::is_none) {
            "at least "
        } else {
            ""
        };
        let shown = if bytes >= 1 << 64 {
            "more than 2^64 bytes".to_string()
        } else {
            format!("{at_least}{bytes} bytes")
        };
        (bytes > u128::from(MAX_SHARED_BYTES)).then(|| {
            format!(
                "`{}` takes {shown} ({} elements of {elem_bytes} bytes), more than the {} KiB \
                 of shared memory a block can have on any GPU",
                self.name,
                self.dims
                    .iter()
                    .map(|d| d.map_or("?".into(), |d| d.to_string()))
                    .collect::<Vec<_>>()
                    .join(" x "),
                MAX_SHARED_BYTES / 1024
            )
        })
    }

    /// Total bytes, when every extent and the element size are known.
    pub fn bytes(&self) -> Option<u64> {
        self.dims
            .iter()
            .try_fold(self.elem_bytes?, |acc, d| acc.checked_mul((*d)?))
    }

    /// Every extent, or why one is not known: the one check of the stages that need them all
    /// (a map is proven a bijection on a known extent only).
    pub fn extents(&self) -> Result<Vec<u64>, String> {
        self.dims
            .iter()
            .zip(&self.dim_texts)
            .map(|(dim, text)| dim.ok_or_else(|| format!("extent `{text}` is unknown")))
            .collect()
    }

    /// The first extent, as written, whose value is not known, but for an `extern __shared__`
    /// array's first extent, which its launches set.
    pub fn unknown_static_extent(&self) -> Option<String> {
        self.dims
            .iter()
            .zip(&self.dim_texts)
            .enumerate()
            .find(|(i, (dim, _))| dim.is_none() && !(self.is_extern && *i == 0))
            .map(|(_, (_, text))| text.clone())
    }

    /// Which declarator declares the array. The instances of a template share theirs (one
    /// declarator, one rewrite); the arrays of one declaration (`__shared__ float a[N],
    /// b[N];`) do not.
    pub fn declarator_key(&self) -> DeclaratorKey {
        (self.decl_span.start, self.decl_span.end, self.name.clone())
    }

    pub fn rewritable(&self) -> bool {
        self.escapes.is_empty()
    }

    /// Why the array cannot be rewritten: its first escape.
    pub fn reason(&self) -> Option<String> {
        self.escapes.first().map(|escape| escape.to_string())
    }
}

/// See [`SharedArray::declarator_key`]: the declaration's bytes and the array's name.
pub type DeclaratorKey = (usize, usize, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

impl AccessKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One shared-memory instruction at one place: `tile[ty][tx] += v` gives a load and a store.
#[derive(Debug, Clone)]
pub struct Access {
    pub kind: AccessKind,
    pub at: Location,
    /// The whole subscript expression `tile[i][j]`.
    pub span: Span,
    pub text: String,
    /// One index expression per dimension, outermost first (packed: every access of every
    /// function is kept until the end of a run).
    pub indices: Packed<Vec<Expr>>,
    /// Boxed and only when there is any: most accesses are plain subscripts, and every
    /// access of every function is kept until the end of a run.
    detail: Option<Box<AccessDetail>>,
}

/// A call an access through a pointer is reached through: its byte offset, where the
/// rewriter copies the callee, and its place for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite {
    pub offset: usize,
    pub at: Location,
}

/// What only some accesses have: a member path, an atomic function, a pointer they go
/// through.
#[derive(Debug, Clone, Default)]
pub struct AccessDetail {
    /// The member path when only part of a vector or struct element is touched, as written
    /// after the element: `.x`, `.v[k]`, `.p.z`.
    pub member: Option<String>,
    /// The atomic function, for atomics.
    pub atomic_op: Option<String>,
    /// For a member access, the byte range (offset, size) of `member` in an element, when
    /// the element type's layout gives it.
    pub member_bytes: Option<(u64, u64)>,
    /// The subscripts of `member`, in order (`t % 4` in `.v[t % 4]`); empty for an access
    /// through a pointer, whose subscripts the affine stage evaluates where it meets them.
    pub member_subscripts: Vec<Expr>,
    /// For a member access, where `member` lies in an element with its subscripts left
    /// symbolic, when the element type's layout gives it.
    pub member_layout: Option<MemberLayout>,
    /// For an access through a pointer (`row[tx]` after `float *row = tile[ty];`): the calls
    /// it is reached through, outermost first (empty when it is in the function itself).
    /// `None` for a subscript of the array's own name.
    pub via_pointer: Option<Vec<CallSite>>,
    /// For an access through a pointer: the pointer's constant offset from the array's start
    /// in elements, when the analysis knows it (`p` in `p[i]`, `*p`).
    pub pointer_offset: Option<i64>,
    /// For an access through a pointer cast to a wider type (`reinterpret_cast<float4 *>`,
    /// `(uint4 *)`): the bytes one lane reads or writes at once, several elements.
    pub vector_bytes: Option<u64>,
}

/// The detail of a plain subscript: none.
static NO_DETAIL: AccessDetail = AccessDetail {
    member: None,
    atomic_op: None,
    member_bytes: None,
    member_subscripts: Vec::new(),
    member_layout: None,
    via_pointer: None,
    pointer_offset: None,
    vector_bytes: None,
};

impl AccessDetail {
    fn is_none(&self) -> bool {
        self.member.is_none()
            && self.atomic_op.is_none()
            && self.member_bytes.is_none()
            && self.member_subscripts.is_empty()
            && self.member_layout.is_none()
            && self.via_pointer.is_none()
            && self.pointer_offset.is_none()
            && self.vector_bytes.is_none()
    }
}

impl Access {
    pub fn new(
        kind: AccessKind,
        at: Location,
        span: Span,
        text: String,
        indices: Packed<Vec<Expr>>,
        detail: AccessDetail,
    ) -> Self {
        Access {
            kind,
            at,
            span,
            text,
            indices,
            detail: (!detail.is_none()).then(|| Box::new(detail)),
        }
    }

    /// The member path, atomic function and pointer of the access (all `None` for a plain
    /// subscript).
    pub fn detail(&self) -> &AccessDetail {
        self.detail.as_deref().unwrap_or(&NO_DETAIL)
    }

    /// The detail to update in place, when the access has any.
    pub fn detail_mut(&mut self) -> Option<&mut AccessDetail> {
        self.detail.as_deref_mut()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EscapeKind {
    AddressTaken,
    PointerArithmetic,
    PassedToFunction(String),
    AssignedToPointer(String),
    Cast(String),
    Asm,
    MacroBody(String),
    /// An element passed to a function-like macro whose body takes its address or casts it
    /// (`FETCH_FLOAT4(s[i])` for `(reinterpret_cast<float4 *>(&(p))[0])`): the access is
    /// the macro's, of a width and kind bankwise does not read from the source.
    MacroArgument(String),
    Returned,
    UsedAsPointer,
    /// An element bound to a reference (`float &r = a[i];`): writes through `r` are unseen.
    BoundToReference(String),
    /// A pointer made from the array that the affine stage could not follow (why).
    Pointer(String),
    /// Named in a preprocessor branch this configuration leaves out (the directive that
    /// opens it): a rewrite made here would leave that branch's accesses as they are.
    InactiveBranch(String),
    /// An element passed to the constructor of an object (`Ref r(a[i][j])`,
    /// `cuda::atomic_ref<float, S> r(a[i])`), which may keep its address: the variable.
    ConstructorArgument(String),
    /// An extent that uses a macro defined two ways under a conditional the analysis cannot
    /// decide (`#if __CUDA_ARCH__ >= 800`): the macro and the conditional's first line. The
    /// array's size differs between nvcc's passes.
    AmbiguousExtent(String, String),
    /// A pointer into the array reaches a variable or parameter that a preprocessor branch
    /// this configuration leaves out names.
    ReachesUnseenUse(UnseenUse),
    /// Declared twice in one scope, in the branches of a conditional the analysis cannot
    /// decide (`#if __CUDA_ARCH__ >= 800`): the line of the other declaration.
    DeclaredInBranches(usize),
    /// Named by `sizeof`, `alignof` or `decltype` other than as one scalar element: padding,
    /// flattening and a struct-of-arrays split change what it gives.
    Unevaluated,
    /// A part of it with fewer subscripts than it has dimensions (a row) assigned or
    /// stepped as a whole, which no element access describes.
    AssignedAsWhole,
}

/// A use of the array that bankwise cannot follow: the array must not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escape {
    pub kind: EscapeKind,
    pub at: Location,
    pub text: String,
    /// The use of the array's name that leads to the escape, when there is one: the affine
    /// stage may follow the pointer it makes and lift the escape.
    pub name_use: Option<Span>,
    /// For an escape inside a function the pointer was passed to: the calls that lead
    /// there, outermost first.
    pub calls: Vec<Location>,
}

impl EscapeKind {
    pub fn tag(&self) -> &'static str {
        match self {
            EscapeKind::AddressTaken => "address-taken",
            EscapeKind::PointerArithmetic => "pointer-arithmetic",
            EscapeKind::PassedToFunction(_) => "passed-to-function",
            EscapeKind::AssignedToPointer(_) => "assigned-to-pointer",
            EscapeKind::Cast(_) => "cast",
            EscapeKind::Asm => "asm",
            EscapeKind::MacroBody(_) => "macro-body",
            EscapeKind::MacroArgument(_) => "macro-argument",
            EscapeKind::Returned => "returned",
            EscapeKind::UsedAsPointer => "used-as-pointer",
            EscapeKind::BoundToReference(_) => "bound-to-reference",
            EscapeKind::Pointer(_) => "pointer",
            EscapeKind::InactiveBranch(_) => "inactive-branch",
            EscapeKind::ConstructorArgument(_) => "constructor-argument",
            EscapeKind::Unevaluated => "size-or-type-read",
            EscapeKind::AmbiguousExtent(..) => "ambiguous-extent",
            EscapeKind::ReachesUnseenUse(_) => "unseen-use",
            EscapeKind::DeclaredInBranches(_) => "declared-in-branches",
            EscapeKind::AssignedAsWhole => "assigned-as-whole",
        }
    }
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_kind(f)?;
        if !self.calls.is_empty() {
            let lines: Vec<String> = self.calls.iter().map(|at| at.line.to_string()).collect();
            write!(
                f,
                ", reached through the call at line {}",
                lines.join(" → line ")
            )?;
        }
        Ok(())
    }
}

impl Escape {
    fn fmt_kind(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = self.at.line;
        let text = &self.text;
        match &self.kind {
            EscapeKind::AddressTaken => write!(f, "address taken at line {line} (`{text}`)"),
            EscapeKind::PointerArithmetic => {
                write!(f, "pointer arithmetic at line {line} (`{text}`)")
            }
            EscapeKind::PassedToFunction(callee) => {
                write!(f, "passed to `{callee}` at line {line} (`{text}`)")
            }
            EscapeKind::AssignedToPointer(var) => {
                write!(f, "assigned to pointer `{var}` at line {line} (`{text}`)")
            }
            EscapeKind::Cast(ty) => write!(f, "cast to `{ty}` at line {line} (`{text}`)"),
            EscapeKind::Asm => write!(f, "used in inline asm at line {line} (`{text}`)"),
            EscapeKind::MacroBody(name) => {
                write!(f, "used inside the body of macro `{name}` (line {line})")
            }
            EscapeKind::MacroArgument(name) => write!(
                f,
                "an element passed at line {line} to macro `{name}`, which takes its address or \
                 casts it (`{text}`)"
            ),
            EscapeKind::Returned => write!(f, "returned at line {line} (`{text}`)"),
            EscapeKind::UsedAsPointer => write!(f, "used as a pointer at line {line} (`{text}`)"),
            EscapeKind::AssignedAsWhole => write!(
                f,
                "a part of it assigned as a whole at line {line} (`{text}`)"
            ),
            EscapeKind::BoundToReference(var) => {
                write!(f, "bound to reference `{var}` at line {line} (`{text}`)")
            }
            EscapeKind::Pointer(why) => write!(f, "{why} (line {line}, `{text}`)"),
            EscapeKind::ConstructorArgument(var) => write!(
                f,
                "an element passed to the constructor of `{var}` at line {line} (`{text}`)"
            ),
            EscapeKind::ReachesUnseenUse(unseen) => write!(
                f,
                "a pointer into it (`{text}`, line {line}) reaches `{}`, which line {} {}",
                unseen.name, unseen.at.line, unseen.how
            ),
            EscapeKind::DeclaredInBranches(other) => write!(
                f,
                "declared at line {line} and again at line {other}, in branches of a \
                 preprocessor conditional: a rewrite would change one declaration"
            ),
            EscapeKind::AmbiguousExtent(name, directive) => write!(
                f,
                "its extent uses `{name}`, which `{directive}` defines two ways: nvcc's \
                 passes (host, each architecture) see different sizes"
            ),
            EscapeKind::Unevaluated => write!(
                f,
                "its size or type is read at line {line} (`{text}`), which a new layout would \
                 change"
            ),
            EscapeKind::InactiveBranch(directive) => write!(
                f,
                "named at line {line} under `{directive}`, a branch this configuration leaves \
                 out; every configuration must be rewritten alike"
            ),
        }
    }
}

/// A kernel launch `k<args><<<grid, block, …>>>(…)` in the same file.
#[derive(Debug, Clone)]
pub struct LaunchSite {
    pub kernel: String,
    pub template_args: Vec<String>,
    /// For a template kernel, the instance launched (`k<64>`), defaults filled in.
    pub instance: Option<String>,
    pub at: Location,
    /// The block shape, or why it could not be evaluated.
    pub block: Result<[u32; 3], String>,
    /// For a block that did not evaluate, the dimensions that did (`dim3(32, rows)` with
    /// `rows` known only at run time: `[Some(32), None, Some(1)]`); `None` when the block
    /// evaluated, or is one value.
    pub known_dims: Option<[Option<u32>; 3]>,
    /// Whether the block's x and y are one expression that did not evaluate
    /// (`dim3(threads, threads)`): the block is square whatever its value.
    pub square: bool,
    /// For a block that reads parameters of the host function around the launch: the shape
    /// with the values every call of that function in the file passes (its default where a
    /// call leaves one out), and those values (`threads = 16`). An assumption: a caller in
    /// another file may pass others.
    pub from_callers: Option<([u32; 3], String)>,
    /// For a block computed by host functions of the file whose results are bounded
    /// (`SoftMax_getBlockSize(ILP, n)`: at most 512 threads), the bound and the function.
    pub bounded: Option<([u32; 3], String)>,
    /// The dynamic shared memory in bytes (the third launch argument), when it evaluates.
    pub shared_bytes: Option<u64>,
    /// The file the launch is in, when it is another file of the run (a template kernel in a
    /// header launched from the file that includes it); `None` for this file's own.
    pub elsewhere: Option<std::path::PathBuf>,
}
