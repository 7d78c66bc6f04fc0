//! The frame that carries many small files in one write: each file read
//! whole into it behind its record header and followed by its checksum.
//!
//! Two costs of a per-file loop are avoided here, both seen in perf of
//! 20,000 x 4 KiB: opening every file by its full path walked the whole path
//! each time (a tenth of the sender's time), so files are opened relative to
//! their directory, which stays open while the files that follow are in it;
//! and zero-filling room for each read before the read overwrote it, so the
//! buffer keeps its high-water length and is zeroed only where it grows.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use linerate_wire::Record;
use rustix::fs::{Mode, OFlags};

use super::direct;
use super::grid::BlockCheck;

#[derive(Default)]
pub struct SmallBatch {
    /// Initialised up to its length; the frame is `buf[..used]`.
    buf: Vec<u8>,
    used: usize,
    /// The directory of the last file opened, and its path.
    dir: Option<(PathBuf, OwnedFd)>,
}

/// Where a file's record starts, to drop it if its read fails.
#[derive(Clone, Copy)]
pub struct Mark(usize);

impl SmallBatch {
    /// Starts a new frame.
    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// The frame so far.
    pub fn frame(&self) -> &[u8] {
        &self.buf[..self.used]
    }

    /// Starts the record of file `id`, `len` bytes at offset 0.
    pub fn begin(&mut self, id: u32, len: u32) -> Mark {
        let mark = Mark(self.used);
        let header = Record::Block {
            file: id,
            offset: 0,
            len,
        }
        .encode();
        self.put(&header);
        mark
    }

    /// Appends `data` as the file's contents.
    pub fn put(&mut self, data: &[u8]) {
        self.room(data.len())[..data.len()].copy_from_slice(data);
        self.used += data.len();
    }

    /// Appends exactly `size` bytes read from `path`. One read of `size + 1`
    /// usually does: a short read of a regular file means its end, and a
    /// longer one that the file grew since it was announced.
    /// Appends the contents of `path`, which must still be `size` bytes
    /// and, when given, carry the modification time it was listed with.
    pub fn read_file(
        &mut self,
        path: &Path,
        size: u64,
        listed_mtime_ns: Option<i64>,
        evict: bool,
    ) -> io::Result<()> {
        let file = self.open(path)?;
        let want = usize::try_from(size).map_err(io::Error::other)?;
        let room = self.room(want.saturating_add(1));
        let mut got = 0;
        loop {
            match (&file).read(&mut room[got..]) {
                Ok(0) => break,
                Ok(n) => {
                    got += n;
                    if got >= want {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if got != want {
            return Err(io::Error::other("size changed while being sent"));
        }
        if let Some(mtime) = listed_mtime_ns
            && let Some(why) = super::source::changed_since_listed(&file, size, mtime)
        {
            return Err(io::Error::other(why));
        }
        if evict {
            direct::evict(&file, 0, size);
        }
        self.used += want;
        Ok(())
    }

    /// Ends the record begun at `mark` with the checksum of its contents,
    /// or with 0 (whole) when checksums are off.
    pub fn finish(&mut self, mark: Mark, with_checksum: bool) {
        let data = mark.0 + linerate_wire::RECORD_HEADER_LEN;
        let sum = BlockCheck::of(with_checksum, &self.buf[data..self.used]);
        self.put(&sum.to_be_bytes());
    }

    /// Drops the record begun at `mark`.
    pub fn abandon(&mut self, mark: Mark) {
        self.used = mark.0;
    }

    /// At least `n` writable bytes after the frame, zeroed only where the
    /// buffer grows.
    fn room(&mut self, n: usize) -> &mut [u8] {
        let end = self.used.saturating_add(n);
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        &mut self.buf[self.used..end]
    }

    /// Opens `path` for reading through its directory, opened once for all
    /// the files in it that come in a row.
    fn open(&mut self, path: &Path) -> io::Result<File> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return File::open(path);
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let dir = match self.dir.take() {
            Some(same) if same.0 == parent => same,
            _ => {
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                (
                    parent.to_path_buf(),
                    rustix::fs::open(parent, flags, Mode::empty())?,
                )
            }
        };
        let (_, dir) = self.dir.insert(dir);
        let fd = rustix::fs::openat(&*dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(File::from(fd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::checksum;
    use linerate_wire::RECORD_HEADER_LEN;

    fn record(frame: &[u8]) -> (Record, &[u8], u64, &[u8]) {
        let (h, rest) = frame.split_at(RECORD_HEADER_LEN);
        let r = Record::decode(h).unwrap();
        let Record::Block { len, .. } = r else {
            panic!("not a block: {r:?}")
        };
        let (data, rest) = rest.split_at(len as usize);
        let (sum, rest) = rest.split_at(8);
        (r, data, u64::from_be_bytes(sum.try_into().unwrap()), rest)
    }

    #[test]
    fn files_from_several_directories_in_one_frame_with_checksums() {
        // Empty files have no blocks and never come here.
        let dir = tempfile::tempdir().unwrap();
        for (sub, name, body) in [
            ("a", "x", "first"),
            ("a", "y", "second"),
            ("b", "z", "third"),
        ] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            std::fs::write(dir.path().join(sub).join(name), body).unwrap();
        }
        let mut b = SmallBatch::default();
        // A larger frame first, so the second one reuses dirty room.
        let m = b.begin(9, 6000);
        b.put(&[7u8; 6000]);
        b.finish(m, true);
        b.clear();
        for (id, p, n) in [(1, "a/x", 5), (2, "a/y", 6), (3, "b/z", 5)] {
            let m = b.begin(id, n);
            // The second file as with checksums off: its trailer says whole.
            b.read_file(&dir.path().join(p), n.into(), None, false)
                .unwrap();
            b.finish(m, id != 2);
        }
        let mut rest = b.frame();
        for (id, body) in [(1, "first"), (2, "second"), (3, "third")] {
            let (r, data, sum, tail) = record(rest);
            assert_eq!(
                r,
                Record::Block {
                    file: id,
                    offset: 0,
                    len: body.len() as u32
                }
            );
            assert_eq!(data, body.as_bytes());
            let want = if id == 2 {
                0
            } else {
                checksum(body.as_bytes())
            };
            assert_eq!(sum, want);
            rest = tail;
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn a_file_whose_size_changed_or_vanished_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "grown since").unwrap();
        let mut b = SmallBatch::default();
        let m = b.begin(1, 4);
        let e = b.read_file(&p, 4, None, false).unwrap_err();
        assert!(e.to_string().contains("size changed"), "{e}");
        b.abandon(m);
        let m = b.begin(2, 40);
        let e = b.read_file(&p, 40, None, false).unwrap_err();
        assert!(e.to_string().contains("size changed"), "{e}");
        b.abandon(m);
        let m = b.begin(3, 1);
        assert!(
            b.read_file(&dir.path().join("gone"), 1, None, false)
                .is_err()
        );
        b.abandon(m);
        assert!(b.frame().is_empty());
    }

    #[test]
    fn a_bare_file_name_opens_in_the_working_directory() {
        let mut b = SmallBatch::default();
        let e = b
            .read_file(Path::new("no-such-file-here"), 1, None, false)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
