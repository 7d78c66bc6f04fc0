//! What users of iperf3 type, and what they expect back: the real binary
//! against a real server (or a real iperf3) on loopback.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Guard, Server, alone_with_traffic, bench_json, run, text};

#[test]
fn bad_flag_values_exit_2_and_name_the_flag() {
    let _traffic = common::beside_other_traffic();
    for (args, named) in [
        (vec!["bench", "127.0.0.1:1", "-l", "4X"], "--len"),
        (
            vec!["bench", "127.0.0.1:1", "--omit", "20", "-t", "2"],
            "--omit",
        ),
        (vec!["bench", "127.0.0.1:1", "-P", "2000"], "--streams"),
        (vec!["bench", "127.0.0.1:1", "--cc", "no such"], "--cc"),
        (vec!["bench", "127.0.0.1:1", "-p", "7"], "--port"),
        (vec!["bench", "127.0.0.1", "--bogus"], "--bogus"),
        (
            vec![
                "send",
                "--block",
                "1K",
                "--from-memory",
                "1M",
                "127.0.0.1:1:/x",
            ],
            "--block",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(
            !err.contains("_len") && !err.contains("_ms"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn port_and_total_rate_as_iperf_users_give_them() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(
        "127.0.0.1",
        &[
            "-p",
            &srv.port.to_string(),
            "-b",
            "1G",
            "-P",
            "2",
            "-t",
            "2",
        ],
    );
    let bps = doc["summary"]["bits_per_second"].as_f64().unwrap();
    assert!(
        (0.8e9..1.1e9).contains(&bps),
        "1 Gbit/s in total, measured {bps}"
    );
    assert_eq!(
        doc["parameters"]["pacing_rate"], 62_500_000,
        "half of 1G each"
    );
}

#[test]
fn no_interval_of_a_few_milliseconds_ends_a_run() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    for args in [["-t", "2", "-i", "0.5"], ["-t", "1", "-i", "1"]] {
        let doc = bench_json(&srv.addr(), &args);
        let intervals = doc["intervals"].as_array().unwrap();
        assert!(!intervals.is_empty());
        for i in intervals {
            let len = i["end"].as_f64().unwrap() - i["start"].as_f64().unwrap();
            assert!(len >= 0.02, "{args:?}: an interval of {len} s: {i}");
        }
    }
}

/// A real iperf3 server on a loopback port below the ephemeral range,
/// once it listens.
pub(crate) fn iperf3_server() -> (Guard, u16) {
    let port = common::quiet_port();
    let iperf3 = Command::new("iperf3")
        .args(["-s", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iperf3 is installed (.ci/run installs it)");
    let mut guard = Guard(iperf3);
    let listening = common::wait_until(Duration::from_secs(10), || {
        common::listening(port) || matches!(guard.0.try_wait(), Ok(Some(_)))
    });
    if !common::listening(port) {
        let mut said = String::new();
        if let Some(mut err) = guard.0.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut said);
        }
        panic!(
            "iperf3 on port {port} {}: {}",
            if listening { "ended" } else { "never listened" },
            said.trim()
        );
    }
    (guard, port)
}

#[test]
fn an_iperf3_server_is_named_as_such() {
    let _traffic = common::beside_other_traffic();
    let (_iperf3, port) = iperf3_server();
    let out = run(&["bench", &format!("127.0.0.1:{port}"), "-t", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("answers like an iperf3 server"), "{err}");
}

/// `-w` is the receive buffer, as iperf3 users know it: a window below a
/// few segments is not clamped to more (that held loopback to 348 kbit/s),
/// so `-w 4K` gives the receiving socket the buffer iperf3's `-w 4K` gives
/// its own, read back from the kernel at both, and is named the limit.
#[test]
fn a_tiny_window_is_a_buffer_as_iperf3s_w_is() {
    let _alone = alone_with_traffic();
    let (_iperf3, port) = iperf3_server();
    let out = Command::new("iperf3")
        .args([
            "-c",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-w",
            "4K",
            "-t",
            "1",
            "-J",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "iperf3: {}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs = doc["start"]["rcvbuf_actual"].as_u64().unwrap();
    let srv = Server::start();
    let ours_doc = bench_json(&srv.addr(), &["-w", "4K", "-t", "1"]);
    let verdict = &ours_doc["summary"]["verdict"];
    assert_eq!(verdict["limit"], "receiver_window", "{verdict}");
    let receiver = ours_doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["side"] == "receiver")
        .expect("the receiving end's stream");
    assert_eq!(receiver["rcvbuf"].as_u64(), Some(theirs), "{receiver}");
    // The document keeps what was asked under the flag's name, and the
    // sentence says what was asked beside what the kernel made of it.
    assert_eq!(ours_doc["parameters"]["window"].as_u64(), Some(4096));
    let sentence = verdict["sentence"].as_str().unwrap_or("");
    assert!(sentence.contains("(-w asked 4.0 KiB;"), "{sentence}");
}

/// Sends SIGINT to a running `linerate` once `bytes` went through `port`,
/// and waits for it.
fn interrupt_after(child: std::process::Child, port: u16, bytes: u64) -> std::process::Output {
    common::wait_moving(None, port, bytes);
    let asked = std::time::Instant::now();
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait for linerate");
    let took = asked.elapsed();
    assert!(
        took < Duration::from_secs(15),
        "Ctrl-C took {took:?} to end the run"
    );
    out
}

#[test]
fn ctrl_c_on_bench_prints_the_summary_and_writes_the_partial_json() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let json = common::tree::TempDir::new("ctrlc");
    let path = json.path().join("run.json");
    for extra in [&[][..], &["-R"][..]] {
        let child = common::linerate_cmd()
            .args(["bench", &srv.addr(), "-t", "60", "--json"])
            .arg(&path)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = interrupt_after(child, srv.port, 8 << 20);
        assert_eq!(out.status.code(), Some(130), "{extra:?}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("Interrupted"), "{extra:?}: {stdout}");
        assert!(stdout.contains("Verdict:"), "{extra:?}: {stdout}");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["interrupted"], true, "{extra:?}");
        assert!(doc["summary"]["bytes"].as_u64().unwrap() > 0, "{extra:?}");
        common::assert_matches_schema(&doc);
    }
}

#[test]
fn ctrl_c_on_send_says_how_to_resume_and_the_rerun_says_what_it_found() {
    let _traffic = common::beside_other_traffic();
    let base = common::tree::TempDir::new("ctrlc-send");
    let (src, dst) = (base.path().join("src"), base.path().join("dst"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&dst).unwrap();
    common::tree::random_file(&src.join("big.bin"), 256 << 20, 7);
    let srv = Server::with_root(&dst);
    let target = format!("{}:/in", srv.addr());
    let args = ["send", "--rate", "400M", &src.to_string_lossy(), &target];
    let child = common::linerate_cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past a few whole 8 MiB blocks, so the rerun has some to resume:
    // interrupted after 8 MiB (two streams' first blocks still in flight),
    // the rerun once found none and sent everything; 64 MiB of 256 leaves
    // the run about 4 s at 400M.
    let out = interrupt_after(child, srv.port, 64 << 20);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(
        text(&out).contains("rerun the same command to resume"),
        "{}",
        text(&out)
    );
    let again = run(&args);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("Resumed: "), "{}", text(&again));
}

#[test]
fn no_result_and_no_report_carries_a_receivers_token() {
    let _alone = alone_with_traffic();
    let base = common::tree::TempDir::new("token");
    let (dst, results) = (base.path().join("dst"), base.path().join("results"));
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::create_dir_all(&results).unwrap();
    let (_recv, url) = common::oneshot(&dst);
    let token = url
        .split("token=")
        .nth(1)
        .expect("a token in the URL")
        .to_string();
    let json = results.join("send.json");
    let out = run(&[
        "send",
        "--from-memory",
        "20M",
        "-q",
        "--json",
        &json.to_string_lossy(),
        &url,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let page = results.join("report.html");
    let made = run(&[
        "report",
        &results.to_string_lossy(),
        "-o",
        &page.to_string_lossy(),
    ]);
    assert!(made.status.success(), "{}", text(&made));
    for f in [json, page] {
        let body = std::fs::read_to_string(&f).unwrap();
        assert!(!body.contains(&token), "{} holds the token", f.display());
        assert!(body.contains("token=REDACTED"), "{}", f.display());
    }
}

/// A one-shot receiver in the background, logging to `log`; its URL.
fn background_receiver(dst: &std::path::Path, log: &std::path::Path) -> String {
    use std::io::BufRead;
    let mut child = common::linerate_cmd()
        .args([
            "recv",
            &dst.to_string_lossy(),
            "--bind",
            "127.0.0.1",
            "--wait",
            "60s",
        ])
        .arg("--log")
        .arg(log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn recv");
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .expect("URL");
    // The receiver moved to the background; this is the process that started it.
    let _ = child.wait();
    url.trim().to_string()
}

/// The URL given on standard input (`-`) or in a file (`--url-file`) is
/// nowhere in `ps` while the transfer runs, nor in the receiver's log or
/// the result document after it.
#[test]
fn a_url_from_standard_input_or_a_file_stays_out_of_ps_logs_and_results() {
    use std::io::Write;
    let _alone = alone_with_traffic();
    let base = common::tree::TempDir::new("urlsecret");
    for how in ["stdin", "file"] {
        let dst = base.path().join(format!("dst-{how}"));
        std::fs::create_dir_all(&dst).unwrap();
        let log = base.path().join(format!("recv-{how}.log"));
        let url = background_receiver(&dst, &log);
        let token = url.split("token=").nth(1).expect("a token").to_string();
        let json = base.path().join(format!("{how}.json"));
        let url_file = base.path().join("url.txt");
        let mut args = vec![
            "send".to_string(),
            "--from-memory".into(),
            "1G".into(),
            "-q".into(),
        ];
        args.extend(["--json".into(), json.to_string_lossy().to_string()]);
        if how == "stdin" {
            args.push("-".into());
        } else {
            std::fs::write(&url_file, format!("{url}\n")).unwrap();
            args.extend(["--url-file".into(), url_file.to_string_lossy().to_string()]);
        }
        let mut send = common::linerate_cmd()
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn send");
        // What `ps` shows, once the new program has replaced the test's copy.
        let cmdline = (0..100)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                std::fs::read(format!("/proc/{}/cmdline", send.id())).unwrap_or_default()
            })
            .find(|c| String::from_utf8_lossy(c).contains("send"))
            .unwrap_or_default();
        if how == "stdin" {
            writeln!(send.stdin.take().unwrap(), "{url}").unwrap();
        }
        let out = send.wait_with_output().expect("send ran");
        assert!(out.status.success(), "{how}: {}", text(&out));
        assert!(
            !cmdline.is_empty(),
            "{how}: read the command line while it ran"
        );
        let shown = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(&token);
        assert!(!shown(&cmdline), "{how}: the token is in ps");
        assert!(
            !shown(&out.stdout) && !shown(&out.stderr),
            "{how}: the token is printed"
        );
        // The receiver logs its session as the sender finishes.
        let logged = (0..100)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::read(&log).unwrap_or_default()
            })
            .find(|l| String::from_utf8_lossy(l).contains("session"))
            .unwrap_or_default();
        assert!(!logged.is_empty(), "{how}: the receiver logged its session");
        assert!(!shown(&logged), "{how}: the token is in the receiver's log");
        assert!(
            !shown(&std::fs::read(&json).unwrap()),
            "{how}: the token is in the result"
        );
    }
}

#[test]
fn json_stream_is_a_line_per_interval_then_the_result() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let out = run(&[
        "bench",
        &srv.addr(),
        "-t",
        "2",
        "-i",
        "0.5",
        "--json-stream",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.len() >= 4, "intervals, then the result: {stdout}");
    let (last, intervals) = lines.split_last().unwrap();
    assert!(
        intervals.iter().all(|l| l["interval"].is_array()),
        "{stdout}"
    );
    assert_eq!(last["schema"], "linerate.result/1");
    common::assert_matches_schema(last);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Verdict:"));
}

#[test]
fn bidir_rows_say_their_direction_with_a_sum_each_and_omitted_rows_say_so() {
    let _traffic = common::beside_other_traffic();
    let srv = Server::start();
    let out = run(&["bench", &srv.addr(), "--bidir", "-P", "2", "-t", "2"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for tag in ["][TX]", "][RX]"] {
        assert!(
            stdout.lines().filter(|l| l.contains(tag)).count() >= 6,
            "{stdout}"
        );
    }
    for sum in ["[SUM][TX]", "[SUM][RX]"] {
        assert_eq!(stdout.matches(sum).count(), 2, "one per interval: {stdout}");
    }
    // Each direction's total, then their sum, as iperf3 reports them.
    for total in [
        "Sent (client to server):",
        "Received (server to client):",
        "Both ways:",
    ] {
        assert!(stdout.contains(total), "{total}: {stdout}");
    }
    let out = run(&["bench", &srv.addr(), "-t", "2", "--omit", "1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("[  0]")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(
        rows[0].ends_with("(omitted)") && !rows[1].contains("omitted"),
        "{stdout}"
    );
}

/// -R: this end only receives, and the server's senders fill the RTT and
/// cwnd columns, in the rows and in the JSON lines.
#[test]
fn reverse_rows_show_the_servers_tcp_info() {
    let _traffic = common::beside_other_traffic();
    let srv = Server::start();
    let out = run(&["bench", &srv.addr(), "-R", "-t", "3"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("[  0]")).collect();
    assert!(rows.len() >= 3, "{stdout}");
    // Each full interval shows an RTT/var and a cwnd (the last may come
    // before the server's samples of it).
    for row in &rows[..2] {
        let cwnd = row.split(" us ").nth(1).unwrap_or("");
        assert!(cwnd.contains("iB"), "{row}\n{stdout}");
    }
    let out = run(&["bench", &srv.addr(), "-R", "-t", "2", "--json-stream"]);
    assert!(out.status.success(), "{}", text(&out));
    let first: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or(""),
    )
    .expect("a JSON line");
    assert_eq!(first["server"][0]["side"], "sender", "{first}");
    assert!(
        first["server"][0]["tcp"]["rtt_us"].as_u64().is_some(),
        "{first}"
    );
}

#[test]
fn a_daemon_records_its_pid_and_log_and_stops_on_sigterm() {
    let _alone = alone_with_traffic();
    let base = common::tree::TempDir::new("daemon");
    let (pidfile, logfile) = (base.path().join("serve.pid"), base.path().join("serve.log"));
    let port = common::quiet_port().to_string();
    // Started as a script would, its line read by a reader that stops at
    // once: the daemon must not mind the pipe it leaves.
    let mut started = common::linerate_cmd()
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            &port,
            "--daemon",
            "--pidfile",
            &pidfile.to_string_lossy(),
            "--logfile",
            &logfile.to_string_lossy(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn linerate serve -D");
    let head = head_1(&mut started);
    assert!(started.wait().unwrap().success());
    assert!(
        String::from_utf8_lossy(&head.stdout).contains("in the background, logging to"),
        "{}",
        text(&head)
    );
    // The daemon writes its pid once it is in the background.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "no pid file");
        std::thread::sleep(Duration::from_millis(50));
    };
    struct Stop(i32);
    impl Drop for Stop {
        fn drop(&mut self) {
            // SAFETY: kill has no memory preconditions; the pid is the daemon this test started.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
    let stop = Stop(pid);
    let second = run(&[
        "serve",
        "--port",
        "1",
        "--pidfile",
        &pidfile.to_string_lossy(),
    ]);
    assert_eq!(second.status.code(), Some(1));
    assert!(
        text(&second).contains("already runs as pid"),
        "{}",
        text(&second)
    );
    bench_json(&format!("127.0.0.1:{port}"), &["-t", "1"]);
    // The daemon logs a session once it has answered it: the client may
    // be done first (beside two busy loops the signal once came before
    // the line).
    let logged =
        || std::fs::read_to_string(&logfile).is_ok_and(|l| l.contains("bench, 1 stream(s)"));
    assert!(
        common::wait_until(Duration::from_secs(10), logged),
        "the daemon never logged the bench"
    );
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    // Reparented to init once its parent returned: gone, or a zombie no one reaped.
    let alive =
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
    while alive() || pidfile.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::mem::forget(stop);
    let log = std::fs::read_to_string(&logfile).unwrap();
    // Everything from the identity on, one event a line.
    assert!(
        log.lines().next().is_some_and(|l| l.contains("identity")),
        "{log}"
    );
    assert!(
        log.lines().all(|l| l.starts_with("20")
            && l.matches(" INFO ").count() + l.matches(" WARN ").count() == 1),
        "{log}"
    );
    assert!(log.contains("listening on 127.0.0.1"), "{log}");
    assert!(log.contains("bench, 1 stream(s)"), "{log}");
    assert!(log.contains("stopped by a signal"), "{log}");
}

/// A bench whose reader stops after its first line (`| head -1`), in text
/// and with `--json -`: it ends without a panic and with its own exit code,
/// as the run itself went.
#[test]
fn a_bench_into_a_pipe_closed_early_ends_quietly() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let addr = srv.addr();
    for json in [false, true] {
        let mut args = vec!["bench", &addr, "-t", "1"];
        if json {
            args.extend(["--json", "-"]);
        }
        let mut child = common::linerate_cmd()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn linerate bench");
        let head = head_1(&mut child);
        assert_eq!(String::from_utf8_lossy(&head.stdout).lines().count(), 1);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "--json {json}: {:?}: {err}",
            out.status
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `child`'s output read by `head -1`, which stops after the first line
/// and closes the pipe.
fn head_1(child: &mut std::process::Child) -> std::process::Output {
    Command::new("head")
        .arg("-1")
        .stdin(child.stdout.take().expect("a pipe"))
        .output()
        .expect("head is installed")
}
