//! Round trips: linerate latency against sockperf, qperf and iperf2
//! --bounceback, one message size, over TCP or UDP.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use linerate_peers::convert;
use linerate_peers::process::Server;
use linerate_peers::rounds::LatencyPeer;
use linerate_peers::tool::PeerTool;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::json;

use super::{Asked, CompareSpec, Ran};
use crate::HarnessError;
use crate::place::{ClientRun, free_port, run_against};
use crate::rounds::{Event, Progress, linerate_doc, medians, nth_in_round, point, resolve};

/// One round trip run: its document, its central figure and p99 in
/// microseconds, and which statistic the central figure is.
struct RoundTrips {
    doc: ResultDoc,
    central_us: f64,
    p99_us: Option<f64>,
    statistic: &'static str,
}

pub(super) fn run(asked: Asked, on: &mut dyn FnMut(Event)) -> Result<Ran, HarnessError> {
    let Asked { spec, place, names } = asked;
    let (size, udp) = (spec.size, spec.udp);
    let (ready, skipped) = resolve(names, &spec.linerate, &|t: LatencyPeer| t.unable(size, udp))?;
    skipped.iter().for_each(|s| on(Event::Skipped(s.clone())));
    let mut servers = Vec::new();
    for r in &ready {
        let port = free_port()?;
        let argv = place.server(r.tool.server_argv(&r.exe, &place.host, port, udp));
        let within = Duration::from_secs(5);
        let server = Server::start_on(argv, port, r.tool.server_is_udp(udp), within)?;
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
) -> Result<RoundTrips, HarnessError> {
    if tool == LatencyPeer::Linerate {
        let doc = linerate_doc("latency", &run.stdout)?;
        let rt = doc
            .latency
            .as_ref()
            .and_then(|l| l.steps.first())
            .map(|s| s.round_trip_us)
            .ok_or(HarnessError::NoLatencyStep)?;
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

/// Median round trips and tails per tool, linerate against the fastest
/// peer, and a table for people.
pub(super) fn summarise(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let rtt = medians(points, "rtt_us");
    let p99 = medians(points, "p99_us");
    let mut findings = BTreeMap::new();
    let mut table = format!(
        "{:<10} {:>10} {:>12} {:>12}\n",
        "tool", "statistic", "round trip", "p99"
    );
    for (tool, v) in &rtt {
        findings.insert(format!("median_rtt_us/{tool}"), *v);
        let statistic = points
            .iter()
            .find(|p| &p.series == tool)
            .and_then(|p| p.factors.get("statistic").and_then(|s| s.as_str()))
            .unwrap_or("");
        let tail = p99.get(tool).map_or("-".into(), |v| format!("{v:.1} us"));
        let central = format!("{v:.1} us");
        table.push_str(&format!(
            "{tool:<10} {statistic:>10} {central:>12} {tail:>12}\n"
        ));
    }
    for (tool, v) in &p99 {
        findings.insert(format!("median_p99_us/{tool}"), *v);
    }
    let best_peer = rtt
        .iter()
        .filter(|(t, _)| t.as_str() != "linerate")
        .map(|(_, v)| *v)
        .fold(f64::INFINITY, f64::min);
    if let Some(mine) = rtt.get("linerate")
        && best_peer.is_finite()
        && best_peer > 0.0
    {
        findings.insert("linerate_over_best_peer".into(), mine / best_peer);
        table.push_str(&format!(
            "linerate / best peer (round trip; lower is better): {:.2}\n",
            mine / best_peer
        ));
    }
    if let (Some(mine), Some(theirs)) = (p99.get("linerate"), p99.get("sockperf")) {
        findings.insert("linerate_p99_over_sockperf".into(), mine / theirs);
    }
    (findings, table)
}

/// What each finding's name means.
pub(super) const DEFINITIONS: [(&str, &str); 2] = [
    (
        "median_rtt_us",
        "For each tool, the median over rounds of its central round-trip figure: the median (p50) where the tool gives one (linerate, sockperf --full-rtt), else its mean (iperf2 --bounceback; qperf's mean one-way latency, doubled).",
    ),
    (
        "linerate_over_best_peer",
        "linerate's median round trip divided by the lowest peer's: below 1 is faster.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rounds::tests::doc;

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
        assert_eq!(f["linerate_p99_over_sockperf"], 0.5);
        assert!(!f.contains_key("median_p99_us/iperf2"));
        let iperf2 = table.lines().find(|l| l.starts_with("iperf2")).unwrap();
        assert!(iperf2.contains("mean") && iperf2.ends_with("-"), "{table}");
    }
}
