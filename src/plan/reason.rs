//! Why an array is left as it is, or why its rewrite is applied only when asked: types that
//! render the text `fix`, `check`, `explain` and the pre-build step show, so that a consumer
//! decides on the kind, never on the words.
use crate::analysis::NotRewritable;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why `fix` does not apply a rewrite of an array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reason {
    AlreadyRewritten,
    /// A `NOLINT` comment on its declaration (at this line) silences its conflicts.
    Silenced {
        line: usize,
    },
    /// Its first escape, as `check` words it.
    Escapes(String),
    UnsizedExtern,
    FileScope,
    Record,
    NotRewritable(NotRewritable),
    /// Another declaration in the function names the array.
    NameDeclaredAgain {
        function: String,
        array: String,
    },
    /// A declaration in the function names a name its extent uses.
    ExtentNameDeclaredAgain {
        name: String,
        function: String,
    },
    /// The function is past the analysis budget.
    FunctionNotSimulated {
        function: String,
        why: String,
    },
    /// Its assumed block shape is pinned by a name other functions share.
    AssumedShapeOfSharedName {
        function: String,
    },
    SiteNotSimulated(String),
    NotAnalysed,
    NoMapApplies(String),
    /// The forced strategy's family has no map for it.
    StrategyDoesNotApply {
        strategy: String,
        why: String,
    },
    MapWorsens {
        strategy: String,
    },
    /// The forced map leaves some of the excess.
    ForcedMapLeaves {
        strategy: String,
        after: u64,
        before: u64,
    },
    NoMapHelps {
        before: u64,
    },
    /// The map grows an `extern __shared__` array, which the launches size.
    ExternWouldGrow {
        strategy: String,
        elements: u64,
    },
    /// The rewrite cannot be written in the source (the form's own words).
    NoForm(String),
    /// A guard the rewrite rests on cannot be written (its own words).
    NoGuard(String),
    /// The kernel's shared-memory budget is unknown (its own words).
    NoBudget(String),
    InstancesDiffer {
        template: String,
    },
    /// The map adds more instructions than the wavefronts it removes are worth.
    CostsMoreThanItRemoves {
        price: super::RewritePrice,
        /// The most ALU instructions allowed per wavefront removed.
        limit: u64,
    },
    /// Compiled with nvcc, the rewritten kernel's code costs more than the conflicts removed.
    Compiled {
        kernel: String,
        arch: String,
        regression: Box<crate::compiled::Regression>,
    },
    /// The rewritten file does not compile with nvcc where the original does.
    DoesNotCompile(String),
    /// An unsafe rewrite without `--unsafe-fixes`.
    Unsafe(Option<Caution>),
    /// The copies of the functions the array is passed to would differ from another array's
    /// that share their names.
    CopiesWouldDiffer {
        other: String,
    },
}

/// Why a rewrite is unsafe: it rests on something bankwise assumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Caution {
    OverBudget { bytes: u64 },
    AssumedBlock { shape: String },
    AssumedType { param: String, ty: String },
    TemplateDependent { param: String, instance: String },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::AlreadyRewritten => f.write_str("already rewritten by bankwise"),
            Reason::Silenced { line } => write!(
                f,
                "its conflicts are silenced by the NOLINT comment at line {line}"
            ),
            Reason::Escapes(why) => write!(f, "it escapes: {why}"),
            Reason::UnsizedExtern => f.write_str(
                "an `extern __shared__` array whose extent no launch bankwise sees gives (or \
                 its launches disagree): a map is only proven on a known extent",
            ),
            Reason::FileScope => {
                f.write_str("declared at file scope, where several functions may use it")
            }
            Reason::Record => f.write_str(
                "a record in shared memory: bankwise reports its member arrays' conflicts but \
                 does not rewrite them",
            ),
            Reason::NotRewritable(why) => write!(f, "{why}"),
            Reason::NameDeclaredAgain { function, array } => write!(
                f,
                "a declaration in `{function}` names `{array}` too (or reads as one): a rewrite \
                 that writes a subscript of the array there would read that instead"
            ),
            Reason::ExtentNameDeclaredAgain { name, function } => write!(
                f,
                "its extent names `{name}`, which a declaration in `{function}` names too (or \
                 reads as one): a rewrite that writes the extent there would read that instead"
            ),
            Reason::FunctionNotSimulated { function, why } => {
                write!(f, "`{function}` is not simulated: {why}")
            }
            Reason::AssumedShapeOfSharedName { function } => write!(
                f,
                "its block shape is assumed, and several functions here are named `{function}`, \
                 so the shape cannot be told apart for each; pass --block or launch it"
            ),
            Reason::SiteNotSimulated(why) => write!(f, "a site is not simulated: {why}"),
            Reason::NotAnalysed => f.write_str("not analysed"),
            Reason::NoMapApplies(why) => write!(f, "no map applies: {why}"),
            Reason::StrategyDoesNotApply { strategy, why } => {
                write!(f, "the {strategy} strategy does not apply: {why}")
            }
            Reason::MapWorsens { strategy } => {
                write!(f, "the {strategy} map would make an access worse")
            }
            Reason::ForcedMapLeaves {
                strategy,
                after,
                before,
            } => write!(
                f,
                "the {strategy} map leaves {after} of its {before} excess wavefronts"
            ),
            Reason::NoMapHelps { before } => write!(
                f,
                "no map helps: every candidate keeps its {before} excess wavefronts, makes an \
                 access worse or needs more shared memory than the budget allows"
            ),
            Reason::ExternWouldGrow { strategy, elements } => write!(
                f,
                "the {strategy} map grows the array by {elements} elements, but the launches \
                 set the size of an `extern __shared__` array"
            ),
            Reason::NoForm(why) | Reason::NoGuard(why) | Reason::NoBudget(why) => f.write_str(why),
            Reason::InstancesDiffer { template } => write!(
                f,
                "the instances of template `{template}` need different rewrites"
            ),
            Reason::CostsMoreThanItRemoves { price, limit } => price.explain(f, *limit),
            Reason::Compiled {
                kernel,
                arch,
                regression,
            } => write!(f, "compiled with nvcc for {arch}, `{kernel}` {regression}"),
            Reason::DoesNotCompile(why) => write!(
                f,
                "the rewritten file does not compile with nvcc where the original does: {why}"
            ),
            Reason::Unsafe(caution) => match caution {
                Some(caution) => write!(f, "unsafe: {caution}; pass --unsafe-fixes to apply it"),
                None => f.write_str("unsafe: unsafe; pass --unsafe-fixes to apply it"),
            },
            Reason::CopiesWouldDiffer { other } => write!(
                f,
                "its copies of the functions it is passed to would differ from those of \
                 `{other}`, whose names they share"
            ),
        }
    }
}

impl fmt::Display for Caution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caution::OverBudget { bytes } => write!(
                f,
                "grows shared memory by {bytes} bytes beyond the budget (raise --smem-budget)"
            ),
            Caution::AssumedBlock { shape } => write!(
                f,
                "rests on an assumed block shape {shape} (pass --block or add a launch)"
            ),
            Caution::AssumedType { param, ty } => write!(
                f,
                "rests on an assumed element type `{param}` = `{ty}` (add an instantiation or a \
                 launch that names the type, or pass -D {param}=TYPE)"
            ),
            Caution::TemplateDependent { param, instance } => write!(
                f,
                "its extents depend on the template parameter `{param}`: the map is proven for \
                 `{instance}` only"
            ),
        }
    }
}
