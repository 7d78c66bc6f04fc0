//! What figures are drawn from, pulled out of result documents: runs (top
//! level documents and the points of studies and comparisons), throughput
//! per second per stream, and TCP_INFO over time.

use std::collections::BTreeMap;

use linerate_result::{IntervalSample, ResultDoc, Side};

/// One measured run, wherever it sits in the inputs.
pub struct Run<'a> {
    /// Which input it came from, and which point inside it.
    pub label: String,
    /// The run's own document.
    pub doc: &'a ResultDoc,
    /// The study series, or the tool for a peer, or the kind.
    pub series: String,
    /// What the run varied, by name (a study point's factors).
    pub factors: BTreeMap<String, serde_json::Value>,
    /// The document that holds it, when it is a point of a study or comparison.
    pub parent: Option<&'a ResultDoc>,
}

impl Run<'_> {
    /// Factor `key` as a number, where it is one.
    pub fn factor(&self, key: &str) -> Option<f64> {
        self.factors
            .get(key)
            .and_then(|v| v.as_f64())
            .or_else(|| self.doc.parameters.get(key).and_then(|v| v.as_f64()))
    }
}

/// Every run in the inputs, top-level documents first.
pub fn runs<'a>(inputs: &'a [crate::Input]) -> Vec<Run<'a>> {
    let mut out = Vec::new();
    for input in inputs {
        let doc = &input.doc;
        match &doc.study {
            Some(study) => {
                for (i, p) in study.points.iter().enumerate() {
                    out.push(Run {
                        label: format!("{} #{} {}", input.path, i + 1, p.series),
                        doc: &p.result,
                        series: p.series.clone(),
                        factors: p.factors.clone(),
                        parent: Some(doc),
                    });
                }
            }
            None => out.push(Run {
                label: input.path.clone(),
                doc,
                series: doc
                    .parameters
                    .get("tool")
                    .and_then(|t| t.as_str())
                    .unwrap_or(&doc.kind)
                    .to_string(),
                factors: BTreeMap::new(),
                parent: None,
            }),
        }
    }
    out
}

/// The side whose intervals count the payload: the receiver's where the
/// run has them (linerate records both ends), else whatever it has.
fn counting_side(doc: &ResultDoc) -> Option<Side> {
    if doc.intervals.iter().any(|i| i.side == Side::Receiver) {
        Some(Side::Receiver)
    } else {
        doc.intervals.first().map(|i| i.side)
    }
}

/// An interval's start and end, seconds, and its rate, bits/s.
pub type Span = (f64, f64, f64);

/// Throughput per interval, per stream: stream -> [(interval end s, bits/s)].
pub fn per_stream(doc: &ResultDoc) -> BTreeMap<u16, Vec<(f64, f64)>> {
    per_stream_spans(doc)
        .into_iter()
        .map(|(n, v)| (n, v.into_iter().map(|(_, end, bps)| (end, bps)).collect()))
        .collect()
}

/// Throughput per interval, per stream, each interval whole.
pub fn per_stream_spans(doc: &ResultDoc) -> BTreeMap<u16, Vec<Span>> {
    let mut out: BTreeMap<u16, Vec<Span>> = BTreeMap::new();
    let Some(side) = counting_side(doc) else {
        return out;
    };
    let ours = || {
        doc.intervals
            .iter()
            .filter(|i| i.side == side && i.end > i.start)
    };
    // The final sliver of a run says little and plots as a cliff.
    let longest = ours().map(|i| i.end - i.start).fold(0.0, f64::max);
    for i in ours().filter(|i| i.end - i.start >= 0.9 * longest) {
        let bps = i.bytes as f64 * 8.0 / (i.end - i.start);
        out.entry(i.stream).or_default().push((i.start, i.end, bps));
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
    }
    out
}

