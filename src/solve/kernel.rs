//! The per-kernel choice (docs/ARCHITECTURE.md §6): one candidate per array, minimising
//! `Σ excess + λ · ALU` subject to the kernel's shared-memory budget, as a 0-1 integer
//! program solved by good_lp's pure-Rust `microlp` backend (a multiple-choice knapsack: with
//! padding competing for a few bytes across arrays, the per-array rule cannot decide).
use super::choose::Choice;
use super::soa::is_relayout;
use good_lp::{constraint, microlp, variable, variables, Expression, Solution, SolverModel};

/// λ when ALU operations should only break ties: an added operation per access weighs a
/// thousandth of an excess wavefront, so with fewer than a thousand operations in all the
/// fewest conflicts always win.
pub const TIE_BREAK_LAMBDA: f64 = 1e-3;

/// What the struct-of-arrays layout weighs beyond its excess wavefronts: half of one, so
/// that it never outweighs a wavefront it removes, and outweighs the ALU tie-break of any
/// map with fewer than 500 operations: with as many conflicts left, a map of elements wins
/// (the layout turns a whole-record access into one per member).
const RELAYOUT_TIE_BREAK: f64 = 0.5;

/// The bytes the arrays of a kernel may grow by under `--smem-budget` (default: the declared
/// footprint, so none).
pub fn allowance(smem_budget: Option<u64>, footprint: u64) -> Result<u64, String> {
    match smem_budget {
        None => Ok(0),
        Some(budget) => budget.checked_sub(footprint).ok_or_else(|| {
            format!("--smem-budget {budget} is below the {footprint} bytes already declared")
        }),
    }
}

/// One candidate per array: `picks[a]` indexes `choices[a].families`.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelChoice {
    pub picks: Vec<usize>,
    pub excess: u64,
    pub alu_ops: u32,
    pub extra_bytes: u64,
}

/// Chooses one allowed candidate per array (never one that makes a site worse) so that the
/// arrays grow by at most `extra_bytes` in all (`--smem-budget` minus the declared footprint,
/// or the default budget of `plan`), minimising excess wavefronts plus
/// `lambda` times ALU operations per access.
pub fn choose_kernel(
    choices: &[Choice],
    extra_bytes: u64,
    lambda: f64,
) -> Result<KernelChoice, String> {
    let options: Vec<Vec<(usize, u64, u32, u64)>> = choices
        .iter()
        .map(|choice| {
            choice
                .families
                .iter()
                .enumerate()
                .filter_map(|(i, f)| {
                    let best = f.best.as_ref().filter(|b| !b.score.worsens)?;
                    let bytes = f.extra_bytes(choice.elem_bytes)?;
                    Some((i, best.score.total, best.map.alu_ops(), bytes))
                })
                .filter(|&(_, _, _, bytes)| bytes <= extra_bytes)
                .collect()
        })
        .collect();
    let relayout = |a: usize, i: usize| {
        if is_relayout(&choices[a].families[i]) {
            RELAYOUT_TIE_BREAK
        } else {
            0.0
        }
    };
    if let Some(a) = options.iter().position(Vec::is_empty) {
        return Err(format!("array {a} has no candidate within the budget"));
    }
    let mut vars = variables!();
    let x: Vec<Vec<_>> = options
        .iter()
        .map(|o| o.iter().map(|_| vars.add(variable().binary())).collect())
        .collect();
    let mut objective = Expression::from(0.0);
    let mut bytes = Expression::from(0.0);
    for (a, (o, xs)) in options.iter().zip(&x).enumerate() {
        for (&(i, excess, alu, extra), &v) in o.iter().zip(xs) {
            objective += (excess as f64 + lambda * f64::from(alu) + relayout(a, i)) * v;
            bytes += (extra as f64) * v;
        }
    }
    let mut model = vars.minimise(objective).using(microlp);
    for xs in &x {
        let one: Expression = xs.iter().copied().sum();
        model = model.with(constraint!(one == 1));
    }
    model = model.with(constraint!(bytes <= extra_bytes as f64));
    let solution = model.solve().map_err(|e| format!("the ILP failed: {e}"))?;
    let mut picked = KernelChoice {
        picks: Vec::new(),
        excess: 0,
        alu_ops: 0,
        extra_bytes: 0,
    };
    for (o, xs) in options.iter().zip(&x) {
        let (i, excess, alu, extra) = o
            .iter()
            .zip(xs)
            .find(|(_, &v)| solution.value(v) > 0.5)
            .map(|(&c, _)| c)
            .ok_or("the ILP picked nothing for an array")?;
        picked.picks.push(i);
        picked.excess += excess;
        picked.alu_ops += alu;
        picked.extra_bytes += extra;
    }
    if picked.extra_bytes > extra_bytes {
        return Err("the ILP's answer exceeds the budget".into());
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::choose::choose;
    use crate::solve::raw::{raw_problem, transpose_problem};
    use crate::solve::{ArrayProblem, Family};

    /// The 32 × 32 transpose tile: a swizzle (1 operation) or a padded row (128 bytes).
    fn tile() -> ArrayProblem {
        let mut problem = transpose_problem();
        problem.max_extra_bytes = u64::MAX;
        problem
    }

    /// 65 floats stored at `2x` and read at `x`: odd, so only padding (8 bytes) removes the
    /// 2-way conflict of the store.
    fn odd() -> ArrayProblem {
        let sets = [(0..32).map(|x| 2 * x).collect(), (0..32).collect()];
        let mut problem = raw_problem(&sets, 32, Some(7)).expect("valid");
        problem.dims = vec![65];
        problem.max_extra_bytes = u64::MAX;
        problem
    }

    #[test]
    fn allowance_of_a_budget() {
        assert_eq!(allowance(None, 4096), Ok(0));
        assert_eq!(allowance(Some(4224), 4096), Ok(128));
        assert!(allowance(Some(100), 4096).is_err());
    }

    fn strategies(choices: &[Choice], picked: &KernelChoice) -> Vec<Family> {
        choices
            .iter()
            .zip(&picked.picks)
            .map(|(c, &i)| c.families[i].strategy)
            .collect()
    }

    #[test]
    fn the_budget_goes_where_it_removes_conflicts() {
        let choices = [
            choose(&tile()).expect("solvable"),
            choose(&odd()).expect("solvable"),
        ];
        assert_eq!(choices[1].excess_before, 1);
        // No bytes: the tile is swizzled, the odd array keeps its conflict.
        let none = choose_kernel(&choices, 0, TIE_BREAK_LAMBDA).expect("feasible");
        assert_eq!(
            strategies(&choices, &none),
            vec![Family::Swizzle, Family::Identity]
        );
        assert_eq!((none.excess, none.alu_ops, none.extra_bytes), (1, 1, 0));
        // 128 bytes: padding the tile would save an operation, padding the odd array a
        // conflict; the bytes go to the odd array.
        let some = choose_kernel(&choices, 128, TIE_BREAK_LAMBDA).expect("feasible");
        assert_eq!(
            strategies(&choices, &some),
            vec![Family::Swizzle, Family::Padding]
        );
        assert_eq!((some.excess, some.alu_ops, some.extra_bytes), (0, 1 + 2, 8));
        // Enough for both: the tile's padded declaration costs no operation (the flat one 2).
        let all = choose_kernel(&choices, 136, TIE_BREAK_LAMBDA).expect("feasible");
        assert_eq!(
            strategies(&choices, &all),
            vec![Family::Padding, Family::Padding]
        );
        assert_eq!((all.excess, all.alu_ops, all.extra_bytes), (0, 2, 136));
    }
}
