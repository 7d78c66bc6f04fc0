//! A peer's run as a `linerate.result/1` document of kind `peer`, so the
//! report and the comparison treat every tool alike.

use std::collections::BTreeMap;
use std::time::SystemTime;

use linerate_result::{
    CpuPerGb, Hosts, IntervalSample, Limit, ResultDoc, SCHEMA, Side, Summary, Verdict,
};

use crate::PeerRun;

/// CPU seconds the client and the server used during the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu {
    pub client: f64,
    pub server: f64,
}

pub fn to_result(
    tool: &str,
    run: &PeerRun,
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
    ResultDoc {
        schema: SCHEMA.into(),
        kind: "peer".into(),
        linerate_version: env!("CARGO_PKG_VERSION").into(),
        command_line,
        started_at: started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        hosts: Hosts {
            client: linerate_probe::host::collect(),
            server: None,
        },
        parameters,
        intervals,
        streams: Vec::new(),
        summary: Summary {
            bits_per_second: run.bits_per_second,
            bytes: run.bytes,
            seconds: run.seconds,
            cpu_seconds_per_gb: CpuPerGb {
                sender: per_gb(cpu.client),
                receiver: per_gb(cpu.server),
            },
            retransmits: run.retransmits.unwrap_or(0),
            verdict: Verdict {
                limit: Limit::Unknown,
                side: None,
                sentence: format!(
                    "{} does not measure what limited it; run linerate bench under the same conditions for a verdict",
                    tool
                ),
                evidence,
            },
        },
        lab: None,
        latency: None,
        study: None,
        interrupted: false,
    }
}
