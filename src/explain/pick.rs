//! Which access `--line N [--col C]` means.
use crate::analysis::{is_reported, AnalysedFile};

/// One access of one array of one function of an analysed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picked {
    pub function: usize,
    pub array: usize,
    pub access: usize,
}

/// The access on `line` (at column `col` if given), with the other instances of a template
/// at the same place; or a message that says what the line holds and what to pass instead.
pub fn pick(
    file: &AnalysedFile,
    line: usize,
    col: Option<usize>,
) -> Result<(Picked, Vec<Picked>), String> {
    let all = accesses(file);
    let on_line: Vec<&(Picked, usize, usize)> = all.iter().filter(|(_, l, _)| *l == line).collect();
    if on_line.is_empty() {
        return Err(no_access(&all, line));
    }
    let mut columns: Vec<usize> = on_line.iter().map(|(_, _, c)| *c).collect();
    columns.sort_unstable();
    columns.dedup();
    let describe = |c: usize| {
        on_line
            .iter()
            .find(|(_, _, col)| *col == c)
            .map(|(p, _, _)| describe(file, p))
            .unwrap_or_default()
    };
    let column = match col {
        Some(c) if columns.contains(&c) => c,
        Some(c) => {
            let listed: Vec<String> = columns.iter().map(|&c| describe(c)).collect();
            return Err(format!(
                "no access starts at line {line}, column {c}; the line has {}",
                listed.join(", ")
            ));
        }
        None if columns.len() == 1 => columns[0],
        None => {
            let listed: Vec<String> = columns.iter().map(|&c| describe(c)).collect();
            return Err(format!(
                "line {line} has {} accesses: {}; pass --col",
                columns.len(),
                listed.join(", ")
            ));
        }
    };
    let mut here = on_line
        .iter()
        .filter(|(_, _, c)| *c == column)
        .map(|(p, _, _)| *p);
    let first = here
        .next()
        .ok_or_else(|| format!("no access at line {line}, column {column}"))?;
    Ok((first, here.collect()))
}

/// `col 43: load `s[2 * threadIdx.x]``.
fn describe(file: &AnalysedFile, picked: &Picked) -> String {
    let array = &file.parsed.functions[picked.function].arrays[picked.array];
    let access = &array.accesses[picked.access];
    format!(
        "col {}: {} `{}`",
        access.at.col,
        access.kind.as_str(),
        access.text
    )
}

/// Every access of every reported function, with its line and column, in source order.
fn accesses(file: &AnalysedFile) -> Vec<(Picked, usize, usize)> {
    let mut all = Vec::new();
    for (f, function) in file.parsed.functions.iter().enumerate() {
        if !is_reported(function) {
            continue;
        }
        for (a, array) in function.arrays.iter().enumerate() {
            for (i, access) in array.accesses.iter().enumerate() {
                let picked = Picked {
                    function: f,
                    array: a,
                    access: i,
                };
                all.push((picked, access.at.line, access.at.col));
            }
        }
    }
    all.sort_by_key(|(p, line, col)| (*line, *col, p.function));
    all
}

/// Names the nearest lines with accesses, before and after `line`.
fn no_access(all: &[(Picked, usize, usize)], line: usize) -> String {
    let before = all.iter().rev().map(|(_, l, _)| *l).find(|&l| l < line);
    let after = all.iter().map(|(_, l, _)| *l).find(|&l| l > line);
    let nearest = match (before, after) {
        (None, None) => {
            return format!("no shared-memory access on line {line}: the file has none")
        }
        (Some(l), None) | (None, Some(l)) => format!("line {l}"),
        (Some(b), Some(a)) => format!("lines {b} and {a}"),
    };
    format!("no shared-memory access on line {line} (nearest: {nearest})")
}
