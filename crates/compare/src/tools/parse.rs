//! Parsers for what the peers print: iperf2's CSV (`-y C`), iperf3's JSON
//! (`-J`) and nuttcp's `-fparse` key=value lines.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::tools::ToolError;

/// One peer run as its client reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRun {
    /// Payload per second, all streams.
    pub bits_per_second: f64,
    /// Payload the run moved (see `counted`).
    pub bytes: u64,
    /// Length of the run.
    pub seconds: f64,
    /// Streams that reported (iperf2, iperf3) or were asked for (nuttcp).
    pub streams: u32,
    /// Every interval line the tool printed.
    pub intervals: Vec<ToolInterval>,
    /// Segments retransmitted, where the tool counts them.
    pub retransmits: Option<u64>,
    /// What the tool itself says its CPU use was, in percent (sender, receiver).
    pub cpu_percent: Option<(f64, f64)>,
    /// Which end's count `bytes` is: "received", or "sent" for tools whose
    /// client only knows what it wrote.
    pub counted: &'static str,
}

impl ToolRun {
    /// A run of `bytes` in `seconds` (its rate taken from them), counted at
    /// the end `counted` names, with nothing else the tool might report.
    fn timed(
        tool: &'static str,
        (bytes, seconds): (u64, f64),
        streams: u32,
        intervals: Vec<ToolInterval>,
        counted: &'static str,
    ) -> Result<ToolRun, ToolError> {
        if seconds <= 0.0 {
            return Err(err(tool, "the run lasted no time"));
        }
        Ok(ToolRun {
            bits_per_second: bytes as f64 * 8.0 / seconds,
            bytes,
            seconds,
            streams,
            intervals,
            retransmits: None,
            cpu_percent: None,
            counted,
        })
    }
}

/// One interval line of a peer's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInterval {
    /// 1-based stream number; 0 for a tool's all-streams line.
    pub stream: u16,
    /// Seconds from the run's start to the interval's.
    pub start: f64,
    /// Seconds from the run's start to the interval's end.
    pub end: f64,
    /// Payload in the interval.
    pub bytes: u64,
    /// The sender's smoothed round trip at the interval's end (iperf3).
    pub rtt_us: Option<u32>,
    /// The sender's congestion window at the interval's end (iperf3).
    pub cwnd_bytes: Option<u32>,
    /// Segments retransmitted in the interval.
    pub retransmits: Option<u32>,
}

/// A parse error of `tool`'s output.
pub(crate) fn err(tool: &'static str, missing: &'static str) -> ToolError {
    ToolError::Parse { tool, missing }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// iperf2 2.x client CSV: `time,src,sport,dst,dport,id,start-end,bytes,bps`.
/// With `-i`, each stream has interval lines and then a line from 0 to the
/// end, its total; `-1` lines are sums and are recomputed instead.
pub fn iperf2_csv(text: &str) -> Result<ToolRun, ToolError> {
    const T: &str = "iperf2";
    let mut by_id: BTreeMap<i64, Vec<(f64, f64, u64)>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() < 9 {
            continue;
        }
        let Ok(id) = f[5].parse::<i64>() else {
            continue;
        };
        let Some((a, b)) = f[6].split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (a.parse::<f64>(), b.parse::<f64>()) else {
            continue;
        };
        let Ok(bytes) = f[7].parse::<u64>() else {
            continue;
        };
        if id < 0 || !(start.is_finite() && end.is_finite() && end >= start) {
            continue;
        }
        by_id.entry(id).or_default().push((start, end, bytes));
    }
    if by_id.is_empty() {
        return Err(err(T, "no per-stream CSV lines (was it run with -y C?)"));
    }
    let mut intervals = Vec::new();
    let mut bytes = 0u64;
    let mut seconds = 0.0f64;
    for (n, lines) in by_id.values().enumerate() {
        let stream = u16::try_from(n + 1).unwrap_or(u16::MAX);
        let total = lines
            .iter()
            .filter(|l| l.0 == 0.0)
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .copied()
            .ok_or_else(|| err(T, "a stream has no total line"))?;
        bytes = bytes.saturating_add(total.2);
        seconds = seconds.max(total.1);
        if lines.len() > 1 {
            for l in lines.iter().filter(|l| **l != total) {
                intervals.push(ToolInterval {
                    stream,
                    start: l.0,
                    end: l.1,
                    bytes: l.2,
                    rtt_us: None,
                    cwnd_bytes: None,
                    retransmits: None,
                });
            }
        }
    }
    let streams = by_id.len() as u32;
    ToolRun::timed(T, (bytes, seconds), streams, intervals, "sent")
}

