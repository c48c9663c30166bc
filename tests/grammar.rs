//! Tests for bankwise's fork of the CUDA grammar (grammar/grammar.js): one test per construct
//! that stock tree-sitter-cuda 0.21.2 mis-parsed, checking both that the tree is error-free and
//! that it has the structure the front end relies on.

use tree_sitter::{Node, Parser, Tree};

fn parse(source: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&bankwise::parse::language::cuda())
        .expect("the bundled grammar matches the tree-sitter runtime");
    parser.parse(source, None).expect("parsing finishes")
}

/// Parses `source` and fails, printing the tree, if it has an ERROR or MISSING node.
fn parse_clean(source: &str) -> Tree {
    let tree = parse(source);
    assert!(
        !tree.root_node().has_error(),
        "parse error in:\n{source}\ntree: {}",
        tree.root_node().to_sexp()
    );
    tree
}

/// Every node of kind `kind` under `node` (itself included), in source order.
fn find_all<'t>(node: Node<'t>, kind: &str) -> Vec<Node<'t>> {
    let mut found = Vec::new();
    let mut cursor = node.walk();
    loop {
        if cursor.node().kind() == kind {
            found.push(cursor.node());
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return found;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
        }
    }
}

fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    node.utf8_text(source.as_bytes()).expect("source is UTF-8")
}

/// The named children of `node`, as (kind, text) pairs.
fn named_children<'s>(node: Node<'_>, source: &'s str) -> Vec<(String, &'s str)> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .map(|child| (child.kind().to_string(), text(child, source)))
        .collect()
}

/// The statements of the first function body in the tree.
fn body_statements<'t>(tree: &'t Tree) -> Vec<Node<'t>> {
    let body = find_all(tree.root_node(), "compound_statement")[0];
    let mut cursor = body.walk();
    body.named_children(&mut cursor).collect()
}

/// The declaration whose array declarator names `name`.
fn array_declaration<'t>(tree: &'t Tree, source: &str, name: &str) -> Node<'t> {
    let array = find_all(tree.root_node(), "array_declarator")
        .into_iter()
        .find(|array| {
            let declarator = array
                .child_by_field_name("declarator")
                .expect("array has a declarator");
            declarator.kind() == "identifier" && text(declarator, source) == name
        })
        .unwrap_or_else(|| {
            panic!(
                "no array_declarator for `{name}` in {}",
                tree.root_node().to_sexp()
            )
        });
    let mut node = array;
    while node.kind() != "declaration" {
        node = node
            .parent()
            .expect("array_declarator sits in a declaration");
    }
    node
}

#[test]
fn align_on_struct_union_and_typedef() {
    let source = "\
struct __align__(16) Vec { float x, y, z, w; };
typedef struct __align__(8) { float a, b; } pair_t;
union __align__(16) U { int4 v; float f[4]; };
template <typename T>
struct __align__(sizeof(T)) Box { T v; };
class __align__(32) C32 { public: float a[8]; };
struct __builtin_align__(16) Packed { float a, b, c, d; };
";
    let tree = parse_clean(source);
    let root = tree.root_node();

    let structs = find_all(root, "struct_specifier");
    let names: Vec<_> = structs
        .iter()
        .map(|s| s.child_by_field_name("name").map(|n| text(n, source)))
        .collect();
    assert_eq!(names, [Some("Vec"), None, Some("Box"), Some("Packed")]);
    for specifier in structs
        .iter()
        .chain(&find_all(root, "union_specifier"))
        .chain(&find_all(root, "class_specifier"))
    {
        let aligns = find_all(*specifier, "align_specifier");
        assert_eq!(aligns.len(), 1, "{}", specifier.to_sexp());
        assert_eq!(aligns[0].parent(), Some(*specifier));
        assert!(specifier.child_by_field_name("body").is_some());
    }

    let aligns = find_all(root, "align_specifier");
    let values: Vec<_> = aligns.iter().map(|a| named_children(*a, source)).collect();
    assert_eq!(values[0], [("number_literal".to_string(), "16")]);
    assert_eq!(values[1], [("number_literal".to_string(), "8")]);
    assert_eq!(values[3], [("sizeof_expression".to_string(), "sizeof(T)")]);

    let typedef = find_all(root, "type_definition")[0];
    assert_eq!(
        typedef.child_by_field_name("type").unwrap().kind(),
        "struct_specifier"
    );
    assert_eq!(
        text(typedef.child_by_field_name("declarator").unwrap(), source),
        "pair_t"
    );
    let union = find_all(root, "union_specifier")[0];
    assert_eq!(
        text(union.child_by_field_name("name").unwrap(), source),
        "U"
    );
}

