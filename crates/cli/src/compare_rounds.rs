//! `compare --mode latency` and `--mode udp`: linerate latency against
//! sockperf, qperf and iperf2 --bounceback, and linerate bench --udp against
//! iperf2 -u and iperf3 -u, under the same conditions, in alternating order,
//! repeated, into one `compare` document.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use linerate_peers::convert;
use linerate_peers::datagrams::UdpPeer;
use linerate_peers::process::Server;
use linerate_peers::rounds::LatencyPeer;
use linerate_peers::tool::{PeerTool, find_on_path};
use linerate_probe::units::fmt_rate;
use linerate_result::stats::median;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::{Value, json};

use crate::compare_place::{ClientRun, Place, free_port, run_against};
use crate::find_rate::udp_evidence;

/// What a latency or UDP comparison runs, from `compare`'s flags.
pub struct Settings {
    pub time: u32,
    pub rounds: u32,
    /// Latency: the message size, and whether over UDP.
    pub size: u32,
    pub udp: bool,
    /// UDP: the rate and the datagram size.
    pub bitrate: u64,
    pub len: u32,
    pub json: String,
}

/// A tool found and able to run, with its program.
struct Ready<T> {
    tool: T,
    exe: String,
}

/// The named tools that can run here (this linerate, the peers on PATH),
/// and those skipped with the reason and the package to install.
fn resolve<T: PeerTool>(
    names: &[String],
    unable: &dyn Fn(T) -> Option<String>,
) -> anyhow::Result<(Vec<Ready<T>>, Vec<Value>)> {
    let (mut ready, mut skipped) = (Vec::new(), Vec::new());
    for name in names {
        let Some(tool) = T::from_name(name) else {
            let known: Vec<&str> = T::ALL.iter().map(|t| t.name()).collect();
            bail!(
                "unknown tool {name:?} for this mode; known: {}",
                known.join(", ")
            );
        };
        if let Some(why) = unable(tool) {
            skip(&mut skipped, name, why, None);
            continue;
        }
        let exe = if tool.name() == "linerate" {
            Some(std::env::current_exe()?.to_string_lossy().into_owned())
        } else {
            find_on_path(tool.binary()).map(|p| p.to_string_lossy().into_owned())
        };
        match exe {
            Some(exe) => ready.push(Ready { tool, exe }),
            None => skip(
                &mut skipped,
                name,
                format!("{} is not installed", tool.binary()),
                Some(tool.package()),
            ),
        }
    }
    if ready.is_empty() {
        bail!("none of the requested tools can run here");
    }
    Ok((ready, skipped))
}

fn skip(skipped: &mut Vec<Value>, tool: &str, reason: String, package: Option<&str>) {
    eprintln!(
        "linerate compare: skipping {tool}: {reason}{}",
        package
            .map(|p| format!(" (Debian package {p})"))
            .unwrap_or_default()
    );
    skipped.push(json!({"tool": tool, "reason": reason, "package": package}));
}

fn point(tool: &str, factors: Value, result: ResultDoc) -> StudyPoint {
    StudyPoint {
        series: tool.into(),
        factors: serde_json::from_value(factors).unwrap_or_default(),
        result,
    }
}

/// The median of `key` over each tool's points.
fn medians(points: &[StudyPoint], key: &str) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in points {
        if let Some(v) = p.factors.get(key).and_then(|v| v.as_f64()) {
            by.entry(p.series.clone()).or_default().push(v);
        }
    }
    by.into_iter().map(|(t, v)| (t, median(v))).collect()
}