/// iperf3 `-J`: the receiver's sum, per-stream intervals with the sender's
/// TCP_INFO (rtt, cwnd, retransmits), and its CPU figures.
pub fn iperf3_json(text: &str) -> Result<ToolRun, ToolError> {
    const T: &str = "iperf3";
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|error| ToolError::NotJson { tool: T, error })?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(ToolError::Reported {
            tool: T,
            said: e.to_string(),
        });
    }
    let end = v.get("end").ok_or_else(|| err(T, "no \"end\" section"))?;
    let sum = end
        .get("sum_received")
        .or_else(|| end.get("sum"))
        .ok_or_else(|| err(T, "no received sum"))?;
    let num = |o: &serde_json::Value, k: &str| o.get(k).and_then(|x| x.as_f64()).and_then(finite);
    let bits = num(sum, "bits_per_second").ok_or_else(|| err(T, "no bits_per_second"))?;
    let bytes = num(sum, "bytes").ok_or_else(|| err(T, "no bytes"))?;
    let seconds = num(sum, "seconds").ok_or_else(|| err(T, "no seconds"))?;
    let mut sockets: Vec<i64> = Vec::new();
    let mut intervals = Vec::new();
    for iv in v
        .get("intervals")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        for s in iv
            .get("streams")
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
        {
            let socket = s.get("socket").and_then(|x| x.as_i64()).unwrap_or(-1);
            let idx = match sockets.iter().position(|&k| k == socket) {
                Some(i) => i,
                None => {
                    sockets.push(socket);
                    sockets.len() - 1
                }
            };
            let (Some(start), Some(stop), Some(b)) =
                (num(s, "start"), num(s, "end"), num(s, "bytes"))
            else {
                continue;
            };
            let small = |k: &str| {
                s.get(k)
                    .and_then(|x| x.as_u64())
                    .and_then(|x| u32::try_from(x).ok())
            };
            intervals.push(ToolInterval {
                stream: u16::try_from(idx + 1).unwrap_or(u16::MAX),
                start,
                end: stop,
                bytes: b.max(0.0) as u64,
                rtt_us: small("rtt"),
                cwnd_bytes: small("snd_cwnd"),
                retransmits: small("retransmits"),
            });
        }
    }
    let cpu = end.get("cpu_utilization_percent");
    let cpu_percent = cpu.and_then(|c| Some((num(c, "host_total")?, num(c, "remote_total")?)));
    Ok(ToolRun {
        bits_per_second: bits,
        bytes: bytes.max(0.0) as u64,
        seconds,
        streams: sockets.len().max(1) as u32,
        intervals,
        retransmits: end
            .get("sum_sent")
            .and_then(|s| s.get("retransmits"))
            .and_then(|x| x.as_u64()),
        cpu_percent,
        counted: "received",
    })
}

