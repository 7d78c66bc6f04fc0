//! A transfer's verdict names the disk that held it back: a real ext4 file
//! system on a loop device, throttled by the kernel's block I/O
//! controller. With direct I/O the throttle is one end's process's, so it
//! meets the stream threads and not a flusher; buffered, it is the
//! device's own, with a small share of the page cache for the device, so
//! the kernel holds the writers to the disk's pace as a slow or remote
//! file system's would (root; runs in CI).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::linerate;
use common::tree::{TempDir, random_file};

/// Bytes per second the throttled end may read or write.
const THROTTLE_BPS: u64 = 16 << 20;
/// About three seconds at the throttle: long enough to judge, short for CI.
const DATA_BYTES: usize = 48 << 20;
/// The page cache's share of dirty pages for the throttled device: a
/// second of its writes, so writers meet the disk at once.
const DIRTY_LIMIT_BYTES: u64 = 16 << 20;

fn sh(cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

fn checked(cmd: &str, args: &[&str]) -> String {
    let out = sh(cmd, args);
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// An ext4 file system on a loop device, and a block I/O cgroup whose
/// processes read or write it at no more than [`THROTTLE_BPS`]. Everything
/// is undone when dropped, also when the test fails.
struct ThrottledDisk {
    _image_dir: TempDir,
    mount: TempDir,
    loop_dev: String,
    cgroup: Option<PathBuf>,
    /// The device's throttle is the root cgroup's (v1), to be lifted.
    root_throttle: bool,
}

impl ThrottledDisk {
    fn new(tag: &str, which: &str) -> ThrottledDisk {
        let image_dir = TempDir::new(&format!("{tag}-img"));
        let image = image_dir.join("disk.img");
        fs::File::create(&image)
            .and_then(|f| f.set_len(256 << 20))
            .expect("image file");
        let image = image.to_str().unwrap().to_string();
        let loop_dev = checked("losetup", &["-f", "--show", &image]);
        let mut disk = ThrottledDisk {
            _image_dir: image_dir,
            mount: TempDir::new(&format!("{tag}-mnt")),
            loop_dev,
            cgroup: None,
            root_throttle: false,
        };
        checked("mkfs.ext4", &["-q", "-F", &disk.loop_dev]);
        let mount = disk.mount.path().to_str().unwrap().to_string();
        checked("mount", &[&disk.loop_dev, &mount]);
        disk.cgroup = Some(throttle_cgroup(tag, &disk.dev(), which));
        disk
    }

    /// A disk whose every write, the flusher's included, goes at
    /// [`THROTTLE_BPS`], and whose share of dirty pages is small: buffered
    /// writers block on it, whichever process they are.
    fn writeback_throttled(tag: &str) -> ThrottledDisk {
        let mut disk = ThrottledDisk::new(tag, "write");
        let dev = disk.dev();
        if let Some(cg) = disk.cgroup.take() {
            let _ = fs::remove_dir(cg);
        }
        let v1_root = Path::new("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device");
        if v1_root.exists() {
            fs::write(v1_root, format!("{dev} {THROTTLE_BPS}")).expect("throttle the device");
            disk.root_throttle = true;
        } else {
            // v2 charges writeback to the cgroup that dirtied the pages.
            disk.cgroup = Some(throttle_cgroup(tag, &dev, "write"));
        }
        let bdi = Path::new("/sys/class/bdi").join(&dev);
        // Kernels before 6.2 have no max_bytes: 1 % of the dirty limit then.
        let limited = fs::write(bdi.join("strict_limit"), "1").is_ok()
            && (fs::write(bdi.join("max_bytes"), DIRTY_LIMIT_BYTES.to_string()).is_ok()
                || fs::write(bdi.join("max_ratio"), "1").is_ok());
        assert!(limited, "cannot limit the dirty pages of {}", bdi.display());
        disk
    }

    /// The device's MAJ:MIN.
    fn dev(&self) -> String {
        checked("lsblk", &["-dno", "MAJ:MIN", &self.loop_dev])
    }

    fn path(&self) -> &Path {
        self.mount.path()
    }

    /// Runs `linerate ARGS` as a process of the throttled cgroup, if the
    /// throttle is one.
    fn linerate_in(&self, args: &[&str]) -> Command {
        let Some(cgroup) = &self.cgroup else {
            let mut c = Command::new(linerate());
            c.args(args);
            return c;
        };
        let procs = cgroup.join("cgroup.procs");
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(procs)
            .arg(linerate())
            .args(args);
        c
    }
}

impl Drop for ThrottledDisk {
    fn drop(&mut self) {
        if self.root_throttle {
            let _ = fs::write(
                "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device",
                format!("{} 0", self.dev()),
            );
        }
        let _ = sh("umount", &[self.mount.path().to_str().unwrap()]);
        let _ = sh("losetup", &["-d", &self.loop_dev]);
        if let Some(cg) = &self.cgroup {
            let _ = fs::remove_dir(cg);
        }
    }
}

/// A block I/O cgroup (v1 blkio where mounted, else v2 io.max) limiting
/// `which` ("read" or "write") on device `dev` (MAJ:MIN).
fn throttle_cgroup(tag: &str, dev: &str, which: &str) -> PathBuf {
    let name = format!("linerate-test-{tag}-{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup/blkio");
    let v2 = Path::new("/sys/fs/cgroup");
    let (dir, file, line) = if v1.join("blkio.throttle.write_bps_device").exists() {
        (
            v1.join(&name),
            format!("blkio.throttle.{which}_bps_device"),
            format!("{dev} {THROTTLE_BPS}"),
        )
    } else if fs::read_to_string(v2.join("cgroup.controllers")).is_ok_and(|c| c.contains("io")) {
        let _ = fs::write(v2.join("cgroup.subtree_control"), "+io");
        let key = if which == "read" { "rbps" } else { "wbps" };
        (
            v2.join(&name),
            "io.max".to_string(),
            format!("{dev} {key}={THROTTLE_BPS}"),
        )
    } else {
        panic!(
            "this kernel offers no block I/O cgroup (v1 blkio or v2 io) to throttle a disk with"
        );
    };
    fs::create_dir_all(&dir).expect("create cgroup");
    fs::write(dir.join(&file), line).expect("set the throttle");
    dir
}

fn verdict_of(json: &Path) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(json).expect("result JSON")).expect("parse result");
    let v = doc["summary"]["verdict"].clone();
    // Shown with --nocapture: the guide quotes these sentences.
    eprintln!("verdict {}: {}", v["limit"], v["sentence"]);
    v
}

