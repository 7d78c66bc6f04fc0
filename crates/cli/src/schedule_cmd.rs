//! `linerate schedule`: tests on a schedule (docs/guide.md#watching-paths).
//! `run` follows a schedule file in the foreground: the scheduler
//! (`linerate-schedule`) says what to start, end or miss, and each run is
//! this program run again with the test's command line, recording into the
//! archive with the schedule's name (`LINERATE_SCHEDULE`). SIGHUP reads
//! the file again without ending a running test; SIGTERM or Ctrl-C ends
//! the running tests (each writes and records what it measured) and then
//! the schedule. `check` reads a file and says what is wrong with it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use linerate_schedule::{Action, Plan, RunId, Scheduler};

use crate::archive_cmd::ArchiveFlags;

/// `linerate schedule`.
#[derive(Subcommand, Clone, Debug)]
pub enum ScheduleCommand {
    /// Follow a schedule file: run each test at its interval, one throughput test a path at once.
    #[command(after_help = "Examples:\n  \
        linerate schedule run dtns.toml\n  \
        linerate schedule run dtns.toml --archive postgres://perf@db.example/linerate\n  \
        kill -HUP PID     read the file again (running tests go on)")]
    Run(RunArgs),
    /// Read a schedule file and say what is wrong with it, line by line.
    #[command(after_help = "Examples:\n  linerate schedule check dtns.toml")]
    Check(CheckArgs),
}

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// The schedule file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub archive: ArchiveFlags,
}

#[derive(Args, Clone, Debug)]
pub struct CheckArgs {
    /// The schedule file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

pub fn run(c: ScheduleCommand) -> anyhow::Result<()> {
    match c {
        ScheduleCommand::Run(a) => follow(a),
        ScheduleCommand::Check(a) => check(a),
    }
}

/// The plan in `file`, each test that cannot run said on stderr (the
/// others make the plan).
fn read(file: &Path) -> anyhow::Result<Plan> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let stem = file
        .file_stem()
        .map_or_else(|| "schedule".into(), |s| s.to_string_lossy().to_string());
    let (plan, errors) = linerate_schedule::plan::parse(&text, &stem)
        .map_err(|e| anyhow::anyhow!("{}:{e}", file.display()))?;
    for e in &errors {
        eprintln!("{}:{e} (left out; the other tests run)", file.display());
    }
    Ok(plan)
}

fn check(a: CheckArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("reading {}", a.file.display()))?;
    let (plan, errors) = linerate_schedule::plan::parse(&text, "schedule")
        .map_err(|e| anyhow::anyhow!("{}:{e}", a.file.display()))?;
    for t in &plan.tests {
        println!(
            "{}: every {}, {} (line {})",
            t.name,
            humantime::format_duration(t.every),
            t.argv.join(" "),
            t.line
        );
    }
    for e in &errors {
        eprintln!("{}:{e}", a.file.display());
    }
    if !errors.is_empty() {
        anyhow::bail!(
            "{} test(s) of {} cannot run",
            errors.len(),
            a.file.display()
        );
    }
    Ok(())
}

use crate::output::epoch_seconds as now;

/// The exit status of a run whose server refused it because another
/// scheduled test holds its path (EX_TEMPFAIL: try again later); the
/// schedule waits and tries again within the test's limit.
pub const PATH_HELD_STATUS: i32 = 75;

/// The scheduled test this process runs as (`SCHEDULE/TEST`, from
/// `LINERATE_SCHEDULE`), if a schedule started it.
pub fn scheduled_as() -> Option<String> {
    std::env::var("LINERATE_SCHEDULE")
        .ok()
        .filter(|name| !name.is_empty())
}

/// Whether `e` is a server's refusal because another scheduled test holds
/// its path.
pub fn path_held(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<linerate_engine::EngineError>(),
            Some(linerate_engine::EngineError::Refused(r))
                if r.code == linerate_wire::RefusalCode::PathHeld
        )
    })
}

/// A run in progress: its process.
struct Run {
    test: String,
    /// The line of the schedule file its test is on.
    line: usize,
    child: Child,
    started: f64,
}

