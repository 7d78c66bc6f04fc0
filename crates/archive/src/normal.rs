//! What normal looks like for one series, and whether a new result is
//! outside it: the rule behind every regression linerate names
//! (docs/guide.md#keeping-history). Pure arithmetic on a series' values,
//! oldest first; no clock, no storage.
//!
//! The band is the series' median over its last [`WINDOW`] runs, widened
//! by [`ROBUST_SIGMAS`] of its spread (the median absolute deviation,
//! scaled to a normal distribution's sigma), never narrower than
//! [`LEAST_CHANGE`] of the median (a path that varies by 3 % is not
//! called slower for 5 %) and never wider than [`MOST_CHANGE`] (a series
//! as noisy as this project's 2-core VM still has half its rate gone
//! named). Nothing is judged before [`MIN_HISTORY`] runs.
//! One run outside is noise: a change is named when [`CONFIRM`] runs in a
//! row fall outside on the same side, and once [`NEW_NORMAL_AFTER`] have,
//! the series has a new normal, made of the runs since the change. A
//! change a person acknowledged is the new normal at once
//! ([`judge_acknowledged`]).

/// Runs the normal band is made of, the latest ones.
pub const WINDOW: usize = 30;
/// Runs a series needs before anything is judged.
pub const MIN_HISTORY: usize = 10;
/// Half the band's width, in robust standard deviations (1.4826 x MAD).
pub const ROBUST_SIGMAS: f64 = 4.0;
/// Half the band's least width, as a share of the median.
pub const LEAST_CHANGE: f64 = 0.10;
/// Half the band's greatest width, as a share of the median: however
/// noisy a series, half its throughput gone (or its round trip half again)
/// two runs in a row is named.
pub const MOST_CHANGE: f64 = 0.50;
/// Runs in a row outside the band, on one side, that name a change.
pub const CONFIRM: usize = 2;
/// Runs in a row outside the band, on one side, after which they are the
/// series' new normal.
pub const NEW_NORMAL_AFTER: usize = 5;

/// A MAD scaled to a normal distribution's standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The range a series' next value is expected in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The median of the runs it was made of.
    pub median: f64,
    /// The lowest normal value.
    pub low: f64,
    /// The highest normal value.
    pub high: f64,
    /// How many runs it was made of.
    pub runs: usize,
}

impl Band {
    /// The band of `values` (any order); `None` for none.
    pub fn of(values: &[f64]) -> Option<Band> {
        let centre = median(values)?;
        let deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
        let sigma = MAD_TO_SIGMA * median(&deviations)?;
        let half = (ROBUST_SIGMAS * sigma)
            .max(LEAST_CHANGE * centre.abs())
            .min(MOST_CHANGE * centre.abs());
        Some(Band {
            median: centre,
            low: centre - half,
            high: centre + half,
            runs: values.len(),
        })
    }

    /// Where `value` falls against the band.
    pub fn side(&self, value: f64) -> Side {
        if value < self.low {
            Side::Below
        } else if value > self.high {
            Side::Above
        } else {
            Side::Within
        }
    }
}

/// Where a value falls against a band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Under its low end.
    Below,
    /// Inside it.
    Within,
    /// Over its high end.
    Above,
}

/// Which way is better for a series' figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// A throughput: more is better.
    Higher,
    /// A round trip or a run time: less is better.
    Lower,
}

/// What the latest value of a series says.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Too few runs to know what normal is.
    TooFewRuns {
        /// Runs the series has toward its band.
        have: usize,
        /// Runs it needs.
        need: usize,
    },
    /// Within the band, or outside it too few runs in a row to say.
    Normal(Band),
    /// Worse than normal for `runs` runs in a row.
    Regression(Change),
    /// Better than normal for `runs` runs in a row.
    Improvement(Change),
}

/// A change of a series' level against the band before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// The band the series left.
    pub band: Band,
    /// The latest value.
    pub value: f64,
    /// The latest value against the band's median, as a share (-0.41 is
    /// 41 % under).
    pub relative: f64,
    /// The runs in a row outside the band, the latest included.
    pub runs: usize,
    /// The index of the first of them in the series.
    pub first: usize,
}

/// The judgement of a series' latest value, `values` oldest first, its
/// figure better when `better`. Values that are not finite are no runs.
pub fn judge(values: &[f64], better: Better) -> Judgement {
    judge_walked(&finite(values), better, Regime::default())
}

