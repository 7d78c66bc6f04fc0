//! A plan for a target: the buffers and streams its bounds call for, and
//! the settings that get the host there, from one audit.

use linerate_probe::units::fmt_rate;
use serde::{Deserialize, Serialize};

use crate::audit::{self, Fix};
use crate::bounds::{self, Sizing, mathis_bps, window_ceiling_bps};
use crate::facts::Facts;

pub use crate::bounds::Target;

/// Settings and commands for a host to reach a target, with the figures behind them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `linerate.plan/1`.
    pub schema: String,
    /// What the host should reach.
    pub target: Target,
    /// Segment size planned with, bytes.
    pub mss: u32,
    /// The bandwidth-delay product, bytes.
    pub bdp_bytes: u64,
    /// Streams planned.
    pub streams: u32,
    /// Socket buffer per stream (tcp_rmem/tcp_wmem max, rmem/wmem_max).
    pub buffer_bytes: u64,
    /// What one stream can reach with the current tcp_rmem/tcp_wmem maxima.
    pub current_per_stream_bps: Option<f64>,
    /// What one stream can reach with the plan's buffers.
    pub planned_per_stream_bps: f64,
    /// What the Mathis bound lets one stream reach at the target's loss.
    pub mathis_per_stream_bps: Option<f64>,
    /// Cores the streams run on (the end with fewer).
    #[serde(default)]
    pub cores: u32,
    /// What one stream on one core carried, as measured and given.
    #[serde(default)]
    pub per_core_bps: Option<f64>,
    /// The pacing rate per stream that spreads the target over the streams.
    pub pacing_per_stream_bps: f64,
    /// Sysctls to set.
    pub settings: Vec<Setting>,
    /// Commands to run (rings, offloads, governor).
    pub commands: Vec<Command>,
    /// What the plan cannot do and the user should know.
    pub notes: Vec<String>,
}

/// One sysctl the plan sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Its key.
    pub key: String,
    /// The value to set.
    pub value: String,
    /// Its value now, where read.
    pub current: Option<String>,
    /// Why.
    pub why: String,
}

impl Setting {
    /// A setting with no audit behind it (a value to mirror or to test).
    pub fn new(key: &str, value: &str, why: &str) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
            current: None,
            why: why.into(),
        }
    }
}

/// One command the plan runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Command {
    /// The command.
    pub line: String,
    /// Why.
    pub why: String,
}

/// The cores a plan runs its streams on, and what one of them carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpus {
    /// Cores of the end with fewer (this host's online CPUs by default).
    pub cores: u32,
    /// What one stream on one core carried, measured (`linerate bench -P 1`).
    pub per_core_bps: Option<f64>,
}

impl Cpus {
    /// This host's online CPUs, with no measured rate.
    pub fn of(facts: &Facts) -> Cpus {
        let cores = facts
            .cpu
            .online
            .as_deref()
            .map(|l| crate::audit::parse_cpulist(l).len() as u32)
            .filter(|&n| n > 0)
            .unwrap_or(1);
        Cpus {
            cores,
            per_core_bps: None,
        }
    }
}

/// Buffers, streams and the settings that get there from `facts`, on this
/// host's cores.
pub fn make(facts: &Facts, target: Target) -> Plan {
    make_for(facts, target, Cpus::of(facts))
}

