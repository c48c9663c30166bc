//! The struct-of-arrays rewrite: its edits, for the layout that [`crate::solve::soa`] poses.
//!
//! `__shared__ FourVector home[N];` becomes one array per member, `__shared__ float home_v[N],
//! home_x[N], …;` (consecutive members of one type share a declaration), and each access
//! becomes accesses of the member arrays:
//! - `home[i].v` → `home_v[i]`, whatever the access (a load, a store, `+=`, `++`, an
//!   atomic on `&home[i].v`): the subscripts stay where they are;
//! - the statement `home[i] = E;` → `{ const FourVector bankwise_home = E; home_v[i] =
//!   bankwise_home.v; … }`, one block, so also as the body of an unbraced `if`; E is evaluated
//!   before the index, as C++17 sequences an assignment, and an index with side effects is
//!   evaluated once, into a `const int` after E;
//! - a whole record read as a value, `home[i]` → `FourVector{home_v[i], home_x[i], …}`.
//!
//! E keeps its place in the text, so the edits of any array inside it (this one's included)
//! stay apart from these; an index that is copied (into every member's store or read) may
//! therefore read no shared memory.
use super::edit::Edit;
use super::forms::{declarator, AccessRewrite, FormKind, Rewrite, Target};
use crate::parse::{Access, Expr, ExprKind, SharedArray};
use crate::solve::soa::{RecordUse, StructOfArrays};
use std::collections::HashMap;
use std::ops::Range;

/// The names the rewrite introduces for one array.
pub struct LayoutNames {
    /// One array per member, in the members' order.
    pub arrays: Vec<String>,
    /// The record a whole-record store evaluates first.
    pub record: String,
    /// The indices of a whole-record store whose subscripts have side effects, one per
    /// dimension.
    pub indices: Vec<String>,
}

/// The rewrite of `target`'s array into the member arrays `names.arrays`.
pub fn struct_of_arrays(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
) -> Result<Rewrite, String> {
    let array = target.array;
    let text = target.source.text;
    let mut edits = Vec::new();
    let mut rewritten = Vec::new();
    for (access, use_) in array.accesses.iter().zip(&layout.uses) {
        let name_end = access.span.start + array.name.len();
        if text.get(access.span.start..name_end) != Some(array.name.as_str()) {
            return Err(format!(
                "line {}: `{}` does not start with the array's name",
                access.at.line, access.text
            ));
        }
        let subscripts = &text[name_end..access.span.end];
        let member_array = |m: usize, subscripts: &str| format!("{}{subscripts}", names.arrays[m]);
        match *use_ {
            RecordUse::Member(m) => {
                let member_end = member_end(text, access.span.end, &layout.members[m].name)
                    .ok_or_else(|| {
                        format!(
                            "line {}: `.{}` does not follow `{}`",
                            access.at.line, layout.members[m].name, access.text
                        )
                    })?;
                edits.push(Edit::replace(
                    access.span.start..name_end,
                    names.arrays[m].clone(),
                ));
                edits.push(Edit::replace(access.span.end..member_end, ""));
                rewritten.push(AccessRewrite {
                    text: member_array(m, subscripts),
                    alu: 0,
                });
            }
            RecordUse::Load => {
                let each: Vec<String> = (0..layout.members.len())
                    .map(|m| member_array(m, subscripts))
                    .collect();
                let record = format!("{}{{{}}}", layout.record, each.join(", "));
                edits.push(Edit::replace(
                    access.span.start..access.span.end,
                    record.clone(),
                ));
                rewritten.push(AccessRewrite {
                    text: record,
                    alu: 0,
                });
            }
            RecordUse::Store { assignment, value } => {
                let (prefix, suffix, stores) =
                    store_block(target, layout, names, access, subscripts);
                let semicolon = statement_end(text, value.end).ok_or_else(|| {
                    format!(
                        "line {}: the store of `{}` does not end at a `;`",
                        access.at.line, access.text
                    )
                })?;
                edits.push(Edit::replace(assignment.start..value.start, prefix));
                edits.push(Edit::replace(value.end..semicolon, suffix));
                rewritten.push(AccessRewrite {
                    text: stores.join(", "),
                    alu: 0,
                });
            }
        }
    }
    edits.push(declaration(target, layout, names)?);
    let quoted: Vec<String> = names.arrays.iter().map(|n| format!("`{n}`")).collect();
    edits.extend(target.marker(&format!(
        "is stored as a struct of arrays: {}",
        quoted.join(", ")
    )));
    Ok(Rewrite {
        form: FormKind::StructOfArrays,
        edits,
        function: None,
        accesses: rewritten,
        extra_bytes: 0,
        split_into: names.arrays.clone(),
    })
}