fn assert_sent(out: &Output) {
    assert!(
        out.status.success(),
        "send failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_slow_destination_disk_is_named() {
    if !common::require_root("a_slow_destination_disk_is_named") {
        return;
    }
    let disk = ThrottledDisk::new("slowdst", "write");
    common::quiet_and_busy(&|host| {
        let dest = disk.path().join(host);
        let (_recv, url) = common::oneshot_by(disk.linerate_in(&["recv", dest.to_str().unwrap()]));
        let json = disk.path().join(format!("{host}.json"));
        let size = DATA_BYTES.to_string();
        let out = common::run(&[
            "send",
            "--from-memory",
            &size,
            "--direct",
            "--json",
            json.to_str().unwrap(),
            url.trim(),
        ]);
        assert_sent(&out);
        let v = verdict_of(&json);
        assert_eq!(v["limit"], "destination_disk", "{host} host: {v}");
        assert_eq!(v["side"], "receiver", "{host} host: {v}");
        assert!(
            v["evidence"]["destination_write_share"].as_f64().unwrap() > 0.5,
            "{host} host: {v}"
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("writing the destination"));
    });
}

#[test]
fn a_slow_source_disk_is_named() {
    if !common::require_root("a_slow_source_disk_is_named") {
        return;
    }
    let disk = ThrottledDisk::new("slowsrc", "read");
    let src = disk.path().join("source.bin");
    random_file(&src, DATA_BYTES, 7);
    common::quiet_and_busy(&|host| {
        let dest = TempDir::new("slowsrc-dst");
        let (_recv, url) = common::oneshot(dest.path());
        let json = dest.join("result.json");
        let out = disk
            .linerate_in(&[
                "send",
                src.to_str().unwrap(),
                "--direct",
                "--skip-writes",
                "-q",
                "--json",
                json.to_str().unwrap(),
                &url,
            ])
            .output()
            .expect("run send");
        assert_sent(&out);
        let v = verdict_of(&json);
        assert_eq!(v["limit"], "source_disk", "{host} host: {v}");
        assert_eq!(v["side"], "sender", "{host} host: {v}");
        assert!(
            v["evidence"]["source_read_share"].as_f64().unwrap() > 0.5,
            "{host} host: {v}"
        );
    });
}

#[test]
fn a_slow_destination_disk_written_through_the_page_cache_is_named() {
    if !common::require_root("a_slow_destination_disk_written_through_the_page_cache_is_named") {
        return;
    }
    let disk = ThrottledDisk::writeback_throttled("slowbuf");
    common::quiet_and_busy(&|host| {
        let dest = disk.path().join(host);
        let (_recv, url) = common::oneshot_by(disk.linerate_in(&["recv", dest.to_str().unwrap()]));
        let json = disk.path().join(format!("{host}.json"));
        let size = DATA_BYTES.to_string();
        let out = common::run(&[
            "send",
            "--from-memory",
            &size,
            "--json",
            json.to_str().unwrap(),
            url.trim(),
        ]);
        assert_sent(&out);
        let v = verdict_of(&json);
        assert_eq!(v["limit"], "destination_disk", "{host} host: {v}");
        assert_eq!(v["side"], "receiver", "{host} host: {v}");
        assert!(
            v["evidence"]["destination_blocked_writes"]
                .as_f64()
                .unwrap()
                > 0.0,
            "{host} host: {v}"
        );
        let sentence = v["sentence"].as_str().unwrap();
        assert!(
            sentence.contains("the kernel held them to the disk's pace"),
            "{host} host: {sentence}"
        );
        assert!(!sentence.contains("--window"), "{host} host: {sentence}");
    });
}