#[test]
fn align_on_shared_declarations() {
    let source = "\
__global__ void k()
{
    __shared__ __align__(16) float buf[64];
    __align__(16) __shared__ float buf2[64];
    buf[threadIdx.x] = buf2[threadIdx.x];
}
__shared__ __align__(16) float gbuf[64];
";
    let tree = parse_clean(source);
    let qualifiers = |name: &str| -> Vec<String> {
        let declaration = array_declaration(&tree, source, name);
        let mut cursor = declaration.walk();
        declaration
            .named_children(&mut cursor)
            .filter(|child| child.kind() == "type_qualifier")
            .map(|qualifier| match qualifier.named_child(0) {
                Some(inner) => inner.kind().to_string(),
                None => text(qualifier, source).to_string(),
            })
            .collect()
    };
    assert_eq!(qualifiers("buf"), ["__shared__", "align_specifier"]);
    assert_eq!(qualifiers("buf2"), ["align_specifier", "__shared__"]);
    assert_eq!(qualifiers("gbuf"), ["__shared__", "align_specifier"]);
    let buf = array_declaration(&tree, source, "buf");
    assert_eq!(
        text(buf.child_by_field_name("type").unwrap(), source),
        "float"
    );
    let array = find_all(buf, "array_declarator")[0];
    assert_eq!(
        text(array.child_by_field_name("size").unwrap(), source),
        "64"
    );
}

#[test]
fn qualified_template_declarations_in_every_statement_position() {
    let declarations = [
        "cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);",
        "cub::WarpReduce<float> wr(temp);",
        "std::array<int, 4> a = {};",
        "tmpl<32> x = make<32>();",
        "ns::tmpl<32> y;",
        "a::b::c<N> *p = nullptr;",
    ];
    let prefixes = [
        "",
        "int q = 0;\n",
        "foo();\n",
        "cg::thread_block block = cg::this_thread_block();\n",
    ];
    for declaration in declarations {
        for prefix in prefixes {
            let source = format!("__global__ void k(float *temp)\n{{\n{prefix}{declaration}\n}}\n");
            let tree = parse_clean(&source);
            let statements = body_statements(&tree);
            let last = statements.last().unwrap();
            assert_eq!(
                last.kind(),
                "declaration",
                "`{declaration}` after `{prefix}`: {}",
                tree.root_node().to_sexp()
            );
            assert_eq!(text(*last, &source), declaration);
            let binaries = find_all(tree.root_node(), "binary_expression");
            assert!(
                binaries.is_empty(),
                "`{declaration}` after `{prefix}`: {}",
                tree.root_node().to_sexp()
            );
        }
    }

    let source = "\
__global__ void k()
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    if (block.thread_rank() == 0) {
        foo();
        cg::thread_block_tile<16> half = cg::tiled_partition<16>(tile);
    }
}
";
    let tree = parse_clean(source);
    let statements = body_statements(&tree);
    assert_eq!(statements[1].kind(), "declaration");
    let tile_type = statements[1].child_by_field_name("type").unwrap();
    assert_eq!(tile_type.kind(), "qualified_identifier");
    let template = find_all(tile_type, "template_type");
    assert_eq!(template.len(), 1);
    assert_eq!(
        text(template[0].child_by_field_name("name").unwrap(), source),
        "thread_block_tile"
    );
    let declarator = statements[1].child_by_field_name("declarator").unwrap();
    assert_eq!(declarator.kind(), "init_declarator");
    assert_eq!(
        text(
            declarator.child_by_field_name("declarator").unwrap(),
            source
        ),
        "tile"
    );
    let nested = find_all(tree.root_node(), "declaration");
    assert!(nested
        .iter()
        .any(|d| text(*d, source).starts_with("cg::thread_block_tile<16> half")));
    // The comparison reading is gone, but real comparisons are untouched.
    assert!(find_all(tree.root_node(), "binary_expression")
        .iter()
        .all(|b| text(b.child_by_field_name("operator").unwrap(), source) == "=="));

    let source = "void f() { q = 0; bool r = a < b && c > d; if (lo < x && x > hi) q = 1; }";
    let tree = parse_clean(source);
    let operators: Vec<_> = find_all(tree.root_node(), "binary_expression")
        .iter()
        .map(|b| text(b.child_by_field_name("operator").unwrap(), source))
        .collect();
    assert_eq!(operators, ["&&", "<", ">", "&&", "<", ">"]);
}

