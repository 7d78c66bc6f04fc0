//! A client's connections to a server: the control connection that opens
//! a session, and each data connection, which the server answers with a
//! ready of its own before any payload flows.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use linerate_secure::ClientConfig;

use linerate_session::JoinClient;
use linerate_wire::{Hello, Role, SessionId, SessionKind};

use super::StreamSocket;
use super::control::Control;
use super::link::{Link, connect_tls};
use crate::address::Stripe;
use crate::error::{EngineError, Lookalike, Result};
use crate::sockopt::{self, StreamOptions};

/// How long a connection may take to be set up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a client connects, and how: the server's address, the local
/// address to bind, and the TLS to speak (None: in the clear).
#[derive(Clone)]
pub struct Peer {
    /// The server's control address.
    pub server: SocketAddr,
    /// The local address to connect from, if chosen.
    pub bind: Option<IpAddr>,
    /// TLS to the server, when encrypted.
    pub tls: Option<Arc<ClientConfig>>,
    /// The session's secret, which encrypted data connections show to
    /// join it (the one-shot receiver's token).
    pub token: Option<String>,
    /// Paths data connections spread over, round-robin by their index
    /// (`--stripe`); empty: the server's address and `bind` for all.
    pub stripes: Vec<Stripe>,
}

impl Peer {
    /// Where data connection `index` goes, and from where.
    fn data_path(&self, index: u16) -> (SocketAddr, Option<IpAddr>) {
        match self.stripes.len() {
            0 => (self.server, self.bind),
            n => {
                let s = self.stripes[usize::from(index) % n];
                (SocketAddr::new(s.remote, self.server.port()), s.local)
            }
        }
    }
}

/// Opens a session's control connection and sends its hello; the
/// session's machine takes it from there (the server's accept is its first
/// input).
pub fn open_control(peer: &Peer, session: SessionId, kind: SessionKind) -> Result<Control> {
    let stream = connect(peer.server, peer.bind, None)?;
    // Control frames are small and often come in pairs: with Nagle the
    // second waited for the peer's delayed ACK, 40 ms on Linux.
    stream
        .set_nodelay(true)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    let hello = Hello::new(session, Role::Control, kind, 0);
    Ok(Control::from_link(greet(peer, stream, hello)?))
}

/// Sends `hello`, then runs the TLS handshake when the peer is to be
/// reached encrypted.
fn greet(peer: &Peer, mut stream: TcpStream, hello: Hello) -> Result<Link> {
    send_hello(&mut stream, hello.with_tls(peer.tls.is_some()))?;
    let tls = match &peer.tls {
        Some(config) => Some(connect_tls(
            &mut stream,
            config,
            peer.server,
            CONNECT_TIMEOUT,
        )?),
        None => None,
    };
    Ok(Link { stream, tls })
}

/// Opens data connection `hello.stream_index` of a session and waits for the server's ready.
pub fn open_data(peer: &Peer, options: &StreamOptions, hello: Hello) -> Result<StreamSocket> {
    let (to, from) = peer.data_path(hello.stream_index);
    let stream = connect(to, from, Some(options))?;
    // The join follows the TLS handshake's last flight: with Nagle it waited
    // for the server's delayed ACK, 40 ms on every encrypted connection.
    stream
        .set_nodelay(true)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    let mut data = Control::from_link(greet(peer, stream, hello)?);
    let mut join = JoinClient::new(Instant::now(), peer.tls.is_some(), peer.token.clone());
    super::run_to_end(&mut data, &mut join)?;
    let link = data.into_link();
    // Data goes with Nagle on (docs/defaults.md).
    link.stream
        .set_nodelay(false)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    options
        .apply_connected(&link.stream, false)
        .map_err(|e| EngineError::io("applying socket options", e))?;
    sockopt::set_idle_timeouts(&link.stream)
        .map_err(|e| EngineError::io("setting socket timeouts", e))?;
    Ok(StreamSocket::new(hello.stream_index, link))
}

