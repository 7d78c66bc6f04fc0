//! Tests on a schedule: `linerate schedule run` on loopback, two benches
//! over one path and a latency test, each run recorded in an archive with
//! the schedule's name; the file read again on SIGHUP while a bench runs;
//! SIGTERM ending the schedule and its running test. Two lab hosts'
//! schedules benching a third: its daemon lets one hold its path at a
//! time. A file with wrong tests names their lines and runs the others.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::tree::TempDir;
use common::{Server, linerate_cmd, text};

/// A schedule of two 1-second benches every 3 s over one path (jitter up
/// to 1 s) and a latency test every `latency_every`.
fn schedule_file(addr: &str, latency_every: &str) -> String {
    format!(
        r#"name = "watch"

[[test]]
name = "b1"
command = "bench {addr} -t 1"
every = "3s"
jitter = "1s"

[[test]]
name = "b2"
command = "bench {addr} -t 1"
every = "3s"
jitter = "1s"

[[test]]
name = "rtt"
command = "latency {addr} -t 0.2"
every = "{latency_every}"
"#
    )
}

/// `schedule run FILE` recording into `archive`, its stderr lines sent on.
pub(crate) fn start(file: &Path, archive: &Path, data: &Path) -> (common::Guard, Receiver<String>) {
    start_by(linerate_cmd(), file, archive, data)
}

/// `schedule run FILE` as `cmd` runs linerate (in a lab host, say).
fn start_by(
    mut cmd: std::process::Command,
    file: &Path,
    archive: &Path,
    data: &Path,
) -> (common::Guard, Receiver<String>) {
    let mut child: Child = cmd
        .env("XDG_DATA_HOME", data)
        .args(["schedule", "run"])
        .arg(file)
        .arg("--archive")
        .arg(archive)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedule run");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (common::Guard(child), rx)
}

/// Lines from `rx` until one `pred` holds (returned), or `within`.
pub(crate) fn until(
    rx: &Receiver<String>,
    seen: &mut Vec<String>,
    within: Duration,
    pred: impl Fn(&str) -> bool,
) -> Option<String> {
    let end = Instant::now() + within;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if pred(&line) {
                    return Some(line);
                }
            }
            Err(_) => return None,
        }
    }
    None
}

