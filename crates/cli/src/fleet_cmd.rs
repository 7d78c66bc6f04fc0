//! `linerate incast`, `linerate mesh` and `linerate agent`: many-host runs.
//! Both run commands plan their steps, get their agents from a launcher
//! ([`linerate_fleet::agents`]), coordinate them, and write one result of
//! their kind; `agent` is what every launcher starts on each host.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use linerate_fleet::agent::AgentSpec;
use linerate_fleet::agents::{self as fleet_launch, AgentSource, LaunchError};
use linerate_fleet::coordinator::{Event, Outcome, PlannedStep};
use linerate_fleet::document as fleet_doc;
use linerate_fleet::plan;
use linerate_fleet::run::{self as fleet_run, Ended, Notice, RunError, RunSpec, planned};
use linerate_probe::units::{fmt_bytes, fmt_rate};

use crate::flags::{BufferFlags, CongestionFlags, MarkFlags};
use crate::usage::UsageError;
use crate::{output, signals, units};

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Length of each step.
    #[arg(short = 't', long = "time", value_name = "TIME", default_value = "5", value_parser = parse_step)]
    pub time_ms: u64,
    /// Between interval samples of each flow.
    #[arg(short = 'i', long = "interval", value_name = "TIME", default_value = "1", value_parser = units::parse_duration_ms)]
    pub interval_ms: u64,
    /// Give up the whole run after this long (default: the plan's length, with room
    /// for joining and reporting).
    #[arg(long, value_name = "TIME", value_parser = units::parse_duration_ms)]
    pub timeout: Option<u64>,
    /// Write the linerate.result/1 document to FILE ('-' for stdout; human output then
    /// goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    #[command(flatten)]
    pub socket: RunSocketFlags,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
}

/// The socket options of every connection of a many-host run, flows' and
/// job ranks' alike: a flag added here reaches each of them.
#[derive(Args, Clone, Debug, Default)]
pub struct RunSocketFlags {
    #[command(flatten)]
    pub mark: MarkFlags,
    #[command(flatten)]
    pub cc: CongestionFlags,
    #[command(flatten)]
    pub buffers: BufferFlags,
}

impl RunSocketFlags {
    /// The run's socket options, as every task carries them.
    pub fn params(&self) -> linerate_engine::spec::SocketParams {
        let mut socket = linerate_engine::spec::SocketParams::default();
        self.mark.apply(&mut socket);
        self.cc.apply(&mut socket);
        self.buffers.apply(&mut socket);
        socket
    }
}

#[derive(Args, Clone, Debug)]
#[command(after_help = "Examples:\n  \
    linerate incast --hosts rx,tx1,tx2,tx3,tx4          over ssh; rx (rank 0) receives\n  \
    linerate incast --lab lan --senders 1,2,4,8 --sizes 1M\n  \
    srun -N 5 linerate incast --senders 8 --json incast.json\n  \
    mpirun -np 5 --host rx,tx1,tx2,tx3,tx4 linerate incast --coordinator rx\n  \
    linerate incast --local 128 --senders 8 --sizes 1M -t 3   128 agents on loopback")]
pub struct IncastArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// The rank that receives; every other rank sends.
    #[arg(long, value_name = "RANK", default_value_t = 0)]
    pub receiver: u32,
    /// Sending processes on each source host (one flow of one stream each), swept.
    #[arg(long, value_name = "LIST", default_value = "1,8", value_parser = parse_counts)]
    pub senders: Counts,
    /// Source hosts, swept (default: all of them).
    #[arg(long, value_name = "LIST", value_parser = parse_counts)]
    pub source_hosts: Option<Counts>,
    /// Message sizes (bytes per write), swept: the seed's 8 B, 10 KB and 1 MB by default.
    #[arg(long, value_name = "LIST", default_value = "8,10K,1M", value_parser = parse_message_sizes)]
    pub sizes: Counts,
}

#[derive(Args, Clone, Debug)]
#[command(after_help = "Examples:\n  \
    linerate mesh --hosts dtn1,dtn2,dtn3,dtn4       each ordered pair alone, in turn\n  \
    linerate mesh --lab lan --all-at-once -P 4     every pair at once, 4 streams each\n  \
    srun -N 8 linerate mesh --json mesh.json")]
pub struct MeshArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Streams of each pair's flow.
    #[arg(short = 'P', long, value_name = "N", default_value_t = 1, value_parser = units::parse_streams)]
    pub streams: u16,
    /// Every pair at once instead of one pair at a time.
    #[arg(long)]
    pub all_at_once: bool,
}

