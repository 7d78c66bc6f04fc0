//! Reruns land what rsync lands: a seeded generator makes a random tree
//! (files, empty and nested directories, symlinks, hard links, sparse
//! files, modes, times, user xattrs, ACLs and, as root, owners) and
//! changes it between runs (contents, sizes, times, modes, a path's type in
//! every direction, renames, deletions, new hard links, attributes, ACLs
//! and owners); after each change `linerate send -X -A --numeric-ids` and
//! `rsync -aHSAX --numeric-ids` with the same flags (with and without
//! `--delete`, filter rules, trailing slashes and `-c`) copy it into twin
//! destinations, which must be the same tree, attributes and owners too. The seed is printed on
//! failure. CI runs seed 1 for 200 rounds, the same rounds every time;
//! `LINERATE_RERUN_SEED` and `LINERATE_RERUN_ROUNDS` choose others, and
//! `bench/rsync-reruns` runs many seeds for longer.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::tree::{TempDir, differences, random_file, set_mtime};
use common::{Server, send, text};

/// xorshift64*: the same rounds for the same seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        (!v.is_empty()).then(|| &v[self.below(v.len())])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Link,
}

/// Every path under `top` (itself excluded) with its kind, sorted.
fn paths(top: &Path) -> Vec<(PathBuf, Kind)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Kind)>) {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in names {
            let t = fs::symlink_metadata(&p).unwrap().file_type();
            if t.is_symlink() {
                out.push((p, Kind::Link));
            } else if t.is_dir() {
                out.push((p.clone(), Kind::Dir));
                walk(&p, out);
            } else {
                out.push((p, Kind::File));
            }
        }
    }
    let mut out = Vec::new();
    walk(top, &mut out);
    out
}

const NAMES: &[&str] = &["a", "b", "c", "d.o", "e.log", "f", "g.tmp", "h"];
const MODES: &[u32] = &[0o644, 0o600, 0o755, 0o640, 0o444];

/// A time in the past with nanoseconds, never now: both tools set what
/// the source says, and a change of contents always changes it.
fn some_time(rng: &mut Rng) -> (i64, u32) {
    (
        1_500_000_000 + rng.below(200_000_000) as i64,
        rng.below(1_000_000_000) as u32,
    )
}

fn new_file(rng: &mut Rng, p: &Path) {
    let len = match rng.below(4) {
        0 => 0,
        1 => rng.below(100),
        2 => rng.below(20_000),
        _ => 70_000 + rng.below(200_000),
    };
    random_file(p, len, rng.next());
    if rng.chance(15) {
        // A hole in the middle and data after it: a sparse file.
        let f = fs::OpenOptions::new().write(true).open(p).unwrap();
        let end = (len as u64).max(1) + (1 << 20) + rng.below(1 << 20) as u64;
        f.set_len(end).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(b"tail", end - 4).unwrap();
    }
    fs::set_permissions(p, fs::Permissions::from_mode(*rng.pick(MODES).unwrap())).unwrap();
    let (s, ns) = some_time(rng);
    set_mtime(p, s, ns);
}

fn new_link(rng: &mut Rng, p: &Path) {
    let target = match rng.below(3) {
        0 => "a".to_string(),
        1 => format!("../{}", rng.pick(NAMES).unwrap()),
        _ => "missing/nowhere".to_string(),
    };
    symlink(target, p).unwrap();
}

/// A name free in `dir`, or none when all are taken.
fn free_name(rng: &mut Rng, dir: &Path) -> Option<PathBuf> {
    let start = rng.below(NAMES.len());
    (0..NAMES.len())
        .map(|i| dir.join(NAMES[(start + i) % NAMES.len()]))
        .find(|p| fs::symlink_metadata(p).is_err())
}

fn new_dir(rng: &mut Rng, p: &Path, depth: usize) {
    fs::create_dir(p).unwrap();
    let entries = if depth > 2 { 0 } else { rng.below(4) };
    for _ in 0..entries {
        let Some(q) = free_name(rng, p) else { break };
        match rng.below(5) {
            0 => new_dir(rng, &q, depth + 1),
            1 => new_link(rng, &q),
            _ => new_file(rng, &q),
        }
    }
    if rng.chance(30) {
        fs::set_permissions(p, fs::Permissions::from_mode(0o750)).unwrap();
    }
}

