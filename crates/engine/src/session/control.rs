//! Blocking message exchange over a control connection, on top of the sans-IO
//! codec: the only place where control bytes meet a socket.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use linerate_wire::{FrameDecoder, HELLO_LEN, Hello, Message, WireError};

use linerate_session::SessionError;
use linerate_wire::{Refusal, RefusalCode};

use super::link::{Link, SharedTls};
use crate::error::{EngineError, Result, Subject};
use crate::limits::Budget;

/// How many of the first bytes a peer sends are kept to say what it is.
const FIRST_BYTES: usize = 64;

/// What happened next on a control connection.
#[derive(Debug)]
pub enum Input {
    /// A whole message.
    Message(Message),
    /// Nothing came before the deadline.
    Quiet,
    /// The peer closed the connection, or it broke.
    Closed,
    /// Bytes that do not decode.
    Malformed(WireError),
    /// This end cannot go on (the server's frame budget is spent).
    Failed(SessionError),
}

/// A session's control connection: framed messages over TCP or TLS.
pub struct Control {
    /// The connection.
    pub stream: TcpStream,
    decoder: FrameDecoder,
    /// The first bytes the peer sent: what answered, when it is not linerate.
    first_bytes: Vec<u8>,
    /// Server-wide bytes of frames not yet complete, and what this
    /// connection holds of them.
    frames: Option<FrameHold>,
    /// The connection's TLS when it is encrypted, shared with the other
    /// handles of the same connection ([`Control::try_clone`]).
    tls: Option<Arc<SharedTls>>,
    /// The peer ended its TLS properly; frames already decrypted remain.
    tls_closed: bool,
}

/// What one connection holds of the server's frame budget; given back
/// when the connection goes.
struct FrameHold {
    budget: Arc<Budget>,
    held: u64,
}

impl Drop for FrameHold {
    fn drop(&mut self) {
        self.budget.release(self.held);
    }
}

impl Control {
    /// The control connection over an accepted or opened link.
    pub fn from_link(link: Link) -> Self {
        let mut ctl = Control {
            stream: link.stream,
            decoder: FrameDecoder::new(),
            first_bytes: Vec::new(),
            frames: None,
            tls: link.tls.map(SharedTls::new),
            tls_closed: false,
        };
        // Records that came with the end of the handshake are already read.
        if let Some(tls) = &ctl.tls {
            let mut early = Vec::new();
            match tls.open(&ctl.stream, &[], &mut early) {
                Ok(closed) => ctl.tls_closed = closed,
                Err(_) => ctl.tls_closed = true,
            }
            ctl.decoder.push(&early);
        }
        ctl
    }

    /// A second handle on the same connection, for another thread: one
    /// may send while the other waits for the peer.
    pub fn try_clone(&self) -> std::io::Result<Control> {
        Ok(Control {
            stream: self.stream.try_clone()?,
            decoder: FrameDecoder::new(),
            first_bytes: Vec::new(),
            frames: None,
            tls: self.tls.clone(),
            tls_closed: false,
        })
    }

    /// The connection's TLS, once its handle is the only one left (a data
    /// connection that read its ready).
    pub fn into_link(self) -> Link {
        let tls = self
            .tls
            .and_then(|t| Arc::try_unwrap(t).ok())
            .map(SharedTls::into_inner);
        Link {
            stream: self.stream,
            tls,
        }
    }

    /// The certificate the peer showed, when the connection is encrypted
    /// (a daemon's client shows its key).
    pub fn peer_fingerprint(&self) -> Option<linerate_secure::Fingerprint> {
        self.tls.as_ref().and_then(|t| t.peer_fingerprint())
    }

    /// The cipher and key exchange, when the connection is encrypted.
    pub fn negotiated(&self) -> Option<linerate_secure::Negotiated> {
        self.tls.as_ref().and_then(|t| t.negotiated())
    }

    /// Counts the bytes of incomplete frames against `budget`, shared by
    /// every connection of a server.
    pub fn with_frame_budget(mut self, budget: Arc<Budget>) -> Self {
        self.frames = Some(FrameHold { budget, held: 0 });
        self
    }

    /// Brings the budget in line with what the decoder holds now.
    fn account(&mut self) -> std::result::Result<(), SessionError> {
        let Some(f) = self.frames.as_mut() else {
            return Ok(());
        };
        let now = self.decoder.buffered() as u64;
        if now > f.held {
            f.budget
                .charge(now - f.held)
                .map_err(|e| SessionError::local(RefusalCode::Busy, format!("server busy: {e}")))?;
        } else {
            f.budget.release(f.held - now);
        }
        f.held = now;
        Ok(())
    }

