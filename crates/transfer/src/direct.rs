//! Page-cache policy of a transfer: direct I/O (O_DIRECT) past the page
//! cache for cold disk-to-disk runs, and dropping blocks from the cache
//! once they are done with (`--evict`), so a transfer larger than memory
//! does not push out everything else on the host.
//!
//! Direct I/O moves whole pages between page-aligned memory and
//! page-aligned file offsets; anything else (a file's tail, a file system
//! that refuses O_DIRECT) goes through the page cache, and is counted apart.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;

use linerate_wire::DIRECT_ALIGN;
use rustix::fs::{Advice, OFlags};

const ALIGN: usize = DIRECT_ALIGN as usize;

pub use linerate_engine::buffer::AlignedBuf;
pub use linerate_engine::spec::CachePolicy;

/// Whether a write of `data` at `offset` may bypass the page cache.
pub fn aligned(data: &[u8], offset: u64) -> bool {
    data.as_ptr().addr().is_multiple_of(ALIGN)
        && data.len().is_multiple_of(ALIGN)
        && offset.is_multiple_of(ALIGN as u64)
}

/// Sets or clears O_DIRECT on an open file; Err where the file system
/// refuses it.
pub fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(file)?;
    let want = if on {
        flags | OFlags::DIRECT
    } else {
        flags - OFlags::DIRECT
    };
    if want != flags {
        rustix::fs::fcntl_setfl(file, want)?;
    }
    Ok(())
}

/// Reads exactly `out.len()` bytes at `offset` of a file opened with
/// O_DIRECT into `page`, a page-aligned buffer at least that long rounded
/// up to a page. The read asks for whole pages; only the file's end may
/// return fewer, and then it must cover `out`.
pub fn read_exact_direct(file: &File, page: &mut [u8], len: usize, offset: u64) -> io::Result<()> {
    let whole = len.next_multiple_of(ALIGN);
    let buf = page
        .get_mut(..whole)
        .ok_or_else(|| io::Error::other("direct read buffer too small"))?;
    let got = loop {
        match file.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => break other?,
        }
    };
    if got < len {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// Drops `[offset, offset + len)` of a file from the page cache (`len` 0:
/// to the end); clean pages only, so written data goes through
/// [`flush_and_evict`], and pages someone has mapped stay.
pub fn evict(file: &File, offset: u64, len: u64) {
    // Advice only: a file system without it keeps its pages, nothing breaks.
    let _ = rustix::fs::fadvise(
        file,
        offset,
        std::num::NonZeroU64::new(len),
        Advice::DontNeed,
    );
}

/// Writes `[offset, offset + len)` of a file to disk and waits for it,
/// without a journal commit (sync_file_range), then drops it from the cache.
pub fn flush_and_evict(file: &File, offset: u64, len: u64) -> io::Result<()> {
    sync_range(
        file,
        offset,
        len,
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
    )?;
    evict(file, offset, len);
    Ok(())
}

/// Starts writing a range's dirty pages to disk without waiting: the
/// sync that follows a batch of blocks then finds most of it done.
pub fn start_writeback(file: &File, offset: u64, len: u64) -> io::Result<()> {
    sync_range(file, offset, len, libc::SYNC_FILE_RANGE_WRITE)
}

fn sync_range(file: &File, offset: u64, len: u64, flags: libc::c_uint) -> io::Result<()> {
    let (off, n) = (
        i64::try_from(offset).map_err(io::Error::other)?,
        i64::try_from(len).map_err(io::Error::other)?,
    );
    // SAFETY: sync_file_range takes a descriptor borrowed from an open File
    // for the whole call and integers; it touches no memory of ours.
    // Neither rustix nor nix wraps it.
    let rc = unsafe { libc::sync_file_range(file.as_fd().as_raw_fd(), off, n, flags) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn aligned_buffers_start_on_a_page() {
        for len in [1, 4096, 256 << 10] {
            let mut b = AlignedBuf::new(len);
            let s = &mut b[..];
            assert_eq!(s.len(), len);
            assert_eq!(s.as_ptr().addr() % ALIGN, 0);
        }
    }

    #[test]
    fn alignment_needs_address_length_and_offset() {
        let mut b = AlignedBuf::new(8192);
        let s = &mut b[..];
        assert!(aligned(&s[..4096], 8192));
        assert!(!aligned(&s[..4095], 8192));
        assert!(!aligned(&s[1..4097], 8192));
        assert!(!aligned(&s[..4096], 100));
    }

    /// A direct read of a file's unaligned tail returns exactly what is there.
    #[test]
    fn direct_reads_take_a_files_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let f = File::open(&path).unwrap();
        let direct = set_direct(&f, true).is_ok();
        let mut b = AlignedBuf::new(16384);
        read_exact_direct(&f, &mut b[..], 10_000 - 8192, 8192).unwrap();
        assert_eq!(&b[..10_000 - 8192], &data[8192..]);
        assert!(read_exact_direct(&f, &mut b[..], 8192, 8192).is_err());
        if direct {
            set_direct(&f, false).unwrap();
        }
        flush_and_evict(&File::options().write(true).open(&path).unwrap(), 0, 4096).unwrap();
        evict(&f, 0, 10_000);
    }
}
