//! Results to a report: the figures the seed papers are built from, chosen
//! by what the results contain, drawn as inline SVG in one self-contained
//! HTML page (no scripts, no fonts or styles fetched), with each figure's
//! data as CSV.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod chart;
pub mod data;
pub mod figures;
mod fleet_figures;
pub mod history_figures;
pub mod html;
mod job_figures;
mod latency_figures;
mod link_figures;

pub use figures::{Figure, FigureKind, choose};

/// A result document and where it came from.
pub struct Input {
    /// The file it was read from, as the report names it.
    pub path: String,
    /// The document.
    pub doc: linerate_result::ResultDoc,
}

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A figure could not be drawn.
    #[error("drawing {figure}: {error}")]
    Draw {
        /// The figure's id.
        figure: String,
        /// What the drawing library said.
        error: chart::DrawError,
    },
}

/// Time to stabilise: with 1 s intervals x1..xn (all streams summed) and m
/// the median of the last half of them, the start of the first interval
/// from which every interval stays within 10 % of m. `None` if the last
/// one does not.
pub fn time_to_stabilise(per_second: &[f64]) -> Option<f64> {
    let n = per_second.len();
    if n < 2 {
        return None;
    }
    let m = linerate_result::stats::median(per_second[n / 2..].iter().copied());
    let within = |x: f64| (x - m).abs() <= 0.1 * m;
    let mut first = None;
    for (i, x) in per_second.iter().enumerate().rev() {
        if !within(*x) {
            break;
        }
        first = Some(i as f64);
    }
    first
}

#[cfg(test)]
mod tests {
    use super::time_to_stabilise;

    #[test]
    fn stabilises_at_the_first_second_after_which_all_stay_within_ten_percent() {
        let s = [1.0, 5.0, 8.0, 9.5, 10.0, 10.2, 9.8, 10.1, 10.0, 9.9];
        assert_eq!(time_to_stabilise(&s), Some(3.0));
        assert_eq!(time_to_stabilise(&[10.0, 10.0]), Some(0.0));
        assert_eq!(time_to_stabilise(&[10.0]), None);
        // The last interval itself is off: never stable.
        assert_eq!(time_to_stabilise(&[10.0, 10.0, 10.0, 10.0, 5.0]), None);
    }
}
