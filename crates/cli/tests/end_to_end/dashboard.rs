//! The dashboard from the sides that read it: a browser (headless
//! Chromium reads each cell's state from the DOM and keeps a screenshot),
//! promtool's format check, and a real Prometheus server that scrapes
//! `/metrics` with the guide's scrape config and fires the guide's alert
//! rule.
//!
//! The archive is three DTNs' history: each ordered pair's bench series of
//! 14 runs a minute apart, made from one real bench's document with its
//! hosts, start and rate set; the last three of dtn1 -> dtn3 carry under
//! half the others' rate. And a latency series that stopped two days ago.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::tree::TempDir;
use common::{Guard, Server, linerate_cmd, text};

const HOSTS: [&str; 3] = ["dtn1", "dtn2", "dtn3"];
/// The pair whose last runs are slow.
const SLOWED: (&str, &str) = ("dtn1", "dtn3");
const RUNS: usize = 14;
const SLOW_RUNS: usize = 3;

fn run_json(data: &Path, args: &[&str]) -> serde_json::Value {
    let out = linerate_cmd()
        .env("XDG_DATA_HOME", data)
        .env_remove("LINERATE_ARCHIVE")
        .args(args)
        .args(["--no-archive", "--json", "-"])
        .output()
        .expect("run linerate");
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).expect("a result document")
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// `template` as a run from `from` to `to` that started at `at` and
/// carried `bps` (or took `rtt_us` for its median round trip).
fn run_of(template: &serde_json::Value, from: &str, to: &str, at: f64) -> serde_json::Value {
    let mut doc = template.clone();
    doc["hosts"]["client"]["hostname"] = from.into();
    doc["hosts"]["server"]["hostname"] = to.into();
    doc["started_at"] = at.into();
    doc
}

/// Writes the three DTNs' history into `dir` as result documents.
fn three_dtns(dir: &Path, bench: &serde_json::Value, latency: &serde_json::Value) {
    std::fs::create_dir_all(dir).unwrap();
    let end = now() - 30.0;
    let mut n = 0;
    let mut write = |doc: serde_json::Value| {
        n += 1;
        let path = dir.join(format!("run-{n:03}.json"));
        std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
    };
    let seconds = bench["summary"]["seconds"].as_f64().unwrap();
    for (p, from) in HOSTS.iter().enumerate() {
        for (q, to) in HOSTS.iter().enumerate().filter(|(_, to)| to != &from) {
            for i in 0..RUNS {
                // 9.4 Gbit/s give or take 2 %, as a quiet path varies.
                let wiggle = ((i * 7 + p * 3 + q) % 5) as f64 - 2.0;
                let mut bps = 9.4e9 * (1.0 + 0.01 * wiggle);
                if (*from, *to) == SLOWED && i >= RUNS - SLOW_RUNS {
                    bps = 4.1e9;
                }
                let at = end - 60.0 * (RUNS - 1 - i) as f64;
                let mut doc = run_of(bench, from, to, at);
                doc["summary"]["bits_per_second"] = bps.into();
                doc["summary"]["bytes"] = ((bps * seconds / 8.0) as u64).into();
                write(doc);
            }
        }
    }
    // Hourly round trips from dtn3 to dtn1 until two days ago: stale.
    for i in 0..RUNS {
        let at = end - 2.0 * 86_400.0 - 3600.0 * (RUNS - 1 - i) as f64;
        write(run_of(latency, "dtn3", "dtn1", at));
    }
}

