//! `linerate tune`: audit a host, plan settings for a target, apply and
//! revert them.

use linerate_engine::spec::BenchOptions;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_tune::audit::{self, Severity};
use linerate_tune::{Facts, Plan, SysRoot, Target, apply, facts, plan};
use serde_json::json;

use crate::{output, units};
use linerate_lab::netns::run_in;

#[derive(Subcommand)]
pub enum TuneCommand {
    /// Read the settings that decide TCP throughput and judge them for a target.
    Audit(AuditArgs),
    /// Buffers, streams and pacing for a rate and RTT, as sysctl.d and a script.
    Plan(PlanArgs),
    /// Apply a plan's sysctls (or a built-in profile), saving the previous values (root).
    Apply(ApplyArgs),
    /// Put back exactly what `tune apply` changed (root).
    Revert(ScopeArgs),
    /// Copy every file the audit reads into DIR, as a fixture tree.
    #[command(hide = true)]
    Capture(CaptureArgs),
}

#[derive(Args, Clone)]
pub struct TargetArgs {
    /// Target rate (default: the fastest audited link, else 10gbit).
    #[arg(long, value_parser = units::parse_rate)]
    pub rate: Option<u64>,
    /// Round-trip time to tune for (default 100ms, ESnet's convention for WAN hosts).
    #[arg(long, value_parser = units::parse_time_us)]
    pub rtt: Option<u64>,
    /// Expected packet loss (e.g. 0.02%), for the Mathis bound and the choice of bbr.
    #[arg(long, value_parser = units::parse_percent)]
    pub loss: Option<f64>,
    /// Streams you will run (default: the fewest that can reach the rate).
    #[arg(short = 'P', long)]
    pub streams: Option<u32>,
    /// Segment size (default: from the largest MTU audited).
    #[arg(long)]
    pub mss: Option<u32>,
}

#[derive(Args, Clone)]
pub struct SourceArgs {
    /// Only this interface (default: every physical one).
    #[arg(long)]
    pub iface: Option<String>,
    /// Read a fixture tree (proc/, sys/, ethtool/, tc/) instead of this host.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate tune audit                          this host, for its fastest link at 100 ms\n  linerate tune audit --rate 100G --rtt 44ms --json audit.json\n  linerate tune audit --root crates/tune/fixtures/cx6-100g   a captured or hand-written host"
)]
pub struct AuditArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Write a linerate.audit/1 document (`-` for stdout).
    #[arg(long)]
    pub json: Option<String>,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate tune plan --rate 400G --rtt 44ms -o plan.json\n  linerate tune plan --rate 10G --rtt 88ms --loss 0.02% --sysctl-out 90-linerate.conf --script-out nic.sh"
)]
pub struct PlanArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Write the plan (linerate.plan/1) for `tune apply --plan`.
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
    /// Write the sysctls as a file for /etc/sysctl.d.
    #[arg(long)]
    pub sysctl_out: Option<PathBuf>,
    /// Write the NIC, qdisc and CPU commands as a shell script.
    #[arg(long)]
    pub script_out: Option<PathBuf>,
    /// Print the plan as JSON (`-`) or write it to FILE.
    #[arg(long)]
    pub json: Option<String>,
    /// Cores of the end with fewer (default: this host's online CPUs).
    #[arg(long, value_name = "N")]
    pub cores: Option<u32>,
    /// What one stream on one core carries, bits/s, as `linerate bench -P 1` measured it
    /// between the hosts (e.g. 25G). Default: measured here, one stream on loopback for 1 s
    /// (not with --root). The plan takes a stream a core up to the target, and says when the
    /// cores, not the window, bound it.
    #[arg(long, value_name = "RATE", value_parser = units::parse_rate)]
    pub per_core_rate: Option<u64>,
}

#[derive(Args, Clone)]
pub struct ScopeArgs {
    /// Work inside this network namespace (/run/netns/NAME) instead of the host.
    #[arg(long, conflicts_with = "lab")]
    pub netns: Option<String>,
    /// Work inside a host of this lab (with --host).
    #[arg(long, requires = "host")]
    pub lab: Option<String>,
    /// The lab host (h1, h2, ...).
    #[arg(long, requires = "lab")]
    pub host: Option<String>,
    /// State file (default: /var/lib/linerate/tune/SCOPE.json, or $LINERATE_TUNE_DIR).
    #[arg(long)]
    pub state: Option<PathBuf>,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate tune plan --rate 10G --rtt 44ms -o plan.json && linerate tune apply --plan plan.json\n  linerate tune apply --profile wan-10g --lab study --host h1\n  linerate tune revert\n\nProfiles: wan-10g (10G, 100 ms), dtn-100g (100G, 100 ms), dtn-400g (400G, 100 ms), lan-100g (100G, 1 ms).\nOnly sysctls are applied; the plan's NIC and CPU commands are printed for you to run."
)]
pub struct ApplyArgs {
    /// A plan written by `tune plan -o`.
    #[arg(long, conflicts_with = "profile", required_unless_present = "profile")]
    pub plan: Option<PathBuf>,
    /// A built-in target, planned against this host.
    #[arg(long)]
    pub profile: Option<String>,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Show what would change, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args)]
