//! The one median every reader of results uses, so a "median of 2 rounds"
//! is their mean everywhere, never the upper one.

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

#[cfg(test)]
mod tests {
    use super::median;

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
