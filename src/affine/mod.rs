//! The affine stage: every shared subscript as a symbolic value over the thread indices
//! (`sym`), its digit-affine normal form (`digits`), and its class (`class`).
mod class;
mod digits;
mod exec;
#[cfg(test)]
mod exec_tests;
#[cfg(test)]
mod pointer_tests;
#[cfg(test)]
mod properties;
mod share;
mod sym;

pub use class::{classify, lane_thread, Class};
pub use digits::{normalize, Context, Digit, DigitAffine, NotAffine};
pub use exec::{
    analyse_function, threads, AliasAccess, Callees, FunctionAffine, Iteration, Loop, LoopPoint,
    LoopValues, PointerEscape, Site, Step, With, WithThread, MAX_STATEMENTS, MAX_TRIPS,
};
pub use sym::{Atom, AtomValues, Axis, LoopId, Op, Sym, Unknown, SHIFT_WIDTH};
