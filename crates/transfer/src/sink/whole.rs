//! One-block files written whole, without a temporary name: the fast path
//! for many small files.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::names::{split, temp_name, timestamps};
use super::{Sink, SinkError, io_err};
use crate::confine::ConfineError;
use crate::direct;

impl Sink {
    /// Creates a whole, checked one-block file. In a directory this run
    /// created (inside a stage, invisible until the transfer ends) it is
    /// created under its own name; elsewhere as an unnamed file (O_TMPFILE)
    /// written, given its mode and time, then linked into place, so no
    /// partial file ever has a visible name and the directory changes once,
    /// not twice (create and rename). Falls back to the temporary-name path
    /// where the file system or /proc does not allow it.
    pub fn write_whole(&self, file: u32, data: &[u8]) -> Result<(), SinkError> {
        let id = file as usize;
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        let named = self.slot(id).is_some_and(|s| s.in_fresh_dir.load(Relaxed));
        let linked = (|| -> Result<bool, SinkError> {
            let mode = self.mode_of(e);
            // Invisible until linked or unstaged: it may carry its final
            // mode from the start (the kernel applies the umask, already
            // taken out, and never sets the special bits at creation), unless
            // an ACL set after it would change it.
            let exact = mode & 0o7000 == 0 && mode & self.umask == 0 && e.xattrs.is_empty();
            let create_mode = Mode::from_raw_mode(if exact { mode } else { 0o600 });
            let opened = if named {
                // O_EXCL: nothing, not even a link, can be in the way.
                rustix::fs::openat(
                    &*dir,
                    name,
                    OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                    create_mode,
                )
                .map_err(|x| match x {
                    Errno::EXIST => ConfineError::Exists(PathBuf::from(&e.path)).into(),
                    x => io_err("creating", &e.path, x),
                })?
            } else {
                let Ok(fd) = rustix::fs::openat(
                    &*dir,
                    ".",
                    OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
                    create_mode,
                ) else {
                    return Ok(false);
                };
                fd
            };
            let f = File::from(opened);
            let t = Instant::now();
            f.write_all_at(data, 0)
                .map_err(|x| io_err("writing", &e.path, x))?;
            if self.cache.evict {
                direct::flush_and_evict(&f, 0, data.len() as u64)
                    .map_err(|x| io_err("flushing", &e.path, x))?;
            }
            self.wrote_for(t.elapsed());
            // On disk before it has a name anyone can see: an unnamed file
            // before its link; one inside a stage before the stage's rename,
            // by one file system sync for all of them then.
            if named {
                self.staged_unsynced();
            } else {
                self.sync_data(&f, &e.path)?;
            }
            // Owner first: a change of owner clears setuid bits.
            self.ids
                .apply(&f, e)
                .map_err(|x| io_err("setting owner or attributes of", &e.path, x))?;
            // A directory's default ACL, not the umask, shapes what a file
            // created in it gets: then the mode is set after all.
            let came_exact =
                exact && rustix::fs::fstat(&f).is_ok_and(|st| st.st_mode & 0o7777 == mode);
            if !came_exact {
                rustix::fs::fchmod(&f, Mode::from_raw_mode(mode))
                    .map_err(|x| io_err("setting mode of", &e.path, x))?;
            }
            rustix::fs::futimens(&f, &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
            if named {
                self.dir_changed(parent, &dir);
                return Ok(true);
            }
            // The file itself (AT_EMPTY_PATH: allowed for an O_TMPFILE file
            // its opener links, since Linux 6.10) or, before that, through /proc.
            let link = |dir: &OwnedFd, name: &str| match rustix::fs::linkat(
                &f,
                "",
                dir,
                name,
                AtFlags::EMPTY_PATH,
            ) {
                Err(Errno::NOENT | Errno::PERM | Errno::INVAL) => {
                    let proc_path =
                        format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&f));
                    rustix::fs::linkat(
                        rustix::fs::CWD,
                        proc_path.as_str(),
                        dir,
                        name,
                        AtFlags::SYMLINK_FOLLOW,
                    )
                }
                other => other,
            };
            let linked = link(&dir, name);
            if linked.is_ok() || linked == Err(Errno::EXIST) {
                self.dir_changed(parent, &dir);
            }
            match linked {
                Ok(()) => Ok(true),
                // Replaced at once, as rsync does: linked under the
                // temporary name, then renamed over the old file.
                Err(Errno::EXIST) if self.existing.replaces() => {
                    let temp = temp_name(name);
                    let _ = rustix::fs::unlinkat(&*dir, temp.as_str(), AtFlags::empty());
                    link(&dir, &temp).map_err(|x| io_err("linking into place", &e.path, x))?;
                    rustix::fs::renameat(&*dir, temp.as_str(), &*dir, name)
                        .map_err(|x| io_err("replacing", &e.path, x))?;
                    Ok(true)
                }
                Err(Errno::EXIST) => Err(ConfineError::Exists(PathBuf::from(&e.path)).into()),
                // No /proc, or a file system without O_TMPFILE links.
                Err(_) => Ok(false),
            }
        })()?;
        if !linked {
            self.write_piece(file, 0, data)?;
            return self.commit(file, 0);
        }
        self.counters
            .bytes_written
            .fetch_add(data.len() as u64, Relaxed);
        self.counters.files_written.fetch_add(1, Relaxed);
        if let Some(slot) = self.slot(id) {
            slot.mark(0);
            slot.finished.store(true, Relaxed);
        }
        Ok(())
    }
}
