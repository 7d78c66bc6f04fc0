//! A connection past its hello: in the clear, or through TLS when the
//! hello said a handshake follows. The hello itself always travels in the
//! clear (it holds no secret: the session id, the role, the stream index),
//! and so does a refusal sent before any handshake; everything after a
//! handshake is encrypted (docs/security.md).

use crate::lock;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use linerate_secure::{ClientConfig, Negotiated, ServerConfig, TlsStream};
use linerate_wire::{FrameDecoder, Message};

use crate::error::{EngineError, Result};

/// A connection and, when it is encrypted, its TLS state.
pub struct Link {
    /// The TCP connection.
    pub stream: TcpStream,
    /// TLS over it, when encrypted.
    pub tls: Option<TlsStream>,
}

/// The server's side of a handshake, within the time the hello had.
pub fn accept_tls(stream: &mut TcpStream, config: &Arc<ServerConfig>) -> io::Result<TlsStream> {
    let mut tls = TlsStream::server(Arc::clone(config))?;
    tls.handshake(stream)?;
    Ok(tls)
}

/// The client's side of a handshake with `server`. A linerate server that
/// refuses the connection before any handshake answers in the clear: that
/// refusal is the error then, not the TLS failure it caused.
pub fn connect_tls(
    stream: &mut TcpStream,
    config: &Arc<ClientConfig>,
    server: SocketAddr,
    timeout: Duration,
) -> Result<TlsStream> {
    let mut tls = TlsStream::client(Arc::clone(config)).map_err(|e| EngineError::io("TLS", e))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| EngineError::io("setting a read timeout", e))?;
    match tls.handshake(stream) {
        Ok(()) => Ok(tls),
        Err(e) => {
            let mut frames = FrameDecoder::new();
            frames.push(tls.unprocessed());
            if let Ok(Some(frame)) = frames.next_frame()
                && let Ok(Message::Refuse(r)) = Message::from_frame(&frame)
            {
                return Err(EngineError::Refused(r));
            }
            Err(EngineError::Tls { server, error: e })
        }
    }
}

/// A control connection's TLS, shared by the threads that use it: one may
/// wait for the peer while another sends. The reader never holds it while
/// waiting for bytes; writes keep the order they were sealed in.
pub struct SharedTls {
    state: Mutex<TlsStream>,
    writing: Mutex<()>,
}

impl SharedTls {
    /// Shares `tls` between the threads that write and read it.
    pub fn new(tls: TlsStream) -> Arc<SharedTls> {
        Arc::new(SharedTls {
            state: Mutex::new(tls),
            writing: Mutex::new(()),
        })
    }

    /// Encrypts `plaintext` and writes it to `stream`.
    pub fn send(&self, mut stream: &TcpStream, plaintext: &[u8]) -> io::Result<()> {
        let _order = lock(&self.writing);
        let sealed = lock(&self.state).seal(plaintext)?;
        stream.write_all(&sealed)
    }

    /// Decrypts `bytes` read from the socket into `out`; true once the
    /// peer has closed properly.
    pub fn open(&self, stream: &TcpStream, bytes: &[u8], out: &mut Vec<u8>) -> io::Result<bool> {
        // An answer (a key update's) must not pass records sealed before it.
        let _order = lock(&self.writing);
        let (closed, answer) = {
            let mut state = lock(&self.state);
            state.feed(bytes)?;
            let closed = state.open(out)?;
            (closed, state.take_outgoing())
        };
        if !answer.is_empty() {
            let mut s = stream;
            s.write_all(&answer)?;
        }
        Ok(closed)
    }

    /// What TLS negotiated (version, cipher suite).
    pub fn negotiated(&self) -> Option<Negotiated> {
        lock(&self.state).negotiated()
    }

    /// The peer certificate's fingerprint, if it showed one.
    pub fn peer_fingerprint(&self) -> Option<linerate_secure::Fingerprint> {
        lock(&self.state).peer_fingerprint()
    }

    /// The TLS stream back, once no other thread holds it.
    pub fn into_inner(self) -> TlsStream {
        self.state.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}
