//! What people read: interval lines in the iperf2 layout with TCP_INFO
//! columns, the summary with its verdict, and the JSON document.

use std::collections::HashMap;
use std::io::Write;
use std::time::SystemTime;

use anyhow::Context;
use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_result::{IntervalSample, ResultDoc, Side, TcpSample};

/// Human output, to stdout unless stdout carries JSON.
pub struct Out {
    to_stderr: bool,
    silent: bool,
}

impl Out {
    pub fn new(to_stderr: bool) -> Self {
        Out {
            to_stderr,
            silent: false,
        }
    }

    /// Prints nothing: for callers that report runs their own way (studies).
    pub fn silent() -> Self {
        Out {
            to_stderr: false,
            silent: true,
        }
    }

    pub fn line(&mut self, s: &str) {
        if self.silent {
            return;
        }
        let _ = if self.to_stderr {
            writeln!(std::io::stderr(), "{s}")
        } else {
            writeln!(std::io::stdout(), "{s}")
        };
    }
}

pub struct IntervalPrinter<'a> {
    out: &'a mut Out,
    header_done: bool,
    prev_tcp: HashMap<u16, TcpSample>,
    /// Seconds left out of the summary (`--omit`): their rows say so.
    omit: f64,
    /// UDP streams: rows show the receiver's counts, not TCP_INFO.
    udp: bool,
    /// Striped paths (`--stripe`): stream i went over path i % n, and each
    /// interval has a row per path.
    paths: usize,
    /// Each sending stream's retransmits at its last interval, for the
    /// paths' rows.
    path_retrans: HashMap<u16, u32>,
}

impl<'a> IntervalPrinter<'a> {
    pub fn new(out: &'a mut Out) -> Self {
        IntervalPrinter {
            out,
            header_done: false,
            prev_tcp: HashMap::new(),
            omit: 0.0,
            udp: false,
            paths: 0,
            path_retrans: HashMap::new(),
        }
    }

    /// Adds a row per striped path to every interval.
    pub fn paths(mut self, n: usize) -> Self {
        self.paths = n;
        self
    }

    /// Marks the rows of the first `seconds` as omitted from the summary.
    pub fn omitting(mut self, seconds: f64) -> Self {
        self.omit = seconds;
        self
    }

    /// Prints one interval of this end's samples; `peer` holds the other
    /// end's latest, whose senders' TCP_INFO fills the columns of streams
    /// this end only receives (-R).
    /// Rows of UDP streams (`bench --udp`).
    pub fn udp(mut self, on: bool) -> Self {
        self.udp = on;
        self
    }

