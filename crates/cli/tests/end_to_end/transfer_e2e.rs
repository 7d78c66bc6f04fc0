//! File transfer end to end: the real binary, real sockets, real files.

use crate::common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tree::{TempDir, differences, random_file, set_mtime};
use common::{Guard, Server, SmallFs, leftovers, oneshot, send, text, wait_exit};

fn daemon(root: &Path) -> Server {
    Server::with_root(root)
}

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).expect("read json")).expect("parse json")
}

/// `top` with one file of several blocks and small files that travel
/// batched, `small_len(i)` bytes each with seed `small_seed + i`; returns
/// the tree's size in bytes.
fn blocks_and_batches(
    top: &Path,
    big: (usize, u64),
    smalls: usize,
    small_len: impl Fn(usize) -> usize,
    small_seed: u64,
) -> u64 {
    fs::create_dir_all(top).unwrap();
    random_file(&top.join("big.bin"), big.0, big.1);
    let mut total = big.0 as u64;
    for i in 0..smalls {
        let len = small_len(i);
        random_file(&top.join(format!("small{i}")), len, small_seed + i as u64);
        total += len as u64;
    }
    total
}

fn awkward_tree(root: &Path) {
    let top = root.join("top");
    fs::create_dir_all(top.join("nested/deeper")).unwrap();
    fs::create_dir_all(top.join("emptydir")).unwrap();
    random_file(&top.join("a file with spaces.txt"), 1000, 1);
    random_file(&top.join("ünïcødé—名前.bin"), 300_000, 2);
    random_file(&top.join("new\nline"), 17, 3);
    random_file(&top.join("-leading-dash"), 5, 4);
    fs::write(top.join("empty"), b"").unwrap();
    random_file(&top.join("nested/deeper/x.bin"), 20 << 20, 5);
    std::os::unix::fs::symlink("nested/deeper/x.bin", top.join("link")).unwrap();
    std::os::unix::fs::symlink("nowhere", top.join("dangling")).unwrap();
    // Sparse, past 4 GiB: data at both ends, a hole in the middle.
    let sparse = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(top.join("sparse.img"))
        .unwrap();
    sparse.set_len((5 << 30) + 12345).unwrap();
    use std::os::unix::fs::FileExt;
    sparse.write_all_at(&[7u8; 1 << 20], 0).unwrap();
    sparse.write_all_at(&[9u8; 4096], (9 << 29) + 3).unwrap();
    drop(sparse);
    fs::set_permissions(
        top.join("a file with spaces.txt"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    fs::set_permissions(
        top.join("nested/deeper/x.bin"),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    fs::set_permissions(top.join("nested"), fs::Permissions::from_mode(0o750)).unwrap();
    for (i, p) in [
        "a file with spaces.txt",
        "ünïcødé—名前.bin",
        "new\nline",
        "-leading-dash",
        "empty",
        "nested/deeper/x.bin",
        "sparse.img",
        "nested/deeper",
        "nested",
        "emptydir",
    ]
    .iter()
    .enumerate()
    {
        set_mtime(&top.join(p), 1_600_000_000 + i as i64 * 1000, 123_456_789);
    }
    set_mtime(&top, 1_500_000_000, 0);
}

#[test]
fn awkward_tree_round_trips_through_the_daemon_and_a_rerun_sends_nothing() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    awkward_tree(src.path());
    let server = daemon(dst.path());
    let target = format!("{}:/in/side", server.addr());
    let report = src.join("r.json");
    let top = src.join("top");
    let out = send(&[
        top.to_str().unwrap(),
        &target,
        "--block",
        "1M",
        "-P",
        "3",
        "--verify",
        "--json",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "send failed: {}", text(&out));
    let diffs = differences(&top, &dst.join("in/side/top"));
    assert!(diffs.is_empty(), "trees differ: {diffs:#?}");
    assert!(
        leftovers(dst.path()).is_empty(),
        "{:?}",
        leftovers(dst.path())
    );
    let doc = json_of(&report);
    assert_eq!(doc["kind"], "transfer");
    assert_eq!(doc["parameters"]["verified_files"], 7);
    assert_eq!(
        doc["parameters"]["mismatched_files"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // The hole stayed a hole.
    let allocated = fs::metadata(dst.join("in/side/top/sparse.img"))
        .unwrap()
        .blocks()
        * 512;
    assert!(
        allocated < 64 << 20,
        "sparse file allocated {allocated} bytes"
    );

    // The same command again: everything is already there.
    let out = send(&[
        top.to_str().unwrap(),
        &target,
        "--block",
        "1M",
        "--json",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "rerun failed: {}", text(&out));
    let doc = json_of(&report);
    assert_eq!(doc["parameters"]["bytes_needed"], 0);
    assert_eq!(doc["parameters"]["files_skipped"], 7);
    assert_eq!(doc["summary"]["bytes"], 0);
}

/// A file that exists and differs: replaced by default, refused with
/// --no-replace, kept with --ignore-existing, kept with --update only while
/// it is newer than the source.
#[test]
fn existing_different_files_are_replaced_unless_asked_otherwise() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    // One file of several blocks, one small enough to travel whole.
    random_file(&src.join("big"), 3 << 20, 11);
    random_file(&src.join("small"), 5000, 12);
    let send_with = |extra: &[&str]| {
        let (mut recv, url) = oneshot(dst.path());
        let mut args = vec![
            src.join("big").to_str().unwrap().to_string(),
            src.join("small").to_str().unwrap().to_string(),
            url,
            "--block".into(),
            "1M".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = send(&args);
        let _ = wait_exit(&mut recv, Duration::from_secs(10));
        out
    };
    let precious = |name: &str| fs::write(dst.join(name), b"precious").unwrap();
    let kept = |name: &str| fs::read(dst.join(name)).unwrap() == b"precious";

    precious("big");
    precious("small");
    let out = send_with(&["--no-replace"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("already exists and differs"),
        "{}",
        text(&out)
    );
    assert!(kept("big") && kept("small"));

    let out = send_with(&["--ignore-existing"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(kept("big") && kept("small"));

    // Newer at the destination: --update keeps it; older: replaced.
    let now = std::time::UNIX_EPOCH.elapsed().unwrap().as_secs() as i64;
    set_mtime(&dst.join("big"), now + 3600, 0);
    set_mtime(&dst.join("small"), 1000, 0);
    let out = send_with(&["--update"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(kept("big"));
    assert!(differences(&src.join("small"), &dst.join("small")).is_empty());

    let out = send_with(&[]);
    assert!(out.status.success(), "{}", text(&out));
    for name in ["big", "small"] {
        assert!(
            differences(&src.join(name), &dst.join(name)).is_empty(),
            "{name}"
        );
    }
    assert!(
        leftovers(dst.path()).is_empty(),
        "{:?}",
        leftovers(dst.path())
    );
    // The flags that contradict each other are refused as bad flags.
    let out = send(&["--no-replace", "--update", "x", "host:/d"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn one_shot_url_needs_its_token() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    random_file(&src.join("f"), 1000, 12);
    let (mut recv, url) = oneshot(dst.path());
    let (head, rest) = url.rsplit_once("token=").unwrap();
    let (token, tail) = rest.split_once('&').unwrap_or((rest, ""));
    let flipped: String = token
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let out = send(&[
        src.join("f").to_str().unwrap(),
        &format!("{head}token={flipped}&{tail}"),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("wrong or missing token"),
        "{}",
        text(&out)
    );
    assert!(!dst.join("f").exists());
    // A wrong token does not end the receiver: its rightful sender still can.
    assert!(
        wait_exit(&mut recv, Duration::from_secs(1)).is_none(),
        "a wrong token ended the receiver"
    );
    let out = send(&[src.join("f").to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(differences(&src.join("f"), &dst.join("f")).is_empty());
    let status = wait_exit(&mut recv, Duration::from_secs(5)).expect("recv exits");
    assert!(status.success());
}

#[test]
fn a_receiver_whose_sender_never_comes_gives_up_and_frees_its_port() {
    let _traffic = common::beside_other_traffic();
    let dst = TempDir::new("dst");
    // In the foreground: a clear error and a failure status.
    let t = Instant::now();
    let out = common::linerate_cmd()
        .args(["recv", dst.path().to_str().unwrap()])
        .args(["--bind", "127.0.0.1", "--foreground", "--wait", "1s"])
        .output()
        .expect("run recv");
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no sender connected within 1 s"),
        "{}",
        text(&out)
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // In the background, as inside "$(ssh host linerate recv DIR)": the
    // command returns with the URL, and the receiver ends by itself later.
    let log = dst.join("recv.log");
    let out = common::linerate_cmd()
        .args(["recv", dst.path().to_str().unwrap(), "--bind", "127.0.0.1"])
        .args(["--wait", "1s", "--log", log.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .expect("run recv");
    assert!(out.status.success(), "{}", text(&out));
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let port: u16 = url
        .split_once("127.0.0.1:")
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url:?}"));
    let end = Instant::now() + Duration::from_secs(15);
    let gave_up = loop {
        let logged = fs::read_to_string(&log).unwrap_or_default();
        if logged.contains("no sender connected within 1 s") {
            break true;
        }
        if Instant::now() > end {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(gave_up, "log: {:?}", fs::read_to_string(&log));
    // The error is the process's last word: its port closes right after.
    let end = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < end, "port {port} still open");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn from_memory_with_skip_writes_creates_nothing() {
    let _traffic = common::beside_other_traffic();
    let dst = TempDir::new("dst");
    let (_recv, url) = oneshot(dst.path());
    let out = send(&[
        "--from-memory",
        "256M",
        "--skip-writes",
        &url,
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    assert_eq!(doc["summary"]["bytes"], 256u64 << 20);
    assert_eq!(fs::read_dir(dst.path()).unwrap().count(), 0);
}

/// Generated data lands dated when its run began, not in 1970, and a
/// rerun writes it again: a benchmark of the receiver's disk never finds
/// it up to date.
#[test]
fn generated_data_is_dated_by_its_run_and_a_rerun_writes_it_again() {
    let _traffic = common::beside_other_traffic();
    let dst = TempDir::new("dst");
    let server = common::Server::with_root(dst.path());
    let target = format!("{}:/gen", server.addr());
    let mut mtimes = Vec::new();
    for _ in 0..2 {
        let began = std::time::SystemTime::now();
        let out = send(&["--from-memory", "3M", &target, "--json", "-", "-q"]);
        assert!(out.status.success(), "{}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(doc["summary"]["bytes"], 3u64 << 20, "{doc}");
        let m = fs::metadata(dst.join("gen/linerate-memory.bin")).unwrap();
        let mtime = m.modified().unwrap();
        // Dated at the sender's start, on this one clock: not before the
        // second's start of the run (file times keep whole nanoseconds).
        assert!(
            mtime >= began - Duration::from_secs(1),
            "{mtime:?} before the run began at {began:?}"
        );
        mtimes.push(mtime);
    }
    assert!(mtimes[1] > mtimes[0]);
}

#[test]
fn skip_writes_without_checksums_drops_every_block_and_keeps_framing() {
    let _traffic = common::beside_other_traffic();
    // The receiver then discards payloads in the kernel; a miscount there
    // would read a payload byte as the next record header and fail the run.
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    let top = src.join("top");
    let total = blocks_and_batches(&top, ((5 << 20) + 12_345, 31), 40, |i| 1 + i * 997, 200);
    let (_recv, url) = oneshot(dst.path());
    let out = send(&[
        top.to_str().unwrap(),
        &url,
        "--skip-writes",
        "--no-block-checksum",
        "--block",
        "1M",
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    assert_eq!(doc["summary"]["bytes"], total);
    assert_eq!(doc["parameters"]["blocks_rejected"], 0);
    assert!(leftovers(dst.path()).is_empty());
    assert!(!dst.join("top").exists());
}

#[test]
fn no_block_checksum_still_delivers_identical_files_and_says_so() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    let top = src.join("top");
    blocks_and_batches(&top, (9 << 20, 21), 50, |i| 100 + i * 37, 100);
    // In the clear: with TLS every record is authenticated and blocks
    // carry no checksum anyway.
    let (_recv, url) = common::oneshot_clear(dst.path());
    let report = dst.join("report.json");
    let out = send(&[
        top.to_str().unwrap(),
        &url,
        "--no-encrypt",
        "--no-block-checksum",
        "--verify",
        "--block",
        "1M",
        "--json",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("carried no checksum"), "{}", text(&out));
    assert!(differences(&top, &dst.join("top")).is_empty());
    let doc = json_of(&report);
    assert_eq!(doc["parameters"]["checksum"], false);
    assert_eq!(doc["parameters"]["blocks_rejected"], 0);
    assert_eq!(doc["parameters"]["verified_files"], 51);
    assert!(leftovers(dst.path()).is_empty());
}

/// A tree of one large and many small files.
fn resume_tree(root: &Path) {
    fs::create_dir_all(root.join("data/small")).unwrap();
    random_file(&root.join("data/large.bin"), 300 << 20, 21);
    for i in 0..50 {
        random_file(
            &root.join(format!("data/small/{i}.dat")),
            10_000 + i * 100,
            100 + i as u64,
        );
    }
}

/// Waits until the transfer to `server` is under way, then a pseudo-random
/// further 0-1.4 s (different on every run), so a kill lands at a new
/// point of the 300 MiB (3 s at 800M) each time.
fn pause_under_way(server: &Server) {
    common::wait_moving(None, server.port, 16 << 20);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    std::thread::sleep(Duration::from_millis(nanos % 1400));
}

fn rerun_completes_with_less(src: &Path, dst_root: &Path, dest: &str) {
    let server = daemon(dst_root);
    let report = src.join("again.json");
    let out = send(&[
        src.join("data").to_str().unwrap(),
        &format!("{}:/{dest}", server.addr()),
        "--block",
        "1M",
        "--json",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "rerun failed: {}", text(&out));
    let doc = json_of(&report);
    let (needed, total) = (
        doc["parameters"]["bytes_needed"].as_u64().unwrap(),
        doc["parameters"]["bytes_total"].as_u64().unwrap(),
    );
    assert!(
        needed < total,
        "the rerun sent everything again ({needed} of {total})"
    );
    let diffs = differences(&src.join("data"), &dst_root.join(dest).join("data"));
    assert!(diffs.is_empty(), "trees differ: {diffs:#?}");
    assert!(leftovers(dst_root).is_empty(), "{:?}", leftovers(dst_root));
}

/// Starts a paced `send` of `src/data` to the daemon's `/d` in the background.
fn spawn_slow_send(src: &Path, server: &Server, extra: &[&str]) -> Guard {
    let child = common::linerate_cmd()
        .args([
            "send",
            src.join("data").to_str().unwrap(),
            &format!("{}:/d", server.addr()),
            "--block",
            "1M",
            "--rate",
            "800M",
            "-q",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Guard(child)
}

/// A paced transfer of the resume tree to a daemon, under way: source,
/// destination root, daemon and sender, whose result goes to `src/r.json`.
fn paced_transfer(extra: &[&str]) -> (TempDir, TempDir, Server, Guard) {
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    resume_tree(src.path());
    let server = daemon(dst.path());
    let report = src.join("r.json");
    let mut args = vec!["--json", report.to_str().unwrap()];
    args.extend_from_slice(extra);
    let sender = spawn_slow_send(src.path(), &server, &args);
    (src, dst, server, sender)
}

#[test]
fn receiver_killed_mid_transfer_then_rerun_resumes() {
    let _traffic = common::beside_other_traffic();
    let (src, dst, mut server, mut sender) = paced_transfer(&[]);
    pause_under_way(&server);
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let t = Instant::now();
    let status = wait_exit(&mut sender, Duration::from_secs(10))
        .expect("sender exits after the receiver dies");
    assert!(!status.success());
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(
        !dst.join("d/data/large.bin").exists(),
        "an incomplete file was renamed into place"
    );
    rerun_completes_with_less(src.path(), dst.path(), "d");
}

#[test]
fn sender_killed_mid_transfer_then_rerun_resumes() {
    let _traffic = common::beside_other_traffic();
    let (src, dst, server, mut sender) = paced_transfer(&[]);
    pause_under_way(&server);
    sender.0.kill().unwrap();
    sender.0.wait().unwrap();
    assert!(
        server.wait_log(Duration::from_secs(10), |l| l
            .iter()
            .any(|x| x.contains("failed"))),
        "the receiver noticed: {:?}",
        server.log_lines()
    );
    assert!(!dst.join("d/data/large.bin").exists());
    drop(server);
    rerun_completes_with_less(src.path(), dst.path(), "d");
}

#[test]
fn a_reset_stream_does_not_stop_the_transfer() {
    let _traffic = common::beside_other_traffic();
    let (src, dst, server, mut sender) = paced_transfer(&["-P", "4"]);
    let report = src.join("r.json");
    common::wait_moving(None, server.port, 16 << 20);
    // The sender's newest connection to the server is a data stream (the
    // control connection is opened first): reset it from the kernel.
    let pid = sender.0.id();
    let ss = Command::new("ss")
        .args([
            "-tnpH",
            "state",
            "established",
            "dport",
            "=",
            &format!(":{}", server.port),
        ])
        .output()
        .expect("ss is installed (iproute2)");
    let listing = String::from_utf8_lossy(&ss.stdout).into_owned();
    let newest = listing
        .lines()
        .filter(|l| l.contains(&format!("pid={pid},")))
        .filter_map(|l| {
            let local = l.split_whitespace().nth(2)?;
            let port = local.rsplit(':').next()?.parse::<u16>().ok()?;
            let fd = l
                .split("fd=")
                .nth(1)?
                .trim_end_matches(|c: char| !c.is_ascii_digit());
            Some((
                fd.split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse::<u32>()
                    .ok()?,
                port,
            ))
        })
        .max()
        .expect("the sender's connections are listed");
    let killed = Command::new("ss")
        .args([
            "-K",
            "dst",
            "127.0.0.1",
            "dport",
            "=",
            &format!(":{}", server.port),
            "sport",
            "=",
            &format!(":{}", newest.1),
        ])
        .output()
        .unwrap();
    assert!(
        killed.status.success(),
        "ss -K: {}",
        String::from_utf8_lossy(&killed.stderr)
    );
    let status = wait_exit(&mut sender, Duration::from_secs(30)).expect("sender finishes");
    let mut err = String::new();
    use std::io::Read;
    let _ = sender.0.stderr.take().unwrap().read_to_string(&mut err);
    assert!(
        status.success(),
        "transfer failed after one stream was reset: {err}"
    );
    let doc = json_of(&report);
    let failed = doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["error"].is_string())
        .count();
    assert!(failed >= 1, "no stream recorded the reset");
    let diffs = differences(&src.join("data"), &dst.join("d/data"));
    assert!(diffs.is_empty(), "trees differ: {diffs:#?}");
}

#[test]
fn a_source_that_shrinks_mid_send_is_reported_and_nothing_crashes() {
    let _traffic = common::beside_other_traffic();
    // A truncation in the middle of a 64 MiB block (seconds at this rate)
    // must not wait for the sender, which must notice the change and say
    // so, and never die of a signal.
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    fs::create_dir_all(src.join("data")).unwrap();
    random_file(&src.join("data/large.bin"), 140 << 20, 41);
    random_file(&src.join("data/small.bin"), 10_000, 42);
    let server = daemon(dst.path());
    let child = common::linerate_cmd()
        .args(["send", src.join("data").to_str().unwrap()])
        .arg(format!("{}:/d", server.addr()))
        .args(["--block", "64M", "--rate", "100M", "-P", "1", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut sender = Guard(child);
    // Within the first 64 MiB block: 4 MiB take a third of a second at 100M.
    common::wait_moving(None, server.port, 4 << 20);
    let t = Instant::now();
    fs::OpenOptions::new()
        .write(true)
        .open(src.join("data/large.bin"))
        .and_then(|f| f.set_len(1 << 20))
        .expect("truncate the source");
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "the truncation waited {:?} for the sender",
        t.elapsed()
    );
    let status = wait_exit(&mut sender, Duration::from_secs(60)).expect("sender finishes");
    let mut err = String::new();
    use std::io::Read;
    let _ = sender.0.stderr.take().unwrap().read_to_string(&mut err);
    assert!(
        status.code().is_some(),
        "the sender died of a signal: {status:?}"
    );
    assert!(!status.success(), "a shrunk source was reported as sent");
    assert!(
        err.contains("large.bin") && err.contains("changed while being sent"),
        "unclear message: {err}"
    );
    // The new directory stays in its stage until a rerun completes it.
    assert!(
        !dst.join("d/data").exists(),
        "an incomplete tree is in place"
    );
    assert!(
        !dst.join("d/.data.lrstage/large.bin").exists(),
        "a file that changed under the sender claims to be complete"
    );
    assert!(
        dst.join("d/.data.lrstage/small.bin").exists(),
        "the other file arrived"
    );
}

/// A small tmpfs mounted for one test, unmounted when dropped.
#[test]
fn destination_full_is_a_clear_error_and_a_rerun_after_freeing_space_completes() {
    let _traffic = common::beside_other_traffic();
    if !common::require_root("destination_full") {
        return;
    }
    let src = TempDir::new("src");
    fs::create_dir_all(src.join("data")).unwrap();
    random_file(&src.join("data/a.bin"), 24 << 20, 31);
    random_file(&src.join("data/b.bin"), 24 << 20, 32);
    random_file(&src.join("data/c.bin"), 24 << 20, 33);
    let full = SmallFs::mount("40m");
    let server = daemon(full.0.path());
    let target = format!("{}:/d", server.addr());
    let args = [
        src.join("data").to_str().unwrap().to_string(),
        target,
        "--block".into(),
        "1M".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = send(&args);
    assert!(
        !out.status.success(),
        "a transfer larger than the disk succeeded"
    );
    assert!(
        text(&out).contains("No space left on device"),
        "{}",
        text(&out)
    );
    // Nothing claims to be complete that is not: every file in place is whole.
    for name in ["a.bin", "b.bin", "c.bin"] {
        let p = full.0.join(&format!("d/data/{name}"));
        if p.exists() {
            assert!(
                differences(&src.join(&format!("data/{name}")), &p).is_empty(),
                "{name} is in place but wrong"
            );
        }
    }
    assert!(server.wait_log(Duration::from_secs(5), |l| {
        l.iter().any(|x| x.contains("No space left"))
    }));
    full.resize("200m");
    let out = send(&args);
    assert!(
        out.status.success(),
        "rerun after freeing space: {}",
        text(&out)
    );
    assert!(differences(&src.join("data"), &full.0.join("d/data")).is_empty());
    assert!(leftovers(full.0.path()).is_empty());
}

#[test]
fn a_receiver_named_by_a_name_that_means_this_machine_gets_a_hint() {
    let _traffic = common::beside_other_traffic();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let session = "00112233445566778899aabbccddeeff";
    let url = format!("linerate://localhost:{port}/?session={session}&token={session}");
    let out = send(&["--from-memory", "1M", &url, "--no-encrypt"]);
    assert!(!out.status.success());
    let t = text(&out);
    assert!(t.contains("localhost is "), "{t}");
    assert!(t.contains("--bind ADDR or --advertise NAME"), "{t}");
    // An address literal names what it means: no hint.
    let url = format!("linerate://127.0.0.1:{port}/?session={session}&token={session}");
    let t = text(&send(&["--from-memory", "1M", &url, "--no-encrypt"]));
    assert!(t.contains("failed") && !t.contains("--advertise"), "{t}");
}

/// Both ends report progress off a terminal: a line per interval at the
/// sender with the percentage, files done of needed, the rate in Gbit/s and
/// the time left; the receiver logs its session's lines.
#[test]
fn both_ends_show_progress_lines_with_percent_files_rate_and_time_left() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    let top = src.join("run");
    blocks_and_batches(&top, (120 << 20, 31), 12, |i| 1000 + i, 40);
    let recv_log = src.join("recv.log");
    let mut cmd = common::linerate_cmd();
    cmd.args(["recv", dst.path().to_str().unwrap(), "--bind", "127.0.0.1"])
        .arg("--foreground")
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&recv_log).unwrap());
    let mut child = cmd.spawn().expect("spawn recv");
    let mut url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut url,
    )
    .unwrap();
    let mut recv = Guard(child);
    // Paced, so several intervals pass: 120 MiB at 400 Mbit/s is 2.5 s.
    let out = send(&[top.to_str().unwrap(), url.trim(), "--rate", "400M"]);
    assert!(out.status.success(), "{}", text(&out));
    let status = wait_exit(&mut recv, Duration::from_secs(20)).expect("recv exits");
    assert!(status.success());
    let sender = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = sender.lines().filter(|l| l.contains(" files, ")).collect();
    assert!(lines.len() >= 2, "too few progress lines:\n{sender}");
    for l in &lines {
        // Or, once every byte moved, the wait for the receiver's syncs.
        assert!(
            (l.contains("bit/s") && l.contains("ETA "))
                || l.ends_with("all moved, syncing at the receiver"),
            "{l}"
        );
    }
    // Once the listing is answered the totals hold: a percentage and files of 13.
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" %)") && l.contains("/13 files")),
        "{sender}"
    );
    let log = fs::read_to_string(&recv_log).unwrap();
    let received: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("session ") && l.contains(" into "))
        .collect();
    assert!(
        !received.is_empty(),
        "no progress in the receiver's log:\n{log}"
    );
    // It names the directory the data lands in, not ".".
    let into = format!(" into {}:", dst.path().display());
    assert!(received.iter().all(|l| l.contains(&into)), "{log}");
    assert!(
        received
            .iter()
            .any(|l| l.contains("/13 files") && l.contains("bit/s")),
        "{log}"
    );
}

/// rsync's everyday case: a second run of a tree where 1 % of the files
/// changed sends those files only, replaces them, and exits 0.
#[test]
fn a_rerun_after_one_percent_changed_sends_only_the_changed_files() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    let top = src.join("tree");
    for d in 0..4 {
        for f in 0..50 {
            let path = top.join(format!("d{d}/f{f}"));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            // Half the files of several blocks, half travelling whole.
            let len = if f % 2 == 0 { (2 << 20) + f } else { 3000 + f };
            random_file(&path, len, (d * 100 + f) as u64);
        }
    }
    let server = daemon(dst.path());
    let target = format!("{}:/t", server.addr());
    let report = src.join("r.json");
    let run = || {
        let out = send(&[
            top.to_str().unwrap(),
            &target,
            "--block",
            "1M",
            "-q",
            "--json",
            report.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        json_of(&report)
    };
    run();
    // Two of the 200 files change: one large, one small, new contents and times.
    let changed = [
        (top.join("d1/f10"), (2 << 20) + 7),
        (top.join("d3/f33"), 4000),
    ];
    for (i, (path, len)) in changed.iter().enumerate() {
        random_file(path, *len, 9000 + i as u64);
    }
    let doc = run();
    let want: u64 = changed.iter().map(|(_, len)| *len as u64).sum();
    assert_eq!(
        doc["parameters"]["bytes_needed"], want,
        "{}",
        doc["parameters"]
    );
    assert_eq!(doc["summary"]["bytes"], want);
    assert_eq!(doc["parameters"]["files_skipped"], 198);
    let diffs = differences(&top, &dst.join("t/tree"));
    assert!(diffs.is_empty(), "trees differ: {diffs:#?}");
    assert!(
        leftovers(dst.path()).is_empty(),
        "{:?}",
        leftovers(dst.path())
    );
}
