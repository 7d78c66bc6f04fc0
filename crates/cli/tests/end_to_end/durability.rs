//! Durability as the kernel sees it: a one-shot receiver traced with
//! strace while it takes a large file (journaled in batches) and a tree of
//! small files. Every journal record follows a sync of its file's data in
//! the same thread, every rename or link into place follows a sync of that
//! file (or, for files inside a new directory, of the file system before
//! the directory's rename), and the destination directory is synced before the receiver's
//! last word to the sender. With `--no-fsync`, nothing is synced.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::tree::{TempDir, random_file};
use common::{text, wait_exit};

/// One system call as strace printed it: thread, name, the path of its
/// first file descriptor (strace -y) and its whole argument text.
#[derive(Debug)]
struct Call {
    tid: u32,
    name: String,
    fd_path: String,
    args: String,
}

fn parse(log: &str) -> Vec<Call> {
    log.lines()
        .filter_map(|line| {
            let (tid, rest) = line.split_once(' ')?;
            let rest = rest.trim_start();
            if rest.starts_with("<...") || rest.starts_with("+++") || rest.starts_with("---") {
                return None;
            }
            let (name, args) = rest.split_once('(')?;
            let fd_path = args
                .split_once('<')
                .and_then(|(_, p)| p.split_once('>'))
                .map(|(p, _)| p.to_string())
                .unwrap_or_default();
            Some(Call {
                tid: tid.parse().ok()?,
                name: name.to_string(),
                fd_path,
                args: args.to_string(),
            })
        })
        .collect()
}

/// The quoted strings among a call's arguments (names given to renameat2
/// and linkat).
fn quoted(args: &str) -> Vec<&str> {
    args.split('"').skip(1).step_by(2).collect()
}

/// Runs `linerate recv DEST` under strace, sends `args` to it, and returns
/// the receiver's system calls.
fn traced_transfer(dest: &Path, trace: &Path, args: &[&str]) -> Vec<Call> {
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-qq", "-yy", "-s", "0", "-o"])
        .arg(trace)
        .args([
            "-e",
            "trace=fdatasync,fsync,syncfs,rename,renameat,renameat2,linkat,write,pwrite64,sendto,sendmsg",
            common::linerate(),
            "recv",
        ])
        .arg(dest);
    let (mut recv, url) = common::oneshot_by(strace);
    let mut send = vec!["send", "-q"];
    send.extend_from_slice(args);
    send.push(url.trim());
    let out = common::run(&send);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        wait_exit(&mut recv, Duration::from_secs(30)).is_some(),
        "the one-shot receiver ends after its transfer"
    );
    parse(&std::fs::read_to_string(trace).expect("strace log"))
}

