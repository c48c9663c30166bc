//! The compiled view's conflict figures: per kernel and per shared-memory instruction, as
//! the PTX evaluator ([`super::ptx`]) measured them on block 0.

use super::ptx::{Access, Gap, Run};
use std::fmt;

/// A kernel as the analysis resolved it.
pub struct Kernel<'a> {
    /// Its name as the analysis writes it, template arguments included (`tileSum<16>`).
    pub name: &'a str,
    pub block: [u32; 3],
    /// Integer parameter values, by position, where they are known.
    pub params: &'a [Option<u64>],
}

/// What the compiled view found in one file.
#[derive(Debug, Clone)]
pub struct CompiledFile {
    /// nvcc's release (`13.5`).
    pub nvcc: String,
    pub arch: String,
    pub kernels: Vec<CompiledKernel>,
}

/// One kernel's figures per block.
#[derive(Debug, Clone)]
pub struct CompiledKernel {
    /// The analysis's name.
    pub name: String,
    /// nvcc's symbol.
    pub symbol: String,
    /// Excess wavefronts of loads and of stores: Nsight Compute's
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum` for one block.
    pub load_excess: u64,
    pub store_excess: u64,
    /// Excess wavefronts of shared atomics and `cp.async` stores (not in the two above).
    pub other_excess: u64,
    pub instructions: Vec<CompiledInstruction>,
    pub gaps: Vec<CompiledGap>,
    pub executed: Executed,
}

/// What block 0 of the compiled kernel executed, per warp and summed over the block: what
/// the time model weighs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Executed {
    /// Warp-level instructions issued, of every kind.
    pub instructions: u64,
    /// Of them, shared-memory loads, stores and atomics (Nsight's
    /// `smsp__sass_inst_executed_op_shared_{ld,st}` and atomics).
    pub shared_instructions: u64,
    /// Of them, global and local memory instructions.
    pub global_instructions: u64,
    /// Shared-memory wavefronts, conflicts included (an access whose address depends on
    /// data at one wavefront).
    pub shared_wavefronts: u64,
}

impl Executed {
    /// Figures with no shared instruction counted: what the time model's tests need.
    #[cfg(test)]
    pub(crate) fn weighed(instructions: u64, shared_wavefronts: u64, global: u64) -> Executed {
        Executed {
            instructions,
            shared_instructions: 0,
            global_instructions: global,
            shared_wavefronts,
        }
    }

    /// The figures of two instances of one kernel, together.
    pub fn plus(&self, other: &Executed) -> Executed {
        Executed {
            instructions: self.instructions + other.instructions,
            shared_instructions: self.shared_instructions + other.shared_instructions,
            global_instructions: self.global_instructions + other.global_instructions,
            shared_wavefronts: self.shared_wavefronts + other.shared_wavefronts,
        }
    }
}

impl CompiledKernel {
    pub(crate) fn new(name: &str, symbol: &str, run: Run, input: Option<u32>) -> CompiledKernel {
        let mut kernel = CompiledKernel {
            name: name.to_string(),
            symbol: symbol.to_string(),
            load_excess: 0,
            store_excess: 0,
            other_excess: 0,
            instructions: Vec::new(),
            gaps: run.gaps.into_iter().map(CompiledGap).collect(),
            executed: Executed {
                instructions: run.issued.all,
                shared_instructions: run.issued.shared,
                global_instructions: run.issued.global,
                shared_wavefronts: 0,
            },
        };
        for figures in run.instructions {
            kernel.executed.shared_wavefronts += figures.wavefronts + figures.data_dependent;
            let excess = figures.excess();
            match figures.access {
                Access::Load => kernel.load_excess += excess,
                Access::Store => kernel.store_excess += excess,
                Access::Atomic | Access::AsyncCopy => kernel.other_excess += excess,
            }
            let instruction = CompiledInstruction {
                line: figures.loc.line,
                col: figures.loc.col,
                in_file: input.is_some_and(|file| file == figures.loc.file),
                operation: match figures.access {
                    Access::Load => "load",
                    Access::Store => "store",
                    Access::Atomic => "atomic",
                    Access::AsyncCopy => "async copy",
                },
                array: figures.variable.as_deref().map(variable_name),
                bytes: figures.bytes,
                executions: figures.executions,
                wavefronts: figures.wavefronts,
                ideal_wavefronts: figures.ideal_wavefronts,
                data_dependent: figures.data_dependent,
            };
            // One entry per source position, operation and width: an unrolled loop's
            // copies of one access are that access.
            match kernel
                .instructions
                .iter_mut()
                .find(|i| i.same_place(&instruction))
            {
                Some(kept) => kept.add(&instruction),
                None => kernel.instructions.push(instruction),
            }
        }
        kernel
    }

    /// Loads and stores: what Nsight counts as bank conflicts.
    pub fn excess(&self) -> u64 {
        self.load_excess + self.store_excess
    }

    /// nvcc's instructions for array `array` at source line `line` (in the checked file),
    /// summed: an access's compiled share, where it is the only access of the array on its
    /// line. `None` when nvcc's code has none there (its line information moved it, or the
    /// access is gone).
    pub fn share(&self, array: &str, line: u32) -> Option<CompiledShare> {
        let mut share: Option<CompiledShare> = None;
        for instruction in self
            .instructions
            .iter()
            .filter(|i| i.in_file && i.line == line && i.array.as_deref() == Some(array))
        {
            let kept = share.get_or_insert(CompiledShare::default());
            kept.bytes = kept.bytes.max(instruction.bytes);
            kept.executions += instruction.executions;
            kept.wavefronts += instruction.wavefronts;
            kept.ideal_wavefronts += instruction.ideal_wavefronts;
        }
        share
    }

    /// Whether block 0 ran to its end: its executed figures are the whole block's.
    pub fn ran_to_end(&self) -> bool {
        self.gaps
            .iter()
            .all(|g| !matches!(g.0, Gap::StoppedAfter(_) | Gap::TooManyThreads(_)))
    }

    /// Whether every shared access of the run was simulated: no address depended on data,
    /// no call went unfollowed, the run was not stopped. (Branches taken by assumption
    /// are taken alike before and after a rewrite.)
    pub fn counts_all(&self) -> bool {
        self.instructions.iter().all(|i| i.data_dependent == 0)
            && self
                .gaps
                .iter()
                .all(|g| matches!(g.0, Gap::AssumedBranches(_)))
    }
}

/// The shared-memory instructions of the compiled kernel at one source position, of one
/// operation and width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInstruction {
    /// The source position `.loc` gives it (inlined code: the callee's line).
    pub line: u32,
    pub col: u32,
    /// Whether the position is in the checked file (not in a header).
    pub in_file: bool,
    pub operation: &'static str,
    /// The shared array it touches, as the source names it (`tile`), where known.
    pub array: Option<String>,
    /// Bytes per lane: 8 and 16 for the accesses nvcc merged.
    pub bytes: u32,
    /// Warp-level executions in block 0 whose addresses were simulated.
    pub executions: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// Warp-level executions whose address depends on data.
    pub data_dependent: u64,
}

impl CompiledInstruction {
    pub fn excess(&self) -> u64 {
        self.wavefronts - self.ideal_wavefronts
    }

    fn same_place(&self, other: &CompiledInstruction) -> bool {
        (
            self.line,
            self.col,
            self.in_file,
            self.operation,
            self.bytes,
        ) == (
            other.line,
            other.col,
            other.in_file,
            other.operation,
            other.bytes,
        )
    }

    fn add(&mut self, other: &CompiledInstruction) {
        self.executions += other.executions;
        self.wavefronts += other.wavefronts;
        self.ideal_wavefronts += other.ideal_wavefronts;
        self.data_dependent += other.data_dependent;
    }
}

/// The compiled figures of one source access.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompiledShare {
    /// The widest access nvcc made of it, in bytes per lane.
    pub bytes: u32,
    pub executions: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
}

impl CompiledShare {
    pub fn excess(&self) -> u64 {
        self.wavefronts - self.ideal_wavefronts
    }
}

/// Why a kernel's compiled figures may be incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledGap(Gap);

impl fmt::Display for CompiledGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Gap::AssumedBranches(count) => write!(
                f,
                "{count} branches on values not known before the run were taken as the \
                 source model takes them (a loop's body once, a guard's body run)"
            ),
            Gap::Calls(name) => write!(
                f,
                "calls `{name}`, which nvcc did not inline: its accesses are not counted"
            ),
            Gap::StoppedAfter(steps) => write!(f, "stopped after {steps} instructions"),
            Gap::TooManyThreads(threads) => write!(
                f,
                "not run: a block of {threads} threads is more than CUDA allows (1024)"
            ),
        }
    }
}

/// The symbol among `symbols` that is the kernel the analysis names `name` (`tileSum<16>`,
/// `transpose`): by base name and template arguments, or by base name alone when only one
/// symbol has it.
pub(crate) fn instance_symbol<'s>(symbols: &[&'s str], name: &str) -> Option<&'s str> {
    let (base, arguments) = match name.find('<') {
        Some(open) => (&name[..open], Some(normalized(&name[open..]))),
        None => (name, None),
    };
    let candidates: Vec<&str> = symbols
        .iter()
        .copied()
        .filter(|symbol| super::sass::base_name(symbol) == base)
        .collect();
    if let Some(arguments) = &arguments {
        if let Some(found) = candidates
            .iter()
            .find(|symbol| template_arguments(symbol).is_some_and(|a| normalized(&a) == *arguments))
        {
            return Some(found);
        }
    }
    match candidates[..] {
        [only] => Some(only),
        _ => None,
    }
}

fn normalized(arguments: &str) -> String {
    arguments.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `<16, float>` from a mangled template instance whose arguments are integer literals or
/// builtin types; `None` for anything else.
fn template_arguments(symbol: &str) -> Option<String> {
    let rest = symbol.strip_prefix("_Z")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    let length: usize = rest[..digits].parse().ok()?;
    let mut rest = rest.get(digits + length..)?.strip_prefix('I')?;
    let mut arguments = Vec::new();
    // Each step consumes at least one character.
    while !rest.starts_with('E') {
        let (argument, after) = if let Some(literal) = rest.strip_prefix('L') {
            let type_code = literal.chars().next()?;
            let end = literal.find('E')?;
            let digits = &literal[1..end];
            let value = match digits.strip_prefix('n') {
                Some(negative) => format!("-{negative}"),
                None => digits.to_string(),
            };
            let value = match (type_code, value.as_str()) {
                ('b', "1") => "true".to_string(),
                ('b', "0") => "false".to_string(),
                _ => value,
            };
            (value, &literal[end + 1..])
        } else {
            let code = rest.chars().next()?;
            (builtin_type(code)?.to_string(), &rest[1..])
        };
        arguments.push(argument);
        rest = after;
    }
    Some(format!("<{}>", arguments.join(", ")))
}

fn builtin_type(code: char) -> Option<&'static str> {
    Some(match code {
        'f' => "float",
        'd' => "double",
        'i' => "int",
        'j' => "unsigned int",
        'c' => "char",
        'a' => "signed char",
        'h' => "unsigned char",
        's' => "short",
        't' => "unsigned short",
        'l' => "long",
        'm' => "unsigned long",
        'x' => "long long",
        'y' => "unsigned long long",
        'b' => "bool",
        _ => return None,
    })
}

/// A shared variable's source name from its PTX symbol: `tile` for a function's
/// `_ZZ9transposePfE4tile` (or `…E4tile_0`, a second one), the symbol itself otherwise.
fn variable_name(symbol: &str) -> String {
    if symbol.starts_with("_ZZ") {
        let trimmed = match symbol.rsplit_once('_') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
                head
            }
            _ => symbol,
        };
        // `E<length><name>` reaching the end, from the last `E` that starts one.
        for (at, _) in trimmed
            .match_indices('E')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let after = &trimmed[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let name = &after[digits..];
            if digits > 0 && after[..digits].parse::<usize>().ok() == Some(name.len()) {
                return name.to_string();
            }
        }
    }
    symbol.to_string()
}

/// nvcc's release from a PTX header (`// Cuda compilation tools, release 13.5, V13.5.37`).
pub(crate) fn nvcc_release(listing: &str) -> Option<String> {
    let line = listing
        .lines()
        .take(20)
        .find(|l| l.contains("Cuda compilation tools, release"))?;
    let release = line.split("release").nth(1)?.trim();
    Some(release.split(',').next()?.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_found_by_name_and_template_arguments() {
        let symbols = [
            "_Z7tileSumILi16EEvPf",
            "_Z7tileSumILi32EEvPf",
            "_Z9transposePfPKf",
            "_Z4castIfLb1EEvPT_",
        ];
        assert_eq!(instance_symbol(&symbols, "tileSum<32>"), Some(symbols[1]));
        assert_eq!(instance_symbol(&symbols, "tileSum"), None);
        assert_eq!(instance_symbol(&symbols, "transpose"), Some(symbols[2]));
        assert_eq!(
            instance_symbol(&symbols, "cast<float, true>"),
            Some(symbols[3])
        );
        assert_eq!(instance_symbol(&symbols, "missing"), None);
    }

    #[test]
    fn shared_variables_get_their_source_names() {
        assert_eq!(variable_name("_ZZ9transposePfE4tile"), "tile");
        assert_eq!(variable_name("_ZZ9transposePfE4tile_0"), "tile");
        assert_eq!(variable_name("_ZZ4stepvE11s_positions"), "s_positions");
        assert_eq!(variable_name("_ZZ1kvE3a1b"), "a1b");
        assert_eq!(variable_name("_ZZ1kvE5tileE"), "tileE");
        assert_eq!(variable_name("pool"), "pool");
    }

    #[test]
    fn the_release_is_read_from_the_header() {
        let header = "//\n// Cuda compilation tools, release 13.5, V13.5.37\n";
        assert_eq!(nvcc_release(header).as_deref(), Some("13.5"));
    }
}