fn follow(a: RunArgs) -> anyhow::Result<()> {
    let mut plan = read(&a.file)?;
    if plan.tests.is_empty() {
        anyhow::bail!("{} has no test that can run", a.file.display());
    }
    let exe = std::env::current_exe().context("finding this linerate program")?;
    // Passed in the runs' environment: a URL's password stays out of `ps`.
    let mut archive = a.archive.for_children(plan.archive.as_deref())?;
    let stop = crate::signals::interrupt_flag();
    let reload = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&reload))
        .context("listening for SIGHUP")?;
    // The jitter only spreads runs out: the time and the process make it.
    let seed = now().to_bits() ^ u64::from(std::process::id()).rotate_left(32);
    let mut scheduler = Scheduler::new(&plan, now(), seed);
    let mut runs: BTreeMap<RunId, Run> = BTreeMap::new();
    eprintln!(
        "schedule {}: {} test(s) from {}",
        plan.name,
        plan.tests.len(),
        a.file.display()
    );
    while !stop.load(Ordering::Relaxed) {
        if reload.swap(false, Ordering::Relaxed) {
            match read(&a.file) {
                Ok(new) => {
                    scheduler.reload(&new, now());
                    archive = a.archive.for_children(new.archive.as_deref())?;
                    eprintln!(
                        "schedule {}: read again, {} test(s); {} run(s) go on",
                        new.name,
                        new.tests.len(),
                        runs.len()
                    );
                    plan = new;
                }
                Err(e) => eprintln!("schedule {}: kept as it was: {e:#}", plan.name),
            }
        }
        reap(&mut runs, &mut scheduler);
        for action in scheduler.poll(now()) {
            act(
                action,
                &plan,
                &exe,
                archive.as_deref(),
                &mut runs,
                &mut scheduler,
            );
        }
        let wake = scheduler.next_wake(now()) - now();
        // Runs are looked at five times a second as they end.
        std::thread::sleep(Duration::from_secs_f64(wake.clamp(0.01, 0.2)));
    }
    eprintln!("schedule {}: stopping {} run(s)", plan.name, runs.len());
    for r in runs.values_mut() {
        end(&mut r.child);
    }
    reap(&mut runs, &mut scheduler);
    Ok(())
}

/// One action of the scheduler.
fn act(
    action: Action,
    plan: &Plan,
    exe: &Path,
    archive: Option<&str>,
    runs: &mut BTreeMap<RunId, Run>,
    scheduler: &mut Scheduler,
) {
    match action {
        Action::Start {
            run,
            test,
            due,
            jitter,
        } => {
            let Some(spec) = plan.tests.iter().find(|t| t.name == test) else {
                scheduler.ended(run);
                return;
            };
            let mut cmd = Command::new(exe);
            cmd.args(&spec.argv)
                .env("LINERATE_SCHEDULE", format!("{}/{}", plan.name, spec.name))
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            if let Some(setting) = archive {
                cmd.env("LINERATE_ARCHIVE", setting);
            }
            match cmd.spawn() {
                Ok(child) => {
                    let at = now();
                    eprintln!(
                        "{test}: started (run {}, due {due:.3}, jitter {jitter:.3} s, {:.2} s after it)",
                        run.0,
                        at - due
                    );
                    runs.insert(
                        run,
                        Run {
                            test,
                            line: spec.line,
                            child,
                            started: at,
                        },
                    );
                }
                Err(e) => {
                    eprintln!("{test}: missed: cannot start {}: {e}", exe.display());
                    scheduler.ended(run);
                }
            }
        }
        Action::End { run, test, limit } => {
            eprintln!(
                "{test}: ended at its limit of {} (run {})",
                humantime::format_duration(limit),
                run.0
            );
            if let Some(r) = runs.get_mut(&run) {
                end(&mut r.child);
            }
        }
        Action::Missed { test, why, .. } => eprintln!("{test}: missed: {why}"),
    }
}

/// Notes the runs that ended, and those whose path another schedule's
/// test held (to be tried again).
fn reap(runs: &mut BTreeMap<RunId, Run>, scheduler: &mut Scheduler) {
    let mut held = Vec::new();
    let done: Vec<RunId> = runs
        .iter_mut()
        .filter_map(|(id, r)| match r.child.try_wait() {
            Ok(Some(status)) if status.code() == Some(PATH_HELD_STATUS) => {
                eprintln!(
                    "{}: its server's path is held by another schedule's test; waiting (run {})",
                    r.test, id.0
                );
                held.push(*id);
                None
            }
            Ok(Some(status)) => {
                // A run that failed names its test's line, as a wrong
                // test does (its own error is on the lines above).
                let failed = if status.success() {
                    String::new()
                } else {
                    format!("; the test is line {} of the schedule", r.line)
                };
                eprintln!(
                    "{}: ended after {:.1} s, {status} (run {}){failed}",
                    r.test,
                    now() - r.started,
                    id.0
                );
                Some(*id)
            }
            Ok(None) => None,
            Err(e) => {
                eprintln!("{}: lost track of its process: {e}", r.test);
                Some(*id)
            }
        })
        .collect();
    for id in done {
        runs.remove(&id);
        scheduler.ended(id);
    }
    for id in held {
        runs.remove(&id);
        scheduler.held_elsewhere(id, now());
    }
}

/// Ends a run as Ctrl-C would (it writes and records what it measured),
/// and at once if it is still there 5 s later.
fn end(child: &mut Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}
