//! The map function form: `a[i]` → `a[bankwise_a(i)]`, a multi-dimensional declaration
//! flattened first, with the function (and its macro twin for validation) inserted above the
//! kernel.
use super::*;

/// `a[i]` → `a[name(i)]` through a map function inserted before the array's function; a
/// multi-dimensional declaration is flattened first (`a[i][j]` → `a[name(i * C + j)]`), and
/// grown when the map needs more room than the array (flat padding). When pointers are made
/// from a multi-dimensional array they index its declared shape, so the declaration stays and
/// its subscripts address the first element (`(&a[0][0])[name(i * C + j)]`).
pub fn map_function(target: &Target, map: &dyn AddressMap, name: &str) -> Result<Rewrite, String> {
    let dims = target.dims()?;
    let accesses = target.subscripts()?;
    // A map written in the declaration's own names holds for every value of them.
    let (expr, proven_dims) = match symbolic(target, map) {
        Some(expr) => (expr, Some(Vec::new())),
        None => (map.expr(), None),
    };
    let through = through_pointers(target, &expr, name)?;
    let extra = map.extent_out() - map.extent();
    let multi = dims.len() > 1;
    let flatten = multi && target.pointer_made_at.is_none();
    if let (true, true, Some(line)) = (multi, extra > 0, target.pointer_made_at) {
        return Err(format!(
            "the map needs {extra} more elements, but the pointer made at line {line} indexes \
             the declared shape"
        ));
    }
    let mut edits = Vec::new();
    if flatten || extra > 0 {
        let extents = declared_extents(target)?;
        let written: Vec<&str> = extents
            .iter()
            .map(|r| &target.source.text[r.clone()])
            .collect();
        let size = if flatten {
            written
                .iter()
                .map(|t| parenthesised(t, extent_kind(t).0))
                .collect::<Vec<_>>()
                .join(" * ")
        } else {
            written[0].to_string()
        };
        let size = if extra > 0 { plus(&size, extra) } else { size };
        let all = extents[0].start - 1..extents[extents.len() - 1].end + 1;
        edits.push(Edit::replace(all, format!("[{size}]")));
    }
    let extents = target.extent_texts();
    let mut rewritten = Vec::new();
    for access in accesses {
        let subscripts = access.indices.unpack();
        let indices: Vec<MapExpr> = subscripts
            .iter()
            .map(|e| MapExpr::Var(target.source.operand(e)))
            .collect();
        let argument = if multi {
            linear_text(&linear_expr(&indices, &extents))
        } else {
            // A comma expression needs its parentheses inside the call.
            let index = &subscripts[0];
            let text = target.source.span(index);
            parenthesised(text, !matches!(index.kind, ExprKind::Comma { .. }))
        };
        let call = format!("{name}({argument})");
        let (first, last) = (&subscripts[0].span, &subscripts[dims.len() - 1].span);
        let text = if flatten {
            // From the first subscript's `[` to the last one's `]`.
            let open = target.source.text[..first.start]
                .rfind('[')
                .ok_or("no `[` before the first subscript")?;
            let close = target.source.text[last.end..]
                .find(']')
                .map(|at| last.end + at + 1)
                .ok_or("no `]` after the last subscript")?;
            edits.push(Edit::replace(open..close, format!("[{call}]")));
            format!("{}[{call}]", target.array.name)
        } else if multi {
            let base = target
                .subscriptable_base()
                .ok_or("the array has no name to subscript")?;
            let whole = format!("{base}[{call}]");
            edits.push(Edit::replace(
                access.span.start..access.span.end,
                whole.clone(),
            ));
            whole
        } else {
            edits.push(Edit::replace(first.start..first.end, call.clone()));
            format!("{}[{call}]", target.array.name)
        };
        rewritten.push(AccessRewrite {
            text,
            alu: expr.ops(),
        });
    }
    let rewritten = in_access_order(target, rewritten, through.accesses);
    edits.extend(through.edits);
    let function = map_function_text(target, map, name, &expr, through.copies)?;
    let form = if flatten {
        FormKind::FlattenedMapFunction
    } else {
        FormKind::MapFunction
    };
    let description = if flatten {
        format!("is flattened and stored through {name}()")
    } else if multi {
        format!("is stored through {name}() of its row-major index")
    } else {
        format!("is stored through {name}()")
    };
    edits.extend(target.marker(&description));
    let elem_bytes = target.array.elem_bytes.unwrap_or(0);
    Ok(Rewrite {
        form,
        edits,
        function: Some(function),
        accesses: rewritten,
        extra_bytes: extra * elem_bytes,
        split_into: Vec::new(),
        proven_dims,
        assumptions: Vec::new(),
    })
}

/// The map function `name` for `map` (whose body is `expr`), placed before the function.
pub(super) fn map_function_text(
    target: &Target,
    map: &dyn AddressMap,
    name: &str,
    expr: &MapExpr,
    copies: Vec<FunctionCopy>,
) -> Result<MapFunction, String> {
    if has_table(expr) {
        return Err(format!(
            "the {} map reads a `__constant__` table, which the analysis cannot evaluate, so \
             its rewrite could not be validated",
            map.kind()
        ));
    }
    let at = target
        .function_at
        .ok_or("no line to put the map function on before the function")?;
    let newline = target.source.newline;
    let definition = format!(
        "__host__ __device__ __forceinline__ int {name}(int i) {{ return {}; }}",
        expr.to_cuda("i")
    );
    let comment = format!(
        "// bankwise map for `{}` in `{}`: {}",
        target.array.name,
        target.function,
        describe(map)
    );
    let copied: String = copies.iter().map(|copy| copy.text.as_str()).collect();
    Ok(MapFunction {
        name: name.to_string(),
        at,
        text: format!("{comment}{newline}{definition}{newline}{newline}{copied}"),
        copies: copies
            .into_iter()
            .map(|copy| (copy.name, copy.original))
            .collect(),
        macro_definition: format!("#define {name}(i) ({})", expr.to_cuda("(i)")),
        definition,
    })
}

/// `i * C + j`, `(i * B + j) * C + k`: the linear index as a reader would write it.
pub(super) fn linear_text(expr: &MapExpr) -> String {
    match expr {
        MapExpr::Binary(BinOp::Add, product, index) => {
            format!("{} + {}", linear_text(product), linear_text(index))
        }
        MapExpr::Binary(BinOp::Mul, linear, extent) => {
            let left = match **linear {
                MapExpr::Binary(BinOp::Add, ..) => format!("({})", linear_text(linear)),
                _ => linear_text(linear),
            };
            format!("{left} * {}", linear_text(extent))
        }
        other => other.to_cuda(""),
    }
}

pub(super) fn has_table(expr: &MapExpr) -> bool {
    match expr {
        MapExpr::Table { .. } => true,
        MapExpr::Binary(_, l, r) => has_table(l) || has_table(r),
        MapExpr::Select {
            lhs,
            rhs,
            then,
            otherwise,
        } => [lhs, rhs, then, otherwise].iter().any(|e| has_table(e)),
        _ => false,
    }
}