fn remove(p: &Path) {
    let meta = fs::symlink_metadata(p).unwrap();
    if meta.is_dir() {
        fs::remove_dir_all(p).unwrap();
    } else {
        fs::remove_file(p).unwrap();
    }
}

/// One random change to the tree under `top`; what it did, for the log.
fn mutate(rng: &mut Rng, top: &Path) -> String {
    let all = paths(top);
    let dirs: Vec<PathBuf> = std::iter::once(top.to_path_buf())
        .chain(all.iter().filter(|p| p.1 == Kind::Dir).map(|p| p.0.clone()))
        .collect();
    let files: Vec<PathBuf> = all
        .iter()
        .filter(|p| p.1 == Kind::File)
        .map(|p| p.0.clone())
        .collect();
    let any: Vec<PathBuf> = all.iter().map(|p| p.0.clone()).collect();
    let rel = |p: &Path| p.strip_prefix(top).unwrap().display().to_string();
    let dir = rng.pick(&dirs).unwrap().clone();
    match rng.below(17) {
        14 => {
            let Some(p) = rng.pick(&any).cloned().filter(|p| !is_link(p)) else {
                return "none".into();
            };
            let name = format!("user.{}", rng.pick(&["note", "tag"]).unwrap());
            if rng.chance(30) {
                shell(&["setfattr", "-x", &name], &p, true);
                format!("removed {name} of {}", rel(&p))
            } else {
                let value = format!("v{}", rng.below(1000));
                shell(&["setfattr", "-n", &name, "-v", &value], &p, false);
                format!("set {name}={value} on {}", rel(&p))
            }
        }
        15 => {
            let Some(p) = rng.pick(&any).cloned().filter(|p| !is_link(p)) else {
                return "none".into();
            };
            let id = 1000 + rng.below(3);
            let spec = match rng.below(4) {
                0 => vec!["-b".to_string()],
                1 => vec!["-m".to_string(), format!("u:{id}:r-x,g:{id}:rw-")],
                2 if p.is_dir() => vec!["-d".to_string(), "-m".to_string(), format!("u:{id}:rwx")],
                _ => vec!["-m".to_string(), format!("u:{id}:r--")],
            };
            let mut args = vec!["setfacl"];
            args.extend(spec.iter().map(String::as_str));
            shell(&args, &p, false);
            format!("setfacl {} {}", spec.join(" "), rel(&p))
        }
        16 if running_as_root() => {
            let Some(p) = rng.pick(&any).cloned() else {
                return "none".into();
            };
            let owner = format!("{}:{}", 2000 + rng.below(3), 3000 + rng.below(3));
            shell(&["chown", "-h", &owner], &p, false);
            format!("chown {owner} {}", rel(&p))
        }
        0 | 1 => {
            let Some(p) = free_name(rng, &dir) else {
                return "none".into();
            };
            new_file(rng, &p);
            format!("new file {}", rel(&p))
        }
        2 => {
            let Some(p) = free_name(rng, &dir) else {
                return "none".into();
            };
            new_dir(rng, &p, 1);
            format!("new dir {}", rel(&p))
        }
        3 => {
            let Some(p) = free_name(rng, &dir) else {
                return "none".into();
            };
            new_link(rng, &p);
            format!("new link {}", rel(&p))
        }
        4 | 5 => {
            let Some(p) = rng.pick(&files).cloned() else {
                return "none".into();
            };
            new_file(rng, &p);
            format!("rewrote {}", rel(&p))
        }
        6 => {
            let Some(p) = rng.pick(&files).cloned() else {
                return "none".into();
            };
            let mode = *rng.pick(MODES).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
            let (s, ns) = some_time(rng);
            set_mtime(&p, s, ns);
            format!("chmod {mode:o} and touched {}", rel(&p))
        }
        7 => {
            let Some(p) = rng.pick(&any).cloned() else {
                return "none".into();
            };
            remove(&p);
            format!("deleted {}", rel(&p))
        }
        8 => {
            // A path changes type: to a file, a directory or a link.
            let Some(p) = rng.pick(&any).cloned() else {
                return "none".into();
            };
            let was = fs::symlink_metadata(&p).unwrap().file_type();
            remove(&p);
            let to = match (rng.below(2), was.is_dir(), was.is_symlink()) {
                (0, false, _) => "dir",
                (0, true, _) => "file",
                (_, _, false) => "link",
                (_, _, true) => "file",
            };
            match to {
                "dir" => new_dir(rng, &p, 1),
                "file" => new_file(rng, &p),
                _ => new_link(rng, &p),
            }
            format!("{} became a {to}", rel(&p))
        }
        9 => {
            let Some(p) = rng.pick(&any).cloned() else {
                return "none".into();
            };
            let Some(q) = free_name(rng, &dir) else {
                return "none".into();
            };
            if q.starts_with(&p) {
                return "none".into();
            }
            fs::rename(&p, &q).unwrap();
            format!("renamed {} to {}", rel(&p), rel(&q))
        }
        10 => {
            let Some(p) = rng.pick(&files).cloned() else {
                return "none".into();
            };
            let Some(q) = free_name(rng, &dir) else {
                return "none".into();
            };
            fs::hard_link(&p, &q).unwrap();
            format!("hard link {} to {}", rel(&q), rel(&p))
        }
        11 => {
            let links: Vec<PathBuf> = all
                .iter()
                .filter(|p| p.1 == Kind::Link)
                .map(|p| p.0.clone())
                .collect();
            let Some(p) = rng.pick(&links).cloned() else {
                return "none".into();
            };
            fs::remove_file(&p).unwrap();
            new_link(rng, &p);
            format!("retargeted {}", rel(&p))
        }
        12 => {
            let Some(p) = rng.pick(&dirs[1..]).cloned() else {
                return "none".into();
            };
            let mode = if rng.chance(50) { 0o755 } else { 0o700 };
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
            format!("chmod {mode:o} {}", rel(&p))
        }
        _ => {
            // Contents changed under the same size and time: only -c sees it.
            let Some(p) = rng.pick(&files).cloned() else {
                return "none".into();
            };
            let m = fs::metadata(&p).unwrap();
            if m.len() == 0 || m.nlink() > 1 {
                return "none".into();
            }
            random_file(&p, m.len() as usize, rng.next());
            set_mtime(&p, m.mtime(), m.mtime_nsec() as u32);
            format!("same size and time, new contents: {}", rel(&p))
        }
    }
}

