//! The archive from the user's side: runs recorded as they end, read back
//! by `linerate history`; a result the archive cannot take waits in the
//! spool and arrives with the next run; a file that is not an archive is
//! moved aside, never written over.

use crate::common;

use std::path::Path;

use common::tree::TempDir;
use common::{Server, linerate_cmd, text};

/// `linerate ARGS` with linerate's data folder in `data`.
fn run_in(data: &Path, args: &[&str]) -> std::process::Output {
    linerate_cmd()
        .env("XDG_DATA_HOME", data)
        .env_remove("LINERATE_ARCHIVE")
        .args(args)
        .output()
        .expect("run linerate")
}

/// A 1-second bench to `addr` recorded into `archive`; it succeeded.
fn bench_into(data: &Path, addr: &str, archive: &Path) -> std::process::Output {
    bench_into_url(data, addr, archive.to_str().expect("a UTF-8 path"))
}

fn history(data: &Path, archive: &str) -> serde_json::Value {
    history_over(data, archive, "30d")
}

/// `archive import PATH --archive ARCHIVE`; it succeeded.
fn import_into(data: &Path, path: &Path, archive: &str) -> std::process::Output {
    let path = path.to_str().expect("a UTF-8 path");
    let out = run_in(data, &["archive", "import", path, "--archive", archive]);
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// `history --json` of the series with a run in the last `since`.
fn history_over(data: &Path, archive: &str, since: &str) -> serde_json::Value {
    let out = run_in(
        data,
        &[
            "history",
            "--archive",
            archive,
            "--since",
            since,
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).expect("history JSON")
}

#[test]
fn runs_are_recorded_as_they_end_and_history_reads_them_back() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("history");
    let data = base.join("data");
    let srv = Server::start();
    let addr = srv.addr();
    let mut rates = Vec::new();
    for _ in 0..3 {
        let out = run_in(&data, &["bench", &addr, "-t", "1", "--json", "-"]);
        assert!(out.status.success(), "{}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        rates.push(doc["summary"]["bits_per_second"].as_f64().unwrap());
    }
    // Not recorded: --no-archive.
    let out = run_in(&data, &["bench", &addr, "-t", "1", "--no-archive"]);
    assert!(out.status.success(), "{}", text(&out));
    // The default archive is in the data folder.
    let default = data.join("linerate/archive.db");
    assert!(default.exists(), "no archive at {}", default.display());
    let h = history(&data, default.to_str().unwrap());
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{h}");
    let s = &series[0];
    assert_eq!(s["kind"], "bench");
    assert_eq!(s["runs"], 3, "{h}");
    assert_eq!(s["state"], "too_few_runs", "{h}");
    assert_eq!(s["latest"].as_f64().unwrap(), rates[2]);
    assert_eq!(s["settings"]["streams"], 1, "{h}");
    // One series, run by run, by the start of its id.
    let id = s["id"].as_str().unwrap();
    let out = run_in(
        &data,
        &[
            "history",
            "--archive",
            default.to_str().unwrap(),
            "--series",
            &id[..6],
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let one: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let values: Vec<f64> = one["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_f64().unwrap())
        .collect();
    assert_eq!(values, rates);
    // Other kinds are other series: a latency run, and a send, whose path
    // is what it sent and where.
    let out = run_in(&data, &["latency", &addr, "-t", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    let dst = base.join("dst");
    std::fs::create_dir_all(&dst).unwrap();
    let daemon = Server::with_root(&dst);
    let target = format!("{}:/in", daemon.addr());
    let out = run_in(&data, &["send", "--from-memory", "8M", "-q", &target]);
    assert!(out.status.success(), "{}", text(&out));
    let h = history(&data, default.to_str().unwrap());
    let series = h["series"].as_array().unwrap();
    let kinds: Vec<&str> = series.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 3, "{h}");
    assert!(kinds.contains(&"latency"), "{h}");
    let sent = series
        .iter()
        .find(|s| s["kind"] == "transfer")
        .expect("the send's series");
    assert_eq!(sent["path"], format!("8M {target}"), "{h}");
}

#[test]
fn a_result_the_archive_cannot_take_waits_and_a_corrupt_archive_is_moved_aside() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("spool");
    let data = base.join("data");
    let srv = Server::start();
    let addr = srv.addr();
    // An archive under a regular file cannot be made: the run still
    // succeeds and its result waits in the spool.
    let blocker = base.join("not-a-folder");
    std::fs::write(&blocker, b"a file").unwrap();
    let unreachable = blocker.join("archive.db");
    let out = bench_into(&data, &addr, &unreachable);
    assert!(text(&out).contains("kept in"), "{}", text(&out));
    let spool = data.join("linerate/spool");
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 1);
    // A file that is not an archive: moved aside, said so, and the run's
    // result and the spooled one both recorded in a new archive.
    let archive = base.join("archive.db");
    std::fs::write(&archive, vec![b'x'; 8192]).unwrap();
    let out = bench_into(&data, &addr, &archive);
    let said = text(&out);
    assert!(
        said.contains("was not an SQLite archive; moved to"),
        "{said}"
    );
    assert!(said.contains("1 result(s) waiting"), "{said}");
    let aside: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("archive.db.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "the corrupt file kept beside");
    assert_eq!(std::fs::read(aside[0].path()).unwrap(), vec![b'x'; 8192]);
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0);
    let h = history(&data, archive.to_str().unwrap());
    assert_eq!(h["series"][0]["runs"], 2, "{h}");
    // A kind of archive this build has not is a bad flag, before any run.
    let out = run_in(
        &data,
        &["bench", &addr, "--archive", "ftp://x/y", "-t", "1"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--archive"), "{}", text(&out));
    // A site archive's URL that does not parse: a bad flag, its password
    // never repeated.
    let out = run_in(
        &data,
        &[
            "bench",
            &addr,
            "--archive",
            "postgres://perf:hunter2@db:notaport/x",
            "-t",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not a PostgreSQL URL"),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("hunter2"), "{}", text(&out));
    // A site archive that is not there: the run succeeds, its result
    // waits in the spool, the password is not printed.
    let out = bench_into_url(&data, &addr, "postgres://perf:hunter2@127.0.0.1:1/linerate");
    assert!(text(&out).contains("kept in"), "{}", text(&out));
    assert!(
        text(&out).contains("postgres://perf@127.0.0.1:1/linerate"),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("hunter2"), "{}", text(&out));
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 1);
}

/// A 1-second bench to `addr` recorded into the archive at `url`; it
/// succeeded.
fn bench_into_url(data: &Path, addr: &str, url: &str) -> std::process::Output {
    let out = run_in(data, &["bench", addr, "-t", "1", "--archive", url]);
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// Older results and iperf3's come in as their own series, once however
/// often imported, and go out again as they came in.
#[test]
fn imported_results_keep_their_tool_and_export_gives_them_back() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("import");
    let data = base.join("data");
    let results = base.join("results");
    std::fs::create_dir_all(results.join("older")).unwrap();
    let srv = Server::start();
    let bench = results.join("older/bench.json");
    let out = run_in(
        &data,
        &[
            "bench",
            &srv.addr(),
            "-t",
            "1",
            "--no-archive",
            "--json",
            bench.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let (_iperf3, port) = crate::habits::iperf3_server();
    let out = std::process::Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
        .output()
        .expect("iperf3");
    assert!(out.status.success(), "{}", text(&out));
    std::fs::write(results.join("iperf3.json"), &out.stdout).unwrap();
    // A newer iperf3 (3.13 on write -J differently), against the same
    // server: the same series.
    let newer = newer_iperf3();
    if let Some(newer) = &newer {
        let out = std::process::Command::new(newer)
            .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
            .output()
            .expect("the newer iperf3");
        assert!(out.status.success(), "{}", text(&out));
        std::fs::write(results.join("iperf3-newer.json"), &out.stdout).unwrap();
    }
    let iperf3_runs = 1 + usize::from(newer.is_some());
    std::fs::write(results.join("notes.json"), b"{\"note\": 1}").unwrap();
    let archive = base.join("site.db");
    let archive = archive.to_str().unwrap();
    for _ in 0..2 {
        let out = import_into(&data, &results, archive);
        assert!(
            text(&out).contains(&format!("Recorded {} result(s)", 1 + iperf3_runs)),
            "{}",
            text(&out)
        );
        assert!(text(&out).contains("notes.json"), "{}", text(&out));
    }
    let h = history(&data, archive);
    let series = h["series"].as_array().unwrap();
    let mut tools: Vec<&str> = series.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    tools.sort();
    assert_eq!(tools, ["iperf3", "linerate"], "{h}");
    let runs = |tool: &str| series.iter().find(|s| s["tool"] == tool).unwrap()["runs"].clone();
    assert_eq!(runs("linerate"), 1, "{h}");
    assert_eq!(runs("iperf3"), iperf3_runs, "{h}");
    let exported = base.join("all.jsonl");
    let out = run_in(
        &data,
        &[
            "archive",
            "export",
            "--archive",
            archive,
            "-o",
            exported.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&exported)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1 + iperf3_runs);
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bench).unwrap()).unwrap();
    assert!(
        lines.contains(&original),
        "the bench document came back whole"
    );
    the_repos_own_results_come_in(&data, &base.join("repo.db"));
}

/// The repository's own `bench/results`: every linerate result document
/// there is recorded (the benchmark scripts' other JSON is skipped, named),
/// and history lists their series, of their kinds.
fn the_repos_own_results_come_in(data: &Path, archive: &Path) {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/results");
    let mut kinds = std::collections::BTreeSet::new();
    let mut documents = 0;
    for file in std::fs::read_dir(&results).unwrap() {
        let path = file.unwrap().path();
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&path).unwrap())
        else {
            continue;
        };
        if doc["schema"] == "linerate.result/1" {
            documents += 1;
            kinds.insert(doc["kind"].as_str().unwrap().to_string());
        }
    }
    assert!(
        documents > 0,
        "no result documents in {}",
        results.display()
    );
    let archive = archive.to_str().unwrap();
    let out = import_into(data, &results, archive);
    assert!(
        text(&out).contains(&format!("Recorded {documents} result(s)")),
        "{}",
        text(&out)
    );
    let h = history_over(data, archive, "100000d");
    let series = h["series"].as_array().unwrap();
    assert!(series.len() >= kinds.len(), "{h}");
    for s in series {
        assert_eq!(s["tool"], "linerate", "{s}");
        assert!(
            kinds.contains(s["kind"].as_str().unwrap()),
            "{s}: {kinds:?}"
        );
    }
}

/// A newer iperf3 than Debian 12's, as `.ci/newer_iperf3.sh` fetches it
/// into `target/newer-iperf3` (CI always has it); its version is 3.13 or
/// later.
fn newer_iperf3() -> Option<std::path::PathBuf> {
    let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/newer-iperf3/iperf3");
    if !at.exists() {
        assert!(
            std::env::var("CI").is_err(),
            "no newer iperf3 at {}: .ci/run fetches it with .ci/newer_iperf3.sh",
            at.display()
        );
        eprintln!("the newer iperf3 is left out: run .ci/newer_iperf3.sh target/newer-iperf3");
        return None;
    }
    let out = std::process::Command::new(&at)
        .arg("--version")
        .output()
        .expect("the newer iperf3's version");
    let version = String::from_utf8_lossy(&out.stdout).to_string();
    let minor: u32 = version
        .strip_prefix("iperf 3.")
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("not an iperf3 version: {version}"));
    assert!(minor >= 13, "not newer than 3.12: {version}");
    Some(at)
}

/// Root: 100 benches through a lab path of 200 Mbit/s on a busy host, one
/// after another, each recorded as it ends. At run 60 the path loses 30 %
/// of its rate (`lab set --rate 140M`): the regression is named within 3
/// runs and never in the 59 before; after 5 runs the lower rate is the
/// path's new normal and nothing more is said. At run 80 the path starts
/// losing 1 % of its packets: the regression names the verdict's change.
#[test]
fn a_path_that_loses_30_percent_is_named_within_3_runs_and_a_loss_step_names_the_verdicts_change() {
    if !common::require_root("a_path_that_loses_30_percent_is_named_within_3_runs") {
        return;
    }
    let _alone = common::alone_with_traffic();
    let base = TempDir::new("regression");
    let data = base.join("data");
    let archive = base.join("lab.db");
    let archive = archive.to_str().unwrap();
    let lab = common::testlab::TestLab::up("rgn", &["--rate", "200M", "--rtt", "2ms"]);
    let _server = lab.serve("h2", 5201);
    let h2 = format!("{}:5201", lab.addr("h2", false));
    let _busy = common::BusyCores::start();
    let mut said: Vec<Vec<String>> = Vec::new();
    for run in 0..100 {
        match run {
            60 => lab.set(&["--rate", "140M"]),
            80 => lab.set(&["--loss", "1%"]),
            _ => {}
        }
        let out = linerate_cmd()
            .env("XDG_DATA_HOME", &data)
            .args([
                "lab",
                "exec",
                "--name",
                &lab.name,
                "h1",
                "--",
                common::linerate(),
            ])
            .args([
                "bench",
                &h2,
                "-t",
                "1",
                "--cc",
                "cubic",
                "--archive",
                archive,
            ])
            .output()
            .expect("bench in the lab");
        assert!(out.status.success(), "run {run}: {}", text(&out));
        said.push(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.starts_with("Regression") || l.starts_with("Improvement"))
                .map(str::to_string)
                .collect(),
        );
    }
    let named = |runs: std::ops::Range<usize>| -> Vec<(usize, &String)> {
        runs.flat_map(|r| said[r].iter().map(move |l| (r, l)))
            .collect()
    };
    for (run, line) in named(0..100) {
        eprintln!("run {run}: {line}");
    }
    assert_eq!(named(0..60), [] as [(usize, &String); 0], "before the drop");
    let drop = named(60..80);
    let (first, line) = drop.first().expect("the drop was named");
    assert!((60..63).contains(first), "named at run {first}: {line}");
    assert!(line.starts_with("Regression: "), "{line}");
    assert!(line.contains("(bench) measured"), "{line}");
    // A new normal after five runs: nothing said from then on.
    assert!(drop.iter().all(|(r, _)| *r < 65), "{drop:?}");
    let loss = named(80..100);
    let (first, line) = loss.first().expect("the loss was named");
    assert!((80..83).contains(first), "named at run {first}: {line}");
    assert!(
        line.contains("the verdict changed from path_full to network"),
        "{line}"
    );
    // The archive holds the one series, all 100 runs.
    let h = history(&data, archive);
    let series = h["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{h}");
    assert_eq!(series[0]["runs"], 100, "{h}");
}

/// An iperf3 `-J` run (the fields import reads) from dtn1 to 10.0.0.2 at
/// `bps`, started `hours` after a fixed day.
fn iperf3_run(hours: u32, bps: f64) -> serde_json::Value {
    let at = 1_796_000_000 + u64::from(hours) * 3600;
    serde_json::json!({
        "start": {
            "version": "iperf 3.12",
            "system_info": "Linux dtn1 6.1.0 #1 SMP x86_64",
            "timestamp": {"timesecs": at},
            "connected": [{"remote_host": "10.0.0.2", "remote_port": 5201}],
            "test_start": {"protocol": "TCP", "num_streams": 1, "reverse": 0}
        },
        "end": {"sum_received": {"bits_per_second": bps}}
    })
}

/// `report --archive` draws a series over time with its band and the run
/// the rule named; `archive acknowledge` makes the change its normal, and
/// history then says so.
#[test]
fn report_draws_a_series_with_its_band_and_an_acknowledged_change_is_normal() {
    let base = TempDir::new("report-archive");
    let data = base.join("data");
    let runs = base.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for h in 0..22u32 {
        let bps = if h < 20 {
            9.4e9 + f64::from(h % 3) * 5e7
        } else {
            6.1e9
        };
        std::fs::write(
            runs.join(format!("run-{h:02}.json")),
            iperf3_run(h, bps).to_string(),
        )
        .unwrap();
    }
    let archive = base.join("site.db");
    let archive = archive.to_str().unwrap();
    import_into(&data, &runs, archive);
    let state = |data: &Path| {
        let h = history_over(data, archive, "100000d");
        assert_eq!(h["series"].as_array().unwrap().len(), 1, "{h}");
        (h["series"][0]["state"].as_str().unwrap().to_string(), h)
    };
    assert_eq!(state(&data).0, "regression");
    // The page: one figure, drawn, its CSV run by run.
    let page = base.join("history.html");
    let csv = base.join("csv");
    let out = run_in(
        &data,
        &[
            "report",
            "--archive",
            archive,
            "--since",
            "100000d",
            "-o",
            page.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let figures = common::figures(&html);
    assert_eq!(figures.len(), 1, "{html}");
    assert_eq!(figures[0].0, "history");
    common::assert_drawn("history", &figures[0].1);
    assert!(
        figures[0].1.contains("regression named"),
        "the legend names it"
    );
    let rows: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .flat_map(|t| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>())
        .collect();
    assert_eq!(rows.len(), 22);
    let said: Vec<&str> = rows.iter().map(|r| r.rsplit(',').next().unwrap()).collect();
    assert_eq!(said[..10], ["normal"; 10], "too few runs, then inside");
    assert!(said[10..20].iter().all(|s| *s == "normal"), "{said:?}");
    assert_eq!(said[20..], ["outside", "regression"], "{said:?}");
    if let Some(browser) = common::chromium() {
        common::screenshot(browser, &page, "history-report.png");
    }
    // Acknowledged: the lower rate is the series' level now.
    let (_, h) = state(&data);
    let id = h["series"][0]["id"].as_str().unwrap().to_string();
    let out = run_in(
        &data,
        &["archive", "acknowledge", &id[..8], "--archive", archive],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("dtn1 -> 10.0.0.2 (bench)"),
        "{}",
        text(&out)
    );
    assert_eq!(state(&data).0, "too_few_runs");
    // Nothing left to acknowledge: said so, and a failure.
    let out = run_in(
        &data,
        &["archive", "acknowledge", &id, "--archive", archive],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("no change to acknowledge"),
        "{}",
        text(&out)
    );
}
