//! Both ends of a session merged into one `linerate.result/1` document: the
//! part every measuring command shares.

use std::time::SystemTime;

use linerate_result::{
    CpuPerGb, HostFacts, Hosts, IntervalSample, ResultDoc, Side, SideReport, StreamEnd, Summary,
    Verdict,
};

/// Both ends' streams and intervals, with the totals of a summary.
pub struct Ends {
    /// Every stream's end, the client's then the server's.
    pub streams: Vec<StreamEnd>,
    /// Both ends' interval samples.
    pub intervals: Vec<IntervalSample>,
    /// Received payload (after any warm-up).
    pub bytes: u64,
    /// The longest receiving stream's time.
    pub seconds: f64,
    /// Received payload over the longest receiving stream's time.
    pub bits_per_second: f64,
    /// CPU time per gigabyte at each end.
    pub cpu_seconds_per_gb: CpuPerGb,
    /// The senders' retransmitted segments.
    pub retransmits: u64,
}

/// Both ends' reports as one set of streams, intervals and totals.
pub fn merge(client: &SideReport, server: &SideReport) -> Ends {
    let mut streams = client.streams.clone();
    streams.extend(server.streams.iter().cloned());
    streams.sort_by_key(|s| (s.stream, s.side != Side::Sender));
    let mut intervals = client.intervals.clone();
    intervals.extend(server.intervals.iter().cloned());
    let receivers = streams.iter().filter(|s| s.side == Side::Receiver);
    let bytes: u64 = receivers.clone().map(|s| s.bytes).sum();
    let seconds = receivers.map(|s| s.seconds).fold(0.0, f64::max);
    let bits_per_second = if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    };
    let per_gb = |side: Side| {
        let cpu: f64 = streams
            .iter()
            .filter(|s| s.side == side)
            .map(|s| s.cpu_seconds)
            .sum();
        if bytes > 0 {
            cpu / (bytes as f64 / 1e9)
        } else {
            0.0
        }
    };
    let cpu_seconds_per_gb = CpuPerGb {
        sender: per_gb(Side::Sender),
        receiver: per_gb(Side::Receiver),
    };
    let retransmits = streams
        .iter()
        .filter(|s| s.side == Side::Sender)
        .filter_map(|s| s.tcp.map(|t| u64::from(t.total_retrans)))
        .sum();
    Ends {
        streams,
        intervals,
        bytes,
        seconds,
        bits_per_second,
        cpu_seconds_per_gb,
        retransmits,
    }
}

/// Where and when a session ran, and how it was asked for.
pub struct Provenance<'a> {
    /// The document's kind (`bench`, `transfer`, ...).
    pub kind: &'a str,
    /// The command line, as given.
    pub command_line: Vec<String>,
    /// When the session started.
    pub started_at: SystemTime,
    /// The client's host.
    pub client_host: &'a HostFacts,
    /// The server's host.
    pub server_host: &'a HostFacts,
    /// The parameters, as the document records them.
    pub parameters: serde_json::Value,
}

/// The `linerate.result/1` document of a session's ends, with its verdict.
pub fn document(p: Provenance, ends: Ends, verdict: Verdict) -> ResultDoc {
    let hosts = Hosts {
        client: p.client_host.clone(),
        server: Some(p.server_host.clone()),
    };
    let totals = (ends.bits_per_second, ends.bytes, ends.seconds);
    let summary = Summary::new(totals, ends.cpu_seconds_per_gb, ends.retransmits, verdict);
    ResultDoc {
        intervals: ends.intervals,
        streams: ends.streams,
        ..ResultDoc::new(
            p.kind,
            &p.command_line,
            p.started_at,
            hosts,
            p.parameters,
            summary,
        )
    }
}

/// What protected the data on the way: the cipher, the key exchange and
/// whether the kernel did the record layer (kTLS), or "none".
pub fn encryption(negotiated: Option<&linerate_secure::Negotiated>) -> serde_json::Value {
    match negotiated {
        Some(n) => serde_json::json!({
            "protocol": "TLS 1.3",
            "cipher": n.cipher,
            "key_exchange": n.key_exchange,
            "ktls": false,
            "ktls_available": linerate_secure::ktls_available(),
        }),
        None => "none".into(),
    }
}
