//! UDP at one rate: linerate bench --udp against iperf2 -u and iperf3 -u,
//! one stream, what each receiver took, lost and saw as jitter.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::tools::convert;
use crate::tools::datagrams::UdpPeer;
use crate::tools::process::Server;
use crate::tools::tool::ComparedTool;
use linerate_probe::units::fmt_rate;
use linerate_result::stats::median;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::json;

use super::{Asked, CompareSpec, Ran};
use crate::CompareError;
use crate::place::{ClientRun, on_free_port, run_against};
use crate::rounds::{Event, Progress, Ready, linerate_doc, medians, nth_in_round, point, resolve};

pub(super) fn run(asked: Asked, on: &mut dyn FnMut(Event)) -> Result<Ran, CompareError> {
    let Asked { spec, place, names } = asked;
    let (rate, len) = (spec.rate_bps, spec.len);
    let (ready, skipped) = resolve(names, &spec.linerate, &|_: UdpPeer| None)?;
    skipped.iter().for_each(|s| on(Event::Skipped(s.clone())));
    let start = |r: &Ready<UdpPeer>, port: u16| {
        let argv = place.server(r.tool.server_argv(&r.exe, port));
        Server::start_on(argv, port, r.tool.server_is_udp(), Duration::from_secs(5))
    };
    let mut servers = Vec::new();
    for r in &ready {
        let (port, server) = on_free_port(|port| Ok(start(r, port)?))?;
        servers.push((r, port, server));
    }
    let started = SystemTime::now();
    let mut points = Vec::new();
    let mut progress = Progress::of(spec.rounds as usize * servers.len());
    for round in 0..spec.rounds {
        for k in 0..servers.len() {
            let i = nth_in_round(round, k, servers.len());
            let (r, port) = (servers[i].0, servers[i].1);
            if r.tool.fresh_server_per_run() && round > 0 {
                // The old server must end before the new one binds the port.
                servers[i].2.stop();
                servers[i].2 = start(r, port)?;
            }
            let name = r.tool.name();
            let argv = place.client(r.tool.client_argv(
                &r.exe,
                &place.host,
                port,
                rate,
                len,
                spec.seconds,
            ));
            let run = run_against(name, &argv, spec.seconds.into(), &servers[i].2)?;
            let (doc, loss, jitter) = received(spec, r.tool, argv, run)?;
            on(progress.ran(
                round,
                name,
                format!(
                    "{:>14} received, {:.3} % lost, jitter {jitter:.1} us",
                    fmt_rate(doc.summary.bits_per_second),
                    loss * 100.0
                ),
            ));
            let factors = json!({
                "tool": name, "round": round + 1, "rate_bps": rate, "len": len,
                "loss": loss, "jitter_us": jitter,
            });
            points.push(point(name, factors, doc));
        }
    }
    Ok(Ran::new(
        started,
        &ready,
        skipped,
        json!({"rate_bps": rate, "len": len}),
        points,
    ))
}

/// A client's output as its document, the share of datagrams lost and
/// the jitter in microseconds.
fn received(
    spec: &CompareSpec,
    tool: UdpPeer,
    argv: Vec<String>,
    run: ClientRun,
) -> Result<(ResultDoc, f64, f64), CompareError> {
    if tool == UdpPeer::Linerate {
        let doc = linerate_doc("bench --udp", &run.stdout)?;
        let verdict = &doc.summary.verdict;
        let (loss, jitter) = (
            verdict.evidence_or_zero("loss"),
            verdict.evidence_or_zero("jitter_us"),
        );
        return Ok((doc, loss, jitter));
    }
    let parsed = tool.parse(&run.stdout)?;
    let params = json!({"rate_bps": spec.rate_bps, "len": spec.len});
    let doc = convert::udp_to_result(tool.name(), &parsed, argv, run.when, run.cpu, params);
    Ok((doc, parsed.loss(), parsed.jitter_us))
}

/// Medians of what each receiver took, lost and saw as jitter, and a
/// table for people.
pub(super) fn summarise(points: &[StudyPoint]) -> (BTreeMap<String, f64>, String) {
    let mut received: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in points {
        received
            .entry(p.series.clone())
            .or_default()
            .push(p.result.summary.bits_per_second);
    }
    let loss = medians(points, "loss");
    let jitter = medians(points, "jitter_us");
    let mut findings = BTreeMap::new();
    let mut table = format!(
        "{:<10} {:>14} {:>10} {:>12}\n",
        "tool", "received", "lost", "jitter"
    );
    for (tool, v) in &received {
        let m = median(v.iter().copied());
        let (lost, jit) = (
            loss.get(tool).copied().unwrap_or(0.0),
            jitter.get(tool).copied().unwrap_or(0.0),
        );
        findings.insert(format!("median_bps/{tool}"), m);
        findings.insert(format!("median_loss/{tool}"), lost);
        findings.insert(format!("median_jitter_us/{tool}"), jit);
        table.push_str(&format!(
            "{tool:<10} {:>14} {:>9.3}% {:>9.1} us\n",
            fmt_rate(m),
            lost * 100.0,
            jit
        ));
    }
    (findings, table)
}

/// What each finding's name means.
pub(super) const DEFINITIONS: [(&str, &str); 2] = [
    (
        "median_bps",
        "For each tool, the median over rounds of the payload its receiver took per second, one stream at the asked rate.",
    ),
    (
        "median_loss",
        "The median over rounds of the datagrams lost over those sent, as the tool's receiver counted them.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::throughput_doc as doc;

    #[test]
    fn medians_of_rate_loss_and_jitter_per_tool() {
        let p = |t: &str, bps: f64, loss: f64| {
            point(t, json!({"loss": loss, "jitter_us": 5.0}), doc(bps))
        };
        let points = vec![
            p("linerate", 1e9, 0.0),
            p("linerate", 0.9e9, 0.1),
            p("linerate", 0.95e9, 0.2),
            p("iperf3", 0.5e9, 0.5),
        ];
        let (f, table) = summarise(&points);
        assert_eq!(f["median_bps/linerate"], 0.95e9);
        assert_eq!(f["median_loss/linerate"], 0.1);
        assert_eq!(f["median_loss/iperf3"], 0.5);
        assert!(table.contains("50.000%"), "{table}");
    }
}
