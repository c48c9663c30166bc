//! Runs one block of a PTX kernel, one interpreted thread per CUDA thread, and records the
//! address every shared-memory instruction gives in every lane.
//!
//! Values carry what is known of them ([`Kind`]): exact and the same in every lane, exact
//! per lane (from `%tid`), unknown but the same in every lane (a parameter not given, a
//! global load from a uniform address), such a uniform unknown added to an exact per-lane
//! value, or unknown. A uniform unknown added to an address shifts every lane's bank alike,
//! so the address is simulated with it taken as 0, as the source model takes unknown
//! offsets; an address that depends on data is not simulated. A branch on a value that is
//! not exact is not taken the first time a thread reaches it and taken after, so a loop of
//! unknown trip count runs its body once and a guard of unknown outcome lets its body run:
//! the source model's assumptions, applied to the compiled code.

use super::merge::Merge;
use super::parse::{
    Arith, Combine, Compare, Function, Half, Loc, Module, Op, Operand, Space, Special, Type, Unary,
};
use crate::bank::{self, BankConfig};
use std::collections::{HashMap, HashSet};

/// What is known of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Exact, and the same in every lane.
    Constant,
    /// Exact in this lane; may differ between lanes.
    Lane,
    /// Unknown, the same in every lane (its stand-in value is 0).
    Uniform,
    /// An exact per-lane value plus a uniform unknown (the value holds the exact part).
    Shifted,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Value {
    bits: u64,
    kind: Kind,
}

impl Value {
    const UNKNOWN: Value = Value {
        bits: 0,
        kind: Kind::Unknown,
    };
    const UNIFORM: Value = Value {
        bits: 0,
        kind: Kind::Uniform,
    };

    fn constant(bits: u64) -> Value {
        Value {
            bits,
            kind: Kind::Constant,
        }
    }

    fn exact(&self) -> bool {
        matches!(self.kind, Kind::Constant | Kind::Lane)
    }
}

/// The kind of `a op b` for an operation that is not additive.
fn join(a: Kind, b: Kind) -> Kind {
    use Kind::*;
    match (a, b) {
        (Constant, Constant) => Constant,
        (Constant | Lane, Constant | Lane) => Lane,
        (Constant | Uniform, Constant | Uniform) => Uniform,
        _ => Unknown,
    }
}

/// The kind of `a + b` or `a - b`: a uniform unknown stays an additive shift.
fn join_additive(a: Kind, b: Kind) -> Kind {
    use Kind::*;
    match (a, b) {
        (Unknown, _) | (_, Unknown) => Unknown,
        (Uniform, Lane) | (Lane, Uniform) | (Shifted, _) | (_, Shifted) => Shifted,
        _ => join(a, b),
    }
}

/// The kind of `a * b` or `a << b`: scaling by a constant keeps a shift a shift.
fn join_scaled(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (kind, Kind::Constant) | (Kind::Constant, kind) => kind,
        _ => join(a, b),
    }
}

/// One kernel run: where it comes from and what it runs with.
pub(crate) struct Launch<'a> {
    pub block: [u32; 3],
    /// The value of each parameter, by position; `None` (or missing) is a uniform unknown.
    pub params: &'a [Option<u64>],
    pub bank: BankConfig,
    /// Whether a thread's second load of an address it loaded since its last shared store
    /// or barrier reuses the first (not for `.volatile` loads): what ptxas does when it
    /// unrolls a loop NVVM left rolled and keeps the values in registers
    /// (`convRows`: 136 loads per thread in the PTX, 65 in the machine code).
    pub reuse_loads: bool,
}

/// Which shared-memory operation an instruction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Access {
    Load,
    Store,
    Atomic,
    /// `cp.async` into shared memory (`LDGSTS`).
    AsyncCopy,
}

/// The figures of one shared-memory instruction over the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstructionFigures {
    pub loc: Loc,
    pub access: Access,
    /// The shared variable it touches (its PTX symbol), where an address was known.
    pub variable: Option<String>,
    /// Bytes per lane.
    pub bytes: u32,
    /// Warp-level executions whose addresses were simulated.
    pub executions: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// Warp-level executions whose address depends on data.
    pub data_dependent: u64,
    /// Executions whose address includes a uniform unknown, simulated with it as 0.
    pub shifted: u64,
}

impl InstructionFigures {
    pub fn excess(&self) -> u64 {
        self.wavefronts - self.ideal_wavefronts
    }
}

/// Why a run's figures may be incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gap {
    /// Branches on values the view does not know, taken as the source model takes them.
    AssumedBranches(u64),
    /// A call to a function that was not inlined: its accesses are not counted.
    Calls(String),
    /// The run stopped after this many instructions.
    StoppedAfter(u64),
    /// The block has more threads than a CUDA block may: not run.
    TooManyThreads(u64),
}

