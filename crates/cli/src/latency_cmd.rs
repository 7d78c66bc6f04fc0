//! `linerate latency`: round-trip percentiles and bandwidth against message
//! size, idle and under load, against `linerate serve`.

use anyhow::Context;
use clap::Args;
use linerate_engine::latency;
use linerate_engine::spec::{BusyPoll, LatencySpec, SocketParams};

use crate::flags::{AddressFlags, CongestionFlags, MarkFlags};
use linerate_engine::spec::MAX_LATENCY_CONNECTIONS;
use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_result::latency::{Pattern, Step};

use crate::bench_cmd::resolve_target;
use crate::usage::UsageError;
use crate::{output, signals, units};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum BusyPollArg {
    Auto,
    On,
    Off,
}

#[derive(Args, Clone)]
#[command(after_help = "Examples:\n  \
    linerate latency 10.0.0.2                      1-byte ping-pong for 5 s: p50 ... p99.99\n  \
    linerate latency 10.0.0.2 --sizes 1..4M        round trip against size, osu_latency style\n  \
    linerate latency 10.0.0.2 --bandwidth          bandwidth against size, osu_bw style\n  \
    linerate latency 10.0.0.2 --load 4 -t 10       idle, then beside 4 bulk streams\n  \
    linerate latency 10.0.0.2 --udp                UDP ping-pong of 14-byte datagrams\n  \
    linerate latency 10.0.0.2 --json lat.json && linerate report lat.json -o lat.html")]
pub struct LatencyArgs {
    /// Server to measure against: HOST, HOST:PORT or [V6]:PORT.
    pub host: String,
    /// Server port (or give HOST:PORT).
    #[arg(short = 'p', long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Connections, each its own ping-pong, all at once.
    #[arg(short = 'P', long, value_name = "N", default_value_t = 1, value_parser = parse_connections)]
    pub connections: u16,
    /// Request sizes: one (64), a list (1,64,4K) or a sweep of powers of two (1..4M).
    /// Default: 1 byte; with --bandwidth, 1..4M; with --udp, 14 bytes (sockperf's).
    #[arg(long, value_name = "SIZES", value_parser = parse_size_list)]
    pub sizes: Option<Sizes>,
    /// Reply size. Default: the request's size (a ping-pong); 1 byte with --bandwidth.
    #[arg(long, value_name = "BYTES", value_parser = parse_message)]
    pub reply_size: Option<u32>,
    /// Bandwidth against message size (osu_bw style): windows of --window-messages
    /// requests back to back, one reply per window.
    #[arg(long)]
    pub bandwidth: bool,
    /// The ping-pong over UDP: each request and reply one datagram of 12 B (its
    /// header: a sequence number and the reply's size) to 65,507 B. A reply that takes
    /// 4x the slowest round trip so far (at least 20 ms) counts as lost, not timed.
    #[arg(short = 'u', long, conflicts_with_all = ["bandwidth", "window_messages"])]
    pub udp: bool,
    /// Requests outstanding in each window of --bandwidth. Default: 64 (osu_bw's), or as
    /// many as make 64 KiB for small messages.
    #[arg(long, value_name = "N", value_parser = parse_window)]
    pub window_messages: Option<u32>,
    /// How long each size runs at most. Default: 5 s for one size, 1 s a size in a sweep.
    #[arg(short = 't', long = "time", value_name = "TIME", value_parser = parse_step_time)]
    pub time_ms: Option<u64>,
    /// Most measured rounds of each size per connection. Default: none for one size
    /// (it runs for -t); in a sweep osu's 10,000 (1,000 above 8 KiB; 100 and 20 with
    /// --bandwidth).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub iterations: Option<u64>,
    /// Rounds left out before each size is measured. Default: osu's 1,000 (100 above
    /// 8 KiB; 10 and 2 with --bandwidth), within a tenth of -t.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64))]
    pub warmup: Option<u64>,
    /// Both ends spin on non-blocking receives (and set SO_BUSY_POLL) instead of
    /// sleeping in them: lower latency for a core kept busy at each end. auto spins
    /// where every spinning thread finds an idle core and no --load needs them, and
    /// each end blocks from the moment it waits for its core (the result says which).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", num_args = 0..=1, default_missing_value = "on")]
    pub busy_poll: BusyPollArg,
    /// Measure each size idle, then again beside N bulk streams to the same server
    /// (latency under load: the queue they build).
    #[arg(long, value_name = "N", value_parser = crate::units::parse_streams)]
    pub load: Option<u16>,
    /// Give up when the server sends no reply for this long.
    #[arg(long, value_name = "TIME", default_value = "5", value_parser = parse_timeout)]
    pub timeout: u64,
    #[command(flatten)]
    pub cc: CongestionFlags,
    #[command(flatten)]
    pub mark: MarkFlags,
    #[command(flatten)]
    pub address: AddressFlags,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
    /// Write the linerate.result/1 document to FILE ('-' for stdout; human output then
    /// goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

/// The sizes of `--sizes`, as one value (clap would take a `Vec` for
/// a flag given many times).
#[derive(Clone, Debug)]
pub struct Sizes(Vec<u32>);

fn parse_size_list(s: &str) -> Result<Sizes, String> {
    units::parse_sizes(s).map(Sizes)
}

fn parse_connections(s: &str) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(n) if (1..=MAX_LATENCY_CONNECTIONS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a connection count (1 to {MAX_LATENCY_CONNECTIONS})"
        )),
    }
}

