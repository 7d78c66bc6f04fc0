//! The `linerate` command: moves data between hosts at line rate, benchmarks
//! the network, and says why a link is slow.

mod archive_cmd;
mod argv;
mod bench_cmd;
mod compare_cmd;
mod dashboard_cmd;
mod demo_cmd;
mod detach;
mod docs_cmd;
mod find_rate;
mod flags;
mod fleet_cmd;
mod job_cmd;
mod keys_cmd;
mod lab_cmd;
mod latency_cmd;
mod log;
mod measure;
mod netns;
mod output;
mod progress;
mod report_cmd;
mod schedule_cmd;
mod schedule_state;
mod scheduled;
mod serve_cmd;
mod signals;
mod study_cmd;
mod study_doc;
mod transfer_cmd;
mod tune_cmd;
mod units;
mod usage;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "linerate",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("LINERATE_COMMIT"), ")"),
    about = "Move data between hosts at line rate, benchmark the network, and say why a link is slow",
    long_about = None,
    after_help = "Examples:\n  linerate demo                      everything on loopback, no setup\n  linerate serve                     answer sessions on port 5201\n  linerate bench 10.0.0.2 -P 8 -t 30 eight streams for 30 s, with a verdict\n  ssh dtn2 linerate recv /in | linerate send data/ -   parallel, resumable file transfer\n  linerate compare -P 1,4            linerate, iperf2, iperf3, nuttcp side by side\n  linerate tune audit --rate 100G --rtt 44ms   what this host needs for that path\n  linerate report results/ -o report.html      figures from any results"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer every kind of session on one TCP port.
    Serve(serve_cmd::ServeArgs),
    /// Memory-to-memory throughput, one thread per stream, with TCP_INFO and a verdict.
    Bench(bench_cmd::BenchArgs),
    /// Round-trip percentiles and bandwidth against message size, idle and under load.
    Latency(latency_cmd::LatencyArgs),
    /// Many senders on many hosts to one receiver, swept over senders x hosts x message size.
    Incast(fleet_cmd::IncastArgs),
    /// Every ordered pair of a host list, pair by pair or all at once; the slowest named.
    Mesh(fleet_cmd::MeshArgs),
    /// Proxy applications across many hosts: a 3D halo exchange, an all-to-all.
    #[command(subcommand)]
    Job(job_cmd::JobCommand),
    /// Join a many-host run as one host's agent (what incast's and mesh's launchers start).
    Agent(fleet_cmd::AgentArgs),
    /// Send files, trees or generated data to `recv` or `serve --root`, in parallel, resumable.
    Send(transfer_cmd::SendArgs),
    /// Receive one transfer into a directory; prints the URL to send to.
    Recv(transfer_cmd::RecvArgs),
    /// This user's client key for daemons (`serve --root`): make it, print it.
    #[command(subcommand)]
    Keys(keys_cmd::KeysCommand),
    /// Run the whole tool on loopback with generated data: no root, no setup.
    Demo(demo_cmd::DemoArgs),
    /// Namespace testbeds with WAN conditions (netem, or the built-in emulator).
    #[command(subcommand)]
    Lab(lab_cmd::LabCommand),
    /// The seed papers' studies on a lab, one command each (root).
    #[command(subcommand)]
    Study(study_cmd::StudyCommand),
    /// linerate and the installed peers (iperf2, iperf3, nuttcp; rsync for files) side by side.
    Compare(compare_cmd::CompareArgs),
    /// Result documents to one self-contained HTML page of figures (and CSV).
    Report(report_cmd::ReportArgs),
    /// What ran between which hosts: each series' latest result against its normal range.
    History(archive_cmd::HistoryArgs),
    /// Results in and out of the archive: import older ones and iperf3's, export all.
    #[command(subcommand)]
    Archive(archive_cmd::ArchiveCommand),
    /// Run tests on a schedule (bench, latency, mesh, send), one throughput test a path at once.
    #[command(subcommand)]
    Schedule(schedule_cmd::ScheduleCommand),
    /// Serve the archive read-only: a grid of paths, each series over time, regressions, /metrics.
    Dashboard(dashboard_cmd::DashboardArgs),
    /// Audit host settings, plan them from a target rate and RTT, apply and revert.
    #[command(subcommand)]
    Tune(tune_cmd::TuneCommand),
    /// Write the manual pages (linerate.1 and one per subcommand).
    Man(docs_cmd::ManArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    Completions(docs_cmd::CompletionsArgs),
}

fn main() {
    if let Some(plan) = lab_cmd::emulator_plan(&argv::command_line()) {
        if let Err(e) = lab_cmd::run_emulator(&plan) {
            eprintln!("linerate: error: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    // The matches stay at hand where the order of flags matters (send's
    // --include and --exclude rules).
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Serve(a) => serve_cmd::run(a),
        Command::Bench(a) => bench_cmd::run(a),
        Command::Latency(a) => latency_cmd::run(a),
        Command::Incast(a) => fleet_cmd::run_incast(a),
        Command::Mesh(a) => fleet_cmd::run_mesh(a),
        Command::Job(c) => job_cmd::run(c),
        Command::Agent(a) => fleet_cmd::run_agent(a),
        Command::Send(a) => transfer_cmd::run_send(a, matches.subcommand_matches("send")),
        Command::Recv(a) => transfer_cmd::run_recv(a),
        Command::Keys(c) => keys_cmd::run(c),
        Command::Demo(a) => demo_cmd::run(a),
        Command::Lab(c) => lab_cmd::run(c),
        Command::Study(c) => study_cmd::run(c),
        Command::Tune(c) => tune_cmd::run(c),
        Command::Compare(a) => compare_cmd::run(a),
        Command::Report(a) => report_cmd::run(a),
        Command::History(a) => archive_cmd::run_history(a),
        Command::Archive(c) => archive_cmd::run(c),
        Command::Schedule(c) => schedule_cmd::run(c),
        Command::Dashboard(a) => dashboard_cmd::run(a),
        Command::Man(a) => docs_cmd::man(a),
        Command::Completions(a) => docs_cmd::completions(a),
    };
    if let Err(e) = result {
        if e.chain().any(|c| c.is::<signals::Interrupted>()) {
            eprintln!("linerate: {e:#}");
            std::process::exit(signals::INTERRUPTED_STATUS);
        }
        eprintln!("linerate: error: {e:#}");
        if scheduled::path_held(&e) {
            std::process::exit(scheduled::PATH_HELD_STATUS);
        }
        // Bad flags exit as clap's own refusals do.
        let usage = e.chain().any(|c| c.is::<usage::UsageError>());
        std::process::exit(if usage { 2 } else { 1 });
    }
}
