//! `send` keeps rsync's habits: each case runs rsync itself on the same
//! tree with the same flags, and the trees both leave are compared.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::tree::{TempDir, differences, random_file, set_mtime};
use common::{Server, send, text};

/// Every path under `root` with its kind, '/'-separated and sorted.
fn listing(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        for n in names {
            let path = dir.join(&n);
            let rel = if rel.is_empty() {
                n.clone()
            } else {
                format!("{rel}/{n}")
            };
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push(format!("{rel}/"));
                walk(&path, &rel, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    if root.exists() {
        walk(root, "", &mut out);
    }
    out
}

/// `rsync FLAGS SRC DEST/`: rsync itself, to compare what it leaves.
fn rsync_into(flags: &[&str], src: &Path, dest: &Path) {
    let out = Command::new("rsync")
        .args(flags)
        .arg(src)
        .arg(format!("{}/", dest.display()))
        .output()
        .expect("rsync (apt install rsync)");
    assert!(out.status.success(), "rsync {flags:?}: {}", text(&out));
}

/// `send SEND_FLAGS TOP HOST:/l` to a daemon rooted in a new directory,
/// and `rsync RSYNC_FLAGS TOP` into its `r`: that directory, and the daemon.
fn copied_by_both(top: &Path, send_flags: &[&str], rsync_flags: &[&str]) -> (TempDir, Server) {
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    let target = format!("{}:/l", server.addr());
    let mut args = send_flags.to_vec();
    args.extend([top.to_str().unwrap(), &target, "-q"]);
    let out = send(&args);
    assert!(out.status.success(), "{}", text(&out));
    let by_rsync = dst.join("r");
    fs::create_dir_all(&by_rsync).unwrap();
    rsync_into(rsync_flags, top, &by_rsync);
    (dst, server)
}

fn filter_tree(top: &Path) {
    for (path, len) in [
        ("a.c", 100),
        ("b.c", 200),
        ("a.o", 300),
        ("keep.o", 400),
        ("x.tmp", 10),
        ("{a,b}", 20),
        ("cache/x", 30),
        ("sub/b.log", 40),
        ("sub/cache/y", 50),
        ("sub/deep/c.log", 60),
        ("sub/deep/d.c", 70),
        ("sub/t/foo", 80),
        ("foo", 90),
    ] {
        let p = top.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        random_file(&p, len, len as u64);
    }
}

/// rsync's include/exclude rules mean the same to `send`: for each set of
/// rules, `rsync -a RULES SRC DEST` and `linerate send RULES SRC HOST:/DEST`
/// leave the same paths.
#[test]
fn include_and_exclude_rules_leave_what_rsync_leaves() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let top = src.join("t");
    filter_tree(&top);
    let rules_file = src.join("rules");
    fs::write(
        &rules_file,
        "# kept objects\n+ keep.o\n- *.o\n; temporary\n*.tmp\n",
    )
    .unwrap();
    let rules_file = rules_file.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--exclude", "*.o"],
        vec!["--include", "keep.o", "--exclude", "*.o"],
        vec!["--exclude", "*.o", "--include", "keep.o"],
        vec!["--exclude", "cache/"],
        vec!["--exclude", "/t/foo"],
        vec!["--exclude", "foo"],
        vec!["--exclude", "sub/*.log"],
        vec!["--exclude", "t/**/c.log"],
        vec!["--exclude", "sub/***"],
        vec!["--include", "*/", "--include", "*.c", "--exclude", "*"],
        vec!["--exclude", "?.c"],
        vec!["--exclude", "{a,b}"],
        vec!["--exclude-from", rules_file],
        vec!["--exclude", "/t"],
    ];
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    for (i, rules) in cases.iter().enumerate() {
        let by_rsync = dst.join(&format!("rsync{i}"));
        fs::create_dir_all(&by_rsync).unwrap();
        let flags: Vec<&str> = std::iter::once("-a").chain(rules.iter().copied()).collect();
        rsync_into(&flags, &top, &by_rsync);
        let target = format!("{}:/linerate{i}", server.addr());
        let mut args = rules.clone();
        args.extend([top.to_str().unwrap(), &target, "-q"]);
        let out = send(&args);
        assert!(out.status.success(), "send {rules:?}: {}", text(&out));
        assert_eq!(
            listing(&dst.join(&format!("linerate{i}"))),
            listing(&by_rsync),
            "rules {rules:?}"
        );
    }
    // A pattern rsync refuses is a bad flag, named.
    let target = format!("{}:/bad", server.addr());
    let out = send(&["--exclude", "[z-a", top.to_str().unwrap(), &target]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--exclude"), "{}", text(&out));
}

/// Puts the same extra paths into a destination copy of `t`, and one
/// beside it, outside what the transfer covers.
fn add_extras(dest: &Path) {
    let t = dest.join("t");
    fs::write(t.join("extra"), b"x").unwrap();
    fs::create_dir_all(t.join("sub/extra_dir/deeper")).unwrap();
    fs::write(t.join("sub/extra_dir/deeper/y"), b"y").unwrap();
    fs::write(t.join("junk.o"), b"o").unwrap();
    std::os::unix::fs::symlink("/etc", t.join("link")).unwrap();
    fs::write(dest.join("outside.txt"), b"stay").unwrap();
}

/// `--delete` removes exactly what rsync's --delete removes: what the
/// source lacks inside the transferred directories, never what the
/// exclude rules leave out, never beside the transfer, never through a
/// link; `--dry-run` lists it first and changes nothing.
#[test]
fn delete_removes_what_rsync_removes_and_a_dry_run_lists_it_first() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let top = src.join("t");
    filter_tree(&top);
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    let by_rsync = dst.join("r");
    let by_linerate = dst.join("l");
    fs::create_dir_all(&by_rsync).unwrap();
    let rsync = |extra: &[&str]| {
        let flags: Vec<&str> = std::iter::once("-a").chain(extra.iter().copied()).collect();
        rsync_into(&flags, &top, &by_rsync);
    };
    let target = format!("{}:/l", server.addr());
    let linerate = |extra: &[&str]| {
        let mut args = extra.to_vec();
        args.extend([top.to_str().unwrap(), &target]);
        let out = send(&args);
        assert!(out.status.success(), "send {extra:?}: {}", text(&out));
        text(&out)
    };
    rsync(&[]);
    linerate(&["-q"]);
    assert_eq!(listing(&by_linerate), listing(&by_rsync));
    add_extras(&by_rsync);
    add_extras(&by_linerate);
    fs::remove_file(top.join("b.c")).unwrap();
    fs::remove_dir_all(top.join("sub/deep")).unwrap();

    let before = listing(&by_linerate);
    let said = linerate(&["--delete", "--dry-run", "--exclude", "*.o"]);
    assert_eq!(
        listing(&by_linerate),
        before,
        "a dry run changed the destination"
    );
    for gone in [
        "t/b.c",
        "t/extra",
        "t/sub/extra_dir/",
        "t/sub/deep/",
        "t/link",
    ] {
        assert!(
            said.lines()
                .any(|l| l.starts_with("*deleting ") && l.ends_with(gone)),
            "{gone} not listed:\n{said}"
        );
    }
    assert!(
        !said.contains("junk.o") && !said.contains("outside"),
        "{said}"
    );
    assert!(
        said.contains("Dry run: 0 to create, 0 to replace, 5 to delete"),
        "{said}"
    );

    rsync(&["--delete", "--exclude", "*.o"]);
    let said = linerate(&["--delete", "--exclude", "*.o", "-q"]);
    assert_eq!(listing(&by_linerate), listing(&by_rsync), "{said}");
    assert!(by_linerate.join("outside.txt").exists());
    assert!(by_linerate.join("t/junk.o").exists());
    assert!(Path::new("/etc/hostname").exists() || Path::new("/etc/passwd").exists());
}