#[derive(Args, Clone, Debug)]
pub struct AgentArgs {
    /// The coordinator to join: HOST[:PORT] (port 5301 by default).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub coordinator: String,
    /// This agent's rank.
    #[arg(long)]
    pub rank: u32,
    /// Ranks in the run.
    #[arg(long)]
    pub size: u32,
    /// The name the result gives this host (default: its host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Where this agent's bench server listens for its peers' flows.
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:0")]
    pub listen: SocketAddr,
    /// Leave when the coordinator is silent this long, or unreachable.
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = units::parse_duration_ms)]
    pub timeout: u64,
    /// Read the run's token from the first line of stdin (how ssh launches
    /// pass it); otherwise it comes from LINERATE_RUN_TOKEN, if set.
    #[arg(long)]
    pub token_stdin: bool,
    #[command(flatten)]
    pub log: crate::log::LogFlags,
}

/// A list of counts, each at least 1.
#[derive(Clone, Debug)]
pub struct Counts(Vec<u32>);

fn parse_counts(s: &str) -> Result<Counts, String> {
    let counts = s
        .split(',')
        .map(|t| match t.trim().parse::<u32>() {
            Ok(n) if (1..=4096).contains(&n) => Ok(n),
            _ => Err(format!(
                "'{t}': give counts from 1 to 4096, comma-separated"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Counts(counts))
}

fn parse_message_sizes(s: &str) -> Result<Counts, String> {
    units::parse_sizes(s).map(Counts)
}

fn parse_step(s: &str) -> Result<u64, String> {
    match units::parse_duration_ms(s)? {
        ms if (100..=24 * 3600 * 1000).contains(&ms) => Ok(ms),
        _ => Err(format!("'{s}': each step runs 100 ms to a day")),
    }
}

pub fn run_incast(a: IncastArgs) -> anyhow::Result<()> {
    let plan_for = |size: u32| -> anyhow::Result<Vec<PlannedStep>> {
        if a.receiver >= size {
            return Err(UsageError(format!(
                "--receiver {}: the run has ranks 0 to {}",
                a.receiver,
                size.saturating_sub(1)
            ))
            .into());
        }
        let sources: Vec<u32> = (0..size).filter(|&r| r != a.receiver).collect();
        let hosts = match &a.source_hosts {
            Some(c) => c.0.clone(),
            None => vec![sources.len() as u32],
        };
        if let Some(&h) = hosts.iter().find(|&&h| h as usize > sources.len()) {
            return Err(UsageError(format!(
                "--source-hosts {h}: the run has {} source hosts",
                sources.len()
            ))
            .into());
        }
        let sizes: Vec<u64> = a.sizes.0.iter().map(|&s| u64::from(s)).collect();
        let senders: Vec<u16> = a.senders.0.iter().map(|&n| n as u16).collect();
        Ok(plan::incast(a.receiver, &sources, &senders, &hosts, &sizes)
            .into_iter()
            .map(|s| planned(&s, true))
            .collect())
    };
    run_fleet("incast", &a.run, &plan_for)
}

pub fn run_mesh(a: MeshArgs) -> anyhow::Result<()> {
    let plan_for = |size: u32| -> anyhow::Result<Vec<PlannedStep>> {
        let ranks: Vec<u32> = (0..size).collect();
        Ok(plan::mesh(&ranks, a.streams, a.all_at_once)
            .into_iter()
            .map(|s| planned(&s, false))
            .collect())
    };
    run_fleet("mesh", &a.run, &plan_for)
}

pub fn run_agent(a: AgentArgs) -> anyhow::Result<()> {
    let coordinator = fleet_launch::coordinator_address(&a.coordinator)
        .map_err(|e| UsageError(format!("--coordinator {}: {e:#}", a.coordinator)))?;
    if a.rank >= a.size {
        return Err(UsageError(format!("--rank {}: below --size {}", a.rank, a.size)).into());
    }
    let token = if a.token_stdin {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .context("--token-stdin: reading the run's token")?;
        Some(line.trim().to_string()).filter(|t| !t.is_empty())
    } else {
        fleet_launch::run_token()
    };
    let spec = AgentSpec {
        listen: a.listen,
        silence: Duration::from_millis(a.timeout),
        token,
        path: crate::netns::known_path_here(&[]),
        ..AgentSpec::joining(
            coordinator,
            a.rank,
            a.size,
            a.name.unwrap_or_else(host_name),
        )
    };
    a.log.init(tracing_subscriber::filter::LevelFilter::WARN);
    linerate_fleet::agent::run(&spec, signals::interrupt_flag())
        .with_context(|| format!("agent of rank {} ({})", spec.rank, spec.name))
}

fn host_name() -> String {
    linerate_probe::host::collect().hostname
}

#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// Start one agent on each host over ssh, in rank order (h1,h2,...), with the
    /// user's ssh config and keys.
    #[arg(long, value_delimiter = ',', value_name = "HOSTS", conflicts_with_all = ["lab", "local"])]
    pub hosts: Vec<String>,
    /// The ssh command, with any options, that reaches each of --hosts.
    #[arg(long, value_name = "CMD", default_value = "ssh")]
    pub ssh: String,
    /// linerate's path on the --hosts, when it is not on their PATH.
    #[arg(long, value_name = "PATH", default_value = "linerate")]
    pub remote_path: String,
    /// Run one agent in each host namespace of this lab (h1 is rank 0).
    #[arg(long, value_name = "NAME", conflicts_with = "local")]
    pub lab: Option<String>,
    /// Only these hosts of the --lab, in rank order (an allocation: h3,h6,h1).
    #[arg(long, value_delimiter = ',', value_name = "HOSTS", requires = "lab")]
    pub lab_hosts: Vec<String>,
    /// Run N agents as processes on this host's loopback (a scale test).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=4096))]
    pub local: Option<u32>,
    /// Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0's
    /// host (required); under srun, default the job's first host; with --hosts, default
    /// this host's address towards the first of them.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub coordinator: Option<String>,
}

impl LaunchArgs {
    fn source(&self) -> AgentSource {
        AgentSource {
            hosts: self.hosts.clone(),
            ssh: self.ssh.clone(),
            remote_path: self.remote_path.clone(),
            lab: self.lab.clone(),
            lab_hosts: self.lab_hosts.clone(),
            local: self.local,
            coordinator: self.coordinator.clone(),
        }
    }
}

/// A launch error, a usage error (exit 2) where it names a flag.
fn launch_error(e: LaunchError) -> anyhow::Error {
    match e {
        LaunchError::Usage(m) => UsageError(m.to_string()).into(),
        e => e.into(),
    }
}

type PlanFor<'a> = dyn Fn(u32) -> anyhow::Result<Vec<PlannedStep>> + 'a;

/// Plans the run for as many ranks as the launcher gives (when this
/// process coordinates), runs it, and prints and writes what it found.
pub(crate) fn run_fleet(kind: &'static str, a: &RunArgs, plan_for: &PlanFor) -> anyhow::Result<()> {
    let source = a.launch.source();
    let role = fleet_run::role(&source).map_err(launch_error)?;
    let plan = match fleet_run::ranks_to_plan(&role) {
        Some(ranks) => plan_for(ranks)?,
        None => Vec::new(),
    };
    let spec = RunSpec {
        step_time: Duration::from_millis(a.time_ms),
        interval_ms: a.interval_ms,
        timeout: a.timeout.map(Duration::from_millis),
        socket: a.socket.params(),
        path: crate::netns::known_path_here(&[]),
        name: host_name(),
        program: std::env::current_exe().context("finding this linerate program")?,
    };
    let mut show = progress(kind, a);
    match fleet_run::run(
        role,
        &source,
        plan,
        &spec,
        signals::interrupt_flag(),
        &mut show,
    ) {
        Ok(Ended::AsAgent) => Ok(()),
        Ok(Ended::Coordinated { outcome, launcher }) => finish(kind, a, launcher, *outcome),
        Err(RunError::Launch(e)) => Err(launch_error(e)),
        Err(e) => Err(e.into()),
    }
}

/// What a run prints as it goes: where the agents meet, who joined and
/// failed, each step's aggregate; ranks named by their hosts, as in the
/// result and the report.
fn progress(kind: &'static str, a: &RunArgs) -> impl FnMut(Notice) + Send {
    let mut out = output::Out::new(a.json.as_deref() == Some("-"));
    let time_s = a.time_ms as f64 / 1000.0;
    let mut steps: Vec<PlannedStep> = Vec::new();
    let mut size = 0;
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    move |n: Notice| match n {
        Notice::Unguarded { variable, port } => eprintln!(
            "note: no {variable} in the environment: any host that reaches port {port} while the \
             agents join can take a rank (export one to every rank to require it)"
        ),
        Notice::Meeting { size: s, plan, at } => {
            size = s;
            steps = plan.to_vec();
            let flows: usize = plan.iter().map(|s| s.flows.len()).sum();
            match plan.first().and_then(|s| s.job.as_ref()) {
                Some(job) => out.line(&format!(
                    "linerate job {}: {size} ranks, {} iteration(s) of {} us compute and the exchange each, \
                     at most {time_s:.0} s; agents meet at {at}",
                    job.kind.as_str(),
                    job.iterations,
                    job.compute_us,
                )),
                None => out.line(&format!(
                    "linerate {kind}: {size} ranks, {} step(s) of {time_s:.1} s, {flows} flow(s); agents meet at {at}",
                    plan.len(),
                )),
            }
        }
        Notice::Event(Event::Joined { rank, name }) => {
            names.insert(*rank, name.clone());
            if names.len() == size as usize {
                out.line(&format!("all {size} agents joined"));
            }
        }
        Notice::Event(Event::Failed { rank, reason }) => out.line(&format!(
            "{} failed: {reason}",
            names
                .get(rank)
                .map_or_else(|| format!("rank {rank}"), |n| format!("{n} (rank {rank})"))
        )),
        Notice::Event(Event::StepDone {
            step,
            aggregate_bits_per_second,
        }) if steps.get(*step).is_some_and(|s| s.job.is_none()) => out.line(&format!(
            "step {}/{} {}: {} flow(s), {}",
            step + 1,
            steps.len(),
            fleet_doc::describe(&steps[*step].factors, &|r| names
                .get(&r)
                .cloned()
                .unwrap_or_else(|| format!("rank {r}"))),
            steps[*step].flows.len(),
            fmt_rate(*aggregate_bits_per_second)
        )),
        Notice::Event(_) => {}
    }
}

/// An incast's steps as a table: what the JSON holds of each, at a glance.
fn print_incast_steps(out: &mut output::Out, outcome: &Outcome) {
    out.line(&format!(
        "{:<36} {:>6} {:>14} {:>14} {:>14} {:>6} {:>8}",
        "step", "flows", "aggregate", "slowest flow", "fastest flow", "Jain", "retrans"
    ));
    for step in outcome.steps.iter().filter(|s| s.job.is_none()) {
        let rates = step
            .flows
            .iter()
            .filter(|f| f.error.is_none())
            .map(|f| f.bits_per_second);
        let (lo, hi) = rates.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        let failed = step.flows.iter().filter(|f| f.error.is_some()).count();
        out.line(&format!(
            "{:<36} {:>6} {:>14} {:>14} {:>14} {:>6.3} {:>8}{}",
            fleet_doc::describe(&step.factors, &|r| fleet_doc::name(outcome, r)),
            step.flows.len(),
            fmt_rate(step.aggregate_bits_per_second),
            if lo.is_finite() {
                fmt_rate(lo)
            } else {
                "-".into()
            },
            fmt_rate(hi),
            step.jain_index,
            step.retransmits,
            if failed > 0 {
                format!("  ({failed} failed)")
            } else {
                String::new()
            }
        ));
    }
}

/// Prints the steps and writes the result; a stopped run still writes
/// what ran, then exits as interrupted.
fn finish(kind: &'static str, a: &RunArgs, launcher: &str, outcome: Outcome) -> anyhow::Result<()> {
    let mut out = output::Out::new(a.json.as_deref() == Some("-"));
    let mut doc = fleet_doc::document(kind, launcher, &outcome, crate::argv::command_line());
    // Every socket option the run set, by its field's name as a bench
    // document names it; the DSCP beside the TOS byte.
    let socket = a.socket.params();
    if let (Ok(serde_json::Value::Object(set)), Some(parameters)) = (
        serde_json::to_value(&socket),
        doc.parameters.as_object_mut(),
    ) {
        parameters.extend(set.into_iter().filter(|(_, v)| !v.is_null()));
    }
    if let Some(tos) = socket.tos {
        doc.parameters["dscp"] = (tos >> 2).into();
    }
    if kind == "mesh" {
        for line in fleet_doc::slowest_pairs(&outcome) {
            out.line(&line);
        }
    }
    if kind == "incast" {
        print_incast_steps(&mut out, &outcome);
    }
    for job in outcome.steps.iter().filter_map(|s| s.job.as_ref()) {
        out.line(
            "rank  host              iterations   median us      p99 us      max us   total s",
        );
        for r in &job.ranks {
            let host = outcome
                .hosts
                .get(r.rank as usize)
                .map_or("?", |h| h.name.as_str());
            out.line(&format!(
                "{:>4}  {:<16} {:>11} {:>11.0} {:>11.0} {:>11.0} {:>9.3}{}",
                r.rank,
                host,
                r.iterations,
                r.median_us,
                r.p99_us,
                r.max_us,
                r.total_seconds,
                r.error
                    .as_ref()
                    .map_or(String::new(), |e| format!("  ({e})"))
            ));
        }
    }
    if let Some(c) = doc.fleet.as_ref().and_then(|f| f.coordinator) {
        out.line(&format!(
            "Coordinator: {:.2} s of CPU, {} peak memory, for {} ranks",
            c.cpu_seconds,
            fmt_bytes(c.peak_rss_bytes as f64),
            c.ranks
        ));
    }
    out.line(&format!("Verdict: {}", doc.summary.verdict.sentence));
    if let Some(path) = &a.json {
        output::write_json(&doc, path)?;
    }
    a.history.record(&doc);
    if let Some(why) = &outcome.stopped {
        return Err(signals::Interrupted(format!("{why}; the result covers what ran")).into());
    }
    let failed = outcome.hosts.iter().filter(|h| h.failed.is_some()).count();
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} ranks failed; the result covers the rest",
            outcome.hosts.len()
        );
    }
    Ok(())
}