/// Every document of `archive` (`archive export`), each whole.
fn exported(data: &Path, archive: &Path) -> Vec<serde_json::Value> {
    let out = linerate_cmd()
        .env("XDG_DATA_HOME", data)
        .args(["archive", "export", "--archive"])
        .arg(archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole document"))
        .collect()
}

/// (test, due, jitter drawn) of a "started" line.
fn started(line: &str) -> Option<(String, f64, f64)> {
    let (test, rest) = line.split_once(": started (run ")?;
    let field = |name: &str| -> Option<f64> {
        rest.split(name)
            .nth(1)?
            .split([',', ' '])
            .next()?
            .parse()
            .ok()
    };
    Some((test.to_string(), field("due ")?, field("jitter ")?))
}

#[test]
fn a_schedule_keeps_benches_apart_reads_its_file_again_and_ends_cleanly() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("schedule");
    let data = base.join("data");
    let server = Server::start();
    let file = base.join("watch.toml");
    std::fs::write(&file, schedule_file(&server.addr(), "2s")).unwrap();
    let archive = base.join("watch.db");
    let (mut sched, rx) = start(&file, &archive, &data);
    let mut seen = Vec::new();
    // Four bench runs, then the file edited (latency every 1 s) while a
    // bench runs.
    let mut benches = 0;
    while benches < 4 {
        let line = until(&rx, &mut seen, Duration::from_secs(60), |l| {
            started(l).is_some_and(|(t, _, _)| t.starts_with('b'))
        });
        assert!(line.is_some(), "no bench started: {seen:#?}");
        benches += 1;
    }
    let running_bench = started(seen.last().unwrap()).unwrap().0;
    std::fs::write(&file, schedule_file(&server.addr(), "1s")).unwrap();
    let pid = rustix::process::Pid::from_raw(sched.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
    let reread = until(&rx, &mut seen, Duration::from_secs(30), |l| {
        l.contains("read again")
    });
    assert!(reread.is_some(), "{seen:#?}");
    // The bench that ran through the reload ended by itself, well.
    let ended = until(&rx, &mut seen, Duration::from_secs(30), |l| {
        l.starts_with(&format!("{running_bench}: ended"))
    })
    .unwrap_or_else(|| panic!("{seen:#?}"));
    assert!(ended.contains("exit status: 0"), "{ended}");
    // Three latency runs at the new interval, then SIGTERM while a bench runs.
    let reload_at = seen.len();
    for _ in 0..3 {
        let l = until(&rx, &mut seen, Duration::from_secs(30), |l| {
            l.starts_with("rtt: started")
        });
        assert!(l.is_some(), "{seen:#?}");
    }
    let bench = until(&rx, &mut seen, Duration::from_secs(30), |l| {
        started(l).is_some_and(|(t, _, _)| t.starts_with('b'))
    });
    assert!(bench.is_some(), "{seen:#?}");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = common::wait_exit(&mut sched, Duration::from_secs(30));
    assert!(status.is_some_and(|s| s.success()), "{seen:#?}");
    seen.extend(rx.try_iter());

    // Each run's jitter was drawn within its test's bound (1 s for the
    // benches, none for the latency test).
    for (test, _, jitter) in seen.iter().filter_map(|l| started(l)) {
        let bound = if test == "rtt" { 0.0 } else { 1.0 };
        assert!(
            (0.0..=bound).contains(&jitter),
            "{test}: jitter {jitter} s: {seen:#?}"
        );
    }
    let dues: Vec<f64> = seen[reload_at..]
        .iter()
        .filter_map(|l| started(l))
        .filter(|(t, _, _)| t == "rtt")
        .map(|(_, due, _)| due)
        .collect();
    // Due on a grid of the new interval (a run missed skips a step).
    let on_grid = |d: f64| (d - d.round()).abs() < 0.002 && d.round() >= 1.0;
    assert!(dues.windows(2).all(|w| on_grid(w[1] - w[0])), "{dues:?}");
    assert!(
        dues.windows(2).any(|w| (w[1] - w[0] - 1.0).abs() < 0.002),
        "{dues:?}"
    );

    // The archive: every run with the schedule's name; the two benches'
    // runs never overlap; the last, ended by SIGTERM, whole and marked so.
    let docs = exported(&data, &archive);
    let mut spans: Vec<(f64, f64, String)> = Vec::new();
    for d in &docs {
        let schedule = d["schedule"]
            .as_str()
            .unwrap_or_else(|| panic!("no schedule: {d}"));
        assert!(schedule.starts_with("watch/"), "{schedule}");
        if d["kind"] == "bench" {
            let at = d["started_at"].as_f64().unwrap();
            spans.push((
                at,
                at + d["summary"]["seconds"].as_f64().unwrap(),
                schedule.into(),
            ));
        }
    }
    assert!(spans.len() >= 5, "{spans:?}");
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in spans.windows(2) {
        assert!(w[1].0 >= w[0].1, "overlap: {w:?}");
    }
    assert!(
        docs.iter().any(|d| d["interrupted"] == true),
        "the last bench, ended by SIGTERM"
    );
    assert!(docs.iter().any(|d| d["kind"] == "latency"));
}

#[test]
fn a_schedule_with_wrong_tests_names_their_lines_and_runs_the_rest() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("schedule-bad");
    let data = base.join("data");
    let server = Server::start();
    // A host that does not answer: a port that takes connections and
    // never speaks.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let file = base.join("bad.toml");
    std::fs::write(
        &file,
        format!(
            "[[test]]\ncommand = \"tune audit\"\nevery = \"1m\"\n\n\
             [[test]]\ncommand = \"latency {} -t 0.5\"\nevery = \"0s\"\n\n\
             [[test]]\nname = \"rtt\"\ncommand = \"latency {} -t 0.5\"\nevery = \"1m\"\n\n\
             [[test]]\nname = \"silent\"\ncommand = \"bench 127.0.0.1:{} -t 1\"\nevery = \"1m\"\n",
            server.addr(),
            server.addr(),
            silent.local_addr().unwrap().port()
        ),
    )
    .unwrap();
    let out = linerate_cmd()
        .args(["schedule", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("bad.toml:line 2: \"tune\" is not a command"),
        "{said}"
    );
    assert!(
        said.contains("bad.toml:line 7: every = \"0s\": it cannot be 0"),
        "{said}"
    );
    assert!(said.contains("rtt: every 1m"), "{said}");
    let archive = base.join("bad.db");
    let (mut sched, rx) = start(&file, &archive, &data);
    let mut seen = Vec::new();
    let ran = until(&rx, &mut seen, Duration::from_secs(30), |l| {
        l.starts_with("rtt: ended")
    });
    assert!(
        ran.is_some_and(|l| l.contains("exit status: 0")),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|l| l.contains("line 2") && l.contains("left out")),
        "{seen:#?}"
    );
    // The host that never answers: the run fails by itself, naming its line.
    let silent_ended = until(&rx, &mut seen, Duration::from_secs(60), |l| {
        l.starts_with("silent: ended")
    })
    .unwrap_or_else(|| panic!("{seen:#?}"));
    assert!(
        silent_ended.contains("exit status: 1") && silent_ended.contains("line 14 of the schedule"),
        "{silent_ended}"
    );
    let pid = rustix::process::Pid::from_raw(sched.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    assert!(common::wait_exit(&mut sched, Duration::from_secs(30)).is_some());
    // A file that is not TOML: one error naming its line, exit 1.
    std::fs::write(&file, "name = \"x\"\n[[test]\n").unwrap();
    let out = linerate_cmd()
        .args(["schedule", "run"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("bad.toml:line 2"), "{}", text(&out));
}

/// A lab host's schedule: a 2-second bench of `server` every 5 s (jitter
/// up to 0.5 s, so the two hosts' benches always meet) and a latency test
/// every `latency_every`.
fn lab_schedule_file(host: &str, server: &str, latency_every: &str) -> String {
    format!(
        r#"name = "{host}"

[[test]]
name = "b"
command = "bench {server} -t 2"
every = "5s"
jitter = "0.5s"

[[test]]
name = "rtt"
command = "latency {server} -t 0.2"
every = "{latency_every}"
"#
    )
}

/// Two hosts of a lab follow their own schedules, each benching the
/// third every 5 s: the third's daemon lets one scheduled bench hold its
/// path at a time, so their runs (start and end from the archive) never
/// overlap, and one refused waits and tries again. Two minutes; h1's file
/// is edited and read again while its bench runs (the bench goes on and
/// its latency test moves to its new interval); SIGTERM ends both.
#[test]
fn two_hosts_schedules_take_turns_on_a_third_hosts_path() {
    if !common::require_root("two_hosts_schedules_take_turns_on_a_third_hosts_path") {
        return;
    }
    let _traffic = common::beside_other_traffic();
    let lab =
        common::testlab::TestLab::up("sch", &["--hosts", "3", "--router", "--backend", "veth"]);
    let port = common::quiet_port();
    let _server = lab.serve("h3", port);
    let server = format!("{}:{port}", lab.addr("h3", false));
    let base = TempDir::new("schedule-lab");
    let data = base.join("data");
    let archive = base.join("site.db");
    let mut scheds = Vec::new();
    for host in ["h1", "h2"] {
        let file = base.join(&format!("{host}.toml"));
        std::fs::write(&file, lab_schedule_file(host, &server, "3s")).unwrap();
        let mut cmd = linerate_cmd();
        cmd.args(["lab", "exec", "--name", &lab.name, host, "--"])
            .arg(common::linerate());
        let (guard, rx) = start_by(cmd, &file, &archive, &data);
        scheds.push((host, file, guard, rx, Vec::<String>::new()));
    }
    let begun = Instant::now();
    let mut reloaded_at = None;
    // Two minutes of both, h1's file read again half way.
    while begun.elapsed() < Duration::from_secs(120) {
        for (_, _, _, rx, seen) in scheds.iter_mut() {
            seen.extend(rx.try_iter());
        }
        if reloaded_at.is_none() && begun.elapsed() > Duration::from_secs(60) {
            let (_, file, guard, rx, seen) = &mut scheds[0];
            let line = until(rx, seen, Duration::from_secs(30), |l| {
                l.starts_with("b: started")
            });
            assert!(line.is_some(), "h1: {seen:#?}");
            std::fs::write(&*file, lab_schedule_file("h1", &server, "2s")).unwrap();
            let pid = rustix::process::Pid::from_raw(guard.0.id() as i32).unwrap();
            rustix::process::kill_process(pid, rustix::process::Signal::HUP).unwrap();
            let reread = until(rx, seen, Duration::from_secs(30), |l| {
                l.contains("read again")
            });
            assert!(reread.is_some(), "h1: {seen:#?}");
            let ended = until(rx, seen, Duration::from_secs(30), |l| {
                l.starts_with("b: ended")
            })
            .unwrap_or_else(|| panic!("h1: {seen:#?}"));
            assert!(ended.contains("exit status: 0"), "{ended}");
            reloaded_at = Some(seen.len());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // SIGTERM while h1's bench runs ends both schedules and their runs.
    {
        let (_, _, _, rx, seen) = &mut scheds[0];
        let line = until(rx, seen, Duration::from_secs(30), |l| {
            l.starts_with("b: started")
        });
        assert!(line.is_some(), "h1: {seen:#?}");
    }
    for (_, _, guard, _, _) in &scheds {
        let pid = rustix::process::Pid::from_raw(guard.0.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    }
    for (host, _, guard, rx, seen) in scheds.iter_mut() {
        let status = common::wait_exit(guard, Duration::from_secs(30));
        seen.extend(rx.try_iter());
        assert!(status.is_some_and(|s| s.success()), "{host}: {seen:#?}");
    }

    let mut waited = 0;
    for (host, _, _, _, seen) in &scheds {
        // Each run's jitter within its bound (a retry draws none).
        for (test, _, jitter) in seen.iter().filter_map(|l| started(l)) {
            let bound = if test == "b" { 0.5 } else { 0.0 };
            assert!(
                (0.0..=bound).contains(&jitter),
                "{host} {test}: {jitter}: {seen:#?}"
            );
        }
        waited += seen
            .iter()
            .filter(|l| l.contains("path is held by another schedule's test"))
            .count();
    }
    assert!(
        waited > 0,
        "no bench was refused the path: {:#?}",
        scheds[0].4
    );
    // h1's latency runs after the reload: due on a grid of 2 s.
    let from = reloaded_at.expect("h1 read its file again");
    let dues: Vec<f64> = scheds[0].4[from..]
        .iter()
        .filter_map(|l| started(l))
        .filter(|(t, _, _)| t == "rtt")
        .map(|(_, due, _)| due)
        .collect();
    assert!(dues.len() >= 10, "{dues:?}");
    assert!(
        dues.windows(2).all(|w| {
            let gap = w[1] - w[0];
            (gap / 2.0 - (gap / 2.0).round()).abs() < 0.001 && gap >= 1.999
        }),
        "{dues:?}"
    );

    // The archive: every run with its schedule's name, every document
    // whole; the benches of both hosts never overlap on h3's path.
    let docs = exported(&data, &archive);
    let mut spans: Vec<(f64, f64, String)> = Vec::new();
    for d in &docs {
        let schedule = d["schedule"].as_str().unwrap_or_else(|| panic!("{d}"));
        assert!(
            ["h1/b", "h2/b", "h1/rtt", "h2/rtt"].contains(&schedule),
            "{schedule}"
        );
        if d["kind"] == "bench" {
            let at = d["started_at"].as_f64().unwrap();
            spans.push((
                at,
                at + d["summary"]["seconds"].as_f64().unwrap(),
                schedule.into(),
            ));
        }
    }
    for host in ["h1/b", "h2/b"] {
        assert!(
            spans.iter().filter(|s| s.2 == host).count() >= 5,
            "{spans:?}"
        );
    }
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in spans.windows(2) {
        assert!(w[1].0 >= w[0].1, "overlap on h3's path: {w:?}");
    }
    for host in ["h1/rtt", "h2/rtt"] {
        assert!(docs.iter().any(|d| d["schedule"] == host), "{host}");
    }
    // Every bench a schedule saw end well is in the archive.
    for (host, _, _, _, seen) in &scheds {
        let ended_well = seen
            .iter()
            .filter(|l| l.starts_with("b: ended") && l.contains("exit status: 0"))
            .count();
        let archived = spans.iter().filter(|s| s.2 == format!("{host}/b")).count();
        assert!(
            archived >= ended_well,
            "{host}: {archived} archived, {ended_well} ended well"
        );
    }
}

/// `linerate ARGS` with linerate's data folder in `data`; it succeeded.
fn run_in(data: &Path, args: &[&str]) -> std::process::Output {
    let out = linerate_cmd()
        .env("XDG_DATA_HOME", data)
        .env_remove("LINERATE_ARCHIVE")
        .args(args)
        .output()
        .expect("run linerate");
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// Ends a process that is not this test's child (a daemon in the
/// background) when dropped, if it still runs.
struct EndsOnDrop(rustix::process::Pid);

impl Drop for EndsOnDrop {
    fn drop(&mut self) {
        // Only the schedule itself: its pid may be another's by now.
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.0.as_raw_nonzero()));
        if cmdline.is_ok_and(|c| String::from_utf8_lossy(&c).contains("schedule\0run")) {
            let _ = rustix::process::kill_process(self.0, rustix::process::Signal::TERM);
        }
    }
}

/// `history --json` of `archive`.
fn history_of(data: &Path, archive: &Path) -> serde_json::Value {
    let archive = archive.to_str().expect("a UTF-8 path");
    let out = run_in(data, &["history", "--archive", archive, "--json", "-"]);
    serde_json::from_slice(&out.stdout).expect("history JSON")
}

/// `schedule run -D` goes into the background with its pid file and log;
/// `schedule status` says each test's next and last run and what it
/// missed; a run whose path another test held past its limit is recorded
/// in the archive as missed, with why (`history`); SIGTERM ends it and
/// its pid file goes.
#[test]
fn a_schedule_in_the_background_says_its_state_and_records_what_it_missed() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("schedule-status");
    let data = base.join("data");
    let server = Server::start();
    let addr = server.addr();
    let file = base.join("bg.toml");
    // Both due at once on one path: "long" starts first (the file's
    // order), "short" waits past its 1 s limit and is missed.
    std::fs::write(
        &file,
        format!(
            "name = \"bg\"\n\n[[test]]\nname = \"long\"\ncommand = \"bench {addr} -t 3\"\n\
             every = \"5s\"\n\n[[test]]\nname = \"short\"\ncommand = \"bench {addr} -t 1\"\n\
             every = \"5s\"\nlimit = \"1s\"\n"
        ),
    )
    .unwrap();
    let archive = base.join("bg.db");
    let (pidfile, logfile) = (base.join("bg.pid"), base.join("bg.log"));
    let out = run_in(
        &data,
        &[
            "schedule",
            "run",
            file.to_str().unwrap(),
            "--archive",
            archive.to_str().unwrap(),
            "-D",
            "--pidfile",
            pidfile.to_str().unwrap(),
            "--logfile",
            logfile.to_str().unwrap(),
        ],
    );
    assert!(text(&out).contains("in the background"), "{}", text(&out));
    let mut pid = None;
    assert!(common::wait_until(Duration::from_secs(10), || {
        pid = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok());
        pid.is_some()
    }));
    let pid = rustix::process::Pid::from_raw(pid.unwrap()).unwrap();
    // A failed assertion below still ends the schedule it put in the background.
    let _ends = EndsOnDrop(pid);
    // Null until the schedule has written its state.
    let status_json = || {
        let out = linerate_cmd()
            .env("XDG_DATA_HOME", &data)
            .args(["schedule", "status", "bg", "--json"])
            .output()
            .expect("run linerate");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default()
    };
    let mut state = serde_json::Value::Null;
    let ready = common::wait_until(Duration::from_secs(60), || {
        state = status_json();
        let t = &state[0]["tests"];
        t["short"]["missed"].as_u64() >= Some(1) && !t["long"]["last"].is_null()
    });
    let log = || std::fs::read_to_string(&logfile).unwrap_or_default();
    assert!(ready, "{state:#}\n{}", log());
    assert!(
        state[0]["tests"]["long"]["next_start_at"]
            .as_f64()
            .is_some()
    );
    let why = state[0]["tests"]["short"]["last_missed"]["why"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("busy with long"), "{state:#}");
    let said = text(&run_in(&data, &["schedule", "status"]));
    assert!(said.contains("schedule bg (running as pid"), "{said}");
    assert!(said.contains("busy with long"), "{said}");
    // The archive has the missed run, with why.
    let history = history_of(&data, &archive);
    let missed = history["missed"].as_array().cloned().unwrap_or_default();
    assert!(
        missed.iter().any(|m| m["schedule"] == "bg"
            && m["test"] == "short"
            && m["why"]
                .as_str()
                .is_some_and(|w| w.contains("busy with long"))),
        "{history:#}"
    );
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let gone = common::wait_until(Duration::from_secs(30), || {
        !Path::new(&format!("/proc/{}", pid.as_raw_nonzero())).exists()
    });
    assert!(gone, "{}", log());
    assert!(!pidfile.exists(), "the pid file stayed");
    assert!(log().contains("schedule bg: 2 test(s)"), "{}", log());
    let said = text(&run_in(&data, &["schedule", "status"]));
    assert!(said.contains("schedule bg (stopped"), "{said}");
}

/// `serve --schedule FILE`: one daemon answers sessions and runs its
/// schedule (here a latency test of itself); SIGTERM ends both.
#[test]
fn one_daemon_answers_and_schedules() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("serve-schedule");
    let data = base.join("data");
    let port = common::quiet_port();
    let file = base.join("self.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"self\"\n\n[[test]]\nname = \"rtt\"\n\
             command = \"latency 127.0.0.1:{port} -t 0.2\"\nevery = \"1s\"\n"
        ),
    )
    .unwrap();
    let archive = base.join("self.db");
    let mut daemon = common::Guard(
        linerate_cmd()
            .env("XDG_DATA_HOME", &data)
            .env("LINERATE_ARCHIVE", &archive)
            .args(["serve", "--bind", "127.0.0.1", "--port", &port.to_string()])
            .arg("--schedule")
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut history = serde_json::Value::Null;
    let ran = common::wait_until(Duration::from_secs(60), || {
        if !archive.exists() {
            return false;
        }
        history = history_of(&data, &archive);
        history["series"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["kind"] == "latency" && s["runs"].as_u64() >= Some(2))
        })
    });
    assert!(ran, "{history:#}");
    let pid = rustix::process::Pid::from_raw(daemon.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = common::wait_exit(&mut daemon, Duration::from_secs(30));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let said = text(&run_in(&data, &["schedule", "status", "self"]));
    assert!(said.contains("schedule self (stopped"), "{said}");
}
