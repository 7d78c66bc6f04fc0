//! Small arithmetic shared by the feature extraction and the steady-state
//! window, kept apart so neither imports the other.

/// `a / b`, or 0 where the quotient would not be a number a sentence can use.
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a.is_finite() { a / b } else { 0.0 }
}
