//! Compiles the vendored CUDA grammar (grammar/src, generated from grammar/grammar.js) and
//! src/parse/syntax.c, which reads tree-sitter's internal headers.
use std::path::Path;

/// The tree-sitter crate whose internal headers (subtree.h, language.h, tree.h)
/// src/parse/syntax.c was written against; Cargo.toml pins it with `=`.
const TREE_SITTER_VERSION: &str = "0.27.1";

fn main() {
    // The flat copy of syntax trees reads tree-sitter's internal headers, which sit beside
    // the public ones the tree-sitter crate announces (`links = "tree-sitter"`). Checked
    // first, so that a wrong version fails before the grammar's long compile.
    let include = std::env::var("DEP_TREE_SITTER_INCLUDE")
        .expect("the tree-sitter crate announces its include directory");
    let crate_dir = Path::new(&include)
        .parent()
        .expect("tree-sitter's include directory has a parent");
    check_tree_sitter_version(crate_dir);

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

    cc::Build::new()
        .std("c11")
        .include(&include)
        .include(crate_dir.join("src"))
        .warnings(false)
        .file("src/parse/syntax.c")
        .compile("bankwise-syntax");
    println!("cargo:rerun-if-changed=src/parse/syntax.c");
}

/// Fails the build unless the tree-sitter crate whose headers syntax.c is about to be compiled
/// against is TREE_SITTER_VERSION. Its build script announces only its include directory
/// (`DEP_TREE_SITTER_INCLUDE`, no version), so this reads the `version` of the crate's own
/// Cargo.toml, which sits beside that directory: the [package] table's, or, for a checkout of
/// the tree-sitter repository (`version.workspace = true`), the enclosing workspace's
/// [workspace.package] table's.
fn check_tree_sitter_version(crate_dir: &Path) {
    let manifest = crate_dir.join("Cargo.toml");
    println!("cargo:rerun-if-changed={}", manifest.display());
    let found = match toml_version(&manifest, "package") {
        Some(Version::Literal(version)) => Some(version),
        Some(Version::Workspace) => crate_dir
            .ancestors()
            .skip(1)
            .map(|dir| dir.join("Cargo.toml"))
            .filter(|manifest| manifest.is_file())
            .find_map(
                |manifest| match toml_version(&manifest, "workspace.package") {
                    Some(Version::Literal(version)) => Some(version),
                    _ => None,
                },
            ),
        None => None,
    };
    if found.as_deref() != Some(TREE_SITTER_VERSION) {
        let found = found.map_or_else(
            || {
                format!(
                    "a tree-sitter whose version {} does not state",
                    manifest.display()
                )
            },
            |version| format!("tree-sitter {version} (at {})", crate_dir.display()),
        );
        panic!(
            "bankwise is being built against {found}, but src/parse/syntax.c reads tree-sitter \
             {TREE_SITTER_VERSION}'s internal headers (subtree.h, language.h, tree.h), whose \
             layout can change in any release. Build with tree-sitter {TREE_SITTER_VERSION} \
             (Cargo.toml pins `tree-sitter = \"={TREE_SITTER_VERSION}\"`); to move to another \
             version, update syntax.c to its headers first, then change the pin, \
             TREE_SITTER_VERSION in build.rs, and check `cargo test` (syntax.rs compares the \
             flat copy with tree-sitter's cursor)."
        );
    }
}

enum Version {
    Literal(String),
    /// `version.workspace = true`
    Workspace,
}

/// The `version` key of `table` in the TOML file at `path`, read line by line: enough for
/// Cargo manifests, which write it as `version = "x.y.z"` or `version.workspace = true`.
fn toml_version(path: &Path, table: &str) -> Option<Version> {
    let text = std::fs::read_to_string(path).ok()?;
    let header = format!("[{table}]");
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == header;
            continue;
        }
        if !in_table {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "version" {
            if value.starts_with('{') && value.contains("workspace") {
                return Some(Version::Workspace);
            }
            let value = value.split('#').next()?.trim();
            return Some(Version::Literal(
                value.strip_prefix('"')?.strip_suffix('"')?.to_owned(),
            ));
        }
        if key == "version.workspace" && value.starts_with("true") {
            return Some(Version::Workspace);
        }
    }
    None
}
