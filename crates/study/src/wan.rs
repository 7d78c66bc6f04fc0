//! The WAN study: bandwidth against RTT with the host's and BDP-sized
//! buffers, one against several streams; bandwidth over time at 44 ms
//! with 0.02 % reordering; the window law (throughput = window / RTT).

use std::collections::BTreeMap;
use std::time::SystemTime;

use linerate_lab::BackendChoice;
use linerate_report::time_to_stabilise;
use linerate_result::stats::median;
use linerate_result::{IntervalSample, Limit, ResultDoc};
use serde_json::json;

use super::bed::Bed;
use super::{Collector, StudyCommon, StudyEvent, mark_invalid_runs, timed, wan_lab};
use crate::StudyError;
use linerate_compare::document::ManyRuns;

/// What the WAN study sweeps.
#[derive(Debug, Clone)]
pub struct WanStudy {
    /// What every study takes.
    pub common: StudyCommon,
    /// RTTs to sweep, in ms.
    pub rtts_ms: Vec<f64>,
    /// Stream counts to compare.
    pub streams: Vec<u16>,
    /// Bottleneck rate of the emulated WAN; BDP-sized buffers are sized for it.
    pub rate_bps: u64,
    /// Length of the run over time (default 30 s, 8 s when quick).
    pub stability_seconds: Option<f64>,
    /// Backend for the WAN conditions.
    pub backend: BackendChoice,
}

/// The window the window law is measured with.
const LAW_WINDOW: u64 = 4 << 20;

/// Runs the WAN study, telling `on` of every run.
pub fn wan(a: &WanStudy, on: &mut dyn FnMut(StudyEvent)) -> Result<ManyRuns, StudyError> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = c.seconds();
    let host = host_buffers();
    let mut bed = Bed::up(wan_lab(c, a.backend, 0, a.rate_bps), &c.linerate)?;
    on(StudyEvent::LabUp(format!(
        "lab {} on backend {} ({})",
        bed.lab.spec.name,
        bed.lab.backend.as_str(),
        bed.lab.backend_reason
    )));
    let mut col = Collector {
        points: Vec::new(),
        on,
    };
    let cc = c.cc.as_deref();
    let bench = |bed: &Bed, spec| bed.bench(spec, cc, false, &c.command_line);
    for &rtt in &a.rtts_ms {
        let mut cond = bed.lab.spec.conditions.clone();
        cond.rtt_us = (rtt * 1000.0) as u64;
        bed.lab.set(cond)?;
        let bdp = (a.rate_bps as f64 * rtt / 1000.0 / 8.0) as u64;
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
                let doc = bench(&bed, timed(t, p))?;
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
    bed.lab.set(cond)?;
    let bdp = (a.rate_bps as f64 * 0.044 / 8.0) as u64;
    let (rmem, wmem) = bed.buffers(2 * bdp, &host)?;
    let long = a
        .stability_seconds
        .unwrap_or(if c.quick { 8.0 } else { 30.0 });
    let doc = bench(&bed, timed(long, 1))?;
    let mut findings = BTreeMap::new();
    let mut definitions = BTreeMap::new();
    stabilising(&doc, &mut findings, &mut definitions);
    col.add("over-time", json!({"rtt_ms": 44, "reorder": 0.0002, "streams": 1, "buffers": "bdp", "tcp_rmem": rmem, "tcp_wmem": wmem}), doc);
    // The window law: with a 4 MiB window, throughput is window / RTT.
    let mut cond = bed.lab.spec.conditions.clone();
    cond.reorder = 0.0;
    bed.lab.set(cond)?;
    // Three runs, the median ratio: the kernel may now and then recompute
    // the receive-window clamp from the buffer mid-run (see `--window`), and
    // one such run should not stand for the law.
    let mut ratios = Vec::new();
    let mut laws = Vec::new();
    for run in 1..=3 {
        // At least four whole seconds after the omitted first, so the
        // per-second median always has three to stand on.
        let mut spec = timed((t * 2.0).max(6.0), 1);
        spec.options.socket.rcvbuf = Some(LAW_WINDOW as u32);
        spec.options.socket.sndbuf = Some(8 * LAW_WINDOW as u32);
        spec.options.omit_ms = 1000;
        let doc = bench(&bed, spec)?;
        let rtt_s = doc
            .summary
            .verdict
            .evidence
            .get("rtt_us")
            .copied()
            .unwrap_or(44_000.0)
            / 1e6;
        let law = LAW_WINDOW as f64 * 8.0 / rtt_s;
        let ratio = window_law_by_interval(&doc.intervals, LAW_WINDOW)
            .unwrap_or(doc.summary.bits_per_second / law);
        ratios.push(ratio);
        laws.push(law);
        col.add(
            "window-law",
            json!({"rtt_ms": 44, "streams": 1, "window_bytes": LAW_WINDOW, "run": run, "ratio": ratio}),
            doc,
        );
    }
    findings.insert("window_law_expected_bps".into(), median(laws));
    findings.insert("window_law_ratio".into(), median(ratios));
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
    let parameters = json!({"rtts_ms": a.rtts_ms, "streams": a.streams, "rate_bps": a.rate_bps, "seconds": t, "stability_seconds": long, "quick": c.quick, "cc": c.cc});
    let points = std::mem::take(&mut col.points);
    drop(bed);
    Ok(ManyRuns {
        kind: "study",
        detail: "wan".into(),
        started,
        parameters,
        points,
        headline,
        findings,
        definitions,
    })
}

/// The over-time run's time to stabilise, or why the study gives none.
fn stabilising(
    doc: &ResultDoc,
    findings: &mut BTreeMap<String, f64>,
    definitions: &mut BTreeMap<String, String>,
) {
    let series: Vec<f64> = linerate_report::data::summed(doc)
        .into_iter()
        .map(|p| p.1)
        .collect();
    let mut said = "With 1 s intervals x1..xn of the 44 ms, 0.02 % reordering run (all streams summed) and m the median of the last half of them: the start of the first interval from which every interval stays within 10 % of m. Absent when the last interval is not within 10 %.".to_string();
    match time_to_stabilise(&series) {
        _ if doc.summary.verdict.limit == Limit::Invalid => said.push_str(
            " Not given in this study: the over-time run was invalid (its verdict says why).",
        ),
        Some(ts) => {
            findings.insert("time_to_stabilise_s".into(), ts);
        }
        None => {
            said.push_str(" Not given in this study: the last interval was not within 10 % of m.")
        }
    }
    definitions.insert("time_to_stabilise_s".into(), said);
}

/// This machine's tcp_rmem and tcp_wmem, as the lab's hosts get them back
/// after a BDP-sized run.
fn host_buffers() -> (String, String) {
    let read = |k: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{k}"))
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    (read("tcp_rmem"), read("tcp_wmem"))
}

/// One run's share of window / RTT: the median of its per-second shares
/// ([`linerate_report::data::window_law_shares`]). A slow second (seen on
/// this project's VM: 545-590 Mbit/s among 720-755, with the 4 MiB window in
/// place) then moves it no more than any other second; against the run's
/// mean, one such second took the ratio below 0.9. None with fewer than
/// three such intervals.
pub(super) fn window_law_by_interval(intervals: &[IntervalSample], window: u64) -> Option<f64> {
    let shares = linerate_report::data::window_law_shares(intervals, window);
    (shares.len() >= 3).then(|| median(shares))
}
