use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use linerate_daemon::server::{Server, ServerTls};
use linerate_daemon::shares::ShareLimits;
use linerate_engine::address::DEFAULT_PORT;
use linerate_engine::limits::{ServerLimits, SessionLimits};
use linerate_transfer::receive::TransferPolicy;

use crate::units;
use tracing_subscriber::filter::LevelFilter;

/// What one transfer may make a receiver hold, and what it may set.
#[derive(Args, Debug, Clone)]
pub struct ReceiverArgs {
    /// Memory one transfer's manifest and bookkeeping may take, charged at
    /// about 430 bytes an entry plus its path: the default holds about 4
    /// million entries with 100-byte paths.
    #[arg(long, value_name = "SIZE", default_value = "2G", value_parser = units::parse_size)]
    pub session_memory: u64,
    /// Entries (files, directories, links) one transfer may announce.
    #[arg(long, value_name = "N", default_value_t = SessionLimits::default().entries)]
    pub max_entries: u64,
    /// Apply setuid, setgid and sticky bits as senders send them. Off, they
    /// are dropped and the umask applies. Only for trusted senders: as root,
    /// a sender could otherwise plant a setuid-root program.
    #[arg(long)]
    pub keep_special_bits: bool,
}

impl ReceiverArgs {
    pub fn limits(&self) -> SessionLimits {
        SessionLimits {
            entries: self.max_entries,
            memory: self.session_memory,
        }
    }

    /// Applies these settings to a transfer policy.
    pub fn apply(&self, policy: &mut TransferPolicy) {
        policy.keep_special_bits = self.keep_special_bits;
        policy.limits = self.limits();
    }
}

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
    /// Apply the ACLs senders send with -A as sent. Off, every ACL entry
    /// (and a directory's default ACL) is held within this daemon's umask,
    /// as modes are: no sender makes a file under --root writable by
    /// others. For a daemon whose senders all may decide who reads and
    /// writes what they send (docs/security.md#acls).
    #[arg(long, requires = "root")]
    pub acls_as_sent: bool,
    #[command(flatten)]
    pub keys: DaemonKeys,
    #[command(flatten)]
    pub receiver: ReceiverArgs,
    /// How long what a cut-short transfer left under --root (partial files,
    /// journals, new directories) waits for a rerun to resume it before it
    /// is removed (with ms/s/m/h).
    #[arg(long, value_name = "TIME", default_value = "24h", value_parser = units::parse_duration_ms)]
    pub partial_ttl: u64,
    /// Transfers served at once, from senders that proved a key or token
    /// (strangers' sessions draw on --max-open-sessions instead, and can
    /// never take these).
    #[arg(long, value_name = "N", default_value_t = ServerLimits::default().sessions)]
    pub max_sessions: u64,
    #[command(flatten)]
    pub shares: SharesArgs,
    /// Data connections of all sessions at once.
    #[arg(long, value_name = "N", default_value_t = ServerLimits::default().streams)]
    pub max_streams: u64,
    /// Memory for control messages still arriving, all sessions together.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = units::parse_size)]
    pub frame_memory: u64,
    /// Memory for the buffers of every bench and latency session at once:
    /// each is charged its write length (senders share one pattern) plus
    /// its read length per receiving stream; past it, new ones are refused
    /// as busy. The daemon's resident size stays near this plus 64 MiB.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = units::parse_size)]
    pub bench_memory: u64,
    #[command(flatten)]
    pub daemon: crate::detach::DaemonArgs,
    /// Also follow this schedule file, as `linerate schedule run FILE` does: one daemon answers
    /// the other ends' tests and runs its own.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    #[command(flatten)]
    pub log: crate::log::LogFlags,
}

/// What clients that proved nothing (benches, latency, transfers before
/// their token or key) may hold of a server (docs/security.md).
#[derive(Args, Debug, Clone)]
pub struct SharesArgs {
    /// Sessions of clients without a key at once, all sources together;
    /// when full, the source holding the most gives up its oldest.
    #[arg(long, value_name = "N", default_value_t = ShareLimits::default().open)]
    pub max_open_sessions: usize,
    /// Sessions of clients without a key at once from one source (an IPv4
    /// address, an IPv6 prefix: --ipv6-prefix).
    #[arg(long, value_name = "N", default_value_t = ShareLimits::default().per_source)]
    pub max_open_sessions_per_source: usize,
    /// The longest bench a client without a key may run (with ms/s/m/h);
    /// a session that moves under 64 KiB in 10 s is ended too.
    #[arg(long, value_name = "TIME", default_value = "5m", value_parser = units::parse_duration_ms)]
    pub max_bench_time: u64,
    /// IPv6 sources are counted by this prefix length (one host usually
    /// holds a /64).
    #[arg(long, value_name = "BITS", default_value_t = linerate_daemon::waiting_room::DEFAULT_V6_PREFIX,
          value_parser = clap::value_parser!(u8).range(1..=128))]
    pub ipv6_prefix: u8,
}

impl SharesArgs {
    pub fn limits(&self) -> ShareLimits {
        ShareLimits {
            open: self.max_open_sessions.max(1),
            per_source: self.max_open_sessions_per_source.max(1),
            max_bench_time: std::time::Duration::from_millis(self.max_bench_time),
        }
    }
}

/// How a daemon with --root proves itself and checks its senders.
#[derive(Args, Debug, Clone)]
pub struct DaemonKeys {
    /// This server's identity (certificate and key, PEM), made on first
    /// start; its fingerprint is printed at every start, for clients to pin.
    /// Default: server.pem in linerate's config directory.
    #[arg(long, value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// The client keys --root takes transfers from: one fingerprint per
    /// line (`linerate keys list` prints a user's), then a comment; read
    /// again at every connection. Default: authorized_keys in linerate's
    /// config directory.
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// Take transfers in the clear and from anyone who can reach the port:
    /// only on a network you trust.
    #[arg(long)]
    pub no_encrypt: bool,
}

