//! `linerate study`: the seed papers' WAN, LAN and tuning studies, one
//! command each, on labs the study builds and removes
//! ([`linerate_study`]); this prints each run as it ends and
//! writes the document.

use anyhow::Context;
use clap::{Args, Subcommand};
use linerate_compare::document::ManyRuns;
use linerate_probe::units::fmt_rate;
use linerate_result::Limit;
use linerate_study::{
    self as study, self, InterferenceStudy, LanStudy, StripingStudy, StudyCommon, StudyEvent,
    TuningStudy, WanStudy,
};

use crate::units;

#[derive(Subcommand)]
pub enum StudyCommand {
    /// Bandwidth vs RTT with default and BDP-sized buffers, 1 vs several
    /// streams; bandwidth over time at 44 ms with 0.02 % reordering; the window law.
    Wan(WanArgs),
    /// Bandwidth vs streams, MTU 1500 vs 9000, IPv4 vs IPv6, direct vs through a relay node.
    Lan(LanArgs),
    /// One stream on a lab WAN before and after `tune plan`'s settings (applied, then reverted).
    Tuning(TuningArgs),
    /// A latency-sensitive all-to-all beside a bandwidth-heavy halo exchange on a
    /// leaf-spine fabric: alone, together without classes, with ETS 50/50, with strict
    /// priority, with PFC on the bandwidth class (seed 002, section VIII).
    Interference(InterferenceArgs),
    /// N parallel links between two hosts: one link alone, the N bonded (a hash per
    /// flow) with 1, N and 4N streams, and the N striped explicitly (--stripe), memory
    /// to memory and a file transfer (seeds 000 and 004).
    Striping(StripingArgs),
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study striping --json striping.json      4 links of 1 Gbit/s\n  linerate study striping --quick                   2 links, short runs"
)]
pub struct StripingArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Parallel links between the two hosts (default 4, 2 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u8).range(2..=8))]
    pub links: Option<u8>,
    /// Each link's rate.
    #[arg(long, default_value = "1gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Size of the file each transfer sends (default 1G, 64M with --quick).
    #[arg(long, value_parser = units::parse_size)]
    pub file_size: Option<u64>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study interference --json interference.json\n  linerate study interference --quick      a smoke test (about a minute)"
)]
pub struct InterferenceArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Every host link's rate.
    #[arg(long, default_value = "1gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Oversubscription of the leaves' uplinks.
    #[arg(long, default_value = "4:1")]
    pub taper: linerate_emulator::fabric::Taper,
    /// How long the bandwidth job runs before the latency job starts (the paper's
    /// 10 s; 2 s with --quick).
    #[arg(long, value_parser = units::parse_duration_ms)]
    pub stagger: Option<u64>,
    /// Iterations of the latency job (default 5000, 1000 with --quick).
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Bytes the latency job sends every other rank per iteration.
    #[arg(long, default_value = "4K", value_parser = units::parse_size)]
    pub message: u64,
    /// Cells per side of each bandwidth-job rank.
    #[arg(long, default_value_t = 128)]
    pub cells: u32,
    /// Each switch port's buffer per class (a switch of the paper's kind shares
    /// 16 MB between its ports).
    #[arg(long, default_value = "1M", value_parser = units::parse_size)]
    pub queue: u64,
    /// Seed of the random disjoint allocations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The fabric's switches: the emulator (every configuration), or kernel
    /// switches with HTB classes (faster; no PFC, so its configuration is skipped).
    #[arg(long, value_enum, default_value = "emulator")]
    pub backend: FabricBackendArg,
}

/// What a study's fabric is built of.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FabricBackendArg {
    /// The emulator's switches.
    Emulator,
    /// Kernel switches with HTB classes.
    Htb,
}

impl From<FabricBackendArg> for linerate_lab::BackendChoice {
    fn from(b: FabricBackendArg) -> Self {
        match b {
            FabricBackendArg::Emulator => linerate_lab::BackendChoice::Emulator,
            FabricBackendArg::Htb => linerate_lab::BackendChoice::Htb,
        }
    }
}

#[derive(Args, Clone)]
pub struct CommonArgs {
    /// A short run of every part, for CI (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// Where to write the linerate.result/1 document.
    #[arg(long, default_value = "-")]
    pub json: String,
    /// Seconds per bench run (default 5, 2 with --quick).
    #[arg(short = 't', long)]
    pub time: Option<f64>,
    /// Congestion control for every run (default: the host's).
    #[arg(long)]
    pub cc: Option<String>,
    /// Name of the lab the study builds (removed at the end).
    #[arg(long, default_value = "study")]
    pub name: String,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study wan --json wan.json          about 4 minutes\n  linerate study wan --quick --rtts 0,44      a smoke test"
)]
pub struct WanArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// RTTs to sweep, in ms.
    #[arg(long, value_delimiter = ',', default_value = "0,1,5,10,22,44,88")]
    pub rtts: Vec<f64>,
    /// Stream counts to compare.
    #[arg(long, value_delimiter = ',', default_value = "1,4", value_parser = units::parse_streams)]
    pub streams: Vec<u16>,
    /// Bottleneck rate of the emulated WAN; BDP-sized buffers are sized for it.
    #[arg(long, default_value = "10gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Length of the run over time at 44 ms with reordering (default 30 s, 8 s with --quick).
    #[arg(long)]
    pub stability_time: Option<f64>,
    /// Backend for the WAN conditions.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: crate::lab_cmd::BackendArg,
}