    pub fn print(&mut self, batch: &[IntervalSample], peer: &[IntervalSample]) {
        if !self.header_done && self.udp {
            self.header_done = true;
            self.out.line(&format!(
                "[ ID] {:<13} {:>11} {:>14}  {:>9} {:>8} {:>7} {:>5} {:>5}",
                "Interval", "Transfer", "Bitrate", "Datagrams", "Lost", "Jitter", "OoO", "Dup"
            ));
        }
        if !self.header_done {
            self.header_done = true;
            self.out.line(&format!(
                "[ ID] {:<13} {:>11} {:>14}  {:>14} {:>9} {:>5} {:>5} {:>5} {:>6}",
                "Interval",
                "Transfer",
                "Bitrate",
                "RTT/var",
                "cwnd",
                "retr",
                "busy",
                "rwnd",
                "sndbuf"
            ));
        }
        // Both directions at once (--bidir): each row and sum says which,
        // seen from this end, as iperf3 does.
        let both = batch.iter().any(|s| s.side == Side::Sender)
            && batch.iter().any(|s| s.side == Side::Receiver);
        let tag = |side: Side| match (both, side) {
            (false, _) => "",
            (true, Side::Sender) => "[TX]",
            (true, Side::Receiver) => "[RX]",
        };
        // An interval that began before the omitted time ended is in it
        // (the sampler's boundaries fall a little after each mark).
        let omit = self.omit;
        let omitted = |start: f64| {
            if start + 1e-3 < omit {
                "  (omitted)"
            } else {
                ""
            }
        };
        for s in batch {
            let mut line = format!(
                "[{:>3}]{} {:>5.2}-{:<5.2} s {:>11} {:>14}",
                s.stream,
                tag(s.side),
                s.start,
                s.end,
                fmt_bytes(s.bytes as f64),
                fmt_rate(s.bits_per_second)
            );
            let sender_tcp = match s.side {
                Side::Sender => s.tcp,
                Side::Receiver if !both => peer
                    .iter()
                    .find(|p| p.side == Side::Sender && p.stream == s.stream)
                    .and_then(|p| p.tcp),
                Side::Receiver => None,
            };
            // The receiver's counts, here or from the server.
            let udp = s.udp.or_else(|| {
                peer.iter()
                    .find(|p| p.stream == s.stream && p.udp.is_some())
                    .and_then(|p| p.udp)
            });
            if let Some(u) = udp {
                line.push_str(&format!(
                    "  {:>9} {:>7.3}% {:>5.1} us {:>5} {:>5}",
                    u.datagrams,
                    u.loss * 100.0,
                    u.jitter_us,
                    u.out_of_order,
                    u.duplicates
                ));
            } else if let Some(t) = sender_tcp {
                let prev = self.prev_tcp.insert(s.stream, t).unwrap_or_default();
                let delta = |now: Option<u64>, before: Option<u64>| {
                    now.unwrap_or(0).saturating_sub(before.unwrap_or(0)) as f64
                };
                let busy = delta(t.busy_us, prev.busy_us);
                // busy: share of the interval with data to send; rwnd and
                // sndbuf: share of that busy time spent waiting on each.
                let share = |now, before| {
                    if busy == 0.0 {
                        0.0
                    } else {
                        100.0 * delta(now, before) / busy
                    }
                };
                let interval_us = (s.end - s.start) * 1e6;
                let busy_share = if interval_us > 0.0 {
                    (100.0 * busy / interval_us).min(100.0)
                } else {
                    0.0
                };
                line.push_str(&format!(
                    "  {:>14} {:>9} {:>5} {:>4.0}% {:>4.0}% {:>5.0}%",
                    format!("{}/{} us", t.rtt_us, t.rttvar_us),
                    fmt_bytes(f64::from(t.snd_cwnd) * f64::from(t.snd_mss)),
                    t.total_retrans.saturating_sub(prev.total_retrans),
                    busy_share,
                    share(t.rwnd_limited_us, prev.rwnd_limited_us),
                    share(t.sndbuf_limited_us, prev.sndbuf_limited_us),
                ));
            }
            line.push_str(omitted(s.start));
            self.out.line(&line);
        }
        self.print_paths(batch, both);
        for side in [Side::Sender, Side::Receiver] {
            let rows: Vec<&IntervalSample> =
                batch.iter().filter(|s| !both || s.side == side).collect();
            if rows.len() > 1 {
                let bytes: u64 = rows.iter().map(|s| s.bytes).sum();
                let bps: f64 = rows.iter().map(|s| s.bits_per_second).sum();
                let (a, b) = (rows[0].start, rows[0].end);
                self.out.line(&format!(
                    "[SUM]{} {a:>5.2}-{b:<5.2} s {:>11} {:>14}{}",
                    tag(side),
                    fmt_bytes(bytes as f64),
                    fmt_rate(bps),
                    omitted(a)
                ));
            }
            if !both {
                break;
            }
        }
    }
}

impl IntervalPrinter<'_> {
    /// A row per striped path: its streams' bytes, rate and retransmits.
    fn print_paths(&mut self, batch: &[IntervalSample], both: bool) {
        if self.paths < 2 {
            return;
        }
        for p in 0..self.paths {
            let rows: Vec<&IntervalSample> = batch
                .iter()
                .filter(|s| usize::from(s.stream) % self.paths == p)
                .filter(|s| !both || s.side == Side::Receiver)
                .collect();
            let Some(first) = rows.first() else { continue };
            let bytes: u64 = rows.iter().map(|s| s.bytes).sum();
            let bps: f64 = rows.iter().map(|s| s.bits_per_second).sum();
            // This end's senders' retransmits in the interval, where it sends.
            let mut retrans = None;
            for s in batch
                .iter()
                .filter(|s| usize::from(s.stream) % self.paths == p)
            {
                if let (Side::Sender, Some(t)) = (s.side, s.tcp) {
                    let before = self
                        .path_retrans
                        .insert(s.stream, t.total_retrans)
                        .unwrap_or(0);
                    *retrans.get_or_insert(0) += t.total_retrans.saturating_sub(before);
                }
            }
            self.out.line(&format!(
                "[P{:<2}] {:>5.2}-{:<5.2} s {:>11} {:>14}  path {}, {} stream(s){}",
                p + 1,
                first.start,
                first.end,
                fmt_bytes(bytes as f64),
                fmt_rate(bps),
                p + 1,
                rows.len(),
                retrans.map_or(String::new(), |r| format!(", {r} retransmits"))
            ));
        }
    }
}

/// `text` on stdout at once; a reader that stopped reading (`| head`)
/// ends it quietly, where `println!` would panic.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// `value` as one line of JSON on stdout, flushed at once (for `--json-stream`).
pub fn json_line<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, value)?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    Ok(())
}

