//! `linerate study`: the seed papers' WAN and LAN studies, one command each,
//! on labs this command builds and removes.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::SystemTime;

use anyhow::Context;
use clap::{Args, Subcommand};
use linerate_engine::server::Server;
use linerate_lab::{Backend, BackendChoice, Conditions, Lab, LabSpec};
use linerate_probe::units::fmt_rate;
use linerate_result::{IntervalSample, LabRecord, Limit, ResultDoc, StudyPoint};
use serde_json::json;

use linerate_engine::spec::BenchSpec;

use crate::{measure, output, units};

mod tuning;

const PORT: u16 = 5201;

#[derive(Subcommand)]
pub enum StudyCommand {
    /// Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several
    /// streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law.
    Wan(WanArgs),
    /// Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node.
    Lan(LanArgs),
    /// One stream on a lab WAN before and after `tune plan`'s settings (applied, then reverted).
    Tuning(tuning::TuningArgs),
}

#[derive(Args, Clone)]
pub struct CommonArgs {
    /// A short run of every part, for CI (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// Where to write the linerate.result/1 document.
    #[arg(long, default_value = "-")]
    pub json: String,
    /// Seconds per bench run (default 5, 2 with --quick).
    #[arg(short = 't', long)]
    pub time: Option<f64>,
    /// Congestion control for every run (default: the host's).
    #[arg(long)]
    pub cc: Option<String>,
    /// Name of the lab the study builds (removed at the end).
    #[arg(long, default_value = "study")]
    pub name: String,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study wan --json wan.json          about 4 minutes\n  linerate study wan --quick --rtts 0,44      a smoke test"
)]
pub struct WanArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// RTTs to sweep, in ms.
    #[arg(long, value_delimiter = ',', default_value = "0,1,5,10,22,44,88")]
    pub rtts: Vec<f64>,
    /// Stream counts to compare.
    #[arg(long, value_delimiter = ',', default_value = "1,4", value_parser = units::parse_streams)]
    pub streams: Vec<u16>,
    /// Bottleneck rate of the emulated WAN; BDP-sized buffers are sized for it.
    #[arg(long, default_value = "10gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Length of the run over time at 44 ms with reordering (default 30 s, 8 s with --quick).
    #[arg(long)]
    pub stability_time: Option<f64>,
    /// Backend for the WAN conditions.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: crate::lab_cmd::BackendArg,
}

#[derive(Args)]
#[command(after_help = "Example:\n  linerate study lan --json lan.json")]
pub struct LanArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Stream counts to sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16", value_parser = units::parse_streams)]
    pub streams: Vec<u16>,
}

pub fn run(cmd: StudyCommand) -> anyhow::Result<()> {
    crate::lab_cmd::require()?;
    match cmd {
        StudyCommand::Wan(a) => wan(a),
        StudyCommand::Lan(a) => lan(a),
        StudyCommand::Tuning(a) => tuning::run(a),
    }
}

/// A lab and a server in its second host, both gone when this is dropped.
struct Bed {
    lab: Lab,
    stop: Arc<AtomicBool>,
    serving: Option<std::thread::JoinHandle<()>>,
}

