//! Parsers for the latency peers' outputs: sockperf ping-pong, qperf
//! tcp_lat / udp_lat and iperf2 --bounceback. Each gives a different
//! statistic, and [`LatencyPeerRun`] says which: sockperf percentiles of
//! the round trip, qperf the mean one-way latency (doubled here), iperf2
//! the mean round trip with its minimum and maximum.

use serde::Serialize;

use crate::tools::ToolError;
use crate::tools::parse::err;
use crate::tools::tool::{ComparedTool, Program};

/// One latency peer's run, in round-trip microseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyPeerRun {
    /// The mean round trip.
    pub mean_us: f64,
    /// The median round trip, where the tool gives percentiles.
    pub p50_us: Option<f64>,
    /// The 90th percentile.
    pub p90_us: Option<f64>,
    /// The 99th percentile.
    pub p99_us: Option<f64>,
    /// The 99.9th percentile.
    pub p99_9_us: Option<f64>,
    /// The 99.99th percentile.
    pub p99_99_us: Option<f64>,
    /// The shortest round trip.
    pub min_us: Option<f64>,
    /// The longest round trip.
    pub max_us: Option<f64>,
    /// Round trips the figures cover, where the tool says.
    pub rounds: Option<u64>,
    /// Requests the tool counted lost (sockperf's dropped messages).
    pub lost: Option<u64>,
    /// What the tool measured, in words.
    pub statistic: &'static str,
}

impl LatencyPeerRun {
    /// The figure to set beside linerate's median: the tool's median where
    /// it gives one, else its mean.
    pub fn central_us(&self) -> f64 {
        self.p50_us.unwrap_or(self.mean_us)
    }
}

/// The text without terminal colour escapes (sockperf prints them).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The number after `key` on the first line holding it.
fn number_after(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = &l[l.find(key)? + key.len()..];
        let num: String = rest
            .trim_start_matches([' ', '='])
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        num.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    })
}

/// `sockperf ping-pong` (TCP or UDP): percentiles, minimum and maximum of
/// the round trip with `--full-rtt`; without it sockperf prints half the
/// round trip ("Latency is"), doubled here.
pub fn sockperf(text: &str) -> Result<LatencyPeerRun, ToolError> {
    const T: &str = "sockperf";
    let text = plain(text);
    let factor = if text.contains("Round trip is") {
        1.0
    } else if text.contains("Latency is") {
        2.0
    } else {
        return Err(err(T, "no summary line (did the run end?)"));
    };
    let pct = |p: &str| number_after(&text, &format!("percentile {p} =")).map(|v| v * factor);
    let mean = number_after(&text, "avg-rtt=")
        .or_else(|| number_after(&text, "avg-latency="))
        .map(|v| v * factor)
        .ok_or_else(|| err(T, "no average"))?;
    let received = text
        .lines()
        .find(|l| l.contains("[Valid Duration]"))
        .and_then(|l| number_after(l, "ReceivedMessages="))
        .map(|v| v as u64);
    Ok(LatencyPeerRun {
        mean_us: mean,
        p50_us: pct("50.000"),
        p90_us: pct("90.000"),
        p99_us: pct("99.000"),
        p99_9_us: pct("99.900"),
        p99_99_us: pct("99.990"),
        min_us: number_after(&text, "<MIN> observation =").map(|v| v * factor),
        max_us: number_after(&text, "<MAX> observation =").map(|v| v * factor),
        rounds: received,
        lost: number_after(&text, "# dropped messages =").map(|v| v as u64),
        statistic: "round-trip percentiles",
    })
}

/// `qperf ... tcp_lat` or `udp_lat`: the mean one-way latency, doubled to
/// a round trip.
pub fn qperf(text: &str) -> Result<LatencyPeerRun, ToolError> {
    const T: &str = "qperf";
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("latency"))
        .ok_or_else(|| err(T, "no latency line"))?;
    let value = number_after(line, "latency").ok_or_else(|| err(T, "no latency figure"))?;
    let unit = line.split_whitespace().last().unwrap_or("");
    let us = match unit {
        "ns" => value / 1000.0,
        "us" => value,
        "ms" => value * 1000.0,
        "sec" | "s" => value * 1e6,
        other => {
            return Err(ToolError::UnknownUnit {
                tool: T,
                unit: other.to_string(),
            });
        }
    };
    Ok(LatencyPeerRun {
        mean_us: 2.0 * us,
        p50_us: None,
        p90_us: None,
        p99_us: None,
        p99_9_us: None,
        p99_99_us: None,
        min_us: None,
        max_us: None,
        rounds: None,
        lost: None,
        statistic: "mean one-way latency, doubled",
    })
}

