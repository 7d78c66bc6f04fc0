//! The one median every reader of results uses, so a "median of 2 rounds"
//! is their mean everywhere, never the upper one; and Jain's fairness index.

/// The median of the finite values (the mean of the middle two for an even
/// count); 0 when there are none.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

/// The `q` quantile (0 to 1) of the finite values by nearest rank (the
/// smallest value with at least `q` of the values at or below it); 0 when
/// there are none.
pub fn quantile(values: impl IntoIterator<Item = f64>, q: f64) -> f64 {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let rank = (q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Jain's fairness index of the flows' rates, (sum x)^2 / (n sum x^2):
/// 1 when all are equal, 1/n when one takes everything; 1 for no flow or
/// no traffic (nothing was shared unfairly).
pub fn jain_index(rates: &[f64]) -> f64 {
    let rates: Vec<f64> = rates
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r >= 0.0)
        .collect();
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|r| r * r).sum();
    if rates.is_empty() || squares == 0.0 {
        return 1.0;
    }
    sum * sum / (rates.len() as f64 * squares)
}

#[cfg(test)]
mod tests {
    use super::{median, quantile};

    #[test]
    fn a_quantile_is_a_value_that_was_measured() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(v.clone(), 0.99), 99.0);
        assert_eq!(quantile(v.clone(), 1.0), 100.0);
        assert_eq!(quantile(v, 0.0), 1.0);
        assert_eq!(quantile([], 0.5), 0.0);
    }

    #[test]
    fn an_even_count_takes_the_mean_of_its_middle_two() {
        assert_eq!(median([7.40, 53.56]), 30.48);
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn nothing_finite_is_zero() {
        assert_eq!(median([]), 0.0);
        assert_eq!(median([f64::NAN, f64::INFINITY]), 0.0);
        assert_eq!(median([f64::NAN, 5.0]), 5.0);
    }
}