/// `-i` lists what a run created and replaced in the lines rsync's -i
/// prints for the same change: a file replaced, one new, a link
/// retargeted, a directory made, a path deleted.
#[test]
fn itemize_lists_what_was_created_and_replaced() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let top = src.join("t");
    filter_tree(&top);
    std::os::unix::fs::symlink("a.c", top.join("link")).unwrap();
    random_file(&top.join("gone"), 10, 76);
    let (dst, server) = copied_by_both(&top, &[], &["-a"]);
    random_file(&top.join("a.c"), 150, 77);
    random_file(&top.join("sub/new"), 10, 78);
    fs::create_dir(top.join("made")).unwrap();
    fs::remove_file(top.join("link")).unwrap();
    std::os::unix::fs::symlink("sub/new", top.join("link")).unwrap();
    fs::remove_file(top.join("gone")).unwrap();
    let target = format!("{}:/l", server.addr());
    let out = send(&["-i", "--delete", top.to_str().unwrap(), &target]);
    assert!(out.status.success(), "{}", text(&out));
    let theirs = Command::new("rsync")
        .args(["-ai", "--delete"])
        .arg(&top)
        .arg(format!("{}/", dst.join("r").display()))
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", text(&theirs));
    // rsync's lines of a change of attributes alone are not linerate's.
    let changes = |said: &str| -> Vec<String> {
        let mut v: Vec<String> = said
            .lines()
            .filter(|l| l.starts_with(['>', 'c', 'h', '*']) && l.get(11..12) == Some(" "))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let ours = changes(&text(&out));
    assert_eq!(ours, changes(&text(&theirs)), "{}", text(&out));
    for line in [
        ">f+++++++++ t/sub/new",
        "cd+++++++++ t/made/",
        "*deleting   t/gone",
    ] {
        assert!(ours.iter().any(|l| l == line), "{line:?} in {ours:?}");
    }
    // The link's time column ('t') says whether it was made again in
    // another second than the first copy's: both tools agree (above), the
    // second depends on how long the copies took.
    assert!(
        ours.iter()
            .any(|l| l.starts_with("cLc.") && l.ends_with(" t/link -> sub/new")),
        "{ours:?}"
    );
    assert!(
        ours.iter()
            .any(|l| l.starts_with(">f.") && l.ends_with(" t/a.c")),
        "{ours:?}"
    );
}