#[derive(Debug, Default)]
pub(crate) struct Run {
    /// By instruction, in program order; only instructions that ran.
    pub instructions: Vec<InstructionFigures>,
    pub gaps: Vec<Gap>,
    pub issued: Issued,
}

/// Warp-level instructions the block issued: for each warp and instruction, the most
/// times one lane ran it in a barrier interval, so both sides of a divergent branch count.
/// Accesses ptxas merged into a wider one, and loads it reuses, issue once.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Issued {
    pub all: u64,
    pub shared: u64,
    pub global: u64,
}

/// Instructions one block may run before the evaluation stops (about a second).
const STEP_LIMIT: u64 = 50_000_000;
/// Threads in a CUDA block, at most.
const MAX_THREADS: u64 = 1024;
/// Warp requests one barrier interval may hold before the evaluation stops.
const REQUEST_LIMIT: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    AtBarrier,
    Done,
}

struct Thread {
    /// The linear id `x + X·(y + Y·z)`.
    id: u32,
    registers: Vec<Value>,
    pc: usize,
    state: State,
    /// Barriers passed.
    interval: u32,
    /// How often each instruction ran in this interval.
    executed: HashMap<usize, u32>,
    /// Branches on inexact values already reached once.
    assumed: HashSet<usize>,
    /// Shared addresses and widths loaded since the last shared store or barrier.
    loaded: HashSet<(u64, u32)>,
}

/// The lanes of one warp executing one instruction for the k-th time in an interval.
struct Request {
    access: Access,
    /// The variable's window, from the first lane with a known address.
    window: Option<u64>,
    bytes: u32,
    lanes: [Option<i64>; 32],
    data_dependent: bool,
    shifted: bool,
}

struct Block<'a> {
    function: &'a Function,
    merges: &'a HashMap<usize, Merge>,
    launch: &'a Launch<'a>,
    /// Shared variable name → base address (each in its own 16 MiB window).
    bases: HashMap<&'a str, u64>,
    /// The variables by window, from window 1.
    names: Vec<&'a str>,
    windows: u64,
    memory: HashMap<u64, u8>,
    requests: HashMap<(u32, u32, usize, u32), Request>,
    figures: HashMap<usize, InstructionFigures>,
    assumed_branches: u64,
    calls: Vec<String>,
    steps: u64,
    issue: IssueCounts,
}

/// What [`Issued`] is counted with: one lane's counts, folded into its warp's when the lane
/// reaches a barrier, and the warps' added to the totals when the interval ends.
struct IssueCounts {
    body: usize,
    lane: Vec<u32>,
    lane_touched: Vec<usize>,
    warp: Vec<u32>,
    warp_touched: Vec<usize>,
    class: Vec<IssueClass>,
    totals: Issued,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IssueClass {
    Shared,
    Global,
    Other,
    /// Issues with the access ptxas merged it into.
    Merged,
}

impl IssueCounts {
    fn new(function: &Function, merges: &HashMap<usize, Merge>, warps: usize) -> IssueCounts {
        let class = function
            .body
            .iter()
            .enumerate()
            .map(
                |(pc, instruction)| match (merges.get(&pc), instruction.op) {
                    (Some(Merge::Follower), _) => IssueClass::Merged,
                    (
                        _,
                        Op::Load { space, .. } | Op::Store { space, .. } | Op::Atomic { space, .. },
                    ) => match space {
                        Space::Shared => IssueClass::Shared,
                        Space::Global | Space::Generic => IssueClass::Global,
                        // A local array ptxas keeps in registers once it unrolls the loops
                        // that index it: it costs what other instructions do.
                        Space::Local | Space::Param | Space::Const => IssueClass::Other,
                    },
                    (_, Op::Matrix { .. } | Op::CopyAsync) => IssueClass::Shared,
                    _ => IssueClass::Other,
                },
            )
            .collect();
        IssueCounts {
            body: function.body.len(),
            lane: vec![0; function.body.len()],
            lane_touched: Vec::new(),
            warp: vec![0; function.body.len() * warps],
            warp_touched: Vec::new(),
            class,
            totals: Issued::default(),
        }
    }

    fn count(&mut self, pc: usize) {
        if self.class[pc] == IssueClass::Merged {
            return;
        }
        if self.lane[pc] == 0 {
            self.lane_touched.push(pc);
        }
        self.lane[pc] += 1;
    }

    /// A load the thread reuses from a register: not issued.
    fn uncount(&mut self, pc: usize) {
        self.lane[pc] = self.lane[pc].saturating_sub(1);
    }

    fn end_lane(&mut self, warp: usize) {
        for pc in self.lane_touched.drain(..) {
            let slot = warp * self.body + pc;
            if self.warp[slot] == 0 {
                self.warp_touched.push(slot);
            }
            self.warp[slot] = self.warp[slot].max(self.lane[pc]);
            self.lane[pc] = 0;
        }
    }