impl DaemonKeys {
    /// This server's identity, made on first start; logs its fingerprint.
    fn identity(&self, log: &dyn Fn(String)) -> anyhow::Result<linerate_secure::Identity> {
        let path = match &self.identity {
            Some(p) => p.clone(),
            None => crate::keys_cmd::config_dir()?.join("server.pem"),
        };
        let (identity, made) = linerate_secure::Identity::load_or_create(&path)
            .with_context(|| format!("--identity {}", path.display()))?;
        log(format!(
            "identity {} ({}), fingerprint {}",
            path.display(),
            if made { "made now" } else { "kept" },
            identity.fingerprint()
        ));
        Ok(identity)
    }

    /// The TLS of a server without --root: its identity, no client keys.
    fn bench_tls(&self, log: &dyn Fn(String)) -> anyhow::Result<ServerTls> {
        Ok(ServerTls {
            config: linerate_secure::server_config(&self.identity(log)?)?,
            required: false,
        })
    }

    /// The TLS a daemon serving transfers speaks, or None with --no-encrypt.
    fn server_tls(&self, log: &dyn Fn(String)) -> anyhow::Result<Option<ServerTls>> {
        if self.no_encrypt {
            log("transfers in the clear, from anyone (--no-encrypt)".into());
            return Ok(None);
        }
        let keys = match &self.authorized_keys {
            Some(k) => k.clone(),
            None => crate::keys_cmd::config_dir()?.join("authorized_keys"),
        };
        if !keys.exists() {
            anyhow::bail!(
                "--root takes transfers only from listed client keys, and {} does not exist: \
                 on each sending host run `linerate keys new`, put the line it prints into that \
                 file (or give --authorized-keys FILE), or pass --no-encrypt to take anyone in \
                 the clear",
                keys.display()
            );
        }
        linerate_secure::KeyList::read(&keys)?;
        let identity = self.identity(log)?;
        log(format!("client keys from {}", keys.display()));
        let config =
            linerate_secure::server_config_for_clients(&identity, linerate_secure::KeyFile(keys))?;
        Ok(Some(ServerTls {
            config,
            required: true,
        }))
    }
}

pub fn run(a: ServeArgs) -> anyhow::Result<()> {
    // Log lines go to standard error, which a daemon or --logfile points at the file.
    a.log.init(LevelFilter::INFO);
    let limits = ServerLimits {
        sessions: a.max_sessions,
        streams: a.max_streams,
        frame_bytes: a.frame_memory,
        bench_memory: a.bench_memory,
        session: a.receiver.limits(),
    };
    let server = Server::bind(SocketAddr::new(a.bind, a.port))
        .context("cannot start the server")?
        .with_limits(limits)
        .with_shares(a.shares.limits(), a.shares.ipv6_prefix);
    // What starting says (the identity, where client keys come from) waits
    // until the log is where it goes: a daemon's file holds it all.
    let early = std::cell::RefCell::new(Vec::<(tracing::Level, String)>::new());
    let log_line = |line: String| early.borrow_mut().push((tracing::Level::INFO, line));
    let server = match &a.root {
        // Bench sessions in the clear, or encrypted for clients that ask
        // (bench --encrypt), with this server's identity.
        None if !a.keys.no_encrypt => match a.keys.bench_tls(&log_line) {
            Ok(tls) => server.with_tls(tls),
            Err(e) => {
                early.borrow_mut().push((
                    tracing::Level::WARN,
                    format!("bench --encrypt not served: {e:#}"),
                ));
                server
            }
        },
        None => server,
        Some(root) => {
            if !root.is_dir() {
                anyhow::bail!("--root {}: not a directory", root.display());
            }
            let mut policy = TransferPolicy::new(root.clone());
            a.receiver.apply(&mut policy);
            policy.acls_as_sent = a.acls_as_sent;
            policy.progress = Some(crate::progress::receiver_report(false, 10));
            policy.partial_ttl = Some(std::time::Duration::from_millis(a.partial_ttl));
            let tls = a.keys.server_tls(&log_line)?;
            let server = server.with_transfers(policy);
            match tls {
                Some(tls) => server.with_tls(tls),
                None => server,
            }
        }
    };
    let addr = server.local_addr()?;
    // A schedule that cannot run is said where the user is looking too.
    if let Some(file) = &a.schedule {
        let plan = crate::schedule_cmd::read(file)?;
        if plan.tests.is_empty() {
            anyhow::bail!("--schedule {}: no test that can run", file.display());
        }
    }
    // Bound first, so a taken port is reported where the user is looking.
    let _pidfile = a.daemon.start(&format!("linerate serve on {addr}"))?;
    for (level, line) in early.take() {
        match level {
            tracing::Level::WARN => tracing::warn!("{line}"),
            _ => tracing::info!("{line}"),
        }
    }
    tracing::info!("linerate {} listening on {addr}", env!("CARGO_PKG_VERSION"));
    // SIGTERM or Ctrl-C stops accepting and ends the process (the pid file goes).
    let stop = crate::signals::interrupt_flag();
    let schedule = a.schedule.clone().map(|file| {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let flags = crate::archive_cmd::ArchiveFlags::default();
            if let Err(e) = crate::schedule_cmd::follow(&file, &flags, &stop) {
                tracing::error!("schedule {}: {e:#}", file.display());
            }
        })
    });
    let served = server.run(a.once, &stop);
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        tracing::info!("stopped by a signal");
    }
    // The schedule ends with the server, its running tests as at Ctrl-C.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(thread) = schedule {
        let _ = thread.join();
    }
    served?;
    Ok(())
}
