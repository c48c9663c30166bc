//! Compiles the vendored CUDA grammar (grammar/src, generated from grammar/grammar.js).
use std::path::Path;

fn main() {
    let src_dir = Path::new("grammar/src");
    let mut build = cc::Build::new();
    build
        .std("c11")
        .include(src_dir)
        .warnings(false)
        .file(src_dir.join("parser.c"))
        .file(src_dir.join("scanner.c"));
    for file in ["parser.c", "scanner.c", "tree_sitter/parser.h"] {
        println!("cargo:rerun-if-changed=grammar/src/{file}");
    }
    build.compile("tree-sitter-bankwise-cuda");
}
