//! Tests of the statement IR of function bodies (`Function::body`, `Function::params`).
use super::*;

fn parse(src: &str) -> ParsedFile {
    analyse_source(src, &[])
}

fn function<'a>(file: &'a ParsedFile, name: &str) -> &'a Function {
    file.functions
        .iter()
        .find(|f| f.display_name() == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The source text of a span.
fn text(src: &str, span: Span) -> &str {
    &src[span.start..span.end]
}

/// A statement list in a short form: one entry per statement, nested lists in brackets.
fn outline(stmts: &[Stmt]) -> String {
    let list = |stmts: &[Stmt]| format!("[{}]", outline(stmts));
    stmts
        .iter()
        .map(|stmt| match stmt {
            Stmt::Decl(d) => match &d.init {
                Some(init) => format!("decl {} = {init}", d.name),
                None => format!("decl {}", d.name),
            },
            Stmt::Expr(e) => format!("{e}"),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => format!("if {cond} {} else {}", list(then), list(otherwise)),
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                let cond = cond.as_ref().map(ToString::to_string).unwrap_or_default();
                let update: Vec<String> = update.iter().map(ToString::to_string).collect();
                format!(
                    "for {}; {cond}; {} {}",
                    list(init),
                    update.join(", "),
                    list(body)
                )
            }
            Stmt::While { cond, body } => format!("while {cond} {}", list(body)),
            Stmt::DoWhile { body, cond } => format!("do {} while {cond}", list(body)),
            Stmt::Switch { cond, body } => format!("switch {cond} {}", list(body)),
            Stmt::Block(body) => list(body),
            Stmt::Return(Some(e)) => format!("return {e}"),
            Stmt::Return(None) => "return".to_string(),
            Stmt::Break => "break".to_string(),
            Stmt::Continue => "continue".to_string(),
            Stmt::Opaque { what, assigned, .. } => {
                format!("opaque {what} {}", assigned.join(","))
            }
            Stmt::Lambda(l) => {
                let params: Vec<&str> = l.params.iter().map(|p| p.name.as_str()).collect();
                let capture = if l.by_reference { "&" } else { "=" };
                format!(
                    "lambda {} [{capture}]({}) {}",
                    l.name,
                    params.join(","),
                    list(&l.body)
                )
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every expression of a statement list, outermost ones, in source order.
fn expressions(stmts: &[Stmt]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for stmt in stmts {
        match stmt {
            Stmt::Decl(d) => out.extend(&d.init),
            Stmt::Expr(e) => out.push(e),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                out.push(cond);
                out.extend(expressions(then));
                out.extend(expressions(otherwise));
            }
            Stmt::For {
                init,
                cond,
                update,
                body,
                ..
            } => {
                out.extend(expressions(init));
                out.extend(cond);
                out.extend(update);
                out.extend(expressions(body));
            }
            Stmt::While { cond, body }
            | Stmt::DoWhile { body, cond }
            | Stmt::Switch { cond, body } => {
                out.push(cond);
                out.extend(expressions(body));
            }
            Stmt::Block(body) => out.extend(expressions(body)),
            Stmt::Return(e) => out.extend(e),
            Stmt::Opaque { exprs, .. } => out.extend(exprs),
            Stmt::Lambda(l) => out.extend(expressions(&l.body)),
            Stmt::Break | Stmt::Continue => {}
        }
    }
    out
}

/// The spans of every `Index` node in the body whose base is the name `array` (`a[i][j]`
/// counts once, for the outermost subscript).
fn index_spans(stmts: &[Stmt], array: &str) -> Vec<Span> {
    fn base_name(expr: &Expr) -> Option<&str> {
        match &expr.kind {
            ExprKind::Name(name) => Some(name),
            ExprKind::Index { base, .. } => base_name(base),
            _ => None,
        }
    }
    let mut spans = Vec::new();
    let mut pending = expressions(stmts);
    while let Some(expr) = pending.pop() {
        match &expr.kind {
            // The array's own subscript chain is one access: its inner `tile[i]` is not.
            ExprKind::Index { index, .. } if base_name(expr) == Some(array) => {
                spans.push(expr.span);
                pending.push(index);
            }
            _ => expr.for_each_child(|child| pending.push(child)),
        }
    }
    spans.sort_by_key(|s| s.start);
    spans.dedup();
    spans
}

#[test]
fn a_transpose_kernel_has_its_declarations_loops_and_barrier() {
    let src = "#define TILE 32
__global__ void transpose(float *out, const float *in, int width) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  for (int j = 0; j < TILE; j += 8) {
    out[(x + j) * width + y] = tile[threadIdx.x][threadIdx.y + j];
  }
}";
    let file = parse(src);
    let k = function(&file, "transpose");
    let body = k.body.statements();
    assert_eq!(
        outline(&k.body.statements()),
        "decl tile; \
         decl x = ((blockIdx.x * TILE) + threadIdx.x); \
         decl y = ((blockIdx.y * TILE) + threadIdx.y); \
         for [decl j = 0]; (j < TILE); j += 8 \
         [tile[(threadIdx.y + j)][threadIdx.x] = in[(((y + j) * width) + x)]]; \
         __syncthreads(); \
         for [decl j = 0]; (j < TILE); j += 8 \
         [out[(((x + j) * width) + y)] = tile[threadIdx.x][(threadIdx.y + j)]]"
    );
    let Stmt::Decl(tile) = &body[0] else {
        panic!("{:?}", body[0])
    };
    assert_eq!(
        (tile.ty.as_str(), tile.is_shared, tile.array, tile.pointer),
        ("float", true, true, false)
    );
    assert_eq!(text(src, tile.span), "tile[TILE][TILE + 1]");
    let Stmt::For { update, span, .. } = &body[3] else {
        panic!("{:?}", body[3])
    };
    assert!(matches!(
        update[0].kind,
        ExprKind::Assign {
            op: Some(BinaryOp::Add),
            ..
        }
    ));
    assert!(text(src, *span).starts_with("for (int j = 0;"));
    assert!(
        matches!(&body[4], Stmt::Expr(e) if e.callee_name() == Some("__syncthreads")),
        "{:?}",
        body[4]
    );
}

#[test]
fn if_else_chains_and_early_returns() {
    let file = parse(
        "__device__ int clamp(int v, int lo, int hi) {
  if (v < lo) return lo;
  else if (v > hi) { return hi; }
  else { v += 0; }
  if (int d = v - lo) { v = d; }
  if (lo; hi) ;
  return v;
}",
    );
    let f = function(&file, "clamp");
    assert_eq!(
        outline(&f.body.statements()),
        "if (v < lo) [return lo] else [if (v > hi) [return hi] else [v += 0]]; \
         [decl d = (v - lo); if d [v = d] else []]; \
         [lo; if hi [] else []]; \
         return v"
    );
}

#[test]
fn nested_loops_while_and_do_while() {
    let file = parse(
        "__global__ void k(float *o, int n) {
  for (int i = 0, j = n; i < j; ++i, --j)
    for (;;) { if (i) break; else continue; }
  while (n > 1) n >>= 1;
  do { n++; } while (n < 4);
  for (n = 0, o[0] = 1; ; ) {}
}",
    );
    let k = function(&file, "k");
    assert_eq!(
        outline(&k.body.statements()),
        "for [decl i = 0; decl j = n]; (i < j); ++i, --j \
         [for []; ;  [if i [break] else [continue]]]; \
         while (n > 1) [n >>= 1]; \
         do [n++] while (n < 4); \
         for [n = 0; o[0] = 1]; ;  []"
    );
}

