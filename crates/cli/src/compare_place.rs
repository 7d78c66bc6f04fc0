//! Where `compare` runs servers and clients: on loopback, or in a lab's
//! first two hosts; and free ports for the servers.

use anyhow::{Context, bail};

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
