//! Load balance of the CBT's slices (the paper's Table 1).
//!
//! The paper: "Efficiency = X/Y, where X is the average amount of computations performed in each
//! CBT and Y is the average maximum performed in any CBT"; 1 is perfect balance. Here, for each
//! superstep, the work of every slice is measured (key comparisons, block I/Os); X is the mean
//! over supersteps of the mean over slices, Y the mean over supersteps of the maximum over
//! slices. Dividing the two means (rather than averaging per-superstep ratios) weighs each
//! superstep by its work, as "average amount" / "average maximum" reads.

/// X/Y for `work[s][t]`, the work of slice `t` in superstep `s`. Supersteps without work are
/// skipped; with no work at all the balance is perfect (1).
pub fn efficiency(work: &[Vec<u64>]) -> f64 {
    let (mut x, mut y) = (0.0f64, 0.0f64);
    for step in work {
        let Some(&max) = step.iter().max() else {
            continue;
        };
        if max == 0 {
            continue;
        }
        x += step.iter().sum::<u64>() as f64 / step.len() as f64;
        y += max as f64;
    }
    if y == 0.0 {
        1.0
    } else {
        x / y
    }
}

/// The work of every slice summed over consecutive windows of `w` supersteps (a partial last
/// window is dropped; with fewer than `w` supersteps, one window of all of them): the efficiency
/// of [`efficiency`] over these is the balance seen by someone who measures each slice's work
/// only every `w` supersteps (`w` = the run's length gives the whole-run balance).
pub fn windows(work: &[Vec<u64>], w: usize) -> Vec<Vec<u64>> {
    let w = w.max(1);
    let sum = |steps: &[Vec<u64>]| {
        let mut s = vec![0u64; steps.first().map_or(0, Vec::len)];
        for step in steps {
            for (a, b) in s.iter_mut().zip(step) {
                *a += b;
            }
        }
        s
    };
    if work.len() < w {
        return vec![sum(work)];
    }
    work.chunks_exact(w).map(sum).collect()
}

/// The paper's Table 1: (T, R/T, extract efficiency, insert efficiency).
pub const PAPER_TABLE1: [(usize, usize, f64, f64); 4] = [
    (1, 8000, 1.00, 1.00),
    (2, 4000, 0.99, 0.98),
    (4, 2000, 0.98, 0.97),
    (8, 1000, 0.95, 0.93),
];

#[cfg(test)]
mod tests {
    use super::{efficiency, windows};

    #[test]
    fn windows_sum_consecutive_supersteps() {
        let w = vec![vec![4, 0], vec![0, 4], vec![1, 1]];
        assert_eq!(windows(&w, 1), w);
        assert_eq!(windows(&w, 2), vec![vec![4, 4]]);
        assert_eq!(windows(&w, 5), vec![vec![5, 5]]);
        assert_eq!(efficiency(&w), (2.0 + 2.0 + 1.0) / (4.0 + 4.0 + 1.0));
        assert_eq!(efficiency(&windows(&w, 2)), 1.0);
    }

    #[test]
    fn balanced_and_unbalanced() {
        assert_eq!(efficiency(&[vec![5, 5, 5, 5], vec![2, 2, 2, 2]]), 1.0);
        // Means 2 and 3, maxima 4 and 3: (2 + 3) / (4 + 3).
        let e = efficiency(&[vec![0, 4, 2, 2], vec![3, 3, 3, 3]]);
        assert!((e - 5.0 / 7.0).abs() < 1e-12, "{e}");
        // One slice does everything: 1/T.
        assert_eq!(efficiency(&[vec![8, 0, 0, 0]]), 0.25);
        assert_eq!(efficiency(&[vec![7]]), 1.0);
        assert_eq!(efficiency(&[]), 1.0);
        assert_eq!(efficiency(&[vec![0, 0], vec![4, 2]]), 0.75);
    }
}