/// The end of `.member` right after `at` (spaces allowed around the dot), if it is there.
fn member_end(text: &str, at: usize, member: &str) -> Option<usize> {
    let rest = text.get(at..)?;
    let after_dot = rest.trim_start().strip_prefix('.')?.trim_start();
    let after = after_dot.strip_prefix(member)?;
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some(text.len() - after.len())
}

/// The end of the `;` that follows `at` after spaces, if one does.
fn statement_end(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at..)?.trim_start();
    rest.starts_with(';').then(|| text.len() - rest.len() + 1)
}

/// The text before and after E that turns `a[i] = E;` into the block of member stores, and
/// the stores.
fn store_block(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
    access: &Access,
    subscripts: &str,
) -> (String, String, Vec<String>) {
    let text = target.source.text;
    let newline = target.source.newline;
    let line_start = text[..access.span.start].rfind('\n').map_or(0, |at| at + 1);
    let indent = &text[line_start..access.span.start];
    // On a line of its own, one statement per line; after other code, all on one line.
    let (open, separator, close) = if indent.trim().is_empty() {
        let unit = if indent.contains('\t') { "\t" } else { "    " };
        (
            format!("{{{newline}{indent}{unit}"),
            format!("{newline}{indent}{unit}"),
            format!("{newline}{indent}}}"),
        )
    } else {
        ("{ ".to_string(), " ".to_string(), " }".to_string())
    };
    let mut statements = Vec::new();
    let indices = access.indices.unpack();
    let subscripts = if indices.iter().all(Expr::is_pure) {
        subscripts.to_string()
    } else {
        let mut temporaries = String::new();
        for (index, name) in indices.iter().zip(&names.indices) {
            let expr = text.get(index.span.start..index.span.end).unwrap_or("");
            // `const int i = a, b;` would declare `b`.
            let comma = matches!(index.kind, ExprKind::Comma { .. });
            let expr = if comma {
                format!("({expr})")
            } else {
                expr.to_string()
            };
            statements.push(format!("const int {name} = {expr};"));
            temporaries.push_str(&format!("[{name}]"));
        }
        temporaries
    };
    let stores: Vec<String> = names
        .arrays
        .iter()
        .map(|array| format!("{array}{subscripts}"))
        .collect();
    for (store, member) in stores.iter().zip(&layout.members) {
        statements.push(format!("{store} = {}.{};", names.record, member.name));
    }
    let prefix = format!("{open}const {} {} = ", layout.record, names.record);
    let suffix = format!(";{separator}{}{close}", statements.join(&separator));
    (prefix, suffix, stores)
}