/// nuttcp `-fparse`: `megabytes=... real_sec=...` interval lines (all
/// streams together) and a final `real_seconds=` line. Megabytes are MiB.
pub fn nuttcp_parse(text: &str, streams: u32) -> Result<ToolRun, ToolError> {
    const T: &str = "nuttcp";
    let mut intervals = Vec::new();
    let mut at = 0.0;
    let mut last = None;
    for line in text.lines() {
        let kv: BTreeMap<&str, &str> = line
            .split_whitespace()
            .filter_map(|f| f.split_once('='))
            .collect();
        let f = |k: &str| {
            kv.get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .and_then(finite)
        };
        let Some(mib) = f("megabytes") else { continue };
        let bytes = (mib.max(0.0) * 1_048_576.0) as u64;
        if let Some(secs) = f("real_seconds") {
            // real_seconds is printed to 10 ms; the tool's own rate is exact.
            let bps = f("rate_Mbps").map(|r| r * 1e6).filter(|r| *r > 0.0);
            let secs = bps.map_or(secs, |b| bytes as f64 * 8.0 / b);
            last = Some((bytes, secs, f("tx_cpu"), f("rx_cpu"), f("retrans")));
        } else if let Some(secs) = f("real_sec") {
            intervals.push(ToolInterval {
                stream: 0,
                start: at,
                end: at + secs,
                bytes,
                rtt_us: None,
                cwnd_bytes: None,
                retransmits: None,
            });
            at += secs;
        }
    }
    let (bytes, seconds, tx, rx, retrans) = last.ok_or_else(|| {
        err(
            T,
            "no final line (real_seconds=...); was it run with -fparse?",
        )
    })?;
    Ok(ToolRun {
        retransmits: retrans.map(|r| r as u64),
        cpu_percent: tx.zip(rx),
        ..ToolRun::timed(T, (bytes, seconds), streams, intervals, "received")?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tools::fixture;

    #[test]
    fn iperf2_csv_from_2_1_8() {
        let r = iperf2_csv(&fixture("iperf2-P2-i1.csv")).unwrap();
        assert_eq!(r.streams, 2);
        assert_eq!(r.bytes, 10_355_998_780 + 10_510_794_812);
        assert_eq!(r.seconds, 3.0);
        assert!(
            (r.bits_per_second - 55.64e9).abs() < 0.01e9,
            "{}",
            r.bits_per_second
        );
        assert_eq!(r.intervals.len(), 6);
        assert_eq!(r.intervals.iter().filter(|i| i.stream == 1).count(), 3);
        let one = iperf2_csv(&fixture("iperf2-P1-i1.csv")).unwrap();
        assert_eq!(one.streams, 1);
        assert_eq!(one.intervals.len(), 2);
    }

    #[test]
    fn iperf3_json_from_3_12() {
        let r = iperf3_json(&fixture("iperf3-P2.json")).unwrap();
        assert_eq!(r.streams, 2);
        assert_eq!(r.bytes, 10_071_572_480);
        assert!((r.bits_per_second - 26_855_628_815.56).abs() < 1.0);
        assert!(
            r.intervals
                .iter()
                .all(|i| i.rtt_us.is_some() && i.cwnd_bytes.is_some())
        );
        assert_eq!(r.intervals.len(), 6);
        let (tx, rx) = r.cpu_percent.unwrap();
        assert!(tx > 90.0 && rx > 40.0);
        assert!(iperf3_json(&fixture("iperf3-P1.json")).unwrap().streams == 1);
        assert!(iperf3_json(r#"{"error": "unable to connect to server"}"#).is_err());
    }

    #[test]
    fn nuttcp_fparse_from_6_1_2() {
        let r = nuttcp_parse(&fixture("nuttcp-N2-i1.txt"), 2).unwrap();
        assert_eq!(r.bytes, 13142 * 1_048_576);
        assert!((r.seconds - 3.0).abs() < 0.005);
        // nuttcp's own rate_Mbps=36757.0440
        assert!(
            (r.bits_per_second / 1e6 - 36757.04).abs() < 0.1,
            "{}",
            r.bits_per_second
        );
        assert_eq!(r.intervals.len(), 2);
        assert_eq!(r.cpu_percent, Some((98.0, 43.0)));
        let one = nuttcp_parse(&fixture("nuttcp-N1.txt"), 1).unwrap();
        assert_eq!(one.retransmits, Some(0));
        assert!(nuttcp_parse("nuttcp-t: v6.1.2: Error: connect: Connection refused", 1).is_err());
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,400}") {
            let _ = iperf2_csv(&s);
            let _ = iperf3_json(&s);
            let _ = nuttcp_parse(&s, 1);
        }

        #[test]
        fn iperf2_lines_with_odd_numbers_never_panic(id in -3i64..5, a in -1e3f64..1e3, b in -1e3f64..1e3, n in 0u64..u64::MAX) {
            let line = format!("1,h,1,h,2,{id},{a}-{b},{n},1\n1,h,1,h,2,{id},0.0-{b},{n},1");
            let _ = iperf2_csv(&line);
        }
    }
}