/// All streams summed per interval: [(interval end s, bits/s)], by
/// interval start, dropping a final sliver shorter than 0.9 of a normal one.
pub fn summed(doc: &ResultDoc) -> Vec<(f64, f64)> {
    summed_spans(doc)
        .into_iter()
        .map(|(_, end, bps)| (end, bps))
        .collect()
}

/// All streams summed per interval, each interval whole; a run without
/// intervals (`-i 0`) is one interval, the whole run at its summary rate.
pub fn summed_spans(doc: &ResultDoc) -> Vec<Span> {
    let Some(side) = counting_side(doc) else {
        let s = &doc.summary;
        return if s.seconds > 0.0 && s.bytes > 0 && doc.study.is_none() {
            vec![(0.0, s.seconds, s.bits_per_second)]
        } else {
            Vec::new()
        };
    };
    let sums = linerate_result::summed_intervals(&doc.intervals, side);
    let longest = sums.iter().map(|s| s.seconds).fold(0.0, f64::max);
    sums.iter()
        .filter(|s| s.seconds >= 0.9 * longest)
        .map(|s| (s.end - s.seconds, s.end, s.bits_per_second))
        .collect()
}

/// Spans as the corners of a step line: each interval's rate held flat
/// from its start to its end, never a slope between interval ends.
pub fn stepped(spans: &[Span], scale: f64) -> Vec<(f64, f64)> {
    spans
        .iter()
        .flat_map(|&(start, end, v)| [(start, v / scale), (end, v / scale)])
        .collect()
}

/// One TCP_INFO quantity over time per sending stream.
pub fn tcp_series(
    doc: &ResultDoc,
    pick: impl Fn(&linerate_result::TcpSample) -> f64,
) -> BTreeMap<u16, Vec<(f64, f64)>> {
    let mut out: BTreeMap<u16, Vec<(f64, f64)>> = BTreeMap::new();
    for i in doc.intervals.iter().filter(|i| i.side == Side::Sender) {
        if let Some(t) = &i.tcp {
            out.entry(i.stream).or_default().push((i.end, pick(t)));
        }
    }
    out
}

/// One UDP receiver's count over time per stream: `pick` of each
/// interval's counts, at the interval's end.
pub fn udp_series(
    doc: &ResultDoc,
    pick: impl Fn(&linerate_result::UdpCounts) -> f64,
) -> BTreeMap<u16, Vec<(f64, f64)>> {
    let mut out: BTreeMap<u16, Vec<(f64, f64)>> = BTreeMap::new();
    for i in &doc.intervals {
        if let Some(u) = &i.udp {
            out.entry(i.stream).or_default().push((i.end, pick(u)));
        }
    }
    out
}

/// One stream's rate as a share of window / RTT, per whole one-second
/// interval after the first (the usual omitted warm-up): the bytes the
/// receiver took in that second, against the smoothed RTT the sender sampled
/// with it. The window law second by second, so a slow second weighs no more
/// than any other in a median of these. The receiver's count, because the
/// sender's is what entered its socket buffer: with a buffer far larger than
/// the window it moves in bursts (713 and 898 Mbit/s seconds where the
/// receiver took 745-760, seen at 4 MiB and 44 ms).
pub fn window_law_shares(intervals: &[IntervalSample], window_bytes: u64) -> Vec<f64> {
    let window_bits = window_bytes as f64 * 8.0;
    let whole = |i: &&IntervalSample| i.start >= 0.99 && i.end - i.start >= 0.99;
    let sender_rtt_s = |r: &IntervalSample| {
        intervals
            .iter()
            .filter(whole)
            .find(|s| {
                s.side == Side::Sender && s.stream == r.stream && (s.start - r.start).abs() < 0.5
            })
            .and_then(|s| s.tcp.as_ref())
            .map(|t| f64::from(t.rtt_us) / 1e6)
    };
    intervals
        .iter()
        .filter(whole)
        .filter(|i| i.side == Side::Receiver)
        .filter_map(|r| {
            let rtt_s = sender_rtt_s(r)?;
            (rtt_s > 0.0).then(|| r.bits_per_second / (window_bits / rtt_s))
        })
        .collect()
}

