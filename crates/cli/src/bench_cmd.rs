use linerate_engine::spec::BenchOptions;
use std::net::SocketAddr;

use clap::Args;
use linerate_engine::spec::{Affinity, BenchSpec, PayloadBytes, RxPoll, SocketParams, UdpSpec};

/// `bench --udp` without -b: iperf2's 1 Mbit/s default says nothing about
/// a path of today.
const UDP_DEFAULT_RATE: u64 = 1_000_000_000;
use linerate_engine::spec::Direction;
use linerate_verdict::{Capacity, KnownPath};

use crate::flags::{AddressFlags, BufferFlags, CongestionFlags, MarkFlags, StripeFlags};
use crate::usage::{self, UsageError};
use crate::{measure, output, signals, units};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum AffinityArg {
    /// Pin only where it measured faster: polling receivers on one host get a
    /// core per thread at up to one thread per core, a core per stream at up to four.
    Auto,
    Off,
    /// One core per stream thread: client stream i on the 2i-th usable CPU, server on the next.
    Spread,
    /// Both ends of stream i on the i-th usable CPU (both ends on one host).
    Pairs,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum PayloadArg {
    Random,
    Zeros,
}

impl From<PayloadArg> for PayloadBytes {
    fn from(a: PayloadArg) -> PayloadBytes {
        match a {
            PayloadArg::Random => PayloadBytes::Random,
            PayloadArg::Zeros => PayloadBytes::Zeros,
        }
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum RxPollArg {
    /// Poll on loopback while there are at most four stream threads per core;
    /// between namespaces of one host only while threads share cores.
    Auto,
    On,
    Off,
}

impl From<RxPollArg> for RxPoll {
    fn from(a: RxPollArg) -> RxPoll {
        match a {
            RxPollArg::Auto => RxPoll::Auto,
            RxPollArg::On => RxPoll::On,
            RxPollArg::Off => RxPoll::Off,
        }
    }
}

#[derive(Args, Clone)]
#[command(
    after_help = "Examples:\n  linerate bench 10.0.0.2                   1 stream, 10 s\n  linerate bench 10.0.0.2 -P 8 -t 30 -i 5   8 streams, 30 s, 5 s intervals\n  linerate bench dtn2 -R --cc bbr --window 256M --json run.json\n  linerate bench [fd00::2]:6000 -6 -n 100G   100 GB, then stop"
)]
pub struct BenchArgs {
    /// Server to measure against: HOST, HOST:PORT or [V6]:PORT.
    pub host: String,
    /// Server port, as iperf's -p (or give HOST:PORT).
    #[arg(short = 'p', long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Parallel streams, one thread and one socket each.
    #[arg(short = 'P', long, value_name = "N", default_value_t = 1, value_parser = units::parse_streams)]
    pub streams: u16,
    /// Run length (seconds, or with ms/s/m/h) [default: 10; with --find-rate, each probe's: 2].
    #[arg(id = "duration_ms", short = 't', long = "time", value_name = "TIME", value_parser = units::parse_duration_ms)]
    pub time_ms: Option<u64>,
    /// Send this many bytes in total (e.g. 10G) instead of running for a time.
    #[arg(short = 'n', long, value_parser = units::parse_size)]
    pub bytes: Option<u64>,
    /// Bytes per write call. Default: 1M when every stream thread has a core, else 128K.
    #[arg(short = 'l', long = "len", value_name = "BYTES", value_parser = units::parse_size_u32)]
    pub write_len: Option<u32>,
    /// Bytes per read call at the receiver. Default: 1M when every stream thread has a core and
    /// receivers block, else 128K.
    #[arg(long = "read-len", value_name = "BYTES", value_parser = units::parse_size_u32)]
    pub read_len: Option<u32>,
    /// Server sends, client receives.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (-P streams each way).
    #[arg(long)]
    pub bidir: bool,
    /// Seconds between interval reports (0: none).
    #[arg(short = 'i', long = "interval", value_name = "TIME", default_value = "1", value_parser = units::parse_duration_ms)]
    pub interval_ms: u64,
    /// Leave out the first seconds (slow start) from the summary.
    #[arg(long = "omit", value_name = "TIME", default_value = "0", value_parser = units::parse_duration_ms)]
    pub omit_ms: u64,
    #[command(flatten)]
    pub buffers: BufferFlags,
    #[command(flatten)]
    pub cc: CongestionFlags,
    /// Pacing cap per stream (SO_MAX_PACING_RATE), in bits/s, e.g. 9G.
    #[arg(long = "fq-rate", value_name = "RATE", value_parser = units::parse_rate)]
    pub fq_rate: Option<u64>,
    /// Total rate cap of each direction, bits/s (e.g. 2G), split evenly over its streams, each
    /// paced (SO_MAX_PACING_RATE). iperf3's -b caps each stream instead.
    #[arg(id = "udp.rate_bps", short = 'b', long = "bitrate", value_name = "RATE", value_parser = units::parse_rate, conflicts_with = "fq_rate")]
    pub bitrate: Option<u64>,
    /// The path's capacity where you know it (e.g. 10G, a NIC's or a circuit's rate): the
    /// verdict gives the run's share of it, and a run at 90 % of it or more is a full path.
    /// Default: a lab's --rate when run in one of its hosts (`lab exec`).
    #[arg(long, value_name = "RATE", value_parser = units::parse_rate)]
    pub capacity: Option<u64>,
    /// TCP maximum segment size (TCP_MAXSEG).
    #[arg(short = 'M', long, value_parser = units::parse_size_u32)]
    pub mss: Option<u32>,
    /// TCP_NODELAY on every stream at both ends: each write leaves at once instead of waiting
    /// to fill a segment (iperf3's -N). Default: Nagle on, as for any bulk sender.
    #[arg(short = 'N', long)]
    pub no_delay: bool,
    /// Bytes a sending socket may hold not yet sent before its writer waits
    /// (TCP_NOTSENT_LOWAT), at both ends' senders. Default: the kernel's (no limit).
    #[arg(long, value_name = "BYTES", value_parser = units::parse_size_u32)]
    pub notsent_lowat: Option<u32>,
    #[command(flatten)]
    pub mark: MarkFlags,
    #[command(flatten)]
    pub address: AddressFlags,
    #[command(flatten)]
    pub stripe: StripeFlags,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
    /// Send with MSG_ZEROCOPY (pays off on real NICs with large writes; loopback copies anyway).
    #[arg(long)]
    pub zerocopy: bool,
    /// Encrypt every stream (TLS 1.3, as transfers do), to measure what
    /// encryption costs; the summary and the result name the cipher. The
    /// server is trusted as `send` trusts a daemon (--server-fingerprint,
    /// or known_servers, recorded at the first contact).
    #[arg(long)]
    pub encrypt: bool,
    /// The fingerprint of the server's certificate (`linerate serve` logs it).
    #[arg(long, value_name = "SHA256", requires = "encrypt")]
    pub server_fingerprint: Option<String>,
    /// UDP instead of TCP: datagrams of -l bytes (default 1472) at -b bits/s (default 1G, all
    /// streams of a direction together), each numbered and timed; the receiver counts loss,
    /// reordering, duplicates and jitter (RFC 3550) per interval.
    #[arg(short = 'u', long, conflicts_with_all = ["encrypt", "fq_rate", "zerocopy", "skip_rx_copy"])]
    pub udp: bool,
    /// With --udp: one datagram per send, not many (UDP_SEGMENT, GSO).
    #[arg(long, requires = "udp")]
    pub no_gso: bool,
    /// With --udp: one datagram per receive, not coalesced runs (UDP_GRO).
    #[arg(long, requires = "udp")]
    pub no_gro: bool,
    /// With --udp: search for the highest rate with no datagram lost (and 95 % of the asked rate
    /// arriving), from 1 Mbit/s up to -b (default 400G), in probes of -t (default 2 s).
    #[arg(long, requires = "udp", conflicts_with_all = ["bytes", "json_stream"])]
    pub find_rate: bool,
    /// With --find-rate: at most this many probes; the search also ends once the passing and
    /// failing rates are within 2 %.
    #[arg(long, value_name = "N", default_value_t = 12, requires = "find_rate",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub probes: u32,
    /// What the senders send: random bytes, which no layer can compress, or zeros, to see what a
    /// compressing path (a WAN optimiser, a tunnel with compression) carries at its best.
    #[arg(long, value_enum, value_name = "BYTES", default_value = "random")]
    pub payload: PayloadArg,
    /// Receiver discards data in the kernel (MSG_TRUNC) instead of copying it out.
    #[arg(long)]
    pub skip_rx_copy: bool,
    /// Wake receivers only once this many bytes are queued (SO_RCVLOWAT; 1 wakes them for any
    /// data). Default: 128K between namespaces of one host, else off (see docs/defaults.md).
    #[arg(long, value_parser = units::parse_size_u32)]
    pub rcvlowat: Option<u32>,
    /// Threads each end runs its TCP streams on: with fewer threads than streams, each thread
    /// runs one epoll loop for its share of the senders or of the receivers. Default: a thread a
    /// stream, which measured faster (see docs/defaults.md#stream-threads). Not for --udp,
    /// --encrypt or --zerocopy, whose streams always have a thread each
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024),
          conflicts_with_all = ["udp", "encrypt", "zerocopy"])]
    pub threads: Option<u16>,
    /// Where stream threads run (CPU affinity at both ends).
    #[arg(long, value_enum, default_value = "auto")]
    pub affinity: AffinityArg,
    /// Receivers poll before blocking; auto polls on loopback at up to four stream threads per
    /// core, between namespaces of one host while threads share cores.
    #[arg(long, value_enum, default_value = "auto")]
    pub rx_poll: RxPollArg,
    /// Write the linerate.result/1 document to FILE ('-' for stdout; human output then goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print one JSON line per interval on stdout, then the linerate.result/1 document as the
    /// last line (human output goes to stderr).
    #[arg(long, conflicts_with = "json")]
    pub json_stream: bool,
}

