//! One TLS connection over a blocking socket, with rustls's unbuffered
//! API: the caller's plaintext is encrypted straight into the buffer that
//! goes to the socket, and what arrives is decrypted in place in the buffer
//! it was read into, which the caller reads from ([`TlsStream::fill`],
//! [`TlsStream::consume`]). Compared with the buffered API this saves a
//! copy at each end and more than doubles the throughput of a stream
//! (docs/benchmarks/2026-11-25-tls-prototype.md).

use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::ServerName;
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{
    AppDataRecord, ConnectionState, EncodeError, EncryptError, InsufficientSizeError,
    UnbufferedStatus,
};
use rustls::{ClientConfig, ServerConfig};

use crate::config::{Negotiated, SERVER_NAME};

/// Bytes read from the socket at most at once; a received record is at
/// most about 16 KiB, so several fit and few reads are needed.
const INCOMING: usize = 4 << 20;
/// The receive buffer is compacted (what is left moved to its start) only
/// when less than this is free: compacting after every record cost 90 % of
/// the throughput in the prototype.
const COMPACT_BELOW: usize = 64 << 10;
/// Sealed bytes queued by [`TlsStream::write_buffered`] before they go to
/// the socket: small records (a block's header and trailer) share a write
/// with the data around them.
const FLUSH_AT: usize = 256 << 10;

enum Conn {
    Client(UnbufferedClientConnection),
    Server(UnbufferedServerConnection),
}

/// Runs `$body` with `$c` bound to whichever connection this is: the two
/// have the same methods on different types.
macro_rules! with_conn {
    ($self:expr, |$c:ident| $body:expr) => {
        match &mut $self.conn {
            Conn::Client($c) => $body,
            Conn::Server($c) => $body,
        }
    };
}

/// Seals with the connection in its write state: `$call` gets the
/// `WriteTraffic` as `$w` and the free part of the output buffer as `$out`;
/// what it wrote is queued for the socket.
macro_rules! seal {
    ($self:ident, |$w:ident, $out:ident| $call:expr) => {{
        let began = std::time::Instant::now();
        let client = $self.is_client();
        let TlsStream {
            outgoing, out_used, ..
        } = $self;
        let n = with_conn!($self, |c| {
            let UnbufferedStatus { state, .. } = c.process_tls_records(&mut []);
            match state.map_err(|e| tls_err(e, client))? {
                ConnectionState::WriteTraffic(mut $w) => {
                    grow_and_retry(outgoing, *out_used, |$out| {
                        $call.map_err(|e| match e {
                            EncryptError::InsufficientSize(s) => Retry::Grow(s),
                            e => Retry::Fail(io::Error::other(format!("TLS: {e:?}"))),
                        })
                    })
                }
                _ => Err(io::Error::other("TLS: not ready to send")),
            }
        })?;
        $self.out_used += n;
        $self.busy += began.elapsed();
    }};
}

/// What one look at the connection found.
enum Step {
    /// Plaintext at `incoming[from..to]`, decrypted in place.
    Data { from: usize, to: usize },
    /// A record's plaintext, which rustls decrypted into a buffer of its
    /// own, went to the caller's `take`; what it left is in `held`.
    Taken,
    /// Handshake bytes to send (queued in `outgoing`).
    Send,
    /// More bytes from the peer are needed.
    Receive,
    /// Ready to encrypt application data.
    Writable,
    /// The peer sent close_notify.
    Closed,
}

/// One TLS 1.3 connection; the socket is passed to each call.
pub struct TlsStream {
    conn: Conn,
    incoming: Vec<u8>,
    /// Bytes of `incoming` already processed, and bytes filled.
    start: usize,
    used: usize,
    /// Decrypted plaintext not yet consumed: `incoming[data.0..data.1]`.
    data: (usize, usize),
    /// Or plaintext rustls held itself, not yet consumed.
    held: Vec<u8>,
    outgoing: Vec<u8>,
    out_used: usize,
    peer_closed: bool,
    /// Wall time spent sealing and opening records (the cipher and
    /// rustls's copies), waits for a core included; the engine converts it
    /// to CPU time (docs/security.md#tls-time).
    busy: std::time::Duration,
}

