//! `linerate compare`: linerate and the installed peer tools under the same
//! conditions, in alternating order, repeated, into one result document.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use linerate_compare::{CompareSpec, Event, Place};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Memory to memory: linerate bench, iperf2, iperf3, nuttcp.
    Mem,
    /// Files from page cache to a directory: linerate send, rsync (daemon).
    Files,
    /// Ping-pong round trips: linerate latency, sockperf, qperf, iperf2 --bounceback.
    Latency,
    /// UDP at one rate: linerate bench --udp, iperf2 -u, iperf3 -u.
    Udp,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Dataset {
    /// One 512 MiB file.
    Large,
    /// 4000 files of 4 KiB.
    Small,
    /// 8 files of 32 MiB and 2000 of 4 KiB.
    Mixed,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate compare                                   loopback, mem, 1 and 4 streams, 3 rounds\n  linerate compare --mode latency --rounds 5          64-byte TCP ping-pong against sockperf, qperf, iperf2\n  linerate compare --mode udp -b 2G                   one UDP stream at 2 Gbit/s against iperf2 -u, iperf3 -u\n  linerate compare --tools linerate,iperf2 -P 1,2,4,8 --json cmp.json\n  linerate compare --mode files --dataset small --tools linerate,rsync\n  linerate compare --lab wan                          inside `linerate lab up --name wan` (h1 -> h2)\n\nMissing tools are reported as skipped with the Debian package that provides them."
)]
pub struct CompareArgs {
    /// Tools to run, in this order in the first round (default: linerate,iperf2,iperf3,nuttcp;
    /// files mode: linerate,rsync,scp,lftp,gridftp,wdt, those without an adapter reported as
    /// skipped; latency mode: linerate,sockperf,qperf,iperf2; udp mode: linerate,iperf2,iperf3).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    #[arg(long, value_enum, default_value = "mem")]
    mode: Mode,
    /// Files mode: what to send.
    #[arg(long, value_enum, default_value = "mixed")]
    dataset: Dataset,
    /// Stream counts (mem mode; files mode uses the largest for linerate).
    #[arg(short = 'P', long, value_delimiter = ',', default_value = "1,4")]
    pub streams: Vec<u32>,
    /// Seconds per run (mem, latency and udp modes).
    #[arg(short = 't', long, default_value = "5")]
    pub time: u32,
    /// Latency mode: request and reply size in bytes (64: iperf2 --bounceback's client hangs
    /// below it; sockperf takes 14 and up).
    #[arg(long, default_value = "64", value_parser = clap::value_parser!(u32).range(1..=65507))]
    pub size: u32,
    /// Latency mode: the ping-pong over UDP (linerate --udp, sockperf, qperf udp_lat).
    #[arg(long)]
    pub udp: bool,
    /// UDP mode: the rate of the one stream, bits/s (e.g. 500M, 2G).
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", default_value = "1G", value_parser = crate::units::parse_rate)]
    pub bitrate: u64,
    /// UDP mode: datagram payload bytes.
    #[arg(short = 'l', long = "len", default_value = "1472", value_parser = clap::value_parser!(u32).range(16..=65507))]
    pub len: u32,
    /// Rounds; the order of the tools rotates each round.
    #[arg(long, default_value = "3")]
    pub rounds: u32,
    /// Run inside a lab: servers in h2, clients in h1 (root).
    #[arg(long)]
    pub lab: Option<String>,
    /// Where to write the linerate.result/1 document (kind compare).
    #[arg(long, default_value = "-")]
    pub json: String,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
}

impl From<Mode> for linerate_compare::Mode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Mem => Self::Mem,
            Mode::Files => Self::Files,
            Mode::Latency => Self::Latency,
            Mode::Udp => Self::Udp,
        }
    }
}

impl From<Dataset> for linerate_compare::Dataset {
    fn from(d: Dataset) -> Self {
        match d {
            Dataset::Large => Self::Large,
            Dataset::Small => Self::Small,
            Dataset::Mixed => Self::Mixed,
        }
    }
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    if a.streams.is_empty() || a.streams.iter().any(|&n| n == 0 || n > 128) {
        bail!("--streams takes counts from 1 to 128");
    }
    if a.rounds == 0 || a.time == 0 {
        bail!("--rounds and --time must be at least 1");
    }
    let place = match a.lab.as_deref() {
        None => Place::loopback(),
        Some(name) => {
            crate::lab_cmd::require()?;
            let lab =
                linerate_lab::Lab::load(name).with_context(|| format!("reading lab {name}"))?;
            Place::in_lab(name, &lab)?
        }
    };
    let spec = CompareSpec {
        mode: a.mode.into(),
        tools: a.tools,
        dataset: a.dataset.into(),
        streams: a.streams,
        seconds: a.time,
        rounds: a.rounds,
        size: a.size,
        udp: a.udp,
        rate_bps: a.bitrate,
        len: a.len,
        linerate: std::env::current_exe().context("finding this linerate program")?,
    };
    let comparison = linerate_compare::compare(&spec, &place, &mut |e| match e {
        Event::Skipped(s) => eprintln!(
            "linerate compare: skipping {}: {}{}",
            s.tool,
            s.reason,
            s.package
                .map(|p| format!(" (Debian package {p})"))
                .unwrap_or_default()
        ),
        Event::Ran {
            done,
            total,
            round,
            tool,
            outcome,
        } => eprintln!("  [{done}/{total}] round {round} {tool:<9} {outcome}"),
    })?;
    eprint!("{}", comparison.table);
    crate::study_doc::write(comparison.runs, &a.json, &a.history)
}