impl BenchArgs {
    /// What is known of the path: its capacity from `--capacity`, else
    /// the rate of the lab this runs in, and the least round trip of that
    /// lab's link.
    fn known_path(&self, targets: &[std::net::IpAddr]) -> KnownPath {
        let mut path = crate::netns::known_path_here(targets);
        if let Some(bps) = self.capacity {
            path.capacity = Some(Capacity {
                bits_per_second: bps as f64,
                source: "--capacity",
            });
        }
        path
    }

    /// What the flags ask the engine for; what they leave unset is decided
    /// at run time.
    pub fn spec(&self) -> BenchSpec {
        BenchSpec {
            options: BenchOptions {
                streams: self.streams,
                duration_ms: self.time_ms.unwrap_or(if self.find_rate {
                    crate::find_rate::PROBE_MS
                } else {
                    10_000
                }),
                bytes: self.bytes,
                direction: if self.bidir {
                    Direction::Bidir
                } else if self.reverse {
                    Direction::Reverse
                } else {
                    Direction::Forward
                },
                interval_ms: self.interval_ms,
                omit_ms: self.omit_ms,
                zerocopy: self.zerocopy,
                skip_rx_copy: self.skip_rx_copy,
                socket: self.socket(),
                run_token: None,
                threads: self.threads,
                payload: self.payload.into(),
                // A run a schedule started holds the server's path alone
                // (docs/protocol.md#path-hold).
                path_hold: crate::scheduled::scheduled_as(),
            },
            path: self.known_path(&[]),
            write_len: self.write_len,
            read_len: self.read_len,
            rcvlowat: self.rcvlowat,
            rx_poll: self.rx_poll.into(),
            tls: None,
            udp: self.udp.then(|| UdpSpec {
                rate_bps: self.bitrate.unwrap_or(UDP_DEFAULT_RATE),
                gso: !self.no_gso,
                gro: !self.no_gro,
            }),
            affinity: match self.affinity {
                AffinityArg::Auto => Affinity::Auto,
                AffinityArg::Off => Affinity::Off,
                AffinityArg::Spread => Affinity::Spread,
                AffinityArg::Pairs => Affinity::Pairs,
            },
            bind: self.address.bind.first().copied(),
            stripes: Vec::new(),
            count_members: true,
            without_delay_probe: false,
            start_at: None,
        }
    }

