//! Blocking message exchange over a control connection, on top of the sans-IO
//! codec: the only place where control bytes meet a socket.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use linerate_wire::{FrameDecoder, HELLO_LEN, Hello, Message, WireError};

use crate::error::{EngineError, Result};
use crate::limits::Budget;

pub struct Control {
    pub stream: TcpStream,
    decoder: FrameDecoder,
    /// Server-wide bytes of frames not yet complete, and what this
    /// connection holds of them.
    frames: Option<FrameHold>,
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
    pub fn new(stream: TcpStream) -> Self {
        Control {
            stream,
            decoder: FrameDecoder::new(),
            frames: None,
        }
    }

    /// Counts the bytes of incomplete frames against `budget`, shared by
    /// every connection of a server.
    pub fn with_frame_budget(mut self, budget: Arc<Budget>) -> Self {
        self.frames = Some(FrameHold { budget, held: 0 });
        self
    }

    /// Brings the budget in line with what the decoder holds now.
    fn account(&mut self) -> Result<()> {
        let Some(f) = self.frames.as_mut() else {
            return Ok(());
        };
        let now = self.decoder.buffered() as u64;
        if now > f.held {
            f.budget
                .charge(now - f.held)
                .map_err(|e| EngineError::Failed(format!("server busy: {e}")))?;
        } else {
            f.budget.release(f.held - now);
        }
        f.held = now;
        Ok(())
    }

    pub fn send(&mut self, msg: &Message) -> Result<()> {
        self.stream
            .write_all(&msg.encode())
            .map_err(|e| EngineError::io(format!("sending {}", msg.name()), e))
    }

    /// Waits up to `timeout` for the next message.
    pub fn recv(&mut self, timeout: Duration, waiting_for: &str) -> Result<Message> {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 64 << 10];
        loop {
            if let Some(frame) = self.decoder.next_frame()? {
                self.account()?;
                return Ok(Message::from_frame(&frame)?);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(EngineError::Timeout(format!("waiting for {waiting_for}")));
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|e| EngineError::io("setting a read timeout", e))?;
            let want = self.decoder.wanted()?.clamp(1, buf.len());
            match self.stream.read(&mut buf[..want]) {
                Ok(0) => {
                    return Err(EngineError::PeerClosed(format!(
                        "while waiting for {waiting_for}"
                    )));
                }
                Ok(n) => {
                    self.decoder.push(&buf[..n]);
                    self.account()?;
                }
                Err(e) if is_timeout(&e) => {
                    return Err(EngineError::Timeout(format!("waiting for {waiting_for}")));
                }
                Err(e) => return Err(EngineError::io(format!("waiting for {waiting_for}"), e)),
            }
        }
    }
}

impl Control {
    /// Waits for the client's start signal (every data connection is up).
    pub fn expect_start(&mut self, timeout: Duration) -> Result<()> {
        match self.recv(timeout, "the start signal")? {
            Message::Start => Ok(()),
            other => Err(EngineError::Failed(format!(
                "expected start, got {}",
                other.name()
            ))),
        }
    }
}

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
    while got < HELLO_LEN {
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
            Err(e) => return Err(EngineError::io("reading the handshake", e)),
        }
    }
    Ok(Hello::decode(&buf[..got])?)
}
