//! The host's sysctls: buffers, backlog, queueing, congestion control
//! and the TCP options a fast long path needs.

use super::features::Features;
use super::{Rules, Severity, sentences};

/// The host's sysctls, judged on the features of `facts` at a target.
pub(super) fn rules(r: &mut Rules, f: &Features) {
    let facts = r.facts;
    let (t, buffer) = (&f.target, f.buffer);
    let buf_sev = if f.buffers_short {
        Severity::Critical
    } else {
        Severity::Warn
    };
    r.triple_max(
        "net.ipv4.tcp_rmem",
        buffer,
        "131072",
        buf_sev,
        &sentences::buffer(
            f,
            "autotuning cannot open a receive window beyond this",
            f.rmem_now_bps,
        ),
    );
    r.triple_max(
        "net.ipv4.tcp_wmem",
        buffer,
        "16384",
        buf_sev,
        &sentences::buffer(
            f,
            "unacknowledged data must fit the send buffer",
            f.wmem_now_bps,
        ),
    );
    r.at_least(
        "net.core.rmem_max",
        buffer,
        Severity::Warn,
        "caps SO_RCVBUF: tools that set their own buffers (iperf -w, --window) get no more than this",
    );
    r.at_least(
        "net.core.wmem_max",
        buffer,
        Severity::Warn,
        "caps SO_SNDBUF: tools that set their own buffers get no more than this",
    );
    if t.rate_bps >= 10e9 {
        let backlog = if t.rate_bps >= 40e9 { 250_000 } else { 30_000 };
        r.at_least(
            "net.core.netdev_max_backlog",
            backlog,
            Severity::Warn,
            "packets a CPU may queue from the NIC before dropping; bursts at this rate overrun the default 1000",
        );
    }
    r.at_least(
        "net.core.optmem_max",
        1 << 20,
        Severity::Info,
        "ancillary buffer per socket; MSG_ZEROCOPY completions need more than the default",
    );
    if facts.has_module("sch_fq") {
        r.equals(
            "net.core.default_qdisc",
            "fq",
            Severity::Warn,
            "fq paces each flow and honours SO_MAX_PACING_RATE, which avoids bursts that overflow switch buffers",
        );
    } else {
        r.push(
            "host",
            "net.core.default_qdisc",
            facts.sysctl("net.core.default_qdisc").map(str::to_string),
            "fq".into(),
            facts.sysctl("net.core.default_qdisc") == Some("fq"),
            Severity::Info,
            "this kernel has no sch_fq; TCP still paces itself (since 4.13) and --fq-rate caps a socket",
            None,
        );
    }
    if f.lossy_long_path && facts.has_module("tcp_bbr") {
        r.equals(
            "net.ipv4.tcp_congestion_control",
            "bbr",
            Severity::Warn,
            "loss-based cubic halves its window on every loss; on a long lossy path bbr keeps the rate",
        );
    } else {
        r.push(
            "host",
            "net.ipv4.tcp_congestion_control",
            facts
                .sysctl("net.ipv4.tcp_congestion_control")
                .map(str::to_string),
            "cubic or bbr".into(),
            true,
            Severity::Ok,
            "without loss either reaches the window limit",
            None,
        );
    }
    r.equals(
        "net.ipv4.tcp_window_scaling",
        "1",
        Severity::Critical,
        "without window scaling no window exceeds 64 KiB",
    );
    r.equals(
        "net.ipv4.tcp_sack",
        "1",
        Severity::Warn,
        "without SACK one loss costs a whole window of retransmits",
    );
    r.equals(
        "net.ipv4.tcp_timestamps",
        "1",
        Severity::Warn,
        "RTT measurement and PAWS at high rates need timestamps",
    );
    r.equals(
        "net.ipv4.tcp_mtu_probing",
        "1",
        Severity::Warn,
        "finds the path MTU when ICMP is filtered, which jumbo frames across sites need",
    );
    r.equals(
        "net.ipv4.tcp_no_metrics_save",
        "1",
        Severity::Info,
        "a cached ssthresh from one bad transfer would slow the next one to the same host",
    );
    r.equals(
        "net.ipv4.tcp_slow_start_after_idle",
        "0",
        Severity::Info,
        "keeps the window over pauses between files or messages",
    );
    if let Some(v) = facts.sysctl("net.core.somaxconn") {
        r.push(
            "host",
            "net.core.somaxconn",
            Some(v.into()),
            v.into(),
            true,
            Severity::Ok,
            "listen backlog",
            None,
        );
    }
}
