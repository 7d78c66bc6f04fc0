//! Parsers for the UDP peers' outputs: iperf2 `-u` (its client's text,
//! which ends with the server's report) and iperf3 `-u -J`.

use serde::Serialize;

use crate::tools::ToolError;
use crate::tools::parse::err;
use crate::tools::tool::{ComparedTool, Program};

/// One UDP peer run, as its receiver counted it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UdpPeerRun {
    /// Received payload per second.
    pub bits_per_second: f64,
    /// Length of the run.
    pub seconds: f64,
    /// Datagrams the sender sent.
    pub datagrams: u64,
    /// Datagrams that never arrived.
    pub lost: u64,
    /// The receiver's jitter (RFC 3550's smoothed transit variation).
    pub jitter_us: f64,
    /// The sender's payload per second.
    pub sent_bits_per_second: Option<f64>,
}

impl UdpPeerRun {
    /// Datagrams lost over those sent (0 when none were sent).
    pub fn loss(&self) -> f64 {
        if self.datagrams > 0 {
            self.lost as f64 / self.datagrams as f64
        } else {
            0.0
        }
    }
}

fn finite(v: f64) -> Option<f64> {
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// A rate as iperf2 prints it: `524 Mbits/sec`.
fn rate(value: &str, unit: &str) -> Option<f64> {
    let scale = match unit {
        "bits/sec" => 1.0,
        "Kbits/sec" => 1e3,
        "Mbits/sec" => 1e6,
        "Gbits/sec" => 1e9,
        "Tbits/sec" => 1e12,
        _ => return None,
    };
    finite(value.parse::<f64>().ok()? * scale)
}

/// `iperf -c ... -u` (2.1.x): the line after "Server Report:",
/// `[ 1] 0.0000-2.0000 sec 125 MBytes 524 Mbits/sec 0.000 ms 0/89045 (0%)`.
/// A client whose server sent no report (it crashed or the report was
/// lost) is an error: the sender alone cannot say what arrived.
pub fn iperf2_udp(text: &str) -> Result<UdpPeerRun, ToolError> {
    const T: &str = "iperf2";
    let mut lines = text.lines();
    lines
        .by_ref()
        .find(|l| l.contains("Server Report:"))
        .ok_or_else(|| err(T, "no server report (the server sent none, or crashed)"))?;
    let row = lines
        .find(|l| l.contains(" sec ") && l.contains(" ms "))
        .ok_or_else(|| err(T, "no server report row"))?;
    let w: Vec<&str> = row
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']')
        .filter(|s| !s.is_empty())
        .collect();
    // The word before the first one that `is`.
    let before = |is: &dyn Fn(&str) -> bool| {
        let at = w.iter().position(|&s| is(s))?;
        Some((*w.get(at.checked_sub(1)?)?, w[at], w.get(at + 1).copied()))
    };
    let (a, b) = before(&|s| s == "sec")
        .and_then(|(v, _, _)| v.split_once('-'))
        .ok_or_else(|| err(T, "no interval"))?;
    let seconds = a
        .parse::<f64>()
        .ok()
        .zip(b.parse::<f64>().ok())
        .and_then(|(a, b)| finite(b - a))
        .ok_or_else(|| err(T, "a bad interval"))?;
    let bps = before(&|s| s.ends_with("bits/sec"))
        .and_then(|(v, unit, _)| rate(v, unit))
        .ok_or_else(|| err(T, "no bandwidth"))?;
    let (jitter, _, counts) = before(&|s| s == "ms").ok_or_else(|| err(T, "no jitter"))?;
    let jitter_ms = jitter
        .parse::<f64>()
        .ok()
        .and_then(finite)
        .ok_or_else(|| err(T, "a bad jitter"))?;
    let (lost, total) = counts
        .and_then(|s| s.split_once('/'))
        .and_then(|(l, t)| Some((l.parse::<u64>().ok()?, t.parse::<u64>().ok()?)))
        .ok_or_else(|| err(T, "no lost/total datagrams"))?;
    if lost > total {
        return Err(err(T, "more datagrams lost than sent"));
    }
    Ok(UdpPeerRun {
        bits_per_second: bps,
        seconds,
        datagrams: total,
        lost,
        jitter_us: jitter_ms * 1000.0,
        sent_bits_per_second: None,
    })
}

/// iperf3 `-u -J`: the receiver's sum (`end.sum_received`, or `end.sum`
/// from older versions) and the sender's.
pub fn iperf3_udp(text: &str) -> Result<UdpPeerRun, ToolError> {
    const T: &str = "iperf3";
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|error| ToolError::NotJson { tool: T, error })?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(ToolError::Reported {
            tool: T,
            said: e.to_string(),
        });
    }
    let end = &v["end"];
    let received = if end["sum_received"].is_object() {
        &end["sum_received"]
    } else {
        &end["sum"]
    };
    let num = |o: &serde_json::Value, k: &str| o[k].as_f64().and_then(finite);
    let bps = num(received, "bits_per_second").ok_or_else(|| err(T, "no received rate"))?;
    let seconds = num(received, "seconds").ok_or_else(|| err(T, "no length"))?;
    let datagrams = received["packets"]
        .as_u64()
        .ok_or_else(|| err(T, "no packet count"))?;
    let lost = received["lost_packets"]
        .as_u64()
        .ok_or_else(|| err(T, "no lost count"))?;
    let jitter_ms = num(received, "jitter_ms").unwrap_or(0.0);
    if lost > datagrams {
        return Err(err(T, "more datagrams lost than sent"));
    }
    Ok(UdpPeerRun {
        bits_per_second: bps,
        seconds,
        datagrams,
        lost,
        jitter_us: jitter_ms * 1000.0,
        sent_bits_per_second: num(&end["sum_sent"], "bits_per_second"),
    })
}

