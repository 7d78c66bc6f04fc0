use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use linerate_result::StreamFailure;
use linerate_wire::{Refusal, WireError};
use thiserror::Error;

/// Why a run, a session or a server stopped, in words the CLI prints as
/// they are (each variant's text names the flag or the side at fault).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The OS error is part of the message, not a separate source, so a
    /// report of the error chain does not say it twice.
    #[error("{doing}{subject}: {error}")]
    Io {
        /// What was being done.
        doing: &'static str,
        /// To what.
        subject: Subject,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// Not a `source` either, for the same reason as `Io`.
    #[error("protocol error: {0}")]
    Wire(WireError),
    /// The peer refused the session, with its code and why.
    #[error("refused by the peer ({}): {}", .0.code.words(), .0.message)]
    Refused(Refusal),
    /// The user ended the run (Ctrl-C); what arrived is kept for a rerun.
    #[error("interrupted")]
    Interrupted,
    /// What answered at `server` is not a linerate server.
    #[error("{server} {looks}")]
    NotLinerate {
        /// Where it answered.
        server: SocketAddr,
        /// What it looks like.
        looks: Lookalike,
    },
    /// The peer did not answer in time.
    #[error(
        "timed out waiting for {waiting_for}{}",
        within.map(|t| format!(
            ": nothing came within {:.1} s (--timeout); it has stopped answering, \
             or the path drops everything",
            t.as_secs_f64()
        )).unwrap_or_default()
    )]
    Timeout {
        /// What was awaited.
        waiting_for: &'static str,
        /// The time it had, when a flag set it.
        within: Option<Duration>,
    },
    /// The peer closed the connection while this end waited for it.
    #[error("peer closed the connection while waiting for {waiting_for}")]
    PeerClosed {
        /// What was awaited.
        waiting_for: &'static str,
    },
    /// This end refused the peer; the code goes back to the peer and stays
    /// here for the caller.
    #[error("{}", .0.message)]
    Refusing(Refusal),
    /// A thread of the run ended by a panic (a bug, never bad input).
    #[error("{0} panicked")]
    Panicked(&'static str),
    /// The server's streams failed while the client's did not.
    #[error("server: {}", failure_list(.0))]
    ServerStreams(Vec<StreamFailure>),
    /// The client's streams failed: the server may have gone away.
    #[error("the run failed; the server may have gone away ({})", failure_list(.0))]
    ClientStreams(Vec<StreamFailure>),
    /// The client's run ended but the server's report never came.
    #[error("the server did not report its measurements ({0}); it may have crashed")]
    NoServerReport(Box<EngineError>),
    /// An agent could not reach its coordinator.
    #[error("could not reach the coordinator at {at}: {error}")]
    NoCoordinator {
        /// Where it was looked for.
        at: SocketAddr,
        /// Why it could not be reached.
        error: Box<EngineError>,
    },
    /// `latency` was asked for no message size.
    #[error("no message size to measure")]
    NoSizes,
    /// `latency --udp` was asked for a window of requests.
    #[error("over UDP only the ping-pong is measured; bandwidth over UDP is `bench --udp`")]
    UdpPattern,
    /// A UDP latency message that does not fit one datagram.
    #[error(
        "a UDP {what} of {len} B: over UDP each message is one datagram of 12 B (its header) to 65,507 B"
    )]
    UdpMessageLen {
        /// `request` or `reply`.
        what: &'static str,
        /// Its length asked for.
        len: u32,
    },
    /// The bulk streams run beside a latency run failed.
    #[error("the bulk streams (--load) failed: {0}")]
    Load(Box<EngineError>),
    /// The system gave no randomness for a session id or token.
    #[error("no randomness: {0}")]
    NoRandomness(getrandom::Error),
    /// A source path with no file name (`/`, `..`).
    #[error("cannot send {}: no name", .0.display())]
    NoName(std::path::PathBuf),
    /// A source file name that is not UTF-8.
    #[error("{}: file names that are not UTF-8 are not supported", .0.display())]
    NotUtf8(std::path::PathBuf),
    /// A server limit (sessions, streams) is reached; says which flag.
    #[error("server busy: {0}")]
    Busy(crate::limits::OverBudget),
    /// A new session's id is one a session already holds.
    #[error("session id already in use")]
    SessionIdInUse,
    /// A data connection came after its session ended.
    #[error("session ended before its data connection arrived")]
    DataConnectionLate,
    /// The transfer's session ended before it was complete.
    #[error("the transfer ended early")]
    EndedEarly,
    /// The receiver ended the session before its streams opened.
    #[error("the receiver ended the session")]
    ReceiverEnded,
    /// The session was stopped while it waited; says for what.
    #[error("the session stopped while waiting for {0}")]
    StoppedWaiting(&'static str),
    /// What the engine's own order rules out (a bug, never bad input).
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// The peer sent a message out of its session's order.
    #[error("protocol error: {0}")]
    Session(linerate_session::SessionError),
    /// The TLS handshake failed: a certificate that is not the one the
    /// client was told of, or a peer that does not speak TLS.
    #[error("TLS handshake with {server}: {error}")]
    Tls {
        /// The server it was made with.
        server: SocketAddr,
        /// How it failed.
        error: std::io::Error,
    },
    /// A one-shot receiver's sender never came.
    #[error("no session began within {} s", .0.as_secs_f64())]
    NoSession(std::time::Duration),
    /// A one-shot receiver's transfer failed and its sender did not come
    /// back to resume it in time.
    #[error("{0}; no sender came back to resume it in time")]
    NotResumed(Box<EngineError>),
}

