//! Memory to memory: linerate bench against iperf2, iperf3 and nuttcp at
//! each stream count.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::tools::convert::{self, Cpu};
use crate::tools::process::Server;
use crate::tools::tool::{ComparedTool, Ports};
use crate::tools::{Tool, parse};
use linerate_probe::units::fmt_rate;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::json;

use super::{Asked, Ran};
use crate::CompareError;
use crate::place::{free_port, on_free_port, run_against};
use crate::rounds::{Event, Progress, linerate_doc, nth_in_round, point, resolve};

pub(super) fn run(asked: Asked, on: &mut dyn FnMut(Event)) -> Result<Ran, CompareError> {
    let Asked { spec, place, names } = asked;
    let (ready, skipped) = resolve::<Tool>(names, &spec.linerate, &|_| None)?;
    skipped.iter().for_each(|s| on(Event::Skipped(s.clone())));
    let mut servers = Vec::new();
    for r in &ready {
        // The data port is picked afresh with the control port each start.
        let (_, (ports, server)) = on_free_port(|control| {
            let ports = Ports {
                control,
                data: free_port()?,
            };
            let argv = place.server(r.tool.server_argv(&r.exe, ports));
            Ok((ports, Server::start(argv, control, Duration::from_secs(5))?))
        })?;
        servers.push((r, ports, server));
    }
    let started = SystemTime::now();
    let mut points = Vec::new();
    let mut progress = Progress::of(spec.rounds as usize * spec.streams.len() * servers.len());
    for round in 0..spec.rounds {
        for &n in &spec.streams {
            for k in 0..servers.len() {
                let (r, ports, server) = &servers[nth_in_round(round, k, servers.len())];
                let tool = r.tool;
                let argv =
                    place.client(tool.client_argv(&r.exe, &place.host, *ports, n, spec.seconds));
                let run = run_against(tool.name(), &argv, spec.seconds.into(), server)?;
                let doc = to_doc(tool, &run.stdout, n, argv, run.when, run.cpu)?;
                on(progress.ran(
                    round,
                    tool.name(),
                    format!("P{n:<3} {:>14}", fmt_rate(doc.summary.bits_per_second)),
                ));
                let factors = json!({"tool": tool.name(), "streams": n, "round": round + 1});
                points.push(point(tool.name(), factors, doc));
            }
        }
    }
    Ok(Ran::new(
        started,
        &ready,
        skipped,
        json!({"streams": spec.streams}),
        points,
    ))
}

/// How linerate runs beside the peers (docs/guide.md#linerate-compare).
pub(super) const PLAIN: &str = "linerate --affinity off --rx-poll off";

/// As [`summarise`], the table saying how linerate ran beside the peers.
pub(super) fn summarise_plain(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let (findings, table) = summarise(points);
    let note = format!(
        "every tool with the kernel's scheduling ({PLAIN}); Gbit/s, median (range over rounds)\n"
    );
    (findings, note + &table)
}

/// Medians per tool and stream count with their range over rounds,
/// linerate against the best peer, and a table for people (files mode
/// shares it: one stream count).
pub(super) fn summarise(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let mut by: BTreeMap<(u64, String), Vec<f64>> = BTreeMap::new();
    for p in points {
        let n = p
            .factors
            .get("streams")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let v = linerate_report::data::point_bps(p);
        by.entry((n, p.series.clone())).or_default().push(v);
    }
    let median = |v: &Vec<f64>| linerate_result::stats::median(v.iter().copied());
    let mut findings = BTreeMap::new();
    let mut tools: Vec<String> = by.keys().map(|k| k.1.clone()).collect();
    tools.sort();
    tools.dedup();
    if let Some(i) = tools.iter().position(|t| t == "linerate") {
        let l = tools.remove(i);
        tools.insert(0, l);
    }
    let mut streams: Vec<u64> = by.keys().map(|k| k.0).collect();
    streams.dedup();
    let mut table = format!("{:>8}", "streams");
    for t in &tools {
        table.push_str(&format!("{t:>22}"));
    }
    table.push_str("   linerate/best peer\n");
    for n in streams {
        table.push_str(&format!("{n:>8}"));
        let mut best_peer = 0.0f64;
        let mut mine = None;
        for t in &tools {
            match by.get(&(n, t.clone())) {
                Some(v) => {
                    let m = median(v);
                    findings.insert(format!("median_bps/{t}/P{n}"), m);
                    if t == "linerate" {
                        mine = Some(m);
                    } else {
                        best_peer = best_peer.max(m);
                    }
                    let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                        (lo.min(x), hi.max(x))
                    });
                    let cell = format!("{:.2} ({:.2}-{:.2})", m / 1e9, lo / 1e9, hi / 1e9);
                    table.push_str(&format!("{cell:>22}"));
                }
                None => table.push_str(&format!("{:>22}", "-")),
            }
        }
        match mine {
            Some(m) if best_peer > 0.0 => {
                findings.insert(format!("linerate_over_best_peer/P{n}"), m / best_peer);
                table.push_str(&format!("   {:.2}\n", m / best_peer));
            }
            _ => table.push_str("   -\n"),
        }
    }
    (findings, table)
}