    fn end_interval(&mut self) {
        for slot in self.warp_touched.drain(..) {
            let count = u64::from(self.warp[slot]);
            self.warp[slot] = 0;
            self.totals.all += count;
            match self.class[slot % self.body] {
                IssueClass::Shared => self.totals.shared += count,
                IssueClass::Global => self.totals.global += count,
                IssueClass::Other | IssueClass::Merged => {}
            }
        }
    }
}

const WINDOW_BITS: u32 = 24;

/// Runs block 0 of `function` (a kernel of `module`).
/// `merges` names the accesses ptxas merged into wider instructions.
pub(crate) fn run(
    module: &Module,
    function: &Function,
    launch: &Launch,
    merges: &HashMap<usize, Merge>,
) -> Run {
    let mut bases = HashMap::new();
    for (i, (name, _)) in function.shared.iter().chain(&module.shared).enumerate() {
        bases.insert(name.as_str(), (i as u64 + 1) << WINDOW_BITS);
    }
    let windows = bases.len() as u64;
    let names: Vec<&str> = function
        .shared
        .iter()
        .chain(&module.shared)
        .map(|(name, _)| name.as_str())
        .collect();
    let [x, y, z] = launch.block;
    let count = u64::from(x.max(1)) * u64::from(y.max(1)) * u64::from(z.max(1));
    if count > MAX_THREADS {
        return Run {
            instructions: Vec::new(),
            gaps: vec![Gap::TooManyThreads(count)],
            issued: Issued::default(),
        };
    }
    let mut block = Block {
        function,
        merges,
        launch,
        bases,
        names,
        windows,
        memory: HashMap::new(),
        requests: HashMap::new(),
        figures: HashMap::new(),
        assumed_branches: 0,
        calls: Vec::new(),
        steps: 0,
        issue: IssueCounts::new(function, merges, count.div_ceil(32) as usize),
    };
    let mut threads: Vec<Thread> = (0..count as u32)
        .map(|id| Thread {
            id,
            registers: vec![Value::UNKNOWN; function.registers],
            pc: 0,
            state: State::Running,
            interval: 0,
            executed: HashMap::new(),
            assumed: HashSet::new(),
            loaded: HashSet::new(),
        })
        .collect();
    let mut gaps = Vec::new();
    'intervals: loop {
        for thread in threads.iter_mut() {
            if thread.state == State::Running {
                let stepped = block.step_until_barrier(thread);
                block.issue.end_lane((thread.id / 32) as usize);
                if let Err(gap) = stepped {
                    gaps.push(gap);
                    break 'intervals;
                }
            }
        }
        block.cost_requests();
        block.issue.end_interval();
        let waiting = threads
            .iter()
            .filter(|t| t.state == State::AtBarrier)
            .count();
        if waiting == 0 {
            break;
        }
        for thread in threads.iter_mut().filter(|t| t.state == State::AtBarrier) {
            thread.state = State::Running;
            thread.interval += 1;
            thread.executed.clear();
            thread.loaded.clear();
        }
    }
    block.cost_requests();
    block.issue.end_interval();
    if block.assumed_branches > 0 {
        gaps.insert(0, Gap::AssumedBranches(block.assumed_branches));
    }
    block.calls.sort();
    block.calls.dedup();
    gaps.extend(block.calls.drain(..).map(Gap::Calls));
    let mut instructions: Vec<(usize, InstructionFigures)> = block.figures.into_iter().collect();
    instructions.sort_by_key(|(pc, _)| *pc);
    Run {
        instructions: instructions.into_iter().map(|(_, f)| f).collect(),
        gaps,
        issued: block.issue.totals,
    }
}

impl<'a> Block<'a> {
    fn step_until_barrier(&mut self, thread: &mut Thread) -> Result<(), Gap> {
        let body = &self.function.body;
        while thread.state == State::Running {
            let Some(instruction) = body.get(thread.pc) else {
                thread.state = State::Done;
                break;
            };
            self.steps += 1;
            if self.steps > STEP_LIMIT {
                return Err(Gap::StoppedAfter(STEP_LIMIT));
            }
            if self.requests.len() > REQUEST_LIMIT {
                return Err(Gap::StoppedAfter(self.steps));
            }
            let pc = thread.pc;
            thread.pc += 1;
            self.issue.count(pc);
            let guard = instruction.guard.map(|(register, negated)| {
                let value = thread.registers[register];
                (value.exact(), (value.bits & 1 == 1) != negated)
            });
            if instruction.op == Op::Branch {
                let taken = match guard {
                    None | Some((true, true)) => true,
                    Some((true, false)) => false,
                    Some((false, _)) => {
                        self.assumed_branches += 1;
                        !thread.assumed.insert(pc)
                    }
                };
                if taken {
                    if let Some(Operand::Immediate(target)) = instruction.operands.first() {
                        thread.pc = usize::try_from(*target).unwrap_or(usize::MAX);
                    }
                }
                continue;
            }
            if let Some((true, false)) = guard {
                continue;
            }
            self.execute(thread, pc);
        }
        Ok(())
    }

