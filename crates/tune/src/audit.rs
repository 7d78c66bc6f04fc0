//! Judging facts against a target: one finding per setting, with the
//! current value, the recommended one, why, how bad, and the exact fix.
//! Recommendations never lower a value that is already larger.
//!
//! Sources: ESnet's fasterdata host-tuning pages for 100-400G hosts (buffer
//! maxima, netdev_max_backlog 250000, fq pacing, MTU 9000, tcp_mtu_probing,
//! txqueuelen 10000, governor, irqbalance, IRQs on the NIC's node) and the
//! seed papers' before/after measurements.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::bounds::{self, Target};
use crate::facts::{Facts, Iface};

use linerate_probe::units::{fmt_bytes, fmt_rate};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Ok,
    Info,
    Warn,
    Critical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fix {
    Sysctl { key: String, value: String },
    Command(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// "host" or an interface name.
    pub scope: String,
    pub item: String,
    pub current: Option<String>,
    pub recommended: String,
    pub satisfied: bool,
    pub severity: Severity,
    pub why: String,
    pub fix: Option<Fix>,
}

impl Fix {
    pub fn command_line(&self) -> String {
        match self {
            Fix::Sysctl { key, value } => format!("sysctl -w {key}='{value}'"),
            Fix::Command(c) => c.clone(),
        }
    }
}

/// Every finding for `facts` at `target`.
pub fn audit(facts: &Facts, target: &Target) -> Vec<Finding> {
    judge(facts, target, bounds::size(facts, target).buffer)
}

struct Rules<'a> {
    facts: &'a Facts,
    out: Vec<Finding>,
}

impl Rules<'_> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        scope: &str,
        item: &str,
        current: Option<String>,
        recommended: String,
        satisfied: bool,
        severity: Severity,
        why: &str,
        fix: Option<Fix>,
    ) {
        self.out.push(Finding {
            scope: scope.to_string(),
            item: item.to_string(),
            current,
            recommended,
            satisfied,
            severity: if satisfied { Severity::Ok } else { severity },
            why: why.to_string(),
            fix: if satisfied { None } else { fix },
        });
    }

    /// A numeric sysctl that should be at least `min`.
    fn at_least(&mut self, key: &str, min: u64, severity: Severity, why: &str) {
        let cur = self.facts.sysctl_u64(key);
        let value = cur.unwrap_or(0).max(min);
        self.push(
            "host",
            key,
            self.facts.sysctl(key).map(str::to_string),
            format!(">= {min}"),
            cur.is_some_and(|c| c >= min),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value: value.to_string(),
            }),
        );
    }

    fn equals(&mut self, key: &str, want: &str, severity: Severity, why: &str) {
        let cur = self.facts.sysctl(key);
        self.push(
            "host",
            key,
            cur.map(str::to_string),
            want.to_string(),
            cur == Some(want),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value: want.into(),
            }),
        );
    }

    /// tcp_rmem / tcp_wmem: keep min and default, raise max.
    fn triple_max(
        &mut self,
        key: &str,
        min: u64,
        default_mid: &str,
        severity: Severity,
        why: &str,
    ) {
        let cur = self.facts.sysctl(key);
        let fields: Vec<&str> = cur
            .map(|c| c.split_whitespace().collect())
            .unwrap_or_default();
        let max = fields.get(2).and_then(|m| m.parse::<u64>().ok());
        let value = format!(
            "{} {} {}",
            fields.first().unwrap_or(&"4096"),
            fields.get(1).unwrap_or(&default_mid),
            max.unwrap_or(0).max(min)
        );
        self.push(
            "host",
            key,
            cur.map(str::to_string),
            format!("max >= {min}"),
            max.is_some_and(|m| m >= min),
            severity,
            why,
            Some(Fix::Sysctl {
                key: key.into(),
                value,
            }),
        );
    }
}

