//! The rewriter: the source edits that store one array through one map. It knows nothing of
//! decisions (the plan stage makes them) or of files (the pipeline applies and validates the
//! edits); see docs/ARCHITECTURE.md.
//!
//! - [`edit`]: edits as byte ranges and replacements, fixes with their applicability.
//! - [`forms`]: the index swizzle in place, the map function, the padded declaration.
//! - [`guard`]: what a rewrite rests on, and the guards that check it where the program is
//!   built or run.
//! - [`soa`]: the struct-of-arrays layout: when it applies, and its edits.
pub mod edit;
pub mod forms;
pub mod guard;
pub mod soa;

pub use edit::{apply, apply_undoably, Applicability, Edit, EditError, Fix};
