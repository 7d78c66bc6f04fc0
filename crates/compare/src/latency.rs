//! Round trips: linerate latency against sockperf, qperf and iperf2
//! --bounceback, one message size, over TCP or UDP.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::tools::convert;
use crate::tools::process::Server;
use crate::tools::rounds::LatencyPeer;
use crate::tools::tool::ComparedTool;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::json;

use super::{Asked, CompareSpec, Ran};
use crate::CompareError;
use crate::place::{ClientRun, on_free_port, run_against};
use crate::rounds::{Event, Progress, linerate_doc, medians, nth_in_round, point, resolve};

/// How every tool's receive waits: each peer's default, and linerate's with
/// `--busy-poll off` (docs/guide.md#linerate-compare).
const RECEIVE: &str = "blocking";

/// One round trip run: its document, its central figure and p99 in
/// microseconds, and which statistic the central figure is.
struct RoundTrips {
    doc: ResultDoc,
    central_us: f64,
    p99_us: Option<f64>,
    statistic: &'static str,
}

pub(super) fn run(asked: Asked, on: &mut dyn FnMut(Event)) -> Result<Ran, CompareError> {
    let Asked { spec, place, names } = asked;
    let (size, udp) = (spec.size, spec.udp);
    let (ready, skipped) = resolve(names, &spec.linerate, &|t: LatencyPeer| t.unable(size, udp))?;
    skipped.iter().for_each(|s| on(Event::Skipped(s.clone())));
    let mut servers = Vec::new();
    for r in &ready {
        let (port, server) = on_free_port(|port| {
            let argv = place.server(r.tool.server_argv(&r.exe, &place.host, port, udp));
            let within = Duration::from_secs(5);
            Ok(Server::start_on(
                argv,
                port,
                r.tool.server_is_udp(udp),
                within,
            )?)
        })?;
        servers.push((r, port, server));
    }
    let started = SystemTime::now();
    let mut points = Vec::new();
    let mut progress = Progress::of(spec.rounds as usize * servers.len());
    for round in 0..spec.rounds {
        for k in 0..servers.len() {
            let (r, port, server) = &servers[nth_in_round(round, k, servers.len())];
            let name = r.tool.name();
            let argv = place.client(r.tool.client_argv(
                &r.exe,
                &place.host,
                *port,
                size,
                spec.seconds,
                udp,
            ));
            let run = run_against(name, &argv, spec.seconds.into(), server)?;
            let rt = round_trips(spec, r.tool, argv, run)?;
            on(progress.ran(
                round,
                name,
                format!("{} {:>9.1} us", rt.statistic, rt.central_us),
            ));
            let factors = json!({
                "tool": name, "round": round + 1, "size": size,
                "rtt_us": rt.central_us, "p99_us": rt.p99_us, "statistic": rt.statistic,
                "receive": RECEIVE,
            });
            points.push(point(name, factors, rt.doc));
        }
    }
    let protocol = if udp { "udp" } else { "tcp" };
    Ok(Ran::new(
        started,
        &ready,
        skipped,
        json!({"size": size, "protocol": protocol}),
        points,
    ))
}

/// A client's output as round trips.
fn round_trips(
    spec: &CompareSpec,
    tool: LatencyPeer,
    argv: Vec<String>,
    run: ClientRun,
) -> Result<RoundTrips, CompareError> {
    if tool == LatencyPeer::Linerate {
        let doc = linerate_doc("latency", &run.stdout)?;
        let rt = doc
            .latency
            .as_ref()
            .and_then(|l| l.steps.first())
            .map(|s| s.round_trip_us)
            .ok_or(CompareError::NoLatencyStep)?;
        return Ok(RoundTrips {
            doc,
            central_us: rt.p50,
            p99_us: Some(rt.p99),
            statistic: "p50",
        });
    }
    let parsed = tool.parse(&run.stdout)?;
    let protocol = if spec.udp { "udp" } else { "tcp" };
    let params = json!({"size": spec.size, "protocol": protocol});
    Ok(RoundTrips {
        doc: convert::latency_to_result(tool.name(), &parsed, argv, run.when, params),
        central_us: parsed.central_us(),
        p99_us: parsed.p99_us,
        statistic: if parsed.p50_us.is_some() {
            "p50"
        } else {
            "mean"
        },
    })
}