/// The judgement of a series whose change a person acknowledged, `values`
/// its runs from the change's first on: they are its normal level, with a
/// band once there are [`NEW_NORMAL_AFTER`] of them, as for a change that
/// persisted.
pub fn judge_acknowledged(values: &[f64], better: Better) -> Judgement {
    let start = Regime {
        after_change: true,
        ..Regime::default()
    };
    judge_walked(&finite(values), better, start)
}

fn judge_walked(values: &[f64], better: Better, start: Regime) -> Judgement {
    let regime = start.walk(values);
    match regime.outside {
        Some(out) if out.runs >= CONFIRM => {
            let value = values[values.len() - 1];
            let change = Change {
                band: out.band,
                value,
                relative: value / out.band.median - 1.0,
                runs: out.runs,
                first: out.first,
            };
            let worse = match better {
                Better::Higher => out.side == Side::Below,
                Better::Lower => out.side == Side::Above,
            };
            if worse {
                Judgement::Regression(change)
            } else {
                Judgement::Improvement(change)
            }
        }
        _ => match regime.band_before(values, values.len()) {
            Some(band) => Judgement::Normal(band),
            None => Judgement::TooFewRuns {
                have: values.len() - regime.start,
                need: regime.need(),
            },
        },
    }
}

/// The normal band of a series as its next value will be judged, `values`
/// oldest first; `None` while it has too few runs.
pub fn band(values: &[f64]) -> Option<Band> {
    let values = &finite(values);
    let regime = Regime::default().walk(values);
    match regime.outside {
        // A change being confirmed is judged against the band it left.
        Some(out) => Some(out.band),
        None => regime.band_before(values, values.len()),
    }
}

/// A walk over a series: where its current level began, and the run of
/// values outside the band in hand.
#[derive(Debug, Default)]
struct Regime {
    /// The index of the first run of the current level.
    start: usize,
    /// The values in a row outside the band, if the latest is.
    outside: Option<Outside>,
    /// The series begins at a change (one a person acknowledged).
    after_change: bool,
}

/// Values in a row outside a band, on one side of it.
#[derive(Debug, Clone, Copy)]
struct Outside {
    side: Side,
    runs: usize,
    /// The index of the first of them.
    first: usize,
    /// The band they left.
    band: Band,
}

impl Regime {
    /// The state after every value of `values`, oldest first, from this
    /// one.
    fn walk(mut self, values: &[f64]) -> Regime {
        for i in 0..values.len() {
            self.step(values, i);
        }
        self
    }

    /// Runs the current level needs before it has a band: a new series
    /// [`MIN_HISTORY`], a level after a change the runs that made it one.
    fn need(&self) -> usize {
        if self.start == 0 && !self.after_change {
            MIN_HISTORY
        } else {
            NEW_NORMAL_AFTER
        }
    }

    /// The band for the value at `i`: the current level's runs before it,
    /// the last [`WINDOW`] of them, once there are enough.
    fn band_before(&self, values: &[f64], i: usize) -> Option<Band> {
        let from = self.start.max(i.saturating_sub(WINDOW));
        (i - self.start >= self.need())
            .then(|| Band::of(&values[from..i]))
            .flatten()
    }

    fn step(&mut self, values: &[f64], i: usize) {
        // A value outside is judged against the band its run of outside
        // values left, not a band that already holds some of them.
        let band = match self.outside {
            Some(out) => Some(out.band),
            None => self.band_before(values, i),
        };
        let Some(band) = band else {
            return;
        };
        let side = band.side(values[i]);
        self.outside = match self.outside {
            _ if side == Side::Within => None,
            Some(out) if out.side == side => Some(Outside {
                runs: out.runs + 1,
                ..out
            }),
            _ => Some(Outside {
                side,
                runs: 1,
                first: i,
                band,
            }),
        };
        if let Some(out) = self.outside
            && out.runs >= NEW_NORMAL_AFTER
        {
            self.start = out.first;
            self.outside = None;
        }
    }
}

/// The finite of `values`, in order.
fn finite(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|v| v.is_finite()).collect()
}