fn is_link(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn running_as_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `args PATH`, which must succeed unless `may_fail` (removing what is
/// not there).
fn shell(args: &[&str], p: &Path, may_fail: bool) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .arg(p)
        .output()
        .unwrap_or_else(|e| panic!("{} (apt install attr acl): {e}", args[0]));
    assert!(out.status.success() || may_fail, "{args:?}: {}", text(&out));
}

/// What `args` print run in `dir` on `.`: the same for two twin trees.
fn listed(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .arg(".")
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The itemized changes in a run's output (`rsync -i`'s lines, and
/// linerate's in the same shape): path to code, without what follows
/// ` -> ` or ` => `.
fn itemized(out: &str) -> BTreeMap<String, String> {
    let mut changes = BTreeMap::new();
    for line in out.lines() {
        let Some((code, rest)) = line.split_at_checked(11) else {
            continue;
        };
        let b = code.as_bytes();
        let shaped = code.trim_end() == "*deleting"
            || (b"<>ch.".contains(&b[0])
                && b"fdLDS".contains(&b[1])
                && b[2..].iter().all(|c| b"+.cstpoguaxTn ".contains(c)));
        let Some(path) = rest.strip_prefix(' ').filter(|_| shaped) else {
            continue;
        };
        let path = path.split(" -> ").next().unwrap();
        let path = path.split(" => ").next().unwrap();
        let code = code.trim_end().to_string();
        let path = path.trim_start_matches("./");
        // A path of another type removed and made again keeps its new code.
        changes.insert(path.to_string(), code);
    }
    changes
}

/// Where the itemized changes of rsync (`theirs`) and linerate (`ours`)
/// disagree: every change either lists the other lists with the same code,
/// but for rsync's lines of attributes alone (`.f...p.....`, which
/// linerate does not list) and for what a path of a new type replaced
/// (rsync lists a directory's contents removed for a file, not the
/// directory; linerate the path it removed), and for what a directory
/// deleted held (linerate lists the directory alone). A hard link's `h` reads as
/// `>`: which name of a group carries the data is each tool's choice, and
/// where rsync sends a group's changed first name and links a name that
/// was up to date to it (`hf` and nothing else), linerate keeps that name
/// and links the first to it: the same tree, one file fewer sent
/// (docs/guide.md#reruns). rsync also lists an existing name of a group
/// whose file changed attributes or was sent under its first name
/// (`hf........x`, `hf.st......`); linerate lists the file once, under
/// the name it wrote, and the trees (contents, link counts, attributes)
/// are compared in full besides.
fn itemized_differences(theirs: &str, ours: &str, grouped_alike: bool) -> Vec<String> {
    let (theirs, ours) = (itemized(theirs), itemized(ours));
    let created: Vec<String> = theirs
        .iter()
        .chain(&ours)
        .filter(|(_, code)| code.ends_with("+++++++++"))
        .map(|(path, _)| path.trim_end_matches('/').to_string())
        .collect();
    let replaced = |path: &str| {
        let path = path.trim_end_matches('/');
        created
            .iter()
            .any(|c| path == c || path.starts_with(&format!("{c}/")))
    };
    // A directory deleted is one line of linerate's, as it counts once;
    // rsync lists what it held too.
    let deleted_dirs: Vec<&String> = ours
        .iter()
        .filter(|(path, code)| *code == "*deleting" && path.ends_with('/'))
        .map(|(path, _)| path)
        .collect();
    let mut out = Vec::new();
    let paths: std::collections::BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    for path in paths {
        let (t, o) = (theirs.get(path), ours.get(path));
        let deleting = |c: Option<&String>| c.is_some_and(|c| c == "*deleting");
        if (deleting(t) || deleting(o)) && replaced(path) {
            continue;
        }
        match (t, o) {
            (Some(t), Some(o)) if same_change(t, o) => {}
            // Where the copies' hard-link groups differed before the run (a
            // round with rules leaves the names they exclude as they were),
            // a name linked now had another file in each: its letters
            // compare each copy's old file.
            (Some(t), Some(o)) if !grouped_alike && t.starts_with('h') && o.starts_with('h') => {}
            // The destination itself, made when the run is admitted.
            _ if path.is_empty() => {}
            (Some(t), None) if t.starts_with('.') => {}
            (Some(c), None) | (None, Some(c)) if c.starts_with('h') && !c.contains('+') => {}
            // A link or directory where a hard link's name comes: rsync
            // compares the name with what was there; linerate removed it
            // and lists the name new.
            (Some(t), Some(o)) if t.starts_with('h') && o == "hf+++++++++" => {}
            (Some(t), None)
                if t == "*deleting" && deleted_dirs.iter().any(|d| path.starts_with(*d)) => {}
            _ => out.push(format!(
                "-i for {path}: rsync {}, linerate {}",
                t.map_or("nothing", |t| t.as_str()),
                o.map_or("nothing", |o| o.as_str())
            )),
        }
    }
    out
}

/// Runs `cmd` in a process group of its own for at most `limit`: its
/// output, or None once the limit passed and the group was killed.
fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Option<std::process::Output> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rsync (apt install rsync)");
    let pid = child.id() as i32;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done_tx.send(());
        out
    });
    let finished = done_rx.recv_timeout(limit).is_ok();
    if !finished {
        // SAFETY: killpg has no memory preconditions; the group is the
        // one this function started.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
    }
    let out = waiter.join().expect("the waiting thread").ok()?;
    finished.then_some(out)
}