    fn socket(&self) -> SocketParams {
        let mut socket = SocketParams {
            // A UDP stream paces itself at -b.
            pacing_rate: self.fq_rate.map(|bps| bps / 8).or_else(|| {
                self.bitrate
                    .filter(|_| !self.udp)
                    .map(|bps| (bps / 8 / u64::from(self.streams.max(1))).max(1))
            }),
            mss: self.mss,
            nodelay: self.no_delay,
            notsent_lowat: self.notsent_lowat,
            ..SocketParams::default()
        };
        self.buffers.apply(&mut socket);
        self.cc.apply(&mut socket);
        self.mark.apply(&mut socket);
        socket
    }

    fn resolve(&self) -> anyhow::Result<SocketAddr> {
        resolve_target(&self.host, self.port, &self.address)
    }
}

/// HOST[:PORT] with `-p PORT` given or not (once), to one address of the
/// family the address flags ask for.
pub fn resolve_target(
    host: &str,
    port: Option<u16>,
    address: &AddressFlags,
) -> anyhow::Result<SocketAddr> {
    let Some(port) = port else {
        return address.resolve(host);
    };
    if linerate_engine::address::names_port(host) {
        return Err(UsageError(format!(
            "-p/--port {port}: {host} already names a port; give it once"
        ))
        .into());
    }
    Ok(linerate_engine::address::resolve(
        host,
        port,
        address.family(),
    )?)
}

pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    let server = a.resolve()?;
    let mut spec = a.spec();
    (spec.stripes, spec.bind, spec.options.streams) = a
        .stripe
        .resolve(&a.address, spec.options.streams, &[])
        .map_err(|e| usage::UsageError(e.to_string()))?;
    let targets: Vec<std::net::IpAddr> = match spec.stripes.as_slice() {
        [] => vec![server.ip()],
        paths => paths.iter().map(|p| p.remote).collect(),
    };
    spec.path = a.known_path(&targets);
    if a.udp && !spec.stripes.is_empty() {
        return Err(
            usage::UsageError("--stripe spreads TCP streams; it takes no --udp".into()).into(),
        );
    }
    let trust = match a.encrypt {
        true => {
            let name = match a.port {
                Some(p) => format!("{}:{p}", a.host),
                None => a.host.clone(),
            };
            let trust = crate::keys_cmd::DaemonTrust::new(&name, a.server_fingerprint.as_deref())?;
            let config = crate::keys_cmd::client_config(&trust)?;
            spec.tls = Some(linerate_engine::spec::ClientTls(config));
            Some(trust)
        }
        false => None,
    };
    spec.check().map_err(usage::flag_error::<BenchArgs>)?;
    let to_stderr = a.json.as_deref() == Some("-") || a.json_stream;
    if a.find_rate {
        let search = crate::find_rate::Search {
            ceiling_bps: a.bitrate.unwrap_or(crate::find_rate::CEILING_BPS),
            probes: a.probes,
        };
        let doc = crate::find_rate::run(server, &spec, &search, output::Out::new(to_stderr))?;
        return finish(&a, &doc);
    }
    let doc = measure::bench(
        server,
        &spec,
        Some(signals::interrupt_flag()),
        crate::argv::command_line(),
        output::Out::new(to_stderr),
        a.json_stream,
    );
    // A server met for the first time is recorded once it answered.
    if let Some(t) = &trust
        && doc.is_ok()
    {
        t.remember()?;
    }
    finish(&a, &doc?)
}

