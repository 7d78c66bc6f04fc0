//! A latency run as one `linerate.result/1` document of kind `latency`.

use linerate_result::latency::{Clock, Latency, Load};
use linerate_result::{ResultDoc, SideReport};
use linerate_verdict::latency::judge_latency;

use super::LatencyRun;
use crate::document;

/// The run as a `linerate.result/1` document, with its verdict.
pub fn to_result(run: &LatencyRun, command_line: Vec<String>) -> ResultDoc {
    // The bulk streams are the document's streams: the ping-pong's own
    // TCP_INFO is in each step.
    let (client, server) = match &run.load {
        Some(l) => (l.client.clone(), l.server.clone()),
        None => (SideReport::default(), SideReport::default()),
    };
    let ends = document::merge(&client, &server);
    let load = run.load.as_ref().map(|l| {
        let rtts: Vec<f64> = ends
            .streams
            .iter()
            .filter(|s| s.side == linerate_result::Side::Sender)
            .filter_map(|s| s.tcp.map(|t| f64::from(t.rtt_us)))
            .collect();
        Load {
            streams: l.params.options.streams,
            bits_per_second: ends.bits_per_second,
            retransmits: ends.retransmits,
            rtt_us: (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
            congestion: l.params.options.socket.congestion.clone().or_else(|| {
                run.client_host
                    .sysctls
                    .get("net.ipv4.tcp_congestion_control")
                    .cloned()
            }),
        }
    });
    let verdict = judge_latency(&run.steps, load.as_ref());
    let spec = &run.spec;
    let parameters = serde_json::json!({
        "session": run.session.to_hex(),
        "connections": spec.connections,
        "pattern": match spec.pattern {
            linerate_wire::Pattern::PingPong => "ping_pong",
            linerate_wire::Pattern::Window => "window",
        },
        "sizes": spec.sizes,
        "reply_len": spec.reply_len,
        "window": spec.window,
        "windows": run.steps.iter().map(|s| s.window).collect::<Vec<_>>(),
        "iterations": spec.iterations,
        "warmup": spec.warmup,
        "step_ms": spec.step_ms,
        "busy_poll": run.params.busy_poll,
        "timeout_ms": spec.timeout_ms,
        "load_streams": spec.load,
        "tos": spec.socket.tos,
        "congestion": spec.socket.congestion,
        "protocol": if spec.udp { "udp" } else { "tcp" },
        "encryption": "none",
    });
    let provenance = document::Provenance {
        kind: "latency",
        command_line,
        started_at: run.started_at,
        client_host: &run.client_host,
        server_host: &run.server_host,
        parameters,
    };
    let mut doc = document::document(provenance, ends, verdict);
    doc.latency = Some(Latency {
        clock: Clock {
            source: "CLOCK_MONOTONIC".into(),
            overhead_ns: run.clock_overhead_ns,
        },
        busy_poll: run.params.busy_poll,
        busy_poll_choice: Some(run.busy_poll_choice.clone()).filter(|w| !w.is_empty()),
        connections: spec.connections,
        steps: run.steps.clone(),
        load,
    });
    doc.interrupted = run.interrupted;
    doc
}
