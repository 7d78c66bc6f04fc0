use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;
use linerate_engine::server::Server;
use linerate_engine::transfer::receive::TransferPolicy;

use crate::output::timestamp;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate serve\n  linerate serve --bind 10.0.0.2 --port 6000\n  linerate serve --once   # exit after one session (scripts)\n  linerate serve --root /data   # also accept `linerate send SRC thishost:/sub/dir`"
)]
pub struct ServeArgs {
    /// Local address to listen on ([::] also accepts IPv4).
    #[arg(long, default_value = "::")]
    pub bind: IpAddr,
    /// TCP port for control and data of every session.
    #[arg(short, long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Exit after the first session ends.
    #[arg(long)]
    pub once: bool,
    /// Accept transfers (`linerate send SRC HOST:/DEST`) into DEST under this directory.
    #[arg(long, value_name = "DIR")]
    pub root: Option<std::path::PathBuf>,
}

pub const DEFAULT_PORT: u16 = 5201;

pub fn run(a: ServeArgs) -> anyhow::Result<()> {
    let log: linerate_engine::server::Logger = Arc::new(|line| eprintln!("{} {line}", timestamp()));
    let server =
        Server::bind(SocketAddr::new(a.bind, a.port), log).context("cannot start the server")?;
    let server = match &a.root {
        Some(root) => {
            if !root.is_dir() {
                anyhow::bail!("--root {}: not a directory", root.display());
            }
            server.with_transfers(TransferPolicy {
                root: root.clone(),
                token: None,
                session: None,
            })
        }
        None => server,
    };
    let addr = server.local_addr()?;
    eprintln!(
        "{} linerate {} listening on {addr}",
        timestamp(),
        env!("CARGO_PKG_VERSION")
    );
    server.run(a.once, &AtomicBool::new(false))?;
    Ok(())
}