/// The declaration of the member arrays in place of the array's: consecutive members of one
/// type in one declaration, each declaration on its own line when the original has its own.
fn declaration(
    target: &Target,
    layout: &StructOfArrays,
    names: &LayoutNames,
) -> Result<Edit, String> {
    let array = target.array;
    let text = target.source.text;
    let span = array.decl_span.start..array.decl_span.end;
    let decl = text
        .get(span.clone())
        .ok_or("the declaration is not in the file")?;
    let (name_at, extents) = declarator(target)?;
    let extents_text = match (extents.first(), extents.last()) {
        (Some(first), Some(last)) => &text[first.start - 1..last.end + 1],
        _ => return Err("the declarator has no extents".into()),
    };
    let declarator_range =
        name_at - span.start..extents.last().map_or(0, |r| r.end + 1) - span.start;
    let outside = format!(
        "{}{}",
        &decl[..declarator_range.start],
        &decl[declarator_range.end..]
    );
    if outside.contains([',', '=', '{']) {
        return Err("the declaration declares more than the array".into());
    }
    let type_range =
        type_in(&decl[..declarator_range.start], &array.elem_type).ok_or_else(|| {
            format!(
                "the element type `{}` is not written in the declaration",
                array.elem_type
            )
        })?;
    let line_start = text[..span.start].rfind('\n').map_or(0, |at| at + 1);
    let indent = &text[line_start..span.start];
    let separator = if indent.trim().is_empty() {
        format!("{}{indent}", target.source.newline)
    } else {
        " ".to_string()
    };
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (member, name) in layout.members.iter().zip(&names.arrays) {
        let declarator = format!("{name}{extents_text}");
        match groups.last_mut() {
            Some((ty, declarators)) if *ty == member.type_name => declarators.push(declarator),
            _ => groups.push((&member.type_name, vec![declarator])),
        }
    }
    let declarations: Vec<String> = groups
        .iter()
        .map(|(ty, declarators)| {
            format!(
                "{}{ty}{}{}{}",
                &decl[..type_range.start],
                &decl[type_range.end..declarator_range.start],
                declarators.join(", "),
                &decl[declarator_range.end..]
            )
        })
        .collect();
    Ok(Edit::replace(span, declarations.join(&separator)))
}

/// The range of the type `ty` (its words, `struct` and qualifiers included as written) in
/// `head`, the declaration before its declarator.
fn type_in(head: &str, ty: &str) -> Option<Range<usize>> {
    let name = ty.split_whitespace().last()?;
    let mut search = 0;
    while let Some(found) = head[search..].find(name) {
        let start = search + found;
        let end = start + name.len();
        search = end;
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let bounded = !head[..start].ends_with(is_word) && !head[end..].starts_with(is_word);
        if !bounded {
            continue;
        }
        // `struct T`: the keyword goes with the type.
        let before = head[..start].trim_end();
        let start = ["struct", "union", "class"]
            .iter()
            .find(|k| before.ends_with(*k) && !before[..before.len() - k.len()].ends_with(is_word))
            .map_or(start, |k| before.len() - k.len());
        return Some(start..end);
    }
    None
}

/// Names for the member arrays of every array rewritten as a struct of arrays: none may be a
/// word of the file, nor another's.
pub struct Words {
    taken: std::collections::HashSet<String>,
    by_declaration: HashMap<(usize, usize), LayoutNames>,
}

impl Words {
    pub fn new(text: &str) -> Self {
        Words {
            taken: text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect(),
            by_declaration: HashMap::new(),
        }
    }