/// The rules themselves, with the buffer size a plan chose.
pub fn judge(facts: &Facts, t: &Target, buffer: u64) -> Vec<Finding> {
    let mut r = Rules {
        facts,
        out: Vec::new(),
    };
    let rate = fmt_rate(t.rate_bps);
    let rtt_ms = t.rtt_s * 1e3;
    let buf = fmt_bytes(buffer as f64);
    let window_now = facts
        .sysctl_max("net.ipv4.tcp_rmem")
        .zip(facts.sysctl_max("net.ipv4.tcp_wmem"))
        .map(|(a, b)| bounds::window_ceiling_bps(a.min(b), t.rtt_s));
    let short = window_now.is_some_and(|w| w < 0.5 * t.rate_bps);
    let buf_sev = if short {
        Severity::Critical
    } else {
        Severity::Warn
    };
    let ceiling = window_now.map_or(String::new(), |w| {
        format!("; now one stream tops out near {}", fmt_rate(w))
    });
    r.triple_max(
        "net.ipv4.tcp_rmem",
        buffer,
        "131072",
        buf_sev,
        &format!("autotuning cannot open a receive window beyond this; {rate} at {rtt_ms:.1} ms needs {buf} per stream{ceiling}"),
    );
    r.triple_max(
        "net.ipv4.tcp_wmem",
        buffer,
        "16384",
        buf_sev,
        &format!("unacknowledged data must fit the send buffer; {rate} at {rtt_ms:.1} ms needs {buf} per stream{ceiling}"),
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
    let lossy = t.loss.is_some_and(|p| p > 0.0) && t.rtt_s >= 0.005;
    if lossy && facts.has_module("tcp_bbr") {
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
    let fastest = facts
        .interfaces
        .iter()
        .filter_map(|i| i.speed_mbps)
        .max()
        .unwrap_or(0);
    for i in &facts.interfaces {
        iface_rules(&mut r, i, t, fastest);
    }
    cpu_rules(&mut r, t);
    memory_rules(&mut r);
    r.out
}

/// A guest whose freed memory goes back to the hypervisor pays for it again
/// at the first write: measured on the VM this project is built on.
fn memory_rules(r: &mut Rules) {
    let m = &r.facts.memory;
    let Some(reporting) = m.free_page_reporting else {
        return;
    };
    // The order counts pages; the size assumes 4 KiB pages, as on x86.
    let chunk = m.page_reporting_order.map_or(String::new(), |o| {
        format!(
            ", in free chunks of order {o}: {} of 4 KiB pages",
            fmt_bytes(4096.0 * (1u64 << o.min(40)) as f64)
        )
    });
    r.push(
        "host",
        "free page reporting",
        Some(if reporting {
            format!("on (virtio balloon{chunk})")
        } else {
            "off (virtio balloon)".into()
        }),
        "off on a host that benchmarks".into(),
        !reporting,
        Severity::Info,
        "memory this guest frees goes back to the hypervisor, which backs it again at the first write, \
         so writes into fresh memory (a new file in tmpfs, the first runs after idle) are slow and vary: \
         on the VM linerate is developed on, one writer put a median 5.4 Gbit/s into a new tmpfs file \
         3 s after the memory was freed, against 36.1 over the same pages once backed \
         (bench/fresh_memory.py); turn it off in the VM's balloon device, or compare runs only after a warm-up",
        None,
    );
}

fn iface_rules(r: &mut Rules, i: &Iface, t: &Target, fastest_mbps: u64) {
    let n = &i.name;
    // A 1G management port next to the data NIC is not held to 10G advice.
    let link_bps = i.speed_mbps.map_or(t.rate_bps, |s| s as f64 * 1e6);
    let fast = t.rate_bps.min(link_bps) >= 10e9;
    if let Some(speed) = i.speed_mbps {
        let data_nic = speed == fastest_mbps;
        r.push(
            n,
            "speed",
            Some(format!("{speed} Mb/s")),
            format!(">= {}", fmt_rate(t.rate_bps)),
            link_bps >= t.rate_bps,
            if data_nic {
                Severity::Warn
            } else {
                Severity::Info
            },
            if data_nic {
                "the target is above what the fastest link carries"
            } else {
                "slower than the target; not the data interface, presumably"
            },
            None,
        );
    }
    if i.physical
        && fast
        && let Some(mtu) = i.mtu
    {
        r.push(
            n,
            "mtu",
            Some(mtu.to_string()),
            "9000".into(),
            mtu >= 9000,
            Severity::Warn,
            "jumbo frames cut per-packet CPU cost about six times; every hop of the path must carry them",
            Some(Fix::Command(format!("ip link set dev {n} mtu 9000"))),
        );
    }
    if fast && let Some(q) = i.tx_queue_len {
        r.push(
            n,
            "txqueuelen",
            Some(q.to_string()),
            ">= 10000".into(),
            q >= 10_000,
            Severity::Info,
            "a longer device queue absorbs bursts of large windows at 10G and above",
            Some(Fix::Command(format!(
                "ip link set dev {n} txqueuelen 10000"
            ))),
        );
    }
    if let Some(q) = &i.root_qdisc {
        r.push(
            n,
            "root qdisc",
            Some(q.clone()),
            q.clone(),
            true,
            Severity::Ok,
            "the queueing discipline packets leave through",
            None,
        );
    }
    if let Some(rings) = i.ethtool.rings {
        r.push(
            n,
            "rings",
            Some(format!("rx {} tx {}", rings.rx, rings.tx)),
            format!("rx {} tx {}", rings.rx_max, rings.tx_max),
            rings.rx >= rings.rx_max && rings.tx >= rings.tx_max,
            Severity::Warn,
            "larger rings ride out interrupt and scheduling delays without dropping at line rate",
            Some(Fix::Command(format!(
                "ethtool -G {n} rx {} tx {}",
                rings.rx_max, rings.tx_max
            ))),
        );
    }
    if let Some(o) = i.ethtool.offloads {
        let on = |v: Option<bool>| v.map_or("?", |b| if b { "on" } else { "off" });
        let off: Vec<&str> = [("tso", o.tso), ("gso", o.gso), ("gro", o.gro)]
            .iter()
            .filter(|(_, v)| *v == Some(false))
            .map(|(k, _)| *k)
            .collect();
        r.push(
            n,
            "offloads",
            Some(format!(
                "tso {} gso {} gro {} lro {}",
                on(o.tso),
                on(o.gso),
                on(o.gro),
                on(o.lro)
            )),
            "tso gso gro on".into(),
            off.is_empty(),
            Severity::Warn,
            "segmentation and receive offloads move 64 KiB per stack traversal instead of one MTU",
            Some(Fix::Command(format!(
                "ethtool -K {n} {}",
                off.iter()
                    .map(|k| format!("{k} on"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        );
    }
    if let Some(c) = i.ethtool.coalesce {
        r.push(
            n,
            "interrupt coalescing",
            Some(format!(
                "adaptive-rx {} rx-usecs {} rx-frames {}",
                if c.adaptive_rx { "on" } else { "off" },
                c.rx_usecs,
                c.rx_frames
            )),
            "adaptive-rx on".into(),
            c.adaptive_rx || !i.physical,
            Severity::Info,
            "adaptive moderation batches interrupts under bulk load and keeps latency low when idle",
            Some(Fix::Command(format!("ethtool -C {n} adaptive-rx on"))),
        );
    }
    irq_rules(r, i, t);
}

fn irq_rules(r: &mut Rules, i: &Iface, t: &Target) {
    let n = &i.name;
    let Some(node) = i.numa_node else { return };
    let node_cpus = i.numa_cpus.as_deref().map(parse_cpulist);
    r.push(
        n,
        "numa node",
        Some(node.to_string()),
        node.to_string(),
        true,
        Severity::Ok,
        "run transfer threads and bind IRQs on this node's CPUs",
        None,
    );
    let Some(cpus) = node_cpus else { return };
    let list = i.numa_cpus.clone().unwrap_or_default();
    let stray: Vec<&crate::facts::Irq> = i
        .irqs
        .iter()
        .filter(|q| {
            q.affinity
                .as_deref()
                .is_some_and(|a| !parse_cpulist(a).is_subset(&cpus))
        })
        .collect();
    if i.irqs.is_empty() {
        return;
    }
    r.push(
        n,
        "irq affinity",
        Some(format!(
            "{} of {} IRQs may run off node {node}",
            stray.len(),
            i.irqs.len()
        )),
        format!("all on CPUs {list}"),
        stray.is_empty(),
        if t.rate_bps >= 40e9 {
            Severity::Warn
        } else {
            Severity::Info
        },
        "an IRQ on the far socket moves every packet across the interconnect",
        Some(Fix::Command(
            stray
                .iter()
                .map(|q| format!("echo {list} > /proc/irq/{}/smp_affinity_list", q.number))
                .collect::<Vec<_>>()
                .join("; "),
        )),
    );
}

fn cpu_rules(r: &mut Rules, t: &Target) {
    let facts = r.facts;
    let governors = &facts.cpu.governors;
    if governors.is_empty() {
        r.push(
            "host",
            "cpu governor",
            None,
            "performance".into(),
            true,
            Severity::Ok,
            "no cpufreq driver: the clock is fixed (or set by a hypervisor)",
            None,
        );
    } else {
        let all_perf = governors.keys().all(|g| g == "performance");
        r.push(
            "host",
            "cpu governor",
            Some(governors.iter().map(|(g, c)| format!("{g} x{c}")).collect::<Vec<_>>().join(", ")),
            "performance".into(),
            all_perf,
            Severity::Warn,
            "a power-saving governor lowers the clock between bursts and the per-packet work becomes slower",
            Some(Fix::Command("cpupower frequency-set -g performance".into())),
        );
    }
    if let Some(running) = facts.irqbalance_running {
        r.push(
            "host",
            "irqbalance",
            Some(if running { "running" } else { "not running" }.into()),
            "not running".into(),
            !running || t.rate_bps < 40e9,
            Severity::Warn,
            "irqbalance moves NIC interrupts away from the node they were bound to",
            Some(Fix::Command("systemctl disable --now irqbalance".into())),
        );
    }
    if let Some(active) = facts.cpu.smt_active {
        r.push(
            "host",
            "smt",
            Some(format!(
                "{} ({})",
                if active { "on" } else { "off" },
                facts.cpu.smt_control.as_deref().unwrap_or("?")
            )),
            "off".into(),
            !active || t.rate_bps < 100e9,
            Severity::Info,
            "sibling threads share one core's caches and ports with the stream threads",
            Some(Fix::Command(
                "echo off > /sys/devices/system/cpu/smt/control".into(),
            )),
        );
    }
}

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; malformed parts are ignored.
pub fn parse_cpulist(s: &str) -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    set.extend(a..=b.min(a.saturating_add(4096)));
                }
            }
            None => {
                if let Ok(v) = part.parse() {
                    set.insert(v);
                }
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpulists() {
        let s = super::parse_cpulist("0-3,8, 10-11,x,5-2");
        assert_eq!(
            s.into_iter().collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
    }
}