#[test]
fn switch_bodies_drop_case_labels() {
    let file = parse(
        "__device__ void k(int m, int *o) {
  switch (m & 3) {
    case 0: o[0] = 1; break;
    case 1: { o[1] = 2; }
    default: o[2] = 3;
  }
  switch (int s = m; s) { default: return; }
}",
    );
    let k = function(&file, "k");
    assert_eq!(
        outline(&k.body.statements()),
        "switch (m & 3) [o[0] = 1; break; [o[1] = 2]; o[2] = 3]; \
         [decl s = m; switch s [return]]"
    );
}

#[test]
fn preprocessor_branches_in_bodies() {
    let src = "__global__ void k(int *o) {
#if 0
  o[0] = 1;
#else
  o[0] = 2;
#endif
#ifdef EXTRA
  o[1] = 3;
#endif
#pragma unroll
  for (int i = 0; i < 2; i++) {}
#if __CUDA_ARCH__ >= 800
  o[2] = 4;
#elif 1
  o[2] = 5;
#endif
#if __has_builtin(__builtin_assume)
  o[3] = 6;
#endif
}";
    // `__CUDA_ARCH__` differs between nvcc's passes: both branches are compiled.
    let file = parse(src);
    let undecided =
        "if <preprocessor condition `#if __has_builtin(__builtin_assume)`> [o[3] = 6] else []";
    assert_eq!(
        outline(&function(&file, "k").body.statements()),
        format!(
            "o[0] = 2; for [decl i = 0]; (i < 2); i++ []; if <preprocessor condition `#if \
             __CUDA_ARCH__ >= 800`> [o[2] = 4] else [o[2] = 5]; {undecided}"
        )
    );
    let file = analyse_source(src, &["EXTRA".to_string(), "__CUDA_ARCH__=800".into()]);
    assert_eq!(
        outline(&function(&file, "k").body.statements()),
        format!("o[0] = 2; o[1] = 3; for [decl i = 0]; (i < 2); i++ []; o[2] = 4; {undecided}")
    );
}

