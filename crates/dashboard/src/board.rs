//! What the archive says of each series now: its latest run, the rule's
//! judgement of it, whether it is stale, and the figures of its latest
//! document the pages and the metrics show. Read once a request; the
//! pages and the metrics draw from it and nothing else.

use linerate_archive::{ArchiveError, Judgement, Row, SeriesSummary, Store, Unit};
use linerate_result::ResultDoc;

/// What a series' cell says, by the archive's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CellState {
    /// Its latest result is older than the series' runs are apart.
    Stale,
    /// Too few runs to know its normal.
    Learning,
    /// Within its normal range (or outside once: not yet a change).
    Normal,
    /// Better than normal, named.
    Improvement,
    /// Worse than normal, named.
    Regression,
}

impl CellState {
    /// Its name in the page's markup and in the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            CellState::Stale => "stale",
            CellState::Learning => "learning",
            CellState::Normal => "normal",
            CellState::Improvement => "improvement",
            CellState::Regression => "regression",
        }
    }
}

/// What the latest document of a series adds to its figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatestFigures {
    /// Segments retransmitted in the run (or by the pair's flows).
    pub retransmits: Option<u64>,
    /// Round trip percentiles of a latency run, µs: median, 90th, 99th.
    pub round_trip_us: Option<[f64; 3]>,
    /// The run's verdict in words (the pair's, for a many-host run).
    pub sentence: Option<String>,
}

/// One series as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct SeriesState {
    /// The series and what defines it.
    pub summary: SeriesSummary,
    /// Its latest run with a figure.
    pub latest: Row,
    /// The rule's judgement of that run.
    pub judgement: Judgement,
    /// What its cell says.
    pub state: CellState,
    /// Seconds since its latest run started.
    pub age_seconds: f64,
    /// The age after which it counts as stale, seconds.
    pub stale_after: f64,
    /// What its latest document adds.
    pub figures: LatestFigures,
}

/// Every series with a figure the archive holds in the period, judged.
#[derive(Debug, Clone)]
pub struct Board {
    /// Where the archive is (never with a password).
    pub place: String,
    /// When it was read, seconds since the epoch.
    pub now: f64,
    /// Its series, ordered by kind, source, destination, id.
    pub series: Vec<SeriesState>,
    /// Series without one figure to show (a study's), left out.
    pub without_figure: usize,
}

/// When a series counts as stale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Staleness {
    /// Older than this many times the median gap between its last runs
    /// (at least [`LEAST_STALE_SECONDS`]); a series of one run, older
    /// than [`ONE_RUN_STALE_SECONDS`].
    Adaptive,
    /// Older than this many seconds (`--stale`).
    After(f64),
}

/// Gaps between runs a series may miss before its cell is greyed.
pub const STALE_GAPS: f64 = 3.0;
/// The least age that is stale under [`Staleness::Adaptive`].
pub const LEAST_STALE_SECONDS: f64 = 60.0;
/// The age a series of one run is stale at under [`Staleness::Adaptive`].
pub const ONE_RUN_STALE_SECONDS: f64 = 86_400.0;