#[test]
fn extern_shared_keeps_its_qualifiers() {
    let source = "\
template <typename T>
__global__ void k()
{
    extern __shared__ __align__(sizeof(T)) unsigned char raw[];
    extern __shared__ float4 s[];
    T *smem = reinterpret_cast<T *>(raw);
}
extern \"C\" __global__ void k2() {}
";
    let tree = parse_clean(source);
    let raw = array_declaration(&tree, source, "raw");
    let children = named_children(raw, source);
    let kinds: Vec<_> = children.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "storage_class_specifier",
            "type_qualifier",
            "type_qualifier",
            "sized_type_specifier",
            "array_declarator"
        ]
    );
    assert_eq!(children[0].1, "extern");
    assert_eq!(children[1].1, "__shared__");
    assert_eq!(children[2].1, "__align__(sizeof(T))");
    assert_eq!(children[3].1, "unsigned char");
    assert_eq!(find_all(raw, "align_specifier").len(), 1);

    let s = array_declaration(&tree, source, "s");
    let children = named_children(s, source);
    assert_eq!(
        children[0],
        ("storage_class_specifier".to_string(), "extern")
    );
    assert_eq!(children[1], ("type_qualifier".to_string(), "__shared__"));
    assert_eq!(children[2], ("type_identifier".to_string(), "float4"));

    let linkage = find_all(tree.root_node(), "linkage_specification");
    assert_eq!(linkage.len(), 1);
    let body = linkage[0].child_by_field_name("body").unwrap();
    assert_eq!(body.kind(), "function_definition");
    assert!(text(body, source).starts_with("__global__ void k2()"));
}

#[test]
fn lambdas_with_execution_space_annotations() {
    let source = "\
void f(thrust::device_vector<int> &v)
{
    auto a = [&] __device__ (int i) { return i; };
    auto b = [=] __host__ __device__ (int i) -> int { return i * 2; };
    auto c = [] __device__ () {};
    thrust::for_each(thrust::device, v.begin(), v.end(), [=] __device__ (int &x) { x += 1; });
    auto d = [=] __device__ { return 1; };
    auto e = [](int i) { return i; };
}
";
    let tree = parse_clean(source);
    let lambdas = find_all(tree.root_node(), "lambda_expression");
    let spaces: Vec<Vec<&str>> = lambdas
        .iter()
        .map(|lambda| {
            let mut cursor = lambda.walk();
            lambda
                .named_children(&mut cursor)
                .filter(|child| child.kind() == "execution_space_specifier")
                .map(|child| text(child, source))
                .collect()
        })
        .collect();
    let expected: [&[&str]; 6] = [
        &["__device__"],
        &["__host__", "__device__"],
        &["__device__"],
        &["__device__"],
        &["__device__"],
        &[],
    ];
    assert_eq!(spaces, expected);
    for lambda in &lambdas {
        assert_eq!(
            lambda.child_by_field_name("body").unwrap().kind(),
            "compound_statement"
        );
    }
    let b = lambdas[1].child_by_field_name("declarator").unwrap();
    assert_eq!(find_all(b, "trailing_return_type").len(), 1);
    assert_eq!(
        text(b.child_by_field_name("parameters").unwrap(), source),
        "(int i)"
    );
}

#[test]
fn macro_invocation_without_semicolon_is_its_own_statement() {
    let source = "\
__global__ void k()
{
    DECLARE_SMEM(float, tile, 32)
    int i = threadIdx.x;
    tile[i] = 0;
}
";
    let tree = parse_clean(source);
    let statements = body_statements(&tree);
    let kinds: Vec<_> = statements.iter().map(|s| s.kind()).collect();
    assert_eq!(
        kinds,
        [
            "macro_invocation_statement",
            "declaration",
            "expression_statement"
        ]
    );
    assert_eq!(text(statements[0], source), "DECLARE_SMEM(float, tile, 32)");
    let call = statements[0].named_child(0).unwrap();
    assert_eq!(call.kind(), "call_expression");
    assert_eq!(
        text(call.child_by_field_name("function").unwrap(), source),
        "DECLARE_SMEM"
    );
    assert_eq!(text(statements[1], source), "int i = threadIdx.x;");

    // With the semicolon it stays an ordinary expression statement.
    let source = "\
__global__ void k()
{
    DECLARE_SMEM(float, tile, 32);
    int i = threadIdx.x;
    tile[i] = 0;
}
";
    let tree = parse_clean(source);
    let statements = body_statements(&tree);
    let kinds: Vec<_> = statements.iter().map(|s| s.kind()).collect();
    assert_eq!(
        kinds,
        [
            "expression_statement",
            "declaration",
            "expression_statement"
        ]
    );
    let call = statements[0].named_child(0).unwrap();
    assert_eq!(call.kind(), "call_expression");
    let arguments = call.child_by_field_name("arguments").unwrap();
    let arguments: Vec<_> = named_children(arguments, source)
        .into_iter()
        .map(|(kind, _)| kind)
        .collect();
    assert_eq!(
        arguments,
        ["type_descriptor", "identifier", "number_literal"]
    );

    // Several in a row, before a closing brace, and with a trailing comment.
    let source = "\
__global__ void k()
{
    int j = 0;
    FOO(a) // first
    BAR(b)
    j++;
    BAZ(c)
}
";
    let tree = parse_clean(source);
    let kinds: Vec<_> = body_statements(&tree).iter().map(|s| s.kind()).collect();
    assert_eq!(
        kinds,
        [
            "declaration",
            "macro_invocation_statement",
            "comment",
            "macro_invocation_statement",
            "expression_statement",
            "macro_invocation_statement"
        ]
    );
}

