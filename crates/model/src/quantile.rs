//! Quantiles exactly as the Spark History Server computes them, so our numbers match the UI's.

/// The 0-based index `AppStatusStore.taskSummary` picks for quantile `q` of `n` sorted values:
/// `min(floor(q * n), n - 1)`, nearest rank with no interpolation.
pub fn shs_index(n: usize, q: f64) -> usize {
    debug_assert!(n > 0);
    ((q * n as f64) as usize).min(n - 1)
}

/// The History Server's quantiles of `values` (sorted here), or `None` when there are none.
pub fn shs_quantiles<T: Copy + Ord>(values: &mut [T], quantiles: &[f64]) -> Option<Vec<T>> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(
        quantiles
            .iter()
            .map(|&q| values[shs_index(values.len(), q)])
            .collect(),
    )
}

/// The History Server's quantile `q` of `values`, found by selection (the values are left
/// reordered, not sorted), or `None` when there are none. One quantile needs no full sort: the
/// stage statistics take a dozen medians of every stage.
pub fn shs_quantile_selected<T: Copy + Ord>(values: &mut [T], q: f64) -> Option<T> {
    if values.is_empty() {
        return None;
    }
    let at = shs_index(values.len(), q);
    Some(*values.select_nth_unstable(at).1)
}

/// The median of some numbers, the upper one of an even count (the History Server's 0.5
/// quantile, [`shs_index`]); `None` when empty. Any `PartialOrd`, so rates in `f64` too.
pub fn median<T: Copy + PartialOrd>(values: impl IntoIterator<Item = T>) -> Option<T> {
    let mut v: Vec<T> = values.into_iter().collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Some(v[shs_index(v.len(), 0.5)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_ten_is_the_sixth_smallest_and_q1_is_the_max() {
        let mut v: Vec<u32> = (1..=10).rev().collect();
        assert_eq!(
            shs_quantiles(&mut v, &[0.0, 0.5, 1.0]).unwrap(),
            vec![1, 6, 10]
        );
        assert_eq!(shs_index(100, 0.05), 5);
        assert_eq!(shs_index(20, 0.95), 19);
        assert!(shs_quantiles::<u32>(&mut [], &[0.5]).is_none());
    }

    #[test]
    fn a_selected_quantile_is_the_sorted_ones() {
        // Repeats, runs and a reversed order: the value at the index is the same either way.
        let lists: [Vec<u64>; 4] = [
            vec![7],
            vec![3, 3, 3, 1, 1, 9, 9, 9, 9, 2],
            (0..101).rev().map(|v| v % 17).collect(),
            (0..64).map(|v| (v * 7919) % 13).collect(),
        ];
        for list in lists {
            for q in [0.0, 0.25, 0.5, 0.75, 0.95, 1.0] {
                let sorted = shs_quantiles(&mut list.clone(), &[q]).unwrap()[0];
                let selected = shs_quantile_selected(&mut list.clone(), q).unwrap();
                assert_eq!(selected, sorted, "{list:?} at {q}");
            }
        }
        assert!(shs_quantile_selected::<u64>(&mut [], 0.5).is_none());
    }
}
