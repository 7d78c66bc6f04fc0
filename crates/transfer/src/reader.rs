//! Reading records off a data connection: small reads (headers, trailers,
//! small files) are served from one buffer refilled a large recv at a time;
//! large ones go straight into the caller's buffer. Optionally polls before
//! blocking, like a bench receiver. Through TLS, records are read from the
//! plaintext the stream decrypted in place.

use std::io::ErrorKind;
use std::net::TcpStream;

use linerate_secure::TlsStream;
use rustix::io::Errno;
use rustix::net::RecvFlags;

use linerate_engine::buffer::AlignedBuf;
use linerate_engine::stream::recv_polled;

const BUFFER: usize = 64 << 10;

pub struct RecordReader<'a> {
    sock: &'a TcpStream,
    tls: Option<&'a mut TlsStream>,
    poll: bool,
    buf: AlignedBuf,
    start: usize,
    end: usize,
}

impl<'a> RecordReader<'a> {
    pub fn new(sock: &'a TcpStream, tls: Option<&'a mut TlsStream>, poll: bool) -> Self {
        RecordReader {
            sock,
            tls,
            poll,
            buf: AlignedBuf::new(BUFFER),
            start: 0,
            end: 0,
        }
    }

    fn recv_some(&self, into: &mut [u8], flags: RecvFlags) -> std::io::Result<usize> {
        loop {
            match recv_polled(self.sock, into, flags, self.poll, true) {
                Err(Errno::INTR) => {}
                other => return other.map_err(Into::into),
            }
        }
    }

    /// Hands `take` the decrypted bytes at hand (more are read when none
    /// are); it says how much it used. False once the peer closed.
    fn through_tls(&mut self, take: impl FnMut(&[u8]) -> usize) -> std::io::Result<bool> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(false);
        };
        let mut sock = self.sock;
        tls.read_with(&mut sock, take)
    }

    /// Fills `out`; Ok(false) on a clean end of stream before its first byte.
    pub fn fill(&mut self, out: &mut [u8]) -> std::io::Result<bool> {
        let mut got = 0;
        if self.tls.is_some() {
            while got < out.len() {
                let more = self.through_tls(|data| {
                    let n = data.len().min(out.len() - got);
                    out[got..got + n].copy_from_slice(&data[..n]);
                    got += n;
                    n
                })?;
                if !more {
                    return if got == 0 {
                        Ok(false)
                    } else {
                        Err(ErrorKind::UnexpectedEof.into())
                    };
                }
            }
            return Ok(true);
        }
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
                self.recv_some(&mut out[got..], RecvFlags::empty())?
            } else {
                let mut buf = std::mem::take(&mut self.buf);
                let n = self.recv_some(&mut buf, RecvFlags::empty());
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

    /// Consumes the next `n` bytes without copying them out where the kernel
    /// allows (MSG_TRUNC); `scratch` only bounds each receive. Fails on an
    /// end of stream before the last byte.
    pub fn discard(&mut self, mut n: usize, scratch: &mut [u8]) -> std::io::Result<()> {
        while self.tls.is_some() && n > 0 {
            if !self.through_tls(|data| {
                let k = data.len().min(n);
                n -= k;
                k
            })? {
                return Err(ErrorKind::UnexpectedEof.into());
            }
        }
        let buffered = (self.end - self.start).min(n);
        self.start += buffered;
        n -= buffered;
        while n > 0 {
            let want = n.min(scratch.len());
            let got = self.recv_some(&mut scratch[..want], RecvFlags::TRUNC)?;
            if got == 0 {
                return Err(ErrorKind::UnexpectedEof.into());
            }
            n -= got.min(n);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn discard_skips_buffered_and_unread_bytes_alike() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (rx, _) = listener.accept().unwrap();
        // A header, a payload larger than the reader's buffer, a trailer.
        let payload: Vec<u8> = (0..(BUFFER * 3 + 17)).map(|i| i as u8).collect();
        let writer = std::thread::spawn(move || {
            tx.write_all(b"head").unwrap();
            tx.write_all(&payload).unwrap();
            tx.write_all(b"tail").unwrap();
        });
        let mut reader = RecordReader::new(&rx, None, false);
        let mut header = [0u8; 4];
        assert!(reader.fill(&mut header).unwrap());
        assert_eq!(&header, b"head");
        let mut scratch = vec![0u8; 4096];
        reader.discard(BUFFER * 3 + 17, &mut scratch).unwrap();
        let mut trailer = [0u8; 4];
        reader.fill_all(&mut trailer).unwrap();
        assert_eq!(&trailer, b"tail");
        writer.join().unwrap();
        assert!(
            !reader.fill(&mut trailer).unwrap(),
            "clean end after the trailer"
        );
    }

    #[test]
    fn discard_fails_on_an_early_end() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (rx, _) = listener.accept().unwrap();
        tx.write_all(&[7u8; 100]).unwrap();
        drop(tx);
        let mut reader = RecordReader::new(&rx, None, false);
        let mut scratch = vec![0u8; 64];
        let err = reader.discard(101, &mut scratch).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    }
}