/// `-c` decides by contents, as `rsync -c`: a file whose contents changed
/// under the same size and time is sent, where size and time alone miss
/// it; a file of the same contents under another time is not sent, and
/// takes the source's time. Both leave the tree the source is.
#[test]
fn checksum_decides_by_contents_as_rsync_c_does() {
    let _traffic = common::beside_other_traffic();
    use std::os::unix::fs::MetadataExt;
    let src = TempDir::new("src");
    let top = src.join("t");
    filter_tree(&top);
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    let target = format!("{}:/lr", server.addr());
    let by_rsync = dst.join("rs");
    fs::create_dir_all(&by_rsync).unwrap();
    let out = send(&[top.to_str().unwrap(), &target, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    rsync_into(&["-a"], &top, &by_rsync);
    let stale = |copy: &Path| {
        let was = fs::metadata(copy.join("a.c")).unwrap();
        random_file(&copy.join("a.c"), 100, 999);
        set_mtime(&copy.join("a.c"), was.mtime(), was.mtime_nsec() as u32);
    };
    for copy in [dst.join("lr/t"), by_rsync.join("t")] {
        stale(&copy);
        set_mtime(&copy.join("b.c"), 1_000_000_000, 0);
    }
    let report = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend([top.to_str().unwrap(), &target, "--json", "-", "-q"]);
        let out = send(&all);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("json on stdout")
    };
    // By contents: exactly the changed file's 100 bytes.
    let doc = report(&["-c", "-i"]);
    let p = &doc["parameters"];
    assert_eq!(p["compare_contents"], true);
    assert_eq!(p["bytes_needed"], 100, "{doc}");
    assert_eq!(p["replaced"], 1, "{doc}");
    assert_eq!(p["changes"][0]["path"], "t/a.c", "{doc}");
    rsync_into(&["-a", "-c"], &top, &by_rsync);
    // Files alike (rsync here leaves a new directory its own time).
    let in_files = |diffs: Vec<String>| -> Vec<String> {
        diffs
            .into_iter()
            .filter(|d| !top.join(d.split(':').next().unwrap()).is_dir())
            .collect()
    };
    assert_eq!(
        in_files(differences(&top, &by_rsync.join("t"))),
        Vec::<String>::new()
    );
    assert_eq!(differences(&top, &dst.join("lr/t")), Vec::<String>::new());
    // Once alike, a rerun by contents sends nothing.
    assert_eq!(report(&["-c"])["parameters"]["bytes_needed"], 0);
    // Size and time alone miss a change that kept both; -c finds it.
    stale(&dst.join("lr/t"));
    let doc = report(&[]);
    assert_eq!(doc["parameters"]["bytes_needed"], 0, "{doc}");
    assert_eq!(doc["parameters"]["compare_contents"], false);
    assert_eq!(differences(&top, &dst.join("lr/t")).len(), 1);
    assert_eq!(report(&["-c"])["parameters"]["bytes_needed"], 100);
    assert_eq!(differences(&top, &dst.join("lr/t")), Vec::<String>::new());
}

/// The sender's Ctrl-C says "rerun the same command to resume", and it is
/// true with a one-shot receiver too: it waits for the rerun, which sends
/// only what is missing, and the tree arrives byte-identical.
#[test]
fn ctrl_c_then_the_same_command_resumes_into_a_one_shot_receiver() {
    let _traffic = common::beside_other_traffic();
    use std::io::BufRead;
    let src = TempDir::new("src");
    let dst = TempDir::new("dst");
    let top = src.join("t");
    fs::create_dir_all(&top).unwrap();
    random_file(&top.join("big"), 64 << 20, 5);
    random_file(&top.join("small"), 1000, 6);
    let (mut recv, url) = common::oneshot(dst.path());
    // Paced: 64 MiB at 200 Mbit/s take 2.7 s.
    let args = [
        top.to_str().unwrap(),
        url.as_str(),
        "--rate",
        "200M",
        "--block",
        "1M",
    ];
    let mut child = common::linerate_cmd()
        .arg("send")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains(" files, "))),
        "an interval ran"
    );
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let cut = child.wait_with_output().unwrap();
    assert_eq!(cut.status.code(), Some(130), "{}", text(&cut));
    assert!(
        String::from_utf8_lossy(&cut.stderr).contains("rerun the same command"),
        "{}",
        text(&cut)
    );
    let again = send(&args);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("Resumed: "), "{}", text(&again));
    let status = common::wait_exit(&mut recv, std::time::Duration::from_secs(20))
        .expect("recv exits once the transfer is complete");
    assert!(status.success());
    let diffs = common::tree::differences(&top, &dst.join("t"));
    assert!(diffs.is_empty(), "trees differ: {diffs:#?}");
}