    fn read(&self, thread: &Thread, operand: &Operand) -> Value {
        match operand {
            Operand::Register(r) => thread.registers[*r],
            Operand::NotRegister(r) => {
                let value = thread.registers[*r];
                Value {
                    bits: (value.bits & 1) ^ 1,
                    kind: value.kind,
                }
            }
            Operand::Immediate(bits) => Value::constant(*bits),
            Operand::Special(special) => {
                let [x, y, z] = self.launch.block;
                let shape = [x.max(1), y.max(1), z.max(1)];
                let linear = thread.id;
                let tid = [
                    linear % shape[0],
                    linear / shape[0] % shape[1],
                    linear / (shape[0] * shape[1]),
                ];
                match special {
                    Special::Tid(d) => Value {
                        bits: u64::from(tid[*d]),
                        kind: Kind::Lane,
                    },
                    Special::Ntid(d) => Value::constant(u64::from(shape[*d])),
                    Special::Ctaid(_) => Value::constant(0),
                    Special::Nctaid(_) => Value::UNIFORM,
                    Special::LaneId => Value {
                        bits: u64::from(linear % 32),
                        kind: Kind::Lane,
                    },
                    Special::Other => Value::UNKNOWN,
                }
            }
            Operand::Symbol(name) => match self.bases.get(name.as_str()) {
                Some(base) => Value::constant(*base),
                None if name.starts_with("__local_depot") => Value::UNKNOWN,
                None => Value::UNIFORM,
            },
            Operand::Address(..) | Operand::Vector(_) | Operand::Sink => Value::UNKNOWN,
        }
    }

    fn write(thread: &mut Thread, operand: &Operand, value: Value, ty: Type) {
        if let Operand::Register(r) = operand {
            thread.registers[*r] = Value {
                bits: truncate(value.bits, ty.bits),
                kind: value.kind,
            };
        }
    }