/// rsync -aHSAXi with `flags`, from `source` to `dest`. rsync 3.5.0 can
/// deadlock with incremental recursion where it cannot make way for a
/// hard-linked file over a directory holding what the rules keep (seed 9,
/// round 251: its three processes wait in poll for ever); then it is
/// killed and run again with --no-inc-recursive, which lands the same, and
/// `hung` is set: the lines it lists are then not its first run's.
fn rsync_within(
    flags: &[&str],
    source: &str,
    dest: &str,
    hung: &std::cell::Cell<bool>,
) -> std::process::Output {
    let limit = std::time::Duration::from_secs(60);
    let run = |extra: &[&str]| {
        output_within(
            Command::new("rsync")
                .arg("-aHSAXi")
                .args(extra)
                .args(flags)
                .arg(source)
                .arg(dest),
            limit,
        )
    };
    run(&[]).unwrap_or_else(|| {
        hung.set(true);
        run(&["--no-inc-recursive"]).expect("rsync --no-inc-recursive ends within 60 s")
    })
}

/// Whether rsync failed a run on its own: rsync 3.5 reads the default ACL
/// of what it replaces by its old name, and a directory turned file can
/// answer EACCES; it fails that run (code 23) and a second run lands the
/// tree.
fn stumbled(rsync: &std::process::Output) -> bool {
    rsync.status.code() == Some(23) && text(rsync).contains("get_acl: sys_acl_get_file")
}