/// A symbolic link arrives with its own modification time, as
/// `rsync -a` leaves it (the link's, not its target's).
#[test]
fn symlinks_keep_their_own_modification_time() {
    let _traffic = common::beside_other_traffic();
    use std::os::unix::fs::MetadataExt;
    let src = TempDir::new("src");
    let top = src.join("t");
    fs::create_dir_all(&top).unwrap();
    random_file(&top.join("target"), 100, 1);
    std::os::unix::fs::symlink("target", top.join("link")).unwrap();
    let touched = Command::new("touch")
        .args(["-h", "-d", "@1000000000.5"])
        .arg(top.join("link"))
        .status()
        .unwrap();
    assert!(touched.success());
    let (dst, _server) = copied_by_both(&top, &[], &["-a"]);
    let by_rsync = dst.join("r");
    let mtime = |p: &Path| {
        let m = fs::symlink_metadata(p).unwrap();
        (m.mtime(), m.mtime_nsec())
    };
    let source = mtime(&top.join("link"));
    assert_eq!(source.0, 1_000_000_000);
    assert_eq!(mtime(&dst.join("l/t/link")), source);
    assert_eq!(mtime(&by_rsync.join("t/link")).0, source.0);
}

/// Names of one file stay names of one file, as `rsync -aH` keeps them;
/// the second name carries no data, and a rerun leaves them as they are.
#[test]
fn hard_links_arrive_as_rsync_h_leaves_them() {
    let _traffic = common::beside_other_traffic();
    use std::os::unix::fs::MetadataExt;
    let src = TempDir::new("src");
    let top = src.join("t");
    fs::create_dir_all(top.join("sub")).unwrap();
    random_file(&top.join("data"), 3 << 20, 1);
    fs::hard_link(top.join("data"), top.join("sub/again")).unwrap();
    fs::hard_link(top.join("data"), top.join("third")).unwrap();
    random_file(&top.join("alone"), 100, 2);
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    let target = format!("{}:/l", server.addr());
    let report = src.join("r.json");
    let run = || {
        let out = send(&[
            top.to_str().unwrap(),
            &target,
            "-q",
            "--json",
            report.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_str::<serde_json::Value>(&fs::read_to_string(&report).unwrap()).unwrap()
    };
    let doc = run();
    // The data went once.
    assert_eq!(doc["summary"]["bytes"], (3 << 20) + 100);
    let by_rsync = dst.join("r");
    fs::create_dir_all(&by_rsync).unwrap();
    rsync_into(&["-aH"], &top, &by_rsync);
    let shape = |root: &Path| {
        let ino = |p: &str| fs::metadata(root.join(p)).unwrap().ino();
        let nlink = |p: &str| fs::metadata(root.join(p)).unwrap().nlink();
        (
            ino("t/data") == ino("t/sub/again") && ino("t/data") == ino("t/third"),
            nlink("t/data"),
            nlink("t/alone"),
        )
    };
    assert_eq!(shape(&dst.join("l")), (true, 3, 1));
    assert_eq!(shape(&dst.join("l")), shape(&by_rsync));
    assert_eq!(listing(&dst.join("l")), listing(&by_rsync));
    let doc = run();
    assert_eq!(doc["summary"]["bytes"], 0, "the rerun sent data");
    assert_eq!(shape(&dst.join("l")), (true, 3, 1));
}

fn shell(cmd: &str) {
    let out = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(out.status.success(), "{cmd}: {}", text(&out));
}

/// What one path's owner, mode, extended attributes and ACL read as,
/// relative to `root`.
fn metadata_of(root: &Path, rel: &str) -> String {
    let p = root.join(rel);
    let p = p.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        // getfattr names the path without its leading '/'.
        String::from_utf8_lossy(&out.stdout)
            .replace(p, rel)
            .replace(p.trim_start_matches('/'), rel)
    };
    let mut s = run(&["stat", "-c", "%u:%g %a %F", p]);
    s += &run(&["getfattr", "-h", "-d", "-m", "^user\\.", p]);
    if !fs::symlink_metadata(root.join(rel)).unwrap().is_symlink() {
        s += &run(&["getfacl", "-n", "-p", p]);
    }
    s
}

/// As root, owners (by number with --numeric-ids), extended attributes
/// (-X) and POSIX ACLs (-A), on files, directories and links, arrive as
/// `rsync -aHAX --numeric-ids` leaves them.
#[test]
fn owners_xattrs_and_acls_arrive_as_rsync_leaves_them() {
    let _traffic = common::beside_other_traffic();
    if !common::require_root("owners_xattrs_and_acls_arrive_as_rsync_leaves_them") {
        return;
    }
    let src = TempDir::new("src");
    let top = src.join("t");
    fs::create_dir_all(top.join("sub")).unwrap();
    random_file(&top.join("a"), 3 << 20, 1);
    random_file(&top.join("sub/b"), 100, 2);
    std::os::unix::fs::symlink("a", top.join("l")).unwrap();
    let t = top.to_str().unwrap();
    // ACL entries that ask no group write: a receiver applies its umask to
    // modes (rsync -p does not), and a file's mode bounds its ACL's mask.
    shell(&format!(
        "cd '{t}' && chown 12345:23456 a && chown 34567:45678 sub sub/b && chown -h 5555:6666 l \
         && setfattr -n user.note -v hello a && setfattr -n user.tag -v x sub \
         && setfacl -m u:12345:r,g:23456:r a && setfacl -d -m g:23456:rx sub"
    ));
    let (dst, server) = copied_by_both(
        &top,
        &["-X", "-A", "--numeric-ids"],
        &["-aHAX", "--numeric-ids"],
    );
    let by_rsync = dst.join("r");
    for rel in ["t", "t/a", "t/sub", "t/sub/b", "t/l"] {
        let ours = metadata_of(&dst.join("l"), rel);
        assert_eq!(ours, metadata_of(&by_rsync, rel), "{rel}");
        // Everything below the top was given away from root at the source.
        assert!(
            rel == "t" || !ours.starts_with("0:0 "),
            "{rel} kept no owner: {ours}"
        );
    }
    // Without -X and -A, the attributes stay behind (as rsync without them).
    let target = format!("{}:/plain", server.addr());
    let out = send(&[t, &target, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!metadata_of(&dst.join("plain"), "t/a").contains("user.note"));
}

/// A directory given with a trailing slash sends what it holds into the
/// destination, as rsync does: a dry run lists each path where it lands,
/// the run (with --delete) leaves what rsync leaves, and the top of a
/// daemon's --root keeps its own mode.
#[test]
fn a_trailing_slash_sends_the_contents_as_rsync_does() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("slash-src");
    let top = src.join("t");
    fs::create_dir_all(top.join("sub")).unwrap();
    random_file(&top.join("a"), 1000, 1);
    random_file(&top.join("sub/b"), 100, 2);
    fs::set_permissions(&top, fs::Permissions::from_mode(0o750)).unwrap();
    // Times in the past: rsync 3.5 leaves a directory made within the
    // same second with the time it made it.
    set_mtime(&top.join("sub"), 1_400_000_000, 3);
    set_mtime(&top, 1_500_000_000, 7);
    let dst = TempDir::new("slash-dst");
    for d in ["l/in", "r/in"] {
        fs::create_dir_all(dst.join(d)).unwrap();
        random_file(&dst.join(d).join("extra"), 10, 3);
    }
    let server = Server::with_root(dst.path());
    let slashed = format!("{}/", top.display());
    let target = format!("{}:/l/in", server.addr());
    let dry = send(&["-n", "-i", "--delete", &slashed, &target]);
    assert!(dry.status.success(), "{}", text(&dry));
    let said = text(&dry);
    for line in [
        ">f+++++++++ a",
        "cd+++++++++ sub/",
        ">f+++++++++ sub/b",
        "*deleting   extra",
    ] {
        assert!(said.contains(line), "{line:?} in {said}");
    }
    assert!(!said.contains("t/a"), "{said}");
    let out = send(&["-q", "--delete", &slashed, &target]);
    assert!(out.status.success(), "{}", text(&out));
    rsync_into(&["-a", "--delete"], Path::new(&slashed), &dst.join("r/in"));
    let diff = differences(&dst.join("r/in"), &dst.join("l/in"));
    assert!(diff.is_empty(), "{diff:?}");
    // Into the top of the daemon's root: it keeps its own mode.
    let root_mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let before = root_mode(dst.path());
    let out = send(&["-q", &slashed, &format!("{}:/", server.addr())]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(dst.join("a").is_file() && dst.join("sub/b").is_file());
    assert_eq!(root_mode(dst.path()), before);
}

/// `getfacl` of `rel` under `root`, without the header that names it.
fn acl_of(root: &Path, rel: &str) -> String {
    let p = root.join(rel);
    let out = Command::new("getfacl")
        .args(["-n", "-p", "--omit-header"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "getfacl {}: {}",
        p.display(),
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A sender's ACLs that grant others write (a file's, a small file's and a
/// directory's default ACL) arrive held within the daemon's umask under
/// `serve --root`, as sent with `--acls-as-sent`, and as sent into a
/// one-shot `recv` (rsync -A's habit, for the user's own copy).
#[test]
fn acls_granting_others_write_are_masked_by_a_daemon_unless_it_takes_them_as_sent() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("acl-src");
    let top = src.join("t");
    fs::create_dir_all(top.join("d")).unwrap();
    random_file(&top.join("big"), 3 << 20, 1);
    random_file(&top.join("small"), 100, 2);
    let t = top.to_str().unwrap();
    shell(&format!(
        "cd '{t}' && chmod 0777 big small && setfacl -m u:12345:rwx,g:23456:rwx big small \
         && setfacl -d -m u::rwx,g::rwx,o::rwx,u:12345:rwx d"
    ));
    let paths = ["t/big", "t/small", "t/d"];
    let sent: Vec<String> = paths.iter().map(|p| acl_of(src.path(), p)).collect();
    assert!(sent[0].contains("other::rwx"), "{}", sent[0]);
    let dst = TempDir::new("acl-dst");
    for d in ["masked", "as-sent", "recv"] {
        fs::create_dir_all(dst.join(d)).unwrap();
    }
    let send_to = |target: &str| {
        let out = send(&["-A", "-q", t, target]);
        assert!(out.status.success(), "{}", text(&out));
    };
    let masked = Server::with_root(&dst.join("masked"));
    send_to(&format!("{}:/", masked.addr()));
    let as_sent = Server::with_root_and(&dst.join("as-sent"), &["--acls-as-sent"]);
    send_to(&format!("{}:/", as_sent.addr()));
    let (_recv, url) = common::oneshot(&dst.join("recv"));
    send_to(&url);
    for (i, rel) in paths.iter().enumerate() {
        let got = acl_of(&dst.join("masked"), rel);
        // The test's umask (022) is the daemon's: no write for the group
        // class or others, in the access ACL nor the default one.
        for line in got
            .lines()
            .filter(|l| !l.starts_with("user::") && !l.starts_with("default:user::"))
        {
            let perms = line
                .split_whitespace()
                .next()
                .unwrap_or("")
                .rsplit(':')
                .next()
                .unwrap_or("");
            assert!(
                !perms.contains('w'),
                "{rel} under the daemon: {line}\n{got}"
            );
        }
        assert!(
            got.contains("user:12345:r-x") || got.contains("default:user:12345:r-x"),
            "{rel}: {got}"
        );
        let mode = fs::metadata(dst.join("masked").join(rel))
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o022,
            0,
            "{rel}"
        );
        assert_eq!(
            acl_of(&dst.join("as-sent"), rel),
            sent[i],
            "{rel} with --acls-as-sent"
        );
        assert_eq!(acl_of(&dst.join("recv"), rel), sent[i], "{rel} into recv");
    }
}

/// A sparse file arrives as sparse as `rsync -S` leaves it: a few bytes in
/// a block make a page of data, not a block, and the allocation is within
/// 1 % of the source's.
#[test]
fn sparse_files_keep_their_holes_as_rsync_s_does() {
    let _traffic = common::beside_other_traffic();
    use std::os::unix::fs::{FileExt, MetadataExt};
    let src = TempDir::new("src");
    let top = src.join("t");
    fs::create_dir_all(&top).unwrap();
    let f = fs::File::create(top.join("sparse")).unwrap();
    f.set_len(100 << 20).unwrap();
    f.write_all_at(b"x", 50 << 20).unwrap();
    f.write_all_at(&vec![7u8; 1 << 20], 80 << 20).unwrap();
    drop(f);
    let (dst, _server) = copied_by_both(&top, &[], &["-aS"]);
    let by_rsync = dst.join("r");
    let allocated = |p: &Path| fs::metadata(p).unwrap().blocks() * 512;
    let source = allocated(&top.join("sparse"));
    let ours = allocated(&dst.join("l/t/sparse"));
    let rsyncs = allocated(&by_rsync.join("t/sparse"));
    assert!(
        ours <= source + source / 100,
        "allocated {ours} bytes, the source {source}, rsync -S {rsyncs}"
    );
    assert!(common::tree::differences(&top, &dst.join("l/t")).is_empty());
}

/// A rerun after one file changed says what happened: the others were up
/// to date, one of them needed data, and nothing was resumed (no earlier
/// run was cut short).
#[test]
fn a_rerun_says_how_many_files_were_up_to_date_and_how_many_went() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("src");
    let top = src.join("t");
    filter_tree(&top);
    let dst = TempDir::new("dst");
    let server = Server::with_root(dst.path());
    let target = format!("{}:/s", server.addr());
    let out = send(&[top.to_str().unwrap(), &target, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    random_file(&top.join("a.c"), 150, 99);
    let out = send(&[top.to_str().unwrap(), &target]);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("Up to date: 12 file(s) already at the receiver"),
        "{said}"
    );
    assert!(said.contains(" in 1 of 13 file(s) over "), "{said}");
    assert!(!said.contains("Resumed"), "{said}");
}

/// A file written into a directory whose default ACL narrows what it
/// creates gets the source's mode and no ACL of the directory's, as with
/// rsync -A: the default ACL, not the umask, shapes a new file there, so
/// the receiver cannot take the mode it asked for at creation as set.
#[test]
fn a_directorys_default_acl_does_not_narrow_the_mode_of_what_arrives() {
    let _traffic = common::beside_other_traffic();
    let src = TempDir::new("dacl-src");
    let top = src.join("t");
    fs::create_dir_all(top.join("d")).unwrap();
    random_file(&top.join("d/f"), 100, 3);
    let t = top.to_str().unwrap();
    shell(&format!(
        "cd '{t}' && chmod 0444 d/f && setfacl -d -m u::rwx,g::r-x,o::--- d"
    ));
    let dst = TempDir::new("dacl-dst");
    let server = Server::with_root(dst.path());
    let target = format!("{}:/", server.addr());
    for round in 0..2 {
        let out = send(&["-A", "-q", t, &target]);
        assert!(out.status.success(), "{}", text(&out));
        let mode = fs::metadata(dst.join("t/d/f"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(mode, 0o444, "round {round}: {:o}", mode);
        let got = acl_of(dst.path(), "t/d/f");
        assert!(got.contains("other::r--") && !got.contains("mask"), "{got}");
        // The rerun replaces the file in the directory that now has it.
        random_file(&top.join("d/f"), 120, 4 + round);
        shell(&format!("chmod 0444 '{t}/d/f'"));
    }
}