impl Bed {
    fn up(spec: LabSpec) -> anyhow::Result<Bed> {
        let exe = std::env::current_exe().context("locating the linerate binary")?;
        let name = spec.name.clone();
        let lab = Lab::up(spec, &exe).with_context(|| format!("bringing up lab {name}"))?;
        let mut bed = Bed {
            lab,
            stop: Arc::new(AtomicBool::new(false)),
            serving: None,
        };
        let ns = bed.lab.hosts[1].netns.clone();
        let stop = Arc::clone(&bed.stop);
        let (tx, rx) = std::sync::mpsc::channel();
        bed.serving = Some(std::thread::spawn(move || {
            // Threads inherit the namespace of the thread that starts them,
            // so the whole server lives in the second host.
            let bound = crate::netns::enter(&ns).and_then(|()| {
                Ok(Server::bind(SocketAddr::from((
                    std::net::Ipv6Addr::UNSPECIFIED,
                    PORT,
                )))?)
            });
            match bound {
                Ok(server) => {
                    let _ = tx.send(Ok(()));
                    let _ = server.run(false, &stop);
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        }));
        rx.recv().context("server thread")??;
        Ok(bed)
    }

    fn record(&self) -> LabRecord {
        LabRecord {
            name: self.lab.spec.name.clone(),
            backend: self.lab.backend.as_str().into(),
            backend_reason: self.lab.backend_reason.clone(),
            topology: if self.lab.router.is_some() && self.lab.backend != Backend::Emulator {
                "router".into()
            } else {
                "direct".into()
            },
            mtu: self.lab.spec.mtu,
            conditions: serde_json::to_value(&self.lab.spec.conditions).unwrap_or_default(),
        }
    }

    /// Sets tcp_rmem/tcp_wmem maxima in both hosts (per namespace, never the host's).
    fn buffers(&self, max: u64, defaults: &(String, String)) -> anyhow::Result<(String, String)> {
        let (rmem, wmem) = if max == 0 {
            defaults.clone()
        } else {
            (format!("4096 131072 {max}"), format!("4096 16384 {max}"))
        };
        let settings = [
            linerate_tune::plan::Setting::new("net.ipv4.tcp_rmem", &rmem, "study buffers"),
            linerate_tune::plan::Setting::new("net.ipv4.tcp_wmem", &wmem, "study buffers"),
        ];
        for h in &self.lab.hosts {
            crate::netns::run_in(Some(&h.netns), || {
                Ok(linerate_tune::apply::set(
                    &settings,
                    std::path::Path::new("/proc/sys"),
                )?)
            })
            .with_context(|| format!("setting TCP buffers in {}", h.netns))?;
        }
        Ok((rmem, wmem))
    }

    /// One bench from the first host to the second, with the study's
    /// congestion control.
    fn bench(
        &self,
        mut spec: BenchSpec,
        common: &CommonArgs,
        v6: bool,
    ) -> anyhow::Result<ResultDoc> {
        let h2 = &self.lab.hosts[1];
        let addr: IpAddr = if v6 { h2.v6.into() } else { h2.v4.into() };
        let server = SocketAddr::new(addr, PORT);
        if common.cc.is_some() {
            spec.socket.congestion = common.cc.clone();
        }
        spec.path = crate::netns::known_path_of(&self.lab.spec.conditions);
        let ns = self.lab.hosts[0].netns.clone();
        let command_line: Vec<String> = std::env::args().collect();
        let mut doc = std::thread::scope(|s| {
            s.spawn(|| {
                crate::netns::enter(&ns)?;
                measure::bench(
                    server,
                    &spec,
                    None,
                    command_line,
                    output::Out::silent(),
                    false,
                )
            })
            .join()
            .map_err(|_| anyhow::anyhow!("bench thread panicked"))?
        })?;
        doc.lab = Some(self.record());
        Ok(doc)
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.serving.take() {
            let _ = t.join();
        }
        if let Err(e) = self.lab.down() {
            eprintln!(
                "linerate: could not remove lab {}: {e} (run `linerate lab down --name {}`)",
                self.lab.spec.name, self.lab.spec.name
            );
        }
    }
}

fn host_buffers() -> (String, String) {
    let read = |k: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{k}"))
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    (read("tcp_rmem"), read("tcp_wmem"))
}

fn secs(common: &CommonArgs) -> f64 {
    common.time.unwrap_or(if common.quick { 2.0 } else { 5.0 })
}

struct Collector {
    points: Vec<StudyPoint>,
}

impl Collector {
    fn add(&mut self, series: &str, factors: serde_json::Value, doc: ResultDoc) {
        let factors: BTreeMap<String, serde_json::Value> =
            serde_json::from_value(factors).unwrap_or_default();
        let shown: Vec<String> = factors.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let limit = serde_json::to_value(doc.summary.verdict.limit)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        eprintln!(
            "  {series:<22} {:<48} {:>14}  {limit}{}",
            shown.join(" "),
            fmt_rate(doc.summary.bits_per_second),
            if doc.summary.verdict.limit == Limit::Invalid {
                " (this run does not stand for the path)"
            } else {
                ""
            }
        );
        self.points.push(StudyPoint {
            series: series.into(),
            factors,
            result: doc,
        });
    }
}

pub use linerate_report::time_to_stabilise;

/// Counts the study's invalid runs as a finding of its own, naming them,
/// so that none stands silently among the others' figures.
fn mark_invalid_runs(
    points: &[StudyPoint],
    findings: &mut BTreeMap<String, f64>,
    definitions: &mut BTreeMap<String, String>,
) {
    let invalid: Vec<String> = points
        .iter()
        .filter(|p| p.result.summary.verdict.limit == Limit::Invalid)
        .map(|p| p.series.clone())
        .collect();
    findings.insert("invalid_runs".into(), invalid.len() as f64);
    let mut said = "Runs whose verdict is invalid: their senders saw round trips shorter than the path carries, so their rates do not stand for the path.".to_string();
    if !invalid.is_empty() {
        said.push_str(&format!(" In this study: {}.", invalid.join(", ")));
    }
    definitions.insert("invalid_runs".into(), said);
}

/// One run's share of window / RTT: the median of its per-second shares
/// ([`linerate_report::data::window_law_shares`]). A slow second (seen on
/// this project's VM: 545-590 Mbit/s among 720-755, with the 4 MiB window in
/// place) then moves it no more than any other second; against the run's
/// mean, one such second took the ratio below 0.9. None with fewer than
/// three such intervals.
fn window_law_by_interval(intervals: &[IntervalSample], window: u64) -> Option<f64> {
    let shares = linerate_report::data::window_law_shares(intervals, window);
    (shares.len() >= 3).then(|| linerate_result::stats::median(shares))
}

/// Received bits per second per whole interval, all streams summed.
fn per_second(doc: &ResultDoc) -> Vec<f64> {
    linerate_report::data::summed(doc)
        .into_iter()
        .map(|p| p.1)
        .collect()
}

/// Two hosts behind an emulated WAN link of `rate` and `rtt_us`.
fn wan_spec(
    c: &CommonArgs,
    backend: crate::lab_cmd::BackendArg,
    rtt_us: u64,
    rate: u64,
) -> LabSpec {
    LabSpec {
        name: c.name.clone(),
        hosts: 2,
        router: false,
        mtu: 1500,
        backend: BackendChoice::from(backend),
        conditions: Conditions {
            rtt_us,
            rate_bps: Some(rate),
            seed: 1,
            ..Conditions::default()
        },
    }
}

fn wan(a: WanArgs) -> anyhow::Result<()> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = secs(c);
    let host = host_buffers();
    let mut bed = Bed::up(wan_spec(c, a.backend, 0, a.rate))?;
    eprintln!(
        "linerate study wan: lab {} on backend {} ({})",
        bed.lab.spec.name,
        bed.lab.backend.as_str(),
        bed.lab.backend_reason
    );
    let mut col = Collector { points: Vec::new() };
    for &rtt in &a.rtts {
        let mut cond = bed.lab.spec.conditions.clone();
        cond.rtt_us = (rtt * 1000.0) as u64;
        bed.lab.set(cond).context("setting the RTT")?;
        let bdp = (a.rate as f64 * rtt / 1000.0 / 8.0) as u64;
        // Twice the BDP (the kernel keeps part of a buffer for overhead),
        // never below what the host already allows.
        let host_max = host
            .0
            .split_whitespace()
            .last()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0u64);
        for (label, max) in [("default", 0u64), ("bdp", (2 * bdp).max(host_max))] {
            let (rmem, wmem) = bed.buffers(max, &host)?;
            for &p in &a.streams {
                let doc = bed.bench(timed(t, p), c, false)?;
                col.add(
                    &format!("{label}-buffers/P{p}"),
                    json!({"rtt_ms": rtt, "streams": p, "buffers": label, "tcp_rmem": rmem, "tcp_wmem": wmem}),
                    doc,
                );
            }
        }
    }
    // Bandwidth over time at 44 ms with 0.02 % reordering, BDP-sized buffers.
    let mut cond = bed.lab.spec.conditions.clone();
    cond.rtt_us = 44_000;
    cond.reorder = 0.0002;
    bed.lab.set(cond).context("setting 44 ms and reordering")?;
    let bdp = (a.rate as f64 * 0.044 / 8.0) as u64;
    let (rmem, wmem) = bed.buffers(2 * bdp, &host)?;
    let long = a.stability_time.unwrap_or(if c.quick { 8.0 } else { 30.0 });
    let doc = bed.bench(timed(long, 1), c, false)?;
    let series = per_second(&doc);
    let mut findings = BTreeMap::new();
    let mut definitions = BTreeMap::new();
    let mut stabilise = "With 1 s intervals x1..xn of the 44 ms, 0.02 % reordering run (all streams summed) and m the median of the last half of them: the start of the first interval from which every interval stays within 10 % of m. Absent when the last interval is not within 10 %.".to_string();
    match time_to_stabilise(&series) {
        _ if doc.summary.verdict.limit == Limit::Invalid => {
            stabilise.push_str(
                " Not given in this study: the over-time run was invalid (its verdict says why).",
            );
        }
        Some(ts) => {
            findings.insert("time_to_stabilise_s".into(), ts);
        }
        None => stabilise
            .push_str(" Not given in this study: the last interval was not within 10 % of m."),
    }
    definitions.insert("time_to_stabilise_s".into(), stabilise);
    col.add("over-time", json!({"rtt_ms": 44, "reorder": 0.0002, "streams": 1, "buffers": "bdp", "tcp_rmem": rmem, "tcp_wmem": wmem}), doc);
    // The window law: with a 4 MiB window, throughput is window / RTT.
    let mut cond = bed.lab.spec.conditions.clone();
    cond.reorder = 0.0;
    bed.lab.set(cond).context("removing the reordering")?;
    let window = 4u64 << 20;
    // Three runs, the median ratio: the kernel may now and then recompute
    // the receive-window clamp from the buffer mid-run (see `--window`), and
    // one such run should not stand for the law.
    let mut ratios = Vec::new();
    let mut laws = Vec::new();
    for run in 1..=3 {
        // At least four whole seconds after the omitted first, so the
        // per-second median always has three to stand on.
        let mut spec = timed((t * 2.0).max(6.0), 1);
        spec.socket.rcvbuf = Some(window as u32);
        spec.socket.sndbuf = Some(8 * window as u32);
        spec.omit_ms = 1000;
        let doc = bed.bench(spec, c, false)?;
        let rtt_s = doc
            .summary
            .verdict
            .evidence
            .get("rtt_us")
            .copied()
            .unwrap_or(44_000.0)
            / 1e6;
        let law = window as f64 * 8.0 / rtt_s;
        let ratio = window_law_by_interval(&doc.intervals, window)
            .unwrap_or(doc.summary.bits_per_second / law);
        ratios.push(ratio);
        laws.push(law);
        col.add(
            "window-law",
            json!({"rtt_ms": 44, "streams": 1, "window_bytes": window, "run": run, "ratio": ratio}),
            doc,
        );
    }
    findings.insert(
        "window_law_expected_bps".into(),
        linerate_result::stats::median(laws.iter().copied()),
    );
    findings.insert(
        "window_law_ratio".into(),
        linerate_result::stats::median(ratios.iter().copied()),
    );
    definitions.insert(
        "window_law_ratio".into(),
        "Median over three runs of: one stream with a 4 MiB receive window (--window 4M, first 1 s omitted), the median over its whole one-second intervals of the bytes the receiver took divided by window / RTT, each interval against the smoothed RTT the sender sampled at its end (the whole run against its median RTT when it has fewer than three such intervals).".into(),
    );
    let headline = col
        .points
        .iter()
        .position(|p| {
            p.series == "bdp-buffers/P1"
                && p.factors.get("rtt_ms").and_then(|v| v.as_f64()) == Some(44.0)
        })
        .unwrap_or(0);
    mark_invalid_runs(&col.points, &mut findings, &mut definitions);
    for (k, v) in &findings {
        eprintln!("  {k} = {v:.3}");
    }
    let params = json!({"rtts_ms": a.rtts, "streams": a.streams, "rate_bps": a.rate, "seconds": t, "stability_seconds": long, "quick": c.quick, "cc": c.cc});
    let points = std::mem::take(&mut col.points);
    drop(bed);
    crate::study_doc::write(
        linerate_harness::document::ManyRuns {
            kind: "study",
            detail: "wan".into(),
            started,
            parameters: params,
            points,
            headline,
            findings,
            definitions,
        },
        &c.json,
    )
}

