//! One sending stream: takes blocks and batches of small files from the
//! queue and writes them to its socket, each piece read into one buffer,
//! hashed there and written from it.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::os::unix::fs::FileExt;
use std::sync::MutexGuard;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use linerate_secure::TlsStream;
use linerate_wire::{Entry, EntryKind, Record};

use super::Shared;
use crate::batch::SmallBatch;
use crate::direct::{self, AlignedBuf};
use crate::grid::{BlockCheck, PIECE, block_span};
use crate::queue::{Next, Work};
use crate::source::{Origin, changed_since_listed};
use linerate_engine::session::StreamSocket;
use linerate_engine::stream::{Live, Outcome, ThreadClock};

/// One stream: takes work until the queue closes.
pub(super) fn send_stream(s: &StreamSocket, shared: &Shared, live: &Live) -> Outcome {
    let clock = ThreadClock::start();
    let mut sock = Out {
        sock: &s.stream,
        tls: s.tls.as_ref().map(linerate_engine::lock),
    };
    // Page aligned, for direct reads.
    let mut aligned = AlignedBuf::new(PIECE.min(shared.block_len as usize));
    let buf = &mut aligned[..];
    let mut batch = SmallBatch::default();
    let mut open: Option<OpenSource> = None;
    let mut memory_sums: HashMap<u32, u64> = HashMap::new();
    let (mut sent, mut last, mut ended) = (0u64, Instant::now(), 0u32);
    let mut current = None;
    let mut error = None;
    loop {
        let result = match shared.queue.next(ended, &mut current) {
            Next::Close => break,
            Next::EndRound(r) => {
                ended = r;
                sock.write_all(&Record::RoundEnd.encode())
                    .and_then(|_| sock.flush())
                    .and_then(|_| linerate_engine::sockopt::push(&s.stream))
                    .map(|_| 0)
            }
            Next::Work(Work::Block { id, index }) => {
                match send_block(
                    &mut sock,
                    shared,
                    id,
                    index,
                    buf,
                    &mut open,
                    &mut memory_sums,
                ) {
                    Ok(n) => {
                        shared.queue.sent(&Work::Block { id, index });
                        Ok(n)
                    }
                    Err(e) => {
                        shared.queue.requeue(Work::Block { id, index });
                        Err(e)
                    }
                }
            }
            Next::Work(Work::Small(ids)) => match send_small(&mut sock, shared, &ids, &mut batch) {
                Ok(n) => {
                    shared.queue.sent(&Work::Small(ids));
                    Ok(n)
                }
                Err(e) => {
                    shared.queue.requeue(Work::Small(ids));
                    Err(e)
                }
            },
        };
        // What is sealed goes out before the stream waits for more work:
        // the receiver may need it to answer.
        match result.and_then(|n| sock.flush().map(|()| n)) {
            Ok(n) => {
                sent += n;
                last = Instant::now();
                live.bytes.store(sent, Relaxed);
                shared.progressed();
            }
            Err(e) => {
                error = Some(format!("send failed: {e}"));
                break;
            }
        }
    }
    // The receiver's stream ends at this end of stream, told in TLS first.
    if error.is_none()
        && let Some(tls) = sock.tls.as_mut()
        && let Err(e) = tls.close(&mut sock.sock)
    {
        error = Some(format!("send failed: {e}"));
    }
    let _ = s.stream.shutdown(Shutdown::Write);
    let tcp = linerate_probe::tcpinfo::read(&s.stream).ok();
    Outcome::finish(live, &clock, tcp, sent, last, error)
}

/// A stream's way out: its socket, through TLS when encrypted. Sealed
/// bytes wait until enough are queued or the stream flushes.
struct Out<'a> {
    sock: &'a TcpStream,
    tls: Option<MutexGuard<'a, TlsStream>>,
}

impl Write for Out<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match &mut self.tls {
            Some(tls) => tls.write_buffered(&mut self.sock, b).map(|()| b.len()),
            None => self.sock.write(b),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.tls {
            Some(tls) => tls.flush(&mut self.sock),
            None => Ok(()),
        }
    }
}

/// Whether `[offset, offset + len)` of a sparse file is all hole.
fn is_hole(file: &File, offset: u64, len: u32) -> bool {
    match rustix::fs::seek(file, rustix::fs::SeekFrom::Data(offset)) {
        Ok(data) => data >= offset + u64::from(len),
        Err(rustix::io::Errno::NXIO) => true,
        Err(_) => false,
    }
}

/// The source file a stream is sending blocks of.
struct OpenSource {
    id: u32,
    file: File,
    /// Opened with O_DIRECT (asked for, and the file system allowed it).
    direct: bool,
    evict: bool,
}

