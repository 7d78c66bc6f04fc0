//! Spawns the real `linerate` binary for end-to-end tests. Every process a
//! test starts is killed by PID when its guard drops, also when the test fails.
#![allow(dead_code)]

pub mod crafted;
/// A PostgreSQL server of the test's own (shared with the archive's tests).
#[path = "../../../../archive/tests/pg_cluster/mod.rs"]
pub mod pg_cluster;
pub mod testlab;
pub mod tree;

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Held alone by every test that measures or names a limit (a verdict, a
/// share, a rate against another tool): two at once on two cores measure
/// each other's load. In CI a study running beside the loaded-RTT lab test
/// put 0.8 ms of queueing on its ping and took 11 % off the study's
/// window-law ratio; benches running beside the loopback verdict test made
/// it lose packets and name the network instead of the CPU. Held shared by
/// every other test that moves data (transfers, daemons, strangers): those
/// run beside each other, never beside a measuring one. Every subject is in
/// one test binary, so this lock is all that keeps them apart.
static TRAFFIC: RwLock<()> = RwLock::new(());

thread_local! {
    /// How this test's thread holds [`TRAFFIC`], so that a shared hold
    /// inside an exclusive one is no second lock (which would wait forever).
    static HOLDING: Cell<Holding> = const { Cell::new(Holding::Nothing) };
}

#[derive(Clone, Copy, PartialEq)]
enum Holding {
    Nothing,
    Shared,
    Alone,
}

/// A hold on [`TRAFFIC`]; released when dropped.
pub struct TrafficHold {
    guard: LockGuard,
    was: Holding,
    /// When the lock was taken, for the hold log.
    since: Instant,
}

/// The lock's own guard, if this hold took the lock.
enum LockGuard {
    Held,
    Alone(std::sync::RwLockWriteGuard<'static, ()>),
    Shared(std::sync::RwLockReadGuard<'static, ()>),
}

impl Drop for TrafficHold {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(self.was));
        log_hold(&self.guard, self.since);
    }
}

/// With `LINERATE_TEST_HOLD_LOG` set to a file, each hold taken appends a
/// line: the test, how it held the host's traffic, and for how long. The
/// suite's time is mostly the tests that hold it alone, one after another;
/// this says which (docs/benchmarks/README.md#the-suites-time).
fn log_hold(guard: &LockGuard, since: Instant) {
    let how = match guard {
        LockGuard::Held => return,
        LockGuard::Alone(_) => "alone",
        LockGuard::Shared(_) => "shared",
    };
    let Some(path) = std::env::var_os("LINERATE_TEST_HOLD_LOG") else {
        return;
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let line = format!("{test} {how} {:.1}\n", since.elapsed().as_secs_f64());
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
}

/// The host's traffic to this test alone, until the hold drops.
pub fn alone_with_traffic() -> TrafficHold {
    hold(Holding::Alone)
}

/// The host's traffic shared with other tests that only move data, never
/// with one that measures, until the hold drops.
pub fn beside_other_traffic() -> TrafficHold {
    hold(Holding::Shared)
}

/// Takes [`TRAFFIC`] as `want`s, unless this thread holds it already as
/// much or more.
fn hold(want: Holding) -> TrafficHold {
    let was = HOLDING.with(Cell::get);
    assert!(
        !(want == Holding::Alone && was == Holding::Shared),
        "a test that shares the host's traffic cannot then take it alone"
    );
    if was == Holding::Alone || was == want {
        return TrafficHold {
            guard: LockGuard::Held,
            was,
            since: Instant::now(),
        };
    }
    let guard = match want {
        Holding::Alone => LockGuard::Alone(TRAFFIC.write().unwrap_or_else(|p| p.into_inner())),
        _ => LockGuard::Shared(TRAFFIC.read().unwrap_or_else(|p| p.into_inner())),
    };
    HOLDING.with(|h| h.set(want));
    TrafficHold {
        guard,
        was,
        since: Instant::now(),
    }
}

/// This test's thread, and every process it starts from now on, run at
/// nice -10 until the guard drops (the lab's emulator runs at -20), ahead
/// of work from outside the test. A verdict test loads the cores in a
/// shape of its own (one side crowded, its own busy loops), and a lab test
/// measures the emulator's delay or loss, not the host's; other work on
/// the host that takes the test's cores changes what either measures
/// (docs/benchmarks/2026-12-01-loaded-series.md#traffic-ahead-of-outside-load).
/// Tests that start no busy loops of their own and need the core the
/// moment they wake take [`realtime_ahead_of_outside_load`] instead.
/// Take it before starting the test's servers, so both ends stand alike.
pub fn ahead_of_outside_load() -> impl Drop {
    struct Restore(i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = rustix::process::setpriority_process(None, self.0);
        }
    }
    // Linux keeps a nice value per thread; pid 0 is this thread, and a
    // child takes its spawning thread's value.
    let before = rustix::process::getpriority_process(None).unwrap_or(0);
    // Only root may raise it; a test run by another user keeps its own.
    if let Err(e) = rustix::process::setpriority_process(None, -10) {
        assert!(!is_root(), "root raises a test's priority: {e}");
    }
    Restore(before)
}

/// This test's thread, and every process it starts from now on, run
/// round-robin real-time (SCHED_RR, priority 1) until the guard drops. At
/// nice -10 a waking sender still waits out the slice of the busy loop
/// that holds its core, and a class whose sender waits drains its queue;
/// a real-time task takes the core on waking
/// (docs/benchmarks/2026-12-01-loaded-series.md#real-time-traffic). Only
/// for tests whose processes all block between packets: a busy loop
/// started under this guard would be real-time too (the kernel leaves the
/// rest 5 % of each core). Take it before the test's lab and servers start.
pub fn realtime_ahead_of_outside_load() -> impl Drop {
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = Command::new("chrt")
                .args(["--other", "--pid", "0", &self.0])
                .status();
        }
    }
    // A thread's policy is its own, and a child takes its spawning
    // thread's; chrt is util-linux's front to sched_setscheduler.
    let tid = rustix::thread::gettid().as_raw_nonzero().to_string();
    let set = Command::new("chrt")
        .args(["--rr", "--pid", "1", &tid])
        .output()
        .expect("chrt (util-linux) is installed");
    // Only root may; a test run by another user keeps its own policy.
    assert!(
        set.status.success() || !is_root(),
        "root makes a test's traffic real-time: {}",
        text(&set)
    );
    Restore(tid)
}