#[derive(Args)]
#[command(after_help = "Example:\n  linerate study lan --json lan.json")]
pub struct LanArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Stream counts to sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16", value_parser = units::parse_streams)]
    pub streams: Vec<u16>,
}

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study tuning --json tuning.json     44 ms, 10 Gbit/s, 3 rounds\n  linerate study tuning --rtt 88ms --rate 1gbit --quick"
)]
pub struct TuningArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// RTT of the lab WAN.
    #[arg(long, default_value = "44ms", value_parser = units::parse_time_us)]
    pub rtt: u64,
    /// Bottleneck rate of the lab WAN, and the plan's target.
    #[arg(long, default_value = "10gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Before/after rounds, alternating (default 3, 1 with --quick).
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Backend for the WAN conditions.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: crate::lab_cmd::BackendArg,
}

pub fn run(cmd: StudyCommand) -> anyhow::Result<()> {
    crate::lab_cmd::require()?;
    let (runs, common) = match cmd {
        StudyCommand::Wan(a) => {
            let spec = WanStudy {
                common: common(&a.common)?,
                rtts_ms: a.rtts,
                streams: a.streams,
                rate_bps: a.rate,
                stability_seconds: a.stability_time,
                backend: a.backend.into(),
            };
            eprintln!("linerate study wan:");
            (study::wan(&spec, &mut print)?, a.common)
        }
        StudyCommand::Lan(a) => {
            let spec = LanStudy {
                common: common(&a.common)?,
                streams: a.streams,
            };
            eprintln!("linerate study lan:");
            (study::lan(&spec, &mut print)?, a.common)
        }
        StudyCommand::Tuning(a) => {
            let spec = TuningStudy {
                common: common(&a.common)?,
                rtt_us: a.rtt,
                rate_bps: a.rate,
                rounds: a.rounds,
                backend: a.backend.into(),
            };
            eprintln!("linerate study tuning:");
            (study::tuning(&spec, &mut print)?, a.common)
        }
        StudyCommand::Interference(a) => {
            let quick = a.common.quick;
            let spec = InterferenceStudy {
                common: common(&a.common)?,
                rate_bps: a.rate,
                taper: a.taper,
                stagger: std::time::Duration::from_millis(a.stagger.unwrap_or(if quick {
                    2000
                } else {
                    10_000
                })),
                latency_iterations: a.iterations.unwrap_or(if quick { 1000 } else { 5000 }),
                latency_message: a.message,
                halo_cells: a.cells,
                buffer_bytes: a.queue,
                seed: a.seed,
                backend: a.backend.into(),
            };
            eprintln!("linerate study interference:");
            (study::interference(&spec, &mut print)?, a.common)
        }
        StudyCommand::Striping(a) => {
            let spec = StripingStudy {
                common: common(&a.common)?,
                links: a.links,
                rate_bps: a.rate,
                file_bytes: a.file_size,
            };
            eprintln!("linerate study striping:");
            (study::striping(&spec, &mut print)?, a.common)
        }
    };
    print_findings(&runs);
    crate::study_doc::write(runs, &common.json, &common.history)
}

fn common(c: &CommonArgs) -> anyhow::Result<StudyCommon> {
    Ok(StudyCommon {
        quick: c.quick,
        seconds: c.time,
        cc: c.cc.clone(),
        lab_name: c.name.clone(),
        linerate: std::env::current_exe().context("locating the linerate binary")?,
        command_line: crate::argv::command_line(),
    })
}

/// One line per lab brought up and per run as it ends.
fn print(e: StudyEvent) {
    match e {
        StudyEvent::LabUp(what) => eprintln!("  {what}"),
        StudyEvent::Ran {
            series,
            factors,
            job_seconds: Some(seconds),
            ..
        } => {
            let shown: Vec<String> = factors.iter().map(|(k, v)| format!("{k}={v}")).collect();
            eprintln!("  {series:<26} {:<40} {seconds:>9.3} s", shown.join(" "));
        }
        StudyEvent::Ran {
            series,
            factors,
            bits_per_second,
            limit,
            job_seconds: None,
        } => {
            let shown: Vec<String> = factors.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let name = serde_json::to_value(limit)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let invalid = if limit == Limit::Invalid {
                " (this run does not stand for the path)"
            } else {
                ""
            };
            eprintln!(
                "  {series:<22} {:<48} {:>14}  {name}{invalid}",
                shown.join(" "),
                fmt_rate(bits_per_second),
            );
        }
    }
}

/// The findings, the tuning study's as before, after and gain.
fn print_findings(runs: &ManyRuns) {
    let f = &runs.findings;
    if let (Some(before), Some(after), Some(gain)) = (
        f.get("before_median_bps"),
        f.get("after_median_bps"),
        f.get("gain"),
    ) {
        eprintln!(
            "  before {}  after {}  gain {gain:.1}x",
            fmt_rate(*before),
            fmt_rate(*after)
        );
        return;
    }
    for (k, v) in f {
        eprintln!("  {k} = {v:.3}");
    }
    if let Some(said) = runs.definitions.get("sentence") {
        eprintln!("  {said}");
    }
}
