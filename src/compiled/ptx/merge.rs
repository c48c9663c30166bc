//! Which PTX accesses ptxas merged into one wider instruction. NVVM writes neighbouring
//! scalar accesses (`s[2t]`, `s[2t + 1]`) as separate `ld.shared.f32`; ptxas, which knows
//! where each shared variable lies, often makes them one `LDS.64` or `LDS.128`, and the
//! GPU costs that one instruction. The machine code says which: a run of contiguous
//! accesses from one base register in one basic block of the PTX is matched with the run
//! of the same bytes, from the same source lines, in the SASS, and split as the SASS
//! splits it.

use super::parse::{Function, Op, Operand, Space};
use crate::compiled::sass::SharedSite;
use std::collections::{BTreeMap, HashMap, HashSet};

/// How an access is recorded after ptxas's merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merge {
    /// The lowest address of a merged group: recorded with the group's bytes.
    Leader(u32),
    /// Another member: its bytes are in its leader's access.
    Follower,
}

struct PtxAccess {
    pc: usize,
    offset: i64,
    bytes: u32,
    line: (u32, u32),
}

/// The merges of `function`'s shared accesses that `sites` (its SASS) shows.
pub(crate) fn plan(
    function: &Function,
    files: &HashMap<u32, String>,
    sites: &[SharedSite],
) -> HashMap<usize, Merge> {
    let mut plan = HashMap::new();
    let sass_runs = sass_runs(sites);
    for run in ptx_runs(function) {
        let widths: Vec<u32> = run.iter().map(|a| a.bytes).collect();
        let total: u32 = widths.iter().sum();
        let store = is_store(function, run[0].pc);
        let lines: HashSet<(&str, u32)> = run
            .iter()
            .filter_map(|a| Some((files.get(&a.line.0)?.as_str(), a.line.1)))
            .collect();
        let matched = sass_runs.iter().find(|sass| {
            sass.store == store
                && sass.widths.iter().sum::<u32>() == total
                && sass.widths != widths
                && sass
                    .lines
                    .iter()
                    .all(|l| lines.contains(&(l.0.as_str(), l.1)))
        });
        let Some(sass) = matched else {
            continue;
        };
        if let Some(roles) = split(&run, &sass.widths) {
            plan.extend(roles);
        }
    }
    plan
}

/// `run` cut into consecutive groups of `widths` bytes, or `None` where a group boundary
/// falls inside an access.
fn split(run: &[PtxAccess], widths: &[u32]) -> Option<Vec<(usize, Merge)>> {
    let mut roles = Vec::new();
    let mut accesses = run.iter();
    for &width in widths {
        let first = accesses.next()?;
        let mut bytes = first.bytes;
        let mut members = Vec::new();
        while bytes < width {
            let next = accesses.next()?;
            bytes += next.bytes;
            members.push(next.pc);
        }
        if bytes != width {
            return None;
        }
        if !members.is_empty() {
            roles.push((first.pc, Merge::Leader(width)));
            roles.extend(members.into_iter().map(|pc| (pc, Merge::Follower)));
        }
    }
    Some(roles)
}

fn is_store(function: &Function, pc: usize) -> bool {
    matches!(function.body[pc].op, Op::Store { .. })
}

/// Runs of at least two contiguous shared accesses, by basic block, kind and base register,
/// in address order.
fn ptx_runs(function: &Function) -> Vec<Vec<PtxAccess>> {
    let targets: HashSet<usize> = function
        .body
        .iter()
        .filter(|i| i.op == Op::Branch)
        .filter_map(|i| match i.operands.first() {
            Some(Operand::Immediate(target)) => usize::try_from(*target).ok(),
            _ => None,
        })
        .collect();
    let mut groups: BTreeMap<(u32, bool, usize), Vec<PtxAccess>> = BTreeMap::new();
    let mut block = 0u32;
    for (pc, instruction) in function.body.iter().enumerate() {
        if targets.contains(&pc) {
            block += 1;
        }
        let (store, address, bytes) = match instruction.op {
            Op::Load {
                space: Space::Shared,
                bytes,
                count,
                ..
            } => (false, instruction.operands.get(1), bytes * count),
            Op::Store {
                space: Space::Shared,
                bytes,
                count,
            } => (true, instruction.operands.first(), bytes * count),
            Op::Branch => {
                block += 1;
                continue;
            }
            _ => continue,
        };
        if let Some(Operand::Address(base, offset)) = address {
            if let Operand::Register(register) = base.as_ref() {
                groups
                    .entry((block, store, *register))
                    .or_default()
                    .push(PtxAccess {
                        pc,
                        offset: *offset,
                        bytes,
                        line: (instruction.loc.file, instruction.loc.line),
                    });
            }
        }
    }
    groups
        .into_values()
        .flat_map(|mut accesses| {
            accesses.sort_by_key(|a| a.offset);
            contiguous(accesses, |a| (a.offset, a.bytes))
        })
        .filter(|run| run.len() > 1)
        .collect()
}

struct SassRun {
    store: bool,
    widths: Vec<u32>,
    lines: Vec<(String, u32)>,
}

fn sass_runs(sites: &[SharedSite]) -> Vec<SassRun> {
    let mut groups: BTreeMap<(u32, bool, &str), Vec<&SharedSite>> = BTreeMap::new();
    for site in sites {
        groups
            .entry((site.block, site.store, site.base.as_str()))
            .or_default()
            .push(site);
    }
    groups
        .into_values()
        .flat_map(|mut group| {
            group.sort_by_key(|s| s.offset);
            contiguous(group, |s| (s.offset, s.bytes))
        })
        .map(|run| SassRun {
            store: run[0].store,
            widths: run.iter().map(|s| s.bytes).collect(),
            lines: run.iter().map(|s| (s.file.clone(), s.line)).collect(),
        })
        .collect()
}

/// The maximal runs of `items` (in address order) where each ends where the next begins.
fn contiguous<T>(items: Vec<T>, span: impl Fn(&T) -> (i64, u32)) -> Vec<Vec<T>> {
    let mut runs: Vec<Vec<T>> = Vec::new();
    for item in items {
        let (offset, _) = span(&item);
        let continues = runs.last().and_then(|run| run.last()).is_some_and(|last| {
            let (start, bytes) = span(last);
            start.wrapping_add(i64::from(bytes)) == offset
        });
        match runs.last_mut() {
            Some(run) if continues => run.push(item),
            _ => runs.push(vec![item]),
        }
    }
    runs
}