#[test]
fn goto_is_opaque_and_labels_are_dropped() {
    let src = "__global__ void k(int *o) {
  int i = 0;
again:
  o[i] = i;
  if (++i < 4) goto again;
}";
    let file = parse(src);
    let k = function(&file, "k");
    let body = k.body.statements();
    assert_eq!(
        outline(&k.body.statements()),
        "decl i = 0; o[i] = i; if (++i < 4) [opaque goto_statement ] else []"
    );
    let Stmt::If { then, .. } = &body[2] else {
        panic!("{:?}", body[2])
    };
    let Stmt::Opaque {
        span,
        assigned,
        exprs,
        ..
    } = &then[0]
    else {
        panic!("{:?}", then[0])
    };
    assert_eq!(text(src, *span), "goto again;");
    assert!(assigned.is_empty() && exprs.is_empty());
}

/// Lambdas bound to a name are lowered when their captures can be modelled: all by
/// reference without writes to enclosing variables, or all by copy and not `mutable`.
#[test]
fn lambdas_are_lowered_when_their_captures_can_be_modelled() {
    let src = "__global__ void k(float *o, int n) {
  __shared__ float t[64];
  int m = 1;
  auto put = [&] __device__ (int i, float v) { int j = i; j += m; t[j] = v; };
  auto get = [=](int i) { return t[i + m]; };
  auto none = [] { };
  auto bump = [&] { m += 1; };
  auto copy = [=] () mutable { m = 2; };
  auto mixed = [&t, m] { t[m] = 0; };
  auto nested = [&] { auto g = [&] { }; };
}";
    let file = parse(src);
    let k = function(&file, "k");
    assert_eq!(
        outline(&k.body.statements()),
        "decl t; decl m = 1; \
         lambda put [&](i,v) [decl j = i; j += m; t[j] = v]; \
         lambda get [=](i) [return t[(i + m)]]; \
         lambda none [=]() []; \
         opaque lambda that assigns captured variables bump,m; \
         opaque lambda with mixed or mutable captures copy,m; \
         opaque lambda with mixed or mutable captures mixed,t; \
         opaque lambda that assigns captured variables nested,g"
    );
}