/// A TLS error in words; a client refused by a daemon is told what to do.
fn tls_err(e: rustls::Error, client: bool) -> io::Error {
    use rustls::AlertDescription::{
        AccessDenied, BadCertificate, CertificateRequired, CertificateUnknown,
    };
    let what = match e {
        rustls::Error::DecryptError => {
            "TLS: data failed authentication (altered on the way, or not from the peer)".to_string()
        }
        rustls::Error::AlertReceived(CertificateRequired) if client => {
            "the server takes only clients whose key it lists: make one with `linerate keys \
             new`, and have its fingerprint (`linerate keys list`) added to the server's \
             --authorized-keys file"
                .to_string()
        }
        rustls::Error::AlertReceived(BadCertificate | AccessDenied | CertificateUnknown)
            if client =>
        {
            "the server refused this client's key: its fingerprint (`linerate keys list`) \
             is not in the server's --authorized-keys file"
                .to_string()
        }
        e => format!("TLS: {e}"),
    };
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl TlsStream {
    /// The client end of a connection, before its handshake.
    pub fn client(config: Arc<ClientConfig>) -> io::Result<TlsStream> {
        let name = ServerName::try_from(SERVER_NAME).map_err(io::Error::other)?;
        let conn = UnbufferedClientConnection::new(config, name).map_err(|e| tls_err(e, true))?;
        Ok(TlsStream::new(Conn::Client(conn)))
    }

    /// The server end of a connection, before its handshake.
    pub fn server(config: Arc<ServerConfig>) -> io::Result<TlsStream> {
        let conn = UnbufferedServerConnection::new(config).map_err(|e| tls_err(e, false))?;
        Ok(TlsStream::new(Conn::Server(conn)))
    }

    fn new(conn: Conn) -> TlsStream {
        TlsStream {
            conn,
            incoming: vec![0; INCOMING],
            start: 0,
            used: 0,
            data: (0, 0),
            held: Vec::new(),
            outgoing: vec![0; 64 << 10],
            out_used: 0,
            peer_closed: false,
            busy: std::time::Duration::ZERO,
        }
    }

    /// Wall seconds spent sealing and opening records so far.
    pub fn busy_seconds(&self) -> f64 {
        self.busy.as_secs_f64()
    }

    fn is_client(&self) -> bool {
        matches!(self.conn, Conn::Client(_))
    }

    /// What the handshake agreed on (once it is done).
    pub fn negotiated(&self) -> Option<Negotiated> {
        let common: &rustls::CommonState = match &self.conn {
            Conn::Client(c) => c,
            Conn::Server(c) => c,
        };
        Some(Negotiated {
            cipher: format!("{:?}", common.negotiated_cipher_suite()?.suite()),
            key_exchange: format!("{:?}", common.negotiated_key_exchange_group()?.name()),
        })
    }

    /// The fingerprint of the certificate the peer showed, if it showed
    /// one (a server's always; a client's when the server asked).
    pub fn peer_fingerprint(&self) -> Option<crate::Fingerprint> {
        let common: &rustls::CommonState = match &self.conn {
            Conn::Client(c) => c,
            Conn::Server(c) => c,
        };
        common
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| crate::Fingerprint::of(c))
    }

    /// Runs the handshake to its end over `sock`.
    pub fn handshake(&mut self, sock: &mut (impl Read + Write)) -> io::Result<()> {
        let result = self.handshake_steps(sock);
        if result.is_err() {
            // Tell the peer why (rustls queued an alert): a client refused
            // for its key learns that, not just that the connection ended.
            for _ in 0..4 {
                match self.step(&mut |_| 0) {
                    Ok(Step::Send) => {
                        let _ = self.flush(sock);
                    }
                    _ => break,
                }
            }
        }
        result
    }

    fn handshake_steps(&mut self, sock: &mut (impl Read + Write)) -> io::Result<()> {
        loop {
            match self.step(&mut |_| 0)? {
                Step::Send => self.flush(sock)?,
                Step::Receive => self.receive(sock)?,
                // Application data right after the handshake stays for `fill`.
                Step::Writable => return Ok(()),
                Step::Data { from, to } => {
                    self.data = (from, to);
                    return Ok(());
                }
                Step::Taken => return Ok(()),
                Step::Closed => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "TLS: the peer closed during the handshake",
                    ));
                }
            }
        }
    }

    /// Looks at the connection once: processes what has arrived and says
    /// what must happen next. A record's plaintext outside `incoming` goes
    /// to `take`, which says how much of it it used; the rest is kept.
    fn step(&mut self, take: &mut dyn FnMut(&[u8]) -> usize) -> io::Result<Step> {
        let began = std::time::Instant::now();
        let TlsStream {
            incoming,
            start,
            used,
            outgoing,
            out_used,
            held,
            ..
        } = self;
        let base = incoming.as_ptr() as usize;
        let capacity = incoming.len();
        let client = matches!(self.conn, Conn::Client(_));
        let (discard, step) = with_conn!(self, |c| {
            let UnbufferedStatus { discard, state, .. } =
                c.process_tls_records(&mut incoming[*start..*used]);
            let step = match state.map_err(|e| tls_err(e, client))? {
                ConnectionState::ReadTraffic(mut traffic) => match traffic.next_record() {
                    Some(record) => {
                        let AppDataRecord {
                            discard: more,
                            payload,
                        } = record.map_err(|e| tls_err(e, client))?;
                        let at = payload.as_ptr() as usize;
                        let inside = at >= base && at + payload.len() <= base + capacity;
                        let step = if inside {
                            let from = at - base;
                            Step::Data {
                                from,
                                to: from + payload.len(),
                            }
                        } else {
                            let n = take(payload).min(payload.len());
                            held.extend_from_slice(&payload[n..]);
                            Step::Taken
                        };
                        (discard + more, step)
                    }
                    None => (discard, Step::Receive),
                },
                ConnectionState::EncodeTlsData(mut enc) => {
                    let n = grow_and_retry(outgoing, *out_used, |out| {
                        enc.encode(out).map_err(|e| match e {
                            EncodeError::InsufficientSize(s) => Retry::Grow(s),
                            e => Retry::Fail(io::Error::other(format!("TLS: {e:?}"))),
                        })
                    })?;
                    *out_used += n;
                    (discard, Step::Send)
                }
                ConnectionState::TransmitTlsData(t) => {
                    t.done();
                    (discard, Step::Send)
                }
                ConnectionState::BlockedHandshake => (discard, Step::Receive),
                ConnectionState::WriteTraffic(_) => (discard, Step::Writable),
                ConnectionState::PeerClosed | ConnectionState::Closed => (discard, Step::Closed),
                _ => (discard, Step::Receive),
            };
            Ok::<_, io::Error>(step)
        })?;
        self.start += discard;
        self.busy += began.elapsed();
        if let Step::Closed = step {
            self.peer_closed = true;
        }
        Ok(step)
    }

    /// Writes out what is queued.
    pub fn flush(&mut self, sock: &mut impl Write) -> io::Result<()> {
        if self.out_used > 0 {
            sock.write_all(&self.outgoing[..self.out_used])?;
            self.out_used = 0;
        }
        Ok(())
    }

    /// Reads more of the peer's bytes; an end of stream without the TLS
    /// close_notify is an error (the data may have been cut short).
    fn receive(&mut self, sock: &mut impl Read) -> io::Result<()> {
        if self.start == self.used && self.data.0 == self.data.1 {
            (self.start, self.used) = (0, 0);
        } else if self.incoming.len() - self.used < COMPACT_BELOW && self.data.0 == self.data.1 {
            self.incoming.copy_within(self.start..self.used, 0);
            self.used -= self.start;
            self.start = 0;
        }
        if self.used == self.incoming.len() {
            return Err(io::Error::other("TLS: receive buffer full"));
        }
        // A process stopped and continued (SIGSTOP, a debugger) sees EINTR
        // from a read with a timeout: the connection is fine, read again.
        let n = loop {
            match sock.read(&mut self.incoming[self.used..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                got => break got?,
            }
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "TLS: the connection ended without close_notify (cut short?)",
            ));
        }
        self.used += n;
        Ok(())
    }

    /// Encrypts all of `plaintext` and writes it to `sock`.
    pub fn write_all(
        &mut self,
        sock: &mut (impl Read + Write),
        plaintext: &[u8],
    ) -> io::Result<()> {
        self.write_buffered(sock, plaintext)?;
        self.flush(sock)
    }

    /// Encrypts all of `plaintext`; the sealed bytes go to `sock` once
    /// enough are queued, or at [`TlsStream::flush`].
    pub fn write_buffered(
        &mut self,
        sock: &mut (impl Read + Write),
        plaintext: &[u8],
    ) -> io::Result<()> {
        loop {
            match self.step(&mut |_| 0)? {
                Step::Writable => break,
                Step::Send => self.flush(sock)?,
                Step::Receive => self.receive(sock)?,
                Step::Data { .. } | Step::Taken => {
                    return Err(io::Error::other(
                        "TLS: data arrived on a connection that only sends",
                    ));
                }
                Step::Closed => return Err(io::ErrorKind::BrokenPipe.into()),
            }
        }
        seal!(self, |w, out| w.encrypt(plaintext, out));
        if self.out_used >= FLUSH_AT {
            self.flush(sock)?;
        }
        Ok(())
    }

    /// Encrypts `plaintext` without touching a socket and gives the bytes
    /// to send: for a connection whose reading and writing happen on
    /// different threads (see [`TlsStream::feed`]).
    pub fn seal(&mut self, plaintext: &[u8]) -> io::Result<Vec<u8>> {
        match self.step(&mut |_| 0)? {
            Step::Writable => {}
            Step::Closed => return Err(io::ErrorKind::BrokenPipe.into()),
            _ => return Err(io::Error::other("TLS: not ready to send")),
        }
        seal!(self, |w, out| w.encrypt(plaintext, out));
        Ok(self.take_outgoing())
    }

    /// Sealed bytes waiting for the socket (handshake or alert bytes that
    /// [`TlsStream::open`] produced), handed over.
    pub fn take_outgoing(&mut self) -> Vec<u8> {
        let bytes = self.outgoing[..self.out_used].to_vec();
        self.out_used = 0;
        bytes
    }

    /// Hands over bytes read from the socket elsewhere; [`TlsStream::open`]
    /// decrypts them.
    pub fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Plaintext left by the handshake lives before `start`, where
        // compacting would write: keep it aside first.
        if self.data.0 < self.data.1 {
            let (from, to) = std::mem::take(&mut self.data);
            self.held.extend_from_slice(&self.incoming[from..to]);
        }
        if self.start == self.used {
            (self.start, self.used) = (0, 0);
        } else if self.incoming.len() - self.used < bytes.len() {
            self.incoming.copy_within(self.start..self.used, 0);
            self.used -= self.start;
            self.start = 0;
        }
        if self.incoming.len() - self.used < bytes.len() {
            return Err(io::Error::other("TLS: receive buffer full"));
        }
        self.incoming[self.used..self.used + bytes.len()].copy_from_slice(bytes);
        self.used += bytes.len();
        Ok(())
    }

    /// Decrypts every whole record fed so far into `out`; true once the
    /// peer has closed properly. Bytes to send in answer (rare after the
    /// handshake) wait in [`TlsStream::take_outgoing`].
    pub fn open(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        out.append(&mut self.held);
        if self.data.0 < self.data.1 {
            out.extend_from_slice(&self.incoming[self.data.0..self.data.1]);
            self.data = (0, 0);
        }
        let mut all = |p: &[u8]| {
            out.extend_from_slice(p);
            p.len()
        };
        loop {
            match self.step(&mut all)? {
                Step::Data { from, to } => all(&self.incoming[from..to]),
                Step::Taken | Step::Send => 0,
                Step::Receive | Step::Writable => return Ok(false),
                Step::Closed => return Ok(true),
            };
        }
    }

    /// Bytes received but not taken as TLS: when a handshake fails, what
    /// the peer sent instead (a refusal in the clear, another protocol).
    pub fn unprocessed(&self) -> &[u8] {
        &self.incoming[self.start..self.used]
    }

    /// The next plaintext received, at least one byte, or empty once the
    /// peer has closed the connection properly. Call [`TlsStream::consume`]
    /// with what was used of it.
    pub fn fill(&mut self, sock: &mut (impl Read + Write)) -> io::Result<&[u8]> {
        if !self.held.is_empty() {
            return Ok(&self.held);
        }
        while self.data.0 == self.data.1 && !self.peer_closed {
            match self.step(&mut |_| 0)? {
                Step::Data { from, to } => self.data = (from, to),
                Step::Taken => return Ok(&self.held),
                Step::Send => self.flush(sock)?,
                Step::Receive | Step::Writable => self.receive(sock)?,
                Step::Closed => {}
            }
        }
        Ok(&self.incoming[self.data.0..self.data.1])
    }

    /// Marks the first `n` bytes the last read gave as taken.
    pub fn consume(&mut self, n: usize) {
        if !self.held.is_empty() {
            self.held.drain(..n.min(self.held.len()));
            return;
        }
        self.data.0 = (self.data.0 + n).min(self.data.1);
    }

    /// Hands the next plaintext received to `take`, which says how much of
    /// it it used (at least one byte); false once the peer has closed
    /// properly. Unlike [`TlsStream::fill`], a record rustls decrypted into
    /// its own buffer reaches `take` without being copied first.
    pub fn read_with(
        &mut self,
        sock: &mut (impl Read + Write),
        mut take: impl FnMut(&[u8]) -> usize,
    ) -> io::Result<bool> {
        if !self.held.is_empty() {
            let n = take(&self.held).min(self.held.len());
            self.held.drain(..n);
            return Ok(true);
        }
        loop {
            if self.data.0 < self.data.1 {
                let n = take(&self.incoming[self.data.0..self.data.1]);
                self.consume(n);
                return Ok(true);
            }
            if self.peer_closed {
                return Ok(false);
            }
            match self.step(&mut take)? {
                Step::Data { from, to } => self.data = (from, to),
                Step::Taken => return Ok(true),
                Step::Send => self.flush(sock)?,
                Step::Receive | Step::Writable => self.receive(sock)?,
                Step::Closed => {}
            }
        }
    }

    /// Reads into `out` (a copy; [`TlsStream::fill`] avoids it).
    pub fn read(&mut self, sock: &mut (impl Read + Write), out: &mut [u8]) -> io::Result<usize> {
        let data = self.fill(sock)?;
        let n = data.len().min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        self.consume(n);
        Ok(n)
    }

    /// Tells the peer this end sends nothing more (TLS close_notify).
    pub fn close(&mut self, sock: &mut (impl Read + Write)) -> io::Result<()> {
        seal!(self, |w, out| w.queue_close_notify(out));
        self.flush(sock)
    }
}