/// A memory-mode run's output as a result document.
fn to_doc(
    tool: Tool,
    stdout: &str,
    streams: u32,
    argv: Vec<String>,
    when: SystemTime,
    cpu: Cpu,
) -> Result<ResultDoc, CompareError> {
    let run = match tool {
        Tool::Linerate => {
            return linerate_doc("bench", stdout);
        }
        Tool::Iperf2 => parse::iperf2_csv(stdout)?,
        Tool::Iperf3 => parse::iperf3_json(stdout)?,
        Tool::Nuttcp => parse::nuttcp_parse(stdout, streams)?,
    };
    let params = json!({"streams": streams});
    Ok(convert::to_result(
        tool.name(),
        &run,
        argv,
        when,
        cpu,
        params,
    ))
}

/// What each finding's name means.
pub(super) const DEFINITIONS: [(&str, &str); 2] = [
    (
        "median_bps",
        "For each tool and stream count, the median over rounds (the mean of the middle two for an even count) of the throughput the tool reports (received payload; iperf2's client reports bytes sent). linerate runs with --affinity off --rx-poll off, with the kernel's scheduling as the peers run.",
    ),
    (
        "linerate_over_best_peer",
        "linerate's median divided by the best peer's median at the same stream count.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::throughput_doc as doc;

    fn pts(rows: &[(&str, u32, f64)]) -> Vec<StudyPoint> {
        rows.iter()
            .map(|&(t, n, bps)| point(t, json!({"tool": t, "streams": n}), doc(bps)))
            .collect()
    }

    #[test]
    fn linerate_is_set_against_the_best_peer_at_each_stream_count() {
        let points = pts(&[
            ("iperf3", 1, 8e9),
            ("linerate", 1, 10e9),
            ("iperf2", 1, 9e9),
            ("linerate", 1, 12e9),
            ("linerate", 1, 11e9),
            ("iperf2", 4, 20e9),
            ("linerate", 4, 30e9),
        ]);
        let (f, table) = summarise(&points);
        assert_eq!(f["median_bps/linerate/P1"], 11e9);
        assert!((f["linerate_over_best_peer/P1"] - 11.0 / 9.0).abs() < 1e-9);
        assert_eq!(f["linerate_over_best_peer/P4"], 1.5);
        // linerate's column comes first, and a tool missing at a count is a dash.
        let header = table.lines().next().unwrap();
        assert!(header.find("linerate") < header.find("iperf2"), "{table}");
        assert!(table.lines().nth(2).unwrap().contains(" -"), "{table}");
        assert!(
            table
                .lines()
                .nth(1)
                .unwrap()
                .contains("11.00 (10.00-12.00)"),
            "{table}"
        );
        let (_, plain) = summarise_plain(&points);
        assert!(
            plain.starts_with("every tool with the kernel's scheduling"),
            "{plain}"
        );
    }

    #[test]
    fn without_linerate_there_is_no_ratio() {
        let (f, table) = summarise(&pts(&[("iperf2", 1, 1e9)]));
        assert!(!f.keys().any(|k| k.starts_with("linerate_over")));
        assert!(table.lines().nth(1).unwrap().ends_with("-"));
    }

    #[test]
    fn a_peer_output_that_does_not_parse_is_an_error_not_a_zero() {
        let cpu = Cpu::default();
        let e = to_doc(Tool::Iperf3, "not json", 1, vec![], SystemTime::now(), cpu);
        assert!(matches!(e, Err(CompareError::Peer(_))));
        let e = to_doc(Tool::Linerate, "", 1, vec![], SystemTime::now(), cpu);
        assert!(matches!(e, Err(CompareError::NoResult { .. })));
    }
}
