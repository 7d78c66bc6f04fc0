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

/// Throughput per interval, per stream: stream -> [(interval end s, bits/s)].
pub fn per_stream(doc: &ResultDoc) -> BTreeMap<u16, Vec<(f64, f64)>> {
    let mut out: BTreeMap<u16, Vec<(f64, f64)>> = BTreeMap::new();
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
        out.entry(i.stream)
            .or_default()
            .push((i.end, i.bytes as f64 * 8.0 / (i.end - i.start)));
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// All streams summed per interval: [(interval end s, bits/s)], by
/// interval start, dropping a final sliver shorter than 0.9 of a normal one.
pub fn summed(doc: &ResultDoc) -> Vec<(f64, f64)> {
    let Some(side) = counting_side(doc) else {
        return Vec::new();
    };
    let sums = linerate_result::summed_intervals(&doc.intervals, side);
    let longest = sums.iter().map(|s| s.seconds).fold(0.0, f64::max);
    sums.iter()
        .filter(|s| s.seconds >= 0.9 * longest)
        .map(|s| (s.end, s.bits_per_second))
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

/// The path a run measured, in words: the lab and its conditions, or the
/// host it ran against (loopback named so).
pub fn path_of(doc: &ResultDoc) -> String {
    if let Some(lab) = &doc.lab {
        let rtt = lab.conditions.get("rtt_us").and_then(|v| v.as_f64());
        let rate = lab.conditions.get("rate_bps").and_then(|v| v.as_f64());
        let mut words = format!("lab {} ({}", lab.name, lab.backend);
        if let Some(us) = rtt.filter(|&us| us > 0.0) {
            words.push_str(&format!(", {} ms", us / 1000.0));
        }
        if let Some(bps) = rate.filter(|&b| b > 0.0) {
            words.push_str(&format!(", {} Gbit/s", bps / 1e9));
        }
        return words + ")";
    }
    // The first word after the command that is not a flag: HOST[:PORT].
    let target = doc
        .command_line
        .iter()
        .skip_while(|w| w.as_str() != doc.kind.as_str())
        .skip(1)
        .find(|w| !w.starts_with('-'));
    match target {
        Some(t)
            if t.starts_with("127.") || t.starts_with("[::1]") || t.starts_with("localhost") =>
        {
            "loopback".to_string()
        }
        Some(t) => format!("to {t}"),
        None => "unknown path".to_string(),
    }
}
