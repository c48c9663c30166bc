//! Address maps and the solvers that configure them (DESIGN.md §5–6).
pub mod algebra;
pub mod expr;
pub mod maps;