pub struct CaptureArgs {
    pub dir: PathBuf,
    #[arg(long)]
    pub iface: Option<String>,
}

pub fn run(cmd: TuneCommand) -> anyhow::Result<()> {
    match cmd {
        TuneCommand::Audit(a) => audit_cmd(a),
        TuneCommand::Plan(a) => plan_cmd(a),
        TuneCommand::Apply(a) => apply_cmd(a),
        TuneCommand::Revert(a) => revert_cmd(a),
        TuneCommand::Capture(a) => {
            let root = SysRoot::live().capturing(&a.dir);
            let f = facts::collect(&root, a.iface.as_deref());
            eprintln!(
                "captured {} interfaces and {} sysctls into {}",
                f.interfaces.len(),
                f.sysctls.len(),
                a.dir.display()
            );
            Ok(())
        }
    }
}

fn read_facts(s: &SourceArgs) -> anyhow::Result<Facts> {
    let root = match &s.root {
        Some(dir) => {
            if !dir.join("proc").is_dir() {
                bail!("{} is not a fixture tree (no proc/ in it)", dir.display());
            }
            SysRoot::fixture(dir)
        }
        None => SysRoot::live(),
    };
    let f = facts::collect(&root, s.iface.as_deref());
    if let Some(i) = &s.iface
        && f.interfaces.is_empty()
    {
        bail!("no interface named {i}");
    }
    Ok(f)
}

fn target(t: &TargetArgs, facts: &Facts) -> Target {
    let fastest = facts
        .interfaces
        .iter()
        .filter_map(|i| i.speed_mbps)
        .max()
        .map(|m| m as f64 * 1e6);
    Target {
        rate_bps: t.rate.map(|r| r as f64).or(fastest).unwrap_or(10e9),
        rtt_s: t.rtt.map_or(0.1, |us| us as f64 / 1e6).max(1e-5),
        loss: t.loss,
        streams: t.streams,
        mss: t.mss,
    }
}

fn describe(t: &Target) -> String {
    format!(
        "{} at {:.1} ms RTT{} (BDP {})",
        fmt_rate(t.rate_bps),
        t.rtt_s * 1e3,
        t.loss
            .map_or(String::new(), |p| format!(", {:.4} % loss", p * 100.0)),
        fmt_bytes(linerate_tune::bounds::bdp_bytes(t.rate_bps, t.rtt_s) as f64)
    )
}

fn audit_cmd(a: AuditArgs) -> anyhow::Result<()> {
    let facts = read_facts(&a.source)?;
    let t = target(&a.target, &facts);
    let findings = audit::audit(&facts, &t);
    if a.json.as_deref() != Some("-") {
        println!("linerate tune audit: target {}", describe(&t));
        let width = findings.iter().map(|f| f.item.len()).max().unwrap_or(10);
        let sw = findings.iter().map(|f| f.scope.len()).max().unwrap_or(4);
        for f in &findings {
            let sev = match f.severity {
                Severity::Ok => "ok  ",
                Severity::Info => "info",
                Severity::Warn => "WARN",
                Severity::Critical => "CRIT",
            };
            println!(
                "{sev}  {:<sw$}  {:<width$}  {:<28}  {}",
                f.scope,
                f.item,
                f.current.as_deref().unwrap_or("-"),
                if f.satisfied {
                    String::new()
                } else {
                    format!("want {}", f.recommended)
                }
            );
            if !f.satisfied {
                println!("        why: {}", f.why);
                if let Some(fix) = &f.fix {
                    println!("        fix: {}", fix.command_line());
                }
            }
        }
        if !facts.unreadable.is_empty() {
            println!(
                "\ncould not read ({}):",
                if rustix::process::geteuid().is_root() {
                    "as root"
                } else {
                    "not root; some need it"
                }
            );
            for u in &facts.unreadable {
                println!("  {}: {}", u.item, u.reason);
            }
        }
        let worst = findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Ok);
        let bad = findings.iter().filter(|f| !f.satisfied).count();
        println!(
            "\n{bad} of {} items need attention (worst: {worst:?}); `linerate tune plan` prints the fixes (--sysctl-out and --script-out write them as files).",
            findings.len()
        );
    }
    if let Some(path) = &a.json {
        let doc = json!({
            "schema": "linerate.audit/1",
            "linerate_version": env!("CARGO_PKG_VERSION"),
            "target": t,
            "facts": facts,
            "findings": findings,
        });
        output::write_json(&doc, path)?;
    }
    Ok(())
}