pub fn print_summary(out: &mut Out, doc: &ResultDoc) {
    let s = &doc.summary;
    let p = &doc.parameters;
    let flag = |k: &str| p[k].as_bool().unwrap_or(false);
    let udp = p["protocol"] == "udp";
    if udp {
        let e = &s.verdict.evidence;
        let n = |k: &str| e.get(k).copied().unwrap_or(0.0);
        out.line(&format!(
            "UDP: datagrams of {}, {} sent, {} lost ({:.3} %), {} out of order, {} duplicated, \
             jitter {:.1} us",
            fmt_bytes(p["write_len"].as_f64().unwrap_or(0.0)),
            n("datagrams_sent"),
            n("datagrams_lost"),
            n("loss") * 100.0,
            n("out_of_order"),
            n("duplicates"),
            n("jitter_us")
        ));
    } else {
        out.line(&format!(
            "Settings: write {}, read {}, receivers {}{}",
            fmt_bytes(p["write_len"].as_f64().unwrap_or(0.0)),
            fmt_bytes(p["read_len"].as_f64().unwrap_or(0.0)),
            if flag("rx_poll") { "poll" } else { "block" },
            if flag("pin_pairs") {
                ", both ends of a stream on one core"
            } else if flag("pin_cores") {
                ", one core per stream thread"
            } else {
                ""
            }
        ));
    }
    // UDP retransmits nothing: its losses are in the line above.
    let retransmits = |n: u64| match udp {
        true => String::new(),
        false => format!(" ({n} retransmits)"),
    };
    for d in &s.directions {
        let way = match d.flow {
            linerate_result::Flow::ClientToServer => "Sent (client to server)",
            linerate_result::Flow::ServerToClient => "Received (server to client)",
        };
        out.line(&format!(
            "{way}: {} in {:.2} s = {} over {} stream(s){}",
            fmt_bytes(d.bytes as f64),
            d.seconds,
            fmt_rate(d.bits_per_second),
            d.streams,
            retransmits(d.retransmits)
        ));
    }
    out.line(&format!(
        "{} {} in {:.2} s = {}{}",
        if s.directions.is_empty() {
            "Received"
        } else {
            "Both ways:"
        },
        fmt_bytes(s.bytes as f64),
        s.seconds,
        fmt_rate(s.bits_per_second),
        retransmits(s.retransmits)
    ));
    out.line(&format!(
        "CPU per GB moved: sender {:.3} s, receiver {:.3} s",
        s.cpu_seconds_per_gb.sender, s.cpu_seconds_per_gb.receiver
    ));
    print_links(out, doc);
    out.line(&format!("Verdict: {}", s.verdict.sentence));
}

/// What each striped path, or each member of the bond or multipath route
/// to the peer, carried.
pub fn print_links(out: &mut Out, doc: &ResultDoc) {
    let s = &doc.summary;
    if !s.paths.is_empty() {
        out.line("Paths (--stripe):");
        for p in &s.paths {
            let from = p
                .local
                .as_deref()
                .map_or(String::new(), |l| format!("{l} -> "));
            out.line(&format!(
                "  path {:<2} {:<36} {:>2} stream(s) {:>11} {:>14} {:>5.1} % {:>6} retransmits",
                p.path,
                format!("{from}{}", p.remote),
                p.streams.len(),
                fmt_bytes(p.bytes as f64),
                fmt_rate(p.bits_per_second),
                p.share * 100.0,
                p.retransmits
            ));
        }
    }
    if !s.members.is_empty() {
        out.line("Links of the bond or multipath route to the peer (device counters):");
        for m in &s.members {
            out.line(&format!(
                "  {:<12} {:>11} {:>5.1} %",
                m.device,
                fmt_bytes(m.bytes as f64),
                m.share * 100.0
            ));
        }
    }
}

pub fn write_json<T: serde::Serialize>(doc: &T, path: &str) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(doc).context("serializing the result")?;
    if path == "-" {
        println!("{text}");
        return Ok(());
    }
    write_file(std::path::Path::new(path), (text + "\n").as_bytes())
}

/// Writes a whole file so that a reader never sees half of it: beside and
/// renamed into place. A path that is not a regular file (a device such as
/// /dev/stdout, a FIFO) is written to directly instead: renaming over it
/// would replace the device.
pub fn write_file(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if special {
        return std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// Seconds since the Unix epoch, now (the archive's and the scheduler's time).
pub fn epoch_seconds() -> f64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS` (UTC), for tables.
pub fn utc(at: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(at.max(0.0));
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ` for log lines.
pub fn timestamp() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamp_shape() {
        let t = super::timestamp();
        assert_eq!(t.len(), 24);
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }
}