impl Drop for OpenSource {
    /// Each block leaves the cache once sent, but readahead for one block
    /// brings in the start of the next, which another stream may already
    /// have sent: what is left goes when the stream is done with the file.
    fn drop(&mut self) {
        if self.evict && !self.direct {
            direct::evict(&self.file, 0, 0);
        }
    }
}

/// Sends one block; Ok(payload bytes). A source that cannot be read is
/// recorded and not retried; once its header is out, the block is padded and
/// sent with a checksum that cannot match, so the stream stays in step.
fn send_block(
    sock: &mut Out,
    shared: &Shared,
    id: u32,
    index: u64,
    buf: &mut [u8],
    open: &mut Option<OpenSource>,
    memory_sum: &mut HashMap<u32, u64>,
) -> std::io::Result<u64> {
    let Some(e) = shared.manifest.entry(id) else {
        return Ok(0);
    };
    let Some((offset, len)) = block_span(e.size(), shared.block_len, index) else {
        return Ok(0);
    };
    let header = Record::Block {
        file: id,
        offset,
        len,
    }
    .encode();
    let path = match shared.manifest.origin(id) {
        Some(Origin::Memory) => {
            let data = &shared.memory[..len as usize];
            let sum = *memory_sum
                .entry(len)
                .or_insert_with(|| BlockCheck::of(shared.checksum, data));
            sock.write_all(&header)?;
            sock.write_all(data)?;
            sock.write_all(&sum.to_be_bytes())?;
            return Ok(u64::from(len));
        }
        Some(Origin::Path(p)) => p,
        None => return Ok(0),
    };
    if open.as_ref().is_none_or(|o| o.id != id) {
        match File::open(path) {
            Ok(file) => {
                let direct = shared.cache.direct && direct::set_direct(&file, true).is_ok();
                *open = Some(OpenSource {
                    id,
                    file,
                    direct,
                    evict: shared.cache.evict,
                });
            }
            Err(x) => {
                shared.fail(id, x.to_string());
                return Ok(0);
            }
        }
    }
    let Some(OpenSource { file, direct, .. }) = open.as_ref() else {
        return Ok(0);
    };
    let direct = *direct;
    if matches!(e.kind, EntryKind::File { sparse: true, .. }) && is_hole(file, offset, len) {
        sock.write_all(
            &Record::Hole {
                file: id,
                offset,
                len,
            }
            .encode(),
        )?;
        return Ok(0);
    }
    sock.write_all(&header)?;
    let mut check = BlockCheck::new(shared.checksum);
    let (mut pos, mut read_direct) = (0u64, 0u64);
    let mut broken = false;
    while pos < u64::from(len) {
        let n = (u64::from(len) - pos).min(buf.len() as u64) as usize;
        let at = offset + pos;
        let read = || match direct {
            true => direct::read_exact_direct(file, buf, n, at),
            false => file.read_exact_at(&mut buf[..n], at),
        };
        if !broken && let Err(x) = shared.timed_read(read) {
            shared.fail(id, format!("changed while being sent ({x})"));
            broken = true;
        }
        if direct && !broken {
            read_direct += n as u64;
        }
        let piece = &mut buf[..n];
        if broken {
            piece.fill(0);
        }
        check.update(piece);
        sock.write_all(piece)?;
        pos += n as u64;
    }
    if !broken && let Some(why) = changed_since_listed(file, e.size(), e.mtime_ns) {
        // Its bytes are out already: a trailer that cannot match keeps the
        // receiver from taking them.
        shared.fail(id, why);
        broken = true;
    }
    sock.write_all(&check.trailer(broken).to_be_bytes())?;
    if read_direct > 0 {
        shared.bytes_read_direct.fetch_add(read_direct, Relaxed);
    }
    if shared.cache.evict && !direct {
        direct::evict(file, offset, u64::from(len));
    }
    Ok(u64::from(len))
}

/// Sends many one-block files in one write.
fn send_small(
    sock: &mut Out,
    shared: &Shared,
    ids: &[u32],
    batch: &mut SmallBatch,
) -> std::io::Result<u64> {
    batch.clear();
    let mut payload = 0u64;
    for &id in ids {
        let Some(size) = shared.manifest.entry(id).map(Entry::size) else {
            continue;
        };
        let mark = batch.begin(id, size as u32);
        let read = shared.timed_read(|| match shared.manifest.origin(id) {
            Some(Origin::Path(p)) => {
                let listed = shared.manifest.entry(id).map(|e| e.mtime_ns);
                batch.read_file(p, size, listed, shared.cache.evict)
            }
            Some(Origin::Memory) => {
                batch.put(&shared.memory[..size as usize]);
                Ok(())
            }
            None => Err(std::io::Error::other("not a file")),
        });
        if let Err(x) = read {
            batch.abandon(mark);
            shared.fail(id, x.to_string());
            continue;
        }
        batch.finish(mark, shared.checksum);
        payload += size;
    }
    sock.write_all(batch.frame())?;
    Ok(payload)
}