/// Checks the order of syncs, journal records, renames and links.
fn assert_synced_in_order(calls: &[Call], dest: &Path) {
    // Per thread: the data files synced since that thread's last journal record.
    let mut synced: HashMap<u32, Vec<String>> = HashMap::new();
    let mut journal_headers: Vec<String> = Vec::new();
    let (mut records, mut renames, mut links) = (0, 0, 0);
    let mut last_publish = 0;
    // Files written inside a new directory's stage, and every file synced.
    let mut staged_files: Vec<String> = Vec::new();
    let mut ever_synced: Vec<String> = Vec::new();
    let mut stages = 0;
    for (i, c) in calls.iter().enumerate() {
        let mine = synced.entry(c.tid).or_default();
        match c.name.as_str() {
            "fdatasync" => {
                mine.push(c.fd_path.clone());
                ever_synced.push(c.fd_path.clone());
            }
            // The whole file system: everything written before it.
            "syncfs" => ever_synced.append(&mut staged_files.clone()),
            "pwrite64" if c.fd_path.contains(".lrstage/") => {
                staged_files.push(c.fd_path.clone());
            }
            "write" if c.fd_path.ends_with(".lrjournal") => {
                // The first write of a journal is its header.
                if !journal_headers.contains(&c.fd_path) {
                    journal_headers.push(c.fd_path.clone());
                    continue;
                }
                let part = c.fd_path.replace(".lrjournal", ".lrpart");
                assert!(
                    mine.contains(&part),
                    "journal record #{i} in thread {} before its data was synced: {c:?}",
                    c.tid
                );
                mine.clear();
                records += 1;
            }
            "renameat2" | "renameat" => {
                let names = quoted(&c.args);
                let from = names.first().copied().unwrap_or("");
                if from.ends_with(".lrpart") {
                    let part = format!("{}/{from}", c.fd_path);
                    assert!(
                        mine.contains(&part),
                        "{from} renamed into place before it was synced: {c:?}"
                    );
                    renames += 1;
                }
                if from.ends_with(".lrstage") {
                    let stage = format!("{}/{from}/", c.fd_path);
                    for f in staged_files.iter().filter(|f| f.starts_with(&stage)) {
                        assert!(
                            ever_synced.contains(f),
                            "{f} published with its directory before it was synced"
                        );
                    }
                    stages += 1;
                }
                last_publish = i;
            }
            "linkat" => {
                assert!(
                    mine.contains(&c.fd_path),
                    "{} linked into place before it was synced: {c:?}",
                    c.fd_path
                );
                links += 1;
                last_publish = i;
            }
            _ => {}
        }
    }
    assert!(records > 0, "the large file was journaled in batches");
    assert!(
        renames > 0 && links > 0 && stages > 0 && !staged_files.is_empty(),
        "renames {renames}, links {links}, stages {stages}"
    );
    let dest = dest.to_str().unwrap();
    let dir_synced = calls
        .iter()
        .position(|c| c.name == "fsync" && c.fd_path == dest)
        .expect("the destination directory is synced");
    assert!(
        dir_synced > last_publish,
        "synced before its last rename or link"
    );
    let last_word = calls
        .iter()
        .rposition(|c| c.fd_path.starts_with("TCP") && c.name != "fdatasync")
        .expect("the receiver reports to the sender");
    assert!(dir_synced < last_word, "synced after it reported the end");
}

#[test]
fn data_is_synced_before_it_is_journaled_or_renamed_and_the_directory_before_the_end() {
    let _traffic = common::beside_other_traffic();
    let work = TempDir::new("durable");
    // A file of several sync batches, and a tree of small files (written
    // whole and linked into place, or created inside a new directory).
    let src = work.join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    random_file(&src.join("big.bin"), 300 << 20, 1);
    for i in 0..20 {
        random_file(&src.join(format!("small{i}")), 3000 + i, i as u64);
        random_file(&src.join(format!("sub/s{i}")), 5000 + i, 100 + i as u64);
    }
    let dest = work.join("dest");
    std::fs::create_dir_all(&dest).unwrap();
    // Small files into the destination's existing top directory take the
    // unnamed (O_TMPFILE) path; those of a new subdirectory are staged.
    let mut sources: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    sources.sort();
    let mut args: Vec<&str> = sources.iter().map(String::as_str).collect();
    let calls = traced_transfer(&dest, &work.join("trace"), &args);
    assert_synced_in_order(&calls, &dest);
    // The top directory itself was not sent, only what it holds.
    let differ: Vec<String> = common::tree::differences(&src, &dest)
        .into_iter()
        .filter(|d| !d.starts_with(": "))
        .collect();
    assert!(differ.is_empty(), "{differ:?}");

    let scratch = work.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    args.insert(0, "--no-fsync");
    let calls = traced_transfer(&scratch, &work.join("trace-nofsync"), &args);
    let syncs: Vec<&Call> = calls
        .iter()
        .filter(|c| ["fdatasync", "fsync", "syncfs"].contains(&c.name.as_str()))
        .collect();
    assert!(syncs.is_empty(), "--no-fsync syncs nothing: {syncs:?}");
}
