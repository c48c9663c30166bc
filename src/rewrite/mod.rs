//! The rewriter (DESIGN.md §7): source edits that store each conflicting shared array through
//! the map its solver chose.
//!
//! - [`edit`]: edits as byte ranges and replacements, fixes with their applicability.
//! - [`forms`]: the index swizzle in place, the map function, the padded declaration.
pub mod edit;
pub mod forms;

pub use edit::{apply, Applicability, Edit, EditError, Fix};