/// Writes the result where asked; an interrupted run exits as one.
fn finish(a: &BenchArgs, doc: &linerate_result::ResultDoc) -> anyhow::Result<()> {
    if let Some(path) = &a.json {
        output::write_json(doc, path)?;
    }
    if a.json_stream {
        output::json_line(doc)?;
    }
    a.history.record(doc);
    if doc.interrupted {
        return Err(signals::Interrupted(match &a.json {
            Some(path) => format!("interrupted; the partial result is in {path}"),
            None => "interrupted".into(),
        })
        .into());
    }
    // A run that moved nothing measured nothing: the verdict says why.
    if doc.summary.bytes == 0 {
        anyhow::bail!("the run moved nothing. {}", doc.summary.verdict.sentence);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Bench {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn parse(words: &[String]) -> BenchSpec {
        let argv = std::iter::once("bench".to_string()).chain(words.iter().cloned());
        Bench::try_parse_from(argv)
            .expect("the words parse")
            .args
            .spec()
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    /// Every flag lands in its one place of the spec; what the flags leave
    /// out stays as the spec's default.
    #[test]
    fn the_flags_set_the_spec() {
        // A person's run counts what each link of a bond carries.
        assert_eq!(
            BenchSpec {
                path: Default::default(),
                ..parse(&words("10.0.0.2"))
            },
            BenchSpec {
                count_members: true,
                ..BenchSpec::default()
            }
        );
        let every = parse(&words(
            "10.0.0.2 -P 4 -t 1500ms --bidir -i 500ms --omit 1 -l 1M --read-len 64K \
             --rcvlowat 1 --zerocopy --skip-rx-copy --rx-poll on --affinity pairs \
             --sndbuf 8M -w 4M --cc bbr --fq-rate 1G -M 1400 --dscp af41 -N \
             --notsent-lowat 128K -B 10.0.0.1 --payload zeros",
        ));
        let want = BenchSpec {
            options: BenchOptions {
                streams: 4,
                duration_ms: 1500,
                direction: Direction::Bidir,
                interval_ms: 500,
                omit_ms: 1000,
                zerocopy: true,
                skip_rx_copy: true,
                socket: SocketParams {
                    sndbuf: Some(8 << 20),
                    rcvbuf: Some(4 << 20),
                    congestion: Some("bbr".into()),
                    pacing_rate: Some(125_000_000),
                    mss: Some(1400),
                    tos: Some(34 << 2),
                    nodelay: true,
                    notsent_lowat: Some(128 << 10),
                },
                payload: PayloadBytes::Zeros,
                ..BenchOptions::default()
            },
            path: every.path,
            write_len: Some(1 << 20),
            read_len: Some(64 << 10),
            rcvlowat: Some(1),
            rx_poll: RxPoll::On,
            affinity: Affinity::Pairs,
            bind: Some("10.0.0.1".parse().unwrap()),
            count_members: true,
            ..BenchSpec::default()
        };
        assert_eq!(every, want);
        let udp = parse(&words("h -u -b 2.5G -l 9000 --no-gso"));
        assert_eq!(
            udp.udp,
            Some(UdpSpec {
                rate_bps: 2_500_000_000,
                gso: false,
                gro: true,
            })
        );
        assert_eq!(
            udp.options.socket.pacing_rate, None,
            "a UDP stream paces itself"
        );
        let capped = parse(&words("h -P 4 -b 8G -S 0x10 -n 10G -R --threads 3"));
        assert_eq!(capped.options.socket.pacing_rate, Some(250_000_000));
        assert_eq!(capped.options.socket.tos, Some(0x10));
        assert_eq!(capped.options.bytes, Some(10 << 30));
        assert_eq!(capped.options.direction, Direction::Reverse);
        assert_eq!(capped.options.threads, Some(3));
    }

    #[test]
    fn tos_and_dscp_are_one_marking() {
        let argv = ["bench", "h", "-S", "16", "--dscp", "ef"];
        assert!(Bench::try_parse_from(argv).is_err());
    }
}