    fn execute(&mut self, thread: &mut Thread, pc: usize) {
        let instruction = &self.function.body[pc];
        let operands = &instruction.operands;
        let operand = |i: usize| operands.get(i).unwrap_or(&Operand::Sink);
        match instruction.op {
            Op::Unary(unary, ty) => {
                let a = self.read(thread, operand(1));
                let bits = unary_bits(unary, ty, a.bits);
                let kind = match unary {
                    Unary::Mov => a.kind,
                    Unary::Neg => join_scaled(a.kind, Kind::Constant),
                    _ => join(a.kind, Kind::Constant),
                };
                Self::write(thread, operand(0), Value { bits, kind }, ty);
            }
            Op::Arith(arith, ty) => {
                let a = self.read(thread, operand(1));
                let b = self.read(thread, operand(2));
                let value = match arith {
                    Arith::Mad(half) => {
                        let c = self.read(thread, operand(3));
                        let product = arith_value(Arith::Mul(half), ty, a, b);
                        let wide = if half == Half::Wide {
                            Type {
                                bits: ty.bits * 2,
                                ..ty
                            }
                        } else {
                            ty
                        };
                        arith_value(Arith::Add, wide, product, c)
                    }
                    _ => arith_value(arith, ty, a, b),
                };
                let ty = match arith {
                    Arith::Mul(Half::Wide) | Arith::Mad(Half::Wide) => Type {
                        bits: ty.bits * 2,
                        ..ty
                    },
                    _ => ty,
                };
                Self::write(thread, operand(0), value, ty);
            }
            Op::Select(ty) => {
                let a = self.read(thread, operand(1));
                let b = self.read(thread, operand(2));
                let p = self.read(thread, operand(3));
                let chosen = if p.bits & 1 == 1 { a } else { b };
                let kind = if a == b {
                    a.kind
                } else {
                    join(p.kind, join(a.kind, b.kind))
                };
                Self::write(
                    thread,
                    operand(0),
                    Value {
                        bits: chosen.bits,
                        kind,
                    },
                    ty,
                );
            }
            Op::SetPredicate(compare, combine, ty) => {
                let inputs = 2 + usize::from(combine.is_some());
                let outputs = operands.len().saturating_sub(inputs);
                let a = self.read(thread, operand(outputs));
                let b = self.read(thread, operand(outputs + 1));
                let mut result = compare_bits(compare, ty, a.bits, b.bits);
                let mut kind = join(a.kind, b.kind);
                if let Some(combine) = combine {
                    let c = self.read(thread, operand(outputs + 2));
                    let c_bit = c.bits & 1 == 1;
                    result = match combine {
                        Combine::And => result && c_bit,
                        Combine::Or => result || c_bit,
                        Combine::Xor => result != c_bit,
                    };
                    kind = join(kind, c.kind);
                }
                let value = |bit: bool| Value {
                    bits: u64::from(bit),
                    kind,
                };
                Self::write(thread, operand(0), value(result), Type::PREDICATE);
                if outputs == 2 {
                    Self::write(thread, operand(1), value(!result), Type::PREDICATE);
                }
            }
            Op::Convert(to, from) => {
                let a = self.read(thread, operand(1));
                let bits = extend(a.bits, from);
                let kind = match a.kind {
                    Kind::Shifted if to.bits >= from.bits => Kind::Shifted,
                    Kind::Shifted => Kind::Unknown,
                    kind => kind,
                };
                Self::write(thread, operand(0), Value { bits, kind }, to);
            }
            Op::BitExtract(ty) => {
                let a = self.read(thread, operand(1));
                let start = self.read(thread, operand(2));
                let length = self.read(thread, operand(3));
                let (s, l) = ((start.bits & 0xff) as u32, (length.bits & 0xff) as u32);
                let field = if l == 0 {
                    0
                } else {
                    let shifted = if s >= 64 { 0 } else { a.bits >> s };
                    let field = truncate(shifted, l.min(ty.bits));
                    if ty.signed && l > 0 && l < 64 && (field >> (l - 1)) & 1 == 1 {
                        field | (u64::MAX << l)
                    } else {
                        field
                    }
                };
                let kind = join(a.kind, join(start.kind, length.kind));
                Self::write(thread, operand(0), Value { bits: field, kind }, ty);
            }
            Op::BitInsert(ty) => {
                let a = self.read(thread, operand(1));
                let b = self.read(thread, operand(2));
                let start = self.read(thread, operand(3));
                let length = self.read(thread, operand(4));
                let (s, l) = ((start.bits & 0xff) as u32, (length.bits & 0xff) as u32);
                let width = ty.bits.min(64);
                let bits = if l == 0 || s >= width {
                    b.bits
                } else {
                    let l = l.min(width - s);
                    let mask = truncate(u64::MAX, l) << s;
                    (b.bits & !mask) | ((a.bits << s) & mask)
                };
                let kind = join(join(a.kind, b.kind), join(start.kind, length.kind));
                Self::write(thread, operand(0), Value { bits, kind }, ty);
            }
            Op::Permute => {
                let a = self.read(thread, operand(1));
                let b = self.read(thread, operand(2));
                let selector = self.read(thread, operand(3));
                let bytes = (b.bits & 0xffff_ffff) << 32 | (a.bits & 0xffff_ffff);
                let mut bits = 0u64;
                for i in 0..4 {
                    let choice = (selector.bits >> (4 * i)) & 0xf;
                    let mut byte = (bytes >> (8 * (choice & 7))) & 0xff;
                    if choice & 8 != 0 {
                        // Sign replication: the chosen byte's top bit, in every bit.
                        byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                    }
                    bits |= byte << (8 * i);
                }
                let kind = join(join(a.kind, b.kind), selector.kind);
                Self::write(thread, operand(0), Value { bits, kind }, TYPE_B32);
            }
            Op::Lop3 => {
                let a = self.read(thread, operand(1));
                let b = self.read(thread, operand(2));
                let c = self.read(thread, operand(3));
                let lut = self.read(thread, operand(4));
                let mut bits = 0u64;
                for bit in 0..32 {
                    let index = (((a.bits >> bit) & 1) << 2)
                        | (((b.bits >> bit) & 1) << 1)
                        | ((c.bits >> bit) & 1);
                    bits |= ((lut.bits >> index) & 1) << bit;
                }
                let kind = join(join(a.kind, b.kind), join(c.kind, lut.kind));
                Self::write(thread, operand(0), Value { bits, kind }, TYPE_B32);
            }
            Op::FunnelShift(left, clamp) => {
                let lo = self.read(thread, operand(1));
                let hi = self.read(thread, operand(2));
                let n = self.read(thread, operand(3));
                let amount = if clamp { n.bits.min(32) } else { n.bits & 31 };
                let joined = (hi.bits & 0xffff_ffff) << 32 | (lo.bits & 0xffff_ffff);
                let bits = if left {
                    (joined << amount) >> 32
                } else {
                    joined >> amount
                };
                let kind = join(join(lo.kind, hi.kind), n.kind);
                Self::write(thread, operand(0), Value { bits, kind }, TYPE_B32);
            }
            Op::Load {
                space,
                bytes,
                count,
                ordered,
            } => {
                let (address, offset) = self.address(thread, operand(1));
                let reused = self.launch.reuse_loads
                    && !ordered
                    && address.exact()
                    && self.is_shared_access(space, address, offset)
                    && !thread
                        .loaded
                        .insert((address.bits.wrapping_add(offset), bytes * count));
                let shared = if reused {
                    self.issue.uncount(pc);
                    true
                } else {
                    self.record_merged(
                        thread,
                        pc,
                        space,
                        address,
                        offset,
                        Access::Load,
                        bytes * count,
                    )
                };
                let elements: Vec<&Operand> = match operand(0) {
                    Operand::Vector(items) => items.iter().collect(),
                    single => vec![single],
                };
                let ty = Type {
                    bits: bytes * 8,
                    signed: false,
                    float: false,
                };
                for (i, element) in elements.into_iter().enumerate() {
                    let value = if space == Space::Param {
                        self.parameter(operand(1))
                    } else if shared {
                        self.load_shared(
                            address,
                            offset.wrapping_add(i as u64 * u64::from(bytes)),
                            bytes,
                        )
                    } else {
                        match address.kind {
                            Kind::Constant | Kind::Uniform if space != Space::Local => {
                                Value::UNIFORM
                            }
                            _ => Value::UNKNOWN,
                        }
                    };
                    Self::write(thread, element, value, ty);
                }
            }
            Op::Store {
                space,
                bytes,
                count,
            } => {
                let (address, offset) = self.address(thread, operand(0));
                let shared = self.record_merged(
                    thread,
                    pc,
                    space,
                    address,
                    offset,
                    Access::Store,
                    bytes * count,
                );
                if shared {
                    thread.loaded.clear();
                }
                if shared {
                    let elements: Vec<&Operand> = match operand(1) {
                        Operand::Vector(items) => items.iter().collect(),
                        single => vec![single],
                    };
                    for (i, element) in elements.into_iter().enumerate() {
                        let value = self.read(thread, element);
                        self.store_shared(
                            address,
                            offset.wrapping_add(i as u64 * u64::from(bytes)),
                            bytes,
                            value,
                        );
                    }
                }
            }
            Op::Atomic {
                space,
                bytes,
                returns,
            } => {
                let at = usize::from(returns);
                let (address, offset) = self.address(thread, operand(at));
                let shared = self.record(thread, pc, space, address, offset, Access::Atomic, bytes);
                if shared {
                    self.store_shared(address, offset, bytes, Value::UNKNOWN);
                    thread.loaded.clear();
                }
                if returns {
                    Self::write(thread, operand(0), Value::UNKNOWN, TYPE_B64);
                }
            }
            Op::Matrix { store, matrices } => {
                let at = usize::from(!store);
                let (address, offset) = self.address(thread, operand(at));
                let lane = thread.id % 32;
                if store {
                    thread.loaded.clear();
                }
                if lane < 8 * matrices {
                    let access = if store { Access::Store } else { Access::Load };
                    self.record(thread, pc, Space::Shared, address, offset, access, 16);
                } else {
                    Self::count_execution(thread, pc);
                }
                if !store {
                    if let Operand::Vector(items) = operand(0) {
                        for item in items {
                            Self::write(thread, item, Value::UNKNOWN, TYPE_B32);
                        }
                    }
                }
            }
            Op::CopyAsync => {
                let (address, offset) = self.address(thread, operand(0));
                let bytes = match operand(2) {
                    Operand::Immediate(bytes) => *bytes as u32,
                    _ => 16,
                };
                if self.record(
                    thread,
                    pc,
                    Space::Shared,
                    address,
                    offset,
                    Access::AsyncCopy,
                    bytes,
                ) {
                    self.store_shared(address, offset, bytes, Value::UNKNOWN);
                    thread.loaded.clear();
                }
            }
            Op::Barrier => thread.state = State::AtBarrier,
            Op::Exit => thread.state = State::Done,
            Op::Call => {
                let callee = operands
                    .iter()
                    .find_map(|o| match o {
                        Operand::Symbol(name) if !name.starts_with('(') => Some(name.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                if !self.calls.contains(&callee) {
                    self.calls.push(callee);
                }
            }
            Op::Branch | Op::Nothing => {}
            Op::Opaque => {
                for destination in operands.iter().take(1) {
                    match destination {
                        Operand::Vector(items) => {
                            for item in items {
                                Self::write(thread, item, Value::UNKNOWN, TYPE_B64);
                            }
                        }
                        other => Self::write(thread, other, Value::UNKNOWN, TYPE_B64),
                    }
                }
            }
        }
    }

    /// The base value and constant offset of an address operand.
    fn address(&self, thread: &Thread, operand: &Operand) -> (Value, u64) {
        match operand {
            Operand::Address(base, offset) => (self.read(thread, base), *offset as u64),
            other => (self.read(thread, other), 0),
        }
    }

    fn parameter(&self, operand: &Operand) -> Value {
        let Operand::Address(base, offset) = operand else {
            return Value::UNKNOWN;
        };
        let Operand::Symbol(name) = base.as_ref() else {
            return Value::UNKNOWN;
        };
        let Some(index) = self.function.params.iter().position(|(p, _)| p == name) else {
            // A call's return value or argument.
            return Value::UNKNOWN;
        };
        match self.launch.params.get(index).copied().flatten() {
            Some(bits) if *offset == 0 => Value::constant(bits),
            _ => Value::UNIFORM,
        }
    }

    /// Whether an address lies in a shared variable.
    fn is_shared(&self, bits: u64) -> bool {
        let window = bits >> WINDOW_BITS;
        window >= 1 && window <= self.windows
    }

    fn count_execution(thread: &mut Thread, pc: usize) -> (u32, u32, usize, u32) {
        let k = thread.executed.entry(pc).or_insert(0);
        *k += 1;
        (thread.id / 32, thread.interval, pc, *k)
    }

    /// [`Self::record`] as ptxas merged the access: a leader with its group's bytes, a
    /// follower not at all.
    #[allow(clippy::too_many_arguments)]
    fn record_merged(
        &mut self,
        thread: &mut Thread,
        pc: usize,
        space: Space,
        base: Value,
        offset: u64,
        access: Access,
        bytes: u32,
    ) -> bool {
        match self.merges.get(&pc) {
            Some(Merge::Follower) => self.is_shared_access(space, base, offset),
            Some(Merge::Leader(group)) => {
                self.record(thread, pc, space, base, offset, access, *group)
            }
            None => self.record(thread, pc, space, base, offset, access, bytes),
        }
    }

    fn is_shared_access(&self, space: Space, base: Value, offset: u64) -> bool {
        match space {
            Space::Shared => true,
            Space::Generic => {
                base.kind != Kind::Unknown && self.is_shared(base.bits.wrapping_add(offset))
            }
            _ => false,
        }
    }

    /// Records a shared access of `bytes` per lane; false when the access is not to shared
    /// memory.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        thread: &mut Thread,
        pc: usize,
        space: Space,
        base: Value,
        offset: u64,
        access: Access,
        bytes: u32,
    ) -> bool {
        if !self.is_shared_access(space, base, offset) {
            return false;
        }
        let address = base.bits.wrapping_add(offset);
        let key = Self::count_execution(thread, pc);
        let request = self.requests.entry(key).or_insert(Request {
            access,
            window: None,
            bytes,
            lanes: [None; 32],
            data_dependent: false,
            shifted: false,
        });
        match base.kind {
            Kind::Unknown | Kind::Uniform => request.data_dependent = true,
            kind => {
                request.shifted |= kind == Kind::Shifted;
                request.window.get_or_insert(address >> WINDOW_BITS);
                let element = (address / u64::from(bytes.max(1))) as i64;
                request.lanes[(thread.id % 32) as usize] = Some(element);
            }
        }
        true
    }

    fn load_shared(&self, base: Value, offset: u64, bytes: u32) -> Value {
        let address = base.bits.wrapping_add(offset);
        if base.exact() {
            let mut bits = 0u64;
            let mut known = true;
            for i in 0..u64::from(bytes.min(8)) {
                match self.memory.get(&address.wrapping_add(i)) {
                    Some(byte) => bits |= u64::from(*byte) << (8 * i),
                    None => known = false,
                }
            }
            if known {
                return Value {
                    bits,
                    kind: Kind::Lane,
                };
            }
        }
        match base.kind {
            Kind::Constant | Kind::Uniform => Value::UNIFORM,
            _ => Value::UNKNOWN,
        }
    }

    fn store_shared(&mut self, base: Value, offset: u64, bytes: u32, value: Value) {
        if !base.exact() {
            return;
        }
        let address = base.bits.wrapping_add(offset);
        for i in 0..u64::from(bytes) {
            if value.exact() && i < 8 {
                self.memory
                    .insert(address.wrapping_add(i), (value.bits >> (8 * i)) as u8);
            } else {
                self.memory.remove(&address.wrapping_add(i));
            }
        }
    }

    /// Costs every request recorded so far: each barrier interval's requests are complete
    /// when every thread has reached the barrier that ends it.
    fn cost_requests(&mut self) {
        for ((_, _, pc, _), request) in self.requests.drain() {
            let loc = self.function.body[pc].loc;
            let variable = request.window.and_then(|window| {
                let name = self
                    .names
                    .get(usize::try_from(window).ok()?.checked_sub(1)?)?;
                Some(name.to_string())
            });
            let figures = self.figures.entry(pc).or_insert(InstructionFigures {
                loc,
                access: request.access,
                variable: None,
                bytes: request.bytes,
                executions: 0,
                wavefronts: 0,
                ideal_wavefronts: 0,
                data_dependent: 0,
                shifted: 0,
            });
            if figures.variable.is_none() {
                figures.variable = variable;
            }
            if request.data_dependent {
                figures.data_dependent += 1;
                continue;
            }
            let cost = bank::simulate(
                &self.launch.bank,
                &bank::Request {
                    elem_bytes: request.bytes,
                    lanes: &request.lanes,
                },
            );
            figures.executions += 1;
            figures.shifted += u64::from(request.shifted);
            figures.wavefronts += u64::from(cost.wavefronts);
            figures.ideal_wavefronts += u64::from(cost.ideal_wavefronts);
        }
    }
}

const TYPE_B32: Type = Type {
    bits: 32,
    signed: false,
    float: false,
};
const TYPE_B64: Type = Type {
    bits: 64,
    signed: false,
    float: false,
};

fn truncate(bits: u64, width: u32) -> u64 {
    if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    }
}

/// `bits` of type `ty`, extended to 64 bits by its signedness.
fn extend(bits: u64, ty: Type) -> u64 {
    let width = ty.bits.max(1);
    if width >= 64 {
        return bits;
    }
    let bits = truncate(bits, width);
    if ty.signed && (bits >> (width - 1)) & 1 == 1 {
        bits | (u64::MAX << width)
    } else {
        bits
    }
}

fn unary_bits(unary: Unary, ty: Type, a: u64) -> u64 {
    let a = truncate(a, ty.bits);
    match unary {
        Unary::Mov => a,
        Unary::Not => !a,
        Unary::LogicalNot => u64::from(a == 0),
        Unary::Neg => a.wrapping_neg(),
        Unary::Abs => (extend(a, ty) as i64).unsigned_abs(),
        Unary::Popc => u64::from(a.count_ones()),
        Unary::Clz => u64::from(a.leading_zeros() - (64 - ty.bits.min(64))),
        Unary::Brev => a.reverse_bits() >> (64 - ty.bits.min(64)),
    }
}

fn arith_value(arith: Arith, ty: Type, a: Value, b: Value) -> Value {
    let (x, y) = (extend(a.bits, ty), extend(b.bits, ty));
    let width = ty.bits.min(64);
    let shift = |amount: u64| amount.min(u64::from(width));
    let kind = match arith {
        Arith::Add | Arith::Sub => join_additive(a.kind, b.kind),
        Arith::Mul(Half::Lo | Half::Wide) | Arith::Shl => join_scaled(a.kind, b.kind),
        _ => join(a.kind, b.kind),
    };
    let kind = match (arith, b.kind) {
        // A shift by a non-constant amount scales by an unknown.
        (Arith::Shl, k) if k != Kind::Constant => join(a.kind, b.kind),
        _ => kind,
    };
    let bits = match arith {
        Arith::Add => x.wrapping_add(y),
        Arith::Sub => x.wrapping_sub(y),
        Arith::Mul(Half::Lo | Half::Wide) | Arith::Mad(Half::Lo | Half::Wide) => x.wrapping_mul(y),
        Arith::Mul(Half::Hi) | Arith::Mad(Half::Hi) => {
            let product = if ty.signed {
                (i128::from(x as i64) * i128::from(y as i64)) as u128
            } else {
                u128::from(truncate(x, width)) * u128::from(truncate(y, width))
            };
            (product >> width) as u64
        }
        Arith::Div | Arith::Rem if truncate(y, width) == 0 => {
            return Value::UNKNOWN;
        }
        Arith::Div if ty.signed => (x as i64).wrapping_div(y as i64) as u64,
        Arith::Div => truncate(x, width) / truncate(y, width),
        Arith::Rem if ty.signed => (x as i64).wrapping_rem(y as i64) as u64,
        Arith::Rem => truncate(x, width) % truncate(y, width),
        Arith::And => x & y,
        Arith::Or => x | y,
        Arith::Xor => x ^ y,
        Arith::Shl => {
            let amount = shift(truncate(b.bits, 32));
            if amount >= 64 {
                0
            } else {
                x << amount
            }
        }
        Arith::Shr => {
            let amount = shift(truncate(b.bits, 32));
            if ty.signed {
                ((x as i64) >> amount.min(63)) as u64
            } else if amount >= 64 {
                0
            } else {
                truncate(x, width) >> amount
            }
        }
        Arith::Min if ty.signed => (x as i64).min(y as i64) as u64,
        Arith::Min => truncate(x, width).min(truncate(y, width)),
        Arith::Max if ty.signed => (x as i64).max(y as i64) as u64,
        Arith::Max => truncate(x, width).max(truncate(y, width)),
    };
    Value { bits, kind }
}

fn compare_bits(compare: Compare, ty: Type, a: u64, b: u64) -> bool {
    let ordering = if ty.signed {
        (extend(a, ty) as i64).cmp(&(extend(b, ty) as i64))
    } else {
        truncate(a, ty.bits).cmp(&truncate(b, ty.bits))
    };
    match compare {
        Compare::Eq => ordering.is_eq(),
        Compare::Ne => ordering.is_ne(),
        Compare::Lt => ordering.is_lt(),
        Compare::Le => ordering.is_le(),
        Compare::Gt => ordering.is_gt(),
        Compare::Ge => ordering.is_ge(),
    }
}
