//! Where servers and clients run (on loopback, or in a lab's first two
//! hosts), free ports for the servers, and one client run with both ends'
//! CPU time.

use std::time::{Duration, SystemTime};

use crate::tools::ToolError;
use crate::tools::convert::Cpu;
use crate::tools::process::{Server, run_client};
use linerate_lab::Lab;

use crate::CompareError;

/// Where servers and clients run, and the address clients use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Words put before every server command (`ip netns exec h2`).
    pub server_prefix: Vec<String>,
    /// Words put before every client command.
    pub client_prefix: Vec<String>,
    /// The address clients connect to.
    pub host: String,
    /// Where this is, in words, for the result's parameters.
    pub label: String,
}

impl Place {
    /// Both ends on this host's loopback.
    pub fn loopback() -> Place {
        Place {
            server_prefix: vec![],
            client_prefix: vec![],
            host: "127.0.0.1".into(),
            label: "loopback".into(),
        }
    }

    /// Servers in the lab's second host, clients in its first.
    pub fn in_lab(name: &str, lab: &Lab) -> Result<Place, CompareError> {
        let [client, server, ..] = lab.hosts.as_slice() else {
            return Err(CompareError::LabTooSmall(name.into()));
        };
        let exec = |ns: &str| ["ip", "netns", "exec", ns].map(String::from).to_vec();
        Ok(Place {
            server_prefix: exec(&server.netns),
            client_prefix: exec(&client.netns),
            host: server.v4.to_string(),
            label: format!("lab {name} (h1 -> h2, backend {})", lab.backend.as_str()),
        })
    }

    /// `argv` run where the servers run.
    pub fn server(&self, argv: Vec<String>) -> Vec<String> {
        self.server_prefix.iter().cloned().chain(argv).collect()
    }

    /// `argv` run where the clients run.
    pub fn client(&self, argv: Vec<String>) -> Vec<String> {
        self.client_prefix.iter().cloned().chain(argv).collect()
    }
}

/// A port nothing listens on now (in this namespace; lab namespaces are
/// fresh, so it is free there too), below the kernel's ephemeral range: no
/// connection's local port can take it between the pick and the server's
/// bind, and picks of processes running at once start apart
/// (docs/guide.md#compare-ports).
pub fn free_port() -> Result<u16, CompareError> {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    static PICKED: AtomicU32 = AtomicU32::new(0);
    let ephemeral_from: u32 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let span = ephemeral_from.saturating_sub(QUIET_PORTS_FROM).max(1000);
    let start = std::process::id().wrapping_mul(7919) % span + PICKED.fetch_add(1, Relaxed);
    let free = |p: u16| {
        std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()
            && std::net::UdpSocket::bind(("127.0.0.1", p)).is_ok()
    };
    (0..span)
        .map(|i| (QUIET_PORTS_FROM + (start + i) % span) as u16)
        .find(|&p| free(p))
        .ok_or_else(|| {
            CompareError::io("finding a free port below the ephemeral range")(
                std::io::ErrorKind::AddrInUse.into(),
            )
        })
}

/// The lowest port [`free_port`] picks: above the well-known and the
/// usual registered servers' (iperf3's 5201, ssh's 22, ...).
const QUIET_PORTS_FROM: u32 = 10_000;

/// Tries to start a server on a port free when picked, `start(port)`;
/// picks a fresh port and starts it again, up to `PORT_TRIES` times, when
/// the server exited before it listened: another process may take a port
/// between its pick and the server's bind (docs/guide.md#compare-ports).
pub fn on_free_port<T>(
    mut start: impl FnMut(u16) -> Result<T, CompareError>,
) -> Result<(u16, T), CompareError> {
    let mut tries = 1;
    loop {
        let port = free_port()?;
        match start(port) {
            Err(CompareError::Peer(ToolError::ExitedAtOnce { .. })) if tries < PORT_TRIES => {
                tries += 1;
            }
            started => return started.map(|server| (port, server)),
        }
    }
}

/// Starts of a server before its exit is an error.
const PORT_TRIES: u32 = 3;

/// What one client run printed, the CPU both ends used, and when it began.
#[derive(Debug)]
pub struct ClientRun {
    /// The client's standard output.
    pub stdout: String,
    /// CPU seconds of the client and of the server during the run.
    pub cpu: Cpu,
    /// When the client started.
    pub when: SystemTime,
    /// The client's wall-clock seconds.
    pub wall_seconds: f64,
}

/// How long a client may run past the seconds it was asked for before
/// it is ended: start-up, connection set-up and the server's report.
const CLIENT_GRACE: Duration = Duration::from_secs(60);

/// Runs tool `name`'s client `argv` against `server`, bounded to
/// `seconds` and a minute; a client that fails is an error with its stderr.
pub fn run_against(
    name: &str,
    argv: &[String],
    seconds: u64,
    server: &Server,
) -> Result<ClientRun, CompareError> {
    let server_cpu0 = server.cpu_seconds();
    let when = SystemTime::now();
    let out = run_client(argv, Duration::from_secs(seconds) + CLIENT_GRACE)?;
    // Let the server account the end of the session.
    std::thread::sleep(Duration::from_millis(200));
    if !out.success {
        return Err(CompareError::ToolFailed {
            tool: name.into(),
            stderr: out.stderr.trim().into(),
        });
    }
    let cpu = Cpu {
        client: out.cpu_seconds,
        server: server.cpu_seconds() - server_cpu0,
    };
    Ok(ClientRun {
        stdout: out.stdout,
        cpu,
        when,
        wall_seconds: out.wall_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited() -> CompareError {
        CompareError::Peer(ToolError::ExitedAtOnce {
            command: "serve".into(),
            status: std::os::unix::process::ExitStatusExt::from_raw(1 << 8),
            said: String::new(),
        })
    }

    #[test]
    fn a_server_that_exits_at_once_is_started_again_on_a_fresh_port() {
        let mut ports = Vec::new();
        let (port, started) = on_free_port(|port| {
            ports.push(port);
            if ports.len() < 3 {
                Err(exited())
            } else {
                Ok("listening")
            }
        })
        .unwrap();
        assert_eq!((ports.len(), port, started), (3, ports[2], "listening"));

        let mut tries = 0;
        let err = on_free_port(|_| -> Result<(), _> {
            tries += 1;
            Err(exited())
        });
        assert!(matches!(err, Err(CompareError::Peer(_))));
        assert_eq!(tries, 3, "three starts, then the error");

        let mut tries = 0;
        let err = on_free_port(|_| -> Result<(), _> {
            tries += 1;
            Err(CompareError::NoRuns)
        });
        assert!(matches!(err, Err(CompareError::NoRuns)));
        assert_eq!(tries, 1, "other errors are not tried again");
    }

    #[test]
    fn loopback_runs_commands_as_they_are() {
        let p = Place::loopback();
        let argv = vec!["iperf3".to_string(), "-s".into()];
        assert_eq!(p.server(argv.clone()), argv);
        assert_eq!(p.client(argv.clone()), argv);
        assert_eq!(p.host, "127.0.0.1");
    }

    #[test]
    fn a_free_port_can_be_bound() {
        let port = free_port().unwrap();
        assert_ne!(port, 0);
        std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    }
}
