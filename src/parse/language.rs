//! The CUDA grammar bankwise ships (grammar/grammar.js, compiled by build.rs).
use tree_sitter::Language;
use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_cuda() -> *const ();
}

const LANGUAGE_FN: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_cuda) };

/// The tree-sitter language of bankwise's CUDA grammar.
pub fn cuda() -> Language {
    LANGUAGE_FN.into()
}