/// The median of the finite `values` (the project's one median); `None`
/// for none.
fn median(values: &[f64]) -> Option<f64> {
    values
        .iter()
        .any(|v| v.is_finite())
        .then(|| linerate_result::stats::median(values.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level with a deterministic wobble of `spread` around it.
    fn steady(level: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + spread * ((i * 7 % 11) as f64 / 5.0 - 1.0)))
            .collect()
    }

    #[test]
    fn nothing_is_judged_before_the_least_history() {
        let v = steady(9e9, 0.02, MIN_HISTORY - 1);
        assert_eq!(
            judge(&v, Better::Higher),
            Judgement::TooFewRuns {
                have: MIN_HISTORY - 1,
                need: MIN_HISTORY
            }
        );
    }

    #[test]
    fn one_run_outside_is_noise_and_two_are_a_change() {
        let mut v = steady(9e9, 0.02, 30);
        v.push(5e9);
        assert!(matches!(judge(&v, Better::Higher), Judgement::Normal(_)));
        v.push(9e9);
        assert!(matches!(judge(&v, Better::Higher), Judgement::Normal(_)));
        v.push(5e9);
        v.push(5.1e9);
        match judge(&v, Better::Higher) {
            Judgement::Regression(c) => {
                assert_eq!((c.runs, c.first), (2, 32));
                assert!((c.relative + 0.43).abs() < 0.02, "{c:?}");
                assert!(c.band.low > 7e9 && c.band.high < 11e9, "{c:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_change_that_persists_becomes_the_new_normal() {
        let mut v = steady(9e9, 0.02, 20);
        v.extend(steady(6e9, 0.02, NEW_NORMAL_AFTER - 1));
        assert!(
            matches!(judge(&v, Better::Higher), Judgement::Regression(c) if c.runs == NEW_NORMAL_AFTER - 1)
        );
        v.extend(steady(6e9, 0.02, 1));
        match judge(&v, Better::Higher) {
            Judgement::Normal(band) => {
                assert_eq!(band.runs, NEW_NORMAL_AFTER);
                assert!((band.median / 6e9 - 1.0).abs() < 0.03, "{band:?}");
            }
            other => panic!("{other:?}"),
        }
        // And the old level, back, is then a change of its own.
        v.extend([9e9, 9e9]);
        assert!(matches!(
            judge(&v, Better::Higher),
            Judgement::Improvement(_)
        ));
    }

    #[test]
    fn an_acknowledged_change_is_the_normal_at_once() {
        let mut v = steady(9e9, 0.02, 20);
        v.extend(steady(6e9, 0.02, 2));
        assert!(matches!(
            judge(&v, Better::Higher),
            Judgement::Regression(_)
        ));
        // Acknowledged after its second run: its runs alone are the series.
        let since = &v[20..];
        assert_eq!(
            judge_acknowledged(since, Better::Higher),
            Judgement::TooFewRuns {
                have: 2,
                need: NEW_NORMAL_AFTER
            }
        );
        let mut since = since.to_vec();
        since.extend(steady(6e9, 0.02, NEW_NORMAL_AFTER));
        assert!(matches!(
            judge_acknowledged(&since, Better::Higher),
            Judgement::Normal(b) if (b.median / 6e9 - 1.0).abs() < 0.03
        ));
    }

    #[test]
    fn for_a_round_trip_higher_is_the_regression() {
        let mut v = steady(50.0, 0.03, 15);
        v.extend([80.0, 82.0]);
        assert!(matches!(judge(&v, Better::Lower), Judgement::Regression(_)));
        assert!(matches!(
            judge(&v, Better::Higher),
            Judgement::Improvement(_)
        ));
    }

    #[test]
    fn a_flat_series_still_allows_its_least_change() {
        let mut v = vec![1e9; 12];
        v.extend([0.95e9, 0.93e9]);
        assert!(matches!(judge(&v, Better::Higher), Judgement::Normal(_)));
        v.extend([0.85e9, 0.85e9]);
        assert!(matches!(
            judge(&v, Better::Higher),
            Judgement::Regression(_)
        ));
    }

    #[test]
    fn values_that_are_not_numbers_break_nothing() {
        let mut v = steady(1.0, 0.01, 12);
        let before = judge(&v, Better::Higher);
        v.push(f64::NAN);
        v.push(f64::INFINITY);
        assert_eq!(judge(&v, Better::Higher), before, "not runs at all");
        assert_eq!(
            judge(&[f64::NAN; 20], Better::Higher),
            Judgement::TooFewRuns {
                have: 0,
                need: MIN_HISTORY
            }
        );
        assert_eq!(median(&[f64::NAN]), None);
        assert!(band(&[]).is_none());
    }
}