pub fn latency(a: &Settings, place: &Place, names: &[String]) -> anyhow::Result<()> {
    let (size, udp) = (a.size, a.udp);
    let (ready, skipped) = resolve(names, &|t: LatencyPeer| t.unable(size, udp))?;
    let mut servers = Vec::new();
    for r in &ready {
        let port = free_port()?;
        let argv = Place::wrap(
            &place.server_prefix,
            r.tool.server_argv(&r.exe, &place.host, port, udp),
        );
        let server = Server::start_on(
            argv,
            port,
            r.tool.server_is_udp(udp),
            Duration::from_secs(5),
        )?;
        servers.push((r, port, server));
    }
    let started = SystemTime::now();
    let mut points = Vec::new();
    let total = a.rounds as usize * servers.len();
    for round in 0..a.rounds {
        for k in 0..servers.len() {
            // Rotate the order each round so no tool always runs first.
            let (r, port, server) = &servers[(k + round as usize) % servers.len()];
            let name = r.tool.name();
            let argv = Place::wrap(
                &place.client_prefix,
                r.tool
                    .client_argv(&r.exe, &place.host, *port, size, a.time, udp),
            );
            let ClientRun { stdout, when, .. } = run_against(name, &argv, a.time, server)?;
            let (doc, central, p99, statistic) = match r.tool {
                LatencyPeer::Linerate => {
                    let doc: ResultDoc = serde_json::from_str(&stdout)
                        .context("linerate latency printed no result")?;
                    let rt = doc
                        .latency
                        .as_ref()
                        .and_then(|l| l.steps.first())
                        .map(|s| s.round_trip_us)
                        .context("linerate latency measured no step")?;
                    (doc, rt.p50, Some(rt.p99), "p50")
                }
                tool => {
                    let run = tool.parse(&stdout)?;
                    let statistic = if run.p50_us.is_some() { "p50" } else { "mean" };
                    let params = json!({"size": size, "protocol": if udp { "udp" } else { "tcp" }});
                    let doc = convert::latency_to_result(name, &run, argv, when, params);
                    (doc, run.central_us(), run.p99_us, statistic)
                }
            };
            eprintln!(
                "  [{}/{total}] round {} {name:<9} {statistic} {central:>9.1} us",
                points.len() + 1,
                round + 1
            );
            let factors = json!({
                "tool": name, "round": round + 1, "size": size,
                "rtt_us": central, "p99_us": p99, "statistic": statistic,
            });
            points.push(point(name, factors, doc));
        }
    }
    let rtt = medians(&points, "rtt_us");
    let p99 = medians(&points, "p99_us");
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
        table.push_str(&format!(
            "{tool:<10} {statistic:>10} {:>12} {tail:>12}\n",
            format!("{v:.1} us")
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
    eprint!("{table}");
    let params = json!({
        "mode": "latency", "size": size, "protocol": if udp { "udp" } else { "tcp" },
        "tools": ready.iter().map(|r| r.tool.name()).collect::<Vec<_>>(),
        "seconds": a.time, "rounds": a.rounds, "placement": place.label, "skipped": skipped,
    });
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "median_rtt_us".into(),
        "For each tool, the median over rounds of its central round-trip figure: the median (p50) where the tool gives one (linerate, sockperf --full-rtt), else its mean (iperf2 --bounceback; qperf's mean one-way latency, doubled).".into(),
    );
    definitions.insert(
        "linerate_over_best_peer".into(),
        "linerate's median round trip divided by the lowest peer's: below 1 is faster.".into(),
    );
    crate::study_doc::finish_as(
        "compare",
        "latency",
        started,
        params,
        points,
        0,
        findings,
        definitions,
        &a.json,
    )
}

pub fn udp(a: &Settings, place: &Place, names: &[String]) -> anyhow::Result<()> {
    let (rate, len) = (a.bitrate, a.len);
    let (ready, skipped) = resolve(names, &|_: UdpPeer| None)?;
    let start = |r: &Ready<UdpPeer>, port: u16| {
        let argv = Place::wrap(&place.server_prefix, r.tool.server_argv(&r.exe, port));
        Server::start_on(argv, port, r.tool.server_is_udp(), Duration::from_secs(5))
    };
    let mut servers = Vec::new();
    for r in &ready {
        let port = free_port()?;
        servers.push((r, port, Some(start(r, port)?)));
    }
    let started = SystemTime::now();
    let mut points = Vec::new();
    let total = a.rounds as usize * servers.len();
    for round in 0..a.rounds {
        for k in 0..servers.len() {
            let i = (k + round as usize) % servers.len();
            let (r, port) = (servers[i].0, servers[i].1);
            if r.tool.fresh_server_per_run() && round > 0 {
                // The old server ends (on drop) before the new one binds.
                servers[i].2 = None;
                servers[i].2 = Some(start(r, port)?);
            }
            let Some(server) = &servers[i].2 else {
                bail!("{} has no server", r.tool.name());
            };
            let name = r.tool.name();
            let argv = Place::wrap(
                &place.client_prefix,
                r.tool
                    .client_argv(&r.exe, &place.host, port, rate, len, a.time),
            );
            let ClientRun { stdout, cpu, when } = run_against(name, &argv, a.time, server)?;
            let (doc, loss, jitter) = match r.tool {
                UdpPeer::Linerate => {
                    let doc: ResultDoc = serde_json::from_str(&stdout)
                        .context("linerate bench --udp printed no result")?;
                    let loss = udp_evidence(&doc, "loss");
                    let jitter = udp_evidence(&doc, "jitter_us");
                    (doc, loss, jitter)
                }
                tool => {
                    let run = tool.parse(&stdout)?;
                    let params = json!({"rate_bps": rate, "len": len});
                    let doc = convert::udp_to_result(name, &run, argv, when, cpu, params);
                    (doc, run.loss(), run.jitter_us)
                }
            };
            let received = doc.summary.bits_per_second;
            eprintln!(
                "  [{}/{total}] round {} {name:<9} {:>14} received, {:.3} % lost, jitter {jitter:.1} us",
                points.len() + 1,
                round + 1,
                fmt_rate(received),
                loss * 100.0
            );
            let factors = json!({
                "tool": name, "round": round + 1, "rate_bps": rate, "len": len,
                "loss": loss, "jitter_us": jitter,
            });
            points.push(point(name, factors, doc));
        }
    }
    let mut received: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in &points {
        received
            .entry(p.series.clone())
            .or_default()
            .push(p.result.summary.bits_per_second);
    }
    let loss = medians(&points, "loss");
    let jitter = medians(&points, "jitter_us");
    let mut findings = BTreeMap::new();
    let mut table = format!(
        "{:<10} {:>14} {:>10} {:>12}\n",
        "tool", "received", "lost", "jitter"
    );
    for (tool, v) in &received {
        let m = median(v.iter().copied());
        findings.insert(format!("median_bps/{tool}"), m);
        findings.insert(format!("median_loss/{tool}"), loss[tool]);
        findings.insert(format!("median_jitter_us/{tool}"), jitter[tool]);
        table.push_str(&format!(
            "{tool:<10} {:>14} {:>9.3}% {:>9.1} us\n",
            fmt_rate(m),
            loss[tool] * 100.0,
            jitter[tool]
        ));
    }
    eprint!("{table}");
    let params = json!({
        "mode": "udp", "rate_bps": rate, "len": len,
        "tools": ready.iter().map(|r| r.tool.name()).collect::<Vec<_>>(),
        "seconds": a.time, "rounds": a.rounds, "placement": place.label, "skipped": skipped,
    });
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "median_bps".into(),
        "For each tool, the median over rounds of the payload its receiver took per second, one stream at the asked rate.".into(),
    );
    definitions.insert(
        "median_loss".into(),
        "The median over rounds of the datagrams lost over those sent, as the tool's receiver counted them.".into(),
    );
    crate::study_doc::finish_as(
        "compare",
        "udp",
        started,
        params,
        points,
        0,
        findings,
        definitions,
        &a.json,
    )
}