fn parse_message(s: &str) -> Result<u32, String> {
    match units::parse_sizes(s)?.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!("'{s}': one size")),
    }
}

fn parse_window(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=linerate_engine::spec::MAX_WINDOW).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a window (1 to {})",
            linerate_engine::spec::MAX_WINDOW
        )),
    }
}

fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a count (at least 1)")),
    }
}

fn parse_step_time(s: &str) -> Result<u64, String> {
    match units::parse_duration_ms(s)? {
        0 => Err(format!("'{s}': each size needs some time")),
        ms if ms > 24 * 3600 * 1000 => Err(format!("'{s}': at most a day a size")),
        ms => Ok(ms),
    }
}

fn parse_timeout(s: &str) -> Result<u64, String> {
    match units::parse_duration_ms(s)? {
        ms if (1..=3_600_000).contains(&ms) => Ok(ms),
        _ => Err(format!("'{s}': the timeout is 1 ms to 1 hour")),
    }
}

impl LatencyArgs {
    pub fn spec(&self) -> LatencySpec {
        let pattern = if self.bandwidth {
            linerate_engine::spec::Pattern::Window
        } else {
            linerate_engine::spec::Pattern::PingPong
        };
        let sizes =
            self.sizes
                .clone()
                .map(|s| s.0)
                .unwrap_or_else(|| match (self.bandwidth, self.udp) {
                    (true, _) => units::parse_sizes("1..4M").unwrap_or_default(),
                    // sockperf's default, whose header is as long as ours.
                    (false, true) => vec![14],
                    (false, false) => vec![1],
                });
        let step_ms = self
            .time_ms
            .unwrap_or(if sizes.len() > 1 { 1000 } else { 5000 });
        LatencySpec {
            connections: self.connections,
            pattern,
            sizes,
            reply_len: self.reply_size,
            window: self.window_messages,
            iterations: self.iterations,
            warmup: self.warmup,
            step_ms,
            busy_poll: match self.busy_poll {
                BusyPollArg::Auto => BusyPoll::Auto,
                BusyPollArg::On => BusyPoll::On,
                BusyPollArg::Off => BusyPoll::Off,
            },
            timeout_ms: self.timeout,
            load: self.load,
            udp: self.udp,
            socket: {
                let mut socket = SocketParams::default();
                self.cc.apply(&mut socket);
                self.mark.apply(&mut socket);
                socket
            },
            bind: self.address.bind.first().copied(),
        }
    }
}

