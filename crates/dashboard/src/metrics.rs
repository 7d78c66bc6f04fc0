//! `/metrics`: each series' latest figures in the Prometheus text format
//! (version 0.0.4), one gauge family a figure, labelled by the series'
//! hosts, kind, tool, path and parameters, with names and units as
//! Prometheus asks: base units (`_bytes_per_second`, `_seconds`, which
//! promtool's lint holds to) and percentiles as a label of their own
//! (`quantile` belongs to summaries) (docs/dashboard.md#metrics).

use std::fmt::Write as _;

use linerate_archive::Unit;

use crate::board::{Board, CellState, SeriesState};

/// The content type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A sample of a series: its percentile label, if any, and its value.
type Sample = (Option<&'static str>, f64);

/// A gauge family: its name, help, and each series' samples.
struct Family {
    name: &'static str,
    help: &'static str,
    values: fn(&SeriesState) -> Vec<Sample>,
}

const FAMILIES: [Family; 6] = [
    Family {
        name: "linerate_throughput_bytes_per_second",
        help: "Payload rate of the series' latest run.",
        values: |s| match s.summary.unit {
            Unit::BitsPerSecond => s
                .latest
                .value
                .map(|v| (None, v / 8.0))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        },
    },
    Family {
        name: "linerate_round_trip_seconds",
        help: "Round trip percentiles of the series' latest latency run.",
        values: |s| {
            s.figures
                .round_trip_us
                .map(|[p50, p90, p99]| {
                    vec![
                        (Some("50"), p50 / 1e6),
                        (Some("90"), p90 / 1e6),
                        (Some("99"), p99 / 1e6),
                    ]
                })
                .unwrap_or_default()
        },
    },
    Family {
        name: "linerate_retransmitted_segments",
        help: "Segments the senders of the series' latest run retransmitted.",
        values: |s| {
            s.figures
                .retransmits
                .map(|r| (None, r as f64))
                .into_iter()
                .collect()
        },
    },
    Family {
        name: "linerate_regression",
        help: "1 when the series' latest run is a regression the archive's rule named, else 0.",
        values: |s| {
            let named = matches!(s.judgement, linerate_archive::Judgement::Regression(_));
            vec![(None, if named { 1.0 } else { 0.0 })]
        },
    },
    Family {
        name: "linerate_stale",
        help: "1 when the series' latest run is older than its runs are usually apart, else 0.",
        values: |s| {
            vec![(
                None,
                if s.state == CellState::Stale {
                    1.0
                } else {
                    0.0
                },
            )]
        },
    },
    Family {
        name: "linerate_result_age_seconds",
        help: "Seconds since the series' latest run started.",
        values: |s| vec![(None, s.age_seconds)],
    },
];

/// The board in the Prometheus text format.
pub fn render(board: &Board) -> String {
    let mut out = String::new();
    for family in &FAMILIES {
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} gauge", family.name);
        for s in &board.series {
            let labels = labels(s);
            for (percentile, value) in (family.values)(s) {
                let mut set = labels.clone();
                if let Some(p) = percentile {
                    set.push(("percentile".to_string(), p.to_string()));
                }
                let _ = writeln!(out, "{}{} {}", family.name, label_set(&set), number(value));
            }
        }
    }
    out
}

/// The labels that tell a series apart: who, what, where, and its
/// parameters (each a label of its own, renamed where it would clash).
fn labels(s: &SeriesState) -> Vec<(String, String)> {
    let key = &s.summary.key;
    let mut labels = vec![
        ("series".to_string(), s.summary.id.clone()),
        ("kind".to_string(), key.kind.clone()),
        ("tool".to_string(), key.tool.clone()),
        ("source".to_string(), key.source.clone()),
        ("destination".to_string(), key.destination.clone()),
        ("path".to_string(), key.path.clone()),
    ];
    for (name, value) in &key.settings {
        let mut name = label_name(name);
        if labels.iter().any(|(n, _)| *n == name) || name == "percentile" {
            name = format!("setting_{name}");
        }
        let value = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        labels.push((name, value));
    }
    labels
}

/// `name` as a label name: letters, digits and underscores, not starting
/// with a digit nor with the two underscores Prometheus keeps for itself.
pub fn label_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) || out.starts_with("__") {
        out.insert_str(0, "p_");
    }
    out
}

/// `{a="1",b="x"}` with each value escaped as the format asks.
fn label_set(labels: &[(String, String)]) -> String {
    let inner: Vec<String> = labels
        .iter()
        .map(|(n, v)| format!("{n}=\"{}\"", escape_value(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A label value with backslash, double quote and line feed escaped.
pub fn escape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value as the format writes it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_follow_the_format() {
        assert_eq!(label_name("write_len"), "write_len");
        assert_eq!(label_name("9x"), "p_9x");
        assert_eq!(label_name("__name"), "p___name");
        assert_eq!(label_name("a-b.c"), "a_b_c");
        assert_eq!(escape_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(1.5e9), "1500000000");
    }
}
