//! The dashboard's pages: plain HTML with inline SVG and style, a little
//! inline script only to reload the grid; every link works without it.

use std::fmt::Write as _;

use linerate_archive::{Judgement, Unit};
use linerate_report::history_figures::{Said, SeriesHistory};
use linerate_report::html::{STYLE, escape};

use crate::board::{Board, CellState, SeriesState};

/// Seconds between the grid's reloads (with JavaScript on).
pub const REFRESH_SECONDS: u32 = 30;

const GRID_STYLE: &str = "table.grid td.cell{min-width:7em;text-align:center}\
.state-regression{background:#d73027;color:#fff}.state-improvement{background:#4575b4;color:#fff}\
.state-normal{background:#1a9850;color:#fff}.state-learning{background:#fee08b}\
.state-stale{background:#bbb;color:#555}td.cell a{color:inherit;display:block;padding:.2em}\
nav.top a{margin-right:1em}.legend span{padding:.1em .5em;margin-right:.4em}";

fn head(h: &mut String, title: &str, refresh: bool) {
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}\n{GRID_STYLE}</style></head><body>\n<nav class=\"top\"><a href=\"/\">Grid</a>\
         <a href=\"/regressions\">Regressions</a><a href=\"/metrics\">Metrics</a></nav>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    if refresh {
        let _ = writeln!(
            h,
            "<script>setTimeout(function(){{location.reload()}},{})</script>",
            REFRESH_SECONDS * 1000
        );
    }
}

fn foot(h: &mut String, board: &Board) {
    let _ = writeln!(
        h,
        "<p><small>Archive {}; read {}; linerate {}. Read-only.</small></p></body></html>",
        escape(&board.place),
        escape(&when(board.now)),
        env!("CARGO_PKG_VERSION")
    );
}

/// A time as the pages write it: UTC to the second.
pub fn when(at: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(at.max(0.0));
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .replace('T', " ")
}

/// A series' figure in its unit, short.
pub fn figure_text(unit: Unit, value: Option<f64>) -> String {
    let Some(v) = value else {
        return "-".to_string();
    };
    match unit {
        Unit::RoundTripMicroseconds if v >= 1000.0 => format!("{:.2} ms", v / 1000.0),
        Unit::RoundTripMicroseconds => format!("{v:.1} µs"),
        _ if v >= 1e9 => format!("{:.2} Gbit/s", v / 1e9),
        _ => format!("{:.1} Mbit/s", v / 1e6),
    }
}

/// What a series' state says in words, for a cell's title.
fn state_words(s: &SeriesState) -> String {
    match (&s.state, &s.judgement) {
        (CellState::Stale, _) => format!(
            "stale: latest run {} ago",
            humantime::format_duration(std::time::Duration::from_secs(s.age_seconds as u64))
        ),
        (_, Judgement::TooFewRuns { have, need }) => {
            format!("learning its normal: {have} of {need} runs")
        }
        (_, Judgement::Normal(b)) => format!(
            "normal {}-{}",
            figure_text(s.summary.unit, Some(b.low)),
            figure_text(s.summary.unit, Some(b.high))
        ),
        (_, Judgement::Regression(c)) | (_, Judgement::Improvement(c)) => format!(
            "{:+.0} % against its normal {}-{}, {} run(s) in a row",
            c.relative * 100.0,
            figure_text(s.summary.unit, Some(c.band.low)),
            figure_text(s.summary.unit, Some(c.band.high)),
            c.runs
        ),
    }
}