impl Board {
    /// Reads every series with a run since `since` (seconds since the
    /// epoch) from `archive`, or only the series `only` (a series' page
    /// needs no other's latest document), and judges its latest run as
    /// recording did.
    pub fn read(
        archive: &mut dyn Store,
        (since, only): (f64, Option<&str>),
        now: f64,
        staleness: Staleness,
    ) -> Result<Board, ArchiveError> {
        let mut series = Vec::new();
        let mut without_figure = 0;
        let summaries = archive.series_since(since)?;
        let chosen = summaries
            .into_iter()
            .filter(|s| only.is_none_or(|id| s.id == id));
        for summary in chosen {
            if summary.unit == Unit::None {
                without_figure += 1;
                continue;
            }
            let (history, judgement) =
                linerate_archive::judge_series(archive, &summary.id, summary.unit)?;
            let Some(latest) = history.last().cloned() else {
                without_figure += 1;
                continue;
            };
            let stale_after = match staleness {
                Staleness::After(s) => s,
                Staleness::Adaptive => adaptive_stale_after(&history),
            };
            let age_seconds = (now - latest.started_at).max(0.0);
            let state = if age_seconds > stale_after {
                CellState::Stale
            } else {
                judged_state(&judgement)
            };
            let figures = archive
                .document(latest.id)?
                .and_then(|bytes| serde_json::from_slice::<ResultDoc>(&bytes).ok())
                .map(|doc| latest_figures(&doc, &summary))
                .unwrap_or_default();
            series.push(SeriesState {
                summary,
                latest,
                judgement,
                state,
                age_seconds,
                stale_after,
                figures,
            });
        }
        series.sort_by(|a, b| {
            let key = |s: &SeriesState| {
                (
                    s.summary.key.kind.clone(),
                    s.summary.key.source.clone(),
                    s.summary.key.destination.clone(),
                    s.summary.id.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        Ok(Board {
            place: archive.place(),
            now,
            series,
            without_figure,
        })
    }

    /// The kinds of test the board holds, in order.
    pub fn kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = self
            .series
            .iter()
            .map(|s| s.summary.key.kind.as_str())
            .collect();
        kinds.dedup();
        kinds
    }
}

/// What the rule's judgement says a fresh series' cell is.
pub fn judged_state(judgement: &Judgement) -> CellState {
    match judgement {
        Judgement::TooFewRuns { .. } => CellState::Learning,
        Judgement::Normal(_) => CellState::Normal,
        Judgement::Regression(_) => CellState::Regression,
        Judgement::Improvement(_) => CellState::Improvement,
    }
}

/// [`STALE_GAPS`] times the median gap between `history`'s runs (oldest
/// first), at least [`LEAST_STALE_SECONDS`].
pub fn adaptive_stale_after(history: &[Row]) -> f64 {
    let mut gaps: Vec<f64> = history
        .windows(2)
        .map(|w| w[1].started_at - w[0].started_at)
        .filter(|g| g.is_finite() && *g >= 0.0)
        .collect();
    if gaps.is_empty() {
        return ONE_RUN_STALE_SECONDS;
    }
    gaps.sort_by(f64::total_cmp);
    let median = gaps[gaps.len() / 2];
    (STALE_GAPS * median).max(LEAST_STALE_SECONDS)
}

/// The figures of `doc` that belong to `series`: a many-host run's pair
/// by its hosts' names, else the run's own.
fn latest_figures(doc: &ResultDoc, series: &SeriesSummary) -> LatestFigures {
    if let Some(fleet) = &doc.fleet {
        let rank_of = |name: &str| fleet.hosts.iter().find(|h| h.name == name).map(|h| h.rank);
        let (Some(from), Some(to)) = (
            rank_of(&series.key.source),
            rank_of(&series.key.destination),
        ) else {
            return LatestFigures::default();
        };
        let flows: Vec<_> = fleet
            .steps
            .iter()
            .flat_map(|s| &s.flows)
            .filter(|f| f.from == from && f.to == to)
            .collect();
        return LatestFigures {
            retransmits: (!flows.is_empty()).then(|| flows.iter().map(|f| f.retransmits).sum()),
            round_trip_us: None,
            sentence: flows.iter().find_map(|f| f.verdict.clone()),
        };
    }
    let round_trip_us = doc.latency.as_ref().and_then(|l| l.steps.first()).map(|s| {
        [
            s.round_trip_us.p50,
            s.round_trip_us.p90,
            s.round_trip_us.p99,
        ]
    });
    let sentence = &doc.summary.verdict.sentence;
    LatestFigures {
        retransmits: round_trip_us.is_none().then_some(doc.summary.retransmits),
        round_trip_us,
        sentence: (!sentence.is_empty()).then(|| sentence.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at: f64) -> Row {
        Row {
            id: 0,
            started_at: at,
            value: Some(1.0),
            limit: None,
        }
    }

    #[test]
    fn a_series_is_stale_after_three_of_its_usual_gaps() {
        let hourly: Vec<Row> = (0..5).map(|i| row(f64::from(i) * 3600.0)).collect();
        assert_eq!(adaptive_stale_after(&hourly), 3.0 * 3600.0);
        // Runs seconds apart are not stale within a minute.
        let quick: Vec<Row> = (0..5).map(|i| row(f64::from(i) * 5.0)).collect();
        assert_eq!(adaptive_stale_after(&quick), LEAST_STALE_SECONDS);
        assert_eq!(adaptive_stale_after(&[row(0.0)]), ONE_RUN_STALE_SECONDS);
        // One long pause does not move the median gap.
        let mut paused = hourly.clone();
        paused.push(row(30.0 * 86_400.0));
        assert_eq!(adaptive_stale_after(&paused), 3.0 * 3600.0);
    }

    #[test]
    fn a_cell_shows_its_worst_series_first() {
        assert!(CellState::Regression > CellState::Improvement);
        assert!(CellState::Normal > CellState::Learning);
        assert!(CellState::Learning > CellState::Stale);
    }
}