/// Median round trips and tails per tool with their spread over rounds,
/// linerate's against the fastest peer's, medians against medians only
/// (a peer that gives a mean is shown, never used for a ratio), and a
/// table for people.
pub(super) fn summarise(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let rtt = medians(points, "rtt_us");
    let p99 = medians(points, "p99_us");
    let mut findings = BTreeMap::new();
    let mut table = format!(
        "every tool blocks in its receive (linerate --busy-poll off)\n{:<10} {:>10} {:>12} {:>20} {:>12}\n",
        "tool", "statistic", "round trip", "range over rounds", "p99"
    );
    let statistic = |tool: &str| {
        points
            .iter()
            .find(|p| p.series == tool)
            .and_then(|p| p.factors.get("statistic").and_then(|s| s.as_str()))
            .unwrap_or("")
    };
    for (tool, v) in &rtt {
        findings.insert(format!("median_rtt_us/{tool}"), *v);
        let (lo, hi) = range(points, tool, "rtt_us");
        let tail = p99.get(tool).map_or("-".into(), |v| format!("{v:.1} us"));
        let central = format!("{v:.1} us");
        let spread = format!("{lo:.1}-{hi:.1} us");
        table.push_str(&format!(
            "{tool:<10} {:>10} {central:>12} {spread:>20} {tail:>12}\n",
            statistic(tool)
        ));
    }
    for (tool, v) in &p99 {
        findings.insert(format!("median_p99_us/{tool}"), *v);
    }
    // The lowest peer by a figure, among peers that gave a median.
    let best = |by: &BTreeMap<String, f64>| {
        by.iter()
            .filter(|(t, _)| t.as_str() != "linerate" && statistic(t) == "p50")
            .filter(|(_, v)| **v > 0.0)
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(t, v)| (t.clone(), *v))
    };
    for (figure, by, key) in [
        ("median round trip (p50)", &rtt, "linerate_over_best_peer"),
        ("p99", &p99, "linerate_p99_over_best_peer"),
    ] {
        match (by.get("linerate"), best(by)) {
            (Some(mine), Some((peer, theirs))) => {
                findings.insert(key.into(), mine / theirs);
                table.push_str(&format!(
                    "linerate / best peer, {figure}: {:.2} ({peer}; lower is better)\n",
                    mine / theirs
                ));
            }
            (Some(_), None) => table.push_str(&format!(
                "linerate / best peer, {figure}: - (no peer gave a median to compare with)\n"
            )),
            _ => {}
        }
    }
    (findings, table)
}

/// The least and the most of factor `key` over `tool`'s rounds.
fn range(points: &[StudyPoint], tool: &str, key: &str) -> (f64, f64) {
    points
        .iter()
        .filter(|p| p.series == tool)
        .filter_map(|p| p.factors.get(key).and_then(|v| v.as_f64()))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
}

/// What each finding's name means.
pub(super) const DEFINITIONS: [(&str, &str); 3] = [
    (
        "median_rtt_us",
        "For each tool, the median over rounds (the mean of the middle two for an even count) of its central round-trip figure: the median (p50) where the tool gives one (linerate, sockperf --full-rtt), else its mean (iperf2 --bounceback; qperf's mean one-way latency, doubled). Every tool blocks in its receive: linerate runs with --busy-poll off.",
    ),
    (
        "linerate_over_best_peer",
        "linerate's median p50 round trip divided by the lowest among peers that give a p50 (a mean is never compared with a median): below 1 is faster.",
    ),
    (
        "linerate_p99_over_best_peer",
        "linerate's median p99 divided by the lowest p99 among peers that give a p50 and a p99: below 1 is a shorter tail.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::throughput_doc as doc;

    #[test]
    fn the_fastest_peer_sets_the_ratio_and_a_mean_is_named_as_one() {
        let p = |t: &str, rtt: f64, p99: Option<f64>, statistic: &str| {
            let f = json!({"rtt_us": rtt, "p99_us": p99, "statistic": statistic});
            point(t, f, doc(0.0))
        };
        let points = vec![
            p("linerate", 20.0, Some(30.0), "p50"),
            p("sockperf", 25.0, Some(60.0), "p50"),
            p("iperf2", 40.0, None, "mean"),
        ];
        let (f, table) = summarise(&points);
        assert_eq!(f["linerate_over_best_peer"], 0.8);
        assert_eq!(f["linerate_p99_over_best_peer"], 0.5);
        assert!(!f.contains_key("median_p99_us/iperf2"));
        let iperf2 = table.lines().find(|l| l.starts_with("iperf2")).unwrap();
        assert!(iperf2.contains("mean") && iperf2.ends_with("-"), "{table}");
        assert!(
            table.starts_with("every tool blocks in its receive"),
            "{table}"
        );
    }

    #[test]
    fn a_mean_is_never_the_best_peer_and_rounds_show_their_range() {
        let p = |t: &str, rtt: f64, statistic: &str| {
            let f = json!({"rtt_us": rtt, "p99_us": rtt * 2.0, "statistic": statistic});
            point(t, f, doc(0.0))
        };
        // iperf2's mean is the lowest figure, but a mean is not a median.
        let points = vec![
            p("linerate", 7.40, "p50"),
            p("linerate", 53.56, "p50"),
            p("sockperf", 20.0, "p50"),
            p("iperf2", 5.0, "mean"),
        ];
        let (f, table) = summarise(&points);
        assert_eq!(f["median_rtt_us/linerate"], 30.48, "the mean of two rounds");
        assert_eq!(f["linerate_over_best_peer"], 30.48 / 20.0);
        assert!(table.contains("(sockperf; lower is better)"), "{table}");
        let row = table.lines().find(|l| l.starts_with("linerate ")).unwrap();
        assert!(row.contains("7.4-53.6 us"), "{table}");
        let (f, table) = summarise(
            &points[..2]
                .iter()
                .chain(&points[3..])
                .cloned()
                .collect::<Vec<_>>(),
        );
        assert!(!f.contains_key("linerate_over_best_peer"));
        assert!(table.contains("no peer gave a median"), "{table}");
    }
}
