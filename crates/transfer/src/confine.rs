//! Paths received from a peer, confined under a destination root.
//!
//! Two walls: a lexical check refuses absolute paths, `..`, `.`, empty and
//! over-long components before anything touches the disk; then every open
//! goes through `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, so the
//! kernel itself refuses any resolution that would leave the root or pass
//! through a symbolic link, whatever the tree looks like at that moment.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags, mkdirat, openat2};
use rustix::io::Errno;
use thiserror::Error;

/// Longest relative path accepted, in bytes (Linux PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;
/// Deepest relative path accepted, in components.
pub const MAX_DEPTH: usize = 256;

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why a path received from a peer is refused, or could not be opened.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfineError {
    /// It starts at `/`.
    #[error("path {0:?} is absolute")]
    Absolute(PathBuf),
    /// It has an empty, `.` or `..` component.
    #[error("path {0:?} has an empty, '.' or '..' component")]
    BadComponent(PathBuf),
    /// It holds a NUL byte.
    #[error("path contains a NUL byte")]
    Nul,
    /// It is longer than the limits.
    #[error("path is longer than {MAX_PATH_BYTES} bytes or {MAX_DEPTH} components")]
    TooLong,
    /// The kernel refused to resolve it beneath the root (a symlink on
    /// the way, or an escape).
    #[error("path {0:?} would leave the destination or pass through a symbolic link")]
    Escapes(PathBuf),
    /// A directory was wanted and something else is there.
    #[error("path {0:?} exists and is not a directory")]
    NotADirectory(PathBuf),
    /// The file exists and may not be replaced.
    #[error(
        "{0:?} already exists and differs from the source (--no-replace keeps it: leave \
         --no-replace out to replace it, or give --ignore-existing to skip it)"
    )]
    Exists(PathBuf),
    /// A system call on the path failed.
    #[error("{what} {path:?}: {errno}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error the system gave.
        errno: Errno,
    },
}

/// Checks a peer's relative path without touching the disk; returns its components.
pub fn check(rel: &str) -> Result<Vec<&str>, ConfineError> {
    if rel.contains('\0') {
        return Err(ConfineError::Nul);
    }
    if rel.len() > MAX_PATH_BYTES {
        return Err(ConfineError::TooLong);
    }
    if rel.starts_with('/') {
        return Err(ConfineError::Absolute(rel.into()));
    }
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.len() > MAX_DEPTH {
        return Err(ConfineError::TooLong);
    }
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(ConfineError::BadComponent(rel.into()));
    }
    Ok(parts)
}

/// An open destination directory that received paths are resolved beneath.
pub struct DestRoot {
    dir: OwnedFd,
    path: PathBuf,
}

