//! Output. One findings model ([`finding`]) and one emitter per format: [`text`] (compiler
//! style), [`sarif`] (code review) and [`fix`] (what `fix` did); [`json`] writes the whole
//! analysis for tools.
pub mod finding;
pub mod fix;
pub mod json;
pub mod sarif;
pub mod text;

pub use json::json;
pub use text::{compiled_notes, snippets, write_text};

use crate::parse::SharedArray;

/// `float[32][33]`, with `?` for unknown extents and `[]` for extern arrays.
pub fn shape_text(array: &SharedArray) -> String {
    let mut text = array.elem_type.clone();
    if array.record_scalar {
        return text;
    }
    for (i, dim) in array.dims.iter().enumerate() {
        match dim {
            Some(d) => text.push_str(&format!("[{d}]")),
            None if array.is_extern && i == 0 => text.push_str("[]"),
            None => text.push_str("[?]"),
        }
    }
    text
}
