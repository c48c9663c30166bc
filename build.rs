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

    // The flat copy of syntax trees reads tree-sitter's internal headers, which sit beside
    // the public ones the tree-sitter crate announces (`links = "tree-sitter"`).
    let include = std::env::var("DEP_TREE_SITTER_INCLUDE")
        .expect("the tree-sitter crate announces its include directory");
    let internals = Path::new(&include)
        .parent()
        .expect("tree-sitter's include directory has a parent")
        .join("src");
    cc::Build::new()
        .std("c11")
        .include(&include)
        .include(&internals)
        .warnings(false)
        .file("src/parse/syntax.c")
        .compile("bankwise-syntax");
    println!("cargo:rerun-if-changed=src/parse/syntax.c");
}