fn send_hello(stream: &mut TcpStream, hello: Hello) -> Result<()> {
    use std::io::Write;
    stream
        .write_all(&hello.encode())
        .map_err(|e| EngineError::io("sending the handshake", e))
}

fn connect(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    options: Option<&StreamOptions>,
) -> Result<TcpStream> {
    let sock = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )
    .map_err(|e| EngineError::io("creating a socket", e))?;
    if let Some(o) = options {
        o.apply_before_connect(&sock)
            .map_err(|e| EngineError::io("applying socket options", e))?;
    }
    if let Some(ip) = bind {
        sock.bind(&SocketAddr::new(ip, 0).into())
            .map_err(|e| EngineError::io_at("binding to", ip, e))?;
    }
    sock.connect_timeout(&addr.into(), CONNECT_TIMEOUT)
        .map_err(|e| EngineError::io_at("connecting to", addr, e))?;
    Ok(sock.into())
}

/// Why a session to `server` ended before any accept: a refusal from a
/// linerate server stands; anything else is explained by what answered,
/// from the first bytes it sent or, when it sent none, from how it answers
/// an iperf3 client's opening.
pub fn before_accept(server: SocketAddr, ctl: &Control, e: EngineError) -> EngineError {
    if matches!(e, EngineError::Refused(_)) {
        return e;
    }
    let first = ctl.first_bytes();
    // An iperf3 server serves one client at a time: it must be let go first
    // (a shutdown, as the connection may have other descriptors).
    let _ = ctl.stream.shutdown(std::net::Shutdown::Both);
    let html =
        |b: &[u8]| b.len() >= 5 && b[..5].eq_ignore_ascii_case(b"<!doc") || b.starts_with(b"<html");
    let looks = if first.starts_with(b"HTTP/") || html(first) {
        Lookalike::Http
    } else if first.starts_with(b"SSH-") {
        Lookalike::Ssh
    } else if !first.is_empty() {
        Lookalike::Other(first.iter().take(24).copied().collect())
    } else if answers_like_iperf3(server) {
        Lookalike::Iperf3
    } else if answers_like_http(server) {
        Lookalike::Http
    } else {
        Lookalike::Silent(Box::new(e))
    };
    EngineError::NotLinerate { server, looks }
}

/// Whether `server` answers the 37-byte cookie an iperf3 client opens with
/// by one state byte, as an iperf3 server does (PARAM_EXCHANGE, 9, when
/// idle; ACCESS_DENIED, -1, when busy).
fn answers_like_iperf3(server: SocketAddr) -> bool {
    let mut cookie = [b'a'; 37];
    cookie[36] = 0;
    // An iperf3 server that has just dropped a connection reopens its
    // listening socket, resetting what came meanwhile: try a few times.
    (0..3).any(|attempt| {
        std::thread::sleep(Duration::from_millis(if attempt == 0 { 100 } else { 400 }));
        answer(server, &cookie).is_some_and(|r| r.len() == 1 && matches!(r[0], 9 | 0xff))
    })
}

/// Whether `server` answers a HEAD request as an HTTP server does.
fn answers_like_http(server: SocketAddr) -> bool {
    answer(server, b"HEAD / HTTP/1.0\r\n\r\n").is_some_and(|r| r.starts_with(b"HTTP/"))
}

/// The first bytes `server` sends back to `opening` within 2 s.
fn answer(server: SocketAddr, opening: &[u8]) -> Option<Vec<u8>> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect_timeout(&server, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(opening).ok()?;
    let mut reply = [0u8; 16];
    let n = s.read(&mut reply).ok()?;
    Some(reply[..n].to_vec())
}

/// A fresh random session id.
pub fn new_session_id() -> Result<SessionId> {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(EngineError::NoRandomness)?;
    Ok(SessionId(id))
}
