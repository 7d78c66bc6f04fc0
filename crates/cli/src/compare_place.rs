//! Where `compare` runs servers and clients (on loopback, or in a lab's
//! first two hosts), free ports for the servers, and one client run with
//! both ends' CPU time.

use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use linerate_peers::convert::Cpu;
use linerate_peers::process::{Server, run_client};

/// Where servers and clients run, and the address clients use.
pub struct Place {
    pub server_prefix: Vec<String>,
    pub client_prefix: Vec<String>,
    pub host: String,
    pub label: String,
}

impl Place {
    pub fn new(lab: Option<&str>) -> anyhow::Result<Place> {
        let Some(name) = lab else {
            return Ok(Place {
                server_prefix: vec![],
                client_prefix: vec![],
                host: "127.0.0.1".into(),
                label: "loopback".into(),
            });
        };
        crate::lab_cmd::require()?;
        let l = linerate_lab::Lab::load(name).with_context(|| format!("reading lab {name}"))?;
        if l.hosts.len() < 2 {
            bail!("lab {name} has fewer than two hosts");
        }
        let exec = |ns: &str| ["ip", "netns", "exec", ns].map(String::from).to_vec();
        Ok(Place {
            server_prefix: exec(&l.hosts[1].netns),
            client_prefix: exec(&l.hosts[0].netns),
            host: l.hosts[1].v4.to_string(),
            label: format!("lab {name} (h1 -> h2, backend {})", l.backend.as_str()),
        })
    }

    pub fn wrap(prefix: &[String], argv: Vec<String>) -> Vec<String> {
        prefix.iter().cloned().chain(argv).collect()
    }
}

/// A port nothing listens on now (in this namespace; lab namespaces are
/// fresh, so it is free there too).
pub fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

/// What one client run printed, the CPU both ends used, and when it began.
pub struct ClientRun {
    pub stdout: String,
    pub cpu: Cpu,
    pub when: SystemTime,
}

/// Runs tool `name`'s client `argv` against `server`, bounded to a minute
/// past its `seconds`; a client that fails is an error with its stderr.
pub fn run_against(
    name: &str,
    argv: &[String],
    seconds: u32,
    server: &Server,
) -> anyhow::Result<ClientRun> {
    let server_cpu0 = server.cpu_seconds();
    let when = SystemTime::now();
    let out = run_client(argv, Duration::from_secs(u64::from(seconds) + 60))?;
    // Let the server account the end of the session.
    std::thread::sleep(Duration::from_millis(200));
    if !out.success {
        bail!("{name} failed: {}", out.stderr.trim());
    }
    let cpu = Cpu {
        client: out.cpu_seconds,
        server: server.cpu_seconds() - server_cpu0,
    };
    Ok(ClientRun {
        stdout: out.stdout,
        cpu,
        when,
    })
}
