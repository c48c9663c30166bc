fn main() {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&bankwise::parse::language::cuda()).unwrap();
}