#[test]
fn opaque_statements_list_what_they_assign_and_their_expressions() {
    let src = "__global__ void k(float *o, int n) {
  __shared__ float t[64];
  int a = 0, b = 1, c = 2;
  for (int &v : o) { a = v; b++; t[v] = 0; }
  asm volatile(\"mov.u32 %0, %1;\" : \"=r\"(c) : \"r\"(t[n]));
  auto f = [&](int i) { t[i] = --n; };
  struct P { int q; } p;
  try { o[0] = t[1]; } catch (...) { }
}";
    let file = parse(src);
    let k = function(&file, "k");
    let body = k.body.statements();
    assert_eq!(
        outline(&k.body.statements()),
        "decl t; decl a = 0; decl b = 1; decl c = 2; \
         opaque for_range_loop v,a,b,t; \
         opaque gnu_asm_expression c; \
         opaque lambda that assigns captured variables f,t,n; \
         opaque struct_specifier p; \
         opaque try_statement o"
    );
    let Stmt::Opaque { exprs, span, .. } = &body[5] else {
        panic!("{:?}", body[5])
    };
    assert!(text(src, *span).starts_with("asm volatile"));
    let shown: Vec<String> = exprs.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["t[n]"]);
    let Stmt::Opaque { exprs, .. } = &body[6] else {
        panic!("{:?}", body[6])
    };
    let shown: Vec<String> = exprs.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["t[i] = --n"]);
}

#[test]
fn blocks_in_macro_arguments_are_opaque_with_their_effects() {
    // A statement expression inside a macro argument is kept opaque, with its effects.
    let file = parse(
        "__device__ void g(int *);
__global__ void k(int *o) {
  int x = 0, y = 1, z = 2;
  WITH_BLOCK({ g(&x); y--; z = o[0]; });
}",
    );
    let k = function(&file, "k");
    assert_eq!(
        outline(&k.body.statements()),
        "decl x = 0; decl y = 1; decl z = 2; opaque compound_statement x,y,z"
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 5_000;
    let src = format!(
        "__global__ void k(float *o) {{ __shared__ float s[4]; {} o[0] = s[threadIdx.x]; {} }}",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    let file = parse(&src);
    let k = function(&file, "k");
    assert!(k.syntax_error.is_none());
    let body = k.body.statements();
    assert_eq!(body.len(), 2);
    // Blocks down to the limit, then one opaque statement that still shows the access.
    let mut level = &body[1];
    let mut blocks = 0;
    while let Stmt::Block(inner) = level {
        assert_eq!(inner.len(), 1);
        level = &inner[0];
        blocks += 1;
    }
    assert!((100..depth).contains(&blocks), "{blocks} blocks");
    let Stmt::Opaque {
        what,
        assigned,
        exprs,
        ..
    } = level
    else {
        panic!("{level:?}")
    };
    assert_eq!(what, "statement nested too deeply");
    assert_eq!(assigned, &["o"]);
    let access = &k.arrays[0].accesses[0];
    assert_eq!(index_spans(std::slice::from_ref(level), "s"), [access.span]);
    assert_eq!(exprs.len(), 1);
}

#[test]
fn deep_nesting_of_every_kind_does_not_overflow() {
    let depth = 5_000;
    let shapes = [
        ("if (x) ".repeat(depth), String::new()),
        ("for (;;) ".repeat(depth), String::new()),
        ("while (x) do ".repeat(depth), " while (x);".repeat(depth)),
        ("l: ".repeat(depth), String::new()),
        ("if (x) {} else ".repeat(depth), String::new()),
        ("switch (x) { case 1: ".repeat(depth), "}".repeat(depth)),
        ("#if 1\n".repeat(depth), "\n#endif".repeat(depth)),
        ("#ifdef X\n#else\n".repeat(depth), "\n#endif".repeat(depth)),
        ("#if F(1)\n".repeat(depth), "\n#endif".repeat(depth)),
    ];
    for (open, close) in shapes {
        let src = format!(
            "__global__ void k(int x) {{ __shared__ int s[4];\n{open} s[x] = ({}x{});\n{close}\n}}",
            "(".repeat(300),
            ")".repeat(300)
        );
        let file = parse(&src);
        let k = function(&file, "k");
        assert!(k.syntax_error.is_none(), "{}", &src[..80]);
        assert_eq!(k.body.statements().len(), 2, "{}", &src[..80]);
    }
}

#[test]
fn kernel_parameters() {
    let file = parse(
        "template <typename T>
__global__ void k(T *__restrict__ out, const float *in, const int n, int &r, float a[4],
                  int, float (*op)(float), float *const *rows) {}
template __global__ void k<float>(float *, const float *, const int, int &, float *, int,
                                  float (*)(float), float *const *);",
    );
    let params: Vec<(String, String, bool, bool, bool)> = function(&file, "k<float>")
        .params
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                p.ty.clone(),
                p.pointer,
                p.reference,
                p.array,
            )
        })
        .collect();
    let expected = [
        ("out", "T", true, false, false),
        ("in", "const float", true, false, false),
        ("n", "const int", false, false, false),
        ("r", "int", false, true, false),
        ("a", "float", false, false, true),
        ("op", "float", true, false, false),
        ("rows", "float", true, false, false),
    ];
    let expected: Vec<(String, String, bool, bool, bool)> = expected
        .iter()
        .map(|(n, t, p, r, a)| (n.to_string(), t.to_string(), *p, *r, *a))
        .collect();
    assert_eq!(params, expected);
}