enum Retry {
    Grow(InsufficientSizeError),
    Fail(io::Error),
}

/// Runs `f` on the free part of `buf` (from `used`), growing it once if
/// rustls says it is too small.
fn grow_and_retry(
    buf: &mut Vec<u8>,
    used: usize,
    mut f: impl FnMut(&mut [u8]) -> Result<usize, Retry>,
) -> io::Result<usize> {
    match f(&mut buf[used..]) {
        Ok(n) => Ok(n),
        Err(Retry::Grow(s)) => {
            buf.resize(used + s.required_size, 0);
            match f(&mut buf[used..]) {
                Ok(n) => Ok(n),
                Err(Retry::Grow(_)) => Err(io::Error::other("TLS: output buffer too small")),
                Err(Retry::Fail(e)) => Err(e),
            }
        }
        Err(Retry::Fail(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Identity, client_config, server_config};
    use std::os::unix::net::UnixStream;

    type Ends = ((TlsStream, UnixStream), (TlsStream, UnixStream));

    /// A client and a server handshaken over a socket pair, on two threads.
    fn pair(pin_right: bool) -> io::Result<Ends> {
        let id = Identity::generate().unwrap();
        let pin = if pin_right {
            id.fingerprint()
        } else {
            Identity::generate().unwrap().fingerprint()
        };
        pair_with(client_config(pin).unwrap(), server_config(&id).unwrap())
    }

    fn pair_with(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> io::Result<Ends> {
        let (mut a, mut b) = UnixStream::pair()?;
        let server = std::thread::spawn(move || {
            let mut s = TlsStream::server(server)?;
            s.handshake(&mut b)?;
            Ok::<_, io::Error>((s, b))
        });
        let mut c = TlsStream::client(client)?;
        if let Err(e) = c.handshake(&mut a) {
            // The server waits for bytes until this end is gone.
            drop(a);
            let _ = server.join();
            return Err(e);
        }
        // TLS 1.3: the client is done before the server has checked its
        // certificate; a refusal arrives as an alert on the first read.
        let s = match server.join().unwrap() {
            Ok(s) => s,
            Err(e) => {
                let mut buf = [0u8; 16];
                let got = c.read(&mut a, &mut buf);
                return Err(got.err().unwrap_or(e));
            }
        };
        Ok(((c, a), s))
    }

    #[test]
    fn a_daemon_takes_listed_client_keys_only_and_says_why_to_the_others() {
        use crate::keys::KeyFile;
        use crate::{ServerTrust, client_config_with, server_config_for_clients};
        let dir = std::env::temp_dir().join(format!("lr-mtls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let server = Identity::generate().unwrap();
        let listed = Identity::generate().unwrap();
        let stranger = Identity::generate().unwrap();
        let keys = dir.join("authorized_keys");
        std::fs::write(&keys, format!("{} alice\n", listed.fingerprint())).unwrap();
        let daemon = || server_config_for_clients(&server, KeyFile(keys.clone())).unwrap();
        let seen = Arc::new(std::sync::Mutex::new(None));
        let first_use = ServerTrust::FirstUse(Arc::clone(&seen));

        let ((c, _), (s, _)) = pair_with(
            client_config_with(first_use, Some(&listed)).unwrap(),
            daemon(),
        )
        .unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            Some(server.fingerprint()),
            "recorded"
        );
        assert_eq!(s.peer_fingerprint(), Some(listed.fingerprint()));
        assert_eq!(c.peer_fingerprint(), Some(server.fingerprint()));

        let trust = ServerTrust::Exactly(server.fingerprint());
        let err = pair_with(client_config_with(trust.clone(), None).unwrap(), daemon())
            .err()
            .expect("no key, no entry");
        assert!(err.to_string().contains("linerate keys new"), "{err}");
        let err = pair_with(
            client_config_with(trust, Some(&stranger)).unwrap(),
            daemon(),
        )
        .err()
        .expect("an unlisted key is refused");
        assert!(err.to_string().contains("authorized-keys"), "{err}");

        // Trust on first use holds on to what it saw first.
        let other = Identity::generate().unwrap();
        let pinned = ServerTrust::FirstUse(seen);
        let err = pair_with(
            client_config_with(pinned, Some(&listed)).unwrap(),
            server_config_for_clients(&other, KeyFile(keys.clone())).unwrap(),
        )
        .err()
        .expect("a changed server is refused");
        assert!(err.to_string().contains("fingerprint"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bytes_go_through_whole_and_the_cipher_is_named() {
        let ((mut c, mut a), (mut s, mut b)) = pair(true).unwrap();
        let n = c.negotiated().unwrap();
        assert!(n.cipher.starts_with("TLS13_"), "{n:?}");
        let sent: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let expect = sent.clone();
        let writer = std::thread::spawn(move || {
            for chunk in sent.chunks(1 << 20) {
                c.write_all(&mut a, chunk).unwrap();
            }
            c.close(&mut a).unwrap();
        });
        let mut got = Vec::new();
        loop {
            let data = s.fill(&mut b).unwrap();
            if data.is_empty() {
                break;
            }
            got.extend_from_slice(data);
            let n = data.len();
            s.consume(n);
        }
        writer.join().unwrap();
        assert!(
            got == expect,
            "{} of {} bytes, or altered",
            got.len(),
            expect.len()
        );
    }

    #[test]
    fn a_client_given_another_fingerprint_refuses_the_server() {
        let err = pair(false).err().expect("refused");
        assert!(err.to_string().contains("fingerprint"), "{err}");
    }

    #[test]
    fn one_flipped_byte_fails_authentication() {
        let ((mut c, mut a), (mut s, _b)) = pair(true).unwrap();
        // Encrypt into a buffer instead of the socket, flip one byte, replay.
        let mut wire = Vec::new();
        let mut both = Both(&mut a, &mut wire);
        c.write_all(&mut both, &[42u8; 4096]).unwrap();
        let at = wire.len() / 2;
        wire[at] ^= 1;
        let mut fed = Both(&mut std::io::Cursor::new(wire), &mut Vec::new());
        let err = s.fill(&mut fed).expect_err("refused");
        assert!(err.to_string().contains("authentication"), "{err}");
    }

    #[test]
    fn sealed_and_fed_in_pieces_comes_out_whole() {
        let ((mut c, mut a), (mut s, mut b)) = pair(true).unwrap();
        let mut wire = Vec::new();
        for i in 0..50u8 {
            wire.extend(c.seal(&vec![i; 1000 + usize::from(i) * 997]).unwrap());
        }
        c.close(&mut a).unwrap();
        drop(a);
        let mut tail = Vec::new();
        b.read_to_end(&mut tail).unwrap();
        wire.extend(tail);
        let mut got = Vec::new();
        let mut closed = false;
        for piece in wire.chunks(777) {
            s.feed(piece).unwrap();
            closed = s.open(&mut got).unwrap();
        }
        assert!(closed, "close_notify seen");
        let expect: Vec<u8> = (0..50u8)
            .flat_map(|i| vec![i; 1000 + usize::from(i) * 997])
            .collect();
        assert!(got == expect, "{} of {} bytes", got.len(), expect.len());
    }

    /// Reads from the first, writes into the second.
    struct Both<'a, R, W>(&'a mut R, &'a mut W);

    impl<R: Read, W> Read for Both<'_, R, W> {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.0.read(b)
        }
    }

    impl<R, W: Write> Write for Both<'_, R, W> {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.1.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.1.flush()
        }
    }
}