/// A comparison point's throughput: wall-clock for file tools (so process
/// start and metadata count), else what the tool measured.
pub fn point_bps(p: &linerate_result::StudyPoint) -> f64 {
    p.factors
        .get("wall_bps")
        .and_then(|v| v.as_f64())
        .unwrap_or(p.result.summary.bits_per_second)
}

/// What kind of run a document is, in the words of a series name: its
/// command, and where it differs from a plain TCP run one way, its
/// protocol, direction, rate cap or search, and whether it was cut short.
/// Runs of different kinds never share a line.
pub fn kind_of(doc: &ResultDoc) -> String {
    let p = &doc.parameters;
    let text = |k: &str| p.get(k).and_then(|v| v.as_str());
    let mut words = vec![doc.kind.clone()];
    if let Some(proto) = text("protocol").filter(|&x| x != "tcp") {
        words.push(proto.to_uppercase());
    }
    match text("direction") {
        Some("reverse") => words.push("reverse (-R)".into()),
        Some("bidir") => words.push("both ways summed (--bidir)".into()),
        _ => {}
    }
    // Rates are per stream in the parameters; a run is asked for in all (-b).
    let streams = p.get("streams").and_then(|v| v.as_f64()).unwrap_or(1.0);
    let in_all = |per_stream_bps: f64| linerate_probe::units::fmt_rate(per_stream_bps * streams);
    if p.get("rate_search").is_some() {
        words.push("rate search (--find-rate)".into());
    } else if let Some(bps) = p.pointer("/udp/rate_bps").and_then(|v| v.as_f64()) {
        words.push(format!("at {} in all", in_all(bps)));
    } else if let Some(bytes) = p.get("pacing_rate").and_then(|v| v.as_f64()) {
        words.push(format!("capped at {} in all", in_all(bytes * 8.0)));
    }
    // The socket's own settings change what a run carries: runs that
    // differ in them are other lines (a -w 16K run beside a plain one).
    let bytes = |k: &str| p.get(k).and_then(|v| v.as_f64());
    if let Some(w) = bytes("window").or_else(|| bytes("rcvbuf")) {
        words.push(format!("-w {}", linerate_probe::units::fmt_bytes(w)));
    }
    if let Some(b) = bytes("sndbuf") {
        words.push(format!("--sndbuf {}", linerate_probe::units::fmt_bytes(b)));
    }
    if let Some(cc) = text("congestion") {
        words.push(format!("--cc {cc}"));
    }
    if let Some(mss) = bytes("mss") {
        words.push(format!("MSS {mss} B"));
    }
    if p.get("encryption").is_some_and(|e| e.is_object()) {
        words.push("encrypted".into());
    }
    // A CPU quota at either end (a container's, a Slurm job's) is a
    // condition of the run as much as the path's.
    let hosts = [Some(&doc.hosts.client), doc.hosts.server.as_ref()];
    for (end, host) in ["client", "server"].iter().zip(hosts) {
        if let Some(q) = host
            .and_then(|h| h.cgroup.as_ref())
            .and_then(|c| c.quota_cores)
        {
            words.push(format!("{end} quota {q:.2} cores"));
        }
    }
    if doc.interrupted {
        words.push("interrupted".into());
    }
    words.join(", ")
}

/// Whether a document's headline is a throughput: not a round trip
/// (latency), an incast's or a mesh's steps, or a proxy job's time.
pub fn measures_throughput(doc: &ResultDoc) -> bool {
    !matches!(doc.kind.as_str(), "latency" | "incast" | "mesh" | "job") && doc.latency.is_none()
}