impl EngineError {
    /// Whether a transfer that ended with this error was cut short, and a
    /// rerun of the same command would resume it: the sender gave up (its
    /// Ctrl-C) or went silent, a connection or the disk failed. Not what a
    /// rerun would meet again: a sender breaking the protocol, or this
    /// receiver refusing what it asked (a rule, a file `--no-replace` keeps).
    pub fn worth_resuming(&self) -> bool {
        match self {
            EngineError::Refusing(r) => r.code != linerate_wire::RefusalCode::InvalidParameters,
            EngineError::Refused(_)
            | EngineError::Io { .. }
            | EngineError::Timeout { .. }
            | EngineError::PeerClosed { .. }
            | EngineError::EndedEarly
            | EngineError::StoppedWaiting(_)
            | EngineError::ServerStreams(_)
            | EngineError::ClientStreams(_)
            | EngineError::Tls { .. } => true,
            _ => false,
        }
    }
}

impl From<WireError> for EngineError {
    fn from(e: WireError) -> Self {
        EngineError::Wire(e)
    }
}

impl EngineError {
    /// An I/O error while `doing` something.
    pub fn io(doing: &'static str, source: std::io::Error) -> Self {
        EngineError::Io {
            doing,
            subject: Subject::Nothing,
            error: source,
        }
    }

    /// An I/O error while `doing` something to `subject`.
    pub fn io_at(doing: &'static str, subject: impl Into<Subject>, source: std::io::Error) -> Self {
        EngineError::Io {
            doing,
            subject: subject.into(),
            error: source,
        }
    }
}

/// What an I/O error was done to, printed after what was being done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Nothing more to say than what was being done.
    Nothing,
    /// A file or folder.
    Path(PathBuf),
    /// A socket address.
    Addr(SocketAddr),
    /// An IP address.
    Ip(IpAddr),
    /// A protocol message, by its name.
    Message(&'static str),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Nothing => Ok(()),
            Subject::Path(p) => write!(f, " {}", p.display()),
            Subject::Addr(a) => write!(f, " {a}"),
            Subject::Ip(ip) => write!(f, " {ip}"),
            Subject::Message(name) => write!(f, " {name}"),
        }
    }
}

impl From<&Path> for Subject {
    fn from(p: &Path) -> Self {
        Subject::Path(p.to_path_buf())
    }
}

impl From<&PathBuf> for Subject {
    fn from(p: &PathBuf) -> Self {
        Subject::Path(p.clone())
    }
}

impl From<SocketAddr> for Subject {
    fn from(a: SocketAddr) -> Self {
        Subject::Addr(a)
    }
}

impl From<IpAddr> for Subject {
    fn from(ip: IpAddr) -> Self {
        Subject::Ip(ip)
    }
}

/// What answered a linerate client instead of a linerate server.
#[derive(Debug)]
pub enum Lookalike {
    /// Nothing that answered the greeting at all; how the wait for it ended.
    Silent(Box<EngineError>),
    /// An iperf3 server.
    Iperf3,
    /// An HTTP server.
    Http,
    /// An SSH server.
    Ssh,
    /// Another service; its first bytes, printable ones kept.
    Other(Vec<u8>),
}

impl fmt::Display for Lookalike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const START: &str = "start one with `linerate serve`";
        let like = match self {
            Lookalike::Silent(why) => {
                return write!(
                    f,
                    "did not answer linerate's greeting ({why}): nothing, or not a linerate \
                     server, listens there ({START})"
                );
            }
            Lookalike::Iperf3 => "an iperf3 server".to_string(),
            Lookalike::Http => "an HTTP server".to_string(),
            Lookalike::Ssh => "an SSH server".to_string(),
            Lookalike::Other(bytes) => {
                let shown: String = bytes
                    .iter()
                    .map(|&b| {
                        if b.is_ascii_graphic() || b == b' ' {
                            b as char
                        } else {
                            '.'
                        }
                    })
                    .collect();
                format!("a service that is not linerate (it sent \"{shown}\")")
            }
        };
        write!(
            f,
            "answers like {like}, not a linerate server ({START}, or give the port it listens on)"
        )
    }
}

/// Failed streams as one line.
fn failure_list(failures: &[StreamFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A result whose error is an [`EngineError`].
pub type Result<T> = std::result::Result<T, EngineError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A report that walks the source chain (anyhow's `{:#}`) names each
    /// cause once: the message already carries the inner error.
    #[test]
    fn the_inner_error_is_in_the_message_not_in_the_chain() {
        let e = EngineError::from(WireError::UnknownRole(9));
        assert_eq!(e.to_string(), "protocol error: unknown connection role 9");
        assert!(e.source().is_none());
        let io = EngineError::io("binding", std::io::Error::other("taken"));
        assert_eq!(io.to_string(), "binding: taken");
        assert!(io.source().is_none());
    }

    /// A one-shot receiver waits for a rerun after a cut, not after a
    /// sender that broke the rules or a request it refused.
    #[test]
    fn only_a_transfer_cut_short_is_worth_resuming() {
        let refusal = |code| Refusal {
            code,
            message: "x".into(),
        };
        use linerate_wire::RefusalCode::{Internal, InvalidParameters};
        assert!(EngineError::Refused(refusal(Internal)).worth_resuming());
        assert!(EngineError::PeerClosed { waiting_for: "x" }.worth_resuming());
        assert!(EngineError::Refusing(refusal(Internal)).worth_resuming());
        assert!(!EngineError::Refusing(refusal(InvalidParameters)).worth_resuming());
        assert!(!EngineError::from(WireError::UnknownRole(9)).worth_resuming());
    }
}