/// `iperf -c ... --bounceback`: the last summary row's
/// `cnt=avg/min/max/stdev ms`.
pub fn iperf2_bounceback(text: &str) -> Result<LatencyPeerRun, ToolError> {
    const T: &str = "iperf2";
    let row = text
        .lines()
        .filter_map(|l| {
            let field = l
                .split_whitespace()
                .find(|w| w.contains('=') && w.contains('/'))?;
            let (cnt, stats) = field.split_once('=')?;
            let cnt: u64 = cnt.parse().ok()?;
            let v: Vec<f64> = stats
                .split('/')
                .map(|s| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0))
                .collect::<Option<_>>()?;
            (v.len() == 4 && l.contains(" ms")).then_some((cnt, v))
        })
        .next_back()
        .ok_or_else(|| err(T, "no bounce-back summary (cnt=avg/min/max/stdev ms)"))?;
    let (cnt, v) = row;
    Ok(LatencyPeerRun {
        mean_us: v[0] * 1000.0,
        p50_us: None,
        p90_us: None,
        p99_us: None,
        p99_9_us: None,
        p99_99_us: None,
        min_us: Some(v[1] * 1000.0),
        max_us: Some(v[2] * 1000.0),
        rounds: Some(cnt),
        lost: None,
        statistic: "mean round trip",
    })
}

/// A latency tool `compare --mode latency` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyPeer {
    /// `linerate latency`.
    Linerate,
    /// `sockperf ping-pong --full-rtt`.
    Sockperf,
    /// `qperf tcp_lat` / `udp_lat`.
    Qperf,
    /// `iperf --bounceback`.
    Iperf2,
}

/// iperf2 2.1.8's bounce-back client hangs below this size (32 B never
/// ends; 64 B runs), so `compare` skips it for smaller messages.
pub const IPERF2_BOUNCEBACK_MIN: u32 = 64;

impl ComparedTool for LatencyPeer {
    const ALL: &'static [LatencyPeer] = &[
        LatencyPeer::Linerate,
        LatencyPeer::Sockperf,
        LatencyPeer::Qperf,
        LatencyPeer::Iperf2,
    ];

    fn program(self) -> Program {
        match self {
            LatencyPeer::Linerate => Program::LINERATE,
            LatencyPeer::Sockperf => Program::SOCKPERF,
            LatencyPeer::Qperf => Program::QPERF,
            LatencyPeer::Iperf2 => Program::IPERF2,
        }
    }
}

impl LatencyPeer {
    /// Why this tool cannot run a ping-pong of `size` bytes (over UDP when
    /// `udp`), if it cannot.
    pub fn unable(self, size: u32, udp: bool) -> Option<String> {
        match self {
            LatencyPeer::Iperf2 if udp => Some("iperf2's --bounceback runs over TCP only".into()),
            LatencyPeer::Iperf2 if size < IPERF2_BOUNCEBACK_MIN => Some(format!(
                "iperf2 --bounceback hangs below {IPERF2_BOUNCEBACK_MIN} B (2.1.8)"
            )),
            LatencyPeer::Sockperf if size < 14 => {
                Some("sockperf's smallest message is 14 B, its header".into())
            }
            LatencyPeer::Linerate if udp && size < 12 => {
                Some("a linerate UDP request is at least 12 B, its header".into())
            }
            _ => None,
        }
    }

    /// Whether the server waits on a datagram socket rather than a TCP
    /// listener (sockperf's UDP server).
    pub fn server_is_udp(self, udp: bool) -> bool {
        udp && self == LatencyPeer::Sockperf
    }

    /// The server command; `host` is the address it serves on.
    pub fn server_argv(self, exe: &str, host: &str, port: u16, udp: bool) -> Vec<String> {
        let p = port.to_string();
        let v: Vec<&str> = match self {
            LatencyPeer::Linerate => vec![exe, "serve", "--port", &p],
            LatencyPeer::Sockperf if udp => vec![exe, "server", "-i", host, "-p", &p],
            LatencyPeer::Sockperf => vec![exe, "server", "--tcp", "-i", host, "-p", &p],
            LatencyPeer::Qperf => vec![exe, "-lp", &p],
            LatencyPeer::Iperf2 => vec![exe, "-s", "-p", &p],
        };
        v.into_iter().map(String::from).collect()
    }

