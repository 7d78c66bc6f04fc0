//! A peer's run as a `linerate.result/1` document of kind `peer`, so the
//! report and the comparison treat every tool alike.

use std::collections::BTreeMap;
use std::time::SystemTime;

use linerate_result::{CpuPerGb, Hosts, IntervalSample, Limit, ResultDoc, Side, Summary, Verdict};

use crate::tools::ToolRun;

/// CPU seconds the client and the server used during the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu {
    /// The client's CPU seconds.
    pub client: f64,
    /// The server's CPU seconds during the client's run.
    pub server: f64,
}

/// A memory-to-memory or files run of `tool` as a `linerate.result/1`
/// document: its rate, intervals and CPU, with the command that ran it.
pub fn to_result(
    tool: &str,
    run: &ToolRun,
    command_line: Vec<String>,
    started_at: SystemTime,
    cpu: Cpu,
    mut parameters: serde_json::Value,
) -> ResultDoc {
    let gb = run.bytes as f64 / 1e9;
    let per_gb = |s: f64| if gb > 0.0 { s / gb } else { 0.0 };
    let side = if run.counted == "sent" {
        Side::Sender
    } else {
        Side::Receiver
    };
    let intervals = run
        .intervals
        .iter()
        .map(|i| IntervalSample {
            side,
            stream: i.stream,
            start: i.start,
            end: i.end,
            bytes: i.bytes,
            bits_per_second: if i.end > i.start {
                i.bytes as f64 * 8.0 / (i.end - i.start)
            } else {
                0.0
            },
            tcp: None,
            udp: None,
        })
        .collect();
    if let Some(m) = parameters.as_object_mut() {
        m.insert("tool".into(), tool.into());
        m.insert("bytes_counted_at".into(), run.counted.into());
        if let Some((s, r)) = run.cpu_percent {
            m.insert(
                "tool_cpu_percent".into(),
                serde_json::json!({"sender": s, "receiver": r}),
            );
        }
    }
    let mut evidence = BTreeMap::new();
    evidence.insert("bits_per_second".into(), run.bits_per_second);
    let verdict = Verdict {
        limit: Limit::Unknown,
        side: None,
        sentence: format!(
            "{tool} does not measure what limited it; run linerate bench under the same conditions for a verdict"
        ),
        evidence,
    };
    let cpu_seconds_per_gb = CpuPerGb {
        sender: per_gb(cpu.client),
        receiver: per_gb(cpu.server),
    };
    let totals = (run.bits_per_second, run.bytes, run.seconds);
    let retransmits = run.retransmits.unwrap_or(0);
    let summary = Summary::new(totals, cpu_seconds_per_gb, retransmits, verdict);
    let hosts = Hosts {
        client: linerate_probe::host::collect(),
        server: None,
    };
    ResultDoc {
        intervals,
        ..ResultDoc::new(
            "peer",
            &command_line,
            started_at,
            hosts,
            parameters,
            summary,
        )
    }
}

/// A latency peer's run as a `peer` document: its figures in
/// `parameters.latency_us` (only those the tool gives) and the verdict's
/// evidence, and in words which statistic it measured.
pub fn latency_to_result(
    tool: &str,
    run: &crate::tools::rounds::LatencyPeerRun,
    command_line: Vec<String>,
    started_at: SystemTime,
    mut parameters: serde_json::Value,
) -> ResultDoc {
    let figures: BTreeMap<String, f64> = [
        ("mean", Some(run.mean_us)),
        ("p50", run.p50_us),
        ("p90", run.p90_us),
        ("p99", run.p99_us),
        ("p99_9", run.p99_9_us),
        ("p99_99", run.p99_99_us),
        ("min", run.min_us),
        ("max", run.max_us),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect();
    if let Some(m) = parameters.as_object_mut() {
        m.insert("latency_us".into(), serde_json::json!(figures));
        m.insert("statistic".into(), run.statistic.into());
        m.insert("rounds".into(), serde_json::json!(run.rounds));
    }
    let empty = ToolRun {
        bits_per_second: 0.0,
        bytes: 0,
        seconds: 0.0,
        streams: 1,
        intervals: Vec::new(),
        retransmits: None,
        cpu_percent: None,
        counted: "received",
    };
    let mut doc = to_result(
        tool,
        &empty,
        command_line,
        started_at,
        Cpu::default(),
        parameters,
    );
    doc.summary.verdict.sentence = format!(
        "{tool}: {} {:.1} us ({}); it gives no view of what held the round trip",
        if run.p50_us.is_some() {
            "median round trip"
        } else {
            "mean round trip"
        },
        run.central_us(),
        run.statistic
    );
    doc.summary.verdict.evidence = figures
        .into_iter()
        .map(|(k, v)| (format!("{k}_us"), v))
        .collect();
    doc
}

/// A UDP peer's run as a `peer` document: the receiver's rate, and its
/// loss and jitter in `parameters.udp` and the verdict's evidence.
pub fn udp_to_result(
    tool: &str,
    run: &crate::tools::datagrams::UdpPeerRun,
    command_line: Vec<String>,
    started_at: SystemTime,
    cpu: Cpu,
    mut parameters: serde_json::Value,
) -> ResultDoc {
    if let Some(m) = parameters.as_object_mut() {
        m.insert("protocol".into(), "udp".into());
        m.insert(
            "udp".into(),
            serde_json::json!({
                "datagrams": run.datagrams, "lost": run.lost, "loss": run.loss(),
                "jitter_us": run.jitter_us, "sent_bits_per_second": run.sent_bits_per_second,
            }),
        );
    }
    let as_peer = ToolRun {
        bits_per_second: run.bits_per_second,
        bytes: (run.bits_per_second / 8.0 * run.seconds) as u64,
        seconds: run.seconds,
        streams: 1,
        intervals: Vec::new(),
        retransmits: None,
        cpu_percent: None,
        counted: "received",
    };
    let mut doc = to_result(tool, &as_peer, command_line, started_at, cpu, parameters);
    let e = &mut doc.summary.verdict.evidence;
    e.insert("datagrams_sent".into(), run.datagrams as f64);
    e.insert("datagrams_lost".into(), run.lost as f64);
    e.insert("loss".into(), run.loss());
    e.insert("jitter_us".into(), run.jitter_us);
    doc
}