/// Whether rsync's code `theirs` and linerate's `ours` say the same of a
/// path. Where either is a hard link's name (`h`), the data's letter is
/// `>`, and the letters rsync gives a group's first name alone are left
/// out: `c` (rsync -c compares that name's contents), `a` and `x` (rsync
/// reads the others' attributes only now and then).
fn same_change(theirs: &str, ours: &str) -> bool {
    if theirs == ours {
        return true;
    }
    if !theirs.starts_with('h') && !ours.starts_with('h') {
        return false;
    }
    // rsync prints a name the same in every letter with spaces.
    let plain = |code: &str| -> String {
        format!("{code:.<11}")
            .chars()
            .enumerate()
            .map(|(i, c)| match (i, c) {
                (0, 'h') => '>',
                (2, 'c') | (9, 'a') | (10, 'x') | (_, ' ') => '.',
                _ => c,
            })
            .collect()
    };
    plain(theirs) == plain(ours)
}

/// Owners, user xattrs and ACLs of every path under `a` that differ under
/// `b`, line by line.
fn attribute_differences(a: &Path, b: &Path) -> Vec<String> {
    let views: [&[&str]; 3] = [
        &["find", "-printf", "%p %U:%G\\n"],
        &["getfattr", "-R", "-h", "-d", "-m", "^user\\."],
        &["getfacl", "-R", "-P", "-n", "-p"],
    ];
    let mut out = Vec::new();
    for v in views {
        let sorted = |d: &Path| {
            let mut l: Vec<String> = listed(d, v).lines().map(str::to_string).collect();
            if v[0] == "find" {
                l.sort();
            }
            l
        };
        let (x, y) = (sorted(a), sorted(b));
        if x != y {
            let first = x
                .iter()
                .zip(&y)
                .position(|(p, q)| p != q)
                .unwrap_or(x.len().min(y.len()));
            out.push(format!(
                "{}: rsync {:?} != linerate {:?}",
                v[0],
                &x[first.saturating_sub(2)..(first + 3).min(x.len())],
                &y[first.saturating_sub(2)..(first + 3).min(y.len())]
            ));
        }
    }
    out
}

/// Dates every directory and link under `top` (and `top`) in the past:
/// rsync leaves a directory or link whose source time is within the
/// second it made it at its own time (it takes the same second for the
/// same time), which no tree of the past shows.
fn date_in_the_past(rng: &mut Rng, top: &Path) {
    let recent = |p: &Path| {
        let m = fs::symlink_metadata(p).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        m.mtime() >= now - 2
    };
    let stale: Vec<PathBuf> = std::iter::once(top.to_path_buf())
        .chain(
            paths(top)
                .into_iter()
                .filter(|p| p.1 != Kind::File)
                .map(|p| p.0),
        )
        .filter(|p| recent(p))
        .collect();
    // Links first: touching a link never touches its directory.
    for p in stale.iter().rev() {
        let (s, ns) = some_time(rng);
        let out = Command::new("touch")
            .args(["-h", "-d", &format!("@{s}.{ns:09}")])
            .arg(p)
            .output()
            .unwrap();
        assert!(out.status.success(), "touch: {}", text(&out));
    }
}

/// The flags of one round, as both tools spell them.
#[derive(Clone, Copy)]
struct Flags {
    delete: bool,
    checksum: bool,
    /// `SRC/`: the contents go into the destination named for it.
    slash: bool,
    rules: &'static [&'static str],
}

const RULE_SETS: &[&[&str]] = &[
    &[],
    &["--exclude", "*.o"],
    &[
        "--include",
        "e.log",
        "--exclude",
        "*.log",
        "--exclude",
        "*.tmp",
    ],
    &["--exclude", "c/"],
];

impl Flags {
    fn random(rng: &mut Rng) -> Flags {
        Flags {
            delete: rng.chance(50),
            checksum: rng.chance(20),
            slash: rng.chance(50),
            rules: RULE_SETS[rng.below(RULE_SETS.len())],
        }
    }

    fn common(&self) -> Vec<&'static str> {
        // A directory that became a file or link goes with --delete or
        // --force, in both (without either, rsync keeps a non-empty one
        // and fails; see the test of that below).
        let mut v = vec![
            if self.delete { "--delete" } else { "--force" },
            "--numeric-ids",
        ];
        if self.checksum {
            v.push("-c");
        }
        v.extend_from_slice(self.rules);
        v
    }
}

