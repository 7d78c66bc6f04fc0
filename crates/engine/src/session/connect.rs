//! A client's connections to a server: the control connection that opens
//! a session, and each data connection, which the server answers with a
//! ready of its own before any payload flows.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use linerate_session::SessionError;
use linerate_wire::{Hello, Message, Role, SessionId, SessionKind};

use super::StreamSocket;
use super::control::Control;
use crate::error::{EngineError, Result};
use crate::sockopt::{self, StreamOptions};

/// How long a connection may take to be set up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens a session's control connection and sends its hello; the
/// session's machine takes it from there (the server's accept is its first
/// input).
pub(crate) fn open_control(
    server: SocketAddr,
    bind: Option<IpAddr>,
    session: SessionId,
    kind: SessionKind,
) -> Result<Control> {
    let mut stream = connect(server, bind, None)?;
    // Control frames are small and often come in pairs: with Nagle the
    // second waited for the peer's delayed ACK, 40 ms on Linux.
    stream
        .set_nodelay(true)
        .map_err(|e| EngineError::io("TCP_NODELAY", e))?;
    send_hello(&mut stream, Hello::new(session, Role::Control, kind, 0))?;
    Ok(Control::new(stream))
}

/// Opens data connection `hello.stream_index` of a session and waits for the server's ready.
pub(crate) fn open_data(
    server: SocketAddr,
    bind: Option<IpAddr>,
    options: &StreamOptions,
    hello: Hello,
) -> Result<StreamSocket> {
    let mut stream = connect(server, bind, Some(options))?;
    send_hello(&mut stream, hello)?;
    let mut data = Control::new(stream);
    match data.recv(CONNECT_TIMEOUT, "the data connection's ready")? {
        Message::Ready(_) => {}
        Message::Refuse(r) => return Err(EngineError::Refused(r)),
        other => {
            return Err(EngineError::Session(SessionError::Unexpected {
                waiting_for: "the data connection's ready",
                got: other.name(),
            }));
        }
    }
    options
        .apply_connected(&data.stream, false)
        .map_err(|e| EngineError::io("applying socket options", e))?;
    sockopt::set_idle_timeouts(&data.stream)
        .map_err(|e| EngineError::io("setting socket timeouts", e))?;
    Ok(StreamSocket {
        index: hello.stream_index,
        stream: data.stream,
    })
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
            .map_err(|e| EngineError::io(format!("binding to {ip}"), e))?;
    }
    sock.connect_timeout(&addr.into(), CONNECT_TIMEOUT)
        .map_err(|e| EngineError::io(format!("connecting to {addr}"), e))?;
    Ok(sock.into())
}

pub(crate) fn new_session_id() -> Result<SessionId> {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(|e| EngineError::Failed(format!("no randomness: {e}")))?;
    Ok(SessionId(id))
}