/// A bench of `seconds` on `streams` streams, sampled every second.
fn timed(seconds: f64, streams: u16) -> BenchSpec {
    BenchSpec {
        streams,
        duration_ms: (seconds * 1000.0).round() as u64,
        ..BenchSpec::default()
    }
}

fn lan(a: LanArgs) -> anyhow::Result<()> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = secs(c);
    let mut col = Collector { points: Vec::new() };
    let streams: Vec<u16> = if c.quick {
        vec![1, 4]
    } else {
        a.streams.clone()
    };
    let compare: Vec<u16> = vec![1, 4];
    let spec = |router: bool, mtu: u32| LabSpec {
        name: c.name.clone(),
        hosts: 2,
        router,
        mtu,
        backend: BackendChoice::Veth,
        conditions: Conditions::default(),
    };
    let run = |bed: &Bed, p: u16, v6: bool| bed.bench(timed(t, p), c, v6);
    {
        let bed = Bed::up(spec(false, 1500))?;
        eprintln!("linerate study lan: direct veth link, MTU 1500");
        for &p in &streams {
            col.add(
                "streams",
                json!({"streams": p, "mtu": 1500, "ip": 4, "path": "direct"}),
                run(&bed, p, false)?,
            );
        }
        for &p in &compare {
            col.add(
                "ipv6",
                json!({"streams": p, "mtu": 1500, "ip": 6, "path": "direct"}),
                run(&bed, p, true)?,
            );
        }
    }
    {
        let bed = Bed::up(spec(false, 9000))?;
        eprintln!("linerate study lan: direct veth link, MTU 9000");
        for &p in &compare {
            col.add(
                "mtu9000",
                json!({"streams": p, "mtu": 9000, "ip": 4, "path": "direct"}),
                run(&bed, p, false)?,
            );
        }
    }
    {
        let bed = Bed::up(spec(true, 1500))?;
        eprintln!(
            "linerate study lan: through a relay (router namespace, kernel forwarding), MTU 1500"
        );
        for &p in &compare {
            col.add(
                "relay",
                json!({"streams": p, "mtu": 1500, "ip": 4, "path": "relay"}),
                run(&bed, p, false)?,
            );
        }
    }
    let mut findings = BTreeMap::new();
    let mut definitions = BTreeMap::new();
    let rate = |series: &str, p: u16| {
        col.points
            .iter()
            .find(|x| {
                x.series == series
                    && x.factors.get("streams").and_then(|v| v.as_u64()) == Some(u64::from(p))
            })
            .map(|x| x.result.summary.bits_per_second)
    };
    for p in &compare {
        let base = rate("streams", *p);
        for (series, key) in [
            ("ipv6", "ipv6_over_ipv4"),
            ("mtu9000", "mtu9000_over_mtu1500"),
            ("relay", "relay_over_direct"),
        ] {
            if let (Some(b), Some(x)) = (base, rate(series, *p)) {
                findings.insert(format!("{key}_P{p}"), x / b);
            }
        }
    }
    definitions.insert("*_over_*_P{n}".into(), "Throughput of the variant divided by the direct, MTU 1500, IPv4 run with the same number of streams.".into());
    for (k, v) in &findings {
        eprintln!("  {k} = {v:.3}");
    }
    let best = (0..col.points.len())
        .filter(|i| col.points[*i].series == "streams")
        .max_by(|x, y| {
            col.points[*x]
                .result
                .summary
                .bits_per_second
                .total_cmp(&col.points[*y].result.summary.bits_per_second)
        })
        .unwrap_or(0);
    let params = json!({"streams": streams, "seconds": secs(c), "quick": c.quick, "cc": c.cc});
    crate::study_doc::write(
        linerate_harness::document::ManyRuns {
            kind: "study",
            detail: "lan".into(),
            started,
            parameters: params,
            points: col.points,
            headline: best,
            findings,
            definitions,
        },
        &c.json,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{Side, TcpSample};

    fn second(side: Side, start: f64, mbps: f64, rtt_ms: f64) -> IntervalSample {
        IntervalSample {
            side,
            stream: 0,
            start,
            end: start + 1.0,
            bytes: (mbps * 1e6 / 8.0) as u64,
            bits_per_second: mbps * 1e6,
            tcp: Some(TcpSample {
                rtt_us: (rtt_ms * 1000.0) as u32,
                ..TcpSample::default()
            }),
            udp: None,
        }
    }

    #[test]
    fn a_stalled_second_does_not_decide_the_window_law() {
        let w = 4u64 << 20;
        // 4 MiB over 44 ms is 762.6 Mbit/s.
        let law = |rtt_ms: f64| w as f64 * 8.0 / (rtt_ms / 1e3) / 1e6;
        // Each second at both ends: the receiver's rate against the RTT the
        // sender sampled. The sender's own counts are its buffer's bursts.
        let both = |start: f64, mbps: f64, rtt_ms: f64| {
            [
                second(Side::Sender, start, 2.0 * mbps, rtt_ms),
                second(Side::Receiver, start, mbps, 1.0),
            ]
        };
        let run: Vec<IntervalSample> = [
            both(0.0, 300.0, 44.0), // omitted: slow start
            both(1.0, law(44.5), 44.5),
            both(2.0, 554.0, 51.8), // a slow second
            both(3.0, law(44.2), 44.2),
            both(4.0, 0.99 * law(44.0), 44.0),
        ]
        .concat();
        let r = window_law_by_interval(&run, w).unwrap();
        assert!((r - 1.0).abs() < 0.01, "{r}");
        // Too few whole seconds: the caller falls back to the whole run.
        assert_eq!(window_law_by_interval(&run[..6], w), None);
    }
}