/// Buffers, streams and the settings that get there from `facts`, with
/// the streams on `cpus`.
pub fn make_for(facts: &Facts, target: Target, cpus: Cpus) -> Plan {
    let Sizing {
        mss,
        bbr,
        needed,
        streams,
        bdp,
        buffer,
    } = bounds::size(facts, &target);
    let (streams, buffer) = match target.streams {
        Some(_) => (streams, buffer),
        None => on_cores(&target, streams, bdp, cpus),
    };
    let current = match (
        facts.sysctl_max("net.ipv4.tcp_rmem"),
        facts.sysctl_max("net.ipv4.tcp_wmem"),
    ) {
        (Some(r), Some(w)) => Some(window_ceiling_bps(r.min(w), target.rtt_s)),
        _ => None,
    };
    let mathis = target
        .loss
        .filter(|p| *p > 0.0)
        .map(|p| mathis_bps(mss, target.rtt_s, p));
    let window = window_ceiling_bps(buffer, target.rtt_s);
    let planned = if bbr {
        window
    } else {
        window.min(mathis.unwrap_or(f64::INFINITY))
    }
    // A stream runs on one core: it carries no more than that core does.
    .min(cpus.per_core_bps.unwrap_or(f64::INFINITY));
    let mut notes = cpu_notes(&target, streams, planned, cpus);
    if let (true, Some(m)) = (bbr, mathis) {
        notes.push(format!(
            "with bbr the loss rate does not bound a stream; a loss-based algorithm (cubic) would be held to {} per stream (Mathis)",
            fmt_rate(m)
        ));
    }
    if streams < needed {
        notes.push(format!(
            "{streams} streams cannot reach the target: each is held to {} by {}; {needed} would",
            fmt_rate(planned),
            if mathis.is_some_and(|m| m <= planned) {
                "the loss rate (Mathis)"
            } else {
                "the largest socket buffer"
            },
        ));
    }
    let findings = audit::judge(facts, &target, buffer);
    let mut settings = Vec::new();
    let mut commands = Vec::new();
    for f in findings.iter().filter(|f| !f.satisfied) {
        match &f.fix {
            Some(Fix::Sysctl { key, value }) => settings.push(Setting {
                key: key.clone(),
                value: value.clone(),
                current: f.current.clone(),
                why: f.why.clone(),
            }),
            Some(Fix::Command(line)) => commands.push(Command {
                line: line.clone(),
                why: f.why.clone(),
            }),
            None => notes.push(format!("{}: {}", f.item, f.why)),
        }
    }
    Plan {
        schema: "linerate.plan/1".into(),
        target,
        mss,
        bdp_bytes: bdp,
        streams,
        buffer_bytes: buffer,
        current_per_stream_bps: current,
        planned_per_stream_bps: planned,
        mathis_per_stream_bps: mathis,
        cores: cpus.cores,
        per_core_bps: cpus.per_core_bps,
        pacing_per_stream_bps: target.rate_bps / f64::from(streams),
        settings,
        commands,
        notes,
    }
}

/// The streams and buffer once the cores have their say (the user gave no
/// `-P`): a stream runs on a core, so a target above what one core
/// carries takes a stream a core, up to the cores there are (more would
/// share them); each stream's buffer is what its share of the rate needs
/// at the RTT, not the whole target's. Streams the window or loss call
/// for (`window_streams`) stay.
fn on_cores(t: &Target, window_streams: u32, bdp: u64, cpus: Cpus) -> (u32, u64) {
    let cores = cpus.cores.max(1);
    let cpu_streams = match cpus.per_core_bps {
        Some(core) if core > 0.0 => ((t.rate_bps / core).ceil() as u32).clamp(1, cores),
        // No core's rate known: the window's streams (the notes ask for it).
        _ => 1,
    };
    let streams = window_streams.max(cpu_streams);
    let per_stream =
        (t.rate_bps / f64::from(streams)).min(cpus.per_core_bps.unwrap_or(f64::INFINITY));
    let need = bounds::bdp_bytes(per_stream, t.rtt_s).min(bdp.div_ceil(u64::from(streams)));
    (streams, bounds::buffer_for(need))
}

/// Where the cores, not the window, bound the plan: more streams than
/// cores share them; with a measured per-core rate, the cores' sum below
/// the target; without one, a per-stream rate no core is known to carry.
fn cpu_notes(t: &Target, streams: u32, per_stream: f64, cpus: Cpus) -> Vec<String> {
    let mut notes = Vec::new();
    let cores = cpus.cores.max(1);
    if streams > cores {
        notes.push(format!(
            "{streams} streams on {cores} core(s): stream threads share cores, so streams beyond \
             {cores} add window but not CPU"
        ));
    }
    let used = streams.min(cores);
    match cpus.per_core_bps {
        Some(core) if f64::from(used) * core < t.rate_bps => notes.push(format!(
            "the CPU, not the window, bounds this plan: {used} core(s) at {} each carry at most {} \
             (this host's ceiling), under the {} target",
            fmt_rate(core),
            fmt_rate(f64::from(used) * core),
            fmt_rate(t.rate_bps)
        )),
        Some(_) => {}
        None => notes.push(format!(
            "each stream must carry {} on one core: measure what one core carries \
             (`linerate bench -P 1`) and give it as --per-core-rate",
            fmt_rate(per_stream.min(t.rate_bps / f64::from(streams.max(1))))
        )),
    }
    notes
}