#[test]
fn template_instances_share_the_body() {
    let file = parse(
        "template <int N>
__global__ void k(float *o) {
  __shared__ float s[N];
  s[threadIdx.x % N] = o[0];
}
template __global__ void k<16>(float *);
template __global__ void k<32>(float *);",
    );
    let a = function(&file, "k<16>");
    let b = function(&file, "k<32>");
    assert!(a.body.shares(&b.body));
    assert_eq!(
        outline(&a.body.statements()),
        "decl s; s[(threadIdx.x % N)] = o[0]"
    );
    assert_eq!(a.params, b.params);
    assert_eq!(a.params[0].name, "o");
}

#[test]
fn index_spans_are_the_access_spans() {
    let src = "__global__ void k(int b, int i) {
  __shared__ float tile[32][33];
  __shared__ int hist[64];
  float v = tile[threadIdx.y][threadIdx.x];
  tile[i][0] += 1;
  atomicAdd(&hist[b], 1);
  atomicCAS(&(hist[i]), 0, 1);
  v = (tile[1][(i)]);
  if (hist[0] > 2) { hist[1]++; }
}";
    let file = parse(src);
    let k = function(&file, "k");
    for array in &k.arrays {
        let mut expected: Vec<Span> = array.accesses.iter().map(|a| a.span).collect();
        expected.dedup();
        let found = index_spans(&k.body.statements(), &array.name);
        assert_eq!(found, expected, "{}", array.name);
    }
    let shown = |array: &str| -> Vec<&str> {
        index_spans(&k.body.statements(), array)
            .into_iter()
            .map(|s| text(src, s))
            .collect()
    };
    assert_eq!(
        shown("tile"),
        [
            "tile[threadIdx.y][threadIdx.x]",
            "tile[i][0]",
            "tile[1][(i)]"
        ]
    );
    assert_eq!(shown("hist"), ["hist[b]", "hist[i]", "hist[0]", "hist[1]"]);
}

