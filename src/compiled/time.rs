//! The time model: what a block of a kernel costs, from what block 0 of its compiled code
//! executed. A launch of many blocks keeps every SM's schedulers, shared-memory pipe and
//! memory system busy at once; its time follows the issue slots, shared wavefronts and
//! global memory instructions of each block, each at its own price. The prices are fitted
//! on the GPU runs in docs/gpu-results (docs/time-model.md states the error launch by
//! launch), and a rewrite must be predicted faster by a margin before it is applied.

use super::figures::Executed;

/// The price of each thing a block executes, in warp-instruction issue slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    /// The architecture they were fitted on.
    pub fitted_on: &'static str,
    pub instruction: u64,
    pub shared_wavefront: u64,
    pub global_instruction: u64,
}

/// sm_90 (H100 and H200): four schedulers issue four warp instructions a cycle per SM,
/// the shared-memory pipe serves one wavefront a cycle; a global memory instruction, in
/// the fit, costs what 32 issue slots do.
const SM_90: Weights = Weights {
    fitted_on: "sm_90",
    instruction: 1,
    shared_wavefront: 4,
    global_instruction: 32,
};

/// A rewrite is applied only where it is predicted to take at most this share of the
/// original's time (in thousandths): 3% faster, past the model's noise on launches that
/// do not change.
pub const MAX_PREDICTED_PER_MILLE: u64 = 970;

/// The weights fitted per architecture (`sm_90a` is `sm_90`).
const FITTED: &[(&str, Weights)] = &[("sm_90", SM_90)];

/// The weights for `arch`. Only sm_90 has been measured; the others have the same ratio of
/// issue slots to shared-memory bandwidth per SM (sm_70 to sm_120), so they use its
/// weights, and the reasons name the architecture the weights were fitted on.
pub fn weights(arch: &str) -> Weights {
    FITTED
        .iter()
        .find(|(fitted, _)| arch.starts_with(fitted))
        .map_or(SM_90, |(_, weights)| *weights)
}

/// The cost of one block in issue slots.
pub fn cost(executed: &Executed, weights: &Weights) -> u64 {
    executed.instructions * weights.instruction
        + executed.shared_wavefronts * weights.shared_wavefront
        + executed.global_instructions * weights.global_instruction
}

/// The time after over the time before, in thousandths (rounded).
pub fn per_mille(before: u64, after: u64) -> u64 {
    (after * 1000 + before / 2) / before.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/gpu-results/time-model.tsv: each launch the fix changed in three GPU runs, with
    /// what block 0 executed before and after and the measured times.
    const CALIBRATION: &str = include_str!("../../docs/gpu-results/time-model.tsv");

    struct Launch {
        kernel: String,
        before_us: f64,
        measured: f64,
        per_mille: u64,
    }

    fn calibration() -> Vec<Launch> {
        CALIBRATION
            .lines()
            .skip(1)
            .map(|line| {
                let cells: Vec<&str> = line.split('\t').collect();
                let number = |i: usize| cells[i].parse::<f64>().expect("a number");
                let count = |i: usize| cells[i].parse::<u64>().expect("a count");
                let weights = weights("sm_90");
                let [before, after] = [6, 9].map(|at| {
                    cost(
                        &Executed {
                            instructions: count(at),
                            shared_instructions: 0,
                            shared_wavefronts: count(at + 1),
                            global_instructions: count(at + 2),
                        },
                        &weights,
                    )
                });
                Launch {
                    kernel: cells[3].to_string(),
                    before_us: number(4),
                    measured: number(5) / number(4),
                    per_mille: per_mille(before, after),
                }
            })
            .collect()
    }

    /// The figures docs/time-model.md states: over the launches of 8 µs or more, the gate
    /// leaves alone every one measured more than 1.03 times slower and rewrites every one
    /// measured more than 1.03 times faster.
    #[test]
    fn the_weights_decide_the_calibration_runs_as_docs_state() {
        let launches = calibration();
        let meaningful: Vec<&Launch> = launches.iter().filter(|l| l.before_us >= 8.0).collect();
        assert_eq!((launches.len(), meaningful.len()), (131, 69));
        let squares: f64 = meaningful
            .iter()
            .map(|l| ((l.per_mille as f64 / 1000.0).ln() - l.measured.ln()).powi(2))
            .sum();
        let rms = (squares / meaningful.len() as f64).sqrt();
        assert_eq!(format!("{rms:.3}"), "0.293");
        let rewritten = |launches: &[&Launch]| {
            launches
                .iter()
                .filter(|l| l.per_mille <= MAX_PREDICTED_PER_MILLE)
                .count()
        };
        let slower: Vec<&Launch> = meaningful
            .iter()
            .copied()
            .filter(|l| l.measured > 1.03)
            .collect();
        let faster: Vec<&Launch> = meaningful
            .iter()
            .copied()
            .filter(|l| l.measured < 1.0 / 1.03)
            .collect();
        assert_eq!((slower.len(), faster.len()), (7, 49));
        assert_eq!(rewritten(&slower), 0);
        assert_eq!(rewritten(&faster), 49);
        // Under 8 µs a launch is mostly overhead; the gate leaves alone two kernels measured
        // faster there, in each of the three runs (`convRows` 0.85, predicted 1.01;
        // `vecPairs` 0.92 to 0.95, predicted 1.14).
        let mut small_faster_refused: Vec<&str> = launches
            .iter()
            .filter(|l| l.before_us < 8.0 && l.measured < 1.0 / 1.03)
            .filter(|l| l.per_mille > MAX_PREDICTED_PER_MILLE)
            .map(|l| l.kernel.as_str())
            .collect();
        small_faster_refused.sort_unstable();
        assert_eq!(
            small_faster_refused,
            ["convRows", "convRows", "convRows", "vecPairs", "vecPairs", "vecPairs"]
        );
    }

    #[test]
    fn a_transpose_that_loses_its_conflicts_is_predicted_twice_as_fast() {
        // transposeCoalesced, 32x8, as the compiled view counts block 0 before and after.
        let weights = weights("sm_90");
        let before = cost(&Executed::weighed(472, 1056, 64), &weights);
        let after = cost(&Executed::weighed(592, 64, 64), &weights);
        assert_eq!((before, after), (6744, 2896));
        assert_eq!(per_mille(before, after), 429);
    }

    #[test]
    fn a_skew_that_multiplies_the_instructions_is_predicted_slower() {
        // nwUpperLeft: `% 17` on every access of a 16-thread sweep.
        let weights = weights("sm_90");
        let before = cost(&Executed::weighed(547, 610, 35), &weights);
        let after = cost(&Executed::weighed(3423, 190, 35), &weights);
        assert_eq!(per_mille(before, after), 1291);
        assert!(per_mille(before, after) > MAX_PREDICTED_PER_MILLE);
    }
}
