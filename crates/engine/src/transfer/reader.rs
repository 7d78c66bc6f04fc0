//! Reading records off a data connection: small reads (headers, trailers,
//! small files) are served from one buffer refilled a large recv at a time;
//! large ones go straight into the caller's buffer. Optionally polls before
//! blocking, like a bench receiver.

use std::io::ErrorKind;
use std::net::TcpStream;

use rustix::io::Errno;
use rustix::net::RecvFlags;

use crate::stream::recv_polled;

const BUFFER: usize = 64 << 10;

pub struct RecordReader<'a> {
    sock: &'a TcpStream,
    poll: bool,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<'a> RecordReader<'a> {
    pub fn new(sock: &'a TcpStream, poll: bool) -> Self {
        RecordReader {
            sock,
            poll,
            buf: vec![0u8; BUFFER],
            start: 0,
            end: 0,
        }
    }

    fn recv_some(&self, into: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match recv_polled(self.sock, into, RecvFlags::empty(), self.poll, true) {
                Err(Errno::INTR) => {}
                other => return other.map_err(Into::into),
            }
        }
    }

    /// Fills `out`; Ok(false) on a clean end of stream before its first byte.
    pub fn fill(&mut self, out: &mut [u8]) -> std::io::Result<bool> {
        let mut got = 0;
        while got < out.len() {
            if self.start < self.end {
                let n = (self.end - self.start).min(out.len() - got);
                out[got..got + n].copy_from_slice(&self.buf[self.start..self.start + n]);
                self.start += n;
                got += n;
                continue;
            }
            let want = out.len() - got;
            let n = if want >= BUFFER {
                self.recv_some(&mut out[got..])?
            } else {
                let mut buf = std::mem::take(&mut self.buf);
                let n = self.recv_some(&mut buf);
                self.buf = buf;
                let n = n?;
                (self.start, self.end) = (0, n);
                if n == 0 {
                    0
                } else {
                    continue;
                }
            };
            if n == 0 {
                return if got == 0 {
                    Ok(false)
                } else {
                    Err(ErrorKind::UnexpectedEof.into())
                };
            }
            got += n;
        }
        Ok(true)
    }

    /// Fills `out` or fails, also on a clean end of stream.
    pub fn fill_all(&mut self, out: &mut [u8]) -> std::io::Result<()> {
        if self.fill(out)? {
            Ok(())
        } else {
            Err(ErrorKind::UnexpectedEof.into())
        }
    }
}