impl DestRoot {
    /// Opens the destination root at `path`, a directory.
    pub fn open(path: &Path) -> Result<DestRoot, ConfineError> {
        let dir = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| ConfineError::Io {
            what: "opening destination",
            path: path.to_path_buf(),
            errno,
        })?;
        Ok(DestRoot {
            dir,
            path: path.to_path_buf(),
        })
    }

    /// The open root directory.
    pub fn fd(&self) -> &OwnedFd {
        &self.dir
    }

    /// Whether the directory is on a file system in memory (tmpfs, ramfs):
    /// writing there is copying, not a disk.
    pub fn in_memory(&self) -> bool {
        const TMPFS_MAGIC: i64 = 0x0102_1994;
        const RAMFS_MAGIC: i64 = 0x8584_58f6;
        // f_type's width differs between architectures.
        #[allow(clippy::unnecessary_cast)]
        rustix::fs::fstatfs(&self.dir)
            .is_ok_and(|s| matches!(s.f_type as i64, TMPFS_MAGIC | RAMFS_MAGIC))
    }

    /// The root's path, as opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the directory `parts` names beneath the root, creating what is missing.
    fn directory(&self, rel: &str, parts: &[&str]) -> Result<OwnedFd, ConfineError> {
        self.directory_created(rel, parts).map(|(fd, _)| fd)
    }

    /// A path handle of the root itself, to walk `rel` from.
    fn root_handle(&self, rel: &str) -> Result<OwnedFd, ConfineError> {
        openat2(
            &self.dir,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        )
        .map_err(|errno| io("opening destination", rel, errno))
    }

    /// As [`DestRoot::directory`], and whether its last component was created now.
    fn directory_created(
        &self,
        rel: &str,
        parts: &[&str],
    ) -> Result<(OwnedFd, bool), ConfineError> {
        let mut created = false;
        let mut cur = self.root_handle(rel)?;
        for part in parts {
            (cur, created) = dir_at(&cur, part, rel)?;
        }
        Ok((cur, created))
    }

    /// As [`DestRoot::open_dir`], and whether the directory was created by
    /// this call (then it is known to be empty).
    pub fn open_dir_created(&self, rel: &str) -> Result<(OwnedFd, bool), ConfineError> {
        if rel.is_empty() {
            return self.directory_created(rel, &[]);
        }
        let parts = check(rel)?;
        self.directory_created(rel, &parts)
    }

    /// The directory `rel` beneath the root (created if missing) as a root of
    /// its own; an empty `rel` is the root itself.
    pub fn subdir(&self, rel: &str) -> Result<DestRoot, ConfineError> {
        let dir = self.open_dir(rel)?;
        Ok(DestRoot {
            dir,
            path: self.path.join(rel),
        })
    }

    /// Opens (creating what is missing) the directory `rel` beneath the root,
    /// for `*at` calls on single, already checked names; empty is the root.
    pub fn open_dir(&self, rel: &str) -> Result<OwnedFd, ConfineError> {
        if rel.is_empty() {
            return self.directory(rel, &[]);
        }
        let parts = check(rel)?;
        self.directory(rel, &parts)
    }

    /// The existing directory `rel` beneath the root, or None where one of
    /// its components is missing: nothing is created (a dry run looks).
    pub fn find_dir(&self, rel: &str) -> Result<Option<OwnedFd>, ConfineError> {
        let parts = if rel.is_empty() {
            Vec::new()
        } else {
            check(rel)?
        };
        let mut cur = self.root_handle(rel)?;
        for part in parts {
            cur = match existing_dir_at(&cur, part, rel) {
                Ok(fd) => fd,
                Err(ConfineError::Io {
                    errno: Errno::NOENT,
                    ..
                }) => return Ok(None),
                Err(e) => return Err(e),
            };
        }
        Ok(Some(cur))
    }

    /// The existing directory `rel` beneath the root as a root of its own,
    /// or None where it is missing: nothing is created.
    pub fn find_subdir(&self, rel: &str) -> Result<Option<DestRoot>, ConfineError> {
        Ok(self.find_dir(rel)?.map(|dir| DestRoot {
            dir,
            path: self.path.join(rel),
        }))
    }

    /// Creates the directories of `rel` beneath the root.
    pub fn create_dir_all(&self, rel: &str) -> Result<(), ConfineError> {
        let parts = check(rel)?;
        self.directory(rel, &parts).map(drop)
    }

    /// Opens `rel` for writing beneath the root, creating its parents. With
    /// `overwrite` false an existing file is refused; a symbolic link in the
    /// final place is refused either way.
    pub fn create_file(&self, rel: &str, overwrite: bool, mode: u32) -> Result<File, ConfineError> {
        let parts = check(rel)?;
        let (name, parents) = parts
            .split_last()
            .ok_or_else(|| ConfineError::BadComponent(rel.into()))?;
        let dir = self.directory(rel, parents)?;
        let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC;
        if !overwrite {
            flags |= OFlags::EXCL;
        }
        let fd = openat2(
            &dir,
            *name,
            flags,
            Mode::from_raw_mode(mode & 0o7777),
            RESOLVE,
        )
        .map_err(|errno| {
            if errno == Errno::EXIST {
                ConfineError::Exists(rel.into())
            } else {
                resolve_error(rel, errno)
            }
        })?;
        Ok(File::from(fd))
    }
}