    /// Sends one message, whole.
    pub fn send(&mut self, msg: &Message) -> Result<()> {
        let bytes = msg.encode();
        match &self.tls {
            Some(tls) => tls.send(&self.stream, &bytes),
            None => self.stream.write_all(&bytes),
        }
        .map_err(|e| EngineError::io_at("sending", Subject::Message(msg.name()), e))
    }

    /// Tells the peer why its session is refused; best effort, it may be
    /// gone.
    pub fn refuse(&mut self, code: RefusalCode, message: &str) {
        let _ = self.stream.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = self.send(&Message::Refuse(Refusal {
            code,
            message: message.to_string(),
        }));
    }

    /// The first bytes the peer sent (up to 64).
    pub fn first_bytes(&self) -> &[u8] {
        &self.first_bytes
    }

    /// Waits until `deadline` (for ever without one) for the next message.
    pub fn next_input(&mut self, deadline: Option<Instant>) -> Input {
        let mut buf = [0u8; 64 << 10];
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => {
                    if let Err(e) = self.account() {
                        return Input::Failed(e);
                    }
                    return match Message::from_frame(&frame) {
                        Ok(m) => Input::Message(m),
                        Err(e) => Input::Malformed(e),
                    };
                }
                Ok(None) => {}
                Err(e) => return Input::Malformed(e),
            }
            if self.tls_closed {
                return Input::Closed;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Input::Quiet;
            }
            if self.stream.set_read_timeout(left).is_err() {
                return Input::Closed;
            }
            // In the clear, only what the next frame needs is read: what
            // follows on the socket may not be control frames. Through TLS
            // whole records are read, and the other end sends nothing else.
            let want = match self.tls {
                Some(_) => buf.len(),
                None => self.decoder.wanted().unwrap_or(1).clamp(1, buf.len()),
            };
            match self.stream.read(&mut buf[..want]) {
                Ok(0) => return Input::Closed,
                Ok(n) => {
                    let mut opened = Vec::new();
                    let plain = match &self.tls {
                        None => &buf[..n],
                        Some(tls) => match tls.open(&self.stream, &buf[..n], &mut opened) {
                            Ok(closed) => {
                                self.tls_closed = closed;
                                &opened[..]
                            }
                            Err(e) => {
                                return Input::Failed(SessionError::local(
                                    RefusalCode::Malformed,
                                    e.to_string(),
                                ));
                            }
                        },
                    };
                    let room = FIRST_BYTES.saturating_sub(self.first_bytes.len());
                    self.first_bytes
                        .extend_from_slice(&plain[..plain.len().min(room)]);
                    self.decoder.push(plain);
                    if let Err(e) = self.account() {
                        return Input::Failed(e);
                    }
                }
                Err(e) if is_timeout(&e) => return Input::Quiet,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Input::Closed,
            }
        }
    }
}

/// Whether `e` is a read timeout (a deadline passed), not a failure.
pub fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Reads exactly one hello, refusing bad magic after its first four bytes.
pub fn read_hello(stream: &mut TcpStream, timeout: Duration) -> Result<Hello> {
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| EngineError::io("setting a read timeout", e))?;
    let mut buf = [0u8; HELLO_LEN];
    let mut got = 0;
    // A deadline, not a timeout per read: a byte every few seconds does
    // not keep a connection at the door.
    let deadline = std::time::Instant::now() + timeout;
    while got < HELLO_LEN {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got >= 4 {
                    // Fails fast on a stray client; a short hello is reported below.
                    if let Err(e @ WireError::BadMagic(_)) = Hello::decode(&buf[..got]) {
                        return Err(e.into());
                    }
                }
            }
            Err(e) if is_timeout(&e) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(EngineError::io("reading the handshake", e)),
        }
    }
    Ok(Hello::decode(&buf[..got])?)
}

/// Tells a peer why its connection is refused, outside any session (a bad
/// hello, an unknown session); best effort, it may be gone.
pub fn send_refusal(conn: &mut TcpStream, code: RefusalCode, message: &str) {
    let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
    let msg = Message::Refuse(Refusal {
        code,
        message: message.to_string(),
    });
    let _ = conn.write_all(&msg.encode());
}