#[test]
fn every_access_in_testdata_has_its_index_node_in_the_body() {
    fn spans(expr: &Expr, out: &mut Vec<Span>) {
        let mut pending = vec![expr];
        while let Some(expr) = pending.pop() {
            out.push(expr.span);
            expr.for_each_child(|child| pending.push(child));
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut paths = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "cu") {
                paths.push(path);
            }
        }
    }
    let mut checked = 0;
    for path in paths {
        let src = std::fs::read_to_string(&path).unwrap();
        for f in &parse(&src).functions {
            let mut found = Vec::new();
            for expr in expressions(&f.body.statements()) {
                spans(expr, &mut found);
            }
            for access in f.arrays.iter().flat_map(|a| &a.accesses) {
                assert!(
                    found.contains(&access.span),
                    "{}: {} `{}` at {}",
                    path.display(),
                    f.display_name(),
                    access.text,
                    access.at
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} accesses");
}

#[test]
fn declarations_keep_their_type_storage_and_initializer() {
    let src = "__global__ void k(int x, int y) {
  static const unsigned int c = 3, *p = &c, &r = x, a[2] = {x, y};
  extern __shared__ __align__(16) unsigned char raw[];
  dim3 block(32, 8);
  float4 q{1.0f, 2.0f, 3.0f, 4.0f};
}";
    let file = parse(src);
    let k = function(&file, "k");
    let body = k.body.statements();
    let decls: Vec<&Decl> = body
        .iter()
        .map(|s| match s {
            Stmt::Decl(d) => d,
            other => panic!("{other:?}"),
        })
        .collect();
    fn shape(d: &Decl) -> (&str, &str, [bool; 3], [bool; 3]) {
        (
            d.name.as_str(),
            d.ty.as_str(),
            [d.pointer, d.reference, d.array],
            [d.is_static, d.is_extern, d.is_shared],
        )
    }
    let f = false;
    let t = true;
    assert_eq!(
        decls.iter().map(|d| shape(d)).collect::<Vec<_>>(),
        [
            ("c", "const unsigned int", [f, f, f], [t, f, f]),
            ("p", "const unsigned int", [t, f, f], [t, f, f]),
            ("r", "const unsigned int", [f, t, f], [t, f, f]),
            ("a", "const unsigned int", [f, f, t], [t, f, f]),
            ("raw", "__align__(16) unsigned char", [f, f, t], [f, t, t]),
            ("block", "dim3", [f, f, f], [f, f, f]),
            ("q", "float4", [f, f, f], [f, f, f]),
        ]
    );
    let inits: Vec<String> = decls
        .iter()
        .map(|d| d.init.as_ref().map(ToString::to_string).unwrap_or_default())
        .collect();
    assert_eq!(
        inits,
        [
            "3",
            "&c",
            "x",
            "unsigned int(x, y)",
            "",
            "dim3(32, 8)",
            "float4(1.0f, 2.0f, 3.0f, 4.0f)"
        ]
    );
    assert_eq!(text(src, decls[3].span), "a[2] = {x, y}");
    assert_eq!(text(src, decls[5].init.as_ref().unwrap().span), "(32, 8)");
}

#[test]
fn a_syntax_error_leaves_the_body_empty() {
    let file = parse(
        "__global__ void broken(int *o) { int x = ; o[0] = x; }
__global__ void fine(int *o) { o[0] = 1; }",
    );
    let broken = function(&file, "broken");
    assert!(broken.syntax_error.is_some());
    assert!(broken.body.is_empty());
    assert_eq!(broken.params[0].name, "o");
    assert_eq!(
        outline(&function(&file, "fine").body.statements()),
        "o[0] = 1"
    );
}

/// One walk reaches every nested statement, a lambda's body and a switch's included, in
/// source order.
#[test]
fn the_statement_walk_reaches_every_nested_statement_in_order() {
    let file = parse(
        "__device__ void f(int n) {
  int a = 0;
  for (int i = 0; i < n; ++i) { if (i) { int b = i; } else { do { int c = 1; } while (0); } }
  switch (n) { case 1: { int d = 2; } }
  auto g = [&] (int k) { int e = k; return e; };
  int z = 3;
}",
    );
    let f = function(&file, "f");
    let statements = f.body.statements();
    let mut declared = Vec::new();
    walk_statements(&statements, &mut |s| {
        if let Stmt::Decl(decl) = s {
            declared.push(decl.name.clone());
        }
    });
    assert_eq!(declared, ["a", "i", "b", "c", "d", "e", "z"]);
}