/// The directory `name` in `parent` (one checked component of `rel`),
/// created if missing, and whether it was created now.
pub fn dir_at(parent: &OwnedFd, name: &str, rel: &str) -> Result<(OwnedFd, bool), ConfineError> {
    let created = match mkdirat(parent, name, Mode::from_raw_mode(0o755)) {
        Ok(()) => true,
        Err(Errno::EXIST) => false,
        Err(errno) => return Err(io("creating directory", rel, errno)),
    };
    Ok((existing_dir_at(parent, name, rel)?, created))
}

/// The directory `name` in `parent`, which must exist (NOENT otherwise).
pub fn existing_dir_at(parent: &OwnedFd, name: &str, rel: &str) -> Result<OwnedFd, ConfineError> {
    openat2(
        parent,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        RESOLVE,
    )
    .map_err(|errno| resolve_error(rel, errno))
}

fn io(what: &'static str, rel: &str, errno: Errno) -> ConfineError {
    ConfineError::Io {
        what,
        path: rel.into(),
        errno,
    }
}

fn resolve_error(rel: &str, errno: Errno) -> ConfineError {
    match errno {
        // ELOOP: a symlink on the way; EXDEV: resolution would leave the root.
        Errno::LOOP | Errno::XDEV => ConfineError::Escapes(rel.into()),
        Errno::NOTDIR => ConfineError::NotADirectory(rel.into()),
        other => io("opening", rel, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn lexical_check() {
        assert!(matches!(
            check("/etc/passwd"),
            Err(ConfineError::Absolute(_))
        ));
        for bad in ["../x", "a/../../x", "", "a//b", "a/./b", "a/", "."] {
            assert!(
                matches!(check(bad), Err(ConfineError::BadComponent(_))),
                "{bad:?}"
            );
        }
        assert_eq!(check("a\0b"), Err(ConfineError::Nul));
        assert_eq!(check(&"a/".repeat(300)), Err(ConfineError::TooLong));
        assert_eq!(
            check("dir with space/ünï\ncode/-leading-dash")
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn creates_nested_files_with_awkward_names() {
        let t = tempfile::tempdir().unwrap();
        let root = DestRoot::open(t.path()).unwrap();
        let mut f = root.create_file("a b/ünï\ncode/-x", false, 0o640).unwrap();
        f.write_all(b"ok").unwrap();
        assert_eq!(
            std::fs::read(t.path().join("a b/ünï\ncode/-x")).unwrap(),
            b"ok"
        );
        assert!(matches!(
            root.create_file("a b/ünï\ncode/-x", false, 0o640),
            Err(ConfineError::Exists(_))
        ));
        assert!(root.create_file("a b/ünï\ncode/-x", true, 0o640).is_ok());
    }

    #[test]
    fn symlinks_cannot_lead_out() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("dirlink")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim"), t.path().join("filelink"))
            .unwrap();
        let root = DestRoot::open(t.path()).unwrap();
        assert!(matches!(
            root.create_file("dirlink/evil", false, 0o644),
            Err(ConfineError::Escapes(_))
        ));
        assert!(matches!(
            root.create_file("filelink", true, 0o644),
            Err(ConfineError::Escapes(_))
        ));
        assert!(matches!(
            root.create_dir_all("dirlink/sub"),
            Err(ConfineError::Escapes(_))
        ));
        assert!(!outside.path().join("evil").exists());
        assert!(!outside.path().join("sub").exists());
        assert_eq!(
            std::fs::read(outside.path().join("victim")).unwrap(),
            b"keep"
        );
    }

    #[test]
    fn a_file_in_the_way_of_a_directory_is_named() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), b"").unwrap();
        let root = DestRoot::open(t.path()).unwrap();
        assert!(matches!(
            root.create_file("f/g", false, 0o644),
            Err(ConfineError::NotADirectory(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn whatever_is_accepted_lands_beneath_the_root(rel in "[a-c./]{1,12}") {
            let t = tempfile::tempdir().unwrap();
            let root = DestRoot::open(t.path()).unwrap();
            if check(&rel).is_ok() && root.create_file(&rel, true, 0o644).is_ok() {
                let real = std::fs::canonicalize(t.path().join(&rel)).unwrap();
                proptest::prop_assert!(real.starts_with(std::fs::canonicalize(t.path()).unwrap()));
            }
        }
    }
}