/// A UDP tool `compare --mode udp` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpPeer {
    /// `linerate bench --udp`.
    Linerate,
    /// `iperf -u`.
    Iperf2,
    /// `iperf3 -u`.
    Iperf3,
}

impl ComparedTool for UdpPeer {
    const ALL: &'static [UdpPeer] = &[UdpPeer::Linerate, UdpPeer::Iperf2, UdpPeer::Iperf3];

    fn program(self) -> Program {
        match self {
            UdpPeer::Linerate => Program::LINERATE,
            UdpPeer::Iperf2 => Program::IPERF2,
            UdpPeer::Iperf3 => Program::IPERF3,
        }
    }
}

impl UdpPeer {
    /// Whether each run needs a server of its own: iperf2 2.1.8's UDP
    /// server crashes (SIGSEGV) when a second client comes.
    pub fn fresh_server_per_run(self) -> bool {
        self == UdpPeer::Iperf2
    }

    /// Whether the server waits on a datagram socket (iperf2 -s -u).
    pub fn server_is_udp(self) -> bool {
        self == UdpPeer::Iperf2
    }

    /// The server command, listening on `port`.
    pub fn server_argv(self, exe: &str, port: u16) -> Vec<String> {
        let p = port.to_string();
        let v: Vec<&str> = match self {
            UdpPeer::Linerate => vec![exe, "serve", "--port", &p],
            UdpPeer::Iperf2 => vec![exe, "-s", "-u", "-p", &p],
            UdpPeer::Iperf3 => vec![exe, "-s", "-p", &p],
        };
        v.into_iter().map(String::from).collect()
    }

    /// The client command: one stream of `len`-byte datagrams at
    /// `rate_bps` for `seconds`.
    pub fn client_argv(
        self,
        exe: &str,
        host: &str,
        port: u16,
        rate_bps: u64,
        len: u32,
        seconds: u32,
    ) -> Vec<String> {
        let (p, b, l, t) = (
            port.to_string(),
            rate_bps.to_string(),
            len.to_string(),
            seconds.to_string(),
        );
        let target = crate::tools::tool::join_host(host, port);
        let v: Vec<&str> = match self {
            UdpPeer::Linerate => vec![
                exe, "bench", &target, "-u", "-b", &b, "-l", &l, "-t", &t, "--json", "-",
            ],
            UdpPeer::Iperf2 => vec![
                exe, "-c", host, "-p", &p, "-u", "-b", &b, "-l", &l, "-t", &t, "-i", "1",
            ],
            UdpPeer::Iperf3 => vec![
                exe, "-c", host, "-p", &p, "-u", "-b", &b, "-l", &l, "-t", &t, "-J",
            ],
        };
        v.into_iter().map(String::from).collect()
    }

    /// The tool's output, parsed; linerate's is a result document the
    /// caller reads itself.
    pub fn parse(self, stdout: &str) -> Result<UdpPeerRun, ToolError> {
        match self {
            UdpPeer::Linerate => Err(err("linerate", "a result document, not a peer output")),
            UdpPeer::Iperf2 => iperf2_udp(stdout),
            UdpPeer::Iperf3 => iperf3_udp(stdout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tools::fixture;

    #[test]
    fn iperf2_udp_reads_the_servers_report() {
        let r = iperf2_udp(&fixture("iperf2-udp.txt")).unwrap();
        assert_eq!((r.datagrams, r.lost), (89045, 0));
        assert_eq!(r.bits_per_second, 524e6);
        assert_eq!(r.seconds, 2.0);
        assert_eq!(r.jitter_us, 0.0);
        let lossy = "[  1] Server Report:\n[ ID] Interval Transfer Bandwidth Jitter Lost/Total\n\
                     [  1] 0.0000-2.0004 sec   255 MBytes  1.07 Gbits/sec   0.012 ms 244/182370 (0.13%)\n";
        let r = iperf2_udp(lossy).unwrap();
        assert_eq!((r.lost, r.datagrams), (244, 182370));
        assert!((r.jitter_us - 12.0).abs() < 1e-9);
        assert!((r.bits_per_second - 1.07e9).abs() < 1.0);
        let no_report = fixture("iperf2-udp.txt").replace("Server Report:", "");
        assert!(iperf2_udp(&no_report).is_err());
    }

    #[test]
    fn iperf3_udp_reads_the_receivers_sum() {
        let r = iperf3_udp(&fixture("iperf3-udp.json")).unwrap();
        assert_eq!((r.lost, r.datagrams), (1144, 169811));
        assert!((r.bits_per_second - 993_041_286.589).abs() < 1.0);
        assert!((r.jitter_us - 6.328).abs() < 0.001);
        assert!(r.sent_bits_per_second.unwrap() > r.bits_per_second);
        assert!(iperf3_udp(r#"{"error": "unable to connect"}"#).is_err());
    }
}