/// The grid page: a table per kind, rows the sources, columns the
/// destinations, each cell its series' latest figures coloured by state.
pub fn grid(board: &Board) -> String {
    let mut h = String::new();
    head(&mut h, "linerate dashboard", true);
    h.push_str(
        "<p class=\"legend\"><span class=\"state-normal\">normal</span><span class=\"state-regression\">\
         regression</span><span class=\"state-improvement\">improvement</span><span class=\"state-learning\">\
         learning its normal</span><span class=\"state-stale\">stale</span></p>\n",
    );
    if board.series.is_empty() {
        h.push_str("<p>The archive holds no series with a figure in this period.</p>\n");
    }
    for kind in board.kinds() {
        let of_kind: Vec<&SeriesState> = board
            .series
            .iter()
            .filter(|s| s.summary.key.kind == kind)
            .collect();
        let mut sources: Vec<&str> = of_kind
            .iter()
            .map(|s| s.summary.key.source.as_str())
            .collect();
        let mut destinations: Vec<&str> = of_kind
            .iter()
            .map(|s| s.summary.key.destination.as_str())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        destinations.sort_unstable();
        destinations.dedup();
        let _ = write!(
            h,
            "<h2>{k}</h2>\n<table class=\"grid\" data-kind=\"{k}\"><tr><th>from \\ to</th>",
            k = escape(kind)
        );
        for d in &destinations {
            let _ = write!(h, "<th>{}</th>", escape(d));
        }
        h.push_str("</tr>\n");
        for src in &sources {
            let _ = write!(h, "<tr><th>{}</th>", escape(src));
            for dst in &destinations {
                let here: Vec<&&SeriesState> = of_kind
                    .iter()
                    .filter(|s| s.summary.key.source == *src && s.summary.key.destination == *dst)
                    .collect();
                cell(&mut h, src, dst, &here);
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    if board.without_figure > 0 {
        let _ = writeln!(
            h,
            "<p><small>{} series without one figure to show (studies) are left out.</small></p>",
            board.without_figure
        );
    }
    foot(&mut h, board);
    h
}

fn cell(h: &mut String, src: &str, dst: &str, here: &[&&SeriesState]) {
    let Some(state) = here.iter().map(|s| s.state).max() else {
        h.push_str("<td class=\"cell empty\"></td>");
        return;
    };
    let _ = write!(
        h,
        "<td class=\"cell state-{st}\" data-state=\"{st}\" data-source=\"{}\" data-destination=\"{}\">",
        escape(src),
        escape(dst),
        st = state.as_str()
    );
    for s in here {
        let settings: Vec<String> = s
            .summary
            .key
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(
            h,
            "<a href=\"/series/{id}\" data-series=\"{id}\" data-state=\"{st}\" title=\"{tip}\">{fig}</a>",
            id = escape(&s.summary.id),
            st = s.state.as_str(),
            tip = escape(&format!(
                "{} ({}) {}; {}",
                s.summary.key.tool,
                settings.join(" "),
                when(s.latest.started_at),
                state_words(s)
            )),
            fig = escape(&figure_text(s.summary.unit, s.latest.value)),
        );
    }
    h.push_str("</td>");
}

/// A series' page: its figure over time with the normal band and the
/// named runs, its latest verdict sentence, and its latest runs.
pub fn series(board: &Board, s: &SeriesState, history: &SeriesHistory, svg: &str) -> String {
    let mut h = String::new();
    head(&mut h, &history.title, false);
    let _ = writeln!(
        h,
        "<p class=\"state-{st}\" data-state=\"{st}\" id=\"state\">{} - {}</p>",
        escape(&figure_text(s.summary.unit, s.latest.value)),
        escape(&state_words(s)),
        st = s.state.as_str()
    );
    if let Some(sentence) = &s.figures.sentence {
        let _ = writeln!(
            h,
            "<p id=\"verdict\"><b>Latest verdict</b>: {}</p>",
            escape(sentence)
        );
    }
    let _ = writeln!(
        h,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        escape(&history.about)
    );
    h.push_str(
        "<table><tr><th>started (UTC)</th><th>figure</th><th>normal</th><th>said</th></tr>\n",
    );
    for r in history.runs.iter().rev().take(30) {
        let band = r.band.map_or("-".to_string(), |(lo, hi)| {
            format!(
                "{}-{}",
                figure_text(s.summary.unit, Some(lo)),
                figure_text(s.summary.unit, Some(hi))
            )
        });
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&when(r.at)),
            escape(&figure_text(s.summary.unit, Some(r.value))),
            escape(&band),
            said_word(r.said)
        );
    }
    h.push_str("</table>\n");
    foot(&mut h, board);
    h
}

fn said_word(said: Said) -> &'static str {
    match said {
        Said::Normal => "normal",
        Said::Outside => "outside once",
        Said::Regression => "regression",
        Said::Improvement => "improvement",
    }
}

/// A regression named in a series' history: the series, when it was first
/// named, and whether it still holds.
#[derive(Debug, Clone)]
pub struct Named {
    /// The series' title.
    pub title: String,
    /// Its id.
    pub series: String,
    /// When the rule first named it.
    pub first_at: f64,
    /// The figure then and the band it left.
    pub value: f64,
    /// The band it left.
    pub band: Option<(f64, f64)>,
    /// The series' unit.
    pub unit: Unit,
    /// Its latest run still in it.
    pub current: bool,
}

/// The regressions page: those that hold now first, then those named in
/// the period that ended.
pub fn regressions(board: &Board, named: &[Named]) -> String {
    let mut h = String::new();
    head(&mut h, "Regressions", true);
    let (now, past): (Vec<&Named>, Vec<&Named>) = named.iter().partition(|n| n.current);
    for (title, list) in [("Holding now", now), ("Named before, since ended", past)] {
        let _ = writeln!(h, "<h2>{title}</h2>");
        if list.is_empty() {
            h.push_str("<p>None.</p>\n");
            continue;
        }
        h.push_str("<table class=\"regressions\"><tr><th>series</th><th>first named (UTC)</th><th>figure</th><th>normal it left</th></tr>\n");
        for n in list {
            let band = n.band.map_or("-".to_string(), |(lo, hi)| {
                format!(
                    "{}-{}",
                    figure_text(n.unit, Some(lo)),
                    figure_text(n.unit, Some(hi))
                )
            });
            let _ = writeln!(
                h,
                "<tr data-series=\"{id}\"><td><a href=\"/series/{id}\">{}</a></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                escape(&n.title),
                escape(&when(n.first_at)),
                escape(&figure_text(n.unit, Some(n.value))),
                escape(&band),
                id = escape(&n.series),
            );
        }
        h.push_str("</table>\n");
    }
    foot(&mut h, board);
    h
}

/// The first run of each streak of runs named a regression in `history`.
pub fn named_in(history: &SeriesHistory, unit: Unit, current: bool) -> Vec<Named> {
    let mut out = Vec::new();
    let mut previous = Said::Normal;
    let last = history.runs.len().saturating_sub(1);
    for (i, r) in history.runs.iter().enumerate() {
        if r.said == Said::Regression && previous != Said::Regression {
            let streak_ends = history.runs[i..]
                .iter()
                .position(|x| x.said != Said::Regression)
                .map(|p| i + p);
            out.push(Named {
                title: history.title.clone(),
                series: history.id.clone(),
                first_at: r.at,
                value: r.value,
                band: r.band,
                unit,
                current: current && streak_ends.is_none_or(|e| e > last),
            });
        }
        previous = r.said;
    }
    out
}

/// The page for a path no series has.
pub fn not_found(what: &str) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title>\
         <style>{STYLE}</style></head><body><h1>Not found</h1><p>{}</p><p><a href=\"/\">The grid</a></p></body></html>",
        escape(what)
    );
    h
}
