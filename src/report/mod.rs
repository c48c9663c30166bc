//! Output: compiler-style text diagnostics and the JSON object of DESIGN.md §8.
use crate::analysis::{not_rewritable_reason, AnalysedFile};
use crate::block::Resolution;
use crate::parse::{Access, Function, Location, Severity, SharedArray};
use serde_json::{json, Map, Value};

/// The `check --format json` object for all files.
pub fn json(files: &[AnalysedFile]) -> Value {
    json!({ "files": files.iter().map(file_json).collect::<Vec<_>>() })
}

fn file_json(file: &AnalysedFile) -> Value {
    json!({
        "path": file.path.display().to_string(),
        "diagnostics": file.diagnostics.iter().map(|d| json!({
            "line": d.at.line,
            "col": d.at.col,
            "severity": d.severity.as_str(),
            "message": d.message,
        })).collect::<Vec<_>>(),
        "kernels": file.reported().map(|(f, b)| function_json(f, b)).collect::<Vec<_>>(),
    })
}

fn function_json(function: &Function, block: &Resolution) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), function.display_name().into());
    object.insert("kind".into(), function.kind.as_str().into());
    object.insert("line".into(), function.at.line.into());
    if !function.template_args.is_empty() {
        let args: Map<String, Value> = function
            .template_args
            .iter()
            .map(|(p, v)| (p.clone(), Value::from(v.as_str())))
            .collect();
        object.insert("template_args".into(), args.into());
    }
    let (shape, source) = match block {
        Ok(b) => (json!(b.shape), Value::from(b.source.to_string())),
        Err(_) => (Value::Null, Value::Null),
    };
    object.insert("block".into(), shape);
    object.insert("block_source".into(), source);
    if let Some(at) = function.syntax_error {
        object.insert(
            "skipped".into(),
            format!("syntax error at line {}", at.line).into(),
        );
    }
    object.insert(
        "arrays".into(),
        function
            .arrays
            .iter()
            .map(|a| array_json(a, block))
            .collect::<Vec<_>>()
            .into(),
    );
    object.into()
}

fn array_json(array: &SharedArray, block: &Resolution) -> Value {
    let reason = not_rewritable_reason(array, block);
    json!({
        "name": array.name,
        "elem_type": array.elem_type,
        "elem_bytes": array.elem_bytes,
        "dims": array.dims,
        "bytes": array.bytes(),
        "extern": array.is_extern,
        "line": array.at.line,
        "col": array.at.col,
        "rewritable": reason.is_none(),
        "reason": reason,
        "declared_by_macro": array.declared_by_macro,
        "escapes": array.escapes.iter().map(|e| json!({
            "line": e.at.line,
            "col": e.at.col,
            "kind": e.kind.tag(),
            "text": e.text,
        })).collect::<Vec<_>>(),
        "accesses": array.accesses.iter().map(access_json).collect::<Vec<_>>(),
    })
}

fn access_json(access: &Access) -> Value {
    let mut object = Map::new();
    object.insert("line".into(), access.at.line.into());
    object.insert("col".into(), access.at.col.into());
    object.insert("kind".into(), access.kind.as_str().into());
    object.insert("text".into(), access.text.clone().into());
    if let Some(member) = &access.member {
        object.insert("member".into(), member.clone().into());
    }
    if let Some(op) = &access.atomic_op {
        object.insert("atomic".into(), op.clone().into());
    }
    object.into()
}

/// `file:line:col: severity: message` lines, sorted by location within each file.
pub fn text(files: &[AnalysedFile]) -> String {
    let mut out = String::new();
    for file in files {
        let path = file.path.display();
        let mut lines: Vec<(Location, Severity, String)> = file
            .diagnostics
            .iter()
            .map(|d| (d.at, d.severity, d.message.clone()))
            .collect();
        for (function, block) in file.reported() {
            for array in &function.arrays {
                let shape = shape_text(array);
                for escape in &array.escapes {
                    lines.push((
                        escape.at,
                        Severity::Warning,
                        format!(
                            "`{}` in `{}` escapes analysis ({}): it will not be rewritten",
                            array.name,
                            function.display_name(),
                            escape
                        ),
                    ));
                }
                for access in &array.accesses {
                    let block = match block {
                        Ok(b) => format!("block {}", crate::block::format_shape(b.shape)),
                        Err(_) => "block unknown".into(),
                    };
                    let kind = match &access.atomic_op {
                        Some(op) => format!("atomic ({op})"),
                        None => access.kind.as_str().to_string(),
                    };
                    lines.push((
                        access.at,
                        Severity::Note,
                        format!(
                            "{kind} `{}{}` on `{}` {shape} in `{}` ({block})",
                            access.text,
                            access.member.as_deref().unwrap_or(""),
                            array.name,
                            function.display_name()
                        ),
                    ));
                }
            }
        }
        lines.sort_by_key(|(at, _, _)| *at);
        for (at, severity, message) in lines {
            out.push_str(&format!("{path}:{at}: {}: {message}\n", severity.as_str()));
        }
    }
    out
}

/// `float[32][33]`, with `?` for unknown extents and `[]` for extern arrays.
fn shape_text(array: &SharedArray) -> String {
    let mut text = array.elem_type.clone();
    for (i, dim) in array.dims.iter().enumerate() {
        match dim {
            Some(d) => text.push_str(&format!("[{d}]")),
            None if array.is_extern && i == 0 => text.push_str("[]"),
            None => text.push_str("[?]"),
        }
    }
    text
}
