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
use crate::schedule_state::ScheduleState;

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
    /// Each schedule's tests: their next run, their last run and how it ended, their missed runs.
    #[command(after_help = "Examples:\n  \
        linerate schedule status\n  \
        linerate schedule status dtns --json")]
    Status(StatusArgs),
}

#[derive(Args, Clone, Debug)]
pub struct RunArgs {
    /// The schedule file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub archive: ArchiveFlags,
    #[command(flatten)]
    pub daemon: crate::detach::DaemonArgs,
}

#[derive(Args, Clone, Debug)]
pub struct StatusArgs {
    /// One schedule (its name); default: every schedule that ran here.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Print the state as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Clone, Debug)]
pub struct CheckArgs {
    /// The schedule file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

pub fn run(c: ScheduleCommand) -> anyhow::Result<()> {
    match c {
        ScheduleCommand::Run(a) => run_schedule(a),
        ScheduleCommand::Check(a) => check(a),
        ScheduleCommand::Status(a) => status(a),
    }
}

/// The plan in `file`, each test that cannot run said on stderr (the
/// others make the plan).
pub fn read(file: &Path) -> anyhow::Result<Plan> {
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

/// A run in progress: its process.
struct Run {
    test: String,
    /// The line of the schedule file its test is on.
    line: usize,
    child: Child,
    started: f64,
    /// Ended by the schedule at its limit.
    at_limit: bool,
}

fn status(a: StatusArgs) -> anyhow::Result<()> {
    let states = crate::schedule_state::all(a.name.as_deref())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&states)?);
    } else {
        print!("{}", crate::schedule_state::print(&states, now()));
    }
    Ok(())
}

/// `schedule run`: in the foreground, or as a daemon (`-D`) that records
/// its process id and writes its log to a file.
fn run_schedule(a: RunArgs) -> anyhow::Result<()> {
    let plan = read(&a.file)?;
    if plan.tests.is_empty() {
        anyhow::bail!("{} has no test that can run", a.file.display());
    }
    let _pidfile = a
        .daemon
        .start(&format!("linerate schedule {}", plan.name))?;
    let stop = crate::signals::interrupt_flag();
    follow(&a.file, &a.archive, &stop)
}

/// Follows the schedule in `file` until `stop` is set (SIGTERM, Ctrl-C,
/// or the daemon it runs in stopping); SIGHUP reads the file again.
pub fn follow(file: &Path, flags: &ArchiveFlags, stop: &AtomicBool) -> anyhow::Result<()> {
    let mut plan = read(file)?;
    if plan.tests.is_empty() {
        anyhow::bail!("{} has no test that can run", file.display());
    }
    let exe = std::env::current_exe().context("finding this linerate program")?;
    // Passed in the runs' environment: a URL's password stays out of `ps`.
    let mut archive = flags.for_children(plan.archive.as_deref())?;
    let reload = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&reload))
        .context("listening for SIGHUP")?;
    // The jitter only spreads runs out: the time and the process make it.
    let seed = now().to_bits() ^ u64::from(std::process::id()).rotate_left(32);
    let mut scheduler = Scheduler::new(&plan, now(), seed);
    let mut runs: BTreeMap<RunId, Run> = BTreeMap::new();
    let mut state = ScheduleState {
        schedule: plan.name.clone(),
        file: file.to_path_buf(),
        pid: Some(std::process::id()),
        ..ScheduleState::default()
    };
    plan_into(&mut state, &plan);
    eprintln!(
        "schedule {}: {} test(s) from {}",
        plan.name,
        plan.tests.len(),
        file.display()
    );
    let mut changed = true;
    while !stop.load(Ordering::Relaxed) {
        if reload.swap(false, Ordering::Relaxed) {
            match read(file) {
                Ok(new) => {
                    scheduler.reload(&new, now());
                    archive = flags.for_children(new.archive.as_deref())?;
                    eprintln!(
                        "schedule {}: read again, {} test(s); {} run(s) go on",
                        new.name,
                        new.tests.len(),
                        runs.len()
                    );
                    plan = new;
                    plan_into(&mut state, &plan);
                    changed = true;
                }
                Err(e) => eprintln!("schedule {}: kept as it was: {e:#}", plan.name),
            }
        }
        changed |= reap(&mut runs, &mut scheduler, &mut state);
        for action in scheduler.poll(now()) {
            changed = true;
            if let Action::Missed { test, due, why } = &action {
                missed(flags, &plan, &mut state, (test, *due, why));
                continue;
            }
            let spawn = Spawn {
                plan: &plan,
                exe: &exe,
                archive: archive.as_deref(),
            };
            act(action, &spawn, &mut runs, &mut scheduler, &mut state);
        }
        if changed {
            for (test, at) in scheduler.next_starts() {
                if let Some(t) = state.tests.get_mut(&test) {
                    t.next_start_at = Some(at);
                }
            }
            state.save(now());
            changed = false;
        }
        let wake = scheduler.next_wake(now()) - now();
        // Runs are looked at five times a second as they end.
        std::thread::sleep(Duration::from_secs_f64(wake.clamp(0.01, 0.2)));
    }
    eprintln!("schedule {}: stopping {} run(s)", plan.name, runs.len());
    for r in runs.values_mut() {
        end(&mut r.child);
    }
    reap(&mut runs, &mut scheduler, &mut state);
    state.pid = None;
    state.save(now());
    Ok(())
}

