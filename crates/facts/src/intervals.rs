//! Wall-clock intervals `[start, end)` in epoch milliseconds, as sorted, disjoint lists: the
//! application's usable time (its run less the stretches its clock jumped over) and the windows
//! in which the impact model counts each finding's time.

/// Sorted, disjoint `[start, end)` intervals.
pub type Spans = Vec<(i64, i64)>;

/// Sorted, merged, without empty intervals.
pub fn normalise(mut spans: Spans) -> Spans {
    spans.retain(|(s, e)| e > s);
    spans.sort_unstable();
    let mut out: Spans = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The time the intervals cover.
pub fn length(spans: &[(i64, i64)]) -> i64 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// The time in both; both normalised.
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Spans {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if e > s {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    out
}

/// `a` without `b`, both normalised.
pub fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Spans {
    let mut out = Vec::new();
    for &(s, e) in a {
        let mut from = s;
        for &(bs, be) in b.iter().filter(|(bs, be)| *be > s && *bs < e) {
            if bs > from {
                out.push((from, bs));
            }
            from = from.max(be);
        }
        if e > from {
            out.push((from, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jump_inside_the_run_is_cut_out_and_the_rest_kept() {
        let run = [(0, 100)];
        let jumps = [(40, 60)];
        let usable = subtract(&run, &jumps);
        assert_eq!(usable, [(0, 40), (60, 100)]);
        assert_eq!(length(&usable), 80);
        assert_eq!(intersect(&usable, &[(30, 70)]), [(30, 40), (60, 70)]);
        assert_eq!(normalise(vec![(5, 9), (0, 6), (9, 9)]), [(0, 9)]);
    }
}