pub fn linerate() -> &'static str {
    env!("CARGO_BIN_EXE_linerate")
}

/// linerate's config directory for tests: a client key that the test
/// daemons list in their authorized keys, their server identity, and the
/// servers met. Made once, kept under the target directory.
pub fn test_keys() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("linerate-keys");
        if !dir.join("authorized_keys").exists() {
            let out = Command::new(linerate())
                .args(["keys", "new", "--force"])
                .env("LINERATE_CONFIG_DIR", &dir)
                .output()
                .expect("linerate keys new");
            assert!(out.status.success(), "{}", text(&out));
            std::fs::write(dir.join("authorized_keys"), &out.stdout).unwrap();
            // Made here, not by the first of several daemons starting at once.
            std::fs::copy(dir.join("client.pem"), dir.join("server.pem")).unwrap();
        }
        dir
    })
}

/// `linerate` with the tests' keys (see [`test_keys`]).
pub fn linerate_cmd() -> Command {
    let mut c = Command::new(linerate());
    c.env("LINERATE_CONFIG_DIR", test_keys());
    c
}

/// A `linerate serve` process and the lines it logs.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn start() -> Server {
        Self::start_with(&["serve", "--bind", "127.0.0.1", "--port", "0"], None)
    }

    /// Starts `linerate ARGS`, optionally prefixed (e.g. `ip netns exec NS`).
    pub fn start_with(args: &[&str], prefix: Option<&[&str]>) -> Server {
        let mut cmd = match prefix {
            Some(p) => {
                let mut c = Command::new(p[0]);
                c.args(&p[1..]).arg(linerate());
                c
            }
            None => Command::new(linerate()),
        };
        cmd.env("LINERATE_CONFIG_DIR", test_keys());
        let mut child = cmd
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn linerate serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Some(addr) = line.split("listening on ").nth(1) {
                        let port = addr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
                        let _ = tx.send(port);
                    }
                    log.lock().unwrap().push(line);
                }
            });
        }
        let port = rx
            .recv_timeout(Duration::from_secs(10))
            .ok()
            .flatten()
            .expect("server announced its port");
        Server { child, port, log }
    }

    /// A daemon that also takes transfers into `root`.
    pub fn with_root(root: &std::path::Path) -> Server {
        Self::with_root_and(root, &[])
    }

    /// A daemon on `root` with more `serve` flags.
    pub fn with_root_and(root: &std::path::Path, extra: &[&str]) -> Server {
        let root = root.to_str().expect("UTF-8 test path");
        let mut args = vec![
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--root",
            root,
        ];
        args.extend_from_slice(extra);
        Self::start_with(&args, None)
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until `pred` holds for the log, up to `timeout`.
    pub fn wait_log(&self, timeout: Duration, pred: impl Fn(&[String]) -> bool) -> bool {
        wait_until(timeout, || pred(&self.log_lines()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills a child by PID when dropped.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a one-shot `linerate recv DIR` in the foreground; returns it and its URL.
pub fn oneshot(dir: &std::path::Path) -> (Guard, String) {
    let mut cmd = linerate_cmd();
    cmd.args(["recv", dir.to_str().expect("UTF-8 test path")]);
    oneshot_by(cmd)
}

/// A one-shot receiver that takes data in the clear (`--no-encrypt`), for
/// crafted senders that speak the protocol without TLS.
pub fn oneshot_clear(dir: &std::path::Path) -> (Guard, String) {
    let mut cmd = Command::new(linerate());
    cmd.args([
        "recv",
        "--no-encrypt",
        dir.to_str().expect("UTF-8 test path"),
    ]);
    oneshot_by(cmd)
}

/// Starts `cmd`, a one-shot receiver (`... linerate recv DIR`, perhaps
/// under a wrapper), bound to loopback in the foreground; returns it and
/// the URL it printed.
pub fn oneshot_by(mut cmd: Command) -> (Guard, String) {
    let mut child = cmd
        .args(["--bind", "127.0.0.1", "--foreground"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn recv");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read URL");
    (Guard(child), line.trim().to_string())
}

pub fn run(args: &[&str]) -> Output {
    linerate_cmd().args(args).output().expect("run linerate")
}

pub fn bench_json(addr: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["bench", addr, "--json", "-"];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(
        out.status.success(),
        "bench {extra:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("bench JSON")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Tests that need root run in CI (CI=true) and fail there without it;
/// elsewhere they are skipped with a message.
pub fn require_root(test: &str) -> bool {
    if is_root() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs root, and CI must run it");
    }
    eprintln!("skipping {test}: needs root");
    false
}

/// Fails the test with every violation when `doc` does not match docs/result.schema.json.
pub fn assert_matches_schema(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../../docs/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match the schema: {errors:#?}"
    );
}

/// Each <figure> of a report page or DOM: (data-kind, inner markup).
#[allow(dead_code)]
/// The figures `linerate report` draws from `doc`, each checked drawn.
pub fn report_kinds(doc: &serde_json::Value, tag: &str) -> Vec<String> {
    report_page(doc, tag).0
}

/// The figures `linerate report` draws from `doc`, each checked drawn, and
/// the page.
pub fn report_page(doc: &serde_json::Value, tag: &str) -> (Vec<String>, String) {
    let dir = tree::TempDir::new(tag);
    let input = dir.join("result.json");
    std::fs::write(&input, serde_json::to_vec(doc).unwrap()).unwrap();
    let html = dir.join("report.html");
    let out = run(&[
        "report",
        input.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "report: {}", text(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    let kinds = figures(&page)
        .into_iter()
        .map(|(kind, body)| {
            assert_drawn(&kind, &body);
            kind
        })
        .collect();
    (kinds, page)
}

#[allow(dead_code)]
pub fn figures(html: &str) -> Vec<(String, String)> {
    html.split("<figure ")
        .skip(1)
        .map(|f| {
            let kind = f
                .split("data-kind=\"")
                .nth(1)
                .and_then(|k| k.split('"').next())
                .unwrap_or("")
                .to_string();
            (kind, f.split("</figure>").next().unwrap_or("").to_string())
        })
        .collect()
}

/// A figure holds an SVG with drawn data and labels, not just axes.
#[allow(dead_code)]
pub fn assert_drawn(kind: &str, body: &str) {
    assert!(body.contains("<svg"), "{kind}: no svg");
    let marks = body.matches("<polyline").count()
        + body.matches("<circle").count()
        + body.matches("<rect").count().saturating_sub(2);
    assert!(marks > 0, "{kind}: the svg draws nothing");
    assert!(body.matches("<text").count() >= 3, "{kind}: no labels");
}

/// Runs linerate as user and group nobody (needs root to switch).
#[allow(dead_code)]
pub fn run_as_nobody(args: &[&str]) -> Output {
    Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            linerate(),
        ])
        .args(args)
        .output()
        .expect("setpriv (util-linux)")
}

/// `linerate send ARGS`, run to its end.
pub fn send(args: &[&str]) -> Output {
    linerate_cmd()
        .arg("send")
        .args(args)
        .output()
        .expect("run linerate send")
}

/// A command's stdout and stderr, in that order.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Temporary files, journals and stages left anywhere under `dir`.
pub fn leftovers(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if [".lrpart", ".lrjournal", ".lrstage"]
                .iter()
                .any(|s| name.ends_with(s))
            {
                out.push(name);
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    out
}

/// Waits up to `timeout` for the guarded process to exit.
pub fn wait_exit(g: &mut Guard, timeout: Duration) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if let Some(s) = g.0.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// A tmpfs of a given size, mounted for one test (needs root).
pub struct SmallFs(pub tree::TempDir);

impl SmallFs {
    pub fn mount(size: &str) -> SmallFs {
        let dir = tree::TempDir::new("full");
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "linerate-test",
                dir.path().to_str().unwrap(),
            ])
            .status()
            .expect("mount");
        assert!(ok.success(), "mount tmpfs");
        SmallFs(dir)
    }

    pub fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args([
                "-o",
                &format!("remount,size={size}"),
                self.0.path().to_str().unwrap(),
            ])
            .status()
            .expect("remount");
        assert!(ok.success(), "remount tmpfs");
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// Spinning processes that keep the host's cores busy, as other jobs
/// would; ended when dropped.
pub struct BusyCores(Vec<std::process::Child>);

impl BusyCores {
    /// A spinner at the lowest priority, as a batch job would be, for each
    /// core other work leaves idle: a busy host is every core busy once,
    /// not twice (the whole suite is also run beside a busy loop per core).
    pub fn start() -> BusyCores {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        BusyCores::spinning(
            cores.saturating_sub(cores_busy_now().round() as usize),
            "19",
        )
    }

    /// A spinner on every core at the test's own priority, whatever else
    /// runs: the test's own processes are busy too (spinning ends), and they
    /// are not the other work this stands for.
    pub fn contending() -> BusyCores {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        BusyCores::spinning(cores, "0")
    }

    fn spinning(count: usize, nice: &str) -> BusyCores {
        let busy = BusyCores(
            (0..count)
                .map(|_| {
                    std::process::Command::new("nice")
                        .args(["-n", nice, "sh", "-c", "while :; do :; done"])
                        .stdout(std::process::Stdio::null())
                        .spawn()
                        .expect("nice and sh are installed")
                })
                .collect(),
        );
        // Let the spinners fill the run queues before a run starts.
        std::thread::sleep(std::time::Duration::from_millis(300));
        busy
    }
}

/// How many cores' worth of CPU the host spent over the last 300 ms.
fn cores_busy_now() -> f64 {
    use linerate_probe::cpu::{HostTicks, cpus};
    let before = HostTicks::now();
    std::thread::sleep(std::time::Duration::from_millis(300));
    HostTicks::now().fractions_since(&before).0 * f64::from(cpus())
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `case` on a quiet host ("quiet"), then with every core kept busy
/// by other processes ("busy"), alone with its traffic: a verdict must be
/// the same on both.
pub fn quiet_and_busy(case: &dyn Fn(&str)) {
    let _alone = alone_with_traffic();
    case("quiet");
    let _busy = BusyCores::start();
    case("busy");
}

/// Runs `case` with the first of `mixes` on a quiet host, then with the
/// second while every core is kept busy, alone with its traffic. A case
/// whose settings (a congestion control, a side, a receive mode) each need
/// a quiet and a busy host meets both hosts and every setting with half the
/// runs of trying each setting on each host, which doubled such tests' time
/// in the suite (docs/benchmarks/README.md#the-suites-time).
pub fn quiet_and_busy_with<T: Copy>(mixes: [T; 2], case: &dyn Fn(&str, T)) {
    let _alone = alone_with_traffic();
    case("quiet", mixes[0]);
    let _busy = BusyCores::start();
    case("busy", mixes[1]);
}

/// A loopback port for a server that must be told its port (another
/// tool, a daemon's `--port`), picked as compare picks its servers' (below
/// the kernel's ephemeral range, spread by process and call; free when
/// chosen).
pub fn quiet_port() -> u16 {
    linerate_compare::place::free_port().expect("a free loopback port below the ephemeral range")
}

/// Waits until `ready` holds, asking every 50 ms, at most `timeout`;
/// whether it did.
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if ready() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `argv` prints, run in the namespace `netns` or in this one.
pub fn output_in(netns: Option<&str>, argv: &[&str]) -> String {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).args(argv);
            c
        }
        None => {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    let out = cmd.output().unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The kernel's view (`ss -ti`) of the established TCP connections from or
/// to `port`, in the namespace `netns` or in this one.
pub fn established(netns: Option<&str>, port: u16) -> String {
    let filter = format!("( sport = :{port} or dport = :{port} )");
    output_in(netns, &["ss", "-tinH", "state", "established", &filter])
}

/// Bytes received so far on the connections of `port`, both ends summed:
/// a run moving data shows here whichever way it sends and by whatever call.
pub fn tcp_bytes_received(netns: Option<&str>, port: u16) -> u64 {
    established(netns, port)
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("bytes_received:")?.parse::<u64>().ok())
        .sum()
}

/// Runs `f`, and the share of every core's time that was busy meanwhile
/// (`/proc/stat`): other processes' work included, which a test of timing
/// must know of before it reads a slowdown as the network's.
pub fn host_busy_while<T>(f: impl FnOnce() -> T) -> (T, f64) {
    use linerate_probe::cpu::HostTicks;
    let before = HostTicks::now();
    let out = f();
    (out, HostTicks::now().fractions_since(&before).0)
}

/// One of the kernel's UDP counters (`/proc/net/snmp`, e.g. `InDatagrams`)
/// in the namespace `netns` or in this one.
pub fn udp_counter(netns: Option<&str>, name: &str) -> u64 {
    let text = output_in(netns, &["cat", "/proc/net/snmp"]);
    let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next().unwrap_or(""), udp.next().unwrap_or(""));
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Waits until the connections of `port` have received `bytes` more than
/// when called: the run on it is under way, however late a loaded host
/// started it (a fixed sleep could act while it was still in its handshake).
pub fn wait_moving(netns: Option<&str>, port: u16, bytes: u64) {
    let from = tcp_bytes_received(netns, port);
    assert!(
        wait_until(Duration::from_secs(60), || {
            tcp_bytes_received(netns, port) >= from + bytes
        }),
        "{bytes} bytes never went through port {port}"
    );
}

/// Whether a socket listens on TCP `port`, from the kernel's tables, so
/// asking does not connect: an iperf3 server takes any connection as a
/// client, and reopens its listening socket once that client is gone.
#[allow(dead_code)]
pub fn listening(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|table| {
        std::fs::read_to_string(table).is_ok_and(|t| {
            t.lines().skip(1).any(|row| {
                let mut cols = row.split_whitespace();
                let addr = cols.nth(1).unwrap_or("");
                // st: 0A is LISTEN.
                addr.ends_with(&local) && cols.nth(1) == Some("0A")
            })
        })
    })
}

/// A JSON document a run wrote to `path`.
#[allow(dead_code)]
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("a result")).expect("JSON")
}

/// The PIDs of `pid`'s children, whichever of its threads started them
/// (a thread that entered a namespace starts a lab's agents).
#[allow(dead_code)]
pub fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A process's command line, its arguments joined by spaces.
#[allow(dead_code)]
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The child of `pid` running as rank `rank` of a many-host run.
#[allow(dead_code)]
pub fn agent_of_rank(pid: u32, rank: u32) -> Option<u32> {
    children(pid)
        .into_iter()
        .find(|&c| cmdline(c).contains(&format!("--rank {rank} ")))
}

/// A non-blocking TCP connection from `source` (any port) to `to`, or None.
pub fn connect_from(
    source: std::net::IpAddr,
    to: std::net::SocketAddr,
) -> Option<std::net::TcpStream> {
    use rustix::net::{AddressFamily, SocketType, bind, connect, socket};
    let family = if source.is_ipv6() {
        AddressFamily::INET6
    } else {
        AddressFamily::INET
    };
    let fd = socket(family, SocketType::STREAM, None).ok()?;
    bind(&fd, &std::net::SocketAddr::new(source, 0)).ok()?;
    connect(&fd, &to).ok()?;
    let s = std::net::TcpStream::from(fd);
    s.set_nonblocking(true).ok()?;
    Some(s)
}

/// Whether the server has closed or reset non-blocking `s` (what it sent
/// meanwhile is read and dropped).
pub fn closed(s: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() != std::io::ErrorKind::WouldBlock,
        }
    }
}

/// A headless browser found on this machine; in CI one must be (`.ci/run`
/// installs chromium).
#[allow(dead_code)]
pub fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is not installed; .ci/run installs it");
    }
    found
}