pub fn run(a: LatencyArgs) -> anyhow::Result<()> {
    let server = resolve_target(&a.host, a.port, &a.address)?;
    a.address
        .bind()
        .map_err(|e| crate::usage::UsageError(e.to_string()))?;
    let spec = a.spec();
    spec.check().map_err(|e| UsageError(e.to_string()))?;
    let mut out = output::Out::new(a.json.as_deref() == Some("-"));
    out.line(&header(server, &spec));
    let mut table = Table::default();
    let run = latency::run(
        server,
        &spec,
        Some(signals::interrupt_flag()),
        &mut |step| table.row(&mut out, step),
    )
    .with_context(|| format!("latency against {server} failed"))?;
    let doc = latency::to_result(&run, crate::argv::command_line());
    if let Some(l) = &doc.latency {
        let how = if l.busy_poll {
            "spinning (busy-poll)"
        } else {
            "blocking"
        };
        out.line(&format!(
            "Receives: {}",
            l.busy_poll_choice.as_deref().unwrap_or(how)
        ));
        out.line(&format!(
            "Clock: {}, {:.0} ns a reading (not taken off the round trips).",
            l.clock.source, l.clock.overhead_ns
        ));
        if let Some(load) = &l.load {
            out.line(&format!(
                "Load: {} bulk stream(s) at {}, {} retransmits",
                load.streams,
                fmt_rate(load.bits_per_second),
                load.retransmits
            ));
        }
    }
    out.line(&format!("Verdict: {}", doc.summary.verdict.sentence));
    if let Some(path) = &a.json {
        output::write_json(&doc, path)?;
    }
    a.history.record(&doc);
    if doc.interrupted {
        return Err(signals::Interrupted("interrupted; the result covers what ran".into()).into());
    }
    Ok(())
}

fn header(server: std::net::SocketAddr, spec: &LatencySpec) -> String {
    let what = match spec.pattern {
        linerate_engine::spec::Pattern::PingPong if spec.udp => "UDP ping-pong".to_string(),
        linerate_engine::spec::Pattern::PingPong => "TCP ping-pong".to_string(),
        linerate_engine::spec::Pattern::Window => match spec.window {
            Some(w) => format!("TCP bandwidth, windows of {w} messages"),
            None => "TCP bandwidth, windows of 64 messages or 64 KiB".to_string(),
        },
    };
    format!(
        "linerate latency to {server}: {what}, {} connection(s), {} size(s), up to {:.1} s each, \
         receives {}{}",
        spec.connections,
        spec.sizes.len(),
        spec.step_ms as f64 / 1000.0,
        match spec.busy_poll {
            BusyPoll::Auto => "spin or block (auto)",
            BusyPoll::On => "spin",
            BusyPoll::Off => "block",
        },
        match spec.load {
            Some(n) => format!(", idle then beside {n} bulk stream(s)"),
            None => String::new(),
        }
    )
}

/// One row per step, under a header printed once for each pattern.
#[derive(Default)]
struct Table {
    header: Option<Pattern>,
}

/// A UDP row's lost rounds, after its columns.
fn lost(s: &Step) -> String {
    s.lost_rounds.map_or(String::new(), |n| format!(" {n:>8}"))
}

impl Table {
    fn row(&mut self, out: &mut output::Out, s: &Step) {
        if self.header != Some(s.pattern) {
            self.header = Some(s.pattern);
            out.line(match s.pattern {
                Pattern::PingPong if s.lost_rounds.is_some() => {
                    "phase       size    reply     rounds    p50 us    p90 us    p99 us  p99.9 us p99.99 us    max us    trans/s     lost"
                }
                Pattern::PingPong => {
                    "phase       size    reply     rounds    p50 us    p90 us    p99 us  p99.9 us p99.99 us    max us    trans/s"
                }
                Pattern::Window => {
                    "phase       size   window     rounds        rate        msgs/s  p50 round us"
                }
            });
        }
        let phase = s.phase.as_deref().unwrap_or("-");
        let p = s.round_trip_us;
        out.line(&match s.pattern {
            Pattern::PingPong => format!(
                "{phase:<6} {:>9} {:>8} {:>10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.0}{}",
                fmt_bytes(f64::from(s.request_bytes)),
                fmt_bytes(f64::from(s.reply_bytes)),
                s.rounds,
                p.p50,
                p.p90,
                p.p99,
                p.p99_9,
                p.p99_99,
                p.max,
                s.transactions_per_second,
                lost(s)
            ),
            Pattern::Window => format!(
                "{phase:<6} {:>9} {:>8} {:>10} {:>12} {:>12.0} {:>13.1}",
                fmt_bytes(f64::from(s.request_bytes)),
                s.window,
                s.rounds,
                fmt_rate(s.bits_per_second),
                s.messages_per_second,
                p.p50
            ),
        });
    }
}
