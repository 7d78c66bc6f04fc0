//! Temporary directories and tree comparison for transfer tests.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        Self::under(&std::env::temp_dir(), tag)
    }

    pub fn under(base: &Path, tag: &str) -> TempDir {
        let mut r = [0u8; 8];
        getrandom_bytes(&mut r);
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p = base.join(format!("linerate-test-{tag}-{hex}"));
        fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn getrandom_bytes(b: &mut [u8]) {
    let mut f = fs::File::open("/dev/urandom").expect("urandom");
    f.read_exact(b).expect("urandom");
}

/// Every difference between two trees: kinds, contents, link targets,
/// modes and modification times (files and directories).
pub fn differences(a: &Path, b: &Path) -> Vec<String> {
    let mut out = Vec::new();
    compare(a, b, Path::new(""), &mut out);
    out
}

fn compare(a: &Path, b: &Path, rel: &Path, out: &mut Vec<String>) {
    let (ma, mb) = match (fs::symlink_metadata(a), fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Ok(_), Err(e)) => {
            return out.push(format!("{}: missing at destination ({e})", rel.display()));
        }
        (Err(e), _) => return out.push(format!("{}: unreadable source ({e})", rel.display())),
    };
    let (fa, fb) = (ma.file_type(), mb.file_type());
    if fa.is_symlink() || fb.is_symlink() {
        if !(fa.is_symlink() && fb.is_symlink()) || fs::read_link(a).ok() != fs::read_link(b).ok() {
            out.push(format!("{}: link differs", rel.display()));
        }
        return;
    }
    if ma.permissions().mode() & 0o7777 != mb.permissions().mode() & 0o7777 {
        out.push(format!(
            "{}: mode {:o} != {:o}",
            rel.display(),
            ma.permissions().mode() & 0o7777,
            mb.permissions().mode() & 0o7777
        ));
    }
    if (ma.mtime(), ma.mtime_nsec()) != (mb.mtime(), mb.mtime_nsec()) {
        out.push(format!("{}: mtime differs", rel.display()));
    }
    if fa.is_dir() && fb.is_dir() {
        let names = |p: &Path| {
            let mut v: Vec<_> = fs::read_dir(p)
                .map(|r| r.filter_map(Result::ok).map(|e| e.file_name()).collect())
                .unwrap_or_default();
            v.sort();
            v
        };
        let (na, nb) = (names(a), names(b));
        if na != nb {
            out.push(format!("{}: entries {:?} != {:?}", rel.display(), na, nb));
        }
        for n in na {
            compare(&a.join(&n), &b.join(&n), &rel.join(&n), out);
        }
    } else if fa.is_file() && fb.is_file() {
        if ma.len() != mb.len() || !same_bytes(a, b) {
            out.push(format!("{}: contents differ", rel.display()));
        }
    } else {
        out.push(format!("{}: kind differs", rel.display()));
    }
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Ok(mut x), Ok(mut y)) = (fs::File::open(a), fs::File::open(b)) else {
        return false;
    };
    let (mut bx, mut by) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = read_full(&mut x, &mut bx);
        let m = read_full(&mut y, &mut by);
        if n != m || bx[..n] != by[..m] {
            return false;
        }
        if n == 0 {
            return true;
        }
    }
}

fn read_full(f: &mut fs::File, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    got
}

/// Writes `len` pseudo-random bytes (seeded) to `path`.
pub fn random_file(path: &Path, len: usize, seed: u64) {
    let mut x = seed | 1;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    fs::write(path, data).expect("write random file");
}

/// Sets a file's or directory's modification time (seconds, nanoseconds).
pub fn set_mtime(path: &Path, secs: i64, nsec: u32) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::new(secs as u64, nsec);
    let f = fs::File::open(path).expect("open for mtime");
    f.set_modified(t).expect("set mtime");
}