/// The plan's tests in `state`: a test that keeps its name keeps what it
/// did; one no longer in the plan goes.
fn plan_into(state: &mut ScheduleState, plan: &Plan) {
    let mut tests = BTreeMap::new();
    for t in &plan.tests {
        let mut kept = state.tests.remove(&t.name).unwrap_or_default();
        kept.command = t.argv.join(" ");
        kept.every_seconds = t.every.as_secs_f64();
        tests.insert(t.name.clone(), kept);
    }
    state.tests = tests;
    state.schedule = plan.name.clone();
}

/// A run that did not happen: said, kept in the state, and recorded in
/// the archive with why.
fn missed(
    flags: &ArchiveFlags,
    plan: &Plan,
    state: &mut ScheduleState,
    (test, due, why): (&str, f64, &linerate_schedule::Missed),
) {
    eprintln!("{test}: missed: {why}");
    if let Some(t) = state.tests.get_mut(test) {
        t.missed += 1;
        t.last_missed = Some(crate::schedule_state::Missed {
            due_at: due,
            why: why.to_string(),
        });
    }
    let run = linerate_archive::MissedRun {
        schedule: plan.name.clone(),
        test: test.to_string(),
        due_at: due,
        why: why.to_string(),
    };
    if let Err(e) = flags.record_missed(plan.archive.as_deref(), &run) {
        eprintln!("{test}: the missed run not recorded: {e:#}");
    }
}

/// What starting a run needs: the plan, this program, the archive setting.
struct Spawn<'a> {
    plan: &'a Plan,
    exe: &'a Path,
    archive: Option<&'a str>,
}

/// One action of the scheduler.
fn act(
    action: Action,
    spawn: &Spawn,
    runs: &mut BTreeMap<RunId, Run>,
    scheduler: &mut Scheduler,
    state: &mut ScheduleState,
) {
    let Spawn { plan, exe, archive } = *spawn;
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
                    if let Some(t) = state.tests.get_mut(&test) {
                        t.running_since = Some(at);
                    }
                    runs.insert(
                        run,
                        Run {
                            test,
                            line: spec.line,
                            child,
                            started: at,
                            at_limit: false,
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
                r.at_limit = true;
            }
        }
        // Recorded by the loop, which holds the archive's flags.
        Action::Missed { .. } => {}
    }
}

/// Notes the runs that ended, and those whose path another schedule's
/// test held (to be tried again).
fn reap(
    runs: &mut BTreeMap<RunId, Run>,
    scheduler: &mut Scheduler,
    state: &mut ScheduleState,
) -> bool {
    let mut held = Vec::new();
    let done: Vec<RunId> = runs
        .iter_mut()
        .filter_map(|(id, r)| match r.child.try_wait() {
            Ok(Some(status)) if status.code() == Some(crate::scheduled::PATH_HELD_STATUS) => {
                eprintln!(
                    "{}: its server's path is held by another schedule's test; waiting (run {})",
                    r.test, id.0
                );
                if let Some(t) = state.tests.get_mut(&r.test) {
                    t.running_since = None;
                }
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
                let seconds = now() - r.started;
                eprintln!(
                    "{}: ended after {seconds:.1} s, {status} (run {}){failed}",
                    r.test, id.0
                );
                if let Some(t) = state.tests.get_mut(&r.test) {
                    t.running_since = None;
                    t.last = Some(crate::schedule_state::LastRun {
                        started_at: r.started,
                        seconds,
                        ended: if r.at_limit {
                            format!("ended at its limit, {status}")
                        } else {
                            status.to_string()
                        },
                    });
                }
                Some(*id)
            }
            Ok(None) => None,
            Err(e) => {
                eprintln!("{}: lost track of its process: {e}", r.test);
                Some(*id)
            }
        })
        .collect();
    let changed = !done.is_empty() || !held.is_empty();
    for id in done {
        runs.remove(&id);
        scheduler.ended(id);
    }
    for id in held {
        runs.remove(&id);
        scheduler.held_elsewhere(id, now());
    }
    changed
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