#[allow(dead_code)]
pub const HEADLESS: [&str; 4] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
];

/// Takes a screenshot of the top of page `html` with `browser` and checks
/// it holds drawn figures; kept as `name`, with the page, in
/// `$LINERATE_SCREENSHOTS` when that is set, to be looked at.
#[allow(dead_code)]
pub fn screenshot(browser: &str, html: &std::path::Path, name: &str) {
    let png = screenshot_url(browser, &format!("file://{}", html.display()), "1100,3000");
    // A blank page of this size compresses to a few KiB; figures do not.
    assert!(png.len() > 50_000, "screenshot only {} bytes", png.len());
    if let Some(keep) = std::env::var_os("LINERATE_SCREENSHOTS") {
        let keep = std::path::Path::new(&keep);
        let _ = std::fs::create_dir_all(keep);
        let _ = std::fs::write(keep.join(name), &png);
        // The page itself (self-contained), to be looked at whole.
        let _ = std::fs::copy(html, keep.join(name).with_extension("html"));
    }
}

/// The PNG `browser` draws of the top of `url` in a window of `size`
/// (`WIDTH,HEIGHT`).
#[allow(dead_code)]
pub fn screenshot_url(browser: &str, url: &str, size: &str) -> Vec<u8> {
    let dir = tree::TempDir::new("shot");
    let shot = dir.join("shot.png");
    let s = Command::new(browser)
        .args(HEADLESS)
        .arg(format!("--window-size={size}"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(url)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    png
}

/// Fails the test when a run's verdict disagrees with its own run: a rate
/// in its sentence that is none of the summary's figures, or a fault named
/// below its own threshold (linerate_verdict::audit).
pub fn assert_verdict_agrees(doc: &serde_json::Value) {
    let summary: linerate_result::Summary = serde_json::from_value(doc["summary"].clone())
        .unwrap_or_else(|e| panic!("a summary with a verdict ({e}): {doc}"));
    let streams = doc["parameters"]["streams"].as_u64().unwrap_or(1) as u32;
    let wrong = linerate_verdict::audit::audit(&summary, streams);
    assert!(
        wrong.is_empty(),
        "{}\n  {}",
        wrong.join("\n"),
        summary.verdict.sentence
    );
}