    /// The client command: a ping-pong of `size` bytes for `seconds`, each
    /// tool with its round trip in full where it can print one.
    pub fn client_argv(
        self,
        exe: &str,
        host: &str,
        port: u16,
        size: u32,
        seconds: u32,
        udp: bool,
    ) -> Vec<String> {
        let (p, m, t) = (port.to_string(), size.to_string(), seconds.to_string());
        let target = crate::tools::tool::join_host(host, port);
        let mut v: Vec<&str> = match self {
            // Blocking in its receive as every peer does by default: spinning
            // (--busy-poll) would compare a polling loop with blocking ones.
            LatencyPeer::Linerate => {
                vec![
                    exe,
                    "latency",
                    &target,
                    "--sizes",
                    &m,
                    "-t",
                    &t,
                    "--busy-poll",
                    "off",
                    "--json",
                    "-",
                ]
            }
            LatencyPeer::Sockperf => vec![
                exe,
                "ping-pong",
                "-i",
                host,
                "-p",
                &p,
                "-t",
                &t,
                "-m",
                &m,
                "--full-rtt",
            ],
            LatencyPeer::Qperf => vec![
                exe,
                "-lp",
                &p,
                host,
                "-t",
                &t,
                "-m",
                &m,
                if udp { "udp_lat" } else { "tcp_lat" },
            ],
            LatencyPeer::Iperf2 => vec![
                exe,
                "-c",
                host,
                "-p",
                &p,
                "--bounceback",
                "--bounceback-period",
                "0",
                "-l",
                &m,
                "-t",
                &t,
            ],
        };
        match (self, udp) {
            (LatencyPeer::Linerate, true) => v.push("--udp"),
            (LatencyPeer::Sockperf, false) => v.insert(2, "--tcp"),
            _ => {}
        }
        v.into_iter().map(String::from).collect()
    }

    /// The tool's output, parsed; linerate's is a result document the
    /// caller reads itself.
    pub fn parse(self, stdout: &str) -> Result<LatencyPeerRun, ToolError> {
        match self {
            LatencyPeer::Linerate => Err(err("linerate", "a result document, not a peer output")),
            LatencyPeer::Sockperf => sockperf(stdout),
            LatencyPeer::Qperf => qperf(stdout),
            LatencyPeer::Iperf2 => iperf2_bounceback(stdout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tools::fixture;

    #[test]
    fn sockperf_3_7_full_rtt_and_half() {
        let r = sockperf(&fixture("sockperf-tcp-m14.txt")).unwrap();
        assert_eq!(r.p50_us, Some(69.673));
        assert_eq!(r.p99_us, Some(108.330));
        assert_eq!(r.p99_99_us, Some(1269.319));
        assert_eq!((r.min_us, r.max_us), (Some(19.659), Some(4245.166)));
        assert_eq!(r.mean_us, 71.575);
        assert_eq!((r.rounds, r.lost), (Some(21645), Some(0)));
        assert_eq!(r.central_us(), 69.673);
        let half = sockperf(&fixture("sockperf-tcp-m14-half.txt")).unwrap();
        assert_eq!(half.p50_us, Some(2.0 * 38.396));
        assert!(sockperf(&fixture("sockperf-udp-m14.txt")).is_ok());
        assert!(sockperf("sockperf: error").is_err());
    }

    #[test]
    fn qperf_latency_is_doubled_to_a_round_trip() {
        let r = qperf(&fixture("qperf-tcp_lat-m1.txt")).unwrap();
        assert_eq!(r.mean_us, 72.6);
        assert_eq!(r.central_us(), 72.6);
        assert_eq!(
            qperf("udp_lat:\n    latency  =  1.5 ms\n").unwrap().mean_us,
            3000.0
        );
        assert!(qperf("latency = 3 furlongs").is_err());
        assert!(qperf(&fixture("qperf-udp_lat-m14.txt")).is_ok());
    }

    #[test]
    fn iperf2_bounceback_2_1_8() {
        let r = iperf2_bounceback(&fixture("iperf2-bounceback.txt")).unwrap();
        assert_eq!(r.rounds, Some(28232));
        assert!((r.mean_us - 70.0).abs() < 1e-9, "{}", r.mean_us);
        assert!((r.min_us.unwrap() - 18.0).abs() < 1e-9);
        assert!(iperf2_bounceback("[ 1] 0.0-1.0 sec 5=x/y/z/w ms").is_err());
    }

    #[test]
    fn each_peer_says_what_it_cannot_run() {
        assert!(LatencyPeer::Iperf2.unable(32, false).is_some());
        assert!(LatencyPeer::Iperf2.unable(64, false).is_none());
        assert!(LatencyPeer::Iperf2.unable(64, true).is_some());
        assert!(LatencyPeer::Sockperf.unable(1, false).is_some());
        assert!(LatencyPeer::Qperf.unable(1, true).is_none());
        let argv = LatencyPeer::Sockperf.client_argv("sockperf", "10.0.0.2", 9, 64, 2, false);
        assert_eq!(&argv[..3], ["sockperf", "ping-pong", "--tcp"]);
        assert!(argv.iter().any(|a| a == "--full-rtt"));
        let argv = LatencyPeer::Linerate.client_argv("lr", "::1", 9, 64, 2, true);
        assert_eq!(argv[2], "[::1]:9");
        assert_eq!(argv.last().map(String::as_str), Some("--udp"));
    }
}