    /// `base`, or `base_2`, `base_3`, … : the first that is no word of the file.
    fn fresh(&mut self, base: String) -> String {
        let name = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}_{n}")))
            .find(|name| !self.taken.contains(name))
            .unwrap_or(base);
        self.taken.insert(name.clone());
        name
    }

    /// The names for `array` (the instances of a template share theirs).
    pub fn for_array(&mut self, array: &SharedArray, layout: &StructOfArrays) -> &LayoutNames {
        let key = (array.decl_span.start, array.decl_span.end);
        if !self.by_declaration.contains_key(&key) {
            let arrays = layout
                .members
                .iter()
                .map(|m| self.fresh(format!("{}_{}", array.name, m.name)))
                .collect();
            let record = self.fresh(format!("bankwise_{}", array.name));
            let indices = (0..array.dims.len())
                .map(|d| self.fresh(format!("bankwise_i{d}")))
                .collect();
            self.by_declaration.insert(
                key,
                LayoutNames {
                    arrays,
                    record,
                    indices,
                },
            );
        }
        &self.by_declaration[&key]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyse_text, Options};
    use crate::block::ConfigBlocks;
    use crate::parse::AccessKind;
    use crate::pipeline::{fix_text, FileFix, FixOptions};
    use crate::plan::{Action, ArrayOutcome};
    use crate::solve::choose::choose;
    use crate::solve::kernel::{choose_kernel, TIE_BREAK_LAMBDA};
    use crate::solve::soa::{layout, posed};
    use crate::solve::{ArrayProblem, Family};
    use std::path::Path;

    const RECORD: &str = "struct R { float v, x, y, z; };\n";

    /// A kernel of 128 threads around `body`, with `decl` before it.
    fn kernel(decl: &str, body: &str) -> String {
        format!(
            "{RECORD}// bankwise: block=128\n__global__ void k(const R *in, float *out)\n{{\n    \
             {decl}\n    const int t = threadIdx.x;\n{body}}}\n"
        )
    }

    /// The layout of the first array of `k`, or why it does not apply.
    fn layout_of(text: &str) -> Result<StructOfArrays, String> {
        let file = analyse_text(
            Path::new("t.cu"),
            text,
            &Options::default(),
            &ConfigBlocks::default(),
        );
        let function = &file.parsed.functions[0];
        layout(function, &function.arrays[0], &file.parsed.constants.types)
    }

    fn fixed(text: &str) -> FileFix {
        fix_text(
            Path::new("t.cu"),
            text,
            &FixOptions::default(),
            &ConfigBlocks::default(),
        )
        .expect("fixes and validates")
    }

    fn outcome<'a>(file: &'a FileFix, array: &str) -> &'a ArrayOutcome {
        file.arrays
            .iter()
            .find(|a| a.array == array)
            .expect("the array is reported")
    }

    const BODIES: &str = "    __shared__ R a[128];";

    #[test]
    fn member_reads_lose_their_four_way_conflict_and_record_stores_keep_their_wavefronts() {
        let text = kernel(
            BODIES,
            "    a[t] = in[t];\n    __syncthreads();\n    out[t] = a[t].v + a[t].x;\n",
        );
        let file = fixed(&text);
        let a = outcome(&file, "a");
        assert_eq!(a.action, Action::Rewritten);
        assert_eq!(
            a.map.as_ref().map(|m| m.strategy),
            Some(Family::StructOfArrays)
        );
        // Four warps, each read 4-way: 3 excess wavefronts per warp and read.
        let excess: Vec<_> = a
            .accesses
            .iter()
            .map(|x| (x.excess_before, x.excess_after))
            .collect();
        assert_eq!(
            excess,
            vec![(Some(0), Some(0)), (Some(12), Some(0)), (Some(12), Some(0))]
        );
        assert_eq!(a.split_into, vec!["a_v", "a_x", "a_y", "a_z"]);
        assert!(file
            .output
            .contains("    __shared__ float a_v[128], a_x[128], a_y[128], a_z[128];\n"));
        assert!(file.output.contains(
            "    {\n        const R bankwise_a = in[t];\n        a_v[t] = bankwise_a.v;\n        \
             a_x[t] = bankwise_a.x;\n        a_y[t] = bankwise_a.y;\n        \
             a_z[t] = bankwise_a.z;\n    }\n"
        ));
        assert!(file.output.contains("out[t] = a_v[t] + a_x[t];"));
        // The 16-byte store took 4 wavefronts per warp (4 phases of 8 lanes); its 4 member
        // stores take one each.
        let wavefronts = |text: &str, arrays: &[&str]| -> u64 {
            let analysed = analyse_text(
                Path::new("t.cu"),
                text,
                &Options::default(),
                &ConfigBlocks::default(),
            );
            let function = &analysed.parsed.functions[0];
            function
                .arrays
                .iter()
                .zip(&analysed.per_function[0].costs)
                .filter(|(array, _)| arrays.contains(&array.name.as_str()))
                .flat_map(|(array, costs)| array.accesses.iter().zip(costs))
                .filter(|(access, _)| access.kind == AccessKind::Store)
                .map(|(_, cost)| cost.as_ref().map_or(0, |c| c.wavefronts))
                .sum()
        };
        assert_eq!(wavefronts(&text, &["a"]), 4 * 4);
        assert_eq!(
            wavefronts(&file.output, &["a_v", "a_x", "a_y", "a_z"]),
            4 * 4
        );
        // Idempotent: the member arrays have no conflicts left.
        assert!(!fixed(&file.output).changed());
    }

    #[test]
    fn every_kind_of_member_access_and_a_record_read_are_rewritten() {
        let text = kernel(
            BODIES,
            "    if (t < 128) a[t] = in[t];\n    __syncthreads();\n    \
             atomicAdd(&a[(t + 1) % 128].v, 1.0f);\n    a[t].x += 2.0f;\n    a[t].y++;\n    \
             R r = a[127 - t];\n    out[t] = r.v + a[t].z;\n",
        );
        let file = fixed(&text);
        let a = outcome(&file, "a");
        assert_eq!(a.action, Action::Rewritten, "{:?}", a.reason);
        for expected in [
            "if (t < 128) { const R bankwise_a = in[t]; a_v[t] = bankwise_a.v; \
             a_x[t] = bankwise_a.x; a_y[t] = bankwise_a.y; a_z[t] = bankwise_a.z; }\n",
            "atomicAdd(&a_v[(t + 1) % 128], 1.0f);",
            "a_x[t] += 2.0f;",
            "a_y[t]++;",
            "R r = R{a_v[127 - t], a_x[127 - t], a_y[127 - t], a_z[127 - t]};",
            "out[t] = r.v + a_z[t];",
        ] {
            assert!(
                file.output.contains(expected),
                "{expected}\n{}",
                file.output
            );
        }
        let texts: Vec<&str> = a
            .accesses
            .iter()
            .filter_map(|x| x.new_text.as_deref())
            .collect();
        assert!(texts.contains(&"R{a_v[127 - t], a_x[127 - t], a_y[127 - t], a_z[127 - t]}"));
    }

    #[test]
    fn a_store_whose_index_has_side_effects_evaluates_it_once_after_the_value() {
        let text = kernel(
            BODIES,
            "    int i = t;\n    a[i++] = in[t];\n    __syncthreads();\n    out[t] = a[t].v;\n",
        );
        let file = fixed(&text);
        assert_eq!(outcome(&file, "a").action, Action::Rewritten);
        assert!(file.output.contains(
            "const R bankwise_a = in[t];\n        const int bankwise_i0 = i++;\n        \
             a_v[bankwise_i0] = bankwise_a.v;"
        ));
    }

    #[test]
    fn members_of_different_types_get_a_declaration_each_and_names_do_not_collide() {
        let text = "struct C { int count; float sum; };\nint s_count;\n\
            // bankwise: block=64\n__global__ void k(float *out)\n{\n    \
            __shared__ C s[64];\n    s[threadIdx.x].count = 0;\n    \
            s[threadIdx.x].sum = out[threadIdx.x];\n    \
            out[threadIdx.x] = s[threadIdx.x].sum + s[threadIdx.x].count;\n}\n";
        let file = fixed(text);
        let s = outcome(&file, "s");
        assert_eq!(s.action, Action::Rewritten, "{:?}", s.reason);
        assert_eq!(s.split_into, vec!["s_count_2", "s_sum"]);
        assert!(file
            .output
            .contains("    __shared__ int s_count_2[64];\n    __shared__ float s_sum[64];\n"));
    }

    #[test]
    fn the_layout_is_refused_with_the_reason() {
        let refused = |decl: &str, body: &str, types: &str| {
            layout_of(&format!("{types}{}", kernel(decl, body))).expect_err("refused")
        };
        assert_eq!(
            refused(
                "__shared__ Q a[128];",
                "    a[t].v[0] = 1;\n",
                "struct Q { float v[4]; };\n"
            ),
            "member `v` of `Q` is an array"
        );
        assert_eq!(
            refused(
                "__shared__ P a[128];",
                "    a[t].x = 1;\n",
                "struct P { char c; float x; };\n"
            ),
            "`P` has padding or overlapping members at member `x` (byte 4, not 1)"
        );
        assert_eq!(
            refused(
                "__shared__ P a[128];",
                "    a[t].x = 1;\n",
                "struct P { float x; char c; };\n"
            ),
            "`P` has 3 padding bytes: its members fill 5 of its 8"
        );
        assert_eq!(
            refused(
                "__shared__ N a[128];",
                "    a[t].p.x = 1;\n",
                "struct N { float2 p; };\n"
            ),
            "member `p` of `N` is a `float2`, not a scalar"
        );
        assert_eq!(
            refused(
                "__shared__ B a[128];",
                "    a[t].f = 1;\n",
                "struct B { int f : 4; };\n"
            ),
            "`B` has no known size"
        );
        assert_eq!(
            refused("__shared__ float2 a[128];", "    a[t].x = 1;\n", ""),
            "the element type `float2` is not a struct"
        );
        // `P{…}` would call no constructor of these, and their copies may do more than copy.
        let more_than_data = "declares more than data members (a constructor, a member \
            function, an operator or a base class): its copies may not go member by member";
        for types in [
            "struct C { float v, x; __device__ C() {} };\n",
            "struct O { float v, x;\n  \
             __device__ O &operator=(const O &o) { v = o.x; return *this; } };\n",
            "struct Base { float v; };\nstruct D : Base { float x; };\n",
        ] {
            let name = &types[types.rfind("struct ").unwrap_or(0) + 7..][..1];
            assert_eq!(
                refused(
                    &format!("__shared__ {name} a[128];"),
                    "    a[t].x = 1;\n",
                    types
                ),
                format!("`{name}` {more_than_data}")
            );
        }
        assert!(
            refused(BODIES, "    float *p = (float *)a;\n    p[t] = 1;\n", "")
                .starts_with("it escapes: cast to `float *`")
        );
        assert_eq!(
            refused(BODIES, "    R r = in[t];\n    a[t] += r;\n", ""),
            "line 8: `a[t]` updates a whole record in place"
        );
        assert_eq!(
            refused(
                BODIES,
                "    int i = t;\n    R r = a[i++];\n    out[t] = r.v;\n",
                ""
            ),
            "line 8: `a[i++]` reads a whole record at an index with side effects"
        );
        assert_eq!(
            refused(
                BODIES,
                "    out[t] = f(a[t]);\n",
                "__device__ float f(R r);\n"
            ),
            "line 8: `a[t]` passes a whole record to a function"
        );
        assert_eq!(
            refused(BODIES, "    out[t] = (a[t] = in[t]).v;\n", ""),
            "line 7: `a[t]` stores a whole record inside a larger expression"
        );
        assert_eq!(
            refused(BODIES, "    const R &r = a[t];\n    out[t] = r.v;\n", ""),
            "it escapes: bound to reference `r` at line 7 (`const R &r = a[t];`)"
        );
        assert_eq!(
            refused(
                "__shared__ R a[128]; __shared__ int idx[128];",
                "    idx[t] = t;\n    a[idx[t]] = in[t];\n",
                ""
            ),
            "line 8: `a[idx[t]]` has an index that reads shared memory, which the rewrite \
             would copy"
        );
    }

    /// `a[2t].v`: the records' words 8 apart, 4-way. A map of records reaches 2-way (only
    /// even banks hold a `.v`); so does the member array `a_v[2t]` (stride 2): the map wins the
    /// tie, per array and per kernel.
    #[test]
    fn a_map_of_records_wins_a_tie_with_the_layout() {
        let text = "struct S { float v, w; };\n// bankwise: block=32\n\
            __global__ void k(float *out)\n{\n    __shared__ S a[64];\n    \
            out[threadIdx.x] = a[2 * threadIdx.x].v;\n}\n";
        let file = analyse_text(
            Path::new("t.cu"),
            text,
            &Options::default(),
            &ConfigBlocks::default(),
        );
        let function = &file.parsed.functions[0];
        let affine = file.per_function[0].affine.as_ref().expect("analysed");
        let config = Options::default().bank;
        let mut problem =
            ArrayProblem::from_analysis(affine, 0, &function.arrays[0], &config).expect("posed");
        problem.struct_of_arrays =
            posed(function, 0, affine, &file.parsed.constants.types, &config);
        let choice = choose(&problem).expect("solvable");
        assert_eq!(choice.excess_before, 3);
        let layout = choice
            .families
            .iter()
            .find(|f| f.strategy == Family::StructOfArrays)
            .expect("listed");
        assert_eq!(layout.excess_after(), Some(1));
        assert_eq!(choice.chosen().excess_after(), Some(1));
        assert_ne!(choice.chosen().strategy, Family::StructOfArrays);
        let picked =
            choose_kernel(std::slice::from_ref(&choice), 0, TIE_BREAK_LAMBDA).expect("feasible");
        assert_ne!(
            choice.families[picked.picks[0]].strategy,
            Family::StructOfArrays
        );
        assert_eq!(picked.excess, 1);
    }
}
