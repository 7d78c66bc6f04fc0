//! The archive's series over time (`linerate report --archive`): each run's
//! figure, the normal band it was judged against, and the runs outside it
//! marked, one figure a series. The caller judges the runs (the archive's
//! rule); this draws what it found.

use std::fmt::Write as _;

use crate::ReportError;
use crate::chart::{self, Lines, Series};
use crate::figures::{Figure, FigureKind};
use crate::html::escape;

/// One run of a series as judged when it was recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgedRun {
    /// When it started, seconds since the epoch.
    pub at: f64,
    /// Its figure, in the series' unit.
    pub value: f64,
    /// The normal band it was judged against, if the series had one.
    pub band: Option<(f64, f64)>,
    /// What the rule said of it.
    pub said: Said,
}

/// What the rule said of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// Inside its band, or too few runs to judge.
    Normal,
    /// Outside, once: not yet a change.
    Outside,
    /// A regression named.
    Regression,
    /// An improvement named.
    Improvement,
}

/// A series as the report draws it.
#[derive(Debug, Clone)]
pub struct SeriesHistory {
    /// Its id, the figure's anchor.
    pub id: String,
    /// What it measures, short: `dtn1 -> dtn2 (bench, linerate)`.
    pub title: String,
    /// The rest of what defines it (its path, its id), for the caption.
    pub about: String,
    /// The y axis's unit and the factor from the series' values to it.
    pub unit: (&'static str, f64),
    /// Its runs, oldest first.
    pub runs: Vec<JudgedRun>,
}

impl SeriesHistory {
    /// A series of the archive as the report draws it, from its runs as
    /// the archive's rule judged each ([`linerate_archive::judged_history`]);
    /// `None` when no run has a figure.
    pub fn of(
        series: &linerate_archive::SeriesSummary,
        judged: &[(linerate_archive::Row, linerate_archive::Judgement)],
    ) -> Option<SeriesHistory> {
        use linerate_archive::{Judgement, Unit};
        let runs: Vec<JudgedRun> = judged
            .iter()
            .filter_map(|(row, judgement)| {
                let value = row.value?;
                let (band, said) = match judgement {
                    Judgement::TooFewRuns { .. } => (None, Said::Normal),
                    Judgement::Normal(b) => {
                        let outside = value < b.low || value > b.high;
                        (Some(b), if outside { Said::Outside } else { Said::Normal })
                    }
                    Judgement::Regression(c) => (Some(&c.band), Said::Regression),
                    Judgement::Improvement(c) => (Some(&c.band), Said::Improvement),
                };
                Some(JudgedRun {
                    at: row.started_at,
                    value,
                    band: band.map(|b| (b.low, b.high)),
                    said,
                })
            })
            .collect();
        if runs.is_empty() {
            return None;
        }
        let key = &series.key;
        Some(SeriesHistory {
            id: series.id.clone(),
            title: format!(
                "{} -> {} ({}, {})",
                key.source, key.destination, key.kind, key.tool
            ),
            about: format!("Series {}: path {}", series.id, key.path),
            unit: match series.unit {
                Unit::RoundTripMicroseconds => ("round trip (µs)", 1.0),
                _ => ("Gbit/s", 1e9),
            },
            runs,
        })
    }
}

/// The x axis for a span of `seconds`: its unit's name and length.
fn time_unit(seconds: f64) -> (&'static str, f64) {
    match seconds {
        s if s < 600.0 => ("seconds", 1.0),
        s if s < 2.0 * 3600.0 => ("minutes", 60.0),
        s if s < 3.0 * 86_400.0 => ("hours", 3600.0),
        _ => ("days", 86_400.0),
    }
}

/// The series' figure.
pub fn figure(s: &SeriesHistory, first_date: &str) -> Result<Figure, ReportError> {
    let start = s.runs.first().map_or(0.0, |r| r.at);
    let end = s.runs.last().map_or(0.0, |r| r.at);
    let (unit_name, unit) = time_unit(end - start);
    let x = |r: &JudgedRun| (r.at - start) / unit;
    let y = |v: f64| v / s.unit.1;
    let mut measured = Vec::new();
    let (mut low, mut high) = (Vec::new(), Vec::new());
    let (mut worse, mut better) = (Vec::new(), Vec::new());
    for r in &s.runs {
        measured.push((x(r), y(r.value)));
        if let Some((lo, hi)) = r.band {
            low.push((x(r), y(lo)));
            high.push((x(r), y(hi)));
        }
        match r.said {
            Said::Regression => worse.push((x(r), y(r.value))),
            Said::Improvement => better.push((x(r), y(r.value))),
            _ => {}
        }
    }
    let named = |name: &str, points: Vec<(f64, f64)>| Series {
        name: name.to_string(),
        points,
    };
    let mut series = vec![
        named("measured", measured),
        named("normal: low", low),
        named("normal: high", high),
    ];
    for (name, points) in [("regression named", worse), ("improvement named", better)] {
        if !points.is_empty() {
            series.push(named(name, points));
        }
    }
    let first_named = s
        .runs
        .iter()
        .find(|r| matches!(r.said, Said::Regression | Said::Improvement))
        .map(|r| (x(r), "first named".to_string()));
    let spec = Lines {
        title: s.title.clone(),
        x_label: format!("{unit_name} since {first_date}"),
        y_label: s.unit.0.to_string(),
        series,
        marker: first_named,
        points: true,
        ..Lines::default()
    };
    let id = format!("history-{}", s.id);
    let regressions = s.runs.iter().filter(|r| r.said == Said::Regression).count();
    let improvements = s
        .runs
        .iter()
        .filter(|r| r.said == Said::Improvement)
        .count();
    Ok(Figure {
        svg: chart::lines(&id, &spec)?,
        csv: csv(s),
        caption: format!(
            "{}. {} runs since {first_date}; each run against the normal band it was judged by \
             (the median of the runs before it, widened by their spread); {regressions} run(s) \
             named a regression, {improvements} an improvement.",
            s.about,
            s.runs.len()
        ),
        title: s.title.clone(),
        kind: FigureKind::History,
        id,
    })
}

fn csv(s: &SeriesHistory) -> String {
    let mut out = String::from("started_at,value,normal_low,normal_high,said\n");
    for r in &s.runs {
        let (lo, hi) = r.band.map_or((String::new(), String::new()), |(l, h)| {
            (l.to_string(), h.to_string())
        });
        let said = match r.said {
            Said::Normal => "normal",
            Said::Outside => "outside",
            Said::Regression => "regression",
            Said::Improvement => "improvement",
        };
        let _ = writeln!(out, "{},{},{lo},{hi},{said}", r.at, r.value);
    }
    out
}

/// The page of an archive's series: one figure each, and a table of what
/// the latest run of each says.
pub fn page(archive: &str, figures: &[Figure], generated: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>linerate history</title>\
         <style>{}</style></head><body>\n<h1>linerate history</h1>\n<p>{} series from {}; generated {} \
         by linerate {}.</p>\n",
        crate::html::STYLE,
        figures.len(),
        escape(archive),
        escape(generated),
        env!("CARGO_PKG_VERSION")
    );
    for f in figures {
        crate::html::figure(&mut h, f);
    }
    h.push_str("</body></html>\n");
    h
}