impl Plan {
    /// A file for /etc/sysctl.d.
    pub fn sysctl_d(&self, header: &str) -> String {
        let mut s = format!("# {header}\n");
        for set in &self.settings {
            s.push_str(&format!("# {}\n{} = {}\n", set.why, set.key, set.value));
        }
        s
    }

    /// The NIC, qdisc and CPU commands, as a shell script.
    pub fn script(&self, header: &str) -> String {
        let mut s = format!("#!/bin/sh\n# {header}\nset -e\n");
        for c in &self.commands {
            s.push_str(&format!("# {}\n{}\n", c.why, c.line));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::*;

    #[test]
    fn bdp_and_buffers() {
        // 10 Gbit/s x 44 ms = 55 MB; twice that rounded up is 128 MiB.
        assert_eq!(bdp_bytes(10e9, 0.044), 55_000_000);
        assert_eq!(buffer_for(55_000_000), 128 << 20);
        assert_eq!(buffer_for(1000), MIN_BUFFER);
        assert_eq!(buffer_for(u64::MAX / 2), MAX_BUFFER);
        // 4 MiB of send buffer at 44 ms: about 381 Mbit/s.
        let c = window_ceiling_bps(4 << 20, 0.044);
        assert!((c - 381.3e6).abs() < 1e6, "{c}");
    }

    #[test]
    fn mathis_bound_and_streams() {
        // MSS 1448, 44 ms, 0.02 % loss: 1448*8/0.044*1.2247/0.01414 = 22.8 Mbit/s.
        let m = mathis_bps(1448, 0.044, 0.0002);
        assert!((m - 22.8e6).abs() < 0.2e6, "{m}");
        let t = Target {
            rate_bps: 400e9,
            rtt_s: 0.044,
            loss: Some(0.0002),
            streams: None,
            mss: Some(8948),
        };
        // Jumbo segments raise the bound ~6x: 141 Mbit/s per stream, 2838 streams, capped.
        assert_eq!(streams_needed(&t, 8948, true), MAX_STREAMS);
        // bbr is not bound by Mathis; only the int-sized buffer limits a
        // stream: ~195 Gbit/s at 44 ms.
        assert_eq!(streams_needed(&t, 8948, false), 3);
        let ten = Target {
            rate_bps: 10e9,
            loss: Some(1e-6),
            ..t
        };
        // 1e-6 loss, jumbo: 1.99 Gbit/s per cubic stream -> 6 streams.
        assert_eq!(streams_needed(&ten, 8948, true), 6);
    }

    /// 100 Gbit/s at 44 ms on two cores: the window allows one stream
    /// about 195 Gbit/s, which no core carries.
    #[test]
    fn a_plan_says_when_the_cores_bound_it() {
        let facts = Facts::default();
        let t = Target {
            rate_bps: 100e9,
            rtt_s: 0.044,
            loss: None,
            streams: None,
            mss: Some(8948),
        };
        let unmeasured = make_for(
            &facts,
            t,
            Cpus {
                cores: 2,
                per_core_bps: None,
            },
        );
        assert!(
            unmeasured
                .notes
                .iter()
                .any(|n| n.contains("--per-core-rate")),
            "{:?}",
            unmeasured.notes
        );
        let measured = Cpus {
            cores: 2,
            per_core_bps: Some(20e9),
        };
        let p = make_for(&facts, t, measured);
        assert!(p.planned_per_stream_bps <= 20e9);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("the CPU, not the window")),
            "{:?}",
            p.notes
        );
        let many = Target {
            streams: Some(8),
            ..t
        };
        let p = make_for(&facts, many, measured);
        assert!(
            p.notes.iter().any(|n| n.contains("8 streams on 2 core(s)")),
            "{:?}",
            p.notes
        );
        // Enough cores at a measured rate: nothing to say about the CPU.
        let plenty = Cpus {
            cores: 16,
            per_core_bps: Some(40e9),
        };
        let p = make_for(
            &facts,
            Target {
                streams: Some(4),
                ..t
            },
            plenty,
        );
        let about_cpu = |n: &&String| n.contains("core(s)") || n.contains("--per-core-rate");
        assert!(!p.notes.iter().any(|n| about_cpu(&n)), "{:?}", p.notes);
    }
}