fn plan_cmd(a: PlanArgs) -> anyhow::Result<()> {
    let facts = read_facts(&a.source)?;
    let t = target(&a.target, &facts);
    let mut cpus = plan::Cpus::of(&facts);
    if let Some(n) = a.cores {
        cpus.cores = n.max(1);
    }
    // Measuring a core is optional: a host where loopback cannot carry a
    // stream (a fresh network namespace) is planned without it, and says so.
    let mut unmeasured = None;
    cpus.per_core_bps = match (a.per_core_rate, &a.source.root) {
        (Some(r), _) => Some(r as f64),
        (None, Some(_)) => None,
        (None, None) => match per_core_here() {
            Ok(measured) => {
                eprintln!(
                    "one core carried {} here (one stream on loopback for 1 s; --per-core-rate to give the rate between the hosts)",
                    fmt_rate(measured)
                );
                Some(measured)
            }
            Err(e) => {
                unmeasured = Some(format!(
                    "what one core carries was not measured ({e:#}): the plan assumes a \
                     stream is held by its window and loss only; --per-core-rate gives the rate"
                ));
                None
            }
        },
    };
    let mut p = plan::make_for(&facts, t, cpus);
    // Printed with the plan's notes, and kept in its JSON.
    if let Some(note) = unmeasured {
        p.notes.insert(0, note);
    }
    let header = format!(
        "linerate {} tune plan: {}",
        env!("CARGO_PKG_VERSION"),
        describe(&t)
    );
    if a.json.as_deref() != Some("-") {
        print_plan(&p, &header);
    }
    if let Some(path) = &a.out {
        output::write_json(&p, &path.to_string_lossy())?;
        eprintln!("plan written to {}", path.display());
    }
    if let Some(path) = &a.json {
        output::write_json(&p, path)?;
    }
    if let Some(path) = &a.sysctl_out {
        std::fs::write(path, p.sysctl_d(&header))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &a.script_out {
        std::fs::write(path, p.script(&header))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// What one stream on one core carries on this host: one stream on
/// loopback for a second, each end on a core of its own where there are
/// two (the bench's own choice).
fn per_core_here() -> anyhow::Result<f64> {
    use std::net::{Ipv4Addr, SocketAddr};
    let server = linerate_daemon::Running::start(linerate_daemon::Server::bind(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )?)?;
    let spec = linerate_engine::spec::BenchSpec {
        options: BenchOptions {
            streams: 1,
            duration_ms: 1000,
            interval_ms: 0,
            ..BenchOptions::default()
        },
        ..Default::default()
    };
    let run = linerate_engine::bench::run(server.addr(), &spec, None, &mut |_, _| {});
    server.stop()?;
    Ok(linerate_engine::bench::to_result(&run?, Vec::new())
        .summary
        .bits_per_second)
}

fn print_plan(p: &Plan, header: &str) {
    println!("{header}");
    println!(
        "  bandwidth-delay product  {}",
        fmt_bytes(p.bdp_bytes as f64)
    );
    println!("  streams                  {} (MSS {})", p.streams, p.mss);
    println!(
        "  socket buffer / stream   {}",
        fmt_bytes(p.buffer_bytes as f64)
    );
    if let Some(c) = p.current_per_stream_bps {
        println!(
            "  one stream now           about {} (window / RTT with today's tcp_rmem/tcp_wmem)",
            fmt_rate(c)
        );
    }
    println!(
        "  one stream planned       about {}{}",
        fmt_rate(p.planned_per_stream_bps),
        match p.per_core_bps {
            Some(_) => " (window, loss and one core's rate)",
            None => " (window and loss only: no core's rate was given)",
        }
    );
    println!("  cores                    {}", p.cores);
    if let Some(m) = p.mathis_per_stream_bps {
        println!("  Mathis bound / stream    {}", fmt_rate(m));
    }
    if p.pacing_per_stream_bps > p.planned_per_stream_bps {
        // A cap above what a stream reaches would cap nothing.
        println!(
            "  pacing / stream          none needed: a stream's share, {}, is above what it reaches",
            fmt_rate(p.pacing_per_stream_bps)
        );
    } else {
        println!(
            "  pacing / stream          {} (linerate --fq-rate)",
            fmt_rate(p.pacing_per_stream_bps)
        );
    }
    println!("\n# sysctl.d ({} settings)", p.settings.len());
    print!(
        "{}",
        p.sysctl_d(header)
            .lines()
            .skip(1)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    println!("\n# commands ({})", p.commands.len());
    for c in &p.commands {
        println!("# {}\n{}", c.why, c.line);
    }
    for n in &p.notes {
        println!("note: {n}");
    }
}

/// Built-in targets for `apply --profile`.
fn profile(name: &str) -> anyhow::Result<Target> {
    let (rate, rtt) = match name {
        "wan-10g" => (10e9, 0.1),
        "dtn-100g" => (100e9, 0.1),
        "dtn-400g" => (400e9, 0.1),
        "lan-100g" => (100e9, 0.001),
        other => {
            bail!("no profile named {other:?}; there are wan-10g, dtn-100g, dtn-400g, lan-100g")
        }
    };
    Ok(Target {
        rate_bps: rate,
        rtt_s: rtt,
        loss: None,
        streams: None,
        mss: None,
    })
}

/// The namespace to work in and the state file's name.
fn scope(s: &ScopeArgs) -> anyhow::Result<(Option<String>, String, PathBuf)> {
    let ns = match (&s.netns, &s.lab, &s.host) {
        (Some(ns), _, _) => Some(ns.clone()),
        (None, Some(lab), Some(host)) => {
            let l = linerate_lab::Lab::load(lab).with_context(|| format!("reading lab {lab}"))?;
            let h = l
                .hosts
                .iter()
                .find(|h| &h.name == host)
                .with_context(|| format!("lab {lab} has no host {host}"))?;
            Some(h.netns.clone())
        }
        _ => None,
    };
    let (label, file) = match &ns {
        Some(n) => (format!("netns {n}"), format!("netns-{n}")),
        None => ("host".to_string(), "host".to_string()),
    };
    let state = s.state.clone().unwrap_or_else(|| apply::state_path(&file));
    Ok((ns, label, state))
}

fn apply_cmd(a: ApplyArgs) -> anyhow::Result<()> {
    let (ns, label, state) = scope(&a.scope)?;
    let (p, source) = match (&a.plan, &a.profile) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let p: Plan = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a linerate.plan/1 document", path.display()))?;
            (p, path.display().to_string())
        }
        (None, Some(name)) => {
            let t = profile(name)?;
            let facts = run_in(ns.as_deref(), || {
                Ok::<_, anyhow::Error>(facts::collect(&SysRoot::live(), None))
            })?;
            (plan::make(&facts, t), format!("profile {name}"))
        }
        (None, None) => bail!("give --plan FILE or --profile NAME"),
    };
    if a.dry_run {
        for s in &p.settings {
            println!(
                "would set {} = {} (now {})",
                s.key,
                s.value,
                s.current.as_deref().unwrap_or("?")
            );
        }
        return Ok(());
    }
    crate::lab_cmd::require_root("tune apply")?;
    let report = apply_in(ns.as_deref(), &p.settings, &state, &label, &source)?;
    for e in &report.changed {
        println!("set   {} = {}   (was {})", e.key, e.applied, e.previous);
    }
    for k in &report.unchanged {
        println!("kept  {k} (already as planned)");
    }
    for (k, why) in &report.skipped {
        println!("skip  {k}: {why}");
    }
    if report.changed.is_empty() {
        println!("nothing to change in {label}");
    } else {
        println!(
            "previous values saved in {}; `linerate tune revert{}` restores them",
            state.display(),
            revert_hint(&a.scope)
        );
    }
    if !p.commands.is_empty() {
        println!("not applied (NIC, qdisc and CPU; run them yourself):");
        for c in &p.commands {
            println!("  {}", c.line);
        }
    }
    Ok(())
}

fn revert_hint(s: &ScopeArgs) -> String {
    match (&s.netns, &s.lab, &s.host) {
        (Some(n), _, _) => format!(" --netns {n}"),
        (None, Some(l), Some(h)) => format!(" --lab {l} --host {h}"),
        _ => String::new(),
    }
}

/// Applies settings inside `ns` (or on the host).
fn apply_in(
    ns: Option<&str>,
    settings: &[plan::Setting],
    state: &Path,
    label: &str,
    source: &str,
) -> anyhow::Result<apply::Report> {
    run_in(ns, || {
        Ok(apply::apply(
            settings,
            Path::new("/proc/sys"),
            state,
            label,
            source,
        )?)
    })
}

/// Reverts what `apply_in` did.
fn revert_in(ns: Option<&str>, state: &Path) -> anyhow::Result<Vec<apply::Entry>> {
    run_in(ns, || Ok(apply::revert(Path::new("/proc/sys"), state)?))
}

fn revert_cmd(a: ScopeArgs) -> anyhow::Result<()> {
    let (ns, label, state) = scope(&a)?;
    crate::lab_cmd::require_root("tune revert")?;
    let restored = revert_in(ns.as_deref(), &state)?;
    for e in &restored {
        println!("restored {} = {}", e.key, e.previous);
    }
    println!("{label}: {} settings restored", restored.len());
    Ok(())
}