/// The names under `top` of each file that `source` has too, with the
/// others of them that are the same file (hard links).
fn same_file_names(top: &Path, source: &Path) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let mut by_inode: BTreeMap<u64, Vec<PathBuf>> = BTreeMap::new();
    for (x, kind) in paths(top) {
        let rel = x.strip_prefix(top).unwrap().to_path_buf();
        if kind == Kind::File && source.join(&rel).is_file() {
            by_inode
                .entry(fs::metadata(&x).unwrap().ino())
                .or_default()
                .push(rel);
        }
    }
    by_inode
        .into_values()
        .flat_map(|names| names.clone().into_iter().map(move |n| (n, names.clone())))
        .collect()
}

/// What differs between the two copies, beyond [`differences`]: which of
/// the source's names are one file (hard links, where `links`; a name the
/// source no longer has, left without --delete, may be a name of another
/// copy's file in each) and allocation (sparse files, within 1 % or a few
/// blocks).
fn more_differences(a: &Path, b: &Path, source: &Path, links: bool) -> Vec<String> {
    let mut out = Vec::new();
    if links {
        let (na, nb) = (same_file_names(a, source), same_file_names(b, source));
        for (name, with) in &na {
            if nb.get(name) != Some(with) {
                out.push(format!(
                    "{}: one file with {with:?} != {:?}",
                    name.display(),
                    nb.get(name)
                ));
            }
        }
    }
    for (x, kind) in paths(a) {
        let rel = x.strip_prefix(a).unwrap();
        let y = b.join(rel);
        if kind != Kind::File || !y.is_file() {
            continue;
        }
        let (mx, my) = (fs::metadata(&x).unwrap(), fs::metadata(&y).unwrap());
        let (ba, bb) = (mx.blocks() * 512, my.blocks() * 512);
        if ba.abs_diff(bb) > (ba.max(bb) / 100).max(16 << 10) {
            out.push(format!("{}: allocated {ba} != {bb}", rel.display()));
        }
    }
    out
}