/// A run's own headline figure, in words: a round trip for a latency run,
/// the best step's aggregate and fairness for an incast, the pairs' spread
/// for a mesh, the run time for a job, the runs of a study, else the
/// throughput (marked when the run was cut short).
pub fn headline(doc: &ResultDoc) -> String {
    use linerate_probe::units::{fmt_rate, fmt_us};
    if let Some(step) = doc.latency.as_ref().and_then(|l| l.steps.first()) {
        let rt = &step.round_trip_us;
        return format!(
            "round trip p50 {}, p99 {} ({} B)",
            fmt_us(rt.p50),
            fmt_us(rt.p99),
            step.request_bytes
        );
    }
    if let Some(study) = &doc.study {
        return format!("{} runs", study.points.len());
    }
    let steps = doc.fleet.as_ref().map_or(&[][..], |f| f.steps.as_slice());
    if let Some(job) = steps.iter().find_map(|s| s.job.as_ref()) {
        return format!(
            "{} in {:.3} s, median iteration {}",
            job.kind,
            job.total_seconds,
            fmt_us(job.median_iteration_us)
        );
    }
    match doc.kind.as_str() {
        "incast" => {
            let best = steps.iter().max_by(|a, b| {
                a.aggregate_bits_per_second
                    .total_cmp(&b.aggregate_bits_per_second)
            });
            return best.map_or("no step ran".into(), |s| {
                format!(
                    "peak aggregate {}, Jain {:.3} ({} flows)",
                    fmt_rate(s.aggregate_bits_per_second),
                    s.jain_index,
                    s.flows.len()
                )
            });
        }
        "mesh" => {
            let rates: Vec<f64> = steps
                .iter()
                .flat_map(|s| &s.flows)
                .filter(|f| f.error.is_none())
                .map(|f| f.bits_per_second)
                .collect();
            let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                (lo.min(x), hi.max(x))
            });
            if rates.is_empty() {
                return "no pair ran".into();
            }
            return format!(
                "{} pairs, {} to {} (median {})",
                rates.len(),
                fmt_rate(lo),
                fmt_rate(hi),
                fmt_rate(linerate_result::stats::median(rates.iter().copied()))
            );
        }
        _ => {}
    }
    let rate = fmt_rate(doc.summary.bits_per_second);
    if doc.interrupted {
        format!("{rate} (interrupted)")
    } else {
        rate
    }
}

/// The path a run measured, in words: the lab and its conditions, or the
/// host it ran against (loopback named so).
pub fn path_of(doc: &ResultDoc) -> String {
    if let Some(lab) = &doc.lab {
        // Each condition the lab set (a positive figure) names the path.
        let set = |k: &str| {
            lab.conditions
                .get(k)
                .and_then(|v| v.as_f64())
                .filter(|&x| x > 0.0)
        };
        let mut words = format!("lab {} ({}", lab.name, lab.backend);
        if let Some(us) = set("rtt_us") {
            words.push_str(&format!(", {} ms", us / 1000.0));
        }
        if let Some(bps) = set("rate_bps") {
            words.push_str(&format!(", {} Gbit/s", bps / 1e9));
        }
        for (key, what) in [
            ("loss", "loss"),
            ("reorder", "reordered"),
            ("duplicate", "duplicated"),
        ] {
            if let Some(x) = set(key) {
                words.push_str(&format!(", {x} % {what}"));
            }
        }
        if let Some(us) = set("jitter_us") {
            words.push_str(&format!(", jitter {} ms", us / 1000.0));
        }
        return words + ")";
    }
    match doc.target() {
        Some(t)
            if t.starts_with("127.") || t.starts_with("[::1]") || t.starts_with("localhost") =>
        {
            "loopback".to_string()
        }
        Some(t) => format!("to {t}"),
        // A run a command made for itself (the demo, a study): both ends
        // on one booted machine is loopback.
        None if doc
            .hosts
            .server
            .as_ref()
            .is_some_and(|s| !s.boot_id.is_empty() && s.boot_id == doc.hosts.client.boot_id) =>
        {
            "loopback".to_string()
        }
        None => "unknown path".to_string(),
    }
}