/// A dashboard of `archive` on a loopback port: the process and the
/// address it says it serves on.
fn start_dashboard(archive: &Path) -> (Guard, String, BufReader<std::process::ChildStderr>) {
    let mut child = linerate_cmd()
        .args(["dashboard", "--archive", archive.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the dashboard");
    let mut said = BufReader::new(child.stderr.take().unwrap());
    let guard = Guard(child);
    let mut line = String::new();
    said.read_line(&mut line).unwrap();
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (guard, address, said)
}

/// `METHOD path` over HTTP/1.0: the status and the body.
fn request(address: &str, method: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(address).expect("connect to the dashboard");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {address}\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

/// Each grid cell of the DOM: (kind, source, destination, state).
fn cells(dom: &str) -> Vec<(String, String, String, String)> {
    let attr = |tag: &str, name: &str| {
        tag.split(&format!("{name}=\""))
            .nth(1)
            .and_then(|v| v.split('"').next())
            .map(str::to_string)
    };
    let mut found = Vec::new();
    for table in dom.split("<table class=\"grid\"").skip(1) {
        let kind = attr(table, "data-kind").unwrap_or_default();
        let table = table.split("</table>").next().unwrap_or_default();
        for td in table.split("<td ").skip(1) {
            let tag = td.split('>').next().unwrap_or_default();
            if let (Some(src), Some(dst), Some(state)) = (
                attr(tag, "data-source"),
                attr(tag, "data-destination"),
                attr(tag, "data-state"),
            ) {
                found.push((kind.clone(), src, dst, state));
            }
        }
    }
    found
}

#[test]
fn the_grid_shows_the_slowed_path_red_and_prometheus_alerts_on_it_alone() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("dashboard");
    let data = base.join("data");
    let srv = Server::start();
    let bench = run_json(&data, &["bench", &srv.addr(), "-t", "1"]);
    let latency = run_json(&data, &["latency", &srv.addr(), "-t", "1"]);
    drop(srv);
    three_dtns(&base.join("runs"), &bench, &latency);
    let archive = base.join("site.db");
    let out = linerate_cmd()
        .args(["archive", "import"])
        .arg(base.join("runs"))
        .args(["--archive", archive.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    let (mut dashboard, address, mut said) = start_dashboard(&archive);
    let url = format!("http://{address}/");
    browser_sees_one_red_cell(&url);
    pages_answer(&address);
    let (status, metrics) = request(&address, "GET", "/metrics");
    assert_eq!(status, 200, "{metrics}");
    promtool_accepts(&metrics);
    prometheus_alerts_on_the_slowed_pair(base.path(), &address);

    // SIGTERM ends it as Ctrl-C does.
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(dashboard.0.id() as i32, libc::SIGTERM) };
    let status = dashboard.0.wait().unwrap();
    let mut rest = String::new();
    let _ = said.read_to_string(&mut rest);
    assert!(status.success(), "{status:?}: {rest}");
    assert!(rest.contains("dashboard stopped"), "{rest}");
}

/// The pages name hosts and paths: an address other hosts reach is a
/// usage error until the user says `--allow-remote`.
#[test]
fn a_dashboard_for_other_hosts_needs_allow_remote() {
    let out = linerate_cmd()
        .args(["dashboard", "--archive", "none", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
}

/// Chromium's DOM of the grid: dtn1 -> dtn3 red, the other five pairs
/// green, the stopped latency series grey; the screenshot is kept in
/// `$LINERATE_SCREENSHOTS`, else in the target's scratch folder.
fn browser_sees_one_red_cell(url: &str) {
    let Some(browser) = common::chromium() else {
        eprintln!("skipped the browser's part: no chromium");
        return;
    };
    let out = Command::new(browser)
        .args(common::HEADLESS)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let dom = String::from_utf8_lossy(&out.stdout);
    let cells = cells(&dom);
    let bench: Vec<_> = cells.iter().filter(|c| c.0 == "bench").collect();
    assert_eq!(bench.len(), 6, "{cells:?}");
    for (_, src, dst, state) in &bench {
        let want = if (src.as_str(), dst.as_str()) == SLOWED {
            "regression"
        } else {
            "normal"
        };
        assert_eq!(state, want, "{src} -> {dst}: {cells:?}");
    }
    let latency: Vec<_> = cells.iter().filter(|c| c.0 == "latency").collect();
    assert_eq!(latency.len(), 1, "{cells:?}");
    assert_eq!(latency[0].3, "stale", "{cells:?}");
    let png = common::screenshot_url(browser, url, "1100,900");
    let keep = std::env::var_os("LINERATE_SCREENSHOTS")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    let _ = std::fs::create_dir_all(&keep);
    std::fs::write(keep.join("dashboard-grid.png"), png).unwrap();
}

/// The series page draws the series with its last verdict; the regressions
/// page names the slowed pair as holding now; the dashboard changes nothing.
fn pages_answer(address: &str) {
    let (status, grid) = request(address, "GET", "/");
    assert_eq!(status, 200, "{grid}");
    let slowed = grid
        .split("data-source=\"dtn1\" data-destination=\"dtn3\"")
        .nth(1)
        .and_then(|rest| rest.split("data-series=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .expect("the slowed pair's series in the grid")
        .to_string();
    let (status, page) = request(address, "GET", &format!("/series/{slowed}"));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<svg"), "{page}");
    assert!(page.contains("Latest verdict"), "{page}");
    assert!(page.contains("data-state=\"regression\""), "{page}");
    let (status, page) = request(address, "GET", "/regressions");
    assert_eq!(status, 200, "{page}");
    let holding = page
        .split("<h2>Holding now</h2>")
        .nth(1)
        .and_then(|rest| rest.split("<h2>").next())
        .unwrap_or_default();
    assert!(
        holding.contains(&format!("data-series=\"{slowed}\"")),
        "{page}"
    );
    assert_eq!(holding.matches("<tr data-series").count(), 1, "{page}");
    assert_eq!(request(address, "GET", "/series/nothing").0, 404);
    assert_eq!(request(address, "POST", "/").0, 405);
}

/// promtool, Prometheus's own checker, finds the text well formed and
/// by its conventions.
fn promtool_accepts(metrics: &str) {
    let Some(promtool) = prometheus_tool("promtool") else {
        return;
    };
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}\n{metrics}", text(&out));
}

/// A Prometheus server scrapes the dashboard every second with the
/// guide's scrape config and evaluates the guide's alert rule: the
/// regression flag is 1 for the slowed pair only, and its alert fires.
fn prometheus_alerts_on_the_slowed_pair(base: &Path, address: &str) {
    prometheus_flags(base, address, "bench", &[SLOWED], 7);
}

/// As [`prometheus_alerts_on_the_slowed_pair`]: of the `series` series,
/// those of `kind` between the pairs in `slowed` alone are flagged, and
/// their alerts fire.
fn prometheus_flags(
    base: &Path,
    address: &str,
    kind: &str,
    slowed: &[(&str, &str)],
    series: usize,
) {
    let Some(prometheus) = prometheus_tool("prometheus") else {
        return;
    };
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    let dir = base.join("prometheus");
    std::fs::create_dir_all(&dir).unwrap();
    let config = std::fs::read_to_string(docs.join("prometheus.yml"))
        .unwrap()
        .replace("1m", "1s")
        .replace("127.0.0.1:8080", address);
    std::fs::write(dir.join("prometheus.yml"), config).unwrap();
    std::fs::copy(
        docs.join("linerate-alerts.yml"),
        dir.join("linerate-alerts.yml"),
    )
    .unwrap();
    let port = common::quiet_port();
    let web = format!("127.0.0.1:{port}");
    let server = Guard(
        Command::new(prometheus)
            .arg(format!(
                "--config.file={}",
                dir.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let ask = |path: &str| -> Option<serde_json::Value> {
        TcpStream::connect(&web).ok()?;
        let (status, body) = request(&web, "GET", path);
        (status == 200)
            .then(|| serde_json::from_str(&body).ok())
            .flatten()
    };
    let pair_of = |labels: &serde_json::Value| {
        (
            labels["source"].as_str().unwrap_or_default().to_string(),
            labels["destination"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    let mut firing = Vec::new();
    let fired = common::wait_until(Duration::from_secs(60), || {
        firing = ask("/api/v1/alerts")
            .and_then(|a| a["data"]["alerts"].as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a["labels"]["alertname"] == "LinerateRegression")
            .filter(|a| a["state"] == "firing")
            .collect();
        firing.len() >= slowed.len()
    });
    assert!(
        fired,
        "not every LinerateRegression alert fired: {firing:?}"
    );
    let mut alerted: Vec<(String, String)> = firing.iter().map(|a| pair_of(&a["labels"])).collect();
    alerted.sort();
    let mut want: Vec<(String, String)> = slowed
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    want.sort();
    assert_eq!(alerted, want, "{firing:?}");
    let flags = ask("/api/v1/query?query=linerate_regression").expect("a query's answer");
    let flags = flags["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(flags.len(), series, "{flags:?}");
    for f in &flags {
        let pair = pair_of(&f["metric"]);
        let flagged = f["metric"]["kind"] == kind && want.contains(&pair);
        assert_eq!(f["value"][1], if flagged { "1" } else { "0" }, "{f}");
    }
    drop(server);
}

/// The Prometheus program `name`, which CI installs (Debian's prometheus
/// package); elsewhere its part is skipped, said.
fn prometheus_tool(name: &str) -> Option<&'static str> {
    let path: &'static str = match name {
        "promtool" => "promtool",
        _ => "prometheus",
    };
    let found = Command::new(path)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{name} is not installed; .ci/run installs Debian's prometheus"
        );
        eprintln!("skipped {name}'s part: not installed");
    }
    found.then_some(path)
}

/// A schedule runs a mesh of a 3-host lab over and over into an archive
/// the dashboard reads. Once the series have their normal, `lab set`
/// slows the router's link into h3: within three runs the grid shows the
/// two pairs whose path crosses it (h1 -> h3, h2 -> h3) red and the four
/// others green (Chromium's DOM, screenshot kept), and Prometheus flags
/// those two series alone.
#[test]
fn a_mesh_schedule_turns_the_cells_of_a_slowed_link_red() {
    if !common::require_root("a_mesh_schedule_turns_the_cells_of_a_slowed_link_red") {
        return;
    }
    let _traffic = common::beside_other_traffic();
    // 100 Mbit/s links: a rate a busy 2-core host still carries whole.
    let lab = common::testlab::TestLab::up(
        "dsh",
        &[
            "--hosts",
            "3",
            "--router",
            "--backend",
            "veth",
            "--rate",
            "100M",
        ],
    );
    let base = TempDir::new("dashboard-mesh");
    let archive = base.join("site.db");
    let file = base.join("labmesh.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"labmesh\"\n\n[[test]]\nname = \"mesh\"\n\
             command = \"mesh --lab {} -t 0.3\"\nevery = \"9s\"\n",
            lab.name
        ),
    )
    .unwrap();
    let (sched, rx) = crate::schedule::start(&file, &archive, &base.join("data"));
    let mut seen: Vec<String> = Vec::new();
    // Waits for the next run to end, well.
    let next_run = |seen: &mut Vec<String>| {
        let line = crate::schedule::until(&rx, seen, Duration::from_secs(90), |l| {
            l.starts_with("mesh: ended")
        })
        .unwrap_or_else(|| panic!("no mesh run ended: {seen:#?}"));
        assert!(line.contains("exit status: 0"), "{seen:#?}");
    };
    // The archive's rule needs 10 runs for a series' normal.
    for _ in 0..10 {
        next_run(&mut seen);
    }
    let (_dashboard, address, _said) = start_dashboard(&archive);
    let states = |address: &str| cells(&request(address, "GET", "/").1);
    let before = states(&address);
    assert_eq!(before.len(), 6, "{before:?}");
    assert!(
        before.iter().all(|c| c.0 == "mesh" && c.3 == "normal"),
        "{before:?}"
    );
    lab.set(&["--host", "h3", "--rate", "25M"]);
    let slowed = [("h1", "h3"), ("h2", "h3")];
    let want = |c: &(String, String, String, String)| {
        if slowed.contains(&(c.1.as_str(), c.2.as_str())) {
            "regression"
        } else {
            "normal"
        }
    };
    let mut after = 0;
    loop {
        next_run(&mut seen);
        after += 1;
        let now = states(&address);
        if now.iter().all(|c| c.3 == want(c)) {
            break;
        }
        assert!(after < 3, "3 runs after the link slowed: {now:?}");
    }
    let Some(browser) = common::chromium() else {
        return;
    };
    let url = format!("http://{address}/");
    let out = Command::new(browser)
        .args(common::HEADLESS)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let dom = cells(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(dom.len(), 6, "{dom:?}");
    for c in &dom {
        assert_eq!(c.3, want(c), "{dom:?}");
    }
    let png = common::screenshot_url(browser, &url, "1100,700");
    let keep = std::env::var_os("LINERATE_SCREENSHOTS")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    let _ = std::fs::create_dir_all(&keep);
    std::fs::write(keep.join("dashboard-mesh.png"), png).unwrap();
    let (status, metrics) = request(&address, "GET", "/metrics");
    assert_eq!(status, 200);
    promtool_accepts(&metrics);
    prometheus_flags(base.path(), &address, "mesh", &slowed, 6);
    drop(sched);
}