#[test]
fn reruns_leave_what_rsync_leaves_on_random_trees() {
    let _traffic = common::beside_other_traffic();
    let seed: u64 = std::env::var("LINERATE_RERUN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let rounds: usize = std::env::var("LINERATE_RERUN_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    eprintln!("seed {seed} (LINERATE_RERUN_SEED replays it), {rounds} rounds");
    let mut rng = Rng(seed | 1);
    let src = TempDir::new("rerun-src");
    let top = src.join("t");
    new_dir(&mut rng, &top, 0);
    for _ in 0..6 {
        mutate(&mut rng, &top);
    }
    let dst = TempDir::new("rerun-dst");
    let server = Server::with_root_and(dst.path(), &["--acls-as-sent"]);
    let (ours, theirs) = (dst.join("l"), dst.join("r"));
    fs::create_dir_all(&theirs).unwrap();
    let target = format!("{}:/l", server.addr());
    let mut log = Vec::new();
    let started = std::time::Instant::now();
    for round in 0..rounds {
        if round % 50 == 0 {
            eprintln!("round {round} at {:.1} s", started.elapsed().as_secs_f64());
        }
        let changes = 1 + rng.below(3);
        for _ in 0..changes {
            log.push(format!("round {round}: {}", mutate(&mut rng, &top)));
        }
        date_in_the_past(&mut rng, &top);
        let flags = Flags::random(&mut rng);
        // With a trailing slash, the same tree lands by naming where.
        let (source, ours_at, theirs_at) = if flags.slash {
            (
                format!("{}/", top.display()),
                format!("{target}/t"),
                format!("{}/t/", theirs.display()),
            )
        } else {
            (
                top.display().to_string(),
                target.clone(),
                format!("{}/", theirs.display()),
            )
        };
        let linerate = |flags: &[&str]| {
            let mut args = flags.to_vec();
            args.extend(["-X", "-A", "-i", &source, &ours_at]);
            (send(&args), args.join(" "))
        };
        let rsync_hung = std::cell::Cell::new(false);
        let rsync = |flags: &[&str]| rsync_within(flags, &source, &theirs_at, &rsync_hung);
        let mut itemize_diff = Vec::new();
        let groups = |copy: &Path| match copy.join("t") {
            t if t.is_dir() => same_file_names(&t, &top),
            _ => BTreeMap::new(),
        };
        let grouped_alike = groups(&theirs) == groups(&ours);
        let (ours_out, said) = linerate(&flags.common());
        let theirs_out = rsync(&flags.common());
        let context = || {
            format!(
                "seed {seed}, round {round}, send {said}\nlinerate said:\n{}\n{}",
                text(&ours_out),
                log.join("\n")
            )
        };
        if theirs_out.status.code() == Some(23)
            && text(&theirs_out).contains("cannot delete non-empty directory")
        {
            // A directory that became a file or link holds what the rules
            // keep: rsync leaves it and fails; so must linerate, by name.
            // A run without the rules then replaces it in both.
            assert!(
                !ours_out.status.success()
                    && text(&ours_out).contains("which the --exclude rules keep"),
                "rsync refused, linerate: {}\n{}",
                text(&ours_out),
                context()
            );
            // Both refused (rsync after the rest of the run, linerate at
            // that path: docs/guide.md#reruns); again without the rules.
            let unruled = Flags {
                delete: true,
                rules: &[],
                ..flags
            }
            .common();
            let (again, _) = linerate(&unruled);
            assert!(again.status.success(), "{}\n{}", text(&again), context());
            let again = rsync(&unruled);
            let again = if stumbled(&again) {
                rsync(&unruled)
            } else {
                again
            };
            assert!(
                again.status.success(),
                "rsync: {}\n{}",
                text(&again),
                context()
            );
        } else {
            assert!(
                ours_out.status.success(),
                "{}\n{}",
                text(&ours_out),
                context()
            );
            let stumbled = stumbled(&theirs_out);
            let theirs_out = if stumbled {
                rsync(&flags.common())
            } else {
                theirs_out
            };
            assert!(
                theirs_out.status.success(),
                "rsync: {}\n{}",
                text(&theirs_out),
                context()
            );
            // A run rsync had to repeat listed its changes over two runs.
            if !stumbled && !rsync_hung.get() {
                itemize_diff =
                    itemized_differences(&text(&theirs_out), &text(&ours_out), grouped_alike);
                if !itemize_diff.is_empty() {
                    itemize_diff.push(format!(
                        "rsync -i said:\n{}\nlinerate -i said:\n{}",
                        text(&theirs_out),
                        text(&ours_out)
                    ));
                }
            }
        }
        let (theirs, ours) = (theirs.join("t"), ours.join("t"));
        // A directory the source lacks (or has as a file now, left out by
        // the rules) that stays for what the rules keep in it has the time
        // of its last change, in each copy its own.
        let mut diff: Vec<String> = differences(&theirs, &ours)
            .into_iter()
            .filter(|d| {
                d.strip_suffix(": mtime differs").is_none_or(|rel| {
                    fs::symlink_metadata(top.join(rel)).is_ok_and(|m| m.is_dir())
                        || !theirs.join(rel).is_dir()
                })
            })
            .collect();
        // Names of a hard-linked file that the rules leave out stay with
        // the file they were, which follows rsync's choice of the group's
        // first name (a directory's files before its subdirectories): the
        // link counts are compared in rounds without rules
        // (docs/guide.md#reruns).
        diff.extend(more_differences(
            &theirs,
            &ours,
            &top,
            flags.rules.is_empty(),
        ));
        diff.extend(attribute_differences(&theirs, &ours));
        diff.extend(itemize_diff);
        if !diff.is_empty() {
            // Which of the two has the source's contents.
            for d in diff.clone() {
                if let Some(rel) = d.strip_suffix(": contents differ") {
                    let source = fs::read(top.join(rel)).ok();
                    diff.push(format!(
                        "{rel}: rsync's is the source's: {}, linerate's: {}",
                        fs::read(theirs.join(rel)).ok() == source,
                        fs::read(ours.join(rel)).ok() == source
                    ));
                }
            }
            let ls = |p: &Path| {
                let out = Command::new("ls")
                    .args(["-laiR", "--time-style=full-iso"])
                    .arg(p)
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            panic!(
                "{}\n{}\nthe source:\n{}\nrsync left:\n{}\nlinerate left:\n{}",
                diff.join("\n"),
                context(),
                ls(&top),
                ls(&theirs),
                ls(&ours)
            );
        }
    }
}