#[test]
fn calls_continued_on_the_next_line_are_not_macro_statements() {
    let source = "\
void f()
{
    foo(a)
        + b;
    printf(\"%d\\n\",
           q);
    g(h)
        (k);
    obj.method(a)
        ->other();
    thing(a)
        or other(b);
    CUDA_KERNEL_LOOP(i, n) {
        v[i] = 0;
    }
}
";
    let tree = parse_clean(source);
    assert!(
        find_all(tree.root_node(), "macro_invocation_statement").is_empty(),
        "{}",
        tree.root_node().to_sexp()
    );
    let kinds: Vec<_> = body_statements(&tree).iter().map(|s| s.kind()).collect();
    assert_eq!(&kinds[..5], ["expression_statement"; 5]);
}

#[test]
fn launch_bounds_with_up_to_three_arguments() {
    let source = "\
__global__ __launch_bounds__(128) void a(float *x) { x[0] = 0; }
__global__ void __launch_bounds__(256, 2) b(float *x) { x[0] = 0; }
__global__ void __launch_bounds__(1024, 1, 1) c(float *x) { x[0] = 0; }
";
    let tree = parse_clean(source);
    let counts: Vec<_> = find_all(tree.root_node(), "launch_bounds")
        .iter()
        .map(|bounds| bounds.named_child_count())
        .collect();
    assert_eq!(counts, [1, 2, 3]);
}

/// `template class Engine<float>;` has no declarator (issue 36, item 4): it was an ERROR.
/// Explicit instantiations of function templates, with a declarator, read as before.
#[test]
fn explicit_instantiations_of_class_templates() {
    let source = "template <typename T> struct Engine { T v; };\n\
                  template class Engine<float>;\n\
                  extern template struct Engine<double>;\n\
                  template <int N> __global__ void k(float *o) { o[N] = 0; }\n\
                  template __global__ void k<4>(float *);\n";
    let tree = parse_clean(source);
    let instantiations = find_all(tree.root_node(), "template_instantiation");
    assert_eq!(instantiations.len(), 3);
    let declarators: Vec<bool> = instantiations
        .iter()
        .map(|n| n.child_by_field_name("declarator").is_some())
        .collect();
    assert_eq!(declarators, [false, false, true]);
}

/// `new const float *[n]`: an array of pointers, its type qualified (issue 36, item 4). It
/// was an ERROR; `new float[n]` and `a * b` keep their trees.
#[test]
fn new_of_an_array_of_qualified_pointers() {
    let source = "void f(int n, int a, int b) {\n\
                  const float **t = new const float *[n];\n\
                  float *u = new float[n];\n\
                  int **v = new int *const[n];\n\
                  int c = a * b;\n\
                  }\n";
    let tree = parse_clean(source);
    let news = find_all(tree.root_node(), "new_expression");
    assert_eq!(news.len(), 3);
    assert_eq!(
        find_all(tree.root_node(), "new_pointer_declarator").len(),
        2
    );
    assert_eq!(find_all(tree.root_node(), "binary_expression").len(), 1);
}

/// asm operands without a comma between them (`:: "l"(p) "r"(v)`), which nvcc accepts
/// (issue 36, item 4): the statement was an ERROR. Operands with commas read as before.
#[test]
fn asm_operands_without_commas() {
    let source = "__global__ void k(unsigned long p, int v) {\n\
                  asm volatile(\"st.global.u32 [%0], %1;\" :: \"l\"(p) \"r\"(v) : \"memory\");\n\
                  asm volatile(\"mov.u32 %0, %1;\" : \"=r\"(v) : \"r\"(v), \"r\"(v));\n\
                  }\n";
    let tree = parse_clean(source);
    assert_eq!(find_all(tree.root_node(), "gnu_asm_input_operand").len(), 4);
    assert_eq!(
        find_all(tree.root_node(), "gnu_asm_output_operand").len(),
        1
    );
}
